"""Bytes allocated per stack in a pprof export (profile.proto's
alloc_space), read here apart from memtrace's writer, for the sampling
tests (sample_unbiased_allocbench.sh, sample_unbiased_clang.sh).

    pprof_alloc_space.py total EXACT.pb.gz
        the bytes allocated in all
    pprof_alloc_space.py same A.pb.gz B.pb.gz [TOLERANCE]
        exit 1 unless A and B agree on every stack over 1% of the bytes
        (within TOLERANCE of A's figure, a fraction; default exactly)
    pprof_alloc_space.py judge RATE EXACT.pb.gz SAMPLED.pb.gz...
        exit 1 unless the mean estimate of every stack over 1% of the bytes
        in EXACT is within 5% of it, over the SAMPLED runs (whose period
        must be RATE); at least 3 such stacks.
"""
import gzip
import sys

ALLOCATORS = ('malloc', 'calloc', 'realloc', '__libc_malloc', '__GI___libc_malloc', '__libc_calloc',
              '__GI___libc_realloc', '__libc_realloc', 'operator new(unsigned long)', 'operator new[](unsigned long)',
              '_Znwm', '_Znam')


def varint(b, i):
    """The varint at b[i]: its value and the index after it."""
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """A protobuf message's fields: number -> list of ints or bytes."""
    out, i = {}, 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        elif w == 1:
            v = int.from_bytes(b[i:i + 8], 'little')
            i += 8
        elif w == 5:
            v = int.from_bytes(b[i:i + 4], 'little')
            i += 4
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
            x, i = varint(v, i)
            out.append(x)
    return out


def alloc_space(path):
    """Bytes allocated per stack, a stack named by its (function, line)s;
    and the profile's period."""
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


def site(stack):
    """The first frame of a stack that is not the allocator's."""
    return next((f'{f}:{l}' for lines in stack for f, l in lines if f not in ALLOCATORS), '?')


def big_stacks(space):
    total = sum(space.values())
    return [(k, v) for k, v in sorted(space.items(), key=lambda kv: -kv[1]) if v / total > 0.01]


def same(a, b, tolerance):
    x, _ = alloc_space(a)
    y, _ = alloc_space(b)
    worst, differ = 0.0, []
    for k, v in big_stacks(x):
        off = abs(y.get(k, 0) - v) / v
        worst = max(worst, off)
        if off > tolerance:
            differ.append((site(k), v, y.get(k)))
    print('%s and %s: %d stacks over 1%% of the bytes, at most %.2f%% apart, %d more than %.2f%%'
          % (a, b, len(big_stacks(x)), 100 * worst, len(differ), 100 * tolerance))
    for d in differ:
        print('  %s: %d and %s' % d)
    return not differ


def judge(rate, exact_path, sampled):
    exact, period = alloc_space(exact_path)
    total = sum(exact.values())
    print('exact: %d stacks, %d bytes allocated, period %d' % (len(exact), total, period))
    sums = {k: 0 for k in exact}
    for path in sampled:
        est, period = alloc_space(path)
        if period != rate:
            sys.exit('%s: pprof period %d, not %d' % (path, period, rate))
        for k, v in est.items():
            if k in sums:
                sums[k] += v
    bad = []
    judged = big_stacks(exact)
    for k, v in judged:
        mean = sums[k] / len(sampled)
        err = (mean - v) / v
        print('%-40s %5.1f%% of the bytes: exact %10d, mean estimate %12.1f (%+.2f%%)'
              % (site(k)[:40], 100 * v / total, v, mean, 100 * err))
        if abs(err) > 0.05:
            bad.append(site(k))
    if len(judged) < 3:
        sys.exit('only %d stacks over 1%% of the bytes' % len(judged))
    if bad:
        sys.exit('mean estimate off by more than 5%: ' + ', '.join(bad))


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'total':
        print(sum(alloc_space(sys.argv[2])[0].values()))
    elif cmd == 'same':
        sys.exit(0 if same(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 0.0) else 1)
    elif cmd == 'judge':
        judge(int(sys.argv[2]), sys.argv[3], sys.argv[4:])
    else:
        sys.exit('usage: pprof_alloc_space.py total|same|judge ...')
