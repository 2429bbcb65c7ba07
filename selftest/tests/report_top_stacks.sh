#!/usr/bin/env bash
# The text report lists the biggest stacks in use (-n N, 100 by default)
# and sums up the rest in one line; JSON keeps every stack.  On a program
# keeping 2^10 blocks from 2^10 distinct call paths (bench/many_paths.c):
#  - JSON is the oracle of the stacks: the listed stacks are its first N
#    (bytes and blocks, in order), and the "more" line's count, bytes and
#    blocks are those of the rest;
#  - listed + rest add up to the HEAP SUMMARY's "in use", which equals
#    valgrind's "in use at exit" (counts from a tool nobody here wrote);
#  - -n 0 lists every stack and has no such line; -n 5 lists five.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
gcc -O2 -g -o many_paths "$MT_ROOT/bench/many_paths.c" || fail "cannot build many_paths"
D=10

"$MEMTRACE" -q -d 40 -j -o all.json ./many_paths $D > /dev/null || fail "JSON run failed"
"$MEMTRACE" -q -d 40 -o top.txt ./many_paths $D > /dev/null || fail "text run failed"
"$MEMTRACE" -q -d 40 -n 5 -o five.txt ./many_paths $D > /dev/null || fail "-n 5 run failed"
"$MEMTRACE" -q -d 40 -n 0 -o every.txt ./many_paths $D > /dev/null || fail "-n 0 run failed"
vg=$(valgrind_summary ./many_paths $D) || fail "valgrind failed"
echo "valgrind: $vg"

python3 - "$vg" all.json top.txt five.txt every.txt <<'PY' || fail "text report and JSON disagree"
import json, re, sys
vg = list(map(int, sys.argv[1].split()))
d = json.load(open(sys.argv[2]))
stacks = [(s['bytes_in_use'] if 'bytes_in_use' in s else s['bytes'],
           s['blocks_in_use'] if 'blocks_in_use' in s else s['blocks']) for s in d['stacks']]
heap = d['heap']
assert len(stacks) >= 1024, f'JSON keeps {len(stacks)} stacks, not every one'
assert (heap['in_use_bytes'], heap['in_use_blocks']) == (vg[3], vg[4]), f'in use {heap} vs valgrind {vg}'
assert sum(b for b, _ in stacks) == vg[3] and sum(n for _, n in stacks) == vg[4], 'JSON stacks do not add up'

def check(path, n):
    text = open(path).read()
    listed = [tuple(map(int, m)) for m in re.findall(r'^(\d+) bytes in (\d+) blocks were not free$', text, re.M)]
    more = re.findall(r'^\.\.\. and (\d+) more stacks? with (\d+) bytes in (\d+) blocks not free, '
                      r'not listed \(-n 0 lists all; --format json keeps all\)$', text, re.M)
    inuse = re.search(r'^    in use: (\d+) bytes in (\d+) blocks$', text, re.M)
    want = stacks if n == 0 else stacks[:n]
    assert listed == want, f'{path}: listed {listed[:8]}... vs JSON {want[:8]}...'
    rest = stacks[len(want):]
    if rest:
        assert len(more) == 1, f'{path}: no single "more" line: {more}'
        m = tuple(map(int, more[0]))
        assert m == (len(rest), sum(b for b, _ in rest), sum(k for _, k in rest)), f'{path}: {m}'
    else:
        assert not more, f'{path}: a "more" line with nothing left out'
    total = (sum(b for b, _ in stacks), sum(k for _, k in stacks))
    assert tuple(map(int, inuse.groups())) == total == (vg[3], vg[4]), f'{path}: in use {inuse.groups()}'
    print(f'{path}: {len(listed)} listed, {len(rest)} summed up, {len(text)} bytes')

check(sys.argv[3], 100)
check(sys.argv[4], 5)
check(sys.argv[5], 0)
PY
exit 0
