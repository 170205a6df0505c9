/*
 * outfile.c -- what `-o` names is written safely (build, fmu).
 *
 *   - `-o` naming a directory (or ending in '/'), or a file being compiled
 *     (the same file, by device and inode), is refused before any work;
 *   - intermediate files (the object, the shared object of an FMU, the
 *     linker's log and version script) go to a private directory made with
 *     mkdtemp under $TMPDIR (else /tmp), removed afterwards: nothing beside
 *     the target is created or clobbered, no fixed name can be raced;
 *   - the result is written under a temporary name beside the target
 *     (mkstemp: `.NAME.XXXXXX`) and renamed over it only when complete, so
 *     the target is either the old file or the whole new one; a symbolic
 *     link at the target is replaced, never followed.
 */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int refuse(const char *target, const char *why) {
    fprintf(stderr, "dyadc: error: -o %s: %s\n", target, why);
    return 1;
}

/* the directory part of target ("." when none) and its base name */
static void split(Arena *a, const char *target, const char **dir, const char **base) {
    const char *slash = strrchr(target, '/');
    *base = slash ? slash + 1 : target;
    if (!slash) *dir = ".";
    else if (slash == target) *dir = "/";
    else *dir = arena_strndup(a, target, (size_t)(slash - target));
}

static int make_scratch(Arena *a, OutFile *f) {
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    char *dir = arena_printf(a, "%s/dyadc-XXXXXX", tmpdir);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "dyadc: error: cannot create a private directory in %s: %s\n", tmpdir,
                strerror(errno));
        return 1;
    }
    f->scratch = dir;
    return 0;
}

/* the input that is the same file as target (st: target's), or NULL */
static const char *same_input(const struct stat *st, const char *const *inputs, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        struct stat in;
        if (stat(inputs[i], &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino)
            return inputs[i];
    }
    return NULL;
}

int outf_open(Arena *a, const char *target, const char *const *inputs, uint32_t ninputs, OutFile *f) {
    memset(f, 0, sizeof *f);
    f->target = target;
    struct stat st;
    size_t len = strlen(target);
    if (len == 0) return refuse(target, "the file name is empty");
    int exists = stat(target, &st) == 0;
    if (target[len - 1] == '/' || (exists && S_ISDIR(st.st_mode)))
        return refuse(target, "is a directory; give the name of the file to write");
    const char *src = exists ? same_input(&st, inputs, ninputs) : NULL;
    if (src)
        return refuse(target, arena_printf(a, "is the source file '%s'; give another name for the result", src));
    const char *dir, *base;
    split(a, target, &dir, &base);
    char *tmp = arena_printf(a, "%s/.%s.XXXXXX", dir, base);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "dyadc: error: -o %s: cannot write in '%s': %s\n", target, dir, strerror(errno));
        return 1;
    }
    mode_t mask = umask(0);    /* the mode a plain create would give (mkstemp: 0600) */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    close(fd);
    f->tmp = tmp;
    return make_scratch(a, f);
}

const char *outf_scratch(Arena *a, const OutFile *f, const char *name) {
    return arena_printf(a, "%s/%s", f->scratch, name);
}

int outf_commit(OutFile *f) {
    struct stat st;
    if (stat(f->tmp, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        fprintf(stderr, "dyadc: error: -o %s: nothing was written\n", f->target);
        return 1;
    }
    if (rename(f->tmp, f->target) != 0) {
        fprintf(stderr, "dyadc: error: -o %s: %s\n", f->target, strerror(errno));
        return 1;
    }
    f->tmp = NULL;
    return 0;
}

void outf_close(OutFile *f) {
    if (f->tmp) unlink(f->tmp);
    f->tmp = NULL;
    if (!f->scratch) return;
    DIR *d = opendir(f->scratch);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", f->scratch, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(f->scratch);
    f->scratch = NULL;
}
