/*
 * intern.c -- the name table: every identifier is stored once, so names are
 * compared by pointer.  Open addressing on (hash, length, bytes).
 */
#include "support.h"

#include <string.h>

typedef struct {      /* 16 bytes: a probe reads one cache line */
    uint32_t hash;    /* low 32 bits of hash_bytes */
    uint32_t len;
    const char *str;  /* NULL = empty slot */
} Entry;

struct Interner {
    Arena *arena;
    Entry *slots;
    uint32_t len, cap;
};

Interner *intern_new(Arena *a) {
    Interner *in = ARENA_NEW(a, Interner);
    in->arena = a;
    in->cap = 1024;
    in->slots = ARENA_ARRAY(a, Entry, in->cap);
    return in;
}

static void intern_grow(Interner *in) {
    uint32_t cap = in->cap * 2;
    Entry *slots = ARENA_ARRAY(in->arena, Entry, cap);
    for (uint32_t i = 0; i < in->cap; i++) {
        if (!in->slots[i].str) continue;
        uint32_t j = in->slots[i].hash & (cap - 1);
        while (slots[j].str) j = (j + 1) & (cap - 1);
        slots[j] = in->slots[i];
    }
    arena_release(in->arena, in->slots, sizeof(Entry) * in->cap);
    in->slots = slots;
    in->cap = cap;
}

Sym intern(Interner *in, const char *s, size_t n) {
    if ((in->len + 1) * 2 > in->cap) intern_grow(in);
    uint32_t h = (uint32_t)hash_bytes(s, n);
    uint32_t i = h & (in->cap - 1);
    for (;; i = (i + 1) & (in->cap - 1)) {
        Entry *e = &in->slots[i];
        if (!e->str) break;
        if (e->hash == h && e->len == n && memcmp(e->str, s, n) == 0) return e->str;
    }
    in->slots[i] = (Entry){h, (uint32_t)n, arena_strndup(in->arena, s, n)};
    in->len++;
    return in->slots[i].str;
}

Sym intern_cstr(Interner *in, const char *s) { return intern(in, s, strlen(s)); }
