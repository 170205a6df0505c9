/*
 * test_index.c -- simulation tests of index reduction (Pantelides + dummy
 * derivatives): the models in tests/sim/index/ are compiled and run by
 * dyadc, and the CSV is compared with references derived independently
 * here, in C: closed forms (gear, capacitors, RLC), and reduced ODEs in one
 * generalized coordinate integrated with classical RK4 at a fine step
 * (pendulum, four-bar).  Tolerances, never bytes (STYLE.md §11).
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "simtest.h"

static const double PI = 3.14159265358979323846;

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

static StCsv run_model(const char *file, const char *model, const char *stop, const char *interval,
                       const char *rtol, const char *atol, const char *csv) {
    char log[256];
    snprintf(log, sizeof log, "%s.log", csv);
    char *argv[] = {(char *)DYADC, "run", (char *)SRC(file), "--no-stdlib", "--model", (char *)model,
                    "--stop", (char *)stop, "--interval", (char *)interval, "--rtol", (char *)rtol,
                    "--atol", (char *)atol, "-o", (char *)csv, NULL};
    int rc = st_run(argv, log);
    char *text = st_slurp(log);
    ck_assert_msg(rc == 0, "%s failed:\n%s", model, text);
    free(text);
    StCsv c;
    ck_assert_int_eq(st_csv_read(csv, &c), 0);
    return c;
}

static int col(const StCsv *c, const char *name) {
    int k = st_csv_col(c, name);
    ck_assert_msg(k >= 0, "column %s missing", name);
    return k;
}

/* NaN-propagating max */
static double maxabs(double m, double e) { return e <= m ? m : e; }

/* ---- RK4 for a 1-DOF system q'' = acc(q, q') ---------------------------- */

typedef double (*Acc)(double q, double w);

static void rk4(Acc acc, double *q, double *w, double h) {
    double q1 = *q, w1 = *w;
    double kq1 = w1, kw1 = acc(q1, w1);
    double kq2 = w1 + h / 2 * kw1, kw2 = acc(q1 + h / 2 * kq1, w1 + h / 2 * kw1);
    double kq3 = w1 + h / 2 * kw2, kw3 = acc(q1 + h / 2 * kq2, w1 + h / 2 * kw2);
    double kq4 = w1 + h * kw3, kw4 = acc(q1 + h * kq3, w1 + h * kw3);
    *q = q1 + h / 6 * (kq1 + 2 * kq2 + 2 * kq3 + kq4);
    *w = w1 + h / 6 * (kw1 + 2 * kw2 + 2 * kw3 + kw4);
}

/* reference trajectory q(t) on a uniform grid of `n` intervals of `dt`,
 * with `sub` RK4 steps per interval */
static void reference(Acc acc, double q0, double w0, double dt, int n, int sub, double *q, double *w) {
    q[0] = q0;
    w[0] = w0;
    for (int i = 0; i < n; i++) {
        double a = q[i], b = w[i];
        for (int k = 0; k < sub; k++) rk4(acc, &a, &b, dt / sub);
        q[i + 1] = a;
        w[i + 1] = b;
    }
}

/* ---- pendulum (index 3) --------------------------------------------------
 * m = 1, L = 1, g = 9.81, theta0 = 0.5, at rest.  Angle from the downward
 * vertical theta = atan2(x, -y):  theta'' = -(g/L) sin(theta). */
static double pend_acc(double q, double w) { (void)w; return -9.81 * sin(q); }

START_TEST(pendulum_cartesian) {
    /* atol 1e-8: the runtime keeps algebraic unknowns out of the error test,
     * and their values between steps are interpolated (see docs/STRUCTURE.md) */
    StCsv c = run_model("tests/sim/index/pendulum.dyad", "Pendulum", "10", "0.01", "1e-8", "1e-8", "idx_pend.csv");
    ck_assert_int_eq(c.nrows, 1001);
    int kx = col(&c, "x"), ky = col(&c, "y"), kvx = col(&c, "vx"), kvy = col(&c, "vy");
    double *q = malloc(sizeof(double) * 1001), *w = malloc(sizeof(double) * 1001);
    reference(pend_acc, 0.5, 0, 0.01, 1000, 20, q, w);
    double e0 = 0, len = 0, energy = 0, ang = 0;
    for (int r = 0; r < c.nrows; r++) {
        double x = st_csv(&c, r, kx), y = st_csv(&c, r, ky), vx = st_csv(&c, r, kvx), vy = st_csv(&c, r, kvy);
        double e = 0.5 * (vx * vx + vy * vy) + 9.81 * y;
        if (r == 0) e0 = e;
        len = maxabs(len, fabs(x * x + y * y - 1));
        energy = maxabs(energy, fabs(e - e0) / fabs(e0));
        ang = maxabs(ang, fabs(atan2(x, -y) - q[r]));
    }
    fprintf(stderr, "Pendulum (index 3, 10 s, rtol 1e-8): max |x^2+y^2-L^2| = %.3g, max relative energy "
                    "drift = %.3g, max |theta - RK4 reference| = %.3g\n", len, energy, ang);
    ck_assert_msg(len < 1e-6, "length constraint %g", len);
    ck_assert_msg(energy < 1e-5, "energy drift %g", energy);
    ck_assert_msg(ang < 1e-5, "angle error %g", ang);
    free(q);
    free(w);
    st_csv_free(&c);
}
END_TEST

/* ---- four-bar (index 3) --------------------------------------------------
 * Crank a = 0.4 (theta2, J2 = 0.1), massless coupler b = 1.2, rocker c = 1
 * (theta4, J4 = 0.2), ground d = 1.5, constant torque tau = 0.05 on the
 * crank.  Positions in closed form from the crank angle (intersection of two
 * circles, the branch with the coupler joint above the ground line), rocker
 * velocity ratio k = dtheta4/dtheta2 from the velocity loop, and the
 * Lagrange equation in theta2:
 *   (J2 + J4 k^2) theta2'' + J4 k k' theta2'^2 = tau,
 * with k' = dk/dtheta2 by a central difference. */
enum { FB_A, FB_B, FB_C, FB_D };
static const double fb[] = {0.4, 1.2, 1.0, 1.5}, fb_J2 = 0.1, fb_J4 = 0.2, fb_tau = 0.05;

static void fb_position(double t2, double *t3, double *t4) {
    double ax = fb[FB_A] * cos(t2), ay = fb[FB_A] * sin(t2);
    double dx = fb[FB_D] - ax, dy = -ay, D = hypot(dx, dy);
    double l = (fb[FB_B] * fb[FB_B] - fb[FB_C] * fb[FB_C] + D * D) / (2 * D);
    double h = sqrt(fb[FB_B] * fb[FB_B] - l * l);
    double mx = ax + l * dx / D, my = ay + l * dy / D;
    double bx = mx - h * dy / D, by = my + h * dx / D; /* the upper branch */
    *t3 = atan2(by - ay, bx - ax);
    *t4 = atan2(by, bx - fb[FB_D]);
}

/* k = theta4'/theta2' from the velocity loop closure */
static double fb_ratio(double t2) {
    double t3, t4;
    fb_position(t2, &t3, &t4);
    /* -b s3 w3 + c s4 w4 = a s2,  b c3 w3 - c c4 w4 = -a c2   (w2 = 1) */
    double a11 = -fb[FB_B] * sin(t3), a12 = fb[FB_C] * sin(t4), r1 = fb[FB_A] * sin(t2);
    double a21 = fb[FB_B] * cos(t3), a22 = -fb[FB_C] * cos(t4), r2 = -fb[FB_A] * cos(t2);
    return (a11 * r2 - a21 * r1) / (a11 * a22 - a12 * a21);
}

static double fb_acc(double q, double w) {
    double k = fb_ratio(q), h = 1e-5;
    double dk = (fb_ratio(q + h) - fb_ratio(q - h)) / (2 * h);
    return (fb_tau - fb_J4 * k * dk * w * w) / (fb_J2 + fb_J4 * k * k);
}

START_TEST(fourbar) {
    StCsv c = run_model("tests/sim/index/fourbar.dyad", "FourBar", "5", "0.01", "1e-8", "1e-10", "idx_fourbar.csv");
    ck_assert_int_eq(c.nrows, 501);
    int k2 = col(&c, "theta2"), kw2 = col(&c, "omega2"), k4 = col(&c, "theta4"), kw4 = col(&c, "omega4");
    double *q = malloc(sizeof(double) * 501), *w = malloc(sizeof(double) * 501);
    reference(fb_acc, 0.3, 3, 0.01, 500, 20, q, w);
    double e2 = 0, ew2 = 0, e4 = 0, ew4 = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t3, t4;
        fb_position(q[r], &t3, &t4);
        e2 = maxabs(e2, fabs(st_csv(&c, r, k2) - q[r]));
        ew2 = maxabs(ew2, fabs(st_csv(&c, r, kw2) - w[r]));
        e4 = maxabs(e4, fabs(remainder(st_csv(&c, r, k4) - t4, 2 * PI)));
        ew4 = maxabs(ew4, fabs(st_csv(&c, r, kw4) - fb_ratio(q[r]) * w[r]));
    }
    fprintf(stderr, "FourBar (index 3, 5 s): crank turned %.2f rad; max error vs reduced-ODE reference: "
                    "theta2 %.3g, omega2 %.3g, theta4 %.3g, omega4 %.3g\n",
            q[500] - q[0], e2, ew2, e4, ew4);
    ck_assert_msg(q[500] - q[0] > 2 * PI, "the crank should turn round");
    ck_assert_msg(e2 < 1e-5 && ew2 < 1e-5, "crank error %g %g", e2, ew2);
    ck_assert_msg(e4 < 1e-5 && ew4 < 1e-5, "rocker error %g %g", e4, ew4);
    free(q);
    free(w);
    st_csv_free(&c);
}
END_TEST

/* ---- slider-crank (index 3) --------------------------------------------
 * Crank r = 0.2 (theta, J = 0.05), massless rod l = 0.6, slider ms = 1 on
 * the x axis, torque tau = 0.1, theta(0) = 0.3, omega(0) = 5.  Slider
 * position x(theta) = r cos(theta) + sqrt(l^2 - r^2 sin^2(theta)); Lagrange
 * in theta:  (J + ms x'^2) theta'' + ms x' x'' theta'^2 = tau  (' = d/dtheta). */
static double sc_x(double q) { double s = 0.2 * sin(q); return 0.2 * cos(q) + sqrt(0.36 - s * s); }

static double sc_acc(double q, double w) {
    double h = 1e-4;
    double x1 = (sc_x(q + h) - sc_x(q - h)) / (2 * h);
    double x2 = (sc_x(q + h) - 2 * sc_x(q) + sc_x(q - h)) / (h * h);
    return (0.1 - x1 * x2 * w * w) / (0.05 + x1 * x1);
}

START_TEST(slider_crank) {
    StCsv c = run_model("tests/sim/index/slidercrank.dyad", "SliderCrank", "5", "0.01", "1e-10", "1e-10", "idx_slider.csv");
    ck_assert_int_eq(c.nrows, 501);
    int kq = col(&c, "theta"), kw = col(&c, "omega"), kx = col(&c, "x");
    double *q = malloc(sizeof(double) * 501), *w = malloc(sizeof(double) * 501);
    reference(sc_acc, 0.3, 5, 0.01, 500, 20, q, w);
    double eq = 0, ew = 0, ex = 0;
    for (int r = 0; r < c.nrows; r++) {
        eq = maxabs(eq, fabs(st_csv(&c, r, kq) - q[r]));
        ew = maxabs(ew, fabs(st_csv(&c, r, kw) - w[r]));
        ex = maxabs(ex, fabs(st_csv(&c, r, kx) - sc_x(q[r])));
    }
    fprintf(stderr, "SliderCrank (index 3, 5 s, rtol 1e-10): max error vs reduced-ODE reference: theta %.3g, "
                    "omega %.3g, x %.3g\n", eq, ew, ex);
    /* the crank turns ~40 rad: rtol 1e-10 (at 1e-8 the global error is ~1e-5) */
    ck_assert_msg(eq < 1e-5 && ew < 1e-5 && ex < 1e-5, "slider-crank error %g %g %g", eq, ew, ex);
    free(q);
    free(w);
    st_csv_free(&c);
}
END_TEST

/* ---- double pendulum (index 3, two constraints) ---------------------------
 * Chaotic, so no trajectory reference: the invariants.  Energy
 * 0.5 m1 |v1|^2 + 0.5 m2 |v2|^2 + g (m1 y1 + m2 y2) (m = 1, g = 9.81) and both
 * rod lengths (1) over 5 s. */
START_TEST(double_pendulum) {
    StCsv c = run_model("tests/sim/index/doublependulum.dyad", "DoublePendulum", "5", "0.01", "1e-8", "1e-8",
                        "idx_dpend.csv");
    ck_assert_int_eq(c.nrows, 501);
    int k[8];
    const char *names[8] = {"x1", "y1", "x2", "y2", "vx1", "vy1", "vx2", "vy2"};
    for (int i = 0; i < 8; i++) k[i] = col(&c, names[i]);
    double e0 = 0, energy = 0, len = 0;
    for (int r = 0; r < c.nrows; r++) {
        double v[8];
        for (int i = 0; i < 8; i++) v[i] = st_csv(&c, r, k[i]);
        double e = 0.5 * (v[4] * v[4] + v[5] * v[5] + v[6] * v[6] + v[7] * v[7]) + 9.81 * (v[1] + v[3]);
        if (r == 0) e0 = e;
        energy = maxabs(energy, fabs(e - e0) / fabs(e0));
        len = maxabs(len, fabs(v[0] * v[0] + v[1] * v[1] - 1));
        len = maxabs(len, fabs((v[2] - v[0]) * (v[2] - v[0]) + (v[3] - v[1]) * (v[3] - v[1]) - 1));
    }
    fprintf(stderr, "DoublePendulum (index 3, 5 s, rtol 1e-8): max rod length error %.3g, relative energy "
                    "drift %.3g\n", len, energy);
    ck_assert_msg(len < 1e-5 && energy < 1e-5, "double pendulum: length %g energy %g", len, energy);
    st_csv_free(&c);
}
END_TEST

/* ---- ideal gear (index 2) ------------------------------------------------
 * phi_a = ratio phi_b, ratio tau_a + tau_b = 0; J_a = 0.5, J_b = 2,
 * ratio = 3, tau = 1.5, w_a(0) = 1:  one inertia J_a + J_b / ratio^2. */
START_TEST(ideal_gear) {
    StCsv c = run_model("tests/sim/index/gear.dyad", "Gear", "5", "0.01", "1e-8", "1e-10", "idx_gear.csv");
    int kp = col(&c, "inertia_a.phi"), kw = col(&c, "inertia_a.w"), kwb = col(&c, "inertia_b.w");
    int kpb = col(&c, "inertia_b.phi");
    double alpha = 1.5 / (0.5 + 2.0 / 9), err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0);
        err = maxabs(err, fabs(st_csv(&c, r, kw) - (1 + alpha * t)));
        err = maxabs(err, fabs(st_csv(&c, r, kp) - (t + alpha * t * t / 2)));
        err = maxabs(err, fabs(st_csv(&c, r, kwb) - (1 + alpha * t) / 3));
        err = maxabs(err, fabs(st_csv(&c, r, kpb) - (t + alpha * t * t / 2) / 3));
    }
    fprintf(stderr, "Gear (index 2): max error vs closed form = %.3g\n", err);
    ck_assert_msg(err < 1e-6, "gear error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---- two capacitors in parallel ------------------------------------------
 * V = 2, R = 10, C1 + C2 = 0.05:  v = V (1 - exp(-t / (R (C1 + C2)))). */
START_TEST(two_capacitors) {
    StCsv c = run_model("tests/sim/index/twocaps.dyad", "TwoCaps", "2", "0.01", "1e-8", "1e-10", "idx_caps.csv");
    int k1 = col(&c, "c1.v"), k2 = col(&c, "c2.v"), ki = col(&c, "c2.p.i");
    double err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0), v = 2 * (1 - exp(-t / 0.5));
        err = maxabs(err, fabs(st_csv(&c, r, k1) - v));
        err = maxabs(err, fabs(st_csv(&c, r, k2) - v));
        err = maxabs(err, fabs(st_csv(&c, r, ki) - 0.04 * 2 / 0.5 * exp(-t / 0.5)));
    }
    fprintf(stderr, "TwoCaps: max error vs closed form = %.3g\n", err);
    ck_assert_msg(err < 1e-6, "two capacitors error %g", err);
    st_csv_free(&c);
}
END_TEST

/* ---- series RLC ----------------------------------------------------------
 * V = 10, R = 1, L = 0.5, C = 0.1: alpha = R/2L = 1, w0^2 = 1/LC = 20,
 * wd = sqrt(19):  v_C = V (1 - e^{-alpha t} (cos wd t + alpha/wd sin wd t)). */
START_TEST(rlc) {
    StCsv c = run_model("tests/golden/structure/RLC.dyad", "RLC", "3", "0.01", "1e-8", "1e-10", "idx_rlc.csv");
    int kv = col(&c, "c.v"), ki = col(&c, "l.i");
    double wd = sqrt(19.0), err = 0;
    for (int r = 0; r < c.nrows; r++) {
        double t = st_csv(&c, r, 0), e = exp(-t);
        double v = 10 * (1 - e * (cos(wd * t) + sin(wd * t) / wd));
        double i = 0.1 * 10 * e * (20 / wd) * sin(wd * t); /* C dv/dt */
        err = maxabs(err, fabs(st_csv(&c, r, kv) - v));
        err = maxabs(err, fabs(st_csv(&c, r, ki) - i));
    }
    fprintf(stderr, "RLC: max error vs closed form = %.3g\n", err);
    ck_assert_msg(err < 1e-5, "RLC error %g", err); /* amplitudes ~10: 1e-6 relative */
    st_csv_free(&c);
}
END_TEST

/* ---- a structurally singular model is a located error -------------------- */
START_TEST(singular_is_located) {
    char *argv[] = {(char *)DYADC, "flatten", (char *)SRC("tests/errors/structure/Singular.dyad"),
                    "--no-stdlib", "--model", "Singular", "--structure", NULL};
    ck_assert_int_eq(st_run(argv, "idx_singular.log"), 1);
    char *log = st_slurp("idx_singular.log");
    ck_assert_msg(strstr(log, "structurally singular") && strstr(log, "Singular.dyad:"), "%s", log);
    free(log);
}
END_TEST

int main(void) {
    Suite *s = suite_create("index");
    TCase *tc = tcase_create("index-reduction");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, pendulum_cartesian);
    tcase_add_test(tc, fourbar);
    tcase_add_test(tc, slider_crank);
    tcase_add_test(tc, double_pendulum);
    tcase_add_test(tc, ideal_gear);
    tcase_add_test(tc, two_capacitors);
    tcase_add_test(tc, rlc);
    tcase_add_test(tc, singular_is_located);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
