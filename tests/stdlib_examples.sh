#!/bin/sh
# Every `example component` of the bundled stdlib must compile and simulate
# for one second (numbers are checked by the sim tests; this catches models
# that stop compiling or initializing).  Usage: tests/stdlib_examples.sh DYADC
# Run from the repository root.
set -u
dyadc=$1
pass=0
fail=0
"$dyadc" check stdlib examples > /dev/null 2>&1 || { echo "FAIL: dyadc check stdlib examples"; "$dyadc" check stdlib examples 2>&1 | tail -20; fail=$((fail + 1)); }
for f in $(find stdlib -path '*/Examples/*' -name '*.dyad' | sort); do
    lib=$(dirname "${f#stdlib/}" | tr / .)
    for name in $(sed -n 's/^example component \([A-Za-z0-9_]*\).*/\1/p' "$f"); do
        if "$dyadc" run --model "$lib.$name" --stop 1 -o /dev/null > /dev/null 2> /tmp/stdlib_ex.$$; then
            pass=$((pass + 1))
        else
            echo "FAIL: $lib.$name"
            tail -5 /tmp/stdlib_ex.$$
            fail=$((fail + 1))
        fi
    done
done
rm -f /tmp/stdlib_ex.$$
echo "stdlib examples: $pass passed, $fail failed"
[ $fail -eq 0 ]
