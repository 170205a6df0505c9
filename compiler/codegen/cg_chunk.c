/*
 * cg_chunk.c -- an item list -> an entry function calling bounded chunks.
 *
 * Input: a CgFnSpec (signature) and items (one stored double each).
 * Output: the internal entry function `spec->name`, which calls the
 * internal noinline chunk functions `<name>.0`, `<name>.1`, ... in order.
 * cg_emit_function only declares the entry and keeps the items; once every
 * function is declared, cg_emit_functions numbers the expression nodes the
 * kept items reach (the per-node tables are sized by those, a third or
 * less of all nodes the earlier phases created) and emits the bodies.
 *
 * Chunking rule: items are taken in order; a chunk takes the next item
 * while its distinct expression nodes (counted once per chunk, shared
 * subexpressions included once) plus one per store stay within
 * Cg.chunk_cap.  A chunk always takes at least one item.  An item larger
 * than the cap alone (e.g. a flow sum over every branch of a circuit) is cut
 * into "pieces" (plan_cuts): chunk functions that each compute one cut node
 * into a stack array `tmp` of the entry function (every chunk takes it as
 * one more argument), called before the item's own chunk, which loads them.
 * One huge basic block made the back end superlinear.  Cost: O(nodes) per
 * chunk.
 *
 * Return values (CgRet): STATUS chunks return 1 when a stored value is NaN
 * (a domain error IDA treats as a failed step), the entry ORs them;
 * ASSERT chunks return 1 + the index of the first item that is 0 or NaN,
 * the entry keeps the first nonzero chunk result.
 *
 * Sharing between chunks: the chunks are planned first (plan_chunks), in
 * order; an operation computed by a straight item of chunk c and not by an
 * earlier chunk is c's (claim_chunk); planning a later chunk counts such a
 * value as one load and gives it a tmp slot (cg_count_new), and at emission
 * the owner stores it there, the later chunks load it (cg_expr).  Loops
 * neither own nor load shared values (their body stands for every
 * iteration).  tmp holds the shared slots first, then the pieces'.
 *
 * Bulk: when Cg.bulk exists (below -O3) and the entry's straight-line
 * chunks hold at least CG_BULK_NODES nodes, those chunks (and pieces) are
 * defined in the bulk module, hidden, and the entry calls them through
 * declarations; a cold entry (CgFnSpec.cold) has all its chunks there.
 *
 * param_defaults reads p while writing it: an item stores p[i] = given[i] ?
 * p[i] : value.  Its Exprs read P slots of parameters stored by earlier items
 * only (dependency order), whose first load in the chunk is emitted after
 * that store, so it sees the new value.
 */
#include <string.h>

#include "cg_internal.h"

static void add_fn_attr(Cg *g, LLVMValueRef fn, const char *name) {
    unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(g->ctx, k, 0));
}

/* Pointer arguments are noalias: the runtime never passes an array that
 * overlaps one the function writes (dyad_model.h).  Without it every store
 * may clobber every later load, and optimization becomes quadratic. */
static void add_param_attr(Cg *g, LLVMValueRef fn, unsigned i, const char *name) {
    unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, i + 1, LLVMCreateEnumAttribute(g->ctx, k, 0));
}

/* Internal, except a bulk chunk: hidden, so the main module's entry can
 * call it through a declaration of the same name (bulk_decl). */
static void bulk_linkage(Cg *g, LLVMValueRef fn) {
    if (g->cur_mod != g->bulk) {
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        return;
    }
    LLVMSetLinkage(fn, LLVMExternalLinkage);
    LLVMSetVisibility(fn, LLVMHiddenVisibility);
}

/* The main module's handle of chunk fn: fn itself, or for a bulk chunk a
 * declaration of it. */
static LLVMValueRef bulk_decl(Cg *g, LLVMValueRef fn, LLVMTypeRef fty) {
    if (LLVMGetGlobalParent(fn) == g->mod) return fn;
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    LLVMValueRef d = LLVMAddFunction(g->mod, name, fty);
    LLVMSetVisibility(d, LLVMHiddenVisibility);
    add_fn_attr(g, d, "nounwind");
    return d;
}

/* The spec's signature; chunks take one more argument, double *tmp. */
static LLVMTypeRef fn_type(Cg *g, const CgFnSpec *spec, bool chunk) {
    LLVMTypeRef ps[7];
    for (int i = 0; i < spec->nargs; i++) {
        CgArg r = spec->args[i];
        ps[i] = (r == CG_ARG_T || r == CG_ARG_CJ) ? g->t_f64 : g->t_ptr;
    }
    ps[spec->nargs] = g->t_ptr;
    LLVMTypeRef ret = spec->ret == CG_RET_VOID ? LLVMVoidTypeInContext(g->ctx) : g->t_i32;
    return LLVMFunctionType(ret, ps, (unsigned)spec->nargs + (chunk ? 1 : 0), 0);
}

/* Give fn (of the spec's signature, in g->cur_mod) its attributes and an
 * entry block, and position the builder there. */
static void begin_body(Cg *g, const CgFnSpec *spec, LLVMValueRef fn, bool chunk) {
    bulk_linkage(g, fn);
    add_fn_attr(g, fn, "nounwind");
    if (chunk) add_fn_attr(g, fn, "noinline");
    for (int i = 0; i < CG_ARG_COUNT; i++) g->args[i] = NULL;
    g->leaves = spec->leaves;
    g->fn_name = spec->name;
    for (int i = 0; i < spec->nargs; i++) {
        g->args[spec->args[i]] = LLVMGetParam(fn, (unsigned)i);
        if (spec->args[i] != CG_ARG_T && spec->args[i] != CG_ARG_CJ)
            add_param_attr(g, fn, (unsigned)i, "noalias");
    }
    if (chunk) {
        g->args[CG_ARG_TMP] = LLVMGetParam(fn, (unsigned)spec->nargs);
        add_param_attr(g, fn, (unsigned)spec->nargs, "noalias");
    }
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(g->ctx, fn, "entry");
    LLVMPositionBuilderAtEnd(g->bld, bb);
}

/* Create a chunk function and position the builder in it. */
static LLVMValueRef begin_fn(Cg *g, const CgFnSpec *spec, const char *name) {
    g->cur_mod = g->to_bulk ? g->bulk : g->mod;
    LLVMValueRef fn = LLVMAddFunction(g->cur_mod, name, fn_type(g, spec, true));
    begin_body(g, spec, fn, true);
    return fn;
}

static uint32_t item_cost(Cg *g, const CgItem *it) {
    uint32_t n = 1;                      /* the store */
    if (it->a) n += cg_count_new(g, it->a);
    if (it->b) n += cg_count_new(g, it->b) + 2;
    return n;
}

LLVMValueRef cg_item_value(Cg *g, const CgItem *it) {
    if (it->copy_arg >= 0) return cg_load(g, (CgArg)it->copy_arg, it->copy_index);
    LLVMValueRef v = it->a ? cg_expr(g, it->a) : NULL;
    if (it->b) {
        LLVMValueRef d = LLVMBuildFMul(g->bld, g->args[CG_ARG_CJ], cg_expr(g, it->b), "");
        v = v ? LLVMBuildFAdd(g->bld, v, d, "") : d;
    }
    return v ? v : LLVMConstReal(g->t_f64, 0.0);
}

static void store_item(Cg *g, const CgItem *it, LLVMValueRef v) {
    CgArg dest = (CgArg)it->dest_arg;
    if (it->guard_given) {
        LLVMValueRef given = cg_load(g, CG_ARG_GIVEN, it->dest_index);
        LLVMValueRef is_given = LLVMBuildICmp(g->bld, LLVMIntNE, given,
                                              LLVMConstInt(g->t_i8, 0, 0), "");
        v = LLVMBuildSelect(g->bld, is_given, cg_load(g, dest, it->dest_index), v, "");
    }
    LLVMBuildStore(g->bld, v, cg_slot(g, dest, it->dest_index));
}

/* STATUS: is any of the chunk's values NaN?  One `fcmp uno a, b` tests two
 * consecutive values (what instcombine would make of one test per value,
 * without running it); the i1 results are or-ed as we go, so no stored
 * value stays live to the end of the chunk, and widened once. */
typedef struct NanAcc {
    LLVMValueRef any;          /* i1: some value so far is NaN */
    LLVMValueRef pending;      /* a value not yet tested, or NULL */
} NanAcc;

static void nan_add(Cg *g, NanAcc *n, LLVMValueRef v) {
    if (!n->pending) {
        n->pending = v;
        return;
    }
    LLVMValueRef uno = LLVMBuildFCmp(g->bld, LLVMRealUNO, n->pending, v, "");
    n->any = n->any ? LLVMBuildOr(g->bld, n->any, uno, "") : uno;
    n->pending = NULL;
}

static LLVMValueRef nan_status(Cg *g, NanAcc *n) {
    if (n->pending) nan_add(g, n, n->pending);
    if (!n->any) return LLVMConstInt(g->t_i32, 0, 0);
    return LLVMBuildZExt(g->bld, n->any, g->t_i32, "");
}

/* ASSERT: fold one item's value into the chunk's running result. */
static LLVMValueRef fold_assert(Cg *g, LLVMValueRef acc, LLVMValueRef v, uint32_t index) {
    LLVMValueRef zero = LLVMConstInt(g->t_i32, 0, 0);
    /* failed when v is 0 or NaN, i.e. not (ordered and != 0) */
    LLVMValueRef failed = LLVMBuildFCmp(g->bld, LLVMRealUEQ, v,
                                        LLVMConstReal(g->t_f64, 0.0), "");
    LLVMValueRef mine = LLVMBuildSelect(g->bld, failed,
                                        LLVMConstInt(g->t_i32, index + 1, 0), zero, "");
    LLVMValueRef have = LLVMBuildICmp(g->bld, LLVMIntNE, acc, zero, "");
    return LLVMBuildSelect(g->bld, have, acc, mine, "");
}

/* Is there a loop at item j?  A planned run whose leaves have consistent
 * strides (cg_loop_strides, which leaves them set for emission); a run
 * without is dropped: its items are emitted straight. */
static bool loop_at(Cg *g, const CgItem *items, uint32_t j, int32_t *dstride) {
    if (!g->run[j]) return false;
    if (cg_loop_strides(g, items, j, g->period[j], dstride)) return true;
    g->run[j] = 0;
    return false;
}

/* Nodes of the loop at j: its body, one iteration, counted afresh (values
 * are not shared across a loop's boundary). */
static uint32_t loop_cost(Cg *g, const CgItem *items, uint32_t j) {
    bool share = g->share_count;
    g->share_count = false;              /* a loop body loads no shared values */
    g->stamp++;
    uint32_t n = 0;
    for (uint32_t r = 0; r < g->period[j]; r++) n += item_cost(g, &items[j + r]);
    g->stamp++;
    g->share_count = share;
    return n;
}

/* Is there a nest at item j?  As loop_at, with cg_nest_strides. */
static bool nest_at(Cg *g, const CgItem *items, uint32_t j) {
    if (!g->nest[j]) return false;
    if (cg_nest_strides(g, items, j, g->nest_period[j])) return true;
    g->nest[j] = 0;
    return false;
}

/* Nodes of the nest at j: its body, straight items counted together
 * between inner loops, each inner loop its body. */
static uint32_t nest_cost(Cg *g, const CgItem *items, uint32_t j) {
    bool share = g->share_count;
    g->share_count = false;
    g->stamp++;
    uint32_t n = 0;
    for (uint32_t x = j; x < j + g->nest_period[j];) {
        if (!g->run[x]) {
            n += item_cost(g, &items[x++]);
            continue;
        }
        n += loop_cost(g, items, x);
        x += g->run[x];
    }
    g->stamp++;
    g->share_count = share;
    return n;
}

/* Number of items [first, n) that fit in one chunk (at least one item,
 * loop or nest): straight items, loops and nests, costing their bodies. */
static uint32_t plan_chunk(Cg *g, const CgItem *items, uint32_t first, uint32_t n,
                           uint32_t *nodes) {
    int32_t dstride[CG_LOOP_MAX_PERIOD];
    uint32_t j = first, total = 0;
    while (j < n) {
        bool nest = nest_at(g, items, j), loop = !nest && loop_at(g, items, j, dstride);
        uint32_t c = nest ? nest_cost(g, items, j) : loop ? loop_cost(g, items, j) : item_cost(g, &items[j]);
        if (j > first && total + c > g->chunk_cap) break;
        total += c;
        j += nest ? g->nest[j] : loop ? g->run[j] : 1;
    }
    *nodes = total;
    return j - first;
}

/* Emit items [first, first+count) as chunk k (runs as loops, the others
 * straight); returns the chunk function. */
static LLVMValueRef emit_chunk(Cg *g, const CgFnSpec *spec, const CgItem *items,
                               uint32_t first, uint32_t count, uint32_t k) {
    char name[256];
    snprintf(name, sizeof name, "%s.%u", spec->name, k);
    LLVMValueRef fn = begin_fn(g, spec, name);
    g->stamp++;
    LLVMValueRef acc = LLVMConstInt(g->t_i32, 0, 0), loops_nan = NULL;
    NanAcc nan = {NULL, NULL};
    int32_t dstride[CG_LOOP_MAX_PERIOD];
    for (uint32_t i = first; i < first + count;) {
        bool nest = nest_at(g, items, i);
        if (nest || loop_at(g, items, i, dstride)) {
            LLVMValueRef r = nest ? cg_emit_nest(g, spec, items, i, g->nest[i], g->nest_period[i], fn)
                                  : cg_emit_loop(g, spec, items, i, g->run[i], g->period[i], dstride, fn);
            if (spec->ret == CG_RET_STATUS)
                loops_nan = loops_nan ? LLVMBuildOr(g->bld, loops_nan, r, "") : r;
            if (spec->ret == CG_RET_ASSERT) {        /* the first failure wins */
                LLVMValueRef have = LLVMBuildICmp(g->bld, LLVMIntNE, acc, LLVMConstInt(g->t_i32, 0, 0), "");
                acc = LLVMBuildSelect(g->bld, have, acc, r, "");
            }
            if (nest) g->nnests++;
            i += nest ? g->nest[i] : g->run[i];
            continue;
        }
        const CgItem *it = &items[i];
        LLVMValueRef v = cg_item_value(g, it);
        if (spec->ret != CG_RET_ASSERT) store_item(g, it, v);
        if (spec->ret == CG_RET_STATUS) nan_add(g, &nan, v);
        if (spec->ret == CG_RET_ASSERT) acc = fold_assert(g, acc, v, i);
        i++;
    }
    if (spec->ret == CG_RET_STATUS) {
        if (loops_nan) {
            if (nan.pending) nan_add(g, &nan, nan.pending);
            nan.any = nan.any ? LLVMBuildOr(g->bld, nan.any, loops_nan, "") : loops_nan;
        }
        acc = nan_status(g, &nan);
    }
    if (spec->ret == CG_RET_VOID) LLVMBuildRetVoid(g->bld);
    else LLVMBuildRet(g->bld, acc);
    return fn;
}

/* The entry function: call every chunk with the entry's own arguments and
 * a stack array of ntmp doubles for the pieces of oversized items. */
static void emit_entry(Cg *g, const CgFnSpec *spec, LLVMValueRef fn, LLVMValueRef *chunks,
                       uint32_t nchunks, uint32_t ntmp) {
    g->cur_mod = g->mod;
    begin_body(g, spec, fn, false);
    LLVMTypeRef fty = fn_type(g, spec, true);
    LLVMValueRef params[7];
    for (int i = 0; i < spec->nargs; i++) params[i] = LLVMGetParam(fn, (unsigned)i);
    params[spec->nargs] = ntmp ? LLVMBuildArrayAlloca(g->bld, g->t_f64,
                                                      LLVMConstInt(g->t_i32, ntmp, 0), "tmp")
                               : LLVMConstNull(g->t_ptr);
    LLVMValueRef acc = LLVMConstInt(g->t_i32, 0, 0), zero = acc;
    for (uint32_t k = 0; k < nchunks; k++) {
        LLVMValueRef r = LLVMBuildCall2(g->bld, fty, bulk_decl(g, chunks[k], fty), params,
                                        (unsigned)spec->nargs + 1, "");
        if (spec->ret == CG_RET_STATUS) acc = LLVMBuildOr(g->bld, acc, r, "");
        if (spec->ret == CG_RET_ASSERT) {
            LLVMValueRef have = LLVMBuildICmp(g->bld, LLVMIntNE, acc, zero, "");
            acc = LLVMBuildSelect(g->bld, have, acc, r, "");
        }
    }
    if (spec->ret == CG_RET_VOID) LLVMBuildRetVoid(g->bld);
    else LLVMBuildRet(g->bld, acc);
}

/* ---------- oversized items ---------- */

typedef Vec(Expr *) CutVec;
typedef Vec(LLVMValueRef) FnVec;

static void cut_tables(Cg *g) {
    if (g->cut_slot) return;
    g->cut_slot = ARENA_ARRAY(g->arena, int32_t, g->nnodes + 1);
    g->cut_gen_of = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1);
    g->cut_size = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1);
    g->cut_seen = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1);
}

static void make_cut(Cg *g, Expr *e, CutVec *cuts) {
    if (cg_is_cut(g, e)) return;
    g->cut_gen_of[cg_node(g, e)] = g->cut_gen;
    g->cut_slot[cg_node(g, e)] = (int32_t)cuts->len;
    vec_push(g->arena, cuts, e);
}

static uint32_t sat_add(uint32_t a, uint32_t b) { return a + b < a ? UINT32_MAX : a + b; }

/* Bottom-up over root's DAG (each node once): size = 1 + the sizes of its
 * children, a cut child counting 1.  A node whose size exceeds the cap has
 * its non-leaf children cut, so every piece -- a cut node down to the next
 * cuts -- holds at most cap nodes (shared nodes are counted per parent: an
 * overestimate).  Cuts are appended in post-order: dependencies first. */
static void plan_cuts(Cg *g, Expr *root, CutVec *cuts) {
    g->stack.len = 0;
    vec_push(g->arena, &g->stack, root);
    while (g->stack.len > 0) {
        Expr *e = g->stack.data[g->stack.len - 1];
        if (g->cut_seen[cg_node(g, e)] == g->cut_gen) { g->stack.len--; continue; }
        bool ready = true;
        for (int i = 0; i < e->nargs; i++)
            if (g->cut_seen[cg_node(g, e->args[i])] != g->cut_gen) {
                vec_push(g->arena, &g->stack, e->args[i]);
                ready = false;
            }
        if (!ready) continue;
        g->stack.len--;
        uint32_t n = 1;
        for (int i = 0; i < e->nargs; i++)
            n = sat_add(n, cg_is_cut(g, e->args[i]) ? 1 : g->cut_size[cg_node(g, e->args[i])]);
        if (n > g->chunk_cap) {
            n = 1;
            for (int i = 0; i < e->nargs; i++) {
                if (g->cut_size[cg_node(g, e->args[i])] > 1) make_cut(g, e->args[i], cuts);
                n = sat_add(n, cg_is_cut(g, e->args[i]) ? 1 : g->cut_size[cg_node(g, e->args[i])]);
            }
        }
        g->cut_size[cg_node(g, e)] = n;
        g->cut_seen[cg_node(g, e)] = g->cut_gen;
    }
}

/* One piece: tmp[slot of c] = c, the cut nodes of earlier slots loaded from
 * tmp.  Cuts are appended in post-order, so c's cut descendants normally
 * come first; a shared descendant cut later through another parent is
 * computed inline here instead. */
static LLVMValueRef emit_piece(Cg *g, const CgFnSpec *spec, Expr *c, uint32_t k) {
    char name[256];
    snprintf(name, sizeof name, "%s.%u", spec->name, k);
    LLVMValueRef fn = begin_fn(g, spec, name);
    g->stamp++;
    g->cut_limit = g->cut_slot[cg_node(g, c)];   /* earlier pieces only: a node cut after
                                            c (through another parent) is inline */
    LLVMValueRef v = cg_expr(g, c);
    g->cut_limit = INT32_MAX;
    LLVMBuildStore(g->bld, v, cg_slot(g, CG_ARG_TMP, g->tmp_base + (uint32_t)g->cut_slot[cg_node(g, c)]));
    if (spec->ret == CG_RET_VOID) LLVMBuildRetVoid(g->bld);
    else LLVMBuildRet(g->bld, LLVMConstInt(g->t_i32, 0, 0));
    if (g->cut_size[cg_node(g, c)] > g->max_chunk_nodes) g->max_chunk_nodes = g->cut_size[cg_node(g, c)];
    return fn;
}

/* An item larger than the cap alone: its roots and every cut node become
 * pieces (chunk functions storing into tmp), emitted before the item's own
 * chunk, which then only loads them.  Returns the number of tmp slots. */
static uint32_t emit_pieces(Cg *g, const CgFnSpec *spec, const CgItem *it, FnVec *chunks) {
    CutVec cuts = {0};
    cut_tables(g);
    g->cut_gen++;
    Expr *roots[2] = {it->a, it->b};
    for (int r = 0; r < 2; r++) {
        if (!roots[r]) continue;
        plan_cuts(g, roots[r], &cuts);
        if (roots[r]->nargs > 0) make_cut(g, roots[r], &cuts);
    }
    for (uint32_t j = 0; j < cuts.len; j++) {
        LLVMValueRef fn = emit_piece(g, spec, cuts.data[j], chunks->len);
        vec_push(g->arena, chunks, fn);
    }
    return cuts.len;
}

/* ---------- values shared between chunks ---------- */

static void share_tables(Cg *g) {
    if (g->share_gen_of) return;
    g->share_gen_of = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1);
    g->share_owner = ARENA_ARRAY(g->arena, uint32_t, g->nnodes + 1);
    g->share_slot = ARENA_ARRAY(g->arena, int32_t, g->nnodes + 1);
}

/* Worth a tmp slot: an operation (a leaf is one load anyway; a negation
 * is folded into its users, cg_expr.c). */
static bool shareable(const Expr *e) {
    return e->nargs > 0 && e->kind != EXPR_NEG;
}

/* After chunk c is planned: the operations its straight items compute
 * (not those loaded from an earlier chunk) that no earlier chunk owns
 * become c's.  O(nodes of the chunk). */
static void claim_root(Cg *g, Expr *root, uint32_t c) {
    if (g->count_stamp[cg_node(g, root)] == g->stamp) return;
    g->stack.len = 0;
    g->count_stamp[cg_node(g, root)] = g->stamp;
    vec_push(g->arena, &g->stack, root);
    while (g->stack.len > 0) {
        Expr *e = g->stack.data[--g->stack.len];
        if (g->share_gen_of[cg_node(g, e)] == g->share_gen) {
            if (g->share_slot[cg_node(g, e)] >= 0 && g->share_owner[cg_node(g, e)] < c) continue; /* loaded */
        } else if (shareable(e)) {
            g->share_gen_of[cg_node(g, e)] = g->share_gen;
            g->share_owner[cg_node(g, e)] = c;
            g->share_slot[cg_node(g, e)] = -1;
        }
        for (int i = 0; i < e->nargs; i++) {
            Expr *x = e->args[i];
            if (g->count_stamp[cg_node(g, x)] == g->stamp) continue;
            g->count_stamp[cg_node(g, x)] = g->stamp;
            vec_push(g->arena, &g->stack, x);
        }
    }
}

static void claim_chunk(Cg *g, const CgItem *items, uint32_t first, uint32_t count, uint32_t c) {
    g->stamp++;
    for (uint32_t i = first; i < first + count;) {
        if (g->nest[i] || g->run[i]) {   /* loops own nothing */
            i += g->nest[i] ? g->nest[i] : g->run[i];
            continue;
        }
        if (items[i].a) claim_root(g, items[i].a, c);
        if (items[i].b) claim_root(g, items[i].b, c);
        i++;
    }
    g->stamp++;
}

typedef struct ChunkPlan {
    uint32_t first, count, nodes;
    bool oversized;                      /* one item, cut into pieces */
    bool loops;                          /* holds a loop */
} ChunkPlan;

static bool has_loop(const Cg *g, uint32_t first, uint32_t count) {
    for (uint32_t i = first; i < first + count; i++)
        if (g->run[i] || g->nest[i]) return true;
    return false;
}

/* Chunk boundaries for the whole item list, and which values later
 * chunks load from an earlier one (slots numbered in g->nshare). */
static ChunkPlan *plan_chunks(Cg *g, const CgItem *items, uint32_t nitems, uint32_t *nplans) {
    Vec(ChunkPlan) plans = {0};
    share_tables(g);
    g->share_gen++;
    g->nshare = 0;
    for (uint32_t first = 0; first < nitems;) {
        ChunkPlan p = {.first = first};
        g->cur_chunk = plans.len;
        g->share_count = true;
        g->stamp++;
        p.count = plan_chunk(g, items, first, nitems, &p.nodes);
        g->share_count = false;
        p.oversized = p.nodes > g->chunk_cap && !g->run[first] && !g->nest[first];
        p.loops = has_loop(g, first, p.count);
        if (!p.oversized) claim_chunk(g, items, first, p.count, plans.len);
        vec_push(g->arena, &plans, p);
        first += p.count;
    }
    *nplans = plans.len;
    return plans.data;
}

/* The body of entry function p->fn and its chunks. */
static void emit_function(Cg *g, const CgPending *p) {
    const CgFnSpec *spec = &p->spec;
    const CgItem *items = p->items;
    uint32_t nitems = p->nitems;
    FnVec chunks = {0};
    uint32_t ntmp = 0, nplans;
    g->run = ARENA_ARRAY(g->arena, uint32_t, nitems + 1);
    g->period = ARENA_ARRAY(g->arena, uint16_t, nitems + 1);
    g->nest = ARENA_ARRAY(g->arena, uint32_t, nitems + 1);
    g->nest_period = ARENA_ARRAY(g->arena, uint32_t, nitems + 1);
    cg_plan_loops(g, items, nitems, g->run, g->period, g->nest, g->nest_period);
    ChunkPlan *plans = plan_chunks(g, items, nitems, &nplans);
    g->tmp_base = g->nshare;
    uint64_t straight = 0;
    for (uint32_t k = 0; k < nplans; k++)
        if (!plans[k].loops) straight += plans[k].nodes;
    bool bulk = g->bulk && g->opt->opt_level < 3 && (spec->cold || straight >= CG_BULK_NODES);
    for (uint32_t k = 0; k < nplans; k++) {
        ChunkPlan *c = &plans[k];
        g->cur_chunk = k;
        g->to_bulk = bulk && (spec->cold || !c->loops);
        g->stamp++;
        if (c->oversized) {                  /* count == 1: one oversized item */
            uint32_t n = emit_pieces(g, spec, &items[c->first], &chunks);
            if (n > ntmp) ntmp = n;
            c->nodes = 1 + (items[c->first].a != NULL) + 3 * (items[c->first].b != NULL);
        }
        LLVMValueRef fn = emit_chunk(g, spec, items, c->first, c->count, chunks.len);
        g->cut_gen++;                         /* cuts of this item end here */
        vec_push(g->arena, &chunks, fn);
        if (c->nodes > g->max_chunk_nodes) g->max_chunk_nodes = c->nodes;
    }
    g->to_bulk = false;
    g->nchunks += chunks.len;
    arena_release(g->arena, g->run, sizeof *g->run * ((size_t)nitems + 1));
    arena_release(g->arena, g->period, sizeof *g->period * ((size_t)nitems + 1));
    arena_release(g->arena, g->nest, sizeof *g->nest * ((size_t)nitems + 1));
    arena_release(g->arena, g->nest_period, sizeof *g->nest_period * ((size_t)nitems + 1));
    g->run = g->nest = g->nest_period = NULL;
    g->period = NULL;
    g->share_gen++;                           /* no sharing outside this function */
    emit_entry(g, spec, p->fn, chunks.data, chunks.len, g->tmp_base + ntmp);
    vec_release(g->arena, &chunks);
}

LLVMValueRef cg_emit_function(Cg *g, const CgFnSpec *spec, const CgItem *items,
                              uint32_t nitems) {
    LLVMValueRef fn = LLVMAddFunction(g->mod, spec->name, fn_type(g, spec, false));
    CgPending p = {.spec = *spec, .items = items, .nitems = nitems, .fn = fn};
    vec_push(g->arena, &g->pending, p);
    return fn;
}

/* Number the nodes under root not numbered yet (preorder, explicit stack). */
static void number_root(Cg *g, Expr *root) {
    if (g->node_of[root->id]) return;
    g->node_of[root->id] = ++g->nnodes;
    g->stack.len = 0;
    vec_push(g->arena, &g->stack, root);
    while (g->stack.len > 0) {
        Expr *e = g->stack.data[--g->stack.len];
        for (int i = 0; i < e->nargs; i++) {
            Expr *x = e->args[i];
            if (g->node_of[x->id]) continue;
            g->node_of[x->id] = ++g->nnodes;
            vec_push(g->arena, &g->stack, x);
        }
    }
}

/* The per-node tables, sized by the nodes of the pending items. */
static void node_tables(Cg *g) {
    size_t nids = g->sys->ctx ? expr_count(g->sys->ctx) : 0;
    g->node_of = ARENA_ARRAY(g->arena, uint32_t, nids + 1);
    for (uint32_t k = 0; k < g->pending.len; k++)
        for (uint32_t i = 0; i < g->pending.data[k].nitems; i++) {
            const CgItem *it = &g->pending.data[k].items[i];
            if (it->a) number_root(g, it->a);
            if (it->b) number_root(g, it->b);
        }
    size_t n = (size_t)g->nnodes + 1;
    g->memo = ARENA_ARRAY(g->arena, LLVMValueRef, n);
    g->memo_stamp = ARENA_ARRAY(g->arena, uint32_t, n);
    g->count_stamp = ARENA_ARRAY(g->arena, uint32_t, n);
    g->loop_stride = ARENA_ARRAY(g->arena, int32_t, n);
    g->stride_stamp = ARENA_ARRAY(g->arena, uint32_t, n);
    g->nest_stride = ARENA_ARRAY(g->arena, int32_t, n);
    g->nest_stamp = ARENA_ARRAY(g->arena, uint32_t, n);
    g->box_stride = ARENA_ARRAY(g->arena, int32_t, (SYS_LOOP_MAX_DIM - 1) * n);
}

void cg_emit_functions(Cg *g) {
    if (g->pending.len) node_tables(g);
    for (uint32_t k = 0; k < g->pending.len && !g->failed; k++) emit_function(g, &g->pending.data[k]);
}
