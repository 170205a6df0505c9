#!/bin/sh
# Formatter round trip over every .dyad file of the repository.
# Usage: tests/fmt_roundtrip.sh DYADC   (run from anywhere; uses git ls-files,
# or find when not in a git checkout).  For each file X that parses:
#   1. parse(fmt(X)) has the same AST as X   (dumps with --no-spans compared)
#   2. fmt(fmt(X)) == fmt(X)
# Files under tests/errors/ are expected not to parse and are skipped.
set -u
dyadc=$1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files '*.dyad' > "$tmp/list"
else
    find . -name '*.dyad' -not -path './build*' | sed 's|^\./||' | sort > "$tmp/list"
fi
pass=0 fail=0 skip=0
while IFS= read -r f; do
    case "$f" in tests/errors/*) skip=$((skip + 1)); continue ;; esac
    [ -f "$f" ] || continue
    if ! "$dyadc" fmt "$f" > "$tmp/a.dyad" 2> "$tmp/err"; then
        echo "FAIL: $f: does not parse"; sed 3q "$tmp/err"; fail=$((fail + 1)); continue
    fi
    "$dyadc" parse --dump-ast --no-spans "$f" > "$tmp/x.ast" 2>/dev/null
    if ! "$dyadc" parse --dump-ast --no-spans "$tmp/a.dyad" > "$tmp/a.ast" 2> "$tmp/err"; then
        echo "FAIL: $f: formatted text does not parse"; sed 3q "$tmp/err"
        fail=$((fail + 1)); continue
    fi
    if ! cmp -s "$tmp/x.ast" "$tmp/a.ast"; then
        echo "FAIL: $f: formatting changes the AST"; diff "$tmp/x.ast" "$tmp/a.ast" | head -10
        fail=$((fail + 1)); continue
    fi
    "$dyadc" fmt "$tmp/a.dyad" > "$tmp/b.dyad" 2>/dev/null
    if ! cmp -s "$tmp/a.dyad" "$tmp/b.dyad"; then
        echo "FAIL: $f: fmt is not idempotent"; diff "$tmp/a.dyad" "$tmp/b.dyad" | head -10
        fail=$((fail + 1)); continue
    fi
    pass=$((pass + 1))
done < "$tmp/list"
echo "fmt round trip: $pass passed, $fail failed, $skip skipped (tests/errors)"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
