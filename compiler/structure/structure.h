/*
 * structure.h -- from the flat model to the System codegen emits.
 *
 * Alias elimination, Pantelides index reduction with dummy derivatives and
 * static state selection, BLT (Tarjan) with explicit assignments and
 * tearing, the residual form for IDA, outputs, zero crossings and the
 * initialization system.  docs/STRUCTURE.md describes every step and the
 * residual form.
 */
#ifndef DYADC_STRUCTURE_H
#define DYADC_STRUCTURE_H

#include "flat.h"
#include "system.h"

/* Errors (unbalanced or structurally singular systems, bad initial
 * relations) go through diag_*; returns NULL if any. */
System *structure(FlatModel *m);

/* The same with options. */
typedef struct StructOptions {
    bool static_states;   /* no state sets: every choice of dummy derivatives
                             fixed at the start point (for consumers that
                             cannot switch them; no command sets it now) */
    bool no_report;       /* leave System.report NULL: only the structure
                             dump (`dyadc flatten --structure`) prints it,
                             and at 10^6 equations it costs a second */
} StructOptions;
System *structure_with(FlatModel *m, const StructOptions *o);

/* Fill the System's data tables (out_copy, param_has_const/param_const,
 * start_has_const/start_*_const) from its expressions: structure() does,
 * a System built by hand calls it before codegen. */
void struct_tables(System *s);
bool struct_out_copy(const Expr *e); /* is e an output column the copy table holds? */

/* Deterministic text of the structural result (golden tests).  Every row
 * is printed: loop items are expanded first (sys_expand, system.h). */
void struct_dump(FILE *out, System *s);

#endif
