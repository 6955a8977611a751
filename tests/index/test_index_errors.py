#!/usr/bin/env python3
"""tests/index/test_index_errors.py — bad inputs to the indexing, scatter,
resampling and sorting ops end as one `ncc: error:` line and exit
2 (bad input) or 3 (unsupported), never a crash or a wrong answer, on `ref`
and `cpu`.

The oracle that each input is bad is ONNX Runtime: it must reject the same
model/inputs (at session creation or run).  Cases whose values are only
known at run time (indices, k, sequence lengths) are graph inputs, so the
checks are the kernels' own, not shape inference on constants.
Prints "N passed, M failed"; exit 1 on failure.
Usage: NCC=build/ncc python3 tests/index/test_index_errors.py
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F32, I64 = np.float32, np.int64


def model(op, ins, attrs=None, n_out=1, opset=19, inits=None):
    """One `op` node over graph inputs `ins` ({name: array}) and initializers."""
    inits = inits or {}
    vis = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                         list(v.shape)) for k, v in ins.items()]
    names = list(ins) + list(inits)
    outs = ["y%d" % i for i in range(n_out)]
    node = helper.make_node(op, names, outs, **(attrs or {}))
    g = helper.make_graph([node], "g", vis,
                          [helper.make_empty_tensor_value_info(o) for o in outs],
                          initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m, outs


# (name, model args, feeds, exit code, regex of the error line)
CASES = [
    ("gather_elements_index", ("GatherElements", {"x": np.zeros((2, 4), F32),
                                                  "i": np.array([[0, 4]], I64)}, {"axis": 1}),
     2, r"index 4 is out of range"),
    ("gather_elements_negative", ("GatherElements", {"x": np.zeros((2, 4), F32),
                                                     "i": np.array([[-5]], I64)}, {"axis": 1}),
     2, r"index -5 is out of range"),
    ("gather_nd_index", ("GatherND", {"x": np.zeros((3, 4), F32),
                                      "i": np.array([[1, 7]], I64)}),
     2, r"index 7 is out of range"),
    ("scatter_nd_index", ("ScatterND", {"x": np.zeros((3, 4), F32), "i": np.array([[3]], I64),
                                        "u": np.zeros((1, 4), F32)}),
     2, r"index 3 is out of range"),
    ("scatter_elements_index", ("ScatterElements", {"x": np.zeros((3, 4), F32),
                                                    "i": np.array([[9]], I64),
                                                    "u": np.zeros((1, 1), F32)}, {"axis": 0}),
     2, r"index 9 is out of range"),
    ("topk_k_too_large", ("TopK", {"x": np.zeros((3, 4), F32), "k": np.array([5], I64)},
                          None, 2),
     2, r"K is 5 for a dim of 4"),
    ("reverse_sequence_len", ("ReverseSequence", {"x": np.zeros((3, 2), F32),
                                                  "l": np.array([1, 4], I64)}),
     2, r"sequence length 4"),
    ("einsum_unknown_output_label", ("Einsum", {"a": np.zeros((2, 3), F32),
                                                "b": np.zeros((3, 4), F32)},
                                     {"equation": "ij,jk->iz"}),
     2, r"output label"),
    ("einsum_operand_count", ("Einsum", {"a": np.zeros((2, 3), F32),
                                         "b": np.zeros((3, 4), F32)}, {"equation": "ij->ji"}),
     2, r"has 1 operands, the node 2"),
    ("einsum_rank", ("Einsum", {"a": np.zeros((2, 3, 4), F32)}, {"equation": "ij->i"}),
     2, r"operand 0 has rank 3"),
    ("einsum_dims_differ", ("Einsum", {"a": np.zeros((2, 3), F32), "b": np.zeros((4, 2), F32)},
                            {"equation": "ij,jk->ik"}),
     2, r"subscript of operand 1"),
    ("depth_to_space_channels", ("DepthToSpace", {"x": np.zeros((1, 6, 2, 2), F32)},
                                 {"blocksize": 2}),
     2, r"not a multiple of 4"),
    ("resize_scales_and_sizes", ("Resize", {"x": np.zeros((1, 1, 2, 2), F32)}, {}, 1, 19,
                                 {"roi": np.zeros(0, F32),
                                  "scales": np.array([1, 1, 2, 2], F32),
                                  "sizes": np.array([1, 1, 4, 4], I64)}),
     2, r"exactly one of scales and sizes"),
    ("nms_box_shape", ("NonMaxSuppression", {"b": np.zeros((1, 3, 5), F32),
                                             "s": np.zeros((1, 1, 3), F32)}),
     2, r"boxes \[B,S,4\]"),
    ("gather_nd_batch_dims", ("GatherND", {"x": np.zeros((3, 4), F32),
                                           "i": np.zeros((3, 2), I64)}, {"batch_dims": 1}),
     2, r"do not fit"),
]


# cpu only where the LLVM targets are built (tests/CMakeLists.txt)
TARGETS = ("ref", "cpu") if os.environ.get("NCC_WITH_LLVM", "1") != "0" else ("ref",)


def main():
    ncc = nccutil.find_ncc(None)
    import onnxruntime as ort
    passed, failed = 0, []
    with nccutil.Workdir() as root:
        for name, args, code, pattern in CASES:
            op, ins = args[0], args[1]
            m, outs = model(op, ins, *args[2:])
            try:  # the external oracle: ONNX Runtime rejects it as well
                sess = ort.InferenceSession(m.SerializeToString(),
                                            providers=["CPUExecutionProvider"])
                sess.run(None, ins)
                failed.append((name, "ONNX Runtime accepts this input: not a bad input"))
                continue
            except Exception:  # noqa: BLE001  any rejection will do
                pass
            for target in TARGETS:
                r = nccutil.run_ncc(ncc, m, ins, outs, nccutil.subdir(root, name + target),
                                    target=target)
                line = r.error_line()
                if r.rc != code or not line.startswith("ncc: error:") or \
                        not re.search(pattern, line):
                    failed.append(("%s [%s]" % (name, target),
                                   "exit %d, expected %d matching /%s/: %s"
                                   % (r.rc, code, pattern, line)))
                else:
                    passed += 1
    for name, why in failed:
        print("FAIL %s: %s" % (name, why))
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
