/*
 * fmi2_fmu.c -- FMI 2.0 Model Exchange and Co-Simulation on top of the
 * runtime, for the shared object inside an FMU (`dyadc fmu`, docs/FMI.md).
 * The generated model object defines `dyad_model`; this file is the rest.
 *
 * Value references (the compiler's modelDescription.xml writes the same):
 *   [0, np)                    parameter p[i]
 *   [np, np + nout)            output column (every model variable)
 *   [np + nout, np + nout + ny) der(y_i) of a differential unknown y_i
 *   [np + nout + ny, np + nout + 2 ny)  y_i itself: the variable of a state
 *                              that no output column is (a state of a
 *                              state set, `$set1[1]`: its candidate changes)
 *
 * States (ME): the differential unknowns y_i (y_is_diff), in index order.
 * Initialization: a DyrtSim (sim.c) does it -- parameters, the
 * initialization system, consistent y and y' at the start time -- so ME,
 * CS and `dyadc run` start from the same point.  Co-Simulation keeps that
 * DyrtSim and each fmi2DoStep is dyrt_step_to (IDA, events inside the step);
 * Model Exchange copies y, y', p and the modes out of it and afterwards
 * solves the index-1 system for the derivatives (me.c); a clocked model
 * keeps the DyrtSim for its clocks (clocks.c): fmi2NewDiscreteStates
 * ticks the clocks due at the event's time on it, with the instance's
 * point copied in and the new held values copied back.  A model with
 * state sets keeps the DyrtSim for the sets (stateset.c): their criteria
 * are event indicators, and fmi2NewDiscreteStates switches a set whose
 * choice has degraded, changing the values of its states (docs/FMI.md).
 *
 * The state machine of the standard (FMI 2.0.4, sections 3.2.3 and 4.2.4)
 * is checked on every call: a call in a state where the standard does not
 * allow it, on the wrong kind of instance, or with bad arguments returns
 * fmi2Error and logs a message naming the call; the instance then only
 * accepts fmi2FreeInstance, fmi2Reset and getters (the Error state).
 * Runtime messages go to the importer's logger (dyrt_set_message_hook).
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"
#include "fmi2.h"

extern const DyrtModel dyad_model;

/* The FMI states of one instance; see fmi2_allowed. */
typedef enum FmuPhase {
    FMU_INSTANTIATED, FMU_INIT, FMU_EVENT, FMU_CONT, FMU_STEP, FMU_TERMINATED, FMU_ERROR
} FmuPhase;

enum { P_INST = 1 << FMU_INSTANTIATED, P_INIT = 1 << FMU_INIT, P_EVENT = 1 << FMU_EVENT,
       P_CONT = 1 << FMU_CONT, P_STEP = 1 << FMU_STEP, P_TERM = 1 << FMU_TERMINATED,
       P_ERR = 1 << FMU_ERROR };

#define FMU_MODE_ITER_MAX 20   /* mode updates at one event instant */

/* parameters and modes: the length of p */
static int32_t npm_of(const DyrtModel *m)
{
    return m->np + (m->nmodes > 0 ? m->nmodes : 0);
}

typedef struct Fmu {
    const DyrtModel *m;
    fmi2Type kind;
    char name[128];
    fmi2CallbackFunctions cb;
    int logging;
    FmuPhase phase;
    /* experiment */
    double start, stop, tol;
    int stop_defined, tol_defined;
    /* parameters set before initialization */
    double *pset;              /* [np] */
    unsigned char *given;      /* [np] */
    int initialized;           /* the initialization has run */
    /* the current point */
    DyrtSim *sim;              /* CS: the integrator; ME: NULL after initialization,
                                  or the clocks of a clocked model */
    double t;
    double *y, *yp, *p;        /* ME: [ny], [ny], [np + nmodes] */
    double *out, *g;           /* [nout], [nz] */
    int nx;                    /* states */
    int32_t *xi;               /* [nx] their y indices */
    int32_t *out_state;        /* [nout] y index of a column that is a state, -1 */
    int solved;                /* ME: y, yp agree with t and the states */
    DyrtMe me;
    double *dx, *dy, *dyp;     /* [ny] directional-derivative scratch */
} Fmu;

/* ------------------------------------------------------------- messages */

static void log_to(Fmu *f, fmi2Status st, const char *category, const char *msg)
{
    if (f->cb.logger)
        f->cb.logger(f->cb.componentEnvironment, f->name, st, category, "%s", msg);
    else
        fprintf(stderr, "%s: %s: %s\n", f->name, category, msg);
}

static void hook(void *user, const char *kind, const char *message)
{
    Fmu *f = user;
    int err = strcmp(kind, "error") == 0;
    if (err || f->logging)
        log_to(f, err ? fmi2Error : fmi2Warning, err ? "logStatusError" : "logStatusWarning", message);
}

static fmi2Status fail(Fmu *f, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Log `fn: message` and enter the Error state. */
static fmi2Status fail(Fmu *f, const char *fn, const char *fmt, ...)
{
    char msg[768];
    int len = snprintf(msg, sizeof msg, "%s: ", fn);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
    va_end(ap);
    log_to(f, fmi2Error, "logStatusError", msg);
    f->phase = FMU_ERROR;
    return fmi2Error;
}

static const char *const phase_names[] = {
    "Instantiated", "Initialization Mode", "Event Mode", "Continuous-Time Mode", "Step Mode",
    "Terminated", "Error"};

/* 0 when the call is allowed in the current phase (bit set in `allowed`). */
static int refuse(Fmu *f, const char *fn, unsigned allowed)
{
    if (allowed & (1u << f->phase))
        return 0;
    FmuPhase was = f->phase;
    fail(f, fn, "not allowed in %s", phase_names[was]);
    return 1;
}

/* Every entry: a component, the right kind, an allowed phase; messages of
 * the runtime to the logger until the call returns (LEAVE). */
#define ENTER(c, fn, kinds, allowed)                                              \
    Fmu *f = (Fmu *)(c);                                                          \
    if (!f)                                                                       \
        return fmi2Error;                                                         \
    if (!((kinds) & (1 << f->kind)))                                              \
        return fail(f, fn, "not a function of %s", f->kind == fmi2ModelExchange   \
                    ? "Model Exchange" : "Co-Simulation");                        \
    if (refuse(f, fn, (allowed)))                                                 \
        return fmi2Error;                                                         \
    dyrt_set_message_hook(hook, f)

#define LEAVE(st) do { fmi2Status st_ = (st); dyrt_set_message_hook(NULL, NULL); return st_; } while (0)

#define ME (1 << fmi2ModelExchange)
#define CS (1 << fmi2CoSimulation)
#define ANY_KIND (ME | CS)
#define AFTER_INIT (P_INIT | P_EVENT | P_CONT | P_STEP | P_TERM | P_ERR)

/* ---------------------------------------------------------- instances */

const char *fmi2GetTypesPlatform(void)
{
    return "default";
}

const char *fmi2GetVersion(void)
{
    return "2.0";
}

static void free_point(Fmu *f)
{
    dyrt_free(f->sim);
    dyrt_me_free(&f->me);
    free(f->y);
    free(f->yp);
    free(f->p);
    free(f->dx);
    free(f->dy);
    free(f->dyp);
    f->sim = NULL;
    f->y = f->yp = f->p = f->dx = f->dy = f->dyp = NULL;
    f->initialized = f->solved = 0;
}

static void free_fmu(Fmu *f)
{
    free_point(f);
    free(f->pset);
    free(f->given);
    free(f->out);
    free(f->g);
    free(f->xi);
    free(f->out_state);
    free(f);
}

/* Parameter defaults for GetReal before initialization. */
static void param_defaults(Fmu *f)
{
    dyrt_model_param_defaults(f->m, f->pset, f->given);
}

static int alloc_fmu(Fmu *f)
{
    const DyrtModel *m = f->m;
    f->pset = calloc((size_t)m->np + 1, sizeof *f->pset);
    f->given = calloc((size_t)m->np + 1, 1);
    f->out = calloc((size_t)m->nout + 1, sizeof *f->out);
    f->g = calloc((size_t)m->nz + 1, sizeof *f->g);
    f->xi = calloc((size_t)m->ny + 1, sizeof *f->xi);
    f->out_state = calloc((size_t)m->nout + 1, sizeof *f->out_state);
    if (!f->pset || !f->given || !f->out || !f->g || !f->xi || !f->out_state)
        return -1;
    dyrt_model_output_states(m, f->out_state);
    for (int32_t i = 0; i < m->ny; i++)
        if (!m->y_is_diff || m->y_is_diff[i])
            f->xi[f->nx++] = i;
    return 0;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn)
{
    (void)fmuResourceLocation;
    (void)visible;
    Fmu *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->m = &dyad_model;
    snprintf(f->name, sizeof f->name, "%s", instanceName ? instanceName : "?");
    if (functions)
        f->cb = *functions;
    f->logging = loggingOn;
    f->kind = fmuType;
    char guid[DYRT_GUID_LEN];
    dyrt_model_guid(f->m, guid);
    const char *why = NULL;
    if (fmuType != fmi2ModelExchange && fmuType != fmi2CoSimulation)
        why = "unknown fmuType";
    else if (!fmuGUID || strcmp(fmuGUID, guid) != 0)
        why = "the GUID does not match this binary's modelDescription.xml";
    else if (dyrt_check_model(f->m) != 0)
        why = "malformed model descriptor";
    else if (alloc_fmu(f) != 0)
        why = "out of memory";
    if (why) {
        log_to(f, fmi2Error, "logStatusError", why);
        free_fmu(f);
        return NULL;
    }
    param_defaults(f);
    f->stop = INFINITY;
    return f;
}

void fmi2FreeInstance(fmi2Component c)
{
    if (c)
        free_fmu(c);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    (void)nCategories;
    (void)categories;
    ENTER(c, "fmi2SetDebugLogging", ANY_KIND, ~0u);
    f->logging = loggingOn;
    LEAVE(fmi2OK);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    ENTER(c, "fmi2SetupExperiment", ANY_KIND, P_INST);
    if (!isfinite(startTime) || (stopTimeDefined && !(stopTime >= startTime)) ||
        (toleranceDefined && !(tolerance > 0)))
        LEAVE(fail(f, "fmi2SetupExperiment", "bad start time %g, stop time %g or tolerance %g",
                   startTime, stopTime, tolerance));
    f->start = startTime;
    f->stop_defined = stopTimeDefined;
    f->stop = stopTimeDefined ? stopTime : INFINITY;
    f->tol_defined = toleranceDefined;
    f->tol = tolerance;
    LEAVE(fmi2OK);
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    ENTER(c, "fmi2EnterInitializationMode", ANY_KIND, P_INST);
    f->phase = FMU_INIT;
    f->t = f->start;
    LEAVE(fmi2OK);
}

static int ensure_solved(Fmu *f);

/* ME, clocked: the instance's point into the kept DyrtSim (what the tick
 * functions read), before a tick. */
static void me_to_sim(Fmu *f)
{
    const DyrtModel *m = f->m;
    size_t ny = (size_t)m->ny;
    if (f->sim->ida && ny > 0) {
        memcpy(N_VGetArrayPointer(f->sim->yy), f->y, ny * sizeof(double));
        memcpy(N_VGetArrayPointer(f->sim->yp), f->yp, ny * sizeof(double));
    }
    memcpy(f->sim->p, f->p, (size_t)npm_of(m) * sizeof(double));
}

/* Between two coinciding ticks: the new held values back into the
 * instance, its point solved again, and into the DyrtSim for the next. */
static int me_consistent(void *ud, double t)
{
    Fmu *f = ud;
    (void)t;
    memcpy(f->p, f->sim->p, (size_t)f->m->np * sizeof(double));
    f->solved = 0;
    if (ensure_solved(f) != 0)
        return DYRT_EXIT_USER;
    me_to_sim(f);
    return 0;
}

/* ME keeps its own copy of the point; the DyrtSim is freed (kept for its
 * clocks when the model has any). */
static int take_point(Fmu *f)
{
    const DyrtModel *m = f->m;
    size_t ny = (size_t)m->ny, npm = (size_t)m->np + (size_t)(m->nmodes > 0 ? m->nmodes : 0);
    f->y = calloc(ny + 1, sizeof *f->y);
    f->yp = calloc(ny + 1, sizeof *f->yp);
    f->p = calloc(npm + 1, sizeof *f->p);
    f->dx = calloc(ny + 1, sizeof *f->dx);
    f->dy = calloc(ny + 1, sizeof *f->dy);
    f->dyp = calloc(ny + 1, sizeof *f->dyp);
    if (!f->y || !f->yp || !f->p || !f->dx || !f->dy || !f->dyp || dyrt_me_alloc(&f->me, m))
        return -1;
    memcpy(f->y, dyrt_y(f->sim), ny * sizeof *f->y);
    memcpy(f->yp, dyrt_yp(f->sim), ny * sizeof *f->yp);
    memcpy(f->p, dyrt_params(f->sim), npm * sizeof *f->p);
    f->solved = 1;
    if (f->kind == fmi2ModelExchange && m->nclocks > 0) {
        f->sim->clk.consistent = me_consistent;
        f->sim->clk.consistent_ud = f;
    } else if (f->kind == fmi2ModelExchange && m->nsets <= 0) {
        dyrt_free(f->sim);
        f->sim = NULL;
    }
    return 0;
}

/* The settings of the experiment, the parameters set, dyrt_init. */
static int initialize(Fmu *f)
{
    const DyrtModel *m = f->m;
    if (!(f->sim = dyrt_create(m)))
        return -1;
    int rc = dyrt_set_times(f->sim, f->start, f->stop);
    if (!rc && f->tol_defined)
        rc = dyrt_set_tolerances(f->sim, f->tol, fmin(f->tol, f->sim->atol));
    for (int32_t i = 0; !rc && i < m->np; i++)
        if (f->given[i] && (m->param_flags[i] & DYRT_PARAM_INPUT))
            rc = dyrt_set_input(f->sim, i, f->pset[i]);
        else if (f->given[i])
            rc = dyrt_set_param_index(f->sim, i, f->pset[i]);
    double scale = dyrt_time_scale(f->sim);
    if (!rc)
        rc = dyrt_init(f->sim, f->start + scale / 500);
    if (!rc && dyrt_tick_pending(f->sim))   /* ticks at the start belong to the initialization */
        rc = dyrt_tick(f->sim);
    if (!rc)
        rc = take_point(f);
    f->initialized = !rc;
    return rc;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    ENTER(c, "fmi2ExitInitializationMode", ANY_KIND, P_INIT);
    if (!f->initialized && initialize(f) != 0)
        LEAVE(fail(f, "fmi2ExitInitializationMode", "the initialization failed"));
    f->phase = f->kind == fmi2ModelExchange ? FMU_EVENT : FMU_STEP;
    LEAVE(fmi2OK);
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    ENTER(c, "fmi2Terminate", ANY_KIND, P_EVENT | P_CONT | P_STEP);
    f->phase = FMU_TERMINATED;
    LEAVE(fmi2OK);
}

fmi2Status fmi2Reset(fmi2Component c)
{
    ENTER(c, "fmi2Reset", ANY_KIND, ~0u);
    free_point(f);
    memset(f->given, 0, (size_t)f->m->np);
    param_defaults(f);
    f->phase = FMU_INSTANTIATED;
    f->start = 0;
    f->stop = INFINITY;
    f->stop_defined = f->tol_defined = 0;
    LEAVE(fmi2OK);
}

/* ------------------------------------------------------ get and set */

/* ME: y and yp solved for the current t and states. */
static int ensure_solved(Fmu *f)
{
    if (f->kind != fmi2ModelExchange || f->solved)
        return 0;
    if (dyrt_me_solve(&f->me, f->t, f->y, f->yp, f->p) != 0) {
        dyrt_error("the equations have no solution for the derivatives at t = %.17g "
                   "(a singular or diverging Newton iteration)", f->t);
        return -1;
    }
    f->solved = 1;
    return 0;
}

/* The current point: CS from the integrator, ME from its own arrays. */
static void point(Fmu *f, double *t, const double **y, const double **yp, const double **p)
{
    if (f->kind == fmi2CoSimulation && f->sim) {
        *t = dyrt_time(f->sim);
        *y = dyrt_y(f->sim);
        *yp = dyrt_yp(f->sim);
        *p = dyrt_params(f->sim);
    } else {
        *t = f->t;
        *y = f->y;
        *yp = f->yp;
        *p = f->p;
    }
}

static int bad_vr(const Fmu *f, fmi2ValueReference vr)
{
    const DyrtModel *m = f->m;
    return vr >= (fmi2ValueReference)(m->np + m->nout + 2 * m->ny);
}

/* Values before initialization: parameters only. */
static fmi2Status get_before_init(Fmu *f, const fmi2ValueReference vr[], size_t nvr,
                                  fmi2Real value[])
{
    for (size_t k = 0; k < nvr; k++) {
        if (vr[k] >= (fmi2ValueReference)f->m->np)
            return fail(f, "fmi2GetReal", "value reference %u is not a parameter: it has no "
                        "value before the initialization", vr[k]);
        value[k] = f->pset[vr[k]];
    }
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[])
{
    ENTER(c, "fmi2GetReal", ANY_KIND, P_INST | AFTER_INIT);
    const DyrtModel *m = f->m;
    if (nvr > 0 && (!vr || !value))
        LEAVE(fail(f, "fmi2GetReal", "null array"));
    for (size_t k = 0; k < nvr; k++)
        if (bad_vr(f, vr[k]))
            LEAVE(fail(f, "fmi2GetReal", "unknown value reference %u", vr[k]));
    if (f->phase == FMU_INSTANTIATED || (f->phase == FMU_INIT && !f->initialized &&
                                         initialize(f) != 0))
        LEAVE(f->phase == FMU_INSTANTIATED ? get_before_init(f, vr, nvr, value)
                                           : fail(f, "fmi2GetReal", "the initialization failed"));
    if (f->phase != FMU_ERROR && ensure_solved(f) != 0)
        LEAVE(fail(f, "fmi2GetReal", "cannot evaluate the model"));
    double t;
    const double *y, *yp, *p;
    point(f, &t, &y, &yp, &p);
    dyrt_model_outputs(m, t, y, yp, p, f->out);
    for (size_t k = 0; k < nvr; k++) {
        fmi2ValueReference v = vr[k];
        if (v < (fmi2ValueReference)m->np)
            value[k] = p[v];
        else if (v < (fmi2ValueReference)(m->np + m->nout))
            value[k] = f->out[v - (fmi2ValueReference)m->np];
        else if (v < (fmi2ValueReference)(m->np + m->nout + m->ny))
            value[k] = yp[v - (fmi2ValueReference)(m->np + m->nout)];
        else
            value[k] = y[v - (fmi2ValueReference)(m->np + m->nout + m->ny)];
    }
    LEAVE(fmi2OK);
}

static int is_input(const DyrtModel *m, fmi2ValueReference v)
{
    return v < (fmi2ValueReference)m->np && (m->param_flags[v] & DYRT_PARAM_INPUT);
}

/* An input: kept for the initialization, and now in the point (ME) or the
 * integrator (CS: it restarts at the next step). */
static int set_input(Fmu *f, fmi2ValueReference v, double value)
{
    f->pset[v] = value;
    f->given[v] = 1;
    if (f->kind == fmi2CoSimulation && f->sim && f->initialized)
        return dyrt_set_input(f->sim, (int)v, value);
    if (f->initialized) {
        f->p[v] = value;
        f->solved = 0;
    }
    return 0;
}

/* Inputs in any mode; parameters before the end of initialization. */
static int settable_now(const Fmu *f, const fmi2ValueReference vr[], size_t nvr)
{
    for (size_t k = 0; k < nvr; k++)
        if (!is_input(f->m, vr[k]) && f->phase != FMU_INSTANTIATED && f->phase != FMU_INIT)
            return 0;
    return 1;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
    ENTER(c, "fmi2SetReal", ANY_KIND, P_INST | P_INIT | P_EVENT | P_CONT | P_STEP);
    const DyrtModel *m = f->m;
    if (nvr > 0 && (!vr || !value))
        LEAVE(fail(f, "fmi2SetReal", "null array"));
    if (!settable_now(f, vr, nvr))
        LEAVE(fail(f, "fmi2SetReal", "a parameter cannot be set in %s (only inputs)",
                   phase_names[f->phase]));
    for (size_t k = 0; k < nvr; k++) {
        fmi2ValueReference v = vr[k];
        if (is_input(m, v)) {
            if (!isfinite(value[k]) || set_input(f, v, value[k]) != 0)
                LEAVE(fail(f, "fmi2SetReal", "input '%s': %g not accepted", m->param_names[v], value[k]));
            continue;
        }
        if (v >= (fmi2ValueReference)m->np)
            LEAVE(fail(f, "fmi2SetReal", "value reference %u is not a parameter that can be set",
                       v));
        if (m->param_flags[v] & (DYRT_PARAM_FINAL | DYRT_PARAM_MISSING | DYRT_PARAM_DEPENDENT |
                                 DYRT_PARAM_DISCRETE))
            LEAVE(fail(f, "fmi2SetReal", "parameter '%s' is %s and cannot be set",
                       m->param_names[v], (m->param_flags[v] & DYRT_PARAM_FINAL) ? "final"
                       : (m->param_flags[v] & DYRT_PARAM_MISSING) ? "computed by the initialization"
                       : (m->param_flags[v] & DYRT_PARAM_DISCRETE) ? "a clocked value"
                       : "calculated from other parameters"));
        if (!isfinite(value[k]))
            LEAVE(fail(f, "fmi2SetReal", "parameter '%s': %g is not finite", m->param_names[v],
                       value[k]));
    }
    int params = 0;
    for (size_t k = 0; k < nvr; k++) {
        if (is_input(m, vr[k]))
            continue;
        f->pset[vr[k]] = value[k];
        f->given[vr[k]] = 1;
        params = 1;
    }
    param_defaults(f);
    if (params && f->initialized)  /* new parameters in Initialization Mode: redo it */
        free_point(f);
    LEAVE(fmi2OK);
}

/* No Integer, Boolean or String variables: only empty calls succeed. */
#define NO_VARIABLES(fn, type, constness)                                                  \
    fmi2Status fn(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,              \
                  constness type value[])                                                  \
    {                                                                                      \
        (void)vr;                                                                          \
        (void)value;                                                                       \
        ENTER(c, #fn, ANY_KIND, ~0u);                                                      \
        if (nvr > 0)                                                                       \
            LEAVE(fail(f, #fn, "the model has no variables of this type (value reference %u)", \
                       vr ? vr[0] : 0));                                                   \
        LEAVE(fmi2OK);                                                                     \
    }
NO_VARIABLES(fmi2GetInteger, fmi2Integer, )
NO_VARIABLES(fmi2GetBoolean, fmi2Boolean, )
NO_VARIABLES(fmi2GetString, fmi2String, )
NO_VARIABLES(fmi2SetInteger, fmi2Integer, const)
NO_VARIABLES(fmi2SetBoolean, fmi2Boolean, const)
NO_VARIABLES(fmi2SetString, fmi2String, const)

/* ---------------------------------------------------------- FMU state
 * Model Exchange: the whole instance state is the point (t, y, y', p with
 * the modes, and a clocked model's count of ticks done of each periodic
 * clock) and the mode of the state machine, so a saved state restores
 * exactly.  Serialized as a magic word, the sizes and the doubles.
 * Co-Simulation: the DyrtSim's state (dyrt_state_save: the point, the
 * event and clock bookkeeping); IDA's history is not kept, so saving
 * restarts the integrator at the current point and restoring restarts it
 * the same way: a step after a save and the same step after restoring
 * that state give the same bits. */

#define FMU_STATE_MAGIC 0x44594144u   /* "DYAD" */

typedef struct FmuState {
    uint32_t magic;
    int32_t ny, npm, nclk;     /* sizes, checked on restore */
    int32_t phase, solved;
    double t;
    double v[];                /* y [ny], yp [ny], p [npm], the clocks' next tick
                                  numbers [nclk] */
} FmuState;


static size_t state_size(const Fmu *f)
{
    const DyrtModel *m = f->m;
    if (f->kind == fmi2CoSimulation)
        return sizeof(FmuState) + sizeof(double) * (f->sim ? dyrt_state_size(f->sim) : 0);
    return sizeof(FmuState) + sizeof(double) * (2 * (size_t)m->ny + (size_t)npm_of(m) +
                                                (size_t)m->nclocks);
}

static int state_ok(Fmu *f, const char *fn)
{
    if (!f->initialized || (f->kind == fmi2CoSimulation && (!f->sim || f->sim->phase != DYRT_SIM_READY))) {
        fail(f, fn, "no state before the initialization or after a failed step");
        return 0;
    }
    return 1;
}

/* 0, or -1 when Co-Simulation's restart failed */
static int state_save(const Fmu *f, FmuState *st)
{
    const DyrtModel *m = f->m;
    size_t ny = (size_t)m->ny;
    *st = (FmuState){.magic = FMU_STATE_MAGIC, .ny = m->ny, .npm = npm_of(m), .nclk = m->nclocks,
                     .phase = (int32_t)f->phase, .solved = f->solved, .t = f->t};
    if (f->kind == fmi2CoSimulation)
        return dyrt_state_save(f->sim, st->v) ? -1 : 0;
    memcpy(st->v, f->y, ny * sizeof(double));
    memcpy(st->v + ny, f->yp, ny * sizeof(double));
    memcpy(st->v + 2 * ny, f->p, (size_t)npm_of(m) * sizeof(double));
    for (int32_t c = 0; c < m->nclocks; c++)
        st->v[2 * ny + (size_t)npm_of(m) + (size_t)c] = (double)f->sim->clk.next[c];
    return 0;
}

static int state_valid(const Fmu *f, const FmuState *st)
{
    return st && st->magic == FMU_STATE_MAGIC && st->ny == f->m->ny && st->npm == npm_of(f->m) &&
           st->nclk == f->m->nclocks &&
           (f->kind == fmi2CoSimulation ? st->phase == FMU_STEP
                                        : st->phase == FMU_EVENT || st->phase == FMU_CONT || st->phase == FMU_INIT);
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    ENTER(c, "fmi2GetFMUstate", ANY_KIND, AFTER_INIT & ~P_ERR);
    if (!s || !state_ok(f, "fmi2GetFMUstate"))
        LEAVE(f->phase == FMU_ERROR ? fmi2Error : fail(f, "fmi2GetFMUstate", "null pointer"));
    FmuState *st = *s ? *s : malloc(state_size(f));
    if (!st)
        LEAVE(fail(f, "fmi2GetFMUstate", "out of memory"));
    *s = st;
    if (state_save(f, st) != 0)
        LEAVE(fail(f, "fmi2GetFMUstate", "the integrator's restart at t = %.17g failed", st->t));
    LEAVE(fmi2OK);
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s)
{
    ENTER(c, "fmi2SetFMUstate", ANY_KIND, AFTER_INIT & ~P_ERR);
    if (!state_ok(f, "fmi2SetFMUstate"))
        LEAVE(fmi2Error);
    const FmuState *st = s;
    if (!state_valid(f, st))
        LEAVE(fail(f, "fmi2SetFMUstate", "not a state of this model"));
    if (f->kind == fmi2CoSimulation) {
        if (dyrt_state_restore(f->sim, st->v) != 0)
            LEAVE(fail(f, "fmi2SetFMUstate", "the integrator's restart at t = %.17g failed", st->t));
        LEAVE(fmi2OK);
    }
    size_t ny = (size_t)f->m->ny;
    memcpy(f->y, st->v, ny * sizeof(double));
    memcpy(f->yp, st->v + ny, ny * sizeof(double));
    memcpy(f->p, st->v + 2 * ny, (size_t)st->npm * sizeof(double));
    for (int32_t c = 0; c < st->nclk; c++)
        f->sim->clk.next[c] = (long long)st->v[2 * ny + (size_t)st->npm + (size_t)c];
    f->t = st->t;
    f->solved = st->solved;
    f->phase = (FmuPhase)st->phase;
    LEAVE(fmi2OK);
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    ENTER(c, "fmi2FreeFMUstate", ANY_KIND, ~0u);
    if (s) {
        free(*s);
        *s = NULL;
    }
    LEAVE(fmi2OK);
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n)
{
    ENTER(c, "fmi2SerializedFMUstateSize", ANY_KIND, ~0u);
    if (!n || !state_valid(f, s))
        LEAVE(fail(f, "fmi2SerializedFMUstateSize", "not a state of this model"));
    *n = state_size(f);
    LEAVE(fmi2OK);
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n)
{
    ENTER(c, "fmi2SerializeFMUstate", ANY_KIND, ~0u);
    if (!b || !state_valid(f, s) || n < state_size(f))
        LEAVE(fail(f, "fmi2SerializeFMUstate", "not a state of this model, or the buffer is too small"));
    memcpy(b, s, state_size(f));
    LEAVE(fmi2OK);
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s)
{
    ENTER(c, "fmi2DeSerializeFMUstate", ANY_KIND, ~0u);
    size_t size = state_size(f);
    if (!b || !s || n != size || !state_valid(f, (const FmuState *)(const void *)b))
        LEAVE(fail(f, "fmi2DeSerializeFMUstate", "%zu bytes are not a serialized state of this model", n));
    FmuState *st = malloc(size);
    if (!st)
        LEAVE(fail(f, "fmi2DeSerializeFMUstate", "out of memory"));
    memcpy(st, b, size);
    *s = st;
    LEAVE(fmi2OK);
}

/* ------------------------------------------------- Model Exchange */

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    ENTER(c, "fmi2SetTime", ME, P_EVENT | P_CONT);
    if (!isfinite(time))
        LEAVE(fail(f, "fmi2SetTime", "time %g is not finite", time));
    f->t = time;
    f->solved = 0;
    LEAVE(fmi2OK);
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    ENTER(c, "fmi2SetContinuousStates", ME, P_EVENT | P_CONT);
    if (nx != (size_t)f->nx || (nx > 0 && !x))
        LEAVE(fail(f, "fmi2SetContinuousStates", "%zu states given, the model has %d", nx, f->nx));
    for (int k = 0; k < f->nx; k++)
        f->y[f->xi[k]] = x[k];
    f->solved = 0;
    LEAVE(fmi2OK);
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    ENTER(c, "fmi2GetContinuousStates", ME, AFTER_INIT);
    if (nx != (size_t)f->nx || (nx > 0 && !x))
        LEAVE(fail(f, "fmi2GetContinuousStates", "%zu states asked for, the model has %d", nx, f->nx));
    if (!f->initialized && initialize(f) != 0)
        LEAVE(fail(f, "fmi2GetContinuousStates", "the initialization failed"));
    for (int k = 0; k < f->nx; k++)
        x[k] = f->y[f->xi[k]];
    LEAVE(fmi2OK);
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    ENTER(c, "fmi2GetNominalsOfContinuousStates", ME, AFTER_INIT | P_INST);
    if (nx != (size_t)f->nx || (nx > 0 && !x_nominal))
        LEAVE(fail(f, "fmi2GetNominalsOfContinuousStates", "%zu states asked for, the model has %d",
                   nx, f->nx));
    for (size_t k = 0; k < nx; k++)
        x_nominal[k] = 1.0;
    LEAVE(fmi2OK);
}

/* Solve and copy out: derivatives, or event indicators. */
static fmi2Status me_eval(Fmu *f, const char *fn, size_t n, size_t want, fmi2Real v[], int which)
{
    if (n != want || (n > 0 && !v))
        return fail(f, fn, "%zu values asked for, the model has %zu", n, want);
    if (!f->initialized && initialize(f) != 0)
        return fail(f, fn, "the initialization failed");
    if (ensure_solved(f) != 0)
        return fail(f, fn, "cannot evaluate the model at t = %.17g", f->t);
    if (which == 0) {
        for (int k = 0; k < f->nx; k++)
            v[k] = f->yp[f->xi[k]];
    } else if (n > 0) {
        f->m->zero_crossings(f->t, f->y, f->yp, f->p, v);
        if (f->m->nsets > 0) {     /* the sets' criteria (their choice: the modes in p) */
            memcpy(f->sim->p, f->p, (size_t)npm_of(f->m) * sizeof(double));
            dyrt_sets_criteria(f->sim, f->t, f->y, f->yp, v);
        }
    }
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return fail(f, fn, "value %zu is %g at t = %.17g", k, v[k], f->t);
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
    ENTER(c, "fmi2GetDerivatives", ME, AFTER_INIT & ~P_ERR);
    LEAVE(me_eval(f, "fmi2GetDerivatives", nx, (size_t)f->nx, derivatives, 0));
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    ENTER(c, "fmi2GetEventIndicators", ME, AFTER_INIT & ~P_ERR);
    LEAVE(me_eval(f, "fmi2GetEventIndicators", ni, (size_t)f->m->nz, eventIndicators, 1));
}

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    ENTER(c, "fmi2EnterEventMode", ME, P_CONT | P_EVENT);
    f->phase = FMU_EVENT;
    LEAVE(fmi2OK);
}

/* Modes from the signs of the indicators at the current point (a zero
 * keeps its mode; the modes of state sets are choices, kept as dyrt_init
 * made them -- their switching is not exported yet); returns how many
 * changed. */
static int modes_from_signs(Fmu *f)
{
    const DyrtModel *m = f->m;
    if (m->nmodes <= 0)
        return 0;
    m->zero_crossings(f->t, f->y, f->yp, f->p, f->g);
    int changed = 0;
    for (int32_t k = 0; k < m->nmodes; k++) {
        double *mode = &f->p[m->np + k];
        if (!dyrt_event_follows_sign(m, k) || f->g[k] == 0 || *mode == (f->g[k] > 0 ? 1.0 : 0.0))
            continue;              /* (a state set's choice is no sign: kept) */
        *mode = f->g[k] > 0 ? 1.0 : 0.0;
        changed++;
    }
    return changed;
}

/* The first model stop time or clock tick after t. */
static int next_time_event(const Fmu *f, double *tnext)
{
    const DyrtSettings *d = &f->m->defaults;
    double eps = 1e-12 * fmax(1.0, fabs(f->t)), best = INFINITY;
    for (int32_t k = 0; k < d->ntstops; k++)
        if (d->tstops[k] > f->t + eps && d->tstops[k] < best)
            best = d->tstops[k];
    if (f->sim)
        best = fmin(best, dyrt_clocks_next(f->sim));
    *tnext = best;
    return isfinite(best);
}

/* Modes from the signs until none changes; 0, or -1 after a message. */
static int settle_modes(Fmu *f)
{
    for (int it = 0;; it++) {
        if (ensure_solved(f) != 0)
            return fail(f, "fmi2NewDiscreteStates", "cannot evaluate the model at t = %.17g", f->t), -1;
        if (modes_from_signs(f) == 0)
            return 0;
        if (it == FMU_MODE_ITER_MAX)
            return fail(f, "fmi2NewDiscreteStates", "the relations (ifelse conditions) keep "
                        "changing their branch at t = %.17g", f->t), -1;
        f->solved = 0;
    }
}

/* The clocks due at t tick (a periodic clock at its tick time, a
 * zero-crossing clock whose function's mode changed in this event), as
 * `dyadc run` does at an event: modes, ticks, modes with the new held
 * values.  0, or -1 after a message. */
static int me_clock_event(Fmu *f)
{
    const DyrtModel *m = f->m;
    if (ensure_solved(f) != 0)
        return fail(f, "fmi2NewDiscreteStates", "cannot evaluate the model at t = %.17g", f->t), -1;
    me_to_sim(f);
    dyrt_clocks_snapshot(f->sim);
    if (settle_modes(f) != 0)
        return -1;
    me_to_sim(f);
    for (int32_t k = 0; k < m->nz; k++)
        f->sim->rootsfound[k] = 1;
    dyrt_clocks_roots(f->sim);
    if (dyrt_clocks_tick(f->sim, f->t) != 0)
        return fail(f, "fmi2NewDiscreteStates", "a clock tick failed at t = %.17g", f->t), -1;
    memcpy(f->p, f->sim->p, (size_t)m->np * sizeof(double));
    f->solved = 0;
    return settle_modes(f);
}

/* The state sets whose choice has degraded (below DYRT_SET_SWITCH of the
 * best, stateset.c) switch at the event's point, as `dyadc run` does at
 * their root: the modes (in p) and the values of the set states (y, y')
 * change to the new candidates'; the point is solved again with them.
 * Returns how many switched, -1 after a message. */
static int me_switch_sets(Fmu *f)
{
    const DyrtModel *m = f->m;
    if (m->nsets <= 0)
        return 0;
    if (ensure_solved(f) != 0)
        return fail(f, "fmi2NewDiscreteStates", "cannot evaluate the model at t = %.17g", f->t), -1;
    memcpy(f->sim->p, f->p, (size_t)npm_of(m) * sizeof(double));
    int n = dyrt_sets_switch(f->sim, f->t, f->y, f->yp, NULL);
    if (n == 0)
        return 0;
    memcpy(f->p, f->sim->p, (size_t)npm_of(m) * sizeof(double));
    f->solved = 0;
    return settle_modes(f) != 0 ? -1 : n;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
    ENTER(c, "fmi2NewDiscreteStates", ME, P_EVENT);
    if (!info)
        LEAVE(fail(f, "fmi2NewDiscreteStates", "null event info"));
    if ((f->m->nclocks > 0 ? me_clock_event(f) : settle_modes(f)) != 0)
        LEAVE(fmi2Error);
    int switched = me_switch_sets(f);
    if (switched < 0)
        LEAVE(fmi2Error);
    memset(info, 0, sizeof *info);
    info->valuesOfContinuousStatesChanged = switched > 0;
    info->nextEventTimeDefined = next_time_event(f, &info->nextEventTime);
    if (!info->nextEventTimeDefined)
        info->nextEventTime = 0;
    LEAVE(fmi2OK);
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    ENTER(c, "fmi2EnterContinuousTimeMode", ME, P_EVENT);
    f->phase = FMU_CONT;
    LEAVE(fmi2OK);
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    ENTER(c, "fmi2CompletedIntegratorStep", ME, P_CONT);
    if (!enterEventMode || !terminateSimulation)
        LEAVE(fail(f, "fmi2CompletedIntegratorStep", "null result pointer"));
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    if (ensure_solved(f) != 0)
        LEAVE(fail(f, "fmi2CompletedIntegratorStep", "cannot evaluate the model at t = %.17g", f->t));
    if (f->m->check_asserts && f->m->check_asserts(f->t, f->y, f->yp, f->p) > 0) {
        int k = f->m->check_asserts(f->t, f->y, f->yp, f->p);
        dyrt_error("assertion failed at t=%.17g: %s", f->t,
                   f->m->assert_messages ? f->m->assert_messages[k - 1] : "?");
        *terminateSimulation = fmi2True;
    }
    LEAVE(fmi2OK);
}

/* dz for unit seeds on the states (known) -> derivatives, states, outputs. */
static double directional_value(Fmu *f, fmi2ValueReference v)
{
    const DyrtModel *m = f->m;
    fmi2ValueReference np = (fmi2ValueReference)m->np, no = (fmi2ValueReference)m->nout;
    if (v < np)
        return 0.0;
    if (v >= np + no + (fmi2ValueReference)m->ny)
        return f->dy[v - np - no - (fmi2ValueReference)m->ny];
    if (v >= np + no)
        return f->dyp[v - np - no];
    return f->out[v - np];
}

/* d out = the outputs at (y + h dy, yp + h dyp) minus at (y, yp), over h:
 * the outputs function is not differentiated by the compiler; copies of y
 * and y' (most outputs) are exact, other expressions first-order. */
static void output_directions(Fmu *f)
{
    const DyrtModel *m = f->m;
    double h = 1e-7, *y1 = f->dx, *base = malloc(sizeof(double) * ((size_t)m->nout + 1));
    double *yp1 = calloc((size_t)m->ny + 1, sizeof *yp1);
    if (!base || !yp1) {
        free(base);
        free(yp1);
        return;
    }
    dyrt_model_outputs(m, f->t, f->y, f->yp, f->p, base);
    for (int32_t i = 0; i < m->ny; i++) {
        y1[i] = f->y[i] + h * f->dy[i];
        yp1[i] = f->yp[i] + h * f->dyp[i];
    }
    dyrt_model_outputs(m, f->t, y1, yp1, f->p, f->out);
    for (int32_t k = 0; k < m->nout; k++)
        f->out[k] = (f->out[k] - base[k]) / h;
    free(base);
    free(yp1);
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[])
{
    ENTER(c, "fmi2GetDirectionalDerivative", ME, P_EVENT | P_CONT);
    const DyrtModel *m = f->m;
    if ((nKnown && (!vKnown_ref || !dvKnown)) || (nUnknown && (!vUnknown_ref || !dvUnknown)))
        LEAVE(fail(f, "fmi2GetDirectionalDerivative", "null array"));
    if (ensure_solved(f) != 0)
        LEAVE(fail(f, "fmi2GetDirectionalDerivative", "cannot evaluate the model"));
    memset(f->dx, 0, sizeof(double) * (size_t)m->ny);
    for (size_t k = 0; k < nKnown; k++) {
        fmi2ValueReference v = vKnown_ref[k];
        int i = (int)v - m->np, own = (int)v - m->np - m->nout - m->ny;   /* own: a set state's variable */
        if (v < (fmi2ValueReference)m->np || (i >= m->nout && (own < 0 || own >= m->ny)))
            LEAVE(fail(f, "fmi2GetDirectionalDerivative", "value reference %u is not a state", v));
        int32_t yi = own >= 0 ? own : f->out_state[i];
        if (yi < 0 || (m->y_is_diff && !m->y_is_diff[yi]))
            LEAVE(fail(f, "fmi2GetDirectionalDerivative", "'%s' is not a state",
                       own >= 0 ? m->y_names[own] : m->out_names[i]));
        f->dx[yi] += dvKnown[k];
    }
    if (dyrt_me_directional(&f->me, f->t, f->y, f->yp, f->p, f->dx, f->dy, f->dyp) != 0)
        LEAVE(fail(f, "fmi2GetDirectionalDerivative", "singular Jacobian at t = %.17g", f->t));
    output_directions(f);
    for (size_t k = 0; k < nUnknown; k++) {
        if (bad_vr(f, vUnknown_ref[k]))
            LEAVE(fail(f, "fmi2GetDirectionalDerivative", "unknown value reference %u",
                       vUnknown_ref[k]));
        dvUnknown[k] = directional_value(f, vUnknown_ref[k]);
    }
    LEAVE(fmi2OK);
}

/* ---------------------------------------------------- Co-Simulation */

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    ENTER(c, "fmi2DoStep", CS, P_STEP);
    double t = dyrt_time(f->sim), tc = currentCommunicationPoint, h = communicationStepSize;
    double eps = 1e-12 * fmax(1.0, fabs(t));
    if (!(fabs(tc - t) <= eps))
        LEAVE(fail(f, "fmi2DoStep", "the communication point %.17g is not the current time %.17g",
                   tc, t));
    if (!(h >= 0) || !isfinite(h))
        LEAVE(fail(f, "fmi2DoStep", "step size %g is not a non-negative number", h));
    double tout = tc + h;
    if (tout > f->stop && tout - f->stop <= 1e-12 * fmax(1.0, fabs(f->stop)))
        tout = f->stop;
    if (tout > f->stop)
        LEAVE(fail(f, "fmi2DoStep", "the step ends at %.17g, after the stop time %.17g", tout,
                   f->stop));
    if (tout < t)
        tout = t;
    /* a clock tick at the end of the step is done in it: the values at the
     * communication point are those after the tick, as dyadc run's last row */
    if (dyrt_step_to(f->sim, tout) != 0 || (dyrt_tick_pending(f->sim) && dyrt_tick(f->sim) != 0))
        LEAVE(fail(f, "fmi2DoStep", "the integration failed"));
    LEAVE(fmi2OK);
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
    ENTER(c, "fmi2CancelStep", CS, P_STEP);
    LEAVE(fail(f, "fmi2CancelStep", "fmi2DoStep never returns fmi2Pending"));
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    (void)vr; (void)order; (void)value;
    ENTER(c, "fmi2SetRealInputDerivatives", CS, ~0u);
    if (nvr > 0)
        LEAVE(fail(f, "fmi2SetRealInputDerivatives", "canInterpolateInputs is false"));
    LEAVE(fmi2OK);
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    (void)vr; (void)order; (void)value;
    ENTER(c, "fmi2GetRealOutputDerivatives", CS, ~0u);
    if (nvr > 0)
        LEAVE(fail(f, "fmi2GetRealOutputDerivatives", "maxOutputDerivativeOrder is 0"));
    LEAVE(fmi2OK);
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    ENTER(c, "fmi2GetStatus", CS, ~0u);
    if (s != fmi2DoStepStatus || !value)
        LEAVE(fail(f, "fmi2GetStatus", "only fmi2DoStepStatus is available"));
    *value = f->phase == FMU_ERROR ? fmi2Error : fmi2OK;
    LEAVE(fmi2OK);
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    ENTER(c, "fmi2GetRealStatus", CS, ~0u);
    if (s != fmi2LastSuccessfulTime || !value || !f->sim)
        LEAVE(fail(f, "fmi2GetRealStatus", "only fmi2LastSuccessfulTime after initialization"));
    *value = dyrt_time(f->sim);
    LEAVE(fmi2OK);
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s; (void)value;
    ENTER(c, "fmi2GetIntegerStatus", CS, ~0u);
    LEAVE(fail(f, "fmi2GetIntegerStatus", "no integer status"));
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    ENTER(c, "fmi2GetBooleanStatus", CS, ~0u);
    if (s != fmi2Terminated || !value)
        LEAVE(fail(f, "fmi2GetBooleanStatus", "only fmi2Terminated"));
    *value = fmi2False;
    LEAVE(fmi2OK);
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    (void)s; (void)value;
    ENTER(c, "fmi2GetStringStatus", CS, ~0u);
    LEAVE(fail(f, "fmi2GetStringStatus", "no string status"));
}
