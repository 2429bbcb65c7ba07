#!/usr/bin/env bash
# Two allocators live in one process: a program linked with jemalloc loads a
# plugin whose malloc and free are glibc's (RTLD_DEEPBIND; then dlmopen, a
# namespace with a second libc).  Each one's own pairs are fine; one block
# the program made with jemalloc is released by the plugin's glibc free,
# where glibc aborts (the program's handler ends it with status 0).
# Oracles: with RTLD_DEEPBIND, valgrind memcheck told both allocators'
# soname (it replaces both, so the program runs on) gives the figures; the
# error is memtrace's alone: exactly one, "Free by another allocator",
# naming libjemalloc.so.2 as the block's maker and libc.so.6 as the
# releaser, and no other.  valgrind does not intercept a dlmopen namespace:
# there the same single error, and the 200 pairs and the crossing block
# counted.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
src=$MT_ROOT/selftest/programs/lib
cd "$MT_TMP"
gcc $MT_TARGET_CFLAGS -g -O0 -fPIC -shared -o libtwo_plugin.so "$src/two_heaps_plugin.c" ||
    fail "cannot build the plugin"
gcc $MT_TARGET_CFLAGS -g -O0 -o two_heaps "$src/two_heaps.c" -ljemalloc -ldl ||
    fail "cannot build two_heaps"

check_one_error() {
    python3 - "$1" <<'PY' || fail "$1: not exactly the one error expected"
import json, sys
d = json.load(open(sys.argv[1]))
errs = d['errors']
kinds = [(e['kind'], e.get('made_by'), e.get('released_by'), e['function']) for e in errs]
want = [('other_allocator_free', 'libjemalloc.so.2', 'libc.so.6', 'free')]
if kinds != want or d.get('errors_not_listed'):
    sys.exit('errors: %s, wanted %s' % (kinds, want))
if errs[0]['block']['state'] != 'live' or errs[0]['block']['size'] != 64:
    sys.exit('the block: %s' % errs[0]['block'])
PY
}

vg_log=$MT_TMP/vg.log
valgrind --soname-synonyms=somalloc='*jemalloc*' --run-libc-freeres=no --run-cxx-freeres=no \
    --log-file="$vg_log" ./two_heaps "$MT_TMP/libtwo_plugin.so" deepbind >/dev/null 2>&1 ||
    fail "valgrind: two_heaps ended with status $?"
vg=$(valgrind_log_figures "$vg_log")
"$MEMTRACE" -q -j -o deepbind.json ./two_heaps "$MT_TMP/libtwo_plugin.so" deepbind >/dev/null \
    2>deepbind.err || fail "memtrace or two_heaps failed: $(tail -n 3 deepbind.err)"
grep -q "glibc refused the other allocator's block" deepbind.err || fail "glibc did not abort on the block"
mt=$(memtrace_json_figures deepbind.json)
echo "deepbind: valgrind: $vg | memtrace: $mt"
[ "$vg" = "$mt" ] || fail "figures differ (allocs frees bytes in_use_bytes in_use_blocks)"
grep -q "Free by another allocator" deepbind.err || fail "the error was not printed as found"
check_one_error deepbind.json

"$MEMTRACE" -q -j -o dlmopen.json ./two_heaps "$MT_TMP/libtwo_plugin.so" dlmopen >/dev/null \
    2>dlmopen.err || fail "memtrace or two_heaps failed: $(tail -n 3 dlmopen.err)"
grep -q "glibc refused the other allocator's block" dlmopen.err || fail "glibc did not abort on the block"
check_one_error dlmopen.json
python3 - dlmopen.json <<'PY' || fail "dlmopen: the pairs were not all counted"
import json, sys
d = json.load(open(sys.argv[1]))
h = d['heap']
libcs = [a for a in d['allocators'] if a.endswith('/libc.so.6')]
print('dlmopen: allocs %d frees %d, allocators %s' % (h['allocs'], h['frees'], d['allocators']))
if h['allocs'] < 201 or h['frees'] < 201 or len(libcs) != 2:
    sys.exit('allocs %d frees %d, libcs %s' % (h['allocs'], h['frees'], libcs))
PY
exit 0
