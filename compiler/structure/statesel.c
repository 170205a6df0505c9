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
 * Static where safe, dynamic where not (choose()): within a group of one
 * statePriority and derivative order the constant pivots come first; a
 * group whose varying pivots are a choice among more candidates than rows
 * becomes a state set (stateset.c), chosen at run time.
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
    Expr *e = fv->value ? fv->value : flat_attr(t->m, fv)->guess;
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
        Expr *g = flat_attr(t->m, fv)->guess;
        if (fv->kind == FV_VARIABLE && g) t->startv[v] = expr_eval(g, leaf_value, &ev);
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

static int prio(St *t, uint32_t sv) { return flat_attr(t->m, &t->m->vars.data[t->sv.data[sv].base])->state_priority; }
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
        Expr *c = expr_diff_once(t->c, st_eq_res(t, e), expr_leaf(t->c, EXPR_VAR, (uint32_t)d));
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
            Expr *d = expr_diff_once(t->c, st_eq_res(t, k->row[k->cadj[i]]), expr_leaf(t->c, EXPR_VAR, k->col[c]));
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

/* A stage component's Jacobian, dense: values at the start point and, per
 * entry, whether it is structurally zero, constant (parameters only) or
 * varies with the unknowns or time.  Elimination keeps the kinds
 * conservatively: a fill-in or update varies when anything it is made of
 * varies. */
enum { ENT_ZERO, ENT_CONST, ENT_VARIES };

typedef struct {
    uint32_t nr, nc;
    double *M;             /* [nr * nc] row-major */
    unsigned char *F;      /* [nr * nc] ENT_* */
    bool *prow, *picked;   /* pivoted rows, picked columns */
    bool *cand;            /* the state set's candidate columns (choose) */
    uint32_t *order;       /* picked columns in pivot order */
    uint32_t npiv;
    double tol;
} Mat;

static void eliminate(Mat *a, uint32_t br, uint32_t bc) {
    uint32_t nc = a->nc;
    a->prow[br] = a->picked[bc] = true;
    a->order[a->npiv++] = bc;
    for (uint32_t r = 0; r < a->nr; r++) {
        if (a->prow[r] || a->F[r * nc + bc] == ENT_ZERO) continue;
        double f = a->M[r * nc + bc] / a->M[br * nc + bc];
        bool vary = a->F[r * nc + bc] == ENT_VARIES || a->F[br * nc + bc] == ENT_VARIES;
        for (uint32_t c = 0; c < nc; c++) {
            unsigned char fb = a->F[br * nc + c];
            if (fb == ENT_ZERO) continue;
            a->M[r * nc + c] -= f * a->M[br * nc + c];
            unsigned char k = vary || fb == ENT_VARIES ? ENT_VARIES : ENT_CONST;
            if (a->F[r * nc + c] < k) a->F[r * nc + c] = k;
        }
        a->F[r * nc + bc] = ENT_ZERO;
    }
}

/* the largest pivot in columns [c0, c1), constant entries only when
 * `constant`; false when none is above the tolerance */
static bool best_pivot(const Mat *a, uint32_t c0, uint32_t c1, bool constant, uint32_t *br, uint32_t *bc) {
    double best = a->tol;
    for (uint32_t r = 0; r < a->nr; r++)
        for (uint32_t c = c0; c < c1; c++) {
            unsigned char f = a->F[r * a->nc + c];
            if (a->prow[r] || a->picked[c] || f == ENT_ZERO || (constant && f != ENT_CONST)) continue;
            if (fabs(a->M[r * a->nc + c]) > best) { best = fabs(a->M[r * a->nc + c]); *br = r; *bc = c; }
        }
    return best > a->tol;
}

/* unpicked columns of [c0, c1) with a structural entry in an unpivoted
 * row, marked in mask */
static uint32_t available(const Mat *a, uint32_t c0, uint32_t c1, bool *mask) {
    uint32_t n = 0;
    for (uint32_t c = c0; c < c1; c++) {
        bool any = false;
        for (uint32_t r = 0; r < a->nr && !any && !a->picked[c]; r++) any = !a->prow[r] && a->F[r * a->nc + c];
        mask[c] = any;
        n += any;
    }
    return n;
}

/* Greedy column choice in preference order.  Columns of one statePriority
 * and derivative order form a group; within it, first the constant pivots
 * (class by class, largest first), then full pivoting on the rest (class by
 * class).  A group whose varying pivots were chosen among more candidates
 * than rows were left, and which completes the component, is a
 * configuration-dependent choice: it becomes a state set (stateset.c) when
 * its candidates are first derivatives and no statePriority orders them:
 * a->cand marks its candidates and *nfixed counts the pivots before its
 * varying ones (UINT32_MAX: no set).  Returns the number of pivots. */
static bool same_group(St *t, uint32_t a, uint32_t b) {
    return prio(t, a) == prio(t, b) && t->sv.data[a].order == t->sv.data[b].order;
}

static uint32_t choose(St *t, Mat *a, uint32_t *cols, uint32_t *nfixed) {
    bool *mask = ARENA_ARRAY(t->arena, bool, a->nc + 1);
    *nfixed = UINT32_MAX;
    for (uint32_t g0 = 0; g0 < a->nc && a->npiv < a->nr;) {
        uint32_t g1 = g0, br = 0, bc = 0;
        while (g1 < a->nc && same_group(t, cols[g0], cols[g1])) g1++;
        for (int varying = 0; varying < 2; varying++) {
            uint32_t before = a->npiv, avail = varying ? available(a, g0, g1, mask) : 0;
            for (uint32_t c0 = g0, c1; c0 < g1; c0 = c1) {
                for (c1 = c0; c1 < g1 && same_class(t, cols[c0], cols[c1]);) c1++;
                while (best_pivot(a, c0, c1, !varying, &br, &bc)) eliminate(a, br, bc);
            }
            uint32_t nvar = a->npiv - before;
            if (varying && nvar && a->npiv == a->nr && avail > nvar && t->sv.data[cols[g0]].order == 1 &&
                prio(t, cols[g0]) == 0 && !t->opt.static_states) {
                *nfixed = before;
                a->cand = mask;
            }
        }
        g0 = g1;
    }
    return a->npiv;
}

/* the component's Jacobian, dense (small components only) */
static Mat jacobian(St *t, Comp *k, bool generic) {
    Mat a = {.nr = k->nr, .nc = k->nc, .M = ARENA_ARRAY(t->arena, double, k->nr * k->nc + 1),
             .F = ARENA_ARRAY(t->arena, unsigned char, k->nr * k->nc + 1),
             .prow = ARENA_ARRAY(t->arena, bool, k->nr + 1), .picked = ARENA_ARRAY(t->arena, bool, k->nc + 1),
             .order = ARENA_ARRAY(t->arena, uint32_t, k->nc + 1)};
    Eval ev = {t, generic};
    double scale = 0;
    for (uint32_t r = 0; r < k->nr; r++)
        for (uint32_t i = k->rptr[r]; i < k->rptr[r + 1]; i++) {
            uint32_t c = k->radj[i];
            Expr *d = expr_diff_once(t->c, st_eq_res(t, k->row[r]), expr_leaf(t->c, EXPR_VAR, k->col[c]));
            /* expr_eval recurses over the tree: huge entries count as generic */
            double x = expr_is_const(d) ? d->value
                       : expr_tree_size(t->c, d, 100000) > 100000 ? 1 : expr_eval(d, leaf_value, &ev);
            a.M[r * k->nc + c] = isfinite(x) ? x : 0;
            a.F[r * k->nc + c] = expr_is_const_value(d, 0) ? ENT_ZERO : st_varies(t, d) ? ENT_VARIES : ENT_CONST;
            scale = fmax(scale, fabs(a.M[r * k->nc + c]));
        }
    a.tol = 1e-10 * fmax(scale, 1e-300);
    return a;
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

/* The configuration-dependent class of a component (choose) as a state
 * set; its candidates all become dummies (stateset.c), so they are picked
 * here too. */
static void add_set(St *t, Comp *k, Mat *a, uint32_t nfixed) {
    uint32_t *fixed = ARENA_ARRAY(t->arena, uint32_t, nfixed + 1), *cand = ARENA_ARRAY(t->arena, uint32_t, k->nc + 1);
    bool *dummy = ARENA_ARRAY(t->arena, bool, k->nc + 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < nfixed; i++) fixed[i] = k->col[a->order[i]];
    for (uint32_t c = 0; c < k->nc; c++)
        if (a->cand[c]) { dummy[n] = a->picked[c]; cand[n++] = k->col[c]; a->picked[c] = true; }
    st_add_set(t, k->row, k->nr, fixed, nfixed, cand, n, dummy);
}

/* pick k->nr dummies among the component's columns; the picked go to
 * `out`, a configuration-dependent choice becomes a state set */
static bool stage_comp(St *t, Comp *k, int32_t *lc, U32Vec *out) {
    comp_incidence(t, k, lc);
    mark_const_columns(t, k);
    sort_cols(t, k->col, k->nc); /* preference order, then the incidence again */
    comp_incidence(t, k, lc);
    bool *picked = ARENA_ARRAY(t->arena, bool, k->nc + 1);
    uint32_t got = 0, nfixed = UINT32_MAX;
    Mat a = {0};
    for (int pass = 0; pass < 2 && got < k->nr; pass++) {
        if (k->nr > DENSE_STAGE_MAX) {
            memset(picked, 0, (k->nc + 1) * sizeof *picked);
            got = choose_structural(t, k, picked);
            break;
        }
        a = jacobian(t, k, pass == 1);
        got = choose(t, &a, k->col, &nfixed);
        picked = a.picked;
    }
    if (got < k->nr) {
        U32Vec rows = {k->row, k->nr, k->nr}, cols = {k->col, k->nc, k->nc};
        st_singular(t, &rows, &cols, NULL, "no nonsingular choice of dummy derivatives exists");
        return false;
    }
    if (got == k->nr && nfixed != UINT32_MAX) add_set(t, k, &a, nfixed);
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
    st_build_sets(t);
    assign_roles(t);
    return true;
}
