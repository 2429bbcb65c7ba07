#!/usr/bin/env python3
"""Writes the crafted recordings of selftest/fuzz/seeds/record/regress-*.rec
(target/record/record.h says the format): figures a recorder never writes,
that once made the exporters allocate or loop by a count the file claims.

    selftest/fuzz/craft_record.py DIR
"""
import os
import sys

MASK = (1 << 64) - 1


def var(v):
    v &= MASK
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)


def zz(v):
    """A zigzag delta: v is taken modulo 2^64, then as signed."""
    v &= MASK
    s = v - (1 << 64) if v >> 63 else v
    return var(((s << 1) ^ (s >> 63)) & MASK)


def rec(tag, payload):
    return tag + var(len(payload)) + payload


def header():
    prog, engine = b"crafted", b"ptrace"
    return rec(b'H', var(1) + var(100) + var(123) + var(16) +
               var(len(prog)) + prog + var(len(engine)) + engine)


def sample(dt, totals, stacks):
    """stacks: (id step, [bytes, blocks, allocs, bytes allocated, temporary])."""
    p = var(dt) + var(10) + b''.join(zz(t) for t in totals) + var(len(stacks))
    for step, d in stacks:
        p += var(step) + b''.join(zz(x) for x in d)
    return rec(b'S', p)


def peak(nbytes, blocks, us, stacks):
    p = var(nbytes) + var(blocks) + var(us) + var(len(stacks))
    for step, b, k in stacks:
        p += var(step) + zz(b) + zz(k)
    return rec(b'P', p)


def memory(fields):
    """An 'M': the RSS, its seven parts, mappings, flags, memtrace's own
    bytes (and any more)."""
    return rec(b'M', var(len(fields)) + b''.join(var(f) for f in fields))


def frame_and_stack():
    # string 1 "main", frame 1 at 0x1000 in it, stack 1 of that frame
    return (rec(b'T', b"main") +
            rec(b'F', var(0x1000) + var(0) + var(0) + var(1) + var(0) + var(1) + var(0)) +
            rec(b'K', var(1) + var(1) + var(1)))


def start():
    return b"MTREC1\r\n" + header() + frame_and_stack()


def totals(nbytes=0, blocks=0, allocs=0, frees=0, allocated=0):
    return [nbytes, blocks, allocs, frees, allocated, 0, 0, 0, 0, 0]


CRAFTED = {
    # a stack's blocks in use go to -7: heaptrack sized its live blocks by it
    'regress-wrapped-blocks.rec':
        start() + sample(1000, totals(blocks=-7), [(1, [0, -7, 0, 0, 0])]),
    # 2^60 allocations, all consistent: heaptrack wrote an event each, forever
    'regress-huge-allocs.rec':
        start() + sample(1000, totals(allocs=1 << 60, frees=1 << 60),
                         [(1, [0, 0, 1 << 60, 0, 0])]),
    # the same through allocations wrapped below zero
    'regress-wrapped-allocs.rec':
        start() + sample(1000, totals(allocs=-3, frees=-3), [(1, [0, 0, -3, 0, 0])]),
    # a stack's figures at the peak wrapped below zero
    'regress-wrapped-peak.rec':
        start() + sample(1000, totals(100, 1, 1, 0, 100), [(1, [100, 1, 1, 100, 0])]) +
        peak(100, 1, 1000, [(1, 100, -2)]),
    # three stacks without frames (one table id in the replay) whose
    # figures, each below 2^63, add up past 2^64
    'regress-frameless-sum.rec':
        b"MTREC1\r\n" + header() +
        rec(b'K', var(1) + var(0)) + rec(b'K', var(2) + var(0)) + rec(b'K', var(3) + var(0)) +
        sample(1000, totals(blocks=(1 << 63) - 1, allocs=(1 << 63) - 1),
               [(1, [0, (1 << 63) - 1, (1 << 63) - 1, 0, 0]),
                (1, [0, (1 << 63) - 1, (1 << 63) - 1, 0, 0]),
                (1, [0, (1 << 63) - 1, (1 << 63) - 1, 0, 0])]),
    # where the RSS went, the parts as large as they may be (each 2^60,
    # their sum below 2^63), then smaller, the --diff between them negative
    'rss-huge.rec':
        start() + sample(1000, totals(100, 1, 1, 0, 100), [(1, [100, 1, 1, 100, 0])]) +
        memory([7 << 60] + [1 << 60] * 7 + [3, 1]) +
        sample(1000, totals(), []) + memory([7, 1, 1, 1, 1, 1, 1, 1, 1 << 32 - 1, 0, 1, 99]),
}

if __name__ == '__main__':
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in CRAFTED.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
