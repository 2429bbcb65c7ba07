#!/usr/bin/env bash
# A program that execs: the report is the new image's, equal to valgrind's
# figures for that image run alone, and memtrace exits with its status.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
"$MEMTRACE" -q -j -o exec.json "$MT_PROGS/exec_into" "$MT_PROGS/alloc_mix" > out.txt; rc=$?
[ $rc -eq 0 ] || fail "exit status $rc"
grep -q '^alloc_mix:' out.txt || fail "the exec'ed program did not run: $(cat out.txt)"
mt=$(python3 -c 'import json,sys; h=json.load(open("exec.json"))["heap"]; print(h["allocs"],h["frees"],h["bytes_allocated"],h["in_use_bytes"],h["in_use_blocks"])')
vg=$(valgrind_summary "$MT_PROGS/alloc_mix")
echo "after exec: memtrace $mt | valgrind (alloc_mix alone) $vg"
[ "$mt" = "$vg" ] || fail "books after exec differ from valgrind's for the new image"
