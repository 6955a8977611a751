#!/usr/bin/env python3
"""tests/py/shape_memo_ort.py — the host executor's shape memo
(runtime/exec.c): nodes whose small outputs depend only on the symbols the
graph inputs bind (Shape, Size and the Gather/Unsqueeze/Concat/Cast chains
computed from them) run on the first run of a binding, and later runs with
the same symbol values take the kept outputs. One compiled module (libncc
in this process, bench/harness/ncclib.py) runs a dynamic-batch model at
the batches 2, 2, 5, 2, 1, 1, 5 in that order, on cpu and ref, each run
against ONNX Runtime: a memo served for the wrong binding gives the wrong
shape to a Reshape and an Expand, or a stale element count to a Mul; and a
Shape after a data-dependent op (NonZero) must run on every run.

It needs libncc loaded in-process, which a sanitizer build refuses, so it
runs in the release stage (label release). Exit 77 when numpy, onnx or
onnxruntime are missing.
Usage: NCC=build/ncc python3 tests/py/shape_memo_ort.py [-v]
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from harness import ncclib  # noqa: E402

NCC = nccutil.find_ncc()
RTOL, ATOL = 1e-5, 1e-6
F32 = np.float32
BATCHES = (2, 2, 5, 2, 1, 1, 5)
VERBOSE = "-v" in sys.argv[1:]


def model(rng):
    """x[N,4,6] -> y1[N,24] (Reshape to [N, 24] from Shape/Gather/Unsqueeze/
    Concat), y2[N,4,6] (x times its element count, from Size and Cast),
    y3[N,4,6] (a [1,4,6] constant expanded to [N,4,6]), y4[N,4,6] (x times
    the number of its positive elements: the Shape of NonZero's output,
    whose dim depends on the data, must not be kept per binding)."""
    h = helper.make_node
    inits = {
        "zero": np.array(0, dtype=np.int64),
        "axes0": np.array([0], dtype=np.int64),
        "c24": np.array([24], dtype=np.int64),
        "c4x6": np.array([4, 6], dtype=np.int64),
        "b": rng.standard_normal((1, 4, 6)).astype(F32),
        "one": np.array(1, dtype=np.int64),
        "zero_f": np.array(0.0, dtype=F32),
    }
    nodes = [
        h("Shape", ["x"], ["s"]),
        h("Gather", ["s", "zero"], ["n"], axis=0),
        h("Unsqueeze", ["n", "axes0"], ["nu"]),
        h("Concat", ["nu", "c24"], ["shape_r"], axis=0),
        h("Relu", ["x"], ["xr"]),
        h("Reshape", ["xr", "shape_r"], ["r"]),
        h("Mul", ["r", "r"], ["y1"]),
        h("Size", ["x"], ["size"]),
        h("Cast", ["size"], ["size_f"], to=TensorProto.FLOAT),
        h("Mul", ["x", "size_f"], ["y2"]),
        h("Concat", ["nu", "c4x6"], ["shape_e"], axis=0),
        h("Expand", ["b", "shape_e"], ["be"]),
        h("Add", ["be", "x"], ["y3"]),
        h("Greater", ["x", "zero_f"], ["pos"]),
        h("NonZero", ["pos"], ["nz"]),
        h("Shape", ["nz"], ["snz"]),
        h("Gather", ["snz", "one"], ["count"], axis=0),
        h("Cast", ["count"], ["count_f"], to=TensorProto.FLOAT),
        h("Mul", ["x", "count_f"], ["y4"]),
    ]
    return nccutil.checked_model(
        nodes, "shape_memo", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 6])],
        ["y1", "y2", "y3", "y4"], inits)


def main():
    rng = np.random.RandomState(20261205)
    m = model(rng)
    with tempfile.TemporaryDirectory(prefix="ncc-memo-") as wd:
        try:
            lib = ncclib.NccLib(ncclib.shared_library(NCC, os.path.join(wd, "lib")))
        except ncclib.Unavailable as e:
            print("skipped: libncc cannot be loaded in this process: %s" % e)
            return 77
        path = os.path.join(wd, "memo.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        feeds = [rng.standard_normal((b, 4, 6)).astype(F32) for b in BATCHES]
        wants = [nccutil.run_ort(m, {"x": x}) for x in feeds]

        def on(target, passes=None):
            def fn():
                mod = lib.compile(path, target, passes=passes, time_passes=False)
                try:
                    names = mod.output_names()
                    for b, x, want in zip(BATCHES, feeds, wants):
                        ins, keep = mod.inputs([x])
                        outs = mod.run(ins)
                        got = {n: outs.numpy(i) for i, n in enumerate(names)}
                        what = "%s %s batch %d" % (target, passes or "-O2", b)
                        nccutil.check_close(what, want, got, RTOL, ATOL)
                        del keep
                        if VERBOSE:
                            print("  ok %s" % what)
                finally:
                    mod.free()
            fn.__name__ = "test_%s%s" % (target, "_" + passes.replace(",", "_") if passes else "")
            return fn

        fns = [on("ref"), on("ref", "fusion")]
        if nccutil.target_usable(NCC, "cpu"):
            fns += [on("cpu"), on("cpu", "fusion")]
        else:
            print("note: target cpu does not run here (no LLVM): ref only")
        return nccutil.run_cases(fns)


if __name__ == "__main__":
    sys.exit(main())
