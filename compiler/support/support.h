/*
 * support.h -- the compiler's foundation: arena allocation, interned names,
 * growable arrays, hash maps, source files with spans, and diagnostics.
 *
 * Invariants
 *   - One Arena per compilation; everything the compiler builds is
 *     bump-allocated from it and freed at once with arena_free().
 *   - Names are interned (`Sym`): equal names are the same pointer, so they
 *     are compared with ==.  A Sym is a NUL-terminated string.
 *   - Every token, node and flat equation carries a Span; line and column are
 *     computed only when a diagnostic is printed.
 */
#ifndef DYADC_SUPPORT_H
#define DYADC_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------- arena ---------- */

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
Arena *arena_new_in(Arena *parent, size_t size);   /* scratch: see arena.c */
void arena_reset(Arena *a);                          /* drop everything, keep the first chunk */
void *arena_alloc(Arena *a, size_t size);          /* zeroed, 8-byte aligned */
void *arena_realloc(Arena *a, void *p, size_t old, size_t size); /* p is released */
void arena_release(Arena *a, void *p, size_t size); /* frees a block of >= 256 KB at once */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
size_t arena_bytes(const Arena *a);                /* total bytes reserved */

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

/* ---------- growable arrays (arena-backed) ----------
 *   Vec(int) v = {0};  vec_push(arena, &v, 42);  v.data[i], v.len       */

#define Vec(T) struct { T *data; uint32_t len, cap; }

void vec_grow_(Arena *a, void **data, uint32_t *cap, size_t elem, uint32_t need);
#define vec_reserve(a, v, n) \
    vec_grow_((a), (void **)&(v)->data, &(v)->cap, sizeof(*(v)->data), (n))
#define vec_push(a, v, x)                                              \
    do {                                                               \
        if ((v)->len == (v)->cap) vec_reserve((a), (v), (v)->len + 1); \
        (v)->data[(v)->len++] = (x);                                   \
    } while (0)
/* gives a large array back at once (arena_release); v is empty afterwards */
#define vec_release(a, v)                                                      \
    do {                                                                       \
        arena_release((a), (v)->data, sizeof(*(v)->data) * (size_t)(v)->cap); \
        (v)->data = NULL;                                                      \
        (v)->len = (v)->cap = 0;                                               \
    } while (0)

/* ---------- interned names ---------- */

typedef const char *Sym;
typedef Vec(Sym) SymVec;
typedef Vec(uint32_t) U32Vec;

/* The intern table lives in the arena passed at first use of a table. */
typedef struct Interner Interner;
Interner *intern_new(Arena *a);
Sym intern(Interner *in, const char *s, size_t n);
Sym intern_cstr(Interner *in, const char *s);

/* ---------- hash map: pointer/integer key -> pointer value ---------- */

typedef struct HashSlot {
    uint64_t key;     /* 0 = empty slot; callers never use key 0 */
    void *val;
} HashSlot;

typedef struct HashMap {
    HashSlot *slots;  /* [cap]: key and value side by side, one cache line per probe */
    uint32_t len, cap;
} HashMap;

void *hmap_get(const HashMap *m, uint64_t key);
void hmap_put(Arena *a, HashMap *m, uint64_t key, void *val);
void hmap_release(Arena *a, HashMap *m);   /* gives a large table back (arena_release); m empty */
uint64_t hash_bytes(const void *p, size_t n);
uint64_t hash_mix(uint64_t h, uint64_t x);

/* ---------- source files and spans ---------- */

typedef struct SrcFile {
    const char *path;      /* as given on the command line (relative kept) */
    const char *text;      /* NUL-terminated contents */
    uint32_t len;
    uint32_t id;           /* index in the source table */
    uint32_t *line_starts; /* computed lazily */
    uint32_t nlines;
} SrcFile;

typedef struct Span {
    uint32_t file;         /* SrcFile.id; 0 = no location */
    uint32_t lo, hi;       /* byte offsets [lo, hi) */
} Span;

/* The source table: file ids start at 1. */
SrcFile *src_load(Arena *a, const char *path);           /* NULL + diag on failure */
/* The input-size budget of src_load: bytes per file and bytes read in all
 * since src_reset (`--max-file-bytes N`, `--max-input-bytes N`).  A file
 * over either is refused before it is parsed, with an error naming it, its
 * size and the limit; parsing costs ~10 bytes of memory per byte of source
 * and flattening more, so the defaults bound a hostile input to a few GB. */
#define SRC_FILE_LIMIT_DEFAULT (32ull << 20)
#define SRC_TOTAL_LIMIT_DEFAULT (128ull << 20)
void src_set_limits(uint64_t per_file, uint64_t total);
SrcFile *src_from_string(Arena *a, const char *path, const char *text, size_t len);
SrcFile *src_get(uint32_t id);
void src_line_col(SrcFile *f, uint32_t off, uint32_t *line, uint32_t *col);
Span span_join(Span a, Span b);
void src_reset(void);                                     /* forget all files */

/* ---------- diagnostics ----------
 * Format: `file:line:col: error: message`, then the source line and a caret
 * under the span.  Errors accumulate; the driver stops between phases.  A
 * repeat of a printed error or warning (same span and text) is counted but
 * not printed, nor are its notes. */

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

void diag_set_output(FILE *out);               /* default stderr */
void diag_set_color(bool on);
void diag_at(DiagLevel lvl, Span sp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_vat(DiagLevel lvl, Span sp, const char *fmt, va_list ap);
void diag_error(Span sp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warning(Span sp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_note(Span sp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An internal invariant failure: printed as such; the driver exits 2. */
void diag_internal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void diag_set_werror(bool on);                 /* warnings count as errors */
/* Every error/warning reported, repeats included (what a phase checks to
 * know it failed); the printed ones (each distinct diagnostic once, what a
 * summary counts). */
unsigned diag_error_count(void);
unsigned diag_warning_count(void);
unsigned diag_errors_shown(void);
unsigned diag_warnings_shown(void);
bool diag_had_internal(void);
void diag_reset(void);
/* Speculation: between begin and end nothing is printed or counted; end
 * returns how many errors and warnings were reported meanwhile.  For an
 * attempt whose every complaint means "do it the ordinary way instead"
 * (flatten's `for` templates), which then reports them for real. */
void diag_speculate_begin(void);
unsigned diag_speculate_end(void);

/* ---------- pass timing (--time-passes) ----------
 * timing_phase/timing_sub print the wall and CPU time since *t0 (and the peak memory)
 * when enabled, then set *t0 to now.  Sub-passes are named `phase.sub`. */
void timing_enable(bool on);
bool timing_enabled(void);
double timing_now(void);
void timing_phase(const char *name, double *t0);
void timing_sub(const char *name, double *t0);

/* Bounded lists of names in messages: the first DIAG_LIST_SHOWN names, then
 * "... and 19,990 more; HINT to see all".  Linear in the names shown; the
 * text lives in the arena.
 *   DiagList l = {.arena = a};  diag_list_add(&l, name);  ...
 *   diag_warning(sp, "no start for %s", diag_list_text(&l, "`--list-states`")); */
#define DIAG_LIST_SHOWN 10
typedef struct DiagList {
    Arena *arena;
    char *buf;             /* "`a`, `b`" of the names shown */
    size_t len, cap;
    uint32_t count;        /* names added, shown or not */
} DiagList;
void diag_list_add(DiagList *l, const char *name);      /* quoted as `name` */
const char *diag_list_text(const DiagList *l, const char *hint); /* hint may be NULL */
const char *fmt_thousands(Arena *a, uint64_t n);           /* 19990 -> "19,990" */

/* ---------- JSON (json.c): metadata, with the offset of every value ---------- */

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonKind;

typedef struct JsonValue JsonValue;
struct JsonValue {
    JsonKind kind;
    uint32_t lo, hi;       /* byte offsets of the value in the parsed text */
    uint32_t key_lo;       /* member of an object: offset of its key */
    double num;            /* NUMBER; BOOL: 1 or 0 */
    const char *str;       /* STRING, decoded (UTF-8) */
    uint32_t n;            /* ARRAY, OBJECT: members, in text order */
    JsonValue **items;     /* [n] */
    const char **keys;     /* OBJECT: [n] decoded keys */
};

/* Strict JSON; NULL on a syntax error, with its offset and a message. */
JsonValue *json_parse(Arena *a, const char *text, size_t len, uint32_t *err_off, const char **err_msg);
/* The member `key` of an object (the first one), NULL if none or not an object. */
JsonValue *json_get(const JsonValue *obj, const char *key);

/* "did you mean": the candidate closest to `name` by edit distance, or NULL */
Sym suggest_name(Sym name, Sym const *cands, uint32_t ncands);

#endif
