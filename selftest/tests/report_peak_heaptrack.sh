#!/usr/bin/env bash
# memtrace's peak and temporary allocations against heaptrack's and massif's
# for the same deterministic program (selftest/programs/peak_temp.c):
#   - the peak: memtrace's bytes at the peak, per allocating function, equal
#     heaptrack's (heaptrack_print -F --flamegraph-cost-type peak, exact
#     integers); the peak's total equals massif's peak snapshot (mem_heap_B)
#     and heaptrack's total without the sites outside the program;
#   - temporary allocations: memtrace's total equals the count heaptrack's
#     recorder prints when the run ends ("temporary allocations: N"); per
#     function against heaptrack_print (-F --flamegraph-cost-type temporary),
#     see the adjustment below.
# heaptrack sees allocations the program alone does not make: its preload
# library links libstdc++, whose start-up allocates a 72704-byte exception
# pool (a stack with no frame in peak_temp.c).  Only sites with a frame in
# peak_temp.c are compared per function; that pool is taken out of
# heaptrack's peak total.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null ||
    skip "heaptrack is not installed"
command -v valgrind >/dev/null && command -v ms_print >/dev/null || skip "valgrind is not installed"
prog="$MT_PROGS/peak_temp"
[ -x "$prog" ] || fail "$prog is not built"

cd "$MT_TMP" || fail "no scratch directory"
start=$(date +%s%N)
"$MEMTRACE" -q -j -o mt.json "$prog" >/dev/null || fail "memtrace failed"
end=$(date +%s%N)
"$MEMTRACE" -q -o mt.txt "$prog" >/dev/null || fail "memtrace (text) failed"
heaptrack -o "$MT_TMP/ht" "$prog" >heaptrack.log 2>&1 || fail "heaptrack failed: $(cat heaptrack.log)"
trace=$(ls "$MT_TMP"/ht.*zst "$MT_TMP"/ht.*gz 2>/dev/null | head -n 1)
[ -n "$trace" ] || fail "no heaptrack trace: $(cat heaptrack.log)"
heaptrack_print -f "$trace" -F ht_peak.txt --flamegraph-cost-type peak >/dev/null 2>&1 ||
    fail "heaptrack_print (peak) failed"
heaptrack_print -f "$trace" -F ht_temp.txt --flamegraph-cost-type temporary >/dev/null 2>&1 ||
    fail "heaptrack_print (temporary) failed"
valgrind --tool=massif --peak-inaccuracy=0.0 --massif-out-file=ms.out "$prog" >/dev/null 2>&1 ||
    fail "massif failed"
ms_print ms.out >ms.txt || fail "ms_print cannot read massif's output"

python3 - mt.json ht_peak.txt ht_temp.txt heaptrack.log ms.out mt.txt "$start" "$end" <<'PY' ||
import collections, json, re, sys
mt_path, ht_peak, ht_temp, ht_log, ms_out, mt_txt, t0, t1 = sys.argv[1:9]
wall = (int(t1) - int(t0)) / 1e9
r = json.load(open(mt_path))
PROG = 'peak_temp.c'

def ht_sites(path):
    """heaptrack_print -F: 'frame (file);frame (file);...; N', outermost first."""
    by_fn, other = collections.Counter(), 0
    for line in open(path):
        stack, _, n = line.rstrip('\n').rpartition(';')
        frames = [f.strip() for f in stack.split(';') if f.strip()]
        inner = [f.split(' (')[0] for f in frames if f.endswith('(%s)' % PROG)]
        if inner:
            by_fn[inner[-1]] += int(n)
        else:
            other += int(n)
    return by_fn, other

def mt_sites(stacks, key):
    by_fn = collections.Counter()
    for s in stacks:
        fns = [f['function'] for f in s['frames'] if (f['file'] or '').endswith(PROG)]
        assert fns, ('a stack with no frame in the program', s)
        by_fn[fns[0].rstrip('()')] += s[key]
    return by_fn

# The peak.
p = r['peak']
ht_fn, ht_other = ht_sites(ht_peak)
mt_fn = mt_sites(p['stacks'], 'bytes')
print('peak per function: heaptrack', dict(ht_fn), '(+%d outside the program)' % ht_other,
      '| memtrace', dict(mt_fn))
assert {k: v for k, v in ht_fn.items() if v} == {k: v for k, v in mt_fn.items() if v}, 'peak sites differ'
assert p['bytes'] == sum(ht_fn.values()) == sum(mt_fn.values()), p
assert p['blocks'] == sum(s['blocks'] for s in p['stacks']), p
ms = open(ms_out).read()
snaps = re.split(r'^#-+\nsnapshot=\d+\n#-+\n', ms, flags=re.M)
peaks = [s for s in snaps if 'heap_tree=peak' in s]
assert len(peaks) == 1, 'massif has no peak snapshot'
ms_peak = int(re.search(r'^mem_heap_B=(\d+)$', peaks[0], re.M).group(1))
print('peak bytes: memtrace', p['bytes'], '| massif', ms_peak, '| heaptrack', sum(ht_fn.values()),
      '+', ht_other)
assert ms_peak == p['bytes'], 'massif peak differs'
# The program sleeps 0.3 s just before building its peak.
assert 0.3 <= p['seconds'] <= float(wall), (p['seconds'], wall)

# Temporary allocations.  heaptrack's recorder counts a free of the pointer
# its thread allocated last, with no allocation or free in between: the rule
# memtrace follows, compared on the total.  heaptrack_print recounts per site
# and matches the allocation *site* (stack and size) rather than the pointer,
# so the first free of a batch of same-site blocks freed after the last of
# them was made counts too: peak_block's and plateau_block's batches add 1
# each there (and the libstdc++ pool, outside the program).  Every other
# site must agree exactly.
t = r['temporary_allocations']
m = re.search(r'temporary allocations:\s*(\d+)', open(ht_log).read())
assert m, 'no recorder figure in heaptrack output'
ht_total = int(m.group(1))
tf, tother = ht_sites(ht_temp)
mt_t = mt_sites(t['stacks'], 'temporary')
print('temporary: heaptrack recorder', ht_total, '| memtrace', t['count'], r['heap']['temporary'],
      '| heaptrack_print per function', dict(tf), '| memtrace', dict(mt_t))
assert t['count'] == r['heap']['temporary'] == ht_total == sum(mt_t.values()), 'temporary totals differ'
batch = {'peak_block': 1, 'plateau_block': 1}
for fn in set(tf) | set(mt_t):
    assert tf[fn] == mt_t[fn] + batch.get(fn, 0), ('temporary per site', fn, tf[fn], mt_t[fn])
assert mt_t['churn_block'] == 500 and mt_t['pair_block'] == 0, mt_t

# Per stack, "temporary" also in the JSON's stacks and the text's top list.
assert all('temporary' in s for s in r['stacks'])
txt = open(mt_txt).read()
assert re.search(r'^PEAK\n    peak heap: %d bytes in %d blocks at ' % (p['bytes'], p['blocks']), txt, re.M), txt
assert re.search(r'^TEMPORARY ALLOCATIONS\n    %d of %d allocations' % (ht_total, r['heap']['allocs']),
                 txt, re.M), txt
assert re.search(r'^500 temporary of 500 allocations\n    #0 .*\n    #1 churn_block\(\)', txt, re.M), txt
PY
    fail "peak or temporary figures differ (files in $MT_TMP)"
echo "PASS: peak and temporary allocations agree with heaptrack and massif"
exit 0
