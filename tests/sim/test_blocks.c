/*
 * test_blocks.c -- simulation tests of the BlockComponents added for Dyad's
 * public interfaces (StateSpace, LimPID, Square, Pulse, ExpSine, Triangular,
 * SlewRateLimiter): models under tests/sim/blocks/ run with the bundled
 * stdlib, their CSV compared with references computed here in C (closed
 * forms, or a fine fixed-step RK4 of the same equations), with tolerances.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

static const double PI = 3.14159265358979323846;

static void run_model(const char *file, const char *model, const char *stop, const char *csv,
                      StCsv *c) {
    ck_assert_int_eq(st_run_csv(DYADC, SRC(file), model, stop, "0.01", "1e-8", "1e-10", csv, c), 0);
    ck_assert_int_gt(c->nrows, 10);
}

static int col(const StCsv *c, const char *name) {
    int k = st_csv_col(c, name);
    ck_assert_msg(k >= 0, "column %s missing", name);
    return k;
}

/* x1' = x2, x2' = -2 x1 - 3 x2 + 0.5, x(0) = (1, 0) */
static double ss_x1(double t) { return 0.25 + 1.5 * exp(-t) - 0.75 * exp(-2 * t); }
static double ss_x2(double t) { return -1.5 * exp(-t) + 1.5 * exp(-2 * t); }

START_TEST(state_space_two_states) {
    StCsv c;
    run_model("tests/sim/blocks/state_space.dyad", "StateSpaceTest", "5", "blk_ss.csv", &c);
    int k1 = col(&c, "y1"), k2 = col(&c, "y2"), kx = col(&c, "ss.x[1]");
    double e1 = 0, e2 = 0, ex = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0);
        /* y1 = x1 + D (u - u0) + y0 = x1 + 2 * 0.5 + 1 */
        e1 = fmax(e1, fabs(st_csv(&c, r, k1) - (ss_x1(t) + 2)));
        e2 = fmax(e2, fabs(st_csv(&c, r, k2) - ss_x2(t)));
        ex = fmax(ex, fabs(st_csv(&c, r, kx) - ss_x1(t)));
    }
    fprintf(stderr, "StateSpace: max errors y1 %.3g, y2 %.3g, x1 %.3g\n", e1, e2, ex);
    ck_assert_msg(e1 < 1e-6 && e2 < 1e-6 && ex < 1e-6, "StateSpace errors %g %g %g", e1, e2, ex);
    ck_assert_double_eq_tol(st_csv(&c, c.nrows - 1, 0), 5, 1e-12);
    st_csv_free(&c);
}
END_TEST

/* The same closed loop as lim_pid.dyad integrated here: plant x' = y - x,
 * e = 1 - x, Tf = Td / Nd, d = (Td / Tf) (wd - x - xd), v = k (e + xi + d),
 * y = clamp(v, -1.5, 1.5), Ti xi' = e + (y - v) / (k Ni), Tf xd' = wd - x - xd.
 * wd = 1: the setpoint weight of the derivative part defaults to 1 under the
 * `Continuous.LimPID` name (Dyad's published default; the flat `LimPID` has 0). */
typedef struct { double x, xi, xd; } PidState;
static const double PK = 2, PTI = 0.5, PTD = 0.1, PNI = 0.9, PND = 10, PYMAX = 1.5, PWD = 1;

static double pid_out(PidState s, double *v_out) {
    double tf = PTD / PND, d = PTD / tf * (PWD - s.x - s.xd);
    double v = PK * (1 - s.x + s.xi + d);
    if (v_out) *v_out = v;
    return fmin(fmax(v, -PYMAX), PYMAX);
}

static PidState pid_rhs(PidState s) {
    double v, y = pid_out(s, &v), tf = PTD / PND;
    PidState r = {y - s.x, (1 - s.x + (y - v) / (PK * PNI)) / PTI, (PWD - s.x - s.xd) / tf};
    return r;
}

static PidState pid_axpy(PidState a, double h, PidState b) {
    PidState r = {a.x + h * b.x, a.xi + h * b.xi, a.xd + h * b.xd};
    return r;
}

START_TEST(lim_pid_reaches_setpoint) {
    StCsv c;
    run_model("tests/sim/blocks/lim_pid.dyad", "LimPIDTest", "20", "blk_pid.csv", &c);
    int ky = col(&c, "pid.y"), kx = col(&c, "plant.y");
    /* the output respects y_max and saturates at the start */
    double ymax = -INFINITY;
    for (int r = 0; r < c.nrows; r++) ymax = fmax(ymax, st_csv(&c, r, ky));
    ck_assert_msg(ymax <= PYMAX + 1e-9, "pid.y exceeds y_max: %g", ymax);
    ck_assert_double_eq_tol(st_csv(&c, 0, ky), PYMAX, 1e-9);
    /* steady state at the setpoint */
    double xend = st_csv(&c, c.nrows - 1, kx);
    fprintf(stderr, "LimPID: max y %.12g, |plant.y(20) - 1| = %.3g\n", ymax, fabs(xend - 1));
    ck_assert_msg(fabs(xend - 1) < 1e-3, "plant.y(20) = %g", xend);
    /* trajectory against an RK4 of the same equations, h = 1e-4 */
    PidState s = {0, 0, 0};
    double h = 1e-4, t = 0, err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double tr = st_csv(&c, r, 0);
        while (t < tr - 1e-12) {
            double hh = fmin(h, tr - t);
            PidState k1 = pid_rhs(s), k2 = pid_rhs(pid_axpy(s, hh / 2, k1)),
                     k3 = pid_rhs(pid_axpy(s, hh / 2, k2)), k4 = pid_rhs(pid_axpy(s, hh, k3));
            s.x += hh / 6 * (k1.x + 2 * k2.x + 2 * k3.x + k4.x);
            s.xi += hh / 6 * (k1.xi + 2 * k2.xi + 2 * k3.xi + k4.xi);
            s.xd += hh / 6 * (k1.xd + 2 * k2.xd + 2 * k3.xd + k4.xd);
            t += hh;
        }
        err = fmax(err, fabs(st_csv(&c, r, kx) - s.x));
        err = fmax(err, fabs(st_csv(&c, r, ky) - pid_out(s, NULL)));
    }
    fprintf(stderr, "LimPID: max |plant.y, pid.y - RK4 reference| = %.3g\n", err);
    ck_assert_msg(err < 1e-5, "LimPID trajectory error %g", err);
    st_csv_free(&c);
}
END_TEST

/* the definitions, written independently of the .dyad formulas */
static double square_ref(double t) {
    if (t <= 0.25) return 1;
    double ph = fmod((t - 0.25) * 0.5, 1.0); /* fraction of the period */
    return ph < 0.5 ? 1 + 2 : 1 - 2;
}
static double pulse_ref(double t) { return (t > 0.5 && t <= 0.5 + 0.4 * 2) ? 3 : -1; }
static double expsine_ref(double t) {
    if (t <= 0.2) return 0.1;
    return 0.1 + 2 * exp(-0.5 * (t - 0.2)) * sin(2 * PI * 1.5 * (t - 0.2) + 0.3);
}
static double triangle_ref(double t) {
    if (t <= 0.3) return 0.5;
    double P = 1 / 0.8, ph = fmod(t - 0.3, P) / P; /* 0 .. 1 */
    double w; /* unit triangle: 0 -> 1 at 1/4 -> -1 at 3/4 -> 0 */
    if (ph < 0.25) w = 4 * ph;
    else if (ph < 0.75) w = 1 - 4 * (ph - 0.25);
    else w = -1 + 4 * (ph - 0.75);
    return 1.5 * w; /* offset 0.5 only before start_time (Dyad's behaviour) */
}
/* step 0 -> 2 at t = 1, rising rate 1, td = 0.01: ramp until u - y = rising * td */
static double slew_ref(double t) {
    if (t <= 1) return 0;
    double t1 = 1 + (2 - 0.01);
    if (t <= t1) return t - 1;
    return 2 - 0.01 * exp(-(t - t1) / 0.01);
}

/* distance from t to the nearest switching instant of the sources */
static double near_switch(double t) {
    /* ExpSine starts at 2 sin(0.3), Triangular leaves its offset at 0.3 */
    double d = fmin(fmin(fabs(t - 0.2), fabs(t - 0.3)), fmin(fabs(t - 0.5), fabs(t - 1.3)));
    for (int k = 0; k < 20; k++) d = fmin(d, fabs(t - (0.25 + k * 1.0)));
    return d;
}

START_TEST(sources_match_definitions) {
    StCsv c;
    run_model("tests/sim/blocks/sources.dyad", "SourcesTest", "5", "blk_src.csv", &c);
    int ks = col(&c, "square"), kp = col(&c, "pulse"), ke = col(&c, "expsine"),
        kt = col(&c, "triangle"), kl = col(&c, "slewed");
    double es = 0, ep = 0, ee = 0, et = 0, el = 0;
    int nsq = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0);
        el = fmax(el, fabs(st_csv(&c, r, kl) - slew_ref(t)));
        if (near_switch(t) < 1e-6) continue; /* the value at a jump is either side */
        es = fmax(es, fabs(st_csv(&c, r, ks) - square_ref(t)));
        ee = fmax(ee, fabs(st_csv(&c, r, ke) - expsine_ref(t)));
        et = fmax(et, fabs(st_csv(&c, r, kt) - triangle_ref(t)));
        ep = fmax(ep, fabs(st_csv(&c, r, kp) - pulse_ref(t)));
        nsq++;
    }
    fprintf(stderr, "Sources (%d rows): max errors Square %.3g, Pulse %.3g, ExpSine %.3g, "
                    "Triangular %.3g, SlewRateLimiter %.3g\n", nsq, es, ep, ee, et, el);
    ck_assert_int_gt(nsq, 400);
    ck_assert_msg(es < 1e-12 && ep < 1e-12, "Square/Pulse errors %g %g", es, ep);
    ck_assert_msg(ee < 1e-12 && et < 1e-12, "ExpSine/Triangular errors %g %g", ee, et);
    ck_assert_msg(el < 1e-5, "SlewRateLimiter error %g", el);
    st_csv_free(&c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("blocks");
    TCase *tc = tcase_create("closed-form");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, state_space_two_states);
    tcase_add_test(tc, lim_pid_reaches_setpoint);
    tcase_add_test(tc, sources_match_definitions);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
