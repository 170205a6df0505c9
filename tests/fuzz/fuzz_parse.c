/*
 * fuzz_parse.c -- libFuzzer target for the Dyad front end.
 *
 * Feeds arbitrary bytes to parse_file(), dumps the result, and when the input
 * parsed without errors checks the formatter's contract (format.c):
 *   - fmt(x) parses without errors,
 *   - parse(fmt(x)) has the same AST as x (dumps without spans compared),
 *   - fmt(fmt(x)) == fmt(x).
 * Any crash, sanitizer report, hang, leak or broken property is a bug.
 * Build and run: tests/fuzz/build.sh (see README.md here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

static FILE *devnull;

typedef struct { char *buf; size_t len; } Text;

static Text dump_of(const AstFile *f) {
    Text t = {0};
    FILE *m = open_memstream(&t.buf, &t.len);
    ast_dump_opts(m, f, false);
    fclose(m);
    return t;
}

static Text fmt_of(const AstFile *f) {
    Text t = {0};
    FILE *m = open_memstream(&t.buf, &t.len);
    ast_format(m, f);
    fclose(m);
    return t;
}

static bool same(Text a, Text b) { return a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0; }

static void check_roundtrip(Arena *a, Interner *in, const AstFile *f) {
    Text d1 = dump_of(f), f1 = fmt_of(f);
    AstFile *g = parse_file(a, in, src_from_string(a, "fuzz-fmt.dyad", f1.buf, f1.len));
    if (diag_error_count() != 0) __builtin_trap(); /* fmt output must parse */
    Text d2 = dump_of(g), f2 = fmt_of(g);
    if (!same(d1, d2)) __builtin_trap(); /* parse(fmt(x)) == parse(x) */
    if (!same(f1, f2)) __builtin_trap(); /* fmt(fmt(x)) == fmt(x) */
    free(d1.buf), free(d2.buf), free(f1.buf), free(f2.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) {
        devnull = fopen("/dev/null", "w");
        diag_set_output(devnull);
    }
    if (size > (1u << 20)) return 0;
    diag_reset();
    Arena *a = arena_new();
    Interner *in = intern_new(a);
    SrcFile *src = src_from_string(a, "fuzz.dyad", (const char *)data, size);
    AstFile *f = parse_file(a, in, src);
    ast_dump(devnull, f);
    if (diag_error_count() == 0) check_roundtrip(a, in, f);
    src_reset(); /* frees line indexes of files that live in the arena */
    arena_free(a);
    return 0;
}
