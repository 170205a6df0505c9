#!/bin/sh
# CI smoke run of the parser fuzzer: build into DIR, seed with the repository's
# .dyad files, fuzz for SECONDS (default 30).  Fails on any crash, sanitizer
# report, hang or broken formatter property.  Usage: smoke.sh DIR [SECONDS]
set -eu
R=$(cd "$(dirname "$0")/../.." && pwd)
D=$1
T=${2:-30}
FUZZ_CC=$(command -v clang-19) sh "$R/tests/fuzz/build.sh" "$D" > /dev/null
mkdir -p "$D/corpus"
(cd "$R" && find . -name '*.dyad' -not -path './build*' | sed 's|^\./||') | while IFS= read -r f; do
    cp "$R/$f" "$D/corpus/$(echo "$f" | tr / _)"
done
cd "$D"
./fuzz_parse -max_total_time="$T" -max_len=4096 -timeout=30 -artifact_prefix="$D/" corpus
