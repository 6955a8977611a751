#!/usr/bin/env python3
"""tests/nn/test_nn_errors.py — malformed nodes of the reduction, normalization, pooling and attention ops
(ReduceL1..., normalizations, pools, ConvTranspose, RoiAlign, Attention,
RotaryEmbedding) are refused with one `ncc: error:` line naming the node
and exit 2 (bad input), on ref and cpu; nothing crashes and no output is
written. The valid twin of every model runs (exit 0), so each refusal is
the attribute's or the shape's, not the model's.

Prints "N passed, M failed"; exit 1 on any failure.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

F32 = np.float32


def model(op, inputs, attrs, out_shape, opset=18, inits=()):
    """One `op` node over graph inputs {name: array} (None: omitted) and
    initializers; its output typed by hand (bad models infer no shape)."""
    names = [n if a is not None else "" for n, a in inputs]
    node = helper.make_node(op, names, ["y"], **attrs)
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                         list(a.shape)) for n, a in inputs if a is not None]
    out = helper.make_tensor_value_info("y", 1, out_shape)
    g = helper.make_graph([node], "g", vis, [out],
                          initializer=[numpy_helper.from_array(v, k) for k, v in inits])
    opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = helper.find_min_ir_version_for(opsets)
    return m, {n: a for n, a in inputs if a is not None}


rng = np.random.RandomState(7)
x4 = rng.randn(1, 4, 5, 5).astype(F32)
vec4 = np.ones(4, F32)

# (name, op, good attrs, bad attrs, inputs, output shape, message regex, opset)
CASES = [
    ("lpnorm_p3", "LpNormalization", {"p": 2}, {"p": 3}, [("x", x4)], None,
     r"'p' must be 1 or 2", 18),
    ("lpnorm_axis", "LpNormalization", {"axis": 3}, {"axis": 4}, [("x", x4)], None,
     r"axis", 18),
    ("groupnorm_no_groups", "GroupNormalization", {"num_groups": 2}, {},
     [("x", x4), ("s", vec4), ("b", vec4)], None, r"num_groups", 21),
    ("groupnorm_indivisible", "GroupNormalization", {"num_groups": 2}, {"num_groups": 3},
     [("x", x4), ("s", vec4), ("b", vec4)], None, r"does not divide", 21),
    ("groupnorm_scale_len", "GroupNormalization", {"num_groups": 2}, {"num_groups": 1},
     [("x", x4), ("s", np.ones(3, F32)), ("b", np.ones(3, F32))], None, r"scale has 3", 21),
    ("instnorm_scale_len", "InstanceNormalization", {}, {},
     [("x", x4), ("s", np.ones(3, F32)), ("b", vec4)], None, r"scale has 3", 18),
    ("lrn_no_size", "LRN", {"size": 3}, {}, [("x", x4)], None, r"size", 18),
    ("lrn_size0", "LRN", {"size": 3}, {"size": 0}, [("x", x4)], None, r"size", 18),
    ("mvn_repeated_axis", "MeanVarianceNormalization", {"axes": [0, 2]}, {"axes": [2, -2]},
     [("x", x4)], None, r"repeated", 18),
    ("lppool_p0", "LpPool", {"kernel_shape": [2, 2]}, {"kernel_shape": [2, 2], "p": 0},
     [("x", x4)], [1, 4, 4, 4], r"'p'", 18),
    ("lppool_no_kernel", "LpPool", {"kernel_shape": [2, 2]}, {}, [("x", x4)], [1, 4, 4, 4],
     r"kernel_shape", 18),
    ("convt_outpad", "ConvTranspose", {"strides": [2, 2], "output_padding": [1, 1]},
     {"strides": [2, 2], "output_padding": [2, 2]},
     [("x", x4), ("w", rng.randn(4, 2, 3, 3).astype(F32))], [1, 2, 12, 12],
     r"output_padding", 18),
    ("convt_channels", "ConvTranspose", {}, {},
     [("x", x4), ("w", rng.randn(3, 2, 3, 3).astype(F32))], [1, 2, 7, 7], r"channels", 18),
    ("convt_group", "ConvTranspose", {"group": 2}, {"group": 3},
     [("x", x4), ("w", rng.randn(4, 1, 3, 3).astype(F32))], [1, 2, 7, 7], r"group|channels",
     18),
    ("roialign_mode", "RoiAlign", {"mode": "max"}, {"mode": "min"},
     [("x", x4), ("r", np.array([[0, 0, 3, 3]], F32)), ("i", np.zeros(1, np.int64))],
     [1, 4, 1, 1], r"mode", 16),
    ("roialign_ctm", "RoiAlign", {}, {"coordinate_transformation_mode": "asymmetric"},
     [("x", x4), ("r", np.array([[0, 0, 3, 3]], F32)), ("i", np.zeros(1, np.int64))],
     [1, 4, 1, 1], r"coordinate_transformation_mode", 16),
    ("roialign_batch_index", "RoiAlign", {}, {},
     [("x", x4), ("r", np.array([[0, 0, 3, 3]], F32)), ("i", np.array([5], np.int64))],
     [1, 4, 1, 1], r"batch index", 16),
    ("attention_3d_no_heads", "Attention", {"q_num_heads": 2, "kv_num_heads": 2}, {},
     [("q", rng.randn(1, 3, 8).astype(F32)), ("k", rng.randn(1, 4, 8).astype(F32)),
      ("v", rng.randn(1, 4, 8).astype(F32))], [1, 3, 8], r"num_heads", 23),
    ("attention_gqa_heads", "Attention", {}, {},
     [("q", rng.randn(1, 3, 2, 4).astype(F32)), ("k", rng.randn(1, 2, 5, 4).astype(F32)),
      ("v", rng.randn(1, 2, 5, 4).astype(F32))], [1, 3, 2, 4], r"multiple", 23),
    ("attention_qk_mode", "Attention", {"qk_matmul_output_mode": 3},
     {"qk_matmul_output_mode": 4},
     [("q", rng.randn(1, 2, 2, 4).astype(F32)), ("k", rng.randn(1, 2, 5, 4).astype(F32)),
      ("v", rng.randn(1, 2, 5, 4).astype(F32))], [1, 2, 2, 4], r"qk_matmul_output_mode", 23),
    ("rotary_3d_no_heads", "RotaryEmbedding", {"num_heads": 2}, {},
     [("x", rng.randn(1, 3, 8).astype(F32)), ("c", np.ones((4, 2), F32)),
      ("s", np.ones((4, 2), F32)), ("p", np.zeros((1, 3), np.int64))], [1, 3, 8],
     r"num_heads", 23),
    ("rotary_position", "RotaryEmbedding", {}, {},
     [("x", rng.randn(1, 2, 3, 4).astype(F32)), ("c", np.ones((4, 2), F32)),
      ("s", np.ones((4, 2), F32)), ("p", np.array([[0, 1, 9]], np.int64))], [1, 2, 3, 4],
     r"position id", 23),
    ("reduce_attr_and_input", "ReduceL2", {"axes": [1]}, {"axes": [1]},
     [("x", x4), ("a", np.array([1], np.int64))], [1, 1, 5, 5], r"both", 13),
    ("reduce_axis_range", "ReduceLogSumExp", {"axes": [3]}, {"axes": [4]},
     [("x", x4)], [1, 4, 5, 1], r"axis", 13),
]

# The valid twin of a case whose bad form is in its inputs, not attributes.
GOOD_INPUTS = {
    "groupnorm_scale_len": [("x", x4), ("s", vec4), ("b", vec4)],
    "instnorm_scale_len": [("x", x4), ("s", vec4), ("b", vec4)],
    "convt_channels": [("x", x4), ("w", rng.randn(4, 2, 3, 3).astype(F32))],
    "roialign_batch_index": [("x", x4), ("r", np.array([[0, 0, 3, 3]], F32)),
                             ("i", np.zeros(1, np.int64))],
    "attention_gqa_heads": [("q", rng.randn(1, 4, 2, 4).astype(F32)),
                            ("k", rng.randn(1, 2, 5, 4).astype(F32)),
                            ("v", rng.randn(1, 2, 5, 4).astype(F32))],
    "rotary_position": [("x", rng.randn(1, 2, 3, 4).astype(F32)), ("c", np.ones((4, 2), F32)),
                        ("s", np.ones((4, 2), F32)), ("p", np.array([[0, 1, 3]], np.int64))],
    "reduce_attr_and_input": [("x", x4)],
}
GOOD_OUT = {"attention_gqa_heads": [1, 4, 2, 4]}


def main():
    ncc = nccutil.find_ncc()
    targets = ["ref"]
    out = subprocess.run([ncc, "targets"], stdout=subprocess.PIPE).stdout.decode()
    if any(l.split()[:2] == ["cpu", "yes"] for l in out.splitlines()):
        targets.append("cpu")
    passed = failed = 0
    with nccutil.Workdir() as root:
        for name, op, good, bad, ins, oshape, msg, opset in CASES:
            oshape = oshape or list(ins[0][1].shape)
            for target in targets:
                wd = nccutil.subdir(root, "%s-%s" % (name, target))
                gm, gf = model(op, GOOD_INPUTS.get(name, ins), good,
                               GOOD_OUT.get(name, oshape), opset)
                r = nccutil.run_ncc(ncc, gm, gf, ["y"], wd, target=target)
                why = None
                if r.rc != 0:
                    why = "valid twin failed: " + r.describe()
                else:
                    bm, bf = model(op, ins, bad, oshape, opset)
                    r = nccutil.run_ncc(ncc, bm, bf, ["y"], wd, target=target)
                    line = r.error_line()
                    if r.rc != 2:
                        why = "exit %d, expected 2: %s" % (r.rc, line)
                    elif not line.startswith("ncc: error:") or not re.search(msg, line):
                        why = "error line %r does not match %r" % (line, msg)
                    elif os.listdir(os.path.join(wd, "out-" + target)):
                        why = "output written despite the error"
                if why:
                    failed += 1
                    print("FAIL %s [%s]: %s" % (name, target, why))
                else:
                    passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
