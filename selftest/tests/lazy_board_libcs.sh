#!/usr/bin/env bash
# The lazy function and line index (target/dwarf/unit_index.h) on the
# other CPUs' libc: unit/test_line_lazy, run on the i386, armhf and arm64
# libc6 and libc6-dbg that the boards' roots hold (selftest/board/fetch.sh),
# compares one unit at a time with the whole walk at every call site and at
# random code addresses, and judges the names with eu-addr2line -f.  Each
# CPU's libc has its own shape: i386's pc thunks are claimed by the
# aranges of every unit that made one (they once turned the lazy index off
# for all of libc), armhf's assembly string functions are in no aranges,
# and a Thumb symbol's value carries bit 0.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v eu-addr2line >/dev/null || skip "missing tool: eu-addr2line"
# The release build's: unit/test_line_lazy runs under ASan on this
# machine's libc; here the question is the answers, on three more libcs.
test_bin="$MT_ROOT/${MT_RELEASE_BUILD:-$MT_BUILD}/unit/test_line_lazy"
[ -x "$test_bin" ] || fail "no $test_bin (make tests-build)"
ran=0
for b in i386:i386-linux-gnu arm:arm-linux-gnueabihf aarch64:aarch64-linux-gnu; do
    root=$MT_ROOT/build-board/${b%%:*}/root
    libc=$root/lib/${b#*:}/libc.so.6
    [ -e "$libc" ] || continue
    # (fewer samples than on this machine's libc, and two addresses the
    # units leave to the whole walk, each a walk of all of libc's DWARF)
    MT_LAZY_SAMPLES=${MT_LAZY_SAMPLES:-200} MT_LAZY_TAIL=${MT_LAZY_TAIL:-100} MT_LAZY_FALLBACKS=2 MT_LAZY_LIBC=$libc \
        MT_LAZY_DEBUG_ROOT=$root "$test_bin" \
        >"$MT_TMP/${b%%:*}.log" 2>&1
    rc=$?
    cat "$MT_TMP/${b%%:*}.log"
    [ $rc -eq 77 ] && continue
    [ $rc -eq 0 ] || fail "${b%%:*}: the lazy index differs from the whole walk or from eu-addr2line"
    ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no board root with libc6-dbg (selftest/board/fetch.sh)"
echo "$ran CPUs' libc compared"
