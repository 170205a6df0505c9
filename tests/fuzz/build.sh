#!/bin/sh
# Build the libFuzzer target (clang-19, ASan + UBSan) into DIR (default
# /tmp/dyadc-fuzz).  Usage: tests/fuzz/build.sh [DIR]; prints the binary path.
set -eu
R=$(cd "$(dirname "$0")/../.." && pwd)
D=${1:-/tmp/dyadc-fuzz}
CC=${FUZZ_CC:-clang-19}
mkdir -p "$D"
cd "$D"
bison -d -o parser.c "$R/compiler/parse/parser.y"
flex -o lexer.c "$R/compiler/parse/lexer.l"
$CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -D_POSIX_C_SOURCE=200809L -I"$R/compiler/support" -I"$R/compiler/parse" -I"$R/runtime" -I. \
  "$R/tests/fuzz/fuzz_parse.c" parser.c lexer.c \
  "$R/compiler/parse/ast.c" "$R/compiler/parse/parse.c" "$R/compiler/parse/dump.c" \
  "$R/compiler/parse/format.c" "$R/compiler/support/arena.c" "$R/compiler/support/intern.c" \
  "$R/compiler/support/source.c" "$R/compiler/support/diag.c" "$R/runtime/numfmt.c" -lm -o fuzz_parse
echo "$D/fuzz_parse"
