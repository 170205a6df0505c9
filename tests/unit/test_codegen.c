/*
 * test_codegen.c -- unit tests of compiler/codegen (Check).
 *
 * Systems are built by hand with the Expr API; the JIT-compiled functions
 * are compared with expr_eval of the same Exprs at random points (relative
 * 1e-12), across -O levels and chunk caps.  Also: the descriptor layout as
 * seen through the C struct, bounded chunk sizes on a 10,001-residual
 * system, and (when DYADC_BUILD_DIR points at a build with the runtime
 * archives) object file + link + run of a standalone simulator.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "structure/structure.h"
#include "dyadrt.h"

/* ---------- building Systems ---------- */

typedef struct TestSys {
    Arena *arena;
    ExprCtx *x;
    System s;
} TestSys;

static TestSys *ts_new(void) {
    Arena *a = arena_new();
    TestSys *t = ARENA_NEW(a, TestSys);
    t->arena = a;
    t->x = expr_ctx_new(a);
    t->s.ctx = t->x;
    t->s.model_name = "Test.Model";
    t->s.stop_time = 1.0;
    t->s.rtol = 1e-6;
    t->s.atol = 1e-8;
    return t;
}

static void ts_free(TestSys *t) { arena_free(t->arena); }

static Expr *Y(TestSys *t, uint32_t i) { return expr_leaf(t->x, EXPR_Y, i); }
static Expr *YP(TestSys *t, uint32_t i) { return expr_leaf(t->x, EXPR_YP, i); }
static Expr *P(TestSys *t, uint32_t i) { return expr_leaf(t->x, EXPR_P, i); }
static Expr *Z(TestSys *t, uint32_t i) { return expr_leaf(t->x, EXPR_Z, i); }
static Expr *C(TestSys *t, double v) { return expr_const(t->x, v); }

static const char **names(TestSys *t, const char *prefix, uint32_t n) {
    const char **v = ARENA_ARRAY(t->arena, const char *, n);
    for (uint32_t i = 0; i < n; i++) v[i] = arena_printf(t->arena, "%s%u", prefix, i);
    return v;
}

/* Unknowns with their residuals; dense-in-pattern Jacobian from expr_diff
 * of the rows within `band` of each column, keeping only structurally
 * nonzero entries. */
static void ts_set_resid_band(TestSys *t, uint32_t ny, Expr **resid, uint32_t band) {
    System *s = &t->s;
    s->ny = ny;
    s->resid = resid;
    s->y_names = names(t, "y", ny);
    s->y_is_diff = ARENA_ARRAY(t->arena, unsigned char, ny);
    s->start = ARENA_ARRAY(t->arena, Expr *, ny);
    s->start_yp = ARENA_ARRAY(t->arena, Expr *, ny);
    s->jac_colptr = ARENA_ARRAY(t->arena, int32_t, ny + 1);
    Vec(int32_t) rows = {0};
    Vec(Expr *) dy = {0}, dyp = {0};
    for (uint32_t c = 0; c < ny; c++) {
        s->start[c] = C(t, 1.0);
        s->start_yp[c] = C(t, 0.0);
        for (uint32_t r = c > band ? c - band : 0; r < ny && r <= c + band; r++) {
            Expr *a = expr_diff(t->x, resid[r], Y(t, c));
            Expr *b = expr_diff(t->x, resid[r], YP(t, c));
            if (!expr_is_const_value(b, 0)) s->y_is_diff[c] = 1;
            if (expr_is_const_value(a, 0) && expr_is_const_value(b, 0)) continue;
            vec_push(t->arena, &rows, (int32_t)r);
            vec_push(t->arena, &dy, a);
            vec_push(t->arena, &dyp, b);
        }
        s->jac_colptr[c + 1] = (int32_t)rows.len;
    }
    s->jac_nnz = rows.len;
    s->jac_rowidx = rows.data;
    s->jac_dy = dy.data;
    s->jac_dyp = dyp.data;
}

static void ts_set_resid(TestSys *t, uint32_t ny, Expr **resid) { ts_set_resid_band(t, ny, resid, ny); }

static void ts_set_params(TestSys *t, uint32_t np, Expr **defaults, uint32_t *order) {
    System *s = &t->s;
    s->np = np;
    s->param_names = names(t, "p", np);
    s->param_flags = ARENA_ARRAY(t->arena, unsigned char, np);
    s->param_default = defaults;
    s->param_order = order;
}

static void ts_set_outputs(TestSys *t, uint32_t n, Expr **out) {
    t->s.nout = n;
    t->s.out = out;
    t->s.out_names = names(t, "out", n);
}

/* y' = -k*y, k = p0 (default 1.5), p1 = 2*k (dependent); outputs y, p1*y */
static TestSys *decay_system(void) {
    TestSys *t = ts_new();
    Expr **r = ARENA_ARRAY(t->arena, Expr *, 1);
    r[0] = expr_add(t->x, YP(t, 0), expr_mul(t->x, P(t, 0), Y(t, 0)));
    ts_set_resid(t, 1, r);
    t->s.y_names[0] = "y";
    Expr **d = ARENA_ARRAY(t->arena, Expr *, 2);
    d[0] = C(t, 1.5);
    d[1] = expr_mul(t->x, C(t, 2.0), P(t, 0));
    uint32_t *ord = ARENA_ARRAY(t->arena, uint32_t, 2);
    ord[0] = 0;
    ord[1] = 1;
    ts_set_params(t, 2, d, ord);
    t->s.param_names[0] = "k";
    t->s.param_names[1] = "k2";
    t->s.param_flags[1] = SYS_PARAM_DEPENDENT;
    Expr **o = ARENA_ARRAY(t->arena, Expr *, 2);
    o[0] = Y(t, 0);
    o[1] = expr_mul(t->x, P(t, 1), Y(t, 0));
    ts_set_outputs(t, 2, o);
    t->s.out_names[0] = "y";
    t->s.out_names[1] = "k2y";
    return t;
}

/* a 2-unknown index-1 DAE: x' = -x + w, 0 = w - p0*sin(x) - t */
static TestSys *dae_system(void) {
    TestSys *t = ts_new();
    Expr **r = ARENA_ARRAY(t->arena, Expr *, 2);
    r[0] = expr_sub(t->x, YP(t, 0), expr_add(t->x, expr_neg(t->x, Y(t, 0)), Y(t, 1)));
    Expr *f = expr_add(t->x, expr_mul(t->x, P(t, 0), expr_call(t->x, FN_SIN, Y(t, 0), NULL)),
                       expr_time(t->x));
    r[1] = expr_sub(t->x, Y(t, 1), f);
    ts_set_resid(t, 2, r);
    ts_set_params(t, 1, NULL, NULL);
    return t;
}

/* every operator and builtin in one residual list */
static Expr **mixed_exprs(TestSys *t, uint32_t *n) {
    ExprCtx *x = t->x;
    Expr *a = Y(t, 0), *b = Y(t, 1), *k = P(t, 0), *tm = expr_time(x);
    Vec(Expr *) v = {0};
#define PUSH(e) vec_push(t->arena, &v, (e))
    for (int f = 0; f < FN_COUNT; f++) {
        Expr *arg = (f == FN_ASIN || f == FN_ACOS) ? expr_mul(x, C(t, 0.3), a) : a;
        PUSH(expr_call(x, (ExprFn)f, arg, expr_fn_arity[f] == 2 ? expr_sub(x, b, C(t, 0.7)) : NULL));
    }
    PUSH(expr_call(x, FN_SIGN, expr_sub(x, a, b), NULL));
    PUSH(expr_call(x, FN_MOD, expr_neg(x, a), C(t, 0.3)));
    double exps[] = {2, 3, -1, 0.5, 2.5, -0.75};
    for (unsigned i = 0; i < sizeof exps / sizeof exps[0]; i++)
        PUSH(expr_pow(x, expr_add(x, a, YP(t, 0)), C(t, exps[i])));
    PUSH(expr_pow(x, a, b));
    for (int c = EXPR_LT; c <= EXPR_NE; c++) PUSH(expr_cmp(x, (ExprKind)c, a, b));
    PUSH(expr_cmp(x, EXPR_EQ, a, a));
    Expr *c1 = expr_cmp(x, EXPR_GT, a, k), *c2 = expr_cmp(x, EXPR_LT, b, tm);
    PUSH(expr_and(x, c1, c2));
    PUSH(expr_or(x, c1, c2));
    PUSH(expr_not(x, c1));
    PUSH(expr_ifelse(x, c1, expr_call(x, FN_COS, b, NULL), expr_div(x, a, b)));
    PUSH(expr_ifelse(x, expr_sub(x, a, b), a, b));
    PUSH(expr_div(x, expr_mul(x, a, tm), expr_add(x, k, YP(t, 1))));
#undef PUSH
    *n = v.len;
    return v.data;
}

static TestSys *mixed_system(void) {
    TestSys *t = ts_new();
    uint32_t n;
    Expr **e = mixed_exprs(t, &n);
    /* residual i = e_i * y'(i mod 2) + e_i, so dF/dy' is nonzero too */
    Expr **r = ARENA_ARRAY(t->arena, Expr *, n);
    for (uint32_t i = 0; i < n; i++)
        r[i] = expr_add(t->x, expr_mul(t->x, e[i], YP(t, i % 2)), e[i]);
    ts_set_resid(t, 2, r);     /* ny=2 unknowns, only the first two residuals form F */
    t->s.ny = 2;
    ts_set_params(t, 1, NULL, NULL);
    ts_set_outputs(t, n, e);
    t->s.nz = 2;
    t->s.zc = ARENA_ARRAY(t->arena, Expr *, 2);
    t->s.zc[0] = expr_sub(t->x, Y(t, 0), P(t, 0));
    t->s.zc[1] = e[3];
    return t;
}

/* ---------- evaluating Exprs at a point ---------- */

typedef struct Point {
    double t, cj;
    double *y, *yp, *p, *z;
} Point;

static double leaf_value(void *ud, const Expr *e) {
    const Point *pt = ud;
    switch ((ExprKind)e->kind) {
    case EXPR_TIME: return pt->t;
    case EXPR_Y: return pt->y[e->index];
    case EXPR_YP: return pt->yp[e->index];
    case EXPR_P: return pt->p[e->index];
    case EXPR_Z: return pt->z[e->index];
    default: return NAN;
    }
}

static double ev(Expr *e, Point *pt) { return e ? expr_eval(e, leaf_value, pt) : 0.0; }

static double urand(double lo, double hi) { return lo + (hi - lo) * (rand() / (double)RAND_MAX); }

static void random_point(Point *pt, double *buf, uint32_t n) {
    pt->y = buf;
    pt->yp = buf + n;
    pt->p = buf + 2 * n;
    pt->z = buf + 3 * n;
    for (uint32_t i = 0; i < 4 * n; i++) buf[i] = urand(0.5, 2.0);
    pt->t = urand(0.0, 3.0);
    pt->cj = urand(1.0, 100.0);
}

static void assert_close(double got, double want, const char *what, uint32_t i) {
    if (isnan(want)) {
        ck_assert_msg(isnan(got), "%s[%u]: got %.17g, want NaN", what, i, got);
        return;
    }
    double tol = 1e-12 * fmax(1.0, fabs(want));
    ck_assert_msg(fabs(got - want) <= tol, "%s[%u]: got %.17g, want %.17g", what, i, got, want);
}

/* Compare residual, jacobian, outputs, zero crossings at random points. */
static void check_against_eval(const System *s, const DyrtModel *m) {
    enum { N = 64 };
    double buf[4 * N], out[N], jac[4 * N];
    ck_assert_uint_le(s->ny, N);
    ck_assert_uint_le(s->nout, N);
    for (int rep = 0; rep < 20; rep++) {
        Point pt;
        random_point(&pt, buf, N);
        if (rep == 0) pt.y[0] = pt.y[1]; /* hit equality branches once */
        ck_assert_int_eq(m->residual(pt.t, pt.y, pt.yp, pt.p, out), 0);
        for (uint32_t i = 0; i < s->ny; i++) assert_close(out[i], ev(s->resid[i], &pt), "resid", i);
        ck_assert_int_eq(m->jacobian(pt.t, pt.y, pt.yp, pt.p, pt.cj, jac), 0);
        for (uint32_t k = 0; k < s->jac_nnz; k++)
            assert_close(jac[k], ev(s->jac_dy[k], &pt) + pt.cj * ev(s->jac_dyp[k], &pt), "jac", k);
        if (m->outputs) dyrt_model_outputs(m, pt.t, pt.y, pt.yp, pt.p, out);
        for (uint32_t i = 0; i < s->nout; i++) assert_close(out[i], ev(s->out[i], &pt), "out", i);
        if (m->zero_crossings) m->zero_crossings(pt.t, pt.y, pt.yp, pt.p, out);
        for (uint32_t i = 0; i < s->nz; i++) assert_close(out[i], ev(s->zc[i], &pt), "zc", i);
    }
}

static void check_system(const System *s, const CgOptions *o) {
    CgJit *j = cg_jit_compile(s, o);
    ck_assert_ptr_nonnull(j);
    check_against_eval(s, cg_jit_model(j));
    cg_jit_free(j);
}

/* ---------- tests ---------- */

START_TEST(test_decay_numeric) {
    TestSys *t = decay_system();
    for (int lvl = 0; lvl <= 3; lvl++) {
        CgOptions o;
        cg_options_init(&o);
        o.opt_level = lvl;
        check_system(&t->s, &o);
    }
    ts_free(t);
}
END_TEST

START_TEST(test_param_defaults) {
    TestSys *t = decay_system();
    CgJit *j = cg_jit_compile(&t->s, NULL);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *m = cg_jit_model(j);
    double p[2] = {0, 0};
    unsigned char given[2] = {0, 0};
    dyrt_model_param_defaults(m, p, given);
    ck_assert_double_eq(p[0], 1.5);
    ck_assert_double_eq(p[1], 3.0);
    p[0] = 4.0;
    p[1] = -1.0;
    given[0] = 1;
    dyrt_model_param_defaults(m, p, given);
    ck_assert_double_eq(p[0], 4.0);
    ck_assert_double_eq(p[1], 8.0);
    given[1] = 1;
    p[1] = 7.0;
    dyrt_model_param_defaults(m, p, given);
    ck_assert_double_eq(p[1], 7.0);
    double y[1], yp[1] = {42};
    dyrt_model_start(m, 0.0, p, y, yp);
    ck_assert_double_eq(y[0], 1.0);
    ck_assert_double_eq(yp[0], 0.0);
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

/* ABI 3: outputs c0 + c1*slot become the out_copy table (struct_tables),
 * constant
 * defaults and start values become tables; the rest stays code, and
 * dyrt_model_* gives the same values as evaluating the Exprs. */
START_TEST(test_data_tables) {
    TestSys *t = decay_system();         /* out: y (copy), p1*y (code) */
    Expr **o = ARENA_ARRAY(t->arena, Expr *, 10);
    o[0] = Y(t, 0);
    o[1] = expr_mul(t->x, P(t, 1), Y(t, 0));
    o[2] = expr_neg(t->x, YP(t, 0));
    o[3] = expr_mul(t->x, C(t, 3.0), Y(t, 0));
    o[4] = expr_add(t->x, expr_mul(t->x, Y(t, 0), C(t, -0.1)), C(t, 7.0));
    o[5] = C(t, 42.0);
    o[6] = expr_time(t->x);
    o[7] = P(t, 0);
    o[8] = expr_add(t->x, C(t, 1.0), expr_neg(t->x, P(t, 1)));
    o[9] = expr_div(t->x, Y(t, 0), C(t, 3.0));       /* not a copy: y/3 != y*(1/3) */
    ts_set_outputs(t, 10, o);
    t->s.start[0] = expr_mul(t->x, C(t, 2.0), P(t, 0)); /* start y: code; y': constant */
    struct_tables(&t->s);                /* the structure phase classifies */
    CgJit *j = cg_jit_compile(&t->s, NULL);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *m = cg_jit_model(j);
    ck_assert_int_eq(m->nout_copy, 8);
    ck_assert_ptr_nonnull(m->param_has_const);
    ck_assert_int_eq(m->param_has_const[0], 1);
    ck_assert_int_eq(m->param_has_const[1], 0);
    ck_assert_int_eq(m->start_has_const[0], 2);
    double p[2] = {0, 0}, y = 0.7, yp = -1.25, out[10];
    unsigned char given[2] = {0, 0};
    dyrt_model_param_defaults(m, p, given);
    ck_assert_double_eq(p[0], 1.5);
    ck_assert_double_eq(p[1], 3.0);
    double y0 = -1, yp0 = 9;
    dyrt_model_start(m, 0.0, p, &y0, &yp0);
    ck_assert_double_eq(y0, 3.0);
    ck_assert_double_eq(yp0, 0.0);
    dyrt_model_outputs(m, 0.25, &y, &yp, p, out);
    Point pt = {.t = 0.25, .y = &y, .yp = &yp, .p = p};
    for (uint32_t i = 0; i < 10; i++)
        ck_assert_msg(memcmp(&out[i], &(double){ev(o[i], &pt)}, sizeof(double)) == 0,
                      "out[%u] = %.17g, eval %.17g", i, out[i], ev(o[i], &pt));
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

/* One output far larger than the chunk cap (a sum of 3,000 quotients) is
 * split into pieces of at most cap nodes, with the same value. */
START_TEST(test_oversized_item) {
    TestSys *t = decay_system();
    Expr *sum = C(t, 0.0);
    for (uint32_t k = 0; k < 3000; k++)
        sum = expr_add(t->x, sum, expr_div(t->x, Y(t, 0), C(t, 1.0 + k)));
    /* two long sums over the same terms in opposite orders: a term inside a
     * piece of the first can be cut later through the second */
    Expr *s1 = C(t, 0.0), *s2 = C(t, 0.0), *term[400];
    for (uint32_t k = 0; k < 400; k++)
        term[k] = expr_mul(t->x, YP(t, 0), expr_add(t->x, Y(t, 0), C(t, 2.0 + k)));
    for (uint32_t k = 0; k < 400; k++) {
        s1 = expr_add(t->x, s1, term[k]);
        s2 = expr_add(t->x, term[399 - k], s2);
    }
    Expr **o = ARENA_ARRAY(t->arena, Expr *, 2);
    o[0] = sum;
    o[1] = expr_div(t->x, s1, s2);
    ts_set_outputs(t, 2, o);
    CgOptions opt;
    cg_options_init(&opt);
    opt.chunk_nodes = 100;
    CgStats st;
    ck_assert_int_eq(cg_stats(&t->s, &opt, &st), 0);
    ck_assert_uint_le(st.max_chunk_nodes, 100);
    ck_assert_uint_gt(st.chunks, 30);
    CgJit *j = cg_jit_compile(&t->s, &opt);
    ck_assert_ptr_nonnull(j);
    double p[2] = {1.5, 3.0}, y = 0.7, yp = 0.3, out[2];
    dyrt_model_outputs(cg_jit_model(j), 0.0, &y, &yp, p, out);
    Point pt = {.t = 0, .y = &y, .yp = &yp, .p = p};
    ck_assert_double_eq(out[0], ev(sum, &pt));
    ck_assert_double_eq(out[1], ev(o[1], &pt));
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

START_TEST(test_dae_numeric) {
    TestSys *t = dae_system();
    check_system(&t->s, NULL);
    ts_free(t);
}
END_TEST

START_TEST(test_mixed_numeric) {
    TestSys *t = mixed_system();
    uint32_t caps[] = {0, 1, 7, 40};
    for (unsigned i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        CgOptions o;
        cg_options_init(&o);
        o.chunk_nodes = caps[i];
        o.opt_level = (int)(i % 4);
        check_system(&t->s, &o);
    }
    ts_free(t);
}
END_TEST

/* No reassociation or contraction: -O0 and -O3 give bit-identical values. */
/* The mode leaf of event k (structure/events.c puts it where a relation on
 * continuous values was) reads p[np + k], not the current sign: with
 * mode 0 the `ifelse` takes its "false" branch although y0 > p0. */
START_TEST(test_mode_leaf) {
    TestSys *t = ts_new();
    Expr *g = expr_sub(t->x, Y(t, 0), P(t, 0));
    Expr *m = expr_leaf(t->x, EXPR_MODE, 0);
    Expr *out[2] = {expr_ifelse(t->x, m, C(t, 10), C(t, 20)), expr_not(t->x, m)};
    Expr *r[1] = {expr_sub(t->x, YP(t, 0), out[0])};
    ts_set_resid(t, 1, r);
    ts_set_params(t, 1, NULL, NULL);
    ts_set_outputs(t, 2, out);
    t->s.nz = 1;
    t->s.zc = ARENA_ARRAY(t->arena, Expr *, 1);
    t->s.zc[0] = g;
    CgJit *j = cg_jit_compile(&t->s, NULL);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *md = cg_jit_model(j);
    ck_assert_int_eq(md->nmodes, 1);
    double y = 2, yp = 0, p[2] = {1, 0}, o[2], res;
    dyrt_model_outputs(md, 0, &y, &yp, p, o);
    ck_assert_double_eq(o[0], 20.0); /* mode 0: the "false" branch although y > p */
    ck_assert_double_eq(o[1], 1.0);
    ck_assert_int_eq(md->residual(0, &y, &yp, p, &res), 0);
    ck_assert_double_eq(res, -20.0);
    md->zero_crossings(0, &y, &yp, p, o);
    ck_assert_double_eq(o[0], 1.0);  /* the function itself compares nothing */
    p[1] = 1;
    dyrt_model_outputs(md, 0, &y, &yp, p, o);
    ck_assert_double_eq(o[0], 10.0);
    ck_assert_double_eq(o[1], 0.0);
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

START_TEST(test_levels_bitwise) {
    TestSys *t = mixed_system();
    CgOptions o0, o3;
    cg_options_init(&o0);
    cg_options_init(&o3);
    o0.opt_level = 0;
    o3.opt_level = 3;
    CgJit *j0 = cg_jit_compile(&t->s, &o0), *j3 = cg_jit_compile(&t->s, &o3);
    ck_assert_ptr_nonnull(j0);
    ck_assert_ptr_nonnull(j3);
    enum { N = 64 };
    double buf[4 * N], a[N], b[N];
    for (int rep = 0; rep < 20; rep++) {
        Point pt;
        random_point(&pt, buf, N);
        memset(a, 0, sizeof a);
        memset(b, 0, sizeof b);
        dyrt_model_outputs(cg_jit_model(j0), pt.t, pt.y, pt.yp, pt.p, a);
        dyrt_model_outputs(cg_jit_model(j3), pt.t, pt.y, pt.yp, pt.p, b);
        ck_assert_int_eq(memcmp(a, b, t->s.nout * sizeof(double)), 0);
        cg_jit_model(j0)->jacobian(pt.t, pt.y, pt.yp, pt.p, pt.cj, a);
        cg_jit_model(j3)->jacobian(pt.t, pt.y, pt.yp, pt.p, pt.cj, b);
        ck_assert_int_eq(memcmp(a, b, t->s.jac_nnz * sizeof(double)), 0);
    }
    cg_jit_free(j0);
    cg_jit_free(j3);
    ts_free(t);
}
END_TEST

START_TEST(test_nan_status) {
    TestSys *t = ts_new();
    Expr **r = ARENA_ARRAY(t->arena, Expr *, 1);
    r[0] = expr_add(t->x, YP(t, 0), expr_call(t->x, FN_SQRT, Y(t, 0), NULL));
    ts_set_resid(t, 1, r);
    CgJit *j = cg_jit_compile(&t->s, NULL);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *m = cg_jit_model(j);
    double y = 4, yp = 1, out, p = 0;
    ck_assert_int_eq(m->residual(0, &y, &yp, &p, &out), 0);
    ck_assert_double_eq(out, 3.0);
    y = -1;
    ck_assert_int_ne(m->residual(0, &y, &yp, &p, &out), 0);
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

START_TEST(test_asserts_and_init) {
    TestSys *t = decay_system();
    System *s = &t->s;
    s->nassert = 2;
    s->assert_cond = ARENA_ARRAY(t->arena, Expr *, 2);
    s->assert_cond[0] = expr_cmp(t->x, EXPR_GT, Y(t, 0), C(t, 0));
    s->assert_cond[1] = expr_cmp(t->x, EXPR_LT, P(t, 0), C(t, 10));
    s->assert_msg = names(t, "msg", 2);
    /* init: z0 = p0 + t, z1 = 2*z0; z0 -> y[0], z1 -> p[1] */
    s->init_n = 2;
    s->init_names = names(t, "z", 2);
    s->init_resid = ARENA_ARRAY(t->arena, Expr *, 2);
    s->init_resid[0] = expr_sub(t->x, Z(t, 0), expr_add(t->x, P(t, 0), expr_time(t->x)));
    s->init_resid[1] = expr_sub(t->x, Z(t, 1), expr_mul(t->x, C(t, 2), Z(t, 0)));
    static int32_t colptr[3] = {0, 2, 3}, rowidx[3] = {0, 1, 1};
    s->init_nnz = 3;
    s->init_colptr = colptr;
    s->init_rowidx = rowidx;
    s->init_jac = ARENA_ARRAY(t->arena, Expr *, 3);
    s->init_jac[0] = C(t, 1);
    s->init_jac[1] = C(t, -2);
    s->init_jac[2] = C(t, 1);
    s->init_guess = ARENA_ARRAY(t->arena, Expr *, 2);
    s->init_guess[0] = P(t, 0);
    s->init_guess[1] = expr_time(t->x);
    s->init_target_kind = ARENA_ARRAY(t->arena, uint8_t, 2);
    s->init_target_index = ARENA_ARRAY(t->arena, uint32_t, 2);
    s->init_target_kind[0] = EXPR_Y;
    s->init_target_kind[1] = EXPR_P;
    s->init_target_index[1] = 1;
    /* ABI 2: equation texts and y0's `initial` relation (row 0, held by z0) */
    s->init_eq_names = names(t, "eq", 2);
    static int32_t initial_row[1] = {0};
    s->initial_row = initial_row;
    CgOptions o;
    cg_options_init(&o);
    o.chunk_nodes = 2;
    CgJit *j = cg_jit_compile(s, &o);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *m = cg_jit_model(j);
    double y = 1, yp = 0, p[2] = {3, 0};
    ck_assert_int_eq(m->check_asserts(0, &y, &yp, p), 0);
    y = -1;
    ck_assert_int_eq(m->check_asserts(0, &y, &yp, p), 1);
    p[0] = 11;
    ck_assert_int_eq(m->check_asserts(0, &y, &yp, p), 1);
    y = 1;
    ck_assert_int_eq(m->check_asserts(0, &y, &yp, p), 2);
    p[0] = 3;
    double z[2], r[2], vals[3];
    m->init_guess(0.5, p, z);
    ck_assert_double_eq(z[0], 3.0);
    ck_assert_double_eq(z[1], 0.5);
    z[1] = 5;
    ck_assert_int_eq(m->init_residual(0.5, z, p, r), 0);
    ck_assert_double_eq(r[0], -0.5);
    ck_assert_double_eq(r[1], -1.0);
    ck_assert_int_eq(m->init_jacobian(0.5, z, p, vals), 0);
    ck_assert_double_eq(vals[1], -2.0);
    m->init_finish(0.5, z, p, &y, &yp);
    ck_assert_double_eq(y, 3.0);
    ck_assert_double_eq(p[1], 5.0);
    ck_assert_int_eq(m->init_colptr[2], 3);
    ck_assert_str_eq(m->init_names[1], "z1");
    ck_assert_str_eq(m->assert_messages[1], "msg1");
    ck_assert_str_eq(m->init_eq_names[1], "eq1");
    ck_assert_int_eq(m->initial_row[0], 0);
    ck_assert_int_eq(m->initial_z[0], 0);
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

START_TEST(test_descriptor_layout) {
    TestSys *t = decay_system();
    static double tstops[2] = {0.25, 0.5};
    t->s.ntstops = 2;
    t->s.tstops = tstops;
    t->s.interval = 0.125;
    t->s.dtmax = 0.01;
    CgJit *j = cg_jit_compile(&t->s, NULL);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *m = cg_jit_model(j);
    ck_assert_uint_eq(m->abi_version, DYRT_ABI_VERSION);
    ck_assert_str_eq(m->name, "Test.Model");
    ck_assert_int_eq(m->ny, 1);
    ck_assert_int_eq(m->np, 2);
    ck_assert_int_eq(m->nout, 2);
    ck_assert_int_eq(m->nz, 0);
    ck_assert_int_eq(m->nassert, 0);
    ck_assert_str_eq(m->y_names[0], "y");
    ck_assert_int_eq(m->y_is_diff[0], 1);
    ck_assert_str_eq(m->param_names[1], "k2");
    ck_assert_int_eq(m->param_flags[1], DYRT_PARAM_DEPENDENT);
    ck_assert_str_eq(m->out_names[1], "k2y");
    ck_assert_ptr_null(m->assert_messages);
    ck_assert_int_eq(m->jac_nnz, 1);
    ck_assert_int_eq(m->jac_colptr[1], 1);
    ck_assert_int_eq(m->jac_rowidx[0], 0);
    ck_assert_ptr_nonnull(m->param_defaults);
    ck_assert_ptr_nonnull(m->start);
    ck_assert_ptr_nonnull(m->residual);
    ck_assert_ptr_nonnull(m->jacobian);
    ck_assert_ptr_nonnull(m->outputs);
    ck_assert_ptr_null(m->zero_crossings);
    ck_assert_ptr_null(m->check_asserts);
    ck_assert_int_eq(m->init_n, 0);
    ck_assert_ptr_null(m->init_residual);
    ck_assert_ptr_null(m->init_finish);
    ck_assert_ptr_null(m->init_eq_names);
    ck_assert_ptr_null(m->initial_row);
    ck_assert_ptr_null(m->initial_z);
    ck_assert_double_eq(m->defaults.stop, 1.0);
    ck_assert_double_eq(m->defaults.interval, 0.125);
    ck_assert_double_eq(m->defaults.rtol, 1e-6);
    ck_assert_double_eq(m->defaults.atol, 1e-8);
    ck_assert_double_eq(m->defaults.dtmax, 0.01);
    ck_assert_int_eq(m->defaults.ntstops, 2);
    ck_assert_double_eq(m->defaults.tstops[1], 0.5);
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

/* r_i = y_i' + p0*y_i + sin(y_{i-1}) * y_{i+1} (cyclic), n = 10,001 */
static TestSys *big_system(uint32_t n) {
    TestSys *t = ts_new();
    Expr **r = ARENA_ARRAY(t->arena, Expr *, n);
    for (uint32_t i = 0; i < n; i++) {
        Expr *s = expr_call(t->x, FN_SIN, Y(t, (i + n - 1) % n), NULL);
        r[i] = expr_add(t->x, expr_add(t->x, YP(t, i), expr_mul(t->x, P(t, 0), Y(t, i))),
                        expr_mul(t->x, s, Y(t, (i + 1) % n)));
    }
    System *sy = &t->s;
    sy->ny = n;
    sy->resid = r;
    sy->y_names = names(t, "y", n);
    sy->y_is_diff = ARENA_ARRAY(t->arena, unsigned char, n);
    sy->start = ARENA_ARRAY(t->arena, Expr *, n);
    /* Jacobian: for column c, rows c-1, c, c+1 (cyclic, sorted) */
    sy->jac_colptr = ARENA_ARRAY(t->arena, int32_t, n + 1);
    sy->jac_rowidx = ARENA_ARRAY(t->arena, int32_t, 3 * n);
    sy->jac_dy = ARENA_ARRAY(t->arena, Expr *, 3 * n);
    sy->jac_dyp = ARENA_ARRAY(t->arena, Expr *, 3 * n);
    uint32_t k = 0;
    for (uint32_t c = 0; c < n; c++) {
        uint32_t rows[3] = {(c + n - 1) % n, c, (c + 1) % n};
        for (int a = 0; a < 3; a++)
            for (int b = a + 1; b < 3; b++)
                if (rows[b] < rows[a]) {
                    uint32_t tmp = rows[a];
                    rows[a] = rows[b];
                    rows[b] = tmp;
                }
        for (int q = 0; q < 3; q++) {
            sy->jac_rowidx[k] = (int32_t)rows[q];
            sy->jac_dy[k] = expr_diff(t->x, r[rows[q]], Y(t, c));
            sy->jac_dyp[k] = expr_diff(t->x, r[rows[q]], YP(t, c));
            k++;
        }
        sy->y_is_diff[c] = 1;
        sy->start[c] = C(t, 1.0);
        sy->jac_colptr[c + 1] = (int32_t)k;
    }
    sy->jac_nnz = k;
    ts_set_params(t, 1, NULL, NULL);
    return t;
}

START_TEST(test_chunk_bounds) {
    TestSys *t = big_system(10001);
    CgOptions o;
    cg_options_init(&o);
    o.no_loops = 1; /* straight-line chunks: their bounds are checked here */
    CgStats st;
    ck_assert_int_eq(cg_stats(&t->s, &o, &st), 0);
    ck_assert_uint_gt(st.chunks, 10);
    ck_assert_uint_le(st.max_chunk_nodes, CG_CHUNK_MAX_NODES);
    /* at most ~4 instructions per node, plus call overhead in entries */
    ck_assert_msg(st.max_instructions <= 4 * CG_CHUNK_MAX_NODES + 64,
                  "largest function has %u instructions", st.max_instructions);
    o.opt_level = 0; /* the chunked values; O2 is covered by the small systems */
    CgJit *j = cg_jit_compile(&t->s, &o);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *m = cg_jit_model(j);
    uint32_t n = t->s.ny;
    double *y = malloc(4 * n * sizeof *y), *yp = y + n, *r = y + 2 * n, p = 0.3;
    double *vals = malloc(3 * n * sizeof *vals);
    for (uint32_t i = 0; i < 2 * n; i++) y[i] = urand(-1, 1);
    Point pt = {.t = 0, .cj = 10, .y = y, .yp = yp, .p = &p};
    ck_assert_int_eq(m->residual(0, y, yp, &p, r), 0);
    ck_assert_int_eq(m->jacobian(0, y, yp, &p, 10, vals), 0);
    for (uint32_t i = 0; i < n; i += 97) assert_close(r[i], ev(t->s.resid[i], &pt), "resid", i);
    for (uint32_t k = 0; k < t->s.jac_nnz; k += 89)
        assert_close(vals[k], ev(t->s.jac_dy[k], &pt) + 10 * ev(t->s.jac_dyp[k], &pt), "jac", k);
    free(vals);
    free(y);
    cg_jit_free(j);
    ts_free(t);
}
END_TEST

/* A ladder built like n instances of one component: interior rows of one
 * shape with every slot shifted per row (the codegen turns them into
 * loops), boundary rows, and rows i < 40 that also read y[20] (at i = 20
 * the two leaves coincide and the shape changes, so a run must break
 * there); outputs of period 3; coefficient checks of period 2 (-R_i, C_i:
 * an ASSERT function, whose loops must report the first zero as the
 * straight code does).  p[2i] = R_i, p[2i+1] = C_i. */
static TestSys *ladder_system(uint32_t n) {
    TestSys *t = ts_new();
    Expr **r = ARENA_ARRAY(t->arena, Expr *, n), **out = ARENA_ARRAY(t->arena, Expr *, 3 * n);
    Expr **coef = ARENA_ARRAY(t->arena, Expr *, 2 * n);
    for (uint32_t i = 0; i < n; i++) {
        Expr *left = i ? Y(t, i - 1) : C(t, 0), *right = i + 1 < n ? Y(t, i + 1) : C(t, 0);
        Expr *in = expr_div(t->x, expr_sub(t->x, left, Y(t, i)), P(t, 2 * i));
        Expr *outflow = expr_div(t->x, expr_sub(t->x, Y(t, i), right), P(t, 2 * i + 2));
        r[i] = expr_sub(t->x, expr_mul(t->x, YP(t, i), P(t, 2 * i + 1)), expr_sub(t->x, in, outflow));
        if (i < 40) r[i] = expr_add(t->x, r[i], expr_mul(t->x, Y(t, i), Y(t, 20)));
        out[3 * i] = expr_mul(t->x, C(t, 2), Y(t, i));
        out[3 * i + 1] = expr_add(t->x, YP(t, i), P(t, 0));
        out[3 * i + 2] = expr_mul(t->x, expr_call(t->x, FN_SIN, Y(t, i), NULL), P(t, 2 * i + 1));
        coef[2 * i] = expr_neg(t->x, P(t, 2 * i));
        coef[2 * i + 1] = P(t, 2 * i + 1);
    }
    ts_set_resid(t, n, r);
    ts_set_params(t, 2 * n + 1, NULL, NULL);
    ts_set_outputs(t, 3 * n, out);
    t->s.ncoef_check = 2 * n;
    t->s.coef_check = coef;
    t->s.coef_check_msg = names(t, "coef", 2 * n);
    return t;
}

/* Residual, Jacobian and outputs of the JIT-compiled model at pt. */
static void eval_model(const DyrtModel *m, const System *s, Point *pt, double *r, double *jac,
                       double *out, int *rc) {
    rc[0] = m->residual(pt->t, pt->y, pt->yp, pt->p, r);
    rc[1] = m->jacobian(pt->t, pt->y, pt->yp, pt->p, pt->cj, jac);
    dyrt_model_outputs(m, pt->t, pt->y, pt->yp, pt->p, out);
    (void)s;
}

START_TEST(test_loops_bitwise) {
    enum { N = 200 };
    TestSys *t = ladder_system(N);
    const System *s = &t->s;
    CgOptions with, without;
    cg_options_init(&with);
    cg_options_init(&without);
    without.no_loops = 1;
    CgStats st;
    ck_assert_int_eq(cg_stats(s, &with, &st), 0);
    ck_assert_uint_ge(st.loops, 4);             /* residual, Jacobian, outputs, checks */
    ck_assert_int_eq(cg_stats(s, &without, &st), 0);
    ck_assert_uint_eq(st.loops, 0);
    size_t ir[2];
    for (int k = 0; k < 2; k++) {               /* the IR shrinks by a loop per run */
        char *buf = NULL;
        FILE *f = open_memstream(&buf, &ir[k]);
        ck_assert_int_eq(cg_dump_ir(s, k ? &without : &with, f), 0);
        fclose(f);
        free(buf);
    }
    ck_assert_msg(ir[0] * 3 < ir[1], "IR %zu bytes with loops, %zu without", ir[0], ir[1]);
    CgJit *jw = cg_jit_compile(s, &with), *jo = cg_jit_compile(s, &without);
    ck_assert_ptr_nonnull(jw);
    ck_assert_ptr_nonnull(jo);
    static double buf[4 * (2 * N + 1)], r[2][N], jac[2][4 * N], out[2][3 * N];
    for (int rep = 0; rep < 10; rep++) {
        Point pt;
        random_point(&pt, buf, 2 * N + 1);
        if (rep == 9) pt.y[100] = NAN;          /* a row inside a loop */
        int rc[2][2];
        eval_model(cg_jit_model(jw), s, &pt, r[0], jac[0], out[0], rc[0]);
        eval_model(cg_jit_model(jo), s, &pt, r[1], jac[1], out[1], rc[1]);
        ck_assert_int_eq(rc[0][0], rep == 9);
        ck_assert_int_eq(rc[1][0], rep == 9);
        ck_assert_mem_eq(r[0], r[1], sizeof r[0]);
        ck_assert_mem_eq(jac[0], jac[1], sizeof(double) * s->jac_nnz);
        ck_assert_mem_eq(out[0], out[1], sizeof out[0]);
        /* coefficient checks: 0 when none is zero, else 1 + the first zero */
        const DyrtModel *mw = cg_jit_model(jw), *mo = cg_jit_model(jo);
        ck_assert_int_eq(mw->check_coefs(pt.p), 0);
        uint32_t zeros[3] = {2 * (37 + rep * 13), 2 * (41 + rep * 17) + 1, 2 * N - 1};
        double keep[3];
        for (int z = 2; z >= 0; z--) {          /* the last, then earlier ones too */
            keep[z] = pt.p[zeros[z]];
            pt.p[zeros[z]] = z == 1 ? NAN : 0.0;
            ck_assert_int_eq(mw->check_coefs(pt.p), (int)zeros[z] + 1);
            ck_assert_int_eq(mo->check_coefs(pt.p), (int)zeros[z] + 1);
        }
        for (int z = 0; z < 3; z++) pt.p[zeros[z]] = keep[z];
        if (rep == 9) continue;
        for (uint32_t i = 0; i < N; i++) assert_close(r[0][i], ev(s->resid[i], &pt), "resid", i);
        for (uint32_t k = 0; k < s->jac_nnz; k++)
            assert_close(jac[0][k], ev(s->jac_dy[k], &pt) + pt.cj * ev(s->jac_dyp[k], &pt), "jac", k);
        for (uint32_t i = 0; i < 3 * N; i++) assert_close(out[0][i], ev(s->out[i], &pt), "out", i);
    }
    cg_jit_free(jw);
    cg_jit_free(jo);
    ts_free(t);
}
END_TEST

/* A copy of t's System (l) with a loop item over the box (ndim
 * dimensions, count[d] instances and row step rstep[d] along d) from row
 * `first`, built by hand as the structure phase builds it for a run: the
 * leaves of the first row with their index steps (stride[d * nleaf + i]),
 * one Jacobian template per distinct column (a Y or YP leaf) and the CSC
 * positions of every instance's entries; its rows and entries NULL. */
static SysLoop *box_loop(TestSys *t, System *l, uint32_t first, uint32_t ndim, const uint32_t *count,
                         const uint32_t *rstep, uint32_t nleaf, Expr *const *leaf, const int32_t *stride) {
    const System *s = &t->s;
    *l = *s;
    l->resid = ARENA_ARRAY(t->arena, Expr *, s->ny);
    l->jac_dy = ARENA_ARRAY(t->arena, Expr *, s->jac_nnz);
    l->jac_dyp = ARENA_ARRAY(t->arena, Expr *, s->jac_nnz);
    memcpy(l->resid, s->resid, sizeof *l->resid * s->ny);
    memcpy(l->jac_dy, s->jac_dy, sizeof *l->jac_dy * s->jac_nnz);
    memcpy(l->jac_dyp, s->jac_dyp, sizeof *l->jac_dyp * s->jac_nnz);
    SysLoop *p = ARENA_NEW(t->arena, SysLoop);
    *p = (SysLoop){.row = first, .count = 1, .ndim = ndim, .res = s->resid[first], .nleaf = nleaf};
    for (uint32_t d = 0; d < ndim; d++) p->dim_count[d] = count[d], p->dim_row[d] = rstep[d], p->count *= count[d];
    p->leaf = ARENA_ARRAY(t->arena, Expr *, nleaf);
    p->stride = ARENA_ARRAY(t->arena, int32_t, ndim * nleaf);
    memcpy(p->leaf, leaf, sizeof *leaf * nleaf);
    memcpy(p->stride, stride, sizeof *stride * ndim * nleaf);
    p->col = ARENA_ARRAY(t->arena, uint32_t, nleaf);
    p->col_stride = ARENA_ARRAY(t->arena, int32_t, ndim * nleaf);
    p->dy = ARENA_ARRAY(t->arena, Expr *, nleaf);
    p->dyp = ARENA_ARRAY(t->arena, Expr *, nleaf);
    uint32_t of[64];                              /* entry -> its leaf */
    for (uint32_t i = 0; i < nleaf; i++) {
        if (leaf[i]->kind != EXPR_Y && leaf[i]->kind != EXPR_YP) continue;
        uint32_t e = 0;
        while (e < p->nent && p->col[e] != leaf[i]->index) e++;
        if (e < p->nent) continue;
        of[p->nent] = i;
        p->col[p->nent] = leaf[i]->index;
        p->dy[p->nent] = expr_diff(t->x, p->res, Y(t, leaf[i]->index));
        p->dyp[p->nent++] = expr_diff(t->x, p->res, YP(t, leaf[i]->index));
    }
    for (uint32_t d = 0; d < ndim; d++)
        for (uint32_t e = 0; e < p->nent; e++) p->col_stride[d * p->nent + e] = stride[d * nleaf + of[e]];
    p->jac_pos = ARENA_ARRAY(t->arena, int32_t, p->nent * p->count);
    for (uint32_t j = 0; j < p->count; j++) {
        uint32_t row = sys_loop_row(p, j);
        l->resid[row] = NULL;
        for (uint32_t e = 0; e < p->nent; e++) {
            uint32_t col = (uint32_t)(p->col[e] + sys_loop_offset(p, j, p->col_stride, p->nent, e));
            int32_t k = s->jac_colptr[col];
            while (k < s->jac_colptr[col + 1] && s->jac_rowidx[k] != (int32_t)row) k++;
            ck_assert_int_lt(k, s->jac_colptr[col + 1]);
            p->jac_pos[p->nent * j + e] = k;
            l->jac_dy[k] = l->jac_dyp[k] = NULL;
        }
    }
    l->nloops = 1;
    l->loops = p;
    sys_index_loops(l);
    return p;
}

/* The ladder's interior rows 60 .. N-2 as one loop item of one
 * dimension: the leaves of row 60 with their strides (y, y' by 1, p by
 * 2).  Compiled, it computes the scalar System's residual and Jacobian bit
 * for bit; sys_expand gives back the scalar rows and entries (the same
 * hash-consed nodes). */
static void ladder_loop(TestSys *t, System *l, uint32_t first, uint32_t count) {
    Expr *leaf[7] = {Y(t, first - 1), Y(t, first), Y(t, first + 1), YP(t, first),
                     P(t, 2 * first), P(t, 2 * first + 1), P(t, 2 * first + 2)};
    static const int32_t stride[7] = {1, 1, 1, 1, 2, 2, 2};
    box_loop(t, l, first, 1, &count, (const uint32_t[]){1}, 7, leaf, stride);
}

/* The loop item computes what the scalar System computes, bit for bit,
 * on random points and with a NaN inside the item; sys_expand gives back
 * the scalar rows and entries (the same nodes). */
static void assert_loop_item(TestSys *t, System *l, uint32_t n, uint32_t min_loops) {
    CgOptions o;
    cg_options_init(&o);
    CgStats st;
    ck_assert_int_eq(cg_stats(l, &o, &st), 0);
    ck_assert_uint_ge(st.loops, min_loops);
    CgJit *jl = cg_jit_compile(l, &o), *js = cg_jit_compile(&t->s, &o);
    ck_assert_ptr_nonnull(jl);
    ck_assert_ptr_nonnull(js);
    uint32_t np = t->s.np, nnz = t->s.jac_nnz, nan_at = sys_loop_row(&l->loops[0], l->loops[0].count / 2);
    double *buf = ARENA_ARRAY(t->arena, double, 4 * (np + 1) + 4 * n);
    double *r[2], *jac[2], *out[2];
    for (int k = 0; k < 2; k++) {
        r[k] = ARENA_ARRAY(t->arena, double, n);
        jac[k] = ARENA_ARRAY(t->arena, double, nnz);
        out[k] = ARENA_ARRAY(t->arena, double, t->s.nout + 1);
    }
    for (int rep = 0; rep < 5; rep++) {
        Point pt;
        random_point(&pt, buf, np > n ? np : n);
        if (rep == 4) pt.y[nan_at] = NAN;           /* a row inside the loop item */
        int rc[2][2];
        eval_model(cg_jit_model(jl), l, &pt, r[0], jac[0], out[0], rc[0]);
        eval_model(cg_jit_model(js), &t->s, &pt, r[1], jac[1], out[1], rc[1]);
        ck_assert_int_eq(rc[0][0], rep == 4);
        ck_assert_mem_eq(r[0], r[1], sizeof(double) * n);
        ck_assert_mem_eq(jac[0], jac[1], sizeof(double) * nnz);
        if (rep == 4) continue;
        for (uint32_t i = 0; i < n; i++) assert_close(r[0][i], ev(t->s.resid[i], &pt), "resid", i);
    }
    cg_jit_free(jl);
    cg_jit_free(js);
    sys_expand(l);
    ck_assert_uint_eq(l->nloops, 0);
    for (uint32_t i = 0; i < n; i++) ck_assert_ptr_eq(l->resid[i], t->s.resid[i]);
    for (uint32_t k = 0; k < nnz; k++) {
        ck_assert_ptr_eq(l->jac_dy[k], t->s.jac_dy[k]);
        ck_assert_ptr_eq(l->jac_dyp[k], t->s.jac_dyp[k]);
    }
}

START_TEST(test_loop_items) {
    enum { N = 200 };
    TestSys *t = ladder_system(N);
    System l;
    ladder_loop(t, &l, 60, N - 61);
    SysAt at;                                      /* row 100 read on integers */
    ck_assert_ptr_eq(sys_resid_at(&l, 100, &at), l.loops[0].res);
    ck_assert_uint_eq(at.j, 40);
    ck_assert_uint_eq(sys_at_index(&at, P(t, 122)), 202);
    assert_loop_item(t, &l, N, 2);                 /* the loop item's residual and Jacobian */
    ts_free(t);
}
END_TEST

/* A plate of NI x NJ cells (cell c = i*NJ + j): r_c = C_c y'_c - G_c *
 * sum over its 2..4 neighbours n of (y_n - y_c), p[2c] = G_c, p[2c+1] =
 * C_c.  A grid row is a boundary cell, NJ - 2 interior cells of one shape
 * (every index moving by 1 or 2) and another boundary cell, and the
 * interior rows repeat with strides NJ and 2 NJ: residual, Jacobian
 * (CSC) and coefficient checks (C_c, negated on the boundary) become
 * nests, an outer loop over the rows around an inner loop over the
 * interior cells; the outputs (two per cell, alike everywhere) one loop. */
static TestSys *plate_system(uint32_t ni, uint32_t nj) {
    TestSys *t = ts_new();
    uint32_t n = ni * nj;
    Expr **r = ARENA_ARRAY(t->arena, Expr *, n), **out = ARENA_ARRAY(t->arena, Expr *, 2 * n);
    Expr **coef = ARENA_ARRAY(t->arena, Expr *, n);
    for (uint32_t i = 0; i < ni; i++)
        for (uint32_t j = 0; j < nj; j++) {
            uint32_t c = i * nj + j;
            Expr *flow = C(t, 0);
            if (i > 0) flow = expr_add(t->x, flow, expr_sub(t->x, Y(t, c - nj), Y(t, c)));
            if (j > 0) flow = expr_add(t->x, flow, expr_sub(t->x, Y(t, c - 1), Y(t, c)));
            if (j + 1 < nj) flow = expr_add(t->x, flow, expr_sub(t->x, Y(t, c + 1), Y(t, c)));
            if (i + 1 < ni) flow = expr_add(t->x, flow, expr_sub(t->x, Y(t, c + nj), Y(t, c)));
            r[c] = expr_sub(t->x, expr_mul(t->x, P(t, 2 * c + 1), YP(t, c)), expr_mul(t->x, P(t, 2 * c), flow));
            out[2 * c] = expr_mul(t->x, P(t, 2 * c + 1), Y(t, c));
            out[2 * c + 1] = expr_call(t->x, FN_SIN, expr_add(t->x, Y(t, c), P(t, 2 * c)), NULL);
            bool edge = i == 0 || j == 0 || i + 1 == ni || j + 1 == nj;
            coef[c] = edge ? expr_neg(t->x, P(t, 2 * c + 1)) : P(t, 2 * c + 1);
        }
    ts_set_resid_band(t, n, r, nj);
    ts_set_params(t, 2 * n, NULL, NULL);
    ts_set_outputs(t, 2 * n, out);
    t->s.ncoef_check = n;
    t->s.coef_check = coef;
    t->s.coef_check_msg = names(t, "coef", n);
    return t;
}

/* The plate's interior cells (rows i * NJ + j, 1 <= i <= NI - 2, 1 <= j
 * <= NJ - 2) as one loop item of two dimensions: lines of NJ - 2
 * consecutive rows, NI - 2 of them NJ rows apart, the boundary rows
 * between them scalar.  Its leaves move by 1 (y, y') and 2 (p) along a
 * line, NJ and 2 NJ from line to line.  It computes the scalar System's
 * residual and Jacobian bit for bit, read on integers (sys_resid_at) and
 * expanded (sys_expand). */
START_TEST(test_box_items) {
    enum { NI = 12, NJ = 40, N = NI * NJ, C0 = NJ + 1 };
    TestSys *t = plate_system(NI, NJ);
    Expr *leaf[8] = {Y(t, C0 - NJ), Y(t, C0 - 1), Y(t, C0), Y(t, C0 + 1), Y(t, C0 + NJ), YP(t, C0),
                     P(t, 2 * C0), P(t, 2 * C0 + 1)};
    static const int32_t stride[16] = {1, 1, 1, 1, 1, 1, 2, 2, NJ, NJ, NJ, NJ, NJ, NJ, 2 * NJ, 2 * NJ};
    System l;
    SysLoop *p = box_loop(t, &l, C0, 2, (const uint32_t[]){NJ - 2, NI - 2}, (const uint32_t[]){1, NJ}, 8, leaf,
                          stride);
    ck_assert_uint_eq(p->count, (NI - 2) * (NJ - 2));
    ck_assert_uint_eq(p->nent, 5);
    SysAt at;                                      /* cell (5, 7) read on integers: instance 4 * 38 + 6 */
    ck_assert_ptr_eq(sys_resid_at(&l, 5 * NJ + 7, &at), p->res);
    ck_assert_uint_eq(at.j, 4 * (NJ - 2) + 6);
    ck_assert_uint_eq(sys_at_index(&at, Y(t, C0 + NJ)), 6 * NJ + 7);
    ck_assert_uint_eq(sys_at_index(&at, P(t, 2 * C0 + 1)), 2 * (5 * NJ + 7) + 1);
    ck_assert_ptr_eq(sys_resid_at(&l, 5 * NJ + NJ - 1, &at), t->s.resid[5 * NJ + NJ - 1]); /* a boundary row */
    ck_assert_ptr_null(at.loop);
    assert_loop_item(t, &l, N, 2);
    ts_free(t);
}
END_TEST

/* Lines of the IR (a table or a name list is one line whatever its size). */
static size_t ir_lines(const System *s, const CgOptions *o) {
    char *buf = NULL;
    size_t len = 0, lines = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(cg_dump_ir(s, o, f), 0);
    fclose(f);
    for (size_t i = 0; i < len; i++) lines += buf[i] == '\n';
    free(buf);
    return lines;
}

/* Nests compute what straight-line code computes, bit for bit, and their
 * body is one cell, not one grid row: the IR and the largest function do
 * not grow with the row length. */
START_TEST(test_nests_bitwise) {
    enum { NI = 12, NJ = 40, N = NI * NJ };
    TestSys *t = plate_system(NI, NJ), *wide = plate_system(NI, 2 * NJ);
    const System *s = &t->s;
    CgOptions with, without;
    cg_options_init(&with);
    cg_options_init(&without);
    without.no_loops = 1;
    CgStats st, stw, st0;
    ck_assert_int_eq(cg_stats(s, &with, &st), 0);
    ck_assert_int_eq(cg_stats(&wide->s, &with, &stw), 0);
    ck_assert_int_eq(cg_stats(s, &without, &st0), 0);
    fprintf(stderr, "plate %ux%u: %u nests, %u loops, largest function %u instructions (%u without loops)\n",
            NI, NJ, st.nests, st.loops, st.max_instructions, st0.max_instructions);
    ck_assert_uint_ge(st.nests, 3);             /* residual, Jacobian, checks */
    ck_assert_uint_eq(st0.nests + st0.loops, 0);
    ck_assert_uint_le(stw.max_instructions, st.max_instructions);
    size_t ir = ir_lines(s, &with), ir_wide = ir_lines(&wide->s, &with), ir0 = ir_lines(s, &without);
    fprintf(stderr, "plate IR lines: %zu, %zu at %u columns, %zu without loops\n", ir, ir_wide, 2 * NJ, ir0);
    ck_assert_msg(ir * 8 < ir0, "IR %zu lines with nests, %zu without", ir, ir0);
    ck_assert_msg(ir_wide < ir + ir / 8, "IR %zu lines at %u columns, %zu at %u", ir_wide, 2 * NJ, ir, NJ);
    CgJit *jw = cg_jit_compile(s, &with), *jo = cg_jit_compile(s, &without);
    ck_assert_ptr_nonnull(jw);
    ck_assert_ptr_nonnull(jo);
    const DyrtModel *mw = cg_jit_model(jw), *mo = cg_jit_model(jo);
    static double buf[4 * 2 * N], r[2][N], jac[2][5 * N], out[2][2 * N];
    for (int rep = 0; rep < 6; rep++) {
        Point pt;
        random_point(&pt, buf, 2 * N);
        if (rep == 5) pt.y[5 * NJ + 17] = NAN;  /* an interior cell: inside an inner loop */
        int rc[2][2];
        eval_model(mw, s, &pt, r[0], jac[0], out[0], rc[0]);
        eval_model(mo, s, &pt, r[1], jac[1], out[1], rc[1]);
        ck_assert_int_eq(rc[0][0], rep == 5);
        ck_assert_int_eq(rc[1][0], rep == 5);
        ck_assert_mem_eq(r[0], r[1], sizeof r[0]);
        ck_assert_mem_eq(jac[0], jac[1], sizeof(double) * s->jac_nnz);
        ck_assert_mem_eq(out[0], out[1], sizeof out[0]);
        /* the first zero coefficient: interior (inner loop), row boundary
         * (nest body), the first row (outside the nest) */
        ck_assert_int_eq(mw->check_coefs(pt.p), 0);
        uint32_t cells[3] = {(uint32_t)(3 + rep) * NJ + 11 + (uint32_t)rep, (uint32_t)(1 + rep) * NJ + NJ - 1, 5};
        double keep[3];
        for (int z = 0; z < 3; z++) {           /* later cells first, then earlier ones too */
            keep[z] = pt.p[2 * cells[z] + 1];
            pt.p[2 * cells[z] + 1] = z == 1 ? NAN : 0.0;
            ck_assert_int_eq(mw->check_coefs(pt.p), (int)cells[z] + 1);
            ck_assert_int_eq(mo->check_coefs(pt.p), (int)cells[z] + 1);
        }
        for (int z = 0; z < 3; z++) pt.p[2 * cells[z] + 1] = keep[z];
        if (rep == 5) continue;
        for (uint32_t i = 0; i < N; i++) assert_close(r[0][i], ev(s->resid[i], &pt), "resid", i);
        for (uint32_t k = 0; k < s->jac_nnz; k++)
            assert_close(jac[0][k], ev(s->jac_dy[k], &pt) + pt.cj * ev(s->jac_dyp[k], &pt), "jac", k);
    }
    cg_jit_free(jw);
    cg_jit_free(jo);
    ts_free(wide);
    ts_free(t);
}
END_TEST

START_TEST(test_dump_ir) {
    TestSys *t = decay_system();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CgOptions o;
    cg_options_init(&o);
    o.opt_level = 0;
    ck_assert_int_eq(cg_dump_ir(&t->s, &o, f), 0);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "@dyad_model = constant"));
    ck_assert_ptr_nonnull(strstr(buf, "define internal i32 @dyad_residual("));
    ck_assert_ptr_nonnull(strstr(buf, "@dyad_residual.0("));
    ck_assert_ptr_null(strstr(buf, " fast "));
    free(buf);
    ts_free(t);
}
END_TEST

START_TEST(test_empty_system) {
    TestSys *t = ts_new();
    CgJit *j = cg_jit_compile(&t->s, NULL);
    ck_assert_ptr_nonnull(j);
    const DyrtModel *m = cg_jit_model(j);
    ck_assert_int_eq(m->ny, 0);
    ck_assert_ptr_null(m->y_names);
    ck_assert_ptr_null(m->jac_colptr);
    double r = 7;
    ck_assert_int_eq(m->residual(0, NULL, NULL, NULL, &r), 0);
    ck_assert_double_eq(r, 7);
    m->param_defaults(NULL, NULL);
    cg_jit_free(j);
    ck_assert_int_ne(cg_emit_object(&t->s, NULL, "/nonexistent-dir/x.o", NULL), 0);
    diag_reset();
    ts_free(t);
}
END_TEST

/* A leaf the function cannot read is an internal error, not garbage. */
START_TEST(test_bad_leaf) {
    TestSys *t = ts_new();
    Expr **r = ARENA_ARRAY(t->arena, Expr *, 1);
    r[0] = expr_add(t->x, YP(t, 0), Z(t, 0));
    ts_set_resid(t, 1, r);
    ck_assert_ptr_null(cg_jit_compile(&t->s, NULL));
    ck_assert(diag_had_internal());
    diag_reset();
    ts_free(t);
}
END_TEST

/* ---------- object file + link + run ---------- */

static int run(char *const argv[]) {
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* value of column `col` in the last row of a CSV file; NAN if missing */
static double csv_last(const char *path, const char *col) {
    FILE *f = fopen(path, "r");
    if (!f) return NAN;
    char line[4096], last[4096] = "";
    int idx = -1;
    if (fgets(line, sizeof line, f)) {
        int i = 0;
        for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n"), i++)
            if (strcmp(tok, col) == 0) idx = i;
    }
    while (fgets(line, sizeof line, f)) strcpy(last, line);
    fclose(f);
    if (idx < 0) return NAN;
    char *tok = strtok(last, ",\n");
    for (int i = 0; tok && i < idx; i++) tok = strtok(NULL, ",\n");
    return tok ? strtod(tok, NULL) : NAN;
}

START_TEST(test_object_link_run) {
    const char *build = getenv("DYADC_BUILD_DIR");
    if (!build) {
        fprintf(stderr, "test_object_link_run: DYADC_BUILD_DIR unset, skipped\n");
        return;
    }
    char rt[4096], dir[] = "/tmp/dyadc_cg_XXXXXX";
    snprintf(rt, sizeof rt, "%s/runtime", build);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char obj[4200], exe[4200], csv[4200];
    snprintf(obj, sizeof obj, "%s/model.o", dir);
    snprintf(exe, sizeof exe, "%s/model", dir);
    snprintf(csv, sizeof csv, "%s/out.csv", dir);
    TestSys *t = decay_system();
    ck_assert_int_eq(cg_emit_object(&t->s, NULL, obj, NULL), 0);
    const char *objs[2] = {obj, NULL};
    ck_assert_int_eq(cg_link_executable(objs, exe, rt, dir), 0);
    char *argv[] = {exe, "-o", csv, "--stop", "1", "--rtol", "1e-8", "--atol", "1e-10", NULL};
    ck_assert_int_eq(run(argv), 0);
    double y1 = csv_last(csv, "y");
    ck_assert_msg(fabs(y1 - exp(-1.5)) < 1e-6, "y(1) = %.10g, want %.10g", y1, exp(-1.5));
    ck_assert_msg(fabs(csv_last(csv, "k2y") - 3 * exp(-1.5)) < 3e-6, "k2y wrong");
    /* the same through the JIT and dyrt_main */
    char csv2[4200];
    snprintf(csv2, sizeof csv2, "%s/jit.csv", dir);
    char *jargv[] = {"model", "-o", csv2, "--stop", "1", "--rtol", "1e-8", "--atol", "1e-10", NULL};
    ck_assert_int_eq(cg_jit_run(&t->s, NULL, 9, jargv), 0);
    ck_assert_msg(fabs(csv_last(csv2, "y") - exp(-1.5)) < 1e-6, "JIT y(1) wrong");
    unlink(obj);
    unlink(exe);
    unlink(csv);
    unlink(csv2);
    rmdir(dir);
    ts_free(t);
}
END_TEST

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A straight-line residual and Jacobian of 10,001 rows (no loops) exceed
 * CG_BULK_NODES: their chunks go to the bulk object (fast back end), the
 * entries stay in the main one; linked together they simulate exactly as
 * the JIT's single module does. */
START_TEST(test_bulk_object) {
    const char *build = getenv("DYADC_BUILD_DIR");
    if (!build) {
        fprintf(stderr, "test_bulk_object: DYADC_BUILD_DIR unset, skipped\n");
        return;
    }
    char rt[4096], dir[] = "/tmp/dyadc_cg_XXXXXX";
    snprintf(rt, sizeof rt, "%s/runtime", build);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char obj[4200], bulk[4200], exe[4200], csv[4200], csv2[4200];
    snprintf(obj, sizeof obj, "%s/model.o", dir);
    snprintf(bulk, sizeof bulk, "%s/model-bulk.o", dir);
    snprintf(exe, sizeof exe, "%s/model", dir);
    snprintf(csv, sizeof csv, "%s/out.csv", dir);
    snprintf(csv2, sizeof csv2, "%s/jit.csv", dir);
    TestSys *t = big_system(10001);
    Expr **out = ARENA_ARRAY(t->arena, Expr *, 2);
    out[0] = Y(t, 0);
    out[1] = Y(t, 5000);
    ts_set_outputs(t, 2, out);
    CgOptions o;
    cg_options_init(&o);
    o.no_loops = 1;
    ck_assert_int_eq(cg_emit_object(&t->s, &o, obj, bulk), 0);
    ck_assert_msg(file_size(bulk) > file_size(obj), "bulk object %ld bytes, main %ld",
                  file_size(bulk), file_size(obj));
    const char *objs[3] = {obj, bulk, NULL};
    ck_assert_int_eq(cg_link_executable(objs, exe, rt, dir), 0);
    char *argv[] = {exe, "-o", csv, "--stop", "0.05", NULL};
    ck_assert_int_eq(run(argv), 0);
    char *jargv[] = {"model", "-o", csv2, "--stop", "0.05", NULL};
    o.opt_level = 2;
    ck_assert_int_eq(cg_jit_run(&t->s, &o, 5, jargv), 0);
    for (int k = 0; k < 2; k++) {
        const char *col = k ? "out1" : "out0";
        double a = csv_last(csv, col), b = csv_last(csv2, col);
        ck_assert_msg(isfinite(a) && a != 1.0 && fabs(a - b) <= 1e-12 * fabs(b),
                      "%s: object %.17g, JIT %.17g", col, a, b);
    }
    unlink(obj);
    unlink(bulk);
    unlink(exe);
    unlink(csv);
    unlink(csv2);
    unlink(arena_printf(t->arena, "%s/link.log", dir));
    rmdir(dir);
    ts_free(t);
}
END_TEST

static Suite *codegen_suite(void) {
    Suite *s = suite_create("codegen");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_decay_numeric);
    tcase_add_test(tc, test_param_defaults);
    tcase_add_test(tc, test_dae_numeric);
    tcase_add_test(tc, test_data_tables);
    tcase_add_test(tc, test_oversized_item);
    tcase_add_test(tc, test_mixed_numeric);
    tcase_add_test(tc, test_levels_bitwise);
    tcase_add_test(tc, test_mode_leaf);
    tcase_add_test(tc, test_nan_status);
    tcase_add_test(tc, test_asserts_and_init);
    tcase_add_test(tc, test_descriptor_layout);
    tcase_add_test(tc, test_chunk_bounds);
    tcase_add_test(tc, test_bulk_object);
    tcase_add_test(tc, test_loops_bitwise);
    tcase_add_test(tc, test_loop_items);
    tcase_add_test(tc, test_box_items);
    tcase_add_test(tc, test_nests_bitwise);
    tcase_add_test(tc, test_dump_ir);
    tcase_add_test(tc, test_empty_system);
    tcase_add_test(tc, test_bad_leaf);
    tcase_add_test(tc, test_object_link_run);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    srand(12345);
    int failed = check_failures(codegen_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
