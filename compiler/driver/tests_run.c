/*
 * tests_run.c -- one test case end to end: flatten the component with the
 * case's initial values as overrides (flat_add_initial), structure, compile
 * in-process (ORC JIT), simulate through the DyrtSim handle (parameters,
 * start/stop, solver tolerances), compare expect.initial at the start,
 * expect.final at the stop and expect.signals at the points of the golden
 * file <dir of the .dyad file>/snapshots/<Component>_<case>.csv (written by
 * --bless at TEST_GOLDEN_POINTS + 1 equidistant times).
 *
 * Every mismatch is a diagnostic at the metadata entry it checks (so the
 * source line of the test is shown): variable, time, expected, got, the
 * difference and the tolerance.  Linear in points x signals.
 */
#include "tests.h"
#include "numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------- compile ---------- */

static System *compile_case(Driver *d, Program *p, TestCase *c) {
    unsigned errors = diag_error_count();
    FlatModel *m = flatten(p, c->def, expr_ctx_new(d->arena));
    if (!m) return NULL;
    for (uint32_t i = 0; i < c->initial.len; i++) {
        TestValue *v = &c->initial.data[i];
        flat_add_initial(m, v->var, v->value, v->at, "test case initial value");
    }
    flat_check_units(m, d->werror_units);
    if (diag_error_count() > errors || !flat_check_balance(m, c->def, false)) return NULL;
    return structure(m);
}

/* ---------- golden files ---------- */

typedef struct {
    uint32_t rows, cols;
    double *t;             /* [rows] */
    double *v;             /* [rows * cols], column k of signal k */
} Golden;

static const char *golden_path(Driver *d, const TestCase *c) {
    SrcFile *f = src_get(c->def->node->span.file);
    const char *path = f ? f->path : "";
    const char *slash = strrchr(path, '/');
    const char *dir = slash ? arena_strndup(d->arena, path, (size_t)(slash - path)) : ".";
    return arena_printf(d->arena, "%s/snapshots/%s_%s.csv", dir, c->def->name, c->name);
}

/* split a header line at commas (in place) */
static uint32_t header_fields(char *line, char **f, uint32_t max) {
    uint32_t n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *tok = strtok(line, ","); tok && n < max; tok = strtok(NULL, ",")) f[n++] = tok;
    return n;
}

/* column of each signal in the header, -1 when absent */
static bool golden_columns(Driver *d, const TestCase *c, const char *path, char *line, int32_t *col) {
    char **f = ARENA_ARRAY(d->arena, char *, c->signals.len + 4096);
    uint32_t n = header_fields(line, f, c->signals.len + 4096);
    if (n == 0 || strcmp(f[0], "time") != 0) {
        diag_error(c->signals_at, "golden file %s does not start with a `time` column; write it again with "
                                  "`dyadc test --bless`", path);
        return false;
    }
    for (uint32_t k = 0; k < c->signals.len; k++) {
        col[k] = -1;
        for (uint32_t j = 1; j < n && col[k] < 0; j++)
            if (strcmp(f[j], c->signals.data[k].var) == 0) col[k] = (int32_t)j;
        if (col[k] < 0) {
            diag_error(c->signals.data[k].at, "golden file %s has no column `%s`; write it again with "
                                              "`dyadc test --bless`", path, c->signals.data[k].var);
            return false;
        }
    }
    return true;
}

static bool golden_row(Driver *d, const TestCase *c, char *line, const int32_t *col, Golden *g, uint32_t cap) {
    double *vals = ARENA_ARRAY(d->arena, double, cap);
    uint32_t n = 0;
    for (char *p = line; n < cap;) {
        char *end;
        vals[n++] = strtod(p, &end);
        if (end == p) return false;
        if (*end != ',') break;
        p = end + 1;
    }
    g->t[g->rows] = vals[0];
    for (uint32_t k = 0; k < c->signals.len; k++) {
        if ((uint32_t)col[k] >= n) return false;
        g->v[g->rows * g->cols + k] = vals[col[k]];
    }
    g->rows++;
    return true;
}

static bool read_golden(Driver *d, const TestCase *c, const char *path, Golden *g) {
    FILE *f = fopen(path, "r");
    if (!f) {
        diag_error(c->signals_at, "no golden file %s for these signals (%s); write it with `dyadc test --bless`",
                   path, strerror(errno));
        return false;
    }
    static char line[1 << 16];
    int32_t *col = ARENA_ARRAY(d->arena, int32_t, c->signals.len + 1);
    bool ok = fgets(line, sizeof line, f) && golden_columns(d, c, path, line, col);
    uint32_t cap = 4096, width = 1;
    for (uint32_t k = 0; k < c->signals.len; k++) width = (uint32_t)col[k] + 1 > width ? (uint32_t)col[k] + 1 : width;
    g->cols = c->signals.len;
    g->t = ARENA_ARRAY(d->arena, double, cap);
    g->v = ARENA_ARRAY(d->arena, double, cap * (g->cols + 1));
    while (ok && fgets(line, sizeof line, f)) {
        if (g->rows == cap) {
            diag_error(c->signals_at, "golden file %s has more than %u rows", path, cap);
            ok = false;
        } else if (!golden_row(d, c, line, col, g, width + 1)) {
            diag_error(c->signals_at, "golden file %s: row %u is not %u numbers", path, g->rows + 2, width);
            ok = false;
        }
    }
    fclose(f);
    for (uint32_t r = 0; ok && r < g->rows; r++)
        if (g->t[r] < c->start || g->t[r] > c->stop || (r && g->t[r] <= g->t[r - 1])) {
            diag_error(c->signals_at, "golden file %s: its times are not ascending within [%s, %s] (row %u); "
                                      "write it again with `dyadc test --bless`", path, dyrt_num(c->start).s,
                       dyrt_num(c->stop).s, r + 2);
            ok = false;
        }
    return ok;
}

static bool write_golden(Driver *d, const TestCase *c, const char *path, const Golden *g) {
    const char *dir = arena_strndup(d->arena, path, (size_t)(strrchr(path, '/') - path));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        diag_error(c->signals_at, "cannot create %s: %s", dir, strerror(errno));
        return false;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(c->signals_at, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    fputs("time", f);
    for (uint32_t k = 0; k < g->cols; k++) fprintf(f, ",%s", c->signals.data[k].var);
    fputc('\n', f);
    for (uint32_t r = 0; r < g->rows; r++) {
        fputs(dyrt_num(g->t[r]).s, f);
        for (uint32_t k = 0; k < g->cols; k++) fprintf(f, ",%s", dyrt_num(g->v[r * g->cols + k]).s);
        fputc('\n', f);
    }
    bool ok = fclose(f) == 0;
    if (ok) printf("  blessed %s\n", path);
    else diag_error(c->signals_at, "cannot write %s", path);
    return ok;
}

/* ---------- simulate and compare ---------- */

typedef struct {
    Driver *d;
    TestCase *c;
    DyrtSim *sim;
    const DyrtModel *m;
    double *out;           /* [nout] the outputs at the current point */
    int32_t *col_init, *col_final, *col_sig; /* output column of each value */
    bool ok;               /* every check so far held */
    bool failed;           /* the simulation failed */
} Run;

static bool close_enough(double got, const TestValue *v, double expected) {
    return fabs(got - expected) <= fmax(v->atol, v->rtol * fmax(fabs(got), fabs(expected)));
}

static void mismatch(const TestValue *v, const char *what, double t, double expected, double got) {
    double tol = fmax(v->atol, v->rtol * fmax(fabs(got), fabs(expected)));
    diag_error(v->at, "%s `%s` at t = %s: expected %s, got %s; |difference| %.3g > tolerance %.3g "
                      "(atol %s, rtol %s)", what, v->var, dyrt_num(t).s, dyrt_num(expected).s, dyrt_num(got).s,
               fabs(got - expected), tol, dyrt_num(v->atol).s, dyrt_num(v->rtol).s);
}

/* output columns of vals (an error with a suggestion when one is no variable) */
static int32_t *columns(Run *r, const TestValues *vals) {
    int32_t *col = ARENA_ARRAY(r->d->arena, int32_t, vals->len + 1);
    for (uint32_t i = 0; i < vals->len; i++) {
        col[i] = dyrt_find_output(r->sim, vals->data[i].var);
        if (col[i] >= 0) continue;
        Sym near = suggest_name(vals->data[i].var, (Sym const *)r->m->out_names, (uint32_t)r->m->nout);
        diag_error(vals->data[i].at, "`%s` is not a variable of `%s`%s%s%s", vals->data[i].var, r->c->def->qname,
                   near ? "; did you mean `" : "", near ? near : "", near ? "`?" : "");
        r->ok = false;
    }
    return col;
}

static void check_values(Run *r, const TestValues *vals, const int32_t *col, const char *what) {
    double t = dyrt_time(r->sim);
    dyrt_outputs(r->sim, r->out);
    for (uint32_t i = 0; i < vals->len; i++) {
        double got = r->out[col[i]];
        if (close_enough(got, &vals->data[i], vals->data[i].value)) continue;
        mismatch(&vals->data[i], what, t, vals->data[i].value, got);
        r->ok = false;
    }
}

static bool step(Run *r, double t) {
    if (r->failed) return false;
    if (t <= dyrt_time(r->sim) || dyrt_step_to(r->sim, t) == 0) return true;
    diag_error(r->c->at, "test case `%s` of `%s`: the simulation failed at t = %s (see the message above)",
               r->c->name, r->c->def->qname, dyrt_num(dyrt_time(r->sim)).s);
    r->failed = true;
    return r->ok = false;
}

/* The signals at the golden's times: compared, or recorded into g (bless). */
static void signals(Run *r, Golden *g, bool bless) {
    const TestCase *c = r->c;
    uint32_t *bad = ARENA_ARRAY(r->d->arena, uint32_t, c->signals.len + 1);
    uint32_t *first = ARENA_ARRAY(r->d->arena, uint32_t, c->signals.len + 1);
    double *first_got = ARENA_ARRAY(r->d->arena, double, c->signals.len + 1);
    for (uint32_t row = 0; row < g->rows; row++) {
        if (!step(r, g->t[row])) return;
        dyrt_outputs(r->sim, r->out);
        for (uint32_t k = 0; k < g->cols; k++) {
            double got = r->out[r->col_sig[k]], *want = &g->v[row * g->cols + k];
            if (bless) *want = got;
            else if (!close_enough(got, &c->signals.data[k], *want) && !bad[k]++) first[k] = row, first_got[k] = got;
        }
    }
    for (uint32_t k = 0; k < g->cols && !bless; k++) {
        if (!bad[k]) continue;
        uint32_t row = first[k];
        double want = g->v[row * g->cols + k];
        r->ok = false;
        mismatch(&c->signals.data[k], "signal", g->t[row], want, first_got[k]);
        diag_note(c->signals.data[k].at, "%u of the golden file's %u points differ (golden %s, first at row %u)",
                  bad[k], g->rows, golden_path(r->d, c), row + 2);
    }
}

static void bless_grid(Run *r, Golden *g) {
    const TestCase *c = r->c;
    g->rows = TEST_GOLDEN_POINTS + 1;
    g->cols = c->signals.len;
    g->t = ARENA_ARRAY(r->d->arena, double, g->rows);
    g->v = ARENA_ARRAY(r->d->arena, double, g->rows * (g->cols + 1));
    for (uint32_t k = 0; k < g->rows; k++)
        g->t[k] = k == TEST_GOLDEN_POINTS ? c->stop : c->start + (c->stop - c->start) * k / TEST_GOLDEN_POINTS;
}

static bool set_params(Run *r) {
    for (uint32_t i = 0; i < r->c->params.len; i++) {
        TestValue *v = &r->c->params.data[i];
        if (dyrt_set_param(r->sim, v->var, v->value) == 0) continue;
        diag_error(v->at, "the test case cannot set parameter `%s` (see the message above)", v->var);
        r->ok = false;
    }
    return r->ok;
}

static bool simulate(Run *r) {
    TestCase *c = r->c;
    bool bless = r->d->bless;
    Golden g = {0};
    const char *path = golden_path(r->d, c);
    if (c->signals.len && !bless && !read_golden(r->d, c, path, &g)) {
        r->ok = false; /* reported; the other checks still run */
        g.rows = 0;
    }
    if (c->signals.len && bless) bless_grid(r, &g);
    bool golden_ok = r->ok;
    r->col_init = columns(r, &c->expect_initial);
    r->col_final = columns(r, &c->expect_final);
    r->col_sig = columns(r, &c->signals);
    if (golden_ok != r->ok || dyrt_set_times(r->sim, c->start, c->stop) || dyrt_set_tolerances(r->sim, c->rtol, c->atol) ||
        !set_params(r))
        return false;
    double tout1 = g.rows && g.t[0] > c->start ? g.t[0] : c->stop > c->start ? c->stop : c->start + 1;
    if (dyrt_init(r->sim, tout1) != 0) {
        diag_error(c->at, "test case `%s` of `%s`: the initialization failed (see the message above)", c->name,
                   c->def->qname);
        return r->ok = false;
    }
    check_values(r, &c->expect_initial, r->col_init, "initial");
    if (g.rows) signals(r, &g, bless);
    if (step(r, c->stop)) check_values(r, &c->expect_final, r->col_final, "final");
    if (!r->failed && bless && g.rows && !write_golden(r->d, c, path, &g)) r->ok = false;
    return r->ok;
}

bool tests_run_case(Driver *d, Program *p, TestCase *c) {
    if (c->bad) return false;
    unsigned errors = diag_error_count();
    System *s = compile_case(d, p, c);
    if (!s || diag_error_count() > errors) return false;
    CgOptions o;
    cg_options_init(&o);
    o.opt_level = d->opt_level;
    CgJit *j = cg_jit_compile(s, &o);
    if (!j) return false;
    Run r = {d, c, dyrt_create(cg_jit_model(j)), cg_jit_model(j), NULL, NULL, NULL, NULL, true, false};
    if (r.sim) {
        r.out = ARENA_ARRAY(d->arena, double, (size_t)r.m->nout + 1);
        simulate(&r);
        dyrt_free(r.sim);
    }
    cg_jit_free(j);
    return r.sim && r.ok && diag_error_count() == errors;
}
