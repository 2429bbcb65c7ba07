# rss_steps_record: in $MT_TMP, traces selftest/programs/rss_steps.c with
# --record rec.mt (every 20 ms) through its three steps.  At each step,
# once the recording (read by record_samples.py, a reader apart from
# memtrace's) has an RSS record on a sample holding the step's blocks, that
# record is checked against the kernel's figures the program read itself:
# its RSS equals /proc/self/smaps_rollup's Rss within 512 KiB and VmRSS
# within 1 MiB (the kernel's counters are per-CPU batched), its parts add up
# to it, and its live heap part is the step's heap within 256 KiB.  Both
# sides leave out memtrace's own pages (the agent's ring, which turns
# resident as the agent writes it, after the program's read): the record
# says how many it holds, the program read its smaps for them; the record's
# may not exceed its shared memory part.  Sets
# heap[K], at[K] (the sample's time, seconds) and writes that sample's JSON
# to sample.K.

# step_sample K IN_USE: the recording has an RSS record on a sample whose
# heap holds step K's blocks (IN_USE, and up to 64 KiB of stdio buffers):
# its JSON sample in sample.K.
step_sample() {
    [ -s rec.mt ] || return 1
    python3 - rec.mt "$2" > "sample.$1" <<'PY'
import json, sys, os
sys.path.insert(0, os.path.join(os.environ['MT_ROOT'], 'selftest/tests'))
import record_samples
in_use = int(sys.argv[2])
got = [s for s in record_samples.samples(open(sys.argv[1], 'rb').read())
       if in_use <= s['in_use_bytes'] <= in_use + 65536 and s['rss']]
if not got:
    sys.exit(1)
json.dump(got[-1], sys.stdout)
PY
}

rss_steps_record() {
    local k mt vmrss rollup
    mkdir -p ctl
    "$MEMTRACE" -q --record rec.mt --record-interval 20 -o /dev/null "$MT_PROGS/rss_steps" ctl \
        > prog.out 2> mt.err &
    mt=$!
    trap "touch ctl/go1 ctl/go2 ctl/go3; wait $mt 2>/dev/null" EXIT
    for k in 1 2 3; do
        wait_for_line prog.out "^step $k " 30
        read -r _ _ _ "heap[$k]" _ vmrss _ rollup _ own <<< "$(grep "^step $k " prog.out)"
        wait_until 30 "an RSS record at step $k" step_sample $k "${heap[$k]}"
        python3 - "sample.$k" "${heap[$k]}" "$vmrss" "$rollup" "$own" <<'PY' ||
import json, sys
s = json.load(open(sys.argv[1]))
heap, vmrss, rollup, own = map(int, sys.argv[2:6])
rss, parts, mt = s['rss'][0], s['rss'][1:8], s['rss'][10]
print('recorded at %d us: rss %d, memtrace\'s %d (rollup %d, VmRSS %d, memtrace\'s %d), '
      'live heap %d (heap %d)' % (s['us'], rss, mt, rollup, vmrss, own, parts[0], heap))
assert sum(parts) == rss, (parts, rss)
assert mt <= parts[5], ('memtrace\'s own bytes outside the shared part', mt, parts[5])
assert abs((rss - mt) - (rollup - own)) <= 512 << 10, ('smaps_rollup', rss, mt, rollup, own)
assert abs((rss - mt) - (vmrss - own)) <= 1 << 20, ('VmRSS', rss, mt, vmrss, own)
assert heap <= parts[0] + (256 << 10) and parts[0] <= heap + (256 << 10), ('live heap', parts[0], heap)
PY
            fail "step $k: the recorded RSS differs from the kernel's"
        at[$k]=$(python3 -c "import json; print('%.6f' % (json.load(open('sample.$k'))['us'] / 1e6))")
        touch "ctl/go$k"
    done
    wait $mt || fail "memtrace failed: $(cat mt.err)"
    trap - EXIT
}
