/*
 * test_runtime.c -- unit tests of libdyadrt with hand-coded DyrtModel
 * descriptors (what the code generator will emit), checked against closed
 * forms with tolerances, plus the failure paths: exit status, message and
 * the rows kept.  Each test runs dyrt_main with an argv array, `-o` to a
 * temporary file and stderr captured, then reads the CSV back.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "dyadrt.h"

/* ---------------------------------------------------------------- harness */

#define MAXROWS 2100
#define MAXCOLS 160

typedef struct Csv {
    int ncols, nrows;
    char names[MAXCOLS][32];
    double v[MAXROWS][MAXCOLS];
} Csv;

typedef struct Result {
    int status;
    char err[8192];            /* captured stderr */
    char out[8192];            /* captured stdout */
    Csv csv;
} Result;

static Result res;             /* big: keep it off the stack */

static void slurp(int fd, char *buf, size_t size)
{
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, size - 1);
    buf[n > 0 ? n : 0] = '\0';
}

static void read_csv(const char *path, Csv *c)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    static char line[65536];
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        for (char *tok = strtok(line, ","); tok && c->ncols < MAXCOLS; tok = strtok(NULL, ","))
            snprintf(c->names[c->ncols++], sizeof c->names[0], "%s", tok);
    }
    while (c->nrows < MAXROWS && fgets(line, sizeof line, f)) {
        char *s = line;
        for (int k = 0; k < c->ncols; k++) {
            c->v[c->nrows][k] = strtod(s, &s);
            if (*s == ',')
                s++;
        }
        c->nrows++;
    }
    fclose(f);
}

static int col(const Csv *c, const char *name)
{
    for (int k = 0; k < c->ncols; k++)
        if (strcmp(c->names[k], name) == 0)
            return k;
    ck_abort_msg("no column %s", name);
    return -1;
}

/* Run dyrt_main(m, "sim -o <tmp> <args>") with stdout/stderr captured. */
static Result *run(const DyrtModel *m, const char *args)
{
    char csv[] = "/tmp/dyrt_test_XXXXXX", errf[] = "/tmp/dyrt_err_XXXXXX", outf[] = "/tmp/dyrt_out_XXXXXX";
    int cfd = mkstemp(csv), efd = mkstemp(errf), ofd = mkstemp(outf);
    ck_assert(cfd >= 0 && efd >= 0 && ofd >= 0);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", args);
    char *argv[64] = {"sim", "-o", csv};
    int argc = 3;
    for (char *tok = strtok(buf, " "); tok && argc < 60; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    fflush(stdout);
    fflush(stderr);
    int save_err = dup(2), save_out = dup(1);
    dup2(efd, 2);
    dup2(ofd, 1);
    res.status = dyrt_main(m, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(save_err, 2);
    dup2(save_out, 1);
    close(save_err);
    close(save_out);
    slurp(efd, res.err, sizeof res.err);
    slurp(ofd, res.out, sizeof res.out);
    read_csv(csv, &res.csv);
    if (getenv("DYRT_TEST_VERBOSE"))   /* show what a user would see */
        fprintf(stderr, "$ %s %s\n%s", m->name, args, res.err);
    close(cfd);
    close(efd);
    close(ofd);
    unlink(csv);
    unlink(errf);
    unlink(outf);
    return &res;
}

#define ASSERT_ERR(r, text) \
    ck_assert_msg(strstr((r)->err, (text)) != NULL, "stderr lacks '%s':\n%s", (text), (r)->err)

/* ------------------------------------------ model 1: y' = -k y, y(0) = 1 */
/* p = [k, k2 = 2k (dependent), fixed (final), ymin (assert threshold)] */

static const char *const decay_y[] = {"y"};
static const unsigned char decay_diff[] = {1};
static const char *const decay_pn[] = {"k", "k2", "fixed", "ymin"};
static const unsigned char decay_pf[] = {0, DYRT_PARAM_DEPENDENT, DYRT_PARAM_FINAL, 0};
static const char *const decay_out[] = {"y", "der(y)", "k2"};
static const char *const decay_msgs[] = {"y must stay above ymin"};
static const int32_t col1[] = {0, 1}, row1[] = {0};

static void decay_defaults(double *p, const unsigned char *given)
{
    if (!given[0]) p[0] = 2.0;
    if (!given[1]) p[1] = 2.0 * p[0];
    if (!given[2]) p[2] = 3.0;
    if (!given[3]) p[3] = -1.0;
}

static void decay_start(double t0, const double *p, double *y, double *yp)
{
    (void)t0;
    y[0] = 1.0;
    yp[0] = -p[0];
}

static int decay_res(double t, const double *y, const double *yp, const double *p, double *r)
{
    (void)t;
    r[0] = yp[0] + p[0] * y[0];
    return 0;
}

static int decay_jac(double t, const double *y, const double *yp, const double *p, double cj,
                     double *v)
{
    (void)t; (void)y; (void)yp;
    v[0] = cj + p[0];
    return 0;
}

static void decay_outputs(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t;
    o[0] = y[0];
    o[1] = yp[0];
    o[2] = p[1];
}

static int decay_asserts(double t, const double *y, const double *yp, const double *p)
{
    (void)t; (void)yp;
    return y[0] < p[3] ? 1 : 0;
}

static const DyrtModel decay = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.Decay",
    .ny = 1, .np = 4, .nout = 3, .nz = 0, .nassert = 1,
    .y_names = decay_y, .y_is_diff = decay_diff,
    .param_names = decay_pn, .param_flags = decay_pf,
    .out_names = decay_out, .assert_messages = decay_msgs,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = decay_defaults, .start = decay_start, .residual = decay_res,
    .jacobian = decay_jac, .outputs = decay_outputs, .check_asserts = decay_asserts,
    .defaults = {.start = 0, .stop = 1, .interval = 0.1, .rtol = 1e-6, .atol = 1e-8},
};

/* runtime/util.c's dense LU (the block-wise solves of initblock.c and
 * me.c, the clocks' Newton): declared here, internal to the runtime. */
int dyrt_lu(double *a, int32_t n, int32_t *piv);
void dyrt_lu_solve(const double *a, int32_t n, const int32_t *piv, double *b);

/* A x = b for a matrix that needs row interchanges at several steps (zero
 * and small diagonal entries), checked by multiplying back: the
 * interchanges must all reach b before the substitutions. */
START_TEST(dense_lu_pivoting)
{
    enum { N = 7 };
    double a[N * N], f[N * N], b[N], x[N];
    int32_t piv[N];
    unsigned seed = 12345;
    for (int k = 0; k < N * N; k++) {
        seed = seed * 1103515245u + 12345u;
        a[k] = (double)((seed >> 16) % 2001) / 100.0 - 10.0;
    }
    for (int i = 0; i < N; i++) {
        a[i * N + i] = i % 2 ? 0.0 : 1e-3;    /* column-major: a[col * N + row] */
        b[i] = x[i] = 1.0 + i;
    }
    memcpy(f, a, sizeof a);
    ck_assert_int_eq(dyrt_lu(f, N, piv), 1);
    int swaps = 0;
    for (int i = 0; i < N; i++)
        swaps += piv[i] != i;
    ck_assert_int_ge(swaps, 2);
    dyrt_lu_solve(f, N, piv, x);
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int j = 0; j < N; j++)
            s += a[j * N + i] * x[j];
        ck_assert_double_eq_tol(s, b[i], 1e-12 * (1 + fabs(b[i])));
    }
}
END_TEST

START_TEST(decay_closed_form)
{
    Result *r = run(&decay, "--rtol 1e-8 --atol 1e-12");
    ck_assert_int_eq(r->status, 0);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 11);
    ck_assert_str_eq(c->names[0], "time");
    int y = col(c, "y");
    double maxerr = 0;
    for (int i = 0; i < c->nrows; i++)
        maxerr = fmax(maxerr, fabs(c->v[i][y] - exp(-2.0 * c->v[i][0])));
    fprintf(stderr, "decay: max |y - exp(-2t)| = %.3g\n", maxerr);
    ck_assert_double_eq(c->v[10][0], 1.0);     /* last row exactly at stop */
    ck_assert_double_eq(c->v[3][0], 0.30000000000000004); /* 3 * 0.1, no drift */
    ck_assert_msg(maxerr < 1e-6, "max error %g", maxerr);
}
END_TEST

START_TEST(decay_param_override_and_dependent)
{
    Result *r = run(&decay, "-p k=3 --rtol 1e-8 --atol 1e-12 --stop 2 --interval 0.5");
    ck_assert_int_eq(r->status, 0);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 5);
    double err = fabs(c->v[4][col(c, "y")] - exp(-6.0));
    fprintf(stderr, "decay k=3: |y(2) - exp(-6)| = %.3g\n", err);
    ck_assert(err < 1e-7);
    ck_assert_double_eq(c->v[4][col(c, "k2")], 6.0);   /* dependent follows k */
    ck_assert(fabs(c->v[4][col(c, "der(y)")] + 3 * exp(-6.0)) < 1e-6);
}
END_TEST

START_TEST(decay_initial_override)
{
    Result *r = run(&decay, "--initial y=2 --rtol 1e-8 --atol 1e-12");
    ck_assert_int_eq(r->status, 0);
    double err = fabs(r->csv.v[10][1] - 2 * exp(-2.0));
    ck_assert_msg(err < 2e-6, "err %g", err);
}
END_TEST

START_TEST(decay_vars_and_saveat)
{
    Result *r = run(&decay, "--vars k2,y --saveat 0.25,0.5,1");
    ck_assert_int_eq(r->status, 0);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->ncols, 3);
    ck_assert_str_eq(c->names[1], "k2");
    ck_assert_str_eq(c->names[2], "y");
    ck_assert_int_eq(c->nrows, 3);
    ck_assert_double_eq(c->v[0][0], 0.25);
    ck_assert(fabs(c->v[1][2] - exp(-1.0)) < 1e-5);
}
END_TEST

START_TEST(decay_interval_not_dividing)
{
    Result *r = run(&decay, "--stop 1 --interval 0.3");
    ck_assert_int_eq(r->status, 0);
    ck_assert_int_eq(r->csv.nrows, 5);        /* 0 .3 .6 .9 1 */
    ck_assert_double_eq(r->csv.v[4][0], 1.0);
}
END_TEST

START_TEST(decay_assertion_fails)
{
    Result *r = run(&decay, "-p ymin=0.5");
    ck_assert_int_eq(r->status, 1);
    ASSERT_ERR(r, "error: assertion failed at t = 0.4: y must stay above ymin");
    ck_assert_int_eq(r->csv.nrows, 5);        /* rows 0 .. 0.4 kept */
}
END_TEST

START_TEST(decay_list_params)
{
    Result *r = run(&decay, "--list-params -p k=5");
    ck_assert_int_eq(r->status, 0);
    ck_assert_msg(strstr(r->out, "k2") && strstr(r->out, "10") && strstr(r->out, "final"),
                  "%s", r->out);
}
END_TEST

START_TEST(decay_verbose_stats)
{
    Result *r = run(&decay, "-v");
    ck_assert_int_eq(r->status, 0);
    ASSERT_ERR(r, "steps");
    ASSERT_ERR(r, "Jacobian evals");
}
END_TEST

/* ------------------------------------------------------- CLI error paths */

static const struct {
    const char *args, *message;
} bad_cli[] = {
    {"--stop abc", "error: --stop: 'abc' is not a number"},
    {"-p kk=1", "error: unknown parameter 'kk'; did you mean 'k'?"},
    {"-p fixed=1", "error: parameter 'fixed' is final"},
    {"--start 2 --stop 1", "error: --stop (1) is before --start (2)"},
    {"--rtol -1", "error: --rtol must not be negative"},
    {"--vars y,dery", "error: --vars: unknown variable 'dery'; did you mean 'der(y)'?"},
    {"--bogus", "error: unknown option '--bogus'"},
    {"-p k", "error: -p: expected NAME=VALUE"},
    {"--interval 0", "error: --interval must be positive"},
    {"--saveat 0.5,0.2", "error: --saveat: times must be strictly increasing"},
    {"--saveat 3", "error: --saveat: times must lie within"},
    {"--initial x=1", "error: unknown variable for --initial 'x'"},
    {"--stop", "error: option --stop needs a value"},
    {"--stop -1", "error: stop time -1 is before start time 0"},
};

START_TEST(cli_errors)
{
    const char *args = bad_cli[_i].args;
    Result *r = run(&decay, args);
    ck_assert_msg(r->status == 1, "%s: status %d", args, r->status);
    ASSERT_ERR(r, bad_cli[_i].message);
}
END_TEST

START_TEST(start_after_default_stop)
{
    Result *r = run(&decay, "--start 5");  /* default stop 1 < 5: stop = 5 + 1 */
    ck_assert_int_eq(r->status, 0);
    ck_assert_double_eq(r->csv.v[0][0], 5.0);
    ck_assert_double_eq(r->csv.v[r->csv.nrows - 1][0], 6.0);
}
END_TEST

START_TEST(cli_arity)
{
    ck_assert_int_eq(dyrt_option_arity("--stop"), 1);
    ck_assert_int_eq(dyrt_option_arity("--stop=3"), 0);
    ck_assert_int_eq(dyrt_option_arity("-p"), 1);
    ck_assert_int_eq(dyrt_option_arity("-pk=1"), 0);
    ck_assert_int_eq(dyrt_option_arity("-v"), 0);
    ck_assert_int_eq(dyrt_option_arity("--model"), -1);
}
END_TEST

START_TEST(cli_equals_form)
{
    Result *r = run(&decay, "--stop=2 --interval=1 -pk=1");
    ck_assert_int_eq(r->status, 0);
    ck_assert_int_eq(r->csv.nrows, 3);
    ck_assert(fabs(r->csv.v[2][1] - exp(-2.0)) < 1e-5);
}
END_TEST

/* ------------------ model 2: index-1 DAE  x' = z, 0 = z + x; x(0) = 1 */

static const char *const dae_y[] = {"x", "z"};
static const unsigned char dae_diff[] = {1, 0};
static const char *const dae_out[] = {"x", "z"};
static const int32_t dae_col[] = {0, 2, 4}, dae_row[] = {0, 1, 0, 1};

static void no_params(double *p, const unsigned char *given)
{
    (void)p; (void)given;
}

static void dae_start(double t0, const double *p, double *y, double *yp)
{
    (void)t0; (void)p;
    y[0] = 1.0;
    y[1] = 0.0;                /* a bad guess: IDACalcIC must find z = -1 */
    yp[0] = yp[1] = 0.0;
}

static int dae_res(double t, const double *y, const double *yp, const double *p, double *r)
{
    (void)t; (void)p;
    r[0] = yp[0] - y[1];
    r[1] = y[1] + y[0];
    return 0;
}

static int dae_jac(double t, const double *y, const double *yp, const double *p, double cj,
                   double *v)
{
    (void)t; (void)y; (void)yp; (void)p;
    v[0] = cj;                 /* dr0/dx */
    v[1] = 1.0;                /* dr1/dx */
    v[2] = -1.0;               /* dr0/dz */
    v[3] = 1.0;                /* dr1/dz */
    return 0;
}

static void two_outputs(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t; (void)yp; (void)p;
    o[0] = y[0];
    o[1] = y[1];
}

static const DyrtModel dae = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.DAE",
    .ny = 2, .nout = 2,
    .y_names = dae_y, .y_is_diff = dae_diff, .out_names = dae_out,
    .jac_nnz = 4, .jac_colptr = dae_col, .jac_rowidx = dae_row,
    .param_defaults = no_params, .start = dae_start, .residual = dae_res,
    .jacobian = dae_jac, .outputs = two_outputs,
    .defaults = {.stop = 1, .interval = 0.25},
};

START_TEST(dae_index1)
{
    Result *r = run(&dae, "--rtol 1e-8 --atol 1e-12");
    ck_assert_int_eq(r->status, 0);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 5);
    double ex = fabs(c->v[4][1] - exp(-1.0)), ez = fabs(c->v[4][2] + exp(-1.0));
    double e0 = fabs(c->v[0][2] + 1.0);
    fprintf(stderr, "dae: |x(1)-e^-1| = %.3g, |z(1)+e^-1| = %.3g, |z(0)+1| = %.3g\n", ex, ez, e0);
    ck_assert(ex < 1e-6 && ez < 1e-6 && e0 < 1e-8);
}
END_TEST

/* -------------------- model 3: y' = -y, but the residual is NaN after 0.5 */

static int nan_res(double t, const double *y, const double *yp, const double *p, double *r)
{
    (void)p;
    r[0] = t > 0.55 ? NAN : yp[0] + y[0];
    return 0;
}

static int unit_jac(double t, const double *y, const double *yp, const double *p, double cj,
                    double *v)
{
    (void)t; (void)y; (void)yp; (void)p;
    v[0] = cj + 1.0;
    return 0;
}

static void unit_start(double t0, const double *p, double *y, double *yp)
{
    (void)t0; (void)p;
    y[0] = 1.0;
    yp[0] = -1.0;
}

static void one_output(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t; (void)yp; (void)p;
    o[0] = y[0];
}

static const DyrtModel nanmodel = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.NaN",
    .ny = 1, .nout = 1,
    .y_names = decay_y, .y_is_diff = decay_diff, .out_names = decay_out,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = no_params, .start = unit_start, .residual = nan_res,
    .jacobian = unit_jac, .outputs = one_output,
    .defaults = {.stop = 1, .interval = 0.1},
};

START_TEST(nan_failure_keeps_rows)
{
    Result *r = run(&nanmodel, "");
    ck_assert_int_eq(r->status, 1);
    ASSERT_ERR(r, "error: simulation failed at t = ");
    ASSERT_ERR(r, "residual 0 was not finite");
    ASSERT_ERR(r, "last step size h = ");
    ck_assert_msg(r->csv.nrows == 6, "rows %d", r->csv.nrows); /* 0 .. 0.5 */
    ck_assert(fabs(r->csv.v[5][1] - exp(-0.5)) < 1e-4);
}
END_TEST

/* ---------- model 4: zero crossing.  y' = -2 while y > 0.5, else y' = -1 */

static int switch_res(double t, const double *y, const double *yp, const double *p, double *r)
{
    (void)t; (void)p;
    r[0] = yp[0] + (y[0] > 0.5 ? 2.0 : 1.0);
    return 0;
}

static int switch_jac(double t, const double *y, const double *yp, const double *p, double cj,
                      double *v)
{
    (void)t; (void)y; (void)yp; (void)p;
    v[0] = cj;
    return 0;
}

static void switch_g(double t, const double *y, const double *yp, const double *p, double *g)
{
    (void)t; (void)yp; (void)p;
    g[0] = y[0] - 0.5;
}

static const DyrtModel switcher = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.Switch",
    .ny = 1, .nout = 1, .nz = 1,
    .y_names = decay_y, .y_is_diff = decay_diff, .out_names = decay_out,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = no_params, .start = unit_start, .residual = switch_res,
    .jacobian = switch_jac, .outputs = one_output, .zero_crossings = switch_g,
    .defaults = {.stop = 1, .interval = 0.125},
};

START_TEST(zero_crossing)
{
    Result *r = run(&switcher, "-v --rtol 1e-8 --atol 1e-10");
    ck_assert_int_eq(r->status, 0);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 9);
    double maxerr = 0;
    for (int i = 0; i < c->nrows; i++) {
        double t = c->v[i][0], exact = t <= 0.25 ? 1 - 2 * t : 0.5 - (t - 0.25);
        maxerr = fmax(maxerr, fabs(c->v[i][1] - exact));
    }
    fprintf(stderr, "switch: max error %.3g\n", maxerr);
    ck_assert_msg(maxerr < 1e-6, "max error %g", maxerr);
    ASSERT_ERR(r, "events 1,");
}
END_TEST

/* ---- model 4b: frozen relations (nmodes).  y' = 1 - m0 with g0 = y - 0.5:
 * y rises to 0.5, the rising root sets m0 = 1 and y stays.  g1 = t is 0 at
 * the start: the look-ahead must give m1 = 1 (output 2 reads it). */

static const char *const mode_out[] = {"y", "m1"};

static int mode_res(double t, const double *y, const double *yp, const double *p, double *r)
{
    (void)t; (void)y;
    r[0] = yp[0] - (1.0 - p[0]);
    return 0;
}

static int mode_jac(double t, const double *y, const double *yp, const double *p, double cj,
                    double *v)
{
    (void)t; (void)y; (void)yp; (void)p;
    v[0] = cj;
    return 0;
}

static void mode_g(double t, const double *y, const double *yp, const double *p, double *g)
{
    (void)yp; (void)p;
    g[0] = y[0] - 0.5;
    g[1] = t;
}

static void mode_start(double t0, const double *p, double *y, double *yp)
{
    (void)t0; (void)p;
    y[0] = 0;
    yp[0] = 1;
}

static void mode_outputs(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t; (void)yp;
    o[0] = y[0];
    o[1] = p[1];
}

static const DyrtModel moded = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.Modes",
    .ny = 1, .nout = 2, .nz = 2,
    .y_names = decay_y, .y_is_diff = decay_diff, .out_names = mode_out,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = no_params, .start = mode_start, .residual = mode_res,
    .jacobian = mode_jac, .outputs = mode_outputs, .zero_crossings = mode_g,
    .defaults = {.stop = 1, .interval = 0.125},
    .nmodes = 2,
};

START_TEST(frozen_modes)
{
    Result *r = run(&moded, "-v --rtol 1e-8 --atol 1e-10");
    ck_assert_msg(r->status == 0, "%s", r->err);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 9);
    double maxerr = 0;
    for (int i = 0; i < c->nrows; i++) {
        double t = c->v[i][0];
        maxerr = fmax(maxerr, fabs(c->v[i][1] - fmin(t, 0.5)));
        ck_assert_double_eq(c->v[i][2], 1.0);
    }
    fprintf(stderr, "modes: max |y - min(t, 0.5)| = %.3g\n", maxerr);
    ck_assert_msg(maxerr < 1e-7, "max error %g", maxerr);
    ASSERT_ERR(r, "events 1,");
    ASSERT_ERR(r, "event at t = 0.5");
}
END_TEST

/* ---- model 5: init system with a missing parameter.  y' = -k y, y(0) = 1,
 * k missing, determined by the initial relation y'(0) = -3.
 * z = [y, y', k];  r = [y - 1, y' + k y, y' + 3]. */

static const char *const miss_pn[] = {"k"};
static const unsigned char miss_pf[] = {DYRT_PARAM_MISSING};
static const char *const miss_zn[] = {"y", "der(y)", "k"};
static const int32_t miss_col[] = {0, 2, 4, 5}, miss_row[] = {0, 1, 1, 2, 1};
static const char *const miss_out[] = {"y", "k"};

static void miss_defaults(double *p, const unsigned char *given)
{
    if (!given[0]) p[0] = NAN;
}

static int miss_ires(double t, const double *z, const double *p, double *r)
{
    (void)t; (void)p;
    r[0] = z[0] - 1.0;
    r[1] = z[1] + z[2] * z[0];
    r[2] = z[1] + 3.0;
    return 0;
}

static int miss_ijac(double t, const double *z, const double *p, double *v)
{
    (void)t; (void)p;
    v[0] = 1.0;                /* col y:  r0, r1 */
    v[1] = z[2];
    v[2] = 1.0;                /* col y': r1, r2 */
    v[3] = 1.0;
    v[4] = z[0];               /* col k:  r1 */
    return 0;
}

static void miss_guess(double t, const double *p, double *z)
{
    (void)t; (void)p;
    z[0] = 0.0;
    z[1] = 0.0;
    z[2] = 1.0;
}

static void miss_finish(double t, const double *z, double *p, double *y, double *yp)
{
    (void)t;
    p[0] = z[2];
    y[0] = z[0];
    yp[0] = z[1];
}

static void miss_outputs(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t; (void)yp;
    o[0] = y[0];
    o[1] = p[0];
}

static const DyrtModel missing = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.Missing",
    .ny = 1, .np = 1, .nout = 2,
    .y_names = decay_y, .y_is_diff = decay_diff,
    .param_names = miss_pn, .param_flags = miss_pf, .out_names = miss_out,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = miss_defaults, .start = decay_start, .residual = decay_res,
    .jacobian = decay_jac, .outputs = miss_outputs,
    .init_n = 3, .init_nnz = 5, .init_colptr = miss_col, .init_rowidx = miss_row,
    .init_names = miss_zn, .init_residual = miss_ires, .init_jacobian = miss_ijac,
    .init_guess = miss_guess, .init_finish = miss_finish,
    .defaults = {.stop = 1, .interval = 0.5},
};

START_TEST(init_missing_parameter)
{
    Result *r = run(&missing, "--rtol 1e-8 --atol 1e-12");
    ck_assert_msg(r->status == 0, "%s", r->err);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 3);
    double ek = fabs(c->v[0][col(c, "k")] - 3.0), ey = fabs(c->v[2][1] - exp(-3.0));
    fprintf(stderr, "missing: |k-3| = %.3g, |y(1)-exp(-3)| = %.3g\n", ek, ey);
    ck_assert(ek < 1e-12 && ey < 1e-6);
}
END_TEST

START_TEST(init_missing_parameter_not_settable)
{
    Result *r = run(&missing, "-p k=2");
    ck_assert_int_eq(r->status, 1);
    ASSERT_ERR(r, "error: parameter 'k' is missing");
    r = run(&missing, "--initial y=2");
    ck_assert_int_eq(r->status, 1);
    ASSERT_ERR(r, "error: --initial y: not supported");
}
END_TEST

/* ---- model 5b: the same with the ABI-2 tables: --initial y=V replaces
 * the relation y(0) = 1 (init row 0, z 0), so k = 3/V; messages quote the
 * equations. */

static const int32_t miss_irow[] = {0}, miss_iz[] = {0};
static const char *const miss_eqs[] = {"initial y = 1", "der(y) = -k*y", "initial der(y) = -3"};

static const DyrtModel missing2 = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.Missing2",
    .ny = 1, .np = 1, .nout = 2,
    .y_names = decay_y, .y_is_diff = decay_diff,
    .param_names = miss_pn, .param_flags = miss_pf, .out_names = miss_out,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = miss_defaults, .start = decay_start, .residual = decay_res,
    .jacobian = decay_jac, .outputs = miss_outputs,
    .init_n = 3, .init_nnz = 5, .init_colptr = miss_col, .init_rowidx = miss_row,
    .init_names = miss_zn, .init_residual = miss_ires, .init_jacobian = miss_ijac,
    .init_guess = miss_guess, .init_finish = miss_finish,
    .defaults = {.stop = 1, .interval = 0.5},
    .init_eq_names = miss_eqs, .initial_row = miss_irow, .initial_z = miss_iz,
};

START_TEST(init_initial_override)
{
    Result *r = run(&missing2, "--rtol 1e-8 --atol 1e-12 --initial y=2");
    ck_assert_msg(r->status == 0, "%s", r->err);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 3);
    double y0 = c->v[0][col(c, "y")], k = c->v[0][col(c, "k")], y1 = c->v[2][col(c, "y")];
    fprintf(stderr, "--initial y=2: y(0) = %.17g, k = %.17g, |y(1) - 2 exp(-1.5)| = %.3g\n", y0, k,
            fabs(y1 - 2 * exp(-1.5)));
    ck_assert_double_eq_tol(y0, 2.0, 1e-14);
    ck_assert_double_eq_tol(k, 1.5, 1e-12);
    ck_assert_double_eq_tol(y1, 2 * exp(-1.5), 1e-6);
    /* without --initial the model's own relation holds */
    r = run(&missing2, "--rtol 1e-8 --atol 1e-12");
    ck_assert_msg(r->status == 0, "%s", r->err);
    ck_assert_double_eq_tol(r->csv.v[0][col(&r->csv, "k")], 3.0, 1e-12);
    r = run(&missing2, "--initial nope=1");
    ck_assert_int_eq(r->status, 1);
    ASSERT_ERR(r, "error: unknown variable for --initial 'nope'");
    /* y = 0 makes k free: a singular Jacobian, the message quotes equations */
    r = run(&missing2, "--initial y=0");
    ck_assert_int_eq(r->status, 1);
    ASSERT_ERR(r, "error: initialization failed: ");
    ASSERT_ERR(r, "`initial der(y) = -3`");
    ASSERT_ERR(r, "unknowns ");
}
END_TEST

/* ---- model 6: an initialization system without a solution: z^2 + 1 = 0 */

static const char *const bad_zn[] = {"y"};

static int bad_ires(double t, const double *z, const double *p, double *r)
{
    (void)t; (void)p;
    r[0] = z[0] * z[0] + 1.0;
    return 0;
}

static int bad_ijac(double t, const double *z, const double *p, double *v)
{
    (void)t; (void)p;
    v[0] = 2.0 * z[0];
    return 0;
}

static void bad_guess(double t, const double *p, double *z)
{
    (void)t; (void)p;
    z[0] = 0.7;
}

static void bad_finish(double t, const double *z, double *p, double *y, double *yp)
{
    (void)t; (void)p;
    y[0] = z[0];
    yp[0] = -z[0];
}

static const DyrtModel badinit = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.BadInit",
    .ny = 1, .nout = 1,
    .y_names = decay_y, .y_is_diff = decay_diff, .out_names = decay_out,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = no_params, .start = unit_start, .residual = nan_res,
    .jacobian = unit_jac, .outputs = one_output,
    .init_n = 1, .init_nnz = 1, .init_colptr = col1, .init_rowidx = row1,
    .init_names = bad_zn, .init_residual = bad_ires, .init_jacobian = bad_ijac,
    .init_guess = bad_guess, .init_finish = bad_finish,
    .defaults = {.stop = 1},
};

START_TEST(init_failure)
{
    Result *r = run(&badinit, "");
    ck_assert_int_eq(r->status, 1);
    ASSERT_ERR(r, "error: initialization failed: ");
    ASSERT_ERR(r, "largest residuals: equation 0 (r = ");
    ck_assert_int_eq(r->csv.nrows, 0);
}
END_TEST

/* ---- model 7: 150 independent decays, y_i' = -(1 + i/150) y_i: KLU path */

#define NBIG 150
static char big_names[NBIG][16];
static const char *big_y[NBIG];
static unsigned char big_diff[NBIG];
static int32_t big_col[NBIG + 1], big_row[NBIG];

static double big_rate(int i)
{
    return 1.0 + (double)i / NBIG;
}

static int big_res(double t, const double *y, const double *yp, const double *p, double *r)
{
    (void)t; (void)p;
    for (int i = 0; i < NBIG; i++)
        r[i] = yp[i] + big_rate(i) * y[i];
    return 0;
}

static int big_jac(double t, const double *y, const double *yp, const double *p, double cj,
                   double *v)
{
    (void)t; (void)y; (void)yp; (void)p;
    for (int i = 0; i < NBIG; i++)
        v[i] = cj + big_rate(i);
    return 0;
}

static void big_start(double t0, const double *p, double *y, double *yp)
{
    (void)t0; (void)p;
    for (int i = 0; i < NBIG; i++) {
        y[i] = 1.0;
        yp[i] = 0.0;           /* IDACalcIC computes y' */
    }
}

static void big_outputs(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t; (void)yp; (void)p;
    memcpy(o, y, sizeof(double) * NBIG);
}

static DyrtModel big = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.Big",
    .ny = NBIG, .nout = NBIG,
    .y_names = big_y, .y_is_diff = big_diff, .out_names = big_y,
    .jac_nnz = NBIG, .jac_colptr = big_col, .jac_rowidx = big_row,
    .param_defaults = no_params, .start = big_start, .residual = big_res,
    .jacobian = big_jac, .outputs = big_outputs,
    .defaults = {.stop = 1, .interval = 0.5},
};

START_TEST(sparse_klu)
{
    for (int i = 0; i < NBIG; i++) {
        snprintf(big_names[i], sizeof big_names[i], "y[%d]", i + 1);
        big_y[i] = big_names[i];
        big_diff[i] = 1;
        big_col[i] = i;
        big_row[i] = i;
    }
    big_col[NBIG] = NBIG;
    Result *r = run(&big, "-v --rtol 1e-8 --atol 1e-12");
    ck_assert_msg(r->status == 0, "%s", r->err);
    ASSERT_ERR(r, "KLU sparse");
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->ncols, NBIG + 1);
    double maxerr = 0;
    for (int i = 0; i < NBIG; i++)
        maxerr = fmax(maxerr, fabs(c->v[2][i + 1] - exp(-big_rate(i))));
    fprintf(stderr, "klu: max |y_i(1) - exp(-k_i)| = %.3g\n", maxerr);
    ck_assert(maxerr < 1e-6);
}
END_TEST

/* ---- model 8: a time event as a tstop.  y' = (t < 0.5 ? 0 : 1), y(0) = 0 */

static const double step_tstops[] = {0.5};

static int step_res(double t, const double *y, const double *yp, const double *p, double *r)
{
    (void)y; (void)p;
    r[0] = yp[0] - (t < 0.5 ? 0.0 : 1.0);
    return 0;
}

static void zero_start(double t0, const double *p, double *y, double *yp)
{
    (void)t0; (void)p;
    y[0] = 0.0;
    yp[0] = 0.0;
}

static const DyrtModel stepper = {
    .abi_version = DYRT_ABI_VERSION, .name = "Test.Step",
    .ny = 1, .nout = 1,
    .y_names = decay_y, .y_is_diff = decay_diff, .out_names = decay_out,
    .jac_nnz = 1, .jac_colptr = col1, .jac_rowidx = row1,
    .param_defaults = no_params, .start = zero_start, .residual = step_res,
    .jacobian = switch_jac, .outputs = one_output,
    .defaults = {.stop = 1, .interval = 0.25, .ntstops = 1, .tstops = step_tstops},
};

START_TEST(time_event_tstop)
{
    Result *r = run(&stepper, "-v --rtol 1e-8 --atol 1e-10");
    ck_assert_msg(r->status == 0, "%s", r->err);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, 5);
    double e1 = fabs(c->v[2][1]), e2 = fabs(c->v[4][1] - 0.5);
    fprintf(stderr, "tstop: |y(0.5)| = %.3g, |y(1) - 0.5| = %.3g\n", e1, e2);
    ck_assert(e1 < 1e-12 && e2 < 1e-8);
    ASSERT_ERR(r, "re-initializations 1,");
    r = run(&stepper, "-v --interval 0.3 --rtol 1e-8 --atol 1e-10"); /* tstop between rows */
    ck_assert_int_eq(r->csv.nrows, 5);
    ck_assert(fabs(r->csv.v[2][1] - 0.1) < 1e-8 && fabs(r->csv.v[4][1] - 0.5) < 1e-8);
    ASSERT_ERR(r, "re-initializations 1,");
}
END_TEST

/* ------------------------------------------------ malformed descriptor */

/* ---------------------------------------------- ABI 3 data tables */

/* The decay model with its data as tables: constant defaults k, fixed,
 * ymin in param_const (param_defaults computes only k2), y(0) = 1 in
 * start_y_const, and outputs y, der(y), k2 plus 1 - 2*y as out_copy rows
 * (the outputs function computes nothing). */
static void tdecay_defaults(double *p, const unsigned char *given)
{
    if (!given[1]) p[1] = 2.0 * p[0];
}

static void tdecay_start(double t0, const double *p, double *y, double *yp)
{
    (void)t0;
    yp[0] = -p[0];
    (void)y;
}

static void tdecay_outputs(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t; (void)y; (void)yp; (void)p; (void)o;
}

static const char *const tdecay_out[] = {"y", "der(y)", "k2", "lin"};
static const unsigned char tdecay_has[] = {1, 0, 1, 1};
static const double tdecay_pconst[] = {2.0, 0.0, 3.0, -1.0};
static const unsigned char tdecay_shas[] = {1};
static const double tdecay_y0[] = {1.0}, tdecay_yp0[] = {0.0};
static const int32_t tdecay_dest[] = {0, 1, 2, 3}, tdecay_index[] = {0, 0, 1, 0};
static const uint8_t tdecay_kind[] = {DYRT_SRC_Y, DYRT_SRC_YP, DYRT_SRC_P,
                                      DYRT_SRC_Y | DYRT_OP_NEG | DYRT_OP_SCALE | DYRT_OP_OFFSET};
static const double tdecay_scale[] = {0, 0, 0, 2.0}, tdecay_offset[] = {0, 0, 0, 1.0};

static DyrtModel tdecay(void)
{
    DyrtModel m = decay;
    m.nout = 4;
    m.out_names = tdecay_out;
    m.param_defaults = tdecay_defaults;
    m.start = tdecay_start;
    m.outputs = tdecay_outputs;
    m.nout_copy = 4;
    m.out_copy_dest = tdecay_dest;
    m.out_copy_kind = tdecay_kind;
    m.out_copy_index = tdecay_index;
    m.out_copy_scale = tdecay_scale;
    m.out_copy_offset = tdecay_offset;
    m.param_has_const = tdecay_has;
    m.param_const = tdecay_pconst;
    m.start_has_const = tdecay_shas;
    m.start_y_const = tdecay_y0;
    m.start_yp_const = tdecay_yp0;
    return m;
}

START_TEST(data_tables)
{
    Result *r0 = run(&decay, "-p k=3 --stop 2 --interval 0.5 -v");
    ck_assert_int_eq(r0->status, 0);
    ASSERT_ERR(r0, ", output ");           /* -v: output time apart */
    static Csv want;
    want = r0->csv;
    DyrtModel m = tdecay();
    Result *r = run(&m, "-p k=3 --stop 2 --interval 0.5");
    ck_assert_int_eq(r->status, 0);
    const Csv *c = &r->csv;
    ck_assert_int_eq(c->nrows, want.nrows);
    for (int i = 0; i < c->nrows; i++) {
        for (int k = 0; k < 4; k++)          /* time, y, der(y), k2: the same bits */
            ck_assert_double_eq(c->v[i][k], want.v[i][k]);
        volatile double v = -c->v[i][1] * 2.0;   /* volatile: never fused into an FMA */
        ck_assert_double_eq(c->v[i][4], v + 1.0);
    }
    ck_assert_double_eq(c->v[4][3], 6.0);    /* k2 = 2k with k given */
    Result *r2 = run(&m, "--stop 0.5 --interval 0.5");
    ck_assert_int_eq(r2->status, 0);
    ck_assert_double_eq(r2->csv.v[0][1], 1.0);  /* start_y_const */
    ck_assert_double_eq(r2->csv.v[0][3], 4.0);  /* k2 from the constant k = 2 */
}
END_TEST

/* --vars evaluates only what it writes: the model's outputs function
 * (counted) runs only when a requested column is not a copy; the values
 * are those of the full CSV either way.  Outputs: y, der(y) computed, k2
 * and 1 - 2y copies. */
static long mixed_calls;
static void mixed_outputs(double t, const double *y, const double *yp, const double *p, double *o)
{
    (void)t; (void)p;
    mixed_calls++;
    o[0] = y[0];
    o[1] = yp[0];
}

START_TEST(vars_evaluate_only_requested)
{
    DyrtModel m = tdecay();
    static const int32_t dest[] = {2, 3}, index[] = {1, 0};
    static const uint8_t kind[] = {DYRT_SRC_P, DYRT_SRC_Y | DYRT_OP_NEG | DYRT_OP_SCALE | DYRT_OP_OFFSET};
    static const double scale[] = {0, 2.0}, offset[] = {0, 1.0};
    m.outputs = mixed_outputs;
    m.nout_copy = 2;
    m.out_copy_dest = dest, m.out_copy_kind = kind, m.out_copy_index = index;
    m.out_copy_scale = scale, m.out_copy_offset = offset;
    static Csv all;
    mixed_calls = 0;
    Result *r = run(&m, "--stop 1 --interval 0.25");
    ck_assert_int_eq(r->status, 0);
    ck_assert_int_eq(mixed_calls, 5);
    all = r->csv;
    mixed_calls = 0;
    r = run(&m, "--stop 1 --interval 0.25 --vars lin,k2");   /* copies only */
    ck_assert_int_eq(r->status, 0);
    ck_assert_int_eq(mixed_calls, 0);
    for (int i = 0; i < 5; i++) {
        ck_assert_double_eq(r->csv.v[i][1], all.v[i][4]);
        ck_assert_double_eq(r->csv.v[i][2], all.v[i][3]);
    }
    r = run(&m, "--stop 1 --interval 0.25 --vars der(y),lin");   /* one computed */
    ck_assert_int_eq(r->status, 0);
    ck_assert_int_eq(mixed_calls, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_double_eq(r->csv.v[i][1], all.v[i][2]);
        ck_assert_double_eq(r->csv.v[i][2], all.v[i][4]);
    }
}
END_TEST

START_TEST(bad_copy_table)
{
    DyrtModel m = tdecay();
    static const int32_t bad_dest[] = {0, 1, 2, 4};   /* column 4 of 4 */
    m.out_copy_dest = bad_dest;
    Result *r = run(&m, "");
    ck_assert_int_eq(r->status, 2);
    ASSERT_ERR(r, "malformed output copy or constant tables");
}
END_TEST

START_TEST(bad_descriptor)
{
    DyrtModel m = decay;
    m.abi_version = 99;
    Result *r = run(&m, "");
    ck_assert_int_eq(r->status, 2);
    ASSERT_ERR(r, "error: internal: bad model descriptor");
}
END_TEST

/* ------------------------------------------- the handle (dyrt_create ...) */

/* Errors of the handle go to stderr; keep the test log readable. */
static int quiet(int on)
{
    static int saved = -1;
    fflush(stderr);
    if (on) {
        saved = dup(2);
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        close(fd);
    } else if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
        saved = -1;
    }
    return 0;
}

/* Stepping by hand gives the closed form, outputs by name and index. */
START_TEST(handle_closed_form)
{
    DyrtSim *s = dyrt_create(&decay);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(dyrt_set_tolerances(s, 1e-9, 1e-12), 0);
    ck_assert_int_eq(dyrt_set_param(s, "k", 3.0), 0);
    ck_assert_int_eq(dyrt_init(s, 0.25), 0);
    ck_assert_double_eq(dyrt_time(s), 0.0);
    double y, k2;
    for (int i = 1; i <= 4; i++) {
        ck_assert_int_eq(dyrt_step_to(s, 0.25 * i), 0);
        ck_assert_double_eq(dyrt_time(s), 0.25 * i);
        ck_assert_int_eq(dyrt_get_by_name(s, "y", &y), 0);
        ck_assert_msg(fabs(y - exp(-3.0 * 0.25 * i)) < 1e-8, "y(%g) = %.17g", 0.25 * i, y);
        ck_assert_double_eq(dyrt_y(s)[0], y);
    }
    ck_assert_int_eq(dyrt_get(s, 2, &k2), 0);  /* the dependent default follows k */
    ck_assert_double_eq(k2, 6.0);
    ck_assert_int_eq(dyrt_find_output(s, "der(y)"), 1);
    ck_assert_int_eq(dyrt_find_output(s, "nope"), -1);
    dyrt_free(s);
}
END_TEST

/* The step budget of dyrt_step_to spans the restarts on the way: decay
 * with 50 time events in [0, 1] takes more than 60 steps in all (at least
 * one after each restart, several as the step grows again) though fewer
 * than 60 between two restarts; the default budget reaches 1 and agrees with
 * the closed form. */
static int steps_to_one(long budget, double *y)
{
    static double tstops[50];
    for (int i = 0; i < 50; i++)
        tstops[i] = (i + 1) / 51.0;
    DyrtModel m = decay;
    m.defaults.ntstops = 50;
    m.defaults.tstops = tstops;
    DyrtSim *s = dyrt_create(&m);
    int rc = budget ? dyrt_set_max_steps(s, budget) : 0;
    if (!rc)
        rc = dyrt_init(s, 1.0);
    if (!rc)
        rc = dyrt_step_to(s, 1.0);
    *y = rc ? NAN : dyrt_y(s)[0];
    dyrt_free(s);
    return rc;
}

START_TEST(handle_step_budget)
{
    double y = 0;
    ck_assert_int_eq(steps_to_one(0, &y), 0);
    ck_assert_msg(fabs(y - exp(-2.0)) < 1e-5, "y(1) = %.17g", y);
    quiet(1);
    int small = steps_to_one(60, &y), zero = steps_to_one(-1, &y);
    quiet(0);
    ck_assert_int_eq(small, DYRT_EXIT_USER);
    ck_assert_int_eq(zero, DYRT_EXIT_USER);  /* refused: at least 1 */
}
END_TEST

/* Calls out of sequence are refused with a status, never undefined. */
START_TEST(handle_sequence_errors)
{
    DyrtSim *s = dyrt_create(&decay);
    double v;
    quiet(1);
    int before_init = dyrt_step_to(s, 0.5);
    int get_before = dyrt_get(s, 0, &v);
    int bad_name = dyrt_set_param(s, "kk", 1.0);
    int final = dyrt_set_param(s, "fixed", 1.0);
    int bad_times = dyrt_set_times(s, 1.0, 0.5);
    int bad_tol = dyrt_set_tolerances(s, 0, 0);
    int init = dyrt_init(s, 1.0);
    int set_after = dyrt_set_param_index(s, 0, 1.0);
    int backwards = (dyrt_step_to(s, 0.5), dyrt_step_to(s, 0.25));
    int past_stop = dyrt_step_to(s, 2.0);
    int bad_index = dyrt_get(s, 7, &v);
    quiet(0);
    ck_assert_int_eq(before_init, DYRT_EXIT_INTERNAL);
    ck_assert_int_eq(get_before, DYRT_EXIT_INTERNAL);
    ck_assert_int_eq(bad_name, DYRT_EXIT_USER);
    ck_assert_int_eq(final, DYRT_EXIT_USER);
    ck_assert_int_eq(bad_times, DYRT_EXIT_USER);
    ck_assert_int_eq(bad_tol, DYRT_EXIT_USER);
    ck_assert_int_eq(init, 0);
    ck_assert_int_eq(set_after, DYRT_EXIT_INTERNAL);
    ck_assert_int_eq(backwards, DYRT_EXIT_INTERNAL);
    ck_assert_int_eq(past_stop, DYRT_EXIT_INTERNAL);
    ck_assert_int_eq(bad_index, DYRT_EXIT_INTERNAL);
    dyrt_free(s);
    DyrtModel bad = decay;
    bad.abi_version = 99;
    quiet(1);
    s = dyrt_create(&bad);
    quiet(0);
    ck_assert_ptr_null(s);
}
END_TEST

/* Two handles of one model interleaved: each gives the bits of dyrt_main's
 * CSV at its own parameter (nothing shared between handles). */
START_TEST(handle_interleaved)
{
    Result *r = run(&decay, "--rtol 1e-8 --atol 1e-12 -p k=0.5");
    ck_assert_int_eq(r->status, 0);
    DyrtSim *a = dyrt_create(&decay), *b = dyrt_create(&decay);
    dyrt_set_tolerances(a, 1e-8, 1e-12);
    dyrt_set_tolerances(b, 1e-8, 1e-12);
    dyrt_set_param(a, "k", 0.5);
    ck_assert_int_eq(dyrt_init(a, 0.1), 0);
    ck_assert_int_eq(dyrt_init(b, 0.1), 0);
    for (int i = 1; i < r->csv.nrows; i++) {
        double t = r->csv.v[i][0], ya, yb;
        ck_assert_int_eq(dyrt_step_to(a, t), 0);
        ck_assert_int_eq(dyrt_step_to(b, t), 0);
        dyrt_get(a, 0, &ya);
        dyrt_get(b, 0, &yb);
        ck_assert_double_eq(ya, r->csv.v[i][1]);
        ck_assert_msg(fabs(yb - exp(-2.0 * t)) < 1e-7, "b: y(%g) = %g", t, yb);
    }
    dyrt_free(a);
    dyrt_free(b);
}
END_TEST

/* A failed assertion names itself and ends the simulation: later steps
 * are refused. */
START_TEST(handle_assert_final)
{
    DyrtSim *s = dyrt_create(&decay);
    dyrt_set_param(s, "ymin", 0.5);
    ck_assert_int_eq(dyrt_init(s, 1.0), 0);
    ck_assert_int_eq(dyrt_check_asserts(s), 0);      /* y(0) = 1 >= 0.5 */
    ck_assert_int_eq(dyrt_step_to(s, 0.5), 0);
    quiet(1);
    int rc = dyrt_check_asserts(s);                  /* y(0.5) = e^-1 < 0.5 */
    int rc2 = dyrt_step_to(s, 1.0);
    quiet(0);
    ck_assert_int_eq(rc, DYRT_EXIT_USER);
    ck_assert_int_eq(dyrt_failed_assert(s), 1);
    ck_assert_int_eq(rc2, DYRT_EXIT_INTERNAL);
    dyrt_free(s);
}
END_TEST

static Suite *runtime_suite(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, decay_closed_form);
    tcase_add_test(tc, decay_param_override_and_dependent);
    tcase_add_test(tc, decay_initial_override);
    tcase_add_test(tc, decay_vars_and_saveat);
    tcase_add_test(tc, vars_evaluate_only_requested);
    tcase_add_test(tc, decay_interval_not_dividing);
    tcase_add_test(tc, decay_assertion_fails);
    tcase_add_test(tc, decay_list_params);
    tcase_add_test(tc, decay_verbose_stats);
    tcase_add_loop_test(tc, cli_errors, 0, (int)(sizeof bad_cli / sizeof bad_cli[0]));
    tcase_add_test(tc, start_after_default_stop);
    tcase_add_test(tc, cli_arity);
    tcase_add_test(tc, cli_equals_form);
    tcase_add_test(tc, dae_index1);
    tcase_add_test(tc, nan_failure_keeps_rows);
    tcase_add_test(tc, zero_crossing);
    tcase_add_test(tc, init_missing_parameter);
    tcase_add_test(tc, init_missing_parameter_not_settable);
    tcase_add_test(tc, init_failure);
    tcase_add_test(tc, frozen_modes);
    tcase_add_test(tc, init_initial_override);
    tcase_add_test(tc, sparse_klu);
    tcase_add_test(tc, dense_lu_pivoting);
    tcase_add_test(tc, time_event_tstop);
    tcase_add_test(tc, bad_descriptor);
    tcase_add_test(tc, data_tables);
    tcase_add_test(tc, handle_closed_form);
    tcase_add_test(tc, handle_sequence_errors);
    tcase_add_test(tc, handle_step_budget);
    tcase_add_test(tc, handle_interleaved);
    tcase_add_test(tc, handle_assert_final);
    tcase_add_test(tc, bad_copy_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = check_failures(runtime_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
