/*
 * columns.c -- which outputs the result file holds (docs/RUNTIME.md,
 * "Output"), for the CSV and the MAT file of `dyadc run` and of the
 * simulators `dyadc build` writes.
 *
 * Input: the model's outputs (out_names; out_alias: column k equals +-column
 * j < k; out_conn: k is a connector field) and --vars.  Output: the column
 * indices in the order written, each at most once.
 *
 * Default (no --vars): every variable a component declares (`resistor.v`,
 * `mass.s`) and every block output (`gain.y`), in model order; a connector
 * field (`resistor.p.v`) or input (`gain.u`) only when no such variable holds the
 * same value or its negation, and then only the first field of its group
 * of equal values (one column per electrical node, per flange position);
 * never a field whose value is a constant of the model (a ground's 0 V).
 * --vars NAME,PATTERN,...: the columns in the order given; `*` in a pattern
 * matches any run of characters (dots included), `?` one character,
 * everything else itself (so `masses[*].s` needs no quoting of `[`);
 * `all` = every column; a column named twice is written once.
 */
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

#define DYRT_MANY_COLUMNS 1000

/* `*` any run, `?` one character, the rest literally; iterative with one
 * backtracking point (the last `*`), O(|p| |s|). */
static int glob_match(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            resume = s;
        } else if (*p == '?' || *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++resume;
        } else {
            return 0;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

static int is_pattern(const char *p)
{
    return strpbrk(p, "*?") != NULL;
}

/* The first column of k's group of equal values (out_alias is relative to
 * the group's first column). */
static int group_of(const DyrtModel *m, int k)
{
    int32_t a = m->out_alias ? m->out_alias[k] : 0;
    return a ? (a < 0 ? -a : a) - 1 : k;
}

static int add(DyrtRun *r, unsigned char *taken, int k)
{
    if (taken[k])
        return 0;
    taken[k] = 1;
    r->cols[r->ncols++] = k;
    return 1;
}

/* Output k is a constant of the model (the copy table says so). */
static void mark_constants(const DyrtModel *m, unsigned char *held)
{
    for (int32_t e = 0; e < m->nout_copy; e++)
        if ((m->out_copy_kind[e] & DYRT_SRC_MASK) == DYRT_SRC_CONST)
            held[group_of(m, m->out_copy_dest[e])] |= 4;
}

/* The default columns (see the file comment). */
static void default_columns(DyrtRun *r, unsigned char *taken)
{
    const DyrtModel *m = r->m;
    /* held[g]: bit 1 a declared variable is in group g, bit 2 a field of
     * it is written, bit 4 its value is a constant */
    unsigned char *held = taken + m->nout;
    mark_constants(m, held);
    for (int k = 0; k < m->nout; k++)
        if (!m->out_conn || !m->out_conn[k])
            held[group_of(m, k)] |= 1;
    for (int k = 0; k < m->nout; k++) {
        int g = group_of(m, k);
        if (!m->out_conn || !m->out_conn[k]) {
            add(r, taken, k);
        } else if (!held[g]) {
            held[g] |= 2;
            add(r, taken, k);
        }
    }
}

/* The prefix of `name` that could stand for the literal head of a pattern
 * (n characters ending in `last`): the one ending in `last` nearest to n
 * characters, within 3; written to h, "" when none. */
static void head_like(const char *name, size_t n, char last, char *h)
{
    size_t len = strlen(name), best = 0;
    for (size_t l = n > 3 ? n - 3 : 1; l <= n + 3 && l <= len; l++)
        if (name[l - 1] == last && (!best || (l > n ? l - n : n - l) < (best > n ? best - n : n - best)))
            best = l;
    memcpy(h, name, best);
    h[best] = '\0';
}

/* A pattern that matches nothing: the same pattern with the literal text
 * before its first wildcard replaced by the nearest such head of a name,
 * when that matches something (`mases[*].s` -> `masses[*].s`). */
static char *near_pattern(const DyrtModel *m, const char *pat)
{
    size_t lit = strcspn(pat, "*?"), w = lit + 4;
    if (lit == 0)
        return NULL;
    char *head = dyrt_calloc(lit + 1, 1), *store = dyrt_calloc((size_t)m->nout, w), *best = NULL;
    const char **heads = dyrt_calloc((size_t)m->nout, sizeof *heads);
    if (head && store && heads) {
        memcpy(head, pat, lit);
        for (int k = 0; k < m->nout; k++) {
            heads[k] = store + (size_t)k * w;
            head_like(m->out_names[k], lit, pat[lit - 1], store + (size_t)k * w);
        }
        const char *near = dyrt_closest(head, heads, m->nout);
        if (near && (best = dyrt_calloc(strlen(near) + strlen(pat + lit) + 1, 1))) {
            strcpy(best, near);
            strcat(best, pat + lit);
            int hit = 0;
            for (int k = 0; k < m->nout && !hit; k++)
                hit = glob_match(best, m->out_names[k]);
            if (!hit) {
                free(best);
                best = NULL;
            }
        }
    }
    free(heads);
    free(store);
    free(head);
    return best;
}

static void no_match(const DyrtModel *m, const char *pat)
{
    const char *near = is_pattern(pat) ? NULL : dyrt_closest(pat, m->out_names, m->nout);
    char *near_pat = is_pattern(pat) ? near_pattern(m, pat) : NULL;
    if (near)
        dyrt_error("--vars: unknown variable '%s'; did you mean '%s'?", pat, near);
    else if (!is_pattern(pat))
        dyrt_error("--vars: unknown variable '%s'", pat);
    else if (near_pat)
        dyrt_error("--vars: '%s' matches no variable; did you mean '%s'?", pat, near_pat);
    else
        dyrt_error("--vars: '%s' matches no variable", pat);
    free(near_pat);
}

/* The columns of one --vars entry; DYRT_EXIT_USER when it names nothing. */
static int select_entry(DyrtRun *r, unsigned char *taken, const char *v)
{
    const DyrtModel *m = r->m;
    int k = dyrt_find(v, m->out_names, m->nout), hit = 0;
    if (k >= 0) {
        add(r, taken, k);
        return 0;
    }
    if (strcmp(v, "time") == 0)
        return 0;              /* time is always the first column */
    if (strcmp(v, "all") == 0) {
        for (k = 0; k < m->nout; k++)
            add(r, taken, k);
        return 0;
    }
    for (k = 0; is_pattern(v) && k < m->nout; k++)
        if (glob_match(v, m->out_names[k])) {
            add(r, taken, k);
            hit = 1;
        }
    if (hit)
        return 0;
    no_match(m, v);
    return DYRT_EXIT_USER;
}

/* An example pattern for the warning, from the model's own names: the
 * first array column with its first subscript a `*` (`caps[*].T`), else
 * the first column's instance with `.*` (`resistor.*`), else `*.v`. */
static void example_pattern(const DyrtRun *r, char *buf, size_t size)
{
    const char *const *names = r->m->out_names;
    for (int k = 0; k < r->ncols; k++) {
        const char *name = names[r->cols[k]], *lb = strchr(name, '['), *rb = lb ? strchr(lb, ']') : NULL;
        if (rb) {
            snprintf(buf, size, "%.*s*%s", (int)(lb - name + 1), name, rb);
            return;
        }
    }
    const char *dot = r->ncols ? strchr(names[r->cols[0]], '.') : NULL;
    if (dot)
        snprintf(buf, size, "%.*s.*", (int)(dot - names[r->cols[0]]), names[r->cols[0]]);
    else
        snprintf(buf, size, "*.v");
}

int dyrt_select_columns(DyrtRun *r)
{
    const DyrtModel *m = r->m;
    const DyrtOptions *o = r->o;
    r->ncols = 0;
    r->cols = dyrt_calloc((size_t)m->nout + 1, sizeof *r->cols);
    unsigned char *taken = dyrt_calloc(2 * (size_t)m->nout + 1, 1);
    if (!r->cols || !taken) {
        free(taken);
        return DYRT_EXIT_INTERNAL;
    }
    int rc = 0;
    if (!o->nvars)
        default_columns(r, taken);
    for (int i = 0; i < o->nvars && !rc; i++)
        rc = select_entry(r, taken, o->vars[i]);
    free(taken);
    if (!rc && r->ncols > DYRT_MANY_COLUMNS) {
        char example[160];
        example_pattern(r, example, sizeof example);
        dyrt_warning("writing %d columns per row; choose them with --vars NAME,PATTERN,... "
                     "(e.g. --vars '%s')", r->ncols, example);
    }
    return rc;
}
