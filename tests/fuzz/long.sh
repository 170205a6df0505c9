#!/bin/sh
# The long fuzzing run of issue 14: both targets, SECONDS each (default
# 1800), one after the other, seeded with the repository's .dyad files and
# the Dyad dictionary; the corpora grow in DIR/TARGET/corpus.  Prints libFuzzer's final
# statistics (executions, coverage) per target; crashes are left in
# DIR/TARGET/crash-*.  Usage: tests/fuzz/long.sh [DIR] [SECONDS]
set -u
R=$(cd "$(dirname "$0")/../.." && pwd)
D=${1:-/tmp/dyadc-fuzz}
T=${2:-1800}
status=0
for F in fuzz_parse fuzz_pipeline; do
    mkdir -p "$D"
    sh "$R/tests/fuzz/smoke.sh" "$D/$F" "$T" "$F" > "$D/$F.log" 2>&1 || status=1
    echo "$F: $(grep -E '^(Done|==[0-9]+==|SUMMARY)' "$D/$F.log" | tail -2 | tr '\n' ' ')"
    grep -E '^#[0-9]+.*(DONE|pulse)' "$D/$F.log" | tail -1
done
exit $status
