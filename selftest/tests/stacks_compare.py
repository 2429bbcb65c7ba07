#!/usr/bin/env python3
"""Compare memtrace's JSON stacks with gdb's backtraces at the same breakpoint.

usage: stacks_compare.py [--functions] [--both-ways] GDB_LOG MEMTRACE_JSON SOURCE_BASENAME...

--both-ways: every memtrace stack of the test's sources must be one of gdb's
backtraces too (for a program whose stacks are the same in every run).

--functions: frames of other modules are compared by the function of each
physical frame (the outermost of its inlined calls) instead of file and
line.  For stacks through glibc, whose line table has several rows at one
address (an is_stmt row of an inlined libioP.h line, then the caller's
line): gdb takes the is_stmt row, memtrace the last one, so their lines
differ there while the frames are the same.

Each gdb backtrace (printed by `bt` at a breakpoint on an intercepted
function's first instruction) must appear among memtrace's stacks, frame by
frame: file (base name) and line for every frame up to main, and the function
name for C frames of the test's own sources.  gdb's "<signal handler called>"
matches memtrace's signal trampoline frame (__restore_rt, __kernel_sigreturn).  Backtraces are compared as sets
(memtrace groups identical stacks); gdb's virtual tail-call frames in other
modules are allowed to be absent (see matches()).
"""
import json
import os
import re
import sys

# The code a signal handler returns to: glibc's restorer on x86_64, the
# vDSO's (or glibc's) on i386 and aarch64, glibc's sigrestorer.S on arm.
SIGNAL_TRAMPOLINES = ('__restore_rt', '__restore', '__kernel_sigreturn', '__kernel_rt_sigreturn',
                      '__default_sa_restorer', '__default_rt_sa_restorer')
FRAME = re.compile(r'^#(\d+)\s+(?:0x[0-9a-f]+ in )?(.+?) \(.*?\)(?: at (\S+):(\d+))?(?: from \S+)?$')


def gdb_stacks(path, physical=False):
    """physical: frame #0 and each frame with an address, named by the
    outermost function inlined there (the frames gdb prints without an
    address after it)."""
    stacks, cur = [], None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if line.startswith('#0 '):
            if cur:
                stacks.append(cur)
            cur = []
        if cur is None or not line.startswith('#'):
            continue
        if '<signal handler called>' in line:
            cur.append(('<signal>', None, None))
            continue
        # gdb lists inlined calls as frames of their own (printed without
        # an address after the innermost one of a physical frame); so does
        # memtrace, and every one of them is compared.
        m = FRAME.match(line)
        if not m:
            cur.append(('?', None, None))
            continue
        func, file, lineno = m.group(2), m.group(3), m.group(4)
        fr = (func, os.path.basename(file) if file else None, int(lineno) if lineno else None)
        # (A frame a signal interrupted has no address either when its pc
        # starts a line: it is a physical frame of its own.)
        if physical and cur and cur[-1][0] != '<signal>' and \
                not re.match(r'^#\d+\s+0x[0-9a-f]+ in ', line):
            cur[-1] = fr
        else:
            cur.append(fr)
    if cur:
        stacks.append(cur)
    return stacks


def memtrace_stacks(path, physical=False):
    """physical: without the frames of inlined calls (the outermost one
    at each address is kept)."""
    out = []
    for s in json.load(open(path))['stacks']:
        frames = []
        for f in s['frames']:
            if physical and f.get('inlined'):
                continue
            func = f['function'] or '?'
            if func in SIGNAL_TRAMPOLINES:
                frames.append(('<signal>', None, None))
                continue
            frames.append((func, os.path.basename(f['file']) if f['file'] else None, f['line'] or None))
        out.append(frames)
    return out


def fkey(frames, sources):
    """Frames 1.. up to main: own sources by (function, file, line), other
    modules by function."""
    k = []
    for func, file, line in frames[1:]:
        if func == '<signal>':
            k.append(('<signal>',))
        elif file in sources:
            k.append((func, file, line))
        else:
            k.append((func,))
        if func == 'main':
            break
    return tuple(k)


def key(frames, sources):
    """Frames 1.. up to main: (function for own C sources, file, line)."""
    k = []
    for func, file, line in frames[1:]:
        if func == '<signal>':
            k.append(('<signal>',))
            continue
        own = file in sources
        name = func if own and not file.endswith(('.cpp', '.cc')) else ''
        # Code at line 0 (clang's _GLOBAL__sub_I_* static initializers) has
        # no source position: gdb names no file for it, binutils' and LLVM's
        # addr2line name the CU's file with line "?".  Only the position
        # counts, so a frame without a line is compared without a file.
        k.append((name, file if line is not None else None, line))
        if func == 'main':
            break
    return tuple(k)


def matches(gk, mk, sources):
    """mk equals gk with some frames of other modules left out.

    gdb adds virtual frames for tail calls it reconstructs from DWARF call
    sites (glibc's pthread_kill jumps to __pthread_kill_implementation); a
    physical unwinder, like libunwind's or memtrace's, has no such frame.
    Frames of the test's own sources must all be there, in order."""
    i = 0
    for frame in gk:
        if i < len(mk) and frame == mk[i]:
            i += 1
        elif len(frame) > 1 and frame[1] in sources:
            return False
    return i == len(mk)


def main():
    args = sys.argv[1:]
    functions = both_ways = False
    while args and args[0] in ('--functions', '--both-ways'):
        functions |= args[0] == '--functions'
        both_ways |= args[0] == '--both-ways'
        args = args[1:]
    gdb_log, mt_json, sources = args[0], args[1], set(args[2:])
    g = gdb_stacks(gdb_log, functions)
    m = memtrace_stacks(mt_json, functions)
    kf = fkey if functions else key
    # Only allocations made on behalf of the test's own code.
    own = lambda st: any(f[1] in sources for f in st)
    gkeys = {kf(st, sources) for st in g if own(st)}
    mkeys = {kf(st, sources) for st in m if own(st)}
    missing = {gk for gk in gkeys if not any(matches(gk, mk, sources) for mk in mkeys)}
    print(f'gdb backtraces: {len(gkeys)}, memtrace stacks: {len(mkeys)}, missing: {len(missing)}')
    for k in sorted(missing)[:10]:
        print('  gdb has, memtrace lacks:', k)
        near = max(mkeys, key=lambda mk: sum(a == b for a, b in zip(k, mk)), default=None)
        print('    closest memtrace stack:', near)
    extra = set()
    if both_ways:
        extra = {mk for mk in mkeys if not any(matches(gk, mk, sources) for gk in gkeys)}
        for k in sorted(extra)[:10]:
            print('  memtrace has, gdb never showed:', k)
    if not gkeys:
        print('no backtraces to compare')
        return 1
    return 1 if missing or extra else 0


if __name__ == '__main__':
    sys.exit(main())
