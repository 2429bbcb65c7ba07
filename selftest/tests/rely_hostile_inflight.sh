#!/usr/bin/env bash
# A traced program that claims every free slot of the agent's shared region
# and leaves each "in flight" (selftest/programs/rely_hostile.c inflight)
# must not keep the tracer busy: the tracer holds the records back and backs
# off (docs/reliability.md, "A traced program").  The program stalls itself
# that way (its own ring fills and waits for records the tracer may not
# replay yet); that is its own doing, and the tracer must still answer.
# The oracle is the kernel's account of the tracer's CPU time
# (/proc/PID/stat utime + stime of memtrace's supervisor and of the tracer,
# its child) over 3 s attached: main's tracer polled at
# 35-75% of a CPU, the fixed one uses about 1%; at most 15% passes.  Then
# SIGTERM: memtrace detaches and writes its report, and the program, freed,
# ends by itself.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_agent_engine
cd "$MT_TMP"
PROG="$MT_PROGS/rely_hostile"

"$PROG" inflight 6 > prog.out 2> prog.err &
prog=$!
trap 'kill $prog $mt 2>/dev/null' EXIT
sleep 0.3
"$MEMTRACE" -q -j -o report.json -p "$prog" > mt.out 2> mt.err &
mt=$!
# memtrace's processes: the supervisor ($mt) and the tracer, its child.
cpu_ticks() {
    local p sum=0
    for p in "$1" $(pgrep -P "$1" -x memtrace); do
        sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat"))) || return 1
    done
    echo "$sum"
}
sleep 1 # attached, the slots claimed (the program looks every 0.2 s)
t0=$(cpu_ticks "$mt") || fail "memtrace ended early: $(tail -3 mt.err)"
sleep 3
t1=$(cpu_ticks "$mt") || fail "memtrace ended early: $(tail -3 mt.err)"
hz=$(getconf CLK_TCK)
kill -TERM "$mt"
wait "$mt"
rc=$?
wait "$prog"
prc=$?
trap - EXIT
echo "tracer CPU over 3 s attached: $((t1 - t0)) ticks of 1/$hz s; $(cat prog.out)"
[ "$rc" -eq 0 ] || fail "memtrace exit $rc after SIGTERM: $(tail -3 mt.err)"
grep -q '"engine": "agent"' report.json || fail "no report, or not by the agent: $(tail -3 mt.err)"
[ "$prc" -eq 0 ] || fail "the program died (status $prc): $(cat prog.err)"
grep -q 'hostile: survived ([1-9][0-9]* slots held)' prog.out ||
    fail "the program held no slot (no agent region found?): $(cat prog.out prog.err)"
[ $(( (t1 - t0) * 100 )) -le $((15 * 3 * hz)) ] ||
    fail "the tracer used $((t1 - t0)) of $((3 * hz)) ticks (over 15% of a CPU) while the slots were held"
