#!/usr/bin/env bash
# --alloc-fn @FILE with argument positions (docs/custom-heaps.md): the
# pool of heaps_pool_args keeps its arguments in its own order (the size
# before the pool, the pointer after it, gaps, alignment after size),
# named in a file as malloc:1, calloc:2,4, realloc:1,3, aligned:3,2 and
# free:2.  Oracle: valgrind memcheck on the same program with its pool
# annotated (VALGRIND_MALLOCLIKE_BLOCK / FREELIKE_BLOCK, "annotate"):
# memtrace's HEAP SUMMARY and LEAK SUMMARY of the plain run must be
# memcheck's, and a big pool block given to free() the mismatched free
# memcheck reports.  The same names without positions must not give
# memcheck's figures (the positions are what is tested), and bad lines
# of the file are refused as FILE:LINE before the program starts.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/leak_common.bash"
need_tool valgrind valgrind
PROG=$MT_PROGS/heaps_pool_args
FNS=$MT_TMP/pool.fns
cat >"$FNS" <<'FNS'
# heaps_pool_args's pool, its arguments in its own order
pool_alloc=malloc:1
pool_calloc=calloc:2,4
  pool_realloc=realloc:1,3

pool_aligned=aligned:3,2
pool_free=free:2
FNS

valgrind_leaks "$PROG" annotate || fail "valgrind failed on heaps_pool_args annotate"
vgh=$(valgrind_log_figures "$VG_LOG") || fail "$vgh"
vgl=$(leak_summary_of_text "$VG_LOG") || fail "$vgl"
valgrind -q "$PROG" annotate 2>/dev/null | grep -q 'running on valgrind: 1' ||
    fail "the annotations are dead code under valgrind"
"$MEMTRACE" -q -a --alloc-fn "@$FNS" -j -o "$MT_TMP/mt.json" "$PROG" >"$MT_TMP/traced.out" ||
    fail "memtrace failed"
mth=$(memtrace_json_figures "$MT_TMP/mt.json") || fail "$mth"
mtl=$(leak_summary_of_json "$MT_TMP/mt.json") || fail "$mtl"
echo "heap: valgrind $vgh | memtrace $mth"
echo "leaks: valgrind $vgl | memtrace $mtl"
[ "$vgh" = "$mth" ] || fail "HEAP SUMMARY differs (allocs frees bytes in_use_bytes in_use_blocks)"
[ "$vgl" = "$mtl" ] || fail "LEAK SUMMARY differs"
"$PROG" >"$MT_TMP/plain.out" || fail "heaps_pool_args failed untraced"
cmp -s "$MT_TMP/plain.out" "$MT_TMP/traced.out" || fail "output under memtrace differs from untraced"

# The same names at the C library's places: other figures.
sed 's/:[0-9,]*$//' "$FNS" >"$MT_TMP/nopos.fns"
# With -a too: the pool's address taken for a size books blocks of about
# 2^48 bytes, which the leak scan must read only as far as they are mapped
# (before, it read every booked byte: over ten minutes, killed).
nopos=$(memtrace_summary -a --alloc-fn "@$MT_TMP/nopos.fns" "$PROG" 2>/dev/null) || fail "memtrace -a failed without positions"
echo "without positions: memtrace $nopos"
[ "$nopos" != "$vgh" ] || fail "the positions change nothing: the program does not test them"

# A pool block given to free(): memcheck's errors, in its order.
valgrind --log-file="$MT_TMP/vg.log" "$PROG" annotate mismatch >/dev/null 2>&1
vg=$(grep -oE '(Invalid free|Mismatched free)' "$MT_TMP/vg.log" | tr '\n' ' ')
"$MEMTRACE" -q --alloc-fn "@$FNS" -o /dev/null "$PROG" mismatch >/dev/null 2>"$MT_TMP/mt.err" ||
    fail "memtrace failed on heaps_pool_args mismatch"
mt=$(grep -oE '(Invalid free|Mismatched free)' "$MT_TMP/mt.err" | tr '\n' ' ')
echo "mismatch: valgrind [$vg] memtrace [$mt]"
[ -n "$vg" ] || fail "valgrind reported no error: the program changed?"
[ "$vg" = "$mt" ] || fail "misuse errors differ"
grep -A9 'Mismatched free' "$MT_TMP/mt.err" | grep -q 'pool_alloc' ||
    fail "the mismatch does not name the block's pool_alloc"

# Bad lines: FILE:LINE and the reason, one line, and the program never runs.
bad() {
    printf '%b' "$1" >"$MT_TMP/bad.fns"
    local err
    err=$("$MEMTRACE" -q --alloc-fn "@$MT_TMP/bad.fns" "$MT_PROGS/heaps_pool_args" 2>&1 >/dev/null) &&
        fail "accepted: $1"
    [ "$(wc -l <<<"$err")" = 1 ] && grep -q "bad.fns:$2: $3" <<<"$err" ||
        fail "for $1 want bad.fns:$2: $3..., got: $err"
    echo "refused: $err"
}
bad 'pool_alloc=malloc:1\npool_free=alloca\n' 2 KIND
bad '# x\n\n=free\n' 3 'empty NAME'
bad 'pool_free=free:7\n' 1 'argument positions'
bad 'pool_realloc=realloc:1\n' 1 'this KIND takes 2'
bad 'pool_calloc=calloc:2,2\n' 1 'argument position 2 given twice'
bad "p=malloc$(printf '%*s' 600 '')x\n" 1 'line longer'
bad "$(for i in $(seq 33); do printf 'f%d=malloc\\n' "$i"; done)" 33 'too many'
bad 'malloc=free\n' 1 'malloc is intercepted already'
echo "--alloc-fn @FILE's positions give memcheck's figures"
