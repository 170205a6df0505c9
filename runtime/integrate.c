/*
 * integrate.c -- the integration loop: consistent initial values
 * (IDACalcIC), IDA_NORMAL steps towards each output time, stop times
 * (the model's tstops and the final time), events, assertions, honest
 * failure messages and the progress line.
 *
 * Invariants: every output row is written (and flushed) as soon as it is
 * known; on any failure the rows so far stay in the file and the run
 * returns DYRT_EXIT_USER.  Nothing here allocates.
 *
 * Discontinuities: at a root of a zero-crossing function (IDA_ROOT_RETURN)
 * and at a model tstop (IDA_TSTOP_RETURN), the residual may change branch,
 * so the integrator is restarted there: IDAReInit, then IDACalcIC
 * (IDA_YA_YDP_INIT) for the new algebraic values and derivatives.
 * Chattering (more than DYRT_CHATTER_MAX events at one instant) is an error.
 *
 * Frozen relations (events.c): the modes are set from the signs at the
 * start (iterated with IDACalcIC until they agree with the consistent
 * values) and from the crossing direction at a root; a root that does not
 * change any mode (a function crossing back into the current branch) is not
 * an event and needs no restart.  After a restart the other functions' signs
 * are checked again (event iteration, at most DYRT_MODE_ITER_MAX rounds).
 */
#include <math.h>
#include <ida/ida.h>

#include "dyrt_internal.h"

typedef struct FlagWords {
    int flag;
    const char *words;
} FlagWords;

static const FlagWords flag_words[] = {
    {IDA_TOO_MUCH_WORK, "too many steps in one output interval (IDA_TOO_MUCH_WORK)"},
    {IDA_TOO_MUCH_ACC, "the requested accuracy cannot be reached (IDA_TOO_MUCH_ACC)"},
    {IDA_ERR_FAIL, "the local error test failed repeatedly (IDA_ERR_FAIL)"},
    {IDA_CONV_FAIL, "the corrector did not converge (IDA_CONV_FAIL)"},
    {IDA_LINIT_FAIL, "the linear solver could not be initialized (IDA_LINIT_FAIL)"},
    {IDA_LSETUP_FAIL, "the Jacobian could not be factored, it may be singular (IDA_LSETUP_FAIL)"},
    {IDA_LSOLVE_FAIL, "the linear solve failed (IDA_LSOLVE_FAIL)"},
    {IDA_RES_FAIL, "the residual function failed (IDA_RES_FAIL)"},
    {IDA_REP_RES_ERR, "the residual could not be evaluated, repeatedly (IDA_REP_RES_ERR)"},
    {IDA_RTFUNC_FAIL, "the zero-crossing function failed (IDA_RTFUNC_FAIL)"},
    {IDA_CONSTR_FAIL, "the constraints could not be met (IDA_CONSTR_FAIL)"},
    {IDA_FIRST_RES_FAIL, "the residual could not be evaluated at the start (IDA_FIRST_RES_FAIL)"},
    {IDA_LINESEARCH_FAIL, "the line search of the consistent-initial-value computation failed (IDA_LINESEARCH_FAIL)"},
    {IDA_NO_RECOVERY, "the residual or Jacobian failed and could not recover (IDA_NO_RECOVERY)"},
    {IDA_NLS_INIT_FAIL, "the nonlinear solver could not be initialized (IDA_NLS_INIT_FAIL)"},
    {IDA_NLS_SETUP_FAIL, "the nonlinear solver setup failed (IDA_NLS_SETUP_FAIL)"},
    {IDA_NLS_FAIL, "the nonlinear solver failed (IDA_NLS_FAIL)"},
    {IDA_ILL_INPUT, "illegal input to IDA (IDA_ILL_INPUT)"},
    {IDA_BAD_EWT, "an error weight is not positive; use a positive --atol (IDA_BAD_EWT)"},
    {IDA_BAD_T, "bad time argument (IDA_BAD_T)"},
    {IDA_MEM_FAIL, "out of memory (IDA_MEM_FAIL)"},
};

static const char *flag_text(int flag)
{
    for (size_t k = 0; k < sizeof flag_words / sizeof flag_words[0]; k++)
        if (flag_words[k].flag == flag)
            return flag_words[k].words;
    return "unexpected IDA error";
}

/* `error: simulation failed at t = ...: <what> (last step size h = ...)` */
static int sim_failed(DyrtRun *r, int flag, const char *what)
{
    double t = r->start, h = 0;
    IDAGetCurrentTime(r->ida, &t);
    IDAGetLastStep(r->ida, &h);
    char extra[96] = "";
    if (r->bad_res >= 0)
        snprintf(extra, sizeof extra, "; residual %d was not finite (NaN or Inf)", r->bad_res);
    dyrt_error("simulation failed at t = %.17g: %s%s (last step size h = %.3g)", t,
               what ? what : flag_text(flag), extra, h);
    if (flag == IDA_FIRST_RES_FAIL || flag == IDA_NO_RECOVERY || flag == IDA_LINESEARCH_FAIL)
        fputs("note: the initial values may be inconsistent\n", stderr);
    return DYRT_EXIT_USER;
}

static int check_finite(DyrtRun *r, double t)
{
    const double *y = N_VGetArrayPointer(r->yy);
    for (int32_t i = 0; i < r->m->ny; i++)
        if (!isfinite(y[i])) {
            dyrt_error("simulation failed at t = %.17g: unknown '%s' is %g", t,
                       r->m->y_names ? r->m->y_names[i] : "?", y[i]);
            return DYRT_EXIT_USER;
        }
    return 0;
}

static int check_asserts(DyrtRun *r, double t, const double *y, const double *yp)
{
    if (!r->m->check_asserts)
        return 0;
    int k = r->m->check_asserts(t, y, yp, r->p);
    if (k <= 0)
        return 0;
    const char *msg = k <= r->m->nassert && r->m->assert_messages ? r->m->assert_messages[k - 1] : "?";
    dyrt_error("assertion failed at t=%.17g: %s", t, msg);
    return DYRT_EXIT_USER;
}

static void progress(DyrtRun *r, double t)
{
    if (!r->tty)
        return;
    double now = dyrt_now();
    if (now - r->t_begin < 1.0 || now - r->t_progress < 0.2)
        return;
    double span = r->stop - r->start;
    fprintf(stderr, "\r t = %-14.6g (%3.0f%%)", t, span > 0 ? 100 * (t - r->start) / span : 100);
    fflush(stderr);
    r->t_progress = now;
    r->progress_shown = 1;
}

static int row(DyrtRun *r, double t)
{
    const double *y = r->ida ? N_VGetArrayPointer(r->yy) : r->y0;
    const double *yp = r->ida ? N_VGetArrayPointer(r->yp) : r->yp0;
    int rc = dyrt_output_row(r, t, y, yp);
    if (!rc)
        rc = check_asserts(r, t, y, yp);
    progress(r, t);
    return rc;
}

/* A time after t0 that tells IDACalcIC the direction and scale of t. */
static double ic_tout(const DyrtRun *r, double t0, double tnext)
{
    double span = r->stop - r->start;
    double tiny = 1e-8 * (span > 0 ? span : 1.0);
    if (tnext - t0 > tiny)
        return tnext;
    return t0 + (span > 0 ? 1e-3 * span : 1e-3);
}

/* Consistent y, y' at the current time with IDACalcIC; 0 or the IDA flag. */
static int calc_ic(DyrtRun *r, double t0, double tnext)
{
    int flag = IDACalcIC(r->ida, IDA_YA_YDP_INIT, ic_tout(r, t0, tnext));
    if (flag < 0)
        return flag;
    return IDAGetConsistentIC(r->ida, r->yy, r->yp);
}

/* Initial values: IDACalcIC always (it fixes the differential unknowns and
 * computes the algebraic ones and y').  When the model's initialization
 * system already gave consistent values, a failure here only costs the
 * polish: warn and continue from those values. */
static int initial_values(DyrtRun *r)
{
    double tnext = r->ntouts > 1 ? r->touts[1] : r->touts[0];
    if (r->touts[0] > r->start)
        tnext = r->touts[0];
    const double *y = N_VGetArrayPointer(r->yy), *yp = N_VGetArrayPointer(r->yp);
    dyrt_modes_from_signs(r, r->start, y, yp, NULL);
    int flag;
    for (int it = 0;; it++) {
        flag = calc_ic(r, r->start, tnext);
        if (flag < 0 || dyrt_modes_from_signs(r, r->start, y, yp, NULL) == 0)
            break;
        if (it == DYRT_MODE_ITER_MAX) {
            dyrt_error("initialization failed: the relations (ifelse conditions) at the start "
                       "keep changing their branch");
            return DYRT_EXIT_USER;
        }
        if (IDAReInit(r->ida, r->start, r->yy, r->yp) != IDA_SUCCESS)
            return DYRT_EXIT_INTERNAL;
    }
    if (flag >= 0)
        return 0;
    if (r->m->init_n == 0) {
        dyrt_error("initialization failed: IDACalcIC: %s", flag_text(flag));
        return DYRT_EXIT_USER;
    }
    if (r->o->verbose)
        dyrt_warning("IDACalcIC could not polish the initial values (%s); using the "
                     "initialization result", flag_text(flag));
    for (int32_t i = 0; i < r->m->ny; i++) {
        N_VGetArrayPointer(r->yy)[i] = r->y0[i];
        N_VGetArrayPointer(r->yp)[i] = r->yp0[i];
    }
    r->bad_res = -1;
    dyrt_modes_from_signs(r, r->start, r->y0, r->yp0, NULL);
    return IDAReInit(r->ida, r->start, r->yy, r->yp) == IDA_SUCCESS ? 0 : DYRT_EXIT_INTERNAL;
}

/* The next stop time at or after the integrator's current time tn: the
 * earliest model tstop not yet handled, or the final time. */
static double next_stop(const DyrtRun *r, double tn)
{
    const DyrtSettings *d = &r->m->defaults;
    double eps = 1e-12 * fmax(1.0, fabs(tn));
    double best = r->stop;
    for (int32_t k = 0; k < d->ntstops; k++) {
        double ts = d->tstops[k];
        if (ts > r->tstop_done + eps && ts >= tn - eps && ts < best)
            best = ts;
    }
    return best;
}

typedef struct Chatter {
    double t_last;             /* time of the last event */
    int count;                 /* events within the window of t_last */
} Chatter;

static int restart(DyrtRun *r, double t, double tout, const char *why)
{
    r->stats.reinits++;
    int flag = IDAReInit(r->ida, t, r->yy, r->yp);
    if (flag >= 0)
        flag = calc_ic(r, t, tout);
    if (flag >= 0)
        return 0;
    char what[256];
    snprintf(what, sizeof what, "re-initialization after %s failed: %s", why, flag_text(flag));
    return sim_failed(r, flag, what);
}

/* After a restart at an event: the functions that did not cross may now
 * disagree with their modes; update them and restart until they settle. */
static int event_iteration(DyrtRun *r, double t, double tout)
{
    const double *y = N_VGetArrayPointer(r->yy), *yp = N_VGetArrayPointer(r->yp);
    for (int it = 0; dyrt_modes_from_signs(r, t, y, yp, r->rootsfound) > 0; it++) {
        if (it == DYRT_MODE_ITER_MAX)
            return sim_failed(r, 0, "event iteration: the relations (ifelse conditions) keep "
                                    "changing their branch at this instant");
        int rc = restart(r, t, tout, "an event");
        if (rc)
            return rc;
    }
    return 0;
}

static int on_event(DyrtRun *r, double t, double tout, Chatter *ch)
{
    if (IDAGetRootInfo(r->ida, r->rootsfound) != IDA_SUCCESS)
        return sim_failed(r, IDA_ILL_INPUT, "internal: no root information");
    if (dyrt_modes_from_roots(r, t) == 0)
        return 0;              /* no branch changes: not an event */
    if (r->stats.events < DYRT_EVENT_LOG)
        r->stats.event_t[r->stats.events] = t;
    r->stats.events++;
    double window = DYRT_CHATTER_WINDOW * fmax(1.0, fabs(t));
    ch->count = fabs(t - ch->t_last) <= window ? ch->count + 1 : 0;
    ch->t_last = t;
    if (ch->count >= DYRT_CHATTER_MAX)
        return sim_failed(r, 0, "chattering: the zero crossings keep firing at the same instant");
    const double *y = N_VGetArrayPointer(r->yy), *yp = N_VGetArrayPointer(r->yp);
    int rc = check_asserts(r, t, y, yp);
    if (rc) {                  /* the located failure is the last row */
        dyrt_output_row(r, t, y, yp);
        return rc;
    }
    rc = restart(r, t, tout, "an event");
    return rc ? rc : event_iteration(r, t, tout);
}

/* One IDASolve towards tout with the stop time at the next tstop; a
 * return exactly at a model tstop restarts the integrator there. */
static int step_to(DyrtRun *r, double tout, Chatter *ch, double *tret)
{
    double tn = r->start;
    IDAGetCurrentTime(r->ida, &tn);
    double tstop = next_stop(r, tn);
    r->bad_res = -1;           /* only a NaN in this stretch explains a failure */
    IDASetMinStep(r->ida, dyrt_min_step(tn));
    if (IDASetStopTime(r->ida, tstop) < 0)
        return sim_failed(r, IDA_ILL_INPUT, "internal: bad stop time");
    int flag = IDASolve(r->ida, tout, tret, r->yy, r->yp, IDA_NORMAL);
    if (flag < 0)
        return sim_failed(r, flag, NULL);
    int rc = check_finite(r, *tret);
    if (!rc && flag == IDA_ROOT_RETURN)
        return on_event(r, *tret, tout, ch);
    if (!rc && tstop < r->stop && fabs(*tret - tstop) <= 1e-12 * fmax(1.0, fabs(tstop))) {
        r->tstop_done = tstop;
        rc = restart(r, *tret, tout, "a time event");
    }
    return rc;
}

/* Integrate until t = tout, handling events and tstops on the way. */
static int advance(DyrtRun *r, double tout, Chatter *ch)
{
    for (;;) {
        double tret = tout;
        int rc = step_to(r, tout, ch, &tret);
        if (rc || tret >= tout)
            return rc;
    }
}

static int integrate_ida(DyrtRun *r)
{
    int rc = initial_values(r);
    long k = 0;
    Chatter ch = {.t_last = -INFINITY, .count = 0};
    r->tstop_done = -INFINITY;
    if (!rc && r->touts[0] <= r->start) {
        rc = row(r, r->start);
        k = 1;
    }
    for (; !rc && k < r->ntouts; k++) {
        rc = advance(r, r->touts[k], &ch);
        if (!rc)
            rc = row(r, r->touts[k]);
    }
    return rc;
}

/* No unknowns: the outputs depend on t and p only. */
static int integrate_none(DyrtRun *r)
{
    int rc = 0;
    for (long k = 0; !rc && k < r->ntouts; k++) {
        dyrt_modes_from_signs(r, r->touts[k], NULL, NULL, NULL);
        rc = row(r, r->touts[k]);
    }
    return rc;
}

int dyrt_integrate(DyrtRun *r)
{
    int rc = r->ida ? integrate_ida(r) : integrate_none(r);
    if (r->progress_shown)
        fprintf(stderr, "\r%40s\r", "");
    return rc;
}
