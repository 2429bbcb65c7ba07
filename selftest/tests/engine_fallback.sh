#!/usr/bin/env bash
# The agent cannot redirect one intercepted function: selftest/tests/data/
# agent_refused.c exports its own pvalloc, which begins with a 2-byte jump
# (the agent's 5-byte trampoline cannot move it).  Started under the agent
# (the default where it is built), memtrace says so in one line per
# function and one for the switch, and traces the process with breakpoints
# ("engine": "ptrace"), which intercept pvalloc: the figures equal
# valgrind's.  Without the switch pvalloc's 20 calls would go unrecorded.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_tool valgrind valgrind
cd "$MT_TMP"
need_agent_engine
gcc -O0 -g -Wl,--export-dynamic-symbol=pvalloc -o refused "$MT_ROOT/selftest/tests/data/agent_refused.c" ||
    fail "cannot build agent_refused.c"
expected=$(./refused) || fail "untraced run failed"

"$MEMTRACE" --engine=agent -j -o r.json ./refused > out.txt 2> err.txt || fail "memtrace failed: $(cat err.txt)"
[ "$(cat out.txt)" != "" ] && [ "$(sed 's/0x[0-9a-f]*//' out.txt)" = "$(sed 's/0x[0-9a-f]*//' <<<"$expected")" ] ||
    fail "output differs: $(cat out.txt)"
grep 'agent engine' err.txt
grep -q 'agent engine: pvalloc in .*refused: a jump inside the first 5 bytes' err.txt ||
    fail "the refused function is not named: $(cat err.txt)"
[ "$(grep -c 'cannot be redirected; using breakpoints' err.txt)" = 1 ] ||
    fail "the switch to breakpoints is not said once: $(cat err.txt)"
engine=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["engine"])' r.json)
[ "$engine" = ptrace ] || fail "the report names engine $engine"
vg=$(valgrind_summary ./refused) || fail "valgrind failed"
mt=$(memtrace_json_figures r.json)
echo "valgrind: $vg | memtrace: $mt"
[ "$vg" = "$mt" ] || fail "figures differ (allocs frees bytes in_use_bytes in_use_blocks)"
echo ok
