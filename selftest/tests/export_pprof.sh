#!/usr/bin/env bash
# --format pprof read back by a decoder nobody here wrote: npm's
# pprof-format (selftest/node, installed by tools/install-deps.sh).
#   - the totals of the four sample types (alloc_objects, alloc_space,
#     inuse_objects, inuse_space) equal memtrace's JSON report ("heap");
#   - per stack in use, inuse_objects/inuse_space equal the JSON's stacks;
#   - the program's frames (function, file, line, inlined functions as
#     more lines of one location) are the JSON's;
#   - each mapping's build-id is the one readelf -n prints for its file.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v node >/dev/null || skip "missing tool: node"
pf="$MT_ROOT/selftest/node/node_modules/pprof-format"
[ -d "$pf" ] || skip "missing tool: pprof-format (npm, tools/install-deps.sh)"
command -v readelf >/dev/null || skip "missing tool: readelf"
prog="$MT_PROGS/export_mix"
[ -x "$prog" ] || fail "$prog is not built"
cd "$MT_TMP" || fail "no scratch directory"

"$MEMTRACE" -q --format pprof -o mt.pb.gz "$prog" >out.txt 2>&1 || {
    grep -q "not in this build" out.txt && skip "this memtrace is built without pprof"
    fail "memtrace --format pprof failed: $(cat out.txt)"
}
"$MEMTRACE" -q -j -o mt.json "$prog" >/dev/null || fail "memtrace -j failed"
gzip -t mt.pb.gz || fail "not a gzip file"

cat >decode.js <<'JS'
// pprof-format's Profile.decode; prints what the check below needs as JSON.
const zlib = require('zlib'), fs = require('fs');
const { Profile } = require(process.argv[2]);
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[3])));
const str = i => p.stringTable.strings[Number(i)];
const fn = new Map(p.function.map(f => [String(f.id), f]));
const loc = new Map(p.location.map(l => [String(l.id), l]));
const map = new Map(p.mapping.map(m => [String(m.id), m]));
const out = {
  types: p.sampleType.map(t => str(t.type) + '/' + str(t.unit)),
  default_type: str(p.defaultSampleType),
  mappings: p.mapping.map(m => ({ file: str(m.filename), build_id: str(m.buildId),
                                  start: String(m.memoryStart), limit: String(m.memoryLimit) })),
  samples: p.sample.map(s => ({
    values: s.value.map(Number),
    locations: s.locationId.map(id => {
      const l = loc.get(String(id));
      const m = map.get(String(l.mappingId));
      return { address: String(l.address), module: m ? str(m.filename) : null,
               offset: m ? String(BigInt(l.address) - BigInt(m.memoryStart)) : null,
               inside: m ? BigInt(l.address) >= BigInt(m.memoryStart) && BigInt(l.address) < BigInt(m.memoryLimit) : false,
               lines: l.line.map(ln => { const f = fn.get(String(ln.functionId));
                                         return [str(f.name), str(f.filename), Number(ln.line)]; }) };
    }) })),
};
console.log(JSON.stringify(out));
JS
node decode.js "$pf" mt.pb.gz >pprof.json 2>node.err || fail "pprof-format cannot decode it: $(cat node.err)"

python3 - "$prog" <<'PY' || fail "pprof figures differ (files in $MT_TMP)"
import collections, json, re, subprocess, sys
prog = sys.argv[1]
r, pp = json.load(open('mt.json')), json.load(open('pprof.json'))
assert pp['types'] == ['alloc_objects/count', 'alloc_space/bytes', 'inuse_objects/count',
                       'inuse_space/bytes'], pp['types']
assert pp['default_type'] == 'inuse_space', pp['default_type']
tot = [sum(s['values'][i] for s in pp['samples']) for i in range(4)]
h = r['heap']
want = [h['allocs'], h['bytes_allocated'], h['in_use_blocks'], h['in_use_bytes']]
print('totals: pprof-format', tot, '| memtrace JSON', want)
assert tot == want

# Per stack in use: the JSON's frames from the caller of malloc on (pprof
# leaves the allocator out), keyed by module and offset (the two runs have
# different addresses; the offset in the module is the address less the
# mapping's start for these objects, whose first segment is at 0).
def key_json(s):
    return tuple((f['module'], int(f['offset'], 16)) for f in s['frames'][1:]
                 if not f['inlined'] and not f['tail_call'])
def key_pp(s):
    return tuple((l['module'], int(l['offset'])) for l in s['locations'])
jin = {key_json(s): (s['blocks'], s['bytes']) for s in r['stacks']}
pin = {key_pp(s): tuple(s['values'][2:]) for s in pp['samples'] if s['values'][2]}
print('stacks in use: memtrace', sorted(jin.values()), '| pprof', sorted(pin.values()))
assert jin == pin

# The program's frames, with their inlined functions.
prog_lines = set()
for s in pp['samples']:
    for l in s['locations']:
        assert l['inside'], ('a location outside its mapping', l)
        for fn, file, line in l['lines']:
            if file.endswith('export_mix.c'):
                prog_lines.add((fn, line))
json_lines = {(f['function'], f['line']) for s in r['stacks'] + r['peak']['stacks']
              for f in s['frames'] if (f['file'] or '').endswith('export_mix.c')}
print('program frames: pprof', len(prog_lines), '| memtrace JSON (stacks, peak)', len(json_lines))
assert json_lines <= prog_lines and len(prog_lines) >= 10, sorted(json_lines - prog_lines)
late = [l['lines'] for s in pp['samples'] for l in s['locations']
        if l['lines'] and l['lines'][0][0] == 'inl_alloc']
assert late and [x[0] for x in late[0]] == ['inl_alloc', 'late_block'], late

# Mappings: the program first, each build-id as readelf -n has it.
assert pp['mappings'][0]['file'] == prog, pp['mappings'][0]
for m in pp['mappings']:
    note = subprocess.run(['readelf', '-n', m['file']], capture_output=True, text=True).stdout
    b = re.search(r'Build ID: ([0-9a-f]+)', note)
    print('mapping', m['file'], m['build_id'], '| readelf', b and b.group(1))
    assert b and b.group(1) == m['build_id'], m
PY
echo "PASS: pprof-format reads memtrace's profile with the JSON report's figures"
exit 0
