/*
 * dyadrt.h -- public API of libdyadrt, the simulation runtime.
 *
 * A compiled model is a `const DyrtModel` (dyad_model.h).  The runtime
 * parses the simulator command line (DESIGN.md section 4), resolves the
 * parameters, solves the initialization system, integrates F(t, y, y', p) = 0
 * with SUNDIALS IDA and writes the result CSV.
 *
 * Two entry points:
 *   dyrt_main      -- the whole simulator: argv in, exit status out.  The
 *                     standalone executable is `main` calling it (main.c).
 *   dyrt_simulate  -- in-process use (the JIT path of `dyadc run`): the
 *                     caller fills a DyrtOptions, e.g. with dyrt_options_parse.
 * Both return a process exit status: DYRT_EXIT_OK, DYRT_EXIT_USER (bad option,
 * failed initialization or simulation) or DYRT_EXIT_INTERNAL (a malformed
 * model descriptor, an allocation failure, a SUNDIALS setup error).
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
    DYRT_EXIT_INTERNAL = 2
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

/* The model's functions together with its data tables (dyad_model.h, "Data
 * instead of code"): what m->param_defaults, m->start and m->outputs compute
 * plus the constants and copies the descriptor holds as data.  Use these, not
 * the function pointers, to evaluate a model. */
void dyrt_model_param_defaults(const DyrtModel *m, double *p, const unsigned char *given);
void dyrt_model_start(const DyrtModel *m, double t0, const double *p, double *y, double *yp);
void dyrt_model_outputs(const DyrtModel *m, double t, const double *y, const double *yp,
                        const double *p, double *out);

#endif
