#!/usr/bin/env bash
# Builds libiberty's demangler (c++filt's) as a static library for a build
# whose architecture Debian's libiberty-dev does not serve here (cross
# builds for arm/aarch64, the 32-bit build): OUTDIR/libiberty.a and
# OUTDIR/include/libiberty/{demangle,ansidecl,libiberty}.h.
#
#   tools/cross-iberty.sh OUTDIR CC [CFLAGS...]
#
# The sources come from Debian's binutils-source tarball (as for
# tools/cross-zlib.sh: nothing is downloaded).  Only the demangler's
# files are compiled; xmalloc/xrealloc/xstrdup are memtrace's own
# (shared/xalloc.c, same contract: exit when memory runs out).
set -eu
out=$1; shift
cc=$1; shift
tarball=$(ls /usr/src/binutils/binutils-*.tar.* 2>/dev/null | head -n 1 || true)
[ -n "$tarball" ] || { echo "cross-iberty: no /usr/src/binutils tarball (apt-get install binutils-source)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
top=$(tar -tf "$tarball" | head -n 1 | cut -d/ -f1)
files=(cplus-dem cp-demangle rust-demangle d-demangle safe-ctype)
members=()
for f in "${files[@]}"; do members+=("$top/libiberty/$f.c"); done
tar -xf "$tarball" -C "$tmp" "${members[@]}" "$top/libiberty/cp-demangle.h" "$top/include"
src=$tmp/$top/libiberty
mkdir -p "$out/include/libiberty" "$out/obj"
objs=()
for f in "${files[@]}"; do
    # shellcheck disable=SC2086  # CC may be "clang --target=..."
    $cc "$@" -O2 -fPIC -DHAVE_STRING_H -DHAVE_STDLIB_H -DHAVE_LIMITS_H -DHAVE_STDINT_H -DHAVE_INTTYPES_H \
        -I"$tmp/$top/include" -w -c "$src/$f.c" -o "$out/obj/$f.o"
    objs+=("$out/obj/$f.o")
done
cp "$tmp/$top/include/demangle.h" "$tmp/$top/include/ansidecl.h" "$tmp/$top/include/libiberty.h" "$out/include/libiberty/"
rm -f "$out/libiberty.a"
ar rcs "$out/libiberty.a" "${objs[@]}"
