#!/bin/bash
# Leak scan at exit (-a) against valgrind --leak-check=full on a program with
# a leak of every kind (definitely lost: dropped, XOR-hidden, list head, cycle;
# indirectly lost: list nodes, cycle; possibly lost: interior pointer in a
# global and what that block points to; reachable: pointers in globals and in
# reachable blocks).  Definitely/indirectly/possibly lost must be equal, and
# here still reachable too (the program makes no stdio buffer).
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/leak_common.bash"
need_tool valgrind valgrind
PROG=$MT_PROGS/leak_kinds

for args in "" realloc; do
    valgrind_leaks "$PROG" $args || fail "valgrind failed on leak_kinds $args"
    vg=$(leak_summary_of_text "$VG_LOG") || fail "$vg"
    "$MEMTRACE" -q -a -j -o "$MT_TMP/mt.json" "$PROG" $args || fail "memtrace -a failed on leak_kinds $args"
    mt=$(leak_summary_of_json "$MT_TMP/mt.json") || fail "$mt"
    echo "leak_kinds $args: valgrind $vg | memtrace $mt"
    [ "$(echo "$vg" | cut -d' ' -f1-8)" = "$(echo "$mt" | cut -d' ' -f1-8)" ] ||
        fail "leak figures differ (definite indirect possible reachable, bytes and blocks)"
    [ "$(echo "$vg" | cut -d' ' -f1)" != 0 ] || fail "no definite leak at all: the program changed?"

    [ -z "$args" ] || continue
    # The text report says the same, with valgrind's wording.
    "$MEMTRACE" -q -a -o "$MT_TMP/mt.txt" "$PROG" $args || fail "memtrace -a (text) failed"
    txt=$(leak_summary_of_text "$MT_TMP/mt.txt") || fail "$txt"
    [ "$txt" = "$mt" ] || fail "text LEAK SUMMARY ($txt) differs from JSON ($mt)"
    # Loss records: the same "N bytes in M blocks are KIND" multiset for the
    # definitely lost blocks (valgrind adds "(direct, indirect)" to its bytes).
    vr=$(grep -oE '[0-9,]+ (\([0-9,]+ direct, [0-9,]+ indirect\) )?bytes in [0-9,]+ blocks are definitely lost' "$VG_LOG" |
        sed -E 's/^[0-9,]+ \(([0-9,]+) direct, [0-9,]+ indirect\)/\1/; s/,//g' | sort)
    mr=$(grep -oE '^[0-9]+ bytes in [0-9]+ blocks are definitely lost' "$MT_TMP/mt.txt" | sort)
    # memtrace groups by stack: valgrind's one record per block of the list
    # head stack is one record here too (the other nodes are indirect).
    [ "$vr" = "$mr" ] || fail "definitely lost records differ: valgrind [$vr] memtrace [$mr]"
done
echo "leak figures equal valgrind's"
