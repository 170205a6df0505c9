/*
 * plot.c -- `--plot FILE.png|FILE.svg`: the result CSV drawn by gnuplot.
 *
 * Input: a finished run whose rows are in the result file (not stdout).
 * Output: FILE, one curve per output column against time (at most
 * DYRT_PLOT_MAX_CURVES; --vars chooses others).
 *
 * No string of the user's ever becomes script text: the script is constant
 * but for numbers, and the plot file, the CSV path and the title reach
 * gnuplot as data, its call arguments ARG1..ARG3 (`gnuplot -c script a b
 * c`), so a name with a newline, a quote or `!cmd` is just a name.  gnuplot
 * is the one found when the runtime was configured (DYRT_GNUPLOT, an
 * absolute path: not whatever is first on PATH), started with posix_spawn,
 * never through a shell; its output goes to a temporary file, shown when it
 * fails or warns.  When it is not installed the message says so and how to
 * get it; the CSV is complete either way.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dyrt_internal.h"

#ifndef DYRT_GNUPLOT
#define DYRT_GNUPLOT ""
#endif

extern char **environ;

#define DYRT_PLOT_MAX_CURVES 12

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

/* The script: terminal from the extension, CSV columns 2.. against column
 * 1; ARG1 = the plot file, ARG2 = the CSV, ARG3 = the title. */
static void write_script(FILE *f, const DyrtRun *r)
{
    if (strcmp(extension(r->o->plot), "svg") == 0)
        fputs("set terminal svg size 1000,600 dynamic background '#ffffff'\n", f);
    else
        fputs("set terminal png size 1000,600\n", f);
    fputs("set output ARG1\nset datafile separator ','\nset key outside right noenhanced\n"
          "set grid\nset xlabel 'time'\nset title ARG3 noenhanced\nplot ", f);
    int n = r->ncols < DYRT_PLOT_MAX_CURVES ? r->ncols : DYRT_PLOT_MAX_CURVES;
    for (int k = 0; k < n; k++)
        fprintf(f, "%s%s using 1:%d with lines lw 1.5 title columnheader(%d)", k ? ", \\\n     " : "",
                k ? "''" : "ARG2", k + 2, k + 2);
    fputc('\n', f);
}

/* gnuplot's output (in log), capped, after a failure or as a warning */
static void show_log(int fd, int failed)
{
    char buf[2001];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = 0;
    if (n == 0)
        return;
    if (failed)
        dyrt_note("gnuplot said:\n%s", buf);
    else
        dyrt_warning("--plot: gnuplot said:\n%s", buf);
}

static int wait_for(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            dyrt_error("--plot: waiting for gnuplot: %s", strerror(errno));
            return DYRT_EXIT_USER;
        }
    return 0;
}

/* Run `gnuplot -c SCRIPT PLOT CSV TITLE`, its output into log; 0, or an
 * error already printed. */
static int run_gnuplot(const char *script, const char *plot, const char *csv, const char *title,
                       int log)
{
    if (!DYRT_GNUPLOT[0]) {
        dyrt_error("--plot: gnuplot was not found when this runtime was configured (on Debian: "
                   "apt-get install gnuplot-nox, then reconfigure); the results are in the CSV file");
        return DYRT_EXIT_USER;
    }
    char *argv[] = {DYRT_GNUPLOT, "-c", (char *)script, (char *)plot, (char *)csv, (char *)title, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, log, 1);
    posix_spawn_file_actions_adddup2(&fa, log, 2);
    pid_t pid;
    int err = posix_spawn(&pid, DYRT_GNUPLOT, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err == ENOENT) {
        dyrt_error("--plot: gnuplot is not installed at %s (on Debian: apt-get install gnuplot-nox); "
                   "the results are in the CSV file", DYRT_GNUPLOT);
        return DYRT_EXIT_USER;
    }
    if (err != 0) {
        dyrt_error("--plot: cannot start %s: %s", DYRT_GNUPLOT, strerror(err));
        return DYRT_EXIT_USER;
    }
    int status;
    if (wait_for(pid, &status))
        return DYRT_EXIT_USER;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        dyrt_error("--plot: gnuplot failed (%s %d)", WIFEXITED(status) ? "exit status" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        show_log(log, 1);
        return DYRT_EXIT_USER;
    }
    show_log(log, 0);
    return 0;
}

/* A temporary file under $TMPDIR (else /tmp) for the script or the log. */
static int temp_file(char *path, size_t n, const char *what)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, n, "%s/dyadrt-%s-XXXXXX", dir && *dir ? dir : "/tmp", what);
    int fd = mkstemp(path);
    if (fd < 0)
        dyrt_error("--plot: cannot create a temporary file in %s: %s", dir && *dir ? dir : "/tmp",
                   strerror(errno));
    return fd;
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
    char script[4096], log[4096];
    int fd = temp_file(script, sizeof script, "plot");
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return DYRT_EXIT_USER;
    }
    write_script(f, r);
    int rc = fclose(f) == 0 ? 0 : DYRT_EXIT_USER;
    int lfd = rc ? -1 : temp_file(log, sizeof log, "gnuplot");
    if (lfd >= 0) {
        rc = run_gnuplot(script, r->o->plot, csv, r->m->name ? r->m->name : "", lfd);
        close(lfd);
        unlink(log);
    } else {
        rc = DYRT_EXIT_USER;
    }
    unlink(script);
    return rc;
}
