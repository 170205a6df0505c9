/*
 * templates.c -- what the structure phase does once per equation template
 * instead of once per instance (docs/ARCHITECTURE.md, "Arrays", stage 3).
 *
 * The structure entry expands templates lazily (flat_scalarize_lazy): an
 * instance of a regular equation is (template, instance number) until
 * something asks for its sides.  A template is *uniform* when each of its
 * instances is the template with its leaves renamed and nothing else:
 *   - the induction variables occur only inside the indices of indexed
 *     leaves (no `ifelse` on an index, no index as a value), so no
 *     constant reaches a constructor at instantiation;
 *   - no relation (events name relations by their flat node);
 *   - at most one derivative leaf (structural variables of derivatives
 *     are numbered in the order they are met);
 *   - at most ST_TMPL_MAX_LEAVES distinct leaves;
 * and an instance of it is uniform when no two of its leaves of one kind
 * read the same variable (checked per instance on integers).  For such an
 * instance every simplification the constructors make is the one they
 * make on the template (they look at kinds, constants and pointer
 * equality; operand order is canonical, expr_cmp_canon), so:
 *   - its residual in structural form is one substitution of the
 *     template's residual (induction values, and each leaf to what
 *     st_to_sv makes of the variable it reads): st_tmpl_residual;
 *   - its leaves, their kinds and whether they are unknowns are known on
 *     integers (st_tmpl_leaves), which alias elimination uses to classify
 *     a template once (alias.c);
 *   - when every leaf reads a plain structural variable (no alias, no
 *     derivative of a parameter), two instances whose variables stand in
 *     the same order (the same rank of each leaf's variable among the
 *     leaves') have residuals that are each other renamed, node for node:
 *     the constructors decide the same way on an order-preserving
 *     renaming.  So the incidence of an instance (the unknowns among the
 *     residual's leaves in post-order) is the first such instance's read
 *     at the same leaf positions, on integers (st_tmpl_instance), and the
 *     residual itself is built only when something asks for it
 *     (st_eq_res): matching, Tarjan and the runs of BLT (runs.c) need
 *     only the incidence.
 * Anything else asks flat_eq_get for the instance: exactly the scalar
 * path.  O(template) once per template and leaf pattern, O(leaves^2)
 * integers per instance.
 */
#include "structure_internal.h"

#include <string.h>

static bool is_relation(const Expr *e) {
    return (e->kind >= EXPR_LT && e->kind <= EXPR_GE) || (e->kind == EXPR_CALL && e->fn == FN_SIGN);
}

typedef struct {
    StTmpl *k;
    bool ok;
} Scan;

/* add a leaf (plain VAR/DER or an indexed one) once */
static void add_leaf(StTmpl *k, Expr *leaf, bool *ok) {
    for (uint32_t i = 0; i < k->nleaves; i++)
        if (k->leaves[i] == leaf) return;
    if (k->nleaves == ST_TMPL_MAX_LEAVES) { *ok = false; return; }
    k->leaves[k->nleaves++] = leaf;
    ExprKind kind = leaf->kind == EXPR_AT ? (ExprKind)leaf->fn : (ExprKind)leaf->kind;
    if (kind == EXPR_DER && ++k->nder > 1) *ok = false;
    if (kind != EXPR_VAR && kind != EXPR_DER) *ok = false;
}

/* tree walk with an explicit stack; an IDX reached outside an AT index,
 * a relation or too many leaves make the template not uniform */
static bool scan(St *t, StTmpl *k, Expr *root) {
    ExprVec st = {0};
    bool ok = true;
    vec_push(t->arena, &st, root);
    for (uint32_t budget = 0; st.len && ok; budget++) {
        Expr *e = st.data[--st.len];
        if (budget > 64 * ST_TMPL_MAX_LEAVES || e->kind == EXPR_IDX || is_relation(e)) return false;
        if (e->kind == EXPR_AT || e->kind == EXPR_VAR || e->kind == EXPR_DER) { add_leaf(k, e, &ok); continue; }
        for (int i = 0; i < e->nargs; i++) vec_push(t->arena, &st, e->args[i]);
    }
    return ok;
}

StTmpl *st_tmpl(St *t, const FlatEq *q) {
    if (!q->tmpl || q->tmpl->kind != FE_NORMAL) return NULL;
    StTmpl *k = t->tmpl_last && t->tmpl_last->q == q->tmpl ? t->tmpl_last
                                                          : hmap_get(&t->tmpls, (uint64_t)(uintptr_t)q->tmpl);
    if (k) return (t->tmpl_last = k)->uniform ? k : NULL;
    k = ARENA_NEW(t->arena, StTmpl);
    k->q = q->tmpl;
    k->leaves = ARENA_ARRAY(t->arena, Expr *, ST_TMPL_MAX_LEAVES);
    k->nrisky = -1;
    k->uniform = scan(t, k, q->tmpl->lhs) && scan(t, k, q->tmpl->rhs);
    if (k->uniform) k->res = expr_sub(t->c, q->tmpl->lhs, q->tmpl->rhs);
    k->aff = ARENA_ARRAY(t->arena, ExprAffine, k->nleaves + 1);
    for (uint32_t i = 0; i < k->nleaves && k->uniform; i++) { /* a plain leaf: the constant form */
        Expr *l = k->leaves[i];
        if (l->kind != EXPR_AT) k->aff[i].c[0] = l->index;
        else k->uniform = expr_affine_of(l->args[0], &k->aff[i]);
    }
    hmap_put(t->arena, &t->tmpls, (uint64_t)(uintptr_t)q->tmpl, k);
    return k->uniform ? k : NULL;
}

bool st_tmpl_leaves(St *t, const StTmpl *k, uint32_t inst, uint32_t *var) {
    int64_t iv[EXPR_MAXIDX];
    flat_dom_point(k->q->dom, inst, iv);
    for (uint32_t i = 0; i < k->nleaves; i++) {
        int64_t v = expr_affine_at(&k->aff[i], iv);
        if (v < 0 || v >= t->m->vars.len) return false;
        var[i] = (uint32_t)v;
    }
    for (uint32_t i = 0; i < k->nleaves; i++)
        for (uint32_t j = 0; j < i; j++)
            if (var[i] == var[j] && st_tmpl_leaf_kind(k, i) == st_tmpl_leaf_kind(k, j)) return false;
    return true;
}

typedef struct {
    St *t;
    const StTmpl *k;
    const uint32_t *var;
    Expr *iv[EXPR_MAXIDX];
} Inst;

static Expr *inst_leaf(void *ud, Expr *leaf) {
    Inst *p = ud;
    if (leaf->kind == EXPR_IDX) return p->iv[leaf->index];
    if (leaf->kind != EXPR_AT && leaf->kind != EXPR_VAR && leaf->kind != EXPR_DER) return leaf;
    for (uint32_t i = 0; i < p->k->nleaves; i++)
        if (p->k->leaves[i] == leaf) {
            Expr *plain = expr_leaf(p->t->c, st_tmpl_leaf_kind(p->k, i), p->var[i]);
            return st_to_sv_leaf(p->t, plain);
        }
    return leaf;
}

Expr *st_tmpl_residual(St *t, const StTmpl *k, uint32_t inst, const uint32_t *var) {
    Inst p = {t, k, var, {0}};
    int64_t iv[EXPR_MAXIDX];
    flat_dom_point(k->q->dom, inst, iv);
    for (uint32_t i = 0; i < k->q->dom->nd; i++) p.iv[i] = expr_const(t->c, (double)iv[i]);
    return expr_subst_small(t->c, k->res, inst_leaf, &p, 256);
}

/* ---------- instances without their residual ---------- */

/* a leaf pattern of a template: the rank of each leaf's structural
 * variable among the leaves' (4 bits a leaf), and where the first
 * instance of it found the variables of its residual (post-order of the
 * distinct VAR leaves, as leaf positions; npos UINT32_MAX: one was no
 * leaf of the template, so the pattern is not used) */
struct StTmplPat {
    StTmplPat *next;   /* the next one with the same hash */
    const StTmpl *k;
    uint64_t rank;
    uint32_t npos;
    uint8_t pos[ST_TMPL_MAX_LEAVES];
};

int64_t st_tmpl_leaf_sv(St *t, const StTmpl *k, uint32_t j, uint32_t var) {
    bool unknown = t->m->vars.data[var].kind == FV_VARIABLE;
    if (unknown && t->alias[var]) return -1;
    if (st_tmpl_leaf_kind(k, j) == EXPR_VAR) return var;
    return unknown ? (int64_t)st_der(t, var) : -1;
}

/* the pattern's leaf positions, from the residual of its first instance */
static void pattern_positions(St *t, StTmplPat *p, Expr *res, const uint32_t *sv, uint32_t n) {
    ExprVec *vs = &t->leaves;
    vs->len = 0;
    expr_leaves(t->c, res, EXPR_VAR, vs);
    p->npos = vs->len <= ST_TMPL_MAX_LEAVES ? vs->len : UINT32_MAX;
    for (uint32_t i = 0; i < vs->len && p->npos != UINT32_MAX; i++) {
        uint32_t j = 0;
        while (j < n && sv[j] != vs->data[i]->index) j++;
        if (j == n) p->npos = UINT32_MAX;
        else p->pos[i] = (uint8_t)j;
    }
}

/* the pattern `rank` of template k (the last one used, else from the
 * table keyed by both), created when new (*fresh) */
static StTmplPat *pattern(St *t, StTmpl *k, uint64_t rank, bool *fresh) {
    *fresh = false;
    if (k->pat_last && k->pat_last->rank == rank) return k->pat_last;
    uint64_t h = hash_mix(hash_mix(0, (uint64_t)(uintptr_t)k), rank);
    h = h ? h : 1;
    StTmplPat *p = hmap_get(&t->tmpl_pats, h);
    while (p && (p->k != k || p->rank != rank)) p = p->next;
    if (!p) {
        p = ARENA_NEW(t->arena, StTmplPat);
        p->k = k, p->rank = rank;
        p->next = hmap_get(&t->tmpl_pats, h);
        hmap_put(t->arena, &t->tmpl_pats, h, p);
        *fresh = true;
    }
    return k->pat_last = p;
}

bool st_tmpl_instance(St *t, const StTmpl *kc, uint32_t inst, const uint32_t *var, SEq *e) {
    StTmpl *k = (StTmpl *)kc;
    uint32_t sv[ST_TMPL_MAX_LEAVES];
    for (uint32_t j = 0; j < k->nleaves; j++) {
        int64_t s = st_tmpl_leaf_sv(t, k, j, var[j]);
        if (s < 0) return false;
        sv[j] = (uint32_t)s;
    }
    uint64_t rank = 0; /* the variables are distinct: leaves of one kind read distinct ones */
    for (uint32_t j = 0; j < k->nleaves; j++) {
        uint64_t r = 0;
        for (uint32_t i = 0; i < k->nleaves; i++) r += sv[i] < sv[j];
        rank |= r << (4 * j);
    }
    bool fresh;
    StTmplPat *p = pattern(t, k, rank, &fresh);
    if (fresh) {
        e->res = st_tmpl_residual(t, k, inst, var);
        pattern_positions(t, p, e->res, sv, k->nleaves);
    }
    if (p->npos == UINT32_MAX) return false;
    e->inc = ARENA_ARRAY(t->arena, uint32_t, p->npos + 1);
    e->ninc = 0;
    for (uint32_t i = 0; i < p->npos; i++)
        if (st_is_unknown(t, sv[p->pos[i]])) e->inc[e->ninc++] = sv[p->pos[i]];
    return true;
}

Expr *st_eq_res(St *t, uint32_t e) {
    if (t->eq.data[e].res) return t->eq.data[e].res;
    const FlatEq *f = &t->m->eqs.data[t->eq.data[e].flat];
    const StTmpl *k = st_tmpl(t, f);
    uint32_t var[ST_TMPL_MAX_LEAVES];
    if (!k || !st_tmpl_leaves(t, k, f->inst, var)) {
        diag_internal("structure: equation %u has no residual", e);
        return t->eq.data[e].res = expr_const(t->c, 0);
    }
    Expr *r = st_tmpl_residual(t, k, f->inst, var);
    return t->eq.data[e].res = r;
}
