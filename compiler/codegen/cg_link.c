/*
 * cg_link.c -- object file + runtime archives -> standalone simulator (or
 * the shared object of an FMU).
 *
 * Spawns the compiler driver found at configure time (DYADC_LINKER, an
 * absolute path: not whatever `cc` is first on PATH) as a linker only
 * (posix_spawn, argument vector, no shell; no C source is ever compiled).
 * Its stdout and stderr go to <scratch>/link.log: shown (capped) when the
 * link fails, and as a warning when it succeeds with something to say.  A
 * link counts only when the linker exits 0 *and* the output is a non-empty
 * regular file (executable for a simulator).  Link order: the model object
 * (defines dyad_model), libdyadrt_main.a (main), libdyadrt.a, then the
 * SUNDIALS/KLU archives statically, then libm dynamically, so the
 * executable depends on libc and libm only.  The archive list mirrors
 * DYRT_STATIC_LIBS in the top-level CMakeLists.txt.
 *
 * When dyadc itself is built with AddressSanitizer, libdyadrt.a is
 * instrumented too, so the link adds the same -fsanitize flags.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen.h"

extern char **environ;

#if defined(__SANITIZE_ADDRESS__)
#define CG_SANITIZE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CG_SANITIZE 1
#endif
#endif

static const char *const static_libs[] = {
    "-lsundials_ida",          "-lsundials_kinsol",      "-lsundials_sunlinsolklu",
    "-lsundials_sunlinsoldense", "-lsundials_sunmatrixsparse", "-lsundials_sunmatrixdense",
    "-lsundials_nvecserial",   "-lsundials_generic",     "-lklu",
    "-lamd",                   "-lcolamd",               "-lbtf",
    "-lsuitesparseconfig",
};
#define NSTATIC (sizeof static_libs / sizeof static_libs[0])

#ifndef DYADC_LINKER
#define DYADC_LINKER "/usr/bin/cc"
#endif

/* Linker output larger than this is cut in messages. */
#define CG_LINK_LOG_MAX 4000

/* The linker's output (log_path), capped, as note lines after an error, or
 * as a warning after a successful link that said something. */
static void show_log(const char *log_path, bool failed) {
    FILE *f = fopen(log_path, "r");
    if (!f) return;
    char buf[CG_LINK_LOG_MAX + 1];
    size_t n = fread(buf, 1, CG_LINK_LOG_MAX, f);
    bool more = fgetc(f) != EOF;
    fclose(f);
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
    if (n == 0) return;
    if (failed) diag_note((Span){0}, "the linker said:\n%s%s", buf, more ? "\n..." : "");
    else diag_warning((Span){0}, "the linker succeeded but said:\n%s%s", buf, more ? "\n..." : "");
}

static int wait_for(pid_t pid, int *status) {
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            diag_error((Span){0}, "waiting for the linker: %s", strerror(errno));
            return 1;
        }
    return 0;
}

/* Run the linker with argv, output into log_path; 0 when it exited 0. */
static int run_and_wait(char **argv, const char *log_path) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, DYADC_LINKER, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        diag_error((Span){0}, "cannot run the linker '%s' (found there when dyadc was configured): %s",
                   DYADC_LINKER, strerror(rc));
        return 1;
    }
    int status;
    if (wait_for(pid, &status)) return 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        show_log(log_path, false);
        return 0;
    }
    if (WIFEXITED(status))
        diag_error((Span){0}, "linking failed: %s exited with status %d", DYADC_LINKER, WEXITSTATUS(status));
    else
        diag_error((Span){0}, "linking failed: %s was killed by signal %d", DYADC_LINKER, WTERMSIG(status));
    show_log(log_path, true);
    return 1;
}

/* The linker said it succeeded: is there a non-empty output? */
static int check_output(const char *path, bool executable) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
        (executable && !(st.st_mode & S_IXUSR))) {
        diag_error((Span){0}, "linking failed: %s exited with status 0 but wrote no %s at '%s'",
                   DYADC_LINKER, executable ? "executable" : "shared object", path);
        return 1;
    }
    return 0;
}

/* run_and_wait with the log in scratch_dir, then check_output */
static int link_to(const char **argv, const char *out, bool executable, const char *scratch_dir) {
    char log[4200];
    snprintf(log, sizeof log, "%s/link.log", scratch_dir);
    argv[0] = DYADC_LINKER;
    if (run_and_wait((char **)argv, log)) return 1;
    return check_output(out, executable);
}

static int archive_path(char *buf, size_t n, const char *dir, const char *name) {
    int len = snprintf(buf, n, "%s/%s", dir, name);
    if (len < 0 || (size_t)len >= n) {
        diag_error((Span){0}, "runtime directory path too long: %s", dir);
        return 1;
    }
    if (access(buf, R_OK) != 0) {
        diag_error((Span){0}, "runtime library not found: %s", buf);
        return 1;
    }
    return 0;
}

#define MAX_OBJS 4 /* model objects per link */

static int add_objs(const char **argv, int *n, const char *const *objs) {
    int k = 0;
    for (; objs[k]; k++) {
        if (k == MAX_OBJS) {
            diag_internal("codegen: more than %d objects to link", MAX_OBJS);
            return 1;
        }
        argv[(*n)++] = objs[k];
    }
    return 0;
}

/* The FMU binary: -shared, only the fmi2* functions exported (a version
 * script), so the runtime's and SUNDIALS' symbols cannot clash with the
 * importer's own.  The static archives of Debian 12 are position
 * independent (no R_X86_64_32 relocations), so they link into a shared
 * object as they are. */
int cg_link_shared(const char *const *objs, const char *so_path, const char *runtime_dir,
                   const char *scratch_dir) {
    char fmi_a[4096], rt_a[4096];
    if (archive_path(fmi_a, sizeof fmi_a, runtime_dir, "libdyadrt_fmi.a") ||
        archive_path(rt_a, sizeof rt_a, runtime_dir, "libdyadrt.a"))
        return 1;
    char map[4200];
    snprintf(map, sizeof map, "%s/exports.map", scratch_dir);
    FILE *mf = fopen(map, "w");
    static const char script[] = "{ global: fmi2*; local: *; };\n";
    if (!mf || fputs(script, mf) < 0 || fclose(mf) != 0) {
        diag_error((Span){0}, "cannot write '%s': %s", map, strerror(errno));
        return 1;
    }
    char vs[4300];
    snprintf(vs, sizeof vs, "-Wl,--version-script=%s", map);
    const char *argv[20 + MAX_OBJS + NSTATIC];
    int n = 0;
    argv[n++] = NULL;                     /* the linker, set by link_to() */
    argv[n++] = "-shared";
    argv[n++] = "-o";
    argv[n++] = so_path;
    if (add_objs(argv, &n, objs)) return 1;
    argv[n++] = "-Wl,--whole-archive";   /* nothing references the fmi2* functions */
    argv[n++] = fmi_a;
    argv[n++] = "-Wl,--no-whole-archive";
    argv[n++] = rt_a;
    argv[n++] = "-Wl,-Bstatic";
    for (size_t i = 0; i < NSTATIC; i++) argv[n++] = static_libs[i];
    argv[n++] = "-Wl,-Bdynamic";
    argv[n++] = "-lm";
    argv[n++] = vs;
    argv[n++] = "-Wl,-z,defs";
#ifdef CG_SANITIZE
    argv[n++] = "-fsanitize=address,undefined";
#endif
    argv[n] = NULL;
    return link_to(argv, so_path, false, scratch_dir);
}

int cg_link_executable(const char *const *objs, const char *exe_path, const char *runtime_dir,
                       const char *scratch_dir) {
    char main_a[4096], rt_a[4096];
    if (archive_path(main_a, sizeof main_a, runtime_dir, "libdyadrt_main.a") ||
        archive_path(rt_a, sizeof rt_a, runtime_dir, "libdyadrt.a"))
        return 1;
    const char *argv[16 + MAX_OBJS + NSTATIC];
    int n = 0;
    argv[n++] = NULL;                     /* the linker, set by link_to() */
    if (add_objs(argv, &n, objs)) return 1;
    argv[n++] = "-o";
    argv[n++] = exe_path;
    argv[n++] = main_a;
    argv[n++] = rt_a;
    argv[n++] = "-Wl,-Bstatic";
    for (size_t i = 0; i < NSTATIC; i++) argv[n++] = static_libs[i];
    argv[n++] = "-Wl,-Bdynamic";
    argv[n++] = "-lm";
#ifdef CG_SANITIZE
    argv[n++] = "-fsanitize=address,undefined";
#endif
    argv[n] = NULL;
    return link_to(argv, exe_path, true, scratch_dir);
}
