#!/usr/bin/env bash
# memtrace-fs -n serving "/" (a tree far too big to index by build-id in a
# client's 5 s timeout): a target that asks by build-id for a file the
# sysroot lacks is answered "not found" while the index is still being
# built, so memtrace neither times out nor reconnects, and its report has
# the HEAP SUMMARY of a local trace.
set -u
. "$(dirname "$0")/fs_common.bash"
trap 'stop_fs >/dev/null 2>&1' EXIT
cd "$MT_TMP" || fail "no scratch directory"

cp "$MT_PROGS/demo" demo && strip demo || fail "cannot make a stripped demo"
start_fs "$MT_TMP/fs.log" "$MEMTRACE_FS" -n -p 0 --no-http /
"$MEMTRACE" -q -j -c "127.0.0.1:$FS_PORT" -o remote.json ./demo > /dev/null 2> remote.err ||
    fail "memtrace -c failed: $(cat remote.err)"
! grep -q "reconnect\|timed out" remote.err || fail "memtrace waited on memtrace-fs: $(cat remote.err)"
"$MEMTRACE" -q -j -o local.json ./demo > /dev/null 2> local.err || fail "memtrace failed: $(cat local.err)"
[ "$(memtrace_json_figures remote.json)" = "$(memtrace_json_figures local.json)" ] ||
    fail "the reports differ: $(memtrace_json_figures remote.json) against $(memtrace_json_figures local.json)"
echo "remote: $(memtrace_json_figures remote.json), as local; memtrace-fs said:"
grep "index" "$MT_TMP/fs.log"
