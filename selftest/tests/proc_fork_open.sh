#!/usr/bin/env bash
# A fork while an intercepted call (operator new[]) is open on the forking
# thread's stack (selftest/programs/proc_fork_open.cpp): its return address
# is displaced to one of our return stubs in both copies of the stack.
#  - without -f, the child is let go with the address put back;
#  - with -f, the child is followed and must know the stubs it inherited
#    (a tracee clone that forgets them lets the child die of SIGTRAP);
# either way both processes print what an untraced run prints and the
# child ends with its own status (7).  With -f, parent and child made the
# same calls (the child's books start as a copy of the parent's), so their
# HEAP SUMMARY figures are equal, and the child's report names its parent.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/proc_fork_open"

expected=$("$PROG" | sort) || fail "untraced run failed"
echo "$expected" | grep -qx 'child exit: 7' || fail "untraced child: $expected"

for mode in nofollow follow; do
    flag=; [ $mode = follow ] && flag=-f
    "$MEMTRACE" -q $flag -j -o $mode.json "$PROG" > $mode.out 2> $mode.err; rc=$?
    [ $rc -eq 0 ] || fail "$mode: exit $rc: $(cat $mode.err)"
    [ "$(sort $mode.out)" = "$expected" ] || fail "$mode: output differs: $(cat $mode.out)"
    [ ! -s $mode.err ] || fail "$mode: unexpected messages: $(cat $mode.err)"
    echo "$mode: $(tr '\n' ' ' < $mode.out)"
done

python3 - follow.json <<'PY' || fail "-f: reports of parent and child do not match"
import json, sys
d = json.load(open(sys.argv[1]))
kids = d.get('children', [])
assert len(kids) == 1, f'{len(kids)} children'
c = kids[0]
assert c['ppid'] == d['pid'], (c['ppid'], d['pid'])
keys = ['allocs', 'frees', 'bytes_allocated', 'in_use_bytes', 'in_use_blocks']
p_fig = [d['heap'][k] for k in keys]
c_fig = [c['heap'][k] for k in keys]
print('parent', p_fig, 'child', c_fig)
assert p_fig == c_fig
PY
python3 -c 'import json,sys; sys.exit("children" in json.load(open(sys.argv[1])))' nofollow.json ||
    fail "without -f the report has children"
echo ok
