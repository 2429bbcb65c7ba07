#!/usr/bin/env bash
# The agent engine (--engine=agent, target/agent) against the breakpoint
# engine, which the other tests check against valgrind and gdb: for the same
# programs the two give the same HEAP SUMMARY and the same stacks (every
# stack with blocks in use, frame by frame as module+offset, with its
# bytes, blocks and allocation count).  The agent runs twice: unwinding in
# the target with the rows the tracer compiled (the default), and with raw
# stack copies only (MEMTRACE_AGENT_ROWS=0), which the tracer unwinds.  Then the engine is named where it
# should be (JSON "engine", the console's status), and a program the agent
# was detached from (quit) runs on unpatched.  The misuse errors are
# compared too: memo_twins' free(p), malloc(8) == p, realloc(p) booked out
# of order changes no figure and no stack, only the errors (issue 29, 4a).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
need_agent_engine
D="$MT_ROOT/selftest/tests/data"
g++ ${MT_TARGET_CFLAGS:-} -g -O0 -o stacks_cxx "$D/stacks_cxx.cpp" || fail "build C++"
gcc ${MT_TARGET_CFLAGS:-} -g -O2 -fomit-frame-pointer -fPIC -shared -o libstacks.so "$D/stacks_lib.c" || fail "build lib"
gcc ${MT_TARGET_CFLAGS:-} -g -O2 -fomit-frame-pointer -o stacks_O2 "$D/stacks_main.c" -L. -lstacks || fail "build main"
# The agent's unwind memo: frames that look alike from different paths.
gcc ${MT_TARGET_CFLAGS:-} -g -O0 -fno-omit-frame-pointer -o memo_twins_fp "$D/memo_twins.c" || fail "build memo_twins"
gcc ${MT_TARGET_CFLAGS:-} -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -o memo_twins_O2 "$D/memo_twins.c" ||
    fail "build memo_twins -O2"

stacks_of() { # JSON -> one line per stack, sorted; the summary and the misuse errors first
    python3 "$MT_ROOT/selftest/tests/engine_stacks.py" --errors "$1"
}

compare() { # NAME ARGS...
    local name=$1; shift
    LD_LIBRARY_PATH=. "$MEMTRACE" -q -d 40 -j --engine=ptrace -o "$name.ptrace.json" "$@" > /dev/null ||
        fail "$name: memtrace --engine=ptrace failed"
    stacks_of "$name.ptrace.json" > "$name.ptrace.txt"
    for rows in 1 0; do
        LD_LIBRARY_PATH=. MEMTRACE_AGENT_ROWS=$rows "$MEMTRACE" -q -d 40 -j --engine=agent \
            -o "$name.agent$rows.json" "$@" > /dev/null 2> "$name.err" ||
            fail "$name: memtrace --engine=agent failed: $(cat "$name.err")"
        [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["engine"])' "$name.agent$rows.json")" = agent ] ||
            fail "$name: the agent engine was not used: $(cat "$name.err")"
        stacks_of "$name.agent$rows.json" > "$name.agent$rows.txt"
        diff "$name.ptrace.txt" "$name.agent$rows.txt" > "$name.diff" ||
            fail "$name: the engines differ (< ptrace, > agent, rows $rows):
$(head -20 "$name.diff")"
    done
    echo "$name: $(head -1 "$name.agent1.txt"), $(sed -n 2p "$name.agent1.txt"), $(($(wc -l < "$name.agent1.txt") - 2)) stacks, the same three ways"
}

compare alloc_mix "$MT_PROGS/alloc_mix"
compare unwind_shapes "$MT_PROGS/unwind_shapes"
compare intercept_cxx "$MT_PROGS/intercept_cxx"
compare leak_kinds "$MT_PROGS/leak_kinds"
compare stacks_O2 ./stacks_O2
compare stacks_cxx ./stacks_cxx
compare counts "$MT_PROGS/intercept_counts"
compare memo_twins_fp ./memo_twins_fp
compare memo_twins_O2 ./memo_twins_O2
# Many calls from the same frames: after the first, stacks come unwound
# from the target (the status line below counts them).
compare allocbench_4thr "$MT_BENCH_BIN" 2000 12 4

# The console names the engine; quit detaches and the program (busy for a
# few seconds whatever the engine costs) runs on.
"$MT_PROGS/rely_ticker" 4 2000 2 > churn.out &
pid=$!
console_open console.out --engine=agent -p $pid
sleep 1
console_cmd status
echo "$CONSOLE_REPLY" | grep -q "engine: agent (.*functions patched" || fail "status does not name the agent: $CONSOLE_REPLY"
echo "$CONSOLE_REPLY" | grep -E "^ *engine:"
echo "$CONSOLE_REPLY" | grep -Eq "stacks unwound in the target: [1-9]" ||
    fail "no stack was unwound in the target: $CONSOLE_REPLY"
printf 'quit\n' >&3
exec 3>&-
wait $CONSOLE_PID || fail "memtrace failed: $(cat console.out.err)"
grep -q "agent unmapped" console.out.err || fail "the agent was not unmapped at detach: $(cat console.out.err)"
grep -q memtrace-agent /proc/$pid/maps 2>/dev/null && fail "the shared region is still mapped after detach"
wait $pid || fail "rely_ticker failed after the detach"
expected=$("$MT_PROGS/rely_ticker" 4 2000 2)
[ "$(cat churn.out)" = "$expected" ] || fail "rely_ticker's output changed under the agent"
exit 0
