# The GLib program's verdict (selftest/programs/lib/glib_heap.c), shared by
# heaps_glib.sh (x86_64) and the boards' heaps phase (board_common.bash):
# memcheck's log and memtrace's JSON report of the same mode, each run with
# G_SLICE=always-malloc.  Why these figures and not all of them:
# heaps_glib.sh's head (GLib's hash tables take another path under
# valgrind, so their blocks are set aside).  Needs lib.bash.
. "$MT_ROOT/selftest/tests/leak_common.bash"

# Bytes and blocks in use allocated through g_hash_table_*: of a memcheck
# log (--show-leak-kinds=all: every block in a loss record), of a JSON report.
glib_vg_hash_part() {
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
glib_mt_hash_part() {
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

# glib_compare VG_LOG MT_JSON [exact]: GLIB_HEAP (both HEAP SUMMARYs:
# allocs frees bytes in_use_bytes in_use_blocks), GLIB_LEAKS (both LEAK
# SUMMARYs), GLIB_HASH (both hash-table parts); GLIB_WHY empty and status 0
# when memtrace books the mode as memcheck does.  "exact": where GLib's
# hash tables take no other path under valgrind (32-bit CPUs: ghash.c's
# small arrays are for 64-bit ones only), both summaries whole.
glib_compare() {
    local vgh vgl vgx mth mtl mtx
    GLIB_WHY=
    vgh=$(valgrind_log_figures "$1" 2>&1) || { GLIB_WHY="memcheck's log: $vgh"; return 1; }
    vgl=$(leak_summary_of_text "$1" 2>&1) || { GLIB_WHY="memcheck's leaks: $vgl"; return 1; }
    mth=$(memtrace_json_figures "$2" 2>&1) || { GLIB_WHY="memtrace's report: $mth"; return 1; }
    mtl=$(leak_summary_of_json "$2" 2>&1) || { GLIB_WHY="memtrace's leaks: $mtl"; return 1; }
    vgx=$(glib_vg_hash_part "$1")
    mtx=$(glib_mt_hash_part "$2")
    # shellcheck disable=SC2034 # read by the callers
    GLIB_HEAP="valgrind $vgh | memtrace $mth"
    # shellcheck disable=SC2034
    GLIB_LEAKS="valgrind $vgl | memtrace $mtl"
    # shellcheck disable=SC2034
    GLIB_HASH="valgrind $vgx | memtrace $mtx"
    local vub vn mub mn vxb vxn mxb mxn _
    read -r _ _ _ vub vn <<<"$vgh"
    read -r _ _ _ mub mn <<<"$mth"
    read -r vxb vxn <<<"$vgx"
    read -r mxb mxn <<<"$mtx"
    local -a vl ml
    read -r -a vl <<<"$vgl"
    read -r -a ml <<<"$mtl"
    if [ "${3:-}" = exact ]; then
        [ "$vgh" = "$mth" ] || GLIB_WHY="HEAP SUMMARY differs"
        [ "$vgl" = "$mtl" ] || GLIB_WHY="${GLIB_WHY:+$GLIB_WHY, }LEAK SUMMARY differs"
    elif [ "$vn" != "$mn" ]; then
        GLIB_WHY="blocks in use: valgrind $vn, memtrace $mn"
    elif [ "$vxn" != "$mxn" ]; then
        GLIB_WHY="hash table blocks: valgrind $vxn, memtrace $mxn"
    elif [ $((vub - vxb)) != $((mub - mxb)) ]; then
        GLIB_WHY="bytes in use outside the hash tables: valgrind $((vub - vxb)), memtrace $((mub - mxb))"
    elif [ "$(lost_part "$vgl")" != "$(lost_part "$mtl")" ]; then
        GLIB_WHY="lost figures differ"
    elif [ $((vl[6] - vxb)) != $((ml[6] - mxb)) ] || [ "${vl[7]}" != "${ml[7]}" ]; then
        GLIB_WHY="still reachable outside the hash tables differs"
    fi
    [ -z "$GLIB_WHY" ]
}

# glib_work_delta VG_BASE VG_WORK MT_BASE MT_WORK: what the program's GLib
# work adds to GLib's start ("work" less "base": allocs frees bytes) in
# GLIB_DELTA; status 0 when memtrace's is memcheck's.
glib_work_delta() {
    local va0 vf0 vb0 va1 vf1 vb1 ma0 mf0 mb0 ma1 mf1 mb1 _
    read -r va0 vf0 vb0 _ <<<"$(valgrind_log_figures "$1" 2>&1)"
    read -r va1 vf1 vb1 _ <<<"$(valgrind_log_figures "$2" 2>&1)"
    read -r ma0 mf0 mb0 _ <<<"$(memtrace_json_figures "$3" 2>&1)"
    read -r ma1 mf1 mb1 _ <<<"$(memtrace_json_figures "$4" 2>&1)"
    local x
    for x in "$va0" "$vf0" "$vb0" "$va1" "$vf1" "$vb1" "$ma0" "$mf0" "$mb0" "$ma1" "$mf1" "$mb1"; do
        [[ $x =~ ^[0-9]+$ ]] || { GLIB_DELTA="a report without its figures"; return 1; }
    done
    local vd="$((va1 - va0)) $((vf1 - vf0)) $((vb1 - vb0))" md="$((ma1 - ma0)) $((mf1 - mf0)) $((mb1 - mb0))"
    # shellcheck disable=SC2034 # read by the callers
    GLIB_DELTA="valgrind $vd | memtrace $md"
    [ "$vd" = "$md" ]
}
