#!/usr/bin/env bash
# CFI tables against binutils readelf --debug-dump=frames-interp: every row
# of every FDE, in files of other shapes than the host's own libraries:
# .debug_frame only (DWARF 2, 4, 5, compressed), i386 (4-byte addresses),
# and, when clang and lld are installed, freestanding objects for aarch64,
# big-endian aarch64, arm (.debug_frame) and big-endian mips.
set -u
: "${MT_ROOT:?}" "${MT_TMP:?}"
. "$MT_ROOT/selftest/tests/lib.bash"
MT_BUILD=${MT_BUILD:-build}
CHECK=$MT_ROOT/$MT_BUILD/unit/test_cfi_readelf
src=$MT_ROOT/selftest/programs/unwind_shapes.c
need_tool readelf binutils
[ -x "$CHECK" ] || { echo "missing $CHECK"; exit 1; }
cd "$MT_TMP" || exit 1

files=()
build() {   # OUT COMPILER ARGS...
    local out=$1; shift
    if "$@" -o "$out" "$src" 2>"$out.err"; then
        files+=("$PWD/$out")
    else
        echo "not built: $out ($(head -n 1 "$out.err"))"
    fi
}
for o in O0 O2; do
    build shapes_$o gcc -$o -g
    build shapes_dbg2_$o gcc -$o -gdwarf-2 -fno-asynchronous-unwind-tables
    build shapes_dbg4_$o gcc -$o -gdwarf-4 -fno-asynchronous-unwind-tables
    build shapes_dbg5_$o gcc -$o -gdwarf-5 -fno-asynchronous-unwind-tables -gz
    build shapes_m32_$o gcc -m32 -$o -g
    build shapes_m32pic_$o gcc -m32 -$o -g -fPIC -shared
done
if command -v clang >/dev/null && command -v ld.lld >/dev/null; then
    for t in aarch64-linux-gnu aarch64_be-linux-gnu mips-linux-gnu; do
        build shapes_$t clang --target=$t -O2 -g -fPIC -shared -nostdlib -fuse-ld=lld \
            -fasynchronous-unwind-tables
    done
    build shapes_arm clang --target=arm-linux-gnueabihf -O2 -g -fPIC -shared -nostdlib \
        -fuse-ld=lld -fno-exceptions -fno-unwind-tables -fno-asynchronous-unwind-tables
fi
[ ${#files[@]} -gt 0 ] || { echo "nothing could be built"; exit 1; }
"$CHECK" "${files[@]}"
