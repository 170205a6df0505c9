/*
 * cg_chunk.c -- an item list -> an entry function calling bounded chunks.
 *
 * Input: a CgFnSpec (signature) and items (one stored double each).
 * Output: the internal entry function `spec->name`, which calls the
 * internal noinline chunk functions `<name>.0`, `<name>.1`, ... in order.
 *
 * Chunking rule: items are taken in order; a chunk takes the next item
 * while its distinct expression nodes (counted once per chunk, shared
 * subexpressions included once) plus one per store stay within
 * Cg.chunk_cap.  A chunk always takes at least one item, so a single item
 * larger than the cap gets a chunk of its own.  Cost: O(nodes) per chunk.
 *
 * Return values (CgRet): STATUS chunks return 1 when a stored value is NaN
 * (a domain error IDA treats as a failed step), the entry ORs them;
 * ASSERT chunks return 1 + the index of the first item that is 0 or NaN,
 * the entry keeps the first nonzero chunk result.
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

static LLVMTypeRef fn_type(Cg *g, const CgFnSpec *spec) {
    LLVMTypeRef ps[6];
    for (int i = 0; i < spec->nargs; i++) {
        CgArg r = spec->args[i];
        ps[i] = (r == CG_ARG_T || r == CG_ARG_CJ) ? g->t_f64 : g->t_ptr;
    }
    LLVMTypeRef ret = spec->ret == CG_RET_VOID ? LLVMVoidTypeInContext(g->ctx) : g->t_i32;
    return LLVMFunctionType(ret, ps, (unsigned)spec->nargs, 0);
}

/* Create a function of the spec's signature and position the builder in it. */
static LLVMValueRef begin_fn(Cg *g, const CgFnSpec *spec, const char *name, bool chunk) {
    LLVMValueRef fn = LLVMAddFunction(g->mod, name, fn_type(g, spec));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
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
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(g->ctx, fn, "entry");
    LLVMPositionBuilderAtEnd(g->bld, bb);
    return fn;
}

static uint32_t item_cost(Cg *g, const CgItem *it) {
    uint32_t n = 1;                      /* the store */
    if (it->a) n += cg_count_new(g, it->a);
    if (it->b) n += cg_count_new(g, it->b) + 2;
    return n;
}

static LLVMValueRef item_value(Cg *g, const CgItem *it) {
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

/* Fold one item's value into the chunk's running result. */
static LLVMValueRef fold_result(Cg *g, CgRet ret, LLVMValueRef acc, LLVMValueRef v,
                                uint32_t index) {
    LLVMValueRef zero = LLVMConstInt(g->t_i32, 0, 0);
    if (ret == CG_RET_STATUS) {
        LLVMValueRef nan = LLVMBuildFCmp(g->bld, LLVMRealUNO, v, v, "");
        return LLVMBuildOr(g->bld, acc, LLVMBuildZExt(g->bld, nan, g->t_i32, ""), "");
    }
    /* assert: failed when v is 0 or NaN, i.e. not (ordered and != 0) */
    LLVMValueRef failed = LLVMBuildFCmp(g->bld, LLVMRealUEQ, v,
                                        LLVMConstReal(g->t_f64, 0.0), "");
    LLVMValueRef mine = LLVMBuildSelect(g->bld, failed,
                                        LLVMConstInt(g->t_i32, index + 1, 0), zero, "");
    LLVMValueRef have = LLVMBuildICmp(g->bld, LLVMIntNE, acc, zero, "");
    return LLVMBuildSelect(g->bld, have, acc, mine, "");
}

/* Number of items [first, n) that fit in one chunk (at least one). */
static uint32_t plan_chunk(Cg *g, const CgItem *items, uint32_t first, uint32_t n,
                           uint32_t *nodes) {
    uint32_t j = first, total = 0;
    while (j < n) {
        uint32_t c = item_cost(g, &items[j]);
        if (j > first && total + c > g->chunk_cap) break;
        total += c;
        j++;
    }
    *nodes = total;
    return j - first;
}

/* Emit items [first, first+count) as chunk k; returns the chunk function. */
static LLVMValueRef emit_chunk(Cg *g, const CgFnSpec *spec, const CgItem *items,
                               uint32_t first, uint32_t count, uint32_t k) {
    char name[256];
    snprintf(name, sizeof name, "%s.%u", spec->name, k);
    LLVMValueRef fn = begin_fn(g, spec, name, true);
    g->stamp++;
    LLVMValueRef acc = LLVMConstInt(g->t_i32, 0, 0);
    for (uint32_t i = first; i < first + count; i++) {
        const CgItem *it = &items[i];
        LLVMValueRef v = item_value(g, it);
        if (spec->ret != CG_RET_ASSERT) store_item(g, it, v);
        if (spec->ret != CG_RET_VOID) acc = fold_result(g, spec->ret, acc, v, i);
    }
    if (spec->ret == CG_RET_VOID) LLVMBuildRetVoid(g->bld);
    else LLVMBuildRet(g->bld, acc);
    return fn;
}

/* The entry function: call every chunk with the entry's own arguments. */
static LLVMValueRef emit_entry(Cg *g, const CgFnSpec *spec, LLVMValueRef *chunks,
                               uint32_t nchunks) {
    LLVMValueRef fn = begin_fn(g, spec, spec->name, false);
    LLVMTypeRef fty = fn_type(g, spec);
    LLVMValueRef params[6];
    for (int i = 0; i < spec->nargs; i++) params[i] = LLVMGetParam(fn, (unsigned)i);
    LLVMValueRef acc = LLVMConstInt(g->t_i32, 0, 0), zero = acc;
    for (uint32_t k = 0; k < nchunks; k++) {
        LLVMValueRef r = LLVMBuildCall2(g->bld, fty, chunks[k], params,
                                        (unsigned)spec->nargs, "");
        if (spec->ret == CG_RET_STATUS) acc = LLVMBuildOr(g->bld, acc, r, "");
        if (spec->ret == CG_RET_ASSERT) {
            LLVMValueRef have = LLVMBuildICmp(g->bld, LLVMIntNE, acc, zero, "");
            acc = LLVMBuildSelect(g->bld, have, acc, r, "");
        }
    }
    if (spec->ret == CG_RET_VOID) LLVMBuildRetVoid(g->bld);
    else LLVMBuildRet(g->bld, acc);
    return fn;
}

LLVMValueRef cg_emit_function(Cg *g, const CgFnSpec *spec, const CgItem *items,
                              uint32_t nitems) {
    Vec(LLVMValueRef) chunks = {0};
    uint32_t first = 0;
    while (first < nitems) {
        uint32_t nodes;
        g->stamp++;
        uint32_t count = plan_chunk(g, items, first, nitems, &nodes);
        LLVMValueRef fn = emit_chunk(g, spec, items, first, count, chunks.len);
        vec_push(g->arena, &chunks, fn);
        if (nodes > g->max_chunk_nodes) g->max_chunk_nodes = nodes;
        first += count;
    }
    g->nchunks += chunks.len;
    return emit_entry(g, spec, chunks.data, chunks.len);
}
