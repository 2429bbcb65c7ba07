#!/usr/bin/env bash
# Snapshots before the OOM killer: rss_grow, in a memory cgroup this test
# makes (cgroup v2 memory.max, else v1 memory.limit_in_bytes; removed on
# every exit path), grows 1 MiB every 100 ms until the kernel kills it,
# traced with --snapshot-rss 8.  Oracles: the kernel's own OOM count of the
# cgroup (memory.events oom_kill, or memory.oom_control) says it was the
# OOM killer; the snapshots are whole reports taken while the process was
# alive (their MEMORY section read its /proc/PID/smaps), naming the
# grow_step() stack, at RSS from 8 MiB up, growing, no more than one per
# 10% step.  (The first report of a session
# loads the symbol tables: seconds on a loaded machine, while the process
# grows on; hence the slow growth.)  Then --snapshot-peak (at most one a
# second) on a run without a limit.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/rss_grow"
LIMIT_MIB=48
[ "$(id -u)" = 0 ] || skip "not root: cannot make a memory cgroup"

cg=
cleanup() {
    [ -n "$cg" ] && [ -d "$cg" ] || return 0
    local p
    for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && return 0; sleep 0.1; done
    echo "warning: could not remove $cg" >&2
}
trap cleanup EXIT

name="memtrace-oom-$$-$RANDOM"
v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
own2=$(sed -n 's/^0:://p' /proc/self/cgroup)
own1=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
if [ -n "$v2" ] && grep -qw memory "$v2$own2/cgroup.subtree_control" 2>/dev/null &&
    mkdir "$v2$own2/$name" 2>/dev/null; then
    cg=$v2$own2/$name
    echo $((LIMIT_MIB << 20)) > "$cg/memory.max" || fail "memory.max"
    [ -e "$cg/memory.swap.max" ] && echo 0 > "$cg/memory.swap.max"
    oom_count() { sed -n 's/^oom_kill //p' "$cg/memory.events"; }
elif [ -d "/sys/fs/cgroup/memory$own1" ] && mkdir "/sys/fs/cgroup/memory$own1/$name" 2>/dev/null; then
    cg=/sys/fs/cgroup/memory$own1/$name
    echo $((LIMIT_MIB << 20)) > "$cg/memory.limit_in_bytes" || fail "memory.limit_in_bytes"
    [ -e "$cg/memory.memsw.limit_in_bytes" ] && echo $((LIMIT_MIB << 20)) > "$cg/memory.memsw.limit_in_bytes"
    oom_count() { sed -n 's/^oom_kill //p' "$cg/memory.oom_control"; }
else
    skip "no memory cgroup to make (cgroup v2 with the memory controller, or v1's)"
fi
echo "cgroup: $cg (limit $LIMIT_MIB MiB)"

mkdir snaps
"$MEMTRACE" -q -o snaps/final.txt --snapshot-rss 8 "$PROG" "$cg/cgroup.procs" 1024 100 2> mt.err
rc=$?
echo "memtrace exited $rc; the cgroup's OOM kills: $(oom_count)"
[ "$(oom_count)" -ge 1 ] || fail "the OOM killer did not act (memtrace exit $rc): $(cat mt.err)"
grep -q 'killed by signal 9\|SIGKILL\|signal 9' mt.err snaps/final.txt 2>/dev/null || echo "(memtrace said: $(cat mt.err))"

python3 - snaps <<'PY' || fail "snapshots (above)"
import glob, math, os, re, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], 'memtrace-snapshot-*.txt')))
assert len(files) >= 2, 'snapshots: %s' % files
prev = 0
for f in files:
    text = open(f).read()
    m = re.search(r'^MEMORY: RSS (\d+) bytes', text, re.M)
    assert m, '%s: no MEMORY section' % f
    rss = int(m.group(1))
    heap = int(re.search(r'^    in use: (\d+) bytes', text, re.M).group(1))
    print('%s: RSS %.1f MiB, heap %.1f MiB' % (os.path.basename(f), rss / 2**20, heap / 2**20))
    assert 'grow_step() in ' in text, '%s: no grow_step frame' % f
    assert rss >= 8 << 20, '%s: RSS %d' % (f, rss)
    assert rss > prev, '%s: RSS %d, not above the last %d' % (f, rss, prev)
    prev = rss
# at most one per 10% step from 8 MiB up to the last RSS
steps = math.floor(math.log(prev / (8 << 20)) / math.log(1.1)) + 1
assert len(files) <= steps, '%d snapshots for %d steps of 10%%' % (len(files), steps)
PY
echo "$(ls snaps/memtrace-snapshot-* | wc -l) snapshots before the OOM kill"

# --snapshot-peak: a new heap peak every few ms, a snapshot at most every second.
mkdir peaks
start=$SECONDS
"$MEMTRACE" -q -o peaks/final.txt --snapshot-peak "$PROG" - 100 10 2> peak.err || fail "memtrace --snapshot-peak: $(cat peak.err)"
took=$((SECONDS - start + 1))
n=$(ls peaks/memtrace-snapshot-*.txt 2>/dev/null | wc -l)
echo "--snapshot-peak: $n snapshots in about $took s"
[ "$n" -ge 1 ] && [ "$n" -le "$took" ] || fail "--snapshot-peak wrote $n snapshots in about $took s"
