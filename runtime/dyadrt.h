/*
 * dyadrt.h -- public API of libdyadrt, the simulation runtime.
 *
 * A compiled model is a `const DyrtModel` (dyad_model.h).  The runtime
 * parses the simulator command line (DESIGN.md section 4), resolves the
 * parameters, solves the initialization system, integrates F(t, y, y', p) = 0
 * with SUNDIALS IDA and writes the result CSV.
 *
 * Three entry points:
 *   dyrt_main      -- the whole simulator: argv in, exit status out.  The
 *                     standalone executable is `main` calling it (main.c).
 *   dyrt_simulate  -- in-process use (the JIT path of `dyadc run`): the
 *                     caller fills a DyrtOptions, e.g. with dyrt_options_parse.
 *   DyrtSim        -- the simulation handle, SUNDIALS style: dyrt_create,
 *                     dyrt_set_*, dyrt_init, dyrt_step_to, dyrt_get*,
 *                     dyrt_free.  dyrt_simulate is one client of it (it adds
 *                     the CSV, the plot and the progress line); an FMI
 *                     co-simulation wrapper or an ensemble driver is another.
 * Every int-returning function returns a process exit status: DYRT_EXIT_OK,
 * DYRT_EXIT_USER (bad option or name, failed initialization or simulation)
 * or DYRT_EXIT_INTERNAL (a malformed model descriptor, an allocation
 * failure, a SUNDIALS setup error, a call out of sequence); dyrt_simulate
 * stopped by SIGINT or SIGTERM returns DYRT_EXIT_SIGNAL + the signal's
 * number (130, 143: what a shell reports for a process the signal ended).
 * Diagnostics go to stderr as `error: message`.  Nothing is global: the
 * functions may be called many times in one process.
 */
#ifndef DYADRT_H
#define DYADRT_H

#include <stdio.h>

#include "dyad_model.h"

enum {
    DYRT_EXIT_OK = 0,
    DYRT_EXIT_USER = 1,
    DYRT_EXIT_INTERNAL = 2,
    DYRT_EXIT_SIGNAL = 128
};

/* Bits of DyrtOptions.given: which settings came from the command line. */
enum {
    DYRT_OPT_START = 1,
    DYRT_OPT_STOP = 2,
    DYRT_OPT_INTERVAL = 4,
    DYRT_OPT_RTOL = 8,
    DYRT_OPT_ATOL = 16,
    DYRT_OPT_DTMAX = 32
};

typedef struct DyrtNameValue {
    char *name;                /* owned copy */
    double value;
} DyrtNameValue;

typedef struct DyrtOptions {
    double start, stop, interval, rtol, atol, dtmax; /* valid per `given` */
    unsigned given;            /* DYRT_OPT_* bits */
    DyrtNameValue *params;     /* -p NAME=VALUE, in command-line order */
    int nparams;
    DyrtNameValue *initials;   /* --initial NAME=VALUE */
    int ninitials;
    char **vars;               /* --vars: output columns, in order; NULL = all */
    int nvars;
    double *saveat;            /* --saveat: output times, ascending; NULL = grid */
    int nsaveat;
    const char *output;        /* -o; NULL = "<model name>.csv", "-" = stdout */
    int verbose;               /* -v: statistics on stderr */
    int list_params;           /* --list-params: print parameters, exit */
    int help;                  /* --help: print usage, exit */
    const char *plot;          /* --plot FILE.png|FILE.svg (gnuplot); NULL = none */
    const char *input;         /* --input FILE.csv: the inputs over time; NULL = none */
} DyrtOptions;

/* Zero every field (no settings given, all outputs, default file). */
void dyrt_options_init(DyrtOptions *o);

/* Parse simulator options argv[1..argc); argv[0] is the program name.
 * Returns 0, or DYRT_EXIT_USER after printing `error: ...`.  Values are
 * checked here (numbers, ranges); names are checked against the model by
 * dyrt_simulate.  On error the options may be partly filled: free them. */
int dyrt_options_parse(DyrtOptions *o, int argc, char **argv);

/* Release what dyrt_options_parse allocated; leaves *o initialized. */
void dyrt_options_free(DyrtOptions *o);

/* How many values the simulator option `arg` takes: 0 for a flag, 1 for an
 * option with a value (also when given as `--opt=value`, then 0), -1 when
 * `arg` is not a simulator option.  Lets a driver split its own command
 * line from the simulator's. */
int dyrt_option_arity(const char *arg);

/* Print the option summary (for --help). */
void dyrt_usage(FILE *f, const char *prog, const DyrtModel *m);

/* The option lines of that summary alone (for a driver's own help), and the
 * i-th option's spelling (NULL past the last; for "did you mean"). */
void dyrt_options_help(FILE *f);
const char *dyrt_option_name(int i);

/* Simulate `m` with the options `o` (which it does not modify). */
int dyrt_simulate(const DyrtModel *m, const DyrtOptions *o);

/* The standalone simulator: parse argv, simulate, return the exit status. */
int dyrt_main(const DyrtModel *m, int argc, char **argv);

/* ---- The simulation handle ----
 *
 * Calling sequence:
 *   s = dyrt_create(m)                       checks the descriptor
 *   dyrt_set_times / _tolerances / _max_step settings (model defaults else)
 *   dyrt_set_param* / dyrt_eval_params       parameter values
 *   dyrt_set_initial                         --initial overrides
 *   dyrt_init(s, tout1)                      initialization, IDA, consistent
 *                                            values at start (time = start)
 *   dyrt_step_to(s, tout) ...                tout ascending, <= stop
 *   dyrt_time / dyrt_get / dyrt_outputs ...  the current point
 *   dyrt_free(s)
 * Setters are accepted only before dyrt_init, dyrt_step_to only after a
 * successful one; out of sequence, or after a failure, they return
 * DYRT_EXIT_INTERNAL with an `error:` line.  Nothing is global: any number
 * of handles may live in one process. */
typedef struct DyrtSim DyrtSim;

/* A handle for model m (checked first), with the model's default settings
 * and no parameter set.  NULL (after `error: ...`) on a malformed
 * descriptor or when out of memory. */
DyrtSim *dyrt_create(const DyrtModel *m);
void dyrt_free(DyrtSim *s);

/* Settings, before dyrt_init.  stop >= start (+inf: no stop time; the
 * model's default span then sets the scale of t); rtol, atol >= 0, not both 0;
 * dtmax >= 0 (0: unlimited).  verbose: also warn about IDACalcIC polish
 * failures. */
int dyrt_set_times(DyrtSim *s, double start, double stop);
int dyrt_set_tolerances(DyrtSim *s, double rtol, double atol);
int dyrt_set_max_step(DyrtSim *s, double dtmax);
/* The integrator's step budget per dyrt_step_to call, the steps after
 * every restart on the way (events, time events, state-set switches)
 * counted together; default DYRT_MAX_STEPS.  Past it the call fails with
 * "too many steps in one output interval".  A small budget bounds the
 * work of one call (the pipeline fuzz target). */
#define DYRT_MAX_STEPS 500000L
int dyrt_set_max_steps(DyrtSim *s, long steps);
void dyrt_set_verbose(DyrtSim *s, int verbose);

/* Parameter i (0 <= i < np) or by name; refused (USER) for `final` and
 * `missing` parameters and unknown names (with a suggestion). */
int dyrt_set_param(DyrtSim *s, const char *name, double value);
int dyrt_set_param_index(DyrtSim *s, int i, double value);
/* Defaults of every parameter not set, in dependency order; each must be
 * finite (else USER).  dyrt_init calls it; call it earlier to read them. */
int dyrt_eval_params(DyrtSim *s);
/* The parameter values (np of them, then the modes), valid after
 * dyrt_eval_params; print them as --list-params does. */
const double *dyrt_params(const DyrtSim *s);
void dyrt_list_params(const DyrtSim *s, FILE *f);

/* Inputs (parameter slots flagged DYRT_PARAM_INPUT, runtime/inputs.c):
 * dyrt_set_input sets input i now (any time before a failure; between
 * steps the integrator restarts at the current time); dyrt_set_input_table
 * reads `--input FILE.csv` (before dyrt_init): time,NAME,... rows, linearly
 * interpolated wherever the model is evaluated. */
int dyrt_set_input(DyrtSim *s, int i, double value);
int dyrt_set_input_table(DyrtSim *s, const char *path);

/* --initial NAME=VALUE (see DyrtOptions); the name is checked by dyrt_init. */
int dyrt_set_initial(DyrtSim *s, const char *name, double value);

/* Parameters, the initialization system, IDA, the modes and consistent
 * values at the start time.  tout1 is the first time a solution will be
 * asked for (the direction and scale of t for IDACalcIC). */
int dyrt_init(DyrtSim *s, double tout1);

/* Integrate from the current time to tout (start <= tout <= stop, not
 * before the current time), handling events and the model's stop times on
 * the way.  On failure the current point is where the integrator stopped;
 * when an assertion failed at an event, dyrt_failed_assert tells which and
 * the current point is the located event. */
int dyrt_step_to(DyrtSim *s, double tout);
int dyrt_failed_assert(const DyrtSim *s);   /* 1 + index, or 0 */

/* Saving and restoring the handle's state (FMI Co-Simulation's FMU
 * state): dyrt_state_size doubles hold the point (t, y, y', parameters
 * and modes) and the event and clock bookkeeping.  IDA's history (its
 * step sizes and past values) is not kept: dyrt_state_save restarts the
 * integrator at the current point after copying it out, and
 * dyrt_state_restore restarts it the same way after copying it in, so a
 * run continued after a save and one continued after the restore take
 * the same steps (bit for bit).  Both only while READY; 0 or a status. */
size_t dyrt_state_size(const DyrtSim *s);
int dyrt_state_save(DyrtSim *s, double *buf);
int dyrt_state_restore(DyrtSim *s, const double *buf);

/* Clock ticks (dyad_model.h, "Clocks").  dyrt_init and dyrt_step_to(s,
 * tout) do the ticks on their way, those at the start and at tout
 * included.  With dyrt_set_stop_at_ticks(s, 1) (before dyrt_init) they
 * stop at every tick instead and leave it pending: dyrt_step_to returns at
 * the tick (time <= tout), the current point being its left limit (the
 * values before it); dyrt_tick does it (the clocks due, in the model's
 * order, then consistent values for the new held values), after which the
 * point is its right limit.  A pending tick is also done by the next
 * dyrt_step_to to a later time. */
void dyrt_set_stop_at_ticks(DyrtSim *s, int on);
int dyrt_tick_pending(const DyrtSim *s);
int dyrt_tick(DyrtSim *s);
/* The assertions at the current point: 0, or USER after `error: assertion failed ...`. */
int dyrt_check_asserts(DyrtSim *s);

/* 0 when every output value in out (dyrt_outputs at the current point) is
 * finite; else USER after `error: simulation stopped at t = ...: `y` is
 * NaN in `y = sqrt(x)` (m.dyad:7): square root of a negative number
 * (x = -0.25)` naming where the non-finite values began; the handle is then
 * failed. */
int dyrt_check_outputs(DyrtSim *s, const double *out);

/* The current point. */
double dyrt_time(const DyrtSim *s);
double dyrt_stop_time(const DyrtSim *s);
const double *dyrt_y(const DyrtSim *s);     /* [ny] */
const double *dyrt_yp(const DyrtSim *s);    /* [ny] */
/* Every output column at the current point into out[0..nout). */
void dyrt_outputs(const DyrtSim *s, double *out);
/* One output column: by index (0 <= i < nout) or by name (-1: no such). */
int dyrt_find_output(const DyrtSim *s, const char *name);
int dyrt_get(DyrtSim *s, int i, double *value);
int dyrt_get_by_name(DyrtSim *s, const char *name, double *value);

/* -v statistics of the solver (sizes, steps, evaluations, events,
 * initialization), and the last message of SUNDIALS ("" when none). */
void dyrt_print_stats(const DyrtSim *s, FILE *f);
const char *dyrt_solver_message(const DyrtSim *s);
double dyrt_init_seconds(const DyrtSim *s);

/* Messages (`error`, `warning` and the text) go to fn instead of stderr
 * for the calling thread until reset with fn = NULL.  The FMI wrapper
 * routes them to the importer's logger this way. */
typedef void (*DyrtMessageHook)(void *user, const char *kind, const char *message);
void dyrt_set_message_hook(DyrtMessageHook fn, void *user);

/* The model's functions together with its data tables (dyad_model.h, "Data
 * instead of code"): what m->param_defaults, m->start and m->outputs compute
 * plus the constants and copies the descriptor holds as data.  Use these, not
 * the function pointers, to evaluate a model. */
void dyrt_model_param_defaults(const DyrtModel *m, double *p, const unsigned char *given);
void dyrt_model_start(const DyrtModel *m, double t0, const double *p, double *y, double *yp);
void dyrt_model_outputs(const DyrtModel *m, double t, const double *y, const double *yp,
                        const double *p, double *out);
/* Some of the outputs only (a CSV with --vars, a getter): entry_of[k] (k <
 * nout) is the copy-table entry of output k, or -1 when m->outputs computes
 * it; dyrt_model_copy_value gives one entry's value, bit-identical to
 * dyrt_model_outputs. */
void dyrt_model_copy_entries(const DyrtModel *m, int32_t *entry_of);
double dyrt_model_copy_value(const DyrtModel *m, int32_t k, double t, const double *y,
                             const double *yp, const double *p);

/* out_state[k] = i when output column k is exactly y_i (a copy of it),
 * else -1: the FMI state variables and their aliases. */
void dyrt_model_output_states(const DyrtModel *m, int32_t *out_state);

/* The FMI GUID of a model: a hash (FNV-1a, 64 bit) of its name, parameter,
 * output and unknown names, as "{8-4-4-4-12}" hex; the compiler writes the
 * same into modelDescription.xml (dyrt_fnv1a over the same strings in the
 * same order).  buf has DYRT_GUID_LEN bytes. */
#define DYRT_GUID_LEN 40
void dyrt_model_guid(const DyrtModel *m, char *buf);
uint64_t dyrt_fnv1a(uint64_t h, const char *s);

#endif
