/*
 * fuzz_pipeline.c -- libFuzzer target for the whole pipeline: parse ->
 * sema -> flatten -> units -> balance -> structure (matching, index
 * reduction, BLT, tearing, events, origins) and, for small models, code
 * generation (ORC JIT) and a short simulation through the runtime's handle
 * (initialization, IDA, events, clocks, the non-finite checks).
 *
 * The bytes are one .dyad file of the root library (no standard library:
 * every input is self-contained, and loading the stdlib per input would
 * drown the fuzzer).  Every component and analysis that is not partial or
 * external is flattened; those that flatten, check and balance without an
 * error go through the structure phase, as `dyadc run` would before
 * codegen.  A system of at most RUN_MAX_UNKNOWNS unknowns and assigned
 * values is then compiled in memory and simulated over the model's span
 * with a budget of steps (RUN_MAX_CALLS outputs or clock ticks of at most
 * RUN_MAX_STEPS integrator steps each), so one input stays fast however
 * stiff or eventful the model.  Any crash, sanitizer report (ASan, UBSan,
 * leaks), hang or internal-error exit (the compiler's "internal error",
 * the runtime's DYRT_EXIT_INTERNAL) is a bug; user errors (a failed
 * initialization, a non-finite value, too much work) are expected and fine.
 * Build and run: tests/fuzz/build.sh, tests/fuzz/long.sh (README.md here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "dyadrt.h"
#include "flat.h"
#include "sema.h"
#include "structure.h"

/* At most this many definitions per input go through the pipeline: a
 * mutated file with hundreds of components is one slow input, not more
 * coverage. */
#define MAX_DEFS 8

/* The budget of structural work per model (flat.h; the compiler's default
 * is 10^7): a loop of 10^4 x 10^4 x 10^4 in the seed corpus
 * (tests/errors/flatten/WorkLimit.dyad) would take minutes under the
 * sanitizers; the budget's error path is what is fuzzed, not its size. */
#define FUZZ_WORK 100000

/* The simulated models: at most this many unknowns plus assigned values
 * (a few hundred steps of such a model take milliseconds; the JIT is the
 * larger share), at most RUN_MAX_CALLS output times and clock ticks, at
 * most RUN_MAX_STEPS integrator steps between two of them. */
#define RUN_MAX_UNKNOWNS 64
#define RUN_MAX_CALLS 40
#define RUN_MAX_STEPS 200
#define RUN_OUTPUTS 20

static FILE *devnull;

static void quiet(void *user, const char *kind, const char *message) {
    (void)user, (void)kind, (void)message;
}

/* A runtime status: USER is the model's or the input's fault, INTERNAL a bug. */
static int ok_or_trap(int rc) {
    if (rc == DYRT_EXIT_INTERNAL) __builtin_trap();
    return rc;
}

/* The span the driver would simulate: the model's, else [start, start + 1]. */
static void span_of(const DyrtModel *m, double *t0, double *t1) {
    *t0 = m->defaults.start;
    *t1 = m->defaults.stop > *t0 ? m->defaults.stop : *t0 + 1;
    if (!(*t1 - *t0 < 1e300)) *t1 = *t0 + 1;
}

/* Integrate over the span to RUN_OUTPUTS output times, stopping at every
 * clock tick, checking the outputs at each point, within RUN_MAX_CALLS
 * calls of dyrt_step_to. */
static void simulate_handle(const DyrtModel *m) {
    DyrtSim *sim = dyrt_create(m);
    if (!sim) __builtin_trap(); /* the generated descriptor failed the runtime's checks */
    double t0, t1;
    span_of(m, &t0, &t1);
    int rc = ok_or_trap(dyrt_set_times(sim, t0, t1));
    if (!rc) rc = ok_or_trap(dyrt_set_max_steps(sim, RUN_MAX_STEPS));
    dyrt_set_stop_at_ticks(sim, 1);
    double *out = calloc((size_t)m->nout + 1, sizeof *out);
    if (!rc) rc = ok_or_trap(dyrt_init(sim, t0 + (t1 - t0) / RUN_OUTPUTS));
    if (!rc && dyrt_tick_pending(sim)) rc = ok_or_trap(dyrt_tick(sim));
    int calls = 0;
    for (int k = 1; !rc && k <= RUN_OUTPUTS && calls < RUN_MAX_CALLS; k++) {
        double tout = k == RUN_OUTPUTS ? t1 : t0 + (t1 - t0) * k / RUN_OUTPUTS;
        while (!rc && calls++ < RUN_MAX_CALLS) {
            rc = ok_or_trap(dyrt_step_to(sim, tout));
            if (!rc) {
                dyrt_outputs(sim, out);
                rc = ok_or_trap(dyrt_check_outputs(sim, out));
            }
            if (rc || !dyrt_tick_pending(sim)) break;
            rc = ok_or_trap(dyrt_tick(sim));
            if (!rc) rc = ok_or_trap(dyrt_check_asserts(sim));
            if (dyrt_time(sim) >= tout) break;
        }
        if (!rc) rc = ok_or_trap(dyrt_check_asserts(sim));
    }
    free(out);
    dyrt_free(sim);
}

/* Code generation in memory (ORC JIT, -O0: the optimizer is LLVM's, the IR
 * ours) and a short simulation. */
static void compile_and_run(const System *s) {
    if (s->ny + s->nassigned > RUN_MAX_UNKNOWNS) return;
    CgOptions o;
    cg_options_init(&o);
    o.opt_level = 0;
    CgJit *j = cg_jit_compile(s, &o);
    if (!j) __builtin_trap(); /* codegen fails only by an internal error */
    simulate_handle(cg_jit_model(j));
    cg_jit_free(j);
}

typedef struct {
    Program *p;
    Arena *a;
    int done;
} Ctx;

static void one_def(void *ud, Def *def) {
    Ctx *c = ud;
    AstKind k = def->node->kind;
    if ((k != AST_COMPONENT && k != AST_ANALYSIS) || def->node->def.prefix == DEF_PARTIAL ||
        def->node->def.prefix == DEF_EXTERNAL || c->done >= MAX_DEFS)
        return;
    c->done++;
    unsigned errors = diag_error_count();
    FlatModel *m = flatten(c->p, def, expr_ctx_new(c->a));
    if (!m || diag_error_count() > errors) return;
    flat_check_units(m, false);
    if (diag_error_count() > errors || !flat_check_balance(m, def, false)) return;
    StructOptions so = {0};
    System *s = structure_with(m, &so);
    if (!s) return;
    /* codegen before the dump: the dump expands the System's loop items
     * into scalar rows (sys_expand), and codegen's loop items are to be fuzzed too */
    if (diag_error_count() == errors && !diag_had_internal()) compile_and_run(s);
    struct_dump(devnull, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) {
        devnull = fopen("/dev/null", "w");
        diag_set_output(devnull);
        dyrt_set_message_hook(quiet, NULL);
        flat_set_work_limit(FUZZ_WORK); /* inputs are small: keep each one fast */
    }
    if (size > (1u << 16)) return 0;
    diag_reset();
    Arena *a = arena_new();
    Interner *in = intern_new(a);
    Program *p = sema_new(a, in);
    sema_load_source(p, src_from_string(a, "fuzz.dyad", (const char *)data, size));
    if (diag_error_count() == 0) {
        Ctx c = {p, a, 0};
        sema_each_def(p, one_def, &c);
    }
    if (diag_had_internal()) __builtin_trap(); /* "internal error": a bug, not the input's fault */
    src_reset();
    arena_free(a);
    return 0;
}
