/*
 * sim.c -- the simulation handle DyrtSim (dyadrt.h): create, set, init,
 * step, get, free, in the style of SUNDIALS' own solvers.
 *
 * Lifecycle: CREATED (settings and parameters accepted) -> dyrt_init ->
 * READY (dyrt_step_to, getters) -> any failure -> FAILED (getters only).
 * A call out of sequence is an internal error with a message naming the
 * call, never undefined behaviour: the FMI wrapper maps it to fmi2Error.
 *
 * The phases behind dyrt_init are those of the simulator: parameter
 * defaults (params.c), the initialization system or `start` + --initial
 * (init.c), IDA set-up (solver.c), modes and IDACalcIC (integrate.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

#define DYRT_DEFAULT_RTOL 1e-6
#define DYRT_DEFAULT_ATOL 1e-8

static const char *const phase_names[] = {"before dyrt_init", "after dyrt_init", "after a failure"};

int dyrt_sim_expect(const DyrtSim *s, DyrtSimPhase phase, const char *fn)
{
    if (s->phase == phase)
        return 0;
    dyrt_error("internal: %s called %s", fn, phase_names[s->phase]);
    return DYRT_EXIT_INTERNAL;
}

/* Model defaults over built-in defaults (the command line comes later). */
static void default_settings(DyrtSim *s)
{
    const DyrtSettings *d = &s->m->defaults;
    s->start = d->start;
    s->stop = d->stop > d->start ? d->stop : d->start + 1.0;
    s->rtol = d->rtol > 0 ? d->rtol : DYRT_DEFAULT_RTOL;
    s->atol = d->atol > 0 ? d->atol : DYRT_DEFAULT_ATOL;
    s->dtmax = d->dtmax > 0 ? d->dtmax : 0.0;
    s->max_steps = DYRT_MAX_STEPS;
}

DyrtSim *dyrt_create(const DyrtModel *m)
{
    if (dyrt_check_model(m))
        return NULL;
    DyrtSim *s = dyrt_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->m = m;
    s->phase = DYRT_SIM_CREATED;
    s->bad_res = -1;
    for (int i = 0; i < DYRT_ZENO_EVENTS; i++)
        s->event_times[i] = -INFINITY;
    s->flip_t = -INFINITY;
    s->resolve_t = -INFINITY;
    s->tstop_done = -INFINITY;
    default_settings(s);
    s->t = s->start;
    s->outbuf = dyrt_calloc((size_t)m->nout, sizeof *s->outbuf);
    if (!s->outbuf || dyrt_params_alloc(s)) {
        dyrt_free(s);
        return NULL;
    }
    return s;
}

void dyrt_free(DyrtSim *s)
{
    if (!s)
        return;
    dyrt_integrate_free(s);
    dyrt_sets_free(s);
    dyrt_inputs_free(s);
    dyrt_clocks_free(s);
    free(s->p);
    free(s->gbuf);
    free(s->flips);
    free(s->mismatch);
    free(s->pushed);
    free(s->crossed);
    free(s->gnoise);
    free(s->gpert);
    free(s->modes_prev);
    free(s->y_event);
    free(s->yp_event);
    free(s->ytmp);
    free(s->yptmp);
    free(s->given);
    free(s->y0);
    free(s->yp0);
    free(s->outbuf);
    for (int k = 0; k < s->ninitials; k++)
        free(s->initials[k].name);
    free(s->initials);
    free(s);
}

int dyrt_set_times(DyrtSim *s, double start, double stop)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_set_times"))
        return DYRT_EXIT_INTERNAL;
    if (!isfinite(start) || isnan(stop) || stop == -INFINITY) {
        dyrt_error("the start time must be finite and the stop time a number");
        return DYRT_EXIT_USER;
    }
    if (stop < start) {
        dyrt_error("stop time %s is before start time %s", dyrt_num(stop).s, dyrt_num(start).s);
        return DYRT_EXIT_USER;
    }
    s->start = s->t = start;
    s->stop = stop;
    return 0;
}

int dyrt_set_tolerances(DyrtSim *s, double rtol, double atol)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_set_tolerances"))
        return DYRT_EXIT_INTERNAL;
    if (!(rtol >= 0) || !(atol >= 0) || (rtol == 0 && atol == 0)) {
        dyrt_error(rtol == 0 && atol == 0 ? "--rtol and --atol cannot both be zero"
                                          : "tolerances must not be negative");
        return DYRT_EXIT_USER;
    }
    s->rtol = rtol;
    s->atol = atol;
    return 0;
}

int dyrt_set_max_step(DyrtSim *s, double dtmax)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_set_max_step"))
        return DYRT_EXIT_INTERNAL;
    if (!(dtmax >= 0)) {
        dyrt_error("the largest step must not be negative");
        return DYRT_EXIT_USER;
    }
    s->dtmax = dtmax;
    return 0;
}

int dyrt_set_max_steps(DyrtSim *s, long steps)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_set_max_steps"))
        return DYRT_EXIT_INTERNAL;
    if (steps < 1) {
        dyrt_error("the largest number of steps must be at least 1");
        return DYRT_EXIT_USER;
    }
    s->max_steps = steps;
    return 0;
}

/* The scale of t for look-aheads and IDACalcIC: the span (1 when it is
 * 0); without a stop time the model's default span, else 1. */
double dyrt_time_scale(const DyrtSim *s)
{
    double span = s->stop - s->start;
    if (isfinite(span))
        return span > 0 ? span : 1.0;
    const DyrtSettings *d = &s->m->defaults;
    return d->stop > d->start ? d->stop - d->start : 1.0;
}

void dyrt_set_verbose(DyrtSim *s, int verbose)
{
    s->verbose = verbose;
}

int dyrt_eval_params(DyrtSim *s)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_eval_params"))
        return DYRT_EXIT_INTERNAL;
    return dyrt_params_defaults(s);
}

const double *dyrt_params(const DyrtSim *s)
{
    return s->p;
}

int dyrt_set_initial(DyrtSim *s, const char *name, double value)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_set_initial"))
        return DYRT_EXIT_INTERNAL;
    DyrtNameValue *grown = realloc(s->initials, sizeof *grown * (size_t)(s->ninitials + 1));
    char *copy = strdup(name);
    if (grown)
        s->initials = grown;
    if (!grown || !copy) {
        free(copy);
        dyrt_error("out of memory");
        return DYRT_EXIT_INTERNAL;
    }
    s->initials[s->ninitials++] = (DyrtNameValue){.name = copy, .value = value};
    return 0;
}

static int init_phases(DyrtSim *s, double tout1)
{
    int rc = dyrt_params_check(s);
    if (!rc)
        rc = dyrt_params_defaults(s);
    dyrt_inputs_at(s, s->start);
    if (!rc)
        rc = dyrt_coef_checks(s);
    if (!rc)
        rc = dyrt_sets_setup(s);
    if (!rc)
        rc = dyrt_clocks_setup(s);
    if (!rc)
        rc = dyrt_initialize(s);
    if (!rc)
        rc = dyrt_integrate_setup(s);
    if (!rc && s->ida)
        rc = dyrt_initial_values(s, tout1);
    else if (!rc)
        dyrt_modes_from_signs(s, s->start, NULL, NULL, NULL);
    return rc;
}

int dyrt_init(DyrtSim *s, double tout1)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_init"))
        return DYRT_EXIT_INTERNAL;
    double t0 = dyrt_now();
    int rc = init_phases(s, tout1);
    s->stats.t_init = dyrt_now() - t0;
    s->t = s->start;
    s->phase = rc ? DYRT_SIM_FAILED : DYRT_SIM_READY;
    if (!rc && s->clk.pending && !s->clk.stop_at_ticks)
        rc = dyrt_tick(s);     /* the ticks at the start */
    return rc;
}

int dyrt_step_to(DyrtSim *s, double tout)
{
    if (dyrt_sim_expect(s, DYRT_SIM_READY, "dyrt_step_to"))
        return DYRT_EXIT_INTERNAL;
    if (!(tout >= s->t) || !(tout <= s->stop)) {
        dyrt_error("internal: dyrt_step_to(%s) outside [%s, %s]", dyrt_num(tout).s, dyrt_num(s->t).s,
                   dyrt_num(s->stop).s);
        return DYRT_EXIT_INTERNAL;
    }
    int rc = dyrt_advance(s, tout);
    if (rc)
        s->phase = DYRT_SIM_FAILED;
    return rc;
}

/* ---------- the state (dyrt_state_*) ----------
 * Layout, all doubles: t, y [ny], y' [ny], p [np + nmodes], the event
 * bookkeeping (flip_t, check_pending, check_t0, check_t, tstop_done,
 * nevents, failed_assert, input_changed, resolve_t, nresolve,
 * event_times [DYRT_ZENO_EVENTS], flips [nz], pushed [nz], crossed [nz]) and the clocks' (pending, then next, due,
 * zc_mode [nclocks] each). */

static size_t npm(const DyrtModel *m)
{
    return (size_t)m->np + (size_t)(m->nmodes > 0 ? m->nmodes : 0);
}

size_t dyrt_state_size(const DyrtSim *s)
{
    const DyrtModel *m = s->m;
    return 1 + 2 * (size_t)m->ny + npm(m) + 10 + DYRT_ZENO_EVENTS + 3 * (size_t)m->nz + 1 +
           3 * (size_t)m->nclocks;
}

/* dir 0: the handle into buf, 1: buf into the handle */
static void state_copy(DyrtSim *s, double *buf, int dir)
{
    const DyrtModel *m = s->m;
    size_t ny = (size_t)m->ny, at = 0;
#define ONE(field, type) (dir ? (void)((field) = (type)buf[at++]) : (void)(buf[at++] = (double)(field)))
#define MANY(arr, n, type) for (size_t i_ = 0; i_ < (size_t)(n); i_++) ONE((arr)[i_], type)
    ONE(s->t, double);
    MANY(s->ida ? N_VGetArrayPointer(s->yy) : s->y0, ny, double);
    MANY(s->ida ? N_VGetArrayPointer(s->yp) : s->yp0, ny, double);
    MANY(s->p, npm(m), double);
    ONE(s->flip_t, double);
    ONE(s->check_pending, int);
    ONE(s->check_t0, double);
    ONE(s->check_t, double);
    ONE(s->tstop_done, double);
    ONE(s->nevents, long);
    ONE(s->failed_assert, int);
    ONE(s->input_changed, int);
    ONE(s->resolve_t, double);
    ONE(s->nresolve, int);
    MANY(s->event_times, DYRT_ZENO_EVENTS, double);
    MANY(s->flips, m->nz, unsigned char);
    MANY(s->pushed, m->nz, unsigned char);
    MANY(s->crossed, m->nz, unsigned char);
    ONE(s->clk.pending, int);
    MANY(s->clk.next, s->clk.next ? m->nclocks : 0, long long);
    MANY(s->clk.due, s->clk.due ? m->nclocks : 0, unsigned char);
    MANY(s->clk.zc_mode, s->clk.zc_mode ? m->nclocks : 0, double);
#undef MANY
#undef ONE
}

int dyrt_state_save(DyrtSim *s, double *buf)
{
    if (dyrt_sim_expect(s, DYRT_SIM_READY, "dyrt_state_save"))
        return DYRT_EXIT_INTERNAL;
    memset(buf, 0, dyrt_state_size(s) * sizeof *buf);
    state_copy(s, buf, 0);
    int rc = s->ida ? dyrt_restart_at(s, s->t, "saving the state", 0) : 0;
    if (rc)
        s->phase = DYRT_SIM_FAILED;
    return rc;
}

int dyrt_state_restore(DyrtSim *s, const double *buf)
{
    if (dyrt_sim_expect(s, DYRT_SIM_READY, "dyrt_state_restore"))
        return DYRT_EXIT_INTERNAL;
    state_copy(s, (double *)buf, 1);
    int rc = s->ida ? dyrt_restart_at(s, s->t, "restoring a state", 0) : 0;
    if (rc)
        s->phase = DYRT_SIM_FAILED;
    return rc;
}

void dyrt_set_stop_at_ticks(DyrtSim *s, int on)
{
    s->clk.stop_at_ticks = on;
}

int dyrt_tick_pending(const DyrtSim *s)
{
    return s->phase == DYRT_SIM_READY && s->clk.pending;
}

int dyrt_tick(DyrtSim *s)
{
    if (dyrt_sim_expect(s, DYRT_SIM_READY, "dyrt_tick"))
        return DYRT_EXIT_INTERNAL;
    if (!s->clk.pending)
        return 0;
    int rc = dyrt_clocks_tick(s, s->t);
    if (!rc)
        rc = dyrt_restart_at(s, s->t, "a clock tick", 1);
    if (rc)
        s->phase = DYRT_SIM_FAILED;
    return rc;
}

int dyrt_failed_assert(const DyrtSim *s)
{
    return s->failed_assert;
}

int dyrt_check_asserts(DyrtSim *s)
{
    if (s->phase == DYRT_SIM_CREATED)
        return dyrt_sim_expect(s, DYRT_SIM_READY, "dyrt_check_asserts");
    int rc = dyrt_asserts_at(s, s->t, dyrt_y(s), dyrt_yp(s));
    if (rc)
        s->phase = DYRT_SIM_FAILED;
    return rc;
}

double dyrt_time(const DyrtSim *s)
{
    return s->t;
}

double dyrt_stop_time(const DyrtSim *s)
{
    return s->stop;
}

const double *dyrt_y(const DyrtSim *s)
{
    return s->ida ? N_VGetArrayPointer(s->yy) : s->y0;
}

const double *dyrt_yp(const DyrtSim *s)
{
    return s->ida ? N_VGetArrayPointer(s->yp) : s->yp0;
}

void dyrt_outputs(const DyrtSim *s, double *out)
{
    dyrt_model_outputs(s->m, s->t, dyrt_y(s), dyrt_yp(s), s->p, out);
}

int dyrt_find_output(const DyrtSim *s, const char *name)
{
    return dyrt_find(name, s->m->out_names, s->m->nout);
}

/* One column: every output into the scratch row (the generated function
 * computes all of them at once). */
int dyrt_get(DyrtSim *s, int i, double *value)
{
    const DyrtModel *m = s->m;
    if (i < 0 || i >= m->nout || s->phase == DYRT_SIM_CREATED) {
        dyrt_error("internal: dyrt_get(%d): %s", i, s->phase == DYRT_SIM_CREATED
                   ? "called before dyrt_init" : "no such output");
        return DYRT_EXIT_INTERNAL;
    }
    dyrt_outputs(s, s->outbuf);
    *value = s->outbuf[i];
    return 0;
}

int dyrt_get_by_name(DyrtSim *s, const char *name, double *value)
{
    int i = dyrt_find_output(s, name);
    if (i < 0) {
        const char *near = dyrt_closest(name, s->m->out_names, s->m->nout);
        if (near)
            dyrt_error("unknown variable '%s'; did you mean '%s'?", name, near);
        else
            dyrt_error("unknown variable '%s'", name);
        return DYRT_EXIT_USER;
    }
    return dyrt_get(s, i, value);
}

const char *dyrt_solver_message(const DyrtSim *s)
{
    return s->ida_msg;
}

double dyrt_init_seconds(const DyrtSim *s)
{
    return s->stats.t_init;
}
