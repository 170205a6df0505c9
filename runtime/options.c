/*
 * options.c -- the simulator command line (DESIGN.md section 4).
 *
 * Input: argv.  Output: a DyrtOptions whose numbers are checked (finite,
 * tolerances >= 0, interval > 0, --saveat ascending).  Names (-p, --initial,
 * --vars) are only split here; simulate.c and columns.c check them against the model.
 * Options take their value as the next argument or after `=`
 * (`--stop 2`, `--stop=2`, `-p k=1`, `-pk=1`).
 */
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

typedef enum OptKind {
    OPT_START, OPT_STOP, OPT_INTERVAL, OPT_RTOL, OPT_ATOL, OPT_DTMAX,
    OPT_PARAM, OPT_INITIAL, OPT_VARS, OPT_SAVEAT, OPT_OUTPUT,
    OPT_VERBOSE, OPT_LIST_PARAMS, OPT_HELP, OPT_PLOT, OPT_INPUT
} OptKind;

typedef struct OptSpec {
    const char *name;          /* as written on the command line */
    OptKind kind;
    int takes_value;
    const char *synopsis;      /* help: the left column; NULL for a second spelling */
    const char *help;          /* help: the right column */
} OptSpec;

/* Also the --help text (dyrt_options_help), so the two cannot disagree. */
static const OptSpec optspecs[] = {
    {"--start", OPT_START, 1, "--start T0", "start time (default: the model's, else 0)"},
    {"--stop", OPT_STOP, 1, "--stop T1", "stop time (default: the model's, else start + 1)"},
    {"--interval", OPT_INTERVAL, 1, "--interval DT", "output step (default: the model's, else span/500)"},
    {"--saveat", OPT_SAVEAT, 1, "--saveat T,T,...", "output only at these times (ascending)"},
    {"--rtol", OPT_RTOL, 1, "--rtol R", "relative tolerance (default: the model's, else 1e-6)"},
    {"--atol", OPT_ATOL, 1, "--atol A", "absolute tolerance (default: the model's, else 1e-8)"},
    {"--dtmax", OPT_DTMAX, 1, "--dtmax H", "largest step size (0 = unlimited)"},
    {"-p", OPT_PARAM, 1, "-p, --param NAME=VALUE", "set a parameter (repeatable)"},
    {"--param", OPT_PARAM, 1, NULL, NULL},
    {"--initial", OPT_INITIAL, 1, "--initial NAME=VALUE", "initial value of a variable (repeatable)"},
    {"--vars", OPT_VARS, 1, "--vars NAME,...", "output columns in order: names, patterns (x[*].s, *.v), all (default: own variables)"},
    {"-o", OPT_OUTPUT, 1, "-o, --output FILE", "result CSV (default <model name>.csv; - = stdout)"},
    {"--output", OPT_OUTPUT, 1, NULL, NULL},
    {"--plot", OPT_PLOT, 1, "--plot FILE.png|svg", "also plot the output columns (needs gnuplot)"},
    {"--input", OPT_INPUT, 1, "--input FILE.csv", "the model's inputs over time: time,NAME,... (linear)"},
    {"-v", OPT_VERBOSE, 0, "-v, --verbose", "statistics on stderr"},
    {"--verbose", OPT_VERBOSE, 0, NULL, NULL},
    {"--list-params", OPT_LIST_PARAMS, 0, "--list-params", "print the parameters and their values, exit"},
    {"--help", OPT_HELP, 0, "-h, --help", "this text"},
    {"-h", OPT_HELP, 0, NULL, NULL},
};

#define NOPTSPECS ((int)(sizeof optspecs / sizeof optspecs[0]))

/* The spec matching `arg` exactly, or as `--name=value` / `-pVALUE`; *inline_value
 * then points at the value. */
static const OptSpec *lookup(const char *arg, const char **inline_value)
{
    *inline_value = NULL;
    for (int i = 0; i < NOPTSPECS; i++) {
        const OptSpec *s = &optspecs[i];
        size_t len = strlen(s->name);
        if (strncmp(arg, s->name, len) != 0)
            continue;
        if (arg[len] == '\0')
            return s;
        if (!s->takes_value)
            continue;
        if (arg[len] == '=' && s->name[1] == '-') {
            *inline_value = arg + len + 1;
            return s;
        }
        if (s->name[1] != '-' && len == 2) {
            *inline_value = arg + len;
            return s;
        }
    }
    return NULL;
}

int dyrt_option_arity(const char *arg)
{
    const char *inline_value;
    const OptSpec *s = lookup(arg, &inline_value);
    if (!s)
        return -1;
    return s->takes_value && !inline_value ? 1 : 0;
}

void dyrt_options_init(DyrtOptions *o)
{
    memset(o, 0, sizeof *o);
}

void dyrt_options_free(DyrtOptions *o)
{
    for (int i = 0; i < o->nparams; i++)
        free(o->params[i].name);
    for (int i = 0; i < o->ninitials; i++)
        free(o->initials[i].name);
    for (int i = 0; i < o->nvars; i++)
        free(o->vars[i]);
    free(o->params);
    free(o->initials);
    free(o->vars);
    free(o->saveat);
    dyrt_options_init(o);
}

static int number(const char *opt, const char *text, double *v)
{
    if (dyrt_parse_double(text, v) == 0)
        return 0;
    dyrt_error("%s: '%s' is not a number", opt, text);
    return DYRT_EXIT_USER;
}

/* Append one element to a realloc'ed array of `size`-byte elements. */
static void *push(void *arr, int *n, size_t size)
{
    void *grown = realloc(arr, size * (size_t)(*n + 1));
    if (!grown) {
        dyrt_error("out of memory");
        return NULL;
    }
    (*n)++;
    return grown;
}

static char *dup_range(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (!d) {
        dyrt_error("out of memory");
        return NULL;
    }
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

/* NAME=VALUE into (*arr)[*n]. */
static int name_value(const char *opt, const char *text, DyrtNameValue **arr, int *n)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text) {
        dyrt_error("%s: expected NAME=VALUE, got '%s'", opt, text);
        return DYRT_EXIT_USER;
    }
    double v;
    if (number(opt, eq + 1, &v))
        return DYRT_EXIT_USER;
    DyrtNameValue *grown = push(*arr, n, sizeof **arr);
    if (!grown)
        return DYRT_EXIT_INTERNAL;
    *arr = grown;
    grown[*n - 1].value = v;
    grown[*n - 1].name = dup_range(text, (size_t)(eq - text));
    return grown[*n - 1].name ? 0 : DYRT_EXIT_INTERNAL;
}

static int add_var(DyrtOptions *o, const char *s, size_t len)
{
    if (len == 0) {
        dyrt_error("--vars: empty name in the list");
        return DYRT_EXIT_USER;
    }
    char **grown = push(o->vars, &o->nvars, sizeof *grown);
    if (!grown)
        return DYRT_EXIT_INTERNAL;
    o->vars = grown;
    grown[o->nvars - 1] = dup_range(s, len);
    return grown[o->nvars - 1] ? 0 : DYRT_EXIT_INTERNAL;
}

/* The first comma of text outside brackets (x[2,1,3] is one name), or NULL. */
static const char *list_comma(const char *text)
{
    int depth = 0;
    for (const char *c = text; *c; c++) {
        if (*c == '[')
            depth++;
        else if (*c == ']' && depth > 0)
            depth--;
        else if (*c == ',' && depth == 0)
            return c;
    }
    return NULL;
}

/* Comma-separated names (commas inside [] belong to a subscript); repeated --vars append. */
static int parse_vars(DyrtOptions *o, const char *text)
{
    for (;;) {
        const char *comma = list_comma(text);
        size_t len = comma ? (size_t)(comma - text) : strlen(text);
        int rc = add_var(o, text, len);
        if (rc || !comma)
            return rc;
        text = comma + 1;
    }
}

static int add_saveat(DyrtOptions *o, const char *s, size_t len)
{
    char buf[64];
    double v;
    if (len == 0 || len >= sizeof buf) {
        dyrt_error("--saveat: bad time '%.*s'", (int)len, s);
        return DYRT_EXIT_USER;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (number("--saveat", buf, &v))
        return DYRT_EXIT_USER;
    if (o->nsaveat > 0 && v <= o->saveat[o->nsaveat - 1]) {
        dyrt_error("--saveat: times must be strictly increasing (%s after %s)",
                   buf, dyrt_num(o->saveat[o->nsaveat - 1]).s);
        return DYRT_EXIT_USER;
    }
    double *grown = push(o->saveat, &o->nsaveat, sizeof *grown);
    if (!grown)
        return DYRT_EXIT_INTERNAL;
    o->saveat = grown;
    grown[o->nsaveat - 1] = v;
    return 0;
}

static int parse_saveat(DyrtOptions *o, const char *text)
{
    for (;;) {
        const char *comma = strchr(text, ',');
        size_t len = comma ? (size_t)(comma - text) : strlen(text);
        int rc = add_saveat(o, text, len);
        if (rc || !comma)
            return rc;
        text = comma + 1;
    }
}

/* A setting: a number, with a range check. */
static int setting(DyrtOptions *o, const OptSpec *s, const char *text)
{
    static const unsigned bit[] = {DYRT_OPT_START, DYRT_OPT_STOP, DYRT_OPT_INTERVAL,
                                   DYRT_OPT_RTOL, DYRT_OPT_ATOL, DYRT_OPT_DTMAX};
    double *field[] = {&o->start, &o->stop, &o->interval, &o->rtol, &o->atol, &o->dtmax};
    double v;
    if (number(s->name, text, &v))
        return DYRT_EXIT_USER;
    if (s->kind == OPT_INTERVAL && v <= 0) {
        dyrt_error("--interval must be positive, got %s", text);
        return DYRT_EXIT_USER;
    }
    if ((s->kind == OPT_RTOL || s->kind == OPT_ATOL || s->kind == OPT_DTMAX) && v < 0) {
        dyrt_error("%s must not be negative, got %s", s->name, text);
        return DYRT_EXIT_USER;
    }
    *field[s->kind] = v;
    o->given |= bit[s->kind];
    return 0;
}

static int apply(DyrtOptions *o, const OptSpec *s, const char *value)
{
    switch (s->kind) {
    case OPT_START: case OPT_STOP: case OPT_INTERVAL:
    case OPT_RTOL: case OPT_ATOL: case OPT_DTMAX:
        return setting(o, s, value);
    case OPT_PARAM:
        return name_value(s->name, value, &o->params, &o->nparams);
    case OPT_INITIAL:
        return name_value(s->name, value, &o->initials, &o->ninitials);
    case OPT_VARS:
        return parse_vars(o, value);
    case OPT_SAVEAT:
        return parse_saveat(o, value);
    case OPT_OUTPUT:
        o->output = value;
        return 0;
    case OPT_VERBOSE:
        o->verbose = 1;
        return 0;
    case OPT_LIST_PARAMS:
        o->list_params = 1;
        return 0;
    case OPT_HELP:
        o->help = 1;
        return 0;
    case OPT_PLOT:
        o->plot = value;
        return 0;
    case OPT_INPUT:
        o->input = value;
        return 0;
    }
    return DYRT_EXIT_INTERNAL;
}

int dyrt_options_parse(DyrtOptions *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *value;
        const OptSpec *s = lookup(argv[i], &value);
        if (!s) {
            dyrt_error("unknown option '%s' (try --help)", argv[i]);
            return DYRT_EXIT_USER;
        }
        if (s->takes_value && !value) {
            if (i + 1 >= argc) {
                dyrt_error("option %s needs a value", s->name);
                return DYRT_EXIT_USER;
            }
            value = argv[++i];
        }
        int rc = apply(o, s, value);
        if (rc)
            return rc;
    }
    if (o->plot && dyrt_plot_check(o->plot, o->output))
        return DYRT_EXIT_USER;
    if ((o->given & DYRT_OPT_START) && (o->given & DYRT_OPT_STOP) && o->stop < o->start) {
        dyrt_error("--stop (%s) is before --start (%s)", dyrt_num(o->stop).s, dyrt_num(o->start).s);
        return DYRT_EXIT_USER;
    }
    return 0;
}

const char *dyrt_option_name(int i)
{
    return i >= 0 && i < NOPTSPECS ? optspecs[i].name : NULL;
}

void dyrt_options_help(FILE *f)
{
    for (int i = 0; i < NOPTSPECS; i++)
        if (optspecs[i].synopsis)
            fprintf(f, "  %-24s %s\n", optspecs[i].synopsis, optspecs[i].help);
}

void dyrt_usage(FILE *f, const char *prog, const DyrtModel *m)
{
    fprintf(f, "usage: %s [options]\n", prog ? prog : "simulator");
    if (m && m->name)
        fprintf(f, "Simulates the model %s and writes its variables as CSV.\n", m->name);
    fputs("options:\n", f);
    dyrt_options_help(f);
    fputs("exit status: 0 ok, 1 bad option or failed simulation, 2 internal error\n", f);
}
