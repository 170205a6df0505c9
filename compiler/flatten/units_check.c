/*
 * units_check.c -- dimensional consistency of a flat model (docs/UNITS.md).
 *
 * Input: a FlatModel whose variables carry the unit strings of their type
 * alias chains.  Output: diagnostics only (warnings, or errors with
 * -Werror=units); the model is not changed.
 *
 * Inference is bottom-up over each equation's Expr DAG and gives every node
 * one of three kinds of dimension:
 *   KNOWN    a dimension vector (from units, `time`, or combinations of them)
 *   CONST    a literal: takes the other operand's dimension in `+`, `-`,
 *            comparisons and branches, and is a plain factor in `*` and `/`
 *   UNKNOWN  anything built from a variable without units: unifies with
 *            anything, so models without units are never warned about
 * `+ - < == ifelse min max mod atan2` need equal dimensions, `* /` combine,
 * `^` with a constant exponent scales, `sqrt` halves, `der` divides by s,
 * `sin exp log ...` need dimensionless arguments and give dimensionless
 * results.  Each relation then needs lhs and rhs of equal dimension, and a
 * parameter value or a guess the dimension of its variable.
 *
 * Results are memoized per node (ids are dense per ExprCtx), so a check is
 * linear in the size of the model.  One relation gives at most one
 * diagnostic, and a library line instantiated many times is reported once
 * per process (keyed by span and units involved).
 */
#include "flat.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

typedef enum { DIM_UNKNOWN, DIM_CONST, DIM_KNOWN } DimTag;

typedef struct Dim {
    DimTag tag;
    Unit u;                /* valid when tag == DIM_KNOWN */
} Dim;

typedef struct Checker {
    const FlatModel *m;
    bool as_error;
    const Unit **var_unit; /* parsed units per flat variable, NULL when none
                              (scratch: one pointer a variable, freed on return) */
    Dim *memo;             /* per Expr id */
    bool *done;
    uint32_t nmemo;
    Expr *lhs, *rhs;       /* the current relation */
    ExprVec leaves;        /* its VAR leaves (display names), collected lazily */
    bool have_leaves;
    bool has_msg;          /* a mismatch was found in the current relation */
    char msg[768];
    char key[512];         /* what identifies the mismatch besides its span */
    unsigned count;        /* diagnostics issued */
    const FlatDom *dom;    /* the current relation's box (a template), or NULL */
    bool *arr_uniform;     /* per FlatModel.arrays: every element has the same units */
} Checker;

/* the variable a VAR/DER leaf or an indexed leaf reads (for an indexed
 * leaf: its first instance; only used where its whole array has one unit) */
static uint32_t leaf_var(const Checker *C, const Expr *leaf) {
    int64_t iv[EXPR_MAXIDX] = {0};
    if (leaf->kind == EXPR_AT && C->dom) flat_dom_point(C->dom, 0, iv);
    return flat_leaf_var(leaf, iv);
}

/* the VAR and DER leaves of e, indexed ones included */
static void unit_leaves(const Checker *C, Expr *e, ExprVec *out) {
    expr_leaves(C->m->ctx, e, EXPR_VAR, out);
    expr_leaves(C->m->ctx, e, EXPR_DER, out);
    expr_leaves(C->m->ctx, e, EXPR_AT, out);
}

/* ---------- once-per-process deduplication ---------- */

static uint64_t *seen_keys;
static uint32_t seen_len, seen_cap;

static bool seen_insert(uint64_t key);

static void seen_grow(void) {
    uint64_t *old = seen_keys;
    uint32_t oldcap = seen_cap;
    seen_cap = seen_cap ? seen_cap * 2 : 256;
    seen_keys = calloc(seen_cap, sizeof *seen_keys);
    if (!seen_keys) {
        fprintf(stderr, "dyadc: out of memory\n");
        exit(2);
    }
    seen_len = 0;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i]) seen_insert(old[i]);
    free(old);
}

/* false if the key was already there */
static bool seen_insert(uint64_t key) {
    if (2 * (seen_len + 1) > seen_cap) seen_grow();
    uint32_t i = (uint32_t)(key & (seen_cap - 1));
    while (seen_keys[i]) {
        if (seen_keys[i] == key) return false;
        i = (i + 1) & (seen_cap - 1);
    }
    seen_keys[i] = key;
    seen_len++;
    return true;
}

static bool first_time(Span sp, const char *what) {
    SrcFile *f = src_get(sp.file);
    uint64_t h = hash_bytes(what, strlen(what));
    h = hash_mix(h, (uint64_t)(uintptr_t)(f ? f->text : NULL));
    h = hash_mix(h, ((uint64_t)sp.lo << 32) | sp.hi);
    return seen_insert(h ? h : 1);
}

static void emit(Checker *C, Span sp, const char *key, const char *msg) {
    if (!first_time(sp, key)) return;
    C->count++;
    if (C->as_error) diag_error(sp, "%s", msg);
    else diag_warning(sp, "%s", msg);
}

/* ---------- showing dimensions in the modeler's terms ---------- */

/* `V (kg.m2/(s3.A))` when a variable of the relation declares a unit of
 * this dimension (else an SI derived unit does), else the SI base form */
static const char *show(Checker *C, const Dim *d, char *buf, size_t n) {
    char base[128];
    unit_format_dim(&d->u, base, sizeof base);
    const char *name = NULL;
    if (!C->have_leaves) {
        C->leaves.len = 0;
        expr_leaves(C->m->ctx, C->lhs, EXPR_VAR, &C->leaves);
        expr_leaves(C->m->ctx, C->rhs, EXPR_VAR, &C->leaves);
        expr_leaves(C->m->ctx, C->lhs, EXPR_AT, &C->leaves);
        expr_leaves(C->m->ctx, C->rhs, EXPR_AT, &C->leaves);
        C->have_leaves = true;
    }
    for (uint32_t i = 0; i < C->leaves.len && !name; i++) {
        if (C->leaves.data[i]->kind == EXPR_AT && C->leaves.data[i]->fn != EXPR_VAR) continue;
        uint32_t v = leaf_var(C, C->leaves.data[i]);
        if (C->var_unit[v] && unit_same_dim(C->var_unit[v], &d->u)) name = C->m->vars.data[v].units;
    }
    if (!name) name = unit_si_name(&d->u);
    if (name && strcmp(name, base) != 0) snprintf(buf, n, "%s (%s)", name, base);
    else snprintf(buf, n, "%s", base);
    return buf;
}

/* the expression as the modeler would write it, shortened */
static const char *expr_text(Checker *C, const Expr *e, char *buf, size_t n) {
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);
    if (!f) return "?";
    flat_print_expr(f, C->m, e);
    fclose(f);
    size_t cut = len + 1 > n ? n - 4 : len;
    while (cut < len && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--; /* whole UTF-8 */
    snprintf(buf, n, "%.*s%s", (int)cut, s, cut < len ? "..." : "");
    free(s);
    return buf;
}

static void mismatch(Checker *C, const Expr *e, const char *what, const Dim *a, const Dim *b) {
    if (C->has_msg) return;
    char sa[160], sb[160], text[96];
    show(C, a, sa, sizeof sa);
    if (b) show(C, b, sb, sizeof sb);
    expr_text(C, e, text, sizeof text);
    if (b) snprintf(C->msg, sizeof C->msg, "unit mismatch in `%s`: %s %s %s", text, sa, what, sb);
    else snprintf(C->msg, sizeof C->msg, "unit mismatch in `%s`: %s, not %s", text, what, sa);
    snprintf(C->key, sizeof C->key, "%s|%s|%s", what, sa, b ? sb : "");
    C->has_msg = true;
}

/* ---------- inference ---------- */

static Dim known(Unit u) { return (Dim){DIM_KNOWN, u}; }

#define dim_unknown ((Dim){DIM_UNKNOWN, unit_one()})
#define dim_const ((Dim){DIM_CONST, unit_one()})

static Dim dimensionless(void) { return known(unit_one()); }

static Dim seconds(void) {
    Unit u = unit_one();
    u.exp[UNIT_S] = (UnitRat){1, 1};
    return known(u);
}

static Dim infer(Checker *C, const Expr *e);

/* operands that must agree (`+`, comparisons, branches, min/max) */
static Dim join(Checker *C, const Expr *e, const char *what, Dim a, Dim b) {
    if (a.tag == DIM_KNOWN && b.tag == DIM_KNOWN) {
        if (unit_same_dim(&a.u, &b.u)) return a;
        mismatch(C, e, what, &a, &b);
        return dim_unknown;
    }
    if (a.tag == DIM_KNOWN) return a;
    if (b.tag == DIM_KNOWN) return b;
    return a.tag == DIM_CONST && b.tag == DIM_CONST ? dim_const : dim_unknown;
}

/* a * b or a / b; an exponent overflow gives up (unknown) */
static Dim product(Dim a, Dim b, bool divide) {
    if (a.tag == DIM_UNKNOWN || b.tag == DIM_UNKNOWN) return dim_unknown;
    if (b.tag == DIM_CONST) return a;
    if (a.tag == DIM_CONST && !divide) return b;
    Unit l = a.tag == DIM_CONST ? unit_one() : a.u, r;
    bool ok = divide ? unit_div(&l, &b.u, &r) : unit_mul(&l, &b.u, &r);
    return ok ? known(r) : dim_unknown;
}

/* x ^ p: a dimensioned base needs a constant, simple-fraction exponent */
static Dim power(Checker *C, const Expr *e) {
    Dim a = infer(C, e->args[0]), b = infer(C, e->args[1]);
    if (b.tag == DIM_KNOWN && !unit_is_dimensionless(&b.u)) {
        mismatch(C, e, "the exponent must be dimensionless", &b, NULL);
        return dim_unknown;
    }
    if (a.tag != DIM_KNOWN) return a.tag == DIM_CONST && b.tag == DIM_CONST ? dim_const : a;
    if (unit_is_dimensionless(&a.u)) return a;
    UnitRat p;
    Unit r;
    if (expr_is_const(e->args[1]) && unit_rat_from_double(e->args[1]->value, &p) && unit_pow(&a.u, p, &r))
        return known(r);
    mismatch(C, e, "a base with units needs a constant, simple-fraction exponent", &a, NULL);
    return dim_unknown;
}

/* does e read a variable with declared units?  (`sin(time)` in a model
 * without units is the common idiom; only time makes it seconds there) */
static bool reads_unit_var(Checker *C, const Expr *e) {
    ExprVec v = {0};
    unit_leaves(C, (Expr *)e, &v);
    for (uint32_t i = 0; i < v.len; i++)
        if (C->var_unit[leaf_var(C, v.data[i])]) return true;
    return false;
}

static Dim call(Checker *C, const Expr *e) {
    Dim a = infer(C, e->args[0]);
    Dim b = e->nargs > 1 ? infer(C, e->args[1]) : dim_unknown;
    switch ((ExprFn)e->fn) {
    case FN_SIN: case FN_COS: case FN_TAN: case FN_ASIN: case FN_ACOS: case FN_ATAN:
    case FN_SINH: case FN_COSH: case FN_TANH: case FN_EXP: case FN_LOG: case FN_LOG10:
        if (a.tag == DIM_KNOWN && !unit_is_dimensionless(&a.u) && reads_unit_var(C, e->args[0])) {
            char what[64];
            snprintf(what, sizeof what, "`%s` needs a dimensionless argument", expr_fn_names[e->fn]);
            mismatch(C, e, what, &a, NULL);
        }
        return dimensionless();
    case FN_SQRT: {
        Unit r;
        if (a.tag != DIM_KNOWN) return a;
        if (unit_pow(&a.u, (UnitRat){1, 2}, &r)) return known(r);
        return dim_unknown;
    }
    case FN_ABS: case FN_FLOOR: case FN_CEIL: return a;
    case FN_SIGN: return dimensionless();
    case FN_ATAN2:
        join(C, e, "vs", a, b);
        return dimensionless();
    case FN_MIN: case FN_MAX: case FN_MOD: case FN_REM: return join(C, e, "vs", a, b);
    case FN_COUNT: break;
    }
    return dim_unknown;
}

static Dim var_dim(Checker *C, uint32_t v, bool der) {
    if (v >= C->m->vars.len || !C->var_unit[v]) return dim_unknown;
    if (!der) return known(*C->var_unit[v]);
    Dim s = seconds();
    Unit r;
    return unit_div(C->var_unit[v], &s.u, &r) ? known(r) : dim_unknown;
}

static Dim infer_node(Checker *C, const Expr *e) {
    switch ((ExprKind)e->kind) {
    case EXPR_CONST: return dim_const;
    case EXPR_TIME: return seconds();
    case EXPR_VAR: return var_dim(C, e->index, false);
    case EXPR_DER: return var_dim(C, e->index, true);
    case EXPR_Y: case EXPR_YP: case EXPR_P: case EXPR_Z: case EXPR_MODE: return dim_unknown;
    case EXPR_IDX: return dim_const; /* a loop index, a number in the scalar equation */
    case EXPR_AT:
        if (e->fn != EXPR_VAR && e->fn != EXPR_DER) return dim_unknown;
        return var_dim(C, leaf_var(C, e), e->fn == EXPR_DER);
    case EXPR_ADD: return join(C, e, "+", infer(C, e->args[0]), infer(C, e->args[1]));
    case EXPR_NEG: return infer(C, e->args[0]);
    case EXPR_MUL: return product(infer(C, e->args[0]), infer(C, e->args[1]), false);
    case EXPR_DIV: return product(infer(C, e->args[0]), infer(C, e->args[1]), true);
    case EXPR_POW: return power(C, e);
    case EXPR_CALL: return call(C, e);
    case EXPR_LT: case EXPR_LE: case EXPR_GT: case EXPR_GE: case EXPR_EQ: case EXPR_NE:
        join(C, e, "compared with", infer(C, e->args[0]), infer(C, e->args[1]));
        return dim_const;
    case EXPR_AND: case EXPR_OR: case EXPR_NOT:
        for (unsigned i = 0; i < e->nargs; i++) infer(C, e->args[i]);
        return dim_const;
    case EXPR_IFELSE:
        infer(C, e->args[0]);
        return join(C, e, "vs", infer(C, e->args[1]), infer(C, e->args[2]));
    case EXPR_KIND_COUNT: break;
    }
    return dim_unknown;
}

static Dim infer(Checker *C, const Expr *e) {
    if (e->id < C->nmemo && C->done[e->id]) return C->memo[e->id];
    Dim d = infer_node(C, e);
    if (e->id < C->nmemo) {
        C->memo[e->id] = d;
        C->done[e->id] = true;
    }
    return d;
}

/* ---------- relations ---------- */

/* lhs = rhs: true (the message in C->msg) when its units do not agree; for
 * a binding, `var` names the variable and `role` ("value", "guess") what rhs
 * is; both NULL for a relation */
static bool relation_differs(Checker *C, Expr *lhs, Expr *rhs, const char *var, const char *role) {
    C->has_msg = false;
    C->lhs = lhs, C->rhs = rhs;
    C->have_leaves = false;
    Dim l = infer(C, lhs), r = infer(C, rhs);
    if (!C->has_msg && l.tag == DIM_KNOWN && r.tag == DIM_KNOWN && !unit_same_dim(&l.u, &r.u)) {
        char sl[160], sr[160];
        show(C, &l, sl, sizeof sl);
        show(C, &r, sr, sizeof sr);
        if (var)
            snprintf(C->msg, sizeof C->msg, "unit mismatch: `%s` is in %s, its %s in %s", var, sl, role, sr);
        else snprintf(C->msg, sizeof C->msg, "unit mismatch: left side is %s, right side is %s", sl, sr);
        snprintf(C->key, sizeof C->key, "=|%s|%s", sl, sr);
        C->has_msg = true;
    }
    return C->has_msg;
}

/* the same, reported at span */
static void check_relation(Checker *C, Expr *lhs, Expr *rhs, Span sp, const char *var, const char *role) {
    if (relation_differs(C, lhs, rhs, var, role)) emit(C, sp, C->key, C->msg);
}

/* parse every distinct unit string once (they are shared by all instances
 * of a declaration); a bad string is an error at the first declaration that
 * uses it (a bad type alias would otherwise be reported at every use) */
static void parse_var_units(Checker *C, Arena *a) {
    static Unit bad; /* marks a string that did not parse */
    const FlatModel *m = C->m;
    HashMap cache = {0};
    for (uint32_t i = 0; i < m->vars.len; i++) {
        const FlatVar *v = &m->vars.data[i];
        if (!v->units) continue;
        uint64_t key = (uint64_t)(uintptr_t)v->units;
        Unit *u = hmap_get(&cache, key);
        char err[160];
        if (!u) {
            u = ARENA_NEW(a, Unit);
            if (!unit_parse(v->units, u, err, sizeof err)) u = &bad;
            hmap_put(a, &cache, key, u);
        }
        if (u != &bad) {
            C->var_unit[i] = u;
            continue;
        }
        Unit tmp;
        unit_parse(v->units, &tmp, err, sizeof err); /* the message again */
        char what[200];
        snprintf(what, sizeof what, "units|%s", v->units);
        if (!first_time((Span){0}, what)) continue; /* once per string, not per declaration */
        C->count++;
        diag_error(v->span, "bad units \"%s\" of `%s`: %s", v->units, v->name, err);
    }
}

/* which arrays have one unit for all their elements */
static void uniform_arrays(Checker *C, Arena *a) {
    const FlatModel *m = C->m;
    C->arr_uniform = ARENA_ARRAY(a, bool, m->arrays.len + 1);
    for (uint32_t k = 0; k < m->arrays.len; k++) {
        const FlatArray *r = &m->arrays.data[k];
        const char *u = m->vars.data[r->first].units;
        bool same = true;
        for (uint32_t v = r->first + 1; v < r->first + r->n && same; v++) {
            const char *w = m->vars.data[v].units;
            same = u == w || (u && w && !strcmp(u, w));
        }
        C->arr_uniform[k] = same;
    }
}

/* a template's units are those of its first instance when every indexed
 * leaf reads an array of one unit (the memo is then instance-free) */
static bool template_uniform(Checker *C, const FlatEq *q) {
    ExprVec v = {0};
    expr_leaves(C->m->ctx, q->lhs, EXPR_AT, &v);
    expr_leaves(C->m->ctx, q->rhs, EXPR_AT, &v);
    for (uint32_t i = 0; i < v.len; i++) {
        const FlatArray *r = flat_array_of(C->m, leaf_var(C, v.data[i]));
        if (!r || !C->arr_uniform[r - C->m->arrays.data]) return false;
    }
    return true;
}

/* A template is checked once when its units are those of every instance;
 * a mismatch is then reported on its first instance, scalarized, so that
 * the message names elements (`x[1] + t[1]`) and reads as the scalar path's
 * (--scalarize) does, operand order included. */
static void check_eq(Checker *C, const FlatEq *q) {
    C->dom = q->dom;
    if (!q->dom) {
        check_relation(C, q->lhs, q->rhs, q->span, NULL, NULL);
        return;
    }
    if (template_uniform(C, q)) {
        if (!relation_differs(C, q->lhs, q->rhs, NULL, NULL)) return;
        C->dom = NULL;
        FlatEq s = flat_scalarize_eq((FlatModel *)C->m, q, 0);
        if (relation_differs(C, s.lhs, s.rhs, NULL, NULL)) {
            emit(C, s.span, C->key, C->msg);
            return;
        }
        C->dom = q->dom; /* the instance simplified away what differed: the template's message */
        check_relation(C, q->lhs, q->rhs, q->span, NULL, NULL);
        return;
    }
    C->dom = NULL;
    for (uint64_t p = 0; p < q->dom->count; p++) { /* units differ between instances */
        FlatEq s = flat_scalarize_eq((FlatModel *)C->m, q, p);
        check_relation(C, s.lhs, s.rhs, s.span, NULL, NULL);
    }
}

unsigned flat_check_units(const FlatModel *m, bool as_error) {
    Checker C = {.m = m, .as_error = as_error};
    Arena *a = arena_new(); /* the checker's tables: nothing of them outlives the check */
    C.var_unit = ARENA_ARRAY(a, const Unit *, m->vars.len + 1);
    C.nmemo = expr_count(m->ctx);
    C.memo = malloc(sizeof *C.memo * ((size_t)C.nmemo + 1));
    C.done = calloc((size_t)C.nmemo + 1, sizeof *C.done);
    if (!C.memo || !C.done) {
        fprintf(stderr, "dyadc: out of memory\n");
        exit(2);
    }
    parse_var_units(&C, a);
    for (uint32_t i = 0; i < m->vars.len; i++) {
        const FlatVar *v = &m->vars.data[i];
        if (!C.var_unit[i]) continue;
        Expr *x = expr_leaf(m->ctx, EXPR_VAR, i);
        if (v->value) check_relation(&C, x, v->value, v->span, v->name, "value");
        if (flat_attr(m, v)->guess) check_relation(&C, x, flat_attr(m, v)->guess, v->span, v->name, "guess");
    }
    uniform_arrays(&C, a);
    for (uint32_t i = 0; i < m->eqs.len; i++) check_eq(&C, &m->eqs.data[i]);
    C.dom = NULL;
    for (uint32_t i = 0; i < m->asserts.len; i++) {
        Expr *cond = m->asserts.data[i].cond;
        check_relation(&C, cond, cond, m->asserts.data[i].span, NULL, NULL);
    }
    free(C.memo);
    free(C.done);
    arena_free(a);
    return C.count;
}
