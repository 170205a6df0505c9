/*
 * source.c -- the table of loaded source files.  Spans refer to files by id
 * (1-based, 0 = no location); lines are indexed lazily on the first
 * diagnostic that needs them (one linear scan, then binary search).
 */
#include "support.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static SrcFile **files;   /* files[id - 1] */
static uint32_t nfiles, capfiles;
static uint64_t limit_file = SRC_FILE_LIMIT_DEFAULT, limit_total = SRC_TOTAL_LIMIT_DEFAULT;
static uint64_t loaded;   /* bytes src_load read since src_reset */

void src_set_limits(uint64_t per_file, uint64_t total) {
    limit_file = per_file;
    limit_total = total;
}

static SrcFile *src_register(SrcFile *f) {
    if (nfiles == capfiles) {
        capfiles = capfiles ? capfiles * 2 : 16;
        files = realloc(files, capfiles * sizeof *files);
        if (!files) {
            fprintf(stderr, "dyadc: out of memory\n");
            exit(2);
        }
    }
    files[nfiles++] = f;
    f->id = nfiles;
    return f;
}

void src_reset(void) {
    for (uint32_t i = 0; i < nfiles; i++) free(files[i]->line_starts);
    free(files);
    files = NULL;
    nfiles = capfiles = 0;
    loaded = 0;
}

SrcFile *src_from_string(Arena *a, const char *path, const char *text, size_t len) {
    SrcFile *f = ARENA_NEW(a, SrcFile);
    f->path = arena_strndup(a, path, strlen(path));
    f->text = arena_strndup(a, text, len);
    f->len = (uint32_t)len;
    return src_register(f);
}

/* A file over the per-file limit: its size when the file system knows it
 * (checked before reading), else "more than" what was read past the limit
 * (a pipe, a device). */
static void too_big(const char *path, uint64_t size, bool exact) {
    diag_error((Span){0}, "'%s' is %s%llu bytes, over the limit of %llu bytes per source file; "
               "raise it with --max-file-bytes N", path, exact ? "" : "more than ",
               (unsigned long long)size, (unsigned long long)limit_file);
}

SrcFile *src_load(Arena *a, const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        diag_error((Span){0}, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > limit_file) {
        fclose(fp);
        too_big(path, (uint64_t)st.st_size, true);
        return NULL;
    }
    /* read at most one byte past the limit: a pipe or a device has no size */
    uint64_t most = limit_file < UINT32_MAX - 1 ? limit_file + 1 : UINT32_MAX;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf && len < most) {
        size_t want = cap - len < most - len ? cap - len : (size_t)(most - len);
        size_t n = fread(buf + len, 1, want, fp);
        if (n == 0) break;
        len += n;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    bool bad = !buf || ferror(fp) || len > UINT32_MAX - 1;
    fclose(fp);
    if (bad || len > limit_file) {
        free(buf);
        if (bad) diag_error((Span){0}, "cannot read '%s'", path);
        else too_big(path, limit_file, false);
        return NULL;
    }
    if (loaded > limit_total || len > limit_total - loaded) {
        free(buf);
        diag_error((Span){0}, "'%s' (%llu bytes) brings the source read to %llu bytes, over the limit of %llu "
                   "bytes in total; raise it with --max-input-bytes N", path, (unsigned long long)len,
                   (unsigned long long)(loaded + len), (unsigned long long)limit_total);
        return NULL;
    }
    loaded += len;
    SrcFile *f = src_from_string(a, path, buf, len);
    free(buf);
    return f;
}

SrcFile *src_get(uint32_t id) { return id >= 1 && id <= nfiles ? files[id - 1] : NULL; }

static void src_index_lines(SrcFile *f) {
    uint32_t n = 1;
    for (uint32_t i = 0; i < f->len; i++) n += f->text[i] == '\n';
    f->line_starts = malloc((n + 1) * sizeof(uint32_t));
    if (!f->line_starts) exit(2);
    f->line_starts[0] = 0;
    uint32_t k = 1;
    for (uint32_t i = 0; i < f->len; i++)
        if (f->text[i] == '\n') f->line_starts[k++] = i + 1;
    f->nlines = n;
}

/* line and column are 1-based; the column counts UTF-8 code points */
void src_line_col(SrcFile *f, uint32_t off, uint32_t *line, uint32_t *col) {
    if (!f->line_starts) src_index_lines(f);
    if (off > f->len) off = f->len;
    uint32_t lo = 0, hi = f->nlines - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (f->line_starts[mid] <= off) lo = mid; else hi = mid - 1;
    }
    uint32_t c = 1;
    for (uint32_t i = f->line_starts[lo]; i < off; i++)
        c += ((unsigned char)f->text[i] & 0xC0) != 0x80;
    *line = lo + 1;
    *col = c;
}

Span span_join(Span a, Span b) {
    if (!a.file) return b;
    if (!b.file || a.file != b.file) return a;
    return (Span){a.file, a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}
