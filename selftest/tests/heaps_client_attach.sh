#!/usr/bin/env bash
# Attached (-p) after an annotated arena and pool were filled, memtrace
# counts only the later client requests (docs/custom-heaps.md): the HEAP
# SUMMARY of heaps_attach attached after its fill equals valgrind
# memcheck's of the same program doing only the later part ("later": the
# frees of objects made before count as frees there too, each an invalid
# free for memcheck and unknown to an attached memtrace).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
PROG=$MT_PROGS/heaps_attach

vg=$(valgrind_summary "$PROG" later) || fail "valgrind failed on heaps_attach later"
"$PROG" attach ready go &
pid=$!
wait_until 20 "heaps_attach to fill its arena" test -e ready
console_open report.txt -q -j -o mt.json -p $pid
console_cmd status   # answered once the attach is complete
: > go
wait $pid || fail "heaps_attach failed under memtrace"
wait $CONSOLE_PID || fail "memtrace -p failed: $(cat report.txt.err)"
exec 3>&-
mt=$(memtrace_json_figures mt.json) || fail "$mt"
echo "valgrind (later part) $vg | memtrace attached $mt"
[ "$vg" = "$mt" ] || fail "figures differ (allocs frees bytes in_use_bytes in_use_blocks)"
grep -q 'Invalid free' report.txt.err && fail "a release of a block from before the attach was reported"
echo "only the requests after the attach are counted"
