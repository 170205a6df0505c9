#!/usr/bin/env bash
# run_bench.sh -- simulator benchmarks; prints Markdown tables (report only,
# nothing is asserted).  Usage:
#   bench/run_bench.sh [REPEATS]        (default 3; best of REPEATS for times)
# Environment:
#   DYADC     the compiler (default build/dyadc)
#   BASELINE  the hand-written IDA baseline binary (default: built from
#             /work/shared/bench/baseline into $WORK/baseline with its Makefile)
#   SIZES     chain sizes (default "10 100 1000 10000")
#   MODELS    chain models (default "msd rc")
#   WORK      scratch folder (default /tmp/dyadc_bench)
#
# (a) latency: `dyadc run` wall time from source to results for small models;
# (b) the baseline's `msd` and `rc` chains written as .dyad (bench/gen_chain.py,
#     N explicit instances), built with `dyadc build`, run side by side with the
#     baseline at rtol 1e-6, atol 1e-8, tf = 10, 100 output intervals, KLU;
#     our simulator writes one column (--vars) so both sides do the same work;
#     a separate run writes every state for the checksum, and one more writes
#     every output column (the default CSV): its wall time and the -v split
#     into integration and output time;
# (c) compile time of each chain (`dyadc build --time-passes`) and the size
#     of its optimized LLVM IR (`--emit-llvm`, lines).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REP=${1:-3}
DYADC=${DYADC:-$ROOT/build/dyadc}
SIZES=${SIZES:-"10 100 1000 10000"}
MODELS=${MODELS:-"msd rc"}
WORK=${WORK:-/tmp/dyadc_bench}
BASEDIR=${BASEDIR:-/work/shared/bench/baseline}
SIM="--stop 10 --interval 0.1 --rtol 1e-6 --atol 1e-8"
mkdir -p "$WORK"
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)"; exit 1; }

if [ -z "${BASELINE:-}" ]; then
  mkdir -p "$WORK/baseline"
  cp "$BASEDIR/ida_chain.c" "$BASEDIR/Makefile" "$WORK/baseline/"
  make -s -C "$WORK/baseline" ida_chain_static >/dev/null
  BASELINE=$WORK/baseline/ida_chain_static
fi

# wall seconds of one command (stdout/stderr to $WORK/last.out)
wall() {
  /usr/bin/time -f "%e" -o "$WORK/time.txt" "$@" >"$WORK/last.out" 2>&1 || true
  cat "$WORK/time.txt" | tail -1
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

# ---- (a) latency ------------------------------------------------------------
echo "### (a) Source to results with \`dyadc run\` (best of $REP, wall s)"
echo
echo "| model | flat equations | dyadc run wall s |"
echo "|---|---|---|"
python3 "$ROOT/bench/gen_chain.py" msd 45 >"$WORK/lat_msd45.dyad"
python3 "$ROOT/bench/gen_chain.py" rc 100 >"$WORK/lat_rc100.dyad"
lat_row() { # label, eqs, args...
  local label=$1 eqs=$2 best=""
  shift 2
  for ((r = 0; r < REP; r++)); do best=$(min "$best" "$(wall "$DYADC" run "$@" $SIM -o "$WORK/lat.csv")"); done
  echo "| $label | $eqs | $best |"
}
eqs() { "$DYADC" flatten "$@" 2>/dev/null | sed -n 's/.*# \([0-9]*\) equations.*/\1/p'; }
lat_row "ElectricalComponents.Examples.RLC (stdlib)" "$(eqs --model ElectricalComponents.Examples.RLC)" \
  --model ElectricalComponents.Examples.RLC
lat_row "msd chain N = 45" "$(eqs "$WORK/lat_msd45.dyad" --no-stdlib --model Chain)" \
  "$WORK/lat_msd45.dyad" --no-stdlib --model Chain
lat_row "rc ladder N = 100" "$(eqs "$WORK/lat_rc100.dyad" --no-stdlib --model Chain)" \
  "$WORK/lat_rc100.dyad" --no-stdlib --model Chain
echo

# ---- (b) + (c) chains vs baseline ---------------------------------------------
echo "### (b) Chains vs the hand-written IDA baseline (KLU; best of $REP) and (c) compile time"
echo
echo "| model | N | unknowns (ours / baseline) | steps (ours / baseline) | sim wall s ours | baseline wall s | ratio wall | integration s ours | baseline solve_s | ratio solve | checksum ours | checksum baseline | all columns: wall s / integration s / output s | dyadc build s | of which codegen s | IR lines |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in $MODELS; do
  for n in $SIZES; do
    src=$WORK/$m$n.dyad exe=$WORK/$m$n
    python3 "$ROOT/bench/gen_chain.py" "$m" "$n" >"$src"
    build_s=$(wall "$DYADC" build "$src" --no-stdlib --model Chain -o "$exe" --time-passes)
    codegen_s=$(awk '$2 == "codegen" || $2 == "emit" { s += $3 } END { printf "%.2f", s / 1000 }' "$WORK/last.out")  # IR + object
    ir_lines=$("$DYADC" build "$src" --no-stdlib --model Chain -o "$WORK/ir.tmp" --emit-llvm 2>/dev/null | wc -l)
    if [ ! -x "$exe" ]; then
      echo "| $m | $n | build failed: $(head -c 200 "$WORK/last.out" | tr '\n' ' ') |"
      continue
    fi
    if [ "$m" = msd ]; then last=m$n.s; pat='m'; suf='.s'; else last=c$n.v; pat='c'; suf='.v'; fi
    best=""; best_int=""
    for ((r = 0; r < REP; r++)); do
      best=$(min "$best" "$(wall "$exe" $SIM --vars "$last" -o "$WORK/run.csv" -v)")
      int=$(sed -n 's/.*integration \([0-9.]*\) s.*/\1/p' "$WORK/last.out")
      best_int=$(min "$best_int" "$int")
    done
    ny=$(sed -n 's/.*(\([0-9]*\) unknowns.*/\1/p' "$WORK/last.out")
    steps=$(sed -n 's/.*steps \([0-9]*\),.*/\1/p' "$WORK/last.out")
    vars=$(seq 1 "$n" | sed "s/^/$pat/; s/\$/$suf/" | paste -sd, -)
    "$exe" $SIM --vars "$vars" -o "$WORK/sum.csv" >/dev/null 2>&1 || true
    sum=$(tail -1 "$WORK/sum.csv" | awk -F, '{ s = 0; for (i = 2; i <= NF; i++) s += $i; printf "%.7g", s }')
    all=""; all_int=""; all_out=""
    for ((r = 0; r < REP; r++)); do
      w=$(wall "$exe" $SIM -o "$WORK/all.csv" -v)
      if [ -z "$all" ] || awk -v a="$all" -v b="$w" 'BEGIN { exit !(b + 0 < a + 0) }'; then
        all=$w
        all_int=$(sed -n 's/.*integration \([0-9.]*\) s.*/\1/p' "$WORK/last.out")
        all_out=$(sed -n 's/.*output \([0-9.]*\) s.*/\1/p' "$WORK/last.out")
      fi
    done
    bbest=""; bsolve=""
    for ((r = 0; r < REP; r++)); do
      bbest=$(min "$bbest" "$(wall "$BASELINE" "$m" "$n" klu)")
      bsolve=$(min "$bsolve" "$(sed -n 's/.* solve_s=\([^ ]*\).*/\1/p' "$WORK/last.out")")
    done
    bneq=$(sed -n 's/.* neq=\([^ ]*\).*/\1/p' "$WORK/last.out")
    bsteps=$(sed -n 's/.* steps=\([^ ]*\).*/\1/p' "$WORK/last.out")
    bsum=$(sed -n 's/.* sum=\([^ ]*\).*/\1/p' "$WORK/last.out")
    echo "| $m | $n | $ny / $bneq | $steps / $bsteps | $best | $bbest | $(ratio "$best" "$bbest") | $best_int | $bsolve | $(ratio "$best_int" "$bsolve") | $sum | $bsum | $all / $all_int / $all_out | $build_s | $codegen_s | $ir_lines |"
  done
done
