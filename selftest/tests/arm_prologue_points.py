#!/usr/bin/env python3
"""Prologue rows of Thumb functions, from binutils' reading of a debug file.

usage: arm_prologue_points.py FRAMES_INTERP SYMBOLS > POINTS

FRAMES_INTERP: `readelf -wF DEBUG` (the .debug_frame as a table per FDE);
SYMBOLS: `readelf -sW DEBUG`.  For every FDE that begins at a Thumb function
symbol (odd value), its rows from the start while the CFA is r13 plus an
offset that only grows (the prologue, before any epilogue or frame pointer)
become lines "START PC CFA_OFFSET RA_OFFSET" for test_arm_prologue.
"""
import re
import sys

starts = set()
for line in open(sys.argv[2], errors='replace'):
    f = line.split()
    if len(f) >= 8 and f[3] == 'FUNC' and f[6] != 'UND':
        v = int(f[1], 16)
        if v & 1:
            starts.add(v & ~1)

FDE = re.compile(r'FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)')
cols, start, last, ok = None, None, -1, False
for line in open(sys.argv[1], errors='replace'):
    m = FDE.search(line)
    if m:
        start = int(m.group(1), 16)
        ok = start in starts
        cols, last = None, -1
        continue
    f = line.split()
    if not ok or not f:
        continue
    if f[0] == 'LOC':
        cols = f
        continue
    if cols is None or len(f) != len(cols) or not re.fullmatch(r'[0-9a-f]+', f[0]):
        continue
    m = re.fullmatch(r'r13\+(\d+)', f[1])
    if not m or int(m.group(1)) < last:
        ok = False
        continue
    last = int(m.group(1))
    ra = f[cols.index('ra')] if 'ra' in cols else 'u'
    if ra == 'u':
        off = 0
    elif re.fullmatch(r'c-\d+', ra):
        off = -int(ra[2:])
    else:
        ok = False
        continue
    print(f'{start:x} {int(f[0], 16):x} {last} {off}')
