/*
 * test_clocks.c -- clocked partitions end to end (docs/RUNTIME.md,
 * "Clocks"): the models of tests/sim/clocks/clocked.dyad and the test
 * components of stdlib/DiscreteComponents/Examples, simulated by `dyadc run`,
 * their CSV compared with references computed here: exact discretizations
 * of the sampled-data loops, the recurrences of the discrete blocks, the
 * roots of the zero-crossing clock, and the CSV convention at ticks (a row
 * before and a row after a tick that changes a value).
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)
#define MODELS "tests/sim/clocks/clocked.dyad"

static void run_model(const char *file, const char *model, const char *stop, const char *interval,
                      const char *csv, StCsv *c) {
    ck_assert_int_eq(st_run_csv(DYADC, SRC(file), model, stop, interval, "1e-10", "1e-12", csv, c), 0);
    ck_assert_int_gt(c->nrows, 2);
}

static int col(const StCsv *c, const char *name) {
    int k = st_csv_col(c, name);
    ck_assert_msg(k >= 0, "column %s missing", name);
    return k;
}

/* the tick k of a clock with period dt at time t, or -1 */
static int tick_at(double t, double dt) {
    double k = floor(t / dt + 0.5);
    return fabs(t - k * dt) <= 1e-12 * fmax(1, fabs(t)) ? (int)k : -1;
}

/* the row of the value after the tick at t: the last row at time t */
static int after_row(const StCsv *c, int r) {
    while (r + 1 < c->nrows && st_csv(c, r + 1, 0) == st_csv(c, r, 0)) r++;
    return r;
}

/* ---------- a sampled P controller on a first-order plant ---------- */

/* x(t_k) and u_k of T x' = u - x, u_k = K (r - x(t_k)) held over a tick */
typedef struct { double x[64], u[64]; } PRef;
static const double P_DT = 0.1, P_T = 0.5, P_K = 3, P_R = 2, P_X0 = 0.25;

static void p_reference(PRef *p, int n) {
    double a = exp(-P_DT / P_T);
    p->x[0] = P_X0;
    for (int k = 0; k < n; k++) {
        p->u[k] = P_K * (P_R - p->x[k]);
        p->x[k + 1] = a * p->x[k] + (1 - a) * p->u[k];
    }
}

START_TEST(sampled_p_exact_discretization) {
    StCsv c;
    run_model(MODELS, "SampledP", "2", "0.025", "clk_p.csv", &c);
    int kx = col(&c, "x"), ku = col(&c, "u"), kz = col(&c, "zoh.y");
    PRef p;
    p_reference(&p, 22);
    double ex = 0, eu = 0;
    int pairs = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0);
        int k = (int)floor(t / P_DT + 1e-9);
        int tk = tick_at(t, P_DT);
        int held = k;                       /* the value held at this row */
        if (tk >= 1 && r + 1 < c.nrows && st_csv(&c, r + 1, 0) == t) {
            held = tk - 1;                  /* the row before the tick */
            pairs++;
        }
        double tau = t - held * P_DT;
        double xr = p.u[held] + (p.x[held] - p.u[held]) * exp(-tau / P_T);
        ex = fmax(ex, fabs(st_csv(&c, r, kx) - xr));
        eu = fmax(eu, fabs(st_csv(&c, r, ku) - p.u[held]));
        eu = fmax(eu, fabs(st_csv(&c, r, kz) - p.u[held]));
    }
    fprintf(stderr, "SampledP (%d rows, %d before/after pairs): max |x - exact| %.3g, |u - exact| %.3g\n",
            c.nrows, pairs, ex, eu);
    ck_assert_int_eq(pairs, 20);            /* every tick after the start changes u */
    ck_assert_msg(ex < 1e-8 && eu < 1e-8, "errors %g %g", ex, eu);
    st_csv_free(&c);
}
END_TEST

/* ---------- accumulator and delays ---------- */

static double step_at(double t) { return t >= 0.35 ? 1 : 0; }

START_TEST(accumulator_and_delays) {
    StCsv c;
    run_model(MODELS, "Delays", "1.5", "0.1", "clk_delays.csv", &c);
    int ka = col(&c, "acc.y"), ku = col(&c, "unit.y"), k3 = col(&c, "three.y");
    double err = 0;
    int ticks = 0;
    for (int r = 0; r < c.nrows; r = after_row(&c, r) + 1) {
        int a = after_row(&c, r), k = tick_at(st_csv(&c, a, 0), 0.1);
        ck_assert_int_ge(k, 0);
        double sum = 0;
        for (int j = 0; j <= k; j++) sum += j * 0.1;
        double unit = k >= 1 ? step_at((k - 1) * 0.1) : -1, three = k >= 3 ? step_at((k - 3) * 0.1) : -2;
        err = fmax(err, fabs(st_csv(&c, a, ka) - sum));
        err = fmax(err, fabs(st_csv(&c, a, ku) - unit) + fabs(st_csv(&c, a, k3) - three));
        ticks++;
    }
    fprintf(stderr, "Delays: %d ticks, max error of the accumulator and the delays %.3g\n", ticks, err);
    ck_assert_int_eq(ticks, 16);
    ck_assert_msg(err < 1e-12, "error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---------- two rates, coinciding ticks ---------- */

START_TEST(two_rates_coinciding_ticks) {
    StCsv c;
    run_model(MODELS, "TwoRate", "1.2", "0.1", "clk_two.csv", &c);
    int ks = col(&c, "seen"), kb = col(&c, "before"), kf = col(&c, "sum.y");
    double err = 0;
    int shared = 0;
    for (int r = 0; r < c.nrows; r = after_row(&c, r) + 1) {
        int a = after_row(&c, r);
        double t = st_csv(&c, a, 0);
        int kf_ = tick_at(t, 0.1), m = tick_at(t, 0.3);
        ck_assert_int_ge(kf_, 0);
        double sum = 0;
        for (int j = 0; j <= kf_; j++) sum += j * 0.1;
        err = fmax(err, fabs(st_csv(&c, a, kf) - sum));
        if (m < 0) continue;
        /* the slow clock reads the fast sum of this very instant: fast ticks first */
        double prev = -1;
        if (m >= 1) {
            prev = 0;
            for (int j = 0; j <= 3 * (m - 1); j++) prev += j * 0.1;
        }
        err = fmax(err, fabs(st_csv(&c, a, ks) - sum) + fabs(st_csv(&c, a, kb) - prev));
        shared++;
    }
    fprintf(stderr, "TwoRate: %d shared ticks, max error %.3g\n", shared, err);
    ck_assert_int_eq(shared, 5);
    ck_assert_msg(err < 1e-12, "error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---------- a clocked algebraic loop ---------- */

START_TEST(clocked_algebraic_loop) {
    StCsv c;
    run_model(MODELS, "ClockedLoop", "2", "0.25", "clk_loop.csv", &c);
    int kx = col(&c, "x"), kk = col(&c, "k");
    double err = 0;
    for (int r = 0; r < c.nrows; r = after_row(&c, r) + 1) {
        int a = after_row(&c, r), k = tick_at(st_csv(&c, a, 0), 0.25);
        double x = 0;                       /* Newton on x - 0.5 cos x - 0.1 (k + 1) */
        for (int it = 0; it < 50; it++) x -= (x - 0.5 * cos(x) - 0.1 * (k + 1)) / (1 + 0.5 * sin(x));
        err = fmax(err, fabs(st_csv(&c, a, kx) - x) + fabs(st_csv(&c, a, kk) - (k + 1)));
    }
    fprintf(stderr, "ClockedLoop: max |x - root| %.3g\n", err);
    ck_assert_msg(err < 1e-12, "error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---------- DiscretePIDStandard with a loop through the saturation ---------- */

/* The controller of PIDLoop, solved here case by case (no Newton): with
 * c = K h / Ti, the Backward integral I = Ip + c (e + (y - v) / (K Ni)) and
 * v = A + I; unsaturated y = v, else y = limit and v linear in it. */
typedef struct { double I, D, ed, y; int first; } PidRef;
static const double Q_DT = 0.05, Q_K = 4, Q_TI = 0.3, Q_TD = 0.05, Q_ND = 8, Q_NI = 0.9, Q_YMAX = 1.6;

static void pid_tick(PidRef *s, double m) {
    double r = 1, e = r - m, ed = r - m, tf = Q_TD / Q_ND;
    double D = (tf * s->D + Q_K * Q_TD * (s->first ? 0 : ed - s->ed)) / (tf + Q_DT);
    double c = Q_K * Q_DT / Q_TI, A = Q_K * (r - m) + D;
    double v = A + s->I + c * e, y = v;
    if (v > Q_YMAX || v < -Q_YMAX) {
        y = v > Q_YMAX ? Q_YMAX : -Q_YMAX;
        v = (A + s->I + c * e + c * y / (Q_K * Q_NI)) / (1 + c / (Q_K * Q_NI));
    }
    s->I = v - A;
    s->D = D;
    s->ed = ed;
    s->y = y;
    s->first = 0;
}

START_TEST(pid_antiwindup_loop) {
    StCsv c;
    run_model(MODELS, "PIDLoop", "3", "0.05", "clk_pid.csv", &c);
    int ky = col(&c, "pid.y"), kx = col(&c, "plant.y"), kv = col(&c, "pid.v");
    PidRef s = {0, 0, 0, 0, 1};
    double a = exp(-Q_DT / 0.5), x = 0, ey = 0, ex = 0;
    int nsat = 0, n = 0;
    for (int r = 0; r < c.nrows; r = after_row(&c, r) + 1) {
        int row = after_row(&c, r);
        ck_assert_int_ge(tick_at(st_csv(&c, row, 0), Q_DT), 0);
        ex = fmax(ex, fabs(st_csv(&c, row, kx) - x));
        pid_tick(&s, x);
        ey = fmax(ey, fabs(st_csv(&c, row, ky) - s.y));
        nsat += fabs(st_csv(&c, row, kv)) > Q_YMAX;
        x = a * x + (1 - a) * s.y;          /* exact discretization of the plant */
        n++;
    }
    fprintf(stderr, "PIDLoop: %d ticks (%d saturated), max |pid.y - ref| %.3g, |plant.y - ref| %.3g\n",
            n, nsat, ey, ex);
    ck_assert_int_eq(n, 61);
    ck_assert_int_gt(nsat, 3);
    ck_assert_msg(ey < 1e-8 && ex < 1e-8, "errors %g %g", ey, ex);
    st_csv_free(&c);
}
END_TEST

/* ---------- a zero-crossing clock ---------- */

START_TEST(zero_crossing_clock_roots) {
    StCsv c;
    run_model(MODELS, "Crossings", "3.5", "0.5", "clk_zc.csv", &c);
    int kn = col(&c, "n"), ks = col(&c, "s.y");
    double err = 0;
    int ticks = 0;
    for (int r = 1; r < c.nrows; r++) {
        if (st_csv(&c, r, kn) == st_csv(&c, r - 1, kn)) continue;
        ticks++;
        double t = st_csv(&c, r, 0), root = ticks * 3.14159265358979323846 / 3;
        ck_assert_double_eq(st_csv(&c, r - 1, 0), t); /* the row before the tick */
        ck_assert_int_eq((int)st_csv(&c, r, kn), ticks);
        err = fmax(err, fabs(t - root) + fabs(st_csv(&c, r, ks) - t));
    }
    fprintf(stderr, "Crossings: %d ticks, max |tick time - k pi / w| %.3g\n", ticks, err);
    ck_assert_int_eq(ticks, 3);
    ck_assert_msg(err < 1e-7, "error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---------- first-tick relations ---------- */

/* u_k = 1 + 0.1 k; y_0 = y0 = 0.5 (u@(clk-1) = u - y0 at the first tick),
 * then 0.1; a_0 = 0 (a@(clk-1) = -u), a_k = u_1 + ... + u_k */
START_TEST(first_tick_relations) {
    StCsv c;
    run_model(MODELS, "FirstTick", "1", "0.1", "clk_first.csv", &c);
    int ku = col(&c, "u"), ky = col(&c, "y"), ka = col(&c, "a");
    double err = 0;
    int ticks = 0;
    for (int r = 0; r < c.nrows; r = after_row(&c, r) + 1) {
        int row = after_row(&c, r), k = tick_at(st_csv(&c, row, 0), 0.1);
        ck_assert_int_ge(k, 0);
        double u = 1 + 0.1 * k, y = k == 0 ? 0.5 : 0.1, a = 0;
        for (int j = 1; j <= k; j++) a += 1 + 0.1 * j;
        err = fmax(err, fabs(st_csv(&c, row, ku) - u) + fabs(st_csv(&c, row, ky) - y) +
                            fabs(st_csv(&c, row, ka) - a));
        ticks++;
    }
    fprintf(stderr, "FirstTick: %d ticks, max error %.3g\n", ticks, err);
    ck_assert_int_eq(ticks, 11);
    ck_assert_msg(err < 1e-12, "error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---------- SampleTime() of a zero-crossing clock ---------- */

/* ticks at the roots sqrt(k) of sin(pi t^2), k = 1, 2, ...: the interval
 * since the previous tick, 0 at the first */
START_TEST(zero_crossing_sample_time) {
    StCsv c;
    run_model(MODELS, "CrossingIntervals", "2.5", "0.1", "clk_zcst.csv", &c);
    int ks = col(&c, "st.y"), kn = col(&c, "n.y");
    double err = 0;
    int ticks = 0;
    for (int r = 1; r < c.nrows; r++) {
        if (st_csv(&c, r, kn) == st_csv(&c, r - 1, kn)) continue;
        ticks++;
        double want = ticks == 1 ? 0 : sqrt(ticks) - sqrt(ticks - 1);
        ck_assert_int_eq((int)st_csv(&c, r, kn), ticks);
        err = fmax(err, fabs(st_csv(&c, r, 0) - sqrt(ticks)) + fabs(st_csv(&c, r, ks) - want));
    }
    fprintf(stderr, "CrossingIntervals: %d ticks, max |interval - (sqrt k - sqrt(k-1))| %.3g\n", ticks, err);
    ck_assert_int_eq(ticks, 6);
    ck_assert_msg(err < 1e-8, "error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---------- clocked values in ifelse, functions, assertions ---------- */

START_TEST(clocked_ifelse_function_assert) {
    StCsv c;
    run_model(MODELS, "ClockedIfFunAssert", "1", "0.1", "clk_ifa.csv", &c);
    int ks = col(&c, "s"), kf = col(&c, "f");
    double err = 0;
    for (int r = 0; r < c.nrows; r = after_row(&c, r) + 1) {
        int row = after_row(&c, r), k = tick_at(st_csv(&c, row, 0), 0.1);
        double u = 0.1 * k, sv = u > 0.35 ? 1 : -1;
        err = fmax(err, fabs(st_csv(&c, row, ks) - sv) + fabs(st_csv(&c, row, kf) - (2 * u + sv)));
    }
    fprintf(stderr, "ClockedIfFunAssert: max error %.3g\n", err);
    ck_assert_msg(err < 1e-12, "error %g", err);
    st_csv_free(&c);
    /* fmax = 1: the tick at 0.4 (f = 1.8) fails the assertion, a user error */
    char *argv[] = {(char *)DYADC, "run", (char *)SRC(MODELS), "--model", "ClockedIfFunAssert", "--stop", "1",
                    "-p", "fmax=1", "-o", "clk_ifa_fail.csv", NULL};
    ck_assert_int_eq(st_run(argv, "clk_ifa_fail.log"), 1);
    char *log = st_slurp("clk_ifa_fail.log");
    ck_assert_msg(strstr(log, "assertion failed at t = 0.4") && strstr(log, "f stays below fmax"), "%s", log);
    free(log);
}
END_TEST

/* ---------- NDelay's default, a period set at run time ---------- */

START_TEST(ndelay_default_and_runtime_period) {
    const char *dts[] = {"0.1", "0.25"};
    for (int i = 0; i < 2; i++) {
        char p[64], csv[64];
        snprintf(p, sizeof p, "clock.dt=%s", dts[i]);
        snprintf(csv, sizeof csv, "clk_nd_%d.csv", i);
        char *argv[] = {(char *)DYADC, "run", (char *)SRC(MODELS), "--model", "DefaultNDelay", "--stop", "1",
                        "--interval", "0.05", "-p", p, "-o", csv, NULL};
        ck_assert_int_eq(st_run(argv, NULL), 0);
        StCsv c;
        ck_assert_int_eq(st_csv_read(csv, &c), 0);
        double dt = atof(dts[i]), err = 0;
        int ky = col(&c, "d.y"), ticks = 0;
        for (int r = 0; r < c.nrows; r = after_row(&c, r) + 1) {
            int row = after_row(&c, r);
            double t = st_csv(&c, row, 0);
            int k = (int)floor(t / dt + 1e-9);   /* the last tick at or before t */
            err = fmax(err, fabs(st_csv(&c, row, ky) - (k == 0 ? -1 : (k - 1) * dt)));
            ticks += tick_at(t, dt) >= 0;
        }
        fprintf(stderr, "DefaultNDelay dt %s: %d ticks, max error %.3g\n", dts[i], ticks, err);
        ck_assert_int_eq(ticks, (int)floor(1 / dt + 1e-9) + 1);
        ck_assert_msg(err < 1e-12, "error %g", err);
        st_csv_free(&c);
    }
    /* a period of 0 given at run time: a clear error naming the clock */
    char *argv[] = {(char *)DYADC, "run", (char *)SRC(MODELS), "--model", "DefaultNDelay", "--stop", "1",
                    "-p", "clock.dt=0", "-o", "clk_nd_zero.csv", NULL};
    ck_assert_int_eq(st_run(argv, "clk_nd_zero.log"), 1);
    char *log = st_slurp("clk_nd_zero.log");
    ck_assert_msg(strstr(log, "clock 'clock.clk': the period must be positive"), "%s", log);
    free(log);
}
END_TEST

/* ---------- the test components of DiscreteComponents ---------- */

typedef struct {
    const char *model, *stop, *var;
    double initial, final, tol;  /* initial NAN: not checked */
} Expect;

/* the values of their metadata, derived there (exact recurrences) */
static const Expect expects[] = {
    {"TestUnitDelay", "1", "delay.y", 1.0, 5.0, 1e-12},
    {"TestUnitDelay", "0.5", "delay.y", 1.0, 0.0, 1e-12},
    {"TestNDelay", "1", "ndelay.y", 0, 0.7000000000000001, 1e-12},
    {"TestNDelay", "1", "same", 1, 1, 0},
    {"TestUnitDifference", "1", "unitdifference.y", 0, 0.05195845731347648, 1e-9},
    {"TestPeriodicClock", "1.25", "samplevalue.y", 0, 0.9510565162951538, 1e-9},
    {"IntegratorFEwInitialTest", "1", "integrator.y", 1, 3, 1e-12},
    {"TestZeroOrderHold", "1", "integrator.y", 0, 0.45, 1e-8},
    {"TestZeroOrderHold", "1", "zeroorderhold.y", 0, 1, 1e-12},
    {"TestDiscreteIntegrator", "1", "forward.y", 0, 1.0, 1e-12},
    {"TestDiscreteIntegrator", "1", "backward.y", 0.1, 1.1, 1e-12},
    {"TestDiscreteIntegrator", "1", "trapezoidal.y", 0.05, 1.05, 1e-12},
    {"TestZeroCrossingClock", "2", "n", 0, 4, 0},
    {"TestClockPropagator", "0.33", "sampler1.y", 0, 0.9510565162951535, 1e-9},
    {"TestLastValue", "1", "lastvalue.y", 0, 0.9, 1e-12},
    {"TestSampleTimeSource", "1", "sampletime.y", 0.25, 0.25, 0},
    {"TestPeriodicSampler", "1", "sampler.y", 0, 1.0, 1e-12},
    {"TestDiscretePID", "1", "plant.y", 0, 0.6435457229922293, 1e-8},
    {"TestDiscreteTransferFunction", "1", "tf.y", 0, 0.9990234375, 1e-12},
    {"TestDiscreteStateSpace", "1", "ss.y[1]", 0, 1.998046875, 1e-12},
    {"TestAccumulators", "1", "demo.syntactic.y", 1, 11, 0},
    {"TestAccumulators", "1", "demo.graphical.y", 1, 11, 0},
};

START_TEST(discrete_components_tests) {
    const Expect *x = &expects[_i];
    char model[128], csv[128];
    snprintf(model, sizeof model, "DiscreteComponents.Examples.%s", x->model);
    snprintf(csv, sizeof csv, "clk_dc_%d.csv", _i);
    StCsv c;
    run_model("stdlib/DiscreteComponents/Examples/tests.dyad", model, x->stop, "0.05", csv, &c);
    int k = col(&c, x->var);
    double first = st_csv(&c, 0, k), last = st_csv(&c, c.nrows - 1, k);
    fprintf(stderr, "%s %s: initial %.17g, final %.17g (expected %.17g, %.17g)\n", x->model, x->var, first,
            last, x->initial, x->final);
    ck_assert_double_eq_tol(st_csv(&c, c.nrows - 1, 0), atof(x->stop), 1e-12);
    ck_assert_msg(fabs(first - x->initial) <= x->tol, "%s: initial %s = %.17g", x->model, x->var, first);
    ck_assert_msg(fabs(last - x->final) <= x->tol, "%s: final %s = %.17g", x->model, x->var, last);
    st_csv_free(&c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("clocks");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, sampled_p_exact_discretization);
    tcase_add_test(tc, accumulator_and_delays);
    tcase_add_test(tc, two_rates_coinciding_ticks);
    tcase_add_test(tc, clocked_algebraic_loop);
    tcase_add_test(tc, pid_antiwindup_loop);
    tcase_add_test(tc, zero_crossing_clock_roots);
    tcase_add_test(tc, first_tick_relations);
    tcase_add_test(tc, zero_crossing_sample_time);
    tcase_add_test(tc, clocked_ifelse_function_assert);
    tcase_add_test(tc, ndelay_default_and_runtime_period);
    tcase_add_loop_test(tc, discrete_components_tests, 0, (int)(sizeof expects / sizeof expects[0]));
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
