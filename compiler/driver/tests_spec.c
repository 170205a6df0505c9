/*
 * tests_spec.c -- test cases from a component's `metadata {"Dyad": {"tests":
 * {...}}}` (the keys in tests.h, docs/TESTING.md).
 *
 * The definition's metadata text is its source slice, so a JSON offset plus
 * the metadata's start is a source location: every message points at the
 * key or value it is about.  Values may be numbers or numeric strings (the
 * public library writes "0.3179..."); variable names are trimmed.  Unknown
 * keys are warnings (with the nearest known key).  Linear in the metadata.
 */
#include "tests.h"
#include "numfmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Driver *d;
    const AstMeta *meta;
    uint32_t file;
} Spec;

static Span at(const Spec *s, const JsonValue *v) {
    return (Span){s->file, s->meta->span.lo + v->lo, s->meta->span.lo + v->hi};
}

static Span key_at(const Spec *s, const JsonValue *v, const char *key) {
    uint32_t lo = s->meta->span.lo + v->key_lo;
    return (Span){s->file, lo, lo + (uint32_t)strlen(key) + 2};
}

/* a number, or a string holding one */
static bool number(const Spec *s, const JsonValue *v, const char *what, double *out) {
    char *end = NULL;
    if (v->kind == JSON_NUMBER) *out = v->num;
    else if (v->kind == JSON_STRING && v->str[0]) *out = strtod(v->str, &end);
    if (v->kind == JSON_NUMBER || (end && *end == 0 && isfinite(*out))) return true;
    diag_error(at(s, v), "%s must be a number", what);
    return false;
}

static const char *trimmed(Driver *d, const char *name) {
    while (*name == ' ' || *name == '\t') name++;
    size_t n = strlen(name);
    while (n && (name[n - 1] == ' ' || name[n - 1] == '\t')) n--;
    return arena_strndup(d->arena, name, n);
}

static bool want(const Spec *s, const JsonValue *v, JsonKind k, const char *what) {
    if (v->kind == k) return true;
    diag_error(at(s, v), "%s must be %s", what, k == JSON_OBJECT ? "an object" : "an array");
    return false;
}

/* {"name": value, ...} into vals; false after an error */
static bool value_map(const Spec *s, const JsonValue *v, const char *what, TestValues *vals) {
    if (!v) return true;
    if (!want(s, v, JSON_OBJECT, what)) return false;
    bool ok = true;
    for (uint32_t i = 0; i < v->n; i++) {
        TestValue tv = {.var = trimmed(s->d, v->keys[i]), .at = key_at(s, v->items[i], v->keys[i])};
        const char *w = arena_printf(s->d->arena, "%s of `%s`", what, tv.var);
        if (number(s, v->items[i], w, &tv.value)) vec_push(s->d->arena, vals, tv);
        else ok = false;
    }
    return ok;
}

static bool signal_list(const Spec *s, const JsonValue *v, TestCase *c) {
    if (!v) return true;
    if (!want(s, v, JSON_ARRAY, "`expect.signals`")) return false;
    c->signals_at = at(s, v);
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->items[i]->kind != JSON_STRING) {
            diag_error(at(s, v->items[i]), "a signal must be a variable name (a string)");
            return false;
        }
        TestValue tv = {.var = trimmed(s->d, v->items[i]->str), .at = at(s, v->items[i])};
        vec_push(s->d->arena, &c->signals, tv);
    }
    return true;
}

/* Tolerance of `var` from "atol"/"rtol" (a number or a per-variable map). */
static bool tol_of(const Spec *s, const JsonValue *t, const char *var, double *out, bool *given) {
    if (!t) return true;
    const JsonValue *v = NULL;
    if (t->kind == JSON_OBJECT) {
        for (uint32_t i = 0; i < t->n && !v; i++)
            if (strcmp(trimmed(s->d, t->keys[i]), var) == 0) v = t->items[i];
    } else {
        v = t;
    }
    if (!v) return true;
    *given = true;
    return number(s, v, "a tolerance", out) && *out >= 0;
}

static bool tolerances(const Spec *s, const JsonValue *cv, TestValues *vals) {
    const JsonValue *ta = json_get(cv, "atol"), *tr = json_get(cv, "rtol");
    for (uint32_t i = 0; i < vals->len; i++) {
        TestValue *v = &vals->data[i];
        bool has_a = false, has_r = false;
        v->atol = v->rtol = 0;
        if (!tol_of(s, ta, v->var, &v->atol, &has_a) || !tol_of(s, tr, v->var, &v->rtol, &has_r)) return false;
        if (!has_r && !(has_a && v->atol > 0)) v->rtol = TEST_DEFAULT_RTOL;
    }
    return true;
}

/* keys a case or its "expect" may have; others get a warning */
static void unknown_keys(const Spec *s, const JsonValue *v, const char *const *known, uint32_t n, const char *where) {
    for (uint32_t i = 0; i < v->n; i++) {
        bool ok = false;
        for (uint32_t k = 0; k < n && !ok; k++) ok = strcmp(v->keys[i], known[k]) == 0;
        if (ok) continue;
        Sym near = suggest_name(v->keys[i], (Sym const *)known, n);
        const char *hint = strcmp(v->keys[i], "signals") == 0 ? "; did you mean `expect.signals`?"
                           : near ? arena_printf(s->d->arena, "; did you mean `%s`?", near) : "";
        diag_warning(key_at(s, v->items[i], v->keys[i]), "unknown key `%s` in %s, ignored%s", v->keys[i], where, hint);
    }
}

static const char *const case_keys[] = {"start", "stop", "params", "initial", "atol", "rtol",
                                        "abstol", "reltol", "expect", "solver"};
static const char *const expect_keys[] = {"initial", "final", "signals"};

static bool solver_tol(const Spec *s, const JsonValue *cv, const char *key, double *out, double dflt) {
    const JsonValue *v = json_get(cv, key);
    *out = dflt;
    if (!v) return true;
    return number(s, v, arena_printf(s->d->arena, "`%s`", key), out);
}

static bool read_case(const Spec *s, const JsonValue *cv, TestCase *c) {
    if (!want(s, cv, JSON_OBJECT, "a test case")) return false;
    unknown_keys(s, cv, case_keys, sizeof case_keys / sizeof *case_keys, "a test case");
    const JsonValue *stop = json_get(cv, "stop"), *start = json_get(cv, "start"), *ex = json_get(cv, "expect");
    if (!stop) {
        diag_error(c->at, "test case `%s` has no `stop` time", c->name);
        return false;
    }
    c->start = 0;
    bool ok = number(s, stop, "`stop`", &c->stop) && (!start || number(s, start, "`start`", &c->start));
    if (ok && !(c->stop >= c->start)) {
        diag_error(at(s, stop), "`stop` (%s) is before `start` (%s)", dyrt_num(c->stop).s, dyrt_num(c->start).s);
        ok = false;
    }
    ok = ok && solver_tol(s, cv, "reltol", &c->rtol, TEST_SOLVER_RTOL) &&
         solver_tol(s, cv, "abstol", &c->atol, TEST_SOLVER_ATOL);
    ok = ok && value_map(s, json_get(cv, "params"), "a parameter value", &c->params) &&
         value_map(s, json_get(cv, "initial"), "an initial value", &c->initial);
    if (ok && ex && want(s, ex, JSON_OBJECT, "`expect`")) {
        unknown_keys(s, ex, expect_keys, sizeof expect_keys / sizeof *expect_keys, "`expect`");
        ok = value_map(s, json_get(ex, "initial"), "an expected initial value", &c->expect_initial) &&
             value_map(s, json_get(ex, "final"), "an expected final value", &c->expect_final) &&
             signal_list(s, json_get(ex, "signals"), c);
    } else if (ex) {
        ok = false;
    }
    return ok && tolerances(s, cv, &c->expect_initial) && tolerances(s, cv, &c->expect_final) &&
           tolerances(s, cv, &c->signals);
}

static TestCase *new_case(Driver *d, Def *def, const char *name, Span sp) {
    TestCase *c = ARENA_NEW(d->arena, TestCase);
    c->def = def;
    c->name = name;
    c->full = arena_printf(d->arena, "%s.%s", def->qname, name);
    c->at = sp;
    return c;
}

void tests_of(Driver *d, Def *def, TestCases *out) {
    const AstMeta *meta = ast_meta(def->node);
    if (meta->kind != META_OBJECT || !meta->text || !strstr(meta->text, "\"tests\"")) return;
    Spec s = {d, meta, meta->span.file};
    uint32_t off;
    const char *msg;
    JsonValue *root = json_parse(d->arena, meta->text, strlen(meta->text), &off, &msg);
    if (!root) {
        Span sp = {s.file, meta->span.lo + off, meta->span.lo + off + 1};
        diag_error(sp, "metadata of `%s` is not valid JSON: %s", def->qname, msg);
        TestCase *c = new_case(d, def, "(metadata)", sp);
        c->bad = true;
        vec_push(d->arena, out, c);
        return;
    }
    const JsonValue *tests = json_get(json_get(root, "Dyad"), "tests");
    if (!tests) return;
    if (tests->kind != JSON_OBJECT) {
        diag_error(at(&s, tests), "`tests` of `%s` must be an object of test cases", def->qname);
        TestCase *c = new_case(d, def, "(tests)", at(&s, tests));
        c->bad = true;
        vec_push(d->arena, out, c);
        return;
    }
    for (uint32_t i = 0; i < tests->n; i++) {
        TestCase *c = new_case(d, def, tests->keys[i], key_at(&s, tests->items[i], tests->keys[i]));
        c->bad = !read_case(&s, tests->items[i], c);
        vec_push(d->arena, out, c);
    }
}
