#!/usr/bin/env bash
# A Debian -dev package of a cross target, unpacked into OUTDIR for
# `make cross` to compile and link against statically (the board binary
# stays self-contained):
#
#   selftest/cross-deb.sh OUTDIR DEBIAN_ARCH PACKAGE FILE
#
# e.g. libssl-dev (cross-openssl.sh) or libprotobuf-c-dev; FILE is a glob
# under OUTDIR that must exist afterwards (the static library).  The
# package is fetched with apt-get download and unpacked with dpkg-deb -x:
# nothing is installed, so no foreign libc6-dev has to match the host's
# (see cross-zlib.sh for why that matters).  Exits non-zero when it cannot;
# the Makefile then builds without what the package brings.
set -eu
out=$1 arch=$2 pkg=$3 file=$4
[ -e "$out/.ok-$pkg" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt-get download runs as _apt where it can
(cd "$tmp" && apt-get download -q "$pkg:$arch") >/dev/null 2>&1 || {
    echo "cross-deb: cannot download $pkg:$arch" >&2; exit 1; }
mkdir -p "$out"
dpkg-deb -x "$tmp"/"$pkg"_*_"$arch".deb "$out"
# shellcheck disable=SC2086   # FILE is a glob
ls "$out"/$file >/dev/null
touch "$out/.ok-$pkg"
