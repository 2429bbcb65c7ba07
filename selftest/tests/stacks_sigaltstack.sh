#!/usr/bin/env bash
# A signal handler on an alternate stack (SA_ONSTACK, sigaltstack) that
# allocates and leaves with siglongjmp, 300 times (issue 29): the frames
# below the signal frame live on the other stack.  Every stack equals gdb's
# `bt` at a breakpoint on malloc and each of gdb's backtraces is among
# memtrace's stacks (20 rounds, the engine under test), and the
# agent's stacks, unwound in the target and from raw copies
# (MEMTRACE_AGENT_ROWS=0), equal the breakpoint engine's, frame by frame,
# for all 300 rounds.  The bug this guards against: frames beyond the copied
# window read from the live process after it had moved on (about 1 stack
# in 10 wrong).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool gdb gdb
cd "$MT_TMP"
D="$MT_ROOT/selftest/tests/data"

for opt in -O0 "-O2 -fomit-frame-pointer"; do
    tag=$(echo "$opt" | tr -dc 'O0-9')
    gcc ${MT_TARGET_CFLAGS:-} -g $opt -o "sigalt_$tag" "$D/sigalt_jump.c" || fail "build $tag"
    untraced=$("./sigalt_$tag" 300) || fail "sigalt_$tag failed untraced"

    # gdb's backtraces at every malloc, against the engine under test
    {
        echo "set pagination off"
        echo "set print frame-arguments none"
        echo "set confirm off"
        echo "handle SIGUSR1 nostop noprint pass"
        echo "break *malloc"
        echo "run 20"
        echo "while 1"
        echo "  bt 40"
        echo "  continue"
        echo "end"
    } > "gdb_$tag.cmd"
    gdb -batch -nx -x "gdb_$tag.cmd" "./sigalt_$tag" > "gdb_$tag.log" 2>&1
    grep -q "signal handler called" "gdb_$tag.log" || fail "$tag: gdb saw no signal frame"
    "$MEMTRACE" -q -d 40 -j -o "gdb_$tag.json" "./sigalt_$tag" 20 > /dev/null ||
        fail "$tag: memtrace failed"
    python3 "$MT_ROOT/selftest/tests/stacks_compare.py" --functions --both-ways "gdb_$tag.log" "gdb_$tag.json" sigalt_jump.c ||
        fail "$tag: memtrace's stacks differ from gdb's backtraces"
    echo "$tag: gdb's backtraces found in memtrace's stacks (${MEMTRACE_ENGINE:-default} engine)"

    # the engines against each other, 300 rounds
    [ "${MEMTRACE_ENGINE:-}" = ptrace ] && continue   # (the @ptrace run: nothing new)
    out=$("$MEMTRACE" -q -d 40 -j --engine=ptrace -o "ptrace_$tag.json" "./sigalt_$tag" 300) ||
        fail "$tag: memtrace --engine=ptrace failed"
    [ "$out" = "$untraced" ] || fail "$tag: the output changed under the breakpoint engine: $out"
    python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "ptrace_$tag.json" > "ptrace_$tag.txt"
    grep -q "^[0-9]* 300 300 " "ptrace_$tag.txt" ||
        fail "$tag: the breakpoint engine does not give one stack for the 300 handlers: $(cat "ptrace_$tag.txt")"
    ( need_agent_engine ) > agent_why.txt || continue
    for rows in 1 0; do
        out=$(MEMTRACE_AGENT_ROWS=$rows "$MEMTRACE" -q -d 40 -j --engine=agent \
            -o "agent${rows}_$tag.json" "./sigalt_$tag" 300 2> "agent${rows}_$tag.err") ||
            fail "$tag: memtrace --engine=agent failed: $(cat "agent${rows}_$tag.err")"
        [ "$out" = "$untraced" ] || fail "$tag: the output changed under the agent: $out"
        grep -q '"engine": "agent"' "agent${rows}_$tag.json" ||
            fail "$tag: the agent engine was not used: $(cat "agent${rows}_$tag.err")"
        python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "agent${rows}_$tag.json" > "agent${rows}_$tag.txt"
        diff "ptrace_$tag.txt" "agent${rows}_$tag.txt" > "agent${rows}_$tag.diff" ||
            fail "$tag: the engines differ (< ptrace, > agent, rows $rows):
$(head -20 "agent${rows}_$tag.diff")"
    done
    echo "$tag: 300 handler stacks the same under both engines (rows and raw copies)"
done
[ -s agent_why.txt ] && skip "the engines were not compared: $(cat agent_why.txt)"
exit 0
