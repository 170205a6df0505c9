/*
 * cli.c -- the dyadc command line (DESIGN.md §4, docs/CLI.md): the option
 * table, argument parsing, help pages and the dispatch to the commands of
 * commands.h.
 *
 *   dyadc COMMAND [FILE|DIR...] [options]     dyadc help [COMMAND]
 *   dyadc COMMAND --help                      dyadc --version
 *
 * Every option is one row of `options` below: its spelling, its value, the
 * commands that take it (a mask of CMD_BIT) and its help line; parsing, the
 * help pages and "did you mean" all read that table.  `dyadc run` also
 * takes every simulator option; it recognizes them through the runtime
 * (dyrt_option_arity) and passes them on, and prints the runtime's own
 * option lines (dyrt_options_help), so the compiler, the built simulators
 * and the help cannot disagree.
 * Exit status: 0 success, 1 user error, 2 internal error.
 */
#include "driver.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CMD_ROW(id, name, fn, args, summary, details) {name, CMD_##id, fn, args, summary, details},
static const struct CmdInfo {
    const char *name;
    Command cmd;
    int (*run)(Driver *);
    const char *args, *summary, *details;
} commands[] = {DYADC_COMMANDS(CMD_ROW)};
#undef CMD_ROW
#define NCOMMANDS (sizeof commands / sizeof commands[0])

#define CMDS_ALL (~0u)
#define CMDS_LOAD (CMD_BIT(CHECK) | CMD_BIT(FLATTEN) | CMD_BIT(BUILD) | CMD_BIT(RUN) | CMD_BIT(TEST) | CMD_BIT(FMU))
#define CMDS_MODEL (CMD_BIT(FLATTEN) | CMD_BIT(BUILD) | CMD_BIT(RUN) | CMD_BIT(FMU))
#define CMDS_CODE (CMD_BIT(BUILD) | CMD_BIT(RUN) | CMD_BIT(FMU))
#define CMDS_JIT (CMD_BIT(BUILD) | CMD_BIT(RUN) | CMD_BIT(TEST) | CMD_BIT(FMU))

typedef enum {
    OK_FLAG,      /* bool field */
    OK_VALUE,     /* const char * field */
    OK_LIST,      /* Vec(const char *) field, repeatable; also -LDIR */
    OK_PAIRS,     /* Vec(char *) field: the spelling and the value, repeatable */
    OK_OPT_LEVEL, /* -O0..-O3 */
    OK_HELP,      /* this command's page */
} OptKind;

typedef struct Opt {
    const char *name;   /* spelling; a value follows as the next argument or after `=` */
    const char *value;  /* its placeholder, NULL for a flag */
    unsigned cmds;      /* the commands that take it */
    OptKind kind;
    size_t field;       /* offsetof(Driver, ...) */
    bool to_sim;        /* run: also passed on to the simulator */
    const char *help;
} Opt;

#define F(x) offsetof(Driver, x)
static const Opt options[] = {
    {"--model", "NAME", CMDS_MODEL, OK_VALUE, F(model), false,
     "the component: a qualified or unique short name"},
    {"--analysis", "NAME", CMDS_MODEL, OK_VALUE, F(model), false,
     "a TransientAnalysis: its model with its settings"},
    {"-L", "DIR", CMDS_LOAD, OK_LIST, F(libs), false,
     "add a library root: a folder named after its library"},
    {"--no-stdlib", NULL, CMDS_LOAD, OK_FLAG, F(no_stdlib), false, "do not load the bundled standard library"},
    {"--max-structural-work", "N", CMDS_LOAD, OK_VALUE, F(max_work), false,
     "flatten's budget: array elements, loop iterations, instances (default 10000000)"},
    {"-Werror=units", NULL, CMDS_LOAD, OK_FLAG, F(werror_units), false, "unit mismatches are errors"},
    {"--scalarize", NULL, CMDS_LOAD, OK_FLAG, F(scalarize), false,
     "flatten `for` equations one iteration at a time, no templates (the scalar reference path)"},
    {"--structure", NULL, CMD_BIT(FLATTEN), OK_FLAG, F(structure), false,
     "print the structured system, not the flat model"},
    {"--dump-ast", NULL, CMD_BIT(PARSE), OK_FLAG, F(dump_ast), false, "print the syntax tree"},
    {"--no-spans", NULL, CMD_BIT(PARSE), OK_FLAG, F(no_spans), false, "with --dump-ast: leave out the source spans"},
    {"--check", NULL, CMD_BIT(FMT), OK_FLAG, F(fmt_check), false,
     "print nothing; name the files not in canonical form"},
    {"-o", "FILE", CMD_BIT(BUILD) | CMD_BIT(FMU), OK_VALUE, F(output), false,
     "the file to write: the simulator executable (build), NAME.fmu (fmu)"},
    {"--kind", "me|cs|both", CMD_BIT(FMU), OK_VALUE, F(fmu_kind), false,
     "the FMI interfaces: Model Exchange, Co-Simulation or both (default)"},
    {"--initial", "NAME=VALUE", CMDS_CODE, OK_PAIRS, F(initial_args), false,
     "initial value of any variable, compiled in (repeatable)"},
    {"--filter", "PATTERN", CMD_BIT(TEST), OK_VALUE, F(filter), false,
     "only the cases whose name contains PATTERN (a glob with * ? [)"},
    {"--bless", NULL, CMD_BIT(TEST), OK_FLAG, F(bless), false, "write the golden signal files from this run"},
    {"--coverage", NULL, CMD_BIT(TEST), OK_FLAG, F(coverage), false,
     "fail when a component has no test case (neither its own nor one that uses it)"},
    {"-O", NULL, CMDS_JIT, OK_OPT_LEVEL, F(opt_level), false,
     "-O0..-O3: optimization of the generated code (default -O2)"},
    {"--emit-llvm", NULL, CMDS_CODE, OK_FLAG, F(emit_llvm), false, "print the LLVM IR on stdout"},
    {"--time-passes", NULL, CMDS_ALL, OK_FLAG, F(time_passes), false,
     "time and peak memory of every phase, on stderr"},
    {"-v", NULL, CMDS_ALL, OK_FLAG, F(verbose), true, "announce every phase on stderr (run: also statistics)"},
    {"--help", NULL, CMDS_ALL, OK_HELP, 0, false, "this command's help (also -h)"},
    {"-h", NULL, CMDS_ALL, OK_HELP, 0, false, NULL},
};
#undef F
#define NOPTIONS (sizeof options / sizeof options[0])

/* ---------- help ---------- */

static void print_version(void) {
    printf("dyadc %s (runtime ABI %d, LLVM %s)\n", DYADC_VERSION, DYRT_ABI_VERSION, cg_llvm_version());
}

const char *driver_command_name(Command cmd) {
    return cmd > CMD_NONE && cmd < CMD_COUNT ? commands[cmd - 1].name : "?";
}

static const struct CmdInfo *find_command(const char *name) {
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

/* the commands that take an option: "flatten, build, run"; "" for all */
static const char *cmd_names(char *buf, size_t size, unsigned mask) {
    size_t len = 0;
    buf[0] = 0;
    bool all = true;
    for (size_t i = 0; i < NCOMMANDS; i++) all = all && (mask & (1u << commands[i].cmd));
    for (size_t i = 0; i < NCOMMANDS && !all && len + 1 < size; i++)
        if (mask & (1u << commands[i].cmd))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", commands[i].name);
    return buf;
}

static void print_option(FILE *f, const Opt *o) {
    if (!o->help) return;
    char left[64];
    if (o->kind == OK_OPT_LEVEL) snprintf(left, sizeof left, "-O0..-O3");
    else snprintf(left, sizeof left, "%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    const char *help = o->kind == OK_OPT_LEVEL ? strchr(o->help, ' ') + 1 : o->help;
    fprintf(f, "  %-24s %s\n", left, help);
}

/* every option, grouped by the commands that take it (in table order) */
static void print_all_options(FILE *f) {
    for (size_t i = 0; i < NOPTIONS; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++) first = options[j].cmds != options[i].cmds;
        if (!first) continue;
        char cmds[128];
        cmd_names(cmds, sizeof cmds, options[i].cmds);
        fprintf(f, "options of %s:\n", cmds[0] ? cmds : "every command");
        for (size_t j = i; j < NOPTIONS; j++)
            if (options[j].cmds == options[i].cmds) print_option(f, &options[j]);
    }
}

static void print_overview(FILE *f) {
    fputs("usage: dyadc COMMAND [FILE|DIR...] [options]\n"
          "       dyadc help [COMMAND]        dyadc COMMAND --help        dyadc --version\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n  %-8s   %s\n", commands[i].name, commands[i].args, "", commands[i].summary);
    print_all_options(f);
    fputs("simulator options (dyadc run, and every simulator dyadc build writes):\n", f);
    dyrt_options_help(f);
    fputs("Files: .dyad files, or library folders (a folder named after its library).\n"
          "Exit status: 0 success, 1 an error in the input or options, 2 internal error.\n"
          "docs/CLI.md has the details.\n",
          f);
}

static void print_command(FILE *f, const struct CmdInfo *c) {
    fprintf(f, "usage: dyadc %s %s\n%s\n\n%s\noptions:\n", c->name, c->args, c->summary, c->details);
    for (size_t i = 0; i < NOPTIONS; i++)
        if (options[i].cmds & (1u << c->cmd)) print_option(f, &options[i]);
    if (c->cmd == CMD_RUN) {
        fputs("simulator options (also taken by the simulators dyadc build writes):\n", f);
        dyrt_options_help(f);
    }
}

/* ---------- errors with suggestions ---------- */

/* `dyadc: error: ...`; cmd: the command whose help to point at, or CMD_NONE */
static int bad_arg(Command cmd, const char *fmt, const char *arg, const char *near) {
    fputs("dyadc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    if (near) fprintf(stderr, "; did you mean `%s`?", near);
    if (cmd == CMD_NONE) fputs("\n(run `dyadc help` for usage)\n", stderr);
    else fprintf(stderr, "\n(run `dyadc help %s` for usage)\n", driver_command_name(cmd));
    return 1;
}

static const char *near_command(Interner *in, const char *name) {
    Sym cands[NCOMMANDS + 1];
    for (size_t i = 0; i < NCOMMANDS; i++) cands[i] = intern_cstr(in, commands[i].name);
    cands[NCOMMANDS] = intern_cstr(in, "help");
    return suggest_name(intern_cstr(in, name), cands, NCOMMANDS + 1);
}

/* the spelling closest to arg among the options of this command */
static const char *near_option(Driver *d, const char *arg) {
    Vec(Sym) cands = {0};
    for (size_t i = 0; i < NOPTIONS; i++)
        if (options[i].cmds & (1u << d->cmd)) vec_push(d->arena, &cands, intern_cstr(d->in, options[i].name));
    for (int i = 0; d->cmd == CMD_RUN && dyrt_option_name(i); i++)
        vec_push(d->arena, &cands, intern_cstr(d->in, dyrt_option_name(i)));
    const char *eq = strchr(arg, '=');
    Sym a = intern(d->in, arg, eq ? (size_t)(eq - arg) : strlen(arg));
    return suggest_name(a, cands.data, cands.len);
}

static int unknown_option(Driver *d, const char *arg, const Opt *elsewhere) {
    char msg[256], cmds[128];
    if (elsewhere) {
        cmd_names(cmds, sizeof cmds, elsewhere->cmds);
        snprintf(msg, sizeof msg, "`dyadc %s` takes no option `%%s` (it is an option of: %s)",
                 driver_command_name(d->cmd), cmds);
        return bad_arg(d->cmd, msg, arg, NULL);
    }
    if (dyrt_option_arity(arg) >= 0) {
        snprintf(msg, sizeof msg, "`%%s` is a simulator option: give it to `dyadc run` or to the simulator "
                                  "that `dyadc build` writes, not to `dyadc %s`", driver_command_name(d->cmd));
        return bad_arg(d->cmd, msg, arg, NULL);
    }
    snprintf(msg, sizeof msg, "unknown option `%%s` of `dyadc %s`", driver_command_name(d->cmd));
    return bad_arg(d->cmd, msg, arg, near_option(d, arg));
}

/* ---------- parsing ---------- */

/* The row for arg: `--name`, `--name=V`, `-LDIR`, `-O2`; *value then
 * points at an attached value. */
static const Opt *lookup(const char *arg, const char **value) {
    *value = NULL;
    for (size_t i = 0; i < NOPTIONS; i++) {
        const Opt *o = &options[i];
        size_t n = strlen(o->name);
        if (strncmp(arg, o->name, n) != 0) continue;
        if (arg[n] == 0 && o->kind != OK_OPT_LEVEL) return o;
        if (o->kind == OK_OPT_LEVEL && arg[n] >= '0' && arg[n] <= '3' && !arg[n + 1]) {
            *value = arg + n;
            return o;
        }
        if (o->value && arg[n] == '=' && o->name[1] == '-') {
            *value = arg + n + 1;
            return o;
        }
        if (o->kind == OK_LIST && arg[n] && o->name[1] != '-') {
            *value = arg + n;
            return o;
        }
    }
    return NULL;
}

/* apply one row; -1 = go on, else an exit status */
static int apply(Driver *d, const Opt *o, const char *value) {
    char *base = (char *)d;
    switch (o->kind) {
    case OK_FLAG: *(bool *)(base + o->field) = true; return -1;
    case OK_VALUE: *(const char **)(base + o->field) = value; return -1;
    case OK_LIST: vec_push(d->arena, (Vec(const char *) *)(void *)(base + o->field), value); return -1;
    case OK_PAIRS:
        vec_push(d->arena, (Vec(char *) *)(void *)(base + o->field), (char *)o->name);
        vec_push(d->arena, (Vec(char *) *)(void *)(base + o->field), (char *)value);
        return -1;
    case OK_OPT_LEVEL: d->opt_level = value[0] - '0'; return -1;
    case OK_HELP: print_command(stdout, &commands[d->cmd - 1]); return 0;
    }
    return 2;
}

static int pass_to_sim(Driver *d, int argc, char **argv, int *i) {
    int n = dyrt_option_arity(argv[*i]);
    vec_push(d->arena, &d->sim_args, argv[*i]);
    if (n == 1) {
        if (*i + 1 >= argc) return bad_arg(d->cmd, "option %s needs a value", argv[*i], NULL);
        vec_push(d->arena, &d->sim_args, argv[++*i]);
    }
    return -1;
}

static int parse_option(Driver *d, int argc, char **argv, int *i) {
    const char *a = argv[*i], *value;
    const Opt *o = lookup(a, &value);
    if (o && !(o->cmds & (1u << d->cmd))) {
        if (d->cmd == CMD_RUN && dyrt_option_arity(a) >= 0) return pass_to_sim(d, argc, argv, i);
        return unknown_option(d, a, o);
    }
    if (!o && d->cmd == CMD_RUN && dyrt_option_arity(a) >= 0) return pass_to_sim(d, argc, argv, i);
    if (!o) return unknown_option(d, a, NULL);
    if (o->value && !value) {
        if (*i + 1 >= argc) return bad_arg(d->cmd, "option %s needs a value", a, NULL);
        value = argv[++*i];
    }
    if (o->to_sim && d->cmd == CMD_RUN) vec_push(d->arena, &d->sim_args, argv[*i]);
    return apply(d, o, value);
}

int driver_parse_args(Driver *d, int argc, char **argv) {
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--version") == 0) {
            print_version();
            return 0;
        }
        if (a[0] != '-' || !a[1]) {
            vec_push(d->arena, &d->inputs, a);
            continue;
        }
        int rc = parse_option(d, argc, argv, &i);
        if (rc >= 0) return rc;
    }
    return -1;
}

/* `dyadc help [COMMAND]` */
static int help(Interner *in, int argc, char **argv) {
    if (argc < 3) {
        print_overview(stdout);
        return 0;
    }
    const struct CmdInfo *c = find_command(argv[2]);
    if (!c) return bad_arg(CMD_NONE, "unknown command `%s`", argv[2], near_command(in, argv[2]));
    print_command(stdout, c);
    return 0;
}

static int run_command(Driver *d, const struct CmdInfo *c, int argc, char **argv) {
    d->cmd = c->cmd;
    d->opt_level = 2;
    d->argv0 = argv[0];
    int rc = driver_parse_args(d, argc, argv);
    if (rc >= 0) return rc;
    if (d->max_work) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(d->max_work, &end, 10);
        if (!isdigit((unsigned char)d->max_work[0]) || *end || errno || n == 0) {
            fprintf(stderr, "dyadc: error: --max-structural-work %s: expected a positive whole number\n", d->max_work);
            return 1;
        }
        flat_set_work_limit(n);
    }
    flat_set_scalarize(d->scalarize);
    d->clock = phase_clock_new(d->verbose, d->time_passes, d->model);
    rc = c->run(d);
    phase_clock_free(d->clock);
    return rc;
}

int driver_main(int argc, char **argv) {
    if (argc < 2) {
        print_overview(stderr);
        return 1;
    }
    const char *a = argv[1];
    if (strcmp(a, "--version") == 0 || strcmp(a, "version") == 0) {
        print_version();
        return 0;
    }
    Driver d = {0};
    d.arena = arena_new();
    d.in = intern_new(d.arena);
    int rc;
    const struct CmdInfo *c = find_command(a);
    if (strcmp(a, "help") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) rc = help(d.in, argc, argv);
    else if (!c) rc = bad_arg(CMD_NONE, "unknown command `%s`", a, near_command(d.in, a));
    else rc = run_command(&d, c, argc, argv);
    if (diag_had_internal()) rc = 2;
    src_reset(); /* before the arena: the file records live in it */
    arena_free(d.arena);
    return rc;
}
