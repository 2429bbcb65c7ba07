#!/usr/bin/env python3
"""The packages a throwaway root needs so that dpkg can install the given
.deb files into it: their Depends and Pre-Depends, and those of dash (the
shell that runs maintainer scripts), resolved recursively against the
packages installed on this host.  Prints one installed package name per
line (with :ARCH for Multi-Arch: same ones), for dist/tools tests.

    host_closure.py DEB...
"""
import re
import subprocess
import sys

fmt = '${Package}\\t${Architecture}\\t${Multi-Arch}\\t${db:Status-Abbrev}\\t${Provides}\\t${Depends}\\t${Pre-Depends}\\n'
out = subprocess.run(['dpkg-query', '-W', '-f', fmt], capture_output=True, text=True, check=True).stdout
native = subprocess.run(['dpkg', '--print-architecture'], capture_output=True, text=True,
                        check=True).stdout.strip()
installed, provides = {}, {}
for line in out.splitlines():
    name, arch, ma, status, prov, dep, pre = (line.split('\t') + [''] * 7)[:7]
    if not status.startswith('ii') or arch not in (native, 'all'):
        continue
    installed[name] = (arch, ma, ', '.join(x for x in (dep, pre) if x))
    for p in prov.split(','):
        p = p.strip().split(' ')[0]
        if p:
            provides.setdefault(p, name)


def choose(alternatives):
    for alt in alternatives.split('|'):
        n = re.sub(r'\(.*?\)|\[.*?\]|<.*?>', '', alt).strip().split(':')[0]
        if n in installed:
            return n
        if n in provides:
            return provides[n]
    return None


def deps_of(field):
    return [choose(a) for a in field.split(',') if a.strip()]


todo = ['dash']
for deb in sys.argv[1:]:
    f = subprocess.run(['dpkg-deb', '-f', deb, 'Depends', 'Pre-Depends'], capture_output=True,
                       text=True, check=True).stdout
    field = ', '.join(l.split(':', 1)[1] for l in f.splitlines() if ':' in l)
    missing = [a for a in field.split(',') if a.strip() and not choose(a)]
    if missing:
        sys.exit(f'{deb}: not installed on this host: {", ".join(m.strip() for m in missing)}')
    todo += deps_of(field)
seen = set()
while todo:
    n = todo.pop()
    if n is None or n in seen:
        continue
    seen.add(n)
    todo += deps_of(installed[n][2])
for n in sorted(seen):
    arch, ma, _ = installed[n]
    print(f'{n}:{arch}' if ma == 'same' else n)
