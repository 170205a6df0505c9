/*
 * tests.c -- `dyadc test FILE|DIR... [--filter PATTERN] [--bless] [--coverage] [-v]`
 * (the handler of commands.h):
 * every test case of the components defined under the given files and
 * folders (without any, under the -L roots), one line each, then
 * `N passed, M failed`; exit 1 when one failed (docs/TESTING.md).
 *
 * A path inside a library that is loaded anyway (the bundled stdlib, a -L
 * root) is not loaded a second time: `dyadc test stdlib` tests the stdlib
 * itself.  Diagnostics of a case are kept in memory and shown only when it
 * fails (always with -v).  --coverage: every non-partial component under
 * the roots must have a test case or be used by a component that has one
 * (as a subcomponent, a base, or a redeclaration, at any depth) -- one AST
 * walk per covered definition, a hash set of them.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "tests.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Driver *d;
    Vec(const char *) roots;  /* real paths whose components are tested */
    HashMap file_real;        /* SrcFile id -> its real path */
    TestCases cases;
} Collect;

static const char *real_path(Driver *d, const char *path) {
    char buf[PATH_MAX];
    return realpath(path, buf) ? arena_strndup(d->arena, buf, strlen(buf)) : NULL;
}

static bool under(const char *path, const char *root) {
    size_t n = strlen(root);
    return path && strncmp(path, root, n) == 0 && (path[n] == 0 || path[n] == '/' || root[n - 1] == '/');
}

static bool tested(Collect *c, Def *def) {
    uint32_t id = def->node->span.file;
    const char *path = hmap_get(&c->file_real, (uint64_t)id + 1);
    if (!path) {
        SrcFile *f = src_get(id);
        path = f ? real_path(c->d, f->path) : NULL;
        if (path) hmap_put(c->d->arena, &c->file_real, (uint64_t)id + 1, (void *)path);
    }
    for (uint32_t i = 0; i < c->roots.len; i++)
        if (under(path, c->roots.data[i])) return true;
    return false;
}

static void collect_def(void *ud, Def *def) {
    Collect *c = ud;
    if (def->node->kind != AST_COMPONENT || def->node->def.prefix == DEF_PARTIAL) return;
    if (ast_meta(def->node)->kind == META_OBJECT && tested(c, def)) tests_of(c->d, def, &c->cases);
}

/* the stdlib and -L roots, then each input not inside one of them */
static Program *load_for_tests(Driver *d, Collect *c) {
    Program *p = driver_load_libs(d);
    Vec(const char *) loaded = {0};
    if (!d->no_stdlib) vec_push(d->arena, &loaded, real_path(d, driver_stdlib_dir(d)));
    for (uint32_t i = 0; i < d->libs.len; i++) vec_push(d->arena, &loaded, real_path(d, d->libs.data[i]));
    for (uint32_t i = 0; i < d->inputs.len; i++) {
        const char *r = real_path(d, d->inputs.data[i]);
        if (!r) {
            fprintf(stderr, "dyadc: error: %s: no such file or folder\n", d->inputs.data[i]);
            continue;
        }
        vec_push(d->arena, &c->roots, r);
        bool inside = false;
        for (uint32_t k = 0; k < loaded.len && !inside; k++) inside = under(r, loaded.data[k]);
        if (!inside) sema_load_path(p, d->inputs.data[i]);
    }
    if (!d->inputs.len)
        for (uint32_t i = 0; i < d->libs.len; i++) vec_push(d->arena, &c->roots, real_path(d, d->libs.data[i]));
    return p;
}

/* ---------- --coverage: every component has a test case ---------- */

typedef struct {
    Program *p;
    HashMap covered;          /* Def -> itself */
    Vec(Def *) todo;          /* covered, their parts not yet walked */
} Coverage;

static void cover(Coverage *cv, Def *d) {
    if (hmap_get(&cv->covered, (uint64_t)(uintptr_t)d)) return;
    hmap_put(cv->p->arena, &cv->covered, (uint64_t)(uintptr_t)d, d);
    if (d->node->kind == AST_COMPONENT) vec_push(cv->p->arena, &cv->todo, d);
}

static void cover_type(Coverage *cv, Def *in, AstNode *type, int depth);

/* a redeclaration in modifications (`source = CurrentSource(...)`) covers its type */
static void cover_mods(Coverage *cv, Def *in, AstList *mods, int depth) {
    for (uint32_t i = 0; i < mods->len && depth < 16; i++) {
        AstNode *m = mods->items[i];
        if (m->mod.value && m->mod.value->kind == AST_TYPE) cover_type(cv, in, m->mod.value, depth + 1);
        cover_mods(cv, in, &m->mod.mods, depth + 1);
    }
}

static void cover_type(Coverage *cv, Def *in, AstNode *type, int depth) {
    Def *d = sema_try_lookup(cv->p, in->lib, &type->type.name);
    if (d) cover(cv, d);
    cover_mods(cv, in, &type->type.mods, depth);
}

/* what a covered component exercises: its bases, its subcomponents */
static void cover_parts(Coverage *cv, Def *def) {
    AstNode *n = def->node;
    for (uint32_t i = 0; i < n->def.extends.len; i++) cover_type(cv, def, n->def.extends.items[i]->extends.type, 0);
    for (uint32_t i = 0; i < n->def.decls.len; i++) {
        AstNode *d = n->def.decls.items[i];
        if (d->kind != AST_INSTANCE || !d->inst.value) continue;
        AstNode *t = d->inst.value->kind == AST_COMPREHENSION ? d->inst.value->compr.body : d->inst.value;
        if (t && t->kind == AST_TYPE) cover_type(cv, def, t, 0);
    }
}

typedef struct {
    Collect *c;
    Coverage *cv;
    uint32_t components;
    DiagList missing;
} Uncovered;

static void uncovered_def(void *ud, Def *def) {
    Uncovered *u = ud;
    AstNode *n = def->node;
    if (n->kind != AST_COMPONENT || n->def.prefix == DEF_PARTIAL || n->def.prefix == DEF_EXTERNAL) return;
    if (!tested(u->c, def)) return;
    u->components++;
    if (hmap_get(&u->cv->covered, (uint64_t)(uintptr_t)def)) return;
    diag_list_add(&u->missing, def->qname);
    if (u->c->d->verbose) fprintf(stderr, "no test case: %s\n", def->qname);
}

/* false (after naming them) when a component under the roots has no test case */
static bool coverage(Driver *d, Program *p, Collect *c) {
    Coverage cv = {p, {0}, {0}};
    for (uint32_t i = 0; i < c->cases.len; i++) cover(&cv, c->cases.data[i]->def);
    while (cv.todo.len) cover_parts(&cv, cv.todo.data[--cv.todo.len]);
    Uncovered u = {c, &cv, 0, {.arena = d->arena}};
    sema_each_def(p, uncovered_def, &u);
    printf("coverage: %u of %u components have a test case (their own, or one of a component using them)\n",
           u.components - u.missing.count, u.components);
    if (u.missing.count)
        fprintf(stderr, "dyadc: error: %u component%s without a test case: %s\n", u.missing.count,
                u.missing.count == 1 ? "" : "s", diag_list_text(&u.missing, "-v"));
    return u.missing.count == 0;
}

/* --filter: a glob (with * ? [) matching "<component>.<case>" or a part of
 * it after a dot (`Pulse*`, `*.case2`), else a substring of it */
static bool selected(const Driver *d, const TestCase *c) {
    if (!d->filter) return true;
    if (!strpbrk(d->filter, "*?[")) return strstr(c->full, d->filter) != NULL;
    for (const char *s = c->full; s; s = strchr(s, '.') ? strchr(s, '.') + 1 : NULL)
        if (fnmatch(d->filter, s, 0) == 0) return true;
    return false;
}

/* one case, its diagnostics captured unless -v; they are shown on failure */
static bool run_one(Driver *d, Program *p, TestCase *c) {
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = d->verbose ? NULL : open_memstream(&buf, &len);
    if (mem) diag_set_output(mem);
    double t0 = timing_now();
    bool ok = tests_run_case(d, p, c);
    double dt = timing_now() - t0;
    diag_set_output(NULL);
    if (mem) fclose(mem);
    printf("%s %s (%.2f s)\n", ok ? "PASS" : "FAIL", c->full, dt);
    fflush(stdout);
    if (!ok && buf) fputs(buf, stderr);
    free(buf);
    return ok;
}

int cmd_test(Driver *d) {
    Collect c = {.d = d};
    if (!d->inputs.len && !d->libs.len) {
        fputs("dyadc: error: test what? give files or folders (or -L library roots)\n", stderr);
        return 1;
    }
    Program *p = load_for_tests(d, &c);
    unsigned load_errors = diag_error_count();
    sema_each_def(p, collect_def, &c);
    uint32_t passed = 0, failed = 0;
    for (uint32_t i = 0; i < c.cases.len; i++) {
        if (!selected(d, c.cases.data[i])) continue;
        if (run_one(d, p, c.cases.data[i])) passed++;
        else failed++;
    }
    if (passed + failed == 0) {
        fprintf(stderr, "dyadc: error: no test cases%s%s%s found\n", d->filter ? " matching `" : "",
                d->filter ? d->filter : "", d->filter ? "`" : "");
        return 1;
    }
    printf("%u passed, %u failed%s\n", passed, failed, load_errors ? " (and errors while loading)" : "");
    bool covered = !d->coverage || coverage(d, p, &c);
    return failed || load_errors || !covered || diag_had_internal() ? 1 : 0;
}
