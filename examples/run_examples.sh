#!/bin/sh
# run_examples.sh [DYADC] -- run the examples through their analyses and check
# them numerically (never byte for byte):
#   spring_chain: the total energy (kinetic + spring) stays constant;
#   heat_rod:     the heat lost equals the heat that left through the cold end
#                 (C * sum(T) falls by the integral of Q[end]), and T_mean falls;
#   multibody:    the 3-D mechanisms of examples/multibody (check.sh there).
# Run from the repository root.  Exit status 1 if a check fails.
set -eu
dyadc=${1:-build/dyadc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$dyadc" run examples/spring_chain/SpringChain.dyad --analysis ChainRelease --rtol 1e-9 --atol 1e-10 -o "$tmp/chain.csv"
awk -F, -v m=0.5 -v c=20 -v n=8 '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    e = 0
    for (k = 1; k <= n; k++) {
        v = $col["masses[" k "].v"]; s = $col["springs[" k "].s_rel"]
        e += 0.5 * m * v * v + 0.5 * (c * k / n) * s * s
    }
    if (NR == 2) e0 = e
    d = e - e0; if (d < 0) d = -d
    if (d > worst) worst = d
}
END {
    printf "spring_chain: energy %.6f J, largest drift %.2e J\n", e0, worst
    exit (worst > 1e-3 * e0)
}' "$tmp/chain.csv" || { echo "spring_chain: FAILED"; fail=1; }

"$dyadc" run examples/heat_rod/HeatRod.dyad --analysis RodCooling --interval 0.5 -o "$tmp/rod.csv"
awk -F, -v C=4 -v n=20 '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    h = 0
    for (k = 1; k <= n; k++) h += C * $col["T[" k "]"]
    q = $col["Q[" n + 1 "]"]
    if (NR > 2) out += 0.5 * (q + qp) * ($1 - tp)
    if (NR == 2) { h0 = h; T0 = $col["T_mean"] }
    qp = q; tp = $1; h1 = h; T1 = $col["T_mean"]
}
END {
    err = (h0 - h1) - out; if (err < 0) err = -err
    printf "heat_rod: heat lost %.4f J, through the cold end %.4f J, T_mean %.2f -> %.2f K\n", h0 - h1, out, T0, T1
    exit (err > 1e-3 * (h0 - h1) || T1 >= T0)
}' "$tmp/rod.csv" || { echo "heat_rod: FAILED"; fail=1; }

sh examples/multibody/check.sh "$dyadc" || { echo "multibody: FAILED"; fail=1; }

exit $fail
