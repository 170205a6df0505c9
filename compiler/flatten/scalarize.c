/*
 * scalarize.c -- templates (FlatEq.dom) back to scalar equations.
 *
 * A template stands for one scalar equation per point of its iteration box:
 * the template with each EXPR_IDX(k) replaced by the constant lo[k] + i_k.
 * The replacement is the ordinary expr_subst, whose constructors fold the
 * affine indices of EXPR_AT leaves into plain leaves (expr_at) and simplify
 * exactly as the scalar path's translation did, so instance i is the
 * equation the scalar path writes for iteration i.  Consecutive templates
 * sharing one domain are one loop body and expand instance-major, the
 * scalar path's order.  Cost: one substitution per scalar equation, linear
 * in the size of the result.  docs/ARCHITECTURE.md, "Arrays".
 */
#include "flatten_internal.h"

#include <string.h>

void flat_dom_point(const FlatDom *dom, uint64_t inst, int64_t *iv) {
    iv[0] = iv[1] = iv[2] = 0;
    for (int k = dom->nd - 1; k >= 0; k--) {
        iv[k] = dom->lo[k] + (int64_t)(inst % dom->n[k]);
        inst /= dom->n[k];
    }
}

uint32_t flat_leaf_var(const Expr *leaf, const int64_t *iv) {
    if (leaf->kind != EXPR_AT) return leaf->index;
    ExprAffine a;
    if (!expr_affine_of(leaf->args[0], &a)) return UINT32_MAX;
    return (uint32_t)expr_affine_at(&a, iv);
}

typedef struct {
    ExprCtx *c;
    Expr *val[EXPR_MAXIDX]; /* the constants of this instance's induction values */
} Point;

static Expr *point_leaf(void *ud, Expr *leaf) {
    Point *p = ud;
    return leaf->kind == EXPR_IDX && leaf->index < EXPR_MAXIDX && p->val[leaf->index] ? p->val[leaf->index] : leaf;
}

/* The instance of a small template by direct recursion: no memo tables
 * (the common template is a few nodes; expr_subst's hash map would cost
 * more than the nodes).  The same constructor calls as expr_subst, so the
 * same result; NULL after `*budget` nodes (a large or much-shared DAG:
 * expr_subst then). */
static Expr *point_tree(Point *p, Expr *e, int *budget) {
    if (--*budget < 0) return NULL;
    if (e->kind == EXPR_IDX) return p->val[e->index];
    if (!e->nargs) return e;
    Expr *a[3] = {0};
    bool same = true;
    for (int i = 0; i < e->nargs; i++) {
        if (!(a[i] = point_tree(p, e->args[i], budget))) return NULL;
        same &= a[i] == e->args[i];
    }
    return same ? e : expr_with_args(p->c, e, a);
}

static Expr *point_expr(Point *p, Expr *e) {
    int budget = 256;
    Expr *r = point_tree(p, e, &budget);
    return r ? r : expr_subst(p->c, e, point_leaf, p);
}

static FlatEq instance(ExprCtx *c, const FlatEq *q, const int64_t *iv) {
    Point p = {c, {0}};
    for (uint32_t k = 0; k < q->dom->nd; k++) p.val[k] = expr_const(c, (double)iv[k]);
    FlatEq r = *q;
    r.dom = NULL;
    r.lhs = point_expr(&p, q->lhs);
    r.rhs = point_expr(&p, q->rhs);
    return r;
}

FlatEq flat_scalarize_eq(FlatModel *m, const FlatEq *q, uint64_t inst) {
    if (!q->dom) return *q;
    int64_t iv[EXPR_MAXIDX];
    flat_dom_point(q->dom, inst, iv);
    return instance(m->ctx, q, iv);
}

bool flat_has_templates(const FlatModel *m) {
    for (uint32_t i = 0; i < m->eqs.len; i++)
        if (m->eqs.data[i].dom) return true;
    return false;
}

static void expand(FlatModel *m, bool lazy);

void flat_scalarize(FlatModel *m) { expand(m, false); }
void flat_scalarize_lazy(FlatModel *m) { expand(m, true); }

FlatEq *flat_eq_get(FlatModel *m, uint32_t i) {
    FlatEq *q = &m->eqs.data[i];
    if (q->tmpl && !q->lhs) {
        FlatEq r = flat_scalarize_eq(m, q->tmpl, q->inst);
        q->lhs = r.lhs;
        q->rhs = r.rhs;
    }
    return q;
}

/* a stand-in for instance p of q: its sides built on demand */
static FlatEq deferred(const FlatEq *q, uint64_t p) {
    FlatEq r = *q;
    r.dom = NULL;
    r.lhs = r.rhs = NULL;
    r.tmpl = q;
    r.inst = (uint32_t)p;
    return r;
}

static void expand(FlatModel *m, bool lazy) {
    if (!flat_has_templates(m)) return;
    uint64_t total = 0;
    for (uint32_t i = 0; i < m->eqs.len; i++) total += flat_eq_count(&m->eqs.data[i]);
    if (total > UINT32_MAX) {
        diag_internal("scalarize: %llu equations", (unsigned long long)total);
        return;
    }
    Arena *a = expr_ctx_arena(m->ctx);
    FlatEq *out = ARENA_ARRAY(a, FlatEq, total + 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->eqs.len;) {
        const FlatEq *q = &m->eqs.data[i];
        uint32_t end = i + 1;
        if (!q->dom) {
            out[n++] = *q;
            i = end;
            continue;
        }
        while (end < m->eqs.len && m->eqs.data[end].dom == q->dom) end++; /* one loop body */
        int64_t iv[EXPR_MAXIDX];
        for (uint64_t p = 0; p < q->dom->count; p++) {
            flat_dom_point(q->dom, p, iv);
            for (uint32_t j = i; j < end; j++) {
                const FlatEq *t = &m->eqs.data[j];
                out[n++] = lazy && t->kind == FE_NORMAL ? deferred(t, p) : instance(m->ctx, t, iv);
            }
        }
        i = end;
    }
    m->eqs.data = out;
    m->eqs.len = m->eqs.cap = n;
}

const FlatArray *flat_array_of(const FlatModel *m, uint32_t v) {
    uint32_t lo = 0, hi = m->arrays.len;
    while (lo < hi) { /* the last array with first <= v */
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->arrays.data[mid].first <= v) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NULL;
    const FlatArray *r = &m->arrays.data[lo - 1];
    return v < r->first + r->n ? r : NULL;
}
