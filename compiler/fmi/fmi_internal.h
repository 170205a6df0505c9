/*
 * fmi_internal.h -- shared between describe.c and depend.c: the
 * ModelStructure dependencies (depend.c).
 */
#ifndef DYADC_FMI_INTERNAL_H
#define DYADC_FMI_INTERNAL_H

#include "fmi.h"

typedef struct FmiDeps {
    bool ok;                   /* false: none written (the standard then
                                  assumes every known may matter) */
    uint32_t nknown, words;    /* knowns (inputs, states); bitset words */
    uint32_t *known_index;     /* [nknown] their FMI indices, ascending */
    int32_t *known_of_y;       /* [ny] known number of state y_i, -1 */
    int32_t *known_of_p;       /* [np] known number of input p, -1 */
    uint64_t *z;               /* [ny * words] what y_i (algebraic) or y'_i
                                  (a state's) depends on */
} FmiDeps;

/* state_index[i]: the FMI index of state y_i's variable (0: none).  False
 * when the dependencies cannot be given (state sets, a state without a
 * variable, blocks that do not cover the residual). */
bool fmi_deps_build(FmiDeps *d, Arena *a, const System *s, const uint32_t *state_index);

/* set |= the knowns e depends on; at: where e is read (sys_resid_at: a
 * loop item's row, its leaves shifted), or NULL. */
void fmi_deps_of_expr(const FmiDeps *d, const System *s, Expr *e, const SysAt *at, uint64_t *set);

/* ` dependencies="i j ..."` for a set. */
void fmi_deps_print(FILE *out, const FmiDeps *d, const uint64_t *set);

#endif
