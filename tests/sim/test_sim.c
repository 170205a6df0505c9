/*
 * test_sim.c -- end-to-end simulation tests: .dyad source -> dyadc (JIT
 * and standalone executable) -> CSV, compared numerically with closed
 * forms (STYLE.md §11: tolerances, never bytes).
 */
#include <check.h>

#include "../check_run.h"
#include <fcntl.h>
#include <math.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

/* max |column - exact(t)| over all rows */
static double max_error(const StCsv *c, const char *col, double (*exact)(double)) {
    int k = st_csv_col(c, col);
    ck_assert_msg(k >= 0, "column %s missing", col);
    double err = 0;
    for (int r = 0; r < c->nrows; r++) {
        double e = fabs(st_csv(c, r, k) - exact(st_csv(c, r, 0)));
        if (!(e <= err)) err = e; /* NaN-propagating max */
    }
    return err;
}

/* RC: V0 = 2, R = 100, C = 5m: v(t) = 2 (1 - exp(-t/0.5)) */
static double rc_exact(double t) { return 2 * (1 - exp(-t / 0.5)); }

static void check_rc_csv(const char *csv) {
    StCsv c;
    ck_assert_int_eq(st_csv_read(csv, &c), 0);
    ck_assert_int_eq(c.nrows, 301);
    ck_assert_double_eq_tol(st_csv(&c, c.nrows - 1, 0), 3.0, 1e-12);
    double err = max_error(&c, "c.v", rc_exact);
    fprintf(stderr, "RC: max |c.v - V0(1-exp(-t/RC))| = %.3g\n", err);
    ck_assert_msg(err < 1e-6, "RC error %g", err);
    /* the current through the resistor, an eliminated alias: i = (V0 - v)/R */
    int ki = st_csv_col(&c, "r.i");
    ck_assert_int_ge(ki, 0);
    for (int r = 0; r < c.nrows; r++)
        ck_assert_double_eq_tol(st_csv(&c, r, ki), (2 - rc_exact(st_csv(&c, r, 0))) / 100, 1e-8);
    st_csv_free(&c);
}

START_TEST(rc_jit) {
    const char *csv = "sim_rc_jit.csv";
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/rc.dyad"), "--no-stdlib", "--model", "RC",
                    "--stop", "3", "--interval", "0.01", "--rtol", "1e-8", "--atol", "1e-10",
                    "-o", (char *)csv, NULL};
    ck_assert_int_eq(st_run(argv, "sim_rc_jit.log"), 0);
    check_rc_csv(csv);
}
END_TEST

START_TEST(rc_executable) {
    char *build[] = {(char *)DYADC, "build", (char *)SRC("tests/sim/rc.dyad"), "--no-stdlib", "--model",
                     "RC", "-o", "sim_rc_exe", NULL};
    ck_assert_int_eq(st_run(build, "sim_rc_build.log"), 0);
    char *run[] = {"./sim_rc_exe", "--stop", "3", "--interval", "0.01", "--rtol", "1e-8",
                   "--atol", "1e-10", "-o", "sim_rc_exe.csv", NULL};
    ck_assert_int_eq(st_run(run, "sim_rc_exe.log"), 0);
    check_rc_csv("sim_rc_exe.csv");
}
END_TEST

START_TEST(rc_parameter_override) {
    /* -p V0=3 must propagate into source.V without recompiling */
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/rc.dyad"), "--no-stdlib", "--model", "RC",
                    "--stop", "1", "--rtol", "1e-8", "--atol", "1e-10", "-p", "V0=3",
                    "-o", "sim_rc_p.csv", NULL};
    ck_assert_int_eq(st_run(argv, "sim_rc_p.log"), 0);
    StCsv c;
    ck_assert_int_eq(st_csv_read("sim_rc_p.csv", &c), 0);
    int k = st_csv_col(&c, "c.v");
    double t = st_csv(&c, c.nrows - 1, 0);
    ck_assert_double_eq_tol(st_csv(&c, c.nrows - 1, k), 3 * (1 - exp(-t / 0.5)), 1e-6);
    st_csv_free(&c);
}
END_TEST

/* underdamped m x'' + d x' + k x = 0: m = 2, k = 50, d = 1.5, x0 = 0.5 */
static double msd_exact(double t) {
    double m = 2, k = 50, d = 1.5, x0 = 0.5;
    double w0 = sqrt(k / m), z = d / (2 * sqrt(k * m)), wd = w0 * sqrt(1 - z * z);
    return x0 * exp(-z * w0 * t) * (cos(wd * t) + z * w0 / wd * sin(wd * t));
}

START_TEST(msd_jit) {
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/msd.dyad"), "--no-stdlib", "--model",
                    "MassSpringDamper", "--stop", "5", "--interval", "0.01", "--rtol", "1e-8",
                    "--atol", "1e-10", "-o", "sim_msd.csv", NULL};
    ck_assert_int_eq(st_run(argv, "sim_msd.log"), 0);
    StCsv c;
    ck_assert_int_eq(st_csv_read("sim_msd.csv", &c), 0);
    ck_assert_int_eq(c.nrows, 501);
    double err = max_error(&c, "mass.s", msd_exact);
    fprintf(stderr, "MSD: max |x - closed form| = %.3g\n", err);
    ck_assert_msg(err < 1e-6, "MSD error %g", err);
    st_csv_free(&c);
}
END_TEST

START_TEST(unknown_name_is_located) {
    char *argv[] = {(char *)DYADC, "flatten", (char *)SRC("tests/sim/rc.dyad"), "--no-stdlib",
                    "--model", "Resistr", NULL};
    ck_assert_int_eq(st_run(argv, "sim_unknown.log"), 1);
    char *log = st_slurp("sim_unknown.log");
    ck_assert_msg(strstr(log, "Resistr") != NULL, "message names the model: %s", log);
    free(log);
}
END_TEST

START_TEST(unsolvable_algebraic_equation_is_named) {
    /* a nonlinear algebraic block gets an initialization system, so a
     * failure names the equation with its location, not just IDACalcIC */
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/e2e/nosolution.dyad"), "--no-stdlib",
                    "--model", "NoSolution", "--stop", "1", "-o", "sim_nosol.csv", NULL};
    ck_assert_int_eq(st_run(argv, "sim_nosol.log"), 1);
    char *log = st_slurp("sim_nosol.log");
    ck_assert_msg(strstr(log, "initialization failed") && strstr(log, "x^2 = -1") &&
                  strstr(log, "nosolution.dyad:7"), "message: %s", log);
    free(log);
}
END_TEST

START_TEST(robertson_stiff_dae) {
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/robertson.dyad"), "--no-stdlib", "--model",
                    "Robertson", "--stop", "40", "--saveat", "0.4,4,40", "--rtol", "1e-8", "--atol", "1e-14",
                    "-o", "sim_rob.csv", NULL};
    ck_assert_int_eq(st_run(argv, "sim_rob.log"), 0);
    StCsv c;
    ck_assert_int_eq(st_csv_read("sim_rob.csv", &c), 0);
    ck_assert_int_eq(c.nrows, 3);
    int k1 = st_csv_col(&c, "y1"), k2 = st_csv_col(&c, "y2"), k3 = st_csv_col(&c, "y3");
    double e1 = fabs(st_csv(&c, 2, k1) - 0.7158271) / 0.7158271, e2 = fabs(st_csv(&c, 2, k2) - 9.185535e-6) / 9.185535e-6,
           e3 = fabs(st_csv(&c, 2, k3) - 0.2841637) / 0.2841637;
    fprintf(stderr, "Robertson t=40: relative errors y1 %.2g, y2 %.2g, y3 %.2g\n", e1, e2, e3);
    ck_assert_msg(e1 < 1e-6 && e2 < 1e-6 && e3 < 1e-6, "Robertson errors %g %g %g", e1, e2, e3);
    st_csv_free(&c);
    /* the long horizon: the stiff start must not be cut off by a step floor
     * derived from the final time */
    char *longrun[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/robertson.dyad"), "--no-stdlib", "--model",
                       "Robertson", "--stop", "4e10", "--saveat", "4e10", "--rtol", "1e-6", "--atol", "1e-12",
                       "-o", "sim_rob_long.csv", NULL};
    ck_assert_int_eq(st_run(longrun, "sim_rob_long.log"), 0);
    ck_assert_int_eq(st_csv_read("sim_rob_long.csv", &c), 0);
    double y1 = st_csv(&c, 0, k1), y2 = st_csv(&c, 0, k2), y3 = st_csv(&c, 0, k3);
    ck_assert_double_eq_tol(y1 + y2 + y3, 1, 1e-12);
    ck_assert_msg(y1 > 0 && y1 < 1e-7 && y2 > 0 && y2 < 1e-12, "long horizon y1 %g y2 %g", y1, y2);
    st_csv_free(&c);
}
END_TEST

/* The plate of tests/arrays/loops.dyad (PlateRows, N x M cells,
 * insulated, G = 1, a unit heat flow into cell [1, 1], T = 0 at t = 0),
 * whose residual and Jacobian the codegen emits as nests (cg_loop.c).
 * Closed form of the semi-discrete system T' = -L T + e_11 by the modes
 * of the grid Laplacian with insulated edges: phi_k(i) = cos(pi k (i -
 * 1/2) / N), lambda_kl = 4 - 2 cos(pi k / N) - 2 cos(pi l / M), each mode
 * growing as (1 - exp(-lambda t)) / lambda (t for lambda = 0). */
static double plate_mode(int k, int i, int n) { return cos(acos(-1.0) * k * (i - 0.5) / n); }

static double plate_exact(int n, int m, int i, int j, double t) {
    double sum = 0;
    for (int k = 0; k < n; k++)
        for (int l = 0; l < m; l++) {
            double lambda = 4 - 2 * cos(acos(-1.0) * k / n) - 2 * cos(acos(-1.0) * l / m);
            double growth = k == 0 && l == 0 ? t : -expm1(-lambda * t) / lambda;
            double norm = (k ? n / 2.0 : n) * (l ? m / 2.0 : m);
            sum += plate_mode(k, 1, n) * plate_mode(l, 1, m) * plate_mode(k, i, n) * plate_mode(l, j, m) / norm *
                   growth;
        }
    return sum;
}

START_TEST(plate_nests) {
    enum { N = 6, M = 24 };
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/arrays/loops.dyad"), "--no-stdlib", "--model",
                    "PlateRows", "--stop", "3", "--interval", "0.5", "--rtol", "1e-9", "--atol", "1e-12",
                    "-o", "sim_plate.csv", NULL};
    ck_assert_int_eq(st_run(argv, "sim_plate.log"), 0);
    /* the names hold commas (T[1,2]): read the columns by position, the
     * header says they are row-major */
    FILE *f = fopen("sim_plate.csv", "r");
    ck_assert_ptr_nonnull(f);
    static char line[1 << 16];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_msg(strncmp(line, "time,T[1,1],T[1,2],", 19) == 0 && strstr(line, ",T[2,1],T[2,2],") &&
                  strstr(line, ",T[6,24]\n"), "header: %.60s", line);
    double err = 0;
    int rows = 0;
    for (; fgets(line, sizeof line, f); rows++) {
        char *p = line;
        double t = strtod(p, &p);
        for (int i = 1; i <= N; i++)
            for (int j = 1; j <= M; j++) {
                ck_assert_int_eq(*p, ',');
                double e = fabs(strtod(p + 1, &p) - plate_exact(N, M, i, j, t));
                if (!(e <= err)) err = e;
            }
    }
    fclose(f);
    ck_assert_int_eq(rows, 7);
    fprintf(stderr, "PlateRows: max |T - closed form| = %.3g\n", err);
    ck_assert_msg(err < 1e-6, "PlateRows error %g", err);
}
END_TEST

int main(void) {
    Suite *s = suite_create("sim");
    TCase *tc = tcase_create("closed-form");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, rc_jit);
    tcase_add_test(tc, rc_executable);
    tcase_add_test(tc, rc_parameter_override);
    tcase_add_test(tc, msd_jit);
    tcase_add_test(tc, unknown_name_is_located);
    tcase_add_test(tc, unsolvable_algebraic_equation_is_named);
    tcase_add_test(tc, robertson_stiff_dae);
    tcase_add_test(tc, plate_nests);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
