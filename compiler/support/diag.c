/*
 * diag.c -- the one diagnostics module.  `file:line:col: level: message`,
 * then the source line and a caret (with ~ under the rest of the span on
 * that line).  Counts errors so the driver can stop between phases.
 *
 * Each error and warning is printed once: a repeat (same level, span and
 * text -- the same source line reached again through another enclosing
 * component, as `dyadc check` does for every component of a library) is
 * counted by diag_error_count(), so every phase still sees that it failed,
 * but not printed, and neither are the notes that follow it.  The printed
 * ones are counted apart (diag_errors_shown) for summaries.  The set of
 * printed diagnostics holds a 64-bit hash of each: O(1) per diagnostic.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

static FILE *diag_out;
static bool diag_color, diag_werror, diag_internal_seen;
static unsigned nerrors, nwarnings;           /* every error/warning reported */
static unsigned shown_errors, shown_warnings; /* of which printed */
static bool quiet_notes;                      /* the last error/warning was a repeat */
static unsigned speculating, speculated;      /* diag_speculate_begin nesting; diagnostics while in it */

void diag_speculate_begin(void) {
    if (!speculating++) speculated = 0;
}

unsigned diag_speculate_end(void) {
    unsigned n = speculated;
    if (speculating) speculating--;
    return n;
}

static struct {
    uint64_t *keys; /* open addressing, 0 = empty */
    uint32_t len, cap;
} seen;

void diag_set_output(FILE *out) { diag_out = out; }
void diag_set_color(bool on) { diag_color = on; }
void diag_set_werror(bool on) { diag_werror = on; }
unsigned diag_error_count(void) { return nerrors; }
unsigned diag_warning_count(void) { return nwarnings; }
unsigned diag_errors_shown(void) { return shown_errors; }
unsigned diag_warnings_shown(void) { return shown_warnings; }
bool diag_had_internal(void) { return diag_internal_seen; }

void diag_reset(void) {
    nerrors = nwarnings = shown_errors = shown_warnings = 0;
    diag_internal_seen = quiet_notes = false;
    free(seen.keys);
    memset(&seen, 0, sizeof seen);
}

static bool seen_insert(uint64_t key);

static void seen_grow(void) {
    uint64_t *old = seen.keys;
    uint32_t ocap = seen.cap;
    seen.cap = ocap ? 2 * ocap : 256;
    seen.keys = calloc(seen.cap, sizeof *seen.keys);
    seen.len = 0;
    if (!seen.keys) { /* no memory: print every repeat */
        seen.cap = 0;
        free(old);
        return;
    }
    for (uint32_t i = 0; i < ocap; i++)
        if (old[i]) seen_insert(old[i]);
    free(old);
}

/* false when key was there already */
static bool seen_insert(uint64_t key) {
    if (!key) key = 1;
    if (2 * (seen.len + 1) > seen.cap) seen_grow();
    if (!seen.cap) return true;
    uint32_t i = (uint32_t)(key & (seen.cap - 1));
    while (seen.keys[i]) {
        if (seen.keys[i] == key) return false;
        i = (i + 1) & (seen.cap - 1);
    }
    seen.keys[i] = key;
    seen.len++;
    return true;
}

/* a repeat of a printed error or warning? (records it when not) */
static bool is_repeat(DiagLevel lvl, Span sp, const char *fmt, va_list ap) {
    char text[512];
    va_list aq;
    va_copy(aq, ap);
    vsnprintf(text, sizeof text, fmt, aq);
    va_end(aq);
    uint64_t h = hash_bytes(text, strlen(text));
    h = hash_mix(h, (uint64_t)lvl);
    h = hash_mix(h, ((uint64_t)sp.file << 32) ^ sp.lo);
    h = hash_mix(h, sp.hi);
    return !seen_insert(h);
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
    if (speculating) { /* an attempt that will be redone if it says anything */
        speculated += lvl != DIAG_NOTE;
        return;
    }
    if (lvl == DIAG_WARNING && diag_werror) lvl = DIAG_ERROR;
    if (lvl == DIAG_ERROR) nerrors++;
    if (lvl == DIAG_WARNING) nwarnings++;
    if (lvl == DIAG_NOTE && quiet_notes) return;
    if (lvl != DIAG_NOTE) {
        quiet_notes = is_repeat(lvl, sp, fmt, ap);
        if (quiet_notes) return;
        if (lvl == DIAG_ERROR) shown_errors++;
        else shown_warnings++;
    }
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
    shown_errors++;
    quiet_notes = false;
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
