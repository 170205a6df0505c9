/*
 * statesel.c -- dummy derivatives and state selection.
 *
 * Mattsson & Söderlind, "Index reduction in differential-algebraic
 * equations using dummy derivatives" (SIAM J. Sci. Comput. 14(3), 1993):
 * stage 1 takes the differentiated equations at their highest order and
 * the highest derivatives; a square nonsingular submatrix of their
 * Jacobian picks as many dummy derivatives (they become algebraic
 * unknowns) as there are equations; stage k+1 repeats one level lower
 * with the equations those were differentiated from and the variables one
 * derivative below the picked ones.
 *
 * Static state selection: the columns are chosen greedily (a matroid, so
 * greedy is optimal for the order) in this preference order:
 *   a. lower statePriority of the variable first (high priority = keep as
 *      a state),
 *   b. higher derivative order first (der(der(x)) before der(v), so states
 *      stay the model's own first-order variables),
 *   c. a column whose Jacobian entries depend on parameters only first (it
 *      can be solved for everywhere: body coordinates tied to a joint angle
 *      by x = l cos(phi) become dummies, phi stays a state),
 *   d. within a class, full pivoting on the Jacobian evaluated at the start
 *      values (guess / `initial x = value` / 0, parameter defaults): the
 *      largest pivot wins, which keeps the chosen submatrix far from
 *      singular at the start.  For a pendulum that hangs down this makes x
 *      the state and y the dummy.
 * When the start point is numerically degenerate (e.g. all zeros) the
 * Jacobian is evaluated again at a fixed generic point.  Dense elimination
 * on each stage component: O(r^2 c) for r rows; larger components use the
 * structural greedy choice.
 *
 * Roles: after selection x^(k) is a state when x^(k+1) exists and is not
 * a dummy; a derivative of a state is that state's y'; everything else is
 * algebraic.
 */
#include "structure_internal.h"

#include <math.h>
#include <string.h>

/* ---------- dummy derivatives ---------- */

typedef struct {
    St *t;
    bool generic;
} Eval;

static double param_value(St *t, uint32_t v, int depth);

static double leaf_value(void *ud, const Expr *leaf) {
    Eval *ev = ud;
    St *t = ev->t;
    if (leaf->kind == EXPR_TIME) return t->s->start_time;
    if (leaf->kind != EXPR_VAR) return 0;
    uint32_t sv = leaf->index;
    if (!st_is_unknown(t, sv)) return param_value(t, t->sv.data[sv].base, 0);
    if (ev->generic) return 0.3 + fmod(0.6180339887 * (sv + 1), 1.0);
    return t->startv[sv];
}

static double param_value(St *t, uint32_t v, int depth) {
    FlatVar *fv = &t->m->vars.data[v];
    Expr *e = fv->value ? fv->value : fv->guess;
    if (!e || depth > 64) return 0;
    if (expr_is_const(e)) return e->value;
    Eval ev = {t, false};
    (void)depth;
    return expr_eval(e, leaf_value, &ev);
}

/* numeric start of every unknown: `initial x = <no unknowns>`, else guess, else 0 */
static void start_values(St *t) {
    t->startv = ARENA_ARRAY(t->arena, double, t->sv.len + 1);
    Eval ev = {t, false};
    for (uint32_t v = 0; v < t->nflat; v++) {
        FlatVar *fv = &t->m->vars.data[v];
        if (fv->kind == FV_VARIABLE && fv->guess) t->startv[v] = expr_eval(fv->guess, leaf_value, &ev);
    }
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        FlatEq *q = &t->m->eqs.data[i];
        if (q->kind != FE_INITIAL || q->lhs->kind != EXPR_VAR) continue;
        uint32_t v = q->lhs->index;
        if (t->m->vars.data[v].kind != FV_VARIABLE || t->alias[v]) continue;
        ExprVec l = {0};
        expr_leaves(t->c, q->rhs, EXPR_DER, &l);
        expr_leaves(t->c, q->rhs, EXPR_VAR, &l);
        bool pure = true;
        for (uint32_t k = 0; k < l.len; k++)
            pure &= l.data[k]->kind == EXPR_VAR && t->m->vars.data[l.data[k]->index].kind != FV_VARIABLE;
        if (pure) t->startv[v] = expr_eval(q->rhs, leaf_value, &ev);
    }
}

static int prio(St *t, uint32_t sv) { return t->m->vars.data[t->sv.data[sv].base].state_priority; }
static int natural(St *t, uint32_t sv) { return t->natural[t->sv.data[sv].base]; }

/* x is a natural state when one of the model's own equations defines its
 * derivative with a constant coefficient and no other derivative:
 * `der(s) = v`.  A relative quantity of a compliant element (the s_rel of
 * a damper: `f = d * der(s_rel)`) is no such definition and makes the better
 * dummy: a chain of masses then keeps the absolute positions as states and
 * its Jacobian stays banded instead of filling in.  O(size of the model). */
static void mark_natural(St *t) {
    t->natural = ARENA_ARRAY(t->arena, unsigned char, t->nflat + 1);
    for (uint32_t e = 0; e < t->neq0; e++) {
        SEq *q = &t->eq.data[e];
        int32_t d = -1;
        uint32_t nder = 0;
        for (uint32_t k = 0; k < q->ninc; k++)
            if (t->sv.data[q->inc[k]].order >= 1) { d = (int32_t)q->inc[k]; nder++; }
        if (nder != 1 || t->sv.data[d].order != 1) continue;
        Expr *c = expr_diff_once(t->c, q->res, expr_leaf(t->c, EXPR_VAR, (uint32_t)d));
        if (expr_is_const(c) && c->value != 0) t->natural[t->sv.data[d].base] = 1;
    }
}

/* class of a column: lower = picked as dummy first */
static bool same_class(St *t, uint32_t a, uint32_t b) {
    return prio(t, a) == prio(t, b) && t->sv.data[a].order == t->sv.data[b].order &&
           natural(t, a) == natural(t, b) && t->colconst[a] == t->colconst[b];
}

static int col_cmp_ctx(St *t, uint32_t a, uint32_t b) {
    if (prio(t, a) != prio(t, b)) return prio(t, a) < prio(t, b) ? -1 : 1;
    if (t->sv.data[a].order != t->sv.data[b].order) return t->sv.data[a].order > t->sv.data[b].order ? -1 : 1;
    if (natural(t, a) != natural(t, b)) return natural(t, a) ? 1 : -1;
    if (t->colconst[a] != t->colconst[b]) return t->colconst[a] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* One connected component of a selection stage: its rows (equations), its
 * columns (candidate dummies, in preference order) and the incidence both
 * ways, in local indices. */
typedef struct {
    uint32_t nr, nc;
    uint32_t *row, *col;
    uint32_t *rptr, *radj;  /* row -> local columns */
    uint32_t *cptr, *cadj;  /* column -> local rows */
} Comp;

/* A column whose entries depend on parameters only can be solved for
 * everywhere, not just near the start point: such a variable makes the
 * safer dummy.  (Joint angle vs body coordinates: `x = l cos(phi)` has
 * coefficient 1 in x, -l sin(phi) in phi; phi stays the state.)  Only the
 * incident rows are looked at: O(edges). */
static void mark_const_columns(St *t, Comp *k) {
    for (uint32_t c = 0; c < k->nc; c++) {
        bool ok = true;
        for (uint32_t i = k->cptr[c]; i < k->cptr[c + 1] && ok; i++) {
            Expr *d = expr_diff_once(t->c, t->eq.data[k->row[k->cadj[i]]].res, expr_leaf(t->c, EXPR_VAR, k->col[c]));
            ExprVec l = {0};
            expr_leaves(t->c, d, EXPR_VAR, &l);
            for (uint32_t j = 0; j < l.len && ok; j++) ok = !st_is_unknown(t, l.data[j]->index);
        }
        t->colconst[k->col[c]] = ok;
    }
}

/* stable merge sort of columns by preference: O(n log n) */
static void sort_cols(St *t, uint32_t *cols, uint32_t n) {
    uint32_t *tmp = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = col_cmp_ctx(t, cols[j], cols[i]) < 0 ? cols[j++] : cols[i++];
            while (i < mid) tmp[o++] = cols[i++];
            while (j < hi) tmp[o++] = cols[j++];
        }
        memcpy(cols, tmp, n * sizeof *cols);
    }
}

/* greedy column choice with full pivoting inside each class; picked[] out */
static uint32_t choose(St *t, double *M, uint32_t nr, uint32_t nc, uint32_t *cols, bool *picked) {
    bool *prow = ARENA_ARRAY(t->arena, bool, nr + 1);
    double scale = 0;
    for (uint32_t i = 0; i < nr * nc; i++) scale = fmax(scale, fabs(M[i]));
    double tol = 1e-10 * fmax(scale, 1e-300);
    uint32_t npiv = 0;
    for (uint32_t c0 = 0; c0 < nc && npiv < nr;) {
        uint32_t c1 = c0;
        while (c1 < nc && same_class(t, cols[c0], cols[c1])) c1++;
        for (;;) {
            uint32_t br = 0, bc = 0;
            double best = tol;
            for (uint32_t r = 0; r < nr; r++)
                for (uint32_t c = c0; c < c1; c++)
                    if (!prow[r] && !picked[c] && fabs(M[r * nc + c]) > best) { best = fabs(M[r * nc + c]); br = r; bc = c; }
            if (best <= tol) break;
            prow[br] = picked[bc] = true;
            npiv++;
            for (uint32_t r = 0; r < nr; r++) {
                if (prow[r]) continue;
                double f = M[r * nc + bc] / M[br * nc + bc];
                for (uint32_t c = 0; c < nc; c++) M[r * nc + c] -= f * M[br * nc + c];
            }
        }
        c0 = c1;
    }
    return npiv;
}

/* the component's Jacobian, dense (small components only) */
static double *jacobian(St *t, Comp *k, bool generic) {
    double *M = ARENA_ARRAY(t->arena, double, k->nr * k->nc + 1);
    Eval ev = {t, generic};
    for (uint32_t r = 0; r < k->nr; r++)
        for (uint32_t i = k->rptr[r]; i < k->rptr[r + 1]; i++) {
            uint32_t c = k->radj[i];
            Expr *d = expr_diff_once(t->c, t->eq.data[k->row[r]].res, expr_leaf(t->c, EXPR_VAR, k->col[c]));
            /* expr_eval recurses over the tree: huge entries count as generic */
            double x = expr_is_const(d) ? d->value
                       : expr_tree_size(t->c, d, 100000) > 100000 ? 1 : expr_eval(d, leaf_value, &ev);
            M[r * k->nc + c] = isfinite(x) ? x : 0;
        }
    return M;
}

/* Large components: the structural greedy choice (transversal matroid):
 * columns in preference order, each taken when an augmenting path (DFS,
 * Kuhn) matches it to a row.  Structurally nonsingular; numerically it
 * relies on the preference classes.  The DFS keeps its own stack (a chain
 * of n links gives paths of length ~n: recursion would overflow the C
 * stack); per column it first looks for a free row, then tries to move
 * the column matched to each row not yet tried.  A row is checked for
 * being free and tried at most once per augmenting search (two marks:
 * one would let a later free check clear the other and revisit rows
 * without bound), so one search is O(incidences). */
typedef struct { uint32_t c, i, r; } AugFrame;

/* the first free unvisited row of column c (rows visited get `stamp`), or -1 */
static int64_t free_row(Comp *k, uint32_t c, const int32_t *rowm, uint32_t *seen, uint32_t stamp) {
    for (uint32_t i = k->cptr[c]; i < k->cptr[c + 1]; i++) {
        uint32_t r = k->cadj[i];
        if (seen[r] == stamp) continue;
        seen[r] = stamp;
        if (rowm[r] < 0) return r;
    }
    return -1;
}

static bool augment_col(Comp *k, uint32_t c0, int32_t *rowm, uint32_t *seen, uint32_t *tried, uint32_t stamp,
                        AugFrame *st) {
    uint32_t top = 0;
    int64_t r = free_row(k, c0, rowm, seen, stamp);
    st[0] = (AugFrame){c0, k->cptr[c0], 0};
    while (r < 0) {
        AugFrame *f = &st[top];
        if (f->i == k->cptr[f->c + 1]) { /* column exhausted: back up */
            if (top-- == 0) return false;
            continue;
        }
        uint32_t row = k->cadj[f->i++];
        if (tried[row] == stamp) continue;
        tried[row] = stamp;
        f->r = row;
        uint32_t c = (uint32_t)rowm[row];
        st[++top] = (AugFrame){c, k->cptr[c], 0};
        r = free_row(k, c, rowm, seen, stamp);
    }
    rowm[r] = (int32_t)st[top].c; /* flip the path */
    while (top-- > 0) rowm[st[top].r] = (int32_t)st[top].c;
    return true;
}

static uint32_t choose_structural(St *t, Comp *k, bool *picked) {
    int32_t *rowm = ARENA_ARRAY(t->arena, int32_t, k->nr + 1);
    uint32_t *seen = ARENA_ARRAY(t->arena, uint32_t, k->nr + 1);
    uint32_t *tried = ARENA_ARRAY(t->arena, uint32_t, k->nr + 1);
    AugFrame *st = ARENA_ARRAY(t->arena, AugFrame, k->nr + 2);
    for (uint32_t r = 0; r < k->nr; r++) rowm[r] = -1;
    uint32_t n = 0;
    for (uint32_t c = 0; c < k->nc && n < k->nr; c++)
        if (augment_col(k, c, rowm, seen, tried, c + 1, st)) { picked[c] = true; n++; }
    return n;
}

#define DENSE_STAGE_MAX 64  /* components up to this many rows are pivoted numerically */

/* CSR incidence of a component both ways, in the current column order
 * (lc: scratch sv -> local column) */
static void comp_incidence(St *t, Comp *k, int32_t *lc) {
    for (uint32_t c = 0; c < k->nc; c++) lc[k->col[c]] = (int32_t)c;
    k->rptr = ARENA_ARRAY(t->arena, uint32_t, k->nr + 1);
    k->cptr = ARENA_ARRAY(t->arena, uint32_t, k->nc + 2);
    uint32_t ne = 0;
    for (uint32_t r = 0; r < k->nr; r++) {
        SEq *q = &t->eq.data[k->row[r]];
        for (uint32_t i = 0; i < q->ninc; i++) ne += lc[q->inc[i]] >= 0;
    }
    k->radj = ARENA_ARRAY(t->arena, uint32_t, ne + 1);
    k->cadj = ARENA_ARRAY(t->arena, uint32_t, ne + 1);
    ne = 0;
    for (uint32_t r = 0; r < k->nr; r++) {
        SEq *q = &t->eq.data[k->row[r]];
        for (uint32_t i = 0; i < q->ninc; i++)
            if (lc[q->inc[i]] >= 0) { k->radj[ne++] = (uint32_t)lc[q->inc[i]]; k->cptr[lc[q->inc[i]] + 2]++; }
        k->rptr[r + 1] = ne;
    }
    for (uint32_t c = 0; c < k->nc; c++) k->cptr[c + 2] += k->cptr[c + 1];
    for (uint32_t r = 0; r < k->nr; r++)
        for (uint32_t i = k->rptr[r]; i < k->rptr[r + 1]; i++) k->cadj[k->cptr[k->radj[i] + 1]++] = r;
    for (uint32_t c = 0; c < k->nc; c++) lc[k->col[c]] = -1;
}

/* pick k->nr dummies among the component's columns; the picked go to `out` */
static bool stage_comp(St *t, Comp *k, int32_t *lc, U32Vec *out) {
    comp_incidence(t, k, lc);
    mark_const_columns(t, k);
    sort_cols(t, k->col, k->nc); /* preference order, then the incidence again */
    comp_incidence(t, k, lc);
    bool *picked = ARENA_ARRAY(t->arena, bool, k->nc + 1);
    uint32_t got = 0;
    for (int pass = 0; pass < 2 && got < k->nr; pass++) {
        memset(picked, 0, (k->nc + 1) * sizeof *picked);
        got = k->nr > DENSE_STAGE_MAX ? choose_structural(t, k, picked)
                                      : choose(t, jacobian(t, k, pass == 1), k->nr, k->nc, k->col, picked);
        if (k->nr > DENSE_STAGE_MAX) break;
    }
    if (got < k->nr) {
        U32Vec rows = {k->row, k->nr, k->nr}, cols = {k->col, k->nc, k->nc};
        st_singular(t, &rows, &cols, "no nonsingular choice of dummy derivatives exists");
        return false;
    }
    for (uint32_t c = 0; c < k->nc; c++)
        if (picked[c]) vec_push(t->arena, out, k->col[c]);
    return true;
}

static uint32_t uf_root(uint32_t *uf, uint32_t x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

/* Split a stage into connected components (union-find over rows sharing a
 * column) and build each one's incidence with columns in preference order.
 * O(edges log edges). */
static bool stage(St *t, U32Vec *rows, U32Vec *cols, U32Vec *out) {
    uint32_t nr = rows->len;
    int32_t *lc = ARENA_ARRAY(t->arena, int32_t, t->sv.len + 1);   /* sv -> column position */
    int32_t *first = ARENA_ARRAY(t->arena, int32_t, cols->len + 1); /* column -> first row */
    uint32_t *uf = ARENA_ARRAY(t->arena, uint32_t, nr + 1);
    for (uint32_t i = 0; i < t->sv.len; i++) lc[i] = -1;
    for (uint32_t c = 0; c < cols->len; c++) { lc[cols->data[c]] = (int32_t)c; first[c] = -1; }
    /* lc is reused per component below; columns of no row are never candidates */
    for (uint32_t r = 0; r < nr; r++) uf[r] = r;
    for (uint32_t r = 0; r < nr; r++) {
        SEq *q = &t->eq.data[rows->data[r]];
        for (uint32_t i = 0; i < q->ninc; i++) {
            int32_t c = lc[q->inc[i]];
            if (c < 0) continue;
            if (first[c] < 0) first[c] = (int32_t)r;
            else uf[uf_root(uf, r)] = uf_root(uf, (uint32_t)first[c]);
        }
    }
    /* group rows and columns by root, in order: deterministic */
    for (uint32_t c = 0; c < cols->len; c++) lc[cols->data[c]] = -1;
    uint32_t *rown = ARENA_ARRAY(t->arena, uint32_t, nr + 1), *coln = ARENA_ARRAY(t->arena, uint32_t, nr + 1);
    for (uint32_t r = 0; r < nr; r++) rown[uf_root(uf, r)]++;
    for (uint32_t c = 0; c < cols->len; c++) if (first[c] >= 0) coln[uf_root(uf, (uint32_t)first[c])]++;
    Comp *comp = ARENA_ARRAY(t->arena, Comp, nr + 1);
    for (uint32_t r = 0; r < nr; r++) {
        if (uf_root(uf, r) != r) continue;
        comp[r].row = ARENA_ARRAY(t->arena, uint32_t, rown[r] + 1);
        comp[r].col = ARENA_ARRAY(t->arena, uint32_t, coln[r] + 1);
    }
    for (uint32_t r = 0; r < nr; r++) { Comp *k = &comp[uf_root(uf, r)]; k->row[k->nr++] = rows->data[r]; }
    for (uint32_t c = 0; c < cols->len; c++)
        if (first[c] >= 0) { Comp *k = &comp[uf_root(uf, (uint32_t)first[c])]; k->col[k->nc++] = cols->data[c]; }
    for (uint32_t r = 0; r < nr; r++) {
        if (uf_root(uf, r) != r) continue;
        if (!stage_comp(t, &comp[r], lc, out)) return false;
    }
    return true;
}

static bool select_dummies(St *t) {
    start_values(t);
    mark_natural(t);
    t->colconst = ARENA_ARRAY(t->arena, unsigned char, t->sv.len + 1);
    U32Vec rows = {0}, cols = {0};
    unsigned char *seen = ARENA_ARRAY(t->arena, unsigned char, t->sv.len + 1);
    for (uint32_t e = 0; e < t->eq.len; e++)
        if (t->eq.data[e].diff < 0 && t->eq.data[e].order >= 1) vec_push(t->arena, &rows, e);
    for (uint32_t i = 0; i < rows.len; i++) {
        SEq *q = &t->eq.data[rows.data[i]];
        for (uint32_t k = 0; k < q->ninc; k++) {
            uint32_t v = q->inc[k];
            if (seen[v] || t->sv.data[v].der >= 0 || t->sv.data[v].order == 0) continue;
            seen[v] = 1;
            vec_push(t->arena, &cols, v);
        }
    }
    while (rows.len) {
        U32Vec picked = {0}, nrows = {0}, ncols = {0};
        if (!stage(t, &rows, &cols, &picked)) return false;
        for (uint32_t i = 0; i < picked.len; i++) {
            SVar *v = &t->sv.data[picked.data[i]];
            v->dummy = true;
            if (v->order >= 2) vec_push(t->arena, &ncols, (uint32_t)v->prim);
        }
        for (uint32_t i = 0; i < rows.len; i++) {
            int32_t p = t->eq.data[rows.data[i]].prim;
            if (p >= 0 && t->eq.data[p].order >= 1) vec_push(t->arena, &nrows, (uint32_t)p);
        }
        rows = nrows;
        cols = ncols;
    }
    return true;
}

/* ---------- roles ---------- */

/* A state x^(k) (k >= 1) whose own primitive is a state too: y' of the
 * primitive gets a variable of its own with the equation  y' - x^(k) = 0. */
static void chain_state(St *t, uint32_t sv) {
    SVar v = {.base = t->sv.data[sv].base, .order = t->sv.data[sv].order, .der = -1, .prim = -1,
              .yp_of = t->sv.data[sv].prim, .role = SR_DERIV, .slot = -1};
    vec_push(t->arena, &t->sv, v);
    uint32_t d = t->sv.len - 1;
    SEq q = {.res = expr_sub(t->c, expr_leaf(t->c, EXPR_VAR, d), expr_leaf(t->c, EXPR_VAR, sv)),
             .flat = -1, .diff = -1, .prim = -1};
    vec_push(t->arena, &t->eq, q);
    st_incidence(t, t->eq.len - 1);
}

static void assign_roles(St *t) {
    uint32_t n = t->sv.len;
    for (uint32_t i = 0; i < n; i++) {
        SVar *v = &t->sv.data[i];
        if (!st_is_unknown(t, i)) continue;
        v->role = v->der >= 0 && !t->sv.data[v->der].dummy ? SR_STATE : SR_ALG;
    }
    for (uint32_t i = 0; i < n; i++) {
        SVar *v = &t->sv.data[i];
        if (v->role == SR_NONE || v->prim < 0 || t->sv.data[v->prim].role != SR_STATE) continue;
        if (v->role == SR_STATE) chain_state(t, i);
        else { v->role = SR_DERIV; v->yp_of = v->prim; }
    }
}

bool struct_select_states(St *t) {
    if (t->eq.len > t->neq0 && !select_dummies(t)) return false;
    assign_roles(t);
    return true;
}
