/*
 * initruns.c -- the initialization work of BLT's runs (runs.c) done once
 * per run instead of once per instance (docs/ARCHITECTURE.md, "Arrays",
 * stage 3 step 4).
 *
 * The starting guess of a state derivative y' whose block gives it
 * explicitly (init.c, start_derivatives) is its value lowered, with each
 * y replaced by its start value: two walks of the value per state.  A
 * residual row that runs.c renamed from its run's representative
 * (st_run_lower_row) says that the instance's lowered value is the
 * representative's with the lowered leaves renamed from[i] -> to[i], node
 * for node (the renaming is order-preserving, so every constructor made
 * the same decision).  The substitution of the start values then makes
 * the same decisions too wherever the renamed leaves are given the same
 * values: a y and its image with the *same start expression* (one
 * pointer), a parameter mapped to itself; a y' makes the value unusable
 * in both.  Under that guard the instance's guess is the representative's,
 * the same node: no walk at all.  Anything else (a start value that
 * depends on the index, per-instance parameters, a row an event rewrote,
 * a block that is no instance of a run) is computed by the scalar code.
 * Cost per instance: O(p) pointer compares for p leaves of the row.
 */
#include "structure_internal.h"

#include <string.h>

struct StInitRuns {
    int32_t *row;       /* equation -> its residual row, -1 when none */
    Expr **yp;          /* row -> the guess of y' its block gave */
    unsigned char *has; /* row -> yp[row] is known (NULL: none) */
};

StInitRuns *st_init_runs(St *t) {
    StInitRuns *r = ARENA_NEW(t->arena, StInitRuns);
    uint32_t nrows = t->resid_eq.len;
    r->row = ARENA_ARRAY(t->arena, int32_t, t->eq.len + 1);
    memset(r->row, 0xff, sizeof *r->row * (t->eq.len + 1));
    for (uint32_t i = 0; i < nrows; i++) r->row[t->resid_eq.data[i]] = (int32_t)i;
    r->yp = ARENA_ARRAY(t->arena, Expr *, nrows + 1);
    r->has = ARENA_ARRAY(t->arena, unsigned char, nrows + 1);
    return r;
}

/* the start-value substitution gives leaf a and its image b one value */
static bool same_at_start(const St *t, const Expr *a, const Expr *b) {
    if (!a || a->kind == EXPR_YP) return true;
    if (a->kind == EXPR_Y) return t->s->start[a->index] == t->s->start[b->index];
    return a == b;
}

bool st_init_run_start_yp(St *t, StInitRuns *r, uint32_t e, Expr **x) {
    int32_t row = r->row[e];
    StRunLeaves l;
    int32_t rep = row < 0 || !t->s->resid ? -1 : st_run_row_leaves(t, (uint32_t)row, t->s->resid, &l);
    if (rep < 0 || !r->has[rep]) return false;
    for (uint32_t i = 0; i < l.n; i++)
        if (!same_at_start(t, l.from[i], l.to[i])) return false;
    *x = r->yp[rep];
    return true;
}

void st_init_run_note_yp(St *t, StInitRuns *r, uint32_t e, Expr *x) {
    (void)t;
    int32_t row = r->row[e];
    if (row < 0) return;
    r->yp[row] = x;
    r->has[row] = 1;
}
