#!/usr/bin/env bash
# --sample's estimates are unbiased on a real program: clang -O2 -c of a
# generated C file of 60 functions (Debian's clang-14, libLLVM: about
# 400,000 allocation calls, deep C++ stacks).  Its pprof export keeps every
# stack's bytes allocated (alloc_space).  Address randomization is off
# (setarch -R) for every run, so that libLLVM's pointer-keyed tables grow
# alike: two exact runs must agree within 2% on every stack over 1% of the
# bytes, else a 5% bound on the estimates would mean nothing.  (They agree
# exactly; while the agent's raw copies were 8 KiB, stacks cut short at
# random made them differ by up to 1.6%, and the sampled runs' estimates
# by up to 13%.)  Then 20 runs with different
# MEMTRACE_SAMPLE_SEED at a rate giving each run over 10,000 samples
# (reckoned from the exact run's bytes, counted from the agent's records
# that carry a stack, MEMTRACE_AGENT_STATS); the mean estimate of every
# stack holding over 1% of the bytes must be within 5% of the exact run's
# figure.  The agent.
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
. "$MT_ROOT/selftest/tests/sample_common.bash"
cd "$MT_TMP"
"$MEMTRACE" --help | grep -q 'pprof (profile.proto' || skip "this build has no pprof export"
need_tool clang-14 clang
need_tool setarch util-linux
python3 - > gen.c <<'GEN'
print('#include <stddef.h>')
for i in range(60):
    print(f'''struct s{i} {{ int a; long b[{i % 7 + 1}]; struct s{i} *next; }};
static long f{i}(struct s{i} *p, int n) {{
    long t = 0;
    for (int k = 0; k < n; k++) {{ t += p->b[k % {i % 7 + 1}] * {i + 3}; if (t > {1000 + i}) t -= p->a; p = p->next ? p->next : p; }}
    switch (n & 3) {{ case 0: return t; case 1: return t * 2; case 2: return t ^ {i}; default: return -t; }}
}}''')
print('long all(void *q, int n) { long t = 0;')
for i in range(60):
    print(f'  t += f{i}((struct s{i} *)q, n + {i});')
print('  return t; }')
GEN
CC=(clang-14 -O2 -c gen.c -o gen.o)
for run in 1 2; do
    setarch -R "$MEMTRACE" -q --format pprof -o "exact$run.pb.gz" "${CC[@]}" ||
        fail "memtrace failed (exact run $run)"
done
total=$(python3 "$MT_ROOT/selftest/tests/pprof_alloc_space.py" total exact1.pb.gz) || fail "exact1.pb.gz unreadable"
python3 "$MT_ROOT/selftest/tests/pprof_alloc_space.py" same exact1.pb.gz exact2.pb.gz 0.02 ||
    fail "two exact runs of clang differ: no figure to compare with"
# A rate that gives about 20,000 samples a run, in whole KiB.
RATE=$(( (total / 20000) / 1024 * 1024 ))
[ "$RATE" -ge 1024 ] || fail "clang allocated only $total bytes"
echo "clang allocated $total bytes; --sample $RATE"
SAMPLE_WRAP=(setarch -R)
sampled_runs $RATE "${CC[@]}"
python3 "$MT_ROOT/selftest/tests/pprof_alloc_space.py" judge "$RATE" exact1.pb.gz s{1..20}.pb.gz ||
    fail "the estimates are biased"
echo "clang: per-stack estimates unbiased within 5% over 20 seeds"
