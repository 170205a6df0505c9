/*
 * cg_jit.c -- in-process compilation with ORC LLJIT (`dyadc run`).
 *
 * The module is built in an ORC thread-safe context, verified and optimized
 * exactly like the object-file path (same passes, host CPU), then handed to
 * an LLJIT whose main JITDylib resolves external symbols (libm) from the
 * running process.  No temporary files.  The module's constructor (the name
 * lists' pointers, cg_data.c) is called here, once, after the lookup.  The descriptor and everything it
 * points to live in JIT memory until cg_jit_free.
 */
#include <stdlib.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "cg_internal.h"
#include "dyadrt.h"

struct CgJit {
    LLVMOrcLLJITRef jit;
    const DyrtModel *model;
};

static int orc_failed(LLVMErrorRef e, const char *what) {
    if (!e) return 0;
    char *msg = LLVMGetErrorMessage(e);
    diag_internal("codegen: JIT %s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return 1;
}

/* The JIT's back end optimizes for latency: below -O3 it selects
 * instructions at CodeGenLevelNone (fast instruction selection), after the
 * same middle-end passes as the object path.  On a 454-equation chain that
 * is 0.33 s -> 0.1 s from source to results, and integration time is the
 * same within noise (the model code is a small share of it; the vectors
 * and KLU dominate). */
static CgOptions backend_options(const CgOptions *o) {
    CgOptions b = *o;
    if (b.opt_level < 3) b.opt_level = 0;
    return b;
}

/* An LLJIT for the host with process symbols visible. */
static LLVMOrcLLJITRef make_jit(const CgOptions *o) {
    CgOptions bo = backend_options(o);
    LLVMTargetMachineRef tm = cg_target_machine(&bo, 1);
    if (!tm) return NULL;
    LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
        b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
    LLVMOrcLLJITRef jit = NULL;
    if (orc_failed(LLVMOrcCreateLLJIT(&jit, b), "creation")) return NULL;
    LLVMOrcDefinitionGeneratorRef gen = NULL;
    if (orc_failed(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                       &gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL),
                   "process symbols")) {
        LLVMOrcDisposeLLJIT(jit);
        return NULL;
    }
    LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen);
    return jit;
}

/* Build + optimize the module in tsc's context; NULL on failure. */
static LLVMModuleRef build_module(const System *s, const CgOptions *o,
                                  LLVMOrcThreadSafeContextRef tsc) {
    LLVMTargetMachineRef tm = cg_target_machine(o, 1);
    if (!tm) return NULL;
    Cg g;
    int rc = cg_build(&g, s, o, LLVMOrcThreadSafeContextGetContext(tsc), tm, false);
    if (rc == 0) rc = cg_optimize(&g, tm);
    LLVMModuleRef mod = NULL;
    if (rc == 0) {
        mod = g.mod;
        g.mod = NULL; /* ownership moves to the caller */
    }
    cg_dispose(&g);
    LLVMDisposeTargetMachine(tm);
    return mod;
}

static int add_module(LLVMOrcLLJITRef jit, const System *s, const CgOptions *o) {
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMModuleRef mod = build_module(s, o, tsc);
    if (!mod) {
        LLVMOrcDisposeThreadSafeContext(tsc);
        return 1;
    }
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps it alive */
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(jit, LLVMOrcLLJITGetMainJITDylib(jit), tsm);
    return orc_failed(e, "adding the module");
}

CgJit *cg_jit_compile(const System *s, const CgOptions *o) {
    CgOptions buf;
    if (!o) {
        cg_options_init(&buf);
        o = &buf;
    }
    LLVMOrcLLJITRef jit = make_jit(o);
    if (!jit) return NULL;
    LLVMOrcExecutorAddress addr = 0, init = 0;
    int rc = add_module(jit, s, o);
    if (!rc && o->on_step) o->on_step(o->on_step_ctx, "jit"); /* the lookup compiles */
    if (rc ||
        orc_failed(LLVMOrcLLJITLookup(jit, &addr, DYRT_MODEL_SYMBOL), "lookup") ||
        orc_failed(LLVMOrcLLJITLookup(jit, &init, CG_NAMES_INIT), "lookup")) {
        LLVMOrcDisposeLLJIT(jit);
        return NULL;
    }
    ((void (*)(void))(uintptr_t)init)(); /* the constructor LLJIT does not run (cg_data.c) */
    CgJit *j = calloc(1, sizeof *j);
    if (!j) {
        LLVMOrcDisposeLLJIT(jit);
        return NULL;
    }
    j->jit = jit;
    j->model = (const DyrtModel *)(uintptr_t)addr;
    return j;
}

const DyrtModel *cg_jit_model(const CgJit *j) { return j ? j->model : NULL; }

void cg_jit_free(CgJit *j) {
    if (!j) return;
    orc_failed(LLVMOrcDisposeLLJIT(j->jit), "disposal");
    free(j);
}

int cg_jit_run(const System *s, const CgOptions *o, int argc, char **argv) {
    CgJit *j = cg_jit_compile(s, o);
    if (!j) return DYRT_EXIT_INTERNAL;
    int status = dyrt_main(j->model, argc, argv);
    cg_jit_free(j);
    return status;
}
