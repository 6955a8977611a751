#!/usr/bin/env python3
"""tests/py/test_se_blocked.py — squeeze-excite blocks and network heads on
the cpu target, against ONNX Runtime.

MobileNetV3 / EfficientNet scale every channel of a feature map by a
per-(image, channel) vector: Mul([N,C,H,W], [N,C,1,1]). With the layout
pass on, both sides are blocked (#nchw<k>c) and the multiply is a blocked
elementwise kernel with a broadcast operand (codegen/lower_blocked.c);
Flatten / Reshape / Squeeze / Unsqueeze and Concat of plain data are
compiled copies (codegen/lower_eltwise.c). Checked here:
  - values against ONNX Runtime at odd sizes (channels not a multiple of a
    small block count, odd H and W), for layout blocks 16, 8 and 4 (the
    blocked path) and 1 (plain), at batch 1 and 3 of one model with a
    symbolic batch (one compile per run; the kernels read N at run time);
  - the blocked path is what ran: `ncc opt` shows the scale Mul on blocked
    values;
  - `ncc check --target=cpu` reports no host nodes for these models, so a
    regression back to the reference kernels fails.
Usage: NCC=build/ncc python3 tests/py/test_se_blocked.py
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    import onnxruntime  # noqa: F401
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)

NCC = nccutil.find_ncc()
TOL = (1e-4, 1e-5)
F32 = np.float32


def w(rng, *shape, scale=None):
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    s = scale if scale is not None else 1.0 / np.sqrt(max(fan, 1))
    return (rng.standard_normal(shape) * s).astype(F32)


def se_model(C, H, W, gate="HardSigmoid", scale_first=True, seed=0, extra_ch=False):
    """x[N,3,H,W] -> Conv1x1+HardSwish -> depthwise 3x3 + Relu -> SE
    (GlobalAveragePool, FC, Relu, FC, gate, Mul) -> Conv1x1 -> [per-channel
    Mul and Add] -> GlobalAveragePool -> Flatten -> Gemm -> Reshape ->
    Unsqueeze -> Squeeze: y[N,10]."""
    rng = np.random.RandomState(seed)
    R = max(C // 4, 1)
    inits = {
        "w0": w(rng, C, 3, 1, 1), "b0": w(rng, C, scale=0.1),
        "wd": w(rng, C, 1, 3, 3), "bd": w(rng, C, scale=0.1),
        "w1": w(rng, R, C, 1, 1), "b1": w(rng, R, scale=0.1),
        "w2": w(rng, C, R, 1, 1), "b2": w(rng, C, scale=0.1),
        "w3": w(rng, C, C, 1, 1), "b3": w(rng, C, scale=0.1),
        "g": (1 + 0.5 * rng.standard_normal((1, C, 1, 1))).astype(F32),
        "h": w(rng, C, 1, 1, scale=0.5),
        "wf": w(rng, 10, C), "bf": w(rng, 10, scale=0.1),
        "shp": np.array([0, 2, 5], np.int64), "ax1": np.array([1], np.int64),
        "shp2": np.array([-1, 10], np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], kernel_shape=[1, 1]),
        helper.make_node("HardSwish", ["c0"], ["a0"]),
        helper.make_node("Conv", ["a0", "wd", "bd"], ["cd"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], group=C),
        helper.make_node("Relu", ["cd"], ["ad"]),
        helper.make_node("GlobalAveragePool", ["ad"], ["p"]),
        helper.make_node("Conv", ["p", "w1", "b1"], ["f1"], kernel_shape=[1, 1]),
        helper.make_node("Relu", ["f1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["f2"], kernel_shape=[1, 1]),
        helper.make_node(gate, ["f2"], ["s"]),
        helper.make_node("Mul", ["s", "ad"] if scale_first else ["ad", "s"], ["m"],
                         name="se_scale"),
        helper.make_node("Conv", ["m", "w3", "b3"], ["c3"], kernel_shape=[1, 1]),
    ]
    last = "c3"
    if extra_ch:  # per-channel operands of blocked elementwise nodes
        nodes += [helper.make_node("Mul", ["c3", "g"], ["cg"], name="ch_mul"),
                  helper.make_node("Add", ["h", "cg"], ["ch"], name="ch_add")]
        last = "ch"
    nodes += [
        helper.make_node("GlobalAveragePool", [last], ["q"]),
        helper.make_node("Flatten", ["q"], ["fl"], axis=1),
        helper.make_node("Gemm", ["fl", "wf", "bf"], ["gm"], transB=1),
        helper.make_node("Reshape", ["gm", "shp"], ["rs"]),
        helper.make_node("Unsqueeze", ["rs", "ax1"], ["us"]),
        helper.make_node("Squeeze", ["us", "ax1"], ["sq"]),
        helper.make_node("Reshape", ["sq", "shp2"], ["y"]),
    ]
    g = helper.make_graph(
        nodes, "se",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, H, W])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


CASES = [
    # (name, C, H, W, gate, scale first, per-channel ops)
    # sizes large enough that the layout pass's cost model blocks them
    # (about 20-40 FLOPs per byte of its Reorders and their launches)
    ("hsig_c48_23x25", 48, 23, 25, "HardSigmoid", True, False),
    ("sigmoid_c32_25x27", 32, 25, 27, "Sigmoid", False, True),
    ("hsig_c16_39x41", 16, 39, 41, "HardSigmoid", False, True),
    ("sigmoid_c64_3x23", 64, 3, 23, "Sigmoid", True, False),
]
BLOCKS = [16, 8, 4, 1]


def save(tmp, name, model):
    path = os.path.join(tmp, name + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def ncc(*args):
    p = subprocess.run([NCC] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_values_against_ort():
    with nccutil.Workdir() as tmp:
        for name, C, H, W, gate, sf, ch in CASES:
            path = save(tmp, name, se_model(C, H, W, gate, sf, extra_ch=ch))
            rng = np.random.RandomState(len(name))
            for kb in BLOCKS:
                for n in (1, 3):
                    x = rng.standard_normal((n, 3, H, W)).astype(F32)
                    want = nccutil.run_ort(path, {"x": x})["y"]
                    d = nccutil.subdir(tmp, "%s_b%d_n%d" % (name, kb, n))
                    r = nccutil.run_ncc(NCC, path, {"x": x}, ["y"], d, target="cpu",
                                        extra=["--layout-block=%d" % kb, "--no-cache"])
                    nccutil.check(r.rc == 0 and not r.missing,
                                  "%s block %d batch %d: %s" % (name, kb, n, r.describe()))
                    why = nccutil.compare(want, r.outputs["y"], *TOL)
                    nccutil.check(why is None,
                                  "%s block %d batch %d: %s" % (name, kb, n, why))


def test_scale_mul_is_blocked():
    """The layout pass blocks the SE scale Mul (else the values test would
    check the plain kernel only)."""
    with nccutil.Workdir() as tmp:
        for name, C, H, W, gate, sf, ch in CASES:
            path = save(tmp, name, se_model(C, H, W, gate, sf, extra_ch=ch))
            for kb in (16, 8):
                rc, out, err = ncc("opt", path, "--layout-block=%d" % kb)
                nccutil.check(rc == 0, "opt %s: %s" % (name, err))
                line = [l for l in out.splitlines() if l.rstrip().endswith("@se_scale")]
                nccutil.check(line and re.search(r"#nchw%dc = Mul" % kb, line[0]),
                              "%s block %d: scale Mul not blocked: %s" % (name, kb, line))


def test_check_reports_no_host_nodes():
    with nccutil.Workdir() as tmp:
        for name, C, H, W, gate, sf, ch in CASES:
            path = save(tmp, name, se_model(C, H, W, gate, sf, extra_ch=ch))
            for kb in BLOCKS:
                rc, out, err = ncc("check", path, "--target=cpu", "--layout-block=%d" % kb,
                                   "--no-cache")
                text = out + err
                nccutil.check(rc == 0, "check %s: %s" % (name, text))
                nccutil.check(re.search(r"cpu: \d+ of \d+ nodes compiled into \d+ kernels, 0 on the host",
                                        text),
                              "%s block %d: host nodes:\n%s" % (name, kb, text))


def concat_model(C, H, W, seed=0):
    """Fire-module-like branches joined by Concat (SqueezeNet, GoogLeNet,
    DenseNet), plus Concat along the last axis;
    the pieces have odd sizes so no copy is a whole vector; a Concat along
    the symbolic batch axis too."""
    rng = np.random.RandomState(seed)
    inits = {
        "wa": w(rng, C, 3, 1, 1), "wb": w(rng, C + 3, 3, 3, 3), "wc": w(rng, 5, 3, 1, 1),
        "wf": w(rng, 7, 2 * C + 8), "bf": w(rng, 7, scale=0.1),
    }
    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["a"], kernel_shape=[1, 1]),
        helper.make_node("Conv", ["x", "wb"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a"], ["ra"]),
        helper.make_node("Conv", ["x", "wc"], ["c"], kernel_shape=[1, 1]),
        helper.make_node("Concat", ["ra", "b", "c"], ["cat"], axis=1, name="cat_c"),
        helper.make_node("GlobalAveragePool", ["cat"], ["p"]),
        helper.make_node("Flatten", ["p"], ["fl"], axis=1),
        helper.make_node("Gemm", ["fl", "wf", "bf"], ["y"], transB=1),
        helper.make_node("Concat", ["x", "x", "x"], ["cw"], axis=-1, name="cat_w"),
        helper.make_node("Relu", ["cw"], ["y2"]),
        helper.make_node("Neg", ["x"], ["cw2"]),
        helper.make_node("Concat", ["x", "cw2"], ["ck"], axis=0, name="cat_n"),
        helper.make_node("Tanh", ["ck"], ["y3"]),
    ]
    g = helper.make_graph(
        nodes, "cat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, H, W])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 7]),
         helper.make_tensor_value_info("y2", TensorProto.FLOAT, ["N", 3, H, 3 * W]),
         helper.make_tensor_value_info("y3", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def model_7(nodes, name, inits, H, W):
    """The opset-17 model of `nodes`: x[N,3,H,W] -> y[N,7]."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, H, W])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 7])],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def fire_model(H, W, seed=0):
    """A stem conv then two branches joined by a channel Concat whose
    pieces all divide by 16: with the layout pass on, the Concat stays
    blocked (passes/layout.c) and runs the same copy kernel on blocked
    bytes."""
    rng = np.random.RandomState(seed)
    inits = {
        "w0": w(rng, 32, 3, 3, 3), "wa": w(rng, 16, 32, 1, 1), "wb": w(rng, 32, 32, 3, 3),
        "wc": w(rng, 16, 64, 3, 3), "wf": w(rng, 7, 16), "bf": w(rng, 7, scale=0.1),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["s"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["s"], ["rs"]),
        helper.make_node("Conv", ["rs", "wa"], ["a"], kernel_shape=[1, 1]),
        helper.make_node("Conv", ["rs", "wb"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["b"], ["rb"]),
        helper.make_node("Concat", ["a", "rb", "a"], ["cat"], axis=1, name="cat_blocked"),
        helper.make_node("Conv", ["cat", "wc"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c"], ["p"]),
        helper.make_node("Flatten", ["p"], ["fl"], axis=1),
        helper.make_node("Gemm", ["fl", "wf", "bf"], ["y"], transB=1),
    ]
    return model_7(nodes, "fire", inits, H, W)


def check_batches(tmp, path, tag, H, W, kb):
    """y of `path` at batch 1 and 3 on cpu (layout block kb) against ORT."""
    for n in (1, 3):
        x = np.random.RandomState(n).standard_normal((n, 3, H, W)).astype(F32)
        want = nccutil.run_ort(path, {"x": x})["y"]
        d = nccutil.subdir(tmp, "%s_b%d_n%d" % (tag, kb, n))
        r = nccutil.run_ncc(NCC, path, {"x": x}, ["y"], d, target="cpu",
                            extra=["--layout-block=%d" % kb, "--no-cache"])
        nccutil.check(r.rc == 0 and not r.missing,
                      "%s block %d batch %d: %s" % (tag, kb, n, r.describe()))
        why = nccutil.compare(want, r.outputs["y"], *TOL)
        nccutil.check(why is None, "%s block %d batch %d: %s" % (tag, kb, n, why))


def test_blocked_concat_against_ort():
    with nccutil.Workdir() as tmp:
        path = save(tmp, "fire", fire_model(9, 11))
        for kb in (16, 8):
            rc, out, err = ncc("opt", path, "--layout-block=%d" % kb)
            line = [l for l in out.splitlines() if l.rstrip().endswith("@cat_blocked")]
            nccutil.check(line and re.search(r"#nchw%dc = Concat" % kb, line[0]),
                          "block %d: Concat not blocked: %s" % (kb, line))
            rc, out, err = ncc("check", path, "--target=cpu", "--layout-block=%d" % kb,
                               "--no-cache")
            nccutil.check(re.search(r", 0 on the host", out + err),
                          "block %d: host nodes:\n%s" % (kb, out + err))
            check_batches(tmp, path, "fire", 9, 11, kb)


def test_concat_against_ort():
    """Concat compiled on cpu (no host node), batch 1 and 3, blocks 16 and 1."""
    with nccutil.Workdir() as tmp:
        for C, H, W in ((13, 5, 7), (32, 9, 1)):
            name = "cat_%d_%dx%d" % (C, H, W)
            path = save(tmp, name, concat_model(C, H, W))
            for kb in (16, 1):
                rc, out, err = ncc("check", path, "--target=cpu", "--layout-block=%d" % kb,
                                   "--no-cache")
                nccutil.check(re.search(r", 0 on the host", out + err),
                              "%s block %d: host nodes:\n%s" % (name, kb, out + err))
                for n in (1, 3):
                    x = np.random.RandomState(n).standard_normal((n, 3, H, W)).astype(F32)
                    want = nccutil.run_ort(path, {"x": x})
                    d = nccutil.subdir(tmp, "%s_b%d_n%d" % (name, kb, n))
                    r = nccutil.run_ncc(NCC, path, {"x": x}, ["y", "y2", "y3"], d, target="cpu",
                                        extra=["--layout-block=%d" % kb, "--no-cache"])
                    nccutil.check(r.rc == 0 and not r.missing,
                                  "%s block %d batch %d: %s" % (name, kb, n, r.describe()))
                    for o in ("y", "y2", "y3"):
                        why = nccutil.compare(want[o], r.outputs[o], *TOL)
                        nccutil.check(why is None,
                                      "%s %s block %d batch %d: %s" % (name, o, kb, n, why))


def bn_inits(rng, prefix, C):
    """BatchNormalization parameters of realistic scale (running stats of a
    trained net: mean around 0, variance around 1, scale around 1)."""
    return {prefix + "_s": (1 + 0.3 * rng.standard_normal(C)).astype(F32),
            prefix + "_b": (0.2 * rng.standard_normal(C)).astype(F32),
            prefix + "_m": (0.3 * rng.standard_normal(C)).astype(F32),
            prefix + "_v": (0.5 + rng.rand(C)).astype(F32)}


def dense_model(H, W, branches=17, seed=0):
    """A DenseNet-style join: `branches` 16-channel features (one reused
    1x1 conv kernel) joined by one Concat of more inputs than the old
    16-buffer kernel limit, then pre-activation BN -> Relu -> Conv1x1 (the
    BN reads the Concat, so bn-fold turns it into a per-channel Mul and
    Add); a second BN reads a conv output that has another reader (no fold
    either). With the layout pass on, everything stays blocked."""
    rng = np.random.RandomState(seed)
    C = 16 * branches
    inits = {"w0": w(rng, 16, 3, 3, 3), "wo": w(rng, 16, C, 1, 1),
             "wf": w(rng, 7, 32), "bf": w(rng, 7, scale=0.1)}
    inits.update(bn_inits(rng, "bn1", C))
    inits.update(bn_inits(rng, "bn2", 16))
    nodes = [helper.make_node("Conv", ["x", "w0"], ["s"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["s"], ["rs"])]
    feats = []
    for i in range(branches):
        inits["wb%d" % i] = w(rng, 16, 16, 1, 1)
        nodes += [helper.make_node("Conv", ["rs", "wb%d" % i], ["c%d" % i], kernel_shape=[1, 1]),
                  helper.make_node("Relu", ["c%d" % i], ["f%d" % i])]
        feats.append("f%d" % i)
    nodes += [
        helper.make_node("Concat", feats, ["cat"], axis=1, name="cat_many"),
        helper.make_node("BatchNormalization", ["cat", "bn1_s", "bn1_b", "bn1_m", "bn1_v"],
                         ["n1"], name="bn_pre", epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("Conv", ["r1", "wo"], ["o"], kernel_shape=[1, 1]),
        helper.make_node("BatchNormalization", ["o", "bn2_s", "bn2_b", "bn2_m", "bn2_v"],
                         ["n2"], name="bn_shared", epsilon=1e-3),
        helper.make_node("Concat", ["n2", "o"], ["j"], axis=1),
        helper.make_node("GlobalAveragePool", ["j"], ["p"]),
        helper.make_node("Flatten", ["p"], ["fl"], axis=1),
        helper.make_node("Gemm", ["fl", "wf", "bf"], ["y"], transB=1),
    ]
    return model_7(nodes, "dense", inits, H, W)


def test_dense_join_against_ort():
    """A Concat of 17 inputs and unfoldable BNs compile on cpu, blocked (the
    BN's per-channel Mul reads its plain constants), at blocks 16, 8, 4 and
    1 and batch 1 and 3."""
    with nccutil.Workdir() as tmp:
        path = save(tmp, "dense", dense_model(9, 11))
        for kb in BLOCKS:
            rc, out, err = ncc("check", path, "--target=cpu", "--layout-block=%d" % kb,
                               "--no-cache")
            nccutil.check(re.search(r", 0 on the host", out + err),
                          "block %d: host nodes:\n%s" % (kb, out + err))
            if kb > 1:
                rc, out, err = ncc("opt", path, "--layout-block=%d" % kb)
                for node, op in (("cat_many", "Concat"), ("bn_pre", "Mul"), ("bn_shared", "Mul")):
                    line = [l for l in out.splitlines() if l.rstrip().endswith("@" + node)]
                    nccutil.check(line and re.search(r"#nchw%dc = %s" % (kb, op), line[0]),
                                  "block %d: %s not blocked: %s" % (kb, node, line))
            check_batches(tmp, path, "dense", 9, 11, kb)


def main():
    if not nccutil.target_usable(NCC, "cpu"):
        print("skipped: no cpu target")
        return 77
    return nccutil.run_cases(nccutil.discovered_cases(globals()))


if __name__ == "__main__":
    sys.exit(main())
