#!/usr/bin/env bash
# Threads created and cancelled while memtrace attaches (issue 29): under
# the agent they must get the breakpoint engine's stacks.  The program
# (data/attach_cancel.c) makes, cancels and joins a thread at a time, each
# allocating and freeing, from before the attach until SIGUSR1, sent once
# the console answers; then K more such threads each keep one 200-byte
# block.  For each engine: the program prints what an untraced run
# prints, no misuse error, and the blocks in use memtrace saw are the K
# blocks the program kept (its own count), on one stack (bytes, blocks,
# allocations and frames as module+offset) which is the same under both
# engines, with rows and with raw copies (MEMTRACE_AGENT_ROWS=0).  What was
# made before the attach completed varies with the moment, so no other
# figure is compared.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
need_agent_engine
K=50
gcc ${MT_TARGET_CFLAGS:-} -g -O0 -pthread -o attach_cancel "$MT_ROOT/selftest/tests/data/attach_cancel.c" ||
    fail "build attach_cancel"
expected=$(./attach_cancel $K < /dev/null 2> /dev/null & pid=$!; sleep 0.2; kill -USR1 $pid; wait $pid) ||
    fail "attach_cancel failed untraced"

# in_use NAME: the stacks with blocks in use, one line each (engine_stacks.py)
in_use() { python3 "$MT_ROOT/selftest/tests/engine_stacks.py" --errors "$1.json" | sed 1d; }
prog_pid=
trap '[ -n "$prog_pid" ] && kill $prog_pid 2> /dev/null' EXIT # never left waiting for SIGUSR1
one() { # NAME ENGINE ROWS
    local name=$1 pid rc
    ./attach_cancel $K > "$name.out" 2> "$name.prog.err" &
    pid=$!
    prog_pid=$pid
    wait_for_line "$name.out" '^ready$' 20
    MEMTRACE_AGENT_ROWS=$3 console_open "$name.console" -q -j -o "$name.json" --engine="$2" -p $pid
    console_cmd status # the attach is done: the console answers
    kill -USR1 $pid
    wait $pid; rc=$?
    prog_pid=
    [ $rc -eq 0 ] || fail "$name: attach_cancel exited $rc: $(cat "$name.prog.err")"
    exec 3>&-
    wait $CONSOLE_PID || fail "$name: memtrace failed: $(cat "$name.console.err")"
    [ "$(grep -v '^ready$' "$name.out")" = "$(grep -v '^ready$' <<< "$expected")" ] ||
        fail "$name: the output changed: $(cat "$name.out")"
    grep -q "\"engine\": \"$2\"" "$name.json" || fail "$name: not traced by the $2 engine: $(cat "$name.console.err")"
    in_use "$name" > "$name.txt"
    [ "$(head -1 "$name.txt")" = "errors 0" ] || fail "$name: misuse errors the program does not make: $(head -1 "$name.txt")"
    [ "$(wc -l < "$name.txt")" = 2 ] || fail "$name: blocks in use on other stacks than after_leaf's:
$(cat "$name.txt")"
    local fig
    fig=$(sed -n 2p "$name.txt" | cut -d' ' -f1-3)
    [ "$fig" = "$((200 * K)) $K $K" ] ||
        fail "$name: after_leaf's stack has bytes blocks allocs $fig, the program kept $((200 * K)) $K $K"
    echo "$name: $(sed -n 2p "$name.txt" | cut -d' ' -f1-3) ($(cat "$name.prog.err"))"
}
one ptrace ptrace 1
for rows in 1 0; do
    one "agent$rows" agent $rows
    diff ptrace.txt "agent$rows.txt" > "agent$rows.diff" ||
        fail "rows $rows: the engines differ (< ptrace, > agent):
$(cat "agent$rows.diff")"
done
echo "both engines: $K blocks of 200 bytes on one stack, frame by frame the same"
exit 0
