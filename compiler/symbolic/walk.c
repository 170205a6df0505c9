/*
 * walk.c -- traversals of the DAG: substitution, containment, leaf sets,
 * linear solving, numeric evaluation, printing, size.  Every traversal
 * visits each distinct node once (memo keyed by node id) and uses an
 * explicit stack, so it is O(DAG size) and safe on very deep expressions.
 */
#include "expr_internal.h"
#include "numfmt.h"

#include <math.h>

/* Post-order over the distinct nodes of `root` that are not yet in `done`;
 * `visit` is called once per node after its arguments and must put the node
 * into `done` (with a non-NULL value). */
typedef void (*Visit)(void *ud, Expr *e);

static void postorder(ExprCtx *c, Expr *root, HashMap *done, Visit visit, void *ud) {
    if (hmap_get(done, root->id)) return;
    ExprVec st = {0};
    vec_push(c->scratch, &st, root);
    while (st.len) {
        Expr *e = st.data[st.len - 1];
        if (hmap_get(done, e->id)) { st.len--; continue; }
        bool ready = true;
        for (int i = 0; i < e->nargs; i++)
            if (!hmap_get(done, e->args[i]->id)) {
                vec_push(c->scratch, &st, e->args[i]);
                ready = false;
            }
        if (!ready) continue;
        visit(ud, e);
        st.len--;
    }
}

/* ---------- substitution ---------- */

typedef struct {
    ExprCtx *c;
    HashMap memo;
    ExprLeafMap map;
    void *ud;
    ExprNodeWatch watch;   /* or NULL */
    ExprNodeMap pre;       /* expr_replace: or NULL */
    HashMap asked;         /* expr_replace: nodes `pre` was asked about */
} Subst;

Expr *expr_with_args(ExprCtx *c, Expr *e, Expr *const *a) {
    switch ((ExprKind)e->kind) {
    case EXPR_ADD: return expr_add(c, a[0], a[1]);
    case EXPR_MUL: return expr_mul(c, a[0], a[1]);
    case EXPR_NEG: return expr_neg(c, a[0]);
    case EXPR_DIV: return expr_div(c, a[0], a[1]);
    case EXPR_POW: return expr_pow(c, a[0], a[1]);
    case EXPR_CALL: return expr_call(c, (ExprFn)e->fn, a[0], a[1]);
    case EXPR_AND: return expr_and(c, a[0], a[1]);
    case EXPR_OR: return expr_or(c, a[0], a[1]);
    case EXPR_NOT: return expr_not(c, a[0]);
    case EXPR_IFELSE: return expr_ifelse(c, a[0], a[1], a[2]);
    case EXPR_LT: case EXPR_LE: case EXPR_GT: case EXPR_GE: case EXPR_EQ: case EXPR_NE:
        return expr_cmp(c, (ExprKind)e->kind, a[0], a[1]);
    case EXPR_AT: { /* a constant index gives the plain leaf */
        Expr *r = expr_at(c, (ExprKind)e->fn, a[0]);
        if (!r) diag_internal("an indexed leaf got an index that is not an integer affine form");
        return r ? r : e;
    }
    default: return e;
    }
}

static void subst_visit(void *ud, Expr *e) {
    Subst *s = ud;
    Expr *r;
    if (!e->nargs) {
        r = (e->kind == EXPR_CONST || e->kind == EXPR_TIME) ? e : s->map(s->ud, e);
    } else if (e->kind == EXPR_AT && (r = s->map(s->ud, e)) != e) {
        /* the map replaced the indexed leaf as a whole */
    } else {
        Expr *a[3] = {0};
        bool same = true;
        for (int i = 0; i < e->nargs; i++) {
            a[i] = hmap_get(&s->memo, e->args[i]->id);
            same &= a[i] == e->args[i];
        }
        r = same ? e : expr_with_args(s->c, e, a);
        if (s->watch) s->watch(s->ud, e, r);
    }
    hmap_put(s->c->scratch, &s->memo, e->id, r);
}

Expr *expr_subst(ExprCtx *c, Expr *e, ExprLeafMap map, void *ud) {
    return expr_subst_watch(c, e, map, ud, NULL);
}

Expr *expr_subst_watch(ExprCtx *c, Expr *e, ExprLeafMap map, void *ud, ExprNodeWatch watch) {
    Subst s = {c, {0}, map, ud, watch, NULL, {0}};
    expr_scratch_enter(c);
    postorder(c, e, &s.memo, subst_visit, &s);
    Expr *r = hmap_get(&s.memo, e->id);
    expr_scratch_leave(c);
    return r;
}

/* expr_subst by direct recursion, without the memo table: the same leaf
 * rule and constructor calls; NULL after `*budget` nodes (repeats counted) */
static Expr *subst_tree(ExprCtx *c, Expr *e, ExprLeafMap map, void *ud, int *budget) {
    if (--*budget < 0) return NULL;
    if (!e->nargs) return (e->kind == EXPR_CONST || e->kind == EXPR_TIME) ? e : map(ud, e);
    if (e->kind == EXPR_AT) {
        Expr *r = map(ud, e);
        if (r != e) return r;
    }
    Expr *a[3] = {0};
    bool same = true;
    for (int i = 0; i < e->nargs; i++) {
        if (!(a[i] = subst_tree(c, e->args[i], map, ud, budget))) return NULL;
        same &= a[i] == e->args[i];
    }
    return same ? e : expr_with_args(c, e, a);
}

Expr *expr_subst_small(ExprCtx *c, Expr *e, ExprLeafMap map, void *ud, int budget) {
    Expr *r = subst_tree(c, e, map, ud, &budget);
    return r ? r : expr_subst(c, e, map, ud);
}

static Expr *keep_leaf(void *ud, Expr *leaf) { (void)ud; return leaf; }

/* Post-order like postorder(), but `pre` is asked about each node (once)
 * before its arguments are visited; a node it replaces is not descended.
 * One memo for all roots, so shared subexpressions are rebuilt once. */
void expr_replace(ExprCtx *c, Expr **roots, uint32_t n, ExprNodeMap pre, void *ud) {
    Subst s = {c, {0}, keep_leaf, ud, NULL, pre, {0}};
    expr_scratch_enter(c);
    ExprVec st = {0};
    for (uint32_t k = 0; k < n; k++) {
        vec_push(c->scratch, &st, roots[k]);
        while (st.len) {
            Expr *e = st.data[st.len - 1];
            if (hmap_get(&s.memo, e->id)) { st.len--; continue; }
            if (!hmap_get(&s.asked, e->id)) {
                hmap_put(c->scratch, &s.asked, e->id, e);
                Expr *r = pre(ud, e);
                if (r) { hmap_put(c->scratch, &s.memo, e->id, r); st.len--; continue; }
            }
            bool ready = true;
            for (int i = 0; i < e->nargs; i++)
                if (!hmap_get(&s.memo, e->args[i]->id)) {
                    vec_push(c->scratch, &st, e->args[i]);
                    ready = false;
                }
            if (!ready) continue;
            subst_visit(&s, e);
            st.len--;
        }
        roots[k] = hmap_get(&s.memo, roots[k]->id);
    }
    expr_scratch_leave(c);
}

/* ---------- containment and leaf sets ---------- */

typedef struct {
    ExprCtx *c;
    HashMap done;
    Expr *leaf;
    ExprKind kind;
    ExprVec *out;
} Scan;

static void *const YES = (void *)2, *const NO = (void *)1;

static void contains_visit(void *ud, Expr *e) {
    Scan *s = ud;
    bool yes = e == s->leaf;
    for (int i = 0; i < e->nargs && !yes; i++) yes = hmap_get(&s->done, e->args[i]->id) == YES;
    hmap_put(s->c->scratch, &s->done, e->id, yes ? YES : NO);
}

bool expr_contains(ExprCtx *c, Expr *e, Expr *leaf) {
    Scan s = {c, {0}, leaf, 0, NULL};
    expr_scratch_enter(c);
    postorder(c, e, &s.done, contains_visit, &s);
    bool yes = hmap_get(&s.done, e->id) == YES;
    expr_scratch_leave(c);
    return yes;
}

static void leaves_visit(void *ud, Expr *e) {
    Scan *s = ud;
    bool any = s->kind == EXPR_KIND_COUNT && e->kind != EXPR_CONST;
    if ((!e->nargs || e->kind == EXPR_AT) && (e->kind == s->kind || any)) vec_push(s->c->arena, s->out, e);
    hmap_put(s->c->scratch, &s->done, e->id, YES);
}

void expr_leaves(ExprCtx *c, Expr *e, ExprKind kind, ExprVec *out) {
    Scan s = {c, {0}, NULL, kind, out};
    expr_scratch_enter(c);
    postorder(c, e, &s.done, leaves_visit, &s);
    expr_scratch_leave(c);
}

void expr_leaves_any(ExprCtx *c, Expr *e, ExprVec *out) { expr_leaves(c, e, EXPR_KIND_COUNT, out); }

typedef struct {
    ExprCtx *c;
    HashMap done;  /* node id -> tree size + 1, saturated at cap + 1 */
    uint64_t cap;
} TreeSize;

static void tree_visit(void *ud, Expr *e) {
    TreeSize *s = ud;
    uint64_t n = 1;
    for (int i = 0; i < e->nargs; i++) n += (uint64_t)(uintptr_t)hmap_get(&s->done, e->args[i]->id) - 1;
    if (n > s->cap) n = s->cap + 1;
    hmap_put(s->c->scratch, &s->done, e->id, (void *)(uintptr_t)(n + 1));
}

uint64_t expr_tree_size(ExprCtx *c, Expr *e, uint64_t cap) {
    TreeSize s = {c, {0}, cap};
    expr_scratch_enter(c);
    postorder(c, e, &s.done, tree_visit, &s);
    uint64_t n = (uint64_t)(uintptr_t)hmap_get(&s.done, e->id) - 1;
    expr_scratch_leave(c);
    return n;
}

static void size_visit(void *ud, Expr *e) {
    Scan *s = ud;
    hmap_put(s->c->scratch, &s->done, e->id, YES);
}

uint32_t expr_size(ExprCtx *c, Expr *e) {
    Scan s = {c, {0}, NULL, 0, NULL};
    expr_scratch_enter(c);
    postorder(c, e, &s.done, size_visit, &s);
    uint32_t n = s.done.len;
    expr_scratch_leave(c);
    return n;
}

/* ---------- solving e = 0 for a leaf occurring linearly ---------- */

static Expr *zero_leaf(void *ud, Expr *leaf) {
    Expr **z = ud; /* z[0] = the leaf, z[1] = 0 */
    return leaf == z[0] ? z[1] : leaf;
}

Expr *expr_solve_linear(ExprCtx *c, Expr *e, Expr *leaf) {
    Expr *a = expr_diff_once(c, e, leaf);
    if (expr_is_const_value(a, 0) || expr_contains(c, a, leaf)) return NULL;
    Expr *z[2] = {leaf, expr_const(c, 0)};
    Expr *b = expr_subst(c, e, zero_leaf, z);
    if (expr_contains(c, b, leaf)) return NULL;
    return expr_div(c, expr_neg(c, b), a);
}

/* ---------- evaluation (recursive: used on small expressions) ---------- */

double expr_eval(const Expr *e, ExprLeafValue leaf, void *ud) {
    double a = 0, b = 0;
    if (e->nargs > 0 && e->kind != EXPR_IFELSE) a = expr_eval(e->args[0], leaf, ud);
    if (e->nargs > 1 && e->kind != EXPR_IFELSE) b = expr_eval(e->args[1], leaf, ud);
    switch ((ExprKind)e->kind) {
    case EXPR_CONST: return e->value;
    case EXPR_ADD: return a + b;
    case EXPR_MUL: return a * b;
    case EXPR_NEG: return -a;
    case EXPR_DIV: return a / b;
    case EXPR_POW: return pow(a, b);
    case EXPR_CALL: return expr_apply_fn((ExprFn)e->fn, a, b);
    case EXPR_LT: return a < b;
    case EXPR_LE: return a <= b;
    case EXPR_GT: return a > b;
    case EXPR_GE: return a >= b;
    case EXPR_EQ: return a == b;
    case EXPR_NE: return a != b;
    case EXPR_AND: return a != 0 && b != 0;
    case EXPR_OR: return a != 0 || b != 0;
    case EXPR_NOT: return a == 0;
    case EXPR_IFELSE:
        return expr_eval(e->args[0], leaf, ud) != 0 ? expr_eval(e->args[1], leaf, ud)
                                                    : expr_eval(e->args[2], leaf, ud);
    default: return leaf ? leaf(ud, e) : NAN;
    }
}

/* ---------- printing (fully parenthesized where precedence needs it) ---------- */

static int prec(const Expr *e) {
    switch ((ExprKind)e->kind) {
    case EXPR_OR: return 1;
    case EXPR_AND: return 2;
    case EXPR_LT: case EXPR_LE: case EXPR_GT: case EXPR_GE: case EXPR_EQ: case EXPR_NE: return 3;
    case EXPR_ADD: return 4;
    case EXPR_NEG: return 5;
    case EXPR_MUL: case EXPR_DIV: return 6;
    case EXPR_POW: return 7;
    case EXPR_CONST: return e->value < 0 ? 5 : 9;
    default: return 9;
    }
}

static const char *binop(ExprKind k) {
    switch (k) {
    case EXPR_ADD: return " + ";
    case EXPR_MUL: return " * ";
    case EXPR_DIV: return " / ";
    case EXPR_POW: return "^";
    case EXPR_LT: return " < ";
    case EXPR_LE: return " <= ";
    case EXPR_GT: return " > ";
    case EXPR_GE: return " >= ";
    case EXPR_EQ: return " == ";
    case EXPR_NE: return " != ";
    case EXPR_AND: return " and ";
    case EXPR_OR: return " or ";
    default: return " ? ";
    }
}

static void print_sub(FILE *out, const Expr *e, int min, ExprLeafName name, void *ud) {
    bool paren = prec(e) < min;
    if (paren) fputc('(', out);
    expr_print(out, e, name, ud);
    if (paren) fputc(')', out);
}

void expr_print(FILE *out, const Expr *e, ExprLeafName name, void *ud) {
    ExprKind k = (ExprKind)e->kind;
    switch (k) {
    case EXPR_CONST: fputs(dyrt_num(e->value).s, out); return;
    case EXPR_TIME: fputs("time", out); return;
    case EXPR_NEG: fputc('-', out); print_sub(out, e->args[0], 6, name, ud); return;
    case EXPR_NOT: fputc('!', out); print_sub(out, e->args[0], 9, name, ud); return;
    case EXPR_ADD:
        print_sub(out, e->args[0], 4, name, ud);
        if (e->args[1]->kind == EXPR_NEG) {
            fputs(" - ", out);
            print_sub(out, e->args[1]->args[0], 5, name, ud);
        } else {
            fputs(" + ", out);
            print_sub(out, e->args[1], 5, name, ud);
        }
        return;
    case EXPR_CALL:
    case EXPR_IFELSE:
        fputs(k == EXPR_CALL ? expr_fn_names[e->fn] : "ifelse", out);
        fputc('(', out);
        for (int i = 0; i < e->nargs; i++) {
            if (i) fputs(", ", out);
            expr_print(out, e->args[i], name, ud);
        }
        fputc(')', out);
        return;
    default: break;
    }
    if (e->nargs == 2) {
        int p = prec(e);
        print_sub(out, e->args[0], k == EXPR_POW ? p + 1 : p, name, ud);
        fputs(binop(k), out);
        print_sub(out, e->args[1], k == EXPR_POW ? p : p + 1, name, ud);
        return;
    }
    if (k == EXPR_IDX) {
        fprintf(out, "i%u", e->index + 1);
        return;
    }
    if (name) {
        name(ud, out, e);
    } else if (k == EXPR_AT) {
        fprintf(out, "%s[", expr_kind_names[e->fn] + 5);
        expr_print(out, e->args[0], NULL, NULL);
        fputc(']', out);
    } else {
        fprintf(out, "%s[%u]", expr_kind_names[k] + 5, e->index);
    }
}
