/*
 * cg_link.c -- object file + runtime archives -> standalone simulator.
 *
 * Spawns the system compiler driver `cc` as a linker only (posix_spawnp,
 * argument vector, no shell; no C source is ever compiled).  Link order:
 * the model object (defines dyad_model), libdyadrt_main.a (main), libdyadrt.a,
 * then the SUNDIALS/KLU archives statically, then libm dynamically, so the
 * executable depends on libc and libm only.  The archive list mirrors
 * DYRT_STATIC_LIBS in the top-level CMakeLists.txt.
 *
 * When dyadc itself is built with AddressSanitizer, libdyadrt.a is
 * instrumented too, so the link adds the same -fsanitize flags.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int run_and_wait(char **argv) {
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        diag_error((Span){0}, "cannot run the linker '%s': %s", argv[0], strerror(rc));
        return 1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            diag_error((Span){0}, "waiting for the linker: %s", strerror(errno));
            return 1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    diag_error((Span){0}, "linking failed (%s exited with status %d)", argv[0],
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 1;
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

/* The FMU binary: -shared, only the fmi2* functions exported (a version
 * script), so the runtime's and SUNDIALS' symbols cannot clash with the
 * importer's own.  The static archives of Debian 12 are position
 * independent (no R_X86_64_32 relocations), so they link into a shared
 * object as they are. */
int cg_link_shared(const char *obj_path, const char *so_path, const char *runtime_dir) {
    char fmi_a[4096], rt_a[4096];
    if (archive_path(fmi_a, sizeof fmi_a, runtime_dir, "libdyadrt_fmi.a") ||
        archive_path(rt_a, sizeof rt_a, runtime_dir, "libdyadrt.a"))
        return 1;
    char map[] = "/tmp/dyadc_fmi_XXXXXX";
    int fd = mkstemp(map);
    if (fd < 0) {
        diag_error((Span){0}, "cannot create a temporary file: %s", strerror(errno));
        return 1;
    }
    static const char script[] = "{ global: fmi2*; local: *; };\n";
    int ok = write(fd, script, sizeof script - 1) == (ssize_t)(sizeof script - 1);
    close(fd);
    char vs[4200];
    snprintf(vs, sizeof vs, "-Wl,--version-script=%s", map);
    const char *argv[20 + NSTATIC];
    int n = 0;
    argv[n++] = "cc";
    argv[n++] = "-shared";
    argv[n++] = "-o";
    argv[n++] = so_path;
    argv[n++] = obj_path;
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
    int rc = ok ? run_and_wait((char **)argv) : 1;
    remove(map);
    return rc;
}

int cg_link_executable(const char *obj_path, const char *exe_path, const char *runtime_dir) {
    char main_a[4096], rt_a[4096];
    if (archive_path(main_a, sizeof main_a, runtime_dir, "libdyadrt_main.a") ||
        archive_path(rt_a, sizeof rt_a, runtime_dir, "libdyadrt.a"))
        return 1;
    const char *argv[16 + NSTATIC];
    int n = 0;
    argv[n++] = "cc";
    argv[n++] = obj_path;
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
    return run_and_wait((char **)argv);
}
