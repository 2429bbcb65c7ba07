#!/usr/bin/env bash
# Blocks made by one thread and reallocated and freed by another (issue 29:
# "Invalid free" at a realloc whose malloc was not booked yet).  Under the
# agent each thread records into its own ring, and the tracer merges the
# rings by the records' stamps: a block's release must come after the
# allocation another thread recorded.  The stamps were the CPUs' clocks,
# which order threads only as well as the CPUs agree (a VM's TSC may not);
# they are now one counter the agent takes atomically, whatever the CPU.
# Oracles: valgrind's HEAP SUMMARY (both engines), no misuse error, and the
# breakpoint engine's stacks (the agent with rows and with raw copies).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
need_agent_engine
need_tool valgrind valgrind
N=200
gcc ${MT_TARGET_CFLAGS:-} -g -O0 -pthread -o handoff "$MT_ROOT/selftest/tests/data/handoff_realloc.c" ||
    fail "build handoff_realloc"
untraced=$(./handoff $N) || fail "handoff_realloc failed untraced"
vg=$(valgrind_summary ./handoff $N) || fail "valgrind failed"
errors_of() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["errors"]))' "$1"; }
run() { # NAME ENGINE ROWS
    local name=$1 out
    out=$(MEMTRACE_AGENT_ROWS=$3 "$MEMTRACE" -q -j --engine="$2" -o "$name.json" ./handoff $N 2> "$name.err") ||
        fail "$name: memtrace failed: $(cat "$name.err")"
    [ "$out" = "$untraced" ] || fail "$name: the output changed: $out"
    local n mt
    n=$(errors_of "$name.json")
    [ "$n" = 0 ] || fail "$name: $n misuse errors the program does not make: $(head -c 1500 "$name.json")"
    mt=$(memtrace_json_figures "$name.json")
    [ "$mt" = "$vg" ] || fail "$name: figures $mt, valgrind's $vg (allocs frees bytes in_use_bytes in_use_blocks)"
    python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "$name.json" > "$name.txt"
}
run ptrace ptrace 1
for rows in 1 0; do
    run "agent$rows" agent $rows
    grep -q '"engine": "agent"' "agent$rows.json" || fail "the agent was not used: $(cat "agent$rows.err")"
    diff ptrace.txt "agent$rows.txt" > "agent$rows.diff" ||
        fail "rows $rows: the engines differ (< ptrace, > agent):
$(head -20 "agent$rows.diff")"
done
echo "valgrind: $vg; both engines the same, no misuse error, the same stacks"
exit 0
