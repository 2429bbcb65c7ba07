#!/usr/bin/env python3
"""Reads a memtrace recording (target/record/record.h's format) on its own,
apart from memtrace's reader, and prints its samples as JSON: one object
per 'S' record, {"us", "in_use_bytes", "rss"}, "rss" the 'M' record that
followed it ([RSS, the seven parts, mappings, flags, memtrace's own
bytes of the shared part (0 from an older writer)]) or null.

    record_samples.py REC.mt
"""
import json
import sys

MAGIC = b'MTREC1\r\n'


def var(data, at):
    v, shift = 0, 0
    while True:
        b = data[at]
        at += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, at


def unzz(z):
    return (z >> 1) ^ -(z & 1)


def samples(data):
    assert data[:len(MAGIC)] == MAGIC, 'not a recording'
    at, us, in_use, out = len(MAGIC), 0, 0, []
    while at < len(data):
        tag = data[at:at + 1]
        n, at = var(data, at + 1)
        payload, at = data[at:at + n], at + n
        if tag == b'S':
            dt, p = var(payload, 0)
            nt, p = var(payload, p)
            d0, p = var(payload, p)
            us += dt
            in_use += unzz(d0)
            out.append({'us': us, 'in_use_bytes': in_use, 'rss': None})
        elif tag == b'M':
            count, p = var(payload, 0)
            fields = []
            for _ in range(count):
                v, p = var(payload, p)
                fields.append(v)
            out[-1]['rss'] = fields[:11] + [0] * (11 - len(fields[:11]))
    return out


if __name__ == '__main__':
    with open(sys.argv[1], 'rb') as f:
        json.dump(samples(f.read()), sys.stdout)
    print()
