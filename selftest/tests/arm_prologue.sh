#!/usr/bin/env bash
# Thumb prologue analysis (memtrace's last resort on armhf, where most of
# Debian's glibc has no unwind table) against the compiler's .debug_frame,
# read by binutils' readelf -wF: Debian 12's armhf libc from the board
# packages (selftest/board/fetch.sh arm) and its libc6-dbg debug file.  At
# every prologue row of every Thumb function with a symbol, the analysis of
# the code from the function's start must give the frame size and lr slot
# of the row, or say it does not know; a wrong answer fails.
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool readelf binutils
root=${BOARD_CACHE:-$MT_ROOT/build-board/arm}/root
libc=$root/lib/arm-linux-gnueabihf/libc.so.6
[ -f "$libc" ] || skip "no armhf board packages in ${root%/root} (selftest/board/fetch.sh arm ${root%/root})"
id=$(readelf -n "$libc" | awk '/Build ID:/ { print $3 }')
dbg=$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -f "$dbg" ] || fail "no libc6-dbg debug file for build-id $id in the board packages"
"$MT_ROOT/$MT_BUILD/unit/test_arm_prologue" || fail "built-in cases"
# (readelf exits 1 on a debug file: "Unable to find program interpreter name")
readelf -wF "$dbg" >"$MT_TMP/frames" 2>/dev/null; [ -s "$MT_TMP/frames" ] || fail "readelf -wF $dbg"
readelf -sW "$dbg" >"$MT_TMP/syms" 2>/dev/null; [ -s "$MT_TMP/syms" ] || fail "readelf -sW $dbg"
python3 "$MT_ROOT/selftest/tests/arm_prologue_points.py" "$MT_TMP/frames" "$MT_TMP/syms" >"$MT_TMP/points" ||
    fail "reading readelf's tables"
n=$(wc -l <"$MT_TMP/points")
[ "$n" -gt 1000 ] || fail "only $n prologue rows found in $dbg"
out=$("$MT_ROOT/$MT_BUILD/unit/test_arm_prologue" "$libc" <"$MT_TMP/points")
rc=$?
echo "$out" | tail -n 20
[ $rc = 0 ] || fail "prologue analysis disagrees with .debug_frame ($(echo "$out" | tail -n 1))"
echo "PASS $n prologue rows of armhf libc: $(echo "$out" | tail -n 1)"
