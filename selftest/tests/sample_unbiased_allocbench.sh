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
cd "$MT_TMP"
"$MEMTRACE" --help | grep -q 'pprof (profile.proto' || skip "this build has no pprof export"
ROUNDS=20000
RATE=8192

"$MEMTRACE" -q --format pprof -o exact.pb.gz "$MT_BENCH_BIN" $ROUNDS 8 1 >/dev/null ||
    fail "memtrace failed (exact)"
for seed in $(seq 1 20); do
    MEMTRACE_AGENT_STATS=1 MEMTRACE_SAMPLE_SEED=$seed "$MEMTRACE" --sample $RATE --format pprof \
        -o "s$seed.pb.gz" "$MT_BENCH_BIN" $ROUNDS 8 1 >/dev/null 2>"s$seed.err" ||
        fail "memtrace --sample failed (seed $seed): $(tail -3 "s$seed.err")"
    # "stacks unwound in the target: N (...), raw: M": the calls that kept a stack
    n=$(sed -n 's/.*stacks unwound in the target: \([0-9]*\) .*raw: \([0-9]*\),.*/\1 \2/p' "s$seed.err")
    [ -n "$n" ] || fail "no agent statistics (seed $seed): $(cat "s$seed.err")"
    read -r unwound raw <<<"$n"
    [ $((unwound + raw)) -ge 10000 ] || fail "seed $seed: $((unwound + raw)) samples, fewer than 10,000"
    [ $seed = 1 ] && echo "seed 1: $((unwound + raw)) calls kept their stack"
done

python3 "$MT_ROOT/selftest/tests/pprof_alloc_space.py" judge "$RATE" exact.pb.gz s{1..20}.pb.gz ||
    fail "the estimates are biased"
echo "allocbench: per-stack estimates unbiased within 5% over 20 seeds"
