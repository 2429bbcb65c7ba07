#!/usr/bin/env bash
# Signals reach a traced program as they reach an untraced one
# (selftest/programs/proc_signals.c): its own SIGUSR1s and one from outside,
# SIGSEGVs its handler recovers from with siglongjmp, and job control from
# outside (SIGSTOP and SIGTSTP: the process stays stopped, does not run,
# and runs on at SIGCONT).  Its output equals an untraced run's; its HEAP
# SUMMARY equals valgrind's.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
PROG="$MT_PROGS/proc_signals"
ROUNDS=120

# wait_done FILE: until the program says its rounds are done.
wait_done() { wait_for_line "$1" 'rounds done' 60; }
# wait_ready FILE: until its handlers are in (a SIGCONT before would go
# uncounted: "cont 1" in one loaded make check).
wait_ready() { wait_for_line "$1" 'proc_signals: ready' 60; }

switches() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/status"; }

# stop_and_continue PID SIG: PID must stop, stay stopped without running,
# and run on after SIGCONT.
stop_and_continue() {
    local pid=$1 sig=$2 state before after
    kill -"$sig" "$pid"
    for _ in $(seq 100); do
        state=$(awk '/^State/ {print $2}' "/proc/$pid/status")
        case $state in T|t) break ;; esac
        sleep 0.02
    done
    case $state in T|t) ;; *) fail "SIG$sig: process $pid did not stop (state $state)" ;; esac
    before=$(switches "$pid")
    # A window in which it must not run (no event to wait for).
    sleep 0.4
    after=$(switches "$pid")
    [ "$before" = "$after" ] || fail "SIG$sig: process $pid ran while stopped ($before -> $after switches)"
    kill -CONT "$pid"
    ran_since() { [ "$(switches "$1")" -gt "$2" ]; }
    wait_until 5 "process $pid to run after SIGCONT (SIG$sig)" ran_since "$pid" "$before"
}

# The untraced run, driven the same way.
"$PROG" $ROUNDS > plain.out &
pid=$!
wait_ready plain.out
stop_and_continue $pid STOP
stop_and_continue $pid TSTP
wait_done plain.out
kill -USR1 $pid
wait $pid || fail "untraced run failed"
expected=$(grep -v 'rounds done\|ready' plain.out)
echo "untraced: $expected"
case $expected in *"outside 1, segv recovered 5, cont 2"*) ;; *) fail "untraced run: $expected" ;; esac

# Under memtrace.
"$MEMTRACE" -q -j -o mt.json "$PROG" $ROUNDS > mt.out 2> mt.err &
tracer=$!
for _ in $(seq 100); do pid=$(program_pid $tracer) && break; sleep 0.05; done
[ -n "$pid" ] || fail "no traced process"
wait_ready mt.out
stop_and_continue "$pid" STOP
stop_and_continue "$pid" TSTP
wait_done mt.out
kill -USR1 "$pid"
wait $tracer; rc=$?
[ $rc -eq 0 ] || fail "memtrace exit $rc: $(cat mt.err)"
got=$(grep -v 'rounds done\|ready' mt.out)
echo "traced:   $got"
[ "$got" = "$expected" ] || fail "traced output differs"

# The same figures as valgrind's (which needs the outside SIGUSR1 too).
valgrind --run-libc-freeres=no --log-file=vg.log "$PROG" $ROUNDS > vg.out 2>&1 &
vg=$!
wait_done vg.out
kill -USR1 $vg
wait $vg || fail "valgrind run failed"
vgf=$(python3 - vg.log <<'PY'
import re, sys
t = open(sys.argv[1]).read()
num = lambda s: int(s.replace(',', ''))
m = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', t)
h = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', t)
print(num(h.group(1)), num(h.group(2)), num(h.group(3)), num(m.group(1)), num(m.group(2)))
PY
)
mtf=$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["heap"]; print(h["allocs"],h["frees"],h["bytes_allocated"],h["in_use_bytes"],h["in_use_blocks"])' mt.json)
echo "valgrind: $vgf | memtrace: $mtf"
[ "$vgf" = "$mtf" ] || fail "figures differ from valgrind's"
echo ok
