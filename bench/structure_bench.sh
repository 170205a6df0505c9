#!/bin/sh
# structure_bench.sh DYADC [SECTIONS...] -- time and peak memory of the
# structure phase (alias elimination, matching, index reduction, BLT,
# tearing, residual and Jacobian, init) on bench/structure_gen.py models.
# `dyadc flatten --structure --time-passes`: the phase times come from
# --time-passes; the peak memory is the whole process (parse and flatten
# included); the dump goes to /dev/null.  Reports, asserts nothing.
# Default: 500, 5000, 50000 sections (~10^4, 10^5, 10^6 flat equations).
dyadc=${1:?usage: structure_bench.sh DYADC [SECTIONS...]}
shift
sizes=${*:-"500 5000 50000"}
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%9s %10s %9s %9s %9s %9s %8s\n' sections flat_eqs parse_s flatten_s struct_s total_s peak_MB
for n in $sizes; do
    python3 "$dir/structure_gen.py" "$n" > "$tmp/StructBench.dyad"
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$dyadc" flatten "$tmp/StructBench.dyad" --no-stdlib \
        --model StructBench --structure --time-passes > /dev/null 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
    read -r secs kb < "$tmp/time"
    ph() { awk -v p="$1" '$2 == p":" || $2 == p { print $3 / 1000; exit }' "$tmp/err"; }
    neq=$("$dyadc" flatten "$tmp/StructBench.dyad" --no-stdlib --model StructBench 2>/dev/null | grep -c ' = ')
    printf '%9s %10s %9s %9s %9s %9s %8s\n' "$n" "$neq" "$(ph parse)" "$(ph flatten)" "$(ph structure)" \
        "$secs" "$((kb / 1024))"
done
