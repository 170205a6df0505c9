#!/bin/sh
# Installs what dyadc needs from Debian 12 packages, and nothing else.
# Idempotent and non-interactive: packages already installed are skipped.
set -eu
PKGS="gcc libc6-dev make cmake pkg-config flex bison llvm-19-dev check
      libsundials-dev libsuitesparse-dev gnuplot-nox time"
[ "${DYADC_FUZZ:-1}" = 1 ] && PKGS="$PKGS clang-19"  # parser fuzz smoke test (ctest)
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
