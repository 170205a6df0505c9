/*
 * solve.c -- the solvability rule: when an equation may be solved for a
 * variable symbolically.
 *
 * Every place that turns `0 = r` into `x := -b / a` asks st_solve(): BLT
 * assignments and tearing (blt.c), start values from initial relations
 * and the first guess of a state's derivative (init.c).  r must be linear
 * in x (a = dr/dx free of x, r - a x free of x), and the coefficient a
 *   - a nonzero constant: solved;
 *   - an expression of parameters only (no unknown, no time, no mode, no
 *     parameter solved at initialization): solved, and a becomes a
 *     coefficient check (System.coef_check): the runtime evaluates every
 *     check as soon as the parameter values are known and stops with an
 *     error naming the equation, the variable and the parameters when one
 *     is zero or not finite -- never a division by zero later;
 *   - anything else (an unknown, time, an assigned variable whose value
 *     depends on them, a mode): not solved.  The equation stays implicit:
 *     the Newton iteration of its block (IDA's, or the initialization's)
 *     solves it numerically, with pivoting, where a coefficient that
 *     crosses zero is harmless as long as the block stays nonsingular.
 * Alias elimination consumes only coefficients +-1 (alias.c): this rule's
 * constant case.  The coefficient is read from the expression as given, so
 * callers pass residuals with the earlier assignments substituted.
 *
 * Checks are kept once per distinct coefficient (hash-consed, so one
 * pointer compare) with the first equation that needed it.  O(size of r).
 */
#include "structure_internal.h"

#include <math.h>

/* a coefficient's class: 0 not solvable, 1 constant, 2 parameters only */
static int coefficient_class(St *t, Expr *a) {
    if (expr_is_const(a)) return a->value != 0 && isfinite(a->value) ? 1 : 0;
    ExprVec *l = &t->coef_leaves;
    l->len = 0;
    expr_leaves_any(t->c, a, l);
    for (uint32_t i = 0; i < l->len; i++) {
        Expr *e = l->data[i];
        bool param = e->kind == EXPR_P ||
                     (e->kind == EXPR_VAR && e->index < t->nflat &&
                      (t->m->vars.data[e->index].kind == FV_PARAMETER ||
                       t->m->vars.data[e->index].kind == FV_CONSTANT));
        if (!param) return 0;
    }
    return 2;
}

void st_coef_check(St *t, Expr *a, Expr *x, int32_t flat) {
    if (hmap_get(&t->coef_seen, a->id + 1)) return;
    hmap_put(t->arena, &t->coef_seen, a->id + 1, a);
    StCoef k = {.coef = a, .var = x, .flat = flat};
    vec_push(t->arena, &t->coef, k);
}

bool st_varies(St *t, Expr *e) { return !expr_is_const(e) && coefficient_class(t, e) == 0; }

Expr *st_solve_coef(St *t, Expr *r, Expr *x, int32_t flat, Expr **check) {
    Expr *a = expr_diff_once(t->c, r, x);
    int cls = coefficient_class(t, a);
    if (check) *check = NULL;
    if (!cls) return NULL;
    Expr *v = expr_solve_linear(t->c, r, x);
    if (v && cls == 2) {
        st_coef_check(t, a, x, flat);
        if (check) *check = a;
    }
    return v;
}

Expr *st_solve(St *t, Expr *r, Expr *x, int32_t flat) { return st_solve_coef(t, r, x, flat, NULL); }
