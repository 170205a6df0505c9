#!/bin/sh
# numfmt_bench.sh -- speed of the CSV number formatter (runtime/numfmt.c):
# ns per value and bytes per value on solver-like values and on output
# times, for this tree's formatter and printf; with COMMIT given, also the
# formatter of that commit (e.g. 7c9199b, the %.17g one).  Report only.
#   bench/numfmt_bench.sh [COMMIT] [N]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COMMIT=${1:-}
N=${2:-2000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
$CC -O2 -I"$ROOT/runtime" "$ROOT/bench/numfmt_bench.c" "$ROOT/runtime/numfmt.c" -lm -o "$tmp/now"
echo "== this tree"
"$tmp/now" "$N"
if [ -n "$COMMIT" ]; then
    mkdir "$tmp/old"
    for f in $(git -C "$ROOT" ls-tree --name-only "$COMMIT" runtime/ | grep 'numfmt'); do
        git -C "$ROOT" show "$COMMIT:$f" > "$tmp/old/$(basename "$f")"
    done
    $CC -O2 -I"$tmp/old" "$ROOT/bench/numfmt_bench.c" "$tmp/old/numfmt.c" -lm -o "$tmp/old/bench"
    echo "== $COMMIT"
    "$tmp/old/bench" "$N" | sed -n '1,2p'
fi
