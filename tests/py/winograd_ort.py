#!/usr/bin/env python3
"""tests/py/winograd_ort.py — 3x3 stride-1 Convs by Winograd F(2x2, 3x3) and
F(4x4, 3x3) (pass `winograd`, codegen/lower_wino.c) against ONNX Runtime.

Every Conv below is a candidate (f32, group 1, 3x3, stride and dilation 1,
blocked by the layout pass); `--winograd=2` and `--winograd=4` put all of
them on one tile size, at vector widths 16, 8, 4 and 1 (the scalar code,
with --layout-block=8), batch 2, odd image sizes so the last tile row and
column hang over the output:
  same    pads 1, bias, Relu                      x[2,32,13,11] -> 48
  asym    pads [0,2,2,0] (top, left, bottom, right), no bias
  valid   no padding (an 11x9 output)
  resid   pads 1, bias, + Add(r) + Relu: an epilogue with an external
          operand, read only where a tile's pixel is inside the output
  chain   Relu(same) -> Conv 48->32 pads 1: a blocked input from a Conv
  deep    z[2,512,5,6] -> 16, pads 1: so many input channels that one
          tile's transformed input fills the stack scratch (a task of one
          tile, a register tile of one tile)
ncc opt must show every Conv marked with the tile size asked for, and each
width's kernel IR (NCC_DEBUG_KIR) the transformed-input scratch of all six.
`--disable-pass=winograd` marks none; auto (the default) marks a ResNet
stage-1 Conv (64->64 at 56x56) and leaves a stride-2 one alone.
Without the cpu target (no LLVM) only the marks are checked.
Exit 77 when numpy/onnx/onnxruntime are missing.
Usage: NCC=build/ncc python3 tests/py/winograd_ort.py [-v]
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

NCC = nccutil.find_ncc()
# F(4x4, 3x3)'s transforms scale terms by up to 8 (a few 1e-6 relative
# error on these sums); the check is diff_ort.py's for Conv
RTOL, ATOL = 1e-4, 1e-4
F32 = np.float32
VERBOSE = "-v" in sys.argv[1:]
N, C, OC, H, W = 2, 32, 48, 13, 11
CONVS = ("same", "asym", "valid", "resid", "chain", "deep")


def model(rng):
    inits = {}
    for n in ("same", "asym", "valid", "resid"):
        inits["w_" + n] = nccutil.kaiming(rng, (OC, C, 3, 3))
    inits["w_chain"] = nccutil.kaiming(rng, (32, OC, 3, 3))
    inits["w_deep"] = nccutil.kaiming(rng, (16, 512, 3, 3))
    for n, oc in (("same", OC), ("resid", OC), ("chain", 32), ("deep", 16)):
        inits["b_" + n] = (rng.standard_normal(oc) * 0.1).astype(F32)
    nodes = [
        helper.make_node("Conv", ["x", "w_same", "b_same"], ["c_same"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c_same"], ["y_same"]),
        helper.make_node("Conv", ["x", "w_asym"], ["y_asym"], pads=[0, 2, 2, 0]),
        helper.make_node("Conv", ["x", "w_valid"], ["y_valid"]),
        helper.make_node("Conv", ["x", "w_resid", "b_resid"], ["c_resid"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c_resid", "r"], ["a_resid"]),
        helper.make_node("Relu", ["a_resid"], ["y_resid"]),
        helper.make_node("Conv", ["y_same", "w_chain", "b_chain"], ["y_chain"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["z", "w_deep", "b_deep"], ["y_deep"], pads=[1, 1, 1, 1]),
    ]
    outputs = ["y_" + n for n in CONVS]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W]),
              helper.make_tensor_value_info("r", TensorProto.FLOAT, [N, OC, H, W]),
              helper.make_tensor_value_info("z", TensorProto.FLOAT, [N, 512, 5, 6])]
    m = nccutil.checked_model(nodes, "winograd", inputs, outputs, inits)
    feeds = {"x": rng.standard_normal((N, C, H, W)).astype(F32),
             "r": rng.standard_normal((N, OC, H, W)).astype(F32),
             "z": rng.standard_normal((N, 512, 5, 6)).astype(F32)}
    return m, feeds


def opt(path, *flags):
    p = subprocess.run([NCC, "opt", path] + list(flags), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=nccutil.NCC_TIMEOUT)
    nccutil.check(p.returncode == 0, "ncc opt %s: exit %d: %s"
                  % (" ".join(flags), p.returncode, p.stderr.decode("utf-8", "replace")))
    return p.stdout.decode("utf-8", "replace")


def marks(ir):
    return re.findall(r"conv\.winograd = (\d)", ir)


def run_on(wd, path, feeds, expected, tile, width):
    env = {"NCC_DEBUG_KIR": "1", "NCC_VECTOR_WIDTH": str(width)}
    with nccutil.environ(env):
        sub = nccutil.subdir(wd, "cpu-m%d-w%d" % (tile, width))
        extra = ["--no-cache", "--winograd=%d" % tile]
        extra += ["--layout-block=8"] if width == 1 else []
        res = nccutil.run_ncc(NCC, path, feeds, list(expected), sub, extra=extra, target="cpu")
    what = "F(%dx%d, 3x3) width %d" % (tile, tile, width)
    nccutil.check(not res.rc and not res.missing, "%s: %s" % (what, res.describe()))
    n = res.stderr.count("wino_v: f32 local")
    nccutil.check(n == len(CONVS), "%s: %d Winograd kernel(s), expected %d" % (what, n, len(CONVS)))
    nccutil.check_close(what, expected, res.outputs, RTOL, ATOL)
    if VERBOSE:
        print("  ok %s" % what)


def resnet_ir(wd):
    """A ResNet stage-1 3x3 (64->64 at 56x56) and a stride-2 3x3."""
    path = os.path.join(wd, "resnet.nir")
    with open(path, "w") as f:
        f.write("graph @r(%x: f32[1,64,56,56]) {\n"
                "  %w: f32[64,64,3,3] = const splat(0.02)\n"
                "  %a = Conv(%x, %w) {pads = [1, 1, 1, 1]}\n"
                "  %b = Conv(%a, %w) {pads = [1, 1, 1, 1], strides = [2, 2]}\n"
                "  return %b\n}\n")
    return path


def main():
    rng = np.random.RandomState(20261205)
    m, feeds = model(rng)
    want = nccutil.run_ort(m, feeds)
    fns = []
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "model.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        def test_marks():
            for tile in (2, 4):
                got = marks(opt(path, "--layout-block=8", "--winograd=%d" % tile))
                nccutil.check(got == [str(tile)] * len(CONVS),
                              "--winograd=%d marked %s" % (tile, got))
            got = marks(opt(path, "--layout-block=8", "--disable-pass=winograd"))
            nccutil.check(got == [], "--disable-pass=winograd marked %s" % got)
            got = marks(opt(resnet_ir(wd), "--layout-block=8"))
            nccutil.check(got == ["4"], "auto on a ResNet stage-1 3x3 marked %s, expected ['4']"
                          % got)
        fns.append(test_marks)

        def on(tile, width):
            def fn():
                run_on(wd, path, feeds, want, tile, width)
            fn.__name__ = "test_m%d_w%d" % (tile, width)
            return fn
        if nccutil.target_usable(NCC, "cpu"):
            fns += [on(t, w) for t in (2, 4) for w in (16, 8, 4, 1)]
        else:
            print("note: target cpu does not run here (no LLVM): the pass's marks only")
        return nccutil.run_cases(fns)


if __name__ == "__main__":
    sys.exit(main())
