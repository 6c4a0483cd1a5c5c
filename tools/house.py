#!/usr/bin/env python3
"""house.py: the largest circle of core's files, by includes and calls.

    tools/house.py [ROOT]

Reads core/src's C files and headers under ROOT and draws an edge from
a file to each core header it includes and to each core file that
defines a function it calls (functions found by a regex: a name followed
by '(' at the start of a line, with a body; calls: any name followed by
'(' in a body). Prints the number of files in the largest strongly
connected set (a circle: each file reaches every other) and its files.
A measure for reading the code in layers (issue 32), not a test.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
src = os.path.join(root, "core", "src")
files = sorted(f for f in os.listdir(src) if f.endswith((".c", ".h")))
text = {}
for f in files:
    s = open(os.path.join(src, f), errors="replace").read()
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)
    s = re.sub(r'"(\\.|[^"\\])*"', '""', s)
    text[f] = s
defined = {}
for f in files:
    if f.endswith(".c"):
        for m in re.finditer(r"^[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;{]*\)\s*\{", text[f], re.M):
            if not m.group(0).startswith("static"):  # a static one is its file's own
                defined.setdefault(m.group(1), f)
edges = {f: set() for f in files}
for f in files:
    for m in re.finditer(r'#include\s+"([\w./]+)"', text[f]):
        h = os.path.basename(m.group(1))
        if h in edges and h != f:
            edges[f].add(h)
    for m in re.finditer(r"\b(\w+)\s*\(", text[f]):
        g = defined.get(m.group(1))
        if g and g != f:
            edges[f].add(g)
# Tarjan's strongly connected components, iterative.
index, low, on, stack, sccs, n = {}, {}, set(), [], [], 0
for v0 in files:
    if v0 in index:
        continue
    work = [(v0, iter(sorted(edges[v0])))]
    index[v0] = low[v0] = n; n += 1; stack.append(v0); on.add(v0)
    while work:
        v, it = work[-1]
        for w in it:
            if w not in index:
                index[w] = low[w] = n; n += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges[w]))))
                break
            if w in on:
                low[v] = min(low[v], index[w])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                c = []
                while True:
                    w = stack.pop(); on.discard(w); c.append(w)
                    if w == v:
                        break
                sccs.append(sorted(c))
big = max(sccs, key=len)
print("core: %d files, largest circle %d files" % (len(files), len(big)))
print(" ".join(big))
