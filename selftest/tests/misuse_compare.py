#!/usr/bin/env python3
"""Compares the allocator-misuse errors of memtrace (its stderr) with
valgrind memcheck's (its log) for one run of the same program.

Usage: misuse_compare.py VALGRIND_LOG MEMTRACE_STDERR SOURCE_FILE [--no-history]

Both tools print errors valgrind's way: a title line, the stack of the bad
call, an "Address ..." line, the stack of the block (and "Block was alloc'd
at" with a second one for freed blocks).  Compared: the number of errors,
each title, the address description (offset and size in the block, and
whether it was alloc'd or free'd), and in each stack the frames that lie in
SOURCE_FILE, as (function name without parameters, line).  Frames outside
the program (the allocator's own, libc's start-up) differ between a
replacing and an intercepting tool and are not compared.

--no-history: memtrace ran without --check, so where valgrind describes a
freed block memtrace must say the address is unknown (and show no block
stacks)."""
import re
import sys

FRAME = re.compile(r'^==\d+==\s+(at|by) 0x[0-9A-Fa-f]+: (.*?)(?: \((?:in )?([^()]*)\))?$')
ADDR = re.compile(r'^==\d+==\s+Address 0x[0-9a-f]+ is (.*)$')


def errors(path):
    out = []
    cur = None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        m = re.match(r'^==\d+== (Invalid free\(\).*|Mismatched free\(\).*)$', line)
        if m:
            cur = {'title': m.group(1).strip(), 'stacks': [[]], 'addr': None}
            out.append(cur)
            continue
        if cur is None:
            continue
        m = ADDR.match(line)
        if m:
            cur['addr'] = m.group(1)
            if describe(cur['addr'])[0] == 'inside':
                cur['stacks'].append([])
            continue
        if re.match(r"^==\d+==\s+Block was alloc'd at", line):
            cur['stacks'].append([])
            continue
        m = FRAME.match(line)
        if m:
            cur['stacks'][-1].append((m.group(2), m.group(3) or ''))
            continue
        if re.match(r'^==\d+==\s*$', line):
            cur = None
    return out


def program_frames(stack, source):
    frames = []
    for fn, where in stack:
        if not where.startswith(source + ':'):
            continue
        frames.append((re.sub(r'\(.*$', '', fn), where.split(':')[1]))
    return frames


def describe(addr):
    """('inside', offset, size, alloc'd|free'd) or ('unknown',)."""
    if addr is None:
        return None
    m = re.match(r"(\d+) bytes inside a block of size (\d+) (alloc'd|free'd)", addr.replace(',', ''))
    if m:
        return ('inside', int(m.group(1)), int(m.group(2)), m.group(3))
    return ('unknown',)


def main():
    vg_path, mt_path, source = sys.argv[1:4]
    no_history = '--no-history' in sys.argv[4:]
    vg, mt = errors(vg_path), errors(mt_path)
    if not vg:
        sys.exit('valgrind reported no misuse error: the case is not a misuse?')
    if len(vg) != len(mt):
        sys.exit(f'valgrind found {len(vg)} errors, memtrace {len(mt)}')
    for i, (v, m) in enumerate(zip(vg, mt)):
        if v['title'] != m['title']:
            sys.exit(f'error {i}: valgrind says "{v["title"]}", memtrace "{m["title"]}"')
        vd, md = describe(v['addr']), describe(m['addr'])
        vstacks = v['stacks']
        if no_history and vd and vd[0] == 'inside' and vd[3] == "free'd":
            vd, vstacks = ('unknown',), vstacks[:1]
        if vd != md:
            sys.exit(f'error {i}: address described as {vd} by valgrind, {md} by memtrace')
        if len(vstacks) != len(m['stacks']):
            sys.exit(f'error {i}: {len(vstacks)} stacks from valgrind, {len(m["stacks"])} from memtrace')
        for k, (vs, ms) in enumerate(zip(vstacks, m['stacks'])):
            pv, pm = program_frames(vs, source), program_frames(ms, source)
            if not pv:
                sys.exit(f'error {i} stack {k}: no frame of {source} in valgrind\'s stack')
            if pv != pm:
                sys.exit(f'error {i} stack {k}: valgrind {pv} != memtrace {pm}')
        print(f'{v["title"]}: {vd}, stacks {[program_frames(s, source) for s in vstacks]}')


main()
