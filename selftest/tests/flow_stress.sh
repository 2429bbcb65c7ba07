#!/usr/bin/env bash
# The stress target of issue 29: one program (data/flow_stress.c) that
# leaves signal handlers by siglongjmp (on an alternate stack) and longjmp,
# runs swapcontext coroutines that allocate on their own stacks, creates
# and cancels threads while the others allocate, and moves its threads
# between CPUs; traced 20 times in a row with a busy process per core
# beside it (started here, killed on every way out).  Each round: the
# program's output equals the untraced run's, and the agent's stacks equal
# the breakpoint engine's, frame by frame with their counts (the breakpoint
# engine, checked against gdb's `bt` by the stacks_* tests, runs in 6 of
# the 20 rounds and must give the same stacks each time).  The rounds
# alternate frame pointers / -O2 without, and stacks unwound in the target
# / raw copies (MEMTRACE_AGENT_ROWS=0).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"
need_agent_engine
D="$MT_ROOT/selftest/tests/data"
gcc ${MT_TARGET_CFLAGS:-} -g -O0 -fno-omit-frame-pointer -o flow_fp "$D/flow_stress.c" -lpthread ||
    fail "build flow_stress -O0"
gcc ${MT_TARGET_CFLAGS:-} -g -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -o flow_O2 \
    "$D/flow_stress.c" -lpthread || fail "build flow_stress -O2"
ROUNDS=2 # of the program's loop per run: short runs, all 20 of them
untraced=$(./flow_fp $ROUNDS) || fail "flow_stress failed untraced"
[ "$(./flow_O2 $ROUNDS)" = "$untraced" ] || fail "the two builds disagree untraced"

busy=()
stop_busy() {
    local p
    for p in "${busy[@]}"; do kill "$p" 2> /dev/null; done
    for p in "${busy[@]}"; do wait "$p" 2> /dev/null; done
    busy=()
}
trap stop_busy EXIT
# Niced to the bottom: each core stays busy (preemption and migration
# mid-call are the point), but inside make check's pool the busy loops
# yield to the other tests instead of taking a core each from them.
for ((c = 0; c < $(nproc); c++)); do
    (renice -n 19 -p $BASHPID >/dev/null; while :; do :; done) &
    busy+=($!)
done

for ((r = 1; r <= 20; r++)); do
    prog=./flow_fp
    ((r % 2)) || prog=./flow_O2
    rows=$((r / 2 % 2))
    # the breakpoint engine (the slower one) every other round per build
    if ((r % 8 == 1 || r % 8 == 2)); then
        out=$("$MEMTRACE" -q -d 40 -j --engine=ptrace -o "ptrace$r.json" "$prog" $ROUNDS 2> "ptrace$r.err") ||
            fail "round $r: memtrace --engine=ptrace failed: $(cat "ptrace$r.err")"
        [ "$out" = "$untraced" ] || fail "round $r: the output changed under the breakpoint engine: $out"
        python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "ptrace$r.json" > "ptrace_${prog#./}.txt"
        [ -z "$(cat "ptrace_${prog#./}.txt.prev" 2> /dev/null)" ] || diff -q "ptrace_${prog#./}.txt.prev" "ptrace_${prog#./}.txt" > /dev/null ||
            fail "round $r: the breakpoint engine's stacks changed between runs:
$(diff "ptrace_${prog#./}.txt.prev" "ptrace_${prog#./}.txt" | cut -c1-400 | head -20)"
        cp "ptrace_${prog#./}.txt" "ptrace_${prog#./}.txt.prev"
    fi
    out=$(MEMTRACE_AGENT_ROWS=$rows "$MEMTRACE" -q -d 40 -j --engine=agent -o "agent$r.json" \
        "$prog" $ROUNDS 2> "agent$r.err") ||
        fail "round $r: memtrace --engine=agent failed: $(cat "agent$r.err")"
    [ "$out" = "$untraced" ] || fail "round $r: the output changed under the agent: $out"
    grep -q '"engine": "agent"' "agent$r.json" || fail "round $r: the agent was not used: $(cat "agent$r.err")"
    python3 "$MT_ROOT/selftest/tests/engine_stacks.py" "agent$r.json" > "agent$r.txt"
    diff "ptrace_${prog#./}.txt" "agent$r.txt" > "round$r.diff" ||
        fail "round $r ($prog, rows $rows): the engines differ (< ptrace, > agent):
$(cut -c1-400 "round$r.diff" | head -20)"
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["errors"]; sys.exit(1 if e else 0)' "agent$r.json" ||
        fail "round $r: the agent reported misuse errors the program does not make: $(head -c 2000 "agent$r.json")"
done
echo "20 rounds: $(head -1 agent20.txt), $(($(wc -l < agent20.txt) - 1)) stacks, the same under both engines"
exit 0
