#!/usr/bin/env bash
# Debian's OpenSSL for a cross target (headers, libssl.a, libcrypto.a),
# unpacked into OUTDIR, for `make cross`: memtrace links it statically so
# that --key works on the board and the binary stays self-contained.
#
#   tools/cross-openssl.sh OUTDIR DEBIAN_ARCH      (arm64, armhf)
#
# Fetched and unpacked by cross-debs.sh (nothing is installed).  Exits
# non-zero when it cannot; the Makefile then builds without TLS.
exec "$(dirname "$0")/cross-debs.sh" "$1" "$2" "ssl crypto" libssl-dev
