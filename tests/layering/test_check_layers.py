#!/usr/bin/env python3
"""tests/layering/test_check_layers.py -- the layering check catches what it
must: in small planted trees, an include that breaks a rule fails the check
naming file:line and the edge, and allowed edges pass."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
from checks import check, finish  # noqa: E402

CHECKER = os.path.join(HERE, "check_layers.py")


def tree(files):
    root = tempfile.mkdtemp(prefix="ncc_layers_")
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    return root


def run(files):
    root = tree(files)
    try:
        p = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
    finally:
        shutil.rmtree(root)
    return p.returncode, p.stdout


BASE = {
    "include/ncc.h": "\n",
    "ir/ir.h": '#include "ncc.h"\n',
    "passes/pass.h": '#include "../ir/ir.h"\n',
    "runtime/exec.h": '#include "../ir/ir.h"\n',
    "runtime/ref/ref.h": '#include "../../ir/ir.h"\n',
    "codegen/kir.h": '#include "../ir/ir.h"\n#include "../passes/pass.h"\n',
    "targets/module.c": '#include "../runtime/exec.h"\n#include "../codegen/kir.h"\n',
    "passes/const_fold.c": '#include "../runtime/ref/ref.h"\n',
    "tools/ncc/main.c": '#include "ncc.h"\n',
}

rc, out = run(BASE)
check("a tree that keeps the rules passes", rc == 0, out)


def planted(name, path, text, edge):
    files = dict(BASE)
    files[path] = files.get(path, "") + text
    line = files[path].count("\n")
    rc, out = run(files)
    check(name + ": fails", rc == 1, out)
    check(name + ": names file:line and the edge", "%s:%d: %s" % (path, line, edge) in out, out)


planted("codegen -> runtime", "codegen/kir.h", '#include "../runtime/exec.h"\n',
        "codegen -> runtime")
planted("codegen -> targets", "codegen/lower.c", '#include "../targets/module.c"\n',
        "codegen -> targets")
planted("runtime -> codegen", "runtime/exec.c", '#include "../codegen/kir.h"\n',
        "runtime -> codegen")
planted("runtime -> targets", "runtime/ref/interp.c",
        '#include "../../targets/module.c"\n', "runtime -> targets")
planted("ir -> passes", "ir/ir.h", '#include "../passes/pass.h"\n', "ir -> passes")
planted("passes -> runtime (not ref)", "passes/const_fold.c",
        '#include "../runtime/exec.h"\n', "passes -> runtime")
planted("root-relative include", "codegen/x.c", '#include "targets/module.c"\n',
        "codegen -> targets")

planted("tools/ncc -> ir (the driver uses ncc.h only)", "tools/ncc/main.c",
        '#include "ir/ir.h"\n', "tools/ncc -> ir")

sys.exit(finish())
