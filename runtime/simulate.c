/*
 * simulate.c -- the two entry points, dyrt_main and dyrt_simulate, and the
 * order of the phases: check the descriptor, resolve settings, parameters,
 * output set-up (columns, times, header), initialization, IDA set-up,
 * integration, statistics, clean-up.  Each phase prints its own error and
 * returns a DYRT_EXIT_* status; the first nonzero one ends the run.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "dyrt_internal.h"

#define DYRT_DEFAULT_RTOL 1e-6
#define DYRT_DEFAULT_ATOL 1e-8

static double pick(const DyrtOptions *o, unsigned bit, double given, double dflt)
{
    return (o->given & bit) ? given : dflt;
}

/* Command line over model defaults over built-in defaults. */
static int resolve_settings(DyrtRun *r)
{
    const DyrtOptions *o = r->o;
    const DyrtSettings *d = &r->m->defaults;
    double dspan = d->stop > d->start ? d->stop - d->start : 1.0;
    r->start = pick(o, DYRT_OPT_START, o->start, d->start);
    r->stop = pick(o, DYRT_OPT_STOP, o->stop, d->stop > d->start ? d->stop : d->start + 1.0);
    if (!(o->given & DYRT_OPT_STOP) && r->stop <= r->start)
        r->stop = r->start + dspan;
    r->rtol = pick(o, DYRT_OPT_RTOL, o->rtol, d->rtol > 0 ? d->rtol : DYRT_DEFAULT_RTOL);
    r->atol = pick(o, DYRT_OPT_ATOL, o->atol, d->atol > 0 ? d->atol : DYRT_DEFAULT_ATOL);
    r->dtmax = pick(o, DYRT_OPT_DTMAX, o->dtmax, d->dtmax > 0 ? d->dtmax : 0.0);
    if (r->stop < r->start) {
        dyrt_error("stop time %.17g is before start time %.17g", r->stop, r->start);
        return DYRT_EXIT_USER;
    }
    if (r->rtol == 0 && r->atol == 0) {
        dyrt_error("--rtol and --atol cannot both be zero");
        return DYRT_EXIT_USER;
    }
    return 0;
}

static void run_free(DyrtRun *r)
{
    dyrt_integrate_free(r);
    dyrt_output_close(r);
    free(r->p);
    free(r->gbuf);
    free(r->zc_last);
    free(r->ytmp);
    free(r->yptmp);
    free(r->given);
    free(r->y0);
    free(r->yp0);
    free(r->touts);
    free(r->cols);
    free(r->outbuf);
    free(r->rowbuf);
}

/* Parameters, output and settings; then --list-params may stop the run. */
static int prepare(DyrtRun *r, int *listed)
{
    int rc = resolve_settings(r);
    if (!rc)
        rc = dyrt_params_setup(r);
    if (!rc && r->o->list_params) {
        dyrt_params_list(r, stdout);
        *listed = 1;
        return 0;
    }
    if (!rc)
        rc = dyrt_params_check(r);
    if (!rc)
        rc = dyrt_output_setup(r);
    return rc;
}

static int run(DyrtRun *r)
{
    int listed = 0;
    double t = dyrt_now();
    int rc = prepare(r, &listed);
    if (rc || listed)
        return rc;
    r->stats.t_setup = dyrt_now() - t;
    t = dyrt_now();
    rc = dyrt_initialize(r);
    r->stats.t_init = dyrt_now() - t;
    if (!rc)
        rc = dyrt_integrate_setup(r);
    t = dyrt_now();
    if (!rc)
        rc = dyrt_integrate(r);
    r->stats.t_integrate = dyrt_now() - t - r->stats.t_output;
    if (r->o->verbose)
        dyrt_integrate_stats(r, stderr);
    if (r->o->plot && r->rows > 0 && r->out && fflush(r->out) == 0) {
        int prc = dyrt_plot(r, r->out_path);  /* also after a failure: the rows so far */
        if (!rc)
            rc = prc;
    }
    return rc;
}

int dyrt_simulate(const DyrtModel *m, const DyrtOptions *o)
{
    int rc = dyrt_check_model(m);
    if (rc)
        return rc;
    if (o->help) {
        dyrt_usage(stdout, m->name, m);
        return 0;
    }
    DyrtRun r = {.m = m, .o = o, .bad_res = -1};
    r.t_begin = dyrt_now();
    r.tty = isatty(2);
    rc = run(&r);
    run_free(&r);
    return rc;
}

int dyrt_main(const DyrtModel *m, int argc, char **argv)
{
    DyrtOptions o;
    dyrt_options_init(&o);
    int rc = dyrt_options_parse(&o, argc, argv);
    if (!rc && o.help) {
        dyrt_usage(stdout, argc > 0 ? argv[0] : NULL, m);
    } else if (!rc) {
        rc = dyrt_simulate(m, &o);
    }
    dyrt_options_free(&o);
    return rc;
}
