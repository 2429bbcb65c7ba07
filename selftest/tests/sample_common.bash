# The unbiasedness tests' sampled runs (sample_unbiased_allocbench.sh,
# sample_unbiased_clang.sh).
#
# sampled_runs RATE PROGRAM ARGS...: 20 runs of memtrace --sample RATE on
# the program, MEMTRACE_SAMPLE_SEED 1..20, each writing s$seed.pb.gz (pprof)
# in the current folder.  Each must keep at least 10,000 stacks (counted:
# the agent's records that carry one, MEMTRACE_AGENT_STATS).  The array
# SAMPLE_WRAP, when set, goes before memtrace (setarch -R).
sampled_runs() {
    local rate=$1 seed n unwound raw
    shift
    for seed in $(seq 1 20); do
        MEMTRACE_AGENT_STATS=1 MEMTRACE_SAMPLE_SEED=$seed ${SAMPLE_WRAP[@]+"${SAMPLE_WRAP[@]}"} \
            "$MEMTRACE" --sample "$rate" --format pprof -o "s$seed.pb.gz" "$@" >/dev/null 2>"s$seed.err" ||
            fail "memtrace --sample failed (seed $seed): $(tail -3 "s$seed.err")"
        # "stacks unwound in the target: N (...), raw: M": the calls that kept a stack
        n=$(sed -n 's/.*stacks unwound in the target: \([0-9]*\) .*raw: \([0-9]*\),.*/\1 \2/p' "s$seed.err")
        [ -n "$n" ] || fail "no agent statistics (seed $seed): $(cat "s$seed.err")"
        read -r unwound raw <<<"$n"
        [ $((unwound + raw)) -ge 10000 ] || fail "seed $seed: $((unwound + raw)) samples, fewer than 10,000"
        [ "$seed" = 1 ] && echo "seed 1: $((unwound + raw)) calls kept their stack"
    done
}
