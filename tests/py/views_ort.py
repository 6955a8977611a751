#!/usr/bin/env python3
"""tests/py/views_ort.py — nodes that only re-shape their input (Reshape,
Flatten, Squeeze, Unsqueeze, Identity) run as views on the host executor
(runtime/exec.c): the output borrows the input's buffer, no kernel, no
copy. What can go wrong is the source's lifetime: a source freed, or its
planned arena slot handed to another value, while a view of it is still to
be read. Checked against ONNX Runtime on ref and cpu (vector widths 8 and
4), at two batch sizes of a symbolic batch, through the default pipeline
and through fusion alone (so that simplify, const-fold and dce leave every
view below in place), with:
  - a chain of three views of one intermediate, read only after several
    same-sized temporaries that the memory plan would put in its slot;
  - a view read by a fused elementwise group (the group's external input);
  - views that are graph outputs (of an intermediate and of a graph
    input), a view of a constant, a view of a view that is itself an
    output, and a view nobody reads;
  - temporaries after the output views, which would take their sources'
    slots if the sources died before the run hands the outputs over;
and on cpu, `ncc bench --json` must count the 9 views and `--profile`
must list no step for them. Exit 77 when numpy/onnx/onnxruntime are missing.
Usage: NCC=build/ncc python3 tests/py/views_ort.py [-v]
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

NCC = nccutil.find_ncc()
RTOL, ATOL = 1e-5, 1e-6
F32 = np.float32
VERBOSE = "-v" in sys.argv[1:]
VIEW_OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")


def model(rng):
    """x[N,6,40] -> outputs y1..y4; 9 view nodes (one unread)."""
    h = helper.make_node
    inits = {
        "shape_n240": np.array([0, 240], dtype=np.int64),
        "shape_n6x40": np.array([0, 6, 40], dtype=np.int64),
        "axes1": np.array([1], dtype=np.int64),
        "w": rng.standard_normal((6, 40)).astype(F32),
        "shape_240": np.array([240], dtype=np.int64),
    }
    nodes = [
        h("Relu", ["x"], ["a"]),
        # three views of a, the last read at the very end
        h("Reshape", ["a", "shape_n240"], ["v1"]),
        h("Unsqueeze", ["v1", "axes1"], ["v2"]),
        h("Squeeze", ["v2", "axes1"], ["v3"]),
        # same-sized temporaries: a's slot is free for them unless v3 holds it
        h("Sigmoid", ["x"], ["t1"]),
        h("Mul", ["t1", "x"], ["t2"]),
        h("Tanh", ["t2"], ["t3"]),
        h("Exp", ["t3"], ["t4"]),
        h("Softmax", ["t4"], ["t5"], axis=2),
        h("Reshape", ["t5", "shape_n240"], ["e"]),
        # an elementwise chain reading two views (fused into one group)
        h("Add", ["v3", "e"], ["f"]),
        h("Mul", ["f", "f"], ["f2"]),
        h("Reshape", ["w", "shape_240"], ["wv"]),           # view of a constant
        h("Sub", ["f2", "wv"], ["g"]),
        h("Reshape", ["g", "shape_n6x40"], ["y1"]),         # view as an output
        h("Identity", ["x"], ["y2"]),                       # of a graph input
        h("Flatten", ["y1"], ["y3"], axis=1),               # view of an output view
        h("Reshape", ["t3", "shape_n240"], ["unread"]),
        # a temporary after the output views: their sources' slots must
        # stay theirs until the run hands the outputs over
        h("Transpose", ["t3"], ["t6"], perm=[0, 2, 1]),
        h("Transpose", ["t6"], ["t7"], perm=[0, 2, 1]),
        h("Transpose", ["t7"], ["t8"], perm=[0, 2, 1]),
        h("Transpose", ["t8"], ["t9"], perm=[0, 2, 1]),
        h("Sum", ["t6", "t8"], ["t10"]),
        h("Sum", ["t7", "t9", "t3"], ["y4"]),
    ]
    return nccutil.checked_model(
        nodes, "views", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 40])],
        ["y1", "y2", "y3", "y4"], inits)


def ncc_json(args):
    p = subprocess.run([NCC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=nccutil.NCC_TIMEOUT)
    nccutil.check(p.returncode == 0, "ncc %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                             p.stderr.decode()))
    return json.loads(p.stdout.decode())


def main():
    rng = np.random.RandomState(20261205)
    m = model(rng)
    outs = ["y1", "y2", "y3", "y4"]
    fns = []
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "views.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())

        def on(target, width=None):
            def fn():
                for batch, pipe in ((3, []), (3, ["--passes=fusion"]), (1, ["--passes=fusion"])):
                    feeds = {"x": rng.standard_normal((batch, 6, 40)).astype(F32)}
                    want = nccutil.run_ort(m, feeds)
                    with nccutil.environ({"NCC_VECTOR_WIDTH": str(width) if width else None}):
                        sub = nccutil.subdir(wd, "%s-w%s-b%d" % (target, width, batch))
                        res = nccutil.run_ncc(NCC, path, feeds, outs, sub,
                                              extra=["--no-cache"] + pipe, target=target)
                    what = "%s width %s batch %d %s" % (target, width, batch, " ".join(pipe))
                    nccutil.check(not res.rc and not res.missing,
                                  "%s: %s" % (what, res.describe()))
                    nccutil.check_close(what, want, res.outputs, RTOL, ATOL)
                    if VERBOSE:
                        print("  ok %s" % what)
            fn.__name__ = "test_%s%s" % (target, "_w%d" % width if width else "")
            return fn

        def test_cpu_counts_views():
            r = ncc_json(["bench", path, "--batch", "2", "--iters", "2", "--warmup", "1",
                          "--json", "--profile", "--no-cache", "--passes=fusion"])
            nccutil.check(r.get("views") == 9, "views: %r, expected 9" % r.get("views"))
            ks = r["profile"]["kernels"]
            ops = [op for k in ks for op in k["ops"]]
            nccutil.check(not any(op in VIEW_OPS for op in ops),
                          "a view has a profile step: %s" % ops)

        fns.append(on("ref"))
        if nccutil.target_usable(NCC, "cpu"):
            fns += [on("cpu", w) for w in (8, 4)]
            fns.append(test_cpu_counts_views)
        else:
            print("note: target cpu does not run here (no LLVM): ref only")
        return nccutil.run_cases(fns)


if __name__ == "__main__":
    sys.exit(main())
