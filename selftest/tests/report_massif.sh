#!/usr/bin/env bash
# --format massif read by ms_print (valgrind's own reader of massif files)
# for the deterministic peak_temp program (selftest/programs/peak_temp.c):
#   - ms_print parses memtrace's file, names its peak snapshot, and prints
#     the peak's stacks (peak_block, baseline_block);
#   - the peak snapshot's mem_heap_B equals memtrace's JSON peak bytes and
#     the peak total valgrind --tool=massif finds on the same program
#     (--peak-inaccuracy=0.0; heap bytes, its extra bytes left out);
#   - the same from a recording (--replay --format massif) and from the
#     console's report -f massif > FILE.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
need_tool ms_print valgrind
cd "$MT_TMP"
PROG="$MT_PROGS/peak_temp"

"$MEMTRACE" -q --format massif -o mt.massif --record rec.mt "$PROG" || fail "memtrace --format massif failed"
"$MEMTRACE" -q -j -o mt.json "$PROG" || fail "memtrace -j failed"
"$MEMTRACE" --replay rec.mt --format massif -o replay.massif || fail "replay --format massif failed"
printf 'report -f massif > console.massif\n' |
    "$MEMTRACE" -q -C "$PROG" > console.out 2>&1 || fail "memtrace -C failed: $(cat console.out)"
valgrind --tool=massif --peak-inaccuracy=0.0 --massif-out-file=vg.massif "$PROG" >/dev/null 2>&1 ||
    fail "valgrind --tool=massif failed"

for f in mt.massif replay.massif console.massif; do
    ms_print "$f" > "$f.txt" 2> "$f.err" || fail "ms_print cannot read $f: $(cat "$f.err")"
done
python3 - mt.json vg.massif mt.massif replay.massif <<'PY' || fail "massif figures differ"
import json, re, sys
want = json.load(open(sys.argv[1]))['peak']['bytes']
def snapshots(path):
    text = open(path).read()
    out = []
    for m in re.finditer(r'^snapshot=(\d+)\n#-+\ntime=(\d+)\nmem_heap_B=(\d+)\nmem_heap_extra_B=(\d+)\n'
                         r'mem_stacks_B=(\d+)\nheap_tree=(\w+)', text, re.M):
        out.append((int(m.group(3)), int(m.group(4)), m.group(6)))
    return out
vg = snapshots(sys.argv[2])
vg_peak = [s for s in vg if s[2] == 'peak']
assert vg_peak, 'massif wrote no peak snapshot'
print('JSON peak', want, '| valgrind massif peak heap bytes', vg_peak[0][0], '(extra', vg_peak[0][1], ')')
assert vg_peak[0][0] == want
for path in sys.argv[3:]:
    s = snapshots(path)
    peaks = [x for x in s if x[2] == 'peak']
    assert len(peaks) == 1, (path, s)
    print(path, len(s), 'snapshots, peak', peaks[0][0])
    assert peaks[0][0] == want, path
    assert max(x[0] for x in s) == want, (path, 'a snapshot above the peak')
PY
for f in mt.massif replay.massif; do
    grep -qE '^ Detailed snapshots: \[.*\(peak\)' "$f.txt" || fail "ms_print found no peak in $f: $(head -40 "$f.txt")"
    grep -q 'peak_block (.*peak_temp.c:' "$f.txt" || fail "ms_print shows no peak_block in $f"
    grep -q 'baseline_block (.*peak_temp.c:' "$f.txt" || fail "ms_print shows no baseline_block in $f"
done
cmp mt.massif replay.massif >/dev/null || echo "(live and replayed files differ in sample times, as expected)"
exit 0
