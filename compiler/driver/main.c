/*
 * main.c -- the dyadc command line (DESIGN.md §4): parse the arguments,
 * run the phases in order, stop between phases when an error was reported.
 *
 *   dyadc check   FILE|DIR...
 *   dyadc parse   FILE... [--dump-ast]
 *   dyadc fmt     FILE... [--check]
 *   dyadc flatten FILE... --model NAME [--structure]
 *   dyadc build   FILE... --model NAME -o EXE
 *   dyadc run     FILE... --model NAME [simulator options]
 *   dyadc test    FILE|DIR... [--filter PATTERN] [--bless] [-v]
 * Exit status: 0 success, 1 user error, 2 internal error.
 */
#include "driver.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fputs("usage: dyadc COMMAND [FILE|DIR...] [options]\n"
          "commands:\n"
          "  check   FILE|DIR...              parse, resolve and flatten every component\n"
          "  parse   FILE... [--dump-ast [--no-spans]]  parse only; print the syntax tree\n"
          "  fmt     FILE... [--check]        print in canonical style (--check: name the files\n"
          "                                   that are not formatted, exit 1 if any)\n"
          "  flatten FILE... --model NAME     print the flat model (--structure: the structured system)\n"
          "  build   FILE... --model NAME -o EXE   write a standalone simulator\n"
          "  run     FILE... --model NAME [simulator options]   compile in-process and simulate\n"
          "  test    FILE|DIR... [--filter PATTERN] [--bless] [-v]   run the test cases in components'\n"
          "                                   metadata (docs/TESTING.md)\n"
          "common options:\n"
          "  -L DIR          add a library root        --no-stdlib   do not load the bundled stdlib\n"
          "  -O0..-O3        optimization level (default -O2)\n"
          "  --emit-llvm     print the LLVM IR (build/run)   --time-passes   time each phase\n"
          "  -Werror=units   unit mismatches are errors\n"
          "simulator options (run, and the built executable): --start T0 --stop T1 --interval DT\n"
          "  --rtol R --atol A -p NAME=VALUE --initial NAME=VALUE --vars A,B --saveat T,T -o OUT.csv -v\n",
          f);
}

static int bad_arg(const char *fmt, const char *arg) {
    fputs("dyadc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(run `dyadc --help` for usage)\n", stderr);
    return 1;
}

/* value of an option given as `--opt V` or `--opt=V` */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=') return argv[*i] + n + 1;
    if (*i + 1 >= argc) return NULL;
    return argv[++*i];
}

static bool is_opt(const char *arg, const char *name) {
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == 0 || arg[n] == '=');
}

static int parse_args(Driver *d, int argc, char **argv) {
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        if (is_opt(a, "--model") || is_opt(a, "--analysis")) {
            if (!(v = opt_value(argc, argv, &i, a[2] == 'm' ? "--model" : "--analysis")))
                return bad_arg("%s needs a name", a);
            d->model = v;
        } else if (strcmp(a, "-L") == 0) {
            if (i + 1 >= argc) return bad_arg("%s needs a directory", a);
            vec_push(d->arena, &d->libs, argv[++i]);
        } else if (strncmp(a, "-L", 2) == 0) {
            vec_push(d->arena, &d->libs, a + 2);
        } else if (strcmp(a, "--no-stdlib") == 0) {
            d->no_stdlib = true;
        } else if (strcmp(a, "--time-passes") == 0) {
            d->time_passes = true;
            timing_enable(true);
        } else if (strcmp(a, "--structure") == 0) {
            d->structure = true;
        } else if (strcmp(a, "--dump-ast") == 0) {
            d->dump_ast = true;
        } else if (strcmp(a, "--check") == 0) {
            d->fmt_check = true;
        } else if (strcmp(a, "--no-spans") == 0) { /* front end: dump without spans */
            d->no_spans = true;
        } else if (strcmp(a, "--emit-llvm") == 0) {
            d->emit_llvm = true;
        } else if (strcmp(a, "-Werror=units") == 0) {
            d->werror_units = true;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            d->opt_level = a[2] - '0';
        } else if (strcmp(a, "-o") == 0 && d->cmd == CMD_BUILD) {
            if (i + 1 >= argc) return bad_arg("%s needs a file name", a);
            d->output = argv[++i];
        } else if (d->cmd == CMD_TEST && is_opt(a, "--filter")) {
            if (!(d->filter = opt_value(argc, argv, &i, "--filter"))) return bad_arg("%s needs a pattern", a);
        } else if (d->cmd == CMD_TEST && strcmp(a, "--bless") == 0) {
            d->bless = true;
        } else if (d->cmd == CMD_TEST && strcmp(a, "-v") == 0) {
            d->verbose = true;
        } else if ((d->cmd == CMD_RUN || d->cmd == CMD_BUILD) && is_opt(a, "--initial")) {
            if (!(v = opt_value(argc, argv, &i, "--initial"))) return bad_arg("%s needs NAME=VALUE", a);
            vec_push(d->arena, &d->initial_args, "--initial");
            vec_push(d->arena, &d->initial_args, (char *)v);
        } else if (d->cmd == CMD_RUN && dyrt_option_arity(a) >= 0) {
            int n = dyrt_option_arity(a);
            vec_push(d->arena, &d->sim_args, argv[i]);
            if (n == 1) {
                if (i + 1 >= argc) return bad_arg("%s needs a value", a);
                vec_push(d->arena, &d->sim_args, argv[++i]);
            }
        } else if (a[0] == '-' && a[1]) {
            return bad_arg("unknown option `%s`", a);
        } else {
            vec_push(d->arena, &d->inputs, a);
        }
    }
    return 0;
}

static const struct { const char *name; Command cmd; } commands[] = {
    {"check", CMD_CHECK}, {"parse", CMD_PARSE}, {"fmt", CMD_FMT}, {"flatten", CMD_FLATTEN},
    {"build", CMD_BUILD}, {"run", CMD_RUN}, {"test", CMD_TEST},
};

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("dyadc " DYADC_VERSION);
        return 0;
    }
    Driver d = {0};
    d.arena = arena_new();
    d.in = intern_new(d.arena);
    d.opt_level = 2;
    d.argv0 = argv[0];
    d.cmd = CMD_NONE;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) d.cmd = commands[i].cmd;
    if (d.cmd == CMD_NONE) return bad_arg("unknown command `%s`", argv[1]);
    int rc = parse_args(&d, argc, argv);
    if (rc == 0) rc = driver_run(&d);
    if (diag_had_internal()) rc = 2;
    src_reset(); /* before the arena: the file records live in it */
    arena_free(d.arena);
    return rc;
}
