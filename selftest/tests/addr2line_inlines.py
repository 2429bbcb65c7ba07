#!/usr/bin/env python3
"""memtrace --addr2line -i against an oracle's inline chain, address by address.

usage: addr2line_inlines.py [--outer-by-symbol] MEMTRACE FILE SAMPLES ORACLE_CMD...

Addresses are sampled from FILE's own decoded line table (readelf -wL), one
byte either side too.  Both tools get them with --addresses / -a, so every
chain is told apart.  Judged: every address the oracle gives a line for
(function and file:line of every frame, discriminators aside).  With
--outer-by-symbol the outermost frame's name is not compared: llvm-addr2line
names it from the symbol table (foo.isra.0, an alias), memtrace and
elfutils from its DWARF subprogram.  Prints one
summary line; exit 1 on any difference.
"""
import random
import re
import subprocess
import sys


def chains(cmd, text):
    out = subprocess.run(cmd, input=text, capture_output=True, text=True).stdout
    out = re.sub(r' \(discriminator \d+\)', '', out)
    # eu-addr2line: "callee inlined at FILE:LINE:COL in caller", file:line:column.
    out = re.sub(r' inlined at .*', '', out)
    out = re.sub(r'^(.*:[0-9]+):[0-9]+$', r'\1', out, flags=re.M)
    result, cur = [], None
    lines = out.split('\n')
    i = 0
    while i < len(lines):
        if re.fullmatch(r'0x[0-9a-f]+', lines[i]):
            cur = []
            result.append(cur)
            i += 1
            continue
        if cur is not None and i + 1 < len(lines):
            cur.append((lines[i], lines[i + 1]))
        i += 2
    return result


def main():
    args = sys.argv[1:]
    outer_by_symbol = args[0] == '--outer-by-symbol'
    if outer_by_symbol:
        args = args[1:]
    memtrace, path, samples, oracle = args[0], args[1], int(args[2]), args[3:]
    rows = subprocess.run(['readelf', '-wL', path], capture_output=True, text=True).stdout
    addrs = sorted({int(m, 16) for m in re.findall(r'\s(0x[0-9a-f]+)\s*$', rows, re.M)})
    if not addrs:
        print(f'{path}: no line rows')
        return 1
    random.seed(11)
    sample = [random.choice(addrs) + random.randint(-1, 1) for _ in range(samples)]
    text = ''.join('0x%x\n' % a for a in sample)
    ours = chains([memtrace, '--addr2line', '-i', '--addresses', path], text)
    theirs = chains(oracle + [path], text)
    if len(ours) != len(sample) or len(theirs) != len(sample):
        print(f'{path}: {len(ours)} chains from memtrace, {len(theirs)} from {oracle[0]}, {len(sample)} addresses')
        return 1
    judged = inlined = bad = 0
    for a, x, y in zip(sample, ours, theirs):
        if not y or not re.search(r':[1-9][0-9]*$', y[0][1]):
            continue  # the oracle knows no line here
        judged += 1
        inlined += len(y) > 1
        if outer_by_symbol and x and len(x) == len(y):
            x = x[:-1] + [('', x[-1][1])]
            y = y[:-1] + [('', y[-1][1])]
        if x != y:
            bad += 1
            if bad <= 5:
                print(f'  0x{a:x}: {oracle[0]} {y}\n           memtrace {x}')
    print(f'{path} [{oracle[0]}]: {judged} addresses judged, {inlined} with inlined frames, {bad} differ')
    return 1 if bad or not judged or not inlined else 0


if __name__ == '__main__':
    sys.exit(main())
