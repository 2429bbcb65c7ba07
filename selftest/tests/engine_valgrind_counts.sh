#!/usr/bin/env bash
# memtrace's HEAP SUMMARY equals valgrind memcheck's for the same runs:
# allocbench on 1 and 4 threads, and the selftest programs.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind

compare_with_valgrind "$MT_BENCH_BIN" 3000 8 1
compare_with_valgrind "$MT_BENCH_BIN" 3000 8 4
compare_with_valgrind "$MT_BENCH_BIN" 1000 32 2
compare_with_valgrind "$MT_PROGS/alloc_mix"
compare_with_valgrind "$MT_PROGS/demo"
compare_with_valgrind "$MT_PROGS/mt_churn" 4 5000
for prog in unwind_chain unwind_shapes; do
    [ -x "$MT_PROGS/$prog" ] && compare_with_valgrind "$MT_PROGS/$prog"
done
exit 0
