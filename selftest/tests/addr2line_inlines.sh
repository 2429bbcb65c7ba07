#!/usr/bin/env bash
# `memtrace --addr2line -i` (the inlined-call chain, as addr2line -i -f
# prints it) against three oracles, every frame's function and file:line at
# addresses sampled from each file's line table (addr2line_inlines.py):
#  - eu-addr2line -i: a -O2 C program and shared library with always_inline
#    helpers, and libc's debug file (libc6-dbg);
#  - llvm-addr2line --inlines: -O2 C++ (templates inlined many deep), a
#    clang-built library, libc; it names the outermost function from the
#    symbol table (aliases, .isra.0), so that one name is not compared;
#  - binutils addr2line -i: the gcc-built library (on other files binutils
#    names padding after a function by the nearest symbol and mixes
#    DW_AT_name into linkage names, which is not a chain question).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
D="$MT_ROOT/selftest/tests/data"
CMP="python3 $MT_ROOT/selftest/tests/addr2line_inlines.py"
N=${MT_LINE_SAMPLES:-1500}
command -v eu-addr2line >/dev/null || skip "eu-addr2line (elfutils) not installed"
"$MEMTRACE" --addr2line -i "$MEMTRACE" 0 >/dev/null 2>&1 || skip "\$MEMTRACE --addr2line -i not available"

gcc ${MT_TARGET_CFLAGS:-} -g -O2 -fPIC -shared -o libinline.so "$D/inline_lib.c" || fail "build lib"
gcc ${MT_TARGET_CFLAGS:-} -g -O2 -o inline_main "$D/inline_main.c" -L. -linline || fail "build main"
libc_debug=$(libc_debug_file)

bad=0
check() { "$@" || bad=$((bad + 1)); }
for f in inline_main libinline.so $libc_debug; do
    check $CMP "$MEMTRACE" "$f" "$N" eu-addr2line -a -i -f -e
done
if command -v llvm-addr2line >/dev/null; then
    g++ ${MT_TARGET_CFLAGS:-} -g -O2 -o stacks_cxx_O2 "$D/stacks_cxx.cpp" || fail "build C++"
    files=(stacks_cxx_O2 $libc_debug)
    if command -v clang >/dev/null; then
        clang ${MT_TARGET_CFLAGS:-} -g -O2 -fPIC -shared -o libinline_clang.so "$D/inline_lib.c" || fail "build clang lib"
        files+=(libinline_clang.so)
    fi
    for f in "${files[@]}"; do
        check $CMP --outer-by-symbol "$MEMTRACE" "$f" "$N" llvm-addr2line -a -i -f -e
    done
else
    echo "llvm-addr2line not installed: not judged by it"
fi
command -v addr2line >/dev/null && check $CMP "$MEMTRACE" libinline.so "$N" addr2line -a -i -f -e
[ $bad -eq 0 ] || fail "$bad files with chains that differ"
echo "PASS: inline chains equal the oracles'"
