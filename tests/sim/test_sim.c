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

/* The grids of tests/arrays/loops.dyad (PlateRows: N x M cells, Cube: N x
 * M x K; insulated, G = 1, a unit heat flow into the first cell, T = 0 at
 * t = 0), whose interior cells are loop items of two and three dimensions
 * (structure/runs.c) and whose boundary rows the codegen rerolls
 * (cg_loop.c).  Closed form of the semi-discrete system T' = -L T + e_1 by
 * the modes of the grid Laplacian with insulated edges: along a dimension
 * of n cells phi_k(i) = cos(pi k (i - 1/2) / n) with eigenvalue 2 - 2
 * cos(pi k / n), a mode's eigenvalue the sum over the dimensions, each
 * mode growing as (1 - exp(-lambda t)) / lambda (t for lambda = 0). */
static double grid_mode(int k, int i, int n) { return cos(acos(-1.0) * k * (i - 0.5) / n); }

static double grid_exact(int dims, const int *n, const int *at, double t) {
    int k[3] = {0, 0, 0};
    double sum = 0;
    for (;;) {
        double lambda = 0, norm = 1, w = 1;
        for (int d = 0; d < dims; d++) {
            lambda += 2 - 2 * cos(acos(-1.0) * k[d] / n[d]);
            norm *= k[d] ? n[d] / 2.0 : n[d];
            w *= grid_mode(k[d], 1, n[d]) * grid_mode(k[d], at[d], n[d]);
        }
        sum += w / norm * (lambda == 0 ? t : -expm1(-lambda * t) / lambda);
        int d = dims - 1;
        while (d >= 0 && ++k[d] == n[d]) k[d--] = 0;
        if (d < 0) return sum;
    }
}

/* Runs the model and returns the largest deviation of its N x M (x K)
 * columns (row-major, the header says so) from the closed form. */
static double grid_error(const char *model, int dims, const int *n, const char *header, const char *last) {
    char csv[64], log[64];
    snprintf(csv, sizeof csv, "sim_%s.csv", model);
    snprintf(log, sizeof log, "sim_%s.log", model);
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/arrays/loops.dyad"), "--no-stdlib", "--model",
                    (char *)model, "--stop", "3", "--interval", "0.5", "--rtol", "1e-9", "--atol", "1e-12",
                    "-o", csv, NULL};
    ck_assert_int_eq(st_run(argv, log), 0);
    FILE *f = fopen(csv, "r");  /* the names hold commas (T[1,2]): columns by position */
    ck_assert_ptr_nonnull(f);
    static char line[1 << 16];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_msg(strncmp(line, header, strlen(header)) == 0 && strstr(line, last), "header: %.60s", line);
    double err = 0;
    int rows = 0, cells = 1;
    for (int d = 0; d < dims; d++) cells *= n[d];
    for (; fgets(line, sizeof line, f); rows++) {
        char *p = line;
        double t = strtod(p, &p);
        for (int c = 0; c < cells; c++) {
            int at[3], q = c;
            for (int d = dims - 1; d >= 0; q /= n[d], d--) at[d] = q % n[d] + 1;
            ck_assert_int_eq(*p, ',');
            double e = fabs(strtod(p + 1, &p) - grid_exact(dims, n, at, t));
            if (!(e <= err)) err = e;
        }
    }
    fclose(f);
    ck_assert_int_eq(rows, 7);
    fprintf(stderr, "%s: max |T - closed form| = %.3g\n", model, err);
    return err;
}

START_TEST(plate_nests) {
    double err = grid_error("PlateRows", 2, (const int[]){6, 24}, "time,T[1,1],T[1,2],", ",T[6,24]\n");
    ck_assert_msg(err < 1e-6, "PlateRows error %g", err);
}
END_TEST

START_TEST(cube_box) {
    double err = grid_error("Cube", 3, (const int[]){6, 7, 8}, "time,T[1,1,1],T[1,1,2],", ",T[6,7,8]\n");
    ck_assert_msg(err < 1e-6, "Cube error %g", err);
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
    tcase_add_test(tc, cube_box);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
