#!/bin/sh
# Installs what dyadc, its tests and its demo need from Debian 12 packages,
# and nothing else.  Idempotent and non-interactive: packages already
# installed are skipped.  Every package is installed with
# --no-install-recommends, so a package a test needs must be named here even
# when a recommendation would usually bring it (libclang-rt-19-dev: the
# fuzzer and sanitizer runtimes of clang-19).  `scripts/check-setup.sh`
# verifies, after a build, that every tool and library the build and the tests
# used comes from a package listed here (or from one they depend on).
set -eu
PKGS="gcc libc6-dev make cmake pkg-config flex bison llvm-19-dev check
      libsundials-dev libsuitesparse-dev gnuplot-nox time libzip-dev libxml2-utils"
# (time: /usr/bin/time -v in bench/; libzip-dev: FMU archives; libxml2-utils:
# xmllint checks modelDescription.xml in the FMI test)
# the parser fuzz smoke test (ctest fuzz_parse_smoke); DYADC_FUZZ=0 leaves it
# out, and the test is then reported as skipped
[ "${DYADC_FUZZ:-1}" = 1 ] && PKGS="$PKGS clang-19 libclang-rt-19-dev"
[ "${1:-}" = --list ] && { echo $PKGS; exit 0; }
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "setup: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
