/*
 * test_mechanisms.c -- index reduction with dynamic state selection on
 * mechanisms written plainly (positions, velocities, multipliers, the
 * position-level constraints as algebraic equations; tests/sim/mech/),
 * compiled and run by dyadc for 10 s at rtol 1e-8, against references from
 * outside the code under test:
 *   - the minimal-coordinate equations of motion, integrated here with RK4
 *     at a step far below the tolerance (refode.h): pendulum at 60 degrees,
 *     from the horizontal and looping over the top; spherical pendulum;
 *     double pendulum; crank-slider and four-bar in absolute coordinates
 *     started at a dead centre (their kinetic energy is conserved, so the
 *     crank angle follows theta' = sqrt(2 E / M(theta)) with the
 *     generalized inertia M from the closed-form position analysis);
 *   - Andrews' squeezing mechanism against the published reference solution
 *     of the IVP test set (Bari) at t = 0.03 (its whole published interval).
 * Each checks the trajectory, the constraints (<= 1e-7 at every output) and
 * the drift of a conserved energy (<= 1e-6, relative to the larger of |E0|
 * and the model's energy scale), and reports the state-set switches (-v).
 * A pendulum whose rod shrinks to nothing fails at t = 1 with notes naming
 * its state sets as singular in every choice.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>

#include "refode.h"
#include "simtest.h"

static const double PI = 3.14159265358979323846;

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

typedef struct {
    StCsv c;
    long switches;             /* state-set switches reported by -v */
} Run;

/* dyadc run tests/sim/mech/FILE --model MODEL ARGS... --rtol 1e-8 -v */
static Run run(const char *file, const char *model, const char *stop, const char *dt, const char *const *args,
               const char *csv) {
    char logf[256], path[256];
    snprintf(logf, sizeof logf, "%s.log", csv);
    snprintf(path, sizeof path, "tests/sim/mech/%s", file);
    char *argv[40] = {(char *)DYADC, "run", (char *)SRC(path), "--no-stdlib", "--model", (char *)model,
                      "--stop", (char *)stop, "--interval", (char *)dt, "--rtol", "1e-8", "--atol", "1e-10",
                      "-v", "-o", (char *)csv};
    int n = 17;
    for (; args && *args && n < 38; args++) argv[n++] = (char *)*args;
    argv[n] = NULL;
    int rc = st_run(argv, logf);
    char *log = st_slurp(logf);
    ck_assert_msg(rc == 0, "%s failed:\n%s", model, log);
    Run r = {.switches = -1};
    const char *sw = strstr(log, "switches ");
    if (sw) r.switches = strtol(sw + 9, NULL, 10);
    free(log);
    ck_assert_int_eq(st_csv_read(csv, &r.c), 0);
    return r;
}

static int col(const StCsv *c, const char *name) {
    int k = st_csv_col(c, name);
    ck_assert_msg(k >= 0, "column %s missing", name);
    return k;
}

static double maxabs(double m, double e) { return e <= m ? m : e; } /* NaN-propagating */

/* ---- Cartesian pendulum --------------------------------------------------
 * theta = atan2(x, -y):  theta'' = -(g / L) sin(theta), m = L = 1. */
static void pend_rhs(double t, const double *y, double *dy, void *ctx) {
    (void)t, (void)ctx;
    dy[0] = y[1];
    dy[1] = -9.81 * sin(y[0]);
}

static void pendulum(const char *model, double theta0, double w0, const char *label) {
    char p1[64], p2[64];
    snprintf(p1, sizeof p1, "theta0=%.17g", theta0);
    snprintf(p2, sizeof p2, "w0=%.17g", w0);
    const char *args[] = {"-p", p1, "-p", p2, NULL};
    char csv[64];
    snprintf(csv, sizeof csv, "mech_%s.csv", label);
    Run r = run("pendulum.dyad", model, "10", "0.01", args, csv);
    ck_assert_int_eq(r.c.nrows, 1001);
    double y0[2] = {theta0, w0}, *ref = malloc(sizeof(double) * 2 * 1001);
    ref_solve(pend_rhs, NULL, 2, y0, 0.01, 1001, 100, ref);
    int kx = col(&r.c, "x"), ky = col(&r.c, "y"), kvx = col(&r.c, "vx"), kvy = col(&r.c, "vy");
    double traj = 0, con = 0, drift = 0, e0 = 0, scale = 9.81;
    for (int i = 0; i < r.c.nrows; i++) {
        double x = st_csv(&r.c, i, kx), y = st_csv(&r.c, i, ky), vx = st_csv(&r.c, i, kvx), vy = st_csv(&r.c, i, kvy);
        double e = 0.5 * (vx * vx + vy * vy) + 9.81 * y;
        if (i == 0) e0 = e, scale = fmax(fabs(e0), scale);
        traj = maxabs(traj, fabs(remainder(atan2(x, -y) - ref[2 * i], 2 * PI)));
        con = maxabs(con, fabs(x * x + y * y - 1));
        drift = maxabs(drift, fabs(e - e0) / scale);
    }
    fprintf(stderr, "Pendulum %s (10 s, rtol 1e-8): max |theta - reference| %.3g, max |x^2 + y^2 - L^2| %.3g, "
                    "energy drift %.3g, state-set switches %ld\n", label, traj, con, drift, r.switches);
    ck_assert_msg(traj < 1e-5, "%s trajectory %g", label, traj);
    ck_assert_msg(con < 1e-7, "%s constraint %g", label, con);
    ck_assert_msg(drift < 1e-6, "%s energy drift %g", label, drift);
    free(ref);
    st_csv_free(&r.c);
}

START_TEST(pendulum_60_degrees) { pendulum("PendulumX", PI / 3, 0, "60deg"); }
END_TEST

/* released from the horizontal: passes through both axes */
START_TEST(pendulum_horizontal) { pendulum("PendulumY", PI / 2, 0, "horizontal"); }
END_TEST

/* 8 rad/s at the bottom (more than sqrt(5 g / L) = 7.0): loops over the top */
START_TEST(pendulum_looping) { pendulum("PendulumX", 0, 8, "looping"); }
END_TEST

/* ---- spherical pendulum ---------------------------------------------------
 * Polar angle theta from the downward vertical, azimuth phi; the angular
 * momentum about the vertical p = sin^2(theta) phi' (per m L^2) is
 * conserved:  theta'' = p^2 cos(theta) / sin^3(theta) - (g / L) sin(theta),
 * phi' = p / sin^2(theta).  y = (theta, theta', phi). */
static void sph_rhs(double t, const double *y, double *dy, void *ctx) {
    (void)t;
    double p = *(double *)ctx, s = sin(y[0]);
    dy[0] = y[1];
    dy[1] = p * p * cos(y[0]) / (s * s * s) - 9.81 * s;
    dy[2] = p / (s * s);
}

START_TEST(spherical_pendulum) {
    Run r = run("spherical.dyad", "SphericalPendulum", "10", "0.01", NULL, "mech_spherical.csv");
    ck_assert_int_eq(r.c.nrows, 1001);
    double th0 = 1.0, p = sin(th0) * sin(th0) * 2.5, y0[3] = {th0, 0, 0}, *ref = malloc(sizeof(double) * 3 * 1001);
    ref_solve(sph_rhs, &p, 3, y0, 0.01, 1001, 100, ref);
    int k[6] = {col(&r.c, "x"), col(&r.c, "y"), col(&r.c, "z"), col(&r.c, "vx"), col(&r.c, "vy"), col(&r.c, "vz")};
    double traj = 0, con = 0, drift = 0, e0 = 0, mom = 0;
    for (int i = 0; i < r.c.nrows; i++) {
        double v[6];
        for (int j = 0; j < 6; j++) v[j] = st_csv(&r.c, i, k[j]);
        double th = ref[3 * i], ph = ref[3 * i + 2];
        double rx = sin(th) * cos(ph), ry = sin(th) * sin(ph), rz = -cos(th);
        double e = 0.5 * (v[3] * v[3] + v[4] * v[4] + v[5] * v[5]) + 9.81 * v[2];
        if (i == 0) e0 = e;
        traj = maxabs(traj, fmax(fabs(v[0] - rx), fmax(fabs(v[1] - ry), fabs(v[2] - rz))));
        con = maxabs(con, fabs(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] - 1));
        drift = maxabs(drift, fabs(e - e0) / fmax(fabs(e0), 9.81));
        mom = maxabs(mom, fabs(v[0] * v[4] - v[1] * v[3] - p)); /* angular momentum about z */
    }
    fprintf(stderr, "SphericalPendulum (10 s, rtol 1e-8): max position error %.3g, max |r^2 - L^2| %.3g, energy "
                    "drift %.3g, angular momentum drift %.3g, state-set switches %ld\n", traj, con, drift, mom, r.switches);
    ck_assert_msg(traj < 1e-5 && con < 1e-7 && drift < 1e-6 && mom < 1e-6, "spherical: %g %g %g %g", traj, con,
                  drift, mom);
    free(ref);
    st_csv_free(&r.c);
}
END_TEST

/* ---- double pendulum ------------------------------------------------------
 * m1 = m2 = 1, L1 = L2 = 1, angles from the downward vertical, y = (theta1,
 * omega1, theta2, omega2); the Lagrange equations solved for the
 * accelerations. */
static void dp_rhs(double t, const double *y, double *dy, void *ctx) {
    (void)t, (void)ctx;
    double g = 9.81, m1 = 1, m2 = 1, L1 = 1, L2 = 1;
    double d = y[2] - y[0], den1 = (m1 + m2) * L1 - m2 * L1 * cos(d) * cos(d), den2 = L2 / L1 * den1;
    dy[0] = y[1];
    dy[1] = (m2 * L1 * y[1] * y[1] * sin(d) * cos(d) + m2 * g * sin(y[2]) * cos(d) + m2 * L2 * y[3] * y[3] * sin(d) -
             (m1 + m2) * g * sin(y[0])) / den1;
    dy[2] = y[3];
    dy[3] = (-m2 * L2 * y[3] * y[3] * sin(d) * cos(d) +
             (m1 + m2) * (g * sin(y[0]) * cos(d) - L1 * y[1] * y[1] * sin(d) - g * sin(y[2]))) / den2;
}

START_TEST(double_pendulum) {
    const char *args[] = {NULL};
    char csv[] = "mech_double.csv";
    char logf[] = "mech_double.csv.log";
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/index/doublependulum.dyad"), "--no-stdlib",
                    "--model", "DoublePendulum", "--stop", "10", "--interval", "0.01", "--rtol", "1e-8", "--atol",
                    "1e-10", "-v", "-o", csv, NULL};
    (void)args;
    int rc = st_run(argv, logf);
    char *log = st_slurp(logf);
    ck_assert_msg(rc == 0, "%s", log);
    const char *sw = strstr(log, "switches ");
    long switches = sw ? strtol(sw + 9, NULL, 10) : -1;
    free(log);
    StCsv c;
    ck_assert_int_eq(st_csv_read(csv, &c), 0);
    ck_assert_int_eq(c.nrows, 1001);
    double y0[4] = {0.5, 0, 0.3, 0}, *ref = malloc(sizeof(double) * 4 * 1001);
    ref_solve(dp_rhs, NULL, 4, y0, 0.01, 1001, 100, ref);
    const char *names[8] = {"x1", "y1", "x2", "y2", "vx1", "vy1", "vx2", "vy2"};
    int k[8];
    for (int i = 0; i < 8; i++) k[i] = col(&c, names[i]);
    double traj = 0, con = 0, drift = 0, e0 = 0;
    for (int i = 0; i < c.nrows; i++) {
        double v[8];
        for (int j = 0; j < 8; j++) v[j] = st_csv(&c, i, k[j]);
        double t1 = ref[4 * i], t2 = ref[4 * i + 2];
        double rx1 = sin(t1), ry1 = -cos(t1), rx2 = rx1 + sin(t2), ry2 = ry1 - cos(t2);
        double e = 0.5 * (v[4] * v[4] + v[5] * v[5] + v[6] * v[6] + v[7] * v[7]) + 9.81 * (v[1] + v[3]);
        if (i == 0) e0 = e;
        traj = maxabs(traj, fmax(fmax(fabs(v[0] - rx1), fabs(v[1] - ry1)), fmax(fabs(v[2] - rx2), fabs(v[3] - ry2))));
        con = maxabs(con, fabs(v[0] * v[0] + v[1] * v[1] - 1));
        con = maxabs(con, fabs((v[2] - v[0]) * (v[2] - v[0]) + (v[3] - v[1]) * (v[3] - v[1]) - 1));
        drift = maxabs(drift, fabs(e - e0) / fmax(fabs(e0), 9.81));
    }
    fprintf(stderr, "DoublePendulum (10 s, rtol 1e-8): max position error %.3g, max rod length error %.3g, "
                    "energy drift %.3g, state-set switches %ld\n", traj, con, drift, switches);
    ck_assert_msg(traj < 1e-5 && con < 1e-7 && drift < 1e-6, "double pendulum: %g %g %g", traj, con, drift);
    free(ref);
    st_csv_free(&c);
}
END_TEST

/* ---- energy-conserving one-degree-of-freedom mechanisms -------------------
 * E = M(theta) theta'^2 / 2 is constant: theta' = sqrt(2 E / M(theta)). */
typedef double (*Inertia)(double theta, double *aux);
typedef struct {
    Inertia M;
    double E;
} Rot;

static void rot_rhs(double t, const double *y, double *dy, void *ctx) {
    (void)t;
    Rot *r = ctx;
    dy[0] = sqrt(2 * r->E / r->M(y[0], NULL));
}

/* crank-slider: crank r, rod l, masses m1, m2, m3, J = m len^2 / 12;
 * aux = {rod angle, slider position} */
enum { CS_R, CS_L, CS_M1, CS_M2, CS_M3 };
static const double cs[] = {0.2, 0.6, 1.0, 0.5, 1.0};

static double cs_inertia(double th, double *aux) {
    double r = cs[CS_R], l = cs[CS_L], phi = -asin(r * sin(th) / l);
    double dphi = -r * cos(th) / (l * cos(phi));
    double gx = -r * sin(th) - l / 2 * sin(phi) * dphi, gy = r * cos(th) + l / 2 * cos(phi) * dphi;
    double dx3 = -r * sin(th) - l * sin(phi) * dphi;
    if (aux) aux[0] = phi, aux[1] = r * cos(th) + l * cos(phi);
    return cs[CS_M1] * r * r / 12 + cs[CS_M1] * r * r / 4 + cs[CS_M2] * (gx * gx + gy * gy) +
           cs[CS_M2] * l * l / 12 * dphi * dphi + cs[CS_M3] * dx3 * dx3;
}

START_TEST(crank_slider_dead_centre) {
    Run r = run("crankslider.dyad", "CrankSlider", "10", "0.01", NULL, "mech_crankslider.csv");
    ck_assert_int_eq(r.c.nrows, 1001);
    Rot rot = {cs_inertia, 0.5 * cs_inertia(0, NULL) * 100}; /* theta0 = 0, w0 = 10 */
    double y0[1] = {0}, *ref = malloc(sizeof(double) * 1001);
    ref_solve(rot_rhs, &rot, 1, y0, 0.01, 1001, 100, ref);
    const char *names[] = {"x1", "y1", "phi1", "x2", "y2", "phi2", "x3", "vx1", "vy1", "w1", "vx2", "vy2", "w2", "v3"};
    int k[14];
    for (int i = 0; i < 14; i++) k[i] = col(&r.c, names[i]);
    double traj = 0, con = 0, drift = 0, e0 = 0, R = cs[CS_R], L = cs[CS_L];
    for (int i = 0; i < r.c.nrows; i++) {
        double v[14], aux[2];
        for (int j = 0; j < 14; j++) v[j] = st_csv(&r.c, i, k[j]);
        cs_inertia(ref[i], aux);
        traj = maxabs(traj, fmax(fabs(v[2] - ref[i]), fmax(fabs(v[5] - aux[0]), fabs(v[6] - aux[1]))));
        double g[6] = {v[0] - R / 2 * cos(v[2]), v[1] - R / 2 * sin(v[2]),
                       v[0] + R / 2 * cos(v[2]) - v[3] + L / 2 * cos(v[5]), v[1] + R / 2 * sin(v[2]) - v[4] + L / 2 * sin(v[5]),
                       v[3] + L / 2 * cos(v[5]) - v[6], v[4] + L / 2 * sin(v[5])};
        for (int j = 0; j < 6; j++) con = maxabs(con, fabs(g[j]));
        double e = 0.5 * (cs[CS_M1] * (v[7] * v[7] + v[8] * v[8]) + cs[CS_M1] * R * R / 12 * v[9] * v[9] +
                          cs[CS_M2] * (v[10] * v[10] + v[11] * v[11]) + cs[CS_M2] * L * L / 12 * v[12] * v[12] +
                          cs[CS_M3] * v[13] * v[13]);
        if (i == 0) e0 = e;
        drift = maxabs(drift, fabs(e - e0) / e0);
    }
    fprintf(stderr, "CrankSlider (absolute coordinates, from the dead centre, 10 s, rtol 1e-8): crank turned %.1f rad; "
                    "max error crank/rod angle, slider %.3g, max joint residual %.3g, energy drift %.3g, state-set "
                    "switches %ld\n", ref[1000], traj, con, drift, r.switches);
    ck_assert_msg(traj < 1e-5 && con < 1e-7 && drift < 1e-6, "crank-slider: %g %g %g", traj, con, drift);
    free(ref);
    st_csv_free(&r.c);
}
END_TEST

/* four-bar: crank a, coupler b, rocker c, ground d; masses m, J = m len^2 /
 * 12.  Positions in closed form (the branch through the start), velocity
 * ratios from the velocity loop; aux = {coupler angle, rocker angle}. */
enum { FB_A, FB_B, FB_C, FB_D };
static const double fb[] = {0.4, 1.2, 1.0, 1.5};
static double fb_branch = 1;

static void fb_angles(double th, double *beta, double *psi) {
    double ax = fb[FB_A] * cos(th), ay = fb[FB_A] * sin(th), dx = fb[FB_D] - ax, dy = -ay, D = hypot(dx, dy);
    double l = (fb[FB_B] * fb[FB_B] - fb[FB_C] * fb[FB_C] + D * D) / (2 * D), h = sqrt(fb[FB_B] * fb[FB_B] - l * l);
    double cx = ax + l * dx / D - fb_branch * h * dy / D, cy = ay + l * dy / D + fb_branch * h * dx / D;
    *beta = atan2(cy - ay, cx - ax);
    *psi = atan2(cy, cx - fb[FB_D]);
}

static double fb_inertia(double th, double *aux) {
    double a = fb[FB_A], b = fb[FB_B], c = fb[FB_C], be, ps;
    fb_angles(th, &be, &ps);
    /* -b sin(be) be' + c sin(ps) ps' = a sin(th),  b cos(be) be' - c cos(ps) ps' = -a cos(th) */
    double a11 = -b * sin(be), a12 = c * sin(ps), a21 = b * cos(be), a22 = -c * cos(ps);
    double r1 = a * sin(th), r2 = -a * cos(th), det = a11 * a22 - a12 * a21;
    double dbe = (r1 * a22 - a12 * r2) / det, dps = (a11 * r2 - a21 * r1) / det;
    double gx = -a * sin(th) - b / 2 * sin(be) * dbe, gy = a * cos(th) + b / 2 * cos(be) * dbe;
    if (aux) aux[0] = be, aux[1] = ps;
    return a * a / 12 + a * a / 4 + (gx * gx + gy * gy) + b * b / 12 * dbe * dbe + (c * c / 12 + c * c / 4) * dps * dps;
}

START_TEST(fourbar_dead_centre) {
    Run r = run("fourbar.dyad", "FourBarAbs", "10", "0.01", NULL, "mech_fourbar.csv");
    ck_assert_int_eq(r.c.nrows, 1001);
    double a = fb[FB_A], b = fb[FB_B], c = fb[FB_C], d = fb[FB_D];
    double th0 = acos(((a + b) * (a + b) + d * d - c * c) / (2 * (a + b) * d)), be, ps;
    fb_angles(th0, &be, &ps); /* the branch with crank and coupler in line at the start */
    if (fabs(remainder(be - th0, 2 * PI)) > 1e-6) fb_branch = -1;
    Rot rot = {fb_inertia, 0.5 * fb_inertia(th0, NULL) * 36}; /* w0 = 6 */
    double y0[1] = {th0}, *ref = malloc(sizeof(double) * 1001);
    ref_solve(rot_rhs, &rot, 1, y0, 0.01, 1001, 100, ref);
    const char *names[] = {"x1", "y1", "phi1", "x2", "y2", "phi2", "x3", "y3", "phi3",
                           "vx1", "vy1", "w1", "vx2", "vy2", "w2", "vx3", "vy3", "w3"};
    int k[18];
    for (int i = 0; i < 18; i++) k[i] = col(&r.c, names[i]);
    double traj = 0, con = 0, drift = 0, e0 = 0;
    for (int i = 0; i < r.c.nrows; i++) {
        double v[18], aux[2];
        for (int j = 0; j < 18; j++) v[j] = st_csv(&r.c, i, k[j]);
        fb_inertia(ref[i], aux);
        traj = maxabs(traj, fabs(v[2] - ref[i]));
        traj = maxabs(traj, fabs(remainder(v[5] - aux[0], 2 * PI)));
        traj = maxabs(traj, fabs(remainder(v[8] - aux[1], 2 * PI)));
        double g[8] = {v[0] - a / 2 * cos(v[2]), v[1] - a / 2 * sin(v[2]),
                       v[0] + a / 2 * cos(v[2]) - v[3] + b / 2 * cos(v[5]), v[1] + a / 2 * sin(v[2]) - v[4] + b / 2 * sin(v[5]),
                       v[3] + b / 2 * cos(v[5]) - v[6] - c / 2 * cos(v[8]), v[4] + b / 2 * sin(v[5]) - v[7] - c / 2 * sin(v[8]),
                       v[6] - c / 2 * cos(v[8]) - d, v[7] - c / 2 * sin(v[8])};
        for (int j = 0; j < 8; j++) con = maxabs(con, fabs(g[j]));
        double e = 0.5 * (v[9] * v[9] + v[10] * v[10] + a * a / 12 * v[11] * v[11] + v[12] * v[12] + v[13] * v[13] +
                          b * b / 12 * v[14] * v[14] + v[15] * v[15] + v[16] * v[16] + c * c / 12 * v[17] * v[17]);
        if (i == 0) e0 = e;
        drift = maxabs(drift, fabs(e - e0) / e0);
    }
    fprintf(stderr, "FourBar (absolute coordinates, from a dead centre, 10 s, rtol 1e-8): crank turned %.1f rad; max "
                    "error crank/coupler/rocker angle %.3g, max joint residual %.3g, energy drift %.3g, state-set "
                    "switches %ld\n", ref[1000] - th0, traj, con, drift, r.switches);
    ck_assert_msg(traj < 1e-5 && con < 1e-7 && drift < 1e-6, "four-bar: %g %g %g", traj, con, drift);
    free(ref);
    st_csv_free(&r.c);
}
END_TEST

/* ---- Andrews' squeezing mechanism (IVP test set) --------------------------
 * Reference at t = 0.03 from the test set's andrews.f (`solut`, PSIDE at
 * 1e-14): angles q1..q7, velocities, multipliers (the accelerations, not
 * output columns, are left out). */
static const double and_q[7] = {0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                                -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                                0.1048080741042263e+1};
static const double and_w[7] = {0.1139920302151208e+4, -0.1424379294994111e+4, 0.1103291221937134e+2,
                                0.1929337464421385e+2, 0.5735699284790808e+0, -0.1929337464421385e+2,
                                0.3231791658026955e+0};
static const double and_lam[6] = {0.1991753333731910e+3, -0.2975531228015052e+2, 0.2306654119098399e+2,
                                  0.3145271365475927e+2, 0.2264249232082739e+2, 0.1161740700019673e+2};

START_TEST(andrews) {
    Run r = run("andrews.dyad", "Andrews", "0.03", "0.0001", NULL, "mech_andrews.csv");
    int last = r.c.nrows - 1;
    ck_assert_double_eq_tol(st_csv(&r.c, last, 0), 0.03, 1e-14);
    /* errors relative to the largest reference of their kind: the angles,
     * the velocities (up to 1424 rad/s), the multipliers share a scale each */
    double err = 0, con = 0;
    char name[16];
    const char *kind[3] = {"q", "w", "lam"};
    const double *ref[3] = {and_q, and_w, and_lam};
    for (int g = 0; g < 3; g++) {
        int n = g == 2 ? 6 : 7;
        double scale = 0;
        for (int i = 0; i < n; i++) scale = fmax(scale, fabs(ref[g][i]));
        for (int i = 0; i < n; i++) {
            snprintf(name, sizeof name, "%s%d", kind[g], i + 1);
            err = maxabs(err, fabs(st_csv(&r.c, last, col(&r.c, name)) - ref[g][i]) / scale);
        }
    }
    /* the loop closures along the way (test set parameters) */
    const double rr = 7e-3, d = 28e-3, ss = 35e-3, e = 2e-2, zt = 4e-2, zf = 2e-2, u = 4e-2;
    const double xa = -0.06934, ya = -0.00227, xb = -0.03635, yb = 0.03273;
    int kq[7];
    for (int i = 0; i < 7; i++) {
        snprintf(name, sizeof name, "q%d", i + 1);
        kq[i] = col(&r.c, name);
    }
    for (int row = 0; row < r.c.nrows; row++) {
        double q[7];
        for (int i = 0; i < 7; i++) q[i] = st_csv(&r.c, row, kq[i]);
        double cx = rr * cos(q[0]) - d * cos(q[0] + q[1]), cy = rr * sin(q[0]) - d * sin(q[0] + q[1]);
        double g[6] = {cx - ss * sin(q[2]) - xb, cy + ss * cos(q[2]) - yb,
                       cx - e * sin(q[3] + q[4]) - zt * cos(q[4]) - xa, cy + e * cos(q[3] + q[4]) - zt * sin(q[4]) - ya,
                       cx - zf * cos(q[5] + q[6]) - u * sin(q[6]) - xa, cy - zf * sin(q[5] + q[6]) + u * cos(q[6]) - ya};
        for (int i = 0; i < 6; i++) con = maxabs(con, fabs(g[i]));
    }
    fprintf(stderr, "Andrews (IVP test set, t = 0.03, rtol 1e-8): max error vs the published reference (relative to its kind) "
                    "%.3g, max loop-closure residual %.3g, state-set switches %ld\n", err, con, r.switches);
    ck_assert_msg(err < 1e-6 && con < 1e-7, "Andrews: %g %g", err, con);
    st_csv_free(&r.c);
}
END_TEST

/* A singular configuration (the shrinking pendulum at t = 1): the failure
 * names the state sets that no choice of states can keep regular. */
START_TEST(singular_configuration_named) {
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/mech/shrink.dyad"), "--no-stdlib", "--model",
                    "Shrink", "--stop", "1.5", "-o", "mech_shrink.csv", NULL};
    int rc = st_run(argv, "mech_shrink.log");
    char *log = st_slurp("mech_shrink.log");
    fprintf(stderr, "Shrink: %s", log);
    ck_assert_msg(rc == 1, "exit %d:\n%s", rc, log);
    ck_assert_msg(strstr(log, "error: simulation failed at t = 0.99"), "%s", log);
    ck_assert_msg(strstr(log, "note: state set 1 of {vx, vy}") && strstr(log, "note: state set 2 of {x, y}"), "%s", log);
    ck_assert_msg(strstr(log, "every choice of states is (nearly) singular"), "%s", log);
    free(log);
}
END_TEST

int main(void) {
    Suite *s = suite_create("mechanisms");
    TCase *tc = tcase_create("state-sets");
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, pendulum_60_degrees);
    tcase_add_test(tc, pendulum_horizontal);
    tcase_add_test(tc, pendulum_looping);
    tcase_add_test(tc, spherical_pendulum);
    tcase_add_test(tc, double_pendulum);
    tcase_add_test(tc, crank_slider_dead_centre);
    tcase_add_test(tc, fourbar_dead_centre);
    tcase_add_test(tc, andrews);
    tcase_add_test(tc, singular_configuration_named);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
