#!/bin/sh
# check.sh [DYADC] -- simulate the 3-D multibody examples and check each against an
# independent reference (closed forms, conservation laws, an independent integration):
#   Pendulum           period = exact large-amplitude period (arithmetic-geometric mean)
#   DoublePendulum     energy conserved to 1e-6 (relative) over 10 s at rtol 1e-9
#   SphericalPendulum  conical motion: constant height, azimuth rate sqrt(g / (l cos theta))
#   FreeBody           angular momentum (world frame) and rotational energy conserved
#   Gyroscope          precession rate m g l / (I spin), axis stays horizontal
#   Chain5, Chain20,   swinging chains of five, twenty and a hundred links conserve their
#   Chain100           energy (the hundred over 10 s)
#   SpringMass         a body on a Spring force element oscillates at sqrt(c/m) (closed form)
#   RollingWheelLean   a leaning wheel rolling without slip: energy conserved, centre at the
#                      height its spin axis gives, material contact point at rest
#   RollingWheelWobble a fast upright wheel nudged: lean oscillates at the linearized rate
#   SlippingWheelSpinUp  a spinning wheel set down: an independent RK4 integration of the
#                      reduced equations with the slip curve; angular momentum about the
#                      contact line conserved; ends rolling at the closed-form speed
#   DoublePendulumTurned  a chain mounted from the other end of every element moves as
#                      the same chain mounted the usual way (DoublePendulumUsual), 1e-8
#   SliderCrank        piston = closed-form crank-slider kinematics; energy conserved;
#                      crank angles equal an independent RK4 integration; both assembly
#                      branches, chosen from s_guess and forced by positive_branch
# and in every run every frame's rotation matrix is orthonormal to 1e-9.
# Run from the repository root.  Exit status 1 if a check fails.
set -u
dyadc=${1:-build/dyadc}
dir=examples/multibody
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# col["name"] = data column, for a header whose names contain commas inside
# brackets (`frame.R[1,2]`): fragments are joined until the brackets balance.
cat > "$tmp/cols.awk" <<'EOF'
function header(   i, c, name, depth, t) {
    name = ""; depth = 0; c = 0
    for (i = 1; i <= NF; i++) {
        t = $i
        name = depth > 0 ? name "," t : t
        depth += gsub(/\[/, "", t) - gsub(/\]/, "", t)
        if (depth == 0) { col[name] = ++c; colname[c] = name }
    }
    ncol = c
}
function absv(x) { return x < 0 ? -x : x }
# kinetic plus potential energy (gravity g along -y) of body p: mass m, inertia I (isotropic)
function body_energy(p, m, I, g,   i, e) {
    e = m * g * $col[p ".frame_a.r_0[2]"]
    for (i = 1; i <= 3; i++) e += 0.5 * m * $col[p ".v_0[" i "]"] ^ 2 + 0.5 * I * $col[p ".w_a[" i "]"] ^ 2
    return e
}
# largest |R R' - I| over every `*.R[1,1]` .. `*.R[3,3]` of the row
function orth(   c, p, i, j, k, s, o) {
    o = 0
    for (c = 1; c <= ncol; c++) {
        if (colname[c] !~ /\.R\[1,1\]$/) continue
        p = substr(colname[c], 1, length(colname[c]) - 5)
        for (i = 1; i <= 3; i++) for (j = 1; j <= 3; j++) {
            s = -(i == j)
            for (k = 1; k <= 3; k++) s += $col[p "[" i "," k "]"] * $col[p "[" j "," k "]"]
            if (absv(s) > o) o = absv(s)
        }
    }
    return o
}
EOF

run() { # model file out [options]
    m=$1 f=$2 out=$3
    shift 3
    # every column (--vars all): the checks read connector fields (frame_a.r_0)
    if ! "$dyadc" run "$dir/$f" --model "$m" --vars all -o "$out" "$@" 2> "$tmp/err"; then
        echo "$m: FAILED to simulate"; sed 5q "$tmp/err"; fail=1; return 1
    fi
}

check() { # name awk-program csv
    if ! awk -F, -f "$tmp/cols.awk" -f "$2" "$3"; then echo "$1: FAILED"; fail=1; fi
}

# ---- Pendulum: period from the interpolated sign changes of the angular velocity
cat > "$tmp/pend.awk" <<'EOF'
NR == 1 { header(); next }
{
    t = $1; w = $col["joint.w"]
    if (NR > 2 && wp > 0 && w <= 0) { tc = tp + (t - tp) * wp / (wp - w); if (n++) per = tc - t0; else t0 = tc }
    if (NR > 2 && wp < 0 && w >= 0) { tc = tp + (t - tp) * wp / (wp - w); if (n++) per = tc - t0; else t0 = tc }
    tp = t; wp = w
    x = $col["mass.frame_a.r_0[1]"]; y = $col["mass.frame_a.r_0[2]"]; z = $col["mass.frame_a.r_0[3]"]
    d = absv(sqrt(x * x + y * y) - 1) + absv(z); if (d > dr) dr = d
    o = orth(); if (o > wo) wo = o
}
END {
    a = 1; b = sqrt(0.5)   # agm(1, cos(theta0 / 2)), theta0 = pi/2
    for (i = 0; i < 30; i++) { an = (a + b) / 2; b = sqrt(a * b); a = an }
    T = 2 * 3.141592653589793 * sqrt(1 / 9.81) / a
    T1 = 2 * per / (n - 1)          # (n - 1) half periods between the first and last crossing
    printf "Pendulum: period %.7f s (exact %.7f), off the circle %.1e, orthonormality %.1e\n", T1, T, dr, wo
    exit !(absv(T1 - T) < 1e-5 * T && dr < 1e-9 && wo < 1e-9)
}
EOF
run Pendulum Pendulum.dyad "$tmp/pend.csv" --stop 5 --interval 0.001 --rtol 1e-10 --atol 1e-10 &&
    check Pendulum "$tmp/pend.awk" "$tmp/pend.csv"

# ---- DoublePendulum: mechanical energy
cat > "$tmp/dp.awk" <<'EOF'
NR == 1 { header(); next }
{
    e = body_energy("body1", 1, 0.01, 9.81) + body_energy("body2", 1, 0.01, 9.81)
    if (NR == 2) e0 = e
    d = absv(e - e0) / absv(e0); if (d > dmax) dmax = d
    o = orth(); if (o > wo) wo = o
}
END {
    printf "DoublePendulum: energy %.6f J, relative drift %.1e over 10 s, orthonormality %.1e\n", e0, dmax, wo
    exit !(dmax < 1e-6 && wo < 1e-9)
}
EOF
run DoublePendulum DoublePendulum.dyad "$tmp/dp.csv" --stop 10 --interval 0.01 --rtol 1e-9 --atol 1e-9 &&
    check DoublePendulum "$tmp/dp.awk" "$tmp/dp.csv"

# ---- SphericalPendulum: conical motion
cat > "$tmp/sph.awk" <<'EOF'
NR == 1 { header(); next }
{
    for (i = 1; i <= 3; i++) for (j = 1; j <= 3; j++) R[i, j] = $col["bob.frame_a.R[" i "," j "]"]
    x = -R[2, 1]; y = -R[2, 2]; z = -R[2, 3]     # centre of mass = R' [0, -1, 0]
    h = absv(y + cos(0.5)); if (h > hmax) hmax = h
    az = atan2(-z, x)
    if (NR > 2) { d = az - azp; if (d > 3.14159) d -= 6.283185307179586; if (d < -3.14159) d += 6.283185307179586; acc += d }
    azp = az; t = $1
    o = orth(); if (o > wo) wo = o
}
END {
    W = sqrt(9.81 / cos(0.5))
    printf "SphericalPendulum: height error %.1e m, azimuth rate %.7f rad/s (theory %.7f), orthonormality %.1e\n", hmax, acc / t, W, wo
    exit !(hmax < 1e-6 && absv(acc / t - W) < 1e-5 * W && wo < 1e-9)
}
EOF
run SphericalPendulum SphericalPendulum.dyad "$tmp/sph.csv" --stop 5 --interval 0.01 --rtol 1e-10 --atol 1e-10 &&
    check SphericalPendulum "$tmp/sph.awk" "$tmp/sph.csv"

# ---- FreeBody: angular momentum and energy
cat > "$tmp/free.awk" <<'EOF'
NR == 1 { header(); next }
{
    I[1] = 0.1; I[2] = 0.2; I[3] = 0.3; k = 0
    for (i = 1; i <= 3; i++) { w[i] = $col["body.w_a[" i "]"]; k += 0.5 * I[i] * w[i] * w[i] }
    for (j = 1; j <= 3; j++) { L[j] = 0; for (i = 1; i <= 3; i++) L[j] += $col["body.frame_a.R[" i "," j "]"] * I[i] * w[i] }
    if (NR == 2) { for (j = 1; j <= 3; j++) L0[j] = L[j]; k0 = k }
    d = sqrt((L[1] - L0[1]) ^ 2 + (L[2] - L0[2]) ^ 2 + (L[3] - L0[3]) ^ 2); if (d > dl) dl = d
    if (absv(k - k0) > dk) dk = absv(k - k0)
    dx = absv($col["body.r_0[1]"] - 0.1 * $1); if (dx > dxm) dxm = dx
    o = orth(); if (o > wo) wo = o
}
END {
    printf "FreeBody: L = (%.4f, %.4f, %.4f) N m s, drift %.1e; energy %.4f J, drift %.1e; x error %.1e; orthonormality %.1e\n", L0[1], L0[2], L0[3], dl, k0, dk, dxm, wo
    exit !(absv(L0[1] - 0.1) + absv(L0[2] - 0.4) + absv(L0[3] - 0.15) < 1e-12 && dl < 1e-6 && dk < 1e-6 && dxm < 1e-9 && wo < 1e-9)
}
EOF
run FreeBody FreeBody.dyad "$tmp/free.csv" --stop 10 --interval 0.01 --rtol 1e-9 --atol 1e-9 &&
    check FreeBody "$tmp/free.awk" "$tmp/free.csv"

# ---- Gyroscope: precession
cat > "$tmp/gyro.awk" <<'EOF'
NR == 1 { header(); next }
{
    r11 = $col["top.frame_a.R[1,1]"]; r12 = $col["top.frame_a.R[1,2]"]; r13 = $col["top.frame_a.R[1,3]"]
    psi = atan2(-r13, r11)
    if (NR > 2) { d = psi - pp; if (d > 3.14159) d -= 6.283185307179586; if (d < -3.14159) d += 6.283185307179586; acc += d }
    pp = psi
    e = absv(acc - 1.962 * $1); if (e > emax) emax = e
    if (absv(r12) > tilt) tilt = absv(r12)
    o = orth(); if (o > wo) wo = o
}
END {
    printf "Gyroscope: azimuth error %.1e rad over 5 s (rate 1.962 rad/s), axis tilt %.1e, orthonormality %.1e\n", emax, tilt, wo
    exit !(emax < 1e-4 && tilt < 1e-5 && wo < 1e-9)
}
EOF
run Gyroscope Gyroscope.dyad "$tmp/gyro.csv" --stop 5 --interval 0.01 --rtol 1e-9 --atol 1e-9 &&
    check Gyroscope "$tmp/gyro.awk" "$tmp/gyro.csv"

# ---- Chain5, Chain20, Chain100: the energy of a swinging chain of n links (from 17 links on
# the structure phase keeps some rotation matrices as unknowns; bench/multibody_chain.sh
# times the hundred links' compile)
chain() { # model links stop interval tolerance max-drift-J
    cat > "$tmp/$1.awk" <<EOF
NR == 1 { header(); next }
{
    e = 0
    for (b = 1; b <= $2; b++) e += body_energy("bodies[" b "]", 0.1, 1e-4, 9.81)
    if (NR == 2) e0 = e
    if (absv(e - e0) > de) de = absv(e - e0)
    o = orth(); if (o > wo) wo = o
}
END {
    printf "$1: energy %.6f J, drift %.1e J over $3 s, orthonormality %.1e\\n", e0, de, wo
    exit !(de < $6 && wo < 1e-9)
}
EOF
    run "$1" Chain.dyad "$tmp/$1.csv" --stop "$3" --interval "$4" --rtol "$5" --atol "$5" &&
        check "$1" "$tmp/$1.awk" "$tmp/$1.csv"
}
chain Chain5 5 10 0.05 1e-9 1e-7
chain Chain20 20 5 0.05 1e-8 1e-7
chain Chain100 100 10 0.1 1e-8 1e-6

# ---- SpringMass: harmonic motion on a spring force element
cat > "$tmp/spring.awk" <<'EOF'
NR == 1 { header(); next }
{
    ye = -(0.5 + 9.81 / 100)
    d = absv($col["body.r_0[2]"] - (ye + (-1 - ye) * cos(10 * $1))) + absv($col["body.r_0[1]"]) + absv($col["body.r_0[3]"])
    if (d > dmax) dmax = d
    o = orth(); if (o > wo) wo = o
}
END {
    printf "SpringMass: off the closed form by %.1e m over 5 s, orthonormality %.1e\n", dmax, wo
    exit !(dmax < 1e-6 && wo < 1e-9)
}
EOF
run SpringMass SpringMass.dyad "$tmp/spring.csv" --stop 5 --interval 0.01 --rtol 1e-9 --atol 1e-9 &&
    check SpringMass "$tmp/spring.awk" "$tmp/spring.csv"

# ---- SliderCrank: kinematics, energy, reference angles
cat > "$tmp/sc.awk" <<'EOF'
NR == 1 { header(); next }
{
    phi = $col["crank_joint.phi"]; s = sin(phi)
    xp = 0.3 * cos(phi) + sgn * sqrt(0.64 - 0.09 * s * s)
    e = absv($col["piston.frame_a.r_0[1]"] - xp); if (e > kin) kin = e
    en = 0.5 * 0.1 * $col["crank_joint.w"] ^ 2 + 0.5 * 3 * $col["piston.v_0[1]"] ^ 2
    if (NR == 2) e0 = en
    if (absv(en - e0) > de) de = absv(en - e0)
    if (sgn > 0) for (k in ref) if (absv($1 - k) < 1e-9 && absv(phi - ref[k]) > dref) dref = absv(phi - ref[k])
    o = orth(); if (o > wo) wo = o
}
BEGIN {
    ref[0.5] = -0.8943837; ref[1] = -1.5242339; ref[2] = -3.4042625; ref[3] = -5.0253718
    ref[5] = -8.0933513; ref[10] = -16.8149953
}
END {
    refs = sgn > 0 ? sprintf("reference angles off by %.1e", dref) : "mirrored branch"
    printf "%s: kinematics error %.1e m, energy %.4f J (drift %.1e), %s, orthonormality %.1e\n", name, kin, e0, de, refs, wo
    exit !(kin < 1e-9 && absv(e0 - 0.3125) < 1e-12 && de < 1e-6 && dref < 2e-6 && wo < 1e-9)
}
EOF
run SliderCrank SliderCrank.dyad "$tmp/sc.csv" --stop 10 --interval 0.01 --rtol 1e-8 --atol 1e-8 &&
    awk -F, -v sgn=1 -v name=SliderCrank -f "$tmp/cols.awk" -f "$tmp/sc.awk" "$tmp/sc.csv" || { echo "SliderCrank: FAILED"; fail=1; }
run SliderCrankSSP SliderCrank.dyad "$tmp/scs.csv" --stop 10 --interval 0.01 --rtol 1e-8 --atol 1e-8 &&
    awk -F, -v sgn=1 -v name=SliderCrankSSP -f "$tmp/cols.awk" -f "$tmp/sc.awk" "$tmp/scs.csv" ||
    { echo "SliderCrankSSP: FAILED"; fail=1; }
# the two branches: chosen at initialization from s_guess, or forced by positive_branch
# (the mirrored one has no RK4 reference angles: kinematics of its own branch and energy)
for v in "SliderCrankForcedPositive 1" "SliderCrankMirrored -1" "SliderCrankForcedNegative -1"; do
    set -- $v
    run "$1" SliderCrank.dyad "$tmp/scb.csv" --stop 10 --interval 0.01 --rtol 1e-8 --atol 1e-8 &&
        awk -F, -v sgn="$2" -v name="$1" -f "$tmp/cols.awk" -f "$tmp/sc.awk" "$tmp/scb.csv" ||
        { echo "$1: FAILED"; fail=1; }
done

# ---- RollingWheelLean: energy, contact geometry, no slip
cat > "$tmp/roll.awk" <<'EOF'
NR == 1 { header(); next }
{
    for (i = 1; i <= 3; i++) { v[i] = $col["wheel.body.v_0[" i "]"]; w[i] = $col["wheel.body.w_a[" i "]"]
                               for (j = 1; j <= 3; j++) R[i, j] = $col["wheel.frame_a.R[" i "," j "]"] }
    e = 2 * 9.80665 * $col["wheel.frame_a.r_0[2]"] + (v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2)
    e += 0.5 * (0.045 * w[1] ^ 2 + 0.045 * w[2] ^ 2 + 0.09 * w[3] ^ 2)
    if (NR == 2) e0 = e
    d = absv(e - e0) / e0; if (d > de) de = d
    # spin axis a = R' e_z (world); the rim's lowest point lies 0.3 along
    # d = -(e_y - a2 a) / |e_y - a2 a| from the centre
    a1 = R[3, 1]; a2 = R[3, 2]; a3 = R[3, 3]; n = sqrt(1 - a2 * a2)
    h = absv($col["wheel.frame_a.r_0[2]"] - 0.3 * n); if (h > dh) dh = h
    d1 = a2 * a1 / n; d2 = -(1 - a2 * a2) / n; d3 = a2 * a3 / n
    # world angular velocity R' w_a; velocity of the material contact point v + W x (0.3 d)
    for (j = 1; j <= 3; j++) { W[j] = 0; for (i = 1; i <= 3; i++) W[j] += R[i, j] * w[i] }
    c1 = v[1] + 0.3 * (W[2] * d3 - W[3] * d2); c2 = v[2] + 0.3 * (W[3] * d1 - W[1] * d3); c3 = v[3] + 0.3 * (W[1] * d2 - W[2] * d1)
    sl = sqrt(c1 * c1 + c2 * c2 + c3 * c3); if (sl > dsl) dsl = sl
    o = orth(); if (o > wo) wo = o
}
END {
    printf "RollingWheelLean: energy %.6f J, relative drift %.1e over 10 s, centre height error %.1e m, contact point speed %.1e m/s, orthonormality %.1e\n", e0, de, dh, dsl, wo
    exit !(de < 1e-6 && dh < 1e-9 && dsl < 1e-6 && wo < 1e-9)
}
EOF
run RollingWheelLean Wheels.dyad "$tmp/roll.csv" --stop 10 --interval 0.01 --rtol 1e-9 --atol 1e-9 &&
    check RollingWheelLean "$tmp/roll.awk" "$tmp/roll.csv"

# ---- RollingWheelWobble: lean oscillation of a fast rolling wheel
cat > "$tmp/wob.awk" <<'EOF'
NR == 1 { header(); next }
{
    w = $col["wheel.der_angles[2]"]
    if (NR > 2 && wp > 0 && w <= 0) { tc = tp + ($1 - tp) * wp / (wp - w); if (n++) t1 = tc; else t0 = tc }
    tp = $1; wp = w
    if (absv($col["wheel.angles[2]"]) > amax) amax = absv($col["wheel.angles[2]"])
    o = orth(); if (o > wo) wo = o
}
END {
    I3 = 0.09; I1 = 0.045; m = 2; a = 0.3; s = 10
    T = 2 * 3.141592653589793 / sqrt((I3 * (I3 + m * a * a) * s * s / I1 - m * 9.80665 * a) / (I1 + m * a * a))
    T1 = (t1 - t0) / (n - 1)
    printf "RollingWheelWobble: lean period %.7f s (linearized theory %.7f), amplitude %.1e rad, orthonormality %.1e\n", T1, T, amax, wo
    exit !(n > 5 && absv(T1 - T) < 1e-5 * T && amax < 1e-3 && wo < 1e-9)
}
EOF
run RollingWheelWobble Wheels.dyad "$tmp/wob.csv" --stop 5 --interval 0.001 --rtol 1e-10 --atol 1e-10 &&
    check RollingWheelWobble "$tmp/wob.awk" "$tmp/wob.csv"

# ---- SlippingWheelSpinUp: RK4 (h = 1e-5) of the reduced equations of the upright wheel
cat > "$tmp/slip.awk" <<'EOF'
# slip curve: rises to ymax at xmax (quadratic), falls to ysat at xsat (smooth step), then flat
function mu(xmax, xsat, ymax, ysat, x,   u, s) {
    if (x <= xmax) { u = x / xmax; return ymax * u * (2 - u) }
    if (x < xsat) { s = (x - xmax) / (xsat - xmax); return ymax + (ysat - ymax) * s * s * (3 - 2 * s) }
    return ysat
}
# friction force along x on the wheel (mass 2, radius 0.3), slip velocity u + r w
function force(u, w,   vs, rw, va, vsl) {
    vs = u + 0.3 * w; rw = absv(0.3 * w)
    va = rw * 0.04 > 0.05 ? rw * 0.04 : 0.05; vsl = rw * 0.12 > 0.15 ? rw * 0.12 : 0.15
    return -2 * 9.80665 * mu(va, vsl, 0.8, 0.6, sqrt(vs * vs + 1e-10)) * vs / sqrt(vs * vs + 1e-10)
}
function rk4(h,   k1u, k1w, k2u, k2w, k3u, k3w, k4u, k4w, f) {
    f = force(U, Wr); k1u = f / 2; k1w = 0.3 * f / 0.09
    f = force(U + h / 2 * k1u, Wr + h / 2 * k1w); k2u = f / 2; k2w = 0.3 * f / 0.09
    f = force(U + h / 2 * k2u, Wr + h / 2 * k2w); k3u = f / 2; k3w = 0.3 * f / 0.09
    f = force(U + h * k3u, Wr + h * k3w); k4u = f / 2; k4w = 0.3 * f / 0.09
    X += h / 6 * (6 * U + h * (k1u + k2u + k3u))
    U += h / 6 * (k1u + 2 * k2u + 2 * k3u + k4u); Wr += h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w)
}
NR == 1 { header(); U = 0; Wr = 25; X = 0; N = 0; next }
{
    while (N < int($1 / 1e-5 + 0.5)) { rk4(1e-5); N++ }
    u = $col["wheel.body.v_0[1]"]; w = $col["wheel.body.w_a[3]"]; x = $col["wheel.x"]
    d = absv(u - U) + 0.3 * absv(w - Wr) + absv(x - X); if (d > dr) dr = d
    l = absv(0.09 * w - 2 * 0.3 * u - 0.09 * 25); if (l > dl) dl = l
    lat = absv($col["wheel.z"]) + absv($col["wheel.frame_a.r_0[2]"] - 0.3); if (lat > dlat) dlat = lat
    o = orth(); if (o > wo) wo = o
}
END {
    wf = 0.09 * 25 / (0.09 + 2 * 0.09)
    printf "SlippingWheelSpinUp: off the RK4 reference by %.1e, angular momentum drift %.1e, final spin %.9f rad/s (closed form %.9f), speed %.9f m/s, off the line %.1e, orthonormality %.1e\n", dr, dl, w, wf, u, dlat, wo
    exit !(dr < 1e-6 && dl < 1e-7 && absv(w - wf) < 1e-7 && absv(u + 0.3 * wf) < 1e-7 && dlat < 1e-9 && wo < 1e-9)
}
EOF
run SlippingWheelSpinUp Wheels.dyad "$tmp/slip.csv" --stop 2 --interval 0.01 --rtol 1e-9 --atol 1e-9 &&
    check SlippingWheelSpinUp "$tmp/slip.awk" "$tmp/slip.csv"

# ---- DoublePendulumTurned: the chain mounted from the other end of every element (each
# joint, rod and bend computes its frame_a from its frame_b) moves as DoublePendulumUsual
cat > "$tmp/turn.awk" <<'EOF'
FNR == 1 { header(); next }
NR == FNR { for (b = 1; b <= 2; b++) for (i = 1; i <= 3; i++) {
                ref[FNR, b, i] = $col["body" b ".frame_a.r_0[" i "]"]
                for (j = 1; j <= 3; j++) refR[FNR, b, i, j] = $col["body" b ".frame_a.R[" i "," j "]"] }
            nref = FNR; next }
{
    for (b = 1; b <= 2; b++) for (i = 1; i <= 3; i++) {
        d = absv($col["body" b ".frame_a.r_0[" i "]"] - ref[FNR, b, i]); if (d > dr) dr = d
        for (j = 1; j <= 3; j++) { d = absv($col["body" b ".frame_a.R[" i "," j "]"] - refR[FNR, b, i, j]); if (d > dR) dR = d }
    }
    e = body_energy("body1", 1, 0.01, 9.81) + body_energy("body2", 1, 0.01, 9.81)
    if (FNR == 2) e0 = e
    if (absv(e - e0) > de) de = absv(e - e0)
    o = orth(); if (o > wo) wo = o; n++
}
END {
    printf "DoublePendulumTurned: positions off DoublePendulumUsual by %.1e m, rotation matrices by %.1e over 5 s, energy drift %.1e J, orthonormality %.1e\n", dr, dR, de, wo
    exit !(n == nref - 1 && n > 400 && dr < 1e-8 && dR < 1e-8 && de < 1e-6 && wo < 1e-9)
}
EOF
run DoublePendulumUsual MountedReversed.dyad "$tmp/usual.csv" --stop 5 --interval 0.01 --rtol 1e-11 --atol 1e-11 &&
    run DoublePendulumTurned MountedReversed.dyad "$tmp/turned.csv" --stop 5 --interval 0.01 --rtol 1e-11 --atol 1e-11 &&
    { awk -F, -f "$tmp/cols.awk" -f "$tmp/turn.awk" "$tmp/usual.csv" "$tmp/turned.csv" || { echo "DoublePendulumTurned: FAILED"; fail=1; }; }

exit $fail
