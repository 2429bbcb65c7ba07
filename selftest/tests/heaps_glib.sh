#!/usr/bin/env bash
# A GLib program (selftest/programs/lib/glib_heap.c): Debian's libglib and
# libgobject contain valgrind client requests, and one of them fires
# natively: gtype.c marks each fundamental type node (8 bytes into a
# g_malloc0 block) with VALGRIND_MALLOCLIKE_BLOCK, always.  memtrace must
# say which requests fired (its info lines), and book them as memcheck
# does: the blocks that hold the nodes are no leak and no root.
#
# Oracle: valgrind memcheck on the same program, G_SLICE=always-malloc in
# both runs (what GLib's gslice.c chooses under valgrind by itself).  The
# rest of GLib's valgrind paths are RUNNING_ON_VALGRIND tests, which
# memtrace leaves at 0 (the program's untraced path): among those the
# program reaches, only ghash.c's (no 32-bit key and value arrays under
# valgrind) changes figures, in GLib's own hash tables.  So: LEAK
# SUMMARY's lost figures and the blocks in use must be memcheck's; the
# bytes in use and still reachable memcheck's once the blocks allocated
# through g_hash_table_* (their stacks, in both reports) are set aside;
# and the allocations, frees and bytes the program's GLib work adds to
# GLib's start ("work" less "base") memcheck's.  Both engines.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/glib_common.bash"
need_tool valgrind valgrind
need_tool pkg-config pkg-config
[ -z "${MT_TARGET_CFLAGS:-}" ] ||
    skip "no 32-bit libglib2.0-dev here (tools/install-deps.sh installs the native one)"
pkg-config --exists gobject-2.0 ||
    skip "missing tool: gobject-2.0.pc (Debian package libglib2.0-dev, installed by tools/install-deps.sh)"
PROG=$MT_TMP/glib_heap
# shellcheck disable=SC2046 # pkg-config's words
gcc -std=gnu11 -g -O0 -o "$PROG" "$MT_ROOT/selftest/programs/lib/glib_heap.c" \
    $(pkg-config --cflags --libs gobject-2.0) 2>"$MT_TMP/cc.err" ||
    fail "cannot build glib_heap: $(tail -n 3 "$MT_TMP/cc.err")"
export G_SLICE=always-malloc

for mode in base work; do
    VG_LOG=$MT_TMP/vg.$mode.log
    valgrind --leak-check=full --show-leak-kinds=all --num-callers=40 --run-libc-freeres=no \
        --log-file="$VG_LOG" "$PROG" "$mode" >"$MT_TMP/vg.$mode.out" 2>&1 ||
        fail "valgrind failed on glib_heap $mode"
    grep -q 'running on valgrind: 1' "$MT_TMP/vg.$mode.out" || fail "GLib is not on valgrind's path"
    "$MEMTRACE" -a -j -o "$MT_TMP/mt.$mode.json" "$PROG" "$mode" >"$MT_TMP/mt.$mode.out" \
        2>"$MT_TMP/mt.$mode.err" || fail "memtrace failed on glib_heap $mode"
    "$PROG" "$mode" >"$MT_TMP/plain.out" || fail "glib_heap $mode failed untraced"
    cmp -s "$MT_TMP/plain.out" "$MT_TMP/mt.$mode.out" || fail "output under memtrace differs ($mode)"
    glib_compare "$VG_LOG" "$MT_TMP/mt.$mode.json"
    ok=$?
    echo "$mode heap: $GLIB_HEAP"
    echo "$mode leaks: $GLIB_LEAKS"
    echo "$mode through g_hash_table (bytes blocks): $GLIB_HASH"
    [ $ok = 0 ] || fail "$mode: $GLIB_WHY"
done

# What the program's GLib work adds: memcheck's.
glib_work_delta "$MT_TMP/vg.base.log" "$MT_TMP/vg.work.log" "$MT_TMP/mt.base.json" "$MT_TMP/mt.work.json"
ok=$?
echo "work less base (allocs frees bytes): $GLIB_DELTA"
[ $ok = 0 ] || fail "the program's GLib work counts differently"

# Which requests fired, as memtrace says: gtype.c's MALLOCLIKE_BLOCK, and
# the RUNNING_ON_VALGRIND tests (answered 0).
grep 'valgrind client request' "$MT_TMP/mt.work.err" | sed 's/^memtrace: //'
grep -q 'request MALLOCLIKE_BLOCK (0x1301) first at .*libgobject' "$MT_TMP/mt.work.err" ||
    fail "memtrace saw no MALLOCLIKE_BLOCK in libgobject"
grep -q 'request RUNNING_ON_VALGRIND (0x1001) first at .*libglib' "$MT_TMP/mt.work.err" ||
    fail "memtrace saw no RUNNING_ON_VALGRIND in libglib"

# Without G_SLICE, GLib's slice allocator keeps its magazines natively (it
# takes malloc only under valgrind): memtrace counts what the program does.
unset G_SLICE
nat=$(memtrace_summary "$PROG" work) || fail "memtrace failed without G_SLICE"
echo "without G_SLICE: memtrace $nat (the slices' magazines), valgrind as above"
echo "GLib's heap as memcheck books it"
