#!/usr/bin/env bash
# The memalign family (posix_memalign with its EINVAL and ENOMEM failures,
# aligned_alloc, memalign, valloc, realloc and free of their blocks):
# memtrace's HEAP SUMMARY equals valgrind memcheck's.  pvalloc: valgrind 3.19
# aborts the program on it, so its share is the program's own arithmetic
# (sizes rounded up to pages from sysconf, pvalloc(0) one page as newer
# valgrind counts it), added to valgrind's figures for the rest.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
prog=$MT_PROGS/intercept_memalign

compare_with_valgrind "$prog"

vg=$(valgrind_summary "$prog") || fail "valgrind failed"
line=$("$prog" pvalloc | grep '^pvalloc adds:') || fail "the program did not print its pvalloc figures"
want=$(python3 - "$vg" "$line" <<'PY'
import re, sys
vg = [int(x) for x in sys.argv[1].split()]
m = re.search(r'allocs (\d+) frees (\d+) bytes (\d+) in_use_bytes (\d+) in_use_blocks (\d+)', sys.argv[2])
add = [int(x) for x in m.groups()]
print(*[a + b for a, b in zip(vg, add)])
PY
)
got=$(memtrace_summary "$prog" pvalloc) || fail "memtrace failed"
echo "expected (valgrind + pvalloc share): $want | memtrace: $got"
[ "$want" = "$got" ] || fail "pvalloc figures differ (allocs frees bytes in_use_bytes in_use_blocks)"
exit 0
