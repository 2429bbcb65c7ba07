#!/usr/bin/env bash
# libedit for a cross target (the console's line editor, linked statically so
# that the board binary stays self-contained): Debian's libedit-dev with what
# libedit.a needs (libbsd-dev, libmd-dev, and libncurses-dev for libtinfo.a),
# unpacked into OUTDIR for `make cross`.
#
#   tools/cross-libedit.sh OUTDIR DEBIAN_ARCH      (arm64, armhf)
#
# Fetched and unpacked by cross-debs.sh (nothing is installed).  Exits
# non-zero when it cannot; the Makefile then builds the console's plain
# line reader.
exec "$(dirname "$0")/cross-debs.sh" "$1" "$2" "edit bsd md tinfo" \
    libedit-dev libbsd-dev libmd-dev libncurses-dev
