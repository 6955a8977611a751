#!/usr/bin/env python3
"""tests/lower/callgraph.py — which codegen/lower*.c file calls functions
defined in which other one.

Prints one line per edge, "caller.c -> callee.c: f, g", then the files in
layers (a file calls only files of earlier layers). With --check it exits 1
when the edges form a cycle (the lowering files must stay a DAG: dispatch ->
kinds -> shared helpers), printing the files of each cycle.

usage: callgraph.py [--check] [SRC_DIR]   (SRC_DIR: the repository root)
       callgraph.py --self-test   (the checker finds a planted cycle)
"""
import glob
import os
import re
import sys
import tempfile

DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{",
                 re.M)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def strip(src):
    """The source without comments and string literals."""
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    return re.sub(r'"(\\.|[^"\\])*"', '""', src)


def graph(root):
    files = sorted(glob.glob(os.path.join(root, "codegen", "lower*.c")))
    text = {os.path.basename(f): strip(open(f, encoding="utf-8").read()) for f in files}
    owner = {}
    for name, src in text.items():
        for m in DEF.finditer(src):
            owner[m.group(1)] = name
    edges = {name: {} for name in text}
    for name, src in text.items():
        for ident in set(IDENT.findall(src)):
            callee = owner.get(ident)
            if callee and callee != name:
                edges[name].setdefault(callee, set()).add(ident)
    return edges


def layers(edges):
    """Files in layers (callees first); the rest lie on or above a cycle."""
    done, out = set(), []
    while True:
        layer = sorted(f for f in edges if f not in done and set(edges[f]) <= done)
        if not layer:
            return out, sorted(set(edges) - done)
        out.append(layer)
        done.update(layer)


def cycles(edges):
    """The strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return comps


def self_test():
    """A planted cycle (a helper calling back into a kind) must be found."""
    files = {
        "lower.c": "bool ncc_lower_node(int x) { return ncc_lower_a(x); }\n",
        "lower_a.c": "/* ncc_lower_node( in a comment */\n"
                     "int ncc_lower_a(int x) { return ncc_lower_h(x); }\n",
        "lower_h.c": "static int helper(int x) { return x; }\n"
                     "int ncc_lower_h(int x) { return helper(x); }\n",
    }
    with tempfile.TemporaryDirectory() as root:
        os.mkdir(os.path.join(root, "codegen"))
        for name, src in files.items():
            with open(os.path.join(root, "codegen", name), "w", encoding="utf-8") as f:
                f.write(src)
        ok = not cycles(graph(root))
        with open(os.path.join(root, "codegen", "lower_h.c"), "a", encoding="utf-8") as f:
            f.write("int ncc_lower_h2(int x) { return ncc_lower_a(x); }\n")
        planted = cycles(graph(root))
    passed = ok and planted == [["lower_a.c", "lower_h.c"]]
    print("self-test: DAG accepted: %s, planted cycle found: %s" % (ok, planted))
    print("%d passed, %d failed" % (int(passed), int(not passed)))
    return 0 if passed else 1


def main(argv):
    if "--self-test" in argv:
        return self_test()
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "..")
    edges = graph(root)
    if not edges:
        print("no codegen/lower*.c under %s" % root)
        return 1
    for caller in sorted(edges):
        for callee in sorted(edges[caller]):
            print("%s -> %s: %s" % (caller, callee, ", ".join(sorted(edges[caller][callee]))))
    order, rest = layers(edges)
    for i, layer in enumerate(order):
        print("layer %d: %s" % (i, " ".join(layer)))
    comps = cycles(edges)
    for comp in comps:
        print("cycle: %s" % " ".join(comp))
    if rest and not comps:
        print("not layered: %s" % " ".join(rest))
    if check:
        print("%d passed, %d failed" % (0 if comps else 1, 1 if comps else 0))
        return 1 if comps else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
