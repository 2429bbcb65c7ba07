#!/usr/bin/env bash
# Signals, issue 29 (case 4b and what it showed):
# 1. A launched program starts with the signal mask and ignored signals
#    memtrace was given, as untraced: memtrace blocks the signals that end
#    a session from its start, and the program used to inherit that
#    (SIGINT, SIGTERM, SIGHUP and SIGCHLD blocked in the program).  The
#    oracle: /proc/self/status of the untraced run, from a start with
#    SIGUSR1 blocked and SIGUSR2 ignored.
# 2. A signal during memtrace's start-up ends in a clean detach: SIGTERM
#    sent 0 to 39 ms after `memtrace -p` started; each time the program
#    runs on to its untraced output and memtrace exits 0 (or, when the
#    signal came before memtrace ran at all, died of it having said and
#    done nothing).  It used to kill the supervisor before its handlers
#    were in place (exit 143, "cannot hand the target to the guardian:
#    Broken pipe"), or the tracer before it blocked the signal.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"

# 1: the launched program's signal mask
start_with_mask() { # COMMAND... : SIGUSR1 blocked, SIGUSR2 ignored
    python3 -c '
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
signal.signal(signal.SIGUSR2, signal.SIG_IGN)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
start_with_mask grep -E '^Sig(Blk|Ign):' /proc/self/status > untraced.txt || fail "untraced grep failed"
grep -q '^SigBlk:.*[1-9a-f]' untraced.txt || fail "the oracle has no blocked signal: $(cat untraced.txt)"
for flags in "" "-a"; do
    start_with_mask "$MEMTRACE" -q $flags -o report.txt grep -E '^Sig(Blk|Ign):' /proc/self/status \
        > traced.txt 2> traced.err || fail "memtrace $flags failed: $(cat traced.err)"
    diff untraced.txt traced.txt > mask.diff ||
        fail "memtrace $flags: the program's signals differ from the untraced run (< untraced):
$(cat mask.diff)"
done
echo "a launched program's blocked and ignored signals are the untraced run's (${MEMTRACE_ENGINE:-default} engine)"

# 2: SIGTERM during start-up
[ "${MEMTRACE_ENGINE:-}" = ptrace ] && exit 0 # (the start-up is the same for both)
expected=$("$MT_PROGS/rely_ticker" 2 150 2) || fail "untraced rely_ticker failed"
for ((ms = 0; ms < 40; ms++)); do
    "$MT_PROGS/rely_ticker" 2 150 2 > prog.out &
    pid=$!
    sleep 0.1 # (running: not in the shell's fork any more)
    "$MEMTRACE" -q -p $pid < /dev/null > report.txt 2> err.txt &
    tracer=$!
    sleep "$(printf '0.%03d' $ms)"
    kill -TERM $tracer
    wait $tracer
    trc=$?
    wait $pid
    prc=$?
    msg="SIGTERM after $ms ms: memtrace exit $trc"
    [ $prc -eq 0 ] || fail "$msg: the program died with status $prc: $(tail -n 3 err.txt)"
    [ "$(cat prog.out)" = "$expected" ] || fail "$msg: the program's output differs from untraced"
    if [ $trc -ne 0 ]; then
        # only a memtrace the signal killed before it could block it
        [ $trc -eq 143 ] && [ ! -s err.txt ] && [ ! -s report.txt ] ||
            fail "$msg: $(tail -n 3 err.txt)"
    fi
done
echo "SIGTERM 0 to 39 ms after memtrace -p started: 40 clean ends"
exit 0
