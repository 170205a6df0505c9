#!/bin/sh
# fmi_examples.sh DYADC FMI_IMPORT -- export every example as an FMU (ME and
# CS in one) and run it with our own importer (tests/fmi/fmi_import.c):
#   - modelDescription.xml well-formed (xmllint) and consistent (the
#     importer's checks: unique value references, ModelStructure indices);
#   - the binary depends on libc and libm only (not under the sanitizers,
#     which add their runtimes);
#   - CS (fmi2DoStep on the output grid) vs `dyadc run` at the same
#     tolerances (the rectifier at the default ones): relative difference
#     <= 1e-6;
#   - ME with the importer's own RK4 (fixed step) and Dormand-Prince
#     (variable step) vs `dyadc run --rtol 1e-10 --atol 1e-12` (the
#     rectifier, whose events IDA cannot pass that tightly: 1e-8, 1e-10):
#     within the integrators' error, <= 1e-6 relative;
#   relative: per column, max |a - b| / max(max |b|, floor), floor 1e-8.
#   The ME comparisons of four multibody examples take floor 1e-2: columns that are
#   0 in exact arithmetic (a rotation-matrix entry of the Gyroscope, 1e-9 of
#   rounding against entries of size 1; a torque of the SliderCrank) or
#   nearly (an angular acceleration of the SphericalPendulum, a position of
#   the FourBarLoop's rocker: within about 1e-8 of 0) carry the integrators'
#   absolute error or rounding on the scale of the model's other values;
#   below 1e-2 they compare absolutely, to 1e-8.
#   - wrong call sequences return fmi2Error with a logged message;
#   - FMU state: ME reruns its second half, CS rolls back three steps
#     (fmi_import), the same bits.
# rclong (tests/arrays/loops.dyad RcLong) is a loop model: its residual rows
# are loop items in the FMU as in the executable (codegen/cg_loop.c), and
# its ModelStructure dependencies are read from them (fmi/depend.c).
# Run from the repository root.  Exit status 1 if a check fails.
set -u
dyadc=$1
imp=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# name | dyadc arguments | stop | output interval | RK4 step | Dormand-Prince
# tolerance | tolerances of the reference run (rtol atol); `-`: CS only | CS
# tolerance (`-`: the model's) | inputs NAME=VALUE,... (constants: fmi2SetReal in the
# importer, a one-row --input table for dyadc run) | --kind of the export (empty:
# both) | floor of the ME comparisons (empty: 1e-8; see below)
models='
msd|tests/sim/msd.dyad --no-stdlib --model MassSpringDamper|1|0.01|1e-3|1e-10|1e-10 1e-12
rc|tests/sim/rc.dyad --no-stdlib --model RC|1|0.01|1e-3|1e-10|1e-10 1e-12
springinit|tests/sim/e2e/springinit.dyad --no-stdlib --model SpringInit|1|0.01|1e-3|1e-10|1e-10 1e-12
rectifier|tests/sim/e2e/rectifier.dyad --no-stdlib --model Rectifier|0.04|0.0005|1e-4|1e-10|1e-8 1e-10|-
pendulum|tests/sim/index/pendulum.dyad --no-stdlib --model Pendulum|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8
twocaps|tests/sim/index/twocaps.dyad --no-stdlib --model TwoCaps|1|0.01|1e-3|1e-10|1e-10 1e-12
gear|tests/sim/index/gear.dyad --no-stdlib --model Gear|1|0.01|1e-3|1e-10|1e-10 1e-12
rc_circuit|examples/rc_circuit/RCCircuit.dyad --model RCCircuit|2|0.01|1e-3|1e-10|1e-10 1e-12
spring_chain|examples/spring_chain/SpringChain.dyad --model SpringChain|2|0.01|1e-3|1e-10|1e-10 1e-12
heat_rod|examples/heat_rod/HeatRod.dyad --model HeatRod|5|0.05|2e-3|1e-10|1e-10 1e-12
clocks|tests/golden/structure/Clocks.dyad --no-stdlib --model Clocks|1|0.01|1e-3|1e-10|1e-10 1e-12
inputfilter|tests/sim/e2e/inputfilter.dyad --no-stdlib --model InputFilter|2|0.01|1e-3|1e-10|1e-10 1e-12|-|u=1
calcparams|tests/fmi/calcparams.dyad --no-stdlib --model CalcParams|1|0.01|1e-3|1e-10|1e-10 1e-12
firsttick|tests/sim/clocks/clocked.dyad --model FirstTick|2.5|0.01|1e-3|1e-10|1e-10 1e-12
zcinterval|tests/sim/clocks/clocked.dyad --model CrossingIntervals|2.5|0.01|1e-3|1e-10|1e-10 1e-12
spherical_sets|tests/sim/mech/spherical.dyad --no-stdlib --model SphericalPendulum|10|0.01|1e-3|1e-10|1e-10 1e-12|-
mb_pendulum|examples/multibody/Pendulum.dyad --model Pendulum|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8
mb_freebody|examples/multibody/FreeBody.dyad --model FreeBody|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8
mb_double|examples/multibody/DoublePendulum.dyad --model DoublePendulum|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8
mb_spherical|examples/multibody/SphericalPendulum.dyad --model SphericalPendulum|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8|||1e-2
mb_gyroscope|examples/multibody/Gyroscope.dyad --model Gyroscope|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8|||1e-2
mb_chain|examples/multibody/Chain.dyad --model Chain5|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8
mb_springmass|examples/multibody/SpringMass.dyad --model SpringMass|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8
mb_slidercrank|examples/multibody/SliderCrank.dyad --model SliderCrank|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8|||1e-2
mb_fourbar|examples/multibody/FourBar.dyad --model FourBarLoop|1|0.01|1e-3|1e-10|1e-10 1e-12|1e-8|||1e-2
rclong|tests/arrays/loops.dyad --no-stdlib --model RcLong|1|0.01|1e-3|1e-10|1e-10 1e-12
'

check() {   # name what command...
    n=$1; what=$2; shift 2
    if ! "$@" > "$tmp/$n.$what.log" 2>&1; then
        echo "$n: $what FAILED"; cat "$tmp/$n.$what.log"; fail=1; return 1
    fi
    grep -h "compare:\|dependencies\|restored" "$tmp/$n.$what.log" | sed "s/^/$n: $what: /"
    return 0
}

IFS='
'
for line in $models; do
    [ -z "$line" ] && continue
    IFS='|' read -r n args stop dt h tol ref cstol inputs kind floor <<EOF
$line
EOF
    IFS=' '
    fmu="$tmp/$n.fmu"
    # shellcheck disable=SC2086
    kindarg=""
    [ -n "${kind:-}" ] && kindarg="--kind $kind"
    # shellcheck disable=SC2086
    if ! $dyadc fmu $args $kindarg -o "$fmu" 2> "$tmp/$n.err"; then
        echo "$n: dyadc fmu FAILED"; cat "$tmp/$n.err"; fail=1; IFS='
'; continue
    fi
    cstol=${cstol:--}
    export FMI_INPUTS="${inputs:-}"
    if [ -n "${inputs:-}" ]; then       # a table of one row: held constant
        echo "$inputs" | awk -F, '{ h = "time"; v = "0"; for (i = 1; i <= NF; i++) { split($i, kv, "="); h = h "," kv[1]; v = v "," kv[2] }; print h; print v }' > "$tmp/$n.input.csv"
        runin="--input $tmp/$n.input.csv"
    else
        runin=""
    fi
    runtol=""
    [ "$cstol" != - ] && runtol="--rtol $cstol --atol $cstol"   # the FMU: atol = min(tol, 1e-8)
    # shellcheck disable=SC2086
    $dyadc run $args $runin --stop "$stop" --interval "$dt" $runtol -o "$tmp/$n.run.csv" 2> /dev/null
    if [ "$ref" != - ]; then
        set -- $ref
        # shellcheck disable=SC2086
        $dyadc run $args $runin --stop "$stop" --interval "$dt" --rtol "$1" --atol "$2" -o "$tmp/$n.tight.csv" 2> /dev/null
    fi
    check "$n" description "$imp" "$fmu" check
    mkdir -p "$tmp/$n.x"
    "$imp" "$fmu" unpack "$tmp/$n.x"
    if command -v xmllint > /dev/null && [ -f "$tmp/$n.x/modelDescription.xml" ]; then
        check "$n" xmllint xmllint --noout "$tmp/$n.x/modelDescription.xml"
    fi
    so="$tmp/$n.x/$n.so"
    if [ -z "${DYADC_SANITIZE:-}" ] && [ -f "$so" ]; then
        deps=$(ldd "$so" | awk '{print $1}' | grep -v -e '^linux-vdso' -e '^/lib64/ld-linux' -e '^libc\.so' -e '^libm\.so' || true)
        if [ -n "$deps" ]; then echo "$n: the binary needs more than libc and libm: $deps"; fail=1; fi
    fi
    if [ "$cstol" = - ]; then cstol=0; fi
    check "$n" cs "$imp" "$fmu" cs "$stop" "$dt" "$tmp/$n.cs.csv" "$cstol" &&
        check "$n" cs-vs-run "$imp" compare "$tmp/$n.cs.csv" "$tmp/$n.run.csv" 1e-6
    if [ "$ref" != - ]; then
        floor=${floor:-1e-8}
        check "$n" me-rk4 "$imp" "$fmu" me-rk4 "$stop" "$dt" "$tmp/$n.rk4.csv" "$h" &&
            check "$n" rk4-vs-run "$imp" compare "$tmp/$n.rk4.csv" "$tmp/$n.tight.csv" 1e-6 "$floor"
        check "$n" me-dopri "$imp" "$fmu" me-dopri "$stop" "$dt" "$tmp/$n.dopri.csv" "$tol" &&
            check "$n" dopri-vs-run "$imp" compare "$tmp/$n.dopri.csv" "$tmp/$n.tight.csv" 1e-6 "$floor"
    fi
    check "$n" misuse "$imp" "$fmu" misuse
    IFS='
'
done
exit $fail
