#!/usr/bin/env python3
"""tests/lower/test_kernel_names.py — the kernels every target makes of a
graph and their names, as the graph-lowering loop (codegen/lower_graph.c)
gives them: "k<i>_<op>" per node, "k<root>_<op>_fused" per fused group, a
library's prefixed "<prefix>_k<i>_...". The cpu JIT and --emit=kir/obj name
a group after its contraction (the anchor), --emit=lib and the GPU after
its first member; the GPU fuses only groups whose first member is the
contraction. These names are what the FileCheck, AOT and GPU tests see;
the expected sets were taken from ncc before the loop was shared.

Needs $NCC; the LLVM cases skip when NCC_WITH_LLVM=0, the OpenCL one when
the target is not built."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "py"))
from checks import check, finish  # noqa: E402

import numpy as np  # noqa: E402

NCC = os.environ.get("NCC", "ncc")
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "prologue.nir")
LLVM = os.environ.get("NCC_WITH_LLVM", "1") != "0"


def kernels(text):
    """Kernel names of printed kernel IR, in order."""
    return [ln.split()[1].split("(")[0] for ln in text.splitlines()
            if ln.startswith("kernel ")]


def run(args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([NCC] + args, capture_output=True, text=True, env=e)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        if LLVM:
            # cpu JIT: the kernel-IR dump of `ncc run`
            ins = []
            for name in ("x", "r"):
                p = os.path.join(tmp, name + ".npy")
                np.save(p, np.ones((4, 16), np.float32))
                ins += ["--input", "%s=%s" % (name, p)]
            r = run(["run", MODEL, "--output-dir", tmp] + ins, {"NCC_DEBUG_KIR": "1"})
            check("jit runs", r.returncode == 0, r.stderr[-400:])
            check("jit names", kernels(r.stderr) == ["k3_MatMul_fused"], kernels(r.stderr))
            # --emit=kir: the object path, named as the JIT names
            out = os.path.join(tmp, "m.kir")
            r = run(["compile", MODEL, "--emit=kir", "-o", out])
            check("emit=kir runs", r.returncode == 0, r.stderr[-400:])
            text = open(out).read() if r.returncode == 0 else ""
            check("emit=kir names", kernels(text) == ["k3_MatMul_fused"], kernels(text))
            # --emit=lib: prefixed, the group named after its first member
            lib = os.path.join(tmp, "libnet.so")
            r = run(["compile", MODEL, "--emit=lib", "-o", lib])
            check("emit=lib runs", r.returncode == 0, r.stderr[-400:])
            # kernel symbols; a kernel's internal `<name>.body` (emit.c) stays a
            # function of its own where the tier's pipeline does not inline it
            nm = subprocess.run(["nm", lib], capture_output=True, text=True).stdout
            syms = sorted(ln.split()[-1] for ln in nm.splitlines()
                          if "_k" in ln.split()[-1] and not ln.split()[-1].endswith(".body"))
            check("emit=lib names", syms == ["net_k3_Exp_fused"], syms)
        else:
            print("skipped: the LLVM cases (NCC_WITH_LLVM=0)")
        # OpenCL: the group declined (its first member is no contraction)
        r = run(["compile", MODEL, "--target=opencl", "--emit=kir"])
        if r.returncode == 3 and "opencl" in r.stderr:
            print("skipped: the opencl case (%s)" % r.stderr.strip())
        else:
            check("opencl emit=kir runs", r.returncode == 0, r.stderr[-400:])
            want = ["k0_Exp", "k1_MatMul", "k2_Add", "k3_Relu"]
            check("opencl names", kernels(r.stdout) == want, kernels(r.stdout))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
