#!/usr/bin/env python3
"""A trace without debug files against one with them, frame by frame.

usage: stacks_same_pcs.py WITH_DEBUG_JSON WITHOUT_DEBUG_JSON [FUNCTION...]

The same program traced twice by memtrace: with the libraries' debug files
(their .debug_frame; its stacks are compared with gdb's elsewhere) and
without (.ARM.exidx and prologue analysis on armhf).  Frames are compared by
module and offset (the same in both runs whatever the load address), the
physical frames only.  Every
stack of the run without debug files must be one of the other run's stacks,
or the start of one (the unwinder stopped: allowed, counted); a frame that
is in neither is a wrong frame and fails.  Prints how many stacks reach
main.  A stack of the run without debug files through one of the FUNCTIONs
(named there by the library's exports) must reach main.
"""
import json
import os
import sys


def stacks(path):
    out = []
    for s in json.load(open(path))['stacks']:
        frames, reach, names = [], False, set()
        for f in s['frames']:
            names.add(f['function'])
            # Inlined calls and tail calls (rebuilt from DWARF call sites,
            # so only with debug files) are no unwound frames.
            if f.get('inlined') or f.get('tail_call'):
                continue
            frames.append((os.path.basename(f['module'] or '?'), f['offset']))
            if f['function'] == 'main':
                reach = True
                break
        out.append((tuple(frames), reach, names))
    return out


def main():
    ref = stacks(sys.argv[1])
    got = stacks(sys.argv[2])
    must = set(sys.argv[3:])
    full = {fr for fr, _, _ in ref}
    wrong, cut, reach, short = [], [], 0, []
    for fr, r, names in got:
        if must & names and not (r and fr in full):
            short.append(fr)
        if fr in full:
            reach += r
            continue
        if any(len(fr) < len(f) and f[:len(fr)] == fr for f in full):
            cut.append(fr)
            continue
        wrong.append(fr)
    print(f'without debug files: {len(got)} stacks, {reach} reach main equal to the run with them, '
          f'{len(cut)} stop early, {len(wrong)} differ (with debug files: {sum(r for _, r, _ in ref)} of {len(ref)} reach main)')
    for fr in cut:
        print('  stops after', ' '.join(f'{m}+{o}' for m, o in fr))
    for fr in wrong:
        print('  WRONG', ' '.join(f'{m}+{o}' for m, o in fr))
    for fr in short:
        print('  through', ' '.join(sorted(must)), 'but not to main:', ' '.join(f'{m}+{o}' for m, o in fr))
    return 1 if wrong or short or not got else 0


if __name__ == '__main__':
    sys.exit(main())
