#!/usr/bin/env python3
"""A process tree's figures, one line per process:
"tree-position engine allocs frees bytes in_use_bytes in_use_blocks", the
position being the birth ranks from the root (by pid).

  proc_tree.py valgrind DIR        valgrind --trace-children logs DIR/vg.PID
  proc_tree.py memtrace JSON       memtrace -f -j's report (misuse errors fail)
  proc_tree.py memtrace JSON stacks   and each process's stacks (bytes blocks
                                      allocs module+offset...), sorted"""
import glob, json, os, re, sys
procs = {}
if sys.argv[1] == 'valgrind':
    n = lambda s: int(s.replace(',', ''))
    for path in glob.glob(sys.argv[2] + '/vg.[0-9]*'):
        t = open(path).read()
        pid = int(re.search(r'==(\d+)== Command', t)[1])
        ppid = int(re.search(r'Parent PID: (\d+)', t)[1])
        u = re.search(r'in use at exit: ([\d,]+) bytes in ([\d,]+) blocks', t)
        h = re.search(r'total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated', t)
        procs[pid] = (ppid, ['agent', n(h[1]), n(h[2]), n(h[3]), n(u[1]), n(u[2])])
else:
    d = json.load(open(sys.argv[2]))
    for p in [d] + d.get('children', []):
        h = p['heap']
        if p.get('errors'):
            sys.exit(f'process {p["pid"]}: misuse errors {p["errors"]}')
        procs[p['pid']] = (p.get('ppid', 0), [p.get('engine'), h['allocs'], h['frees'],
                           h['bytes_allocated'], h['in_use_bytes'], h['in_use_blocks']])
        if len(sys.argv) > 3:  # its stacks too: bytes blocks allocs module+offset...
            procs[p['pid']][1].append('\n ' + '\n  '.join(sorted('%d %d %d %s' % (
                s['bytes'], s['blocks'], s['allocs'], ' '.join('%s+%s' % (
                    os.path.basename(f.get('module', '?')), f.get('offset', f['pc']))
                    for f in s['frames'])) for s in p['stacks'])))
roots = [p for p, (pp, _) in procs.items() if pp not in procs]
assert len(roots) == 1, f'not one tree: {procs}'
def walk(pid, pos):
    print('/'.join(map(str, pos)) or '.', *procs[pid][1])
    for i, k in enumerate(sorted(p for p, (pp, _) in procs.items() if pp == pid)):
        walk(k, pos + [i])
walk(roots[0], [])
