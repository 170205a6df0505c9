/*
 * fmi_internal.h -- shared between describe.c and depend.c: the
 * ModelStructure dependencies (depend.c).
 */
#ifndef DYADC_FMI_INTERNAL_H
#define DYADC_FMI_INTERNAL_H

#include "fmi.h"

/* A dependency set: known numbers, ascending and distinct. */
typedef struct FmiSet {
    const uint32_t *k;
    uint32_t n;
} FmiSet;

typedef struct FmiDeps {
    bool ok;                   /* false: none written (the standard then
                                  assumes every known may matter) */
    uint32_t nknown;           /* knowns (inputs, states) */
    uint32_t *known_index;     /* [nknown] their FMI indices, ascending */
    int32_t *known_of_y;       /* [ny] known number of state y_i, -1 */
    int32_t *known_of_p;       /* [np] known number of input p, -1 */
    FmiSet *z;                 /* [ny] what y_i (algebraic) or y'_i (a
                                  state's) depends on */
    /* the set being gathered: stamp[k] == cur when k is in it already */
    Arena *a;
    uint32_t *stamp, cur;
    U32Vec items;
} FmiDeps;

/* state_index[i]: the FMI index of state y_i's variable (0: none).  False
 * when the dependencies cannot be given (state sets, a state without a
 * variable, blocks that do not cover the residual). */
bool fmi_deps_build(FmiDeps *d, Arena *a, const System *s, const uint32_t *state_index);

/* Gathering one set: begin, add knowns and sets, take (sorted, in the
 * arena).  O(what is added + the set's size * log). */
void fmi_set_begin(FmiDeps *d);
void fmi_set_add(FmiDeps *d, uint32_t k);
void fmi_set_add_set(FmiDeps *d, const FmiSet *set);
FmiSet *fmi_set_take(FmiDeps *d);

/* Adds to the set being gathered the knowns e depends on; at: where e is
 * read (sys_resid_at: a loop item's row, its leaves shifted), or NULL. */
void fmi_deps_of_expr(FmiDeps *d, const System *s, Expr *e, const SysAt *at);

/* ` dependencies="i j ..."` for a set. */
void fmi_deps_print(FILE *out, const FmiDeps *d, const FmiSet *set);

#endif
