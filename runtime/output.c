/*
 * output.c -- the result CSV (DESIGN.md section 4) and the output times.
 *
 * `-o FILE.mat` writes the same rows as a MAT v4 file instead (matfile.c).
 * Header `time,<out_names...>` (or the --vars subset, in its order), one row
 * per output time, every value the shortest text that reads back to the same
 * double (dyrt_format_double, numfmt.c).  A row is formatted into one buffer and written with
 * one fwrite, then flushed, so a failed simulation -- every failure path of
 * the runtime -- leaves every row computed before the failure; only a hard
 * crash in the middle of a row can lose that row.  The file is created (or
 * truncated) only with the first row: a run that cannot start (bad -p,
 * --initial, a failed initialization) leaves none, or the old one.
 * Which columns: columns.c.  Output times: the uniform grid
 * t_k = start + k*interval (computed by multiplication, never by summing, so
 * there is no drift) with the last time exactly `stop`, or the --saveat list.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dyrt_internal.h"
#include "numfmt.h"

#define DYRT_MAX_ROWS 100000000L

/* Only the columns written are evaluated: the copies from the table, the
 * generated function only when a column needs it (rc ladder N = 10,000,
 * one column: 21% of the run was computing the other 60,000). */
static int copy_columns(DyrtRun *r)
{
    int32_t *entry_of = dyrt_calloc((size_t)r->m->nout + 1, sizeof *entry_of);
    r->col_copy = dyrt_calloc((size_t)r->ncols + 1, sizeof *r->col_copy);
    if (!entry_of || !r->col_copy) {
        free(entry_of);
        return DYRT_EXIT_INTERNAL;
    }
    dyrt_model_copy_entries(r->m, entry_of);
    for (int k = 0; k < r->ncols; k++) {
        r->col_copy[k] = entry_of[r->cols[k]];
        r->need_fn |= r->col_copy[k] < 0;
    }
    free(entry_of);
    return 0;
}

static int select_columns(DyrtRun *r)
{
    const DyrtModel *m = r->m;
    int rc = dyrt_select_columns(r);
    if (rc)
        return rc;
    r->outbuf = dyrt_calloc((size_t)m->nout, sizeof *r->outbuf);
    r->tickbuf = dyrt_calloc((size_t)m->nout, sizeof *r->tickbuf);
    r->rowbuf = dyrt_calloc((size_t)r->ncols + 1, DYRT_FMT_MAX + 1);
    if (!r->outbuf || !r->tickbuf || !r->rowbuf)
        return DYRT_EXIT_INTERNAL;
    return copy_columns(r);
}

static int saveat_times(DyrtRun *r)
{
    const DyrtOptions *o = r->o;
    double start = r->sim->start, stop = r->sim->stop;
    if (o->saveat[0] < start || o->saveat[o->nsaveat - 1] > stop) {
        dyrt_error("--saveat: times must lie within [start, stop] = [%s, %s]",
                   dyrt_num(start).s, dyrt_num(stop).s);
        return DYRT_EXIT_USER;
    }
    r->touts = dyrt_calloc((size_t)o->nsaveat, sizeof *r->touts);
    if (!r->touts)
        return DYRT_EXIT_INTERNAL;
    memcpy(r->touts, o->saveat, sizeof *r->touts * (size_t)o->nsaveat);
    r->ntouts = o->nsaveat;
    return 0;
}

static int grid_times(DyrtRun *r, double interval)
{
    double start = r->sim->start, stop = r->sim->stop;
    double q = (stop - start) / interval;
    if (!(q < (double)DYRT_MAX_ROWS)) {
        dyrt_error("--interval %s gives more than %ld output rows", dyrt_num(interval).s, DYRT_MAX_ROWS);
        return DYRT_EXIT_USER;
    }
    long nint = (long)floor(q);
    if (q - (double)nint > 1e-9 * (q > 1 ? q : 1))
        nint++;                /* a last, shorter step ends at stop */
    r->ntouts = nint + 1;
    r->touts = dyrt_calloc((size_t)r->ntouts, sizeof *r->touts);
    if (!r->touts)
        return DYRT_EXIT_INTERNAL;
    for (long k = 0; k < nint; k++)
        r->touts[k] = start + (double)k * interval;
    r->touts[nint] = stop;
    return 0;
}

static double resolve_interval(const DyrtRun *r)
{
    if (r->o->given & DYRT_OPT_INTERVAL)
        return r->o->interval;
    if (r->m->defaults.interval > 0)
        return r->m->defaults.interval;
    double span = r->sim->stop - r->sim->start;
    return span > 0 ? span / 500 : 1.0;
}

/* The result file's path; "-" is stdout. */
static void output_path(DyrtRun *r)
{
    const char *path = r->o->output;
    if (!path)
        snprintf(r->out_path, sizeof r->out_path, "%s.csv", r->m->name ? r->m->name : "out");
    else
        snprintf(r->out_path, sizeof r->out_path, "%s", path);
    r->mat = strcmp(r->out_path, "-") != 0 && dyrt_mat_wanted(r->out_path);
}

/* Before the simulation starts: can the file be written?  Nothing is
 * created or truncated yet (open_output does that with the first row), so
 * a run that cannot start leaves an existing result as it was. */
static int check_output(DyrtRun *r)
{
    const char *path = r->out_path;
    if (strcmp(path, "-") == 0 || access(path, W_OK) == 0)
        return 0;
    int err = errno;
    if (err == ENOENT) {
        char dir[sizeof r->out_path];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash == dir)
            slash[1] = '\0';
        else if (slash)
            *slash = '\0';
        if (access(slash ? dir : ".", W_OK | X_OK) == 0)
            return 0;
        err = errno;
    }
    dyrt_error("cannot open '%s' for writing: %s", path, strerror(err));
    return DYRT_EXIT_USER;
}

static int open_output(DyrtRun *r)
{
    const char *path = r->out_path;
    if (strcmp(path, "-") == 0) {
        r->out = stdout;
        return 0;
    }
    r->out = fopen(path, r->mat ? "wb" : "w");
    if (!r->out) {
        dyrt_error("cannot open '%s' for writing: %s", path, strerror(errno));
        return DYRT_EXIT_USER;
    }
    r->close_out = 1;
    return 0;
}

static int write_header(DyrtRun *r)
{
    if (r->mat)
        return 0;              /* with the first row (matfile.c) */
    fputs("time", r->out);
    for (int k = 0; k < r->ncols; k++)
        fprintf(r->out, ",%s", r->m->out_names[r->cols[k]]);
    fputc('\n', r->out);
    if (fflush(r->out) != 0) {
        dyrt_error("cannot write the result: %s", strerror(errno));
        return DYRT_EXIT_USER;
    }
    return 0;
}

int dyrt_output_setup(DyrtRun *r)
{
    int rc = select_columns(r);
    if (!rc)
        rc = r->o->nsaveat ? saveat_times(r) : grid_times(r, resolve_interval(r));
    if (!rc) {
        output_path(r);
        rc = check_output(r);
    }
    return rc;
}

/* With the first row: the file, its header. */
static int begin_output(DyrtRun *r)
{
    int rc = open_output(r);
    return rc ? rc : write_header(r);
}

/* The row of the current point of the simulation: only its columns are
 * evaluated (copy_columns). */
int dyrt_output_row(DyrtRun *r)
{
    double t0 = dyrt_now(), t = dyrt_time(r->sim);
    const double *y = dyrt_y(r->sim), *yp = dyrt_yp(r->sim), *par = dyrt_params(r->sim);
    if (r->need_fn)
        r->m->outputs(t, y, yp, par, r->outbuf);
    for (int k = 0; k < r->ncols; k++)
        if (r->col_copy[k] >= 0)
            r->outbuf[r->cols[k]] = dyrt_model_copy_value(r->m, r->col_copy[k], t, y, yp, par);
    r->t_output += dyrt_now() - t0;
    return dyrt_output_values(r, t, r->outbuf);
}

/* One row of the given output values (all nout of them) at time t. */
int dyrt_output_values(DyrtRun *r, double t, const double *vals)
{
    int rc = dyrt_check_outputs(r->sim, vals);  /* no NaN written as data */
    if (!rc && !r->out)
        rc = begin_output(r);
    if (rc)
        return rc;
    double t0 = dyrt_now();
    if (r->mat) {
        rc = dyrt_mat_row(r, t, vals);
        r->rows += !rc;
        r->t_output += dyrt_now() - t0;
        return rc;
    }
    char *p = r->rowbuf;
    p += dyrt_format_double(p, t);
    for (int k = 0; k < r->ncols; k++) {
        *p++ = ',';
        p += dyrt_format_double(p, vals[r->cols[k]]);
    }
    *p++ = '\n';
    size_t len = (size_t)(p - r->rowbuf);
    if (fwrite(r->rowbuf, 1, len, r->out) != len || fflush(r->out) != 0) {
        dyrt_error("cannot write the result: %s", strerror(errno));
        return DYRT_EXIT_USER;
    }
    r->rows++;
    r->t_output += dyrt_now() - t0;
    return 0;
}

void dyrt_output_close(DyrtRun *r)
{
    if (r->out && r->mat)
        dyrt_mat_close(r);
    if (r->out && r->close_out)
        fclose(r->out);
    else if (r->out)
        fflush(r->out);
    r->out = NULL;
}
