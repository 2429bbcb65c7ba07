#!/usr/bin/env bash
# memtrace -p from the host attached to a program in its own PID and mount
# namespace (a container: unshare -m -p -f --mount-proc, chroot into a
# minimal root holding the program and its libraries), issue 29.  Every
# stack of the report equals gdb's `bt` at malloc in the same program run
# outside, both ways.  The bug this guards against: the agent copied its
# stacks with process_vm_readv on the host's pid, which names no process
# inside the namespace; the first allocation after the attach then got a
# caller read later from the live stack (`malloc ; 0x989680`, the
# nanosleep's tv_nsec).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool gdb gdb
need_tool unshare util-linux
[ "$(id -u)" = 0 ] || skip "needs root (PID and mount namespaces, chroot)"
cd "$MT_TMP"
gcc ${MT_TARGET_CFLAGS:-} -g -O2 -fomit-frame-pointer -o ns_app "$MT_ROOT/selftest/tests/data/ns_app.c" ||
    fail "build ns_app"

# gdb's backtraces at malloc, outside any namespace
{
    echo "set pagination off"
    echo "set print frame-arguments none"
    echo "set confirm off"
    echo "break *malloc"
    echo "run 3"
    echo "while 1"
    echo "  bt 40"
    echo "  continue"
    echo "end"
} > gdb.cmd
gdb -batch -nx -x gdb.cmd ./ns_app > gdb.log 2>&1
grep -q "in work" gdb.log || fail "gdb saw no malloc from work: $(tail -5 gdb.log)"

# the root: the program and the libraries it loads
mkdir -p root/opt/app root/proc
cp ns_app root/opt/app/app
for lib in $(ldd ns_app | grep -o '/[^ ]*'); do
    mkdir -p "root$(dirname "$lib")"
    cp -L "$lib" "root$lib"
done

ns_pid=
cleanup() { [ -n "$ns_pid" ] && kill -KILL "$ns_pid" 2>/dev/null; }
trap cleanup EXIT
for round in 1 2 3; do
    unshare -m -p -f --mount-proc="$PWD/root/proc" chroot root /opt/app/app </dev/null >/dev/null 2>&1 &
    ushare=$!
    child() { app=$(cat "/proc/$ushare/task/$ushare/children" 2>/dev/null | tr -d ' '); [ -n "$app" ]; }
    wait_until 10 "the program in its namespace" child
    ns_pid=$app
    grep -q "^NSpid:.*[[:space:]]1$" "/proc/$app/status" ||
        fail "the program is not pid 1 of its own namespace: $(grep NSpid "/proc/$app/status")"
    "$MEMTRACE" -d 20 -j -o "ns$round.json" -p "$app" > /dev/null 2> "ns$round.err" &
    mt=$!
    attached() { grep -q "attached to process" "ns$round.err"; }
    wait_until 20 "memtrace to attach" attached
    # a few dozen allocations after the attach
    sleep 0.5
    kill -TERM "$mt"
    wait "$mt" || fail "round $round: memtrace failed: $(cat "ns$round.err")"
    kill -0 "$app" 2>/dev/null || fail "round $round: the program died under memtrace"
    kill -KILL "$app"
    wait "$ushare" 2>/dev/null
    ns_pid=
    python3 - "ns$round.json" <<'PY' || fail "round $round: a stack without the program's caller"
import json, sys
stacks = json.load(open(sys.argv[1]))['stacks']
bad = [s for s in stacks if not any(f['function'] == 'work' for f in s['frames'])]
for s in bad:
    print('  stack:', ' ; '.join(f['function'] or f['pc'] for f in s['frames']))
sys.exit(1 if bad or not stacks else 0)
PY
    python3 "$MT_ROOT/selftest/tests/stacks_compare.py" --functions --both-ways gdb.log "ns$round.json" ns_app.c ||
        fail "round $round: memtrace's stacks differ from gdb's backtraces"
done
echo "3 attaches into a PID and mount namespace: every stack is gdb's (${MEMTRACE_ENGINE:-default} engine)"
exit 0
