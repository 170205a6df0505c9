#!/usr/bin/env bash
# init_bench.sh -- initialization time of big models, for one or more
# compilers side by side (report only, nothing is asserted).
# Usage: bench/init_bench.sh DYADC [DYADC...]
# Environment: REP (default 7; best of REP), WORK (default /tmp/dyadc_init_bench),
#   LADDERS (structure_gen.py sizes, default "2000 10000"), CHAINS (InitChain
#   sizes, default "2000").
# Models: the structure benchmark's RC ladder with a nonlinear conductance
# per section (bench/structure_gen.py: its initialization system has 3
# levels of one-equation blocks) and tests/sim/init/initchain.dyad scaled
# to n sections (a dependency chain as deep as the model: the worst case
# of the block-wise pass).  Time: the simulator's -v "initialization" line
# (dyrt_init: parameters, the initialization system, IDACalcIC) at
# --stop 1e-3.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REP=${REP:-7}
WORK=${WORK:-/tmp/dyadc_init_bench}
LADDERS=${LADDERS:-"2000 10000"}
CHAINS=${CHAINS:-"2000"}
mkdir -p "$WORK"
[ $# -ge 1 ] || { echo "usage: $0 DYADC [DYADC...]"; exit 2; }

best_init() { # exe
  local best=""
  for ((r = 0; r < REP; r++)); do
    t=$("$1" -v --stop 1e-3 -o /dev/null 2>&1 | sed -n 's/.*initialization \([0-9.]*\) s.*/\1/p')
    best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }')
  done
  echo "$best"
}

row() { # label, source, model
  local line="| $1 |"
  local k=0
  for dyadc in "${COMPILERS[@]}"; do
    exe=$WORK/m$k
    "$dyadc" build "$2" --no-stdlib --model "$3" -o "$exe" >/dev/null 2>&1
    line="$line $(best_init "$exe") |"
    k=$((k + 1))
  done
  echo "$line"
}

COMPILERS=("$@")
echo -n "| model |"; for d in "$@"; do echo -n " $d init s |"; done; echo
echo -n "|---|"; for d in "$@"; do echo -n "---|"; done; echo
for n in $LADDERS; do
  python3 "$ROOT/bench/structure_gen.py" "$n" >"$WORK/ladder$n.dyad"
  row "ladder N = $n" "$WORK/ladder$n.dyad" StructBench
done
for n in $CHAINS; do
  sed "s/n::Integer = 40/n::Integer = $n/" "$ROOT/tests/sim/init/initchain.dyad" >"$WORK/chain$n.dyad"
  row "InitChain n = $n" "$WORK/chain$n.dyad" InitChain
done
