/*
 * driver.h -- the dyadc command line: the commands (commands.h), the option
 * table and help pages (cli.c), the phase runner (pipeline.c) and the
 * phase clock (progress.c).
 */
#ifndef DYADC_DRIVER_H
#define DYADC_DRIVER_H

#include "codegen.h"
#include "commands.h"
#include "fmi.h"
#include "dyadrt.h"
#include "flat.h"
#include "sema.h"
#include "structure.h"

#define CMD_ENUM(id, name, fn, args, summary, details) CMD_##id,
typedef enum { CMD_NONE, DYADC_COMMANDS(CMD_ENUM) CMD_COUNT } Command;
#undef CMD_ENUM
#define CMD_BIT(id) (1u << CMD_##id)

typedef struct PhaseClock PhaseClock;

typedef struct Driver {
    Arena *arena;
    Interner *in;
    Command cmd;
    const char *argv0;
    const char *model;        /* --model / --analysis */
    const char *output;       /* build: -o EXE; fmu: -o NAME.fmu */
    const char *fmu_kind;     /* fmu: --kind me|cs|both (NULL: both) */
    const char *max_work;     /* --max-structural-work N (flatten's budget), NULL: the default */
    Vec(const char *) inputs; /* files and folders */
    Vec(const char *) libs;   /* -L */
    Vec(char *) sim_args;     /* run: simulator options, passed through */
    Vec(char *) initial_args; /* run/build: `--initial`, `NAME=VALUE` pairs, made
                                 initial relations of the flat model (overrides) */
    bool no_stdlib, time_passes, structure, dump_ast, fmt_check, emit_llvm, werror_units;
    bool scalarize;           /* --scalarize: flatten forms no templates (flat_set_scalarize) */
    bool no_spans;            /* parse --dump-ast --no-spans (front end) */
    bool verbose;             /* -v: every phase on stderr as it starts and ends;
                                 test: the diagnostics of passing cases too */
    const char *filter;       /* test --filter PATTERN */
    bool bless;               /* test --bless */
    bool coverage;            /* test --coverage */
    int opt_level;
    PhaseClock *clock;        /* progress and --time-passes (progress.c) */
} Driver;

/* The command handlers (pipeline.c), one per entry of commands.h. */
#define CMD_DECL(id, name, fn, args, summary, details) int fn(Driver *d);
DYADC_COMMANDS(CMD_DECL)
#undef CMD_DECL

/* cli.c: the command line.  driver_parse_args fills d from argv (argv[1]
 * is the command) and returns -1 to go on, else the exit status (after a
 * help page: 0; after a bad argument, reported: 1). */
int driver_parse_args(Driver *d, int argc, char **argv);
int driver_main(int argc, char **argv);
const char *driver_command_name(Command cmd);

/* progress.c: the phase clock.  A phase (`announce`: one that prints
 * nothing of its own while it runs) still running after
 * PHASE_PROGRESS_AFTER seconds is announced on stderr when stderr is a
 * terminal, with -v at its start wherever stderr goes; then its time is
 * printed at its end.  --time-passes: every phase's time and peak memory.
 * phase_begin ends the running phase; every function accepts NULL. */
#define PHASE_PROGRESS_AFTER 1.0
PhaseClock *phase_clock_new(bool verbose, bool time_passes, const char *what);
void phase_begin(PhaseClock *c, const char *phase, bool announce);
void phase_end(PhaseClock *c);
void phase_clock_free(PhaseClock *c);

/* pipeline.c: the bundled stdlib folder; a Program with the stdlib (unless
 * --no-stdlib) and the -L roots loaded */
const char *driver_stdlib_dir(Driver *d);
Program *driver_load_libs(Driver *d);

#endif
