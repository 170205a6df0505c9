/* structure_internal.h -- shared by the files of compiler/structure only. */
#ifndef DYADC_STRUCTURE_INTERNAL_H
#define DYADC_STRUCTURE_INTERNAL_H

#include "structure.h"

typedef struct {
    FlatModel *m;
    System *s;
    Arena *arena;
    ExprCtx *c;
    int32_t *yslot;   /* flat var -> y slot or -1 */
    int32_t *pslot;   /* flat var -> p slot or -1 */
    int32_t *zslot;   /* y slot -> z index of y' (init system), -1 if none */
    uint32_t *pvar;   /* p slot -> flat var */
    bool to_init;     /* map to Z leaves (init system) instead of Y/YP/P */
    uint32_t nz_y;    /* z layout: [y (ny)] [y' of differential (nd)] [missing params] */
    int32_t *pz;      /* p slot -> z index for missing parameters, -1 otherwise */
    Expr **alias;     /* flat var -> its value when eliminated as an alias, else NULL */
    unsigned char *eq_alias; /* flat eq -> 1 when consumed by alias elimination */
} St;

/* map flat leaves (VAR, DER) to slots (Y, YP, P; Z when t->to_init) */
Expr *lower(St *t, Expr *e);
void struct_build_init(St *t);
void struct_alias(St *t);

#endif
