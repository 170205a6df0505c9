#!/bin/sh
# multibody_chain.sh -- compile time and simulation time of a chain of N links of
# examples/multibody/Chain.dyad (revolute joint + rod + body per link), for issue 11's
# "a chain of 100 bodies compiles in under 5 s and simulates 10 s".  Report only.
# Usage: bench/multibody_chain.sh            (sizes from SIZES, default "5 10 20 100")
# Environment: DYADC (default build/dyadc), SIZES, LIMIT_S (per compile, default 600),
# LIMIT_KB (address space of a compile, default 6000000), WORK (default /tmp/dyadc_mbchain).
# Prints a Markdown table: compile wall time and peak memory (`dyadc build`), the
# structure and emit phases (--time-passes), unknowns, and the simulator's wall time for
# 10 s (--interval 0.1, default tolerances); a compile that exceeds a limit is reported so.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DYADC=${DYADC:-$ROOT/build/dyadc}
SIZES=${SIZES:-"5 10 20 100"}
LIMIT_S=${LIMIT_S:-600}
LIMIT_KB=${LIMIT_KB:-6000000}
WORK=${WORK:-/tmp/dyadc_mbchain}
mkdir -p "$WORK"
echo "| links | compile [s] | peak memory [MB] | structure [s] | emit [s] | unknowns | simulate 10 s [s] |"
echo "|---|---|---|---|---|---|---|"
for n in $SIZES; do
    f=$WORK/chain$n.dyad
    printf 'component ChainN\n  extends Chain(n = %s)\nend\n' "$n" > "$f"
    cp "$ROOT/examples/multibody/Chain.dyad" "$WORK/Chain.dyad"
    ( ulimit -v "$LIMIT_KB"; timeout "$LIMIT_S" /usr/bin/time -f "%e %M" -o "$WORK/time" \
        "$DYADC" build "$WORK/Chain.dyad" "$f" --model ChainN --time-passes -o "$WORK/chain$n" ) \
        > "$WORK/build.out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "| $n | did not finish (exit $rc: over ${LIMIT_S} s or ${LIMIT_KB} KB) | | | | | |"
        continue
    fi
    read -r wall kb < "$WORK/time"
    st=$(awk '/^time: structure /{print $3 / 1000}' "$WORK/build.out")
    em=$(awk '/^time: emit /{print $3 / 1000}' "$WORK/build.out")
    /usr/bin/time -f "%e" -o "$WORK/simtime" "$WORK/chain$n" --stop 10 --interval 0.1 -v -o /dev/null > "$WORK/sim.out" 2>&1
    unk=$(sed -n 's/^statistics for .* (\([0-9]*\) unknowns.*/\1/p' "$WORK/sim.out")
    echo "| $n | $wall | $((kb / 1024)) | $st | $em | $unk | $(cat "$WORK/simtime") |"
done
