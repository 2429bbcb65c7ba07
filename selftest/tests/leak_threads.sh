#!/bin/bash
# Console `scan` while the program is paused, against valgrind's leak check
# at the same point (a VALGRIND_DO_LEAK_CHECK client request): one block is
# referenced only from a blocked thread's stack, one only from a spinning
# thread's register; glibc's thread descriptors (dtv, reached by an interior
# pointer) are possibly lost for both tools.  Then, after `clear`, a second
# pause: blocks made after the clear are classified while pointers held by
# the forgotten blocks still count (the program's own known counts).
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/leak_common.bash"
need_tool valgrind valgrind
PROG=$MT_PROGS/leak_threads
grep -q VALGRIND "$MT_ROOT/selftest/programs/leak_threads.c" || fail "program lost its client request"
[ -e /usr/include/valgrind/memcheck.h ] || skip "valgrind/memcheck.h missing: no client request in leak_threads"

valgrind_leaks "$PROG" || fail "valgrind failed on leak_threads"
vg=$(leak_summary_of_text "$VG_LOG") || fail "$vg"

fifo=$MT_TMP/go
mkfifo "$fifo"
console_open "$MT_TMP/console.out" -C "$PROG" "$fifo" more
trap 'exec 3>&- 2>/dev/null; kill $CONSOLE_PID 2>/dev/null' EXIT
wait_for_line "$MT_TMP/console.out" '^scan point' 20
console_cmd scan
echo "$CONSOLE_REPLY" > "$MT_TMP/scan1.txt"
mt=$(leak_summary_of_text "$MT_TMP/scan1.txt") || fail "$mt"
echo "paused: valgrind $vg | memtrace $mt"
[ "$(echo "$vg" | cut -d' ' -f1-8)" = "$(echo "$mt" | cut -d' ' -f1-8)" ] ||
    fail "leak figures at the pause differ (definite indirect possible reachable)"
grep -q '3 threads' "$MT_TMP/scan1.txt" || fail "scan did not see 3 threads: $(head -1 "$MT_TMP/scan1.txt")"

# Second phase: forget everything, let the program add a reachable block
# (linked from a block made before the clear) and a dropped 208-byte block.
console_cmd clear
echo x > "$fifo"
wait_for_line "$MT_TMP/console.out" '^scan point 2' 20
console_cmd scan
echo "$CONSOLE_REPLY" > "$MT_TMP/scan2.txt"
mt2=$(leak_summary_of_text "$MT_TMP/scan2.txt") || fail "$mt2"
echo "after clear: memtrace $mt2"
[ "$mt2" = "208 1 0 0 0 0 16 1 0 0" ] || fail "after clear: want 208 B definitely lost and the 16 B block reachable through a forgotten block"
echo x > "$fifo"
exec 3>&-
wait "$CONSOLE_PID" || fail "memtrace exited with $?"
trap - EXIT
echo "scans agree with valgrind"
