/*
 * source.c -- the table of loaded source files.  Spans refer to files by id
 * (1-based, 0 = no location); lines are indexed lazily on the first
 * diagnostic that needs them (one linear scan, then binary search).
 */
#include "support.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static SrcFile **files;   /* files[id - 1] */
static uint32_t nfiles, capfiles;

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
}

SrcFile *src_from_string(Arena *a, const char *path, const char *text, size_t len) {
    SrcFile *f = ARENA_NEW(a, SrcFile);
    f->path = arena_strndup(a, path, strlen(path));
    f->text = arena_strndup(a, text, len);
    f->len = (uint32_t)len;
    return src_register(f);
}

SrcFile *src_load(Arena *a, const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        diag_error((Span){0}, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += n;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    bool bad = !buf || ferror(fp) || len > UINT32_MAX - 1;
    fclose(fp);
    if (bad) {
        free(buf);
        diag_error((Span){0}, "cannot read '%s'", path);
        return NULL;
    }
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
