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
. "$MT_ROOT/selftest/tests/leak_common.bash"
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

# Bytes and blocks in use allocated through g_hash_table_*: of a memcheck
# log (--show-leak-kinds=all: every block in a loss record), of a JSON report.
vg_hash_part() {
    python3 - "$1" <<'PY'
import re, sys
b = n = 0
for rec in re.split(r'\n==\d+== \n', open(sys.argv[1]).read()):
    m = re.search(r'([\d,]+) (?:\(([\d,]+) direct, [\d,]+ indirect\) )?bytes in ([\d,]+) blocks are', rec)
    if m and 'g_hash_table' in rec:
        b += int((m.group(2) or m.group(1)).replace(',', ''))
        n += int(m.group(3).replace(',', ''))
print(b, n)
PY
}
mt_hash_part() {
    python3 - "$1" <<'PY'
import json, sys
b = n = 0
for s in json.load(open(sys.argv[1]))['stacks']:
    if s['blocks'] and any((f.get('function') or '').startswith('g_hash_table') for f in s['frames']):
        b += s['bytes']
        n += s['blocks']
print(b, n)
PY
}

declare -A VGH VGL VGX MTH MTL MTX
for mode in base work; do
    VG_LOG=$MT_TMP/vg.$mode.log
    valgrind --leak-check=full --show-leak-kinds=all --num-callers=40 --run-libc-freeres=no \
        --log-file="$VG_LOG" "$PROG" "$mode" >"$MT_TMP/vg.$mode.out" 2>&1 ||
        fail "valgrind failed on glib_heap $mode"
    grep -q 'running on valgrind: 1' "$MT_TMP/vg.$mode.out" || fail "GLib is not on valgrind's path"
    VGH[$mode]=$(valgrind_log_figures "$VG_LOG") || fail "${VGH[$mode]}"
    VGL[$mode]=$(leak_summary_of_text "$VG_LOG") || fail "${VGL[$mode]}"
    VGX[$mode]=$(vg_hash_part "$VG_LOG")
    "$MEMTRACE" -a -j -o "$MT_TMP/mt.$mode.json" "$PROG" "$mode" >"$MT_TMP/mt.$mode.out" \
        2>"$MT_TMP/mt.$mode.err" || fail "memtrace failed on glib_heap $mode"
    MTH[$mode]=$(memtrace_json_figures "$MT_TMP/mt.$mode.json") || fail "${MTH[$mode]}"
    MTL[$mode]=$(leak_summary_of_json "$MT_TMP/mt.$mode.json") || fail "${MTL[$mode]}"
    MTX[$mode]=$(mt_hash_part "$MT_TMP/mt.$mode.json")
    "$PROG" "$mode" >"$MT_TMP/plain.out" || fail "glib_heap $mode failed untraced"
    cmp -s "$MT_TMP/plain.out" "$MT_TMP/mt.$mode.out" || fail "output under memtrace differs ($mode)"
    echo "$mode heap: valgrind ${VGH[$mode]} | memtrace ${MTH[$mode]}"
    echo "$mode leaks: valgrind ${VGL[$mode]} | memtrace ${MTL[$mode]}"
    echo "$mode through g_hash_table (bytes blocks): valgrind ${VGX[$mode]} | memtrace ${MTX[$mode]}"

    read -r va vf vb vub vn <<<"${VGH[$mode]}"
    read -r ma mf mb mub mn <<<"${MTH[$mode]}"
    read -r vxb vxn <<<"${VGX[$mode]}"
    read -r mxb mxn <<<"${MTX[$mode]}"
    [ "$vn" = "$mn" ] || fail "$mode: blocks in use: valgrind $vn, memtrace $mn"
    [ "$vxn" = "$mxn" ] || fail "$mode: hash table blocks: valgrind $vxn, memtrace $mxn"
    [ $((vub - vxb)) = $((mub - mxb)) ] ||
        fail "$mode: bytes in use outside the hash tables: valgrind $((vub - vxb)), memtrace $((mub - mxb))"
    [ "$(lost_part "${VGL[$mode]}")" = "$(lost_part "${MTL[$mode]}")" ] ||
        fail "$mode: lost figures differ"
    read -r -a vl <<<"${VGL[$mode]}"
    read -r -a ml <<<"${MTL[$mode]}"
    [ $((vl[6] - vxb)) = $((ml[6] - mxb)) ] && [ "${vl[7]}" = "${ml[7]}" ] ||
        fail "$mode: still reachable outside the hash tables differs"
done

# What the program's GLib work adds: memcheck's.
read -r va0 vf0 vb0 _ <<<"${VGH[base]}"
read -r va1 vf1 vb1 _ <<<"${VGH[work]}"
read -r ma0 mf0 mb0 _ <<<"${MTH[base]}"
read -r ma1 mf1 mb1 _ <<<"${MTH[work]}"
vd="$((va1 - va0)) $((vf1 - vf0)) $((vb1 - vb0))"
md="$((ma1 - ma0)) $((mf1 - mf0)) $((mb1 - mb0))"
echo "work less base (allocs frees bytes): valgrind $vd | memtrace $md"
[ "$vd" = "$md" ] || fail "the program's GLib work counts differently"

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
