#!/usr/bin/env bash
# fork, vfork+exec and a fork in a child (selftest/programs/proc_fork.c):
#  - without -f, every child runs to completion, untouched by our traps, and
#    the report is the first process's, equal to valgrind's for that pid;
#  - with -f, every process gets its own report, and each equals valgrind's
#    HEAP SUMMARY for the same process (--trace-children=yes: one log per
#    pid; processes matched by their place in the process tree);
#  - with -f, SIGINT midway detaches from every process: all of them finish
#    with the output of an untraced run.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
PROG="$MT_PROGS/proc_fork"

expected=$("$PROG" | sort) || fail "untraced run failed"

valgrind --trace-children=yes --child-silent-after-fork=no --run-libc-freeres=no \
    --log-file="$MT_TMP/vg.%p" "$PROG" > vg.out 2>&1 || fail "valgrind run failed"

# The process tree of valgrind's logs or of memtrace's JSON, as
# "tree-position allocs frees bytes in_use_bytes in_use_blocks" lines; the
# position is the list of birth ranks (by pid) from the first process.
tree_figures() {
    python3 - "$@" <<'PY'
import glob, json, re, sys
procs = {}   # pid -> (ppid, figures)
if sys.argv[1] == 'valgrind':
    for path in glob.glob(sys.argv[2] + '/vg.[0-9]*'):
        text = open(path).read()
        pid = int(re.search(r'==(\d+)== Command', text).group(1))
        ppid = int(re.search(r'Parent PID: (\d+)', text).group(1))
        num = lambda s: int(s.replace(',', ''))
        m = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', text)
        t = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', text)
        procs[pid] = (ppid, [num(t.group(1)), num(t.group(2)), num(t.group(3)), num(m.group(1)), num(m.group(2))])
else:
    d = json.load(open(sys.argv[2]))
    for p in [d] + d.get('children', []):
        h = p['heap']
        procs[p['pid']] = (p.get('ppid', 0), [h['allocs'], h['frees'], h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks']])
roots = [p for p, (pp, _) in procs.items() if pp not in procs]
assert len(roots) == 1, f'not one tree: {procs}'
def walk(pid, pos):
    print('/'.join(map(str, pos)) or '.', *procs[pid][1])
    kids = sorted(p for p, (pp, _) in procs.items() if pp == pid)
    for i, k in enumerate(kids):
        walk(k, pos + [i])
walk(roots[0], [])
PY
}
vg_tree=$(tree_figures valgrind "$MT_TMP") || fail "cannot read valgrind's logs"
echo "valgrind:"; echo "$vg_tree"
[ "$(echo "$vg_tree" | wc -l)" -eq 4 ] || fail "expected 4 processes under valgrind"

# Without -f: children run free; the report is the first process's.
"$MEMTRACE" -q -j -o nof.json "$PROG" > nof.out 2> nof.err; rc=$?
[ $rc -eq 0 ] || fail "without -f: exit $rc: $(cat nof.err)"
[ "$(sort nof.out)" = "$expected" ] || fail "without -f: output differs: $(cat nof.out)"
[ ! -s nof.err ] || fail "without -f: unexpected messages: $(cat nof.err)"
root_mt=$(tree_figures memtrace nof.json) || fail "bad JSON without -f"
[ "$root_mt" = "$(echo "$vg_tree" | head -1)" ] ||
    fail "without -f: first process $root_mt, valgrind $(echo "$vg_tree" | head -1)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit("children" in d)' nof.json ||
    fail "without -f the JSON report has children"

# With -f: every process, each equal to valgrind's.
"$MEMTRACE" -q -f -j -o f.json "$PROG" > f.out 2> f.err; rc=$?
[ $rc -eq 0 ] || fail "-f: exit $rc: $(cat f.err)"
[ "$(sort f.out)" = "$expected" ] || fail "-f: output differs: $(cat f.out)"
mt_tree=$(tree_figures memtrace f.json) || fail "bad JSON with -f"
echo "memtrace -f:"; echo "$mt_tree"
[ "$mt_tree" = "$vg_tree" ] || fail "-f: per-process figures differ from valgrind's"

# The text report: the first process's report, then one section per child.
"$MEMTRACE" -q -f -o f.txt "$PROG" > /dev/null 2>&1 || fail "-f text run failed"
[ "$(grep -c '^==== process [0-9]* (forked by [0-9]*)' f.txt)" -eq 3 ] || fail "-f: not 3 child sections"
[ "$(grep -c '^HEAP SUMMARY' f.txt)" -eq 4 ] || fail "-f: not 4 summaries"

# With -f, SIGINT midway: every process is let go and finishes as untraced.
busy_expected=$("$PROG" busy 15 | sort)
"$MEMTRACE" -q -f -o busy.txt "$PROG" busy 15 > busy.out 2> busy.err &
tracer=$!
# Midway: once both children run traced.
two_traced_children() {
    local root kid n=0
    root=$(program_pid $tracer proc_fork) || return 1
    for kid in $(pgrep -P "$root"); do
        [ "$(awk '/^TracerPid:/ {print $2}' "/proc/$kid/status" 2>/dev/null)" != 0 ] && n=$((n + 1))
    done
    [ $n -ge 2 ]
}
wait_until 10 "two traced children" two_traced_children
kill -INT $tracer
wait $tracer; rc=$?
[ $rc -eq 0 ] || fail "-f SIGINT: memtrace exit $rc: $(cat busy.err)"
for _ in $(seq 50); do [ "$(wc -l < busy.out)" -ge 3 ] && break; sleep 0.1; done
[ "$(sort busy.out)" = "$busy_expected" ] ||
    fail "-f SIGINT: processes did not finish as untraced: $(cat busy.out) vs $busy_expected"
[ "$(grep -c '^==== process' busy.txt)" -eq 2 ] || fail "-f SIGINT: not 2 child reports"
echo ok
