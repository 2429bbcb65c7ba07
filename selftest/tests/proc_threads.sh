#!/usr/bin/env bash
# Hundreds of short threads created and ending at a high rate while traced
# (selftest/programs/proc_threads.c).  Joinable waves: the HEAP SUMMARY
# equals valgrind's.  With detached threads too (whose stack reuse, and so
# the C library's own allocations, depend on scheduling): the blocks the
# program itself leaks, one per thread of 8 + id % 5 bytes from short_life,
# are all there, no misuse is reported, and the output is the untraced one.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
PROG="$MT_PROGS/proc_threads"

# valgrind runs threads one at a time and slowly: 150 of them are enough.
compare_with_valgrind "$PROG" 150 16 joinable

THREADS=800
expected=$("$PROG" $THREADS 32) || fail "untraced run failed"
"$MEMTRACE" -q -j -o mt.json "$PROG" $THREADS 32 > mt.out 2> mt.err || fail "memtrace failed: $(cat mt.err)"
[ "$(cat mt.out)" = "$expected" ] || fail "output differs: $(cat mt.out) vs $expected"
! grep -E 'Invalid free|Mismatched free|warning' mt.err || fail "unexpected diagnostics"
python3 - mt.json $THREADS <<'PY' || fail "the threads' own blocks are not all in the report"
import json, sys
d = json.load(open(sys.argv[1]))
threads = int(sys.argv[2])
blocks = sum(s['blocks'] for s in d['stacks'] if any(f['function'] == 'short_life' for f in s['frames']))
nbytes = sum(s['bytes'] for s in d['stacks'] if any(f['function'] == 'short_life' for f in s['frames']))
want = sum(8 + i % 5 for i in range(threads))
print(f'short_life leaks: {blocks} blocks, {nbytes} bytes; expected {threads} blocks, {want} bytes')
assert blocks == threads and nbytes == want
PY
echo ok
