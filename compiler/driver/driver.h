/*
 * driver.h -- phase orchestration shared by the command-line front
 * (main.c) and the phase runner (pipeline.c).
 */
#ifndef DYADC_DRIVER_H
#define DYADC_DRIVER_H

#include "codegen.h"
#include "dyadrt.h"
#include "flat.h"
#include "sema.h"
#include "structure.h"

typedef enum { CMD_NONE, CMD_CHECK, CMD_PARSE, CMD_FMT, CMD_FLATTEN, CMD_BUILD, CMD_RUN, CMD_TEST } Command;

typedef struct Driver {
    Arena *arena;
    Interner *in;
    Command cmd;
    const char *argv0;
    const char *model;        /* --model / --analysis */
    const char *output;       /* build: -o EXE */
    Vec(const char *) inputs; /* files and folders */
    Vec(const char *) libs;   /* -L */
    Vec(char *) sim_args;     /* run: simulator options, passed through */
    Vec(char *) initial_args; /* run/build: `--initial`, `NAME=VALUE` pairs, made
                                 initial relations of the flat model (overrides) */
    bool no_stdlib, time_passes, structure, dump_ast, fmt_check, emit_llvm, werror_units;
    bool no_spans;            /* parse --dump-ast --no-spans (front end) */
    const char *filter;       /* test --filter PATTERN */
    bool bless, verbose;      /* test --bless, -v */
    int opt_level;
} Driver;

int driver_run(Driver *d);

/* pipeline.c: the bundled stdlib folder; a Program with the stdlib (unless
 * --no-stdlib) and the -L roots loaded */
const char *driver_stdlib_dir(Driver *d);
Program *driver_load_libs(Driver *d);

/* tests.c: `dyadc test` */
int tests_main(Driver *d);

#endif
