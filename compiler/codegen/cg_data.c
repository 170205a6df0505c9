/*
 * cg_data.c -- the descriptor's tables as data: numbers as raw bytes, name
 * lists as one string blob and a pointer array filled when the model is
 * loaded.
 *
 * Input: C arrays (int32, uint8, double) and name lists of the System.
 * Output: private globals of g->mod, and `dyad_names_init`, which sets every
 * name list's pointers (called from llvm.global_ctors in an executable or
 * FMU, by cg_jit.c after the lookup in the JIT).
 *
 * Why not one LLVM constant per element: a table of 10^6 int32 was 10^6
 * uniqued ConstantInts (hashed, kept until the context dies) emitted one
 * directive each, and a name list of 10^6 entries 10^6 constant GEPs into
 * its blob, each a relocation in the object file and a dynamic one in the
 * executable (24 bytes, processed by the linker and the loader).  A table
 * is now one byte string in the target's byte order (its global aligned
 * for its elements, never merged with others); a name list is its blob, a
 * zero-initialized pointer array (.bss) and a loop in dyad_names_init that
 * walks the blob and stores each name's address.  The runtime sees the
 * same `const char *const *` arrays (the ABI is unchanged).
 */
#include <string.h>

#include "cg_internal.h"

/* A constant private global, never merged (no unnamed_addr: a byte table
 * that happens to end in 0 would go to a mergeable string section, where
 * its alignment is not kept). */
static LLVMValueRef data_global(Cg *g, const char *name, LLVMValueRef init, unsigned align) {
    LLVMValueRef gv = cg_private_constant(g, name, init);
    LLVMSetAlignment(gv, align);
    return gv;
}

static bool host_big_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* n elements of `size` bytes (1, 4 or 8) as one byte string in the
 * target's byte order; a null pointer when empty. */
LLVMValueRef cg_table(Cg *g, const char *name, const void *elems, uint32_t n, unsigned size) {
    if (n == 0 || !elems) return LLVMConstNull(g->t_ptr);
    size_t len = (size_t)n * size;
    char *bytes = (char *)arena_alloc(g->arena, len);
    memcpy(bytes, elems, len);
    if (size > 1 && host_big_endian() != g->big_endian)
        for (size_t i = 0; i < len; i += size)
            for (unsigned a = 0, b = size - 1; a < b; a++, b--) {
                char t = bytes[i + a];
                bytes[i + a] = bytes[i + b];
                bytes[i + b] = t;
            }
    LLVMValueRef init = LLVMConstStringInContext(g->ctx, bytes, (unsigned)len, 1);
    LLVMValueRef gv = data_global(g, name, init, size < 8 ? 8 : size);
    arena_release(g->arena, bytes, len);
    return gv;
}

/* A name list: the blob "a\0b\0..." and a pointer array dyad_names_init
 * fills.  Null when empty. */
LLVMValueRef cg_names(Cg *g, const char *name, const char *const *names, uint32_t n) {
    if (n == 0 || !names) return LLVMConstNull(g->t_ptr);
    size_t len = 0;
    for (uint32_t i = 0; i < n; i++) len += strlen(names[i] ? names[i] : "") + 1;
    char *blob = (char *)arena_alloc(g->arena, len);
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *s = names[i] ? names[i] : "";
        size_t l = strlen(s) + 1;
        memcpy(blob + at, s, l);
        at += l;
    }
    char bname[64];
    snprintf(bname, sizeof bname, "%s.blob", name);
    LLVMValueRef gb = data_global(g, bname, LLVMConstStringInContext(g->ctx, blob, (unsigned)len, 1), 1);
    arena_release(g->arena, blob, len);
    LLVMTypeRef at_t = LLVMArrayType2(g->t_ptr, n);
    LLVMValueRef ga = LLVMAddGlobal(g->mod, at_t, name);
    LLVMSetInitializer(ga, LLVMConstNull(at_t));
    LLVMSetLinkage(ga, LLVMPrivateLinkage);
    CgNameList l = {.array = ga, .blob = gb, .n = n};
    vec_push(g->arena, &g->name_lists, l);
    return ga;
}

/* One list's loop, from the builder's block: for i in [0, n): arr[i] = p,
 * p past the next 0 byte.  Leaves the builder after the loop. */
static void fill_list(Cg *g, LLVMValueRef fn, const CgNameList *l) {
    LLVMTypeRef i64 = LLVMInt64TypeInContext(g->ctx);
    LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->bld);
    LLVMBasicBlockRef name = LLVMAppendBasicBlockInContext(g->ctx, fn, "name");
    LLVMBasicBlockRef scan = LLVMAppendBasicBlockInContext(g->ctx, fn, "scan");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->ctx, fn, "next");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, fn, "done");
    LLVMBuildBr(g->bld, name);
    LLVMPositionBuilderAtEnd(g->bld, name);          /* arr[i] = p */
    LLVMValueRef i = LLVMBuildPhi(g->bld, i64, "i"), p = LLVMBuildPhi(g->bld, g->t_ptr, "p");
    LLVMBuildStore(g->bld, p, LLVMBuildInBoundsGEP2(g->bld, g->t_ptr, l->array, &i, 1, ""));
    LLVMBuildBr(g->bld, scan);
    LLVMPositionBuilderAtEnd(g->bld, scan);          /* s = past the 0 ending the name */
    LLVMValueRef s = LLVMBuildPhi(g->bld, g->t_ptr, "s");
    LLVMValueRef one = LLVMConstInt(i64, 1, 0);
    LLVMValueRef s1 = LLVMBuildInBoundsGEP2(g->bld, g->t_i8, s, &one, 1, "");
    LLVMValueRef end = LLVMBuildICmp(g->bld, LLVMIntEQ, LLVMBuildLoad2(g->bld, g->t_i8, s, ""),
                                     LLVMConstInt(g->t_i8, 0, 0), "");
    LLVMBuildCondBr(g->bld, end, next, scan);
    LLVMPositionBuilderAtEnd(g->bld, next);
    LLVMValueRef i1 = LLVMBuildAdd(g->bld, i, one, "");
    LLVMBuildCondBr(g->bld, LLVMBuildICmp(g->bld, LLVMIntULT, i1, LLVMConstInt(i64, l->n, 0), ""), name, done);
    LLVMValueRef zero = LLVMConstInt(i64, 0, 0);
    LLVMAddIncoming(i, (LLVMValueRef[]){zero, i1}, (LLVMBasicBlockRef[]){entry, next}, 2);
    LLVMAddIncoming(p, (LLVMValueRef[]){l->blob, s1}, (LLVMBasicBlockRef[]){entry, next}, 2);
    LLVMAddIncoming(s, (LLVMValueRef[]){p, s1}, (LLVMBasicBlockRef[]){name, scan}, 2);
    LLVMPositionBuilderAtEnd(g->bld, done);
}

/* dyad_names_init (every list's loop; empty without lists), run at load
 * time through llvm.global_ctors.  The loops also keep GlobalOpt (-O3)
 * from evaluating it into relocations again: it gives up on a loop. */
void cg_emit_names_init(Cg *g) {
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(g->ctx), NULL, 0, 0);
    LLVMValueRef fn = LLVMAddFunction(g->mod, CG_NAMES_INIT, fty);
    unsigned k = LLVMGetEnumAttributeKindForName("nounwind", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->ctx, k, 0));
    LLVMPositionBuilderAtEnd(g->bld, LLVMAppendBasicBlockInContext(g->ctx, fn, "entry"));
    for (uint32_t i = 0; i < g->name_lists.len; i++) fill_list(g, fn, &g->name_lists.data[i]);
    LLVMBuildRetVoid(g->bld);
    LLVMTypeRef et[3] = {g->t_i32, g->t_ptr, g->t_ptr};
    LLVMTypeRef st = LLVMStructTypeInContext(g->ctx, et, 3, 0);
    LLVMValueRef ev[3] = {LLVMConstInt(g->t_i32, 65535, 0), fn, LLVMConstNull(g->t_ptr)};
    LLVMValueRef entry = LLVMConstStructInContext(g->ctx, ev, 3, 0);
    LLVMValueRef ctors = LLVMAddGlobal(g->mod, LLVMArrayType2(st, 1), "llvm.global_ctors");
    LLVMSetInitializer(ctors, LLVMConstArray2(st, &entry, 1));
    LLVMSetLinkage(ctors, LLVMAppendingLinkage);
}
