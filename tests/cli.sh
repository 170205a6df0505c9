#!/bin/sh
# The command line explains itself (docs/CLI.md).  Usage: tests/cli.sh DYADC
# Run from the repository root.  Checks, against docs/CLI.md and the command
# list `dyadc help` prints:
#   - every command has a help page, the same through `dyadc help CMD` and
#     `dyadc CMD --help` / `-h`, exit 0, starting with its usage line;
#   - every option docs/CLI.md documents (its option tables and the
#     "common options" line) appears in `dyadc help`, and every simulator
#     option also in `dyadc help run` and in a built simulator's --help;
#   - --version; unknown commands and options fail with exit 1 and a
#     suggestion; options of another command are named as such;
#   - --time-passes times every phase, codegen, jit/emit and link included;
#     -v announces them.
set -u
dyadc=$1
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# expect STATUS CMD...: run, keep stdout/stderr in $tmp/out, $tmp/err
expect() {
    want=$1
    shift
    "$@" > "$tmp/out" 2> "$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ]; then bad "$* exited $got, expected $want"; sed 5q "$tmp/err"; return 1; fi
    ok
}

contains() { # FILE TEXT WHAT
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: no '$2'"; fi
}

expect 0 "$dyadc" help
cp "$tmp/out" "$tmp/help"
commands=$(sed -n '/^commands:/,/^options/s/^  \([a-z][a-z]*\) .*/\1/p' "$tmp/help")
[ -n "$commands" ] || bad "dyadc help lists no commands"
for c in $commands; do
    expect 0 "$dyadc" help "$c" && cp "$tmp/out" "$tmp/page"
    head -1 "$tmp/page" | grep -q "^usage: dyadc $c " && ok || bad "dyadc help $c: first line $(head -1 "$tmp/page")"
    for h in --help -h; do
        expect 0 "$dyadc" "$c" "$h" && { cmp -s "$tmp/out" "$tmp/page" && ok || bad "dyadc $c $h differs from dyadc help $c"; }
    done
done

# every documented option is in the overview (docs/CLI.md: backquoted
# options at the start of table rows, and the "Common options" paragraph)
grep '^| `-' docs/CLI.md | cut -d'|' -f2 | grep -o '`-[^` =]*' | tr -d '`' > "$tmp/sim_opts"
sed -n '/^Common options/,/^$/p' docs/CLI.md | grep -o '`-[^` ]*' | tr -d '`' | sed 's/\.\..*//' > "$tmp/common_opts"
[ -s "$tmp/sim_opts" ] && [ -s "$tmp/common_opts" ] || bad "no options found in docs/CLI.md"
expect 0 "$dyadc" help run
cp "$tmp/out" "$tmp/run_page"
"$dyadc" build tests/sim/rc.dyad --no-stdlib --model RC -o "$tmp/rc" 2> "$tmp/err" || bad "build rc: $(cat "$tmp/err")"
"$tmp/rc" --help > "$tmp/sim_help" 2>&1 || bad "simulator --help failed"
for o in $(cat "$tmp/sim_opts"); do
    contains "$tmp/help" "$o" "dyadc help (simulator option)"
    contains "$tmp/run_page" "$o" "dyadc help run"
    contains "$tmp/sim_help" "$o" "simulator --help"
done
for o in $(cat "$tmp/common_opts"); do contains "$tmp/help" "$o" "dyadc help (common option)"; done

expect 0 "$dyadc" --version && grep -q '^dyadc [0-9][0-9.]* ' "$tmp/out" && ok || bad "--version: $(cat "$tmp/out")"

expect 1 "$dyadc" chek stdlib && contains "$tmp/err" 'did you mean `check`' "unknown command"
expect 1 "$dyadc" help rnu && contains "$tmp/err" 'did you mean `run`' "help of an unknown command"
expect 1 "$dyadc" run tests/sim/rc.dyad --no-stdlib --model RC --stpo 1 && contains "$tmp/err" 'did you mean `--stop`' "unknown simulator option"
expect 1 "$dyadc" check tests/sim/rc.dyad --structure && contains "$tmp/err" 'it is an option of: flatten' "option of another command"
expect 1 "$dyadc" build tests/sim/rc.dyad --model RC --stop 2 -o "$tmp/x" && contains "$tmp/err" 'simulator option' "simulator option given to build"
expect 1 "$dyadc" run tests/sim/rc.dyad --no-stdlib && contains "$tmp/err" 'needs --model NAME' "run without --model"
expect 1 "$dyadc" run tests/sim/rc.dyad --no-stdlib --model && contains "$tmp/err" 'needs a value' "--model without a value"
# bad numbers are refused naming what was given (issue 14)
for v in inf nan 1e400 -1 abc; do
    expect 1 "$dyadc" run tests/sim/rc.dyad --no-stdlib --model RC --interval "$v" -o "$tmp/rc.csv" && contains "$tmp/err" "$v" "--interval $v"
done
for v in 0 -5 12x 1e3 99999999999999999999999; do
    expect 1 "$dyadc" flatten tests/sim/rc.dyad --no-stdlib --model RC --max-structural-work "$v" &&
        contains "$tmp/err" "--max-structural-work $v: expected a positive whole number" "--max-structural-work $v"
done
expect 0 "$dyadc" flatten tests/sim/rc.dyad --no-stdlib --model RC --max-structural-work 1000
expect 1 "$dyadc" flatten tests/sim/rc.dyad --no-stdlib --model RC --max-structural-work 2 &&
    contains "$tmp/err" "raise it with --max-structural-work N" "a budget too small for RC"

# the input-size budget (docs/CLI.md, Limits): per file and in total, named
# with the file, its size and the limit; the big inputs are made here
for v in 0 -5 12x 99999999999999999999999; do
    for o in --max-file-bytes --max-input-bytes; do
        expect 1 "$dyadc" parse tests/sim/rc.dyad "$o" "$v" && contains "$tmp/err" "$o $v: expected a positive whole number" "$o $v"
    done
done
sz=$(wc -c < tests/sim/rc.dyad)
expect 1 "$dyadc" check tests/sim/rc.dyad --no-stdlib --max-file-bytes $((sz - 1)) &&
    contains "$tmp/err" "'tests/sim/rc.dyad' is $sz bytes, over the limit of $((sz - 1)) bytes per source file; raise it with --max-file-bytes N" "file over --max-file-bytes"
expect 0 "$dyadc" check tests/sim/rc.dyad --no-stdlib --max-file-bytes "$sz"
cp tests/sim/rc.dyad "$tmp/rc_a.dyad" && printf 'component Decay\n  variable x::Real\nrelations\n  der(x) = -x\nend\n' > "$tmp/rc_b.dyad"
szb=$(wc -c < "$tmp/rc_b.dyad")
expect 1 "$dyadc" check "$tmp/rc_a.dyad" "$tmp/rc_b.dyad" --no-stdlib --max-input-bytes $((sz + szb - 1)) &&
    contains "$tmp/err" "rc_b.dyad' ($szb bytes) brings the source read to $((sz + szb)) bytes, over the limit of $((sz + szb - 1)) bytes in total; raise it with --max-input-bytes N" "total over --max-input-bytes"
expect 0 "$dyadc" check "$tmp/rc_a.dyad" "$tmp/rc_b.dyad" --no-stdlib --max-input-bytes $((sz + szb))
expect 1 "$dyadc" parse /dev/zero --max-file-bytes 1000 &&
    contains "$tmp/err" "'/dev/zero' is more than 1000 bytes, over the limit of 1000 bytes per source file" "a device without a size"
# the default per-file limit, 32 MiB: one byte more is refused before it is read
{ cat tests/sim/rc.dyad; head -c $((33554433 - sz)) /dev/zero | tr '\0' ' '; } > "$tmp/big.dyad"
expect 1 "$dyadc" parse "$tmp/big.dyad" &&
    contains "$tmp/err" "big.dyad' is 33554433 bytes, over the limit of 33554432 bytes per source file" "the default file limit"
expect 0 "$dyadc" parse "$tmp/big.dyad" --max-file-bytes 33554433
rm -f "$tmp/big.dyad"
# one token of 4 MB (a name, a blank run) parses in linear time; an error on
# its line shows a window around the caret, not the 4 MB line
{ printf 'component A\n  parameter '; head -c 4000000 /dev/zero | tr '\0' a; printf ' = 1\nend\n'; } > "$tmp/long.dyad"
expect 1 "$dyadc" parse "$tmp/long.dyad" && contains "$tmp/err" "long.dyad:2:4000014: error: unexpected" "an error after a 4 MB name"
len=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$tmp/err")
if [ "$len" -lt 400 ]; then ok; else bad "the excerpt of a 4 MB line has $len characters"; fi
contains "$tmp/err" "    2 | ...aaaa" "the excerpt's window"
# comments gathered into one doc comment are joined once, not one string per
# line (40,000 lines took 6 GB): memory, not time, is checked; fmt keeps them
{ cat tests/sim/rc.dyad; i=0; while [ $i -lt 20000 ]; do echo "# comment line $i"; i=$((i + 1)); done; } > "$tmp/comments.dyad"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%M" -o "$tmp/rss" "$dyadc" fmt "$tmp/comments.dyad" > "$tmp/out" 2> "$tmp/err"
    rss=$(tail -1 "$tmp/rss")
    if [ "$rss" -lt 1000000 ]; then ok; else bad "fmt of 20,000 comment lines: peak RSS $rss KB"; fi
else
    "$dyadc" fmt "$tmp/comments.dyad" > "$tmp/out" 2> "$tmp/err"
fi
n=$(grep -c "^# comment line" "$tmp/out")
if [ "$n" -eq 20000 ]; then ok; else bad "fmt kept $n of 20000 comment lines"; fi

# --time-passes: every phase of run and build; -v announces them
expect 0 "$dyadc" run tests/sim/rc.dyad --no-stdlib --model RC --stop 0.1 -o "$tmp/rc.csv" --time-passes
for p in parse flatten units structure codegen jit simulate; do contains "$tmp/err" "time: $p " "run --time-passes"; done
expect 0 "$dyadc" build tests/sim/rc.dyad --no-stdlib --model RC -o "$tmp/rc2" --time-passes
for p in parse flatten units structure codegen emit link; do contains "$tmp/err" "time: $p " "build --time-passes"; done
expect 0 "$dyadc" check tests/sim/rc.dyad --no-stdlib --time-passes
for p in parse check; do contains "$tmp/err" "time: $p " "check --time-passes"; done
expect 0 "$dyadc" run tests/sim/rc.dyad --no-stdlib --model RC --stop 0.1 -o "$tmp/rc.csv" -v
for p in parse flatten units structure codegen jit; do contains "$tmp/err" "dyadc: $p of RC..." "run -v"; done
contains "$tmp/err" "statistics for RC" "run -v (simulator statistics)"

# --vars splits its list at commas outside brackets: x[2,1,3] is one element
# of a 3-D array, in `run` and in a built simulator
cat > "$tmp/v3.dyad" <<'EOF'
component V3
  variable x::Real[2, 1, 3]
  variable y::Real
relations
  for i in 1:2, j in 1:1, k in 1:3
    der(x[i, j, k]) = -k * x[i, j, k]
    initial x[i, j, k] = i
  end
  y = 2 * x[2, 1, 3]
end
EOF
expect 0 "$dyadc" run "$tmp/v3.dyad" --no-stdlib --model V3 --stop 0.1 --vars 'x[2,1,3],y,x[1,1,*]' -o "$tmp/v3.csv" &&
    contains "$tmp/v3.csv" "time,x[2,1,3],y,x[1,1,1],x[1,1,2],x[1,1,3]" "run --vars with a 3-D element"
if grep -q "^0,2,4,1,1,1$" "$tmp/v3.csv"; then ok; else bad "run --vars x[2,1,3]: first row $(sed -n 2p "$tmp/v3.csv")"; fi
expect 0 "$dyadc" build "$tmp/v3.dyad" --no-stdlib --model V3 -o "$tmp/v3sim" &&
    expect 0 "$tmp/v3sim" --stop 0.1 --vars 'y,x[2,1,3]' -o "$tmp/v3b.csv" &&
    contains "$tmp/v3b.csv" "time,y,x[2,1,3]" "simulator --vars with a 3-D element"
expect 1 "$dyadc" run "$tmp/v3.dyad" --no-stdlib --model V3 --stop 0.1 --vars 'x[2,1,4]' -o "$tmp/v3.csv" &&
    contains "$tmp/err" "--vars: unknown variable 'x[2,1,4]'" "an unknown 3-D element, named whole"

echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
