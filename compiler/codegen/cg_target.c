/*
 * cg_target.c -- target machines and the verify -> optimize step.
 *
 * The host triple always; the CPU is the host's for the JIT (and for object
 * files with CgOptions.native_cpu), "generic" otherwise, so an executable
 * runs on any machine of its architecture.  Relocations are PIC.  The code
 * generator's default FP-contraction mode fuses only llvm.fmuladd, which we
 * never emit, so no FMA changes results between CPUs.
 */
#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "cg_internal.h"

/* Process-wide LLVM options, set once:
 *   -enable-misched=false  the machine instruction scheduler was two thirds
 *     of the back end's time on our large straight-line chunks (superlinear
 *     in block size; 2.2 of 3.4 s for a 1,000-mass chain) and buys nothing
 *     measurable on out-of-order x86 for this code;
 *   -fast-isel  FastISel instead of SelectionDAG (still the greedy register
 *     allocator): SelectionDAG ISel was 60 % of the remaining back end (rc
 *     ladder N = 3,000: 1.15 s -> 0.56 s for the whole back end), FastISel
 *     selects all our instructions (loads, stores, GEPs, FP arithmetic,
 *     fcmp/select, libm calls) and the simulators run as fast (integration
 *     time within noise, bench/RESULTS.md).  Neither changes a result: no
 *     FP contraction either way. */
static void init_llvm(void) {
    static int done;
    if (done) return;
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    const char *argv[] = {"dyadc", "-enable-misched=false", "-fast-isel"};
    LLVMParseCommandLineOptions(3, argv, NULL);
    done = 1;
}

static int clamp_level(const CgOptions *o) {
    int l = o ? o->opt_level : 2;
    return l < 0 ? 0 : l > 3 ? 3 : l;
}

static LLVMCodeGenOptLevel codegen_level(int l) {
    switch (l) {
    case 0: return LLVMCodeGenLevelNone;
    case 1: return LLVMCodeGenLevelLess;
    case 3: return LLVMCodeGenLevelAggressive;
    default: return LLVMCodeGenLevelDefault;
    }
}

LLVMTargetMachineRef cg_target_machine(const CgOptions *o, int host_cpu) {
    init_llvm();
    char *triple = LLVMGetDefaultTargetTriple();
    char *err = NULL;
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple(triple, &target, &err)) {
        diag_internal("codegen: no target for %s: %s", triple, err ? err : "?");
        LLVMDisposeMessage(err);
        LLVMDisposeMessage(triple);
        return NULL;
    }
    char *cpu = host_cpu ? LLVMGetHostCPUName() : NULL;
    char *features = host_cpu ? LLVMGetHostCPUFeatures() : NULL;
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
        target, triple, cpu ? cpu : "generic", features ? features : "",
        codegen_level(clamp_level(o)), LLVMRelocPIC, LLVMCodeModelDefault);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    LLVMDisposeMessage(triple);
    if (!tm) diag_internal("codegen: cannot create a target machine");
    return tm;
}

static int verify(LLVMModuleRef m) {
    char *msg = NULL;
    int bad = LLVMVerifyModule(m, LLVMReturnStatusAction, &msg);
    if (bad) diag_internal("codegen: invalid LLVM module: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return bad;
}

static int run_passes(LLVMModuleRef m, const char *passes, LLVMTargetMachineRef tm, int level) {
    if (verify(m)) return 1;
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    /* SLP vectorization is a third of O2 time on straight-line residual
     * code and gains little there; keep it for -O3 only. */
    LLVMPassBuilderOptionsSetSLPVectorization(po, level >= 3);
    LLVMErrorRef e = LLVMRunPasses(m, passes, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        diag_internal("codegen: %s failed: %s", passes, msg);
        LLVMDisposeErrorMessage(msg);
        return 1;
    }
    return 0;
}

/* The main module; the bulk one (if any) is only verified: early-cse
 * removed 0.3 % of its instructions (100-link chain: 1,446 of 475,443, the
 * memo of cg_expr already emits each node and leaf once per chunk) for
 * 0.3 s of the 4 s build. */
int cg_optimize(Cg *g, LLVMTargetMachineRef tm) {
    /* -O1/-O2: the expressions arrive hash-consed and simplified, so of the
     * standard pipelines only load CSE pays off on straight-line chunks;
     * "default<O2>" costs 5x more for no measurable run-time gain (DSE and
     * GVN alone are a third of it).  The peephole folds instcombine found
     * (a + -b, (-a)/(-b), pairs of NaN tests) are emitted directly
     * (cg_expr.c, cg_chunk.c), which saves instcombine, 75 % of this step.
     * -O3 keeps the full pipeline with SLP vectorization. */
    char passes[96];
    int level = clamp_level(g->opt);
    if (level == 1 || level == 2)
        snprintf(passes, sizeof passes, "function(early-cse<memssa>)");
    else
        snprintf(passes, sizeof passes, "default<O%d>", level);
    if (run_passes(g->mod, passes, tm, level)) return 1;
    return g->bulk ? verify(g->bulk) : 0;
}
