#!/usr/bin/env python3
"""tests/py/conv_pads_ort.py — Conv padded at the end only (top = left = 0,
bottom or right > 0: TensorFlow's "SAME" with an even kernel at stride 1 or
an odd one at stride 2 on an even size), and other asymmetric pads, on
every target and vector width that runs here, against ONNX Runtime.

A kernel that guards its loads only when a begin pad is nonzero reads past
the last rows and columns of such a Conv; nothing else in the suite pads
only at the end. Two models:
  plain    independent Convs (stride 1 and 2, bottom only, right only,
           depthwise, grouped + dilated, 5x5 asymmetric): each runs the
           plain conv lowering (codegen/lower_conv.c);
  blocked  a chain (3x3, Relu, depthwise 3x3/2, 1x1, 3x3/2, the last two
           padded at the end only) at odd sizes, which the layout pass
           turns into NCHW[k]c kernels (codegen/lower_blocked.c) at layout
           blocks 16, 8 and 4; `ncc opt` must show the end-padded Convs on
           blocked values, so the blocked path is what ran.
Targets: ref; cpu at NCC_VECTOR_WIDTH 16, 8, 4 and 1 (the AVX-512, AVX2,
SSE/NEON and scalar code); opencl and cuda where `ncc targets` says they
run (CUDA C is compiled without a device by ops.cuda.ptx, which has the
same cases in tests/ops/op_cases.c). Exit 77 when numpy/onnx/onnxruntime
are missing.
Usage: NCC=build/ncc python3 tests/py/conv_pads_ort.py [-v]
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
RTOL, ATOL = 1e-4, 1e-4  # diff_ort.py's TOL for Conv (sums in another order)
F32 = np.float32
VERBOSE = "-v" in sys.argv[1:]

# (name, x shape, w shape, attributes): pads are [top, left, bottom, right]
PLAIN = [
    ("end_2x2_s1", (1, 3, 16, 17), (8, 3, 2, 2), dict(pads=[0, 0, 1, 1])),
    ("end_3x3_s2", (1, 3, 20, 22), (8, 3, 3, 3), dict(strides=[2, 2], pads=[0, 0, 1, 1])),
    ("bottom_only", (2, 4, 9, 11), (8, 4, 3, 3), dict(pads=[0, 0, 2, 0])),
    ("right_only_s2", (1, 4, 9, 12), (4, 4, 3, 3), dict(strides=[2, 2], pads=[0, 0, 0, 1])),
    ("depthwise_end_s2", (1, 16, 14, 14), (16, 1, 3, 3),
     dict(group=16, strides=[2, 2], pads=[0, 0, 1, 1])),
    ("grouped_dilated_end", (1, 4, 12, 12), (8, 2, 3, 3),
     dict(group=2, dilations=[2, 2], pads=[0, 0, 3, 1])),
    ("5x5_s2_asym", (1, 2, 7, 40), (4, 2, 5, 5), dict(strides=[2, 2], pads=[2, 1, 2, 2])),
    ("same_upper_s2", (1, 3, 10, 12), (4, 3, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
]


def finish(nodes, inputs, outputs, inits):
    return nccutil.checked_model(nodes, "conv_pads", inputs, outputs, inits)


def plain_model(rng):
    nodes, inputs, outputs, inits, feeds = [], [], [], {}, {}
    for name, xs, ws, attrs in PLAIN:
        inits["w_" + name] = nccutil.kaiming(rng, ws)
        inits["b_" + name] = (rng.standard_normal(ws[0]) * 0.1).astype(F32)
        feeds["x_" + name] = rng.standard_normal(xs).astype(F32)
        inputs.append(helper.make_tensor_value_info("x_" + name, TensorProto.FLOAT, list(xs)))
        nodes.append(helper.make_node("Conv", ["x_" + name, "w_" + name, "b_" + name],
                                      ["y_" + name], **attrs))
        outputs.append("y_" + name)
    return finish(nodes, inputs, outputs, inits), feeds


def blocked_model(rng):
    """x[2,16,27,29] -> 3x3 (32) -> Relu -> depthwise 3x3/2 end pads ->
    1x1 -> 3x3/2 end pads: y[2,32,7,8] (odd sizes: partial pixel runs)."""
    shapes = {"w1": (32, 16, 3, 3), "w2": (32, 1, 3, 3), "w3": (32, 32, 1, 1),
              "w4": (32, 32, 3, 3)}
    inits = {n: nccutil.kaiming(rng, s) for n, s in shapes.items()}
    inits["b4"] = (rng.standard_normal(32) * 0.1).astype(F32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a"], ["ar"]),
        helper.make_node("Conv", ["ar", "w2"], ["b"], group=32, strides=[2, 2],
                         pads=[0, 0, 1, 1]),
        helper.make_node("Conv", ["b", "w3"], ["c"]),
        helper.make_node("Conv", ["c", "w4", "b4"], ["y"], strides=[2, 2], pads=[0, 0, 1, 1]),
    ]
    xs = (2, 16, 27, 29)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs))]
    return finish(nodes, inputs, ["y"], inits), {"x": rng.standard_normal(xs).astype(F32)}


def ncc_cmd(args, env=None):
    p = subprocess.run([NCC] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=nccutil.NCC_TIMEOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check_blocked(path, kb):
    """`ncc opt` shows both end-padded Convs on NCHW[kb]c values."""
    rc, out, err = ncc_cmd(["opt", path, "--layout-block=%d" % kb])
    nccutil.check(rc == 0, "ncc opt: exit %d: %s" % (rc, err.strip()))
    hits = re.findall(r"#nchw%dc = Conv\(.*pads = \[0, 0, 1, 1\]" % kb, out)
    nccutil.check(len(hits) == 2, "layout block %d: %d end-padded Conv(s) on blocked values, "
                  "expected 2:\n%s" % (kb, len(hits), out))


def check_plain(path, kb):
    """`ncc opt` leaves the independent Convs plain (lower_conv.c runs them)."""
    rc, out, err = ncc_cmd(["opt", path, "--layout-block=%d" % kb])
    nccutil.check(rc == 0, "ncc opt: exit %d: %s" % (rc, err.strip()))
    nccutil.check("#nchw" not in out, "layout block %d: plain model blocked:\n%s" % (kb, out))


def run_on(workdir, tag, model, feeds, expected, target, width=None, extra=()):
    """Run `model` with ncc and compare every output with ONNX Runtime's."""
    path = os.path.join(workdir, tag + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    with nccutil.environ({"NCC_VECTOR_WIDTH": str(width) if width else None}):
        sub = nccutil.subdir(workdir, "%s-%s-w%s-%s" % (tag, target, width, "_".join(extra)))
        res = nccutil.run_ncc(NCC, path, feeds, list(expected), sub,
                              extra=list(extra) + ["--no-cache"], target=target)
    what = "%s on %s%s %s" % (tag, target, " width %d" % width if width else "", " ".join(extra))
    nccutil.check(not res.rc and not res.missing, "%s: %s" % (what, res.describe()))
    nccutil.check_close(what, expected, res.outputs, RTOL, ATOL)
    if VERBOSE:
        print("  ok %s" % what)


def main():
    rng = np.random.RandomState(20261203)
    plain, plain_feeds = plain_model(rng)
    chain, chain_feeds = blocked_model(rng)
    want_plain = nccutil.run_ort(plain, plain_feeds)
    want_chain = nccutil.run_ort(chain, chain_feeds)
    fns = []
    with nccutil.Workdir() as wd:
        def on(target, width=None):
            def fn():
                run_on(wd, "plain", plain, plain_feeds, want_plain, target, width)
                if target != "cpu":
                    run_on(wd, "chain", chain, chain_feeds, want_chain, target, width)
                    return
                # the chain plain, then on blocked values (NCHW[k]c)
                run_on(wd, "chain", chain, chain_feeds, want_chain, target, width,
                       ["--layout-block=1"])
                kb = width if width and width > 1 else 8
                check_plain(os.path.join(wd, "plain.onnx"), kb)
                check_blocked(os.path.join(wd, "chain.onnx"), kb)
                run_on(wd, "chain", chain, chain_feeds, want_chain, target, width,
                       ["--layout-block=%d" % kb])
            fn.__name__ = "test_%s%s" % (target, "_w%d" % width if width else "")
            return fn

        fns.append(on("ref"))
        if nccutil.target_usable(NCC, "cpu"):
            fns += [on("cpu", w) for w in (16, 8, 4, 1)]
        else:
            print("note: target cpu does not run here (no LLVM): ref only")
        for t in ("opencl", "cuda"):
            if nccutil.target_usable(NCC, t):
                fns.append(on(t))
            else:
                print("note: target %s does not run here" % t)
        return nccutil.run_cases(fns)


if __name__ == "__main__":
    sys.exit(main())
