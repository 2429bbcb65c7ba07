#!/usr/bin/env bash
# A SIGINT sent to memtrace's whole process group (what timeout(1) and
# `kill -INT -- -PGID` do) reaches the tracer twice: directly, and passed on
# by the supervisor whenever that is next scheduled.  memtrace attached
# (-p) to mt_churn gets one at a random moment after the attach, a few
# during its start-up, and some with the supervisor held stopped until the
# detach is done (SIGSTOP/SIGCONT: a loaded host's late scheduling, made
# sure).  Every time memtrace must detach and exit 0 with its report (not
# die of the copy), within RELY_HANG_S seconds (a hang detector, not a
# speed bound), and the program must run on to exit 0 with the output of
# an untraced run.  RELY_ROUNDS (default 8) rounds; RELY_SEED repeats the
# delays.  Run under each engine (MEMTRACE_ENGINE, run-tests.sh's TWICE).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
ROUNDS=${RELY_ROUNDS:-8}
HANG_S=${RELY_HANG_S:-30}
RANDOM=${RELY_SEED:-$$}
echo "seed ${RELY_SEED:-$$}, engine ${MEMTRACE_ENGINE:-default}"

PROG=("$MT_PROGS/mt_churn" 4 1000000)
expected=$("${PROG[@]}") || fail "untraced mt_churn failed"
# Job control: memtrace and the program each lead a process group of their
# own, and neither starts with SIGINT ignored (as a script's `&` would).
set -m

pid=; sup=
cleanup() { kill -CONT "$sup" 2>/dev/null; kill -KILL -- -"$sup" "$pid" 2>/dev/null; }
trap cleanup EXIT

# wait_for FILE TEXT: until memtrace says TEXT (or ends), 0 if it did.
wait_for() {
    local t
    for ((t = 0; t < HANG_S * 50; t++)); do
        grep -q "$2" "$1" && return 0
        kill -0 "$sup" 2>/dev/null || { grep -q "$2" "$1"; return; }
        sleep 0.02
    done
    return 1
}

for ((round = 0; round < ROUNDS; round++)); do
    case $((round % 4)) in
        0) when=start-up ;;
        1) when=late-supervisor ;;
        *) when=attached ;;
    esac
    "${PROG[@]}" > prog.out &
    pid=$!
    sleep 0.1
    : > err.txt
    "$MEMTRACE" -p $pid < /dev/null > report.txt 2> err.txt &
    sup=$!
    delay_ms=$((RANDOM % 400))
    case $when in
    start-up)
        wait_ending_signals_held $sup
        delay_ms=$((delay_ms / 4))
        sleep "$(printf '0.%03d' $delay_ms)"
        kill -INT -- -$sup
        ;;
    attached)
        wait_for err.txt "attached to process" || fail "round $round: memtrace did not attach: $(tail -n 3 err.txt)"
        sleep "$(printf '0.%03d' $delay_ms)"
        kill -INT -- -$sup
        ;;
    late-supervisor)
        wait_for err.txt "attached to process" || fail "round $round: memtrace did not attach: $(tail -n 3 err.txt)"
        sleep "$(printf '0.%03d' $delay_ms)"
        kill -STOP $sup
        kill -INT -- -$sup
        wait_for err.txt "detached from process" || true
        kill -CONT $sup
        ;;
    esac
    msg="round $round ($when, ${delay_ms} ms)"
    for ((t = 0; t < HANG_S * 20; t++)); do kill -0 $sup 2>/dev/null || break; sleep 0.05; done
    if kill -0 $sup 2>/dev/null; then
        for p in $(pgrep -g $sup); do
            echo "process $p ($(cat "/proc/$p/comm" 2>/dev/null)): wchan $(cat "/proc/$p/wchan" 2>/dev/null)," \
                 "$(grep -E '^(State|SigPnd|ShdPnd|SigBlk|SigIgn)' "/proc/$p/status" 2>/dev/null | tr '\n' ' ')"
        done
        fail "$msg: memtrace still running ${HANG_S} s after the group's SIGINT: $(tail -n 3 err.txt)"
    fi
    wait $sup; trc=$?
    # A detached process is never left in a stop.
    for ((t = 0; t < HANG_S * 10; t++)); do
        kill -0 $pid 2>/dev/null || break
        state=$(awk '/^State:/ {print $2}' /proc/$pid/status 2>/dev/null)
        if [ "$state" = T ] || [ "$state" = t ]; then
            fail "$msg: the process was left stopped ($state)"
        fi
        sleep 0.1
    done
    kill -0 $pid 2>/dev/null && fail "$msg: the process still runs ${HANG_S} s after memtrace ended"
    wait $pid; prc=$?
    [ $prc -eq 0 ] || fail "$msg: the traced process died with status $prc; memtrace said: $(tail -n 3 err.txt)"
    [ "$(cat prog.out)" = "$expected" ] || fail "$msg: output '$(cat prog.out)' differs from untraced '$expected'"
    [ $trc -eq 0 ] || fail "$msg: memtrace exit $trc instead of a clean detach: $(tail -n 3 err.txt)"
    grep -q "killed by" err.txt && fail "$msg: $(grep 'killed by' err.txt)"
    # The signal, even one met while memtrace starts and attaches, ends the
    # session in a detach and a full report (one never heard would let
    # memtrace run on to the program's end, and say no detach).
    grep -q "Interrupt: detached from process $pid" err.txt ||
        fail "$msg: no detach said: $(tail -n 3 err.txt)"
    grep -q "HEAP SUMMARY" report.txt || fail "$msg: no report: $(tail -n 3 err.txt)"
    echo "$msg: memtrace exit 0, $(grep -c 'detached from' err.txt) detach; the process finished with the untraced output"
done
