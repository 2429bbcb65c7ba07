#!/usr/bin/env bash
# memtrace attached (-p) to a busy multi-threaded process is stopped by
# SIGTERM, SIGINT or SIGHUP at a random moment: during the attach, while
# breakpoints are being planted, or while many threads are inside malloc
# with their return addresses swapped for the trampoline.  Every time the
# process must run on to exit status 0 with exactly the output of an
# untraced run (the oracle is the program's own checksum / call count).
# RELY_ROUNDS (default 4) rounds; RELY_SEED makes the delays repeatable.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
ROUNDS=${RELY_ROUNDS:-4}
RANDOM=${RELY_SEED:-$$}
echo "seed ${RELY_SEED:-$$}"

CHURN=("$MT_PROGS/mt_churn" 6 1000000)
BENCH=("$MT_BENCH_BIN" 1000000 12 6)
[ -x "$MT_BENCH_BIN" ] || BENCH=("${CHURN[@]}")
churn_expected=$("${CHURN[@]}") || fail "untraced mt_churn failed"
bench_expected=$("${BENCH[@]}") || fail "untraced allocbench failed"

signals=(TERM INT HUP)
for ((round = 0; round < ROUNDS; round++)); do
    sig=${signals[round % 3]}
    if ((round % 2)); then prog=("${BENCH[@]}"); expected=$bench_expected
    else prog=("${CHURN[@]}"); expected=$churn_expected; fi
    delay_ms=$((RANDOM % 1000 + 10))
    "${prog[@]}" > prog.out &
    pid=$!
    sleep 0.1
    "$MEMTRACE" -q -p $pid < /dev/null > report.txt 2> err.txt &
    tracer=$!
    # The delay counts from memtrace's first own instruction.
    wait_ending_signals_held $tracer
    sleep "$(printf '0.%03d' $delay_ms)"
    kill -"$sig" $tracer 2>/dev/null
    # The tracer must leave promptly whatever it was doing.
    for ((t = 0; t < 200; t++)); do kill -0 $tracer 2>/dev/null || break; sleep 0.05; done
    if kill -0 $tracer 2>/dev/null; then
        kill -KILL $tracer $pid 2>/dev/null
        fail "round $round: memtrace still running 10 s after SIG$sig"
    fi
    wait $tracer; trc=$?
    # A detached process is never left in a stop.
    for ((t = 0; t < 600; t++)); do
        kill -0 $pid 2>/dev/null || break
        state=$(awk '/^State:/ {print $2}' /proc/$pid/status 2>/dev/null)
        if [ "$state" = T ] || [ "$state" = t ]; then
            kill -KILL $pid; fail "round $round: process left stopped ($state) after SIG$sig at ${delay_ms} ms"
        fi
        sleep 0.1
    done
    wait $pid; prc=$?
    msg="round $round: ${prog[0]##*/}, SIG$sig after ${delay_ms} ms, memtrace exit $trc"
    [ $prc -eq 0 ] || fail "$msg: the traced process died with status $prc; memtrace said: $(tail -n 3 err.txt)"
    [ "$(cat prog.out)" = "$expected" ] || fail "$msg: output '$(cat prog.out)' differs from untraced '$expected'"
    [ $trc -eq 0 ] || fail "$msg: memtrace failed: $(tail -n 3 err.txt)"
    echo "$msg: process finished with the untraced output"
done
