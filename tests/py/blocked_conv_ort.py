#!/usr/bin/env python3
"""tests/py/blocked_conv_ort.py — the blocked Conv kernel's input-channel
chunks and task orders, and the blocked pools' padding (codegen/
lower_blocked.c) against ONNX Runtime.

A blocked Conv whose weights for one task pass 128 KB walks its input
channels in chunks, keeping partial sums of several pixel runs in a stack
scratch, and applies bias and the fused epilogue after the last chunk.
Nothing else in the suite has weights that large at every vector width
(the threshold depends on the width's register tile), so these Convs have
560 input channels and 3x3 windows (C x taps x tile > 128 KB at widths 16,
8, 4 and 1), at odd sizes with batch 2:
  same    3x3 pads 1, bias, Relu: interior and border pixels
  s2end   3x3 stride 2 padded at the end only (TensorFlow "SAME")
  dil     3x3 dilation 2, asymmetric pads, no bias
  resid   3x3 + bias + Add(second input) + Relu: an epilogue with an
          external operand read after the last chunk
Two more Convs take the other task order (conv_order: output-channel
groups innermost, where all weights fit in L2 and the input does not) on
a second input z[2,64,40,40] (400 KB a image):
  order1x1  1x1 64->64, bias, Relu
  order3x3  3x3 64->48 pads 1, bias, + Add(its own 1x1 projection of z)
and one with groups innermost whose weights (640 KB) and input (640 KB an
image, u[2,1024,12,13]) both pass L2, so its tasks are 48-pixel groups of
runs on the chunked path (5 kernels with the scratch in all):
  streamed  1x1 1024->160, bias, Relu
A 1x7 Conv (pads 3 left and right) and a 7x1 Conv after it over a 5x6
image v[2,128,5,6] have no interior pixel: the 1x7 one walks its frame
column by column (region.by_column).
Blocked pools read the order3x3 Conv's blocked output (negative values, so a
padding tap must count as -inf or be left out, never as 0): MaxPool 3x3/2
pads [1,0,0,1] with ceil_mode, AveragePool 3x3/2 pads 1 with and without
count_include_pad; `ncc opt` must show them on blocked values.
Width 1 (the scalar code) runs with --layout-block=8. Each width must show the chunk scratch ("partial") in its kernel IR
(NCC_DEBUG_KIR), so the chunked path is what ran. 560 channels in blocks
of 8 make 70 blocks, which the chunks do not divide (a short last chunk).
Exit 77 when numpy/onnx/onnxruntime are missing.
Usage: NCC=build/ncc python3 tests/py/blocked_conv_ort.py [-v]
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

NCC = nccutil.find_ncc()
RTOL, ATOL = 1e-4, 1e-4  # diff_ort.py's TOL for Conv (sums in another order)
F32 = np.float32
VERBOSE = "-v" in sys.argv[1:]
C, OC, H, W, N = 560, 48, 9, 11, 2


def model(rng):
    inits = {"w_same": nccutil.kaiming(rng, (OC, C, 3, 3)), "w_s2end": nccutil.kaiming(rng, (OC, C, 3, 3)),
             "w_dil": nccutil.kaiming(rng, (OC, C, 3, 3)), "w_resid": nccutil.kaiming(rng, (OC, C, 3, 3))}
    for n in ("same", "s2end", "resid"):
        inits["b_" + n] = (rng.standard_normal(OC) * 0.1).astype(F32)
    nodes = [
        helper.make_node("Conv", ["x", "w_same", "b_same"], ["c_same"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c_same"], ["y_same"]),
        helper.make_node("Conv", ["x", "w_s2end", "b_s2end"], ["y_s2end"], strides=[2, 2],
                         pads=[0, 0, 1, 1]),
        helper.make_node("Conv", ["x", "w_dil"], ["y_dil"], dilations=[2, 2], pads=[2, 1, 1, 2]),
        helper.make_node("Conv", ["x", "w_resid", "b_resid"], ["c_resid"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c_resid", "r"], ["a_resid"]),
        helper.make_node("Relu", ["a_resid"], ["y_resid"]),
    ]
    inits["w_o1"] = nccutil.kaiming(rng, (64, 64, 1, 1))
    inits["b_o1"] = (rng.standard_normal(64) * 0.1).astype(F32)
    inits["w_o3"] = nccutil.kaiming(rng, (48, 64, 3, 3))
    inits["b_o3"] = (rng.standard_normal(48) * 0.1).astype(F32)
    inits["w_op"] = nccutil.kaiming(rng, (48, 64, 1, 1))
    nodes += [
        helper.make_node("Conv", ["z", "w_o1", "b_o1"], ["c_o1"]),
        helper.make_node("Relu", ["c_o1"], ["y_order1x1"]),
        helper.make_node("Conv", ["z", "w_op"], ["p_o3"]),
        helper.make_node("Conv", ["z", "w_o3", "b_o3"], ["c_o3"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c_o3", "p_o3"], ["y_order3x3"]),
    ]
    inits["w_st"] = nccutil.kaiming(rng, (160, 1024, 1, 1))
    inits["b_st"] = (rng.standard_normal(160) * 0.1).astype(F32)
    nodes += [helper.make_node("Conv", ["u", "w_st", "b_st"], ["c_st"]),
              helper.make_node("Relu", ["c_st"], ["y_streamed"])]
    # 1x7 and 7x1 over 5x6 (Inception's Mixed_6): no interior, so every
    # pixel is frame; the 1-row window walks it column by column
    inits["w_row"] = nccutil.kaiming(rng, (128, 128, 1, 7))
    inits["b_row"] = (rng.standard_normal(128) * 0.1).astype(F32)
    inits["w_col"] = nccutil.kaiming(rng, (128, 128, 7, 1))
    nodes += [helper.make_node("Conv", ["v", "w_row", "b_row"], ["c_row"], pads=[0, 3, 0, 3]),
              helper.make_node("Relu", ["c_row"], ["y_row"]),
              helper.make_node("Conv", ["y_row", "w_col"], ["y_col"], pads=[3, 0, 3, 0])]
    nodes += [
        helper.make_node("MaxPool", ["c_o3"], ["y_maxpool"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 0, 0, 1], ceil_mode=1),
        helper.make_node("AveragePool", ["c_o3"], ["y_avgpool"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["c_o3"], ["y_avgpool_pad"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
    ]
    outputs = ["y_same", "y_s2end", "y_dil", "y_resid", "y_order1x1", "y_order3x3",
               "y_streamed", "y_maxpool", "y_avgpool", "y_avgpool_pad", "y_row", "y_col"]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W]),
              helper.make_tensor_value_info("r", TensorProto.FLOAT, [N, OC, H, W]),
              helper.make_tensor_value_info("z", TensorProto.FLOAT, [N, 64, 40, 40]),
              helper.make_tensor_value_info("u", TensorProto.FLOAT, [N, 1024, 12, 13]),
              helper.make_tensor_value_info("v", TensorProto.FLOAT, [N, 128, 5, 6])]
    g = helper.make_graph(nodes, "blocked_conv", inputs,
                          [helper.make_empty_tensor_value_info(o) for o in outputs],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", 18)]
    m = helper.make_model(g, opset_imports=opsets, producer_name="ncc-blocked-conv")
    m.ir_version = helper.find_min_ir_version_for(opsets)
    m = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    onnx.checker.check_model(m)
    feeds = {"x": rng.standard_normal((N, C, H, W)).astype(F32),
             "r": rng.standard_normal((N, OC, H, W)).astype(F32),
             "z": rng.standard_normal((N, 64, 40, 40)).astype(F32),
             "u": rng.standard_normal((N, 1024, 12, 13)).astype(F32),
             "v": rng.standard_normal((N, 128, 5, 6)).astype(F32)}
    return m, feeds


def run_on(wd, path, feeds, expected, target, width=None):
    env = {"NCC_DEBUG_KIR": "1", "NCC_VECTOR_WIDTH": str(width) if width else None}
    with nccutil.environ(env):
        sub = nccutil.subdir(wd, "%s-w%s" % (target, width))
        # width 1 (scalar code) blocks only when asked to
        # the direct kernel's chunks are under test: 3x3 stride-1 Convs
        # stay off Winograd (python.winograd_ort covers that kernel)
        extra = ["--no-cache", "--disable-pass=winograd"]
        extra += ["--layout-block=8"] if width == 1 else []
        res = nccutil.run_ncc(NCC, path, feeds, list(expected), sub, extra=extra, target=target)
    what = "%s%s" % (target, " width %d" % width if width else "")
    nccutil.check(not res.rc and not res.missing, "%s: %s" % (what, res.describe()))
    if target == "cpu":
        nccutil.check("on reference kernels" not in res.stderr,
                      "%s: nodes fell back to reference kernels:\n%s"
                      % (what, [l for l in res.stderr.splitlines() if "reference" in l]))
        chunked = res.stderr.count("partial: f32 local")
        # 16 lanes: the 1x7 and 7x1 Convs' 4 x 6 tile holds 229 KB of
        # weights a task, so they take chunks too
        want = 7 if width == 16 else 5
        nccutil.check(chunked == want, "%s: %d kernel(s) with input-channel chunks, expected %d"
                      % (what, chunked, want))
    nccutil.check_close(what, expected, res.outputs, RTOL, ATOL)
    if VERBOSE:
        print("  ok %s" % what)


def check_pools_blocked(path):
    """`ncc opt` puts the three pools on NCHW8c values at layout block 8."""
    p = subprocess.run([NCC, "opt", path, "--layout-block=8"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=nccutil.NCC_TIMEOUT)
    out = p.stdout.decode("utf-8", "replace")
    nccutil.check(p.returncode == 0, "ncc opt: exit %d" % p.returncode)
    hits = re.findall(r"#nchw8c = (?:Max|Average)Pool\(", out)
    nccutil.check(len(hits) == 3, "%d pool(s) on blocked values, expected 3:\n%s"
                  % (len(hits), out))


def main():
    rng = np.random.RandomState(20261204)
    m, feeds = model(rng)
    want = nccutil.run_ort(m, feeds)
    fns = []
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "model.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())

        def on(target, width=None):
            def fn():
                run_on(wd, path, feeds, want, target, width)
            fn.__name__ = "test_%s%s" % (target, "_w%d" % width if width else "")
            return fn

        fns.append(on("ref"))
        if nccutil.target_usable(NCC, "cpu"):
            def test_pools_blocked():
                check_pools_blocked(path)
            fns.append(test_pools_blocked)
        if nccutil.target_usable(NCC, "cpu"):
            fns += [on("cpu", w) for w in (16, 8, 4, 1)]
        else:
            print("note: target cpu does not run here (no LLVM): ref only")
        return nccutil.run_cases(fns)


if __name__ == "__main__":
    sys.exit(main())
