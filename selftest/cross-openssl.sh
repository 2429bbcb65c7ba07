#!/usr/bin/env bash
# Debian's OpenSSL for a cross target (headers, libssl.a, libcrypto.a),
# unpacked into OUTDIR, for `make cross`: memtrace links it statically so
# that --key works on the board and the binary stays self-contained.
#
#   selftest/cross-openssl.sh OUTDIR DEBIAN_ARCH      (arm64, armhf)
#
# See cross-deb.sh; exits non-zero when it cannot, and the Makefile then
# builds without TLS.
set -eu
out=$1 arch=$2
# Unpacked before cross-deb.sh named its marker after the package.
[ -e "$out/.ok" ] && exit 0
exec "$(dirname "$0")/cross-deb.sh" "$out" "$arch" libssl-dev 'usr/lib/*/libcrypto.a'
