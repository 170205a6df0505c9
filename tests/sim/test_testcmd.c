/*
 * test_testcmd.c -- `dyadc test` on its own test library
 * (tests/sim/testcmd/TestLib, copied to the build folder): missing golden
 * files, --bless (the written golden checked against the closed form
 * x = e^{-t}), passing and failing cases with the report (variable, time,
 * expected, got, tolerance, the source line), a changed golden value,
 * --filter, and the exit status.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

static void assert_contains(const char *text, const char *needle) {
    ck_assert_msg(strstr(text, needle) != NULL, "expected \"%s\" in:\n%s", needle, text);
}

/* dyadc test --no-stdlib tc/TestLib [extra...]: exit status, output in log */
static int test_cmd(const char *log, const char *a1, const char *a2, const char *a3) {
    char *argv[] = {(char *)DYADC, "test", "--no-stdlib", "tc/TestLib", (char *)a1, (char *)a2, (char *)a3, NULL};
    return st_run(argv, log);
}

static void setup_copy(void) {
    char *rm[] = {"/bin/rm", "-rf", "tc", NULL};
    ck_assert_int_eq(st_run(rm, NULL), 0);
    char *cp[] = {"/bin/cp", "-r", (char *)SRC("tests/sim/testcmd"), "tc", NULL};
    ck_assert_int_eq(st_run(cp, NULL), 0);
}

/* change the value of d.x in row `row` (1 = first data row) of the golden */
static void perturb_golden(const char *path, int row, double delta) {
    StCsv c;
    ck_assert_int_eq(st_csv_read(path, &c), 0);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s", c.names[0]);
    for (int k = 1; k < c.ncols; k++) fprintf(f, ",%s", c.names[k]);
    fputc('\n', f);
    for (int r = 0; r < c.nrows; r++)
        for (int k = 0; k < c.ncols; k++)
            fprintf(f, "%.17g%c", st_csv(&c, r, k) + (r == row - 1 && k == 1 ? delta : 0), k + 1 < c.ncols ? ',' : '\n');
    fclose(f);
    st_csv_free(&c);
}

START_TEST(test_command) {
    setup_copy();
    const char *golden = "tc/TestLib/snapshots/DecayTest_exact.csv";
    /* no golden yet: the signal case fails naming the file to bless */
    ck_assert_int_eq(test_cmd("tc_first.log", "--filter", "*.exact", NULL), 1);
    char *text = st_slurp("tc_first.log");
    assert_contains(text, "FAIL TestLib.DecayTest.exact");
    assert_contains(text, "no golden file tc/TestLib/snapshots/DecayTest_exact.csv");
    assert_contains(text, "write it with `dyadc test --bless`");
    free(text);
    /* --bless writes it: 101 points of x = e^{-t}, rate = -x */
    ck_assert_int_eq(test_cmd("tc_bless.log", "--bless", "--filter", "*.exact"), 0);
    StCsv c;
    ck_assert_int_eq(st_csv_read(golden, &c), 0);
    ck_assert_int_eq(c.nrows, 101);
    ck_assert_int_eq(c.ncols, 3);
    ck_assert_int_eq(st_csv_col(&c, "d.x"), 1);
    ck_assert_int_eq(st_csv_col(&c, "d.rate"), 2);
    double err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0);
        ck_assert_double_eq_tol(t, 0.02 * r, 1e-15);
        err = fmax(err, fabs(st_csv(&c, r, 1) - exp(-t)) + fabs(st_csv(&c, r, 2) + exp(-t)));
    }
    fprintf(stderr, "blessed golden: max |x - e^-t| + |rate + e^-t| = %.3g\n", err);
    ck_assert_msg(err < 1e-8, "golden error %g", err);
    st_csv_free(&c);
    /* every case: two pass, three fail with their reports */
    ck_assert_int_eq(test_cmd("tc_all.log", NULL, NULL, NULL), 1);
    text = st_slurp("tc_all.log");
    fprintf(stderr, "%s", text);
    assert_contains(text, "PASS TestLib.DecayTest.exact");
    assert_contains(text, "PASS TestLib.DecayTest.params");
    assert_contains(text, "FAIL TestLib.DecayTest.wrong");
    assert_contains(text, "decay.dyad:37:72: error: final `d.x` at t = 2: expected 0.2, got 0.1353352");
    assert_contains(text, "|difference| 0.0647 > tolerance 0.001 (atol 0.001, rtol 0)");
    assert_contains(text, "\"wrong\": {\"stop\": 2, \"atol\": {\"d.x\": 1e-3}"); /* the source line */
    assert_contains(text, "FAIL TestLib.DecayTest.conflict");
    assert_contains(text, "error: inconsistent initialization: `initial d.x = d.x0");
    assert_contains(text, "`initial d.rate = -1.5 (tc/TestLib/decay.dyad:38)`");
    assert_contains(text, "FAIL TestLib.DecayTest.missing");
    assert_contains(text, "2 passed, 3 failed");
    free(text);
    /* a golden value changed by 1e-6 (tolerance 1e-8): the signal check fails at t = 1 */
    perturb_golden(golden, 51, 1e-6);
    ck_assert_int_eq(test_cmd("tc_changed.log", "--filter", "DecayTest.exact", NULL), 1);
    text = st_slurp("tc_changed.log");
    assert_contains(text, "error: signal `d.x` at t = 1: expected 0.3678804");
    assert_contains(text, "1 of the golden file's 101 points differ");
    assert_contains(text, "0 passed, 1 failed");
    free(text);
    /* a filter that matches nothing */
    ck_assert_int_eq(test_cmd("tc_none.log", "--filter", "NoSuchCase", NULL), 1);
    text = st_slurp("tc_none.log");
    assert_contains(text, "no test cases matching `NoSuchCase` found");
    free(text);
}
END_TEST

int main(void) {
    Suite *s = suite_create("testcmd");
    TCase *tc = tcase_create("testcmd");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_command);
    suite_add_tcase(s, tc);
    return check_failures(s) ? 1 : 0;
}
