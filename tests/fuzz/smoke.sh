#!/bin/sh
# CI smoke run of the fuzzers: build into DIR, seed with the repository's
# .dyad files, fuzz TARGET (fuzz_parse or fuzz_pipeline, default
# fuzz_parse) for SECONDS (default 30) with the Dyad dictionary.  Fails on
# any crash, sanitizer report, hang, internal error or broken formatter
# property.  Usage: smoke.sh DIR [SECONDS] [TARGET] (one DIR per TARGET)
set -eu
R=$(cd "$(dirname "$0")/../.." && pwd)
D=$1
T=${2:-30}
F=${3:-fuzz_parse}
FUZZ_CC=$(command -v clang-19) sh "$R/tests/fuzz/build.sh" "$D" "$F" > /dev/null
mkdir -p "$D/corpus"
(cd "$R" && find . -name '*.dyad' -not -path './build*' | sed 's|^\./||') | while IFS= read -r f; do
    cp "$R/$f" "$D/corpus/$(echo "$f" | tr / _)"
done
cd "$D"
"./$F" -max_total_time="$T" -max_len=4096 -timeout=30 -dict="$R/tests/fuzz/dyad.dict" \
  -artifact_prefix="$D/" corpus
