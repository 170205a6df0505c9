#!/bin/sh
# structure_bench.sh DYADC [SECTIONS...] -- time and peak memory of the
# structure phase (alias elimination, matching, index reduction, BLT,
# tearing, residual and Jacobian, init) on bench/structure_gen.py models,
# and a regression guard for them.
#
# `dyadc flatten --structure --time-passes`: the phase and sub-pass times
# are the CPU times --time-passes reports (the machine is shared: wall time
# measures the neighbours; total_s is the wall time of the whole command); the peak memory is the whole process after the
# structure phase (parse and flatten included); the dump goes to /dev/null.
# Default: 500, 5000, 50000 sections (~10^4, 10^5, 10^6 flat equations).
#
# The guard (exit status 3 and a line starting with REGRESSION):
#   - the fitted scaling exponent (least squares over log size) of the
#     structure time above MAX_EXP (default 1.15) or of the peak memory above
#     MAX_MEM_EXP (default 1.10); needs at least two sizes of >= 40,000
#     equations, smaller ones are dominated by constant costs;
#   - the figures at the largest size, scaled linearly to 950,000 equations,
#     above the targets of issue 13: structure phase TARGET_S seconds
#     (default 10) and TARGET_MB megabytes (default 3072).
# Wall times on a shared machine are noisy: run it on a quiet one, or read a
# flagged time together with the memory figures (which are exact).
dyadc=${1:?usage: structure_bench.sh DYADC [SECTIONS...]}
shift
sizes=${*:-"500 5000 50000"}
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: "${MAX_EXP:=1.15}" "${MAX_MEM_EXP:=1.10}" "${TARGET_S:=10}" "${TARGET_MB:=3072}"
printf '%9s %10s %9s %9s %9s %9s %8s\n' sections flat_eqs parse_s flatten_s struct_s total_s peak_MB
for n in $sizes; do
    python3 "$dir/structure_gen.py" "$n" > "$tmp/StructBench.dyad"
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$dyadc" flatten "$tmp/StructBench.dyad" --no-stdlib \
        --model StructBench --structure --time-passes > /dev/null 2> "$tmp/err" || { head -c 2000 "$tmp/err"; exit 1; }
    read -r secs kb < "$tmp/time"
    ph() { awk -v p="$1" '$2 == p":" || $2 == p { print $6 / 1000; exit }' "$tmp/err"; }
    mb=$(awk '$2 == "structure" { print $(NF-1) }' "$tmp/err")
    neq=$("$dyadc" flatten "$tmp/StructBench.dyad" --no-stdlib --model StructBench 2>/dev/null | grep -c ' = ')
    printf '%9s %10s %9s %9s %9s %9s %8s\n' "$n" "$neq" "$(ph parse)" "$(ph flatten)" "$(ph structure)" \
        "$secs" "$mb"
    echo "$neq $(ph structure) $mb" >> "$tmp/points"
    grep '^time:   structure\.' "$tmp/err" | awk '{ printf "%s %s ", $2, $6 }' >> "$tmp/subs"
    echo >> "$tmp/subs"
done
echo "structure sub-passes (CPU ms), by size:"
awk '{ line = "  "; for (i = 1; i <= NF; i += 2) line = line sprintf("%s %s  ", substr($i, 11), $(i + 1)); print line }' "$tmp/subs"
awk -v maxe="$MAX_EXP" -v maxm="$MAX_MEM_EXP" -v ts="$TARGET_S" -v tm="$TARGET_MB" '
function fit(col,   i, sx, sy, sxx, sxy, k, x, y) {
    k = 0; sx = sy = sxx = sxy = 0
    for (i = 1; i <= n; i++) {
        if (N[i] < 40000) continue
        x = log(N[i]); y = log(V[col, i]); k++
        sx += x; sy += y; sxx += x * x; sxy += x * y
    }
    if (k < 2) return "n/a"
    return (k * sxy - sx * sy) / (k * sxx - sx * sx)
}
{ n++; N[n] = $1; V[1, n] = $2; V[2, n] = $3 }
END {
    bad = 0
    et = fit(1); em = fit(2)
    printf "fitted exponent (sizes >= 40,000 equations): time %s, memory %s\n", \
        et == "n/a" ? et : sprintf("%.2f", et), em == "n/a" ? em : sprintf("%.2f", em)
    if (et != "n/a" && et > maxe) { printf "REGRESSION: structure time grows with exponent %.2f > %.2f\n", et, maxe; bad = 1 }
    if (em != "n/a" && em > maxm) { printf "REGRESSION: peak memory grows with exponent %.2f > %.2f\n", em, maxm; bad = 1 }
    s950 = V[1, n] * 950000 / N[n]; m950 = V[2, n] * 950000 / N[n]
    printf "at 950,000 equations (linear from %d): structure %.1f s (target < %s s), peak %.0f MB (target < %s MB)\n", \
        N[n], s950, ts, m950, tm
    if (N[n] >= 40000 && s950 > ts) { printf "REGRESSION: structure phase %.1f s at 950k equations > %s s\n", s950, ts; bad = 1 }
    if (N[n] >= 40000 && m950 > tm) { printf "REGRESSION: peak memory %.0f MB at 950k equations > %s MB\n", m950, tm; bad = 1 }
    exit bad ? 3 : 0
}' "$tmp/points"
