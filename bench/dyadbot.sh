#!/bin/sh
# dyadbot.sh DIR -- compile and simulate the .dyad models of the public robot package
# JuliaComputing/DyadBotComponents.jl (DIR: a checkout, read only; nothing of it is copied
# into this repository) with the bundled library, 10 s each, and apply that package's own
# criteria (test/test_stabilization.jl) where they exist: the body tilt `plant.theta` stays
# below 0.2 rad and, over the last second, below 0.02 rad; for the cascade models the
# wheel position tracks the filtered reference within 0.02 m over the last second (they
# run 20 s, as there); YawControlledDyadBot3D runs 15 s: heading held before the step at
# 5 s (|yaw| < 0.01 over 4..5 s), position held (|x| < 0.02) and heading settled on pi/2
# (within 0.02) over the last second; AngleControlledDyadBot3D (ideal rolling wheel set)
# equals the planar AngleControlledDyadBot (theta and x within 1e-6 over 5 s).
# DyadBot3D (uncontrolled, slipping wheels; its package notes that it stalls at the start
# in Dyad) is mounted from its right wheel, whose Cardan angles are the root of the
# orientation tree, through joints whose frame_a faces the axle: the flattener turns them
# (docs/LANGUAGE.md, "Overdetermined connectors").  From its rest pose it stays at rest (an
# exact equilibrium); so it also runs tilted by 0.05 rad (both revolutes at phi = 0.05,
# rtol 1e-6: the slip curve's kinks make the step small): the body falls past the axle,
# both wheels stay on the ground (centre height = radius 0.04) and side by side (same x).
# With `elastic_contact = true` (a temporary copy) the wheels' height is a state the model
# gives no initial value: from the guess 0 they start 4 cm in the ground (10 kN) and the
# robot is thrown up; given the rest height (0.039996 m) it falls on its wheels as above.
# The package's RollingDyadBot3D leaves its output `yaw` without an equation (its
# `connect(odometry_yaw.y, yaw)` is missing, so the models using it are underdetermined);
# the run works on a temporary copy with that one connection added, and says so.
# Report only: prints one line per component.  Environment: DYADC (default build/dyadc).
set -u
dir=${1:?usage: bench/dyadbot.sh DYADBOT_CHECKOUT}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DYADC=${DYADC:-$ROOT/build/dyadc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bot"
cp "$dir"/dyad/*.dyad "$tmp/bot/"
if grep -q 'connect(odometry_yaw_rate.y, yaw_dot)' "$tmp/bot/segway_3d.dyad" &&
   ! grep -q 'connect(odometry_yaw.y, yaw)' "$tmp/bot/segway_3d.dyad"; then
    sed -i 's/^\( *\)connect(odometry_yaw_rate.y, yaw_dot).*$/&\n\1connect(odometry_yaw.y, yaw)/' "$tmp/bot/segway_3d.dyad"
    echo "(RollingDyadBot3D: the missing connect(odometry_yaw.y, yaw) added in the temporary copy)"
fi
run() { # model stop columns-option... -> $tmp/out.csv
    m=$1 stop=$2
    shift 2
    "$DYADC" run "$tmp/bot" --model "$m" --stop "$stop" --interval 0.01 --rtol 1e-8 --atol 1e-8 "$@" -o "$tmp/out.csv" \
        > /dev/null 2> "$tmp/err"
}
for m in $(sed -n 's/^component \([A-Z][A-Za-z0-9_]*\)$/\1/p' "$tmp"/bot/*.dyad); do
    stop=10
    case $m in *Cascade*DyadBot) stop=20 ;; YawControlledDyadBot3D) stop=15 ;; esac
    if ! run "$m" $stop; then
        echo "$m: FAILS: $(grep -m1 'error' "$tmp/err" | cut -c1-220)"
        continue
    fi
    awk -F, -v m="$m" -v stop=$stop '
    function absv(v) { return v < 0 ? -v : v }
    NR == 1 { # names with commas inside brackets (R[1,2]) span several fields
              n = 0; name = ""; depth = 0
              for (i = 1; i <= NF; i++) { t = $i; name = depth > 0 ? name "," t : t
                                          depth += gsub(/\[/, "", t) - gsub(/\]/, "", t); if (depth == 0) c[name] = ++n }
              th = c["plant.theta"]; x = c["plant.x"]; yaw = c["plant.yaw"]
              ref = c["firstorder1.y"] ? c["firstorder1.y"] : c["pos_ref.y"]
              if (m == "YawControlledDyadBot3D") ref = 0
              next }
    { if (!th) next
      a = absv($th); if (a > tmax) tmax = a
      if ($1 >= stop - 1) { if (a > tlast) tlast = a
                            if (ref && absv($x - $ref) > elast) elast = absv($x - $ref)
                            if (m == "YawControlledDyadBot3D") { if (absv($x) > elast) elast = absv($x)
                                                                 if (absv($yaw - 1.5707963267948966) > ylast) ylast = absv($yaw - 1.5707963267948966) } }
      if (m == "YawControlledDyadBot3D" && $1 >= 4 && $1 <= 5 && absv($yaw) > yhold) yhold = absv($yaw) }
    END {
      if (!th) { printf "%s: simulates %g s (no plant.theta to check)\n", m, stop; exit }
      yawm = m == "YawControlledDyadBot3D"
      ok = tmax < 0.2 && tlast < 0.02 && (!(ref || yawm) || elast < 0.02) && (!yawm || (yhold < 0.01 && ylast < 0.02))
      printf "%s: simulates %g s; max |theta| %.3g, last second %.3g%s%s: %s\n", m, stop, tmax, tlast,
             ref || yawm ? sprintf(", %s %.3g m", yawm ? "position" : "tracking error", elast) : "",
             yawm ? sprintf(", |yaw| before the step %.2g, heading error last second %.3g rad", yhold, ylast) : "",
             ok ? "meets the package test" : "MISSES the package test" }' "$tmp/out.csv"
done
# DyadBot3D tilted: it falls, on its wheels
if run DyadBot3D 10 --rtol 1e-6 --atol 1e-6 --initial revolute_left.phi=0.05 --initial revolute_right.phi=0.05; then
    awk -F, '
    function absv(v) { return v < 0 ? -v : v }
    NR == 1 { n = 0; name = ""; depth = 0
              for (i = 1; i <= NF; i++) { t = $i; name = depth > 0 ? name "," t : t
                                          depth += gsub(/\[/, "", t) - gsub(/\]/, "", t); if (depth == 0) c[name] = ++n }
              tip = c["body.frame_b.r_0[2]"]; yl = c["wheel_left.wheeljoint.y"]; yr = c["wheel_right.wheeljoint.y"]
              xl = c["wheel_left.x"]; xr = c["wheel_right.x"]; low = 1e9; next }
    { if ($tip < low) low = $tip
      g = absv($yl - 0.04) + absv($yr - 0.04); if (g > off) off = g
      d = absv($xl - $xr); if (d > dx) dx = d; t = $1 }
    END { ok = t > 9.99 && low < 0.04 && off < 1e-6 && dx < 1e-6
          printf "DyadBot3D tilted 0.05 rad: simulates %g s; lowest body tip %.3g m (axle at 0.04), wheels off the ground by %.1e m, apart in x by %.1e m: %s\n",
                 t, low, off, dx, ok ? "falls on its wheels" : "UNEXPECTED" }' "$tmp/out.csv"
else
    echo "DyadBot3D tilted: FAILS: $(grep -m1 'error' "$tmp/err" | cut -c1-220)"
fi
# DyadBot3D with elastic contact: thrown from the guess, at rest from the rest height
mkdir "$tmp/elastic"
cp "$tmp"/bot/*.dyad "$tmp/elastic/"
sed -i 's/structural parameter elastic_contact::Boolean = false/structural parameter elastic_contact::Boolean = true/' \
    "$tmp/elastic/segway_3d.dyad"
for y in guess 0.039996; do
    set -- --initial revolute_left.phi=0.05 --initial revolute_right.phi=0.05
    [ $y = guess ] || set -- "$@" --initial wheel_right.wheeljoint.y=$y
    if "$DYADC" run "$tmp/elastic" --model DyadBot3D --stop 10 --interval 0.01 --rtol 1e-6 --atol 1e-6 "$@" \
        --vars wheel_right.wheeljoint.y,wheel_right.wheeljoint.f_n -o "$tmp/out.csv" > /dev/null 2> "$tmp/err"; then r=runs; else r=fails; fi
    awk -F, -v y=$y -v r=$r 'NR == 2 { f0 = $3 } NR > 1 { if ($2 > top) top = $2; t = $1 }
        END { printf "DyadBot3D elastic, tilted, wheel height from %s: initial contact force %.3g N, highest wheel centre %.3g m; %s to %g s%s\n",
              y == "guess" ? "the guess" : y " m", f0, top, r, t, r == "fails" ? " (the landing)" : "" }' "$tmp/out.csv"
done
# planar / 3-D equivalence of the angle-controlled robot (package test "Planar/3D equivalence")
if run AngleControlledDyadBot 5 --vars plant.theta,plant.x && mv "$tmp/out.csv" "$tmp/planar.csv" &&
   run AngleControlledDyadBot3D 5 --vars plant.theta,plant.x; then
    paste -d, "$tmp/planar.csv" "$tmp/out.csv" | awk -F, '
    function absv(v) { return v < 0 ? -v : v }
    NR > 1 { if (absv($2 - $5) > dt) dt = absv($2 - $5); if (absv($3 - $6) > dx) dx = absv($3 - $6) }
    END { printf "AngleControlledDyadBot3D vs AngleControlledDyadBot: theta within %.2g, x within %.2g over 5 s: %s\n", dt, dx,
          dt < 1e-6 && dx < 1e-6 ? "meets the package test" : "MISSES the package test" }'
else
    echo "planar/3-D equivalence: a run failed: $(grep -m1 'error' "$tmp/err" | cut -c1-220)"
fi
