/*
 * initguess.c -- which `missing` parameter stays at its guess.
 *
 * A `missing` parameter that no relation determines is pinned at its guess
 * by a row the compiler names "guess of NAME" (residual z - guess,
 * compiler/structure/init.c).  Which of several `missing` parameters is
 * pinned is a structural choice, blind to values: it can leave the
 * initialization Jacobian singular by value (the pinned parameter is
 * determined by the other relations too, while two other unknowns enter
 * them only as a sum, say).  When the whole-system Newton (init.c) finds J
 * singular, dyrt_init_swap_guess pins another `missing` parameter in one
 * guess row instead, at its own guess, while J then factors (the
 * undetermined unknown first, when it is a `missing` parameter): at most
 * (guess rows) x (`missing` parameters) factorizations, once per solve,
 * with a warning naming both parameters.
 * For that the pattern gets, on the first swap, an entry (row, c) for every
 * guess row and `missing` column c (a zero until swapped): the model's
 * Jacobian is evaluated into mvals and scattered through map.  The
 * block-wise pass (initblock.c) has run by then on the model's pattern.
 */
#include <stdlib.h>
#include <string.h>

#include "dyrt_init.h"

static int is_guess_row(const DyrtModel *m, int r)
{
    return m->init_eq_names[r] && strncmp(m->init_eq_names[r], "guess of ", 9) == 0;
}

/* The `missing` parameter columns and the guess rows pinning one of them;
 * 1 when some other column could be pinned, 0 when not, -1 out of memory. */
static int find_guess_rows(Newton *nw)
{
    const DyrtModel *m = nw->m;
    int n = nw->n, ng = 0, nmiss = 0;
    if (!m->init_eq_names || !m->init_names || !m->param_flags || !m->param_names)
        return 0;
    for (int r = 0; r < n; r++)
        ng += is_guess_row(m, r);
    for (int i = 0; i < m->np; i++)
        nmiss += (m->param_flags[i] & DYRT_PARAM_MISSING) != 0;
    if (ng == 0 || nmiss <= ng)
        return 0;
    nw->cand = dyrt_calloc((size_t)nmiss, sizeof(int));
    nw->g_row = dyrt_calloc((size_t)ng, sizeof(int));
    nw->g_col = dyrt_calloc((size_t)ng, sizeof(int));
    nw->g_orig = dyrt_calloc((size_t)ng, sizeof(int));
    unsigned char *is_cand = dyrt_calloc((size_t)n + 1, 1);
    if (!nw->cand || !nw->g_row || !nw->g_col || !nw->g_orig || !is_cand) {
        free(is_cand);
        return -1;
    }
    for (int j = 0; j < n && nw->ncand < nmiss; j++)
        for (int i = 0; i < m->np; i++)
            if ((m->param_flags[i] & DYRT_PARAM_MISSING) && m->init_names[j] &&
                strcmp(m->init_names[j], m->param_names[i]) == 0) {
                nw->cand[nw->ncand++] = j;
                is_cand[j] = 1;
                break;
            }
    for (int j = 0; j < n; j++) /* a guess row: its entry in a `missing` column */
        for (int k = m->init_colptr[j]; k < m->init_colptr[j + 1] && nw->ng < ng; k++)
            if (is_cand[j] && is_guess_row(m, m->init_rowidx[k])) {
                nw->g_row[nw->ng] = m->init_rowidx[k];
                nw->g_col[nw->ng] = nw->g_orig[nw->ng] = j;
                nw->ng++;
            }
    free(is_cand);
    return nw->ng > 0 && nw->ncand > nw->ng;
}

/* Column j of the extended pattern from pos: the model's entries, then
 * (row, j) for every guess row when j is a `missing` column, rows
 * ascending; src[q] is the model's position of entry q, -1 for an added one.
 * Returns the end. */
static int extend_column(Newton *nw, int j, int pos, int *src)
{
    const DyrtModel *m = nw->m;
    int first = pos;
    for (int k = m->init_colptr[j]; k < m->init_colptr[j + 1]; k++) {
        nw->rowidx[pos] = m->init_rowidx[k];
        src[pos++] = k;
    }
    for (int c = 0; c < nw->ncand; c++)
        for (int g = 0; nw->cand[c] == j && g < nw->ng; g++) {
            int dup = 0;
            for (int q = first; q < pos; q++)
                dup |= nw->rowidx[q] == nw->g_row[g];
            if (!dup) {
                nw->rowidx[pos] = nw->g_row[g];
                src[pos++] = -1;
            }
        }
    for (int q = first + 1; q < pos; q++) /* insertion sort by row */
        for (int t = q; t > first && nw->rowidx[t - 1] > nw->rowidx[t]; t--) {
            int r = nw->rowidx[t], s = src[t];
            nw->rowidx[t] = nw->rowidx[t - 1], src[t] = src[t - 1];
            nw->rowidx[t - 1] = r, src[t - 1] = s;
        }
    return pos;
}

/* Replace the pattern by the extended one (see the top), the --initial
 * overrides' positions and KLU's analysis with it; 0 when done. */
static int extend_pattern(Newton *nw)
{
    const DyrtModel *m = nw->m;
    int n = nw->n, nnz = m->init_nnz, extra = nw->ng * nw->ncand;
    int *rowidx = dyrt_calloc((size_t)(nnz + extra), sizeof(int));
    double *vals = dyrt_calloc((size_t)(nnz + extra), sizeof(double));
    int *src = dyrt_calloc((size_t)(nnz + extra), sizeof(int));
    nw->map = dyrt_calloc((size_t)nnz + 1, sizeof(int));
    nw->mvals = dyrt_calloc((size_t)nnz + 1, sizeof(double));
    if (!nw->map || !nw->mvals || !rowidx || !vals || !src) {
        free(src);
        free(rowidx);
        free(vals);
        free(nw->map);
        free(nw->mvals);
        nw->map = NULL, nw->mvals = NULL;
        return -1;
    }
    free(nw->rowidx); /* the model's pattern, copied */
    free(nw->vals);
    nw->rowidx = rowidx;
    nw->vals = vals;
    int pos = 0;
    for (int j = 0; j < n; j++)
        nw->colptr[j + 1] = pos = extend_column(nw, j, pos, src);
    for (int q = 0; q < pos; q++)
        if (src[q] >= 0)
            nw->map[src[q]] = q;
    for (int k = 0; k < nw->nover; k++)
        nw->over_pos[k] = nw->map[nw->over_pos[k]];
    free(src);
    if (nw->sym)
        klu_free_symbolic(&nw->sym, &nw->common);
    nw->sym = klu_analyze(n, nw->colptr, nw->rowidx, &nw->common);
    return nw->sym ? 0 : -1;
}

/* Position of entry (row, col) in the pattern, -1 when structurally 0. */
static int entry(const Newton *nw, int row, int col)
{
    for (int k = nw->colptr[col]; k < nw->colptr[col + 1]; k++)
        if (nw->rowidx[k] == row)
            return k;
    return -1;
}

void dyrt_init_guess_residual(const Newton *nw, const double *z, double *r)
{
    for (int g = 0; g < nw->ng; g++)
        if (nw->g_col[g] != nw->g_orig[g])
            r[nw->g_row[g]] = z[nw->g_col[g]] - nw->guess[nw->g_col[g]];
}

void dyrt_init_guess_jacobian(Newton *nw)
{
    if (!nw->map)
        return;
    memset(nw->vals, 0, sizeof(double) * (size_t)nw->colptr[nw->n]);
    for (int k = 0; k < nw->m->init_nnz; k++)
        nw->vals[nw->map[k]] = nw->mvals[k];
    for (int g = 0; g < nw->ng; g++)
        if (nw->g_col[g] != nw->g_orig[g]) {
            nw->vals[entry(nw, nw->g_row[g], nw->g_orig[g])] = 0;
            nw->vals[entry(nw, nw->g_row[g], nw->g_col[g])] = 1;
        }
}

/* Pin `missing` column col in guess row g; the factorization, or NULL
 * (and g as before) when J stays singular. */
static klu_numeric *try_pin(Newton *nw, int g, int col)
{
    int old = nw->g_col[g];
    nw->g_col[g] = col;
    klu_numeric *num = NULL;
    if (dyrt_init_jacobian(nw) == 0)
        num = klu_factor(nw->colptr, nw->rowidx, nw->vals, nw->sym, &nw->common);
    if (num && dyrt_init_eval(nw, nw->z, nw->r) == 0)
        return num;
    if (num)
        klu_free_numeric(&num, &nw->common);
    nw->g_col[g] = old;
    return NULL;
}

klu_numeric *dyrt_init_swap_guess(Newton *nw)
{
    int bad = nw->common.singular_col;
    if (nw->swapped)
        return NULL;
    nw->swapped = 1;
    if (find_guess_rows(nw) <= 0 || extend_pattern(nw) != 0)
        return NULL;
    for (int pass = 0; pass < 2; pass++) /* the undetermined unknown first */
        for (int g = 0; g < nw->ng; g++)
            for (int c = 0; c < nw->ncand; c++) {
                int col = nw->cand[c], used = 0;
                for (int h = 0; h < nw->ng; h++)
                    used |= nw->g_col[h] == col;
                if (used || (pass == 0) != (col == bad))
                    continue;
                int old = nw->g_col[g];
                klu_numeric *num = try_pin(nw, g, col);
                if (num) {
                    const char *const *nm = nw->m->init_names;
                    dyrt_warning("initialization: with the `missing` parameter '%s' at its guess the "
                                 "system is singular ('%s' is not determined); '%s' is kept at its "
                                 "guess instead", nm[old], bad >= 0 && bad < nw->n ? nm[bad] : "?", nm[col]);
                    return num;
                }
                nw->common.singular_col = bad;
            }
    dyrt_init_eval(nw, nw->z, nw->r);
    return NULL;
}
