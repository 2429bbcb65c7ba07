#!/usr/bin/env bash
# A traced program is an adversary (issue 33, docs/reliability.md "A traced
# program"): selftest/programs/rely_hostile.c runs as nobody with three
# attackers sharing its descriptor table, which, while the agent is
# injected, swap the agent's memfd and doorbell pipe for an O_PATH
# descriptor of a file only root may read or write, truncate the memfd once
# mapped, clear the pipe's O_NONBLOCK and replace the pipe with /dev/zero.
# Skipped where the agent engine cannot run (no FSGSBASE on x86_64).  The tracer runs as root,
# under -p (attached: HOSTILE_MODE=attach) or under -f (HOSTILE_MODE=fork:
# the program's children share its descriptor table, and each gets its own
# agent region while the attackers watch).  rely_hostile_attach.sh and
# rely_hostile_fork.sh run this, HOSTILE_ROUNDS attempts (default 20: -p
# attaches, or -f children injected, 2 per run).
# Every time:
#  - the root-only file keeps its bytes (cmp with a copy) and its mtime;
#  - memtrace ends by itself (a KILL after 60 s is a failure: a tracer
#    spinning on /dev/zero never ends), not by a signal (SIGBUS), with its
#    report written;
#  - the program survives (exit 0, "hostile: survived").
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_agent_engine
[ "$(id -u)" = 0 ] || skip "needs root: the tracer must be root and the target nobody"
PROG="$MT_PROGS/rely_hostile"
rounds=${HOSTILE_ROUNDS:-20}
mode=${HOSTILE_MODE:?attach or fork}
cd "$MT_TMP"

# The root-only file (0600, random bytes), in a directory nobody may search:
# an O_PATH descriptor needs no more.
vdir=$(mktemp -d /tmp/mt_hostile.XXXXXX) || fail "mktemp"
trap 'rm -rf "$vdir"' EXIT
chmod 755 "$vdir"
victim="$vdir/root-only"
head -c 8192 /dev/urandom > "$victim"
chmod 600 "$victim"
cp -p "$victim" victim.copy
mtime=$(stat -c %y "$victim")

check_victim() {
    cmp -s "$victim" victim.copy || fail "$1: the root-only file was written: $(head -c 16 "$victim" | od -c | head -2)"
    [ "$(stat -c %y "$victim")" = "$mtime" ] || fail "$1: the root-only file's mtime changed"
}

# check_tracer WHAT RC: memtrace's exit status and its report.
check_tracer() {
    local what=$1 rc=$2
    [ "$rc" -ne 137 ] || fail "$what: memtrace did not end (killed after 60 s): $(tail -3 mt.err)"
    [ "$rc" -lt 128 ] || fail "$what: memtrace died of signal $((rc - 128)): $(tail -3 mt.err)"
    [ "$rc" -eq 0 ] || fail "$what: memtrace exit $rc: $(tail -3 mt.err)"
    grep -q '"engine"' report.json || fail "$what: no report written: $(tail -3 mt.err)"
}

check_target() {
    local what=$1 rc=$2
    [ "$rc" -eq 0 ] || fail "$what: the program died (status $rc): $(cat prog.err)"
    grep -q 'hostile: survived' prog.out || fail "$what: the program did not finish: $(cat prog.out prog.err)"
}

agent=0
if [ "$mode" = attach ]; then
    for i in $(seq "$rounds"); do
        rm -f report.json
        "$PROG" attach "$victim" 1.5 > prog.out 2> prog.err &
        pid=$!
        # Attach once it runs as nobody with its attackers.
        wait_until 10 "the program as nobody" sh -c "[ \"\$(stat -c %u /proc/$pid)\" = 65534 ]"
        timeout -s KILL 60 "$MEMTRACE" -q -j -o report.json -p "$pid" > mt.out 2> mt.err
        rc=$?
        wait "$pid"; prc=$?
        check_victim "-p, attempt $i"
        check_tracer "-p, attempt $i" $rc
        check_target "-p, attempt $i" $prc
        grep -q '"engine": *"agent"' report.json && agent=$((agent + 1))
    done
    echo "-p: $rounds attempts held (the agent engine used in $agent, breakpoints in the others)"
else
    # Each run makes 2 children: ROUNDS injections in all.
    children=0 i=0
    while [ $children -lt "$rounds" ]; do
        i=$((i + 1))
        rm -f report.json
        timeout -s KILL 60 "$MEMTRACE" -q -f -j -o report.json "$PROG" fork "$victim" 0.5 \
            > prog.out 2> mt.err
        rc=$?
        check_victim "-f, run $i"
        # memtrace -f exits with the program's status.
        check_tracer "-f, run $i" $rc
        n=$(sed -n 's/^hostile: survived (\([0-9]*\) children)$/\1/p' prog.out)
        [ -n "$n" ] || fail "-f, run $i: the program did not finish: $(cat prog.out; tail -3 mt.err)"
        children=$((children + n))
        agent=$((agent + $(grep -c '"engine": *"agent"' report.json)))
    done
    echo "-f: $children children in $i runs held (processes traced by the agent engine: $agent)"
fi
check_victim "at the end"
echo "the root-only file is unchanged"
