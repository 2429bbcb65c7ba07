#!/usr/bin/env bash
# --record samples where the RSS went (record.h's 'M' records):
#   - rss_steps_record (rss_common.bash): at each of three steps of the
#     rss_steps program, the recorded RSS against the kernel's VmRSS and
#     smaps_rollup Rss that the program read itself, and the live heap part
#     against its heap;
#   - the parts add up to the RSS in every record;
#   - memtrace --replay --at that sample's time gives the same figures in
#     its JSON "memory" (memtrace's own bytes too), and --diff between steps 1 and 3 their change
#     (JSON and text).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/rss_common.bash"
cd "$MT_TMP"
declare -a heap at
rss_steps_record

python3 - rec.mt <<'PY' || fail "an RSS record's parts do not add up"
import os, sys
sys.path.insert(0, os.path.join(os.environ['MT_ROOT'], 'selftest/tests'))
import record_samples
m = [s['rss'] for s in record_samples.samples(open(sys.argv[1], 'rb').read()) if s['rss']]
assert len(m) >= 3 and all(sum(r[1:8]) == r[0] for r in m), m
print('%d RSS records, each the sum of its parts' % len(m))
PY

for k in 1 3; do
    "$MEMTRACE" --replay rec.mt --at "${at[$k]}" -j -o "at$k.json" || fail "replay --at ${at[$k]}"
    python3 - "at$k.json" "sample.$k" <<'PY' || fail "replay --at ${at[$k]}: its memory differs from the recording's"
import json, sys
j, s = json.load(open(sys.argv[1]))['memory'], json.load(open(sys.argv[2]))
keys = ['live_heap', 'allocator', 'program_mmaps', 'thread_stacks', 'modules', 'shared', 'rest']
assert j['rss'] == s['rss'][0] and [j['parts'][k]['bytes'] for k in keys] == s['rss'][1:8], (j, s)
assert j['memtrace_bytes'] == s['rss'][10], (j['memtrace_bytes'], s['rss'])
assert abs(j['recorded_at'] * 1e6 - s['us']) < 1, (j['recorded_at'], s['us'])
PY
done
"$MEMTRACE" --replay rec.mt --diff "${at[1]}" "${at[3]}" -j -o diff.json || fail "replay --diff"
"$MEMTRACE" --replay rec.mt --diff "${at[1]}" "${at[3]}" > diff.txt || fail "replay --diff (text)"
python3 - diff.json sample.1 sample.3 diff.txt <<'PY' || fail "--diff: the RSS change differs from the recording's"
import json, sys
d = json.load(open(sys.argv[1]))['memory']
a, b = json.load(open(sys.argv[2]))['rss'], json.load(open(sys.argv[3]))['rss']
assert d['rss'] == b[0] - a[0] and d['parts']['live_heap']['bytes'] == b[1] - a[1], (d, a, b)
text = open(sys.argv[4]).read()
assert '    RSS: %+d bytes (live heap %+d,' % (b[0] - a[0], b[1] - a[1]) in text, text
print('--diff: RSS %+d, live heap %+d' % (d['rss'], d['parts']['live_heap']['bytes']))
PY
echo "PASS"
