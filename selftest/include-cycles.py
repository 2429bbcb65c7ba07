#!/usr/bin/env python3
"""Dependency cycles inside target/ (design.md: lower directories know nothing
of upper ones, and files of one job do not lean on each other both ways).

  selftest/include-cycles.py [BUILD_DIR]

Three graphs, each printed as its strongly connected components of more than
one node (a cycle), or "none":
  1. directories of target/ by #include;
  2. target/ headers by #include;
  3. target/ files by the functions and data they use from each other, read
     with nm from BUILD_DIR/obj (default build): "a.c uses b.c" when a.o
     has an undefined symbol that b.o defines.  This is the graph where two
     .c files sharing one header (session.h) can still lean on each other.
Exit status 1 when graph 2 has a cycle (make lint runs this); graphs 1 and
3 are a report (docs/design.md says which cycles are left and why)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INC = re.compile(r'^\s*#\s*include\s+"(target/[^"]+)"', re.M)


def sources():
    for d, _, files in os.walk(os.path.join(ROOT, "target")):
        if "/payload" in d:
            continue
        for f in files:
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, f), ROOT)


def includes(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as fh:
        return INC.findall(fh.read())


def sccs(graph):
    """Tarjan's algorithm, iterative; components with more than one node."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def show(title, graph):
    comps = sccs(graph)
    print(f"{title}: {'none' if not comps else ''}")
    for c in comps:
        edges = [f"{a} -> {b}" for a in c for b in sorted(graph[a]) if b in c]
        print("  cycle: " + ", ".join(edges))
    return comps


def object_graph(build):
    defs, undefs = {}, {}
    objdir = os.path.join(ROOT, build, "obj", "target")
    if not os.path.isdir(objdir):
        return None
    for d, _, files in os.walk(objdir):
        for f in files:
            if not f.endswith(".o"):
                continue
            o = os.path.join(d, f)
            src = os.path.relpath(o, os.path.join(ROOT, build, "obj"))[:-2] + ".c"
            out = subprocess.run(["nm", "-P", o], capture_output=True, text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) < 2:
                    continue
                name, kind = parts[0], parts[1]
                if kind == "U":
                    undefs.setdefault(src, set()).add(name)
                elif kind.isupper():
                    defs[name] = src
    graph = {}
    for src, names in undefs.items():
        graph[src] = {defs[n] for n in names if n in defs and defs[n] != src}
    return graph


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    files = sorted(sources())
    dirs, heads = {}, {}
    for f in files:
        d = os.path.dirname(f)
        for inc in includes(f):
            di = os.path.dirname(inc)
            if di != d:
                dirs.setdefault(d, set()).add(di)
            if f.endswith(".h"):
                heads.setdefault(f, set()).add(inc)
    show("1. directories of target/ (#include)", dirs)
    bad = show("2. headers of target/ (#include)", heads)
    g = object_graph(build)
    if g is None:
        print(f"3. files of target/ (symbols): no {build}/obj; build first")
    else:
        show("3. files of target/ (symbols, nm)", g)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
