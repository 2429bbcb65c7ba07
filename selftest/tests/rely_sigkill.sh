#!/usr/bin/env bash
# SIGKILL of memtrace while it traces a process (-p).  No program can catch
# SIGKILL, so this measures what survives and checks the guarantees of
# docs/reliability.md:
#  - `kill -9 <memtrace's pid>` (the pid a shell, systemd or timeout(1)
#    holds) must never harm the target: that pid is a small supervisor and
#    the tracer under it detaches cleanly when it dies;
#  - SIGKILL of the tracing process itself (found as TracerPid in the
#    target's /proc status): the guardian restores breakpoints and return
#    addresses at once (its message says how many: checked), so a target
#    survives unless a thread sat in a breakpoint stop at that instant (its
#    SIGTRAP is then delivered by the kernel, nothing can stop that).  The
#    figures are printed; the test asks only that some idle or job-stopped
#    (SIGSTOP, every thread held wherever it was) target survives, where
#    none did before the guardian.
# Survival is judged by the target's own exit status and output against an
# untraced run.  RELY_KILL_ROUNDS rounds per case (default 2); RELY_SEED;
# RELY_KILL_CASES="memtrace.idle ... tracer.busy" picks the cases.
# The breakpoint engine's guardian, whatever the default engine:
# agent_sigkill.sh runs the busy case again with MEMTRACE_ENGINE=agent.
export MEMTRACE_ENGINE=${MEMTRACE_ENGINE:-ptrace}
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
ROUNDS=${RELY_KILL_ROUNDS:-2}
RANDOM=${RELY_SEED:-$$}
echo "seed ${RELY_SEED:-$$}"

IDLE=("$MT_PROGS/rely_ticker" 4 60 20)
BUSY=("$MT_BENCH_BIN" 1000000 12 "${RELY_BUSY_THREADS:-6}")
[ -x "$MT_BENCH_BIN" ] || BUSY=("$MT_PROGS/mt_churn" 6 1000000)
idle_expected=$("${IDLE[@]}") || fail "untraced rely_ticker failed"
busy_expected=$("${BUSY[@]}") || fail "untraced ${BUSY[0]} failed"

tracer_of() { awk '/^TracerPid:/ {print $2}' /proc/"$1"/status 2>/dev/null; }

# one_round KIND VICTIM: prints 1 when the target survived, 0 when not.
one_round() {
    local kind=$1 victim=$2 prog expected
    if [ "$kind" = idle ]; then prog=("${IDLE[@]}"); expected=$idle_expected
    else prog=("${BUSY[@]}"); expected=$busy_expected; fi
    [ "$kind" = stopped ] && prog=("${BUSY[@]}") && expected=$busy_expected
    "${prog[@]}" > prog.out 2>/dev/null &
    local pid=$!
    sleep 0.05
    "$MEMTRACE" -q -p $pid < /dev/null > /dev/null 2> err.txt &
    local mt=$!
    local tracer=""
    for ((t = 0; t < 200; t++)); do
        tracer=$(tracer_of $pid)
        [ -n "$tracer" ] && [ "$tracer" != 0 ] && break
        sleep 0.01
    done
    [ -n "$tracer" ] && [ "$tracer" != 0 ] || { kill -KILL $pid $mt; fail "memtrace never attached"; }
    sleep "$(printf '0.%03d' $((RANDOM % 600 + 100)))"
    if [ "$kind" = stopped ]; then
        # Job control stops every thread wherever it is, inside malloc
        # with a displaced return address included.
        kill -STOP $pid
        # Every thread in the group stop (not in a breakpoint stop that a
        # lagging tracer has not handled yet): the kernel stack says so.
        for ((t = 0; t < 250; t++)); do
            all_stopped=1
            for task in /proc/$pid/task/*; do
                grep -q ptrace_do_notify "$task/stack" 2>/dev/null || { all_stopped=0; break; }
            done
            [ $all_stopped = 1 ] && break
            sleep 0.02
        done
        [ $all_stopped = 1 ] || echo "  (not every thread reached the group stop)" >&2
    fi
    if [ "$victim" = tracer ]; then kill -KILL "$tracer"; else kill -KILL $mt; fi
    wait $mt 2>/dev/null
    if [ "$kind" = stopped ]; then
        sleep 0.2
        kill -CONT $pid
    fi
    # The target must not stay stopped or traced by a dead tracer's heir.
    for ((t = 0; t < 300; t++)); do
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
    done
    kill -0 $pid 2>/dev/null && { kill -KILL $pid; wait $pid 2>/dev/null; echo 0; return; }
    wait $pid 2>/dev/null
    local rc=$?
    # RELY_KILL_SURVIVAL_ONLY=1 (agent_sigkill.sh): judged by the target
    # alone (a kill that lands before the guardian watches restores nothing
    # and needs nothing restored).
    if [ "$victim" = tracer ] && [ "${RELY_KILL_SURVIVAL_ONLY:-0}" != 1 ] && ! grep -Eq "ended without detaching: restored ([1-9]|[0-9]+ breakpoints and [1-9])" err.txt; then
        echo "  the guardian restored nothing: $(cat err.txt)" >&2; echo 0; return
    fi
    if [ $rc -eq 0 ] && [ "$(cat prog.out)" = "$expected" ]; then echo 1; else echo "  $kind target died: status $rc" >&2; echo 0; fi
}

# tracer.busy only measures (it never survives): left to full runs.
CASES=${RELY_KILL_CASES:-memtrace.idle memtrace.busy memtrace.stopped tracer.idle tracer.stopped}
declare -A survived=([memtrace.idle]=$ROUNDS [memtrace.busy]=$ROUNDS [memtrace.stopped]=$ROUNDS
                     [tracer.idle]=0 [tracer.stopped]=0)
for c in $CASES; do
    victim=${c%.*} kind=${c#*.}
    n=0
    for ((r = 0; r < ROUNDS; r++)); do
        n=$((n + $(one_round $kind $victim)))
    done
    survived[$c]=$n
    echo "SIGKILL of the $victim, $kind target: survived $n of $ROUNDS"
done
[ "${RELY_KILL_MEASURE_ONLY:-0}" = 1 ] && exit 0
for kind in idle busy stopped; do
    [ "${survived[memtrace.$kind]}" -eq "$ROUNDS" ] ||
        fail "kill -9 of memtrace's pid harmed a $kind target (${survived[memtrace.$kind]} of $ROUNDS survived)"
done
# Without the guardian not one of these survives (docs/reliability.md); with
# it most do, but a thread caught in a breakpoint stop cannot be saved.
[ $((survived[tracer.idle] + survived[tracer.stopped])) -gt 0 ] ||
    fail "SIGKILL of the tracer: no idle or job-stopped target survived in $((2 * ROUNDS)) rounds"
exit 0
