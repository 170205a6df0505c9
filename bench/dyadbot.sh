#!/bin/sh
# dyadbot.sh DIR -- compile and simulate the .dyad models of the public robot package
# JuliaComputing/DyadBotComponents.jl (DIR: a checkout, read only; nothing of it is copied
# into this repository) with the bundled library, 10 s each, and apply that package's own
# stabilization criteria (test/test_stabilization.jl) where they exist: the body tilt
# `plant.theta` stays below 0.2 rad and, over the last second, below 0.02 rad; for the
# cascade models the wheel position tracks the filtered reference within 0.02 m over the
# last second (they run 20 s, as there).  Report only: prints one line per component.
# Environment: DYADC (default build/dyadc).
set -u
dir=${1:?usage: bench/dyadbot.sh DYADBOT_CHECKOUT}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DYADC=${DYADC:-$ROOT/build/dyadc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for m in $(sed -n 's/^component \([A-Z][A-Za-z0-9_]*\)$/\1/p' "$dir"/dyad/*.dyad); do
    stop=10
    case $m in *Cascade*DyadBot) stop=20 ;; esac
    if ! "$DYADC" run "$dir/dyad" --model "$m" --stop $stop --interval 0.01 --rtol 1e-8 --atol 1e-8 -o "$tmp/out.csv" \
        > /dev/null 2> "$tmp/err"; then
        echo "$m: FAILS: $(grep -m1 'error' "$tmp/err" | cut -c1-220)"
        continue
    fi
    awk -F, -v m="$m" -v stop=$stop '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; th = c["plant.theta"]; x = c["plant.x"]
              ref = c["firstorder1.y"] ? c["firstorder1.y"] : c["pos_ref.y"]; next }
    { if (!th) next
      a = $th < 0 ? -$th : $th; if (a > tmax) tmax = a
      if ($1 >= stop - 1) { if (a > tlast) tlast = a; if (ref) { e = $x - $ref; if (e < 0) e = -e; if (e > elast) elast = e } } }
    END {
      if (!th) { printf "%s: simulates %g s (no plant.theta to check)\n", m, stop; exit }
      ok = tmax < 0.2 && tlast < 0.02 && (!ref || elast < 0.02)
      printf "%s: simulates %g s; max |theta| %.3g, last second %.3g%s: %s\n", m, stop, tmax, tlast,
             ref ? sprintf(", tracking error %.3g m", elast) : "", ok ? "meets the package test" : "MISSES the package test" }' "$tmp/out.csv"
done
