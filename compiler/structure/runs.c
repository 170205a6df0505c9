/*
 * runs.c -- the symbolic work of BLT's single blocks done once per run of
 * like instances of one equation template instead of once per instance
 * (docs/ARCHITECTURE.md, "Arrays", stage 3 step 2).
 *
 * A single block (one equation, one unknown v) costs the scalar path a
 * substitution of the assigned variables into its residual, a derivative
 * and a linear solve for v (solve.c), and the support count of the
 * solution (blt.c).  Every step is built by the Expr constructors, which
 * decide from kinds, constants, pointer equality and the canonical operand
 * order (expr_cmp_canon: leaves by kind, then index) only.  So when two
 * blocks are the same computation on leaves that are an *order-preserving
 * renaming* of each other, the second block's results are the first
 * block's renamed: instantiating the solution is the whole work.
 *
 * The key of a block says when that holds.  The block's equation must be
 * an instance of a uniform template (templates.c) whose leaves are plain
 * structural variables (no alias, no derivative of a parameter); the
 * key lists, over the positions
 *   - the template's leaves (their structural variables), then
 *   - for each leaf that the substitution replaces by a value (an
 *     assigned variable, a state derivative with an explicit value), the
 *     variables that value is over -- allowed only when the value was
 *     itself instantiated here (its run is part of the key; a value the
 *     scalar path computed makes the block fall back to it),
 * each position's class (role, variable kind, derivative order) and its
 * rank among the distinct variables of all positions, plus the template,
 * which leaf v is and whether v has one reader (blt.c's width rule).  Two
 * blocks with one key have isomorphic inputs; the renaming is the one
 * between their distinct variables in ascending order, which is
 * order-preserving, so every constructor makes the same decision.
 *
 * The first block of a key is computed by the scalar path and becomes the
 * run's representative; later ones rename its results (a leaf the
 * renaming does not know, which the rule above excludes, makes the block
 * fall back too).  The instances of a template that are consecutive in
 * BLT order and share a key are the *runs* of the design: the key
 * changes where the writer of a leaf changes (the RC ladder's der(v[1])
 * reads i[1], written by an equation of its own), and nothing else
 * splits them.  Cost per block: O(p log p) integers for p positions, and
 * one rebuild of the solution (no substitution memo, no derivative, no
 * solve, no support walk).
 */
#include "structure_internal.h"

#include <string.h>

struct StRunEnt {
    StRunEnt *next;        /* the next entry with the same hash */
    uint32_t *key, nkey;
    uint32_t *dist, nd;    /* the representative's distinct variables, ascending */
    uint8_t kind;          /* SysBlockKind: SB_ASSIGN, SB_STATE_DER, SB_IMPLICIT */
    Expr *x;               /* the solution for v, or NULL */
    Expr *r;               /* the residual row (not SB_ASSIGN) */
    Expr *coef;            /* the parameter coefficient checked nonzero, or NULL */
    uint32_t *exp, nexp;   /* ranks of the variables x is over (what readers see) */
    uint32_t id;
    int32_t row;           /* the representative's residual row, or -1 */
    Expr **low;            /* its variables lowered (NULL: no leaf), or NULL */
    Expr *low_res;         /* its residual row lowered */
    uint32_t v;            /* the representative's unknown */
    Expr **vlow;           /* the variables its value is over lowered, or NULL */
    uint8_t loops;         /* its rows as loop items: 0 not asked yet, 1 may be, 2 not
                              (a relation, or a leaf no loop item shifts: the same
                              in every row, the rows being one renamed row) */
};

/* a residual row of a run (the representative's too): its run and
 * variables; after lowering, its variables' leaves when the row is the
 * representative's (renamed) */
struct StRunRow {
    const StRunEnt *ent;
    const uint32_t *dist;
    Expr **to;
    Expr *res;
};

/* what a value-setting block leaves for its readers: its run and the
 * variables its value is over (ascending) */
struct StRunRec {
    const StRunEnt *ent;
    uint32_t n;
    uint32_t sv[];
};

static bool writes_value(const St *t, uint32_t sv) {
    const SVar *v = &t->sv.data[sv];
    return v->role == SR_ASSIGNED || (v->role == SR_DERIV && st_has_value(v));
}

static uint32_t sv_class(const St *t, uint32_t sv) {
    const SVar *v = &t->sv.data[sv];
    return (uint32_t)v->role | (uint32_t)t->m->vars.data[v->base].kind << 4 | (v->order ? 1u << 12 : 0);
}

static bool push_key(StRun *r, uint32_t x) {
    if (r->nkey == ST_RUN_MAX_KEY) return false;
    r->key[r->nkey++] = x;
    return true;
}

/* the distinct variables of the positions, ascending; each position's rank */
static bool rank_positions(StRun *r) {
    memcpy(r->dist, r->pos, sizeof *r->pos * r->npos);
    for (uint32_t i = 1; i < r->npos; i++) /* insertion sort: p <= ST_RUN_MAX_POS */
        for (uint32_t j = i; j && r->dist[j - 1] > r->dist[j]; j--) {
            uint32_t s = r->dist[j];
            r->dist[j] = r->dist[j - 1], r->dist[j - 1] = s;
        }
    r->nd = 0;
    for (uint32_t i = 0; i < r->npos; i++)
        if (!r->nd || r->dist[r->nd - 1] != r->dist[i]) r->dist[r->nd++] = r->dist[i];
    for (uint32_t i = 0; i < r->npos; i++) {
        uint32_t lo = 0, hi = r->nd;
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            if (r->dist[mid] <= r->pos[i]) lo = mid;
            else hi = mid;
        }
        if (!push_key(r, lo) || !push_key(r, r->cls[i])) return false;
    }
    return true;
}

bool st_run_key(St *t, uint32_t e, uint32_t v, bool one_reader, StRun *r) {
    const SEq *q = &t->eq.data[e];
    if (e >= t->neq0 || q->order || q->prim >= 0 || q->flat < 0) return false;
    const FlatEq *f = &t->m->eqs.data[q->flat];
    const StTmpl *k = st_tmpl(t, f);
    uint32_t var[ST_TMPL_MAX_LEAVES];
    if (!k || !st_tmpl_leaves(t, k, f->inst, var)) return false;
    r->k = k, r->e = e, r->v = v, r->npos = r->nkey = 0, r->jv = UINT32_MAX, r->ent = NULL;
    uintptr_t id = (uintptr_t)k->q;
    push_key(r, (uint32_t)id), push_key(r, (uint32_t)((uint64_t)id >> 32)), push_key(r, k->nleaves);
    push_key(r, one_reader);
    for (uint32_t j = 0; j < k->nleaves; j++) {
        int64_t s = st_tmpl_leaf_sv(t, k, j, var[j]);
        if (s < 0) return false;
        if ((uint32_t)s == v) r->jv = j;
        r->cls[r->npos] = sv_class(t, (uint32_t)s);
        r->pos[r->npos++] = (uint32_t)s;
    }
    if (r->jv == UINT32_MAX || !push_key(r, r->jv)) return false;
    for (uint32_t j = 0; j < k->nleaves; j++) {
        uint32_t s = r->pos[j];
        if (!writes_value(t, s)) continue;
        const StRunRec *w = t->run_rec[s];
        if (!w || r->npos + w->n > ST_RUN_MAX_POS) return false;
        if (!push_key(r, j) || !push_key(r, w->ent->id) || !push_key(r, w->n)) return false;
        for (uint32_t i = 0; i < w->n; i++) {
            r->cls[r->npos] = sv_class(t, w->sv[i]);
            r->pos[r->npos++] = w->sv[i];
        }
    }
    if (!rank_positions(r)) return false;
    uint64_t h = hash_bytes(r->key, sizeof *r->key * r->nkey);
    r->hash = h ? h : 1;
    for (StRunEnt *x = hmap_get(&t->runs, r->hash); x; x = x->next)
        if (x->nkey == r->nkey && !memcmp(x->key, r->key, sizeof *r->key * r->nkey)) { r->ent = x; break; }
    return true;
}

/* ---------- renaming the representative's results ---------- */

/* variables (VAR leaves) from[i] -> to[i], from ascending; or, with lfrom
 * set, lowered leaves (Y, YP, P) lfrom[i] -> lto[i] */
typedef struct {
    St *t;
    const uint32_t *from, *to;
    uint32_t n;
    bool ok;
    Expr *const *lfrom, *const *lto;
} Ren;

static Expr *ren_low_leaf(Ren *p, Expr *leaf) {
    if (leaf->kind != EXPR_Y && leaf->kind != EXPR_YP && leaf->kind != EXPR_P) return leaf;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->lfrom[i] == leaf) return p->lto[i];
    p->ok = false;
    return leaf;
}

static Expr *ren_leaf(void *ud, Expr *leaf) {
    Ren *p = ud;
    if (p->lfrom) return ren_low_leaf(p, leaf);
    if (leaf->kind != EXPR_VAR) return leaf;
    uint32_t lo = 0, hi = p->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (p->from[mid] < leaf->index) lo = mid + 1;
        else hi = mid;
    }
    if (lo == p->n || p->from[lo] != leaf->index) { p->ok = false; return leaf; }
    return expr_leaf(p->t->c, EXPR_VAR, p->to[lo]);
}

static Expr *ren_expr(Ren *p, Expr *e) {
    if (!e) return NULL;
    return expr_subst_small(p->t->c, e, ren_leaf, p, 256);
}

/* The solution and the row of an instance are left to be renamed when
 * asked (st_sv_value, st_resid_sv): the leaves of the representative's
 * are among its variables (new_entry), so that cannot fail.  The
 * coefficient is checked now, in BLT order. */
bool st_run_apply(St *t, const StRun *r, StRunOut *o) {
    const StRunEnt *x = r->ent;
    if (!x || x->nd != r->nd) return false;
    Ren p = {t, x->dist, r->dist, r->nd, true, NULL, NULL};
    *o = (StRunOut){.kind = x->kind, .coef = ren_expr(&p, x->coef), .later = true, .has_x = x->x != NULL};
    if (!p.ok) return false;
    if (o->coef) st_coef_check(t, o->coef, expr_leaf(t->c, EXPR_VAR, r->v), t->eq.data[r->e].flat);
    return true;
}

static void internal_rename(const char *what) {
    diag_internal("structure: the %s of a run's instance is not its representative's renamed", what);
}

Expr *st_sv_value(St *t, uint32_t sv) {
    if (!t->sv.data[sv].run_value || t->sv.data[sv].value) return t->sv.data[sv].value;
    const StRunRec *w = t->run_rec[sv];
    const StRunEnt *x = w->ent;
    uint32_t from[ST_RUN_MAX_POS]; /* the variables x is over, ascending (export_ranks) */
    for (uint32_t i = 0; i < x->nexp; i++) from[i] = x->dist[x->exp[i]];
    Ren p = {t, from, w->sv, w->n, true, NULL, NULL};
    Expr *v = ren_expr(&p, x->x);
    if (!p.ok) internal_rename("value");
    return t->sv.data[sv].value = v;
}

Expr *st_resid_sv(St *t, uint32_t r) {
    if (t->resid_sv.data[r]) return t->resid_sv.data[r];
    const StRunRow *w = r < t->run_rows.len ? t->run_rows.data[r] : NULL;
    if (!w) {
        internal_rename("residual row");
        return t->resid_sv.data[r] = expr_const(t->c, 0);
    }
    Ren p = {t, w->ent->dist, w->dist, w->ent->nd, true, NULL, NULL};
    Expr *e = ren_expr(&p, w->ent->r);
    if (!p.ok) internal_rename("residual row");
    return t->resid_sv.data[r] = e;
}

Expr *st_block_res(St *t, Block *b) { return b->res ? b->res : (b->res = st_resid_sv(t, b->row)); }

/* ---------- recording ---------- */

/* are the variables e is over among dist? */
static bool over_dist(St *t, const StRun *r, Expr *e) {
    ExprVec *l = &t->leaves;
    l->len = 0;
    if (e) expr_leaves(t->c, e, EXPR_VAR, l);
    for (uint32_t i = 0; i < l->len; i++) {
        uint32_t j = 0;
        while (j < r->nd && r->dist[j] != l->data[i]->index) j++;
        if (j == r->nd) return false;
    }
    return true;
}

/* the ranks (in dist) of the variables x is over; false when one is not
 * among them */
static bool export_ranks(St *t, const StRun *r, Expr *x, StRunEnt *ent) {
    ExprVec *l = &t->leaves;
    l->len = 0;
    if (x) expr_leaves(t->c, x, EXPR_VAR, l);
    ent->exp = ARENA_ARRAY(t->arena, uint32_t, l->len + 1);
    for (uint32_t i = 0; i < l->len; i++) {
        uint32_t s = l->data[i]->index, j = 0;
        while (j < r->nd && r->dist[j] != s) j++;
        if (j == r->nd) return false;
        ent->exp[ent->nexp++] = j;
    }
    for (uint32_t i = 1; i < ent->nexp; i++) /* ascending ranks: ascending variables */
        for (uint32_t j = i; j && ent->exp[j - 1] > ent->exp[j]; j--) {
            uint32_t s = ent->exp[j];
            ent->exp[j] = ent->exp[j - 1], ent->exp[j - 1] = s;
        }
    return true;
}

static StRunEnt *new_entry(St *t, const StRun *r, const StRunOut *o) {
    StRunEnt *x = ARENA_NEW(t->arena, StRunEnt);
    if (!over_dist(t, r, o->r) || !over_dist(t, r, o->coef) || !export_ranks(t, r, o->x, x)) return NULL;
    x->key = ARENA_ARRAY(t->arena, uint32_t, r->nkey);
    memcpy(x->key, r->key, sizeof *r->key * r->nkey);
    x->nkey = r->nkey;
    x->dist = ARENA_ARRAY(t->arena, uint32_t, r->nd);
    memcpy(x->dist, r->dist, sizeof *r->dist * r->nd);
    x->nd = r->nd;
    x->kind = o->kind, x->x = o->x, x->coef = o->coef;
    x->r = o->r;
    x->id = ++t->nrun_ent;
    x->row = -1;
    x->v = r->v;
    x->next = hmap_get(&t->runs, r->hash);
    hmap_put(t->arena, &t->runs, r->hash, x);
    return x;
}

/* the residual row about to be pushed belongs to run x */
static void note_row(St *t, StRunEnt *x, const StRun *r) {
    uint32_t row = t->resid_sv.len;
    if (x->row < 0) x->row = (int32_t)row;
    StRunRow *w = ARENA_NEW(t->arena, StRunRow);
    w->ent = x;
    uint32_t *d = ARENA_ARRAY(t->arena, uint32_t, r->nd);
    memcpy(d, r->dist, sizeof *d * r->nd);
    w->dist = d;
    while (t->run_rows.len < row) vec_push(t->arena, &t->run_rows, NULL);
    vec_push(t->arena, &t->run_rows, w);
}

void st_run_note(St *t, StRun *r, const StRunOut *o, bool applied) {
    if (!applied && r->ent) return; /* the representative's renaming failed */
    StRunEnt *x = applied ? r->ent : new_entry(t, r, o);
    if (!x) return;
    if (o->kind != SB_ASSIGN) note_row(t, x, r);
    bool value = x->kind == SB_ASSIGN || (x->kind == SB_STATE_DER && x->x);
    if (!value) return;
    StRunRec *w = arena_alloc(t->arena, sizeof *w + sizeof *w->sv * (x->nexp + 1));
    w->ent = x;
    w->n = x->nexp;
    for (uint32_t i = 0; i < x->nexp; i++) w->sv[i] = r->dist[x->exp[i]];
    t->run_rec[r->v] = w;
}

/* ---------- rows of a run (stage 3 step 3, in part) ----------
 *
 * Lowering (VAR(sv) -> Y, YP, P) and differentiation are constructor
 * rebuilds too: a row of an instance lowers to the representative's
 * lowered row renamed when the lowered leaves keep the order the
 * variables had (slots are not numbered in variable order everywhere:
 * y' slots follow their states), so that is checked per row; its
 * Jacobian entries are then the representative's renamed, column for
 * column. */

/* A lowered leaf on integers: its kind and index (kind LOW_NONE: no leaf). */
typedef struct {
    uint32_t kind, index;
} LowLeaf;
#define LOW_NONE UINT32_MAX

static LowLeaf low_of(const Expr *e) { return e ? (LowLeaf){e->kind, e->index} : (LowLeaf){LOW_NONE, 0}; }

/* a before b in the canonical order of leaves: kind, then index */
static int leaf_cmp(LowLeaf a, LowLeaf b) {
    if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
    return a.index < b.index ? -1 : a.index > b.index;
}

static bool is_col(LowLeaf e) { return e.kind == EXPR_Y || e.kind == EXPR_YP; }

static int sign_index(LowLeaf a, LowLeaf b) { return a.index < b.index ? -1 : a.index > b.index; }

/* Do the lowered leaves of the instance (b) stand to each other as the
 * representative's (a) do: leaves in the same places and of the same
 * kinds, in the same canonical order, and columns (the index of Y and
 * YP) equal or ordered alike?  O(n^2) for n <= ST_RUN_MAX_POS. */
static bool same_order_low(const LowLeaf *a, const LowLeaf *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (a[i].kind != b[i].kind) return false;
        for (uint32_t j = 0; a[i].kind != LOW_NONE && j < i; j++) {
            if (a[j].kind == LOW_NONE) continue;
            if (leaf_cmp(a[i], a[j]) != leaf_cmp(b[i], b[j])) return false;
            if (is_col(a[i]) && is_col(a[j]) && sign_index(a[i], a[j]) != sign_index(b[i], b[j])) return false;
        }
    }
    return true;
}

static bool same_order(Expr *const *a, Expr *const *b, uint32_t n) {
    LowLeaf la[ST_RUN_MAX_POS], lb[ST_RUN_MAX_POS];
    for (uint32_t i = 0; i < n; i++) la[i] = low_of(a[i]), lb[i] = low_of(b[i]);
    return same_order_low(la, lb, n);
}

static Expr **lowered_leaves(St *t, const uint32_t *dist, uint32_t n) {
    Expr **l = ARENA_ARRAY(t->arena, Expr *, n + 1);
    for (uint32_t i = 0; i < n; i++) l[i] = st_lower_leaf(t, dist[i]);
    return l;
}

Expr *st_run_lower_row(St *t, uint32_t row) {
    StRunRow *w = row < t->run_rows.len ? t->run_rows.data[row] : NULL;
    if (!w) return NULL;
    StRunEnt *x = (StRunEnt *)w->ent;
    if ((int32_t)row == x->row) { /* the representative: lowered (rows come in order, it first) */
        x->low = lowered_leaves(t, x->dist, x->nd);
        x->low_res = lower(t, st_resid_sv(t, row));
        w->to = x->low;
        return w->res = x->low_res;
    }
    if (!x->low_res) return NULL;
    Expr **to = lowered_leaves(t, w->dist, x->nd);
    if (!same_order(x->low, to, x->nd)) return NULL;
    Ren p = {t, NULL, NULL, x->nd, true, x->low, to};
    Expr *r = ren_expr(&p, x->low_res);
    if (!p.ok) return NULL;
    w->to = to;
    return w->res = r;
}

int32_t st_run_jac_row(St *t, uint32_t row, Expr *const *resid) {
    StRunRow *w = row < t->run_rows.len ? t->run_rows.data[row] : NULL;
    if (!w || !w->to || (int32_t)row == w->ent->row) return -1;
    if (resid[row] != w->res || resid[w->ent->row] != w->ent->low_res) return -1; /* an event rewrote one,
                                                    or the representative is in a loop item */
    return w->ent->row;
}

int64_t st_run_jac_col(St *t, uint32_t row, uint32_t col) {
    const StRunRow *w = t->run_rows.data[row];
    for (uint32_t i = 0; i < w->ent->nd; i++) {
        const Expr *a = w->ent->low[i];
        if (a && is_col(low_of(a)) && a->index == col) return w->to[i]->index;
    }
    return -1;
}

Expr *st_run_jac_entry(St *t, uint32_t row, Expr *e, bool *ok) {
    const StRunRow *w = t->run_rows.data[row];
    Ren p = {t, NULL, NULL, w->ent->nd, true, w->ent->low, w->to};
    Expr *r = ren_expr(&p, e);
    *ok &= p.ok;
    return r;
}

Expr *st_run_lower_value(St *t, uint32_t sv) {
    const StRunRec *w = t->run_rec ? t->run_rec[sv] : NULL;
    if (!w || w->ent->v == sv || w->ent->kind != SB_ASSIGN) return NULL;
    StRunEnt *x = (StRunEnt *)w->ent;
    Expr *rep = lower(t, expr_leaf(t->c, EXPR_VAR, x->v));
    if (!x->vlow) {
        x->vlow = ARENA_ARRAY(t->arena, Expr *, x->nexp + 1);
        for (uint32_t i = 0; i < x->nexp; i++) x->vlow[i] = st_lower_leaf(t, x->dist[x->exp[i]]);
    }
    Expr **to = lowered_leaves(t, w->sv, w->n);
    if (!same_order(x->vlow, to, x->nexp)) return NULL;
    Ren p = {t, NULL, NULL, x->nexp, true, x->vlow, to};
    Expr *r = ren_expr(&p, rep);
    return p.ok ? r : NULL;
}

/* ---------- loop items (stage 3 step 3) ----------
 *
 * Rows of one run whose lowered leaves are the first row's shifted by a
 * constant stride per leaf and step are one SysLoop: the first row's Expr
 * and the strides, nothing per row but integers.  The rows would be the
 * representative's renamed (same_order holds for each), so the first
 * row's Expr renamed by the shift is each row's Expr (sysloop.c,
 * sys_expand).  A row template with a relation stays scalar: its events
 * are per row (events.c).
 *
 * The rows form a box (box_grow): from the first row, the next row of the
 * run (run_next) starts a copy of the box so far at a row step R, and
 * copies at that step while they fit give it a dimension: consecutive rows
 * make a line (R = 1), lines at a constant row step a plane (the interior
 * cells of a grid's lines, the boundary cells between them left out), the
 * planes a block; a boundary face whose cells are one row a line makes a
 * box whose first step is the line's length.  Up to SYS_LOOP_MAX_DIM
 * dimensions; every row looked at either joins the box or ends a
 * dimension, so forming is linear in the rows. */

/* Fewer rows (instances) stay scalar: codegen's rerolling (cg_loop.c)
 * handles short stretches. */
#define ST_LOOP_MIN 64

/* A line (one dimension, consecutive rows) shorter than ST_LOOP_LINE rows
 * with a row of its run within ST_LOOP_GAP rows on either side, that did
 * not stack into a box, is one line of an irregular grid: it stays scalar
 * too, for codegen's nests (cg_loop.c), which make one loop nest of such
 * lines where a loop item per line would give a loop per line. */
#define ST_LOOP_LINE 4096
#define ST_LOOP_GAP 16

static bool is_relation_kind(const Expr *e) {
    return (e->kind >= EXPR_LT && e->kind <= EXPR_GE) || (e->kind == EXPR_CALL && e->fn == FN_SIGN);
}

/* does e hold a relation?  O(size of e) */
static bool has_relation(St *t, Expr *e) {
    HashMap seen = {0};
    ExprVec *st = &t->leaves;
    st->len = 0;
    vec_push(t->arena, st, e);
    bool found = false;
    while (st->len && !found) {
        Expr *x = st->data[--st->len];
        if (hmap_get(&seen, (uint64_t)x->id + 1)) continue;
        hmap_put(t->arena, &seen, (uint64_t)x->id + 1, x);
        found = is_relation_kind(x);
        for (int i = 0; i < x->nargs; i++) vec_push(t->arena, st, x->args[i]);
    }
    hmap_release(t->arena, &seen);
    return found;
}

/* A box being grown from the row of w: dimensions 0 .. ndim - 1, n
 * instances, the row step and each position's index step per dimension. */
typedef struct {
    const StRunRow *w;
    uint32_t row, ndim, n;
    uint32_t count[SYS_LOOP_MAX_DIM], rstep[SYS_LOOP_MAX_DIM];
    int32_t step[SYS_LOOP_MAX_DIM][ST_RUN_MAX_POS];
    LowLeaf rep[ST_RUN_MAX_POS], first[ST_RUN_MAX_POS]; /* the representative's and the first row's leaves */
} Box;

/* Is `row` a row of the run, not in a loop item yet, whose lowered leaves
 * are the first row's moved by sum over d <= D of i[d] * step[d] (with
 * `learn`, i = (0, .., 0, 1) at D: step[D] is set from it)?  On integers
 * (st_lower_slot): O(p^2) for p positions. */
static bool box_row(St *t, Box *b, uint32_t row, const uint32_t *i, uint32_t D, bool learn) {
    if (row >= t->run_rows.len || row >= t->s->ny || t->row_loop[row]) return false;
    const StRunRow *v = t->run_rows.data[row];
    const StRunEnt *x = b->w->ent;
    if (!v || v->ent != x) return false;
    LowLeaf to[ST_RUN_MAX_POS] = {{0, 0}};
    for (uint32_t k = 0; k < x->nd; k++)
        if (!st_lower_slot(t, v->dist[k], &to[k].kind, &to[k].index)) to[k] = (LowLeaf){LOW_NONE, 0};
    if (!same_order_low(b->rep, to, x->nd)) return false;
    for (uint32_t k = 0; k < x->nd; k++) {
        if (to[k].kind == LOW_NONE) continue;
        int64_t d = (int64_t)to[k].index - (int64_t)b->first[k].index, want = 0;
        if (learn) {
            if (d != (int32_t)d) return false;
            b->step[D][k] = (int32_t)d;
            continue;
        }
        for (uint32_t e = 0; e <= D; e++) want += (int64_t)i[e] * b->step[e][k];
        if (d != want) return false;
    }
    return true;
}

/* Copy L of the box (every instance moved by L along the new dimension D
 * of row step R): all rows fit? */
static bool box_copy(St *t, Box *b, uint32_t D, uint32_t R, uint32_t L) {
    uint32_t i[SYS_LOOP_MAX_DIM] = {0};
    i[D] = L;
    for (uint32_t j = 0; j < b->n; j++) {
        uint64_t row = b->row + (uint64_t)L * R;
        for (uint32_t d = 0, q = j; d < D; q /= b->count[d], d++) {
            i[d] = q % b->count[d];
            row += (uint64_t)i[d] * b->rstep[d];
        }
        if (row >= t->s->ny || !box_row(t, b, (uint32_t)row, i, D, false)) return false;
    }
    return true;
}

/* The box grows by a dimension: the next row of the run after its last
 * row starts a copy of it (row step R), and copies follow at that step
 * (a line of cells repeating in a plane, a plane in a block).  Each row
 * looked at is a row of the box or ends it; a dimension that does not
 * grow costs one copy's rows. */
static bool box_grow(St *t, Box *b) {
    uint32_t D = b->ndim, last = b->row;
    if (D == SYS_LOOP_MAX_DIM) return false;
    for (uint32_t d = 0; d < D; d++) last += (b->count[d] - 1) * b->rstep[d];
    uint32_t next = t->run_next[last];
    if (next == UINT32_MAX) return false;
    uint32_t R = next - b->row, one[SYS_LOOP_MAX_DIM] = {0};
    one[D] = 1;
    if (!box_row(t, b, next, one, D, true)) return false;
    uint32_t copies = 1;
    while (box_copy(t, b, D, R, copies)) copies++;
    if (copies < 2) return false;
    b->count[D] = copies, b->rstep[D] = R, b->ndim++;
    b->n *= copies;
    return true;
}

void st_run_loops_begin(St *t) {
    uint32_t n = t->run_rows.len;
    t->row_loop = ARENA_ARRAY(t->arena, uint32_t, t->s->ny + 1);
    t->run_next = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    uint32_t *last = ARENA_ARRAY(t->arena, uint32_t, t->nrun_ent + 2);
    memset(last, 0xff, sizeof *last * (t->nrun_ent + 2));
    for (uint32_t r = n; r-- > 0;) {
        const StRunRow *w = t->run_rows.data[r];
        t->run_next[r] = w ? last[w->ent->id] : UINT32_MAX;
        if (w) last[w->ent->id] = r;
    }
    arena_release(t->arena, last, sizeof *last * (t->nrun_ent + 2));
}

/* Is every Y, YP, P leaf of the row among the loop's leaves?  (The rows
 * renamed from the representative's are, by the renaming; this holds the
 * representative's own row to it too.) */
static bool covers(St *t, const SysLoop *l) {
    ExprVec *v = &t->leaves;
    v->len = 0;
    expr_leaves_any(t->c, l->res, v);
    for (uint32_t i = 0; i < v->len; i++) {
        const Expr *e = v->data[i];
        if (e->kind != EXPR_Y && e->kind != EXPR_YP && e->kind != EXPR_P) {
            if (e->kind == EXPR_TIME) continue;
            return false; /* a mode or another leaf: not a row of the simple form */
        }
        uint32_t k = 0;
        while (k < l->nleaf && l->leaf[k] != e) k++;
        if (k == l->nleaf) return false;
    }
    return true;
}

/* Is there a row of entry x within ST_LOOP_GAP rows before `row` or from
 * `end` on? */
static bool run_resumes_near(const St *t, const StRunEnt *x, uint32_t row, uint32_t end) {
    uint32_t lo = row > ST_LOOP_GAP ? row - ST_LOOP_GAP : 0;
    uint32_t hi = end + ST_LOOP_GAP < t->run_rows.len ? end + ST_LOOP_GAP : t->run_rows.len;
    for (uint32_t r = lo; r < hi; r++) {
        if (r == row) r = end; /* the stretch itself */
        const StRunRow *v = r < hi ? t->run_rows.data[r] : NULL;
        if (v && v->ent == x) return true;
    }
    return false;
}

/* the SysLoop of box b: its distinct leaves with their steps */
static bool box_loop(St *t, const Box *b, Expr *res, SysLoop *l) {
    const StRunRow *w = b->w;
    const StRunEnt *x = w->ent;
    *l = (SysLoop){.row = b->row, .count = b->n, .ndim = b->ndim, .res = res};
    memcpy(l->dim_count, b->count, sizeof b->count);
    memcpy(l->dim_row, b->rstep, sizeof b->rstep);
    l->leaf = ARENA_ARRAY(t->arena, Expr *, x->nd + 1);
    int32_t *step = ARENA_ARRAY(t->arena, int32_t, (size_t)b->ndim * x->nd + 1);
    uint32_t *pos = ARENA_ARRAY(t->arena, uint32_t, x->nd + 1); /* the position of leaf i */
    for (uint32_t k = 0; k < x->nd; k++) {
        uint32_t i = 0;
        while (w->to[k] && i < l->nleaf && l->leaf[i] != w->to[k]) i++;
        if (!w->to[k] || i < l->nleaf) continue; /* no leaf, or one seen (the same steps) */
        pos[l->nleaf] = k;
        l->leaf[l->nleaf++] = w->to[k];
    }
    l->stride = step;
    for (uint32_t d = 0; d < b->ndim; d++)
        for (uint32_t i = 0; i < l->nleaf; i++) step[d * l->nleaf + i] = b->step[d][pos[i]];
    return covers(t, l);
}

uint32_t st_run_loop(St *t, uint32_t row, Expr *res, SysLoop *l, uint32_t *scanned) {
    StRunRow *w = row < t->run_rows.len ? t->run_rows.data[row] : NULL;
    *scanned = 1;
    if (!w || !w->to || w->res != res) return 1;
    StRunEnt *x = (StRunEnt *)w->ent;
    if (!x->loops) x->loops = has_relation(t, res) ? 2 : 1; /* asked once per run: a box grows over many lines */
    if (x->loops == 2) return 1;
    Box b = {.w = w, .row = row, .n = 1};
    for (uint32_t k = 0; k < x->nd; k++) b.rep[k] = low_of(x->low[k]), b.first[k] = low_of(w->to[k]);
    while (box_grow(t, &b)) {}
    if (b.ndim && b.rstep[0] == 1) *scanned = b.count[0];
    bool line = b.ndim == 1 && b.rstep[0] == 1 && b.n < ST_LOOP_LINE;
    if (b.n < ST_LOOP_MIN || (line && run_resumes_near(t, x, row, row + b.n))) return 1;
    if (!box_loop(t, &b, res, l)) {
        x->loops = 2;
        return 1;
    }
    for (uint32_t j = 0; j < l->count; j++) t->row_loop[sys_loop_row(l, j)] = t->loops.len + 1;
    return b.n;
}

/* A row of a loop item has no Expr (resid[] NULL) and no event rewrote
 * it (its row holds no relation): its leaves are not lowered here (l->to
 * NULL; st_lower_slot gives them on integers). */
int32_t st_run_row_leaves(St *t, uint32_t row, Expr *const *resid, StRunLeaves *l) {
    const StRunRow *w = row < t->run_rows.len ? t->run_rows.data[row] : NULL;
    if (row >= t->s->ny) return -1; /* after the internal error of build_residuals */
    if (!w || resid[row]) {
        int32_t rep = st_run_jac_row(t, row, resid);
        if (rep < 0) return -1;
        *l = (StRunLeaves){w->ent->low, w->to, w->ent->dist, w->dist, w->ent->nd};
        return rep;
    }
    const StRunEnt *x = w->ent;
    if ((int32_t)row == x->row || !x->low || (resid[x->row] && resid[x->row] != x->low_res)) return -1;
    *l = (StRunLeaves){x->low, NULL, x->dist, w->dist, x->nd};
    return x->row;
}
