#!/bin/sh
# Verifies that scripts/setup-debian.sh names every Debian package the build
# and the tests use: each tool they run and each library the build linked
# must come from a listed package, from a package those depend on, or from a
# package every Debian system has (Essential or Priority: required).  Run by
# `./build.sh test` after configuring; fails naming the unlisted package.
# Usage: scripts/check-setup.sh BUILD_DIR
set -eu
cd "$(dirname "$0")/.."
build=$1
listed=$(sh scripts/setup-debian.sh --list)

# the dependency closure of the listed packages (installed ones only)
closure=$(mktemp)
trap 'rm -f "$closure" "$closure.new"' EXIT
for p in $listed; do echo "$p"; done | sort -u > "$closure"
while :; do
    xargs -r dpkg-query -W -f='${Depends},${Pre-Depends}\n' < "$closure" 2>/dev/null |
        tr ',|' '\n\n' | sed 's/([^)]*)//; s/:any//; s/ //g' | grep -v '^$' |
        cat - "$closure" | sort -u > "$closure.new"
    cmp -s "$closure" "$closure.new" && break
    mv "$closure.new" "$closure"
done

owner() { # the package owning a file (following symlinks; /bin = /usr/bin)
    f=$(readlink -f "$1")
    for c in "$f" "$1" "$(echo "$f" | sed 's|^/usr/|/|')" "$(echo "$1" | sed 's|^/usr/|/|')"; do
        pkg=$(dpkg -S "$c" 2>/dev/null | head -n 1 | cut -d: -f1)
        [ -n "$pkg" ] && { echo "$pkg"; return; }
    done
}
bad=0
check() { # what, file
    pkg=$(owner "$2")
    if [ -z "$pkg" ]; then
        echo "check-setup: $1 ($2) belongs to no Debian package" >&2; bad=1; return
    fi
    grep -qx "$pkg" "$closure" && return
    base=$(dpkg-query -W -f='${Essential} ${Priority}' "$pkg" 2>/dev/null || true)
    case "$base" in yes*|*required) return ;; esac
    echo "check-setup: $1 ($2) comes from the package $pkg, which scripts/setup-debian.sh does not install" >&2
    bad=1
}

# tools the build, the tests and the demo run
for t in cc ld make cmake ctest pkg-config flex bison sh awk sed find gnuplot xmllint; do
    p=$(command -v "$t") || { echo "check-setup: $t is not installed" >&2; bad=1; continue; }
    check "tool $t" "$p"
done
[ -x /usr/bin/time ] && check "tool time" /usr/bin/time
if grep -q '^DYADC_CLANG19:FILEPATH=/' "$build/CMakeCache.txt"; then
    check "tool clang-19" "$(sed -n 's/^DYADC_CLANG19:FILEPATH=//p' "$build/CMakeCache.txt")"
    for rt in fuzzer asan ubsan_standalone; do
        f=$(find /usr/lib/llvm-19/lib/clang -name "libclang_rt.$rt*.a" 2>/dev/null | head -n 1)
        [ -n "$f" ] && check "clang runtime $rt" "$f"
    done
fi
# libraries the build found (CMake cache) and the Check unit-test framework
sed -n 's/^\(LLVM_SHARED_LIB\|DYRT_LIB_[a-z_]*\|SUNDIALS_INCLUDE_DIR\|SUITESPARSE_INCLUDE_DIR\|LLVM_CONFIG\):[A-Z]*=//p' \
    "$build/CMakeCache.txt" | while read -r f; do echo "$f"; done > "$closure.files"
while read -r f; do check "library" "$f"; done < "$closure.files"
rm -f "$closure.files"
for l in $(pkg-config --variable=libdir check)/libcheck.a $(pkg-config --variable=includedir check)/check.h \
         $(pkg-config --variable=includedir libzip)/zip.h; do
    [ -e "$l" ] && check "check" "$l"
done
[ "$bad" = 0 ] && echo "check-setup: every tool and library used comes from a package scripts/setup-debian.sh installs"
exit "$bad"
