#!/usr/bin/env bash
# --snapshot-rss under a memory cgroup this test makes (removed on every
# exit path), rss_grow moving itself into it and growing 1 MiB at a time
# (and first: a percentage outside 1% to 100% is refused in one line):
#   - --snapshot-rss 50% of a 64 MiB limit (cgroup v2 memory.max, or on a
#     hybrid host v1's memory.limit_in_bytes), growing to 48 MiB: the
#     snapshots are whole reports taken while the process was alive (their
#     MEMORY section read its smaps), each at an RSS of half the limit the
#     test wrote or more, and the program was not killed;
#   - cgroup v2 only: memory.high 24 MiB (memory.max 256 MiB, so that 100%
#     is never reached), growing to 32 MiB: the kernel's own count of high
#     events in memory.events went up, and memtrace wrote a snapshot for
#     it, named as such, with a MEMORY section (the process still alive).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/rss_grow"
# A percentage from 1% to 100%, refused otherwise with one line.
for bad in 0% 101% % 5.5% x%; do
    "$MEMTRACE" --snapshot-rss "$bad" true > bad.out 2> bad.err && fail "--snapshot-rss $bad was accepted"
    [ "$(wc -l < bad.err)" = 1 ] && grep -q -- '--snapshot-rss' bad.err || fail "--snapshot-rss $bad: $(cat bad.err)"
done
[ "$(id -u)" = 0 ] || skip "not root: cannot make a memory cgroup"

cgs=()
cleanup() {
    local cg p
    for cg in "${cgs[@]}"; do
        [ -d "$cg" ] || continue
        for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
        for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
        [ -d "$cg" ] && echo "warning: could not remove $cg" >&2
    done
    return 0
}
trap cleanup EXIT

v2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
own2=$(sed -n 's/^0:://p' /proc/self/cgroup)
own1=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
v1dir=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2; exit}' /proc/mounts)
if [ -n "$v2" ] && grep -qw memory "$v2${own2%/}/cgroup.subtree_control" 2>/dev/null; then
    kind=v2 parent=$v2${own2%/}
elif [ -n "$v1dir" ] && [ -d "$v1dir$own1" ]; then
    kind=v1 parent=$v1dir${own1%/}
else
    skip "no memory cgroup to make: cgroup v2 without the memory controller${v2:+ at $v2}, and no v1 memory hierarchy"
fi

# make_cg NAME: a new cgroup under ours, its path in $cg.
make_cg() {
    cg=$parent/memtrace-$1-$$-$RANDOM
    mkdir "$cg" || fail "mkdir $cg"
    cgs+=("$cg")
}

# Part 1: 50% of a 64 MiB limit.
make_cg pct
if [ $kind = v2 ]; then
    echo $((64 << 20)) > "$cg/memory.max" || fail "memory.max"
    [ -e "$cg/memory.swap.max" ] && echo 0 > "$cg/memory.swap.max"
    limit=$(cat "$cg/memory.max")
else
    echo $((64 << 20)) > "$cg/memory.limit_in_bytes" || fail "memory.limit_in_bytes"
    limit=$(cat "$cg/memory.limit_in_bytes")
fi
echo "cgroup $kind: $cg, limit $limit"
mkdir pct
"$MEMTRACE" -o pct/final.txt --snapshot-rss 50% "$PROG" "$cg/cgroup.procs" 48 10 2> pct.err ||
    fail "memtrace --snapshot-rss 50% (the program was not to be killed): $(cat pct.err)"
python3 - pct "$limit" pct.err <<'PY' || fail "--snapshot-rss 50%: snapshots (above)"
import glob, os, re, sys
limit = int(sys.argv[2])
files = sorted(glob.glob(os.path.join(sys.argv[1], 'memtrace-snapshot-*.txt')))
assert files, 'no snapshot: %s' % open(sys.argv[3]).read()
for f in files:
    text = open(f).read()
    m = re.search(r'^MEMORY: RSS (\d+) bytes', text, re.M)
    assert m, '%s: no MEMORY section' % f
    rss = int(m.group(1))
    print('%s: RSS %.1f MiB, half the limit %.1f MiB' % (os.path.basename(f), rss / 2**20, limit / 2**21))
    assert rss >= limit // 2, '%s: RSS %d below half of %d' % (f, rss, limit)
said = re.findall(r'snapshot \(RSS (\d+) MiB\)', open(sys.argv[3]).read())
assert said and all(int(m) >= limit >> 21 for m in said), said
PY

# Part 2: a memory.events high event (cgroup v2 only).
if [ $kind = v1 ]; then
    echo "memory.events: cgroup v1 has none (the memory controller is v1's here): not tried"
    echo PASS
    exit 0
fi
make_cg high
echo $((256 << 20)) > "$cg/memory.max" || fail "memory.max"
echo $((24 << 20)) > "$cg/memory.high" || fail "memory.high"
[ -e "$cg/memory.swap.max" ] && echo 0 > "$cg/memory.swap.max"
mkdir high
"$MEMTRACE" -o high/final.txt --snapshot-rss 100% "$PROG" "$cg/cgroup.procs" 32 10 2> high.err ||
    fail "memtrace --snapshot-rss 100% under memory.high: $(cat high.err)"
highs=$(sed -n 's/^high //p' "$cg/memory.events")
echo "the kernel's high events: $highs"
[ "${highs:-0}" -ge 1 ] || fail "the kernel counted no high event (the test's premise)"
grep -q 'snapshot (memory.events of .*high or oom events' high.err ||
    fail "no snapshot for the high event: $(cat high.err)"
f=$(ls high/memtrace-snapshot-*.txt | head -1)
grep -q '^MEMORY: RSS ' "$f" || fail "$f: no MEMORY section (the process was gone)"
echo PASS
