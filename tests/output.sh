#!/bin/sh
# The result file (docs/RUNTIME.md, "Output").  Usage: tests/output.sh DYADC
# Run from the repository root.  Checks, for `dyadc run` and for a simulator
# written by `dyadc build` (the same runtime code):
#   - the default columns: every variable the components declare, a
#     connector field only when no column holds its value (the rule in
#     docs/RUNTIME.md), the model's own variables and nothing twice;
#   - --vars all, names, glob patterns in order, a column named twice
#     written once, an error with a suggestion for a pattern matching nothing;
#   - the warning when a row has more than 1,000 columns;
#   - no file is created or truncated when the run cannot start (unknown
#     -p, bad --vars, failed initialization, unwritable directory).
set -u
dyadc=$1
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# header CSV EXPECTED WHAT
header() {
    got=$(head -1 "$1")
    if [ "$got" = "$2" ]; then ok; else bad "$3: header '$got', expected '$2'"; fi
}
# run_fails WHAT CMD...: exit 1, stderr in $tmp/err
run_fails() {
    what=$1
    shift
    if "$@" > /dev/null 2> "$tmp/err"; then bad "$what: succeeded"; return 1; fi
    ok
}
contains() { # FILE TEXT WHAT
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: no '$2' in: $(head -3 "$1")"; fi
}
untouched() { # FILE WHAT: still the old content
    if [ "$(cat "$1" 2> /dev/null)" = "old result" ]; then ok; else bad "$2: $1 was changed or removed"; fi
}

rc="tests/sim/rc.dyad --no-stdlib --model RC"
"$dyadc" build $rc -o "$tmp/rc" 2> "$tmp/err" || bad "build: $(cat "$tmp/err")"

for sim in run built; do
    if [ $sim = run ]; then set -- "$dyadc" run $rc; else set -- "$tmp/rc"; fi
    # the default: the components' own variables; every connector field
    # here is an alias of one (r.p.v = source.v, c.p.v = c.v, ...) or 0
    "$@" --stop 0.1 -o "$tmp/d.csv" 2> "$tmp/err" || bad "$sim default: $(cat "$tmp/err")"
    header "$tmp/d.csv" "time,source.v,source.i,r.v,r.i,c.v,c.i" "$sim default columns"
    "$@" --stop 0.1 --vars all -o "$tmp/a.csv" || bad "$sim --vars all"
    header "$tmp/a.csv" "time,source.p.v,source.p.i,source.n.v,source.n.i,source.v,source.i,r.p.v,r.p.i,r.n.v,r.n.i,r.v,r.i,c.p.v,c.p.i,c.n.v,c.n.i,c.v,c.i,ground.g.v,ground.g.i" "$sim --vars all"
    "$@" --stop 0.1 --vars 'c.*,*.p.v,r.v,c.v' -o "$tmp/g.csv" || bad "$sim --vars patterns"
    header "$tmp/g.csv" "time,c.p.v,c.p.i,c.n.v,c.n.i,c.v,c.i,source.p.v,r.p.v,r.v" "$sim --vars patterns in order, each column once"
    "$@" --stop 0.1 --vars 'r.?' -o "$tmp/q.csv" || bad "$sim --vars ?"
    header "$tmp/q.csv" "time,r.v,r.i" "$sim --vars r.?"
    # the rows are the same values whichever columns are chosen
    a=$(awk -F, 'NR == 12 { print $1, $18 }' "$tmp/a.csv")
    d=$(awk -F, 'NR == 12 { print $1, $6 }' "$tmp/d.csv")
    if [ "$a" = "$d" ]; then ok; else bad "$sim: c.v differs between --vars all ($a) and the default ($d)"; fi

    run_fails "$sim --vars no match" "$@" --vars 'cc.*' -o "$tmp/x.csv" &&
        contains "$tmp/err" "error: --vars: 'cc.*' matches no variable; did you mean 'c.*'?" "$sim --vars suggestion"
    run_fails "$sim --vars unknown name" "$@" --vars 'r.vv' -o "$tmp/x.csv" &&
        contains "$tmp/err" "did you mean 'r.v'?" "$sim --vars name suggestion"

    # a run that cannot start leaves the old file as it was, and creates none
    for bad_opt in "-p nosuch=1" "--vars nosuch" "--initial nosuch=1" "-p r.R=0"; do
        echo "old result" > "$tmp/old.csv"
        # shellcheck disable=SC2086
        run_fails "$sim $bad_opt" "$@" $bad_opt -o "$tmp/old.csv" && untouched "$tmp/old.csv" "$sim $bad_opt"
        rm -f "$tmp/new.csv"
        # shellcheck disable=SC2086
        run_fails "$sim $bad_opt" "$@" $bad_opt -o "$tmp/new.csv"
        if [ -e "$tmp/new.csv" ]; then bad "$sim $bad_opt created a result file"; else ok; fi
    done
    run_fails "$sim unwritable" "$@" -o "$tmp/no/such/dir.csv" &&
        contains "$tmp/err" "cannot open '$tmp/no/such/dir.csv' for writing" "$sim unwritable directory"
done

# a failed initialization (initial x^2 = -1) creates no file either
echo "old result" > "$tmp/old.csv"
run_fails "failed initialization" "$dyadc" run tests/sim/e2e/badinit.dyad --no-stdlib --model BadInit -o "$tmp/old.csv" &&
    untouched "$tmp/old.csv" "failed initialization"

# more than 1,000 columns: a warning saying how to choose them
cat > "$tmp/many.dyad" <<'DYAD'
component Many
  structural parameter N::Integer = 1001
  variable x::Real[N]
relations
  for i in 1:N
    initial x[i] = i
    der(x[i]) = -x[i]
  end
end
DYAD
"$dyadc" run "$tmp/many.dyad" --no-stdlib --model Many --stop 0.01 -o "$tmp/many.csv" 2> "$tmp/err" ||
    bad "many: $(cat "$tmp/err")"
contains "$tmp/err" "warning: writing 1001 columns per row; choose them with --vars" "many columns"
contains "$tmp/err" "(e.g. --vars 'x[*]')" "many columns: an example from the model's names"
"$dyadc" run "$tmp/many.dyad" --no-stdlib --model Many --stop 0.01 --vars 'x[1?]' -o "$tmp/many.csv" 2> "$tmp/err" ||
    bad "many --vars: $(cat "$tmp/err")"
if [ -s "$tmp/err" ]; then bad "many --vars: a warning with 10 columns: $(cat "$tmp/err")"; else ok; fi
header "$tmp/many.csv" "time,x[10],x[11],x[12],x[13],x[14],x[15],x[16],x[17],x[18],x[19]" "x[1?]"

echo "output: $pass passed, $fail failed"
[ $fail -eq 0 ]
