#!/bin/sh
# fmusim_survey.sh FMUSIM [BUILD_DIR] -- how an independent importer, the
# Reference-FMUs fmusim (built by hand in a session, see docs/FMI.md; not
# in CI), treats our FMUs: each model exported, run by fmusim as ME (CVODE,
# tolerance 1e-10) and CS, compared column by column with dyadc run (ME:
# the tight reference; CS: the same default tolerances).  Run from the
# repository root.
FS=${1:?usage: bench/fmusim_survey.sh FMUSIM [BUILD_DIR]}; B=${2:-build}; D=$B/dyadc; I=$B/tests/fmi_import
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
while IFS='|' read -r n args stop dt ref; do
  [ -z "$n" ] && continue
  $D fmu $args -o $T/$n.fmu 2>/dev/null || { echo "$n: fmu failed"; continue; }
  $D run $args --stop $stop --interval $dt -o $T/$n.run.csv 2>/dev/null
  set -- $ref
  $D run $args --stop $stop --interval $dt --rtol $1 --atol $2 -o $T/$n.tight.csv 2>/dev/null
  vars=$(head -1 $T/$n.run.csv | tr , '\n' | tail -n +2 | sed 's/^/--output-variable /' | tr '\n' ' ')
  for kind in cs me; do
    extra=""; [ $kind = me ] && extra="--solver cvode --tolerance 1e-10"
    if $FS --interface-type $kind $extra --stop-time $stop --output-interval $dt $vars --output-file $T/$n.$kind.raw.csv $T/$n.fmu > $T/$n.$kind.log 2>&1; then
      # fmusim writes quoted names and repeats rows at events: keep the last row per time
      sed '1s/"//g' $T/$n.$kind.raw.csv | awk -F, 'NR==1{print;next}{t=$1; if (t!=pt && NR>2) print prev; prev=$0; pt=t} END{print prev}' > $T/$n.$kind.csv
      refcsv=$T/$n.run.csv; [ $kind = me ] && refcsv=$T/$n.tight.csv
      echo "$n $kind: $($I compare $T/$n.$kind.csv $refcsv 1 2>&1 | tail -1)"
    else
      echo "$n $kind: fmusim exit $? $(tail -2 $T/$n.$kind.log | tr '\n' ' ')"
    fi
  done
done <<'LIST'
msd|tests/sim/msd.dyad --no-stdlib --model MassSpringDamper|1|0.01|1e-10 1e-12
rc|tests/sim/rc.dyad --no-stdlib --model RC|1|0.01|1e-10 1e-12
springinit|tests/sim/e2e/springinit.dyad --no-stdlib --model SpringInit|1|0.01|1e-10 1e-12
rectifier|tests/sim/e2e/rectifier.dyad --no-stdlib --model Rectifier|0.04|0.0005|1e-8 1e-10
pendulum|tests/sim/index/pendulum.dyad --no-stdlib --model Pendulum|1|0.01|1e-10 1e-12
twocaps|tests/sim/index/twocaps.dyad --no-stdlib --model TwoCaps|1|0.01|1e-10 1e-12
gear|tests/sim/index/gear.dyad --no-stdlib --model Gear|1|0.01|1e-10 1e-12
rc_circuit|examples/rc_circuit/RCCircuit.dyad --model RCCircuit|2|0.01|1e-10 1e-12
spring_chain|examples/spring_chain/SpringChain.dyad --model SpringChain|2|0.01|1e-10 1e-12
heat_rod|examples/heat_rod/HeatRod.dyad --model HeatRod|5|0.05|1e-10 1e-12
clocks|tests/golden/structure/Clocks.dyad --no-stdlib --model Clocks|1|0.01|1e-10 1e-12
rlc|--model ElectricalComponents.Examples.RLC|10|0.05|1e-10 1e-12
LIST
