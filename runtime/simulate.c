/*
 * simulate.c -- the two entry points, dyrt_main and dyrt_simulate: the
 * CSV client of the simulation handle (sim.c).  The order of the phases:
 * create the handle (checks the descriptor), settings and parameters from
 * the command line, output set-up (columns, times, header), dyrt_init,
 * dyrt_step_to and one row per output time, statistics, plot, clean-up.
 * Each phase prints its own error and returns a DYRT_EXIT_* status; the
 * first nonzero one ends the run.
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dyrt_internal.h"

/* The command line's settings over the model's (dyrt_create's). */
static int apply_settings(DyrtSim *s, const DyrtOptions *o)
{
    const DyrtSettings *d = &s->m->defaults;
    double dspan = d->stop > d->start ? d->stop - d->start : 1.0;
    double start = (o->given & DYRT_OPT_START) ? o->start : s->start;
    double stop = (o->given & DYRT_OPT_STOP) ? o->stop : s->stop;
    if (!(o->given & DYRT_OPT_STOP) && stop <= start)
        stop = start + dspan;
    double rtol = (o->given & DYRT_OPT_RTOL) ? o->rtol : s->rtol;
    double atol = (o->given & DYRT_OPT_ATOL) ? o->atol : s->atol;
    int rc = dyrt_set_times(s, start, stop);
    if (!rc)
        rc = dyrt_set_tolerances(s, rtol, atol);
    if (!rc && (o->given & DYRT_OPT_DTMAX))
        rc = dyrt_set_max_step(s, o->dtmax);
    dyrt_set_verbose(s, o->verbose);
    return rc;
}

static int apply_params(DyrtSim *s, const DyrtOptions *o)
{
    for (int k = 0; k < o->nparams; k++) {
        int rc = dyrt_set_param(s, o->params[k].name, o->params[k].value);
        if (rc)
            return rc;
    }
    for (int k = 0; k < o->ninitials; k++) {
        int rc = dyrt_set_initial(s, o->initials[k].name, o->initials[k].value);
        if (rc)
            return rc;
    }
    if (o->input) {
        int rc = dyrt_set_input_table(s, o->input);
        if (rc)
            return rc;
    }
    return dyrt_eval_params(s);
}

static void run_free(DyrtRun *r)
{
    dyrt_output_close(r);
    free(r->touts);
    free(r->cols);
    free(r->col_copy);
    free(r->outbuf);
    free(r->tickbuf);
    free(r->rowbuf);
}

/* Settings, parameters and the output; then --list-params may stop the run. */
static int prepare(DyrtRun *r, int *listed)
{
    int rc = apply_settings(r->sim, r->o);
    if (!rc)
        rc = apply_params(r->sim, r->o);
    if (!rc && r->o->list_params) {
        dyrt_list_params(r->sim, stdout);
        *listed = 1;
        return 0;
    }
    if (!rc)
        rc = dyrt_params_check(r->sim);
    if (!rc)
        rc = dyrt_output_setup(r);
    return rc;
}

static void progress(DyrtRun *r)
{
    if (!r->tty)
        return;
    double now = dyrt_now();
    if (now - r->t_begin < 1.0 || now - r->t_progress < 0.2)
        return;
    double t = dyrt_time(r->sim), t0 = r->sim->start, span = r->sim->stop - t0;
    fprintf(stderr, "\r t = %-14.6g (%3.0f%%)", t, span > 0 ? 100 * (t - t0) / span : 100);
    fflush(stderr);
    r->t_progress = now;
    r->progress_shown = 1;
}

/* A row at the current point, then the assertions there. */
static int row(DyrtRun *r)
{
    int rc = dyrt_output_row(r);
    if (!rc)
        rc = dyrt_check_asserts(r->sim);
    progress(r);
    return rc;
}

/* The first time a solution is asked for after the start. */
static double first_output_after_start(const DyrtRun *r)
{
    if (r->touts[0] > r->sim->start || r->ntouts == 1)
        return r->touts[0];
    return r->touts[1];
}

/* A clock tick: its row, after the row of the values before it when the
 * tick changed any of them (docs/RUNTIME.md, "Clocks"). */
static int tick_rows(DyrtRun *r)
{
    DyrtSim *s = r->sim;
    dyrt_outputs(s, r->tickbuf);
    int rc = dyrt_tick(s);
    if (rc)
        return rc;
    dyrt_outputs(s, r->outbuf);
    for (int k = 0; k < r->ncols; k++)
        if (memcmp(&r->tickbuf[r->cols[k]], &r->outbuf[r->cols[k]], sizeof(double))) {
            rc = dyrt_output_values(r, dyrt_time(s), r->tickbuf);
            break;
        }
    return rc ? rc : row(r);
}

/* Integrate to tout; a row at every clock tick on the way, and at tout
 * unless a tick's row is there already. */
static int step_rows(DyrtRun *r, double tout)
{
    DyrtSim *s = r->sim;
    for (;;) {
        int rc = dyrt_step_to(s, tout);
        if (rc && dyrt_failed_assert(s))
            dyrt_output_row(r);    /* the located failure is the last row */
        if (rc || !dyrt_tick_pending(s))
            return rc ? rc : row(r);
        rc = tick_rows(r);
        if (rc || dyrt_time(s) >= tout - dyrt_tick_eps(tout))
            return rc;
    }
}

/* SIGINT or SIGTERM (dyrt_interrupts_catch) stopped the loop: say where,
 * keep every row written (flushed here), exit 128 + the signal. */
static int interrupted(DyrtRun *r)
{
    int sig = dyrt_interrupted();
    int flushed = !r->out || fflush(r->out) == 0;
    dyrt_error("interrupted (%s) at t = %s; %ld rows written%s", sig == SIGINT ? "SIGINT" : "SIGTERM",
               dyrt_num(dyrt_time(r->sim)).s, r->rows,
               flushed ? "" : ", but writing them failed");
    return DYRT_EXIT_SIGNAL + sig;
}

/* The output times in order; a failed assertion at an event is the last row.
 * The ticks at the start are part of the initialization (no row before them);
 * with --saveat only the times asked for are rows (after a tick there). */
static int integrate(DyrtRun *r)
{
    DyrtSim *s = r->sim;
    dyrt_set_stop_at_ticks(s, r->o->nsaveat == 0);
    int rc = dyrt_init(s, first_output_after_start(r));
    if (!rc && dyrt_tick_pending(s))
        rc = dyrt_tick(s);
    long k = 0;
    if (!rc && r->touts[0] <= s->start) {
        rc = row(r);
        k = 1;
    }
    for (; !rc && k < r->ntouts; k++)
        rc = dyrt_interrupted() ? DYRT_EXIT_SIGNAL + dyrt_interrupted() : step_rows(r, r->touts[k]);
    if (r->progress_shown)
        fprintf(stderr, "\r%40s\r", "");
    if (dyrt_interrupted())
        return interrupted(r);
    return rc;
}

static void print_stats(const DyrtRun *r, FILE *f)
{
    dyrt_print_stats(r->sim, f);
    fprintf(f, "  rows written %ld\n", r->rows);
    fprintf(f, "  time: setup %.3f s, initialization %.3f s, integration %.3f s, output %.3f s\n",
            r->t_setup, dyrt_init_seconds(r->sim), r->t_integrate, r->t_output);
    if (dyrt_solver_message(r->sim)[0])
        fprintf(f, "  last SUNDIALS message: %s\n", dyrt_solver_message(r->sim));
}

static int run(DyrtRun *r)
{
    int listed = 0;
    double t = dyrt_now();
    int rc = prepare(r, &listed);
    if (rc || listed)
        return rc;
    r->t_setup = dyrt_now() - t;
    t = dyrt_now();
    rc = integrate(r);
    r->t_integrate = dyrt_now() - t - dyrt_init_seconds(r->sim) - r->t_output;
    if (r->o->verbose)
        print_stats(r, stderr);
    if (r->o->plot && r->rows > 0 && r->out && !dyrt_interrupted() && fflush(r->out) == 0) {
        int prc = dyrt_plot(r, r->out_path);  /* also after a failure: the rows so far */
        if (!rc)
            rc = prc;
    }
    return rc;
}

int dyrt_simulate(const DyrtModel *m, const DyrtOptions *o)
{
    if (o->help) {
        int rc = dyrt_check_model(m);
        if (!rc)
            dyrt_usage(stdout, m->name, m);
        return rc;
    }
    DyrtSim *s = dyrt_create(m);
    if (!s)
        return DYRT_EXIT_INTERNAL;
    DyrtRun r = {.sim = s, .m = m, .o = o};
    r.t_begin = dyrt_now();
    r.tty = isatty(2);
    dyrt_interrupts_catch();
    int rc = run(&r);
    dyrt_interrupts_release();
    run_free(&r);
    dyrt_free(s);
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
