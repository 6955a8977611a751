#!/usr/bin/env python3
"""tests/py/test_misc_errors.py -- bad input to the quantization, misc and signal ops (quantization
and ONNX Runtime's com.microsoft QLinear ops, Det ... MaxRoiPool, the losses, the signal ops) is refused with a one-line
`ncc: error:` and exit 2 (bad input) or 3 (unsupported dtype, named), never
a crash; hostile values (NaN, huge box corners) give an answer. The
sanitizer build runs it, so an out-of-bounds read or an undefined float to
int conversion fails it there.

The expectations come from ONNX's rules (the counts its spec allows, its
type names), not from ncc. Run with NCC=/path/to/ncc (ctest sets it), for
--target ref and cpu. Prints "N passed, M failed"; exit 1 on a failure.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402
import nccutil  # noqa: E402


def run(tmp, name, node, feeds, inits, n_out=1, opset=21, target="ref"):
    """(exit code, stderr) of `ncc run` on a one-node model."""
    vi = [h.make_tensor_value_info(k, h.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
          for k, v in feeds.items()]
    outs = [h.make_empty_tensor_value_info(o) for o in node.output[:n_out]]
    g = h.make_graph([node], "g", vi, outs,
                     initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    ops = [h.make_opsetid("", opset)]
    if node.domain:  # ONNX Runtime's contrib ops (com.microsoft)
        ops.append(h.make_opsetid(node.domain, 1))
    m = h.make_model(g, opset_imports=ops)
    m.ir_version = 8
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    cmd = [NCC, "run", path, "--target=" + target, "--output-dir", os.path.join(tmp, name)]
    for i, (k, v) in enumerate(feeds.items()):
        p = os.path.join(tmp, "%s_in%d.npy" % (name, i))
        np.save(p, v)
        cmd += ["--input", "%s=%s" % (k, p)]
    os.makedirs(os.path.join(tmp, name), exist_ok=True)
    r = subprocess.run(cmd, capture_output=True, timeout=120)
    return r.returncode, r.stderr.decode("utf-8", "replace")


def refused(tmp, name, code, pattern, *args, **kw):
    rc, err = run(tmp, name, *args, **kw)
    lines = err.strip().splitlines()
    check("%s: exit %d" % (name, code), rc == code, "rc %d: %s" % (rc, err.strip()))
    check("%s: one error line" % name,
          len(lines) == 1 and lines[0].startswith("ncc: error:") and re.search(pattern, lines[0]),
          err.strip())


def main():
    f32 = np.float32
    u8 = lambda *s: np.zeros(s, np.uint8)  # noqa: E731
    scalar = lambda v, dt=f32: np.array(v, dt)  # noqa: E731
    for target in [t for t in ("ref", "cpu") if nccutil.target_usable(NCC, t)]:
        with tempfile.TemporaryDirectory() as tmp:
            t = {"target": target}
            qmm = h.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
            # a_scale may hold 1 value or one per row of a (3): 2 is neither
            refused(tmp, "qlinearmatmul_scale_count", 2, r"input 1 has 2 values", qmm,
                    {"a": u8(3, 4)}, {"sa": np.ones(2, f32), "za": u8(2), "b": u8(4, 5),
                                      "sb": scalar(1.0), "zb": scalar(0, np.uint8),
                                      "sy": scalar(1.0), "zy": scalar(0, np.uint8)}, **t)
            refused(tmp, "qlinearmatmul_y_scale_empty", 2, r"input 6 has 0 values", qmm,
                    {"a": u8(3, 4)}, {"sa": scalar(1.0), "za": scalar(0, np.uint8), "b": u8(4, 5),
                                      "sb": scalar(1.0), "zb": scalar(0, np.uint8),
                                      "sy": np.ones(0, f32), "zy": scalar(0, np.uint8)}, **t)
            mmi = h.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])
            refused(tmp, "matmulinteger_zp_count", 2, r"input 3 has 4 values", mmi,
                    {"a": u8(3, 4), "b": u8(4, 5)}, {"za": scalar(0, np.uint8), "zb": u8(4)}, **t)
            ci = h.make_node("ConvInteger", ["x", "w", "zx"], ["y"])
            refused(tmp, "convinteger_x_zp_per_channel", 2, r"input 2 has 2 values", ci,
                    {"x": u8(1, 2, 4, 4), "w": u8(3, 2, 2, 2)}, {"zx": u8(2)}, **t)
            # output_dtype 17 is float8e4m3fn: an ONNX type ncc lacks, named
            q = h.make_node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=T.FLOAT8E4M3FN)
            refused(tmp, "quantize_to_float8", 3, r"float8e4m3fn", q,
                    {"x": np.ones(3, f32)}, {"s": scalar(1.0)}, **t)
            q = h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1, block_size=2)
            refused(tmp, "quantize_block_shape", 2, r"blocked input 1", q,
                    {"x": np.ones((2, 5), f32)}, {"s": np.ones((2, 2), f32),
                                                   "z": np.zeros((2, 2), np.int8)}, **t)
            un = h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
            refused(tmp, "maxunpool_index_outside", 2, r"index 16 is outside", un,
                    {"x": np.ones((1, 1, 2, 2), f32)},
                    {"i": np.array([0, 3, 9, 16], np.int64).reshape(1, 1, 2, 2)}, **t)
            nll = h.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"])
            refused(tmp, "nll_target_not_a_class", 2, r"target 4 is not a class", nll,
                    {"x": np.ones((2, 4), f32)}, {"t": np.array([1, 4], np.int64)}, **t)
            det = h.make_node("Det", ["x"], ["y"])
            refused(tmp, "det_not_square", 2, r"not square", det, {"x": np.ones((2, 3), f32)}, {}, **t)
            stft = h.make_node("STFT", ["x", "s", "", "l"], ["y"])
            refused(tmp, "stft_frame_longer_than_signal", 2, r"frame_length 9", stft,
                    {"x": np.ones((1, 8, 1), f32)}, {"s": scalar(1, np.int64), "l": scalar(9, np.int64)}, **t)
            # com.microsoft QLinear ops: per-tensor parameters, Concat's
            # triples, QGemm's inner dims; only from their domain
            ms = {"domain": "com.microsoft"}
            qcat = h.make_node("QLinearConcat", ["sy", "zy", "a", "sa", "za", "b"], ["y"], axis=0,
                               **ms)
            refused(tmp, "qlinearconcat_not_triples", 2, r"triples", qcat,
                    {"a": u8(2, 3), "b": u8(2, 3)}, {"sy": scalar(1.0), "zy": scalar(0, np.uint8),
                                                     "sa": scalar(1.0), "za": scalar(0, np.uint8)}, **t)
            qadd = h.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"],
                               **ms)
            qadd_inits = {"sa": np.ones(3, f32), "za": scalar(0, np.uint8), "sb": scalar(1.0),
                          "zb": scalar(0, np.uint8), "sy": scalar(1.0), "zy": scalar(0, np.uint8)}
            refused(tmp, "qlinearadd_per_channel", 2, r"input 1 has 3 values", qadd,
                    {"a": u8(2, 3), "b": u8(2, 3)}, qadd_inits, **t)
            plain = h.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])
            refused(tmp, "qlinearadd_default_domain", 3, r"unsupported op 'QLinearAdd'", plain,
                    {"a": u8(2, 3), "b": u8(2, 3)}, dict(qadd_inits, sa=scalar(1.0)), **t)
            other = h.make_node("FusedGemm", ["a", "b"], ["y"], **ms)
            refused(tmp, "unknown_contrib_op", 3, r"domain 'com.microsoft' is not supported",
                    other, {"a": np.ones((2, 2), f32), "b": np.ones((2, 2), f32)}, {}, **t)
            qg = h.make_node("QGemm", ["a", "sa", "za", "b", "sb", "zb"], ["y"], **ms)
            refused(tmp, "qgemm_inner_dims", 2, r"A has 4 columns, B 5 rows", qg,
                    {"a": u8(3, 4)}, {"sa": scalar(1.0), "za": scalar(0, np.uint8), "b": u8(5, 2),
                                      "sb": scalar(1.0), "zb": scalar(0, np.uint8)}, **t)
            # hostile scales: an answer, never an undefined float-to-int
            # conversion (the compiled QuantizeLinear clamps in f32 first)
            qsig = h.make_node("QLinearSigmoid", ["x", "sx", "zx", "sy", "zy"], ["y"], **ms)
            for k, (sx, sy) in enumerate([(np.nan, 1.0), (1.0, 0.0), (np.inf, 1e-30)]):
                rc, err = run(tmp, "qlinearsigmoid_hostile_%d" % k, qsig,
                              {"x": np.arange(12, dtype=np.uint8)},
                              {"sx": scalar(sx), "zx": scalar(3, np.uint8), "sy": scalar(sy),
                               "zy": scalar(0, np.uint8)}, **t)
                check("qlinearsigmoid_hostile_%d: runs" % k, rc == 0, err)
            qz = h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
            for k, sc in enumerate([0.0, np.nan, np.inf, 1e-45]):
                rc, err = run(tmp, "quantize_hostile_scale_%d" % k, qz,
                              {"x": np.array([-2.0, -0.0, 0.0, 3.0, np.nan, np.inf], f32)},
                              {"s": scalar(sc), "z": scalar(7, np.uint8)}, **t)
                check("quantize_hostile_scale_%d: runs" % k, rc == 0, err)
            # hostile values: an answer, no crash and no undefined behaviour
            roi = h.make_node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 2])
            rois = np.array([[0, np.nan, -1e30, 1e30, np.inf]], f32)
            rc, err = run(tmp, "maxroipool_hostile_box", roi, {"x": np.ones((1, 1, 4, 4), f32)},
                          {"r": rois}, **t)
            check("maxroipool_hostile_box: runs", rc == 0, err)
            mel = h.make_node("MelWeightMatrix", ["n", "l", "r", "lo", "hi"], ["y"])
            rc, err = run(tmp, "melweight_nan_edge", mel, {}, {
                "n": scalar(4, np.int64), "l": scalar(16, np.int64), "r": scalar(8000, np.int64),
                "lo": scalar(0.0), "hi": scalar(np.nan)}, **t)
            check("melweight_nan_edge: runs", rc == 0, err)
            rc, err = run(tmp, "melweight_huge_edge", mel, {}, {
                "n": scalar(4, np.int64), "l": scalar(16, np.int64), "r": scalar(1, np.int64),
                "lo": scalar(0.0), "hi": scalar(3e38)}, **t)
            check("melweight_huge_edge: runs", rc == 0, err)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
