/*
 * test_structure.c -- unit tests of the structure phase on flat models built
 * by hand: matching that needs augmenting paths, long alias chains (no
 * recursion), Pantelides + dummy derivatives on the Cartesian pendulum,
 * statePriority, structural singularity.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <stdlib.h>

#include "structure.h"

typedef struct {
    Arena *arena;
    ExprCtx *c;
    FlatModel *m;
} Fx;

static Fx fx_new(const char *name) {
    Fx f;
    f.arena = arena_new();
    f.c = expr_ctx_new(f.arena);
    f.m = ARENA_NEW(f.arena, FlatModel);
    f.m->ctx = f.c;
    f.m->name = name;
    diag_reset();
    return f;
}

static Expr *var(Fx *f, const char *name, FlatVarKind kind, double value) {
    FlatVar v = {.name = name, .kind = (uint8_t)kind};
    if (kind != FV_VARIABLE) v.value = expr_const(f->c, value);
    vec_push(f->arena, &f->m->vars, v);
    return expr_leaf(f->c, EXPR_VAR, f->m->vars.len - 1);
}

static void eq(Fx *f, Expr *lhs, Expr *rhs) {
    FlatEq q = {.kind = FE_NORMAL, .lhs = lhs, .rhs = rhs, .origin = ""};
    vec_push(f->arena, &f->m->eqs, q);
}

static void initial(Fx *f, Expr *lhs, Expr *rhs) {
    FlatEq q = {.kind = FE_INITIAL, .lhs = lhs, .rhs = rhs, .origin = ""};
    vec_push(f->arena, &f->m->eqs, q);
}

static Expr *der(Fx *f, Expr *v) { return expr_leaf(f->c, EXPR_DER, v->index); }

static bool is_state(const System *s, const char *name) {
    for (uint32_t y = 0; y < s->ny; y++)
        if (s->y_is_diff[y] && strcmp(s->y_names[y], name) == 0) return true;
    return false;
}

static uint32_t nstates(const System *s) {
    uint32_t n = 0;
    for (uint32_t y = 0; y < s->ny; y++) n += s->y_is_diff[y];
    return n;
}

/* m der(vx) = -lambda x, m der(vy) = -lambda y - m g, x^2 + y^2 = L^2 */
static System *pendulum(Fx *f, int prio_y) {
    ExprCtx *c = f->c;
    Expr *L = var(f, "L", FV_PARAMETER, 1), *g = var(f, "g", FV_PARAMETER, 9.81);
    Expr *x = var(f, "x", FV_VARIABLE, 0), *y = var(f, "y", FV_VARIABLE, 0);
    Expr *vx = var(f, "vx", FV_VARIABLE, 0), *vy = var(f, "vy", FV_VARIABLE, 0);
    Expr *lam = var(f, "lambda", FV_VARIABLE, 0);
    flat_attr_set(f->m, y->index)->state_priority = prio_y;
    flat_attr_set(f->m, vy->index)->state_priority = prio_y;
    flat_attr_set(f->m, y->index)->guess = expr_const(c, -0.9);
    eq(f, der(f, x), vx);
    eq(f, der(f, y), vy);
    eq(f, der(f, vx), expr_neg(c, expr_mul(c, lam, x)));
    eq(f, der(f, vy), expr_sub(c, expr_neg(c, expr_mul(c, lam, y)), g));
    eq(f, expr_add(c, expr_mul(c, x, x), expr_mul(c, y, y)), expr_mul(c, L, L));
    initial(f, x, expr_const(c, 0.4));
    initial(f, vx, expr_const(c, 0));
    return structure(f->m);
}

/* Without statePriority no fixed choice of states is safe for every
 * configuration: two state sets (velocities, positions), one state each of
 * two candidates, the start's choice by the pivots at x = 0.4, y = -0.9. */
START_TEST(pendulum_states) {
    Fx f = fx_new("Pendulum");
    System *s = pendulum(&f, 0);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(nstates(s), 2); /* one degree of freedom: position and velocity */
    ck_assert(!is_state(s, "x") && !is_state(s, "y"));
    ck_assert_uint_eq(s->nsets, 2);
    for (uint32_t k = 0; k < 2; k++) {
        const SysStateSet *z = &s->sets[k];
        ck_assert_uint_eq(z->ncand, 2);
        ck_assert_uint_eq(z->nstates, 1);
        ck_assert(s->y_is_diff[s->set_state_y[z->state_first]]);
        ck_assert_uint_eq(s->set_init[z->state_first], 0); /* x (vx): |y| > |x| at the start */
        ck_assert_uint_eq(s->zc_kind[z->mode_first], SYS_EV_STATESET);
    }
    ck_assert_str_eq(s->set_cand_names[s->sets[1].cand_first], "x");
    ck_assert_str_eq(s->set_cand_names[s->sets[1].cand_first + 1], "y");
    ck_assert_uint_eq(s->nout, 5);
    arena_free(f.arena);
}
END_TEST

START_TEST(pendulum_state_priority) {
    Fx f = fx_new("Pendulum");
    System *s = pendulum(&f, 5);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(nstates(s), 2);
    ck_assert(is_state(s, "y") && is_state(s, "vy"));
    arena_free(f.arena);
}
END_TEST

/* e_i: x_i + x_{i+1}^3 = t for i < n-1 and x_{n-1}^3 = t, listed so that a
 * greedy pass matches e_i to x_i only after augmenting paths fix the rest:
 * equations in reverse order, each preferring its first unknown. */
START_TEST(matching_needs_augmenting_paths) {
    Fx f = fx_new("Chain");
    ExprCtx *c = f.c;
    enum { N = 2000 };
    Expr *x[N];
    for (int i = 0; i < N; i++) x[i] = var(&f, arena_printf(f.arena, "x%d", i), FV_VARIABLE, 0);
    Expr *three = expr_const(c, 3);
    for (int i = 0; i < N - 1; i++)
        eq(&f, expr_add(c, expr_pow(c, x[i + 1], three), expr_pow(c, x[i], three)), expr_time(c));
    eq(&f, expr_pow(c, x[0], three), expr_time(c));
    System *s = structure(f.m);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->ny, N);
    ck_assert_uint_eq(nstates(s), 0);
    arena_free(f.arena);
}
END_TEST

/* x_0 = x_1, x_1 = x_2, ..., der(x_{n-1}) = -x_{n-1}: one state, n outputs,
 * and a union-find path as long as the model */
START_TEST(long_alias_chain) {
    Fx f = fx_new("Aliases");
    ExprCtx *c = f.c;
    enum { N = 300000 };
    Expr **x = malloc(sizeof *x * N);
    for (int i = 0; i < N; i++) x[i] = var(&f, arena_printf(f.arena, "x%d", i), FV_VARIABLE, 0);
    for (int i = N - 1; i > 0; i--) eq(&f, x[i - 1], x[i]);
    eq(&f, der(&f, x[N - 1]), expr_neg(c, x[N - 1]));
    System *s = structure(f.m);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->ny, 1);
    ck_assert_uint_eq(s->nout, N);
    free(x);
    arena_free(f.arena);
}
END_TEST

/* The block sequence (system.h): rows consecutive per block and covering
 * the residuals; every algebraic y an iteration variable of exactly one
 * block, every state's y' determined exactly once, every assigned value
 * read only from states and the unknowns of blocks up to its own. */
static void check_blocks(const System *s) {
    uint32_t row = 0, *seen_y = calloc(s->ny + 1, sizeof *seen_y), *seen_yp = calloc(s->ny + 1, sizeof *seen_yp);
    uint32_t *block_of_y = calloc(s->ny + 1, sizeof *block_of_y);
    for (uint32_t b = 0; b < s->nblocks; b++) {
        const SysBlock *k = &s->blocks[b];
        ck_assert_uint_eq(k->res_first, row);
        ck_assert_uint_le(k->ntear, k->n);
        row += k->ntear;
        for (uint32_t i = 0; i < k->n; i++) {
            SysUnknown u = s->block_unknowns[k->first + i];
            ck_assert_msg(i < k->ntear ? u.kind != SU_ASSIGNED : u.kind == SU_ASSIGNED,
                          "block %u: iteration variables first, assigned ones after", b);
            if (u.kind == SU_Y) { ck_assert(!s->y_is_diff[u.index]); seen_y[u.index]++; block_of_y[u.index] = b; }
            if (u.kind == SU_YP) { ck_assert(s->y_is_diff[u.index]); seen_yp[u.index]++; block_of_y[u.index] = b; }
            if (u.kind != SU_ASSIGNED) continue;
            ExprVec l = {0};
            expr_leaves(s->ctx, s->assigned_value[u.index], EXPR_Y, &l);
            for (uint32_t j = 0; j < l.len; j++)
                ck_assert(s->y_is_diff[l.data[j]->index] || (seen_y[l.data[j]->index] && block_of_y[l.data[j]->index] <= b));
        }
    }
    ck_assert_uint_eq(row, s->ny);
    for (uint32_t y = 0; y < s->ny; y++) ck_assert_uint_eq(s->y_is_diff[y] ? seen_yp[y] : seen_y[y], 1);
    free(seen_y);
    free(seen_yp);
    free(block_of_y);
}

START_TEST(block_sequence) {
    Fx f = fx_new("Pendulum");
    System *s = pendulum(&f, 0);
    ck_assert_ptr_nonnull(s);
    check_blocks(s);
    arena_free(f.arena);
    /* a loop with assignments inside: sin(t) z + w = 1 + x, z - w = cos(t),
     * der(x) = -x + z, u = 2 w */
    f = fx_new("Loop");
    ExprCtx *c = f.c;
    Expr *x = var(&f, "x", FV_VARIABLE, 0), *z = var(&f, "z", FV_VARIABLE, 0), *w = var(&f, "w", FV_VARIABLE, 0);
    Expr *u = var(&f, "u", FV_VARIABLE, 0), *t = expr_time(c);
    eq(&f, expr_add(c, expr_mul(c, expr_call(c, FN_SIN, t, NULL), z), w), expr_add(c, expr_const(c, 1), x));
    eq(&f, expr_sub(c, z, w), expr_call(c, FN_COS, t, NULL));
    eq(&f, der(&f, x), expr_add(c, expr_neg(c, x), z));
    eq(&f, u, expr_mul(c, expr_const(c, 2), expr_mul(c, w, w)));
    s = structure(f.m);
    ck_assert_ptr_nonnull(s);
    check_blocks(s);
    ck_assert_uint_ge(s->nassigned, 1);
    arena_free(f.arena);
}
END_TEST

START_TEST(singular_is_an_error) {
    Fx f = fx_new("Singular");
    ExprCtx *c = f.c;
    Expr *x = var(&f, "x", FV_VARIABLE, 0);
    var(&f, "y", FV_VARIABLE, 0);
    eq(&f, expr_mul(c, x, x), expr_const(c, 2));
    eq(&f, expr_mul(c, expr_const(c, 3), x), expr_const(c, 1));
    FILE *null = fopen("/dev/null", "w");
    diag_set_output(null);
    System *s = structure(f.m);
    diag_set_output(stderr);
    fclose(null);
    ck_assert_ptr_null(s);
    ck_assert_uint_ge(diag_error_count(), 1);
    arena_free(f.arena);
}
END_TEST

int main(void) {
    Suite *s = suite_create("structure");
    TCase *tc = tcase_create("structure");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, pendulum_states);
    tcase_add_test(tc, pendulum_state_priority);
    tcase_add_test(tc, matching_needs_augmenting_paths);
    tcase_add_test(tc, long_alias_chain);
    tcase_add_test(tc, block_sequence);
    tcase_add_test(tc, singular_is_an_error);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
