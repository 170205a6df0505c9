/*
 * test_dae.c -- the solvability rule end to end (docs/STRUCTURE.md): the
 * goldens of tests/golden/structure/ compiled and run by dyadc, compared
 * with references from outside the code under test:
 *   - the time-varying linear loop z - w = cos t, sin(t) z + w = 1 + x,
 *     x' = -x against its closed form (to 1e-8 on [0, 4]);
 *   - the car axis problem against the published reference solution of the
 *     IVP test set (Bari; Mazzia & Magherini), at t = 3;
 *   - a coefficient check: a parameter that makes a coefficient the model
 *     divides by zero is an error naming it, before initialization.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

/* dyadc run FILE --no-stdlib --model MODEL ARGS... -o CSV; exit status,
 * the log (caller frees) in *log */
static int run(const char *file, const char *model, const char *const *args, const char *csv, char **log) {
    char logf[256];
    snprintf(logf, sizeof logf, "%s.log", csv);
    char *argv[32] = {(char *)DYADC, "run", (char *)SRC(file), "--no-stdlib", "--model", (char *)model};
    int n = 6;
    for (; *args && n < 28; args++) argv[n++] = (char *)*args;
    argv[n++] = "-o";
    argv[n++] = (char *)csv;
    argv[n] = NULL;
    int rc = st_run(argv, logf);
    *log = st_slurp(logf);
    return rc;
}

static StCsv run_ok(const char *file, const char *model, const char *const *args, const char *csv) {
    char *log;
    int rc = run(file, model, args, csv, &log);
    ck_assert_msg(rc == 0, "%s failed:\n%s", model, log);
    free(log);
    StCsv c;
    ck_assert_int_eq(st_csv_read(csv, &c), 0);
    return c;
}

static int col(const StCsv *c, const char *name) {
    int k = st_csv_col(c, name);
    ck_assert_msg(k >= 0, "column %s missing", name);
    return k;
}

static double maxabs(double m, double e) { return e <= m ? m : e; } /* NaN-propagating */

/* ---- the time-varying loop --------------------------------------------
 * x = e^-t; from z - w = cos t:  (1 + sin t) z = 1 + x + cos t. */
START_TEST(time_varying_loop) {
    const char *args[] = {"--stop", "4", "--interval", "0.001", "--rtol", "1e-11", "--atol", "1e-12", NULL};
    StCsv c = run_ok("tests/golden/structure/TimeLoop.dyad", "TimeLoop", args, "dae_timeloop.csv");
    ck_assert_int_eq(c.nrows, 4001);
    int kx = col(&c, "x"), kz = col(&c, "z"), kw = col(&c, "w");
    double ex = 0, ez = 0, ew = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0), x = exp(-t), z = (1 + x + cos(t)) / (1 + sin(t));
        ex = maxabs(ex, fabs(st_csv(&c, r, kx) - x));
        ez = maxabs(ez, fabs(st_csv(&c, r, kz) - z));
        ew = maxabs(ew, fabs(st_csv(&c, r, kw) - (z - cos(t))));
    }
    fprintf(stderr, "TimeLoop [0, 4]: max error vs closed form x %.3g, z %.3g, w %.3g\n", ex, ez, ew);
    ck_assert_msg(ex < 1e-8 && ez < 1e-8 && ew < 1e-8, "time-varying loop: %g %g %g", ex, ez, ew);
    st_csv_free(&c);
}
END_TEST

/* ---- the car axis problem (IVP test set) --------------------------------
 * Reference at t = 3 from the test set's caraxis.f (`solut`): xl, yl, xr,
 * yr, ul, vl, ur, vr, lam1, lam2. */
static const char *const car_names[10] = {"xl", "yl", "xr", "yr", "ul", "vl", "ur", "vr", "lam1", "lam2"};
static const double car_ref[10] = {
    0.4934557842755629e-001, 0.4969894602303324e+000, 0.1041742524885400e+001, 0.3739110272652214e+000,
    -0.7705836840321485e-001, 0.7446866596327776e-002, 0.1755681574942899e-001, 0.7703410437794031e+000,
    -0.4736886750784630e-002, -0.1104680411345730e-002};

START_TEST(car_axis) {
    const char *args[] = {"--stop", "3", "--interval", "0.01", "--rtol", "1e-8", "--atol", "1e-10", NULL};
    StCsv c = run_ok("tests/golden/structure/CarAxis.dyad", "CarAxis", args, "dae_caraxis.csv");
    int last = c.nrows - 1;
    ck_assert_double_eq_tol(st_csv(&c, last, 0), 3.0, 1e-12);
    double err = 0, con = 0;
    for (int i = 0; i < 10; i++) {
        double v = st_csv(&c, last, col(&c, car_names[i]));
        err = maxabs(err, fabs(v - car_ref[i]) / fmax(1.0, fabs(car_ref[i])));
    }
    /* the constraints along the way: the left wheel on the line to the axle
     * end, and the rod length */
    int kxl = col(&c, "xl"), kyl = col(&c, "yl"), kxr = col(&c, "xr"), kyr = col(&c, "yr");
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0), yb = 0.1 * sin(10 * t), xb = sqrt(1 - yb * yb);
        double xl = st_csv(&c, r, kxl), yl = st_csv(&c, r, kyl), xr = st_csv(&c, r, kxr), yr = st_csv(&c, r, kyr);
        con = maxabs(con, fabs(xb * xl + yb * yl));
        con = maxabs(con, fabs((xl - xr) * (xl - xr) + (yl - yr) * (yl - yr) - 1));
    }
    fprintf(stderr, "CarAxis (IVP test set, t = 3, rtol 1e-8): max error vs the published reference %.3g, "
                    "max constraint residual %.3g\n", err, con);
    ck_assert_msg(err < 1e-6, "car axis error %g", err);
    ck_assert_msg(con < 1e-7, "car axis constraints %g", con);
    st_csv_free(&c);
}
END_TEST

/* ---- a coefficient check ------------------------------------------------
 * RLC solves l.L der(l.i) = ... for der(l.i): with l.L = 0 that division
 * is an error naming the parameter and the equation, before anything runs. */
START_TEST(coefficient_check) {
    const char *args[] = {"-p", "l.L=0", NULL};
    char *log;
    int rc = run("tests/golden/structure/RLC.dyad", "RLC", args, "dae_coef.csv", &log);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, log);
    ck_assert_msg(strstr(log, "coefficient `l.L`") && strstr(log, "der(l.i)") && strstr(log, "RLC.dyad:") &&
                  strstr(log, "(l.L)"), "%s", log);
    free(log);
}
END_TEST

int main(void) {
    Suite *s = suite_create("dae");
    TCase *tc = tcase_create("solvability");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, time_varying_loop);
    tcase_add_test(tc, car_axis);
    tcase_add_test(tc, coefficient_check);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
