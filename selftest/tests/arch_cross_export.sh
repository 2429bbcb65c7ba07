#!/usr/bin/env bash
# The exports as built for aarch64 and arm (make cross), run under qemu-user:
# selftest/cross/export_write fills books by a fixed script (blocks in use
# at the peak and at the end, temporary ones, one that reaches the peak, a
# clear, a missed free) and writes the JSON report, heaptrack's trace and
# the pprof profile.  heaptrack_print (-F, exact integers) gives the JSON's
# allocation calls, temporary allocations, leaked bytes and peak; npm's
# pprof-format gives its four sample-type totals, the mapping's build-id
# and the inlined function as a second line of its location.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v heaptrack_print >/dev/null || skip "missing tool: heaptrack"
pf="$MT_ROOT/selftest/node/node_modules/pprof-format"
command -v node >/dev/null && [ -d "$pf" ] || skip "missing tool: pprof-format (npm, tools/install-deps.sh)"
cd "$MT_TMP" || fail "no scratch directory"
ran=0
for a in aarch64 arm; do
    tool="$MT_ROOT/build-$a/cross/export_write"
    [ -x "$tool" ] || continue
    qemu=qemu-$a sysroot=/usr/aarch64-linux-gnu
    [ $a = arm ] && sysroot=/usr/arm-linux-gnueabihf
    command -v "$qemu" >/dev/null || skip "missing tool: $qemu"
    mkdir -p $a
    "$qemu" -L $sysroot "$tool" "$MT_TMP/$a" || fail "$a: export_write failed"
    [ -f $a/out.pb.gz ] || fail "$a: no pprof profile (built without protobuf-c?)"
    for cost in allocations temporary leaked peak; do
        heaptrack_print -f $a/out.heaptrack.gz -F $a/ht_$cost.txt --flamegraph-cost-type $cost \
            >/dev/null 2>&1 || fail "$a: heaptrack_print cannot read the trace"
    done
    node - "$pf" $a/out.pb.gz >$a/pprof.json 2>$a/node.err <<'JS' || fail "$a: pprof-format cannot decode: $(cat $a/node.err)"
const zlib = require('zlib'), fs = require('fs');
const { Profile } = require(process.argv[2]);
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[3])));
const str = i => p.stringTable.strings[Number(i)];
const fn = new Map(p.function.map(f => [String(f.id), str(f.name)]));
console.log(JSON.stringify({
  totals: [0, 1, 2, 3].map(i => p.sample.reduce((s, x) => s + Number(x.value[i]), 0)),
  build_ids: p.mapping.map(m => str(m.buildId)),
  lines: p.location.map(l => l.line.map(x => fn.get(String(x.functionId)))),
}));
JS
    python3 - $a <<'PY' || fail "$a: the exports' figures differ (files in $MT_TMP/$a)"
import json, sys
a = sys.argv[1]
r, pp = json.load(open(a + '/out.json')), json.load(open(a + '/pprof.json'))
h = r['heap']
def total(cost):
    return sum(int(l.rsplit(' ', 1)[1]) for l in open('%s/ht_%s.txt' % (a, cost)))
ht = [total(c) for c in ('allocations', 'temporary', 'leaked', 'peak')]
want = [h['allocs'], h['temporary'], h['in_use_bytes'], r['peak']['bytes']]
print(a, 'heaptrack_print', ht, '| pprof-format', pp['totals'], '| memtrace JSON', want,
      h['bytes_allocated'], h['in_use_blocks'])
assert ht == want and want == [94, 41, 42014, 457591], 'heaptrack'
assert pp['totals'] == [h['allocs'], h['bytes_allocated'], h['in_use_blocks'], h['in_use_bytes']], 'pprof'
assert pp['build_ids'] == ['0102030405060708090a0b0c0d0e0f1011121314'], pp['build_ids']
assert ['fn5', 'fn6'] in pp['lines'], pp['lines']
PY
    ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no cross build (make cross)"
echo "PASS: the exports of the aarch64 and arm builds read back with the books' figures ($ran CPUs)"
exit 0
