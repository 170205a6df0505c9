/*
 * plot.c -- `--plot FILE.png|FILE.svg`: the result CSV drawn by gnuplot.
 *
 * Input: a finished run whose rows are in the result file (not stdout).
 * Output: FILE, one curve per output column against time (at most
 * DYRT_PLOT_MAX_CURVES; --vars chooses others).  The gnuplot script goes to
 * a temporary file and gnuplot is started with posix_spawnp -- never through
 * a shell, so file names need no shell quoting (gnuplot's own single-quoted
 * strings double an embedded quote).  When gnuplot is not installed the
 * message says so and how to get it; the CSV is complete either way.
 */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dyrt_internal.h"

extern char **environ;

#define DYRT_PLOT_MAX_CURVES 12

/* 'text' as a gnuplot single-quoted string. */
static void quoted(FILE *f, const char *text)
{
    fputc('\'', f);
    for (const char *c = text; *c; c++) {
        if (*c == '\'')
            fputc('\'', f);
        fputc(*c, f);
    }
    fputc('\'', f);
}

static const char *extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

int dyrt_plot_check(const char *plot, const char *output)
{
    const char *ext = extension(plot);
    if (strcmp(ext, "png") != 0 && strcmp(ext, "svg") != 0) {
        dyrt_error("--plot %s: the file name must end in .png or .svg", plot);
        return DYRT_EXIT_USER;
    }
    if (dyrt_mat_wanted(output)) {
        dyrt_error("--plot draws the CSV result; it cannot be combined with -o %s (a MAT file)", output);
        return DYRT_EXIT_USER;
    }
    if (output && strcmp(output, "-") == 0) {
        dyrt_error("--plot needs the results in a file; it cannot be combined with -o -");
        return DYRT_EXIT_USER;
    }
    return 0;
}

/* The script: terminal from the extension, CSV columns 2.. against column 1. */
static void write_script(FILE *f, const DyrtRun *r, const char *csv)
{
    const char *plot = r->o->plot;
    if (strcmp(extension(plot), "svg") == 0)
        fputs("set terminal svg size 1000,600 dynamic background '#ffffff'\n", f);
    else
        fputs("set terminal png size 1000,600\n", f);
    fputs("set output ", f);
    quoted(f, plot);
    fputs("\nset datafile separator ','\nset key outside right noenhanced\n"
          "set grid\nset xlabel 'time'\nset title ", f);
    quoted(f, r->m->name ? r->m->name : "");
    fputs(" noenhanced\nplot ", f);
    int n = r->ncols < DYRT_PLOT_MAX_CURVES ? r->ncols : DYRT_PLOT_MAX_CURVES;
    for (int k = 0; k < n; k++) {
        fputs(k ? ", \\\n     " : "", f);
        quoted(f, k ? "" : csv);
        fprintf(f, " using 1:%d with lines lw 1.5 title columnheader(%d)", k + 2, k + 2);
    }
    fputc('\n', f);
}

/* Run `gnuplot SCRIPT`; 0, or an error already printed. */
static int run_gnuplot(const char *script)
{
    char *argv[] = {"gnuplot", (char *)script, NULL};
    pid_t pid;
    int err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    if (err == ENOENT) {
        dyrt_error("--plot: gnuplot is not installed (on Debian: apt-get install gnuplot-nox); "
                   "the results are in the CSV file");
        return DYRT_EXIT_USER;
    }
    if (err != 0) {
        dyrt_error("--plot: cannot start gnuplot: %s", strerror(err));
        return DYRT_EXIT_USER;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            dyrt_error("--plot: waiting for gnuplot: %s", strerror(errno));
            return DYRT_EXIT_USER;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        dyrt_error("--plot: gnuplot failed (%s %d)", WIFEXITED(status) ? "exit status" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return DYRT_EXIT_USER;
    }
    return 0;
}

int dyrt_plot(const DyrtRun *r, const char *csv)
{
    if (r->rows == 0 || r->ncols == 0) {
        dyrt_error("--plot: no rows to plot");
        return DYRT_EXIT_USER;
    }
    if (r->ncols > DYRT_PLOT_MAX_CURVES)
        dyrt_warning("--plot: drawing the first %d of %d columns; choose them with --vars",
                     DYRT_PLOT_MAX_CURVES, r->ncols);
    char script[] = "/tmp/dyadrt-plot-XXXXXX";
    int fd = mkstemp(script);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        dyrt_error("--plot: cannot create a temporary file: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return DYRT_EXIT_USER;
    }
    write_script(f, r, csv);
    int rc = fclose(f) == 0 ? run_gnuplot(script) : DYRT_EXIT_USER;
    unlink(script);
    return rc;
}
