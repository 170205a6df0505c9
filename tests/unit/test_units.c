/* test_units.c -- unit-string parsing (sema/units.c) and the dimensional
 * consistency checker over small hand-built flat models
 * (flatten/units_check.c). */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flat.h"
#include "units.h"

static Unit parse_ok(const char *s) {
    Unit u;
    char err[160];
    bool ok = unit_parse(s, &u, err, sizeof err);
    ck_assert_msg(ok, "\"%s\" should parse: %s", s, err);
    return u;
}

static bool same(const char *a, const char *b) {
    Unit ua = parse_ok(a), ub = parse_ok(b);
    return unit_same_dim(&ua, &ub);
}

static const char *dim(const char *s) {
    static char buf[128];
    Unit u = parse_ok(s);
    return unit_format_dim(&u, buf, sizeof buf);
}

static double scale(const char *s) { return parse_ok(s).scale; }

static void ck_close(double a, double b) {
    ck_assert_msg(fabs(a - b) <= 1e-12 * fabs(b), "%g != %g", a, b);
}

START_TEST(derived_units_reduce_to_base) {
    ck_assert(same("kg.m2/s2", "J"));
    ck_assert(same("N.m", "J"));
    ck_assert(same("W/(m.K)", "kg.m/(s3.K)"));
    ck_assert(same("J/(kg.K)", "m2/(s2.K)"));
    ck_assert(same("V/A", "Ω"));
    ck_assert(same("Ohm", "Ω"));
    ck_assert(same("S", "1/Ohm"));
    ck_assert(same("s-1", "Hz"));
    ck_assert(same("rad/s", "Hz")); /* rad is dimensionless */
    ck_assert(same("sr", "1"));
    ck_assert(same("W.s", "J"));
    ck_assert(same("C", "A.s"));
    ck_assert(same("F", "C/V"));
    ck_assert(same("H", "Wb/A"));
    ck_assert(same("T", "Wb/m2"));
    ck_assert(same("Pa", "N/m2"));
    ck_assert(same("lx", "lm/m2"));
    ck_assert(same("kat", "mol/s"));
    ck_assert(same("Gy", "J/kg"));
    ck_assert(same("N.m.s/rad", "kg.m2/s"));
    ck_assert(same("(m/s)2", "m2/s2"));
    ck_assert(same("m^2", "m2"));
    ck_assert(same("N*m", "J"));
    ck_assert(!same("N.m", "W"));
    ck_assert(!same("m/s", "m.s")); /* `/` divides by the next term only */
    ck_assert(same("m/s.kg", "kg.m/s"));
}
END_TEST

START_TEST(formatting_in_si_base_units) {
    ck_assert_str_eq(dim("V"), "kg.m2/(s3.A)");
    ck_assert_str_eq(dim("A"), "A");
    ck_assert_str_eq(dim("m/s"), "m/s");
    ck_assert_str_eq(dim("Hz"), "1/s");
    ck_assert_str_eq(dim("1"), "1");
    ck_assert_str_eq(dim("rad"), "1");
    ck_assert_str_eq(dim("1/K"), "1/K");
    ck_assert_str_eq(dim("mol/(m3.s)"), "mol/(m3.s)");
    Unit m = parse_ok("m"), r;
    ck_assert(unit_pow(&m, (UnitRat){1, 2}, &r));
    char buf[64];
    ck_assert_str_eq(unit_format_dim(&r, buf, sizeof buf), "m^(1/2)");
    Unit v = parse_ok("V");
    ck_assert_str_eq(unit_si_name(&v), "V");
    Unit p = parse_ok("kg.m2/s3");
    ck_assert_str_eq(unit_si_name(&p), "W");
    ck_assert_ptr_null(unit_si_name(&m));
}
END_TEST

START_TEST(prefixes_and_scales) {
    ck_close(scale("mm"), 1e-3);
    ck_close(scale("km"), 1e3);
    ck_close(scale("kN"), 1e3);
    ck_close(scale("MW"), 1e6);
    ck_close(scale("µs"), 1e-6);   /* micro sign */
    ck_close(scale("μs"), 1e-6);   /* Greek mu */
    ck_close(scale("us"), 1e-6);
    ck_close(scale("ms"), 1e-3);
    ck_close(scale("mA"), 1e-3);
    ck_close(scale("kOhm"), 1e3);
    ck_close(scale("dam"), 10);
    ck_close(scale("cm3"), 1e-6);  /* the exponent applies to the prefixed unit */
    ck_close(scale("g/cm3"), 1e3);
    ck_close(scale("g"), 1e-3);
    ck_close(scale("mg"), 1e-6);
    ck_close(scale("bar"), 1e5);
    ck_close(scale("mbar"), 1e2);
    ck_close(scale("min"), 60);
    ck_close(scale("h"), 3600);
    ck_close(scale("hPa"), 100);
    ck_close(scale("L"), 1e-3);
    ck_close(scale("ml"), 1e-6);
    ck_close(scale("rpm"), 2 * 3.14159265358979323846 / 60);
    ck_close(scale("deg"), 3.14159265358979323846 / 180);
    ck_assert(same("g/cm3", "kg/m3"));
    ck_assert(same("rpm", "rad/s"));
    ck_assert(same("deg", "1"));
    ck_assert(same("dB", "1"));
    ck_assert(same("L/min", "m3/s"));
    Unit c = parse_ok("degC"), c2 = parse_ok("°C");
    ck_assert(same("degC", "K"));
    ck_close(c.offset, 273.15);
    ck_close(c2.offset, 273.15);
    ck_assert(parse_ok("J/degC").offset == 0); /* in a product: a difference */
    ck_close(unit_to_si(&c, 25), 298.15);
    ck_close(unit_from_si(&c, 300), 300 - 273.15);
    Unit bar = parse_ok("bar");
    ck_close(unit_to_si(&bar, 2), 2e5);
    ck_close(unit_from_si(&bar, 1.5e5), 1.5);
}
END_TEST

START_TEST(exact_symbols_win_over_prefixes) {
    ck_assert(same("Pa", "N/m2"));     /* not peta-annum */
    ck_close(scale("Pa"), 1);
    ck_assert_str_eq(dim("cd"), "cd"); /* candela, not centi-day */
    ck_assert(same("kat", "mol/s"));   /* not kilo-at */
    ck_close(scale("kat"), 1);
    ck_assert_str_eq(dim("min"), "s");
    ck_assert_str_eq(dim("mol"), "mol");
    ck_assert(same("T", "kg/(s2.A)")); /* tesla, not tera */
    ck_assert_str_eq(dim("m"), "m");
    ck_close(scale("m"), 1);
    ck_close(scale("Gy"), 1);
    ck_close(scale("kg"), 1);
}
END_TEST

static void parse_fails(const char *s, const char *expect) {
    Unit u;
    char err[160];
    ck_assert_msg(!unit_parse(s, &u, err, sizeof err), "\"%s\" should not parse", s);
    ck_assert_msg(strstr(err, expect), "\"%s\": message \"%s\" lacks \"%s\"", s, err, expect);
}

START_TEST(bad_unit_strings) {
    parse_fails("", "empty");
    parse_fails("fur", "unknown unit symbol `fur`");
    parse_fails("kg.fur/s", "unknown unit symbol `fur`");
    parse_fails("kkg", "unknown unit symbol `kkg` (did you mean `kg`?)"); /* kg takes no prefix */
    parse_fails("ohm", "did you mean `Ohm`?");
    parse_fails("degc", "did you mean `degC`?");
    parse_fails("kdegC", "unknown unit symbol `kdegC`");
    parse_fails("m.", "expected a unit at the end");
    parse_fails("m/", "expected a unit at the end");
    parse_fails("(m/s", "missing `)`");
    parse_fails("m/s)", "unbalanced `)`");
    parse_fails("m^", "expected an integer exponent");
    parse_fails("m-", "expected an integer exponent");
    parse_fails("m0", "exponent 0");
    parse_fails("m99999", "exponent too large");
    parse_fails("m2.5", "`5` is not a unit");
    parse_fails("m,s", "unexpected `,`");
    parse_fails(".m", "expected a unit, found `.`");
    parse_fails("m999.m999", "exponent out of range");
    parse_fails("(m600)2", "exponent out of range");
}
END_TEST

/* ---------- the checker on hand-built flat models ---------- */

typedef struct TestModel {
    Arena *a;
    FlatModel *m;
    SrcFile *f;
} TestModel;

static TestModel tm_new(const char *text) {
    TestModel t;
    t.a = arena_new();
    t.f = src_from_string(t.a, "u.dyad", text, strlen(text));
    t.m = ARENA_NEW(t.a, FlatModel);
    t.m->ctx = expr_ctx_new(t.a);
    t.m->name = "U";
    return t;
}

/* span of the first occurrence of `snippet` in the source */
static Span tm_span(TestModel *t, const char *snippet) {
    const char *p = strstr(t->f->text, snippet);
    ck_assert_ptr_nonnull(p);
    uint32_t lo = (uint32_t)(p - t->f->text);
    return (Span){t->f->id, lo, lo + (uint32_t)strlen(snippet)};
}

static Expr *tm_var(TestModel *t, const char *name, const char *units) {
    FlatVar v = {.name = name, .kind = FV_VARIABLE, .units = units};
    v.span = tm_span(t, name);
    vec_push(t->a, &t->m->vars, v);
    return expr_leaf(t->m->ctx, EXPR_VAR, t->m->vars.len - 1);
}

static void tm_eq(TestModel *t, Expr *l, Expr *r, const char *snippet) {
    FlatEq e = {.kind = FE_NORMAL, .lhs = l, .rhs = r, .origin = "", .span = tm_span(t, snippet)};
    vec_push(t->a, &t->m->eqs, e);
}

/* runs the checker; returns its diagnostics (free()) */
static char *tm_check(TestModel *t, bool as_error, unsigned *count) {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    diag_set_output(out);
    diag_reset();
    *count = flat_check_units(t->m, as_error);
    fclose(out);
    diag_set_output(NULL);
    return buf;
}

static unsigned lines_with(const char *s, const char *what) {
    unsigned n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

START_TEST(checker_accepts_consistent_equations) {
    const char *text = "v i R x p vel a len area q\n"
                       "ohm: v = R * i\n"
                       "free: v = x * i\n"
                       "poly: v = x + 2\n"
                       "der: der(p) = vel\n"
                       "time: p = vel * time + 1\n"
                       "sqrt: sqrt(area) = len\n"
                       "pow: len ^ 2 = area\n"
                       "sin: v = R * i * sin(vel / len * time)\n"
                       "ifelse: v = ifelse(v > 0, R * i, 0)\n"
                       "max: len = max(p, 0)\n"
                       "twice: 2 * v = R * i\n"
                       "q: q = R * i\n";
    TestModel t = tm_new(text);
    ExprCtx *c = t.m->ctx;
    Expr *v = tm_var(&t, "v", "V"), *i = tm_var(&t, "i", "A"), *R = tm_var(&t, "R", "Ω");
    Expr *x = tm_var(&t, "x", NULL), *p = tm_var(&t, "p", "m"), *vel = tm_var(&t, "vel", "m/s");
    tm_var(&t, "a", "m/s2");
    Expr *len = tm_var(&t, "len", "mm"), *area = tm_var(&t, "area", "m2");
    Expr *q = tm_var(&t, "q", "kg.m2/(s3.A)");
    Expr *Ri = expr_mul(c, R, i);
    tm_eq(&t, v, Ri, "ohm:");
    tm_eq(&t, v, expr_mul(c, x, i), "free:");
    tm_eq(&t, v, expr_add(c, x, expr_const(c, 2)), "poly:");
    tm_eq(&t, expr_leaf(c, EXPR_DER, 4), vel, "der:");
    tm_eq(&t, p, expr_add(c, expr_mul(c, vel, expr_time(c)), expr_const(c, 1)), "time:");
    tm_eq(&t, expr_call(c, FN_SQRT, area, NULL), len, "sqrt:");
    tm_eq(&t, expr_pow(c, len, expr_const(c, 2)), area, "pow:");
    Expr *w = expr_mul(c, expr_div(c, vel, len), expr_time(c));
    tm_eq(&t, v, expr_mul(c, Ri, expr_call(c, FN_SIN, w, NULL)), "sin:");
    Expr *cond = expr_cmp(c, EXPR_GT, v, expr_const(c, 0));
    tm_eq(&t, v, expr_ifelse(c, cond, Ri, expr_const(c, 0)), "ifelse:");
    tm_eq(&t, len, expr_call(c, FN_MAX, p, expr_const(c, 0)), "max:");
    tm_eq(&t, expr_mul(c, expr_const(c, 2), v), Ri, "twice:");
    tm_eq(&t, q, Ri, "q: q");
    unsigned n;
    char *out = tm_check(&t, false, &n);
    ck_assert_msg(n == 0, "unexpected diagnostics:\n%s", out);
    ck_assert_str_eq(out, "");
    free(out);
    src_reset();
    arena_free(t.a);
}
END_TEST

START_TEST(checker_reports_mismatches) {
    const char *text = "v i R len\n"
                       "e1: v = i\n"
                       "e2: v = 2 * i\n"
                       "e3: v + i = 0\n"
                       "e4: v = R * i * exp(len)\n"
                       "e5: v = ifelse(i > 0, v, i)\n"
                       "e6: der(len) = len\n"
                       "e7: i > v\n";
    TestModel t = tm_new(text);
    ExprCtx *c = t.m->ctx;
    Expr *v = tm_var(&t, "v", "V"), *i = tm_var(&t, "i", "A"), *R = tm_var(&t, "R", "Ohm");
    Expr *len = tm_var(&t, "len", "m");
    Expr *zero = expr_const(c, 0);
    tm_eq(&t, v, i, "e1:");
    tm_eq(&t, v, expr_mul(c, expr_const(c, 2), i), "e2:");
    tm_eq(&t, expr_add(c, v, i), zero, "e3:");
    tm_eq(&t, v, expr_mul(c, expr_mul(c, R, i), expr_call(c, FN_EXP, len, NULL)), "e4:");
    tm_eq(&t, v, expr_ifelse(c, expr_cmp(c, EXPR_GT, i, zero), v, i), "e5:");
    tm_eq(&t, expr_leaf(c, EXPR_DER, 3), len, "e6:");
    vec_push(t.a, &t.m->asserts, ((FlatAssert){expr_cmp(c, EXPR_GT, i, v), "x", tm_span(&t, "e7:")}));
    unsigned n;
    char *out = tm_check(&t, false, &n);
    ck_assert_uint_eq(n, 7);
    ck_assert_uint_eq(diag_warning_count(), 7);
    ck_assert_uint_eq(diag_error_count(), 0);
    ck_assert_msg(strstr(out, "u.dyad:2:1: warning: unit mismatch: left side is V (kg.m2/(s3.A)), "
                              "right side is A\n"), "%s", out);
    ck_assert_msg(strstr(out, "u.dyad:3:1: warning: unit mismatch: left side is V"), "%s", out);
    ck_assert_msg(strstr(out, "u.dyad:4:1: warning: unit mismatch in `v + i`: V (kg.m2/(s3.A)) + A\n"),
                  "%s", out);
    ck_assert_msg(strstr(out, "u.dyad:5:1: warning: unit mismatch in `exp(len)`: `exp` needs a "
                              "dimensionless argument, not m\n"), "%s", out);
    ck_assert_msg(strstr(out, "u.dyad:6:1: warning: unit mismatch in `"), "%s", out);
    ck_assert_msg(strstr(out, "u.dyad:7:1: warning: unit mismatch: left side is m/s, right side is m"),
                  "%s", out);
    ck_assert_msg(strstr(out, "u.dyad:8:1: warning: unit mismatch in `"), "%s", out);
    free(out);
    src_reset();
    arena_free(t.a);
}
END_TEST

START_TEST(checker_errors_and_bad_units) {
    const char *text = "v i w\n"
                       "f1: v = i\n"
                       "f2: w = v\n";
    TestModel t = tm_new(text);
    Expr *v = tm_var(&t, "v", "V"), *i = tm_var(&t, "i", "A"), *w = tm_var(&t, "w", "kg.fur/s");
    tm_eq(&t, v, i, "f1:");
    tm_eq(&t, w, v, "f2:"); /* w has bad units: unknown, no second diagnostic */
    unsigned n;
    char *out = tm_check(&t, true, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(diag_error_count(), 2);
    ck_assert_msg(strstr(out, "u.dyad:1:5: error: bad units \"kg.fur/s\" of `w`: unknown unit symbol "
                              "`fur`\n"), "%s", out);
    ck_assert_msg(strstr(out, "u.dyad:2:1: error: unit mismatch: left side is V"), "%s", out);
    free(out);
    /* the same lines again: reported once per process */
    out = tm_check(&t, true, &n);
    ck_assert_uint_eq(n, 0);
    free(out);
    diag_reset();
    src_reset();
    arena_free(t.a);
}
END_TEST

START_TEST(checker_repeats_do_not_flood) {
    /* one library line instantiated many times: one diagnostic */
    const char *text = "a.v a.i b.v b.i c.v c.i\nrel: v = i\n";
    TestModel t = tm_new(text);
    const char *names[] = {"a.v", "a.i", "b.v", "b.i", "c.v", "c.i"};
    Expr *x[6];
    for (int k = 0; k < 6; k++) x[k] = tm_var(&t, names[k], k % 2 ? "A" : "V");
    for (int k = 0; k < 6; k += 2) tm_eq(&t, x[k], x[k + 1], "rel:");
    unsigned n;
    char *out = tm_check(&t, false, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(lines_with(out, "warning:"), 1);
    free(out);
    diag_reset();
    src_reset();
    arena_free(t.a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, derived_units_reduce_to_base);
    tcase_add_test(tc, formatting_in_si_base_units);
    tcase_add_test(tc, prefixes_and_scales);
    tcase_add_test(tc, exact_symbols_win_over_prefixes);
    tcase_add_test(tc, bad_unit_strings);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("check");
    tcase_add_test(tk, checker_accepts_consistent_equations);
    tcase_add_test(tk, checker_reports_mismatches);
    tcase_add_test(tk, checker_errors_and_bad_units);
    tcase_add_test(tk, checker_repeats_do_not_flood);
    suite_add_tcase(s, tk);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
