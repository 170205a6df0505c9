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

/* the library a `using` names, from the root */
static Library *using_lib(Program *p, AstNode *u) {
    Library *l = p->root;
    for (uint32_t i = 0; l && i < u->using.lib.len; i++) l = sub_in(l, u->using.lib.parts[i]);
    return u->using.lib.len ? l : NULL;
}

/* `using Lib: a, b` imports a and b; `using Lib` opens Lib */
static Def *resolve_using(Program *p, Library *from, const AstQName *q) {
    for (Library *l = from; l; l = l->parent)
        for (uint32_t i = 0; i < l->usings.len; i++) {
            AstNode *u = l->usings.data[i];
            Library *src = using_lib(p, u);
            if (!src) continue;
            if (!u->using.syms.len) {
                Def *d = resolve_from(src, q);
                if (d) return d;
                continue;
            }
            for (uint32_t k = 0; k < u->using.syms.len; k++)
                if (u->using.syms.items[k]->decl.name == q->parts[0]) {
                    Library *s = sub_in(src, q->parts[0]);
                    if (q->len == 1) return def_in(src, q->parts[0]);
                    AstQName rest = {q->parts + 1, q->len - 1, q->span};
                    if (s) return resolve_from(s, &rest);
                }
        }
    return NULL;
}

Def *sema_try_lookup(Program *p, Library *from, const AstQName *q) {
    if (!q->len) return NULL;
    for (Library *l = from; l; l = l->parent) {
        Def *d = resolve_from(l, q);
        if (d) return d;
    }
    Def *u = resolve_using(p, from, q);
    if (u) return u;
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

/* Names of an older version of the Dyad standard library and ours
 * (docs/LANGUAGE.md): the thermal library's connector `Node` with its flow
 * `Q`, its elements `node`, `node_a`, `node_b`. */
static const char *const older_names[][2] = {
    {"Node", "HeatPort"}, {"node", "port"}, {"node_a", "port_a"}, {"node_b", "port_b"}, {"Q", "Q_flow"},
};

const char *sema_current_name(const char *older) {
    for (size_t i = 0; i < sizeof older_names / sizeof older_names[0]; i++)
        if (strcmp(older, older_names[i][0]) == 0) return older_names[i][1];
    return NULL;
}

/* The note after an unknown name that an older library version used. */
static void note_older_name(Program *p, Library *from, const AstQName *q) {
    const char *now = sema_current_name(q->parts[q->len - 1]);
    if (!now) return;
    Sym *parts = ARENA_ARRAY(p->arena, Sym, q->len);
    memcpy(parts, q->parts, sizeof *parts * q->len);
    parts[q->len - 1] = intern_cstr(p->in, now);
    AstQName renamed = {parts, q->len, q->span}, alone = {parts + q->len - 1, 1, q->span};
    if (sema_try_lookup(p, from, &renamed) || sema_try_lookup(p, from, &alone))
        diag_note(q->span, "`%s` is a name of an older version of the Dyad standard library; here it is `%s`",
                  q->parts[q->len - 1], now);
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
    note_older_name(p, from, q);
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
