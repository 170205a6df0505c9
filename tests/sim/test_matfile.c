/*
 * test_matfile.c -- `-o result.mat` (runtime/matfile.c) read back by a
 * reader of the MAT-file version 4 format written here from the format's
 * definition, independently of the writer: every matrix (type code
 * M*1000 + O*100 + P*10 + T; P: 0 double, 2 int32, 5 uint8; T: 1 text),
 * then the trajectory layout (Aclass, name, dataInfo, data_1, data_2,
 * transposed: "binTrans").  Each variable rebuilt from dataInfo must equal
 * the CSV of the same run bit for bit (the CSV's %.17g reads back exactly);
 * aliases must be references (fewer data_2 rows than trajectories, a
 * negated one among them); a failed run keeps its rows.
 */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <stdint.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)

typedef struct Mat {
    char name[64];
    int type, rows, cols;
    double *num;               /* numeric data as double, column-major */
    char *text;                /* text data, column-major */
} Mat;

typedef struct MatFile {
    Mat m[16];
    int n;
} MatFile;

static void read_mat(const char *path, MatFile *f) {
    FILE *in = fopen(path, "rb");
    ck_assert_msg(in != NULL, "cannot open %s", path);
    memset(f, 0, sizeof *f);
    int32_t h[5];
    while (f->n < 16 && fread(h, sizeof h, 1, in) == 1) {
        Mat *m = &f->m[f->n++];
        ck_assert_msg(h[0] / 1000 == 0 && h[3] == 0 && h[4] > 0 && h[4] <= 64, "bad header");
        ck_assert_int_eq((int)fread(m->name, 1, (size_t)h[4], in), h[4]);
        m->type = h[0];
        m->rows = h[1];
        m->cols = h[2];
        size_t n = (size_t)h[1] * (size_t)h[2];
        int prec = h[0] / 10 % 10;
        m->num = calloc(n + 1, sizeof *m->num);
        m->text = calloc(n + 1, 1);
        for (size_t k = 0; k < n; k++) {
            if (prec == 0) {
                ck_assert_int_eq((int)fread(&m->num[k], 8, 1, in), 1);
            } else if (prec == 2) {
                int32_t v;
                ck_assert_int_eq((int)fread(&v, 4, 1, in), 1);
                m->num[k] = v;
            } else {
                ck_assert_int_eq(prec, 5);
                ck_assert_int_eq((int)fread(&m->text[k], 1, 1, in), 1);
            }
        }
    }
    fclose(in);
}

static void free_mat(MatFile *f) {
    for (int i = 0; i < f->n; i++) {
        free(f->m[i].num);
        free(f->m[i].text);
    }
    f->n = 0;
}

static const Mat *mat(const MatFile *f, const char *name) {
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->m[i].name, name) == 0) return &f->m[i];
    ck_abort_msg("no matrix %s", name);
    return NULL;
}

/* string j of a transposed text matrix (column j), padding removed */
static void column_text(const Mat *m, int j, char *out, size_t size) {
    size_t n = 0;
    for (int r = 0; r < m->rows && n + 1 < size; r++) out[n++] = m->text[(size_t)j * (size_t)m->rows + (size_t)r];
    out[n] = 0;
    while (n > 0 && (out[n - 1] == 0 || out[n - 1] == ' ')) out[--n] = 0;
}

/* row r of a 4 x 11 Aclass (not transposed: rows are the strings) */
static void aclass_row(const Mat *m, int r, char *out) {
    int n = 0;
    for (int c = 0; c < m->cols; c++) out[n++] = m->text[(size_t)c * (size_t)m->rows + (size_t)r];
    out[n] = 0;
    while (n > 0 && (out[n - 1] == 0 || out[n - 1] == ' ')) out[--n] = 0;
}

/* value of variable j at output row k, from dataInfo */
static double value(const MatFile *f, int j, int k) {
    const Mat *info = mat(f, "dataInfo"), *d1 = mat(f, "data_1"), *d2 = mat(f, "data_2");
    int which = (int)info->num[4 * j], idx = (int)info->num[4 * j + 1];
    double sign = idx < 0 ? -1 : 1;
    int row = abs(idx) - 1;
    if (which == 1) {
        ck_assert_int_lt(row, d1->rows);
        return sign * d1->num[row];                      /* column 0: at the start */
    }
    ck_assert_msg(which == 0 || which == 2, "dataInfo matrix %d", which);
    ck_assert_int_lt(row, d2->rows);
    return sign * d2->num[(size_t)k * (size_t)d2->rows + (size_t)row];
}

/* every column (--vars all): the aliases among them are references */
static int run(const char *out, const char *log, const char *stop, const char *extra) {
    char *argv[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/msd.dyad"), "--no-stdlib", "--model",
                    "MassSpringDamper", "--stop", (char *)stop, "-p", "spring.k=60", "--vars", "all",
                    "-o", (char *)out, (char *)extra, NULL};
    return st_run(argv, log);
}

START_TEST(mat_equals_csv) {
    ck_assert_int_eq(run("mat_msd.csv", "mat_msd_csv.log", "1", NULL), 0);
    ck_assert_int_eq(run("mat_msd.mat", "mat_msd_mat.log", "1", NULL), 0);
    StCsv c;
    ck_assert_int_eq(st_csv_read("mat_msd.csv", &c), 0);
    MatFile f;
    read_mat("mat_msd.mat", &f);
    ck_assert_int_eq(f.n, 6);
    const char *order[] = {"Aclass", "name", "description", "dataInfo", "data_1", "data_2"};
    for (int i = 0; i < 6; i++) ck_assert_str_eq(f.m[i].name, order[i]);
    char s[256];
    const char *aclass[] = {"Atrajectory", "1.1", "", "binTrans"};
    for (int r = 0; r < 4; r++) {
        aclass_row(mat(&f, "Aclass"), r, s);
        ck_assert_str_eq(s, aclass[r]);
    }
    const Mat *names = mat(&f, "name"), *info = mat(&f, "dataInfo"), *d2 = mat(&f, "data_2");
    ck_assert_int_eq(info->rows, 4);
    ck_assert_int_eq(info->cols, names->cols);
    ck_assert_int_eq(d2->cols, c.nrows);                 /* one column per output row */
    int found = 0, traj = 0, negated = 0;
    for (int j = 0; j < names->cols; j++) {
        column_text(names, j, s, sizeof s);
        if (strcmp(s, "spring.k") == 0) ck_assert_double_eq(value(&f, j, 0), 60.0);
        if (strcmp(s, "mass.m") == 0) ck_assert_double_eq(value(&f, j, 0), 2.0);
        traj += info->num[4 * j] == 2;
        negated += info->num[4 * j + 1] < 0;
        int k = st_csv_col(&c, s);
        if (k < 0) continue;
        found++;
        for (int r = 0; r < c.nrows; r++)
            ck_assert_msg(value(&f, j, r) == st_csv(&c, r, k), "%s at row %d: %.17g in the MAT file, %.17g in the CSV",
                          s, r, value(&f, j, r), st_csv(&c, r, k));
    }
    ck_assert_int_eq(found, c.ncols);                    /* every CSV column, time included */
    fprintf(stderr, "mat: %d variables, %d trajectories in %d data_2 rows, %d negated aliases\n",
            names->cols, traj, d2->rows, negated);
    ck_assert_int_lt(d2->rows, traj);                    /* aliases are references */
    ck_assert_int_gt(negated, 0);
    st_csv_free(&c);
    free_mat(&f);
}
END_TEST

/* der(x) = x^2 blows up at t = 1: the MAT file keeps the rows before, as the CSV does */
START_TEST(mat_failed_run_keeps_rows) {
    char *a[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/e2e/blowup.dyad"), "--no-stdlib", "--model",
                 "Blowup", "--stop", "2", "-o", "mat_blowup.csv", NULL};
    char *b[] = {(char *)DYADC, "run", (char *)SRC("tests/sim/e2e/blowup.dyad"), "--no-stdlib", "--model",
                 "Blowup", "--stop", "2", "-o", "mat_blowup.mat", NULL};
    ck_assert_int_eq(st_run(a, "mat_blowup_csv.log"), 1);
    ck_assert_int_eq(st_run(b, "mat_blowup_mat.log"), 1);
    char *log = st_slurp("mat_blowup_mat.log");
    ck_assert_msg(strstr(log, "simulation failed at t = ") != NULL, "%s", log);
    free(log);
    StCsv c;
    ck_assert_int_eq(st_csv_read("mat_blowup.csv", &c), 0);
    MatFile f;
    read_mat("mat_blowup.mat", &f);
    ck_assert_int_gt(c.nrows, 10);
    ck_assert_int_eq(mat(&f, "data_2")->cols, c.nrows);
    st_csv_free(&c);
    free_mat(&f);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("matfile");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, mat_equals_csv);
    tcase_add_test(tc, mat_failed_run_keeps_rows);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return check_failures(suite()) ? 1 : 0;
}
