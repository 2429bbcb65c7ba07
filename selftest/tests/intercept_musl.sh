#!/usr/bin/env bash
# Programs linked against musl (musl-gcc): musl's malloc lives in its
# dynamic linker (/lib/ld-musl-*.so.1 is libc.so), which must be found as
# the interpreter, hold the rendezvous (_dl_debug_state) and get the
# intercepts.  valgrind does not hook musl's allocator reliably, so the
# oracle is the programs' own known counts:
#  - intercept_counts prints the figures it expects (checked against
#    valgrind on its glibc build first, so the program's arithmetic is
#    right);
#  - the same program linked statically with musl;
#  - intercept_dlopen loading the plugin (dlopen through musl's rendezvous)
#    three times: the plugin's calls, summed below from its source.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool musl-gcc musl-tools
[ -z "${MT_TARGET_CFLAGS:-}" ] || skip "Debian's musl-gcc builds x86_64 programs only (this memtrace traces $MT_TARGET_CFLAGS)"
cd "$MT_TMP"
src=$MT_ROOT/selftest/programs

# The known counts, cross-checked on glibc by valgrind.
if command -v valgrind >/dev/null; then
    own=$("$MT_PROGS/intercept_counts" | sed -n 's/^expect: //p' | cut -d' ' -f1-5)
    vg=$(valgrind_summary "$MT_PROGS/intercept_counts") || fail "valgrind failed"
    [ "$own" = "$vg" ] || fail "intercept_counts' own figures $own differ from valgrind's $vg"
fi

musl-gcc -std=gnu11 -g -O0 -o counts_musl "$src/intercept_counts.c" || fail "musl-gcc failed"
musl-gcc -std=gnu11 -g -O0 -o dlopen_musl "$src/intercept_dlopen.c" || fail "musl-gcc failed"
musl-gcc -std=gnu11 -g -O0 -fPIC -shared -o libplugin_musl.so "$src/lib/intercept_plugin.c" ||
    fail "musl-gcc failed"
readelf -l counts_musl | grep -q 'ld-musl' || fail "counts_musl does not use musl's dynamic linker"

json_figures() {
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d['heap']
print(h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks'],
      d['mapped']['bytes'])
PY
}

"$MEMTRACE" -j -o counts.json ./counts_musl > counts.out 2> counts.err || fail "memtrace failed: $(cat counts.err)"
want=$(sed -n 's/^expect: //p' counts.out)
got=$(json_figures counts.json)
echo "counts_musl: expected $want | memtrace $got"
[ -n "$want" ] && [ "$want" = "$got" ] || fail "musl figures differ (allocs frees bytes in_use_bytes in_use_blocks mapped)"
grep -q 'libc.so: [0-9]* functions intercepted' counts.err || fail "musl's libc.so was not intercepted: $(cat counts.err)"

# musl linked statically: found through .symtab; musl allocates nothing
# before main, so the figures are the program's own with no clear.
musl-gcc -std=gnu11 -static -g -O0 -o counts_musl_static "$src/intercept_counts.c" || fail "musl-gcc -static failed"
"$MEMTRACE" -j -o static.json ./counts_musl_static > static.out 2> static.err || fail "memtrace failed: $(cat static.err)"
want=$(sed -n 's/^expect: //p' static.out)
got=$(json_figures static.json)
echo "counts_musl_static: expected $want | memtrace $got"
[ -n "$want" ] && [ "$want" = "$got" ] || fail "static musl figures differ"

# Each round r of plugin_work: 10 x (calloc, realloc = free + alloc, free)
# with sizes (i+1)(8+r) then 100(i+1); 10 x new(24+i)/delete; new[](100+r)
# and delete[]; a leaked new(200+r); a kept malloc(32+r).  The driver frees
# round 0's block.  (musl's dlopen allocates through its own internal
# allocator, and musl's stdout buffer is static.)
want=$(python3 -c '
allocs = frees = total = 0
for r in range(3):
    allocs += 10 * 2 + 10 + 1 + 1 + 1
    frees += 10 * 2 + 10 + 1
    total += sum((i + 1) * (8 + r) + 100 * (i + 1) + 24 + i for i in range(10))
    total += (100 + r) + (200 + r) + (32 + r)
in_use = sum(200 + r for r in range(3)) + (32 + 1) + (32 + 2)
print(allocs, frees + 1, total, in_use, 5, 0)')
"$MEMTRACE" -j -o dlopen.json ./dlopen_musl "$PWD/libplugin_musl.so" 3 > /dev/null 2> dlopen.err ||
    fail "memtrace failed: $(cat dlopen.err)"
got=$(json_figures dlopen.json)
echo "dlopen_musl: expected $want | memtrace $got"
[ "$want" = "$got" ] || fail "musl dlopen figures differ"
grep -q 'libplugin_musl.so: 4 functions intercepted' dlopen.err ||
    fail "the plugin's operators were not intercepted after dlopen: $(cat dlopen.err)"
exit 0
