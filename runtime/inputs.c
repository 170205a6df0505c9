/*
 * inputs.c -- the model's inputs (parameter slots flagged DYRT_PARAM_INPUT:
 * the component's own RealInputs that no equation computes).  One
 * mechanism for every source: the value lives in p[i], set by
 *   dyrt_set_input           an FMI importer (fmi2SetReal), any time;
 *   dyrt_set_input_table     `--input FILE.csv`: a table of times and values,
 *                            linearly interpolated, applied at every time
 *                            the model is evaluated (dyrt_inputs_at).
 * A value changed between steps restarts the integrator at the current
 * time (the residual jumps); the table's times are stop times of the
 * integrator (kinks of the interpolant), without a restart.
 *
 * The table: CSV, header `time,NAME,...` (NAME an input, each once, in any
 * order; inputs not in the table stay 0), then rows of numbers with
 * non-decreasing times; two rows at one time are a jump (the later row
 * holds from that time on).  Before the first time and after the last the
 * values are held.  Lookup keeps a cursor (the times asked for ascend
 * mostly), so a step costs O(1) amortized.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

#define DYRT_INPUT_LINE_MAX (1 << 20)

static int is_input(const DyrtModel *m, int32_t i)
{
    return (m->param_flags[i] & DYRT_PARAM_INPUT) != 0;
}

int dyrt_set_input(DyrtSim *s, int i, double value)
{
    const DyrtModel *m = s->m;
    if (s->phase == DYRT_SIM_FAILED)
        return dyrt_sim_expect(s, DYRT_SIM_READY, "dyrt_set_input");
    if (i < 0 || i >= m->np || !is_input(m, i)) {
        dyrt_error("internal: dyrt_set_input(%d): not an input", i);
        return DYRT_EXIT_INTERNAL;
    }
    if (!isfinite(value)) {
        dyrt_error("input '%s': %g is not a number", m->param_names[i], value);
        return DYRT_EXIT_USER;
    }
    if (s->p[i] != value && s->phase == DYRT_SIM_READY)
        s->input_changed = 1;
    s->p[i] = value;
    return 0;
}

/* The names of the model's inputs, for messages: "u, w" or "none". */
static void input_names(const DyrtModel *m, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < m->np && len < size; i++)
        if (is_input(m, i))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", m->param_names[i]);
    if (!buf[0])
        snprintf(buf, size, "none");
}

static int header(DyrtSim *s, const char *path, char *line)
{
    const DyrtModel *m = s->m;
    DyrtInputTable *tab = &s->table;
    line[strcspn(line, "\r\n")] = '\0';
    char *tok = strtok(line, ",");
    if (!tok || strcmp(tok, "time") != 0) {
        dyrt_error("--input %s: the first column must be `time`", path);
        return DYRT_EXIT_USER;
    }
    while ((tok = strtok(NULL, ","))) {
        int i = dyrt_find(tok, m->param_names, m->np);
        if (i < 0 || !is_input(m, i)) {
            char names[512];
            input_names(m, names, sizeof names);
            dyrt_error("--input %s: column '%s' is not an input of '%s' (its inputs: %s)", path, tok,
                       m->name, names);
            return DYRT_EXIT_USER;
        }
        for (int k = 0; k < tab->n; k++)
            if (tab->slot[k] == i) {
                dyrt_error("--input %s: column '%s' appears twice", path, tok);
                return DYRT_EXIT_USER;
            }
        int *grown = realloc(tab->slot, sizeof *grown * (size_t)(tab->n + 1));
        if (!grown)
            return DYRT_EXIT_INTERNAL;
        tab->slot = grown;
        tab->slot[tab->n++] = i;
    }
    return 0;
}

/* One row: n + 1 numbers; times non-decreasing. */
static int row(DyrtSim *s, const char *path, long lineno, char *line)
{
    DyrtInputTable *tab = &s->table;
    size_t w = (size_t)tab->n + 1;
    if (tab->nrows % 256 == 0) {
        double *grown = realloc(tab->rows, sizeof *grown * w * ((size_t)tab->nrows + 256));
        if (!grown)
            return DYRT_EXIT_INTERNAL;
        tab->rows = grown;
    }
    double *r = &tab->rows[w * (size_t)tab->nrows];
    char *p = line;
    for (size_t k = 0; k < w; k++) {
        char *end;
        errno = 0;
        r[k] = strtod(p, &end);
        if (end == p || !isfinite(r[k]) || (k + 1 < w ? *end != ',' : (*end != '\0' && *end != '\n' && *end != '\r'))) {
            dyrt_error("--input %s:%ld: expected %zu numbers separated by commas", path, lineno, w);
            return DYRT_EXIT_USER;
        }
        p = end + 1;
    }
    if (tab->nrows > 0 && r[0] < r[-(long)w]) {
        dyrt_error("--input %s:%ld: time %.17g is before the previous row's %.17g", path, lineno, r[0],
                   r[-(long)w]);
        return DYRT_EXIT_USER;
    }
    tab->nrows++;
    return 0;
}

int dyrt_set_input_table(DyrtSim *s, const char *path)
{
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_set_input_table"))
        return DYRT_EXIT_INTERNAL;
    FILE *f = fopen(path, "r");
    if (!f) {
        dyrt_error("--input %s: %s", path, strerror(errno));
        return DYRT_EXIT_USER;
    }
    char *line = malloc(DYRT_INPUT_LINE_MAX);
    int rc = line ? 0 : DYRT_EXIT_INTERNAL;
    long lineno = 1;
    if (!rc && !fgets(line, DYRT_INPUT_LINE_MAX, f)) {
        dyrt_error("--input %s: the file is empty", path);
        rc = DYRT_EXIT_USER;
    }
    if (!rc)
        rc = header(s, path, line);
    while (!rc && fgets(line, DYRT_INPUT_LINE_MAX, f))
        if (line[strspn(line, " \r\n")] != '\0')
            rc = row(s, path, ++lineno, line);
    if (!rc && s->table.nrows == 0) {
        dyrt_error("--input %s: no rows", path);
        rc = DYRT_EXIT_USER;
    }
    free(line);
    fclose(f);
    return rc;
}

/* Values at t: linear between the rows around t, held outside. */
void dyrt_inputs_at(DyrtSim *s, double t)
{
    DyrtInputTable *tab = &s->table;
    if (tab->nrows == 0)
        return;
    size_t w = (size_t)tab->n + 1;
    const double *r = tab->rows;
    long last = tab->nrows - 1, k = tab->cursor;
    while (k > 0 && r[w * (size_t)k] > t)
        k--;
    while (k < last && r[w * (size_t)(k + 1)] <= t)
        k++;
    tab->cursor = k;
    const double *a = &r[w * (size_t)k], *b = k < last ? a + w : a;
    double span = b[0] - a[0], f = span > 0 && t > a[0] ? fmin(1.0, (t - a[0]) / span) : 0.0;
    for (int c = 0; c < tab->n; c++)
        s->p[tab->slot[c]] = a[1 + c] + f * (b[1 + c] - a[1 + c]);
}

/* The first table time after tn (a kink of the interpolant), inf if none. */
double dyrt_inputs_next(const DyrtSim *s, double tn)
{
    const DyrtInputTable *tab = &s->table;
    size_t w = (size_t)tab->n + 1;
    double eps = 1e-12 * fmax(1.0, fabs(tn));
    for (long k = tab->cursor > 0 ? tab->cursor - 1 : 0; k < tab->nrows; k++)
        if (tab->rows[w * (size_t)k] > tn + eps)
            return tab->rows[w * (size_t)k];
    return INFINITY;
}

void dyrt_inputs_free(DyrtSim *s)
{
    free(s->table.slot);
    free(s->table.rows);
    memset(&s->table, 0, sizeof s->table);
}
