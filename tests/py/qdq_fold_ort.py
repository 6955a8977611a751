#!/usr/bin/env python3
"""tests/py/qdq_fold_ort.py — the qdq-fold pass against ONNX Runtime.

Small float models (a CNN: strided padded Conv, grouped Conv, padded
MaxPool, 1x1 Conv + Clip, Flatten, Gemm with transB and bias; an MLP:
MatMul with batched A, Reshape, Gemm without transB) are quantized by
onnxruntime.quantization.quantize_static in QDQ format (u8 activations, s8
per-channel weights, random calibration data, fixed seed; the CNN also
with s8 activations); two hand-written
QDQ graphs add what the quantizer never leaves (a Relu and a Clip before a
Q whose zero point makes them bind, a Relu between a DQ and a Q). ncc runs
each at -O2 (qdq-fold on) and must

  * fold what the model has (the number of QLinearConv / QLinearMatMul
    nodes after the pass, and no float Conv/MatMul/Gemm left), and
  * agree with ONNX Runtime's own QDQ run (all its graph optimizations on:
    its QDQ transformer fuses the same groups) within one quantum of each
    output, on several random inputs of batch 2 (the models have a
    symbolic batch).

Usage: qdq_fold_ort.py [--target ref|cpu] (NCC names the ncc binary).
Exit 0 pass, 1 fail, 77 skipped (numpy/onnx/onnxruntime missing).
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402  (exits 77 without numpy/onnx/onnxruntime)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

try:
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,  # noqa: E402
                                          QuantType, quantize_static)
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)

OPSET = 17


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def cnn(rng):
    """x[N,3,12,12] -> Conv s2 p1 + Relu -> MaxPool 3 s2 p1 -> grouped Conv
    + Relu -> 1x1 Conv + Clip(0, 6) -> Flatten -> Gemm(transB, bias)."""
    w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    inits = [init("w1", w(8, 3, 3, 3)), init("b1", w(8)), init("w2", w(8, 2, 3, 3)),
             init("b2", w(8)), init("w3", w(6, 8, 1, 1)), init("b3", w(6)),
             init("lo", np.float32(0)), init("hi", np.float32(6)),
             init("wf", w(5, 6 * 3 * 3)), init("bf", w(5))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], group=4, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"]),
        helper.make_node("Clip", ["c3", "lo", "hi"], ["r3"]),
        helper.make_node("Flatten", ["r3"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    g = helper.make_graph(nodes, "cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
    return g, {"x": (3, 12, 12)}


def mlp(rng):
    """a[N,4,16] -> MatMul [16,12] + Add + Relu -> MatMul [12,6] -> Reshape
    [N,24] -> Gemm(B [24,3], C [3]) (no transB)."""
    w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    inits = [init("m1", w(16, 12)), init("a1", w(12)), init("m2", w(12, 6)),
             init("shape", np.array([0, 24], np.int64)), init("gb", w(24, 3)),
             init("gc", w(3))]
    nodes = [
        helper.make_node("MatMul", ["a", "m1"], ["t1"]),
        helper.make_node("Add", ["t1", "a1"], ["t2"]),
        helper.make_node("Relu", ["t2"], ["t3"]),
        helper.make_node("MatMul", ["t3", "m2"], ["t4"]),
        helper.make_node("Reshape", ["t4", "shape"], ["t5"]),
        helper.make_node("Gemm", ["t5", "gb", "gc"], ["y"]),
    ]
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], inits)
    return g, {"a": (4, 16)}


class Reader(CalibrationDataReader):
    def __init__(self, shapes, seed):
        rng = np.random.default_rng(seed)
        self.it = iter([{k: rng.standard_normal((2,) + s).astype(np.float32)
                         for k, s in shapes.items()} for _ in range(8)])

    def get_next(self):
        return next(self.it, None)


def quantized(make, rng, work, name, act=QuantType.QUInt8):
    g, shapes = make(rng)
    fp = os.path.join(work, name + ".f32.onnx")
    out = os.path.join(work, name + ".qdq.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)]), fp)
    quantize_static(fp, out, Reader(shapes, 1), quant_format=QuantFormat.QDQ,
                    activation_type=act, weight_type=QuantType.QInt8,
                    per_channel=True)
    return out, shapes


def qdq(x, s, z, name, zdt=TensorProto.UINT8, axis=None):
    """Q then DQ of x with new initializers s, z: (nodes, inits, dq name)."""
    kw = {} if axis is None else {"axis": axis}
    inits = [helper.make_tensor(name + "_s", TensorProto.FLOAT, np.shape(s), np.ravel(s)),
             helper.make_tensor(name + "_z", zdt, np.shape(z), np.ravel(z))]
    nodes = [helper.make_node("QuantizeLinear", [x, name + "_s", name + "_z"], [name + "_q"], **kw),
             helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"],
                              [name + "_d"], **kw)]
    return nodes, inits, name + "_d"


def handmade(rng, work):
    """x -> Q/DQ -> Conv(DQ w s8 per-channel) -> Relu -> Q(zp 100) -> DQ ->
    Relu -> Q(same) -> DQ = y1 (the second Relu is max(q, 100) on u8);
    a[N,3,8] -> Q/DQ -> MatMul(DQ b per-column) -> Clip(-1, 2) -> Q(zp 128)
    -> DQ = y2 (a clamp to [Q(-1), Q(2)]); e[N,2,3,8] @ f[N,2,8,4], both
    activations (attention's batched MatMul)
    -> Q -> DQ = y3."""
    nodes, inits = [], []

    def add(parts):
        nodes.extend(parts[0])
        inits.extend(parts[1])
        return parts[2]

    xd = add(qdq("x", 0.05, 128, "xq"))
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, 4) * 0.004).astype(np.float32)
    inits += [init("w", w), init("w_s", ws), init("w_z", np.zeros(4, np.int8))]
    nodes.append(helper.make_node("DequantizeLinear", ["w", "w_s", "w_z"], ["wd"], axis=0))
    nodes += [helper.make_node("Conv", [xd, "wd"], ["c"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c"], ["r"])]
    rd = add(qdq("r", 0.02, 100, "rq"))
    nodes.append(helper.make_node("Relu", [rd], ["r2"]))
    add(qdq("r2", 0.02, 100, "y1"))
    nodes.append(helper.make_node("Identity", ["y1_d"], ["y1"]))
    ad = add(qdq("a", 0.04, 120, "aq"))
    b = rng.integers(-127, 128, (8, 5)).astype(np.int8)
    bs = (rng.uniform(0.5, 1.5, 5) * 0.01).astype(np.float32)
    inits += [init("b", b), init("b_s", bs), init("b_z", np.zeros(5, np.int8)),
              init("clo", np.float32(-1)), init("chi", np.float32(2))]
    nodes += [helper.make_node("DequantizeLinear", ["b", "b_s", "b_z"], ["bd"], axis=1),
              helper.make_node("MatMul", [ad, "bd"], ["m"]),
              helper.make_node("Clip", ["m", "clo", "chi"], ["mc"])]
    add(qdq("mc", 0.015, 128, "y2"))
    nodes.append(helper.make_node("Identity", ["y2_d"], ["y2"]))
    ed = add(qdq("e", 0.05, 128, "eq"))
    fd = add(qdq("f", 0.04, 120, "fq"))
    nodes.append(helper.make_node("MatMul", [ed, fd], ["ef"]))
    add(qdq("ef", 0.2, 128, "y3"))
    nodes.append(helper.make_node("Identity", ["y3_d"], ["y3"]))
    # y4: DQ -> Transpose -> Reshape -> Q (same parameters): a chain of data
    # movement (a transformer's attention output) runs on the u8 values
    hd = add(qdq("h", 0.03, 125, "hq"))
    inits.append(init("h_shape", np.array([0, 3, 8], np.int64)))
    nodes += [helper.make_node("Transpose", [hd], ["ht"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ht", "h_shape"], ["hr"])]
    add(qdq("hr", 0.03, 125, "y4"))
    nodes.append(helper.make_node("Identity", ["y4_d"], ["y4"]))
    g = helper.make_graph(nodes, "handmade",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 6, 6]),
                           helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 3, 8]),
                           helper.make_tensor_value_info("e", TensorProto.FLOAT, ["N", 2, 3, 8]),
                           helper.make_tensor_value_info("f", TensorProto.FLOAT, ["N", 2, 8, 4]),
                           helper.make_tensor_value_info("h", TensorProto.FLOAT, ["N", 2, 3, 4])],
                          [helper.make_tensor_value_info("y1", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("y2", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("y3", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("y4", TensorProto.FLOAT, None)], inits)
    path = os.path.join(work, "handmade.qdq.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)]), path)
    return path, {"x": (3, 6, 6), "a": (3, 8), "e": (2, 3, 8), "f": (2, 8, 4), "h": (2, 3, 4)}


def output_scales(path):
    """Each graph output's quantum: the scale of the DequantizeLinear that
    (through Identity) produces it."""
    m = onnx.load(path)
    consts = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    prod = {o: n for n in m.graph.node for o in n.output}
    out = {}
    for o in m.graph.output:
        n = prod[o.name]
        while n.op_type == "Identity":
            n = prod[n.input[0]]
        assert n.op_type == "DequantizeLinear", (o.name, n.op_type)
        out[o.name] = float(consts[n.input[1]])
    return out


def folded_ops(ncc, path):
    """Op name -> count after `ncc opt -O2 --disable-pass=...` keeps the
    graph readable: only qdq-fold and dce run."""
    proc = subprocess.run([ncc, "opt", path, "--passes=qdq-fold,dce"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if proc.returncode:
        raise RuntimeError("ncc opt: " + proc.stderr.decode())
    counts = {}
    for op in re.findall(r"= (\w+)\(", proc.stdout.decode()):
        counts[op] = counts.get(op, 0) + 1
    return counts


# model -> (QLinearConv, QLinearMatMul) the pass must make
EXPECT = {"cnn": (4, 0), "mlp": (1, 2), "cnn_s8": (4, 0), "handmade": (1, 2)}
# model -> DequantizeLinear left: handmade's four outputs (each ends in a DQ)
EXPECT_DQ = {"handmade": 4}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    nccutil.add_target_arg(ap)
    ap.add_argument("--ncc")
    args = ap.parse_args()
    ncc = nccutil.find_ncc(args.ncc)
    nccutil.require_target(ncc, args.target)
    failures = 0
    with nccutil.Workdir() as work:
        rng = np.random.default_rng(17)
        models = {"cnn": quantized(cnn, rng, work, "cnn"),
                  "mlp": quantized(mlp, rng, work, "mlp"),
                  "cnn_s8": quantized(cnn, rng, work, "cnn_s8", QuantType.QInt8),
                  "handmade": handmade(rng, work)}
        for name, (path, shapes) in models.items():
            ops = folded_ops(ncc, path)
            want = EXPECT[name]
            got = (ops.get("QLinearConv", 0), ops.get("QLinearMatMul", 0))
            left = sum(ops.get(op, 0) for op in ("Conv", "MatMul", "Gemm"))
            if name in EXPECT_DQ and ops.get("DequantizeLinear", 0) != EXPECT_DQ[name]:
                print("FAIL %s: %d DequantizeLinear after folding, expected %d (data "
                      "movement between a DQ and a Q of the same parameters runs on the "
                      "integers)" % (name, ops.get("DequantizeLinear", 0), EXPECT_DQ[name]))
                failures += 1
            if got != want or left:
                print("FAIL %s: folded QLinearConv/QLinearMatMul %s, expected %s; "
                      "%d float contractions left" % (name, got, want, left))
                failures += 1
            scales = output_scales(path)
            sess = nccutil.ort_session(path, optimize=True)
            worst = 0.0
            for seed in range(3):
                r = np.random.default_rng(100 + seed)
                inputs = {k: (r.standard_normal((2,) + s) * 1.5).astype(np.float32)
                          for k, s in shapes.items()}
                names = list(scales)
                want_out = dict(zip(names, sess.run(names, inputs)))
                res = nccutil.run_ncc(ncc, path, inputs, names, nccutil.subdir(work, name),
                                      extra=["-O2"], target=args.target)
                if res.rc or res.missing:
                    print("FAIL %s seed %d: %s" % (name, seed, res.describe()))
                    failures += 1
                    break
                for o in names:
                    q = scales[o]
                    diff = np.abs(res.outputs[o].astype(np.float64) - want_out[o]) / q
                    worst = max(worst, float(diff.max()))
                    if diff.max() > 1 + 1e-3:
                        print("FAIL %s seed %d output %s: %d elements beyond one quantum "
                              "(worst %.2f quanta)" % (name, seed, o,
                                                       int((diff > 1 + 1e-3).sum()), diff.max()))
                        failures += 1
            print("%-9s folded QLinearConv %d, QLinearMatMul %d; worst %.2f quanta off ORT"
                  % (name, got[0], got[1], worst))
    print("FAILED (%d)" % failures if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
