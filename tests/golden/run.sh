#!/bin/sh
# Golden-file runner.  Usage: tests/golden/run.sh DYADC [--bless]
# Run from the repository root (paths in the outputs are relative to it).
#
#   tests/golden/parse/X.dyad      -> X.ast      `dyadc parse --dump-ast X.dyad`
#   tests/golden/fmt/X.dyad        -> X.fmt      `dyadc fmt X.dyad`
#   tests/golden/flatten/X.dyad    -> X.flat     `dyadc flatten X.dyad --model X`
#   tests/golden/structure/X.dyad  -> X.struct   `dyadc flatten X.dyad --model X --structure`
#   tests/errors/<phase>/X.dyad    -> X.err      the diagnostics (stderr) and a non-zero exit
# A file X.args beside X.dyad replaces the default options (e.g. `--model Y -L lib`).
# --bless rewrites every expected file; review the result with `git diff`.
set -u
dyadc=$1
bless=${2:-}
pass=0
fail=0

expect() { # expected-file, actual-file
    if [ "$bless" = --bless ]; then
        cp "$2" "$1"
    elif ! cmp -s "$1" "$2"; then
        echo "FAIL: $1"
        diff -u "$1" "$2" | head -40
        fail=$((fail + 1))
        return
    fi
    pass=$((pass + 1))
}

args_for() { # dyad-file default-args
    a="${1%.dyad}.args"
    if [ -f "$a" ]; then cat "$a"; else echo "$2"; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_dir() { # dir ext command-prefix default-args-with-@ (@ = model name)
    dir=$1 ext=$2 cmd=$3 dflt=$4
    for f in "$dir"/*.dyad; do
        [ -e "$f" ] || continue
        name=$(basename "$f" .dyad)
        args=$(args_for "$f" "$(echo "$dflt" | sed "s/@/$name/g")")
        # shellcheck disable=SC2086
        "$dyadc" $cmd "$f" $args > "$tmp/out" 2> "$tmp/err"
        expect "${f%.dyad}.$ext" "$tmp/out"
    done
}

run_dir tests/golden/parse ast "parse --dump-ast" ""
run_dir tests/golden/fmt fmt "fmt" ""
run_dir tests/golden/flatten flat "flatten" "--no-stdlib --model @"
run_dir tests/golden/structure struct "flatten" "--no-stdlib --model @ --structure"

for dir in tests/errors/*; do
    [ -d "$dir" ] || continue
    phase=$(basename "$dir")
    case "$phase" in
        parse) cmd="parse"; dflt="" ;;
        check) cmd="check"; dflt="--no-stdlib" ;;
        *) cmd="flatten"; dflt="--no-stdlib --model @" ;;
    esac
    for f in "$dir"/*.dyad; do
        [ -e "$f" ] || continue
        name=$(basename "$f" .dyad)
        args=$(args_for "$f" "$(echo "$dflt" | sed "s/@/$name/g")")
        # shellcheck disable=SC2086
        "$dyadc" $cmd "$f" $args > /dev/null 2> "$tmp/err"
        rc=$?
        if [ $rc -ne 1 ]; then
            echo "FAIL: $f: exit status $rc, expected 1"
            fail=$((fail + 1))
            continue
        fi
        expect "${f%.dyad}.err" "$tmp/err"
    done
done

echo "golden: $pass passed, $fail failed"
[ $fail -eq 0 ]
