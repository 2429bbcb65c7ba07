#!/usr/bin/env python3
"""A memtrace JSON report as comparable lines: the HEAP SUMMARY figures
first, then one line per stack with blocks in use (bytes, blocks, allocs,
frames as module+offset), sorted.  Two engines tracing the same program
must give the same lines (agent_engines.sh, the board suite).  With
--errors, a line of the misuse errors follows the summary (how many, and
each one's kind, function and block state, sorted): a call booked out of
order (a free after the malloc that got its block back) leaves every
figure and stack as they were, and shows only there."""
import json
import os
import sys

args = sys.argv[1:]
errors = '--errors' in args
if errors:
    args.remove('--errors')
h = json.load(open(args[0]))
print('summary', *(h['heap'][k] for k in ('allocs', 'frees', 'bytes_allocated', 'in_use_bytes', 'in_use_blocks')))
if errors:
    kinds = {}
    for e in h.get('errors', []):
        k = '%s:%s:%s' % (e['kind'], e.get('function', '?'), e.get('block', {}).get('state', '?'))
        kinds[k] = kinds.get(k, 0) + 1
    print('errors', len(h.get('errors', [])) + h.get('errors_not_listed', 0),
          *('%dx%s' % (n, k) for k, n in sorted(kinds.items())))
rows = []
for s in h['stacks']:
    frames = ' '.join('%s+%s' % (os.path.basename(f.get('module', '?')), f.get('offset', f['pc'])) for f in s['frames'])
    rows.append('%d %d %d %s' % (s['bytes'], s['blocks'], s['allocs'], frames))
print('\n'.join(sorted(rows)))
