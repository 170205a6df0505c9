/*
 * initruns.c -- the initialization work of BLT's runs (runs.c) done once
 * per run instead of once per instance (docs/ARCHITECTURE.md, "Arrays",
 * stage 3 step 4).
 *
 * The starting guess of a state derivative y' whose block gives it
 * explicitly (init.c, start_derivatives) is its value lowered, with each
 * y replaced by its start value: two walks of the value per state.  A
 * residual row that runs.c renamed from its run's representative
 * (st_run_lower_row) says that the instance's lowered value is the
 * representative's with the lowered leaves renamed from[i] -> to[i], node
 * for node (the renaming is order-preserving, so every constructor made
 * the same decision).  The substitution of the start values then makes
 * the same decisions too wherever the renamed leaves are given the same
 * values: a y and its image with the *same start expression* (one
 * pointer), a parameter mapped to itself; a y' makes the value unusable
 * in both.  Under that guard the instance's guess is the representative's,
 * the same node: no walk at all.  Anything else (a start value that
 * depends on the index, per-instance parameters, a row an event rewrote,
 * a block that is no instance of a run) is computed by the scalar code.
 * Cost per instance: O(p) pointer compares for p leaves of the row (a
 * row of a loop item, never lowered to an Expr: its leaves on integers,
 * st_lower_slot).
 */
#include "structure_internal.h"

#include <string.h>

struct StInitRuns {
    int32_t *row;       /* equation -> its residual row, -1 when none */
    Expr **yp;          /* row -> the guess of y' its block gave */
    unsigned char *has; /* row -> yp[row] is known (NULL: none) */
    /* rows of the init system (below) */
    int32_t *rep;       /* row -> the row its init row is renamed from, or -1 */
    Expr ***z;          /* row -> its variables lowered for the init system */
    Expr **zrow;        /* row -> its init row as the scalar code lowered it */
    uint32_t *nz;       /* row -> entries of z[row] */
};

StInitRuns *st_init_runs(St *t) {
    StInitRuns *r = ARENA_NEW(t->arena, StInitRuns);
    uint32_t nrows = t->resid_eq.len;
    r->row = ARENA_ARRAY(t->arena, int32_t, t->eq.len + 1);
    memset(r->row, 0xff, sizeof *r->row * (t->eq.len + 1));
    for (uint32_t i = 0; i < nrows; i++) r->row[t->resid_eq.data[i]] = (int32_t)i;
    r->yp = ARENA_ARRAY(t->arena, Expr *, nrows + 1);
    r->has = ARENA_ARRAY(t->arena, unsigned char, nrows + 1);
    r->rep = ARENA_ARRAY(t->arena, int32_t, nrows + 1);
    memset(r->rep, 0xff, sizeof *r->rep * (nrows + 1));
    r->z = ARENA_ARRAY(t->arena, Expr **, nrows + 1);
    r->zrow = ARENA_ARRAY(t->arena, Expr *, nrows + 1);
    r->nz = ARENA_ARRAY(t->arena, uint32_t, nrows + 1);
    return r;
}

/* the start-value substitution gives leaf a and its image (leaf i of l,
 * the same kind) one value */
static bool same_at_start(St *t, const Expr *a, const StRunLeaves *l, uint32_t i) {
    if (!a || a->kind == EXPR_YP) return true;
    uint32_t kind = a->kind, index = 0;
    if (l->to) index = l->to[i]->index;
    else if (!st_lower_slot(t, l->vto[i], &kind, &index) || kind != a->kind) return false;
    if (a->kind == EXPR_Y) return t->s->start[a->index] == t->s->start[index];
    return a->index == index;
}

bool st_init_run_start_yp(St *t, StInitRuns *r, uint32_t e, Expr **x) {
    int32_t row = r->row[e];
    StRunLeaves l;
    int32_t rep = row < 0 || !t->s->resid ? -1 : st_run_row_leaves(t, (uint32_t)row, t->s->resid, &l);
    if (rep < 0 || !r->has[rep]) return false;
    for (uint32_t i = 0; i < l.n; i++)
        if (!same_at_start(t, l.from[i], &l, i)) return false;
    *x = r->yp[rep];
    return true;
}

void st_init_run_note_yp(St *t, StInitRuns *r, uint32_t e, Expr *x) {
    (void)t;
    int32_t row = r->row[e];
    if (row < 0) return;
    r->yp[row] = x;
    r->has[row] = 1;
}

/* ---------- rows of the initialization system ----------
 *
 * The init system's rows of class 1 (init.c) are the residual rows lowered
 * again, to Z (y, y' of a state) and P or Z (a `missing` parameter), and
 * differentiated by Z.  A residual row that is its representative's
 * renamed (runs.c) is the same computation on renamed variables, so its
 * init row is the representative's init row renamed, leaf for leaf, when
 * the init leaves keep what the renaming needs: the same kinds in the
 * same places (a y' without a Z column lowers to the constant 0: the same
 * in both), the same canonical order (Z and P by index) -- so also Z
 * columns that map one to one, and the row's Jacobian entries are the
 * representative's renamed, column for column, in the same order. */

/* do b's init leaves stand to each other as a's do (see above)?
 * O(n^2) for n <= ST_RUN_MAX_POS */
static bool same_init_order(Expr *const *a, Expr *const *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (!a[i] != !b[i] || (a[i] && a[i]->kind != b[i]->kind)) return false;
        if (!a[i] || !expr_is_leaf(a[i]) || expr_is_const(a[i])) {
            if (a[i] != b[i]) return false;
            continue;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (!a[j] || a[j]->kind != a[i]->kind) continue;
            int sa = a[i]->index < a[j]->index ? -1 : a[i]->index > a[j]->index;
            int sb = b[i]->index < b[j]->index ? -1 : b[i]->index > b[j]->index;
            if (sa != sb) return false;
        }
    }
    return true;
}

static Expr **init_leaves(St *t, const uint32_t *sv, uint32_t n) {
    Expr **l = ARENA_ARRAY(t->arena, Expr *, n + 1);
    for (uint32_t i = 0; i < n; i++) l[i] = st_lower_leaf(t, sv[i]);
    return l;
}

typedef struct {
    Expr *const *from, *const *to;
    uint32_t n;
    bool ok;
} ZRen;

static Expr *zren_leaf(void *ud, Expr *leaf) {
    ZRen *p = ud;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->from[i] == leaf) return p->to[i];
    p->ok = false;
    return leaf;
}

static Expr *zren(St *t, StInitRuns *r, uint32_t row, Expr *e, bool *ok) {
    ZRen p = {r->z[r->rep[row]], r->z[row], r->nz[row], true};
    Expr *x = expr_subst_small(t->c, e, zren_leaf, &p, 256);
    *ok &= p.ok;
    return x;
}

/* the representative's init row renamed, or NULL */
static Expr *renamed_row(St *t, StInitRuns *r, uint32_t row, Expr *const *rows) {
    StRunLeaves l;
    int32_t rep = st_run_row_leaves(t, row, t->s->resid, &l);
    if (rep < 0 || !r->zrow[rep] || r->zrow[rep] != rows[rep]) return NULL;
    if (!r->z[rep]) r->z[rep] = init_leaves(t, l.vfrom, l.n), r->nz[rep] = l.n;
    Expr **to = init_leaves(t, l.vto, l.n);
    if (!same_init_order(r->z[rep], to, l.n)) return NULL;
    r->rep[row] = rep;
    r->z[row] = to;
    r->nz[row] = l.n;
    bool ok = true;
    Expr *x = zren(t, r, row, rows[rep], &ok);
    if (ok) return x;
    r->rep[row] = -1;
    return NULL;
}

Expr *st_init_run_row(St *t, StInitRuns *r, uint32_t row, Expr *const *rows) {
    Expr *x = renamed_row(t, r, row, rows);
    if (x) return x;
    return r->zrow[row] = lower(t, st_resid_sv(t, row));
}

int32_t st_init_run_jac_row(StInitRuns *r, uint32_t row) { return r->rep[row]; }

int64_t st_init_run_jac_col(StInitRuns *r, uint32_t row, uint32_t col) {
    Expr *const *a = r->z[r->rep[row]], *const *b = r->z[row];
    for (uint32_t i = 0; i < r->nz[row]; i++)
        if (a[i] && a[i]->kind == EXPR_Z && a[i]->index == col) return b[i]->index;
    return -1;
}

Expr *st_init_run_jac_entry(St *t, StInitRuns *r, uint32_t row, Expr *e, bool *ok) { return zren(t, r, row, e, ok); }
