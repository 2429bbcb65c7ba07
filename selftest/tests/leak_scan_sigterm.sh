#!/usr/bin/env bash
# A SIGTERM during a leak scan ends the scan and the session at once, and
# the program runs on untouched.  leak_big_heap holds 1 GiB of reachable
# blocks under memtrace's console (-C): a first `scan` runs whole and its
# LEAK SCAN line says how long a scan of this heap takes (T).  A second
# `scan` gets SIGTERM after T/5.  memtrace must say the scan was
# interrupted, after less than the T a whole scan took, report no leak
# figures (a half scan would call reachable blocks lost), and detach and
# exit 0 as on any SIGTERM.  The oracle is the program itself, as untraced: after
# memtrace is gone it is neither stopped nor traced, every block still
# holds what it wrote, and it ends with its own output and status 0.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/leak_big_heap"
MIB=1024

"$PROG" 4 > plain.out; prc=$?
[ $prc -eq 0 ] && grep -qx done plain.out || fail "the program alone: exit $prc, $(cat plain.out)"

console_open mt.out -q -C -o report.txt "$PROG" $MIB "$MT_TMP/go"
trap 'touch "$MT_TMP/go"; kill $CONSOLE_PID 2>/dev/null' EXIT
wait_for_line mt.out "^held $MIB MiB" 120
pid=$(program_pid "$CONSOLE_PID" leak_big_heap) || fail "no program under memtrace"

CONSOLE_TIMEOUT=120 console_cmd scan
ms=$(sed -n 's/^LEAK SCAN: .* checked in \([0-9.]*\) ms$/\1/p' <<< "$CONSOLE_REPLY")
[ -n "$ms" ] || fail "the first scan printed no LEAK SCAN line: $CONSOLE_REPLY"
# (and stdout's buffer, reachable too)
reach=$(sed -n 's/^ *still reachable: \([0-9]*\) bytes.*/\1/p' <<< "$CONSOLE_REPLY")
grep -q "definitely lost: 0 bytes in 0 blocks" <<< "$CONSOLE_REPLY" && [ "${reach:-0}" -ge $((MIB << 20)) ] ||
    fail "the first scan does not find the $MIB blocks reachable: $CONSOLE_REPLY"
echo "a whole scan: $ms ms"

printf 'scan\n' >&3
delay=$(python3 -c "print('%.3f' % max(0.02, $ms / 5000))")
sleep "$delay"
kill -TERM "$CONSOLE_PID"
start=$SECONDS
wait "$CONSOLE_PID"; mrc=$?
exec 3>&-
echo "memtrace: exit $mrc, $((SECONDS - start)) s after SIGTERM (sent $delay s into the scan)"
cat mt.out.err
[ $mrc -eq 0 ] || fail "memtrace exited $mrc after SIGTERM, not 0 (a clean detach)"
line=$(grep "leak scan: interrupted by a signal after" mt.out.err) ||
    fail "memtrace did not say the scan was interrupted: $(cat mt.out.err)"
took=$(sed -n 's/.*interrupted by a signal after \([0-9.]*\) s.*/\1/p' <<< "$line")
python3 -c "import sys; sys.exit(0 if $took * 1000 < $ms else 1)" ||
    fail "the interrupted scan ran ${took} s, no shorter than a whole scan (${ms} ms)"
grep -q "definitely lost" report.txt && fail "the final report has leak figures from a half scan"

state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
tracer=$(awk '/^TracerPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
[ -n "$state" ] || fail "the program died with memtrace"
[ "$state" != T ] && [ "$state" != t ] || fail "the program was left stopped (State $state)"
[ "$tracer" = 0 ] || fail "the program is still traced by $tracer"
touch go
wait_until 60 "the program's end" sh -c "! kill -0 $pid 2>/dev/null"
grep -qx done mt.out || fail "the program did not end as untraced: $(tail -2 mt.out)"
trap - EXIT
echo "PASS"
