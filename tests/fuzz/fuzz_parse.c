/*
 * fuzz_parse.c -- libFuzzer target for the Dyad front end.
 *
 * Feeds arbitrary bytes to parse_file(), then dumps and formats the result
 * (to /dev/null), and checks the formatter's output parses again.  Any
 * crash, sanitizer report, hang or leak is a bug.  See README.md here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ast.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!devnull) {
        devnull = fopen("/dev/null", "w");
        diag_set_output(devnull);
    }
    if (size > (1u << 20)) return 0;
    src_reset();
    diag_reset();
    Arena *a = arena_new();
    Interner *in = intern_new(a);
    SrcFile *src = src_from_string(a, "fuzz.dyad", (const char *)data, size);
    AstFile *f = parse_file(a, in, src);
    ast_dump(devnull, f);
    if (diag_error_count() == 0) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        ast_format(m, f);
        fclose(m);
        SrcFile *src2 = src_from_string(a, "fuzz-fmt.dyad", buf, len);
        free(buf);
        AstFile *g = parse_file(a, in, src2);
        if (diag_error_count() != 0) __builtin_trap(); /* fmt output must parse */
        ast_dump(devnull, g);
    }
    arena_free(a);
    return 0;
}
