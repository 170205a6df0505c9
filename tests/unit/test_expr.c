/* test_expr.c -- the symbolic core: hash-consing, simplification,
 * differentiation (checked against central differences), substitution,
 * linear solving. */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <stdlib.h>

#include "expr.h"

static double vals[4] = {0.7, -1.3, 2.1, 0.4};
static double leaf_val(void *ud, const Expr *e) {
    (void)ud;
    return e->kind == EXPR_TIME ? 0.25 : vals[e->index];
}

START_TEST(hash_consing_and_folding) {
    Arena *a = arena_new();
    ExprCtx *c = expr_ctx_new(a);
    Expr *x = expr_leaf(c, EXPR_VAR, 0), *y = expr_leaf(c, EXPR_VAR, 1);
    ck_assert_ptr_eq(expr_add(c, x, y), expr_add(c, y, x));
    ck_assert_ptr_eq(expr_mul(c, expr_call(c, FN_SIN, x, NULL), y), expr_mul(c, y, expr_call(c, FN_SIN, x, NULL)));
    ck_assert_ptr_eq(expr_add(c, x, expr_const(c, 0)), x);
    ck_assert_ptr_eq(expr_mul(c, x, expr_const(c, 1)), x);
    ck_assert(expr_is_const_value(expr_sub(c, x, x), 0));
    ck_assert(expr_is_const_value(expr_add(c, expr_const(c, 2), expr_const(c, 3)), 5));
    ck_assert_ptr_eq(expr_neg(c, expr_neg(c, x)), x);
    ck_assert(expr_is_const_value(expr_call(c, FN_COS, expr_const(c, 0), NULL), 1));
    arena_free(a);
}
END_TEST

/* d/dv of f at vals by central differences */
static double numdiff(Expr *f, int v) {
    double h = 1e-6, save = vals[v];
    vals[v] = save + h;
    double fp = expr_eval(f, leaf_val, NULL);
    vals[v] = save - h;
    double fm = expr_eval(f, leaf_val, NULL);
    vals[v] = save;
    return (fp - fm) / (2 * h);
}

START_TEST(derivatives_match_finite_differences) {
    Arena *a = arena_new();
    ExprCtx *c = expr_ctx_new(a);
    Expr *x = expr_leaf(c, EXPR_VAR, 0), *y = expr_leaf(c, EXPR_VAR, 1), *z = expr_leaf(c, EXPR_VAR, 2);
    Expr *fs[] = {
        expr_mul(c, expr_call(c, FN_SIN, x, NULL), expr_call(c, FN_EXP, y, NULL)),
        expr_div(c, expr_pow(c, z, expr_const(c, 3)), expr_add(c, x, expr_const(c, 2))),
        expr_call(c, FN_ATAN2, y, x),
        expr_pow(c, z, x),
        expr_call(c, FN_SQRT, expr_add(c, expr_mul(c, x, x), expr_mul(c, y, y)), NULL),
        expr_ifelse(c, expr_cmp(c, EXPR_GT, x, y), expr_mul(c, x, z), expr_neg(c, z)),
        expr_call(c, FN_TANH, expr_call(c, FN_LOG, z, NULL), NULL),
        expr_call(c, FN_ASIN, expr_mul(c, expr_const(c, 0.5), x), NULL),
    };
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        for (int v = 0; v < 3; v++) {
            Expr *d = expr_diff(c, fs[i], expr_leaf(c, EXPR_VAR, (uint32_t)v));
            double sym = expr_eval(d, leaf_val, NULL), num = numdiff(fs[i], v);
            ck_assert_msg(fabs(sym - num) < 1e-6 * (1 + fabs(num)), "f%zu d/dx%d: %g vs %g", i, v, sym, num);
        }
    arena_free(a);
}
END_TEST

static Expr *dvar(void *ud, Expr *leaf) {
    ExprCtx *c = ud;
    return leaf->kind == EXPR_VAR ? expr_leaf(c, EXPR_DER, leaf->index) : NULL;
}

START_TEST(time_derivative_and_solve) {
    Arena *a = arena_new();
    ExprCtx *c = expr_ctx_new(a);
    Expr *x = expr_leaf(c, EXPR_VAR, 0), *y = expr_leaf(c, EXPR_VAR, 1), *t = expr_time(c);
    /* d/dt (x*y + t^2) = der(x) y + x der(y) + 2t */
    Expr *d = expr_dt(c, expr_add(c, expr_mul(c, x, y), expr_mul(c, t, t)), dvar, c);
    Expr *want = expr_add(c, expr_add(c, expr_mul(c, expr_leaf(c, EXPR_DER, 0), y),
                                      expr_mul(c, x, expr_leaf(c, EXPR_DER, 1))),
                          expr_mul(c, expr_const(c, 2), t));
    vals[2] = 0.3; /* der leaves evaluate through index too */
    ck_assert_double_eq_tol(expr_eval(d, leaf_val, NULL), expr_eval(want, leaf_val, NULL), 1e-12);
    /* 3 x + 2 y - 4 = 0 -> x = (4 - 2y)/3 */
    Expr *e = expr_sub(c, expr_add(c, expr_mul(c, expr_const(c, 3), x), expr_mul(c, expr_const(c, 2), y)),
                       expr_const(c, 4));
    Expr *sol = expr_solve_linear(c, e, x);
    ck_assert_ptr_nonnull(sol);
    ck_assert_double_eq_tol(expr_eval(sol, leaf_val, NULL), (4 - 2 * vals[1]) / 3, 1e-12);
    ck_assert_ptr_null(expr_solve_linear(c, expr_mul(c, x, x), x));
    ck_assert(expr_contains(c, e, y));
    ck_assert(!expr_contains(c, sol, x));
    arena_free(a);
}
END_TEST

START_TEST(deep_chains_do_not_overflow) {
    Arena *a = arena_new();
    ExprCtx *c = expr_ctx_new(a);
    Expr *s = expr_const(c, 0);
    for (uint32_t i = 0; i < 200000; i++) s = expr_add(c, expr_mul(c, s, expr_const(c, 0.5)), expr_leaf(c, EXPR_VAR, i % 4));
    Expr *d = expr_diff(c, s, expr_leaf(c, EXPR_VAR, 0));
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_gt(expr_size(c, s), 200000);
    arena_free(a);
}
END_TEST

static Expr *instance_leaf(void *ud, Expr *leaf) {
    Expr **iv = ud; /* IDX(k) -> iv[k] */
    return leaf->kind == EXPR_IDX ? iv[leaf->index] : leaf;
}

/* indexed leaves: one canonical node per affine index, the plain leaf for a
 * constant one, so substituting the induction values gives the scalar
 * expression that direct construction gives */
START_TEST(indexed_leaves_are_canonical) {
    Arena *a = arena_new();
    ExprCtx *c = expr_ctx_new(a);
    Expr *i = expr_idx(c, 0), *j = expr_idx(c, 1);
    Expr *at1 = expr_at(c, EXPR_VAR, expr_add(c, i, expr_const(c, 10)));     /* x[10 + i] */
    Expr *at2 = expr_at(c, EXPR_VAR, expr_add(c, expr_const(c, 10), i));     /* the same, written the other way */
    ck_assert_ptr_eq(at1, at2);
    ck_assert_int_eq(at1->kind, EXPR_AT);
    ck_assert_ptr_eq(expr_at(c, EXPR_VAR, expr_const(c, 7)), expr_leaf(c, EXPR_VAR, 7));
    ck_assert_ptr_null(expr_at(c, EXPR_VAR, expr_mul(c, i, j)));               /* not affine */
    ck_assert_ptr_null(expr_at(c, EXPR_VAR, expr_const(c, 2.5)));
    ExprAffine f;
    ck_assert(expr_affine_of(expr_sub(c, expr_mul(c, expr_const(c, 3), j), expr_add(c, i, expr_const(c, 2))), &f));
    ck_assert(f.c[0] == -2 && f.c[1] == -1 && f.c[2] == 3 && f.c[3] == 0);
    /* a template x[10 + i] * y[2 i + j - 1] + i, instance (i, j) = (4, 1) */
    Expr *at3 = expr_at(c, EXPR_VAR, expr_sub(c, expr_add(c, expr_mul(c, expr_const(c, 2), i), j), expr_const(c, 1)));
    Expr *tmpl = expr_add(c, expr_mul(c, at1, at3), i);
    Expr *iv[3] = {expr_const(c, 4), expr_const(c, 1), expr_const(c, 0)};
    Expr *scalar = expr_add(c, expr_mul(c, expr_leaf(c, EXPR_VAR, 14), expr_leaf(c, EXPR_VAR, 8)), expr_const(c, 4));
    ck_assert_ptr_eq(expr_subst(c, tmpl, instance_leaf, iv), scalar);
    /* an indexed leaf is a leaf for differentiation: distinct accesses are distinct */
    ck_assert_ptr_eq(expr_diff(c, tmpl, at1), at3);
    ck_assert(expr_is_const_value(expr_diff(c, at1, at3), 0));
    ExprVec v = {0};
    expr_leaves(c, tmpl, EXPR_AT, &v);
    ck_assert_uint_eq(v.len, 2);
    arena_free(a);
}
END_TEST

/* (x1 * x2) + (x3 * x4) built in two contexts, its products created in
 * opposite orders (and a node that would sort between them created first
 * in one): the same operand order, so printing gives one text.  Creation
 * order used to decide it (docs/ARCHITECTURE.md, "Arrays"). */
static Expr *sum_of_products(ExprCtx *c, bool reverse) {
    Expr *x[5];
    for (int i = 0; i < 5; i++) x[i] = expr_leaf(c, EXPR_VAR, (uint32_t)i);
    if (reverse) expr_mul(c, x[1], x[4]);
    Expr *p = reverse ? expr_mul(c, x[3], x[4]) : expr_mul(c, x[1], x[2]);
    Expr *q = reverse ? expr_mul(c, x[1], x[2]) : expr_mul(c, x[3], x[4]);
    return expr_add(c, expr_add(c, q, p), expr_neg(c, expr_call(c, FN_SIN, x[0], NULL)));
}

static const char *text_of(Expr *e) {
    static char buf[2][256];
    static int k;
    char *b = buf[k++ & 1];
    FILE *f = fmemopen(b, sizeof buf[0], "w");
    expr_print(f, e, NULL, NULL);
    fclose(f);
    return b;
}

START_TEST(operand_order_is_canonical) {
    Arena *a = arena_new(), *b = arena_new();
    ExprCtx *c = expr_ctx_new(a), *d = expr_ctx_new(b);
    Expr *e = sum_of_products(c, false), *f = sum_of_products(d, true);
    ck_assert_str_eq(text_of(e), text_of(f));
    ck_assert_int_lt(expr_cmp_canon(expr_const(c, 5), expr_leaf(c, EXPR_VAR, 0)), 0); /* constants first */
    ck_assert_int_lt(expr_cmp_canon(expr_leaf(c, EXPR_VAR, 9), e), 0);                /* then leaves */
    ck_assert_int_lt(expr_cmp_canon(expr_leaf(c, EXPR_VAR, 2), expr_leaf(c, EXPR_VAR, 3)), 0);
    ck_assert_int_eq(expr_cmp_canon(e, e), 0);
    /* instances whose leaves differ by a shift order alike:
     * y[k+1] * y[k] + y[k] * p, whichever product is created first */
    int first = -1;
    for (uint32_t k = 1; k < 5; k++) {
        Expr *u = expr_mul(c, expr_leaf(c, EXPR_Y, k + 1), expr_leaf(c, EXPR_Y, k));
        Expr *v = expr_mul(c, expr_leaf(c, EXPR_Y, k), expr_leaf(c, EXPR_P, 0));
        Expr *s = k % 2 ? expr_add(c, u, v) : expr_add(c, v, u);
        if (first < 0) first = s->args[0] == u;
        ck_assert_int_eq(s->args[0] == u, first);
    }
    arena_free(a);
    arena_free(b);
}
END_TEST

/* The node table grows while nodes are made: across several doublings
 * (its copy to the larger table spread over later creations), a node made
 * before, during or after a copy is found again, not made twice. */
START_TEST(hash_consing_across_table_growth) {
    Arena *a = arena_new();
    ExprCtx *c = expr_ctx_new(a);
    enum { N = 600000 };
    Expr **made = malloc(sizeof *made * N);
    Expr *p = expr_leaf(c, EXPR_P, 0);
    for (uint32_t i = 0; i < N; i++) {
        made[i] = expr_mul(c, expr_leaf(c, EXPR_Y, i), p);
        uint32_t n = expr_count(c);
        /* the first node, one halfway back (before the last growth), the
         * previous one: found, nothing new made */
        ck_assert_ptr_eq(expr_mul(c, p, expr_leaf(c, EXPR_Y, 0)), made[0]);
        ck_assert_ptr_eq(expr_mul(c, expr_leaf(c, EXPR_Y, i / 2), p), made[i / 2]);
        ck_assert_ptr_eq(expr_mul(c, expr_leaf(c, EXPR_Y, i ? i - 1 : 0), p), made[i ? i - 1 : 0]);
        ck_assert_uint_eq(expr_count(c), n);
    }
    for (uint32_t i = 0; i < N; i++) ck_assert_ptr_eq(expr_mul(c, expr_leaf(c, EXPR_Y, i), p), made[i]);
    ck_assert_uint_eq(expr_count(c), 2 * N + 1);
    expr_ctx_seal(c);
    free(made);
    arena_free(a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("expr");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, hash_consing_and_folding);
    tcase_add_test(tc, derivatives_match_finite_differences);
    tcase_add_test(tc, time_derivative_and_solve);
    tcase_add_test(tc, deep_chains_do_not_overflow);
    tcase_add_test(tc, indexed_leaves_are_canonical);
    tcase_add_test(tc, operand_order_is_canonical);
    tcase_add_test(tc, hash_consing_across_table_growth);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
