#!/usr/bin/env bash
# -f over a shell loop: many short processes (ls, a forked subshell, sed)
# that map the same libc.  Every process's report is read from objects
# shared by build-id across the session (target/objects/object.c), so:
#  - each process's figures equal valgrind --trace-children=yes's for the
#    same process (processes matched by program and depth in the tree);
#  - the repeated programs name the same frames in every round, and the
#    same as a run of the program alone (the names do not depend on which
#    process read the debug file first).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
mkdir -p d && touch d/a d/b
LOOP='for i in 1 2; do ls d >/dev/null; echo x | sed s/x/y/ >/dev/null; done'

valgrind --trace-children=yes --child-silent-after-fork=no --run-libc-freeres=no \
    --log-file="$MT_TMP/vg.%p" bash -c "$LOOP" > vg.out 2>&1 || fail "valgrind run failed"
"$MEMTRACE" -q -f -j -o f.json bash -c "$LOOP" > f.out 2> f.err || fail "-f run failed: $(cat f.err)"
"$MEMTRACE" -q -f -o f.txt bash -c "$LOOP" > /dev/null 2>&1 || fail "-f text run failed"
"$MEMTRACE" -q -o ls.txt ls d > /dev/null 2>&1 || fail "ls run failed"

# "depth program allocs frees bytes in_use_bytes in_use_blocks" per
# process (depth in the process tree: 0 for the shell), sorted: pids are
# no order (they wrap, and other programs take some meanwhile).
tree_figures() {
    python3 - "$@" <<'PY'
import glob, json, os, re, sys
procs = {}   # pid -> (ppid, program, figures)
if sys.argv[1] == 'valgrind':
    for path in glob.glob(sys.argv[2] + '/vg.[0-9]*'):
        text = open(path).read()
        pid = int(re.search(r'==(\d+)== Command: (\S+)', text).group(1))
        prog = os.path.basename(re.search(r'==\d+== Command: (\S+)', text).group(1))
        ppid = int(re.search(r'Parent PID: (\d+)', text).group(1))
        num = lambda s: int(s.replace(',', ''))
        m = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', text)
        t = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', text)
        procs[pid] = (ppid, prog, [num(t.group(1)), num(t.group(2)), num(t.group(3)), num(m.group(1)), num(m.group(2))])
else:
    d = json.load(open(sys.argv[2]))
    for p in [d] + d.get('children', []):
        h = p['heap']
        procs[p['pid']] = (p.get('ppid', 0), os.path.basename(p['program']).split()[0],
                           [h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks']])
roots = [p for p, v in procs.items() if v[0] not in procs]
assert len(roots) == 1, f'not one tree: {procs}'
lines = []
def walk(pid, depth):
    ppid, prog, fig = procs[pid]
    lines.append(' '.join(map(str, [depth, prog, *fig])))
    for k in (p for p, v in procs.items() if v[0] == pid):
        walk(k, depth + 1)
walk(roots[0], 0)
print('\n'.join(sorted(lines)))
PY
}
vg_tree=$(tree_figures valgrind "$MT_TMP") || fail "cannot read valgrind's logs"
mt_tree=$(tree_figures memtrace f.json) || fail "bad JSON with -f"
echo "valgrind:"; echo "$vg_tree"
echo "memtrace -f:"; echo "$mt_tree"
[ "$(echo "$mt_tree" | wc -l)" -eq 7 ] || fail "expected 7 processes, got: $mt_tree"
# The same tree of the same programs; the figures of every program the
# shell ran (ls, sed) equal valgrind's.  bash's own are not compared:
# under valgrind its environment holds valgrind's variables (LD_PRELOAD
# of its preload objects), which bash copies and exports: ~30 more calls.
[ "$(awk '{print $1, $2}' <<<"$mt_tree")" = "$(awk '{print $1, $2}' <<<"$vg_tree")" ] ||
    fail "-f: another process tree than valgrind's"
[ "$(awk '$2 != "bash"' <<<"$mt_tree")" = "$(awk '$2 != "bash"' <<<"$vg_tree")" ] ||
    fail "-f: per-process figures differ from valgrind's"

# Every ls section names the same frames as ls traced alone.
python3 - f.txt ls.txt <<'PY' || fail "the processes' reports name frames differently"
import re, sys
def sections(text):
    parts = re.split(r'^==== process \d+ \(forked by \d+\): (.*)$', text, flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))
def frames(body):
    body = body.split('\nPEAK\n')[0]
    return sorted(re.findall(r'^    #\d+ (.*)$', body, re.M))
alone = frames(open(sys.argv[2]).read())
assert alone, 'ls alone: no frames'
ls = [frames(b) for prog, b in sections(open(sys.argv[1]).read()) if prog.split()[0].endswith('/ls')]
assert len(ls) == 2, f'{len(ls)} ls sections'
for i, f in enumerate(ls):
    assert f == alone, f'ls #{i}: {sorted(set(f) ^ set(alone))[:6]}'
print(f'2 ls sections, {len(alone)} frames each, as ls alone')
PY
exit 0
