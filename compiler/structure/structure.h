/*
 * structure.h -- from the flat model to the System codegen emits.
 *
 * Today (walking skeleton): every continuous variable is an integrator
 * unknown, every regular equation a residual (index <= 1 only); the
 * Jacobian pattern and entries come from symbolic differentiation; an
 * initialization system is built when `initial` relations are not simple
 * `x = value` starts or parameters are `missing`.  Later: alias
 * elimination, Pantelides, dummy derivatives, BLT and tearing.
 */
#ifndef DYADC_STRUCTURE_H
#define DYADC_STRUCTURE_H

#include "flat.h"
#include "system.h"

/* Errors (unbalanced or structurally singular systems, bad initial
 * relations) go through diag_*; returns NULL if any. */
System *structure(FlatModel *m);

/* Deterministic text of the structural result (golden tests). */
void struct_dump(FILE *out, const System *s);

#endif
