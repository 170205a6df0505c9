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
START=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$OUT.mem" $PARSER "$OUT" > /dev/null 2>&1 || true
END=$(date +%s.%N)
awk -v b="$BYTES" -v s="$START" -v e="$END" -v m="$(cat "$OUT.mem")" 'BEGIN {
  t = e - s; printf "input %.1f MB, %.3f s, %.1f MB/s, peak RSS %.1f MB\n", b / 1e6, t, b / 1e6 / t, m / 1024 }'
