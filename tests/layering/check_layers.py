#!/usr/bin/env python3
"""tests/layering/check_layers.py -- the include rules of docs/ARCHITECTURE.md.

Reads every #include "..." of the C sources and headers (.c .h .inc .def)
under the layer directories, resolves it as the compiler does (beside the
including file, then the repository root, then include/), and fails on an
include that goes up or sideways:

  include/   nothing
  ir/        include/                      (the utility layer too)
  frontend/  ir/
  passes/    ir/, runtime/ref/ (constant folding runs reference kernels)
  runtime/   ir/, passes/                  never codegen/ or targets/
  codegen/   ir/, passes/                  never runtime/ or targets/
  targets/   everything above
  tools/ncc/ include/ncc.h only

Each forbidden edge is printed as "file:line: <layer> -> <layer>: include
\"...\"". Usage: check_layers.py [ROOT] (default: this repository).
Exit 0 when nothing forbidden (pending edges do not count), else 1.
"""
import os
import re
import sys

# Layers, each with the layers it may include (itself and include/ always).
ALLOWED = {
    "include": set(),
    "ir": set(),
    "frontend": {"ir"},
    "passes": {"ir", "runtime/ref"},
    "runtime": {"ir", "passes"},
    "codegen": {"ir", "passes"},
    "targets": {"ir", "frontend", "passes", "runtime", "codegen"},
    "tools/ncc": set(),
}
# Rules being brought in by another change: their violations are listed as
# "pending" but do not fail the check. Remove a layer here to enforce it.
PENDING = set()
# Finer directories that count as one layer for the edges ("runtime/ref"
# is part of runtime, but passes/ may include it and not the rest).
SUBLAYERS = ["runtime/ref"]
EXTS = (".c", ".h", ".inc", ".def")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(rel, with_sub=False):
    rel = rel.replace(os.sep, "/")
    if with_sub:
        for s in SUBLAYERS:
            if rel.startswith(s + "/"):
                return s
    for name in sorted(ALLOWED, key=len, reverse=True):
        if rel.startswith(name + "/"):
            return name
    return None


def resolve(root, src_rel, inc):
    for base in (os.path.dirname(os.path.join(root, src_rel)), root,
                 os.path.join(root, "include")):
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(p):
            return os.path.relpath(p, root)
    return None  # generated (onnx.pb-c.h) or outside the tree


def edge_ok(src_layer, dst_rel):
    dst_layer = layer_of(dst_rel)
    if dst_layer is None or dst_layer in (src_layer, "include"):
        return True, dst_layer
    allowed = ALLOWED[src_layer]
    if dst_layer in allowed:
        return True, dst_layer
    sub = layer_of(dst_rel, with_sub=True)
    if sub in allowed:
        return True, sub
    return False, sub or dst_layer


def check(root):
    bad, pending, n = [], [], 0
    for top in sorted({l.split("/")[0] for l in ALLOWED}):
        for dirpath, dirnames, files in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(files):
                if not f.endswith(EXTS):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                src_layer = layer_of(rel)
                if src_layer is None:
                    continue  # tools/*.sh and friends: not a layer
                with open(os.path.join(root, rel), errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        n += 1
                        dst = resolve(root, rel, m.group(1))
                        if dst is None:
                            continue
                        ok, dst_layer = edge_ok(src_layer, dst)
                        if ok:
                            continue
                        msg = '%s:%d: %s -> %s: include "%s" (%s)' % (
                            rel, lineno, src_layer, dst_layer, m.group(1), dst)
                        (pending if src_layer in PENDING else bad).append(msg)
    return bad, pending, n


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    bad, pending, n = check(root)
    for m in pending:
        print("pending: " + m)
    for m in bad:
        print("forbidden: " + m)
    print("%d includes checked: %d forbidden, %d pending (%s)" % (
        n, len(bad), len(pending), ", ".join(sorted(PENDING)) or "none"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
