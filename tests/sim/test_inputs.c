/*
 * test_inputs.c -- the model's own inputs (top-level RealInputs that no
 * equation computes) given over time with `--input FILE.csv`, linearly
 * interpolated: the filter T x' = u - x, y = 2 x against its closed forms
 * for a ramp-and-hold and for a step written as two rows at one time; the
 * refusals (an input given with -p, a column that is no input, times going
 * back) and an input that would have to be differentiated.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define MODEL st_path("DYADC_SOURCE_DIR", "tests/sim/e2e/inputfilter.dyad")
#define T 0.5

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int run(const char *model, const char *input, const char *out, const char *log, const char *extra) {
    char *argv[24] = {(char *)DYADC, "run", (char *)MODEL, "--no-stdlib", "--model", (char *)model, "--stop", "2",
                      "--interval", "0.05", "--rtol", "1e-10", "--atol", "1e-12", "-o", (char *)out};
    int n = 16;
    if (input) {
        argv[n++] = "--input";
        argv[n++] = (char *)input;
    }
    if (extra) argv[n++] = (char *)extra;
    argv[n] = NULL;
    return st_run(argv, log);
}

/* max |y - 2 x_exact(t)| over the rows */
static double max_error(const char *csv, double (*x)(double)) {
    StCsv c;
    ck_assert_int_eq(st_csv_read(csv, &c), 0);
    int ky = st_csv_col(&c, "y"), ku = st_csv_col(&c, "u");
    ck_assert_int_ge(ky, 0);
    ck_assert_int_ge(ku, 0);                  /* the input is a column of the result */
    double err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double e = fabs(st_csv(&c, r, ky) - 2 * x(st_csv(&c, r, 0)));
        if (!(e <= err)) err = e;
    }
    st_csv_free(&c);
    return err;
}

/* u = t up to 1, then 1 */
static double ramp_x(double t) {
    if (t <= 1) return t - T * (1 - exp(-t / T));
    double x1 = 1 - T * (1 - exp(-1 / T));
    return x1 * exp(-(t - 1) / T) + 1 - exp(-(t - 1) / T);
}

/* u = 0 before 0.5, 1 from 0.5 on */
static double step_x(double t) { return t < 0.5 ? 0 : 1 - exp(-(t - 0.5) / T); }

START_TEST(ramp_and_hold) {
    write_file("in_ramp.csv", "time,u\n0,0\n1,1\n2,1\n");
    ck_assert_int_eq(run("InputFilter", "in_ramp.csv", "in_ramp_out.csv", "in_ramp.log", NULL), 0);
    double err = max_error("in_ramp_out.csv", ramp_x);
    fprintf(stderr, "input ramp: max |y - 2 x(t)| = %.3g\n", err);
    ck_assert_msg(err < 1e-7, "error %g", err);
}
END_TEST

START_TEST(step_as_two_rows) {
    write_file("in_step.csv", "time,u\n0,0\n0.5,0\n0.5,1\n2,1\n");
    ck_assert_int_eq(run("InputFilter", "in_step.csv", "in_step_out.csv", "in_step.log", NULL), 0);
    double err = max_error("in_step_out.csv", step_x);
    fprintf(stderr, "input step: max |y - 2 x(t)| = %.3g\n", err);
    ck_assert_msg(err < 1e-7, "error %g", err);
}
END_TEST

static void refused(const char *input, const char *extra, const char *model, const char *needle) {
    int rc = run(model, input, "in_bad_out.csv", "in_bad.log", extra);
    char *log = st_slurp("in_bad.log");
    ck_assert_msg(rc == 1 && strstr(log, needle), "exit %d, expected \"%s\" in:\n%s", rc, needle, log);
    free(log);
}

START_TEST(refusals) {
    refused(NULL, "-pu=1", "InputFilter", "'u' is an input of the model, not a parameter");
    write_file("in_badcol.csv", "time,w\n0,1\n");
    refused("in_badcol.csv", NULL, "InputFilter", "column 'w' is not an input of 'InputFilter' (its inputs: u)");
    write_file("in_back.csv", "time,u\n0,0\n1,1\n0.5,1\n");
    refused("in_back.csv", NULL, "InputFilter", "in_back.csv:4: time 0.5 is before the previous row's 1");
    refused(NULL, NULL, "Differentiated", "inputfilter.dyad:24:3: error: the input `u` would have to be differentiated");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("inputs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ramp_and_hold);
    tcase_add_test(tc, step_as_two_rows);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return check_failures(suite()) ? 1 : 0;
}
