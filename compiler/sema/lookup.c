/*
 * lookup.c -- name resolution (rules in sema.h) and "did you mean"
 * suggestions.
 */
#include "sema.h"

#include <string.h>

static Def *def_in(Library *l, Sym name) {
    return hmap_get(&l->def_by_name, (uint64_t)(uintptr_t)name);
}
static Library *sub_in(Library *l, Sym name) {
    return hmap_get(&l->sub_by_name, (uint64_t)(uintptr_t)name);
}

/* follow A.B.C from library `l`: sub-libraries, then a definition */
static Def *resolve_from(Library *l, const AstQName *q) {
    for (uint32_t i = 0; l && i + 1 < q->len; i++) l = sub_in(l, q->parts[i]);
    return l ? def_in(l, q->parts[q->len - 1]) : NULL;
}

static Library *base_library(Program *p) {
    return sub_in(p->root, intern_cstr(p->in, "Dyad"));
}

Def *sema_try_lookup(Program *p, Library *from, const AstQName *q) {
    if (!q->len) return NULL;
    for (Library *l = from; l; l = l->parent) {
        Def *d = resolve_from(l, q);
        if (d) return d;
    }
    Library *base = base_library(p);
    return base ? resolve_from(base, q) : NULL;
}

static void collect_names(Library *l, SymVec *out, Arena *a) {
    for (uint32_t i = 0; i < l->defs.len; i++) vec_push(a, out, l->defs.data[i]->name);
    for (uint32_t i = 0; i < l->subs.len; i++) vec_push(a, out, l->subs.data[i]->name);
}

static const char *qname_str(Program *p, const AstQName *q) {
    size_t n = 0;
    for (uint32_t i = 0; i < q->len; i++) n += strlen(q->parts[i]) + 1;
    char *s = arena_alloc(p->arena, n + 1);
    for (uint32_t i = 0; i < q->len; i++) {
        if (i) strcat(s, ".");
        strcat(s, q->parts[i]);
    }
    return s;
}

Def *sema_lookup(Program *p, Library *from, const AstQName *q) {
    Def *d = sema_try_lookup(p, from, q);
    if (d) return d;
    SymVec cands = {0};
    for (Library *l = from; l; l = l->parent) collect_names(l, &cands, p->arena);
    if (base_library(p)) collect_names(base_library(p), &cands, p->arena);
    Sym hint = suggest_name(q->parts[q->len - 1], cands.data, cands.len);
    if (hint)
        diag_error(q->span, "unknown name `%s`; did you mean `%s`?", qname_str(p, q), hint);
    else
        diag_error(q->span, "unknown name `%s`", qname_str(p, q));
    return NULL;
}

static void each_def(Library *l, void (*fn)(void *, Def *), void *ud) {
    for (uint32_t i = 0; i < l->defs.len; i++) fn(ud, l->defs.data[i]);
    for (uint32_t i = 0; i < l->subs.len; i++) each_def(l->subs.data[i], fn, ud);
}

void sema_each_def(Program *p, void (*fn)(void *ud, Def *d), void *ud) {
    each_def(p->root, fn, ud);
}

typedef struct {
    const char *name;
    Def *exact;
    Vec(Def *) simple;
    Arena *arena;
} FindCtx;

static void find_visit(void *ud, Def *d) {
    FindCtx *f = ud;
    if (strcmp(d->qname, f->name) == 0) f->exact = d;
    else if (strcmp(d->name, f->name) == 0) vec_push(f->arena, &f->simple, d);
}

Def *sema_find(Program *p, const char *name) {
    FindCtx f = {name, NULL, {0}, p->arena};
    sema_each_def(p, find_visit, &f);
    if (f.exact) return f.exact;
    if (f.simple.len == 1) return f.simple.data[0];
    if (f.simple.len == 0) {
        diag_error((Span){0}, "no definition named `%s` was found", name);
        return NULL;
    }
    diag_error((Span){0}, "the name `%s` is ambiguous; qualify it:", name);
    for (uint32_t i = 0; i < f.simple.len; i++)
        diag_note(f.simple.data[i]->node->span, "candidate `%s`", f.simple.data[i]->qname);
    return NULL;
}
