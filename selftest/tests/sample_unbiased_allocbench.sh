#!/usr/bin/env bash
# --sample's estimates are unbiased on allocbench (bench/allocbench.c, the
# workload of make bench: malloc, calloc, realloc and a short-lived malloc
# per round, sizes from tiny to large, every block freed): its pprof
# export keeps every stack's bytes allocated (alloc_space), which the JSON
# report, listing the stacks in use only, does not.  20 runs with
# different MEMTRACE_SAMPLE_SEED at a rate giving each run over 10,000
# samples (counted: the agent's records that carry a stack,
# MEMTRACE_AGENT_STATS); the mean estimate of every stack holding over 1%
# of the bytes must be within 5% of the exact run's figure.  The agent.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/sample_common.bash"
cd "$MT_TMP"
"$MEMTRACE" --help | grep -q 'pprof (profile.proto' || skip "this build has no pprof export"
ROUNDS=20000
RATE=8192

"$MEMTRACE" -q --format pprof -o exact.pb.gz "$MT_BENCH_BIN" $ROUNDS 8 1 >/dev/null ||
    fail "memtrace failed (exact)"
sampled_runs $RATE "$MT_BENCH_BIN" $ROUNDS 8 1

python3 "$MT_ROOT/selftest/tests/pprof_alloc_space.py" judge "$RATE" exact.pb.gz s{1..20}.pb.gz ||
    fail "the estimates are biased"
echo "allocbench: per-stack estimates unbiased within 5% over 20 seeds"
