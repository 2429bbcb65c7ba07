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
    sleep 0.3
    if [ "$how" = quit ]; then
        (sleep 1.5; echo status; echo quit) | "$MEMTRACE" -q -p $pid > report.txt 2> err.txt &
    else
        "$MEMTRACE" -q -p $pid < /dev/null > report.txt 2> err.txt &
    fi
    local tracer=$!
    sleep 1.5
    [ "$how" = quit ] || kill -"$how" $tracer
    wait $tracer; local rc=$?
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
