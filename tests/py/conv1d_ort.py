#!/usr/bin/env python3
"""tests/py/conv1d_ort.py — the conv1d pass (passes/conv1d.c): 1-D Conv,
MaxPool and AveragePool run as their 2-D forms over a height of one.
Against ONNX Runtime on ref and on cpu at vector widths 8, 4 and 1, at two
lengths (50, and an odd 37) of a symbolic length:
  an audio stem like Whisper's (Conv k3 pad 1, Relu, Conv k3 stride 2);
  a grouped, dilated Conv with asymmetric pads and no bias; a depthwise
  one; a 1x1 one;
  MaxPool (k3 s2, end pad) and AveragePool (k2 s2, begin pad, pads
  counted);
and on cpu `ncc run` must not run any of them on reference kernels (the
warning line), which is what they did before the pass.
Exit 77 when numpy/onnx/onnxruntime are missing.
Usage: NCC=build/ncc python3 tests/py/conv1d_ort.py [-v]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

NCC = nccutil.find_ncc()
RTOL, ATOL = 1e-4, 1e-4  # diff_ort.py's TOL for Conv (sums in another order)
F32 = np.float32
VERBOSE = "-v" in sys.argv[1:]


def model(rng):
    h = helper.make_node
    inits = {
        "w1": nccutil.kaiming(rng, (16, 8, 3)),
        "b1": (rng.standard_normal(16) * 0.1).astype(F32),
        "w2": nccutil.kaiming(rng, (16, 16, 3)),
        "b2": (rng.standard_normal(16) * 0.1).astype(F32),
        "wg": nccutil.kaiming(rng, (12, 4, 3)),
        "wd": nccutil.kaiming(rng, (8, 1, 5)),
        "bd": (rng.standard_normal(8) * 0.1).astype(F32),
        "w11": nccutil.kaiming(rng, (6, 8, 1)),
    }
    nodes = [
        h("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3], pads=[1, 1]),
        h("Relu", ["c1"], ["r1"]),
        h("Conv", ["r1", "w2", "b2"], ["y_stem"], kernel_shape=[3], strides=[2], pads=[1, 1]),
        h("Conv", ["x", "wg"], ["y_group"], group=2, dilations=[2], pads=[2, 3]),
        h("Conv", ["x", "wd", "bd"], ["y_dw"], group=8, pads=[2, 2], strides=[3]),
        h("Conv", ["x", "w11"], ["y_1x1"]),
        h("MaxPool", ["x"], ["y_max"], kernel_shape=[3], strides=[2], pads=[0, 1]),
        h("AveragePool", ["x"], ["y_avg"], kernel_shape=[2], strides=[2], pads=[1, 0],
          count_include_pad=1),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, "L"])]
    outs = ["y_stem", "y_group", "y_dw", "y_1x1", "y_max", "y_avg"]
    return nccutil.checked_model(nodes, "conv1d", inputs, outs, inits), outs


def main():
    rng = np.random.RandomState(20261205)
    m, outs = model(rng)
    fns = []
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "conv1d.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())

        def on(target, width=None):
            def fn():
                for length in (50, 37):
                    feeds = {"x": rng.standard_normal((2, 8, length)).astype(F32)}
                    want = nccutil.run_ort(m, feeds)
                    with nccutil.environ({"NCC_VECTOR_WIDTH": str(width) if width else None}):
                        sub = nccutil.subdir(wd, "%s-w%s-%d" % (target, width, length))
                        res = nccutil.run_ncc(NCC, path, feeds, outs, sub, extra=["--no-cache"],
                                              target=target)
                    what = "%s width %s length %d" % (target, width, length)
                    nccutil.check(not res.rc and not res.missing, "%s: %s" % (what, res.describe()))
                    nccutil.check_close(what, want, res.outputs, RTOL, ATOL)
                    if target == "cpu":
                        nccutil.check("reference kernels" not in res.stderr,
                                      "%s: %s" % (what, res.stderr.strip()))
                    if VERBOSE:
                        print("  ok %s" % what)
            fn.__name__ = "test_%s%s" % (target, "_w%d" % width if width else "")
            return fn

        fns.append(on("ref"))
        if nccutil.target_usable(NCC, "cpu"):
            fns += [on("cpu", w) for w in (8, 4, 1)]
        else:
            print("note: target cpu does not run here (no LLVM): ref only")
        return nccutil.run_cases(fns)


if __name__ == "__main__":
    sys.exit(main())
