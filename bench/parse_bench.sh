#!/bin/sh
# parse_bench.sh -- generate a multi-megabyte .dyad library and measure parse
# throughput (MB/s) and peak memory.  Report only; nothing is asserted.
# Usage: bench/parse_bench.sh [PARSER] [COPIES]
#   PARSER: a binary taking a .dyad path and parsing it (default: `dyadc parse`)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PARSER=${1:-"dyadc parse"}
COPIES=${2:-600}
OUT=${TMPDIR:-/tmp}/dyadc_parse_bench.dyad
: > "$OUT"
i=0
while [ "$i" -lt "$COPIES" ]; do
  for f in "$ROOT"/tests/golden/parse/*.dyad; do
    # rename definitions so every copy is distinct
    sed -E "s/^((partial |example |test |external )?(component|connector|struct|analysis|function|type|enum) +)([A-Za-z_]+)/\1\4_$i/" "$f" >> "$OUT"
    printf '\n' >> "$OUT"
  done
  i=$((i + 1))
done
BYTES=$(wc -c < "$OUT")
# CPU time (user + sys) is the throughput measure: wall time on a loaded
# machine says little.  Memory: peak RSS minus the RSS of parsing an empty
# file (dyadc maps LLVM and the rest of the compiler at start-up).
: > "$OUT.empty.dyad"
/usr/bin/time -f "%M" -o "$OUT.base" $PARSER "$OUT.empty.dyad" > /dev/null 2>&1 || true
/usr/bin/time -f "%e %U %S %M" -o "$OUT.mem" $PARSER "$OUT" > /dev/null 2> "$OUT.err" || true
ERRS=$(grep -c "error:" "$OUT.err" || true)
read -r WALL USR SYS RSS < "$OUT.mem"
awk -v b="$BYTES" -v w="$WALL" -v u="$USR" -v s="$SYS" -v m="$RSS" -v base="$(cat "$OUT.base")" -v e="$ERRS" 'BEGIN {
  cpu = u + s; if (cpu <= 0) cpu = 0.01
  printf "input %.1f MB (%d syntax errors), cpu %.2f s (user %.2f, sys %.2f), wall %.2f s\n", b / 1e6, e, cpu, u, s, w
  printf "throughput %.1f MB/s (cpu), %.1f MB/s (user only)\n", b / 1e6 / cpu, b / 1e6 / (u > 0 ? u : 0.01)
  printf "peak RSS %.1f MB, above an empty parse %.1f MB = %.1fx the source\n", m / 1024, (m - base) / 1024, (m - base) * 1024 / b }'
rm -f "$OUT.empty.dyad" "$OUT.base" "$OUT.mem" "$OUT.err"
