#!/bin/sh
# flatten_bench.sh DYADC [N...] -- time and peak memory of `dyadc flatten`
# on generated models (bench/flatten_gen.sh) of N scalar equations.
# Reports wall and CPU time and peak memory of the whole command (flatten,
# the units check and the dump; `--time-passes` splits them); asserts nothing.  Default sizes: 10^4 10^5 10^6.
dyadc=${1:?usage: flatten_bench.sh DYADC [N...]}
shift
sizes=${*:-"10000 100000 1000000"}
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%10s %10s %10s %10s %10s\n' equations wall_s cpu_s peak_MB flat_lines
for n in $sizes; do
    sh "$dir/flatten_gen.sh" "$n" > "$tmp/FlattenBench.dyad"
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$dyadc" flatten "$tmp/FlattenBench.dyad" --no-stdlib \
        --model FlattenBench > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
    read -r secs user sys kb < "$tmp/time"
    cpu=$(echo "$user + $sys" | bc)
    printf '%10s %10s %10s %10s %10s\n' "$n" "$secs" "$cpu" "$((kb / 1024))" "$(wc -l < "$tmp/out")"
done
