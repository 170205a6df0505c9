/*
 * partition.c -- clocked partitions: what one tick of each clock computes
 * (system.h, SysClock; docs/STRUCTURE.md, "Clocked partitions").
 *
 * Input: the flat model after clock inference (FV_DISCRETE variables and
 * FE_CLOCKED / FE_SAMPLE equations of each clock) and the continuous
 * system, already lowered (slots of every variable).  Per clock:
 *   1. balance: as many equations as clocked variables that are not sampled;
 *   2. matching (Hopcroft-Karp, matching.c): a structurally singular
 *      partition is an error naming its equations and variables;
 *   3. causalization with tearing, the greedy rule of blt.c applied to the
 *      whole partition: an equation with one unknown left that it is linear
 *      in, with a coefficient free of unknowns and of ifelse (no division by
 *      a switched 0), assigns it; when none does, the unknown in most unused
 *      equations becomes an iteration variable (a loop, solved by Newton at
 *      each tick); the unused equations are the loop's residuals;
 *   4. lowering: every other variable is a parameter slot (parameters,
 *      sampled values, previous values); samples are lowered with the
 *      continuous system's map (they read Y, YP);
 *   5. copies: previous values shift, held values take the new value.
 * Then the order in which clocks that tick together are handled: clock B
 * after clock A when B samples a value that depends on one of A's held
 * values at the same instant (directly, or through algebraic unknowns of
 * the continuous system; a breadth-first search over the residual pattern).
 * Linear in the partitions' equations (matching: O(E sqrt V)), plus
 * O(b^2) for a loop of b equations.
 */
#include "structure_internal.h"

#include <string.h>

typedef struct {
    St *t;
    uint32_t c;               /* clock index */
    U32Vec vars, eqs;         /* the partition's unknowns (flat vars), equations (flat eqs) */
    int32_t *local;           /* flat var -> index in vars, or -1 (shared, reset after) */
    Expr **res;               /* [neq] lhs - rhs */
    Expr **val;               /* [nvar] value once assigned (over knowns and Z) */
    int32_t *torn;            /* [nvar] iteration index, or -1 */
    U32Vec wvars;             /* torn variables, in order */
    bool *used;               /* [neq] assigns a variable */
} Part;

static Expr *part_leaf(void *ud, Expr *leaf) {
    Part *p = ud;
    if (leaf->kind != EXPR_VAR || leaf->index >= p->t->nflat) return leaf;
    int32_t k = p->local[leaf->index];
    if (k < 0) return leaf;
    if (p->val[k]) return p->val[k];
    if (p->torn[k] >= 0) return expr_leaf(p->t->c, EXPR_Z, (uint32_t)p->torn[k]);
    return leaf;
}

static Expr *substituted(Part *p, uint32_t e) { return expr_subst(p->t->c, p->res[e], part_leaf, p); }

/* no ifelse below e: dividing by a coefficient that switches to 0 would not do */
static bool switch_free(ExprCtx *c, Expr *e, int depth) {
    if (e->kind == EXPR_IFELSE || depth > 64) return false;
    for (int i = 0; i < e->nargs; i++)
        if (!switch_free(c, e->args[i], depth + 1)) return false;
    return true;
}

static Expr *solve_for(Part *p, Expr *r, uint32_t k) {
    St *t = p->t;
    Expr *x = expr_leaf(t->c, EXPR_VAR, p->vars.data[k]);
    Expr *a = expr_diff_once(t->c, r, x);
    if (expr_is_const_value(a, 0) || expr_size(t->c, a) > 64 || !switch_free(t->c, a, 0)) return NULL;
    ExprVec l = {0};
    expr_leaves(t->c, a, EXPR_VAR, &l);
    for (uint32_t i = 0; i < l.len; i++)
        if (l.data[i]->index < t->nflat && p->local[l.data[i]->index] >= 0) return NULL;
    return expr_solve_linear(t->c, r, x);
}

/* ---------- collecting a partition ---------- */

static const char *clock_name(St *t, uint32_t c) { return t->m->clocks.data[c].name; }

static void collect(Part *p) {
    St *t = p->t;
    FlatModel *m = t->m;
    unsigned char *sampled = ARENA_ARRAY(t->arena, unsigned char, m->vars.len + 1);
    for (uint32_t i = 0; i < m->eqs.len; i++) {
        FlatEq *q = &m->eqs.data[i];
        if (q->clock != p->c + 1) continue;
        if (q->kind == FE_SAMPLE) sampled[q->lhs->index] = 1;
        else if (q->kind == FE_CLOCKED) vec_push(t->arena, &p->eqs, i);
    }
    for (uint32_t v = 0; v < m->vars.len; v++)
        if (m->vars.data[v].kind == FV_DISCRETE && m->vars.data[v].clock == p->c + 1 && !sampled[v]) {
            p->local[v] = (int32_t)p->vars.len;
            vec_push(t->arena, &p->vars, v);
        }
}

static bool balanced(Part *p) {
    if (p->eqs.len == p->vars.len) return true;
    St *t = p->t;
    Span at = p->eqs.len ? t->m->eqs.data[p->eqs.data[0]].span : t->m->clocks.data[p->c].span;
    diag_error(at, "the partition of clock `%s` has %u equation%s for %u clocked variable%s (%s-determined by %d)",
               clock_name(t, p->c), p->eqs.len, p->eqs.len == 1 ? "" : "s", p->vars.len,
               p->vars.len == 1 ? "" : "s", p->eqs.len > p->vars.len ? "over" : "under",
               (int)p->eqs.len - (int)p->vars.len > 0 ? (int)(p->eqs.len - p->vars.len)
                                                    : (int)(p->vars.len - p->eqs.len));
    return false;
}

/* incidence of equation e: its unknowns (local indices) */
static void unknowns_of(Part *p, uint32_t e, U32Vec *out) {
    ExprVec l = {0};
    expr_leaves(p->t->c, p->res[e], EXPR_VAR, &l);
    out->len = 0;
    for (uint32_t i = 0; i < l.len; i++)
        if (l.data[i]->index < p->t->nflat && p->local[l.data[i]->index] >= 0)
            vec_push(p->t->arena, out, (uint32_t)p->local[l.data[i]->index]);
}

static bool structurally_regular(Part *p, uint32_t *ptr, uint32_t *adj) {
    St *t = p->t;
    uint32_t n = p->eqs.len;
    StGraph g = {n, n, ptr, adj};
    int32_t *rm = ARENA_ARRAY(t->arena, int32_t, n + 1), *cm = ARENA_ARRAY(t->arena, int32_t, n + 1);
    if (st_bip_match(t->arena, &g, rm, cm) == n) return true;
    diag_error(t->m->clocks.data[p->c].span, "the partition of clock `%s` is structurally singular",
               clock_name(t, p->c));
    for (uint32_t e = 0; e < n; e++)
        if (rm[e] < 0) diag_note(t->m->eqs.data[p->eqs.data[e]].span, "equation with no clocked variable left to determine");
    for (uint32_t v = 0; v < n; v++)
        if (cm[v] < 0) diag_note(t->m->vars.data[p->vars.data[v]].span, "no equation determines `%s`",
                                 t->m->vars.data[p->vars.data[v]].name);
    return false;
}

/* ---------- causalization with tearing ---------- */

typedef struct {
    uint32_t *ptr, *adj;      /* equation -> unknowns (CSR) */
    uint32_t *vptr, *vadj;    /* unknown -> equations (CSR) */
    uint32_t *left;           /* [neq] unknowns not yet assigned or torn */
    U32Vec queue;             /* equations with one unknown left */
} Causal;

static void build_csr(Part *p, Causal *k) {
    St *t = p->t;
    uint32_t n = p->eqs.len;
    U32Vec inc = {0};
    k->ptr = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    k->vptr = ARENA_ARRAY(t->arena, uint32_t, n + 2);
    k->left = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    U32Vec all = {0};
    for (uint32_t e = 0; e < n; e++) {
        unknowns_of(p, e, &inc);
        k->ptr[e] = all.len;
        for (uint32_t i = 0; i < inc.len; i++) vec_push(t->arena, &all, inc.data[i]);
        k->left[e] = inc.len;
    }
    k->ptr[n] = all.len;
    k->adj = all.data ? all.data : ARENA_ARRAY(t->arena, uint32_t, 1);
    for (uint32_t i = 0; i < all.len; i++) k->vptr[all.data[i] + 2]++;
    for (uint32_t v = 0; v < n; v++) k->vptr[v + 2] += k->vptr[v + 1];
    k->vadj = ARENA_ARRAY(t->arena, uint32_t, all.len + 1);
    for (uint32_t e = 0; e < n; e++)
        for (uint32_t i = k->ptr[e]; i < k->ptr[e + 1]; i++) k->vadj[k->vptr[k->adj[i] + 1]++] = e;
}

static bool settled(const Part *p, uint32_t v) { return p->val[v] || p->torn[v] >= 0; }

static void settle(Part *p, Causal *k, uint32_t v) {
    for (uint32_t i = k->vptr[v]; i < k->vptr[v + 1]; i++) {
        uint32_t e = k->vadj[i];
        if (--k->left[e] == 1 && !p->used[e]) vec_push(p->t->arena, &k->queue, e);
    }
}

static void try_assign(Part *p, Causal *k, uint32_t e) {
    if (p->used[e] || k->left[e] != 1) return;
    uint32_t v = UINT32_MAX;
    for (uint32_t i = k->ptr[e]; i < k->ptr[e + 1]; i++)
        if (!settled(p, k->adj[i])) v = k->adj[i];
    if (v == UINT32_MAX) return;
    Expr *x = solve_for(p, substituted(p, e), v);
    if (!x) return;
    p->val[v] = x;
    p->used[e] = true;
    settle(p, k, v);
}

/* the unsettled unknown in most unused equations (ties: the first) */
static uint32_t tear_choice(Part *p, Causal *k) {
    uint32_t best = UINT32_MAX, most = 0;
    for (uint32_t v = 0; v < p->vars.len; v++) {
        if (settled(p, v)) continue;
        uint32_t n = 0;
        for (uint32_t i = k->vptr[v]; i < k->vptr[v + 1]; i++) n += !p->used[k->vadj[i]];
        if (best == UINT32_MAX || n > most) best = v, most = n;
    }
    return best;
}

static void causalize(Part *p) {
    St *t = p->t;
    uint32_t n = p->eqs.len;
    Causal k = {0};
    build_csr(p, &k);
    if (!structurally_regular(p, k.ptr, k.adj)) return;
    for (uint32_t e = 0; e < n; e++)
        if (k.left[e] == 1) vec_push(t->arena, &k.queue, e);
    for (;;) {
        while (k.queue.len) try_assign(p, &k, k.queue.data[--k.queue.len]);
        uint32_t v = tear_choice(p, &k);
        if (v == UINT32_MAX) break;
        p->torn[v] = (int32_t)p->wvars.len;
        vec_push(t->arena, &p->wvars, v);
        settle(p, &k, v);
    }
}

/* ---------- the SysClock ---------- */

static void build_samples(St *t, uint32_t c, SysClock *sc) {
    FlatModel *m = t->m;
    U32Vec idx = {0};
    for (uint32_t i = 0; i < m->eqs.len; i++)
        if (m->eqs.data[i].kind == FE_SAMPLE && m->eqs.data[i].clock == c + 1) vec_push(t->arena, &idx, i);
    sc->nsample = idx.len;
    sc->sample_slot = ARENA_ARRAY(t->arena, uint32_t, idx.len + 1);
    sc->sample = ARENA_ARRAY(t->arena, Expr *, idx.len + 1);
    for (uint32_t i = 0; i < idx.len; i++) {
        FlatEq *q = &m->eqs.data[idx.data[i]];
        sc->sample_slot[i] = (uint32_t)t->pslot[q->lhs->index];
        sc->sample[i] = lower(t, st_to_sv(t, q->rhs));
    }
}

static void build_solve(Part *p, SysClock *sc) {
    St *t = p->t;
    uint32_t nw = p->wvars.len, n = p->eqs.len;
    sc->nw = nw;
    sc->w_names = ARENA_ARRAY(t->arena, const char *, nw + 1);
    sc->resid = ARENA_ARRAY(t->arena, Expr *, nw + 1);
    sc->guess = ARENA_ARRAY(t->arena, Expr *, nw + 1);
    sc->jac = ARENA_ARRAY(t->arena, Expr *, (size_t)nw * nw + 1);
    uint32_t r = 0;
    for (uint32_t e = 0; e < n; e++)
        if (!p->used[e]) sc->resid[r++] = lower(t, substituted(p, e));
    for (uint32_t j = 0; j < nw; j++) {
        uint32_t v = p->vars.data[p->wvars.data[j]];
        sc->w_names[j] = t->m->vars.data[v].name;
        sc->guess[j] = expr_leaf(t->c, EXPR_P, (uint32_t)t->pslot[v]); /* the previous tick's value */
        for (uint32_t i = 0; i < nw; i++)
            sc->jac[(size_t)j * nw + i] = expr_diff_once(t->c, sc->resid[i], expr_leaf(t->c, EXPR_Z, j));
    }
    sc->nset = p->vars.len;
    sc->set_slot = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    sc->set = ARENA_ARRAY(t->arena, Expr *, n + 1);
    for (uint32_t k = 0; k < n; k++) {
        sc->set_slot[k] = (uint32_t)t->pslot[p->vars.data[k]];
        sc->set[k] = lower(t, part_leaf(p, expr_leaf(t->c, EXPR_VAR, p->vars.data[k])));
    }
}

/* history: x@(clk-K) <- x@(clk-K+1) ... x@(clk-1) <- x; then held values */
static void build_copies(St *t, uint32_t c, SysClock *sc) {
    FlatModel *m = t->m;
    uint32_t nv = m->vars.len;
    U32Vec dst = {0}, src = {0};
    uint32_t *maxlag = ARENA_ARRAY(t->arena, uint32_t, nv + 1);
    HashMap at = {0}; /* (x << 20 | k) -> 1 + history var */
    for (uint32_t v = 0; v < nv; v++) {
        FlatVar *h = &m->vars.data[v];
        if (h->kind != FV_HISTORY || h->clock != c + 1) continue;
        const FlatVarAttr *a = flat_attr(m, h);
        if (a->lag > maxlag[a->of]) maxlag[a->of] = a->lag;
        hmap_put(t->arena, &at, ((uint64_t)a->of << 20) | a->lag, (void *)(uintptr_t)(v + 1));
    }
    for (uint32_t x = 0; x < nv; x++)
        for (uint32_t k = maxlag[x]; k >= 1; k--) {
            uint32_t to = (uint32_t)(uintptr_t)hmap_get(&at, ((uint64_t)x << 20) | k) - 1;
            uint32_t from = k == 1 ? x : (uint32_t)(uintptr_t)hmap_get(&at, ((uint64_t)x << 20) | (k - 1)) - 1;
            vec_push(t->arena, &dst, (uint32_t)t->pslot[to]);
            vec_push(t->arena, &src, (uint32_t)t->pslot[from]);
        }
    for (uint32_t v = 0; v < nv; v++)
        if (m->vars.data[v].kind == FV_HOLD && m->vars.data[v].clock == c + 1) {
            vec_push(t->arena, &dst, (uint32_t)t->pslot[v]);
            vec_push(t->arena, &src, (uint32_t)t->pslot[flat_attr(m, &m->vars.data[v])->of]);
        }
    sc->ncopy = dst.len;
    sc->copy_dst = dst.data;
    sc->copy_src = src.data;
}

static void build_clock(St *t, uint32_t c, int32_t *local) {
    FlatClock *fc = &t->m->clocks.data[c];
    SysClock *sc = &t->s->clocks[c];
    sc->name = fc->name;
    sc->kind = fc->kind == FCLK_PERIODIC ? SYS_CLOCK_PERIODIC : SYS_CLOCK_ZERO_CROSSING;
    sc->zc = -1;
    if (fc->kind == FCLK_PERIODIC) {
        sc->period = lower(t, st_to_sv(t, fc->period));
        sc->offset = lower(t, st_to_sv(t, fc->offset));
    }
    build_samples(t, c, sc);
    Part p = {.t = t, .c = c, .local = local};
    collect(&p);
    uint32_t n = p.vars.len;
    p.res = ARENA_ARRAY(t->arena, Expr *, p.eqs.len + 1);
    p.val = ARENA_ARRAY(t->arena, Expr *, n + 1);
    p.torn = ARENA_ARRAY(t->arena, int32_t, n + 1);
    p.used = ARENA_ARRAY(t->arena, bool, p.eqs.len + 1);
    for (uint32_t k = 0; k < n; k++) p.torn[k] = -1;
    for (uint32_t e = 0; e < p.eqs.len; e++) {
        FlatEq *q = &t->m->eqs.data[p.eqs.data[e]];
        p.res[e] = expr_sub(t->c, q->lhs, q->rhs);
    }
    unsigned errors = diag_error_count();
    if (balanced(&p)) causalize(&p);
    if (diag_error_count() == errors) build_solve(&p, sc);
    build_copies(t, c, sc);
    for (uint32_t k = 0; k < n; k++) local[p.vars.data[k]] = -1;
}

/* ---------- zero-crossing clocks ---------- */

/* each zero-crossing clock is an event of its own (SYS_EV_CLOCK), after
 * the relations */
static void zero_crossing_clocks(St *t) {
    System *s = t->s;
    uint32_t n = s->nz;
    for (uint32_t c = 0; c < s->nclocks; c++) n += t->m->clocks.data[c].kind == FCLK_ZERO_CROSSING;
    if (n == s->nz) return;
    Expr **zc = ARENA_ARRAY(t->arena, Expr *, n);
    uint8_t *kind = ARENA_ARRAY(t->arena, uint8_t, n);
    const char **names = ARENA_ARRAY(t->arena, const char *, n);
    for (uint32_t k = 0; k < s->nz; k++) zc[k] = s->zc[k], kind[k] = s->zc_kind[k], names[k] = s->zc_names[k];
    for (uint32_t c = 0; c < s->nclocks; c++) {
        FlatClock *fc = &t->m->clocks.data[c];
        if (fc->kind != FCLK_ZERO_CROSSING) continue;
        uint32_t k = s->nz++;
        zc[k] = lower(t, st_to_sv(t, fc->signal));
        kind[k] = SYS_EV_CLOCK;
        names[k] = st_expr_text(t, fc->signal, NULL, fc->span);
        s->clocks[c].zc = (int32_t)k;
    }
    s->zc = zc;
    s->zc_kind = kind;
    s->zc_names = names;
}

/* ---------- tick order ---------- */

/* the Y/YP columns that can change at once with held value slot h:
 * breadth-first over "row uses column" from the rows that read p[h] */
static void reach_from(St *t, const U32Vec *rows_of_p, uint32_t h, unsigned char *reached, U32Vec *q) {
    System *s = t->s;
    q->len = 0;
    for (uint32_t i = 0; i < rows_of_p[h].len; i++) vec_push(t->arena, q, rows_of_p[h].data[i]);
    for (uint32_t i = 0; i < q->len; i++) {
        ExprVec l = {0};
        SysAt at;   /* a row of a loop item: its template read at the instance */
        Expr *row = sys_resid_at(s, q->data[i], &at);
        expr_leaves(t->c, row, EXPR_Y, &l);
        expr_leaves(t->c, row, EXPR_YP, &l);
        for (uint32_t k = 0; k < l.len; k++) {
            uint32_t col = sys_at_index(&at, l.data[k]);
            unsigned char bit = l.data[k]->kind == EXPR_YP ? 2 : 1;
            if (bit == 1 && s->y_is_diff[col]) continue; /* a state keeps its value at an event */
            if (reached[col] & bit) continue;
            reached[col] |= bit;
            for (int32_t j = s->jac_colptr[col]; j < s->jac_colptr[col + 1]; j++)
                vec_push(t->arena, q, (uint32_t)s->jac_rowidx[j]);
        }
    }
}

static bool reads_reached(St *t, SysClock *b, const unsigned char *reached, const unsigned char *held) {
    for (uint32_t i = 0; i < b->nsample; i++) {
        ExprVec l = {0};
        expr_leaves_any(t->c, b->sample[i], &l);
        for (uint32_t k = 0; k < l.len; k++) {
            Expr *x = l.data[k];
            if ((x->kind == EXPR_P && held[x->index]) || (x->kind == EXPR_Y && (reached[x->index] & 1)) ||
                (x->kind == EXPR_YP && (reached[x->index] & 2)))
                return true;
        }
    }
    return false;
}

/* dep[a * n + b]: b samples what a holds at the same instant */
static unsigned char *dependencies(St *t) {
    System *s = t->s;
    uint32_t n = s->nclocks;
    unsigned char *dep = ARENA_ARRAY(t->arena, unsigned char, (size_t)n * n + 1);
    U32Vec *rows_of_p = ARENA_ARRAY(t->arena, U32Vec, s->np + 1);
    for (uint32_t r = 0; r < s->ny; r++) {
        ExprVec l = {0};
        SysAt at;
        expr_leaves(t->c, sys_resid_at(s, r, &at), EXPR_P, &l);
        for (uint32_t k = 0; k < l.len; k++) vec_push(t->arena, &rows_of_p[sys_at_index(&at, l.data[k])], r);
    }
    unsigned char *reached = ARENA_ARRAY(t->arena, unsigned char, s->ny + 1);
    unsigned char *held = ARENA_ARRAY(t->arena, unsigned char, s->np + 1);
    U32Vec q = {0};
    for (uint32_t a = 0; a < n; a++) {
        memset(reached, 0, s->ny + 1);
        memset(held, 0, s->np + 1);
        for (uint32_t v = 0; v < t->m->vars.len; v++) {
            if (t->m->vars.data[v].kind != FV_HOLD || t->m->vars.data[v].clock != a + 1) continue;
            held[t->pslot[v]] = 1;
            reach_from(t, rows_of_p, (uint32_t)t->pslot[v], reached, &q);
        }
        for (uint32_t b = 0; b < n; b++)
            dep[(size_t)a * n + b] = b != a && reads_reached(t, &s->clocks[b], reached, held);
    }
    return dep;
}

/* Kahn's algorithm, the lowest ready index first; a cycle is broken at its
 * lowest index (those clocks then read each other's previous values). */
static void tick_order(St *t) {
    System *s = t->s;
    uint32_t n = s->nclocks;
    s->tick_order = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    unsigned char *dep = n > 1 ? dependencies(t) : NULL;
    unsigned char *done = ARENA_ARRAY(t->arena, unsigned char, n + 1);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t pick = UINT32_MAX;
        for (uint32_t b = 0; b < n && pick == UINT32_MAX; b++) {
            if (done[b]) continue;
            bool ready = true;
            for (uint32_t a = 0; a < n && ready; a++) ready = done[a] || !dep || !dep[(size_t)a * n + b];
            if (ready) pick = b;
        }
        if (pick == UINT32_MAX) {
            for (pick = 0; done[pick]; pick++) {}
            diag_warning(t->m->clocks.data[pick].span, "clocks `%s` and others sample each other's held values at "
                                                       "shared instants; `%s` ticks first and reads their previous values",
                         s->clocks[pick].name, s->clocks[pick].name);
        }
        done[pick] = 1;
        s->tick_order[k] = pick;
    }
}

/* ---------- entry ---------- */

static bool clocks_defined(St *t) {
    for (uint32_t v = 0; v < t->m->vars.len; v++) {
        FlatVar *fv = &t->m->vars.data[v];
        if (fv->kind != FV_DISCRETE || fv->clock) continue;
        diag_error(fv->span, "`%s` is on an input clock of `%s`, which whoever uses it gives; to simulate `%s`, "
                             "define that clock (e.g. connect a DiscreteComponents.PeriodicClock)",
                   fv->name, t->m->name, t->m->name);
        return false;
    }
    return true;
}

void struct_build_clocks(St *t) {
    System *s = t->s;
    if (!clocks_defined(t)) return;
    s->nclocks = t->m->clocks.len;
    if (!s->nclocks) return;
    s->clocks = ARENA_ARRAY(t->arena, SysClock, s->nclocks);
    int32_t *local = ARENA_ARRAY(t->arena, int32_t, t->nflat + 1);
    for (uint32_t v = 0; v <= t->nflat; v++) local[v] = -1;
    for (uint32_t c = 0; c < s->nclocks; c++) build_clock(t, c, local);
    zero_crossing_clocks(t);
    tick_order(t);
}
