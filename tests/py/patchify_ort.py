#!/usr/bin/env python3
"""tests/py/patchify_ort.py — the patchify pass (passes/patchify.c): Convs
whose kernel tiles the input (kernel = stride, no pads) become a
Reshape/Transpose of the patches into channels and a 1x1 Conv. Against
ONNX Runtime on ref and on cpu at vector widths 8, 4 and 1, at batch 2 of
a symbolic batch:
  vit       ViT's patch embedding at a small size (3 -> 32 channels, 8x8/8);
  stem      ConvNeXt's stem (4x4/4) and a downsample (2x2/2, 24 -> 40)
            after a Relu, so the second reads an intermediate;
  rect      a non-square patch (2x4, stride 2x4) without bias;
and `ncc opt` must show each of them as a 1x1 Conv after the pass (so the
rewrite is what ran), and none with --disable-pass=patchify.
Exit 77 when numpy/onnx/onnxruntime are missing.
Usage: NCC=build/ncc python3 tests/py/patchify_ort.py [-v]
"""
import os
import subprocess
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
        "w_vit": nccutil.kaiming(rng, (32, 3, 8, 8)),
        "b_vit": (rng.standard_normal(32) * 0.1).astype(F32),
        "w_stem": nccutil.kaiming(rng, (24, 3, 4, 4)),
        "b_stem": (rng.standard_normal(24) * 0.1).astype(F32),
        "w_down": nccutil.kaiming(rng, (40, 24, 2, 2)),
        "b_down": (rng.standard_normal(40) * 0.1).astype(F32),
        "w_rect": nccutil.kaiming(rng, (5, 3, 2, 4)),
    }
    nodes = [
        h("Conv", ["x", "w_vit", "b_vit"], ["y_vit"], kernel_shape=[8, 8], strides=[8, 8]),
        h("Conv", ["x", "w_stem", "b_stem"], ["s"], strides=[4, 4]),
        h("Relu", ["s"], ["sr"]),
        h("Conv", ["sr", "w_down", "b_down"], ["y_down"], strides=[2, 2]),
        h("Conv", ["x", "w_rect"], ["y_rect"], strides=[2, 4]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])]
    return nccutil.checked_model(nodes, "patchify", inputs, ["y_vit", "y_down", "y_rect"], inits)


def opt_convs(path, extra):
    p = subprocess.run([NCC, "opt", path] + extra, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=nccutil.NCC_TIMEOUT)
    nccutil.check(p.returncode == 0, "ncc opt: %s" % p.stderr.decode())
    return [ln for ln in p.stdout.decode().splitlines() if "= Conv(" in ln]


def main():
    rng = np.random.RandomState(20261205)
    m = model(rng)
    feeds = {"x": rng.standard_normal((2, 3, 32, 32)).astype(F32)}
    want = nccutil.run_ort(m, feeds)
    outs = list(want)
    fns = []
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "patchify.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())

        def test_rewritten():
            convs = opt_convs(path, [])
            nccutil.check(len(convs) == 4 and all("strides = [1, 1]" in c for c in convs),
                          "not every patch Conv became a 1x1 Conv:\n%s" % "\n".join(convs))
            kept = opt_convs(path, ["--disable-pass=patchify"])
            nccutil.check(not any("strides = [1, 1]" in c for c in kept),
                          "a 1x1 Conv without the pass:\n%s" % "\n".join(kept))

        def on(target, width=None):
            def fn():
                with nccutil.environ({"NCC_VECTOR_WIDTH": str(width) if width else None}):
                    sub = nccutil.subdir(wd, "%s-w%s" % (target, width))
                    res = nccutil.run_ncc(NCC, path, feeds, outs, sub, extra=["--no-cache"],
                                          target=target)
                what = "%s width %s" % (target, width)
                nccutil.check(not res.rc and not res.missing, "%s: %s" % (what, res.describe()))
                nccutil.check_close(what, want, res.outputs, RTOL, ATOL)
                if VERBOSE:
                    print("  ok %s" % what)
            fn.__name__ = "test_%s%s" % (target, "_w%d" % width if width else "")
            return fn

        fns += [test_rewritten, on("ref")]
        if nccutil.target_usable(NCC, "cpu"):
            fns += [on("cpu", w) for w in (8, 4, 1)]
        else:
            print("note: target cpu does not run here (no LLVM): ref only")
        return nccutil.run_cases(fns)


if __name__ == "__main__":
    sys.exit(main())
