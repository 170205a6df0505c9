#!/bin/sh
# multibody_seed.sh DYADC -- the seed component, verbatim, inside a mechanism.
#
# The project's seed `PrismaticWithLengthConstraint.dyad` (in the project corpus beside the
# repository, ../shared/corpus/MultibodyComponents/, or ../../shared/... from a worktree;
# never copied into the repository; DYADC_SEED names another copy) replaces our own PrismaticWithLengthConstraint in a copy
# of the bundled library.  Then:
#   1. `dyadc check` accepts the copied MultibodyComponents (the seed compiles verbatim);
#   2. the JointRRP slider-crank (examples/multibody/SliderCrank.dyad, whose prismatic
#      joint is that component) runs with the seed and with our version, and every
#      variable of the two trajectories agrees to 1e-8;
#   3. with the seed, the piston follows the closed-form crank-slider kinematics of its
#      assembly branch (x = r cos(phi) +- sqrt(l^2 - r^2 sin(phi)^2)) to 1e-9;
# each on both branches: chosen at initialization from s_guess (SliderCrank,
# SliderCrankMirrored) and forced by positive_branch against the guess.
# Where the seed file is not present (CI machines), the test reports itself skipped
# (exit 77, ctest shows it as skipped) and says why; examples/multibody/check.sh
# (ctest `examples`) runs the same four slider-cranks with our own version everywhere,
# against the closed form, energy and an independent RK4 integration.  Run from anywhere.
set -u
dyadc=$1
root=$(cd "$(dirname "$0")/.." && pwd)
rel=shared/corpus/MultibodyComponents/PrismaticWithLengthConstraint.dyad
seed=${DYADC_SEED:-$root/../$rel}
[ -n "${DYADC_SEED:-}" ] || [ -f "$seed" ] || seed=$root/../../$rel   # a git worktree one level deeper
if [ ! -f "$seed" ]; then
    echo "skipped: the seed file $seed is not on this machine (it is not part of the repository; set DYADC_SEED to a copy)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/stdlib" "$tmp/stdlib"
cp "$seed" "$tmp/stdlib/MultibodyComponents/PrismaticWithLengthConstraint.dyad"
libs=""
for d in "$tmp"/stdlib/*/; do libs="$libs -L $d"; done
fail=0

# shellcheck disable=SC2086
if ! "$dyadc" check --no-stdlib $libs > "$tmp/check.out" 2>&1; then
    echo "FAIL: dyadc check of the library with the seed component"; tail -20 "$tmp/check.out"; fail=1
fi

opts="--stop 10 --interval 0.05 --rtol 1e-8 --atol 1e-8"
for v in "SliderCrank 1" "SliderCrankForcedPositive 1" "SliderCrankMirrored -1" "SliderCrankForcedNegative -1"; do
    set -- $v
    m=$1 sgn=$2
    # shellcheck disable=SC2086
    "$dyadc" run "$root/examples/multibody/SliderCrank.dyad" --model $m --no-stdlib $libs $opts --vars all -o "$tmp/seed.csv" ||
        { echo "FAIL: $m with the seed component"; fail=1; continue; }
    # shellcheck disable=SC2086
    "$dyadc" run "$root/examples/multibody/SliderCrank.dyad" --model $m $opts --vars all -o "$tmp/own.csv" ||
        { echo "FAIL: $m with our component"; fail=1; continue; }
    # every column of both (--vars all): the same names, the same values
    paste -d, "$tmp/seed.csv" "$tmp/own.csv" | awk -F, -v m=$m '
    NR == 1 { if (NF % 2) { print m ": the two runs have different columns"; exit 1 } next }
    { n = NF / 2; for (i = 1; i <= n; i++) { d = $i - $(i + n); if (d < 0) d = -d; if (d > worst) worst = d } rows++ }
    END { printf "%s: seed and own trajectories over %d rows x %d columns agree to %.1e\n", m, rows, n, worst; exit !(rows > 100 && worst <= 1e-8) }' ||
        { echo "FAIL: $m: the trajectories differ"; fail=1; }
    # shellcheck disable=SC2086
    "$dyadc" run "$root/examples/multibody/SliderCrank.dyad" --model $m --no-stdlib $libs $opts \
        --vars 'crank_joint.phi,piston.frame_a.r_0[1]' -o "$tmp/kin.csv" &&
    awk -F, -v m=$m -v sgn=$sgn '
    NR > 1 { s = sin($2); e = $3 - (0.3 * cos($2) + sgn * sqrt(0.64 - 0.09 * s * s)); if (e < 0) e = -e; if (e > worst) worst = e; rows++ }
    END { printf "%s: with the seed, the piston is off the closed-form kinematics by %.1e m\n", m, worst; exit !(rows > 100 && worst <= 1e-9) }' "$tmp/kin.csv" ||
        { echo "FAIL: $m: the seed run misses the closed-form kinematics"; fail=1; }
done
exit $fail
