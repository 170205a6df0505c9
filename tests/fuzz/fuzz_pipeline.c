/*
 * fuzz_pipeline.c -- libFuzzer target for the whole compile pipeline short
 * of code generation: parse -> sema -> flatten -> units -> balance ->
 * structure (matching, index reduction, BLT, tearing, events, origins).
 *
 * The bytes are one .dyad file of the root library (no standard library:
 * every input is self-contained, and loading the stdlib per input would
 * drown the fuzzer).  Every component and analysis that is not partial or
 * external is flattened; those that flatten, check and balance without an
 * error go through the structure phase, as `dyadc run` would before
 * codegen.  Any crash, sanitizer report (ASan, UBSan, leaks), hang or
 * internal-error exit is a bug; user errors are expected and fine.
 * Build and run: tests/fuzz/build.sh, tests/fuzz/long.sh (README.md here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static FILE *devnull;

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
    if (s) struct_dump(devnull, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) {
        devnull = fopen("/dev/null", "w");
        diag_set_output(devnull);
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
