#!/bin/sh
# Build the libFuzzer targets (clang-19, ASan + UBSan) into DIR (default
# /tmp/dyadc-fuzz): fuzz_parse (the front end and the formatter) and
# fuzz_pipeline (parse -> flatten -> structure -> codegen in memory ->
# a short simulation; LLVM 19, SUNDIALS and KLU as for the build).  Usage:
# tests/fuzz/build.sh [DIR [TARGET]] (TARGET: one of the two, default
# both); prints the binaries' paths.
set -eu
R=$(cd "$(dirname "$0")/../.." && pwd)
D=${1:-/tmp/dyadc-fuzz}
WHICH=${2:-both}
CC=${FUZZ_CC:-clang-19}
mkdir -p "$D"
cd "$D"
bison -d -o parser.c "$R/compiler/parse/parser.y"
flex -o lexer.c "$R/compiler/parse/lexer.l"
FLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_POSIX_C_SOURCE=200809L"
INC=""
for p in support parse sema flatten symbolic structure; do INC="$INC -I$R/compiler/$p"; done
if [ "$WHICH" != fuzz_pipeline ]; then
# shellcheck disable=SC2086
$CC $FLAGS -I"$R/compiler/support" -I"$R/compiler/parse" -I"$R/runtime" -I. \
  "$R/tests/fuzz/fuzz_parse.c" parser.c lexer.c \
  "$R/compiler/parse/ast.c" "$R/compiler/parse/parse.c" "$R/compiler/parse/dump.c" \
  "$R/compiler/parse/format.c" "$R/compiler/support/arena.c" "$R/compiler/support/intern.c" \
  "$R/compiler/support/source.c" "$R/compiler/support/diag.c" "$R/runtime/numfmt.c" -lm -o fuzz_parse
echo "$D/fuzz_parse"
fi
[ "$WHICH" = fuzz_parse ] && exit 0
SRCS=""
for p in support parse sema flatten symbolic structure codegen; do
  for f in "$R/compiler/$p"/*.c; do SRCS="$SRCS $f"; done
done
# the runtime without the standalone main and the FMI wrappers
for f in "$R/runtime"/*.c; do
  case "$f" in */main.c|*/fmi2_fmu.c) ;; *) SRCS="$SRCS $f" ;; esac
done
LLVM_CONFIG=${LLVM_CONFIG:-/usr/lib/llvm-19/bin/llvm-config}
LIBS=""
for l in sundials_ida sundials_kinsol sundials_sunlinsolklu sundials_sunlinsoldense \
         sundials_sunmatrixsparse sundials_sunmatrixdense sundials_nvecserial sundials_generic \
         klu amd colamd btf suitesparseconfig; do
  LIBS="$LIBS -l:lib$l.a"
done
# shellcheck disable=SC2086
$CC $FLAGS $INC -I"$R/compiler" -I"$R/runtime" -I/usr/include/suitesparse \
  -isystem "$($LLVM_CONFIG --includedir)" -I. \
  -DDYADC_LINKER=\"/usr/bin/cc\" -DDYRT_GNUPLOT=\"\" \
  "$R/tests/fuzz/fuzz_pipeline.c" parser.c lexer.c $SRCS \
  -L"$($LLVM_CONFIG --libdir)" -Wl,-rpath,"$($LLVM_CONFIG --libdir)" -lLLVM-19 $LIBS \
  -lm -lpthread -o fuzz_pipeline
echo "$D/fuzz_pipeline"
