/*
 * scalarize.c -- templates (FlatEq.dom) back to scalar equations.
 *
 * A template stands for one scalar equation per point of its iteration box:
 * the template with each EXPR_IDX(k) replaced by the constant lo[k] + i_k.
 * The replacement is the ordinary expr_subst, whose constructors fold the
 * affine indices of EXPR_AT leaves into plain leaves (expr_at) and simplify
 * exactly as the scalar path's translation did, so instance i is the
 * equation the scalar path writes for iteration i.  (A small template's
 * indexed leaves are evaluated on integers into the leaf expr_at would
 * give, without the constants of the index on the way.)  Consecutive templates
 * sharing one domain are one loop body and expand instance-major, the
 * scalar path's order; the parts of a split box (FlatSplit) expand together,
 * point by point of the whole box.  Cost: one substitution per scalar
 * equation, linear in the size of the result.  docs/ARCHITECTURE.md, "Arrays".
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
    uint32_t nd;
    int64_t iv[EXPR_MAXIDX];  /* this instance's induction values */
    Expr *val[EXPR_MAXIDX];   /* ... as constants, made when first needed */
} Point;

/* does a read only induction variables the box has? */
static bool affine_within(const ExprAffine *a, uint32_t nd) {
    for (uint32_t k = nd; k < EXPR_MAXIDX; k++)
        if (a->c[k + 1]) return false;
    return true;
}

static Expr *point_val(Point *p, uint32_t k) {
    if (!p->val[k]) p->val[k] = expr_const(p->c, (double)p->iv[k]);
    return p->val[k];
}

static Expr *point_leaf(void *ud, Expr *leaf) {
    Point *p = ud;
    return leaf->kind == EXPR_IDX && leaf->index < p->nd ? point_val(p, leaf->index) : leaf;
}

/* The instance of a small template by direct recursion: no memo tables
 * (the common template is a few nodes; expr_subst's hash map would cost
 * more than the nodes).  The same constructor calls as expr_subst, so the
 * same result; NULL after `*budget` nodes (a large or much-shared DAG:
 * expr_subst then). */
static Expr *point_tree(Point *p, Expr *e, int *budget) {
    if (--*budget < 0) return NULL;
    if (e->kind == EXPR_IDX) return e->index < p->nd ? point_val(p, e->index) : e;
    if (!e->nargs) return e;
    ExprAffine ix;
    if (e->kind == EXPR_AT && expr_affine_of(e->args[0], &ix) && affine_within(&ix, p->nd)) {
        /* the index on integers: what expr_at makes of it with the
         * constants substituted (exact below 2^53), without making the
         * constants of the induction values and of the index */
        int64_t x = expr_affine_at(&ix, p->iv);
        if (x >= 0 && x <= (int64_t)UINT32_MAX) return expr_leaf(p->c, (ExprKind)e->fn, (uint32_t)x);
    }
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
    Point p = {.c = c, .nd = q->dom->nd};
    for (uint32_t k = 0; k < q->dom->nd; k++) p.iv[k] = iv[k];
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

/* instance p of every template of eqs[i, end) (one loop body) */
static uint32_t emit_body(FlatModel *m, FlatEq *out, uint32_t n, uint32_t i, uint32_t end, uint64_t p,
                          const int64_t *iv, bool lazy) {
    for (uint32_t j = i; j < end; j++) {
        const FlatEq *t = &m->eqs.data[j];
        out[n++] = lazy && t->kind == FE_NORMAL ? deferred(t, p) : instance(m->ctx, t, iv);
    }
    return n;
}

/* The parts of split s, whose templates are eqs[i, end): every point of
 * the whole box in its order, by the body of the part it lies in (the
 * scalar path's order).  Linear in the instances plus the box's sides. */
static uint32_t expand_split(FlatModel *m, FlatEq *out, uint32_t n, uint32_t i, uint32_t end, bool lazy) {
    const FlatSplit *s = m->eqs.data[i].dom->split;
    Arena *a = expr_ctx_arena(m->ctx);
    uint32_t *first = ARENA_ARRAY(a, uint32_t, s->nparts), *last = ARENA_ARRAY(a, uint32_t, s->nparts);
    for (uint32_t j = end; j-- > i;) { /* each part's body is consecutive */
        uint32_t p = m->eqs.data[j].dom->part;
        if (first[p] == last[p]) last[p] = j + 1;
        first[p] = j;
    }
    uint8_t *slot[EXPR_MAXIDX] = {0}; /* index value -> its interval */
    for (uint32_t k = 0; k < s->whole.nd; k++) {
        slot[k] = ARENA_ARRAY(a, uint8_t, s->whole.n[k]);
        for (uint32_t x = 0, t = 0; x < s->whole.n[k]; x++) {
            while (t + 1u < s->nint[k] && s->start[k][t + 1] <= s->whole.lo[k] + (int64_t)x) t++;
            slot[k][x] = (uint8_t)t;
        }
    }
    int64_t iv[EXPR_MAXIDX];
    for (uint64_t p = 0; p < s->whole.count; p++) {
        flat_dom_point(&s->whole, p, iv);
        uint32_t part = 0;
        for (uint32_t k = 0; k < s->whole.nd; k++) part = part * s->nint[k] + slot[k][iv[k] - s->whole.lo[k]];
        const FlatDom *d = &s->parts[part];
        uint64_t local = 0;
        for (uint32_t k = 0; k < d->nd; k++) local = local * d->n[k] + (uint64_t)(iv[k] - d->lo[k]);
        n = emit_body(m, out, n, first[part], last[part], local, iv, lazy);
    }
    return n;
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
        if (q->dom->split) {
            while (end < m->eqs.len && m->eqs.data[end].dom && m->eqs.data[end].dom->split == q->dom->split) end++;
            n = expand_split(m, out, n, i, end, lazy);
            i = end;
            continue;
        }
        while (end < m->eqs.len && m->eqs.data[end].dom == q->dom) end++; /* one loop body */
        int64_t iv[EXPR_MAXIDX];
        for (uint64_t p = 0; p < q->dom->count; p++) {
            flat_dom_point(q->dom, p, iv);
            n = emit_body(m, out, n, i, end, p, iv, lazy);
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
