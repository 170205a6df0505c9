/*
 * simtest.h -- helpers for simulation tests: run dyadc or a built
 * simulator as a child process, read its CSV back, compare with a closed
 * form.  Header-only, used by tests/sim/test_*.c.
 */
#ifndef DYADC_SIMTEST_H
#define DYADC_SIMTEST_H

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static inline const char *st_env(const char *name, const char *dflt) {
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* path under the build or source tree, in a static rotating buffer */
static inline const char *st_path(const char *root_env, const char *rel) {
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 1024, "%s/%s", st_env(root_env, "."), rel);
    return b;
}

/* run argv (NULL-terminated) with stdout/stderr to `log`; exit status or -1 */
static inline int st_run(char *const argv[], const char *log) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (log) {
        posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
    }
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

typedef struct {
    int ncols, nrows;
    char **names;
    double *data; /* row-major nrows x ncols */
} StCsv;

static inline int st_csv_col(const StCsv *c, const char *name) {
    for (int i = 0; i < c->ncols; i++)
        if (strcmp(c->names[i], name) == 0) return i;
    return -1;
}

static inline double st_csv(const StCsv *c, int row, int col) { return c->data[row * c->ncols + col]; }

static inline int st_csv_read(const char *path, StCsv *c) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    memset(c, 0, sizeof *c);
    static char line[1 << 16];
    if (!fgets(line, sizeof line, f)) { fclose(f); return -1; }
    line[strcspn(line, "\r\n")] = 0;
    for (char *tok = strtok(line, ","); tok; tok = strtok(NULL, ",")) {
        c->names = realloc(c->names, (size_t)(c->ncols + 1) * sizeof *c->names);
        c->names[c->ncols++] = strdup(tok);
    }
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        if (c->nrows == cap) {
            cap = cap ? cap * 2 : 256;
            c->data = realloc(c->data, (size_t)cap * (size_t)c->ncols * sizeof(double));
        }
        char *p = line;
        for (int i = 0; i < c->ncols; i++) {
            c->data[c->nrows * c->ncols + i] = strtod(p, &p);
            if (*p == ',') p++;
        }
        c->nrows++;
    }
    fclose(f);
    return 0;
}

static inline void st_csv_free(StCsv *c) {
    for (int i = 0; i < c->ncols; i++) free(c->names[i]);
    free(c->names);
    free(c->data);
    memset(c, 0, sizeof *c);
}

static inline char *st_slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return strdup("");
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return strdup(buf);
}

/* `dyadc run FILE --model MODEL --stop STOP --interval DT --rtol RTOL --atol ATOL
 * -o CSV` (log in CSV.log, shown on failure), then the CSV read into c:
 * 0, or the exit status (-1: the CSV could not be read) */
static inline int st_run_csv(const char *dyadc, const char *file, const char *model, const char *stop,
                      const char *interval, const char *rtol, const char *atol, const char *csv,
                      StCsv *c) {
    char log[256];
    snprintf(log, sizeof log, "%s.log", csv);
    char *argv[] = {(char *)dyadc, "run", (char *)file, "--model", (char *)model, "--stop", (char *)stop,
                    "--interval", (char *)interval, "--rtol", (char *)rtol, "--atol", (char *)atol,
                    "-o", (char *)csv, NULL};
    int rc = st_run(argv, log);
    if (rc != 0) {
        char *text = st_slurp(log);
        fprintf(stderr, "%s %s failed:\n%s\n", file, model, text);
        free(text);
        return rc;
    }
    return st_csv_read(csv, c);
}

#endif
