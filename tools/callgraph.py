#!/usr/bin/env python3
"""callgraph.py — the call graph between the files of a module, from its
objects, and the call cycles in it (CONTRIBUTING.md, "Layers").

    tools/callgraph.py [--dot] [--allow A,B,...] OBJECT.o...

Each object file is a node; an edge A -> B means A uses a symbol (function
or variable) that B defines (`nm`: A's undefined symbols against B's
defined ones).  A call cycle is a strongly connected component of more
than one file: files that call each other, directly or around a loop, are
one room, not layers.  Exits 1 and lists each cycle (and, for each, the
symbols that close it) when there is one that --allow does not name (a
comma-separated list of the files of one allowed cycle; may be repeated);
0 otherwise.  --dot prints the graph in Graphviz form instead.
"""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True,
                         check=True).stdout
    defined = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtDdBbRrVWGgSs":
            defined.add(parts[2])
    out = subprocess.run(["nm", "--undefined-only", obj], capture_output=True, text=True,
                         check=True).stdout
    used = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, used


def name_of(obj):
    base = os.path.basename(obj)
    for suffix in (".c.o", ".o"):
        if base.endswith(suffix):
            return base[: -len(suffix)] + ".c"
    return base


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    dot = False
    allowed = []
    objs = []
    i = 0
    while i < len(argv):
        if argv[i] == "--dot":
            dot = True
        elif argv[i] == "--allow":
            i += 1
            allowed.append(sorted(argv[i].split(",")))
        else:
            objs.append(argv[i])
        i += 1
    if not objs:
        print(__doc__, file=sys.stderr)
        return 2
    defs, uses = {}, {}
    for o in objs:
        d, u = symbols(o)
        defs[name_of(o)] = d
        uses[name_of(o)] = u
    owner = {}
    for f, d in defs.items():
        for s in d:
            owner.setdefault(s, f)
    edges, why = {}, {}
    for f, u in uses.items():
        for s in u:
            g = owner.get(s)
            if g and g != f:
                edges.setdefault(f, set()).add(g)
                why.setdefault((f, g), []).append(s)
    if dot:
        print("digraph calls {")
        for f in sorted(edges):
            for g in sorted(edges[f]):
                print('  "%s" -> "%s";' % (f, g))
        print("}")
        return 0
    bad = 0
    for comp in sccs(defs.keys(), edges):
        if len(comp) < 2 or comp in allowed:
            continue
        bad += 1
        print("cycle of %d files: %s" % (len(comp), " ".join(comp)))
        for f in comp:
            for g in sorted(edges.get(f, ())):
                if g in comp:
                    print("  %s -> %s: %s" % (f, g, ", ".join(sorted(why[(f, g)])[:6])))
    if bad:
        print("%d call cycle(s): move what both sides need below them (CONTRIBUTING.md, "
              "Layers)" % bad)
        return 1
    print("no call cycle among %d files" % len(defs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
