#!/usr/bin/env bash
# Where a program's requests depend on addresses, valgrind's run is not the
# native one: addr_sized allocates CPython's int objects of its thread
# identifier (pthread_self()), one 4-byte digit per 30 bits.  Each run's
# bytes allocated must be what that run asked for (the program prints it),
# under valgrind and under memtrace; valgrind's thread control block lies
# below 2^30 and the native one above, so valgrind's run asks 124 * 4 = 496
# bytes less.  That is corpus_interpreters' python3_malloc difference
# (124 _thread.get_ident() ints in python3 -c's imports): if this changes,
# so does that case's known figure (corpus_interpreters.sh).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
prog=$MT_PROGS/addr_sized

# "ident ADDR asked BYTES" of a run's output $1: BYTES.
asked_of() {
    local line=$1
    [[ $line =~ ^ident\ 0x[0-9a-f]+\ asked\ ([0-9]+)$ ]] || fail "addr_sized printed '$line'"
    echo "${BASH_REMATCH[1]}"
}

vgout=$(valgrind --run-libc-freeres=no --run-cxx-freeres=no --log-file="$MT_TMP/vg.log" "$prog") ||
    fail "valgrind failed on addr_sized"
vgfig=$(valgrind_log_figures "$MT_TMP/vg.log") || fail "no HEAP SUMMARY from valgrind"
vgasked=$(asked_of "$vgout") || exit 1
mtout=$("$MEMTRACE" -q -j -o "$MT_TMP/mt.json" "$prog") || fail "memtrace failed on addr_sized"
mtfig=$(memtrace_json_figures "$MT_TMP/mt.json") || fail "no JSON report"
mtasked=$(asked_of "$mtout") || exit 1
echo "valgrind: $vgfig ($vgout) | memtrace: $mtfig ($mtout)"

[ "$vgfig" = "124 124 $vgasked 0 0" ] || fail "valgrind's figures are not its run's requests"
[ "$mtfig" = "124 124 $mtasked 0 0" ] || fail "memtrace's figures are not its run's requests"
[ $((mtasked - vgasked)) = 496 ] ||
    fail "valgrind's run asks $((mtasked - vgasked)) bytes less, not 496 (python3_malloc's figure)"
exit 0
