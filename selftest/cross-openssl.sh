#!/usr/bin/env bash
# Debian's OpenSSL for a cross target (headers, libssl.a, libcrypto.a),
# unpacked into OUTDIR, for `make cross`: memtrace links it statically so
# that --key works on the board and the binary stays self-contained.
#
#   selftest/cross-openssl.sh OUTDIR DEBIAN_ARCH      (arm64, armhf)
#
# The package is fetched with apt-get download and unpacked with dpkg-deb -x:
# nothing is installed, so no foreign libc6-dev has to match the host's
# (see cross-zlib.sh for why that matters).  Exits non-zero when it cannot;
# the Makefile then builds without TLS.
set -eu
out=$1 arch=$2
[ -e "$out/.ok" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt-get download runs as _apt where it can
(cd "$tmp" && apt-get download -q "libssl-dev:$arch") >/dev/null 2>&1 || {
    echo "cross-openssl: cannot download libssl-dev:$arch" >&2; exit 1; }
mkdir -p "$out"
dpkg-deb -x "$tmp"/libssl-dev_*_"$arch".deb "$out"
ls "$out"/usr/lib/*/libcrypto.a >/dev/null
touch "$out/.ok"
