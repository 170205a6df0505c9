/*
 * diag.c -- the one diagnostics module.  `file:line:col: level: message`,
 * then the source line and a caret (with ~ under the rest of the span on
 * that line).  Counts errors so the driver can stop between phases.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

static FILE *diag_out;
static bool diag_color, diag_werror, diag_internal_seen;
static unsigned nerrors, nwarnings;

void diag_set_output(FILE *out) { diag_out = out; }
void diag_set_color(bool on) { diag_color = on; }
void diag_set_werror(bool on) { diag_werror = on; }
unsigned diag_error_count(void) { return nerrors; }
unsigned diag_warning_count(void) { return nwarnings; }
bool diag_had_internal(void) { return diag_internal_seen; }

void diag_reset(void) {
    nerrors = nwarnings = 0;
    diag_internal_seen = false;
}

static FILE *out(void) { return diag_out ? diag_out : stderr; }

/* the source line holding `sp.lo`, with a caret line under the span */
static void diag_show_line(SrcFile *f, Span sp) {
    uint32_t line, col;
    src_line_col(f, sp.lo, &line, &col);
    uint32_t start = f->line_starts[line - 1], end = start;
    while (end < f->len && f->text[end] != '\n' && f->text[end] != '\r') end++;
    fprintf(out(), "%5u | %.*s\n      | ", line, (int)(end - start), f->text + start);
    for (uint32_t i = start; i < sp.lo && i < end; i++) {
        unsigned char ch = (unsigned char)f->text[i];
        if ((ch & 0xC0) == 0x80) continue;
        fputc(ch == '\t' ? '\t' : ' ', out());
    }
    fputc('^', out());
    uint32_t hi = sp.hi < end ? sp.hi : end;
    for (uint32_t i = sp.lo + 1; i < hi; i++)
        if (((unsigned char)f->text[i] & 0xC0) != 0x80) fputc('~', out());
    fputc('\n', out());
}

static const char *level_name(DiagLevel lvl) {
    switch (lvl) {
    case DIAG_ERROR: return "error";
    case DIAG_WARNING: return "warning";
    case DIAG_NOTE: return "note";
    }
    return "?";
}

void diag_vat(DiagLevel lvl, Span sp, const char *fmt, va_list ap) {
    if (lvl == DIAG_WARNING && diag_werror) lvl = DIAG_ERROR;
    if (lvl == DIAG_ERROR) nerrors++;
    if (lvl == DIAG_WARNING) nwarnings++;
    SrcFile *f = src_get(sp.file);
    if (f) {
        uint32_t line, col;
        src_line_col(f, sp.lo, &line, &col);
        fprintf(out(), "%s:%u:%u: ", f->path, line, col);
    } else {
        fputs("dyadc: ", out());
    }
    fprintf(out(), "%s: ", level_name(lvl));
    vfprintf(out(), fmt, ap);
    fputc('\n', out());
    if (f) diag_show_line(f, sp);
}

void diag_at(DiagLevel lvl, Span sp, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vat(lvl, sp, fmt, ap);
    va_end(ap);
}

#define DIAG_FN(name, lvl)                          \
    void name(Span sp, const char *fmt, ...) {      \
        va_list ap;                                 \
        va_start(ap, fmt);                          \
        diag_vat(lvl, sp, fmt, ap);                 \
        va_end(ap);                                 \
    }
DIAG_FN(diag_error, DIAG_ERROR)
DIAG_FN(diag_warning, DIAG_WARNING)
DIAG_FN(diag_note, DIAG_NOTE)

void diag_internal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("dyadc: internal error: ", out());
    vfprintf(out(), fmt, ap);
    fputc('\n', out());
    va_end(ap);
    diag_internal_seen = true;
    nerrors++;
}

/* ---------- bounded lists ---------- */

void diag_list_add(DiagList *l, const char *name) {
    if (l->count++ >= DIAG_LIST_SHOWN) return;
    size_t n = strlen(name), need = l->len + n + 5; /* ", `" + name + "`" + NUL */
    if (need > l->cap) {
        size_t cap = need * 2;
        l->buf = arena_realloc(l->arena, l->buf, l->cap, cap);
        l->cap = cap;
    }
    l->len += (size_t)sprintf(l->buf + l->len, "%s`%s`", l->len ? ", " : "", name);
}

const char *diag_list_text(const DiagList *l, const char *hint) {
    if (l->count <= DIAG_LIST_SHOWN) return l->buf ? l->buf : "";
    return arena_printf(l->arena, "%s ... and %s more%s%s%s", l->buf,
                        fmt_thousands(l->arena, l->count - DIAG_LIST_SHOWN), hint ? "; " : "",
                        hint ? hint : "", hint ? " to see all" : "");
}

const char *fmt_thousands(Arena *a, uint64_t n) {
    char digits[24], out[32];
    int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n), k = 0;
    for (int i = 0; i < nd; i++) {
        if (i && (nd - i) % 3 == 0) out[k++] = ',';
        out[k++] = digits[i];
    }
    return arena_strndup(a, out, (size_t)k);
}

/* Levenshtein distance with one rolling row; names are short. */
static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (lb > 63) return (size_t)-1;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

Sym suggest_name(Sym name, Sym const *cands, uint32_t ncands) {
    size_t best = (size_t)-1;
    Sym pick = NULL;
    size_t limit = strlen(name) / 3 + 1;
    for (uint32_t i = 0; i < ncands; i++) {
        if (!cands[i] || cands[i] == name) continue;
        size_t d = edit_distance(name, cands[i]);
        if (d <= limit && d < best) {
            best = d;
            pick = cands[i];
        }
    }
    return pick;
}
