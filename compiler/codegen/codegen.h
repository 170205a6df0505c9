/*
 * codegen.h -- System -> LLVM module -> object file, executable or JIT.
 *
 * The only phase that includes the LLVM C API.  It is pure emission: every Expr
 * list of the System (residual, Jacobian, outputs, ...) becomes one entry
 * function that calls bounded "chunk" functions in order (a run of items
 * that differ only in their slot indices becomes one loop, cg_loop.c), every numeric array a
 * constant byte string (cg_data.c), and the exported `const DyrtModel dyad_model` descriptor
 * (runtime/dyad_model.h) ties them together.  What is only data stays data
 * (ABI 3): outputs that are c0 + c1 * slot, constant parameter defaults and
 * constant start values become descriptor tables the runtime applies
 * (runtime/model.c), and each name list is one packed string blob whose
 * pointer array a constructor fills at load time (no relocation per name).
 *
 * Pipeline per call: build -> LLVMVerifyModule -> LLVMRunPasses
 * ("default<O<opt_level>>") -> emit object / JIT / print.  No fast-math
 * flags: results agree between the JIT and the object file and across -O
 * levels up to rounding of libm itself.
 *
 * Generated functions mark their pointer arguments noalias: an array a
 * function writes (r, vals, out, g, y/yp/z/p where written) must not overlap
 * any other array argument.  Status functions (residual, jacobian,
 * init_residual, init_jacobian) return 1 when a computed value is NaN.
 *
 * Errors: functions returning int return 0 on success; on failure they
 * report through diag_* (diag_internal for LLVM failures, diag_error for
 * I/O) and return nonzero.  cg_jit_run returns dyrt_main's exit status.
 */
#ifndef DYADC_CODEGEN_H
#define DYADC_CODEGEN_H

#include <stdint.h>
#include <stdio.h>

#include "dyad_model.h"
#include "structure/system.h"

/* A chunk function holds at most this many distinct expression nodes
 * (plus one per stored output); one output alone larger than that is split
 * into pieces of at most this size (cg_chunk.c). */
#define CG_CHUNK_MAX_NODES 2000

/* An entry function with at least this many nodes of straight-line chunks
 * has them in the bulk object (cg_emit_object). */
#define CG_BULK_NODES 16384

typedef struct CgOptions {
    int opt_level;        /* 0..3; LLVMRunPasses "default<On>" (default 2) */
    int native_cpu;       /* object files: 1 = tune for the host CPU, 0 =
                             generic x86-64 (portable; the JIT always uses
                             the host CPU) */
    uint32_t chunk_nodes; /* node cap per chunk; 0 = CG_CHUNK_MAX_NODES */
    int no_loops;         /* 1: never turn runs of items of one shape into
                             loops (cg_loop.c); the results are bit-identical
                             either way */
    void (*on_step)(void *ctx, const char *step); /* NULL, or called when the
                             machine-code step begins, after the IR was built
                             and optimized: "emit" (object file) or "jit";
                             lets a driver time the two apart */
    void *on_step_ctx;
} CgOptions;

/* Defaults: opt_level 2, generic CPU, default cap. */
void cg_options_init(CgOptions *o);

/* Build, verify, optimize and write a native PIC object for the host triple.
 * bulk_path NULL: one object.  Otherwise a second object there (below
 * -O3): the straight-line chunks of every entry function that has at least
 * CG_BULK_NODES nodes of them, and every chunk of the functions of start and
 * initialization, compiled by the fast back end (CodeGenLevelNone) without
 * IR passes; obj_path's entry functions call them.  Link both. */
int cg_emit_object(const System *s, const CgOptions *o, const char *obj_path,
                   const char *bulk_path);

/* Link objs (NULL-terminated) with <runtime_dir>/libdyadrt_main.a, libdyadrt.a and the static
 * SUNDIALS/KLU archives into exe_path: the linker driver found when dyadc
 * was configured (DYADC_LINKER, an absolute path; never a shell), its
 * output kept in <scratch_dir>/link.log and shown when it fails or warns.
 * Success means exit status 0 *and* a non-empty executable at exe_path.
 * The result depends only on libc and libm. */
int cg_link_executable(const char *const *objs, const char *exe_path, const char *runtime_dir,
                       const char *scratch_dir);

/* Link objs (NULL-terminated) with <runtime_dir>/libdyadrt_fmi.a, libdyadrt.a and the static
 * SUNDIALS/KLU archives into a shared object exporting only the fmi2*
 * functions (the binary of an FMU), the same way (its version script in
 * scratch_dir too).  Depends only on libc and libm. */
int cg_link_shared(const char *const *objs, const char *so_path, const char *runtime_dir,
                   const char *scratch_dir);

/* Textual IR of the (optimized at opt_level) module. */
int cg_dump_ir(const System *s, const CgOptions *o, FILE *out);

/* In-process compilation with ORC LLJIT.  The model stays valid until
 * cg_jit_free.  NULL on failure (diagnostic printed). */
typedef struct CgJit CgJit;
CgJit *cg_jit_compile(const System *s, const CgOptions *o);
const DyrtModel *cg_jit_model(const CgJit *j);
void cg_jit_free(CgJit *j);

/* cg_jit_compile + dyrt_main(model, argc, argv) + cg_jit_free.  Returns
 * dyrt_main's status, or DYRT_EXIT_INTERNAL (2) if compilation failed. */
int cg_jit_run(const System *s, const CgOptions *o, int argc, char **argv);

/* "19.1.7": the LLVM this compiler was linked with. */
const char *cg_llvm_version(void);

/* Size statistics of the optimized module (for tests and -v). */
typedef struct CgStats {
    uint32_t functions;        /* defined functions */
    uint32_t chunks;           /* of which chunk functions */
    uint32_t max_instructions; /* largest defined function, in instructions */
    uint32_t max_chunk_nodes;  /* largest chunk, in expression nodes */
    uint32_t loops;            /* of the chunks, loops over runs of items (the
                                  inner loops of nests included) */
    uint32_t nests;            /* of the chunks, two-level nests (cg_loop.c) */
} CgStats;
int cg_stats(const System *s, const CgOptions *o, CgStats *out);

#endif
