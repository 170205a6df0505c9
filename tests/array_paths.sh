#!/bin/sh
# array_paths.sh DYADC -- the array path equals the scalar path
# (docs/ARCHITECTURE.md, "Arrays"): `for` equations flatten to templates
# (FlatEq.dom), `--scalarize` flattens every iteration instead.  For
# every model of the examples, the golden and simulation tests and every
# stdlib example component, both paths must give the same structured
# System (`dyadc flatten --structure`, byte for byte: same rows, same
# order, same expressions) and the same diagnostics and exit status; the
# examples' analyses are simulated both ways and compared to 1e-12.  The
# test also checks that templates do occur (else it would compare the
# scalar path with itself).  Run from the repository root.
set -u
dyadc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
same=0

both() { # label, args...: both paths, same stdout, stderr and status
    label=$1
    shift
    "$dyadc" "$@" > "$tmp/a.out" 2> "$tmp/a.err"
    ra=$?
    "$dyadc" "$@" --scalarize > "$tmp/b.out" 2> "$tmp/b.err"
    rb=$?
    if [ $ra -ne $rb ] || ! cmp -s "$tmp/a.out" "$tmp/b.out" || ! cmp -s "$tmp/a.err" "$tmp/b.err"; then
        echo "FAIL: $label: the array and scalar paths differ (status $ra vs $rb)"
        diff "$tmp/a.out" "$tmp/b.out" | head -10
        diff "$tmp/a.err" "$tmp/b.err" | head -10
        fail=$((fail + 1))
        return
    fi
    [ $ra -eq 0 ] && same=$((same + 1))
    pass=$((pass + 1))
}

same_run() { # label, result file name, run args...: both paths' results bit for bit
    label=$1
    out=$2
    shift 2
    "$dyadc" run "$@" -o "$tmp/a.$out" > /dev/null 2>&1
    "$dyadc" run "$@" --scalarize -o "$tmp/b.$out" > /dev/null 2>&1
    if [ ! -s "$tmp/a.$out" ] || ! cmp -s "$tmp/a.$out" "$tmp/b.$out"; then
        echo "FAIL: $label: the simulations differ (or did not run)"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}

models() { # file: its top-level components and analyses (not partial)
    sed -n 's/^\(example \)\{0,1\}\(component\|analysis\) \([A-Za-z0-9_]*\).*/\2 \3/p' "$1"
}

for f in $(find examples tests/golden/flatten tests/golden/structure tests/sim -name '*.dyad' | sort); do
    models "$f" | while read -r kind name; do
        opt=--model
        [ "$kind" = analysis ] && opt=--analysis
        case "$f" in tests/golden/*) extra=--no-stdlib ;; *) extra= ;; esac
        echo "$f $opt $name $extra"
    done
done > "$tmp/list"
while read -r f opt name extra; do
    # shellcheck disable=SC2086
    both "$f:$name" flatten "$f" $opt "$name" $extra --structure
done < "$tmp/list"

# the benchmark generators' loop models, small
python3 bench/gen_loops.py rc 12 > "$tmp/rc.dyad" && both "gen_loops rc" flatten "$tmp/rc.dyad" --no-stdlib --model RcLoop --structure
# (heat3d 10: a 3-D loop item, the interior, and 2-D ones, the faces)
for n in 3 10; do
    python3 bench/gen_loops.py heat3d $n > "$tmp/heat.dyad" &&
        both "gen_loops heat3d $n" flatten "$tmp/heat.dyad" --no-stdlib --model Heat3D --structure
done

# a model of tests/arrays/loops.dyad simulated both ways: the same numbers,
# bit for bit
same_sim() { # a model of tests/arrays/loops.dyad: the CSVs bit for bit
    same_run "arrays/loops $1" csv tests/arrays/loops.dyad --no-stdlib --model "$1" --stop 2
}

# loop models whose templates survive the structure entry, and the cases
# that fall back to instances (tests/arrays/loops.dyad), simulated too:
# the same System gives the same numbers, bit for bit; the same LLVM IR
# also covers what the dump leaves out (the starting guesses of y')
for name in HeatRod MassChain RodEnds Plate Box Runs InitRuns InitSteady Pendulums; do
    both "arrays/loops $name" flatten tests/arrays/loops.dyad --no-stdlib --model "$name" --structure
    both "arrays/loops $name IR" build tests/arrays/loops.dyad --no-stdlib --model "$name" --emit-llvm -o "$tmp/x"
    same_sim "$name"
done

# unit mismatches inside `for` equations (tests/arrays/units.dyad): the
# same warnings both ways, naming the first offending element
for name in USum UState UGrid UCall; do
    both "arrays/units $name" flatten tests/arrays/units.dyad --no-stdlib --model "$name" --structure
done
"$dyadc" flatten tests/arrays/units.dyad --no-stdlib --model UCall > /dev/null 2> "$tmp/u.err"
for w in 'units.dyad:54:5: warning: unit mismatch in `2 * x[1] - t`: m + s' \
    'units.dyad:57:5: warning: unit mismatch in `sin(x[3])`: `sin` needs a dimensionless argument, not m'; do
    if grep -qF -- "$w" "$tmp/u.err"; then pass=$((pass + 1)); else echo "FAIL: arrays/units UCall: no '$w'"; fail=$((fail + 1)); fi
done

for f in $(find stdlib -path '*/Examples/*' -name '*.dyad' | sort); do
    lib=$(dirname "${f#stdlib/}" | tr / .)
    for name in $(sed -n 's/^example component \([A-Za-z0-9_]*\).*/\1/p' "$f"); do
        both "$lib.$name" flatten --model "$lib.$name" --structure
    done
done

# simulations of the examples' analyses, compared numerically
for f in $(find examples -name '*.dyad' | sort); do
    for name in $(sed -n 's/^analysis \([A-Za-z0-9_]*\).*/\1/p' "$f"); do
        "$dyadc" run "$f" --analysis "$name" -o "$tmp/a.csv" > /dev/null 2>&1
        "$dyadc" run "$f" --analysis "$name" --scalarize -o "$tmp/b.csv" > /dev/null 2>&1
        if [ ! -s "$tmp/a.csv" ] || ! awk -F, 'NR == FNR { for (i = 1; i <= NF; i++) a[FNR, i] = $i; n = FNR; next }
            { for (i = 1; i <= NF; i++) {
                  x = a[FNR, i]; y = $i
                  if (FNR == 1) { if (x != y) exit 1; continue }
                  d = x - y; if (d < 0) d = -d; s = (x < 0 ? -x : x) + 1e-300
                  if (d > 1e-12 * s && d > 1e-300) exit 1
              } m = FNR }
            END { exit m != n }' "$tmp/a.csv" "$tmp/b.csv"; then
            echo "FAIL: $f:$name: the simulations differ (or did not run)"
            fail=$((fail + 1))
        else
            pass=$((pass + 1))
        fi
    done
done

# loop items (System.loops: RcLong a line, PlateRows a plane, Cube a
# block of a 3-D grid): the same System (the dump expands them) and the
# same numbers both ways, not the same IR: the array path emits an item as
# one loop (a nest of one loop per dimension), the scalar path its rows
# one by one (or rerolled); the items do occur: their Jacobian scatter
# tables are in the IR, and the boxes' outer loops
for case in RcLong:1 PlateRows:2 Cube:3; do
    name=${case%%:*}
    both "arrays/loops $name" flatten tests/arrays/loops.dyad --no-stdlib --model "$name" --structure
    same_sim "$name"
    "$dyadc" run tests/arrays/loops.dyad --no-stdlib --model "$name" --emit-llvm --stop 0.1 -o /dev/null \
        2>/dev/null > "$tmp/ir.ll"
    outer=$(grep -c '^box[0-9]*:' "$tmp/ir.ll")
    if ! grep -q '@jac_scatter' "$tmp/ir.ll" || [ $((outer / 2)) -ne $((${case##*:} - 1)) ]; then
        echo "FAIL: arrays/loops $name: no loop item of ${case##*:} dimensions in the IR ($outer outer loops)"
        fail=$((fail + 1))
    fi
done

# assigned values of runs as loop items (System.out_loops, asg_loops;
# RcValues, RcTwins, RcMany): the same System, every column bit for bit
# both ways (CSV, and the MAT file, which stores a column equal to an earlier one
# once: the output aliases must be the scalar path's), and columns inside
# the loops read by --vars
for name in RcValues RcTwins RcMany; do
    both "arrays/loops $name" flatten tests/arrays/loops.dyad --no-stdlib --model "$name" --structure
    same_run "arrays/loops $name (CSV)" csv tests/arrays/loops.dyad --no-stdlib --model "$name" --stop 2
    same_run "arrays/loops $name (MAT)" mat tests/arrays/loops.dyad --no-stdlib --model "$name" --stop 2
done
vars='i[2],i[68],i[69],i[70],i[99],i[100],i[101],i[150],e[1],e[77],e[149],f[3],w,u'
same_run "arrays/loops RcValues --vars" csv tests/arrays/loops.dyad --no-stdlib --model RcValues --stop 2 --vars "$vars"
if [ "$(head -1 "$tmp/a.csv")" != "time,$vars" ]; then
    echo "FAIL: arrays/loops RcValues: --vars $vars: not those columns"
    fail=$((fail + 1))
fi

# templates do occur: the heat rod's and the golden arrays' `for` equations
for f in examples/heat_rod/HeatRod.dyad:HeatRod tests/golden/flatten/ComprElemMods.dyad:ComprElemMods; do
    if ! "$dyadc" flatten "${f%%:*}" --model "${f##*:}" 2>/dev/null | grep -q '^  .*for i1 in '; then
        echo "FAIL: ${f%%:*}: no template in the flat model"
        fail=$((fail + 1))
    fi
done
echo "array paths: $pass passed ($same compiled to a System), $fail failed"
[ $fail -eq 0 ] && [ $same -gt 20 ]
