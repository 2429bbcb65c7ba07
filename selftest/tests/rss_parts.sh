#!/usr/bin/env bash
# Where the RSS went: the MEMORY section of `status` and of `report -j`
# against oracles memtrace did not write, on the rss_parts program paused
# at three stops (it prints its own figures at each):
#  - the kernel: the parts add up to /proc/PID/smaps_rollup's Rss, read
#    here at the same pause, within one page per mapping;
#  - glibc's mallinfo2(): what the allocator holds is what its arenas and
#    mmap'ed chunks hold (arena + hblkhd, i.e. fordblks + uordblks + hblkhd)
#    less the live bytes and less what mincore(2) says is not resident,
#    within one page per allocator mapping ([heap], the 1 MiB chunk);
#  - fragmentation (stop 2, every other block freed): the same equality,
#    with the allocator's figure grown by at least the freed bytes;
#  - malloc_trim(0) (stop 3): what it gave back ([heap]'s resident bytes
#    before and after, by mincore) against memtrace's estimate at stop 2,
#    within one page per freed chunk (glibc keeps a chunk's header page);
#  - the program's own mmap: its resident bytes by mincore, exactly;
#  - the blocked thread's stack pointer found, its stack and [stack] counted;
#  - `snapshot > FILE` and `snapshot` write the report with MEMORY.
# In TWICE: run again under the breakpoint engine.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/rss_parts"
[ -r /proc/self/smaps_rollup ] || skip "no /proc/PID/smaps_rollup (kernel before 4.14)"
ldd "$PROG" 2>/dev/null | grep -q 'libc.so.6' || skip "rss_parts is not linked with glibc"

mkdir -p ctl
console_open mt.out -q -C "$PROG" "$MT_TMP/ctl"
end_all() {
    exec 3>&-
    local pid
    pid=$(cat "$MT_TMP/ctl/pid" 2>/dev/null) && kill "$pid" 2>/dev/null
    kill "$CONSOLE_PID" 2>/dev/null
}
trap end_all EXIT
pid=
page=$(getconf PAGESIZE)

at_stop() {   # at_stop N: the JSON report, status and smaps_rollup at stop N
    wait_for_line mt.out "^stop $1 " 20
    [ -n "$pid" ] || pid=$(cat ctl/pid)
    grep "^stop $1 " mt.out > "prog$1.txt"
    console_cmd "report -j > $MT_TMP/r$1.json"
    [ "$CONSOLE_REPLY" = "report written to $MT_TMP/r$1.json" ] || fail "report -j at stop $1: $CONSOLE_REPLY"
    sed -n 's/^Rss: *\([0-9]*\) kB$/\1/p' "/proc/$pid/smaps_rollup" > "rollup$1.txt"
    console_cmd status
    printf '%s\n' "$CONSOLE_REPLY" > "status$1.txt"
    [ "$1" = 1 ] || touch "ctl/go$1"
}
at_stop 1
# the console's snapshot: the same report with MEMORY, to FILE or named after pid and time
console_cmd "snapshot > $MT_TMP/snap.txt"
[ "$CONSOLE_REPLY" = "snapshot written to $MT_TMP/snap.txt" ] || fail "snapshot > FILE: $CONSOLE_REPLY"
console_cmd "snapshot"
[[ $CONSOLE_REPLY =~ ^snapshot\ written\ to\ \./memtrace-snapshot-$pid-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.txt$ ]] ||
    fail "snapshot: $CONSOLE_REPLY"
for f in snap.txt memtrace-snapshot-"$pid"-*.txt; do
    grep -q '^MEMORY: RSS [0-9]* bytes' "$f" && grep -q '^HEAP SUMMARY' "$f" || fail "$f: $(cat "$f")"
done
echo "snapshot: written, with MEMORY"
touch ctl/go1
at_stop 2
at_stop 3
wait_for_line mt.out '^rss_parts: done$' 20

python3 - "$page" <<'PY' || fail "the MEMORY figures disagree with the oracles (above)"
import json, re, sys
page = int(sys.argv[1])
bad = []
def check(ok, what):
    print(('ok:   ' if ok else 'FAIL: ') + what)
    if not ok:
        bad.append(what)

stops = {}
for n in (1, 2, 3):
    rep = json.load(open('r%d.json' % n))
    mem = rep['memory']
    prog = dict(kv.split('=') for kv in open('prog%d.txt' % n).read().split()[2:])
    prog = {k: int(v) for k, v in prog.items()}
    rollup = int(open('rollup%d.txt' % n).read()) * 1024
    parts = {k: v['bytes'] for k, v in mem['parts'].items()}
    stops[n] = (mem, parts, prog)
    print('stop %d: rss %d (smaps_rollup %d) parts %s trim %s | glibc %s'
          % (n, mem['rss'], rollup, parts, mem['malloc_trim_estimate'], prog))
    hows = {k: v['how'] for k, v in mem['parts'].items()}
    check(set(hows.values()) <= {'counted', 'computed'}, 'stop %d: each part counted or computed' % n)
    check(sum(parts.values()) == mem['rss'], 'stop %d: the parts add up to the RSS read' % n)
    check(abs(mem['rss'] - rollup) <= page * mem['mappings'],
          'stop %d: RSS %d against smaps_rollup %d, within a page per mapping (%d)'
          % (n, mem['rss'], rollup, mem['mappings']))
    check(mem['live_bytes'] == rep['heap']['in_use_bytes'], 'stop %d: live bytes are the books\'' % n)
    want = prog['fordblks'] + prog['uordblks'] + prog['hblkhd'] - mem['live_bytes'] - prog['nonresident']
    check(abs(parts['allocator'] - want) <= 2 * page,
          'stop %d: allocator holds %d, mallinfo2 and mincore say %d' % (n, parts['allocator'], want))
    check(parts['program_mmaps'] == prog['mmap_resident'],
          'stop %d: program mmaps %d, mincore of its mmap %d' % (n, parts['program_mmaps'], prog['mmap_resident']))
    # the thread blocked in read() always has its stack pointer read; the
    # main thread's [stack] is named (it may be between two nanosleeps)
    check(mem['thread_stack_pointers'] >= 1 and parts['thread_stacks'] >= 2 * page,
          'stop %d: the blocked thread\'s stack found, with [stack]' % n)
    check(mem['malloc_trim_estimate'] is not None, 'stop %d: glibc: a malloc_trim estimate' % n)

freed = 32 * 60000
grown = stops[2][1]['allocator'] - stops[1][1]['allocator']
check(grown >= freed, 'fragmentation: the allocator holds %d more after %d bytes freed' % (grown, freed))
released = stops[2][2]['heap_resident'] - stops[3][2]['heap_resident']
estimate = stops[2][0]['malloc_trim_estimate']
check(abs(estimate - released) <= 32 * page,
      'malloc_trim gave back %d bytes of [heap]; estimated %d (within a page per freed chunk)'
      % (released, estimate))
sys.exit(1 if bad else 0)
PY

# status shows the same section, each part on its line, adding up.
python3 - status1.txt <<'PY' || fail "status: no MEMORY section adding up: $(cat status1.txt)"
import re, sys
text = open(sys.argv[1]).read()
rss = int(re.search(r'^MEMORY: RSS (\d+) bytes in \d+ mappings', text, re.M).group(1))
parts = re.findall(r'^    (live heap|allocator holds|program mmaps|thread stacks|modules|shared memory|rest): +(\d+) bytes  (counted|computed)', text, re.M)
assert len(parts) == 7, parts
assert sum(int(p[1]) for p in parts) == rss, (parts, rss)
assert re.search(r'^    malloc_trim could give back about \d+ bytes', text, re.M)
PY
echo "status: MEMORY section adds up"
