#!/usr/bin/env bash
# Builds a static zlib for a cross target into OUTDIR (OUTDIR/libz.a and
# OUTDIR/include/zlib.h, zconf.h), for `make CROSS_COMPILE=...` when the
# target's own zlib is not in its sysroot.
#
#   tools/cross-zlib.sh OUTDIR CC [CFLAGS...]
#
# Why not zlib1g-dev:arm64 through dpkg multiarch: it needs libc6-dev:arm64 at
# exactly the host libc's version, and a foreign architecture makes every
# `apt-get update` depend on that architecture's index files too (here the
# security mirror served them inconsistently, so apt-get update failed for
# everyone).  Debian's binutils-source package (Architecture: all, no
# conflicts) ships the binutils tarball, which carries zlib's own sources:
# we compile those with the cross compiler.  Nothing is downloaded.
set -eu
out=$1; shift
cc=$1; shift
tarball=$(ls /usr/src/binutils/binutils-*.tar.* 2>/dev/null | head -n 1 || true)
[ -n "$tarball" ] || { echo "cross-zlib: no zlib for the target and no /usr/src/binutils tarball (apt-get install binutils-source)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
top=$(tar -tf "$tarball" | head -n 1 | cut -d/ -f1)
tar -xf "$tarball" -C "$tmp" --wildcards "$top/zlib/*.c" "$top/zlib/*.h"
src=$tmp/$top/zlib
mkdir -p "$out/include" "$out/obj"
objs=()
for f in adler32 compress crc32 deflate infback inffast inflate inftrees trees uncompr zutil; do
    # shellcheck disable=SC2086  # CC may be "clang --target=..."
    $cc "$@" -O2 -fPIC -DHAVE_UNISTD_H -DHAVE_STDARG_H -w -c "$src/$f.c" -o "$out/obj/$f.o"
    objs+=("$out/obj/$f.o")
done
cp "$src/zlib.h" "$src/zconf.h" "$out/include/"
rm -f "$out/libz.a"
ar rcs "$out/libz.a" "${objs[@]}"
