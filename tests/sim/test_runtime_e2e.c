/*
 * test_runtime_e2e.c -- the simulator end to end through dyadc: closed-form
 * and independent references (RLC, a parameter solved at initialization, a
 * rectifier's event times), JIT vs standalone executable, and the failure
 * paths (blow-up, failed initialization, failed assertion): message, exit
 * status and the rows kept.  Models live in tests/sim/e2e/.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)
#define E2E(name) SRC("tests/sim/e2e/" name)

static StCsv read_csv(const char *path) {
    StCsv c;
    ck_assert_msg(st_csv_read(path, &c) == 0, "cannot read %s", path);
    return c;
}

static int col(const StCsv *c, const char *name) {
    int k = st_csv_col(c, name);
    ck_assert_msg(k >= 0, "column %s missing", name);
    return k;
}

/* max |column - exact(t)| over all rows (NaN-propagating) */
static double max_error(const StCsv *c, const char *name, double (*exact)(double)) {
    int k = col(c, name);
    double err = 0;
    for (int r = 0; r < c->nrows; r++) {
        double e = fabs(st_csv(c, r, k) - exact(st_csv(c, r, 0)));
        if (!(e <= err)) err = e;
    }
    return err;
}

static void assert_contains(const char *text, const char *needle) {
    ck_assert_msg(strstr(text, needle) != NULL, "expected \"%s\" in:\n%s", needle, text);
}

/* ---- RLC (stdlib ElectricalComponents.Examples.RLC) ---------------------
 * R = L = C = 1, 1 V step, at rest: v'' + v' + v = 1, so with alpha = 1/2,
 * w = sqrt(3)/2: v = 1 - e^{-t/2} (cos wt + (alpha/w) sin wt), i = C v' =
 * e^{-t/2} sin(wt) / w (alpha^2 + w^2 = 1). */
static double rlc_v(double t) {
    double w = sqrt(0.75);
    return 1 - exp(-t / 2) * (cos(w * t) + 0.5 / w * sin(w * t));
}
static double rlc_i(double t) {
    double w = sqrt(0.75);
    return exp(-t / 2) * sin(w * t) / w;
}

#define RLC_SIM_OPTS "--stop", "10", "--interval", "0.05", "--rtol", "1e-9", "--atol", "1e-11"

START_TEST(rlc_closed_form) {
    char *argv[] = {(char *)DYADC, "run", "--model", "ElectricalComponents.Examples.RLC",
                    RLC_SIM_OPTS, "-o", "e2e_rlc_jit.csv", NULL};
    ck_assert_int_eq(st_run(argv, "e2e_rlc_jit.log"), 0);
    StCsv c = read_csv("e2e_rlc_jit.csv");
    ck_assert_int_eq(c.nrows, 201);
    double ev = max_error(&c, "capacitor.v", rlc_v);
    double ei = max_error(&c, "inductor.i", rlc_i);
    fprintf(stderr, "RLC: max |capacitor.v - exact| = %.3g, max |inductor.i - exact| = %.3g\n", ev, ei);
    ck_assert_msg(ev < 1e-7 && ei < 1e-7, "RLC errors %g %g", ev, ei);
    /* spot values from the docstring */
    int kv = col(&c, "capacitor.v");
    ck_assert_double_eq_tol(st_csv(&c, 20, kv), 0.3402998, 1e-6);
    ck_assert_double_eq_tol(st_csv(&c, 80, kv), 1.1531228, 1e-6);
    st_csv_free(&c);
}
END_TEST

/* `dyadc run` (ORC JIT) and `dyadc build` (object + static runtime) compile
 * the same optimized IR without fast-math: the results must agree. */
START_TEST(jit_equals_executable) {
    char *build[] = {(char *)DYADC, "build", "--model", "ElectricalComponents.Examples.RLC",
                     "-o", "e2e_rlc_exe", NULL};
    ck_assert_int_eq(st_run(build, "e2e_rlc_build.log"), 0);
    char *exe[] = {"./e2e_rlc_exe", RLC_SIM_OPTS, "-o", "e2e_rlc_exe.csv", NULL};
    ck_assert_int_eq(st_run(exe, "e2e_rlc_exe.log"), 0);
    char *jit[] = {(char *)DYADC, "run", "--model", "ElectricalComponents.Examples.RLC",
                   RLC_SIM_OPTS, "-o", "e2e_rlc_jit2.csv", NULL};
    ck_assert_int_eq(st_run(jit, "e2e_rlc_jit2.log"), 0);
    StCsv a = read_csv("e2e_rlc_exe.csv"), b = read_csv("e2e_rlc_jit2.csv");
    ck_assert_int_eq(a.ncols, b.ncols);
    ck_assert_int_eq(a.nrows, b.nrows);
    double diff = 0;
    for (int i = 0; i < a.ncols; i++) ck_assert_str_eq(a.names[i], b.names[i]);
    for (int r = 0; r < a.nrows * a.ncols; r++) {
        double d = fabs(a.data[r] - b.data[r]);
        if (!(d <= diff)) diff = d;
    }
    fprintf(stderr, "JIT vs executable: max |difference| = %.3g over %d values\n", diff,
            a.nrows * a.ncols);
    ck_assert_msg(diff <= 1e-13, "JIT and executable differ by %g", diff);
    st_csv_free(&a);
    st_csv_free(&b);
}
END_TEST

/* ---- a parameter solved at initialization --------------------------------
 * m v' = m g - k x with x(0) = x0, v(0) = 0, initial der(v) = 0: k = m g / x0,
 * and the mass stays at x0 with spring force m g. */
static void check_spring(const char *csv, double x0) {
    StCsv c = read_csv(csv);
    int kx = col(&c, "x"), kv = col(&c, "v"), kf = col(&c, "spring_force");
    double ex = 0, ef = 0, ev = 0;
    for (int r = 0; r < c.nrows; r++) {
        ex = fmax(ex, fabs(st_csv(&c, r, kx) - x0));
        ev = fmax(ev, fabs(st_csv(&c, r, kv)));
        ef = fmax(ef, fabs(st_csv(&c, r, kf) - 9.81));
    }
    fprintf(stderr, "SpringInit x0=%g: max |x - x0| = %.3g, |v| = %.3g, |k x - m g| = %.3g "
            "(k = %.10g, expected %.10g)\n",
            x0, ex, ev, ef, st_csv(&c, 0, kf) / st_csv(&c, 0, kx), 9.81 / x0);
    ck_assert_msg(ex < 1e-9 && ev < 1e-9 && ef < 1e-9, "spring errors %g %g %g", ex, ev, ef);
    st_csv_free(&c);
}

START_TEST(parameter_solved_at_init) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("springinit.dyad"), "--no-stdlib", "--model",
                    "SpringInit", "--stop", "2", "-o", "e2e_spring.csv", NULL};
    ck_assert_int_eq(st_run(argv, "e2e_spring.log"), 0);
    check_spring("e2e_spring.csv", 0.2);
    /* a changed x0 gives a new k without recompiling */
    char *argp[] = {(char *)DYADC, "run", (char *)E2E("springinit.dyad"), "--no-stdlib", "--model",
                    "SpringInit", "--stop", "2", "-p", "x0=0.1", "-o", "e2e_spring_p.csv", NULL};
    ck_assert_int_eq(st_run(argp, "e2e_spring_p.log"), 0);
    check_spring("e2e_spring_p.csv", 0.1);
    /* --initial replaces the relation `initial x = x0` (System.initial_row):
     * the mass starts at 0.5 and k = m g / 0.5 */
    char *argi[] = {(char *)DYADC, "run", (char *)E2E("springinit.dyad"), "--no-stdlib", "--model",
                    "SpringInit", "--stop", "2", "--initial", "x=0.5", "-o", "e2e_spring_i.csv", NULL};
    int rc = st_run(argi, "e2e_spring_i.log");
    char *text = st_slurp("e2e_spring_i.log");
    if (rc == 1 && strstr(text, "did not record which")) {
        fprintf(stderr, "SpringInit --initial: SKIPPED, the System has no initial_row\n");
    } else {
        ck_assert_msg(rc == 0, "--initial x=0.5 failed:\n%s", text);
        check_spring("e2e_spring_i.csv", 0.5);
    }
    free(text);
}
END_TEST

/* Two `missing` parameters, one of them determined and the other free,
 * where the structurally chosen guess row pins the determined one: the
 * runtime pins the other instead (guessswap.dyad has the closed form:
 * la = 0.7 keeps mass 1 at rest at x1 = 1, lb = 0 gives f = 80). */
START_TEST(guess_row_swapped_when_singular) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("guessswap.dyad"), "--no-stdlib", "--model",
                    "GuessSwap", "--stop", "2", "--vars", "x1,v1,f", "-o", "e2e_guessswap.csv", NULL};
    int rc = st_run(argv, "e2e_guessswap.log");
    char *text = st_slurp("e2e_guessswap.log");
    ck_assert_msg(rc == 0, "GuessSwap failed:\n%s", text);
    /* the path under test: the compiler pinned la (if it pins lb, rewrite the model) */
    assert_contains(text, "with the `missing` parameter 'la' at its guess the system is singular");
    assert_contains(text, "'lb' is kept at its guess instead");
    StCsv c = read_csv("e2e_guessswap.csv");
    int kx = col(&c, "x1"), kv = col(&c, "v1"), kf = col(&c, "f");
    double ex = 0, ev = 0, ef = 0;
    for (int r = 0; r < c.nrows; r++) {
        ex = fmax(ex, fabs(st_csv(&c, r, kx) - 1));
        ev = fmax(ev, fabs(st_csv(&c, r, kv)));
        ef = fmax(ef, fabs(st_csv(&c, r, kf) - 80));
    }
    fprintf(stderr, "GuessSwap: max |x1 - 1| = %.3g, |v1| = %.3g, |f - 80| = %.3g\n", ex, ev, ef);
    ck_assert_msg(c.nrows > 1 && ex < 1e-9 && ev < 1e-9 && ef < 1e-8, "GuessSwap errors %g %g %g", ex, ev, ef);
    st_csv_free(&c);
    free(text);
}
END_TEST


/* ---- failure paths ------------------------------------------------------ */

/* der(x) = x^2, x(0) = 1: x = 1/(1 - t) blows up at t = 1.  Exit 1, a message
 * with the time, the reason and the step size, and every row before it. */
START_TEST(blowup_reports_and_keeps_rows) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("blowup.dyad"), "--no-stdlib", "--model",
                    "Blowup", "--stop", "2", "--interval", "0.01", "--rtol", "1e-10", "--atol", "1e-10",
                    "-o", "e2e_blowup.csv", NULL};
    ck_assert_int_eq(st_run(argv, "e2e_blowup.log"), 1);
    char *text = st_slurp("e2e_blowup.log");
    fprintf(stderr, "Blowup: %s", text);
    assert_contains(text, "error: simulation failed at t = 0.99");
    assert_contains(text, "last step size h =");
    StCsv c = read_csv("e2e_blowup.csv");
    ck_assert_int_ge(c.nrows, 99); /* rows at t = 0, 0.01, ..., 0.99 */
    ck_assert_int_le(c.nrows, 100);
    int kx = col(&c, "x");
    double err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0), exact = 1 / (1 - t);
        err = fmax(err, fabs(st_csv(&c, r, kx) - exact) / exact);
    }
    fprintf(stderr, "Blowup: %d rows kept, last t = %g, max relative error %.3g\n", c.nrows,
            st_csv(&c, c.nrows - 1, 0), err);
    ck_assert_msg(err < 1e-4, "blow-up rows relative error %g", err);
    free(text);
    st_csv_free(&c);
}
END_TEST

/* initial x^2 = -1 has no real solution: exit 1, the residual norm and the
 * variable named; no CSV is created, an existing one is left as it was. */
START_TEST(failed_initialization) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("badinit.dyad"), "--no-stdlib", "--model",
                    "BadInit", "-o", "e2e_badinit.csv", NULL};
    remove("e2e_badinit.csv");
    ck_assert_int_eq(st_run(argv, "e2e_badinit.log"), 1);
    ck_assert_int_ne(access("e2e_badinit.csv", F_OK), 0);
    FILE *old = fopen("e2e_badinit.csv", "w");
    ck_assert_ptr_nonnull(old);
    fputs("old result\n", old);
    fclose(old);
    ck_assert_int_eq(st_run(argv, "e2e_badinit.log"), 1);
    char *text = st_slurp("e2e_badinit.log");
    fprintf(stderr, "BadInit: %s", text);
    assert_contains(text, "error: initialization failed");
    assert_contains(text, "residual norm");
    assert_contains(text, "unknowns x");
    char *kept = st_slurp("e2e_badinit.csv");
    ck_assert_str_eq(kept, "old result\n");
    free(kept);
    free(text);
}
END_TEST

/* x = exp(-t) with assert(x > 0.5): the assertion's comparison is a zero
 * crossing, so the integrator stops where it turns false, at ln 2 = 0.693;
 * exit 1, the message with file:line:col and the time, the rows before it
 * and the failing one. */
START_TEST(failed_assertion) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("asserted.dyad"), "--no-stdlib", "--model",
                    "Asserted", "--stop", "2", "--interval", "0.01", "--rtol", "1e-9", "--atol", "1e-11",
                    "-o", "e2e_assert.csv", NULL};
    ck_assert_int_eq(st_run(argv, "e2e_assert.log"), 1);
    char *text = st_slurp("e2e_assert.log");
    fprintf(stderr, "Asserted: %s", text);
    assert_contains(text, "x fell below one half (");
    assert_contains(text, "asserted.dyad:7:3)");   /* where the assertion is written */
    const char *at = strstr(text, "t=");
    if (!at) at = strstr(text, "t = ");
    ck_assert_ptr_nonnull(at);
    double t = strtod(strchr(at, '=') + 1, NULL);
    ck_assert_msg(fabs(t - log(2.0)) < 1e-6, "assertion time %.17g, ln 2 = %.17g", t, log(2.0));
    StCsv c = read_csv("e2e_assert.csv");
    ck_assert_double_eq_tol(st_csv(&c, c.nrows - 1, 0), t, 1e-12);
    ck_assert_int_eq(c.nrows, 71); /* t = 0 .. 0.69, then the failing row at ln 2 */
    int kx = col(&c, "x");
    for (int r = 0; r < c.nrows; r++)
        ck_assert_double_eq_tol(st_csv(&c, r, kx), exp(-st_csv(&c, r, 0)), 1e-7);
    free(text);
    st_csv_free(&c);
}
END_TEST

/* ---- events: half-wave rectifier written with ifelse ---------------------
 * The diode voltage vs - v has the sign of the source sin(2 pi f t), so the
 * diode switches at t = k/(2f).  With R_on = 0.01, R = 100 the load gets
 * v = vs R/(R + R_on) while conducting and ~1e-4 vs while blocking.
 * Run at the given tolerances (NULL: the defaults, rtol 1e-6, atol 1e-8);
 * the event times must be k/(2f) within t_tol, v exact within v_tol. */
/* max |v - closed form| over the rows of a Rectifier run: the load gets
 * v = vs R/(R + R_on) while the diode conducts, vs G_off R/(1 + G_off R) while
 * it blocks (R = 100, R_on = 0.01, G_off = 1e-6, V = 10, f = 50) */
static double rectifier_v_error(const StCsv *c) {
    int kv = col(c, "v");
    double err = 0;
    for (int r = 0; r < c->nrows; r++) {
        double t = st_csv(c, r, 0), vs = 10 * sin(2 * 3.141592653589793 * 50 * t);
        double exact = vs > 0 ? vs * 100 / 100.01 : vs * 1e-4 / (1 + 1e-4);
        err = fmax(err, fabs(st_csv(c, r, kv) - exact));
    }
    return err;
}

static void check_rectifier(const char *rtol, const char *atol, double t_tol, double v_tol) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("rectifier.dyad"), "--no-stdlib", "--model",
                    "Rectifier", "--stop", "0.1", "--interval", "0.0005", "-v",
                    "-o", "e2e_rect.csv", "--rtol", (char *)rtol, "--atol", (char *)atol, NULL};
    if (!rtol)
        argv[13] = NULL;
    int rc = st_run(argv, "e2e_rect.log");
    char *text = st_slurp("e2e_rect.log");
    if (strstr(text, " 0 zero-crossing functions")) {
        /* The structure phase does not extract zero crossings yet
         * (System.zc empty): nothing to check here. */
        fprintf(stderr, "Rectifier: SKIPPED, the model has no zero-crossing functions\n%s", text);
        free(text);
        return;
    }
    ck_assert_msg(rc == 0, "rectifier failed:\n%s", text);
    /* 2 f t_stop = 10 sign changes in (0, 0.1]; the one at t = 0.1 may or may not
     * be reached, the one at t = 0 is not an event (vd starts at 0). */
    const char *ev = strstr(text, "events ");
    ck_assert_ptr_nonnull(ev);
    long nev = strtol(ev + 7, NULL, 10);
    ck_assert_msg(nev >= 9 && nev <= 10, "%ld events, expected 9 or 10", nev);
    /* -v lists the event times: each must be k/(2f) = k * 0.01 */
    double worst = 0;
    int listed = 0;
    for (const char *e = strstr(text, "event at t = "); e; e = strstr(e + 1, "event at t = ")) {
        double t = strtod(e + 13, NULL);
        double k = round(t / 0.01);
        worst = fmax(worst, fabs(t - k * 0.01));
        ck_assert_msg(k >= 1, "event at t = %g before the first sign change", t);
        listed++;
    }
    fprintf(stderr, "Rectifier: %ld events, max |t_event - k/(2f)| = %.3g\n", nev, worst);
    ck_assert_int_eq(listed, nev);
    /* IDA locates the root of g = vs - v to within about atol / |dg/dt| plus
     * the interpolation error of v: while conducting dg/dt = 1e-4 * 2 pi f V =
     * 0.31 /s (measured: 1.5e-9 s at atol 1e-10, 7e-12 since the restarts are
     * polished to tight values) */
    ck_assert_msg(worst < t_tol, "event time error %g", worst);
    StCsv c = read_csv("e2e_rect.csv");
    double err = rectifier_v_error(&c);
    fprintf(stderr, "Rectifier: max |v - exact| = %.3g\n", err);
    ck_assert_msg(err < v_tol, "rectifier error %g", err);
    free(text);
    st_csv_free(&c);
}

START_TEST(rectifier_events) {
    check_rectifier("1e-8", "1e-10", 1e-8, 1e-6);
}
END_TEST

/* At the default tolerances (rtol 1e-6, atol 1e-8) the check after each
 * event sees g = vs - v within the error the tolerances allow in v (the
 * diode just turned on: g = 1e-4 vs); before the check weighed that
 * uncertainty it called the switch at t = 0.02 chattering (exit 1).
 * Bounds from the tolerances: v within rtol V = 1e-5, an event within
 * (rtol V + atol) / (dg/dt = 0.31 /s) = 3.2e-5 s of k/(2f). */
START_TEST(rectifier_default_tolerances) {
    check_rectifier(NULL, NULL, 3.2e-5, 1e-5);
}
END_TEST

/* At loose tolerances the diode's g = vs - v = 1e-4 vs while conducting is
 * below the error IDA allows in v, and IDACalcIC keeps the old branch's v
 * after a switch (its Newton step is within the tolerances): the events
 * near each zero of vs went back and forth 1e-13 s apart and the run
 * stopped with a false "chattering: ... fires 50 times within 3e-12" at
 * t = 0.09 (stop 1: rtol 1e-3 atol 1e-4, rtol 1e-2 atol 1e-3) or 0.03
 * (stop 0.5, rtol 1e-3; stop 0.3, rtol 1e-2).  Now every run reaches the
 * stop time with every row, and with `exact` v agrees with the closed form
 * within rtol V (V = 10, the tolerance scale of the load voltage).  Not at
 * rtol 1e-2: there a switch between restarts can come a millisecond late
 * (IDA solves v only to its Newton tolerance; docs/RUNTIME.md), v on the
 * wrong branch meanwhile, depending on where the steps fall.
 * `exact` 2: also v within rtol V + 1e4 atol (a switch located within
 * atol / (dg/dt) of k/(2f), dg/dt = 1e-4 dv/dt on the conducting branch)
 * and one event per zero of vs in (0, stop] (100 f stop / 50). */
static void check_rectifier_loose(const char *stop, const char *rtol, const char *atol, int exact) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("rectifier.dyad"), "--no-stdlib", "--model",
                    "Rectifier", "--stop", (char *)stop, "--rtol", (char *)rtol, "--atol", (char *)atol,
                    "-o", "e2e_rect_loose.csv", "-v", NULL};
    remove("e2e_rect_loose.csv");
    int rc = st_run(argv, "e2e_rect_loose.log");
    char *text = st_slurp("e2e_rect_loose.log");
    ck_assert_msg(rc == 0, "rectifier at --stop %s --rtol %s --atol %s failed:\n%s", stop, rtol, atol, text);
    ck_assert_msg(strstr(text, "chattering") == NULL, "%s", text);
    StCsv c = read_csv("e2e_rect_loose.csv");
    ck_assert_int_eq(c.nrows, 501);
    ck_assert_double_eq_tol(st_csv(&c, c.nrows - 1, 0), strtod(stop, NULL), 1e-9);
    double err = rectifier_v_error(&c);
    const char *ev = strstr(text, "events ");
    ck_assert_ptr_nonnull(ev);
    long events = strtol(ev + 7, NULL, 10), zeros = lround(100 * strtod(stop, NULL));
    fprintf(stderr, "Rectifier --stop %s --rtol %s --atol %s: max |v - exact| = %.3g, %ld events (%ld zeros of vs)\n",
            stop, rtol, atol, err, events, zeros);
    ck_assert_msg(exact != 1 || err < 10 * strtod(rtol, NULL), "rectifier error %g", err);
    if (exact == 2) {
        ck_assert_msg(err < 10 * strtod(rtol, NULL) + 1e4 * strtod(atol, NULL), "rectifier error %g", err);
        ck_assert_int_eq(events, zeros);
    }
    free(text);
    st_csv_free(&c);
}

START_TEST(rectifier_loose_tolerances) {
    check_rectifier_loose("1", "1e-3", "1e-4", 1);
    check_rectifier_loose("0.5", "1e-3", "1e-4", 1);
    check_rectifier_loose("1", "1e-4", "1e-6", 1);
    check_rectifier_loose("1", "1e-2", "1e-3", 0);
    check_rectifier_loose("0.3", "1e-2", "1e-3", 0);
}
END_TEST

/* At tight tolerances the run stopped with IDA_ERR_FAIL at t = 0.03 (rtol
 * 1e-10) or 0.29 (1e-9): after a restart IDA's first predictor y + h y'
 * carried the old branch's slope of v (IDACalcIC leaves y' of algebraic
 * unknowns alone), an error no step could get below atol; with those
 * slopes computed for the new branch (sliding.c), the diode's g = vs - v
 * right after turning on (1e-4 vs) crossed back in the solution's noise, one
 * extra event per period.  Now: to the end, exact within the tolerances, one
 * event per switch. */
START_TEST(rectifier_tight_tolerances) {
    check_rectifier_loose("1", "1e-9", "1e-11", 2);
    check_rectifier_loose("1", "1e-10", "1e-12", 2);
    check_rectifier_loose("1", "1e-8", "1e-10", 2);
}
END_TEST

/* The rectifier with a capacitor across the load (RectifierFiltered):
 * C v' = i - v/R, i = (vs - v)/R_on while vs > v, else (vs - v) G_off.
 * The run stopped with IDA_ILL_INPUT ("root found at and very near t") at
 * t = 0.00598, where the diode first turns off: a root that changed no
 * branch (its function still at zero just past it) was integrated on from,
 * not restarted.  The reference is the same ODE by classical RK4 (step
 * 1e-7 s; a step that changes the sign of vs - v is cut by bisection to
 * the switch, which is then taken), independent of IDA and of dyadc. */
static double filt_rhs(double t, double v, int on) {
    double vs = 10 * sin(2 * 3.141592653589793 * 50 * t);
    double i = on ? (vs - v) / 0.01 : (vs - v) * 1e-6;
    return (i - v / 100) / 1e-4;
}
static double filt_rk4(double t, double v, double h, int on) {
    double k1 = filt_rhs(t, v, on), k2 = filt_rhs(t + h / 2, v + h / 2 * k1, on);
    double k3 = filt_rhs(t + h / 2, v + h / 2 * k2, on), k4 = filt_rhs(t + h, v + h * k3, on);
    return v + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
}
static double filt_g(double t, double v) { return 10 * sin(2 * 3.141592653589793 * 50 * t) - v; }
/* v at each of the times tout[0..n-1] (ascending, from 0) */
static void filt_reference(const double *tout, int n, double *vout, int *switches) {
    double t = 0, v = 0, h = 1e-7;
    int on = 1;                    /* vs rises from v = 0: conducting from t = 0+ */
    *switches = 0;
    for (int r = 0; r < n; r++) {
        while (t < tout[r] - 1e-15) {
            double dt = fmin(h, tout[r] - t), vn = filt_rk4(t, v, dt, on);
            if ((filt_g(t + dt, vn) > 0) != on && dt > 1e-15) {
                double lo = 0, hi = dt;    /* the sign changes in (lo, hi] */
                for (int it = 0; it < 60; it++) {
                    double mid = (lo + hi) / 2;
                    if ((filt_g(t + mid, filt_rk4(t, v, mid, on)) > 0) != on) hi = mid; else lo = mid;
                }
                v = filt_rk4(t, v, hi, on);
                t += hi;
                on = !on;
                ++*switches;
                continue;
            }
            t += dt;
            v = vn;
        }
        vout[r] = v;
    }
}
static void check_filtered(const char *rtol, const char *atol, double v_tol) {
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("rectifier.dyad"), "--no-stdlib", "--model",
                    "RectifierFiltered", "--stop", "0.2", "-o", "e2e_filt.csv", "-v",
                    "--rtol", (char *)rtol, "--atol", (char *)atol, NULL};
    if (!rtol)
        argv[11] = NULL;
    remove("e2e_filt.csv");
    int rc = st_run(argv, "e2e_filt.log");
    char *text = st_slurp("e2e_filt.log");
    ck_assert_msg(rc == 0, "RectifierFiltered (rtol %s) failed:\n%s", rtol ? rtol : "default", text);
    StCsv c = read_csv("e2e_filt.csv");
    ck_assert_double_eq_tol(st_csv(&c, c.nrows - 1, 0), 0.2, 1e-12);
    double *t = malloc(sizeof *t * (size_t)c.nrows), *ref = malloc(sizeof *ref * (size_t)c.nrows);
    for (int r = 0; r < c.nrows; r++)
        t[r] = st_csv(&c, r, 0);
    int switches;
    filt_reference(t, c.nrows, ref, &switches);
    int kv = col(&c, "v");
    double err = 0;
    for (int r = 0; r < c.nrows; r++)
        err = fmax(err, fabs(st_csv(&c, r, kv) - ref[r]));
    const char *ev = strstr(text, "events ");
    ck_assert_ptr_nonnull(ev);
    long events = strtol(ev + 7, NULL, 10);
    fprintf(stderr, "RectifierFiltered rtol %s: max |v - RK4| = %.3g, %ld events (RK4: %d switches)\n",
            rtol ? rtol : "default", err, events, switches);
    ck_assert_msg(err < v_tol, "RectifierFiltered error %g", err);
    ck_assert_int_eq(events, switches);
    free(t);
    free(ref);
    free(text);
    st_csv_free(&c);
}

START_TEST(rectifier_filtered) {
    check_filtered(NULL, NULL, 1e-4);
    check_filtered("1e-9", "1e-11", 1e-6);
}
END_TEST

/* ---- parameters without a value (e2e/required.dyad) ----------------------
 * They check cleanly; without -p the run stops before integrating with one
 * message naming all three (and no CSV); --list-params marks them required;
 * given with -p (also to a built simulator), x = x0 e^{-t/tau} and the
 * dependent gain = 2 b.tau follows. */
static void check_decays(const char *csv) {
    StCsv c = read_csv(csv);
    int ka = col(&c, "a.x"), kb = col(&c, "b.x"), ky = col(&c, "y");
    double err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0);
        err = fmax(err, fabs(st_csv(&c, r, ka) - exp(-t)));
        err = fmax(err, fabs(st_csv(&c, r, kb) - 3 * exp(-t / 2)));
        err = fmax(err, fabs(st_csv(&c, r, ky) - 4 * 3 * exp(-t / 2)));
    }
    fprintf(stderr, "required parameters: max error %.3g over %d rows\n", err, c.nrows);
    ck_assert_int_eq(c.nrows, 501);
    ck_assert_msg(err < 1e-6, "decay error %g", err);
    st_csv_free(&c);
}

START_TEST(required_parameters) {
    char *check[] = {(char *)DYADC, "check", (char *)E2E("required.dyad"), "--no-stdlib", NULL};
    ck_assert_int_eq(st_run(check, "e2e_req_check.log"), 0);
    remove("e2e_req.csv");
    char *none[] = {(char *)DYADC, "run", (char *)E2E("required.dyad"), "--no-stdlib", "--model",
                    "TwoDecays", "-p", "b.tau=2", "-o", "e2e_req.csv", NULL};
    ck_assert_int_eq(st_run(none, "e2e_req_none.log"), 1);
    char *text = st_slurp("e2e_req_none.log");
    fprintf(stderr, "TwoDecays without -p: %s", text);
    assert_contains(text, "error: 2 parameters of 'TwoDecays' have no value: 'a.x0', 'b.x0'; "
                          "give them with -p a.x0=VALUE -p b.x0=VALUE");
    ck_assert_msg(strstr(text, "b.tau") == NULL, "b.tau was given:\n%s", text);
    ck_assert_msg(access("e2e_req.csv", F_OK) != 0, "a CSV was written before the check");
    free(text);
    char *list[] = {(char *)DYADC, "run", (char *)E2E("required.dyad"), "--no-stdlib", "--model",
                    "TwoDecays", "--list-params", NULL};
    ck_assert_int_eq(st_run(list, "e2e_req_list.log"), 0);
    text = st_slurp("e2e_req_list.log");
    for (const char *p = "a.x0\0b.tau\0b.x0\0"; *p; p += strlen(p) + 1) {
        const char *line = strstr(text, p);
        ck_assert_msg(line && strstr(line, "required") && strstr(line, "required") < strchr(line, '\n'),
                      "%s not marked required:\n%s", p, text);
    }
    free(text);
    char *run[] = {(char *)DYADC, "run", (char *)E2E("required.dyad"), "--no-stdlib", "--model",
                   "TwoDecays", "-p", "a.x0=1", "-p", "b.tau=2", "-p", "b.x0=3", "--stop", "2",
                   "--rtol", "1e-9", "--atol", "1e-11", "-o", "e2e_req.csv", NULL};
    ck_assert_int_eq(st_run(run, "e2e_req_run.log"), 0);
    check_decays("e2e_req.csv");
    char *build[] = {(char *)DYADC, "build", (char *)E2E("required.dyad"), "--no-stdlib", "--model",
                     "TwoDecays", "-o", "e2e_req_exe", NULL};
    ck_assert_int_eq(st_run(build, "e2e_req_build.log"), 0);
    char *exe[] = {"./e2e_req_exe", "-p", "a.x0=1", "-p", "b.tau=2", "-p", "b.x0=3", "--stop", "2",
                   "--rtol", "1e-9", "--atol", "1e-11", "-o", "e2e_req_exe.csv", NULL};
    ck_assert_int_eq(st_run(exe, "e2e_req_exe.log"), 0);
    check_decays("e2e_req_exe.csv");
}
END_TEST

/* ---- events: a crossing back right after an event (sliding) -----------
 * Friction (e2e/friction.dyad): v = 1 - t/2 until v = 0 at t = 2, where both
 * branches of `v > 0` drive v back across: exit 1 with a chattering error
 * at t = 2 naming the condition and its line, every row before it exact.
 * Before the fix the crossing back went unnoticed: exit 0, v = 4.5 at t = 5. */
static void check_sliding_tol(const char *model, const char *cond, const char *where, double t_expect,
                              const char *rtol, const char *atol) {
    char csv[128], log[128];
    snprintf(csv, sizeof csv, "e2e_%s.csv", model);
    snprintf(log, sizeof log, "e2e_%s.log", model);
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("friction.dyad"), "--no-stdlib", "--model",
                    (char *)model, "--stop", "5", "--interval", "0.01", "-o", csv, "--atol", (char *)atol,
                    "--rtol", (char *)rtol, NULL};
    if (!rtol)
        argv[14] = NULL;
    if (!atol)
        argv[12] = NULL;
    remove(csv);
    int rc = st_run(argv, log);
    char *text = st_slurp(log);
    fprintf(stderr, "%s: exit %d\n%s", model, rc, text);
    ck_assert_int_eq(rc, 1);
    assert_contains(text, "chattering");
    assert_contains(text, "on both sides of it the solution is driven back across");
    assert_contains(text, cond);
    assert_contains(text, where);
    const char *at = strstr(text, "at t = ");
    ck_assert_ptr_nonnull(at);
    double t = strtod(at + 7, NULL);
    ck_assert_msg(fabs(t - t_expect) < 1e-6, "stopped at t = %.17g, expected %g", t, t_expect);
    if (t_expect == 0) { /* it cannot start: no result file */
        ck_assert_int_ne(access(csv, F_OK), 0);
        free(text);
        return;
    }
    StCsv c = read_csv(csv);
    ck_assert_int_ge(c.nrows, (int)(100 * t_expect));
    double last = c.nrows ? st_csv(&c, c.nrows - 1, 0) : -1;
    ck_assert_msg(last <= t + 1e-12, "row at t = %g after the stop", last);
    int kv = st_csv_col(&c, "v");
    for (int r = 0; kv >= 0 && r < c.nrows; r++)
        ck_assert_double_eq_tol(st_csv(&c, r, kv), 1 - st_csv(&c, r, 0) / 2, 1e-9);
    free(text);
    st_csv_free(&c);
}

static void check_sliding(const char *model, const char *cond, const char *where, double t_expect) {
    check_sliding_tol(model, cond, where, t_expect, NULL, NULL);
}

START_TEST(sliding_is_an_error) {
    check_sliding("Friction", "the condition `v > 0` (", "friction.dyad:13)", 2.0);
    check_sliding("FrictionSign", "the condition `sign(v)` (", "friction.dyad:24)", 2.0);
    check_sliding("Relay", "the condition `x > 0` (", "friction.dyad:32)", 0.0);
    /* atol 1e-3: 5e-6 and 5e-5 after the stop |v| is within the error the
     * tolerances allow (the check is repeated later), at 5e-4 beyond it */
    check_sliding_tol("Friction", "the condition `v > 0` (", "friction.dyad:13)", 2.0, NULL, "1e-3");
}
END_TEST

/* The switch is weighed at tight consistent values before it is called
 * sliding (runtime/sliding.c), so loose tolerances must not talk the
 * runtime out of it nor tight ones into it: the same error at t = 2 (t = 0
 * for the relay) from rtol 1e-2 to 1e-10. */
START_TEST(sliding_at_any_tolerance) {
    static const char *const tols[][2] = {{"1e-2", "1e-3"}, {"1e-3", "1e-4"}, {"1e-10", "1e-12"}};
    for (int i = 0; i < 3; i++) {
        check_sliding_tol("Friction", "the condition `v > 0` (", "friction.dyad:13)", 2.0, tols[i][0], tols[i][1]);
        check_sliding_tol("FrictionSign", "the condition `sign(v)` (", "friction.dyad:24)", 2.0, tols[i][0],
                          tols[i][1]);
        check_sliding_tol("Relay", "the condition `x > 0` (", "friction.dyad:32)", 0.0, tols[i][0], tols[i][1]);
    }
}
END_TEST

/* ---- SIGINT and SIGTERM during a simulation (e2e/endless.dyad) ----------
 * The signal is sent once the CSV has rows on disk.  The run stops with
 * "interrupted (SIGINT) at t = T; N rows written" and exit 128 + the
 * signal; the CSV holds exactly N complete rows on the output grid, none
 * after T.  Before: the signal ended the process silently, the rows in
 * the output buffer lost.  The child gets SIGINT and SIGTERM at their
 * defaults (a test run in the background inherits SIGINT ignored, which
 * the simulator respects). */
static void check_interrupt(char *const argv[], const char *csv, const char *log, int sig) {
    remove(csv);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, argv[0], &fa, &at, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    int status;
    struct stat st;
    while (stat(csv, &st) != 0 || st.st_size == 0) {
        ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "the run ended before the signal");
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(pid, sig);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    char *text = st_slurp(log);
    fprintf(stderr, "%s", text);
    ck_assert_msg(WIFEXITED(status), "ended by signal %d", WTERMSIG(status));
    ck_assert_int_eq(WEXITSTATUS(status), 128 + sig);
    const char *at_t = strstr(text, sig == SIGINT ? "interrupted (SIGINT) at t = " : "interrupted (SIGTERM) at t = ");
    ck_assert_ptr_nonnull(at_t);
    char *end;
    double t = strtod(strstr(at_t, "t = ") + 4, &end);
    long rows = strtol(end + 2, NULL, 10);
    ck_assert_msg(strncmp(end, "; ", 2) == 0 && strstr(end, " rows written"), "%s", at_t);
    char *data = st_slurp(csv);
    size_t n = strlen(data);
    ck_assert_msg(n > 0 && data[n - 1] == '\n', "the CSV ends in a partial row");
    StCsv c = read_csv(csv);
    ck_assert_int_eq(c.nrows, rows);
    ck_assert_int_ge(c.nrows, 1);
    for (int r = 0; r < c.nrows; r++)
        ck_assert_double_eq_tol(st_csv(&c, r, 0), 10.0 * r, 1e-9);
    ck_assert_double_le(st_csv(&c, c.nrows - 1, 0), t);
    free(data);
    free(text);
    st_csv_free(&c);
}

START_TEST(interrupted_run_keeps_rows) {
    char *run[] = {(char *)DYADC, "run", (char *)E2E("endless.dyad"), "--no-stdlib", "--model", "Endless",
                   "--stop", "5e8", "--interval", "10", "-o", "e2e_int.csv", NULL};
    check_interrupt(run, "e2e_int.csv", "e2e_int.log", SIGINT);
    char *build[] = {(char *)DYADC, "build", (char *)E2E("endless.dyad"), "--no-stdlib", "--model",
                     "Endless", "-o", "e2e_int_exe", NULL};
    ck_assert_int_eq(st_run(build, "e2e_int_build.log"), 0);
    char *exe[] = {"./e2e_int_exe", "--stop", "5e8", "--interval", "10", "-o", "e2e_int_exe.csv", NULL};
    check_interrupt(exe, "e2e_int_exe.csv", "e2e_int_exe.log", SIGTERM);
    check_interrupt(exe, "e2e_int_exe.csv", "e2e_int_exe.log", SIGINT);
}
END_TEST

/* ---- NaN and Inf (e2e/nonfinite.dyad) ------------------------------------
 * Each run stops with exit 1 and one message naming the value, the relation
 * and line where it began and the operation (argument value included); the
 * CSV keeps every row before it and holds no nan/inf. */
static void check_nonfinite(const char *model, const char *const *needles, double t_lo,
                            double t_hi) {
    char csv[128], log[128];
    snprintf(csv, sizeof csv, "e2e_nf_%s.csv", model);
    snprintf(log, sizeof log, "e2e_nf_%s.log", model);
    char *argv[] = {(char *)DYADC, "run", (char *)E2E("nonfinite.dyad"), "--no-stdlib", "--model",
                    (char *)model, "--stop", "2", "--interval", "0.01", "-o", csv, NULL};
    remove(csv);
    int rc = st_run(argv, log);
    char *text = st_slurp(log);
    fprintf(stderr, "%s: exit %d\n%s", model, rc, text);
    ck_assert_int_eq(rc, 1);
    for (const char *const *n = needles; *n; n++) assert_contains(text, *n);
    const char *at = strstr(text, "t = ");
    ck_assert_ptr_nonnull(at);
    double t = strtod(at + 4, NULL);
    ck_assert_msg(t >= t_lo && t <= t_hi, "stopped at t = %.17g, expected [%g, %g]", t, t_lo, t_hi);
    if (t_lo <= 0.5 && access(csv, F_OK) != 0) { /* stopped before the first row: no file */
        free(text);
        return;
    }
    StCsv c = read_csv(csv);
    for (int r = 0; r < c.nrows; r++)
        for (int k = 0; k < c.ncols; k++)
            ck_assert_msg(isfinite(st_csv(&c, r, k)), "row %d column %s not finite", r, c.names[k]);
    if (t_lo > 0.5) {   /* the rows up to the stop are there: t = 0, 0.01, ... */
        ck_assert_int_ge(c.nrows, (int)(100 * t_lo));
        ck_assert_msg(st_csv(&c, c.nrows - 1, 0) <= t + 1e-9, "a row after the stop");
    } else {
        ck_assert_int_eq(c.nrows, 0);
    }
    free(text);
    st_csv_free(&c);
}

START_TEST(nonfinite_stops_naming_the_equation) {
    const char *out[] = {"simulation stopped at t = ", "`y` is NaN in `y = sqrt(x)`",
                         "nonfinite.dyad:13)", "square root of a negative number (x = -", NULL};
    check_nonfinite("SqrtOut", out, 0.99, 1.0 + 1e-9);
    const char *res[] = {"the residual of `der(z) = sqrt(x)`", "nonfinite.dyad:24)",
                         "square root of a negative number (x = -", NULL};
    check_nonfinite("SqrtState", res, 0.99, 1.0 + 1e-6);
    const char *div[] = {"`i` is NaN in `i = v / R`", "nonfinite.dyad:34)",
                         "division by zero (R = 0)", NULL};
    check_nonfinite("DivZero", div, 0, 0);
    const char *init[] = {"initialization failed: not finite at the initial guess",
                          "`y^3 + y = sqrt(x)`", "nonfinite.dyad:45)",
                          "square root of a negative number (x = -1)", NULL};
    check_nonfinite("InitSqrt", init, 0, 0);
    const char *start[] = {"the start value of der(x) is Inf ('x' = 1)", "`v = 1 / a`",
                           "nonfinite.dyad:57)", "division by zero (a = 0)", NULL};
    check_nonfinite("StartDer", start, 0, 0);
}
END_TEST

/* ---- initial values on anything (e2e/initial.dyad) -----------------------
 * RC with R = 2, C = 0.5, V = 1: v_C = 1 - (1 - v0) e^{-t}.  --initial on a
 * current (computed from the state) or a connector voltage (an alias) fixes
 * v0 through the circuit: resistor.i = 0.25 gives v0 = 1 - 2 * 0.25. */
static double rc_v0;
static double rc_exact(double t) { return 1 - (1 - rc_v0) * exp(-t); }

static void check_rc(const char *csv, double v0) {
    StCsv c = read_csv(csv);
    rc_v0 = v0;
    double err = max_error(&c, "capacitor.v", rc_exact);
    fprintf(stderr, "RC v0 = %g: max |v - exact| = %.3g\n", v0, err);
    ck_assert_msg(err < 1e-6, "RC from v0 = %g: error %g", v0, err);
    st_csv_free(&c);
}

/* run `dyadc run initial.dyad --model M extra... -o out`, exit status */
static int run_initial(const char *model, const char *out, const char *log, char *const extra[]) {
    char *argv[32] = {(char *)DYADC, "run", (char *)E2E("initial.dyad"), "--model", (char *)model,
                      "--stop", "2", "--rtol", "1e-9", "--atol", "1e-11", "-o", (char *)out};
    int n = 13;
    for (int i = 0; extra[i]; i++) argv[n++] = extra[i];
    argv[n] = NULL;
    return st_run(argv, log);
}

START_TEST(initial_on_anything) {
    ck_assert_int_eq(run_initial("RCFree", "e2e_ini_i.csv", "e2e_ini_i.log",
                                 (char *[]){"--initial", "resistor.i=0.25", NULL}), 0);
    check_rc("e2e_ini_i.csv", 0.5);
    ck_assert_int_eq(run_initial("RCFree", "e2e_ini_p.csv", "e2e_ini_p.log",
                                 (char *[]){"--initial", "capacitor.p.v=0.25", NULL}), 0);
    check_rc("e2e_ini_p.csv", 0.25);
    /* the model's own `initial capacitor.v = 0` is replaced through an alias */
    ck_assert_int_eq(run_initial("RCInit", "e2e_ini_r.csv", "e2e_ini_r.log",
                                 (char *[]){"--initial", "capacitor.p.v=0.75", NULL}), 0);
    check_rc("e2e_ini_r.csv", 0.75);
    /* ... but a relation on another variable conflicts with it: both named */
    ck_assert_int_eq(run_initial("RCInit", "e2e_ini_c.csv", "e2e_ini_c.log",
                                 (char *[]){"--initial", "resistor.i=0.25", NULL}), 1);
    char *text = st_slurp("e2e_ini_c.log");
    fprintf(stderr, "RCInit --initial resistor.i: %s", text);
    assert_contains(text, "error: inconsistent initialization");
    assert_contains(text, "initial capacitor.v = 0 (");
    assert_contains(text, "initial.dyad:");
    assert_contains(text, "initial resistor.i = 0.25 (--initial)");
    free(text);
    /* unknown names and parameters */
    ck_assert_int_eq(run_initial("RCFree", "e2e_ini_u.csv", "e2e_ini_u.log",
                                 (char *[]){"--initial", "capacitor.vv=1", NULL}), 1);
    text = st_slurp("e2e_ini_u.log");
    assert_contains(text, "did you mean `capacitor.v`?");
    free(text);
    ck_assert_int_eq(run_initial("RCFree", "e2e_ini_k.csv", "e2e_ini_k.log",
                                 (char *[]){"--initial", "resistor.R=1", NULL}), 1);
    text = st_slurp("e2e_ini_k.log");
    assert_contains(text, "is a parameter, not a variable; set it with -p resistor.R=VALUE");
    free(text);
    /* a built simulator: an alias at run time; a computed variable needs the compiler */
    char *build[] = {(char *)DYADC, "build", (char *)E2E("initial.dyad"), "--model", "RCFree", "-o",
                     "e2e_ini_exe", NULL};
    ck_assert_int_eq(st_run(build, "e2e_ini_build.log"), 0);
    char *exe[] = {"./e2e_ini_exe", "--initial", "capacitor.p.v=0.25", "--stop", "2", "--rtol", "1e-9",
                   "--atol", "1e-11", "-o", "e2e_ini_exe.csv", NULL};
    ck_assert_int_eq(st_run(exe, "e2e_ini_exe.log"), 0);
    check_rc("e2e_ini_exe.csv", 0.25);
    char *exe_i[] = {"./e2e_ini_exe", "--initial", "resistor.i=0.25", "-o", "e2e_ini_exe_i.csv", NULL};
    ck_assert_int_eq(st_run(exe_i, "e2e_ini_exe_i.log"), 1);
    text = st_slurp("e2e_ini_exe_i.log");
    assert_contains(text, "give it to the compiler instead");
    free(text);
}
END_TEST

/* x'' = -x from x = 1, v = 0: x = cos t */
static double osc_scale;
static double osc_exact(double t) { return osc_scale * cos(t); }

static void check_cos(const char *csv, const char *col_name, double x0) {
    StCsv c = read_csv(csv);
    osc_scale = x0;
    double err = max_error(&c, col_name, osc_exact);
    fprintf(stderr, "%s = %g cos t: max error %.3g\n", col_name, x0, err);
    ck_assert_msg(err < 1e-6, "%s: error %g", col_name, err);
    st_csv_free(&c);
}

/* Over-determined initializations: consistent ones run with a warning
 * naming the redundant relation, inconsistent ones stop naming the
 * relations in conflict with their lines. */
/* run initial.dyad's `model` (CSV e2e_<tag>.csv), expect exit `rc`; its log */
static char *initial_log(const char *model, const char *tag, int rc, char *const extra[]) {
    char csv[64], log[64];
    snprintf(csv, sizeof csv, "e2e_%s.csv", tag);
    snprintf(log, sizeof log, "e2e_%s.log", tag);
    ck_assert_int_eq(run_initial(model, csv, log, extra), rc);
    char *text = st_slurp(log);
    fprintf(stderr, "%s %s: %s", model, tag, text);
    return text;
}

static const struct {
    const char *model, *tag;
    int rc;
    char *extra[5];
    const char *says[4];
} over_cases[] = {
    {"Oscillator", "osc", 0, {NULL}, {"warning: redundant initial relation `initial v = 0 ("}},
    {"Oscillator", "osc3", 1, {"-p", "c=3"},
     {"error: inconsistent initialization: `initial v = 0 (", "initial.dyad:34)", "initial x + v = c (",
      "initial.dyad:33)"}},
    /* two initial values for aliases of one state */
    {"Twin", "twin", 0, {NULL}, {"warning: redundant initial relation `initial b.s = b.s0 ("}},
    {"Twin", "twin2", 1, {"-p", "q=2"},
     {"error: inconsistent initialization: `initial b.s = b.s0 (", "(its sides are 1 and 2)",
      "`initial a.s = a.s0 ("}},
    /* an override on the shared variable replaces both */
    {"Twin", "twin3", 0, {"-p", "q=2", "--initial", "swing.x=0.5"}, {NULL}},
};

START_TEST(over_determined_initialization) {
    for (size_t i = 0; i < sizeof over_cases / sizeof over_cases[0]; i++) {
        char *text = initial_log(over_cases[i].model, over_cases[i].tag, over_cases[i].rc, over_cases[i].extra);
        for (int k = 0; k < 4 && over_cases[i].says[k]; k++) assert_contains(text, over_cases[i].says[k]);
        free(text);
    }
    check_cos("e2e_osc.csv", "x", 1);
    check_cos("e2e_twin.csv", "swing.x", 1);
    check_cos("e2e_twin3.csv", "swing.x", 0.5);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("runtime_e2e");
    TCase *tc = tcase_create("e2e");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, rlc_closed_form);
    tcase_add_test(tc, jit_equals_executable);
    tcase_add_test(tc, parameter_solved_at_init);
    tcase_add_test(tc, guess_row_swapped_when_singular);
    tcase_add_test(tc, blowup_reports_and_keeps_rows);
    tcase_add_test(tc, failed_initialization);
    tcase_add_test(tc, failed_assertion);
    tcase_add_test(tc, rectifier_events);
    tcase_add_test(tc, rectifier_default_tolerances);
    tcase_add_test(tc, rectifier_loose_tolerances);
    tcase_add_test(tc, rectifier_tight_tolerances);
    tcase_add_test(tc, rectifier_filtered);
    tcase_add_test(tc, sliding_is_an_error);
    tcase_add_test(tc, sliding_at_any_tolerance);
    tcase_add_test(tc, interrupted_run_keeps_rows);
    tcase_add_test(tc, nonfinite_stops_naming_the_equation);
    tcase_add_test(tc, required_parameters);
    tcase_add_test(tc, initial_on_anything);
    tcase_add_test(tc, over_determined_initialization);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    int failed = check_failures(suite());
    return failed ? 1 : 0;
}
