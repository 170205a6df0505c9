#!/bin/sh
# The two Quick start commands:
#   ./build.sh demo   set up, build, compile the bundled RC example and simulate it
#   ./build.sh test   set up, build, run the whole suite; then again under ASan+UBSan
# Also: ./build.sh build (set up and build only), ./build.sh bless (rewrite goldens).
set -eu
cd "$(dirname "$0")"
what="${1:-build}"
jobs=$(nproc 2>/dev/null || echo 2)

configure_and_build() { # dir, extra cmake args...; the log is kept in $dir/build.log
    dir=$1; shift
    mkdir -p "$dir"
    echo "building in $dir ..."
    if ! { cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" &&
           cmake --build "$dir" -j"$jobs"; } > "$dir/build.log" 2>&1; then
        tail -n 40 "$dir/build.log"
        echo "build failed (full log: $dir/build.log)" >&2
        exit 1
    fi
}

sh scripts/setup-debian.sh
case "$what" in
build)
    configure_and_build build ;;
demo)
    configure_and_build build
    sh examples/demo.sh build ;;
test)
    fuzz=ON; [ "${DYADC_FUZZ:-1}" = 1 ] || fuzz=OFF
    configure_and_build build -DDYADC_REQUIRE_FUZZ=$fuzz
    sh scripts/check-setup.sh build
    ctest --test-dir build --output-on-failure -j"$jobs"
    echo "== again under AddressSanitizer + UndefinedBehaviorSanitizer =="
    configure_and_build build-asan -DDYADC_SANITIZE=ON
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir build-asan --output-on-failure -j"$jobs" ;;
bless)
    configure_and_build build
    sh tests/golden/run.sh build/dyadc --bless ;;
*)
    echo "usage: ./build.sh [build|demo|test|bless]" >&2
    exit 1 ;;
esac
