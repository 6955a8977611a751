"""tests/py/ortgen_dynamic.py — diff_ort cases of the data-dependent-shape
ops (NCC_OPF_DYNAMIC: the kernel sizes its outputs, docs/DYNAMIC-SHAPES.md).

Besides the op alone, each op feeds compiled ops (Transpose, Cast, Add,
ReduceSum, MatMul) whose dims are the op's data-dependent symbol, so the
cpu and GPU targets are checked on kernels specialised on a symbol that
only a run binds, and on a run where that symbol is 0.
"""
import numpy as np
from onnx import TensorProto, helper


def gen_nonzero(g, ns):
    Const = ns.Const
    x = g.randn(3, 5)
    x[x < 0.3] = 0.0
    g.add("f32_2d", [x])
    g.add("f32_const", [Const(x)])
    g.add("all_zero", [np.zeros((4, 3), np.float32)])
    g.add("all_nonzero", [g.nonzero(2, 3, 4)])
    g.add("special", [np.array([0.0, -0.0, np.nan, np.inf, 1e-45], np.float32)])
    # ONNX's shape inference and reference give a scalar [0, count];
    # onnxruntime gives [1, count]: judged against ref only
    g.add("scalar", [np.array(2.5, np.float32)], oracles=("ref",))
    g.add("bool", [g.rng.rand(3, 7) < 0.4])
    g.add("i64", [g.ints(-1, 2, 2, 3, 5)])
    g.add("i32", [g.ints(-1, 2, 17, dtype=np.int32)])
    g.add("u8", [g.ints(0, 2, 6, 2, dtype=np.uint8)])
    for k in range(2):
        s = g.shape(1, 4, 512)
        v = g.randn(*s)
        v[g.rng.rand(*s) < 0.5] = 0.0
        g.add("random%d_%s" % (k, ns.shape_tag(s)), [v])
    chain(g, "chain", g.randn(5, 7))
    chain(g, "chain_empty", np.zeros((5, 7), np.float32))


def chain(g, name, x):
    """NonZero -> Transpose -> Cast -> (Add, ReduceSum, MatMul): compiled
    kernels over the data-dependent count."""
    x = x.copy()
    x[x < 0] = 0.0
    w = g.ints(-3, 4, 2, 3).astype(np.float32)  # exact sums: no tolerance needed
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
        helper.make_node("Cast", ["t"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["f", "f"], ["y0"]),
        helper.make_node("ReduceSum", ["f"], ["y1"], keepdims=0),
        helper.make_node("MatMul", ["f", "w"], ["y2"]),
    ]
    g.graph(name, nodes, {"x": x}, {"w": w}, ["y0", "y1", "y2"])


def wide_nonzero(g, ns):
    x = g.randn(3, 1001)
    x[x < 0] = 0.0
    g.add("wide_3x1001", [x])
    chain(g, "wide_chain", g.randn(17, 33))


def register(ns):
    if hasattr(ns, "GENERATORS"):
        ns.GENERATORS["NonZero"] = lambda g: gen_nonzero(g, ns)
        ns.WIDE_GENERATORS["NonZero"] = lambda g: wide_nonzero(g, ns)
