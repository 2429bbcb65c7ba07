#!/usr/bin/env bash
# Attach to a busy multi-threaded process, trace, leave with `quit`, SIGTERM,
# SIGINT or SIGHUP: the process runs on and prints exactly what an untraced
# run prints (breakpoints and displaced return addresses all restored).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/mt_churn"
ARGS=(4 2000000)
expected=$("$PROG" "${ARGS[@]}") || fail "untraced run failed"

one_round() {
    local how=$1
    "$PROG" "${ARGS[@]}" > prog.out &
    local pid=$!
    # Attach once its 4 threads run; leave once allocations are traced.
    wait_until 10 "4 threads in $PROG" threads_at_least $pid 5
    console_open report.txt -q -p $pid
    console_wait_allocs
    if [ "$how" = quit ]; then
        printf 'quit\n' >&3
    else
        kill -"$how" $CONSOLE_PID
    fi
    wait $CONSOLE_PID; local rc=$?
    exec 3>&-
    cp report.txt.err err.txt
    [ $rc -eq 0 ] || fail "$how: memtrace exit $rc: $(cat err.txt)"
    grep -q 'HEAP SUMMARY' report.txt || fail "$how: no final report"
    wait $pid; local prc=$?
    [ $prc -eq 0 ] || fail "$how: the traced process died (status $prc) after the detach"
    [ "$(cat prog.out)" = "$expected" ] || fail "$how: output differs: $(cat prog.out) vs $expected"
    echo "$how: process finished with the untraced output"
}

for how in quit TERM INT HUP; do
    one_round $how
done
