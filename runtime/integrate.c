/*
 * integrate.c -- the integration loop of a DyrtSim: consistent initial
 * values (IDACalcIC), IDA_NORMAL steps towards the time asked for
 * (dyrt_step_to), stop times (the model's tstops and the final time),
 * events, assertions at events, honest failure messages.
 *
 * Invariants: a failure returns DYRT_EXIT_USER with the integrator's
 * current point kept (the caller writes what it has); an assertion that
 * fails at an event leaves the located event as the current point.
 * Nothing here allocates.
 *
 * Discontinuities: at a root of a zero-crossing function (IDA_ROOT_RETURN)
 * and at a model tstop (IDA_TSTOP_RETURN), the residual may change branch,
 * so the integrator is restarted there: IDAReInit, then IDACalcIC
 * (IDA_YA_YDP_INIT) for the new algebraic values and derivatives.
 *
 * Frozen relations (events.c): the modes are set from the signs at the
 * start (iterated with IDACalcIC until they agree with the consistent
 * values) and from the crossing direction at a root; a root that does not
 * change any mode (a function crossing back into the current branch) is not
 * an event and needs no restart.  After a restart the other functions' signs
 * are checked again (event iteration, at most DYRT_MODE_ITER_MAX rounds).
 *
 * The crossing back.  Right after a restart the functions that just crossed
 * lie within the root finder's tolerance of zero, on either side: if the new
 * branch drives one straight back, IDA sees no sign change and would never
 * report it (the branch stays wrong for good).  So every restart (an event,
 * a time event, the start) is followed by a check DYRT_EVENT_CHECK * span
 * later: a function whose sign then disagrees with its mode crossed back at
 * the restart; its mode goes back and the integrator restarts from the
 * restart point.  A function whose mode changes DYRT_FLIP_MAX times at one
 * instant, or DYRT_ZENO_EVENTS events at vanishing intervals, is suspected
 * of chattering; the sliding test at tight values (sliding.c) decides: on
 * both sides driven onto its switching surface (a sliding mode, as in dry
 * friction at rest) stops the run with an error naming the condition and
 * the time; otherwise the mode that keeps its side goes on (suspect).
 * Every restart polishes the algebraic values to tight ones first.
 */
#include <math.h>
#include <string.h>
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
static int sim_failed(DyrtSim *s, int flag, const char *what)
{
    double t = s->start, h = 0;
    IDAGetCurrentTime(s->ida, &t);
    IDAGetLastStep(s->ida, &h);
    char extra[512] = "";
    if (s->bad_res >= 0) {
        const DyrtModel *m = s->m;
        int32_t eq = m->resid_eq ? m->resid_eq[s->bad_res] : -1, src = eq >= 0 && m->eq_src ? m->eq_src[eq] : -1;
        if (src >= 0 && src < m->nsrc) {
            const char *name = m->src_names[src];
            size_t at = dyrt_location_at(name);
            snprintf(extra, sizeof extra, "; the residual of `%.*s`%s was not finite", (int)at,
                     name, name + at);
        } else {
            snprintf(extra, sizeof extra, "; residual %d was not finite (NaN or Inf)", s->bad_res);
        }
    }
    dyrt_error("simulation failed at t = %s: %s%s (last step size h = %.3g)", dyrt_num(t).s,
               what ? what : flag_text(flag), extra, h);
    if (s->bad_res >= 0 && s->bad_y)
        dyrt_explain_point(s, s->bad_res, s->bad_t, s->bad_y, s->bad_yp);
    else if (flag == IDA_FIRST_RES_FAIL || flag == IDA_NO_RECOVERY || flag == IDA_LINESEARCH_FAIL)
        dyrt_note("the initial values may be inconsistent");
    if (s->yy && s->yp)
        dyrt_sets_explain(s, t, N_VGetArrayPointer(s->yy), N_VGetArrayPointer(s->yp));
    return DYRT_EXIT_USER;
}

static int check_finite(DyrtSim *s, double t)
{
    const double *y = N_VGetArrayPointer(s->yy);
    for (int32_t i = 0; i < s->m->ny; i++)
        if (!isfinite(y[i])) {
            dyrt_error("simulation failed at t = %s: unknown '%s' is %s", dyrt_num(t).s,
                       s->m->y_names ? s->m->y_names[i] : "?", dyrt_num(y[i]).s);
            return DYRT_EXIT_USER;
        }
    return 0;
}

/* The assertions at (t, y, yp); a failure is remembered in failed_assert. */
int dyrt_asserts_at(DyrtSim *s, double t, const double *y, const double *yp)
{
    if (!s->m->check_asserts)
        return 0;
    int k = s->m->check_asserts(t, y, yp, s->p);
    if (k <= 0)
        return 0;
    s->failed_assert = k;
    const char *msg = k <= s->m->nassert && s->m->assert_messages ? s->m->assert_messages[k - 1] : "?";
    dyrt_error("assertion failed at t = %s: %s", dyrt_num(t).s, msg);
    return DYRT_EXIT_USER;
}

/* A time after t0 that tells IDACalcIC the direction and scale of t. */
static double ic_tout(const DyrtSim *s, double t0, double tnext)
{
    double span = dyrt_time_scale(s);
    double tiny = 1e-8 * span;
    if (tnext - t0 > tiny && isfinite(tnext))   /* no stop time: the scale below */
        return tnext;
    return t0 + 1e-3 * span;
}

/* Consistent y, y' at the current time with IDACalcIC; 0 or the IDA flag. */
static int calc_ic(DyrtSim *s, double t0, double tnext)
{
    int flag = IDACalcIC(s->ida, IDA_YA_YDP_INIT, ic_tout(s, t0, tnext));
    if (flag < 0)
        return flag;
    return IDAGetConsistentIC(s->ida, s->yy, s->yp);
}

static void save_restart_point(DyrtSim *s);
static void schedule_check(DyrtSim *s, double t);
static int restart_event(DyrtSim *s, double t, double tout, const char *why);
static void modes_save(DyrtSim *s);
static int modes_count(DyrtSim *s, double t);

/* Initial values: IDACalcIC always (it fixes the differential unknowns and
 * computes the algebraic ones and y').  When the model's initialization
 * system already gave consistent values, a failure here only costs the
 * polish: warn and continue from those values. */
int dyrt_initial_values(DyrtSim *s, double tnext)
{
    const double *y = N_VGetArrayPointer(s->yy), *yp = N_VGetArrayPointer(s->yp);
    dyrt_modes_from_signs(s, s->start, y, yp, NULL);
    int flag;
    for (int it = 0;; it++) {
        flag = calc_ic(s, s->start, tnext);
        modes_save(s);
        if (flag < 0 || dyrt_modes_from_signs(s, s->start, y, yp, NULL) == 0)
            break;
        int rc = modes_count(s, s->start);
        if (rc)
            return rc;
        if (it == DYRT_MODE_ITER_MAX) {
            dyrt_error("initialization failed: the relations (ifelse conditions) at the start "
                       "keep changing their branch");
            return DYRT_EXIT_USER;
        }
        if (IDAReInit(s->ida, s->start, s->yy, s->yp) != IDA_SUCCESS)
            return DYRT_EXIT_INTERNAL;
    }
    if (flag >= 0 && dyrt_sets_switch(s, s->start, N_VGetArrayPointer(s->yy), N_VGetArrayPointer(s->yp), NULL))
        flag = IDAReInit(s->ida, s->start, s->yy, s->yp) != IDA_SUCCESS ? IDA_MEM_FAIL : calc_ic(s, s->start, tnext);
    if (flag >= 0) {       /* (a state set whose start choice is poor switched above) */
        save_restart_point(s);
        schedule_check(s, s->start);
        return 0;
    }
    if (s->m->init_n == 0) {
        dyrt_error("initialization failed: IDACalcIC: %s", flag_text(flag));
        return DYRT_EXIT_USER;
    }
    if (s->verbose)
        dyrt_warning("IDACalcIC could not polish the initial values (%s); using the "
                     "initialization result", flag_text(flag));
    for (int32_t i = 0; i < s->m->ny; i++) {
        N_VGetArrayPointer(s->yy)[i] = s->y0[i];
        N_VGetArrayPointer(s->yp)[i] = s->yp0[i];
    }
    s->bad_res = -1;
    dyrt_modes_from_signs(s, s->start, s->y0, s->yp0, NULL);
    if (IDAReInit(s->ida, s->start, s->yy, s->yp) != IDA_SUCCESS)
        return DYRT_EXIT_INTERNAL;
    save_restart_point(s);
    schedule_check(s, s->start);
    return 0;
}

/* The next stop time at or after the integrator's current time tn: the
 * earliest model tstop not yet handled, the next clock tick, or the final
 * time. */
static double next_stop(const DyrtSim *s, double tn)
{
    const DyrtSettings *d = &s->m->defaults;
    double eps = 1e-12 * fmax(1.0, fabs(tn));
    double best = fmin(fmin(s->stop, dyrt_clocks_next(s)), dyrt_inputs_next(s, tn));
    for (int32_t k = 0; k < d->ntstops; k++) {
        double ts = d->tstops[k];
        if (ts > s->tstop_done + eps && ts >= tn - eps && ts < best)
            best = ts;
    }
    return best;
}

static int restart(DyrtSim *s, double t, double tout, const char *why)
{
    s->stats.reinits++;
    int flag = IDAReInit(s->ida, t, s->yy, s->yp);
    if (flag >= 0)
        flag = calc_ic(s, t, tout);
    /* IDACalcIC stops within the tolerances (the old branch's algebraic
     * values may survive); the signs of g need them exact (sliding.c) */
    if (flag >= 0 && dyrt_tight_polish(s, t, N_VGetArrayPointer(s->yy), N_VGetArrayPointer(s->yp)))
        flag = IDAReInit(s->ida, t, s->yy, s->yp);
    if (flag >= 0)
        return 0;
    char what[256];
    snprintf(what, sizeof what, "re-initialization after %s failed: %s", why, flag_text(flag));
    return sim_failed(s, flag, what);
}

/* ---------- chattering ---------- */

/* The run stops at t on relation k's switching (`how`: the evidence;
 * `why`: what the tight test found; `note`: the way out). */
static int switching_error(DyrtSim *s, double t, int k, const char *how, const char *why,
                           const char *note)
{
    char name[512];
    dyrt_error("simulation failed at t = %s: chattering: %s %s; %s", dyrt_num(t).s,
               dyrt_event_name(s, k, name, sizeof name), how, why);
    dyrt_note("the rows before this time are written; %s", note);
    return DYRT_EXIT_USER;
}

static int chattering(DyrtSim *s, double t, int k, const char *how)
{
    return switching_error(s, t, k, how,
                           "on both sides of it the solution is driven back across (a sliding "
                           "mode, which dyadc does not simulate)",
                           "model the phase on the switching surface explicitly (e.g. sticking), "
                           "or smooth the switch (e.g. tanh(v / eps))");
}

/* Switching that the tight test found no sliding mode, yet it does not
 * settle (DYRT_RESOLVE_MAX times without progress): g_k stays within the
 * solver's error of zero. */
static int unresolved(DyrtSim *s, double t, int k, const char *how)
{
    return switching_error(s, t, k, how,
                           "it is no sliding mode (one branch keeps its side), but its value "
                           "stays within the solver's error of zero",
                           "tighter tolerances (--rtol, --atol) resolve the switch");
}

/* Relation k switched back and forth at t (`how`: the evidence), the
 * point (t, y, yp).  IDA's values are only as good as the tolerances, so
 * the branches are weighed at tight consistent values (sliding.c): both
 * driving the solution back is a sliding mode, the chattering error.
 * Otherwise k gets the branch that keeps its side (marked in rootsfound,
 * so event iteration leaves it), the counts of chattering start afresh and
 * the run goes on: 0. */
static int suspect(DyrtSim *s, double t, int k, const char *how, const double *y, const double *yp)
{
    double mode;
    int back = dyrt_tight_sides(s, t, y, yp, k, &mode);
    if (back < 0 || back == (DYRT_SIDE_BACK_FROM_1 | DYRT_SIDE_BACK_FROM_0))
        return chattering(s, t, k, how);
    if (fabs(t - s->resolve_t) > DYRT_EVENT_CHECK * dyrt_time_scale(s)) {
        s->resolve_t = t;
        s->nresolve = 0;
    }
    if (++s->nresolve >= DYRT_RESOLVE_MAX)
        return unresolved(s, t, k, how);
    s->p[s->m->np + k] = mode;
    if (s->rootsfound)
        s->rootsfound[k] = 1;
    memset(s->flips, 0, (size_t)s->m->nz);
    memset(s->pushed, 0, (size_t)s->m->nz);
    for (int i = 0; i < DYRT_ZENO_EVENTS; i++)
        s->event_times[i] = -INFINITY;
    return 0;
}

static void modes_save(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    for (int32_t k = 0; k < m->nmodes; k++)
        s->modes_prev[k] = s->p[m->np + k];
}

/* A new instant (beyond DYRT_CHATTER_WINDOW of flip_t) starts the counts
 * of mode changes and crossings back afresh. */
static void at_instant(DyrtSim *s, double t)
{
    if (fabs(t - s->flip_t) > DYRT_CHATTER_WINDOW * (fabs(t) + dyrt_time_scale(s))) {
        memset(s->flips, 0, (size_t)s->m->nz);
        memset(s->pushed, 0, (size_t)s->m->nz);
        s->flip_t = t;
    }
}

/* Count the mode changes since modes_save at instant t: 0, or the
 * chattering error (a relation changing back and forth at one instant
 * through event iteration and roots). */
static int modes_count(DyrtSim *s, double t)
{
    const DyrtModel *m = s->m;
    at_instant(s, t);
    for (int32_t k = 0; k < m->nmodes; k++)
        if (s->p[m->np + k] != s->modes_prev[k] && ++s->flips[k] >= DYRT_FLIP_MAX) {
            int rc = suspect(s, t, k, "switches back and forth at this instant",
                             N_VGetArrayPointer(s->yy), N_VGetArrayPointer(s->yp));
            if (rc)
                return rc;
        }
    return 0;
}

/* The function that changed most at the current instant (for messages). */
static int most_flipped(const DyrtSim *s)
{
    int best = 0;
    for (int32_t k = 1; k < s->m->nz; k++)
        if (s->flips[k] > s->flips[best] || (s->rootsfound[k] && !s->flips[best]))
            best = k;
    return best;
}

/* Chattering at vanishing intervals: the last DYRT_ZENO_EVENTS events that
 * changed a relation's mode, this one at t included, all within DYRT_EVENT_CHECK x the time scale
 * (the span the runtime treats as "right after" an event): the events
 * make no progress at the resolution of the run.  0, or the error. */
static int zeno(DyrtSim *s, double t)
{
    double *slot = &s->event_times[s->nevents++ % DYRT_ZENO_EVENTS];
    double oldest = *slot;     /* DYRT_ZENO_EVENTS events ago (-inf before) */
    *slot = t;
    if (t - oldest > DYRT_EVENT_CHECK * dyrt_time_scale(s))
        return 0;
    char span[64];
    snprintf(span, sizeof span, "fires %d times within %s", DYRT_ZENO_EVENTS, dyrt_num(t - oldest).s);
    return suspect(s, t, most_flipped(s), span, N_VGetArrayPointer(s->yy), N_VGetArrayPointer(s->yp));
}

/* ---------- restarts and the check after them ---------- */

/* After a restart at an event: the functions that did not cross may now
 * disagree with their modes; update them and restart until they settle. */
static int event_iteration(DyrtSim *s, double t, double tout)
{
    const double *y = N_VGetArrayPointer(s->yy), *yp = N_VGetArrayPointer(s->yp);
    for (int it = 0;; it++) {
        modes_save(s);
        if (dyrt_modes_from_signs(s, t, y, yp, s->rootsfound) == 0)
            return 0;
        int rc = modes_count(s, t);
        if (rc)
            return rc;
        if (it == DYRT_MODE_ITER_MAX)
            return sim_failed(s, 0, "event iteration: the relations (ifelse conditions) keep "
                                    "changing their branch at this instant");
        rc = restart(s, t, tout, "an event");
        if (rc)
            return rc;
    }
}

/* The point before a restart at t, to go back to; the check after it. */
static void save_restart_point(DyrtSim *s)
{
    size_t n = sizeof(double) * (size_t)s->m->ny;
    memcpy(s->y_event, N_VGetArrayPointer(s->yy), n);
    memcpy(s->yp_event, N_VGetArrayPointer(s->yp), n);
}

static void schedule_check(DyrtSim *s, double t)
{
    double span = s->stop - s->start;
    s->check_t0 = t;
    s->check_t = fmin(t + DYRT_EVENT_CHECK * (span > 0 ? span : 1.0), s->stop);
    s->check_pending = s->m->nmodes > 0 && s->check_t > t;
}

/* Restart at t after the modes changed (an event or a time event), with
 * event iteration, and schedule the check.  rootsfound marks the functions
 * whose modes were just set (the others follow their signs). */
static int restart_event(DyrtSim *s, double t, double tout, const char *why)
{
    int rc = restart(s, t, tout, why);
    if (!rc)
        rc = event_iteration(s, t, tout);
    if (!rc)
        schedule_check(s, t);
    for (int32_t k = 0; k < s->m->nmodes; k++)
        s->crossed[k] = !rc && s->rootsfound && s->rootsfound[k] != 0;
    return rc;
}

/* Restart at t after the discrete values changed (a clock tick): new
 * consistent algebraic values and y'; with `events`, the modes follow
 * (those whose function just crossed, s->rootsfound, keep theirs), and the
 * check after the restart is due. */
int dyrt_restart_at(DyrtSim *s, double t, const char *why, int events)
{
    if (!s->ida) {
        dyrt_modes_from_signs(s, t, NULL, NULL, NULL);
        return 0;
    }
    save_restart_point(s);
    if (!events)
        return restart(s, t, s->stop, why);
    return restart_event(s, t, s->stop, why);
}

/* At instant t0 (the restart point) the check drove function k back from
 * its current mode: when it did so from both modes, the tight test decides
 * (suspect).  0 and *kept = 0: flip the mode back; 0 and *kept = 1: the
 * tight test set it; or the chattering error. */
static int crossed_back(DyrtSim *s, double t0, int32_t k, int *kept)
{
    at_instant(s, t0);
    s->pushed[k] |= s->p[s->m->np + k] != 0 ? 1 : 2;
    *kept = 0;
    if (s->pushed[k] != 3)
        return 0;
    *kept = 1;
    return suspect(s, t0, k, "switches back and forth at this instant", s->y_event, s->yp_event);
}

/* The check DYRT_EVENT_CHECK after the restart at check_t0: a function
 * whose sign disagrees with its mode beyond the tolerances crossed back at
 * check_t0.  Its mode goes back and the integrator restarts from the
 * restart point.  Disagreements within the tolerances are no evidence
 * either way: the check is repeated 10 times later (up to
 * DYRT_EVENT_CHECK_MAX), after which the mode stands (the function stayed
 * within the tolerances of zero all along). */
static int check_modes(DyrtSim *s, double tnow, double tout)
{
    const DyrtModel *m = s->m;
    s->check_pending = 0;
    int noisy = 0, decisive = dyrt_modes_mismatch(s, tnow, N_VGetArrayPointer(s->yy), N_VGetArrayPointer(s->yp), &noisy);
    for (int32_t k = 0; k < m->nmodes; k++)      /* a deferred root, confirmed (on_event) */
        if ((s->crossed[k] & DYRT_CROSSED_DEFERRED) && s->mismatch[k] == DYRT_MISMATCH_NOISE) {
            s->mismatch[k] = DYRT_MISMATCH;
            decisive++;
            noisy--;
        }
    if (decisive == 0) {
        double t0 = s->check_t0, later = t0 + 10 * (s->check_t - t0);
        if (noisy && later - t0 <= DYRT_EVENT_CHECK_MAX * dyrt_time_scale(s) * (1 + 1e-9) && later < s->stop) {
            s->check_t = later;
            s->check_pending = 1;
        }
        return 0;
    }
    double t0 = s->check_t0;
    modes_save(s);
    for (int32_t k = 0; k < m->nmodes; k++) {
        s->rootsfound[k] = s->mismatch[k] == DYRT_MISMATCH;
        if (s->mismatch[k] != DYRT_MISMATCH)
            continue;
        int kept, rc = crossed_back(s, t0, k, &kept);
        if (rc)
            return rc;
        if (!kept)
            s->p[m->np + k] = s->p[m->np + k] != 0 ? 0.0 : 1.0;
    }
    size_t n = sizeof(double) * (size_t)m->ny;
    memcpy(N_VGetArrayPointer(s->yy), s->y_event, n);
    memcpy(N_VGetArrayPointer(s->yp), s->yp_event, n);
    s->t = t0;
    return restart_event(s, t0, tout, "an event");
}

/* ---------- events ---------- */

static int on_event(DyrtSim *s, double t, double tout)
{
    if (IDAGetRootInfo(s->ida, s->rootsfound) != IDA_SUCCESS)
        return sim_failed(s, IDA_ILL_INPUT, "internal: no root information");
    /* a function that crossed at the restart lies within the root finder's
     * tolerance of zero there, and its sign right after it within the error
     * of the solution: when its new branch keeps it on its side (tight
     * values, sliding.c), a root of it before the check is that noise (a
     * diode's g = vs - v just after turning on, v solved to atol).  The
     * check weighs it against the tolerances (check_modes), and a sign that
     * still disagrees there confirms it. */
    if (s->check_pending && t < s->check_t)
        for (int32_t k = 0; k < s->m->nmodes; k++)
            if (s->crossed[k] && s->rootsfound[k] &&
                dyrt_tight_keeps_side(s, s->check_t0, s->y_event, s->yp_event, k) == 1) {
                s->crossed[k] |= DYRT_CROSSED_DEFERRED;
                s->rootsfound[k] = 0;
            }
    dyrt_clocks_snapshot(s);
    modes_save(s);
    /* a state set whose pivot degraded switches here (stateset.c): a change
     * of coordinates, restarted like an event; every set is checked, as
     * sets sharing a pivot cross together and a set already past its
     * threshold at a restart would not be reported again */
    int switched = dyrt_sets_switch(s, t, N_VGetArrayPointer(s->yy), N_VGetArrayPointer(s->yp), NULL);
    int changed = dyrt_modes_from_roots(s, t);
    if (!changed && !switched) {
        /* no branch changes: not an event.  IDA would go on from the root
         * it stands on and stop with "root found at and very near t" when
         * the function is still zero just past it (a deferred root, one
         * that touches zero); started afresh there (the values at a root
         * return are consistent) it leaves a zero at its start alone */
        if (IDAReInit(s->ida, t, s->yy, s->yp) != IDA_SUCCESS)
            return sim_failed(s, IDA_MEM_FAIL, "internal: restart after a root failed");
        return 0;
    }
    int ticks = dyrt_clocks_roots(s);
    if (s->stats.events < DYRT_EVENT_LOG)
        s->stats.event_t[s->stats.events] = t;
    s->stats.events++;
    int rc = modes_count(s, t);
    if (rc)
        return rc;
    rc = changed ? zeno(s, t) : 0; /* relations only: state sets bound their own switching */
    if (rc)
        return rc;
    const double *y = N_VGetArrayPointer(s->yy), *yp = N_VGetArrayPointer(s->yp);
    rc = dyrt_asserts_at(s, t, y, yp);
    if (rc)                    /* the located failure: the caller's last row */
        return rc;
    if (ticks)                 /* a zero-crossing clock: pending, dyrt_tick restarts */
        return 0;
    save_restart_point(s);
    return restart_event(s, t, tout, "an event");
}

/* A time event: the equations may change (other functions' signs too). */
static int on_tstop(DyrtSim *s, double t, double tout)
{
    memset(s->rootsfound, 0, sizeof *s->rootsfound * (size_t)s->m->nz);
    save_restart_point(s);
    return restart_event(s, t, tout, "a time event");
}

/* One IDASolve towards tout with the stop time at the next tstop; a
 * return exactly at a model tstop restarts the integrator there. */
static int step_to(DyrtSim *s, double tout, double *tret)
{
    double tn = s->start;
    IDAGetCurrentTime(s->ida, &tn);
    double tick_now = dyrt_clocks_next(s);
    if (isfinite(tick_now) && tick_now <= s->t + dyrt_tick_eps(tick_now)) {
        /* a tick due at the current point (an event at the tick's time
         * returned first): do it before integrating on, as IDA cannot stop
         * at the time it stands at (s->t, the last point returned; IDA's own
         * time may be ahead of it) */
        for (int32_t k = 0; s->rootsfound && k < s->m->nz; k++)
            s->rootsfound[k] = 0;
        s->clk.pending = 1;
        *tret = s->t;
        return 0;
    }
    double tstop = next_stop(s, tn), tinput = dyrt_inputs_next(s, tn);
    s->bad_res = -1;           /* only a NaN in this stretch explains a failure */
    IDASetMinStep(s->ida, dyrt_min_step(tn));
    if (!isinf(tstop) && IDASetStopTime(s->ida, tstop) < 0)  /* inf: none left (IDA clears a reached one) */
        return sim_failed(s, IDA_ILL_INPUT, "internal: bad stop time");
    /* the step budget spans the restarts of one dyrt_advance (events,
     * state-set switches): IDA counts only the steps of one call */
    long nst0 = 0, nst1 = 0;
    IDAGetNumSteps(s->ida, &nst0);
    IDASetMaxNumSteps(s->ida, s->steps_left > 0 ? s->steps_left : 1);
    int flag = s->steps_left > 0 ? IDASolve(s->ida, tout, tret, s->yy, s->yp, IDA_NORMAL) : IDA_TOO_MUCH_WORK;
    IDAGetNumSteps(s->ida, &nst1);
    s->steps_left -= nst1 - nst0;
    if (flag < 0)
        return sim_failed(s, flag, NULL);
    int rc = check_finite(s, *tret);
    if (!rc && flag == IDA_ROOT_RETURN)
        return on_event(s, *tret, tout);
    double tick = dyrt_clocks_next(s);
    int at_stop = tstop < s->stop && fabs(*tret - tstop) <= 1e-12 * fmax(1.0, fabs(tstop));
    if (!rc && isfinite(tick) && fabs(*tret - tick) <= dyrt_tick_eps(tick)) {
        if (at_stop)
            s->tstop_done = tstop;
        for (int32_t k = 0; k < s->m->nz; k++)
            s->rootsfound[k] = 0; /* no function crossed: every mode follows its sign */
        s->clk.pending = 1;    /* the tick restarts the integrator */
        return 0;
    }
    if (!rc && at_stop && tstop == tinput && next_stop(s, *tret) > tstop)
        return 0;              /* a kink of an --input table: stopped on it, no restart */
    if (!rc && at_stop) {
        s->tstop_done = tstop;
        rc = on_tstop(s, *tret, tout);
    }
    return rc;
}

/* Without unknowns: straight to tout, or to the next tick before it. */
static void step_none(DyrtSim *s, double tout, double *tret)
{
    double tick = dyrt_clocks_next(s);
    *tret = tick <= tout + dyrt_tick_eps(tout) ? tick : tout;
    s->clk.pending = *tret == tick;
    dyrt_modes_from_signs(s, *tret, NULL, NULL, NULL);
}

/* Integrate until t = tout, handling events, tstops and clock ticks on the
 * way, those at tout included, and the check after each restart (which may
 * go back to the restart point).  With stop_at_ticks the return is at the
 * first tick instead, left pending (so is a tick at the current time when
 * tout is the current time); a pending tick is done before integrating on. */
/* An input set between steps (dyrt_set_input): the residual jumped, so
 * restart here; the relations follow their signs. */
static int input_restart(DyrtSim *s)
{
    s->input_changed = 0;
    for (int32_t k = 0; s->rootsfound && k < s->m->nz; k++)
        s->rootsfound[k] = 0;
    return dyrt_restart_at(s, s->t, "an input change", 1);
}

int dyrt_advance(DyrtSim *s, double tout)
{
    s->steps_left = s->max_steps;
    if (s->input_changed) {
        int rc = input_restart(s);
        if (rc)
            return rc;
    }
    for (;;) {
        int at_tout = tout <= s->t + dyrt_tick_eps(s->t);
        if (s->clk.pending && !(s->clk.stop_at_ticks && at_tout)) {
            int rc = dyrt_tick(s);
            if (rc)
                return rc;
        }
        if (at_tout)
            return 0;
        if (dyrt_interrupted())    /* SIGINT/SIGTERM in dyrt_simulate */
            return DYRT_EXIT_SIGNAL + dyrt_interrupted();
        double target = s->check_pending && s->check_t < tout ? s->check_t : tout;
        double tret = target;
        int rc = 0;
        if (s->ida)
            rc = step_to(s, target, &tret);
        else
            step_none(s, target, &tret);
        s->t = tret;
        dyrt_inputs_at(s, tret);
        if (!rc && s->check_pending && !s->clk.pending && tret >= s->check_t)
            rc = check_modes(s, tret, tout);
        if (rc || (s->clk.pending && s->clk.stop_at_ticks))
            return rc;
    }
}
