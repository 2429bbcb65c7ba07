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

python3 - "$RATE" <<'PY' || fail "the estimates are biased"
import gzip, math, sys
rate = int(sys.argv[1])

def fields(b):
    """A protobuf message's fields: number -> list of ints or bytes."""
    out, i = {}, 0
    def varint(i):
        v = s = 0
        while True:
            c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
            if c < 0x80:
                return v, i
    while i < len(b):
        key, i = varint(i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(i)
        elif w == 2:
            n, i = varint(i)
            v = b[i:i + n]; i += n
        elif w == 1:
            v = int.from_bytes(b[i:i + 8], 'little'); i += 8
        elif w == 5:
            v = int.from_bytes(b[i:i + 4], 'little'); i += 4
        else:
            raise ValueError('wire type %d' % w)
        out.setdefault(f, []).append(v)
    return out

def packed(vals):
    """A repeated varint field, packed or not."""
    out = []
    for v in vals:
        if isinstance(v, int):
            out.append(v)
            continue
        i = 0
        while i < len(v):
            x = s = 0
            while True:
                c = v[i]; i += 1; x |= (c & 0x7f) << s; s += 7
                if c < 0x80:
                    break
            out.append(x)
    return out

def alloc_space(path):
    """Bytes allocated per stack, a stack named by its (function, line)s."""
    p = fields(gzip.open(path).read())
    strings = [s.decode() for s in p.get(6, [])]
    types = [strings[fields(vt).get(1, [0])[0]] for vt in p.get(1, [])]
    col = types.index('alloc_space')
    fn = {}
    for f in p.get(5, []):
        m = fields(f)
        fn[m[1][0]] = strings[m.get(2, [0])[0]]
    loc = {}
    for l in p.get(4, []):
        m = fields(l)
        lines = []
        for ln in m.get(4, []):
            lm = fields(ln)
            lines.append((fn.get(lm.get(1, [0])[0], '?'), lm.get(2, [0])[0]))
        loc[m[1][0]] = tuple(lines)
    out = {}
    for s in p.get(2, []):
        m = fields(s)
        key = tuple(loc[i] for i in packed(m.get(1, [])))
        vals = packed(m.get(2, []))
        out[key] = out.get(key, 0) + vals[col]
    return out, p.get(12, [0])[0]

exact, period = alloc_space('exact.pb.gz')
total = sum(exact.values())
print('exact: %d stacks, %d bytes allocated, period %d' % (len(exact), total, period))
sums = {k: 0 for k in exact}
for seed in range(1, 21):
    est, period = alloc_space('s%d.pb.gz' % seed)
    if period != rate:
        sys.exit('run %d: pprof period %d, not %d' % (seed, period, rate))
    for k, v in est.items():
        if k in sums:
            sums[k] += v
judged = 0
bad = []
for k, v in sorted(exact.items(), key=lambda kv: -kv[1]):
    share = v / total
    if share <= 0.01:
        continue
    judged += 1
    mean = sums[k] / 20
    err = (mean - v) / v
    site = next((f'{f}:{l}' for lines in k for f, l in lines if f not in
                 ('malloc', 'calloc', 'realloc', '__libc_malloc', '__GI___libc_malloc',
                  '__libc_calloc', '__GI___libc_realloc', '__libc_realloc')), '?')
    print('%-24s %5.1f%% of the bytes: exact %10d, mean estimate %12.1f (%+.2f%%)'
          % (site, 100 * share, v, mean, 100 * err))
    if abs(err) > 0.05:
        bad.append(site)
if judged < 3:
    sys.exit('only %d stacks over 1%%: allocbench changed?' % judged)
if bad:
    sys.exit('mean estimate off by more than 5%: ' + ', '.join(bad))
PY
echo "allocbench: per-stack estimates unbiased within 5% over 20 seeds"
