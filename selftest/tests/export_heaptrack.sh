#!/usr/bin/env bash
# --format heaptrack read by heaptrack's own reader (heaptrack_print 1.4):
#   - on memtrace's file, heaptrack_print's totals (allocation calls,
#     temporary allocations, peak, leaked: exact integers from its -F
#     stacks files) equal memtrace's JSON report of the same program;
#   - per allocating function of the program, the four figures equal those
#     heaptrack_print gives for heaptrack's own run of the program, and
#     so do the function names and file:line of the program's frames;
#     temporary allocations are compared with heaptrack's recorder (see
#     report_peak_heaptrack.sh for why heaptrack_print's recount differs).
# heaptrack's run also holds libstdc++'s exception pool (its preload
# library links libstdc++): sites with no frame in the program are left out.
# A second program, selftest/programs/intercept_cxx.cpp (new, new[], delete
# and their aligned forms), is compared per function on calls, peak and
# leaked bytes; its own libstdc++ pool is in both runs, but heaptrack frees
# it at exit (__gnu_cxx::__freeres) and memtrace leaves it in use, so it is
# left out of the leaked figures.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null ||
    skip "missing tool: heaptrack"
prog="$MT_PROGS/export_mix"
[ -x "$prog" ] || fail "$prog is not built"
cd "$MT_TMP" || fail "no scratch directory"

"$MEMTRACE" -q -j --record mt.rec -o mt.json "$prog" >/dev/null || fail "memtrace -j failed"
"$MEMTRACE" -q --format heaptrack -o mt.gz "$prog" >/dev/null || fail "memtrace --format heaptrack failed"
gzip -t mt.gz || fail "not a gzip file"
heaptrack -o "$MT_TMP/ht" "$prog" >heaptrack.log 2>&1 || fail "heaptrack failed: $(cat heaptrack.log)"
trace=$(ls "$MT_TMP"/ht*.zst "$MT_TMP"/ht*.gz 2>/dev/null | head -n 1)
[ -n "$trace" ] || fail "no heaptrack trace: $(cat heaptrack.log)"
for who in mt ht; do
    f=mt.gz
    [ $who = ht ] && f=$trace
    heaptrack_print -f "$f" -a -p -l -T -n 50 -s 50 >${who}_print.txt 2>${who}_print.err ||
        fail "heaptrack_print $f failed: $(cat ${who}_print.err)"
    for cost in allocations temporary leaked peak; do
        heaptrack_print -f "$f" -F ${who}_$cost.txt --flamegraph-cost-type $cost >/dev/null 2>&1 ||
            fail "heaptrack_print -F $cost on $f failed"
    done
done

# The same export from the recording (--replay keeps figures, no blocks).
"$MEMTRACE" --replay mt.rec --format heaptrack -o rp.gz || fail "memtrace --replay --format heaptrack failed"
for cost in allocations temporary leaked peak; do
    heaptrack_print -f rp.gz -F rp_$cost.txt --flamegraph-cost-type $cost >/dev/null 2>&1 ||
        fail "heaptrack_print -F $cost on the replay's file failed"
done

python3 - <<'PY' || fail "heaptrack_print's figures differ (files in $MT_TMP)"
import collections, json, os, re
r = json.load(open('mt.json'))
PROG = 'export_mix.c'

def sites(path):
    """heaptrack_print -F: 'frame (file);...; N' outermost first: per innermost
    program function, and the total."""
    by_fn, total = collections.Counter(), 0
    for line in open(path):
        stack, _, n = line.rstrip('\n').rpartition(';')
        total += int(n)
        inner = [f.strip().split(' (')[0] for f in stack.split(';') if f.strip().endswith('(%s)' % PROG)]
        if inner:
            by_fn[inner[-1]] += int(n)
    return by_fn, total

fig = {}
for who in ('mt', 'ht'):
    for cost in ('allocations', 'temporary', 'leaked', 'peak'):
        fig[who, cost] = sites('%s_%s.txt' % (who, cost))

h, p = r['heap'], r['peak']
want = {'allocations': h['allocs'], 'temporary': h['temporary'], 'leaked': h['in_use_bytes'],
        'peak': p['bytes']}
for cost, v in want.items():
    fig['rp', cost] = sites('rp_%s.txt' % cost)
    print('%-11s memtrace %8d | heaptrack_print on memtrace\'s file %8d, on the replay\'s %8d' %
          (cost, v, fig['mt', cost][1], fig['rp', cost][1]))
    assert fig['mt', cost][1] == v, cost
    assert fig['rp', cost] == fig['mt', cost], ('replay', cost)
txt = open('mt_print.txt').read()
m = re.search(r'^calls to allocation functions: (\d+) ', txt, re.M)
assert m and int(m.group(1)) == h['allocs'], 'summary calls'
m = re.search(r'^temporary memory allocations: (\d+) ', txt, re.M)
assert m and int(m.group(1)) == h['temporary'], 'summary temporary'

for cost in ('allocations', 'leaked', 'peak'):
    a, b = fig['mt', cost][0], fig['ht', cost][0]
    print('%-11s per function: memtrace\'s file %s | heaptrack\'s run %s' % (cost, dict(a), dict(b)))
    assert a == b, cost
rec = re.search(r'temporary allocations:\s*(\d+)', open('heaptrack.log').read())
assert rec, 'no recorder figure in heaptrack output'
print('temporary: heaptrack recorder', rec.group(1), '| memtrace', h['temporary'])
assert int(rec.group(1)) == h['temporary'] == fig['mt', 'temporary'][1]
assert fig['mt', 'temporary'][0]['temp_block'] == 300 and fig['mt', 'temporary'][0]['pair_block'] == 0
assert fig['mt', 'leaked'][0]['late_block'] == 35000 and fig['mt', 'peak'][0]['peak_block'] == 1000000

# The program's frames: function and file:line, as heaptrack_print names them.
def frames(path):
    lines = open(path).read().split('\n')
    out = set()
    for i, l in enumerate(lines[1:], 1):
        m = re.match(r'\s*at (.*):(\d+)$', l)
        if m and m.group(1).endswith(PROG):
            out.add((lines[i - 1].strip(), os.path.basename(m.group(1)), int(m.group(2))))
    return out
a, b = frames('mt_print.txt'), frames('ht_print.txt')
print('program frames: memtrace\'s file', len(a), '| heaptrack\'s run', len(b))
assert a == b and len(a) >= 10, (sorted(a ^ b))
PY
# The C++ program: memtrace's file against heaptrack's own run, per function.
cxx="$MT_PROGS/intercept_cxx"
[ -x "$cxx" ] || fail "$cxx is not built"
"$MEMTRACE" -q --format heaptrack -o cxx.gz "$cxx" >/dev/null || fail "memtrace on $cxx failed"
heaptrack -o "$MT_TMP/hcxx" "$cxx" >hcxx.log 2>&1 || fail "heaptrack $cxx failed: $(cat hcxx.log)"
htc=$(ls "$MT_TMP"/hcxx*.zst "$MT_TMP"/hcxx*.gz 2>/dev/null | head -n 1)
[ -n "$htc" ] || fail "no heaptrack trace: $(cat hcxx.log)"
for cost in allocations leaked peak; do
    heaptrack_print -f cxx.gz -F cxx_mt_$cost.txt --flamegraph-cost-type $cost >/dev/null 2>&1 &&
        heaptrack_print -f "$htc" -F cxx_ht_$cost.txt --flamegraph-cost-type $cost >/dev/null 2>&1 ||
        fail "heaptrack_print -F $cost failed"
done
python3 - <<'PY' || fail "heaptrack_print's figures differ for intercept_cxx (files in $MT_TMP)"
import collections
def sites(path):
    by = collections.Counter()
    for line in open(path):
        stack, _, n = line.rstrip('\n').rpartition(';')
        inner = [f.strip().split(' (')[0] for f in stack.split(';') if f.strip().endswith('(intercept_cxx.cpp)')]
        by[inner[-1] if inner else None] += int(n)
    return by
for cost in ('allocations', 'leaked', 'peak'):
    a, b = sites('cxx_mt_%s.txt' % cost), sites('cxx_ht_%s.txt' % cost)
    print('intercept_cxx %-11s memtrace\'s file %s | heaptrack\'s run %s' % (cost, dict(a), dict(b)))
    if cost == 'leaked':
        del a[None], b[None]
    assert a == b and sum(a.values()) > 0, cost
PY
echo "PASS: heaptrack_print reads memtrace's trace with memtrace's and heaptrack's own figures"
exit 0
