/*
 * matfile.c -- `-o result.mat`: the result as a MAT-file version 4 in the
 * layout OpenModelica and Dymola write (read by scipy.io.loadmat, MATLAB,
 * OMPlot, DyMat), instead of the CSV.
 *
 * Six matrices, in this order (MAT v4: a header of five int32 -- type,
 * rows, columns, imaginary flag, name length -- the name, then the data
 * column by column; type 0 = double, 20 = int32, 51 = text):
 *   Aclass       4 x 11 text: "Atrajectory", "1.1", "", "binTrans"
 *                (binTrans: the name and data matrices are transposed,
 *                one variable per column of `name`, one time per column
 *                of data_2);
 *   name         maxlen x n text, variable j in column j (blank-padded);
 *   description  likewise (the runtime has no descriptions: empty);
 *   dataInfo     4 x n int32, column j = (matrix, row, 0, -1):
 *                matrix 0 for time (the abscissa), 1 for values constant
 *                in time (data_1), 2 for trajectories (data_2); row is
 *                1-based, negative for a negated alias;
 *   data_1       (1 + parameters) x 2: time and the parameters at the start
 *                and at the stop time;
 *   data_2       (1 + stored columns) x rows: time and the stored values,
 *                one column per output row; its column count is patched
 *                when the file is closed.
 * Aliases are references, not copies: an output column whose expression an
 * earlier column has, or negates (out_alias), points at that column's row;
 * one that is y_i, -y_i (a copy without scale and offset), time, or +-p_i
 * points at the row of the first column holding the same y_i, at time, or
 * at p_i in data_1.
 * The variables: time, the parameters (not the modes or clocked values),
 * then the output columns chosen for the CSV (--vars), in that order.
 *
 * The headers are written with the first row (the `missing` parameters are
 * known only after the initialization); a failed run keeps the rows so far
 * (every row is flushed, and the column count patched at close).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

enum { MAT_DOUBLE = 0, MAT_INT32 = 20, MAT_TEXT = 51 };

static int header(FILE *f, const char *name, int32_t type, int32_t rows, int32_t cols)
{
    int32_t h[5] = {type, rows, cols, 0, (int32_t)strlen(name) + 1};
    return fwrite(h, sizeof h, 1, f) == 1 && fwrite(name, strlen(name) + 1, 1, f) == 1 ? 0 : -1;
}

/* A text matrix, one string per column, padded with blanks to the longest
 * (as Aclass; a reader that turns rows into strings, scipy's loadmat by
 * default, would drop trailing '\0's and misalign the columns). */
static int text(FILE *f, const char *name, const char *const *s, int n)
{
    size_t w = 1;
    for (int j = 0; j < n; j++)
        w = strlen(s[j]) > w ? strlen(s[j]) : w;
    if (header(f, name, MAT_TEXT, (int32_t)w, n))
        return -1;
    char *col = calloc(w, 1);
    int bad = !col;
    for (int j = 0; !bad && j < n; j++) {
        memset(col, ' ', w);
        memcpy(col, s[j], strlen(s[j]));
        bad = fwrite(col, 1, w, f) != w;
    }
    free(col);
    return bad ? -1 : 0;
}

static int is_param(const DyrtModel *m, int32_t i)
{
    return !(m->param_flags[i] & (DYRT_PARAM_DISCRETE | DYRT_PARAM_INPUT));
}

/* dataInfo of an output column: (2, new row) when stored, else a reference. */
static void classify_one(DyrtRun *r, int j, int32_t *info, int32_t *prow, int32_t *yrow)
{
    const DyrtModel *m = r->m;
    int32_t e = r->col_copy[j];
    unsigned kind = e >= 0 ? m->out_copy_kind[e] : DYRT_SRC_CONST;
    unsigned src = kind & DYRT_SRC_MASK, ops = kind & ~(unsigned)DYRT_SRC_MASK;
    int32_t sign = ops == DYRT_OP_NEG ? -1 : 1, i = e >= 0 ? m->out_copy_index[e] : 0;
    info[0] = 2;
    info[2] = 0;
    info[3] = -1;
    if (e >= 0 && (ops == 0 || ops == DYRT_OP_NEG)) {
        if (src == DYRT_SRC_TIME) {
            info[1] = sign;
            return;
        }
        if (src == DYRT_SRC_P && is_param(m, i)) {
            info[0] = 1;
            info[1] = sign * prow[i];
            info[3] = 0;
            return;
        }
        if (src == DYRT_SRC_Y && yrow[i] != 0) {
            info[1] = sign * yrow[i];
            return;
        }
    }
    r->mat_stored[r->mat_nstored] = j;
    info[1] = 2 + r->mat_nstored++;    /* rows 2.. (1 is time) */
    if (e >= 0 && src == DYRT_SRC_Y && (ops == 0 || ops == DYRT_OP_NEG))
        yrow[i] = sign * info[1];
}

/* The same through out_alias: a column whose expression an earlier one
 * has (or negates) takes that group's reference; group[root] holds the
 * first member's (matrix, signed row) relative to the root's value. */
static void classify(DyrtRun *r, int j, int32_t *info, int32_t *prow, int32_t *yrow, int32_t *group)
{
    const int32_t *alias = r->m->out_alias;
    int32_t k = r->cols[j], a = alias ? alias[k] : 0;
    int32_t root = a ? (a < 0 ? -a : a) - 1 : k, sign = a < 0 ? -1 : 1;
    if (group[2 * root]) {
        info[0] = group[2 * root];
        info[1] = sign * group[2 * root + 1];
        info[2] = 0;
        info[3] = info[0] == 1 ? 0 : -1;
        return;
    }
    classify_one(r, j, info, prow, yrow);
    group[2 * root] = info[0] ? info[0] : 2;   /* time (0) lives in data_2, row 1 */
    group[2 * root + 1] = sign * info[1];
}

/* name, description and dataInfo of every variable; fills prow and the
 * stored columns. */
static int catalogue(DyrtRun *r, FILE *f, int32_t *prow)
{
    const DyrtModel *m = r->m;
    int n = 1 + r->ncols, np = 0;
    for (int32_t i = 0; i < m->np; i++)
        n += is_param(m, i);
    const char **names = calloc((size_t)n, sizeof *names), **desc = calloc((size_t)n, sizeof *desc);
    int32_t *info = calloc((size_t)n * 4, sizeof *info), *yrow = calloc((size_t)m->ny + 1, sizeof *yrow);
    int32_t *group = calloc(2 * (size_t)m->nout + 1, sizeof *group);
    int bad = !names || !desc || !info || !yrow || !group;
    for (int k = 0; !bad && k < n; k++)
        desc[k] = "";
    if (!bad) {
        names[0] = "time";
        int32_t t[4] = {0, 1, 0, -1};
        memcpy(info, t, sizeof t);
        for (int32_t i = 0; i < m->np; i++)
            if (is_param(m, i)) {
                prow[i] = 2 + np++;
                names[np] = m->param_names[i];
                int32_t v[4] = {1, prow[i], 0, 0};
                memcpy(&info[4 * np], v, sizeof v);
            }
        for (int j = 0; j < r->ncols; j++) {
            names[1 + np + j] = m->out_names[r->cols[j]];
            classify(r, j, &info[4 * (1 + np + j)], prow, yrow, group);
        }
        r->mat_nparams = np;
        bad = text(f, "name", names, n) || text(f, "description", desc, n) ||
              header(f, "dataInfo", MAT_INT32, 4, n) ||
              fwrite(info, sizeof *info, (size_t)n * 4, f) != (size_t)n * 4;
    }
    free(names);
    free(desc);
    free(info);
    free(yrow);
    free(group);
    return bad ? -1 : 0;
}

/* data_1: time and the parameters at start and stop. */
static int constants(DyrtRun *r, FILE *f)
{
    const DyrtModel *m = r->m;
    const double *p = dyrt_params(r->sim);
    int rows = 1 + r->mat_nparams, bad = header(f, "data_1", MAT_DOUBLE, rows, 2);
    for (int c = 0; !bad && c < 2; c++) {
        double t = c ? dyrt_stop_time(r->sim) : r->sim->start;
        bad = fwrite(&t, sizeof t, 1, f) != 1;
        for (int32_t i = 0; !bad && i < m->np; i++)
            if (is_param(m, i))
                bad = fwrite(&p[i], sizeof p[i], 1, f) != 1;
    }
    return bad;
}

static const char *const aclass[] = {"Atrajectory", "1.1", "", "binTrans"};

/* Aclass as 4 rows of 11 characters (column by column). */
static int write_aclass(FILE *f)
{
    char a[44];
    for (int c = 0; c < 11; c++)
        for (int row = 0; row < 4; row++)
            a[c * 4 + row] = (size_t)c < strlen(aclass[row]) ? aclass[row][c] : ' ';
    return header(f, "Aclass", MAT_TEXT, 4, 11) || fwrite(a, sizeof a, 1, f) != 1 ? -1 : 0;
}

static int begin(DyrtRun *r)
{
    FILE *f = r->out;
    int32_t *prow = calloc((size_t)r->m->np + 1, sizeof *prow);
    r->mat_stored = calloc((size_t)r->ncols + 1, sizeof *r->mat_stored);
    r->mat_buf = calloc((size_t)r->ncols + 2, sizeof *r->mat_buf);
    int bad = !prow || !r->mat_stored || !r->mat_buf || write_aclass(f) || catalogue(r, f, prow) ||
              constants(r, f);
    free(prow);
    if (!bad) {
        r->mat_cols_at = ftell(f) + 8;   /* data_2's column count: header word 3 */
        bad = header(f, "data_2", MAT_DOUBLE, 1 + r->mat_nstored, 0) || fflush(f) != 0;
    }
    r->mat_begun = 1;
    if (!bad)
        return 0;
    dyrt_error("cannot write the result: %s", strerror(errno));
    return DYRT_EXIT_USER;
}

int dyrt_mat_row(DyrtRun *r, double t, const double *vals)
{
    if (!r->mat_begun && begin(r))
        return DYRT_EXIT_USER;
    r->mat_buf[0] = t;
    for (int k = 0; k < r->mat_nstored; k++)
        r->mat_buf[1 + k] = vals[r->cols[r->mat_stored[k]]];
    size_t n = 1 + (size_t)r->mat_nstored;
    if (fwrite(r->mat_buf, sizeof(double), n, r->out) != n || fflush(r->out) != 0) {
        dyrt_error("cannot write the result: %s", strerror(errno));
        return DYRT_EXIT_USER;
    }
    return 0;
}

/* The column count of data_2 = rows written; 0 or an error printed. */
int dyrt_mat_close(DyrtRun *r)
{
    if (!r->mat_begun && begin(r))
        return DYRT_EXIT_USER;
    int32_t cols = (int32_t)r->rows;
    long end = ftell(r->out);
    if (fseek(r->out, r->mat_cols_at, SEEK_SET) != 0 || fwrite(&cols, sizeof cols, 1, r->out) != 1 ||
        fseek(r->out, end, SEEK_SET) != 0 || fflush(r->out) != 0) {
        dyrt_error("cannot write the result: %s", strerror(errno));
        return DYRT_EXIT_USER;
    }
    free(r->mat_stored);
    free(r->mat_buf);
    r->mat_stored = NULL;
    r->mat_buf = NULL;
    return 0;
}

int dyrt_mat_wanted(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 4 && strcmp(path + n - 4, ".mat") == 0;
}
