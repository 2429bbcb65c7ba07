#!/usr/bin/env bash
# SIGKILL of the tracer while the agent engine traces a busy 4-thread
# target (allocbench): the guardian switches the agent off (and the agent
# notices by itself through a pidfd of the tracer at its next full ring),
# so every call passes straight through and the target must finish with
# its untraced output every time.  With breakpoints no busy target survives
# this (rely_sigkill.sh's tracer.busy case).  AGENT_KILL_ROUNDS rounds
# (default 5; the README's figure is from 20).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
need_agent_engine
[ -x "$MT_BENCH_BIN" ] || skip "no allocbench"
rounds=${AGENT_KILL_ROUNDS:-5}
out=$(MEMTRACE_ENGINE=agent RELY_KILL_SURVIVAL_ONLY=1 RELY_KILL_CASES=tracer.busy RELY_KILL_ROUNDS=$rounds RELY_KILL_MEASURE_ONLY=1 \
      RELY_BUSY_THREADS=4 bash "$MT_ROOT/selftest/tests/rely_sigkill.sh" 2>&1) || fail "rely_sigkill.sh: $out"
echo "$out"
echo "$out" | grep -q "busy target: survived $rounds of $rounds" || fail "a busy target died after the tracer's SIGKILL"
