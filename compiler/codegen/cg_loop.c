/*
 * cg_loop.c -- runs of items that differ only in their slot indices become
 * loops ("rerolling"), and runs of such runs two-level loop nests.
 *
 * A model built from many instances of one component gives long stretches
 * of items of the same shape: the residual row of capacitor i is the row of
 * capacitor 1 with every y, y' and p index shifted by a constant stride.
 * Straight-line code for them is large (N copies of one body) and slow to
 * compile and to run (instruction cache).  Such a run is emitted as a loop
 * whose body is the first item's DAG, every leaf index and the destination
 * being `base + stride * j`; a chunk function holds loops and straight
 * items up to its node cap (cg_chunk.c), the loop counting its body.  The values are
 * computed by the same IEEE operations in the same order, so the results
 * are bit-identical to the straight-line code.
 *
 * Shape: an item's DAG serialized in depth-first order (first visits
 * numbered, a node seen before is a back reference): kinds, functions,
 * constants' bits; the indices of its leaves (Y, YP, P, Z, MODE) and its
 * destination are kept apart, in the same order.  Items i and i + P*j have
 * one shape and indices index_i + j * (index_{i+P} - index_i): then a run
 * of period P (P items per iteration, the Jacobian's CSC order repeats with
 * the band) covers them.  Two leaves that coincide in one item but
 * not in the first would change the back references, so they break the run.
 *
 * Two levels.  Level 1 finds runs of short period (up to LOOP_SHORT_PERIOD
 * items: one grid cell's row, one column of a band); the item list becomes
 * a list of *units*, a single item or a level-1 run.  Level 2 finds runs of
 * units the same way: units u and u + P*J alike (a run: the same count,
 * period, item shapes and strides), their first iteration's indices affine
 * in J.  In a 2- or 3-D grid the interior cells of one grid row follow
 * each other (a level-1 run) between the boundary cells of the row
 * (other templates), and the row repeats: level 2 makes that a nest, an
 * outer loop over the rows whose body is the boundary items straight and
 * an inner loop over the interior cells -- one cell's code, not a row's.
 * A leaf index in a nest is base + outer stride * J + inner stride * j.
 * A level-2 run of single items only is a plain run of period P (a long
 * period: the boundary items of one row recur in the next).  The nest runs
 * its items in their order (J, then the body in order, an inner loop in j),
 * so nothing is reordered.
 *
 * Loop items of the System (SysLoop: the rows of a run over a box of up
 * to three dimensions, stage 3 step 3 of docs/ARCHITECTURE.md "Arrays")
 * come as one iteration's items with their strides (CgItem.loop): they
 * are not planned, only emitted by the same loop emitter, inside one outer
 * loop per further dimension (box_j; a leaf moves by its stride along
 * each); an entry of a Jacobian loop item is stored through its scatter
 * table.
 *
 * Only plain items qualify (not a copy, not guarded by `given`), with at most
 * LOOP_MAX_NODES nodes.  Periods (at each level): every one up to 16, and at
 * level 2 longer ones where a unit's shape recurs (best_unit_run).  In ASSERT
 * functions a loop keeps the first failing item's number, as the straight
 * code does.  Planning is O(items x (LOOP_SHORT_PERIOD + LOOP_WINDOW x
 * LOOP_HOPS) x nodes per item) at each level.
 */
#include <string.h>

#include "cg_internal.h"

#define LOOP_MAX_NODES 256    /* larger items are emitted straight */
#define LOOP_MIN_ITEMS 16     /* shorter runs are not worth a loop */
#define LOOP_SHORT_PERIOD 16  /* periods always tried */
#define LOOP_WINDOW 16        /* units whose next repetitions propose periods */
#define LOOP_HOPS 4           /* repetitions looked at per unit */

#define TOK_BACK 0x100u       /* token: back reference (| number << 16) */

typedef struct Shape {
    uint32_t tok_off, ntok;   /* into LoopPlan.tok */
    uint32_t idx_off, nidx;   /* into LoopPlan.idx */
    uint64_t hash;
    bool ok;                  /* a plain item within the size cap */
} Shape;

/* A single item (count = period = 1) or a level-1 run. */
typedef struct Unit {
    uint32_t first, count, period; /* items [first, first + count), period per iteration */
    uint64_t key;             /* hash of shapes, count, period, strides; 0: not loopable */
} Unit;

typedef struct LoopPlan {
    Vec(uint64_t) tok;
    Vec(int64_t) idx;
    Shape *shape;
    uint32_t *seen, *num;     /* [nids]: visit stamp, first-visit number */
    uint32_t stamp;
} LoopPlan;

static bool indexed_leaf(const Expr *e) {
    return e->kind == EXPR_Y || e->kind == EXPR_YP || e->kind == EXPR_P || e->kind == EXPR_Z ||
           e->kind == EXPR_MODE;
}

/* Serialize one root (preorder with back references); false when too big. */
static bool serialize(Cg *g, LoopPlan *lp, Expr *root, uint32_t *count) {
    g->stack.len = 0;
    vec_push(g->arena, &g->stack, root);
    while (g->stack.len > 0) {
        Expr *e = g->stack.data[--g->stack.len];
        if (lp->seen[cg_node(g, e)] == lp->stamp) {
            vec_push(g->arena, &lp->tok, TOK_BACK | (uint64_t)lp->num[cg_node(g, e)] << 16);
            continue;
        }
        if (++*count > LOOP_MAX_NODES) return false;
        lp->seen[cg_node(g, e)] = lp->stamp;
        lp->num[cg_node(g, e)] = *count;
        uint64_t t = e->kind | (uint64_t)e->fn << 8 | (uint64_t)e->nargs << 16;
        vec_push(g->arena, &lp->tok, t);
        if (e->kind == EXPR_CONST) {
            uint64_t bits;
            memcpy(&bits, &e->value, sizeof bits);
            vec_push(g->arena, &lp->tok, bits);
        }
        if (indexed_leaf(e)) vec_push(g->arena, &lp->idx, (int64_t)e->index);
        for (int i = e->nargs - 1; i >= 0; i--) vec_push(g->arena, &g->stack, e->args[i]);
    }
    return true;
}

static void shape_item(Cg *g, LoopPlan *lp, const CgItem *it, Shape *sh) {
    sh->tok_off = lp->tok.len;
    sh->idx_off = lp->idx.len;
    sh->ok = it->copy_arg < 0 && !it->guard_given && !it->loop;
    lp->stamp++;
    uint32_t count = 0;
    vec_push(g->arena, &lp->tok, (uint64_t)(it->a != NULL) | (uint64_t)(it->b != NULL) << 1 |
                                     (uint64_t)it->dest_arg << 2);
    vec_push(g->arena, &lp->idx, (int64_t)it->dest_index);
    if (sh->ok && it->a) sh->ok = serialize(g, lp, it->a, &count);
    if (sh->ok && it->b) sh->ok = serialize(g, lp, it->b, &count);
    sh->ntok = lp->tok.len - sh->tok_off;
    sh->nidx = lp->idx.len - sh->idx_off;
    sh->hash = hash_bytes(lp->tok.data + sh->tok_off, sizeof(uint64_t) * sh->ntok);
}

static bool same_shape(const LoopPlan *lp, const Shape *a, const Shape *b) {
    return a->ok && b->ok && a->hash == b->hash && a->ntok == b->ntok && a->nidx == b->nidx &&
           memcmp(lp->tok.data + a->tok_off, lp->tok.data + b->tok_off, sizeof(uint64_t) * a->ntok) == 0;
}

static const int64_t *item_idx(const LoopPlan *lp, uint32_t k) { return lp->idx.data + lp->shape[k].idx_off; }

/* Are the indices of item k those of item a0 + j * (a1 - a0)?  (k, a0, a1
 * of one shape) */
static bool affine_idx(const LoopPlan *lp, uint32_t a0, uint32_t a1, uint32_t k, int64_t j) {
    const int64_t *i0 = item_idx(lp, a0), *i1 = item_idx(lp, a1), *ik = item_idx(lp, k);
    for (uint32_t q = 0; q < lp->shape[a0].nidx; q++)
        if (ik[q] != i0[q] + j * (i1[q] - i0[q])) return false;
    return true;
}

/* ---------- level 1: runs of items ---------- */

/* Does item k (= first + P*j + r) fit the run started at `first`? */
static bool fits(const LoopPlan *lp, uint32_t first, uint32_t period, uint32_t k) {
    uint32_t r = (k - first) % period, j = (k - first) / period;
    if (!same_shape(lp, &lp->shape[first + r], &lp->shape[k])) return false;
    return affine_idx(lp, first + r, first + period + r, k, j);
}

/* Items covered by the longest run of period `period` starting at first,
 * in whole iterations (0 if the second iteration does not fit). */
static uint32_t run_length(const LoopPlan *lp, uint32_t first, uint32_t n, uint32_t period) {
    if (first + 2 * period > n) return 0;
    uint32_t k = first + period;
    while (k < n && fits(lp, first, period, k)) k++;
    uint32_t iters = (k - first) / period;
    return iters >= 2 ? iters * period : 0;
}

/* The longest run at k of period 1..LOOP_SHORT_PERIOD (the shortest period
 * among equals). */
static uint32_t best_run(const LoopPlan *lp, uint32_t k, uint32_t n, uint32_t *bp) {
    uint32_t best = 0;
    *bp = 1;
    for (uint32_t p = 1; p <= LOOP_SHORT_PERIOD; p++) {
        uint32_t len = run_length(lp, k, n, p);
        if (len > best) best = len, *bp = p;
    }
    return best;
}

/* ---------- level 2: runs of units ---------- */

static uint64_t unit_key(const LoopPlan *lp, const Unit *u) {
    uint64_t h = hash_mix(u->count, u->period);
    for (uint32_t r = 0; r < u->period; r++) {
        const Shape *s = &lp->shape[u->first + r];
        if (!s->ok) return 0;
        h = hash_mix(h, s->hash);
        if (u->count == u->period) continue;
        const int64_t *i0 = item_idx(lp, u->first + r), *i1 = item_idx(lp, u->first + u->period + r);
        for (uint32_t q = 0; q < s->nidx; q++) h = hash_mix(h, (uint64_t)(i1[q] - i0[q]));
    }
    return h | 1;
}

/* Units a and b alike: the same item shapes and, for runs, the same count,
 * period and strides. */
static bool same_unit(const LoopPlan *lp, const Unit *a, const Unit *b) {
    if (!a->key || a->key != b->key || a->count != b->count || a->period != b->period) return false;
    for (uint32_t r = 0; r < a->period; r++) {
        if (!same_shape(lp, &lp->shape[a->first + r], &lp->shape[b->first + r])) return false;
        if (a->count == a->period) continue;
        const int64_t *a0 = item_idx(lp, a->first + r), *a1 = item_idx(lp, a->first + a->period + r);
        const int64_t *b0 = item_idx(lp, b->first + r), *b1 = item_idx(lp, b->first + b->period + r);
        for (uint32_t q = 0; q < lp->shape[a->first + r].nidx; q++)
            if (a1[q] - a0[q] != b1[q] - b0[q]) return false;
    }
    return true;
}

/* Does unit k (= u0 + P*J + r) fit the run of units started at u0? */
static bool unit_fits(const LoopPlan *lp, const Unit *u, uint32_t u0, uint32_t period, uint32_t k) {
    uint32_t r = (k - u0) % period, J = (k - u0) / period;
    const Unit *s0 = &u[u0 + r], *s1 = &u[u0 + period + r], *sk = &u[k];
    if (!same_unit(lp, s0, sk)) return false;
    for (uint32_t q = 0; q < s0->period; q++)
        if (!affine_idx(lp, s0->first + q, s1->first + q, sk->first + q, J)) return false;
    return true;
}

/* Units covered by the longest run of period P units from u0, whole
 * iterations (0: fewer than two). */
static uint32_t unit_run_length(const LoopPlan *lp, const Unit *u, uint32_t u0, uint32_t nu, uint32_t period) {
    if (u0 + 2 * period > nu) return 0;
    uint32_t k = u0 + period;
    while (k < nu && unit_fits(lp, u, u0, period, k)) k++;
    uint32_t iters = (k - u0) / period;
    return iters >= 2 ? iters * period : 0;
}

/* next[k]: the next unit after k with the same key (UINT32_MAX: none) */
static void next_same(Cg *g, const Unit *u, uint32_t nu, uint32_t *next) {
    HashMap last = {0};
    for (uint32_t k = nu; k-- > 0;) {
        next[k] = UINT32_MAX;
        if (!u[k].key) continue;
        void *v = hmap_get(&last, u[k].key);
        if (v) next[k] = (uint32_t)(uintptr_t)v - 1;
        hmap_put(g->arena, &last, u[k].key, (void *)(uintptr_t)(k + 1));
    }
    hmap_release(g->arena, &last);
}

/* The units' prefix sums: body items (a run's first iteration) and their
 * tokens, for the size of an outer loop's body. */
typedef struct UnitSums {
    uint32_t *items;          /* [nu + 1] */
    uint64_t *tok;            /* [nu + 1] */
} UnitSums;

static bool body_fits(const Cg *g, const UnitSums *s, uint32_t u0, uint32_t period) {
    return s->items[u0 + period] - s->items[u0] <= CG_LOOP_MAX_PERIOD &&
           s->tok[u0 + period] - s->tok[u0] <= g->chunk_cap;
}

/* Items covered by the units [u0, u0 + len). */
static uint32_t unit_items(const Unit *u, uint32_t u0, uint32_t len) {
    return len ? u[u0 + len - 1].first + u[u0 + len - 1].count - u[u0].first : 0;
}

/* Periods tried at unit u0: 1..LOOP_SHORT_PERIOD units, and the distances
 * from each of the next LOOP_WINDOW units to its next LOOP_HOPS repetitions
 * (a row of a grid: the boundary items of one row recur in the next; the
 * two ends of a row may share a shape), a body of at most
 * CG_LOOP_MAX_PERIOD items and chunk_cap tokens.  The run covering the most
 * items wins; returns its length in units. */
static uint32_t best_unit_run(const Cg *g, const LoopPlan *lp, const Unit *u, uint32_t nu, const uint32_t *next,
                              const UnitSums *s, uint32_t u0, uint32_t *bp) {
    uint32_t best = 0, best_items = 0;
    *bp = 1;
    for (uint32_t p = 1; p <= LOOP_SHORT_PERIOD && u0 + p <= nu && body_fits(g, s, u0, p); p++) {
        uint32_t len = unit_run_length(lp, u, u0, nu, p);
        if (unit_items(u, u0, len) > best_items) best = len, best_items = unit_items(u, u0, len), *bp = p;
    }
    for (uint32_t w = 0; w < LOOP_WINDOW && u0 + w < nu; w++) {
        uint32_t q = u0 + w;
        for (int hop = 0; hop < LOOP_HOPS && next[q] != UINT32_MAX; hop++) {
            q = next[q];
            uint32_t p = q - (u0 + w);
            if (u0 + p > nu || !body_fits(g, s, u0, p)) break;
            if (p <= LOOP_SHORT_PERIOD) continue;
            uint32_t len = unit_run_length(lp, u, u0, nu, p);
            if (unit_items(u, u0, len) > best_items) best = len, best_items = unit_items(u, u0, len), *bp = p;
        }
    }
    return best;
}

/* Level 1 over the items (run, period), then the units. */
static Unit *plan_level1(Cg *g, const LoopPlan *lp, uint32_t n, uint32_t *run, uint16_t *period, uint32_t *nu) {
    Unit *u = ARENA_ARRAY(g->arena, Unit, n);
    uint32_t m = 0;
    for (uint32_t k = 0; k < n;) {
        uint32_t bp, best = best_run(lp, k, n, &bp);
        Unit *x = &u[m++];
        *x = (Unit){.first = k, .count = 1, .period = 1};
        if (best >= LOOP_MIN_ITEMS) {
            run[k] = best;
            period[k] = (uint16_t)bp;
            x->count = best;
            x->period = bp;
        }
        x->key = unit_key(lp, x);
        k += x->count;
    }
    *nu = m;
    return u;
}

/* Level 2 over the units: a run of units holding a level-1 run is a nest
 * (nest, nest_period in items), one of single items a plain run. */
static void plan_level2(Cg *g, const LoopPlan *lp, const Unit *u, uint32_t nu, uint32_t *run, uint16_t *period,
                        uint32_t *nest, uint32_t *nest_period) {
    uint32_t *next = ARENA_ARRAY(g->arena, uint32_t, nu);
    UnitSums s = {ARENA_ARRAY(g->arena, uint32_t, nu + 1), ARENA_ARRAY(g->arena, uint64_t, nu + 1)};
    for (uint32_t k = 0; k < nu; k++) {
        s.items[k + 1] = s.items[k] + u[k].period;
        s.tok[k + 1] = s.tok[k];
        for (uint32_t r = 0; r < u[k].period; r++) s.tok[k + 1] += lp->shape[u[k].first + r].ntok;
    }
    next_same(g, u, nu, next);
    for (uint32_t k = 0; k < nu;) {
        uint32_t bp, len = best_unit_run(g, lp, u, nu, next, &s, k, &bp);
        uint32_t items = unit_items(u, k, len), first = u[k].first;
        if (items < LOOP_MIN_ITEMS) { k++; continue; }
        if (s.items[k + bp] - s.items[k] == unit_items(u, k, bp)) { /* single items only */
            run[first] = items;
            period[first] = (uint16_t)bp;
        } else {
            nest[first] = items;
            nest_period[first] = unit_items(u, k, bp);
        }
        k += len;
    }
    arena_release(g->arena, s.tok, sizeof *s.tok * ((size_t)nu + 1));
    arena_release(g->arena, s.items, sizeof *s.items * ((size_t)nu + 1));
    arena_release(g->arena, next, sizeof *next * (size_t)nu);
}

/* The loop items (CgItem.loop): given, not planned.  Their shapes are not
 * ok (shape_item), so the runs and nests planned around them never cover
 * one of their items. */
static void plan_loop_items(const CgItem *items, uint32_t n, uint32_t *run, uint16_t *period) {
    for (uint32_t k = 0; k < n;) {
        if (!items[k].loop) { k++; continue; }
        run[k] = period[k] = items[k].loop->period;
        k += run[k];
    }
}

void cg_plan_loops(Cg *g, const CgItem *items, uint32_t n, uint32_t *run, uint16_t *period, uint32_t *nest,
                   uint32_t *nest_period) {
    memset(run, 0, sizeof *run * n);
    memset(nest, 0, sizeof *nest * n);
    plan_loop_items(items, n, run, period);
    if (n < LOOP_MIN_ITEMS || g->opt->no_loops) return;
    LoopPlan lp = {.shape = ARENA_ARRAY(g->arena, Shape, n),
                   .seen = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1),
                   .num = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1)};
    for (uint32_t k = 0; k < n; k++) shape_item(g, &lp, &items[k], &lp.shape[k]);
    uint32_t nu;
    Unit *u = plan_level1(g, &lp, n, run, period, &nu);
    plan_level2(g, &lp, u, nu, run, period, nest, nest_period);
    /* the plan's tables are dead: per-node ones are as large as the whole
     * expression DAG, and every emitted function plans its own */
    arena_release(g->arena, u, sizeof *u * (size_t)n);
    arena_release(g->arena, lp.num, sizeof *lp.num * ((size_t)g->nnodes + 1));
    arena_release(g->arena, lp.seen, sizeof *lp.seen * ((size_t)g->nnodes + 1));
    arena_release(g->arena, lp.shape, sizeof *lp.shape * (size_t)n);
    vec_release(g->arena, &lp.tok);
    vec_release(g->arena, &lp.idx);
}

/* ---------- emission ---------- */

/* i32 index base + outer * J + inner * j of the current nest and loop (a
 * stride is 0 outside its loop). */
static LLVMValueRef index2(Cg *g, uint32_t base, int32_t outer, int32_t inner) {
    LLVMValueRef v = LLVMConstInt(g->t_i32, base, 0);
    if (outer && g->nest_j) {
        LLVMValueRef s = LLVMConstInt(g->t_i32, (unsigned long long)(int64_t)outer, 1);
        v = LLVMBuildAdd(g->bld, v, LLVMBuildMul(g->bld, g->nest_j, s, ""), "");
    }
    if (inner && g->loop_j) {
        LLVMValueRef s = LLVMConstInt(g->t_i32, (unsigned long long)(int64_t)inner, 1);
        v = LLVMBuildAdd(g->bld, v, LLVMBuildMul(g->bld, g->loop_j, s, ""), "");
    }
    return v;
}

/* i32 index base + stride * j of the current loop */
LLVMValueRef cg_loop_index(Cg *g, uint32_t base, int32_t stride) {
    LLVMValueRef b = LLVMConstInt(g->t_i32, base, 0);
    if (!stride || !g->loop_j) return b;
    LLVMValueRef s = LLVMConstInt(g->t_i32, (unsigned long long)(int64_t)stride, 1);
    return LLVMBuildAdd(g->bld, b, LLVMBuildMul(g->bld, g->loop_j, s, ""), "");
}

static bool set_stride(int32_t *tab, uint32_t *stamp, uint32_t gen, uint32_t node, const Expr *x, const Expr *y) {
    int32_t st = (int32_t)((int64_t)y->index - (int64_t)x->index);
    if (stamp[node] == gen) return tab[node] == st;
    tab[node] = st;
    stamp[node] = gen;
    return true;
}

/* The same preorder walk over a root of the first iteration and the
 * corresponding root of the second (their shapes are equal): each leaf's
 * stride into tab (valid where stamp == gen).  False when a leaf shared by
 * two items of an iteration would need two strides (the shapes do not see
 * sharing between items). */
static bool root_strides(Cg *g, Expr *ra, Expr *rb, int32_t *tab, uint32_t *stamp, uint32_t gen) {
    ExprVec sa = {0}, sb = {0};
    vec_push(g->arena, &sa, ra);
    vec_push(g->arena, &sb, rb);
    g->stamp++;
    while (sa.len) {
        Expr *x = sa.data[--sa.len], *y = sb.data[--sb.len];
        if (g->count_stamp[cg_node(g, x)] == g->stamp) continue;
        g->count_stamp[cg_node(g, x)] = g->stamp;
        if (indexed_leaf(x) && !set_stride(tab, stamp, gen, cg_node(g, x), x, y)) return false;
        for (int i = x->nargs - 1; i >= 0; i--) {
            vec_push(g->arena, &sa, x->args[i]);
            vec_push(g->arena, &sb, y->args[i]);
        }
    }
    return true;
}

static bool item_strides(Cg *g, const CgItem *a, const CgItem *b, int32_t *tab, uint32_t *stamp, uint32_t gen) {
    return (!a->a || root_strides(g, a->a, b->a, tab, stamp, gen)) &&
           (!a->b || root_strides(g, a->b, b->b, tab, stamp, gen));
}

/* a loop item's strides: given with it, dimension 0 in loop_stride, the
 * others in box_stride (leaves that no item reads have no node) */
static bool loop_item_strides(Cg *g, const CgLoopItem *l, int32_t *dest_stride) {
    const SysLoop *sl = l->sl;
    for (uint32_t i = 0; i < sl->nleaf; i++) {
        uint32_t k = cg_node(g, sl->leaf[i]);
        if (!k) continue;
        g->loop_stride[k] = sl->stride[i];
        for (uint32_t d = 1; d < sl->ndim; d++)
            g->box_stride[(d - 1) * ((size_t)g->nnodes + 1) + k] = sl->stride[d * sl->nleaf + i];
        g->stride_stamp[k] = g->loop_gen;
    }
    for (uint32_t r = 0; r < l->period; r++) dest_stride[r] = l->dest_step[0];
    return true;
}

bool cg_loop_strides(Cg *g, const CgItem *items, uint32_t k0, uint32_t period, int32_t *dest_stride) {
    g->loop_gen++;
    if (items[k0].loop) return loop_item_strides(g, items[k0].loop, dest_stride);
    for (uint32_t r = 0; r < period; r++) {
        const CgItem *a = &items[k0 + r], *b = &items[k0 + period + r];
        dest_stride[r] = (int32_t)((int64_t)b->dest_index - (int64_t)a->dest_index);
        if (!item_strides(g, a, b, g->loop_stride, g->stride_stamp, g->loop_gen)) return false;
    }
    return true;
}

bool cg_nest_strides(Cg *g, const CgItem *items, uint32_t first, uint32_t period) {
    int32_t ds[CG_LOOP_MAX_PERIOD];
    g->nest_gen++;
    for (uint32_t x = first; x < first + period; x += g->run[x] ? g->run[x] : 1) {
        uint32_t body = g->run[x] ? g->period[x] : 1;
        for (uint32_t r = 0; r < body; r++)
            if (!item_strides(g, &items[x + r], &items[x + period + r], g->nest_stride, g->nest_stamp,
                              g->nest_gen))
                return false;
        if (g->run[x] && !cg_loop_strides(g, items, x, g->period[x], ds)) return false;
    }
    return true;
}

int32_t cg_leaf_stride(const Cg *g, const Expr *e) {
    return g->loop_j && g->stride_stamp[cg_node(g, e)] == g->loop_gen ? g->loop_stride[cg_node(g, e)] : 0;
}

/* v + i_d * step for the outer dimensions d >= 1 of the current loop item
 * with a nonzero step (box_j[d] set) */
static LLVMValueRef box_add(Cg *g, LLVMValueRef v, uint32_t d, int32_t step) {
    if (!step || !g->box_j[d]) return v;
    LLVMValueRef s = LLVMConstInt(g->t_i32, (unsigned long long)(int64_t)step, 1);
    return LLVMBuildAdd(g->bld, v, LLVMBuildMul(g->bld, g->box_j[d], s, ""), "");
}

LLVMValueRef cg_leaf_index(Cg *g, uint32_t index, const Expr *e) {
    uint32_t k = cg_node(g, e);
    int32_t inner = cg_leaf_stride(g, e), box[SYS_LOOP_MAX_DIM] = {0};
    int32_t outer = g->nest_j && g->nest_stamp[k] == g->nest_gen ? g->nest_stride[k] : 0;
    bool moves = inner || outer;
    for (uint32_t d = 1; d < SYS_LOOP_MAX_DIM && g->box_j[d] && g->stride_stamp[k] == g->loop_gen; d++)
        moves |= (box[d] = g->box_stride[(d - 1) * ((size_t)g->nnodes + 1) + k]) != 0;
    if (!moves) return NULL;
    LLVMValueRef v = index2(g, index, outer, inner);
    for (uint32_t d = 1; d < SYS_LOOP_MAX_DIM; d++) v = box_add(g, v, d, box[d]);
    return v;
}

/* i32 index base + sum over d of i_d * step[d] in the current loop item */
static LLVMValueRef box_index(Cg *g, uint32_t base, const int32_t *step) {
    LLVMValueRef v = cg_loop_index(g, base, step[0]);
    for (uint32_t d = 1; d < SYS_LOOP_MAX_DIM; d++) v = box_add(g, v, d, step[d]);
    return v;
}

/* The stride of item x's destination in the current nest (0 outside). */
static int32_t nest_dest_stride(const Cg *g, const CgItem *items, uint32_t x) {
    if (!g->nest_j) return 0;
    return (int32_t)((int64_t)items[x + g->nest_items].dest_index - (int64_t)items[x].dest_index);
}

/* One item of a loop body: store it (or for ASSERT fold 1 + its number,
 * base_no + outer * J + inner * j, into acc) and return the new acc. */
static LLVMValueRef body_item(Cg *g, const CgFnSpec *spec, const CgItem *items, uint32_t x, int32_t inner_dest,
                              int32_t inner_no, LLVMValueRef acc) {
    const CgItem *it = &items[x];
    LLVMValueRef v = cg_item_value(g, it);
    if (spec->ret == CG_RET_ASSERT) {     /* acc = acc ? acc : (v is 0 or NaN ? 1 + item : 0) */
        LLVMValueRef zero = LLVMConstInt(g->t_i32, 0, 0);
        LLVMValueRef failed = LLVMBuildFCmp(g->bld, LLVMRealUEQ, v, LLVMConstReal(g->t_f64, 0.0), "");
        LLVMValueRef no = index2(g, x + 1, (int32_t)g->nest_items, inner_no);
        LLVMValueRef mine = LLVMBuildSelect(g->bld, failed, no, zero, "");
        LLVMValueRef have = LLVMBuildICmp(g->bld, LLVMIntNE, acc, zero, "");
        return LLVMBuildSelect(g->bld, have, acc, mine, "");
    }
    LLVMValueRef idx;
    if (it->loop) {                       /* a loop item: dest_index moved by its steps */
        idx = box_index(g, it->dest_index, it->loop->dest_step);
        if (it->loop->scatter)            /* entry r = dest_index: scatter[r + period * j] */
            idx = LLVMBuildLoad2(g->bld, g->t_i32, LLVMBuildInBoundsGEP2(g->bld, g->t_i32, it->loop->scatter, &idx, 1, ""), "");
    } else {
        idx = index2(g, it->dest_index, nest_dest_stride(g, items, x), inner_dest);
    }
    LLVMBuildStore(g->bld, v, LLVMBuildInBoundsGEP2(g->bld, g->t_f64, g->args[it->dest_arg], &idx, 1, ""));
    if (spec->ret == CG_RET_STATUS) acc = LLVMBuildOr(g->bld, acc, LLVMBuildFCmp(g->bld, LLVMRealUNO, v, v, ""), "");
    return acc;
}

/* A loop block from the builder's current block: the PHIs of the iteration
 * number and of the accumulator (from acc_in); *j_out, *acc_out. */
typedef struct LoopBlocks {
    LLVMBasicBlockRef entry, body, done;
    LLVMValueRef j, acc;
} LoopBlocks;

static LoopBlocks loop_begin(Cg *g, const CgFnSpec *spec, LLVMValueRef fn, const char *name) {
    LoopBlocks b = {.entry = LLVMGetInsertBlock(g->bld)};
    LLVMTypeRef acc_t = spec->ret == CG_RET_ASSERT ? g->t_i32 : g->t_i1;
    b.body = LLVMAppendBasicBlockInContext(g->ctx, fn, name);
    b.done = LLVMAppendBasicBlockInContext(g->ctx, fn, "done");
    LLVMBuildBr(g->bld, b.body);
    LLVMPositionBuilderAtEnd(g->bld, b.body);
    b.j = LLVMBuildPhi(g->bld, g->t_i32, "j");
    b.acc = LLVMBuildPhi(g->bld, acc_t, "acc");
    return b;
}

/* Close the loop of iters iterations: the latch, the PHIs' incoming
 * values; the builder is left in the block after the loop. */
static void loop_end(Cg *g, LoopBlocks *b, uint32_t iters, LLVMValueRef acc_in, LLVMValueRef acc) {
    LLVMValueRef jn = LLVMBuildAdd(g->bld, b->j, LLVMConstInt(g->t_i32, 1, 0), "");
    LLVMValueRef more = LLVMBuildICmp(g->bld, LLVMIntULT, jn, LLVMConstInt(g->t_i32, iters, 0), "");
    LLVMBasicBlockRef last = LLVMGetInsertBlock(g->bld);
    LLVMBuildCondBr(g->bld, more, b->body, b->done);
    LLVMValueRef jin[2] = {LLVMConstInt(g->t_i32, 0, 0), jn};
    LLVMValueRef ain[2] = {acc_in, acc};
    LLVMBasicBlockRef from[2] = {b->entry, last};
    LLVMAddIncoming(b->j, jin, from, 2);
    LLVMAddIncoming(b->acc, ain, from, 2);
    LLVMPositionBuilderAtEnd(g->bld, b->done);
}

static LLVMValueRef acc_zero(Cg *g, const CgFnSpec *spec) {
    return LLVMConstInt(spec->ret == CG_RET_ASSERT ? g->t_i32 : g->t_i1, 0, 0);
}

/* The loop over items [first, first + count), `period` per iteration, its
 * accumulator starting at acc_in; inside a nest its indices also move with
 * the nest's J. */
static LLVMValueRef emit_loop(Cg *g, const CgFnSpec *spec, const CgItem *items, uint32_t first, uint32_t count,
                              uint32_t period, const int32_t *dstride, LLVMValueRef acc_in, LLVMValueRef fn) {
    const SysLoop *sl = items[first].loop ? items[first].loop->sl : NULL;
    uint32_t ndim = sl ? sl->ndim : 1;
    LoopBlocks outer[SYS_LOOP_MAX_DIM];   /* a loop item's dimensions d >= 1, outermost first */
    LLVMValueRef in[SYS_LOOP_MAX_DIM];
    LLVMValueRef acc = acc_in;
    for (uint32_t d = ndim; d-- > 1;) {
        in[d] = acc;
        outer[d] = loop_begin(g, spec, fn, "box");
        g->box_j[d] = outer[d].j;
        acc = outer[d].acc;
    }
    LoopBlocks b = loop_begin(g, spec, fn, "loop");
    LLVMValueRef inner_in = acc;
    g->loop_j = b.j;
    g->stamp++;
    acc = b.acc;
    for (uint32_t r = 0; r < period; r++)
        acc = body_item(g, spec, items, first + r, dstride[r], (int32_t)period, acc);
    loop_end(g, &b, sl ? sl->dim_count[0] : count / period, inner_in, acc);
    for (uint32_t d = 1; d < ndim; d++) {
        loop_end(g, &outer[d], sl->dim_count[d], in[d], acc);
        g->box_j[d] = NULL;
    }
    g->nloops++;
    g->loop_j = NULL;
    g->stamp++;
    return acc;
}

/* A loop in fn, from the builder's current block: for j in [0,
 * count/period) the items of one iteration, each stored at dest + stride*j
 * (strides from cg_loop_strides).  Leaves the builder in the block after
 * the loop and returns what the loop adds to the function's result: STATUS
 * the i1 "some value was NaN", ASSERT the i32 1 + number of the first item
 * that is 0 or NaN (0: none), VOID NULL.  Values emitted before the loop
 * are not reused inside it nor values of its body after it (the memo stamp
 * moves on both ways). */
LLVMValueRef cg_emit_loop(Cg *g, const CgFnSpec *spec, const CgItem *items, uint32_t first, uint32_t count,
                          uint32_t period, const int32_t *dstride, LLVMValueRef fn) {
    LLVMValueRef acc = emit_loop(g, spec, items, first, count, period, dstride, acc_zero(g, spec), fn);
    return spec->ret == CG_RET_VOID ? NULL : acc;
}

/* A nest in fn (strides from cg_nest_strides): for J in [0, count/period)
 * the items [first, first + period) moved by J, the level-1 runs among them
 * (g->run) as inner loops.  Returns as cg_emit_loop. */
LLVMValueRef cg_emit_nest(Cg *g, const CgFnSpec *spec, const CgItem *items, uint32_t first, uint32_t count,
                          uint32_t period, LLVMValueRef fn) {
    LoopBlocks b = loop_begin(g, spec, fn, "nest");
    g->nest_j = b.j;
    g->nest_items = period;
    g->stamp++;
    LLVMValueRef acc = b.acc;
    int32_t ds[CG_LOOP_MAX_PERIOD];
    for (uint32_t x = first; x < first + period;) {
        if (!g->run[x]) {
            acc = body_item(g, spec, items, x++, 0, 0, acc);
            continue;
        }
        cg_loop_strides(g, items, x, g->period[x], ds);     /* checked by cg_nest_strides */
        acc = emit_loop(g, spec, items, x, g->run[x], g->period[x], ds, acc, fn);
        x += g->run[x];
    }
    loop_end(g, &b, count / period, acc_zero(g, spec), acc);
    g->nest_j = NULL;
    g->nest_items = 0;
    g->stamp++;
    return spec->ret == CG_RET_VOID ? NULL : acc;
}
