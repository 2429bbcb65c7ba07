#!/usr/bin/env bash
# The default engine meets a process it must not inject an agent into:
# selftest/programs/seccomp_work.c runs under a seccomp filter (memfd_create
# refused with EPERM).  memtrace -p, attached:
#  - with the default engine: one line says why the agent is not used (a
#    seccomp policy could kill the process for the agent's system calls),
#    and breakpoints trace it;
#  - with --engine=agent: the injection is tried, the policy's EPERM is
#    said in one line, and breakpoints trace it;
#  - with --engine=ptrace: breakpoints, nothing said.
# Each time the process runs on to its untraced output and status, and the
# report ("engine": "ptrace") holds exactly the program's own counts after
# the attach: 1000 allocations, 990 frees, 10 blocks (1000 bytes) in use.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
PROG="$MT_PROGS/seccomp_work"

# The untraced run (SIGUSR1 once it is ready).
"$PROG" > plain.out & pid=$!
wait_for_line plain.out '^ready$'
kill -USR1 $pid
wait $pid || fail "untraced run failed (exit $?): $(cat plain.out)"
expected=$(cat plain.out)

one() {
    local name=$1; shift
    "$PROG" > "$name.prog" & local pid=$!
    wait_for_line "$name.prog" '^ready$'
    "$MEMTRACE" "$@" -j -o "$name.json" -p $pid 2> "$name.err" & local mt=$!
    # Once memtrace has placed its intercepts (its own line), the work.
    wait_for_line "$name.err" 'functions intercepted' 20
    kill -USR1 $pid
    wait $mt || fail "$name: memtrace exit $?: $(cat "$name.err")"
    # The traced process is memtrace's child only when launched: an
    # attached one is reaped by this shell.
    wait $pid; local prc=$?
    [ $prc -eq 0 ] || fail "$name: the process ended with status $prc"
    [ "$(cat "$name.prog")" = "$expected" ] || fail "$name: output differs: $(cat "$name.prog")"
    local figures
    figures=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); h = d["heap"]
print(d["engine"], h["allocs"], h["frees"], h["in_use_blocks"], h["in_use_bytes"])' "$name.json") ||
        fail "$name: bad report"
    [ "$figures" = "ptrace 1000 990 10 1000" ] ||
        fail "$name: engine allocs frees blocks bytes: $figures, not ptrace 1000 990 10 1000"
    echo "$name: $figures; said: $(grep 'agent engine' "$name.err" || echo nothing)"
}

# This test is about the default engine.
unset MEMTRACE_ENGINE
"$MEMTRACE" -q -j -o probe.json /bin/true > /dev/null 2>&1 || fail "memtrace /bin/true failed"
default=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["engine"])' probe.json)
echo "the default engine here: $default"
one default
if [ "$default" = agent ]; then
    [ "$(grep -c 'seccomp filter' default.err)" = 1 ] || fail "default: no one line about seccomp: $(cat default.err)"
    grep -q 'agent engine unavailable.*seccomp filter.*using breakpoints' default.err ||
        fail "default: the reason is not given: $(cat default.err)"
else
    ! grep -q 'agent engine' default.err || fail "default (ptrace): $(cat default.err)"
fi

if "$MEMTRACE" -V | grep -q '^engines:.*agent'; then
    one asked --engine=agent
    grep -q 'agent engine unavailable.*memfd_create.*Operation not permitted.*using breakpoints' asked.err ||
        fail "--engine=agent: the policy's refusal is not said: $(cat asked.err)"
fi

one ptrace --engine=ptrace
! grep -q 'agent engine' ptrace.err || fail "--engine=ptrace: $(cat ptrace.err)"
echo ok
