/*
 * arena.c -- bump allocation in chunks, growable arrays on top of it, and
 * open-addressing hash maps.  Small blocks are never freed individually:
 * the whole arena goes at once.  A block of BIG_BLOCK bytes or more gets an
 * allocation of its own (calloc: untouched pages cost nothing), kept in a
 * second, doubly linked list, and arena_release gives it back at once: a
 * growing array or hash table no longer leaves its outgrown copies behind
 * (they were half the memory of a large model's structure phase).
 */
#include "support.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN (64u * 1024u)
/* Sanitizer builds take the big-block path from 4 KB, so the tests' small
 * models exercise it (a stale pointer into an outgrown array is then a
 * use-after-free ASan reports). */
#if defined(__SANITIZE_ADDRESS__)
#define BIG_BLOCK 4096u
#else
#define BIG_BLOCK (256u * 1024u)
#endif

typedef struct Chunk {
    struct Chunk *next;
    size_t used, size;
    unsigned char mem[];   /* 8-aligned: all bump() guarantees (see arena_alloc) */
} Chunk;

typedef struct Big {       /* a block of its own: BIG_BLOCK bytes or more */
    struct Big *next, *prev;
    Arena *owner;
    size_t size;
    unsigned char mem[];
} Big;

struct Arena {
    Chunk *head;
    Big *big;          /* the blocks of their own */
    size_t total;
    Chunk *base;       /* arena_new_in: the first chunk, owned by the parent */
};

static void oom(size_t n) {
    fprintf(stderr, "dyadc: out of memory (%zu bytes)\n", n);
    exit(2);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) oom(n);
    return p;
}

Arena *arena_new(void) {
    Arena *a = xmalloc(sizeof *a);
    a->head = NULL;
    a->big = NULL;
    a->total = 0;
    a->base = NULL;
    return a;
}

static void free_chunks(Arena *a) {
    for (Chunk *c = a->head, *n; c && c != a->base; c = n) {
        n = c->next;
        free(c);
    }
    for (Big *b = a->big, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    a->big = NULL;
}

void arena_free(Arena *a) {
    if (!a) return;
    free_chunks(a);
    if (!a->base) free(a);
}

/* A scratch arena inside `parent`: its struct and first chunk (size bytes)
 * are allocated from the parent and live as long as it; what outgrows the
 * first chunk is malloc'd and given back by arena_reset.  For temporaries
 * that are created and dropped millions of times (expression walks). */
Arena *arena_new_in(Arena *parent, size_t size) {
    Arena *a = arena_alloc(parent, sizeof *a);
    a->base = arena_alloc(parent, sizeof(Chunk) + size);
    a->base->size = size;
    a->head = a->base;
    a->total = size;
    return a;
}

void arena_reset(Arena *a) {
    free_chunks(a);
    a->head = a->base;
    a->total = a->base ? a->base->size : 0;
    if (a->base) a->base->used = 0;
}

size_t arena_bytes(const Arena *a) { return a->total; }

/* A zeroed block of its own. */
static void *big_alloc(Arena *a, size_t size) {
    Big *b = calloc(1, sizeof(Big) + size);
    if (!b) oom(size);
    b->owner = a;
    b->size = size;
    b->next = a->big;
    if (a->big) a->big->prev = b;
    a->big = b;
    a->total += size;
    return b->mem;
}

void arena_release(Arena *a, void *p, size_t size) {
    (void)a;
    if (!p || size < BIG_BLOCK) return;
    Big *b = (Big *)((unsigned char *)p - offsetof(Big, mem));
    Arena *o = b->owner;           /* the arena it came from */
    if (b->prev) b->prev->next = b->next;
    else o->big = b->next;
    if (b->next) b->next->prev = b->prev;
    o->total -= b->size;
    free(b);
}

/* size bytes at an alignment (a power of two, at most 8) */
static void *bump(Arena *a, size_t size, size_t align) {
    if (size >= BIG_BLOCK) return big_alloc(a, size);
    Chunk *c = a->head;
    size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (!c || at > c->size || c->size - at < size) {
        size_t cap = size > CHUNK_MIN ? size : CHUNK_MIN;
        if (c && c->size * 2 > cap && c->size < (64u << 20)) cap = c->size * 2;
        c = xmalloc(sizeof(Chunk) + cap);
        c->size = cap;
        c->next = a->head;
        a->head = c;
        a->total += cap;
        at = 0;
    }
    c->used = at + size;
    return c->mem + at;
}

/* 8-byte alignment is all the compiler's types need (no long double, no
 * vector types): an Expr node takes 40 bytes instead of 48. */
void *arena_alloc(Arena *a, size_t size) {
    void *p = bump(a, size, 8);
    if (size < BIG_BLOCK) memset(p, 0, size);   /* a big block comes zeroed */
    return p;
}

/* The old block is released (a big one is freed): p is invalid afterwards. */
void *arena_realloc(Arena *a, void *p, size_t old, size_t size) {
    if (size <= old) return p;
    void *q = arena_alloc(a, size);
    if (p && old) memcpy(q, p, old);
    arena_release(a, p, old);
    return q;
}

/* Strings are not aligned: a short name would take 16 bytes otherwise. */
char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *d = bump(a, n + 1, 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *d = bump(a, (size_t)n + 1, 1);
    vsnprintf(d, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return d;
}

void vec_grow_(Arena *a, void **data, uint32_t *cap, size_t elem, uint32_t need) {
    if (need <= *cap) return;
    uint32_t nc = *cap ? *cap * 2 : 8;
    while (nc < need) nc *= 2;
    *data = arena_realloc(a, *data, elem * *cap, elem * nc);
    *cap = nc;
}

/* ---------- hashing: FNV-1a for bytes, a 64-bit finalizer to mix ---------- */

uint64_t hash_bytes(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

uint64_t hash_mix(uint64_t h, uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* ---------- HashMap: linear probing, load factor <= 1/2 ---------- */

/* Fibonacci hashing (the top bits of key * 2^64/phi): keys are ids and
 * pointers, one multiply spreads both. */
static uint32_t hmap_slot(const HashMap *m, uint64_t key) {
    uint32_t mask = m->cap - 1;
    uint32_t i = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctz(m->cap)));
    while (m->slots[i].key && m->slots[i].key != key) i = (i + 1) & mask;
    return i;
}

void *hmap_get(const HashMap *m, uint64_t key) {
    if (!m->cap) return NULL;
    return m->slots[hmap_slot(m, key)].val;   /* an empty slot's is NULL */
}

static void hmap_rehash(Arena *a, HashMap *m, uint32_t cap) {
    HashMap n = {ARENA_ARRAY(a, HashSlot, cap), 0, cap};
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->slots[i].key) {
            n.slots[hmap_slot(&n, m->slots[i].key)] = m->slots[i];
            n.len++;
        }
    arena_release(a, m->slots, sizeof(HashSlot) * m->cap);
    *m = n;
}

/* First table: 64 slots.  Most maps are the memo of one expression walk
 * (walk.c, derive.c: millions of them, 10-50 nodes each); starting at 16
 * rehashed most of them twice. */
void hmap_put(Arena *a, HashMap *m, uint64_t key, void *val) {
    if ((m->len + 1) * 2 > m->cap) hmap_rehash(a, m, m->cap ? m->cap * 2 : 64);
    HashSlot *s = &m->slots[hmap_slot(m, key)];
    if (!s->key) {
        s->key = key;
        m->len++;
    }
    s->val = val;
}

void hmap_release(Arena *a, HashMap *m) {
    arena_release(a, m->slots, sizeof(HashSlot) * m->cap);
    *m = (HashMap){0};
}
