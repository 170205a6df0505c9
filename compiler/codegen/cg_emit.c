/*
 * cg_emit.c -- the ahead-of-time entry points: object file, textual IR,
 * size statistics.  Each builds a fresh LLVMContext and module, verifies,
 * optimizes at CgOptions.opt_level and disposes everything before
 * returning.
 */
#include <string.h>

#include "cg_internal.h"

void cg_options_init(CgOptions *o) {
    memset(o, 0, sizeof *o);
    o->opt_level = 2;
}

static const CgOptions *defaults(const CgOptions *o, CgOptions *buf) {
    if (o) return o;
    cg_options_init(buf);
    return buf;
}

typedef int (*CgUse)(Cg *g, LLVMTargetMachineRef tm, void *ud);

/* Build + optimize in a private context, then hand the module to `use`;
 * split: the bulk chunks in a module of their own (Cg.bulk). */
static int with_module(const System *s, const CgOptions *o, int host_cpu, bool split,
                       CgUse use, void *ud) {
    CgOptions buf;
    o = defaults(o, &buf);
    LLVMTargetMachineRef tm = cg_target_machine(o, host_cpu);
    if (!tm) return 1;
    LLVMContextRef ctx = LLVMContextCreate();
    Cg g;
    int rc = cg_build(&g, s, o, ctx, tm, split);
    if (rc == 0) rc = cg_optimize(&g, tm);
    if (rc == 0) rc = use(&g, tm, ud);
    cg_dispose(&g);
    LLVMContextDispose(ctx);
    LLVMDisposeTargetMachine(tm);
    return rc;
}

typedef struct ObjPaths {
    const char *obj, *bulk;
} ObjPaths;

static int emit_file(LLVMTargetMachineRef tm, LLVMModuleRef m, const char *path) {
    char *err = NULL;
    if (LLVMTargetMachineEmitToFile(tm, m, (char *)path, LLVMObjectFile, &err)) {
        diag_error((Span){0}, "cannot write object file '%s': %s", path, err ? err : "?");
        LLVMDisposeMessage(err);
        return 1;
    }
    return 0;
}

/* The main module with the back end of the -O level, the bulk module with
 * the fast one (CodeGenLevelNone: fast register allocation, no machine
 * optimizations): on straight-line code the default back end's greedy
 * register allocator and machine passes cost ~10 us per instruction, the
 * fast one ~2 us, and the code runs about half as fast -- which matters
 * little in functions this large (100-link chain: the generated code is
 * 3-7 % of the simulation, IDA's vector operations and KLU the rest). */
static int write_object(Cg *g, LLVMTargetMachineRef tm, void *ud) {
    const ObjPaths *p = ud;
    if (g->opt->on_step) g->opt->on_step(g->opt->on_step_ctx, "emit");
    if (emit_file(tm, g->mod, p->obj)) return 1;
    if (!p->bulk) return 0;
    CgOptions fast = *g->opt;
    fast.opt_level = 0;
    LLVMTargetMachineRef ftm = cg_target_machine(&fast, fast.native_cpu);
    if (!ftm) return 1;
    int rc = emit_file(ftm, g->bulk, p->bulk);
    LLVMDisposeTargetMachine(ftm);
    return rc;
}

int cg_emit_object(const System *s, const CgOptions *o, const char *obj_path,
                   const char *bulk_path) {
    ObjPaths p = {obj_path, bulk_path};
    return with_module(s, o, o && o->native_cpu, bulk_path != NULL, write_object, &p);
}

static int print_ir(Cg *g, LLVMTargetMachineRef tm, void *ud) {
    (void)tm;
    char *text = LLVMPrintModuleToString(g->mod);
    fputs(text, (FILE *)ud);
    LLVMDisposeMessage(text);
    return 0;
}

int cg_dump_ir(const System *s, const CgOptions *o, FILE *out) {
    return with_module(s, o, 0, false, print_ir, out);
}

static uint32_t count_instructions(LLVMValueRef fn) {
    uint32_t n = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
        for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
            n++;
    return n;
}

static int collect_stats(Cg *g, LLVMTargetMachineRef tm, void *ud) {
    (void)tm;
    CgStats *st = ud;
    memset(st, 0, sizeof *st);
    for (LLVMValueRef f = LLVMGetFirstFunction(g->mod); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f)) continue;
        st->functions++;
        uint32_t n = count_instructions(f);
        if (n > st->max_instructions) st->max_instructions = n;
    }
    st->chunks = g->nchunks;
    st->loops = g->nloops;
    st->nests = g->nnests;
    st->max_chunk_nodes = g->max_chunk_nodes;
    return 0;
}

const char *cg_llvm_version(void) {
    static char buf[32];
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    snprintf(buf, sizeof buf, "%u.%u.%u", major, minor, patch);
    return buf;
}

int cg_stats(const System *s, const CgOptions *o, CgStats *out) {
    return with_module(s, o, 0, false, collect_stats, out);
}
