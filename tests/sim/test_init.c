/*
 * test_init.c -- block-wise initialization (runtime/initblock.c, the
 * structure phase's init BLT), end to end through `dyadc run`, against
 * values computed here independently (bisection on the scalar equations,
 * RK4 of the reduced ODE):
 *   - BlockInit: a residual that is NaN at the guesses (sqrt(x - 10) with
 *     the guess x = 5) -- the whole-system Newton stopped at the guess with
 *     "not finite"; block by block, x is solved first and the rest follows;
 *   - InitChain: 3 n one-equation blocks, x[i] from implicit initial
 *     relations and w[i] down a chain, solved without the whole system;
 *   - x^3 - 2 x + 2 = 0 from the guess 0, where the damped Newton stalls at
 *     a local minimum of |r|: the homotopy from the guess finds the root;
 *     the same after a block that fixes x = 20 from the guess 5 (where the
 *     stalling block is not even defined): the homotopy starts from x = 20;
 *   - a block without solution (initial x^2 = -1; the homotopy fails too):
 *     the error names the block, its equation and its unknown;
 *   - a nonlinear resistive ladder of 120 nodes (torn by the simulation's
 *     tearing: its init block iterates on the two tearing variables) and
 *     of 250 nodes (one 250-equation block, solved with a sparse LU of its
 *     own), against a shooting computation from the open end; the 100-node
 *     ladder with capacitors started in its steady state (a loop only the
 *     initialization has, one 100-equation block) against the same.
 * Models live in tests/sim/init/ (and tests/sim/e2e/).
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "refode.h"
#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

static void assert_contains(const char *text, const char *needle) {
    ck_assert_msg(strstr(text, needle) != NULL, "expected \"%s\" in:\n%s", needle, text);
}

/* dyadc run FILE --model MODEL --stop STOP -v ... -o CSV; the log's text */
static char *run(const char *file, const char *model, const char *stop, const char *csv, int expect) {
    char logf[256];
    snprintf(logf, sizeof logf, "%s.log", csv);
    char *argv[] = {(char *)DYADC, "run", (char *)SRC(file), "--no-stdlib", "--model", (char *)model,
                    "--stop", (char *)stop, "--interval", "0.01", "--rtol", "1e-10", "--atol", "1e-12",
                    "-v", "-o", (char *)csv, NULL};
    int rc = st_run(argv, logf);
    char *log = st_slurp(logf);
    ck_assert_msg(rc == expect, "%s: exit %d, expected %d:\n%s", model, rc, expect, log);
    return log;
}

/* the root of w^3 + w = c (increasing in w), by bisection */
static double cubic_root(double c) {
    double lo = -fabs(c) - 1, hi = fabs(c) + 1;
    for (int k = 0; k < 200; k++) {
        double mid = 0.5 * (lo + hi);
        if (mid * mid * mid + mid < c) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* BlockInit reduced: x' = -0.1 y(x), y^3 + y = sqrt(x - 10) */
static void block_rhs(double t, const double *x, double *dx, void *ctx) {
    (void)t, (void)ctx;
    dx[0] = -0.1 * cubic_root(sqrt(x[0] - 10));
}

START_TEST(nan_at_the_guess_solved_block_by_block) {
    char *log = run("tests/sim/init/blockinit.dyad", "BlockInit", "1", "init_block.csv", 0);
    assert_contains(log, "initialization: 3 blocks in 3 levels");
    assert_contains(log, "whole-system Newton not needed");
    StCsv c;
    ck_assert_int_eq(st_csv_read("init_block.csv", &c), 0);
    int kx = st_csv_col(&c, "x"), ky = st_csv_col(&c, "y");
    ck_assert(kx > 0 && ky > 0 && c.nrows == 101);
    double x0 = 20, ref[101];
    ref_solve(block_rhs, NULL, 1, &x0, 0.01, 101, 20, ref);
    double ex = 0, ey = 0;
    for (int r = 0; r < c.nrows; r++) {
        double x = st_csv(&c, r, kx), y = st_csv(&c, r, ky);
        ex = fmax(ex, fabs(x - ref[r]));
        ey = fmax(ey, fabs(y - cubic_root(sqrt(ref[r] - 10))));
    }
    fprintf(stderr, "BlockInit: x(0) = %.15g (exact 20), y(0) error %.3g; max error over [0, 1]: x %.3g, y %.3g\n",
            st_csv(&c, 0, kx), fabs(st_csv(&c, 0, ky) - cubic_root(sqrt(10))), ex, ey);
    ck_assert_msg(fabs(st_csv(&c, 0, kx) - 20) < 1e-12, "x(0) = %.17g", st_csv(&c, 0, kx));
    ck_assert_msg(fabs(st_csv(&c, 0, ky) - cubic_root(sqrt(10))) < 1e-12, "y(0) = %.17g", st_csv(&c, 0, ky));
    ck_assert_msg(ex < 1e-8 && ey < 1e-8, "trajectory errors x %g, y %g", ex, ey);
    st_csv_free(&c);
    free(log);
}
END_TEST

START_TEST(chain_of_blocks) {
    char *log = run("tests/sim/init/initchain.dyad", "InitChain", "0.01", "init_chain.csv", 0);
    assert_contains(log, "initialization: 120 blocks in 42 levels");
    assert_contains(log, "whole-system Newton not needed");
    StCsv c;
    ck_assert_int_eq(st_csv_read("init_chain.csv", &c), 0);
    double ex = 0, ew = 0, wprev = 0;
    for (int i = 1; i <= 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "x[%d]", i);
        int kx = st_csv_col(&c, name);
        snprintf(name, sizeof name, "w[%d]", i);
        int kw = st_csv_col(&c, name);
        ck_assert(kx > 0 && kw > 0);
        double x = i / 10.0, w = cubic_root(x + wprev / 2);
        ex = fmax(ex, fabs(st_csv(&c, 0, kx) - x) / x);
        ew = fmax(ew, fabs(st_csv(&c, 0, kw) - w) / fabs(w));
        wprev = w;
    }
    fprintf(stderr, "InitChain: max relative error at t = 0: x %.3g, w %.3g\n", ex, ew);
    /* the Newton tolerance is |r| <= 1e-10 on rows of size ~1 */
    ck_assert_msg(ex < 1e-8 && ew < 1e-8, "initial values: x %g, w %g", ex, ew);
    st_csv_free(&c);
    free(log);
}
END_TEST

/* x^3 - 2 x + 2 = 0 from the guess 0: the damped Newton stalls at the local
 * minimum of |r|; the homotopy from the guess reaches the real root.  Then
 * x'' = -x with v(0) = 0: x = x0 cos t. */
START_TEST(homotopy_when_newton_stalls) {
    char *log = run("tests/sim/init/homotopy.dyad", "HomotopyInit", "1", "init_homotopy.csv", 0);
    assert_contains(log, "the guesses of the rest solved it");
    StCsv c;
    ck_assert_int_eq(st_csv_read("init_homotopy.csv", &c), 0);
    int kx = st_csv_col(&c, "x");
    ck_assert(kx > 0);
    double lo = -2, hi = -1.5; /* the real root, by bisection: r(-2) < 0 < r(-1.5) */
    for (int k = 0; k < 200; k++) {
        double mid = 0.5 * (lo + hi);
        if (mid * mid * mid - 2 * mid + 2 < 0) lo = mid;
        else hi = mid;
    }
    double x0 = 0.5 * (lo + hi), err = 0;
    for (int r = 0; r < c.nrows; r++)
        err = fmax(err, fabs(st_csv(&c, r, kx) - x0 * cos(st_csv(&c, r, 0))));
    fprintf(stderr, "HomotopyInit: x(0) = %.17g (root %.17g), max error of x = x0 cos t %.3g\n",
            st_csv(&c, 0, kx), x0, err);
    ck_assert_msg(fabs(st_csv(&c, 0, kx) - x0) < 1e-12, "x(0) = %.17g", st_csv(&c, 0, kx));
    ck_assert_msg(err < 1e-8, "x error %g", err);
    st_csv_free(&c);
    free(log);
}
END_TEST

/* The ladder from its open end: v[n] given, the current through the
 * resistor into node k is the sum of the shunt currents of nodes k..n, so
 * v[k-1] = v[k] + R I_k down to v[0], increasing in v[n]; bisection on v[n]
 * until v[0] = V0.  v[1..n] into v. */
static void ladder_ref(int n, double *v) {
    const double R = 0.01, g = 0.2, c = 0.1, V0 = 2;
    double lo = 0, hi = V0;
    for (int it = 0; it < 200; it++) {
        v[n] = 0.5 * (lo + hi);
        double cur = 0;
        for (int k = n; k >= 1; k--) {
            cur += g * v[k] + c * v[k] * v[k] * v[k];
            v[k - 1] = v[k] + R * cur;
        }
        if (v[0] > V0) hi = v[n];
        else lo = v[n];
    }
}

static void ladder_case(const char *model, const char *prefix, int n, const char *expect) {
    char csv[64];
    snprintf(csv, sizeof csv, "init_%s.csv", model);
    char *log = run("tests/sim/init/ladder.dyad", model, "1", csv, 0);
    assert_contains(log, expect);
    assert_contains(log, "whole-system Newton not needed");
    StCsv c;
    ck_assert_int_eq(st_csv_read(csv, &c), 0);
    double v[251], err = 0;
    int kn = 0;
    ladder_ref(n, v);
    for (int k = 1; k <= n; k++) {
        char name[40];
        snprintf(name, sizeof name, "%sv[%d]", prefix, k);
        int col = st_csv_col(&c, name);
        ck_assert_msg(col > 0, "no column %s", name);
        err = fmax(err, fabs(st_csv(&c, 0, col) - v[k]) / v[k]);
        kn = col;
    }
    char name[40];
    snprintf(name, sizeof name, "%ss", prefix);
    int ks = st_csv_col(&c, name);
    ck_assert(ks > 0);
    double es = fabs(st_csv(&c, c.nrows - 1, ks) - v[n] * st_csv(&c, c.nrows - 1, 0));
    fprintf(stderr, "%s (n = %d): v[n] = %.15g (reference %.15g), max relative error of v at t = 0 %.3g, "
            "s(1) error %.3g\n", model, n, st_csv(&c, 0, kn), v[n], err, es);
    ck_assert_msg(err < 1e-8, "node voltages: relative error %g", err);
    ck_assert_msg(es < 1e-7, "s(1) error %g", es);
    st_csv_free(&c);
    free(log);
}

START_TEST(torn_ladder) {
    ladder_case("Ladder", "", 120, "initialization: 3 blocks in 2 levels");
}
END_TEST

START_TEST(sparse_ladder_block) {
    ladder_case("BigLadder", "ladder.", 250, "initialization: 1 block by sparse LU (the largest 250 equations)");
}
END_TEST

/* y^3 - 2 y + 2 sqrt((x - 10) / 10) = 0, x' = -0.1 x, x(0) = 20: the
 * homotopy starts from the solved x = 20, not its guess 5 (where the
 * residual is NaN).  x = 20 exp(-0.1 t); y the real root at each x
 * (one real root while 2 sqrt((x - 10) / 10) > sqrt(32 / 27), x > 12.97). */
static double after_block_y(double x) {
    double c = 2 * sqrt((x - 10) / 10), lo = -3, hi = -1; /* r(-3) < 0 < r(-1) */
    for (int k = 0; k < 200; k++) {
        double mid = 0.5 * (lo + hi);
        if (mid * mid * mid - 2 * mid + c < 0) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

START_TEST(homotopy_from_solved_blocks) {
    char *log = run("tests/sim/init/homotopy.dyad", "HomotopyAfterBlock", "1", "init_homotopy2.csv", 0);
    assert_contains(log, "whole-system Newton from block 3 (not solved on its own)");
    assert_contains(log, "the guesses of the rest solved it");
    StCsv c;
    ck_assert_int_eq(st_csv_read("init_homotopy2.csv", &c), 0);
    int kx = st_csv_col(&c, "x"), ky = st_csv_col(&c, "y");
    ck_assert(kx > 0 && ky > 0);
    double ex = 0, ey = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0), x = 20 * exp(-0.1 * t);
        ex = fmax(ex, fabs(st_csv(&c, r, kx) - x));
        ey = fmax(ey, fabs(st_csv(&c, r, ky) - after_block_y(x)));
    }
    fprintf(stderr, "HomotopyAfterBlock: y(0) = %.17g (root %.17g), max error x %.3g, y %.3g\n",
            st_csv(&c, 0, ky), after_block_y(20), ex, ey);
    ck_assert_msg(fabs(st_csv(&c, 0, ky) - after_block_y(20)) < 1e-12, "y(0) = %.17g", st_csv(&c, 0, ky));
    ck_assert_msg(ex < 1e-7 && ey < 1e-7, "errors x %g, y %g", ex, ey);
    st_csv_free(&c);
    free(log);
}
END_TEST

/* initial der(v[i]) = 0: the steady state is the resistive ladder's
 * solution, and the voltages stay there */
START_TEST(steady_ladder_block) {
    char *log = run("tests/sim/init/ladder.dyad", "SteadyLadder", "1", "init_steady.csv", 0);
    assert_contains(log, "initialization: 1 block by sparse LU (the largest 100 equations)");
    assert_contains(log, "whole-system Newton not needed");
    StCsv c;
    ck_assert_int_eq(st_csv_read("init_steady.csv", &c), 0);
    double v[101], e0 = 0, e = 0;
    ladder_ref(100, v);
    for (int k = 1; k <= 100; k++) {
        char name[16];
        snprintf(name, sizeof name, "v[%d]", k);
        int col = st_csv_col(&c, name);
        ck_assert_msg(col > 0, "no column %s", name);
        e0 = fmax(e0, fabs(st_csv(&c, 0, col) - v[k]) / v[k]);
        for (int r = 0; r < c.nrows; r++)
            e = fmax(e, fabs(st_csv(&c, r, col) - v[k]) / v[k]);
    }
    fprintf(stderr, "SteadyLadder (n = 100): max relative error of v at t = 0 %.3g, over [0, 1] %.3g\n", e0, e);
    ck_assert_msg(e0 < 1e-8 && e < 1e-8, "node voltages: relative error %g at t = 0, %g over [0, 1]", e0, e);
    st_csv_free(&c);
    free(log);
}
END_TEST

START_TEST(failed_block_is_named) {
    char *log = run("tests/sim/e2e/badinit.dyad", "BadInit", "1", "init_bad.csv", 1);
    fprintf(stderr, "BadInit: %s", log);
    assert_contains(log, "error: initialization: block 1 of 2 (1 equation)");
    assert_contains(log, "its equations: equation ");
    assert_contains(log, "`initial x^2 = -1");
    assert_contains(log, "its unknowns 'x' = ");
    assert_contains(log, "the whole-system Newton from there failed too");
    free(log);
}
END_TEST

int main(void) {
    Suite *s = suite_create("init");
    TCase *tc = tcase_create("blocks");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, nan_at_the_guess_solved_block_by_block);
    tcase_add_test(tc, chain_of_blocks);
    tcase_add_test(tc, homotopy_when_newton_stalls);
    tcase_add_test(tc, homotopy_from_solved_blocks);
    tcase_add_test(tc, failed_block_is_named);
    tcase_add_test(tc, torn_ladder);
    tcase_add_test(tc, sparse_ladder_block);
    tcase_add_test(tc, steady_ladder_block);
    suite_add_tcase(s, tc);
    return check_failures(s) ? 1 : 0;
}
