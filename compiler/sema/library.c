/*
 * library.c -- loading files and library folders into the library tree and
 * resolving qualified names.  Loading is linear in the number of files and
 * definitions; lookups are hash-map probes along the (short) library chain.
 */
#include "sema.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static Library *lib_new(Program *p, Library *parent, Sym name) {
    Library *l = ARENA_NEW(p->arena, Library);
    l->name = name;
    l->parent = parent;
    if (!parent || !parent->name) l->qname = name ? name : "";
    else l->qname = arena_printf(p->arena, "%s.%s", parent->qname, name);
    Def *clash = parent ? hmap_get(&parent->def_by_name, (uint64_t)(uintptr_t)name) : NULL;
    if (clash)
        diag_error(clash->node->span, "`%s` is ambiguous: `%s` is both a definition and a sub-library of `%s`",
                   name, name, parent->name ? parent->qname : "the root");
    if (parent) {
        vec_push(p->arena, &parent->subs, l);
        hmap_put(p->arena, &parent->sub_by_name, (uint64_t)(uintptr_t)name, l);
    }
    return l;
}

Program *sema_new(Arena *a, Interner *in) {
    Program *p = ARENA_NEW(a, Program);
    p->arena = a;
    p->sources = a;
    p->in = in;
    p->root = lib_new(p, NULL, NULL);
    return p;
}

static Sym def_name(const AstNode *n) {
    switch (n->kind) {
    case AST_TYPEDEF: return n->typedef_.name;
    case AST_ENUM: return n->enum_.name;
    case AST_FUNCTION: return n->func.name;
    case AST_STRUCT: case AST_CONNECTOR: case AST_COMPONENT: case AST_ANALYSIS:
        return n->def.name;
    default: return NULL;
    }
}

static Span def_name_span(const AstNode *n) { return n->span; }

static void add_defs(Program *p, Library *lib, AstFile *f) {
    vec_push(p->arena, &p->files, f);
    for (uint32_t i = 0; i < f->items.len; i++) {
        AstNode *n = f->items.items[i];
        Sym name = def_name(n);
        if (n->kind == AST_USING) vec_push(p->arena, &lib->usings, n);
        if (!name) continue;
        Def *old = hmap_get(&lib->def_by_name, (uint64_t)(uintptr_t)name);
        if (old) {
            diag_error(def_name_span(n), "duplicate definition of `%s`", name);
            diag_note(def_name_span(old->node), "`%s` was first defined here", name);
            continue;
        }
        if (hmap_get(&lib->sub_by_name, (uint64_t)(uintptr_t)name)) {
            diag_error(def_name_span(n), "`%s` is ambiguous: `%s` is both a definition and a sub-library of `%s`",
                       name, name, lib->name ? lib->qname : "the root");
            continue;
        }
        Def *d = ARENA_NEW(p->arena, Def);
        d->name = name;
        d->node = n;
        d->lib = lib;
        d->qname = lib->name ? arena_printf(p->arena, "%s.%s", lib->qname, name) : name;
        vec_push(p->arena, &lib->defs, d);
        hmap_put(p->arena, &lib->def_by_name, (uint64_t)(uintptr_t)name, d);
    }
}

static void load_file(Program *p, Library *lib, const char *path) {
    SrcFile *src = src_load(p->sources, path);
    if (src) add_defs(p, lib, parse_file(p->arena, p->in, src));
}

void sema_load_source(Program *p, SrcFile *src) {
    add_defs(p, p->root, parse_file(p->arena, p->in, src));
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* directory entries, sorted so loading order (and every dump) is stable */
static char **list_dir(const char *dir, size_t *n) {
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) return NULL;
    size_t cap = 16;
    char **names = malloc(cap * sizeof *names);
    for (struct dirent *e; names && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (*n == cap) names = realloc(names, (cap *= 2) * sizeof *names);
        if (names) names[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (names) qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

static void load_dir(Program *p, Library *lib, const char *dir, int depth);

/* a .dyad file in dir or below (a folder without one -- data, golden files
 * -- is no library) */
static bool has_dyad(Program *p, const char *dir, int depth) {
    size_t n;
    char **names = list_dir(dir, &n);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        if (!found && has_suffix(names[i], ".dyad")) found = true;
        else if (!found && depth < 32) {
            char *sub = arena_printf(p->arena, "%s/%s", dir, names[i]);
            found = is_dir(sub) && has_dyad(p, sub, depth + 1);
        }
        free(names[i]);
    }
    free(names);
    return found;
}

static void load_entry(Program *p, Library *lib, const char *dir, const char *name, int depth) {
    char *path = arena_printf(p->arena, "%s/%s", dir, name);
    if (is_dir(path)) {
        if (strcmp(name, "dyad") == 0) {
            load_dir(p, lib, path, depth + 1);
        } else if (depth < 32 && has_dyad(p, path, depth + 1)) {
            Sym sub = intern_cstr(p->in, name);
            Library *l = hmap_get(&lib->sub_by_name, (uint64_t)(uintptr_t)sub);
            load_dir(p, l ? l : lib_new(p, lib, sub), path, depth + 1);
        }
    } else if (has_suffix(name, ".dyad")) {
        load_file(p, lib, path);
    }
}

static void load_dir(Program *p, Library *lib, const char *dir, int depth) {
    size_t n;
    char **names = list_dir(dir, &n);
    for (size_t i = 0; i < n; i++) {
        load_entry(p, lib, dir, names[i], depth);
        free(names[i]);
    }
    free(names);
}

/* `name = "X"` from the folder's Project.toml (a Julia package), or NULL */
static Sym project_name(Program *p, const char *dir) {
    char *toml = arena_printf(p->arena, "%s/Project.toml", dir);
    FILE *f = fopen(toml, "r");
    if (!f) return NULL;
    char line[512];
    Sym name = NULL;
    while (!name && fgets(line, sizeof line, f)) {
        char *q = line;
        while (*q == ' ' || *q == '\t') q++;
        if (strncmp(q, "name", 4) != 0) continue;
        q += 4;
        while (*q == ' ' || *q == '\t') q++;
        if (*q++ != '=') continue;
        char *open = strchr(q, '"'), *close = open ? strchr(open + 1, '"') : NULL;
        if (close && close > open + 1) name = intern(p->in, open + 1, (size_t)(close - open - 1));
    }
    fclose(f);
    return name;
}

/* The library a folder holds: its Project.toml name, else the folder name
 * without a Julia package's `.jl` suffix (`DyadBotComponents.jl/dyad/...`
 * is the library `DyadBotComponents`). */
static Sym library_name(Program *p, const char *dir, size_t len) {
    Sym n = project_name(p, dir);
    if (n) return n;
    const char *base = dir + len;
    while (base > dir && base[-1] != '/') base--;
    size_t blen = (size_t)(dir + len - base);
    if (blen > 3 && strncmp(base + blen - 3, ".jl", 3) == 0) blen -= 3;
    return intern(p->in, base, blen);
}

bool sema_load_path(Program *p, const char *path) {
    if (!is_dir(path)) {
        SrcFile *src = src_load(p->sources, path);
        if (!src) return false;
        add_defs(p, p->root, parse_file(p->arena, p->in, src));
        return true;
    }
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    const char *dir = arena_strndup(p->arena, path, len);
    Sym name = library_name(p, dir, len);
    Library *l = hmap_get(&p->root->sub_by_name, (uint64_t)(uintptr_t)name);
    load_dir(p, l ? l : lib_new(p, p->root, name), dir, 0);
    return true;
}
