#!/usr/bin/env python3
"""A memtrace JSON report as comparable lines: the HEAP SUMMARY figures
first, then one line per stack with blocks in use (bytes, blocks, allocs,
frames as module+offset), sorted.  Two engines tracing the same program
must give the same lines (agent_engines.sh, the board suite)."""
import json
import os
import sys

h = json.load(open(sys.argv[1]))
print('summary', *(h['heap'][k] for k in ('allocs', 'frees', 'bytes_allocated', 'in_use_bytes', 'in_use_blocks')))
rows = []
for s in h['stacks']:
    frames = ' '.join('%s+%s' % (os.path.basename(f.get('module', '?')), f.get('offset', f['pc'])) for f in s['frames'])
    rows.append('%d %d %d %s' % (s['bytes'], s['blocks'], s['allocs'], frames))
print('\n'.join(sorted(rows)))
