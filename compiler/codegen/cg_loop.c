/*
 * cg_loop.c -- runs of items that differ only in their slot indices become
 * one loop ("rerolling").
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
 * the band width) covers them.  Two leaves that coincide in one item but
 * not in the first would change the back references, so they break the run.
 *
 * Loop items of the System (SysLoop: the rows of a run, stage 3 step 3 of
 * docs/ARCHITECTURE.md "Arrays") come as one iteration's items with their
 * count and strides (CgItem.loop): they are not planned, only emitted by
 * the same loop emitter.
 *
 * Only plain items qualify (not a copy, not guarded by `given`), with at most
 * LOOP_MAX_NODES nodes.  Periods: every one up to 16, and longer ones where
 * an item's shape recurs (best_run).  In ASSERT functions the loop keeps the first
 * failing item's number, first + period*j + r, as the straight code does.  Planning is
 * O(items x (LOOP_SHORT_PERIOD + LOOP_WINDOW x LOOP_HOPS) x nodes per item).
 */
#include <string.h>

#include "cg_internal.h"

#define LOOP_MAX_NODES 256    /* larger items are emitted straight */
#define LOOP_MIN_ITEMS 16     /* shorter runs are not worth a loop */
#define LOOP_SHORT_PERIOD 16  /* periods always tried */
#define LOOP_WINDOW 16        /* items whose next repetitions propose periods */
#define LOOP_HOPS 4           /* repetitions looked at per item */

#define TOK_BACK 0x100u       /* token: back reference (| number << 16) */

typedef struct Shape {
    uint32_t tok_off, ntok;   /* into LoopPlan.tok */
    uint32_t idx_off, nidx;   /* into LoopPlan.idx */
    uint64_t hash;
    bool ok;                  /* a plain item within the size cap */
} Shape;

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

/* Does item k (= first + P*j + r) fit the run started at `first`? */
static bool fits(const LoopPlan *lp, uint32_t first, uint32_t period, uint32_t k) {
    uint32_t r = (k - first) % period, j = (k - first) / period;
    const Shape *s0 = &lp->shape[first + r], *s1 = &lp->shape[first + period + r], *sk = &lp->shape[k];
    if (!same_shape(lp, s0, sk)) return false;
    const int64_t *i0 = lp->idx.data + s0->idx_off, *i1 = lp->idx.data + s1->idx_off,
                  *ik = lp->idx.data + sk->idx_off;
    for (uint32_t q = 0; q < s0->nidx; q++)
        if (ik[q] != i0[q] + (int64_t)j * (i1[q] - i0[q])) return false;
    return true;
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

/* next[k]: the next item after k of the same shape hash (UINT32_MAX: none) */
static void next_same(Cg *g, const LoopPlan *lp, uint32_t n, uint32_t *next) {
    HashMap last = {0};
    for (uint32_t k = n; k-- > 0;) {
        next[k] = UINT32_MAX;
        if (!lp->shape[k].ok) continue;
        uint64_t key = lp->shape[k].hash | 1;    /* a HashMap key is nonzero */
        void *v = hmap_get(&last, key);
        if (v) next[k] = (uint32_t)(uintptr_t)v - 1;
        hmap_put(g->arena, &last, key, (void *)(uintptr_t)(k + 1));
    }
    hmap_release(g->arena, &last);
}

/* Periods tried at k: 1..LOOP_SHORT_PERIOD, and the distances from each of
 * the next LOOP_WINDOW items to its next LOOP_HOPS repetitions (a row of a
 * grid: the boundary items of one row recur in the next; the two ends of a
 * row may share a shape), up to CG_LOOP_MAX_PERIOD items and a body of at
 * most chunk_cap tokens.  The longest run wins. */
static uint32_t best_run(Cg *g, const LoopPlan *lp, const uint32_t *next, const uint64_t *tokpre,
                         uint32_t k, uint32_t n, uint32_t *bp) {
    uint32_t best = 0;
    *bp = 1;
    for (uint32_t p = 1; p <= LOOP_SHORT_PERIOD; p++) {
        uint32_t len = run_length(lp, k, n, p);
        if (len > best) best = len, *bp = p;
    }
    for (uint32_t w = 0; w < LOOP_WINDOW && k + w < n; w++) {
        uint32_t q = k + w;
        for (int hop = 0; hop < LOOP_HOPS && next[q] != UINT32_MAX; hop++) {
            q = next[q];
            uint32_t p = q - (k + w);
            if (p > CG_LOOP_MAX_PERIOD || k + p > n || tokpre[k + p] - tokpre[k] > g->chunk_cap) break;
            if (p <= LOOP_SHORT_PERIOD) continue;
            uint32_t len = run_length(lp, k, n, p);
            if (len > best) best = len, *bp = p;
        }
    }
    return best;
}

/* The loop items: given, not planned */
static void plan_loop_items(const CgItem *items, uint32_t n, uint32_t *run, uint16_t *period) {
    for (uint32_t k = 0; k < n;) {
        if (!items[k].loop) { k++; continue; }
        run[k] = period[k] = items[k].loop->period;
        k += run[k];
    }
}

void cg_plan_loops(Cg *g, const CgItem *items, uint32_t n, uint32_t *run,
                   uint16_t *period) {
    memset(run, 0, sizeof *run * n);
    plan_loop_items(items, n, run, period);
    if (n < LOOP_MIN_ITEMS || g->opt->no_loops) return;
    LoopPlan lp = {.shape = ARENA_ARRAY(g->arena, Shape, n),
                   .seen = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1),
                   .num = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1)};
    uint32_t *next = ARENA_ARRAY(g->arena, uint32_t, n);
    uint64_t *tokpre = ARENA_ARRAY(g->arena, uint64_t, n + 1);
    for (uint32_t k = 0; k < n; k++) {
        shape_item(g, &lp, &items[k], &lp.shape[k]);
        tokpre[k + 1] = tokpre[k] + lp.shape[k].ntok;
    }
    next_same(g, &lp, n, next);
    for (uint32_t k = 0; k < n;) {
        if (items[k].loop) { k += run[k]; continue; }
        uint32_t bp, best = best_run(g, &lp, next, tokpre, k, n, &bp);
        if (best < LOOP_MIN_ITEMS) { k++; continue; }
        run[k] = best;
        period[k] = (uint16_t)bp;
        k += best;
    }
    /* the plan's tables are dead: per-node ones are as large as the whole
     * expression DAG, and every emitted function plans its own */
    arena_release(g->arena, tokpre, sizeof *tokpre * (size_t)(n + 1));
    arena_release(g->arena, next, sizeof *next * (size_t)n);
    arena_release(g->arena, lp.num, sizeof *lp.num * ((size_t)g->nnodes + 1));
    arena_release(g->arena, lp.seen, sizeof *lp.seen * ((size_t)g->nnodes + 1));
    arena_release(g->arena, lp.shape, sizeof *lp.shape * (size_t)n);
    vec_release(g->arena, &lp.tok);
    vec_release(g->arena, &lp.idx);
}

/* ---------- emission ---------- */

/* i32 index base + stride * j of the current loop */
LLVMValueRef cg_loop_index(Cg *g, uint32_t base, int32_t stride) {
    LLVMValueRef b = LLVMConstInt(g->t_i32, base, 0);
    if (!stride || !g->loop_j) return b;
    LLVMValueRef s = LLVMConstInt(g->t_i32, (unsigned long long)(int64_t)stride, 1);
    return LLVMBuildAdd(g->bld, b, LLVMBuildMul(g->bld, g->loop_j, s, ""), "");
}

static bool set_stride(Cg *g, const Expr *x, const Expr *y) {
    int32_t st = (int32_t)((int64_t)y->index - (int64_t)x->index);
    if (g->stride_stamp[cg_node(g, x)] == g->loop_gen) return g->loop_stride[cg_node(g, x)] == st;
    g->loop_stride[cg_node(g, x)] = st;
    g->stride_stamp[cg_node(g, x)] = g->loop_gen;
    return true;
}

/* The same preorder walk over a root of the first iteration and the
 * corresponding root of the second (their shapes are equal): each leaf's
 * stride.  False when a leaf shared by two items of an iteration would need
 * two strides (the shapes do not see sharing between items). */
static bool root_strides(Cg *g, Expr *ra, Expr *rb) {
    ExprVec sa = {0}, sb = {0};
    vec_push(g->arena, &sa, ra);
    vec_push(g->arena, &sb, rb);
    g->stamp++;
    while (sa.len) {
        Expr *x = sa.data[--sa.len], *y = sb.data[--sb.len];
        if (g->count_stamp[cg_node(g, x)] == g->stamp) continue;
        g->count_stamp[cg_node(g, x)] = g->stamp;
        if (indexed_leaf(x) && !set_stride(g, x, y)) return false;
        for (int i = x->nargs - 1; i >= 0; i--) {
            vec_push(g->arena, &sa, x->args[i]);
            vec_push(g->arena, &sb, y->args[i]);
        }
    }
    return true;
}

/* a loop item's strides: given with it (leaves that no item reads have no node) */
static bool loop_item_strides(Cg *g, const CgLoopItem *l, int32_t *dest_stride) {
    for (uint32_t i = 0; i < l->sl->nleaf; i++) {
        uint32_t k = cg_node(g, l->sl->leaf[i]);
        if (!k) continue;
        g->loop_stride[k] = l->sl->stride[i];
        g->stride_stamp[k] = g->loop_gen;
    }
    for (uint32_t r = 0; r < l->period; r++) dest_stride[r] = l->dest_stride;
    return true;
}

bool cg_loop_strides(Cg *g, const CgItem *items, uint32_t k0, uint32_t period, int32_t *dest_stride) {
    g->loop_gen++;
    if (items[k0].loop) return loop_item_strides(g, items[k0].loop, dest_stride);
    for (uint32_t r = 0; r < period; r++) {
        const CgItem *a = &items[k0 + r], *b = &items[k0 + period + r];
        dest_stride[r] = (int32_t)((int64_t)b->dest_index - (int64_t)a->dest_index);
        if (a->a && !root_strides(g, a->a, b->a)) return false;
        if (a->b && !root_strides(g, a->b, b->b)) return false;
    }
    return true;
}

int32_t cg_leaf_stride(const Cg *g, const Expr *e) {
    return g->loop_j && g->stride_stamp[cg_node(g, e)] == g->loop_gen ? g->loop_stride[cg_node(g, e)] : 0;
}

/* A loop in fn, from the builder's current block: for j in [0,
 * count/period) -- a loop item: its count -- the items of one iteration,
 * each stored at dest + stride*j (a loop item with a scatter table: at
 * scatter[j*period + r])
 * (strides from cg_loop_strides).  Leaves the builder in the block after
 * the loop and returns what the loop adds to the function's result: STATUS
 * the i1 "some value was NaN", ASSERT the i32 1 + number of the first item
 * that is 0 or NaN (0: none), VOID NULL.  Values emitted before the loop
 * are not reused inside it nor values of its body after it (the memo stamp
 * moves on both ways). */
LLVMValueRef cg_emit_loop(Cg *g, const CgFnSpec *spec, const CgItem *items, uint32_t first, uint32_t count,
                          uint32_t period, const int32_t *dstride, LLVMValueRef fn) {
    bool assert = spec->ret == CG_RET_ASSERT;
    LLVMTypeRef acc_t = assert ? g->t_i32 : g->t_i1;
    LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->bld);
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, fn, "loop");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, fn, "done");
    LLVMBuildBr(g->bld, body);
    LLVMPositionBuilderAtEnd(g->bld, body);
    LLVMValueRef j = LLVMBuildPhi(g->bld, g->t_i32, "j");
    LLVMValueRef any = LLVMBuildPhi(g->bld, acc_t, "acc");
    g->loop_j = j;
    g->stamp++;
    LLVMValueRef acc = any, zero = LLVMConstInt(g->t_i32, 0, 0);
    for (uint32_t r = 0; r < period; r++) {
        const CgItem *it = &items[first + r];
        LLVMValueRef v = cg_item_value(g, it);
        if (assert) {             /* acc = acc ? acc : (v is 0 or NaN ? 1 + item : 0) */
            LLVMValueRef failed = LLVMBuildFCmp(g->bld, LLVMRealUEQ, v, LLVMConstReal(g->t_f64, 0.0), "");
            LLVMValueRef mine = LLVMBuildSelect(g->bld, failed, cg_loop_index(g, first + r + 1, (int32_t)period),
                                                zero, "");
            LLVMValueRef have = LLVMBuildICmp(g->bld, LLVMIntNE, acc, zero, "");
            acc = LLVMBuildSelect(g->bld, have, acc, mine, "");
            continue;
        }
        LLVMValueRef idx = cg_loop_index(g, it->dest_index, dstride[r]);
        if (it->loop && it->loop->scatter) { /* idx = scatter[j * period + r] */
            LLVMValueRef at = cg_loop_index(g, r, (int32_t)period);
            LLVMValueRef p = LLVMBuildInBoundsGEP2(g->bld, g->t_i32, it->loop->scatter, &at, 1, "");
            idx = LLVMBuildLoad2(g->bld, g->t_i32, p, "");
        }
        LLVMBuildStore(g->bld, v, LLVMBuildInBoundsGEP2(g->bld, g->t_f64, g->args[it->dest_arg], &idx, 1, ""));
        if (spec->ret == CG_RET_STATUS)
            acc = LLVMBuildOr(g->bld, acc, LLVMBuildFCmp(g->bld, LLVMRealUNO, v, v, ""), "");
    }
    LLVMValueRef jn = LLVMBuildAdd(g->bld, j, LLVMConstInt(g->t_i32, 1, 0), "");
    uint32_t iters = items[first].loop ? items[first].loop->count : count / period;
    LLVMValueRef more = LLVMBuildICmp(g->bld, LLVMIntULT, jn, LLVMConstInt(g->t_i32, iters, 0), "");
    LLVMBasicBlockRef last = LLVMGetInsertBlock(g->bld);
    LLVMBuildCondBr(g->bld, more, body, done);
    LLVMValueRef jin[2] = {LLVMConstInt(g->t_i32, 0, 0), jn};
    LLVMValueRef ain[2] = {LLVMConstInt(acc_t, 0, 0), acc};
    LLVMBasicBlockRef from[2] = {entry, last};
    LLVMAddIncoming(j, jin, from, 2);
    LLVMAddIncoming(any, ain, from, 2);
    LLVMPositionBuilderAtEnd(g->bld, done);
    g->loop_j = NULL;
    g->stamp++;
    return spec->ret == CG_RET_VOID ? NULL : acc;
}
