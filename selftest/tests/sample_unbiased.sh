#!/usr/bin/env bash
# --sample's per-stack figures are unbiased estimates: a program with five
# allocation stacks of known byte shares (blocks of a few dozen bytes to a
# few hundred KiB, all live at the end) is traced 20 times with different
# MEMTRACE_SAMPLE_SEED at a rate giving each run over 10,000 samples
# (reckoned from the program's own sizes); the mean estimate of every
# stack holding over 1% of the bytes must be within 5% of the exact run's
# figure, which must itself be the program's arithmetic.  The agent only:
# the breakpoint engine books through the same code (sample_exact.sh runs it).
set -u
. "$MT_ROOT/selftest/tests/lib.bash"
cd "$MT_TMP"

cat > shares.c <<'SRC'
#include <stdio.h>
#include <stdlib.h>
/* Sizes from a fixed LCG (the test recomputes them): stack k gets
 * blocks of lo[k] + r % span[k] bytes until it holds want[k] bytes. */
static unsigned rng = 12345;
static unsigned draw(void) { rng = rng * 1103515245u + 12345u; return rng >> 8; }
static void *volatile keep;
static void **all;
static size_t n;
#define STACK(name) \
    __attribute__((noinline)) static void name(size_t lo, size_t span, size_t want) \
    { \
        for (size_t got = 0; got < want;) { \
            size_t s = lo + draw() % span; \
            all[n++] = malloc(s); \
            got += s; \
        } \
    }
STACK(tiny)
STACK(small)
STACK(medium)
STACK(large)
STACK(rare)
int main(void)
{
    all = calloc(1 << 17, sizeof(*all));
    tiny(24, 48, 2 << 20);          /* ~42000 blocks, 2 MiB */
    small(200, 1600, 4 << 20);      /* ~4200 blocks, 4 MiB */
    medium(8192, 32768, 6 << 20);   /* ~260 blocks, 6 MiB */
    large(100000, 200000, 3 << 20); /* ~16 blocks, 3 MiB */
    rare(16, 16, 64 << 10);         /* 0.4%: not judged */
    keep = all;
    printf("%zu blocks\n", n);
    return 0;
}
SRC
gcc ${MT_TARGET_CFLAGS:-} -g -O1 -fno-builtin -fno-inline -o shares shares.c || fail "cannot build shares.c"
RATE=256

"$MEMTRACE" -q -j -o exact.json ./shares >/dev/null || fail "memtrace failed (exact)"
for seed in $(seq 1 20); do
    MEMTRACE_SAMPLE_SEED=$seed "$MEMTRACE" -q --sample $RATE -j -o "s$seed.json" ./shares >/dev/null ||
        fail "memtrace --sample failed (seed $seed)"
done

python3 - "$RATE" <<'PY' || fail "the estimates are biased (or the exact run is wrong)"
import json, math, sys
rate = int(sys.argv[1])

# The program's arithmetic, and the samples a run expects: a block of s
# bytes is sampled with probability 1 - exp(-s/rate).
rng = 12345
def draw():
    global rng
    rng = (rng * 1103515245 + 12345) & 0xffffffff
    return rng >> 8
want = {}
samples = 0.0
for name, lo, span, total in (('tiny', 24, 48, 2 << 20), ('small', 200, 1600, 4 << 20),
                              ('medium', 8192, 32768, 6 << 20), ('large', 100000, 200000, 3 << 20),
                              ('rare', 16, 16, 64 << 10)):
    got = 0
    while got < total:
        s = lo + draw() % span
        got += s
        samples += -math.expm1(-s / rate)
    want[name] = got
print('expected samples per run: %.0f' % samples)
if samples < 10000:
    sys.exit('fewer than 10,000 samples per run: raise the sizes or lower the rate')

def by_function(path):
    d = json.load(open(path))
    out = {}
    for st in d['stacks']:
        names = [f['function'] for f in st['frames']]
        for n in want:
            if n in names:
                out[n] = out.get(n, 0) + st['bytes']
    return d, out

exact_doc, exact = by_function('exact.json')
if exact_doc['sample_bytes'] != 0:
    sys.exit('the exact run says it is sampled')
for n in want:
    if exact.get(n) != want[n]:
        sys.exit('exact run: %s holds %s bytes, the program made %d' % (n, exact.get(n), want[n]))
total = sum(want.values())
sums = {n: 0 for n in want}
for seed in range(1, 21):
    d, est = by_function('s%d.json' % seed)
    if d['sample_bytes'] != rate:
        sys.exit('run %d: sample_bytes %s, not %d' % (seed, d['sample_bytes'], rate))
    if d['heap'] != exact_doc['heap']:
        sys.exit('run %d: the totals moved: %s, exact %s' % (seed, d['heap'], exact_doc['heap']))
    for n in want:
        sums[n] += est.get(n, 0)
bad = []
for n in want:
    mean = sums[n] / 20
    share = want[n] / total
    err = (mean - exact[n]) / exact[n]
    print('%-7s %5.1f%% of the bytes: exact %9d, mean estimate %11.1f (%+.2f%%)' %
          (n, 100 * share, exact[n], mean, 100 * err))
    if share > 0.01 and abs(err) > 0.05:
        bad.append(n)
if bad:
    sys.exit('mean estimate off by more than 5%: ' + ', '.join(bad))
PY
echo "per-stack estimates unbiased within 5% over 20 seeds"
