#!/usr/bin/env bash
# --alloc-fn NAME=KIND: a program's own pool functions counted as
# allocation functions, each call once (the outermost-call rule: what a
# named function calls itself is not the program's).  heaps_named's named
# functions each make and free one 8-byte note by malloc and say how many:
# memtrace's HEAP SUMMARY must be valgrind memcheck's minus those notes
# (allocs, frees, bytes allocated), and the same blocks in use.  A pool
# block given to free() and a malloc'ed one given to pool_put are
# mismatched frees (memcheck's title), named by the calls' stacks.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
PROG=$MT_PROGS/heaps_named
FNS=(--alloc-fn pool_get=malloc --alloc-fn pool_zero=calloc --alloc-fn pool_grow=realloc
     --alloc-fn pool_put=free --alloc-fn pool_aligned=aligned)

notes=$("$PROG" | sed -n 's/^notes: //p')
[ -n "$notes" ] || fail "heaps_named printed no note count"
vg=$(valgrind_summary "$PROG") || fail "valgrind failed on heaps_named"
"$MEMTRACE" -q "${FNS[@]}" -j -o "$MT_TMP/mt.json" "$PROG" >/dev/null || fail "memtrace failed"
mt=$(memtrace_json_figures "$MT_TMP/mt.json") || fail "$mt"
read -r a f b ub n <<<"$vg"
want="$((a - notes)) $((f - notes)) $((b - 8 * notes)) $ub $n"
echo "valgrind $vg, $notes notes | want $want | memtrace $mt"
[ "$mt" = "$want" ] || fail "--alloc-fn figures differ (allocs frees bytes in_use_bytes in_use_blocks)"

# Without --alloc-fn the notes are the program's: valgrind's figures.
plain=$(memtrace_summary "$PROG") || fail "memtrace failed without --alloc-fn"
[ "$plain" = "$vg" ] || fail "without --alloc-fn: memtrace $plain, valgrind $vg"

"$MEMTRACE" -q "${FNS[@]}" -o /dev/null "$PROG" mismatch >/dev/null 2>"$MT_TMP/mt.err" ||
    fail "memtrace failed on heaps_named mismatch"
n=$(grep -c 'Mismatched free' "$MT_TMP/mt.err")
echo "mismatched frees: $n"
[ "$n" = 2 ] || fail "want 2 mismatched frees, got $n"
grep -A2 'Mismatched free' "$MT_TMP/mt.err" | grep -q 'pool_put' || fail "no mismatch at pool_put"

# Bad words are refused before the program runs.
"$MEMTRACE" -q --alloc-fn pool_get=alloca /bin/true 2>/dev/null && fail "--alloc-fn took KIND alloca"
"$MEMTRACE" -q --alloc-fn malloc=free /bin/true 2>/dev/null && fail "--alloc-fn renamed malloc"
echo "--alloc-fn counts the named functions once each"
