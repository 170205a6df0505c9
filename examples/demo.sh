#!/bin/sh
# The demo: compile the bundled RC example and simulate it, in process.
set -eu
build=${1:-build}
out=$build/demo
mkdir -p "$out"
"$build"/dyadc run examples/rc_circuit/RCCircuit.dyad --model RCCircuit \
    --stop 2 --interval 0.01 -o "$out/rc.csv"
echo "results: $out/rc.csv ($(($(wc -l < "$out/rc.csv") - 1)) rows)"
echo "a few values (time, capacitor voltage; expected 10 (1 - exp(-t/0.5))):"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "capacitor.v") c = i; next }
         (NR - 2) % 50 == 0 { printf "  t = %-5s  capacitor.v = %.6f   exact %.6f\n", $1, $c, 10 * (1 - exp(-$1 / 0.5)) }' "$out/rc.csv"
"$build"/dyadc build examples/rc_circuit/RCCircuit.dyad --model RCCircuit -o "$out/rc_sim"
echo "standalone simulator: $out/rc_sim (try: $out/rc_sim --stop 5 -p source.V=5 -o rc5.csv)"
