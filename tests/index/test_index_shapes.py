#!/usr/bin/env python3
"""tests/index/test_index_shapes.py — compile-time output types of the
indexing, scatter, resampling and sorting ops on models with
symbolic dims, against ONNX's own shape inference.

For each model, `ncc import` prints the graph with every value's inferred
type.  Each output must have ONNX's dtype and rank; each dim ONNX infers as
a number must be that number; a dim ONNX leaves symbolic must be a symbol
for ncc too (or, where the case says `static`, the number numpy gives:
Compress by a constant condition), and where the case names one (`keep`), ncc must have kept the
model's symbol (a Resize by 1 on N is still N) rather than a fresh one.
Prints "N passed, M failed"; exit 1 on failure.
Usage: NCC=build/ncc python3 tests/index/test_index_shapes.py
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as T, helper, numpy_helper  # noqa: E402

DT = {T.FLOAT: "f32", T.INT64: "i64", T.BOOL: "bool", T.INT32: "i32"}


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def case(name, nodes, inputs, outputs, inits=(), opset=19, keep=None, static=None):
    g = helper.make_graph(nodes, name, inputs,
                          [helper.make_empty_tensor_value_info(o) for o in outputs],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return name, m, keep or {}, static or {}


def C(v, dt=np.int64):
    return np.array(v, dt)


N = lambda *rest: ["N"] + list(rest)  # noqa: E731
node = helper.make_node
CASES = [
    case("resize_scales_batch", [node("Resize", ["x", "", "s"], ["y"], mode="linear")],
         [vi("x", T.FLOAT, N(2, 5, 6))], ["y"], [("s", C([1, 1, 2, 1.5], np.float32))],
         keep={"y": {0: "N"}}),
    case("resize_sizes_shape", [node("Shape", ["x"], ["sh"]),
                                node("Slice", ["sh", "b", "e"], ["nc"]),
                                node("Concat", ["nc", "hw"], ["sz"], axis=0),
                                node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest")],
         [vi("x", T.FLOAT, N("C", 5, 6))], ["y"],
         [("b", C([0])), ("e", C([2])), ("hw", C([8, 9]))], keep={"y": {0: "N", 1: "C"}},
         static={"y": {2: 8, 3: 9}}),  # `sizes` says so (ONNX loses it through Concat)
    case("resize_runtime_scales", [node("Resize", ["x", "", "s"], ["y"])],
         [vi("x", T.FLOAT, [1, 2, 5, 6]), vi("s", T.FLOAT, [4])], ["y"]),
    case("depth_to_space", [node("DepthToSpace", ["x"], ["y"], blocksize=2)],
         [vi("x", T.FLOAT, N(8, 3, 5))], ["y"], keep={"y": {0: "N"}}),
    case("space_to_depth", [node("SpaceToDepth", ["x"], ["y"], blocksize=3)],
         [vi("x", T.FLOAT, N(2, 6, 9))], ["y"], keep={"y": {0: "N"}}),
    case("gather_elements", [node("GatherElements", ["x", "i"], ["y"], axis=1)],
         [vi("x", T.FLOAT, N(5)), vi("i", T.INT64, N(3))], ["y"], keep={"y": {0: "N"}}),
    case("gather_nd_batch", [node("GatherND", ["x", "i"], ["y"], batch_dims=1)],
         [vi("x", T.FLOAT, N(4, 5)), vi("i", T.INT64, N(7, 1))], ["y"],
         keep={"y": {0: "N"}}),
    case("scatter_nd", [node("ScatterND", ["x", "i", "u"], ["y"], reduction="add")],
         [vi("x", T.FLOAT, N(4)), vi("i", T.INT64, [3, 1]), vi("u", T.FLOAT, [3, 4])],
         ["y"], keep={"y": {0: "N"}}),
    case("topk_const_k", [node("TopK", ["x", "k"], ["v", "i"], axis=1)],
         [vi("x", T.FLOAT, N(9))], ["v", "i"], [("k", C([4]))], keep={"v": {0: "N"}}),
    case("topk_runtime_k", [node("TopK", ["x", "k"], ["v", "i"])],
         [vi("x", T.FLOAT, N(9)), vi("k", T.INT64, [1])], ["v", "i"]),
    case("argmax", [node("ArgMax", ["x"], ["y"], axis=2, keepdims=0)],
         [vi("x", T.FLOAT, N(3, 4))], ["y"], keep={"y": {0: "N"}}),
    case("argmin_keep", [node("ArgMin", ["x"], ["y"], axis=-1)],
         [vi("x", T.FLOAT, N(3, 4))], ["y"], keep={"y": {0: "N"}}),
    case("einsum_symbolic", [node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")],
         [vi("a", T.FLOAT, N(3, 4)), vi("b", T.FLOAT, N(4, "K"))], ["y"],
         keep={"y": {0: "N", 2: "K"}}),
    case("grid_sample", [node("GridSample", ["x", "g"], ["y"])],
         [vi("x", T.FLOAT, N(3, 5, 6)), vi("g", T.FLOAT, N(7, 8, 2))], ["y"],
         keep={"y": {0: "N"}}),
    case("reverse_sequence", [node("ReverseSequence", ["x", "l"], ["y"])],
         [vi("x", T.FLOAT, ["T", "N", 3]), vi("l", T.INT64, ["N"])], ["y"],
         keep={"y": {0: "T", 1: "N"}}),
    case("compress_runtime", [node("Compress", ["x", "c"], ["y"], axis=1)],
         [vi("x", T.FLOAT, N(5)), vi("c", T.BOOL, [5])], ["y"], keep={"y": {0: "N"}}),
    case("compress_const", [node("Compress", ["x", "c"], ["y"], axis=1)],
         [vi("x", T.FLOAT, N(5))], ["y"], [("c", C([1, 0, 1, 1, 0], bool))],
         keep={"y": {0: "N"}},
         static={"y": {1: np.compress([1, 0, 1, 1, 0], np.zeros((1, 5)), 1).shape[1]}}),
    case("unique_axis", [node("Unique", ["x"], ["y", "i", "v", "n"], axis=1)],
         [vi("x", T.FLOAT, [3, 7])], ["y", "i", "v", "n"],
         static={"v": {0: 7}}),  # inverse_indices: one per slice along the axis
    case("nms", [node("NonMaxSuppression", ["b", "s", "m"], ["y"])],
         [vi("b", T.FLOAT, [1, 6, 4]), vi("s", T.FLOAT, [1, 2, 6])], ["y"],
         [("m", C([3]))]),
]


def parse_types(text):
    """{value name: (dtype, [dims as str])} from `ncc import` output."""
    types = {}
    for m in re.finditer(r"%([\w.]+): (\w+)\[([^\]]*)\]", text):
        dims = [d.strip() for d in m.group(3).split(",")] if m.group(3).strip() else []
        types[m.group(1)] = (m.group(2), dims)
    return types


def check(name, model, keep, static, ncc, tmp):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    r = subprocess.run([ncc, "import", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return "ncc import exit %d: %s" % (r.returncode, r.stderr.decode().strip())
    got = parse_types(r.stdout.decode())
    want = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output
    for o in want:
        t = o.type.tensor_type
        if o.name not in got:
            return "no type for %s" % o.name
        dt, dims = got[o.name]
        if dt != DT[t.elem_type] or len(dims) != len(t.shape.dim):
            return "%s: %s[%s], ONNX %s rank %d" % (o.name, dt, ",".join(dims),
                                                   DT[t.elem_type], len(t.shape.dim))
        for k, d in enumerate(t.shape.dim):
            mine = dims[k]
            if d.HasField("dim_value"):
                if mine != str(d.dim_value):
                    return "%s dim %d: %s, ONNX %d" % (o.name, k, mine, d.dim_value)
            elif k in static.get(o.name, {}):
                if mine != str(static[o.name][k]):
                    return "%s dim %d: %s, expected %d" % (o.name, k, mine, static[o.name][k])
            elif mine.lstrip("-").isdigit():
                return "%s dim %d: %s, ONNX symbolic" % (o.name, k, mine)
        for k, sym in keep.get(o.name, {}).items():
            if dims[k] != sym:
                return "%s dim %d: %s, expected the model's %s" % (o.name, k, dims[k], sym)
    return None


def main():
    ncc = nccutil.find_ncc(None)
    failed, passed = [], 0
    with tempfile.TemporaryDirectory(prefix="ncc-index-") as tmp:
        for name, model, keep, static in CASES:
            why = check(name, model, keep, static, ncc, tmp)
            if why:
                failed.append((name, why))
            else:
                passed += 1
    for name, why in failed:
        print("FAIL %s: %s" % (name, why))
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
