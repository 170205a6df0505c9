/*
 * test_fmi_deps.c -- the ModelStructure dependencies (compiler/fmi/depend.c)
 * against a brute-force reference: per unknown, a depth-first search from
 * its block through the residual rows, collecting the knowns (states,
 * inputs) it reaches.  Models: random flat models (chains of algebraic
 * variables, nonlinear 2x2 loops, inputs) built by hand, the states given
 * FMI indices in an order other than theirs.
 */
#include <check.h>

#include "../check_run.h"
#include <stdlib.h>

#include "structure.h"
#include "../../compiler/fmi/fmi_internal.h"

static Expr *expr_sin(ExprCtx *c, Expr *a) { return expr_call(c, FN_SIN, a, NULL); }

typedef struct {
    Arena *arena;
    ExprCtx *c;
    FlatModel *m;
} Model;

static Expr *new_var(Model *f, const char *name, FlatVarKind kind) {
    FlatVar v = {.name = name, .kind = (uint8_t)kind};
    if (kind != FV_VARIABLE) v.value = expr_const(f->c, 1);
    vec_push(f->arena, &f->m->vars, v);
    return expr_leaf(f->c, EXPR_VAR, f->m->vars.len - 1);
}

static void new_eq(Model *f, Expr *lhs, Expr *rhs) {
    FlatEq q = {.kind = FE_NORMAL, .lhs = lhs, .rhs = rhs, .origin = ""};
    vec_push(f->arena, &f->m->eqs, q);
}

/* ns states, ni inputs, nw algebraic variables: w_j reads a few earlier
 * w, states, inputs and derivatives; every fifth pair of w is a nonlinear loop;
 * der(x_i) reads a few w and x. */
static System *random_model(Model *f, unsigned seed, uint32_t ns, uint32_t ni, uint32_t nw) {
    srand(seed);
    f->arena = arena_new();
    ExprCtx *c = f->c = expr_ctx_new(f->arena);
    f->m = ARENA_NEW(f->arena, FlatModel);
    f->m->ctx = c;
    f->m->name = "Random";
    Expr **x = ARENA_ARRAY(f->arena, Expr *, ns), **u = ARENA_ARRAY(f->arena, Expr *, ni + 1);
    Expr **w = ARENA_ARRAY(f->arena, Expr *, nw);
    for (uint32_t i = 0; i < ns; i++) x[i] = new_var(f, arena_printf(f->arena, "x%u", i), FV_VARIABLE);
    for (uint32_t i = 0; i < ni; i++) u[i] = new_var(f, arena_printf(f->arena, "u%u", i), FV_INPUT);
    for (uint32_t j = 0; j < nw; j++) w[j] = new_var(f, arena_printf(f->arena, "w%u", j), FV_VARIABLE);
    for (uint32_t j = 0; j < nw; j++) {
        Expr *r = expr_mul(c, expr_const(c, 0.5), x[(uint32_t)rand() % ns]);
        for (int k = rand() % 3; k > 0; k--)
            if (j > 0) r = expr_add(c, r, expr_sin(c, w[(uint32_t)rand() % j]));
        if (ni && rand() % 3 == 0) r = expr_add(c, r, u[(uint32_t)rand() % ni]);
        if (rand() % 4 == 0) /* a derivative: its block's knowns */
            r = expr_add(c, r, expr_mul(c, expr_const(c, 0.1),
                                        expr_leaf(c, EXPR_DER, x[(uint32_t)rand() % ns]->index)));
        if (j + 1 < nw && j % 5 == 2) { /* w_j, w_j+1: a nonlinear loop */
            Expr *q = expr_mul(c, expr_const(c, 0.25), x[(uint32_t)rand() % ns]);
            new_eq(f, expr_add(c, w[j], expr_mul(c, w[j + 1], w[j + 1])), r);
            new_eq(f, expr_sub(c, w[j + 1], expr_sin(c, w[j])), q);
            j++;
            continue;
        }
        new_eq(f, expr_mul(c, expr_const(c, 3), w[j]), expr_sin(c, r));
    }
    for (uint32_t i = 0; i < ns; i++) {
        Expr *r = expr_neg(c, x[i]);
        for (int k = rand() % 3; k > 0; k--)
            r = expr_add(c, r, expr_mul(c, expr_const(c, 0.1), w[(uint32_t)rand() % nw]));
        if (rand() % 2) r = expr_add(c, r, expr_mul(c, expr_const(c, 0.2), x[(uint32_t)rand() % ns]));
        new_eq(f, expr_leaf(c, EXPR_DER, x[i]->index), r);
    }
    FILE *null = fopen("/dev/null", "w");   /* no start values: warnings */
    diag_set_output(null);
    System *s = structure(f->m);
    diag_set_output(stderr);
    fclose(null);
    return s;
}

typedef struct {
    const System *s;
    const uint32_t *state_index;
    int32_t *block_of;            /* [ny] the block determining y_i or y'_i */
    uint32_t *seen_block, *seen_known, stamp;
    uint32_t *found, nfound;      /* FMI indices reached */
} Ref;

static void reach(Ref *r, uint32_t b) {
    const System *s = r->s;
    if (r->seen_block[b] == r->stamp) return;
    r->seen_block[b] = r->stamp;
    const SysBlock *blk = &s->blocks[b];
    for (uint32_t row = 0; row < blk->ntear; row++) {
        SysAt at;
        Expr *e = sys_resid_at(s, blk->res_first + row, &at);
        ExprVec leaves = {0};
        expr_leaves_any(s->ctx, e, &leaves);
        for (uint32_t k = 0; k < leaves.len; k++) {
            const Expr *l = leaves.data[k];
            uint32_t i = sys_at_index(&at, l), idx = 0;
            if (l->kind == EXPR_Y && s->y_is_diff[i]) idx = r->state_index[i];
            else if (l->kind == EXPR_P && (s->param_flags[i] & SYS_PARAM_INPUT)) idx = i + 1;
            else if (l->kind == EXPR_Y || l->kind == EXPR_YP) {
                ck_assert_int_ge(r->block_of[i], 0);
                reach(r, (uint32_t)r->block_of[i]);
            }
            if (idx && r->seen_known[idx] != r->stamp) {
                r->seen_known[idx] = r->stamp;
                r->found[r->nfound++] = idx;
            }
        }
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void check_model(unsigned seed, uint32_t ns, uint32_t ni, uint32_t nw) {
    Model f;
    const System *s = random_model(&f, seed, ns, ni, nw);
    ck_assert_ptr_nonnull(s);
    Arena *a = f.arena;
    /* the states' FMI indices: after the parameters, in reverse order */
    uint32_t *state_index = ARENA_ARRAY(a, uint32_t, s->ny + 1), nst = 0;
    for (uint32_t i = s->ny; i-- > 0;)
        if (s->y_is_diff[i]) state_index[i] = s->np + 1 + 3 * nst++;
    FmiDeps d;
    ck_assert(fmi_deps_build(&d, a, s, state_index));
    Ref r = {.s = s, .state_index = state_index};
    r.block_of = ARENA_ARRAY(a, int32_t, s->ny + 1);
    for (uint32_t i = 0; i < s->ny; i++) r.block_of[i] = -1;
    for (uint32_t b = 0; b < s->nblocks; b++)
        for (uint32_t u = 0; u < s->blocks[b].ntear; u++)
            r.block_of[s->block_unknowns[s->blocks[b].first + u].index] = (int32_t)b;
    r.seen_block = ARENA_ARRAY(a, uint32_t, s->nblocks + 1);
    uint32_t top = s->np + 3 * s->ny + 2;
    r.seen_known = ARENA_ARRAY(a, uint32_t, top);
    r.found = ARENA_ARRAY(a, uint32_t, top);
    uint32_t nonempty = 0, multi = 0;
    for (uint32_t i = 0; i < s->ny; i++) {
        r.stamp++;
        r.nfound = 0;
        reach(&r, (uint32_t)r.block_of[i]);
        qsort(r.found, r.nfound, sizeof *r.found, cmp_u32);
        const FmiSet *z = &d.z[i];
        ck_assert_uint_eq(z->n, r.nfound);
        for (uint32_t j = 0; j < z->n; j++)
            ck_assert_uint_eq(d.known_index[z->k[j]], r.found[j]);
        nonempty += z->n > 0;
        multi += z->n > 2;
    }
    /* the models are not trivial: most sets non-empty, some of several */
    ck_assert_uint_ge(nonempty, s->ny / 2);
    ck_assert_uint_ge(multi, 1);
    arena_free(f.arena);
}

START_TEST(random_models_match_reachability) {
    for (unsigned seed = 1; seed <= 20; seed++)
        check_model(seed, 3 + seed % 7, seed % 3, 8 + 3 * seed);
}
END_TEST

int main(void) {
    Suite *s = suite_create("fmi_deps");
    TCase *tc = tcase_create("fmi_deps");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, random_models_match_reachability);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
