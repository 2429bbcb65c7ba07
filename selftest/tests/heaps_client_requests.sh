#!/usr/bin/env bash
# Valgrind's client requests honoured without valgrind (docs/custom-heaps.md):
# an arena annotated with MALLOCLIKE_BLOCK / FREELIKE_BLOCK /
# RESIZEINPLACE_BLOCK (heaps_arena: 500 objects from one 1 MiB malloc),
# mempools with and without METAPOOL|AUTO_FREE (heaps_pool).  Oracle:
# valgrind memcheck's HEAP SUMMARY and LEAK SUMMARY of the same runs, and
# its errors for the misuse run (FREELIKE of unknown memory, twice, and of
# a malloc'ed block).  RUNNING_ON_VALGRIND stays 0: the program's output
# under memtrace is its untraced output.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/leak_common.bash"
need_tool valgrind valgrind

# One valgrind run and one memtrace run per case: both summaries of each.
run_case() {
    local prog=$MT_PROGS/$1; shift
    local vg mt vgh mth
    valgrind_leaks "$prog" "$@" || fail "valgrind failed on $prog $*"
    vgh=$(valgrind_log_figures "$VG_LOG") || fail "$vgh"
    vg=$(leak_summary_of_text "$VG_LOG") || fail "$vg"
    "$MEMTRACE" -q -a -j -o "$MT_TMP/mt.json" "$prog" "$@" >"$MT_TMP/traced.out" ||
        fail "memtrace -a failed on $prog $*"
    mth=$(memtrace_json_figures "$MT_TMP/mt.json") || fail "$mth"
    mt=$(leak_summary_of_json "$MT_TMP/mt.json") || fail "$mt"
    echo "heap $*: valgrind $vgh | memtrace $mth"
    echo "leaks $*: valgrind $vg | memtrace $mt"
    [ "$vgh" = "$mth" ] || fail "HEAP SUMMARY differs for $prog $* (allocs frees bytes in_use_bytes in_use_blocks)"
    [ "$vg" = "$mt" ] || fail "LEAK SUMMARY differs for $prog $*"
    "$prog" "$@" >"$MT_TMP/plain.out" || fail "$prog $* failed untraced"
    grep -q 'running on valgrind: 0' "$MT_TMP/plain.out" || fail "untraced run says it is on valgrind"
    cmp -s "$MT_TMP/plain.out" "$MT_TMP/traced.out" ||
        fail "output under memtrace differs from untraced ($prog $*)"
}

run_case heaps_arena leak
run_case heaps_pool
run_case heaps_pool meta

# Misuse: the same errors as memcheck, in its order.
valgrind --log-file="$MT_TMP/vg.log" "$MT_PROGS/heaps_arena" misuse >/dev/null 2>&1
vg=$(grep -oE '(Invalid free|Mismatched free)' "$MT_TMP/vg.log" | tr '\n' ' ')
"$MEMTRACE" -q -o /dev/null "$MT_PROGS/heaps_arena" misuse >/dev/null 2>"$MT_TMP/mt.err" ||
    fail "memtrace failed on heaps_arena misuse"
mt=$(grep -oE '(Invalid free|Mismatched free)' "$MT_TMP/mt.err" | tr '\n' ' ')
echo "misuse: valgrind [$vg] memtrace [$mt]"
[ -n "$vg" ] || fail "valgrind reported no error: the program changed?"
[ "$vg" = "$mt" ] || fail "misuse errors differ"
grep -q 'VALGRIND_FREELIKE_BLOCK\|arena_free' "$MT_TMP/mt.err" || fail "errors name no request site"
echo "client requests booked as memcheck books them"
