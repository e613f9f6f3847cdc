#!/usr/bin/env python3
"""callgraph.py — the call graph between the files of a module, from its
objects, and what in it breaks the module's layers (CONTRIBUTING.md,
"Layers").

    tools/callgraph.py [--dot] [--layers FILE] [--allow A,B,...] OBJECT.o...

Each object file is a node; an edge A -> B means A uses a symbol (function
or variable) that B defines (`nm`: A's undefined symbols against B's
defined ones).  A call cycle is a strongly connected component of more
than one file: files that call each other, directly or around a loop, are
one room, not layers.  --allow names the files of one allowed cycle
(comma-separated; may be repeated).

--layers FILE: the module's layers, bottom up, one a line ("name: a.c
b.c", a line that starts with blanks continues the one above, '#' starts
a comment).  A file may call files of its own layer and of those below,
never above; every object must be in exactly one layer and every file of
the table must be an object.

Without --layers it checks for cycles alone: the ctest check tools.cycles
runs it so over the objects of src/analysis, src/report and src/gate, whose
files have no layer table but must not call each other around a loop.  A
file is known by its name, so two objects of one name (from two folders)
are refused rather than merged into one node.

Exits 1 and lists each problem (for a cycle and for a call up a layer,
the symbols behind it) when there is one, 0 otherwise.  --dot prints the
graph in Graphviz form instead (one cluster per layer with --layers).
An argument may hold several objects separated by ';', as CMake's
$<TARGET_OBJECTS:...> gives them to a test.
"""
import os
import subprocess
import sys


def symbols(objs):
    """{object: (defined, used)} from one nm run over all of them (one run
    per object was most of the check's time)."""
    out = subprocess.run(["nm", "-A"] + objs, capture_output=True, text=True,
                         check=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        obj, _, rest = line.partition(":")
        parts = rest.split()
        if obj not in syms or not parts:
            continue
        if len(parts) == 2 and parts[0] == "U":
            syms[obj][1].add(parts[1])
        elif len(parts) == 3 and parts[1] in "TtDdBbRrVWGgSs":
            syms[obj][0].add(parts[2])
    return syms


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


def read_layers(path):
    """[(layer name, [file, ...]), ...] bottom up, from a --layers table."""
    layers = []
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line:
                continue
            if line[0] in " \t":
                if not layers:
                    raise SystemExit("%s:%d: a continuation line before any layer" % (path, n))
                layers[-1][1].extend(line.split())
                continue
            name, sep, files = line.partition(":")
            if not sep or not name.strip():
                raise SystemExit("%s:%d: expected 'layer: file.c ...'" % (path, n))
            layers.append((name.strip(), files.split()))
    return layers


def check_layers(path, layers, names, edges, why):
    """The problems the layer table finds: files placed twice, not placed or
    not built, and calls up a layer.  Returns their count."""
    bad = 0
    level = {}
    for i, (layer, files) in enumerate(layers):
        for f in files:
            if f in level:
                print("%s: %s is in two layers (%s, %s)" % (path, f, layers[level[f]][0], layer))
                bad += 1
            level[f] = i
    for f in sorted(names):
        if f not in level:
            print("%s is in no layer of %s: place it in the layer of its job, no lower than "
                  "the files it calls" % (f, path))
            bad += 1
    for f in sorted(level):
        if f not in names:
            print("%s names %s, which is not among the objects: remove it" % (path, f))
            bad += 1
    for f in sorted(edges):
        for g in sorted(edges[f]):
            if f in level and g in level and level[g] > level[f]:
                print("call up a layer: %s (%s) -> %s (%s): %s" % (
                    f, layers[level[f]][0], g, layers[level[g]][0],
                    ", ".join(sorted(why[(f, g)])[:6])))
                bad += 1
    return bad


def print_dot(edges, layers):
    print("digraph calls {")
    for i, (layer, files) in enumerate(layers):
        print('  subgraph "cluster_%d" {' % i)
        print('    label="%s";' % layer)
        for f in files:
            print('    "%s";' % f)
        print("  }")
    for f in sorted(edges):
        for g in sorted(edges[f]):
            print('  "%s" -> "%s";' % (f, g))
    print("}")


def main(argv):
    dot = False
    allowed = []
    layers_path = None
    objs = []
    i = 0
    while i < len(argv):
        if argv[i] == "--dot":
            dot = True
        elif argv[i] in ("--allow", "--layers"):
            if i + 1 == len(argv):
                print("%s needs an argument" % argv[i], file=sys.stderr)
                return 2
            i += 1
            if argv[i - 1] == "--allow":
                allowed.append(sorted(argv[i].split(",")))
            else:
                layers_path = argv[i]
        elif argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            objs.extend(o for o in argv[i].split(";") if o)
        i += 1
    if not objs:
        print(__doc__, file=sys.stderr)
        return 2
    layers = read_layers(layers_path) if layers_path else []
    defs, uses, path = {}, {}, {}
    for o in objs:
        if name_of(o) in path:
            print("two objects named %s: %s and %s; a file is known by its name, so give "
                  "one another name" % (name_of(o), path[name_of(o)], o))
            return 1
        path[name_of(o)] = o
    for o, (d, u) in symbols(objs).items():
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
        print_dot(edges, layers)
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
    if layers:
        bad += check_layers(layers_path, layers, set(defs), edges, why)
    if bad:
        print("%d problem(s): move what both sides need below them, or place the file "
              "in the layer its calls allow (CONTRIBUTING.md, Layers)" % bad)
        return 1
    if layers:
        print("no call cycle among %d files, and none up a layer of %d" % (len(defs), len(layers)))
    else:
        print("no call cycle among %d files" % len(defs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
