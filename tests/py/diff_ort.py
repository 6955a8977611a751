#!/usr/bin/env python3
"""tests/py/diff_ort.py — differential tests of `ncc run --target=T` against ONNX Runtime
(and, with --oracle ref, against ncc's own reference interpreter).

For every op ncc claims (the NCC_OP rows of ir/ops.def) a generator below
builds several seeded single-op (or tiny) models: random shapes including
sizes 1, 3, 17 and odd spatial sizes, broadcasting variants, attribute
variants, and the older-opset forms the importer upgrades.  A second
generator per op (WIDE_GENERATORS) adds the sizes a vectorizing backend gets
wrong: 1000, 1001, 33 (non-multiples of the 4/8/16-lane vector widths, so
every kernel runs its masked tails), reductions and contractions over
~1000 elements, value sweeps over the ranges where the cpu backend's
exp/tanh/erf polynomials switch branches, and IEEE special values (signed
zeros, infinities, NaN, denormals, overflow thresholds) for every
elementwise op, Clip, the reductions and Softmax.

Oracles (--oracle, comma-separated, default ort):
  ort  ONNX Runtime, 1 thread, graph optimizations off (the graph as written)
  ref  `ncc run --target=ref` (the reference interpreter, libm based)
Outputs must match every oracle in dtype, shape and value within the op's
tolerance for that oracle: TOL against ORT; against ref the target's own
tighter table (TOL_VS_REF: TOL_CPU_REF for cpu, in ulps and units of
roundoff, read from tests/tol_cpu_ref.def where each entry is justified;
TOL for targets without one); data movement and integer results are exact.

Every claimed op must have both generators: a new row in ops.def without
them fails the run.  Each op draws from its own RandomState seeded by the
op's name, so adding cases to one op does not change another op's data.

Usage: NCC=build/ncc python3 tests/py/diff_ort.py [-v] [-k OP_REGEX]
           [--target ref|cpu] [--oracle ort|ref|ort,ref] [--no-wide | --wide-only]
           [--errors]
Prints per-op pass/fail and "N passed, M failed"; exit 1 on any failure.
--errors adds, per op, the largest error seen against each oracle (in units
of the tolerance), which is how the TOL tables below were checked.
"""
import argparse
import collections
import os
import re
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F32, I64, I32 = np.float32, np.int64, np.int32
INT64_MAX = np.iinfo(np.int64).max

# Against ONNX Runtime (any target): (rtol, atol) per op; ops not listed are
# exact (data movement, integers).  ORT's MLAS kernels use their own
# approximations (rational tanh/erf/logistic, blocked SGEMM), so these bound
# ORT's deviation; the cpu backend's own error (a few ulp, see TOL_CPU_REF)
# fits inside them, and the tight check of the cpu backend is against ref.
TOL_ELTWISE = (1e-5, 1e-6)
TOL_TRANSCENDENTAL = (1e-5, 1e-5)
TOL_ACCUM = (1e-4, 1e-4)  # sums of products in a different order
TOL = {
    "Add": TOL_ELTWISE, "Sub": TOL_ELTWISE, "Mul": TOL_ELTWISE, "Div": TOL_ELTWISE,
    "Pow": (1e-5, 1e-5), "Neg": TOL_ELTWISE, "Abs": TOL_ELTWISE, "Sqrt": TOL_ELTWISE,
    "Reciprocal": TOL_ELTWISE, "Relu": TOL_ELTWISE, "LeakyRelu": TOL_ELTWISE,
    "Clip": TOL_ELTWISE, "HardSigmoid": TOL_ELTWISE, "HardSwish": TOL_ELTWISE,
    "Max": TOL_ELTWISE, "Min": TOL_ELTWISE, "Where": TOL_ELTWISE,
    "Exp": TOL_TRANSCENDENTAL, "Log": TOL_TRANSCENDENTAL, "Erf": TOL_TRANSCENDENTAL,
    "Tanh": TOL_TRANSCENDENTAL, "Sigmoid": TOL_TRANSCENDENTAL, "Gelu": TOL_TRANSCENDENTAL,
    "Softplus": TOL_TRANSCENDENTAL, "Softsign": TOL_ELTWISE, "Cast": TOL_ELTWISE,
    "MatMul": TOL_ACCUM, "Gemm": TOL_ACCUM, "Conv": TOL_ACCUM,
    "BatchNormalization": (1e-5, 1e-5), "LayerNormalization": (1e-4, 1e-5),
    "Softmax": (1e-5, 1e-6), "LogSoftmax": (1e-5, 1e-5),
    "ReduceMean": (1e-5, 1e-5), "ReduceSum": (1e-5, 1e-5), "ReduceMax": TOL_ELTWISE,
    "MaxPool": TOL_ELTWISE, "AveragePool": (1e-5, 1e-6), "GlobalAveragePool": (1e-5, 1e-6),
    "Range": TOL_ELTWISE,
    "Sin": TOL_TRANSCENDENTAL, "Cos": TOL_TRANSCENDENTAL, "Tan": TOL_TRANSCENDENTAL,
    "Asin": TOL_TRANSCENDENTAL, "Acos": TOL_TRANSCENDENTAL, "Atan": TOL_TRANSCENDENTAL,
    "Sinh": TOL_TRANSCENDENTAL, "Cosh": TOL_TRANSCENDENTAL, "Asinh": TOL_TRANSCENDENTAL,
    "Acosh": TOL_TRANSCENDENTAL, "Atanh": TOL_TRANSCENDENTAL,
    "Floor": (0.0, 0.0), "Ceil": (0.0, 0.0), "Round": (0.0, 0.0), "Sign": (0.0, 0.0),
    "Elu": TOL_TRANSCENDENTAL, "Selu": TOL_TRANSCENDENTAL, "Celu": TOL_TRANSCENDENTAL,
    "ThresholdedRelu": (0.0, 0.0), "Mish": TOL_TRANSCENDENTAL,
}
EXACT = (0.0, 0.0)
# Integer results that may differ from ONNX Runtime's by `atol` units: ops
# that ONNX Runtime defines by its own kernels, whose rounding differs
# between its code paths (com.microsoft QLinear*, tests/py/ortgen_qlinear.py).
TOL_INT = {}

# The cpu backend against ref (--target cpu --oracle ref): (rtol, atol, scale)
# per op, read from tests/tol_cpu_ref.def, the table the C op tests
# (tests/ops/op_cases.c, ops.cpu.*) include too, so the two cannot drift
# apart; each row's bound is justified there.  A row NCC_TOL(op, ulps,
# roundoffs, abs, scale) becomes rtol = ulps * ULP, atol = roundoffs * U + abs,
# and atol is multiplied by `scale`:
#   "abs"    1 (an absolute bound)
#   "x"      |input 0| per element
#   "max"    the largest |ref output| of the tensor
#   "terms"  per element, the op evaluated on |inputs| and |weights| (ONNX
#            Runtime on the absolute-valued model): the sum of |terms|
#   "spread" atol is absolute, and rtol grows by 2u (max x - min x)
# Ops not listed must be bit-exact: one IEEE operation per element (+ - * /
# sqrt, min/max, compare, select, casts) or data movement.
U = 2.0 ** -24    # f32 unit roundoff
ULP = 2.0 ** -23  # f32 ulp relative to the value, at its largest
TOL_CPU_REF_FILE = os.path.join(nccutil.SRC, "tests", "tol_cpu_ref.def")
SCALES = ("abs", "x", "max", "terms", "spread")


def _number(text):
    text = text.strip()
    return float.fromhex(text) if text.lower().startswith(("0x", "-0x")) else float(text)


def read_tol_table(path):
    """{op: (rtol, atol, scale)} from the NCC_TOL rows of `path`."""
    table = {}
    with open(path) as f:
        text = f.read()
    for m in re.finditer(r"^NCC_TOL\((\w+),([^,]+),([^,]+),([^,]+),\s*(\w+)\)\s*$", text, re.M):
        op, ulps, roundoffs, absolute, scale = m.groups()
        scale = scale.lower()
        if scale not in SCALES or op in table:
            raise RuntimeError("%s: bad row for %s" % (path, op))
        table[op] = (_number(ulps) * ULP, _number(roundoffs) * U + _number(absolute), scale)
    if len(table) != len(re.findall(r"^NCC_TOL\(", text, re.M)) or not table:
        raise RuntimeError("%s: a NCC_TOL row does not parse" % path)
    return table


TOL_CPU_REF = read_tol_table(TOL_CPU_REF_FILE)
# Per target; a target without a table (a GPU one, say) is held to the
# ORT-level TOL against ref as well, until someone documents its bounds.
TOL_VS_REF = {"cpu": TOL_CPU_REF}
DEFAULT_OPSET = 18


class Const:
    """An input given as an initializer (a compile-time constant for ncc)."""

    def __init__(self, value):
        self.value = np.asarray(value)


class Case:
    """One model and its inputs; `oracles` limits the oracles that judge it
    (None: every one asked for) where ONNX Runtime's semantics differ from
    ref's, e.g. NaN in ReduceMax."""

    def __init__(self, op, name, model, feeds, oracles=None):
        self.op, self.name, self.model, self.feeds = op, name, model, feeds
        self.oracles = oracles


def _vi(name, arr):
    elem = helper.np_dtype_to_tensor_dtype(arr.dtype)
    return helper.make_tensor_value_info(name, elem, list(arr.shape))


def make_model(nodes, feeds, inits, outputs, opset):
    """A model whose outputs are typed by strict ONNX shape inference."""
    graph = helper.make_graph(
        nodes, "g", [_vi(n, a) for n, a in feeds.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="ncc-diff-ort")
    m.ir_version = helper.find_min_ir_version_for(opsets)
    m = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    onnx.checker.check_model(m)
    return m


class Gen:
    """Builds the cases of one op with the op's own random stream."""

    def __init__(self, op):
        self.op = op
        self.rng = np.random.RandomState(zlib.crc32(op.encode()) & 0x7FFFFFFF)
        self.cases = []

    # ---- data ----
    def randn(self, *shape, dtype=F32, scale=1.0):
        return (self.rng.standard_normal(shape) * scale).astype(dtype)

    def uniform(self, lo, hi, *shape, dtype=F32):
        return self.rng.uniform(lo, hi, shape).astype(dtype)

    def ints(self, lo, hi, *shape, dtype=I64):
        return self.rng.randint(lo, hi, shape).astype(dtype)

    def nonzero(self, *shape):
        mag = self.rng.uniform(0.5, 2.0, shape)
        return (mag * self.rng.choice([-1.0, 1.0], shape)).astype(F32)

    # ---- random shapes (sizes 1, 3, 17 and other odd sizes) ----
    DIMS = (1, 2, 3, 5, 7, 17)

    def shape(self, rank_lo=1, rank_hi=4, max_numel=4096):
        while True:
            rank = self.rng.randint(rank_lo, rank_hi + 1)
            s = tuple(int(d) for d in self.rng.choice(self.DIMS, rank))
            if int(np.prod(s)) <= max_numel:
                return s

    def bcast_pair(self):
        """Two shapes that broadcast: ones sprinkled in, leading dims dropped."""
        full = self.shape(1, 4)

        def side():
            s = [1 if self.rng.rand() < 0.3 else d for d in full]
            return tuple(s[self.rng.randint(0, len(s)):] if self.rng.rand() < 0.3 else s)
        return side(), side()

    # ---- models ----
    @staticmethod
    def node_inputs(ins):
        """(feeds, inits, names) of a node's inputs: arrays are graph inputs
        x<i>, Const initializers c<i>, None an omitted optional input (""),
        trailing omitted ones dropped."""
        feeds, inits, names = {}, {}, []
        for i, x in enumerate(ins):
            if x is None:
                names.append("")
            elif isinstance(x, Const):
                names.append("c%d" % i)
                inits["c%d" % i] = x.value
            else:
                names.append("x%d" % i)
                feeds["x%d" % i] = np.asarray(x)
        while names and names[-1] == "":
            names.pop()
        return feeds, inits, names

    def add(self, name, ins, attrs=None, n_out=1, opset=DEFAULT_OPSET, op=None, oracles=None):
        """One node of `op` (default: this op) whose inputs are arrays (graph
        inputs), Const (initializers) or None (an omitted optional input)."""
        feeds, inits, names = self.node_inputs(ins)
        outs = ["y%d" % i for i in range(n_out)]
        node = helper.make_node(op or self.op, names, outs, **(attrs or {}))
        self.graph(name, [node], feeds, inits, outs, opset, oracles)

    def graph(self, name, nodes, feeds, inits, outputs, opset=DEFAULT_OPSET, oracles=None):
        feeds = {k: np.asarray(v) for k, v in feeds.items()}
        model = make_model(nodes, feeds, inits, outputs, opset)
        self.cases.append(Case(self.op, name, model, feeds, oracles))


# ==========================================================================
# Generators, one per claimed op (registered in GENERATORS at the end).

BCAST_SHAPES = [  # (a, b) pairs covering numpy broadcasting
    ((3, 4), (3, 4)), ((17,), (1,)), ((2, 3, 5), (5,)), ((2, 1, 5), (1, 4, 1)),
    ((1,), (3, 1, 7)), ((), (2, 3)), ((4, 1, 3, 1), (5, 1, 2)), ((1, 1), (1, 1)),
]


def shape_tag(shape):
    return "x".join(map(str, shape)) or "scalar"


def gen_binary(g):
    for a_shape, b_shape in BCAST_SHAPES + [g.bcast_pair() for _ in range(3)]:
        a = g.randn(*a_shape)
        if g.op == "Div":
            b = g.nonzero(*b_shape)
        elif g.op == "Pow":
            a = g.uniform(0.2, 3.0, *a_shape)
            b = g.uniform(-2.0, 2.0, *b_shape)
        else:
            b = g.randn(*b_shape)
        g.add("%s_%s" % (shape_tag(a_shape), shape_tag(b_shape)), [a, b])
    w = g.randn(1, 17)
    g.add("const_rhs", [g.randn(3, 17), Const(w if g.op != "Div" else g.nonzero(1, 17))])
    if g.op == "Pow":
        g.add("neg_base_int_exp", [g.randn(3, 5), Const(np.array(2.0, F32))])
        g.add("sqrt_exp", [g.uniform(0.0, 4.0, 17), Const(np.array(0.5, F32))])
        g.add("cube", [g.randn(2, 9), Const(np.array([3.0], F32))])
        return
    # Integer arithmetic as in shape computations (positive for Div so that
    # truncating and flooring division agree).
    lo = 1 if g.op == "Div" else -50
    g.add("i64", [g.ints(lo, 100, 2, 5), g.ints(1, 9, 5)])
    g.add("i64_scalar", [g.ints(lo, 100, 4), Const(np.array(3, I64))])
    g.add("i32", [g.ints(lo, 100, 3, 4, dtype=I32), g.ints(1, 9, 3, 1, dtype=I32)])


def gen_variadic(g):
    g.add("one", [g.randn(3, 5)])
    g.add("two_same", [g.randn(2, 17), g.randn(2, 17)])
    g.add("two_bcast", [g.randn(3, 1, 5), g.randn(4, 1)])
    g.add("three_bcast", [g.randn(2, 3, 4), g.randn(4), g.randn(3, 1)])
    g.add("four", [g.randn(5), g.randn(5), g.randn(1), g.randn(2, 5)])
    g.add("scalar", [g.randn(), g.randn(3)])
    for k in range(2):
        a, b = g.bcast_pair()
        g.add("random%d_%s_%s" % (k, shape_tag(a), shape_tag(b)), [g.randn(*a), g.randn(*b)])
    g.add("i64", [g.ints(-9, 9, 2, 3), g.ints(-9, 9, 3)])
    g.add("i32", [g.ints(-9, 9, 4, dtype=I32), g.ints(-9, 9, 4, dtype=I32)])


def gen_compare(g):
    small = lambda *s: g.ints(-2, 3, *s).astype(F32)  # noqa: E731  (ties happen)
    g.add("f32_same", [small(3, 4), small(3, 4)])
    g.add("f32_bcast", [small(2, 1, 5), small(3, 1)])
    g.add("f32_scalar", [small(17), Const(np.array(0.0, F32))])
    g.add("f32_rand", [g.randn(1, 7), g.randn(3, 1)])
    a, b = g.bcast_pair()
    g.add("random_%s_%s" % (shape_tag(a), shape_tag(b)), [small(*a), small(*b)])
    g.add("i64", [g.ints(-3, 3, 2, 3), g.ints(-3, 3, 3)])
    g.add("i32", [g.ints(-3, 3, 5, dtype=I32), g.ints(-3, 3, 1, dtype=I32)])


def gen_where(g):
    cond = lambda *s: g.rng.rand(*s) > 0.5  # noqa: E731
    g.add("same", [cond(3, 4), g.randn(3, 4), g.randn(3, 4)])
    g.add("bcast3", [cond(3, 1, 5), g.randn(1, 4, 5), g.randn(5)])
    g.add("scalar_y", [cond(17), g.randn(17), Const(np.array(-1.0, F32))])
    g.add("cond_small", [cond(1), g.randn(2, 3), g.randn(2, 3)])
    a, b = g.bcast_pair()
    g.add("random_%s_%s" % (shape_tag(a), shape_tag(b)), [cond(*a), g.randn(*b), g.randn(*a)])
    g.add("i64", [cond(2, 3), g.ints(-9, 9, 2, 3), g.ints(-9, 9, 1)])


UNARY_SHAPES = [(), (1,), (17,), (3, 5, 7), (2, 3, 4, 5)]
UNARY_DOMAIN = {  # value generator per op: (lo, hi) uniform, None = randn*3
    "Sqrt": (0.0, 9.0), "Log": (0.01, 20.0), "Exp": (-8.0, 8.0),
    "Asin": (-0.999, 0.999), "Acos": (-0.999, 0.999), "Atanh": (-0.999, 0.999),
    "Acosh": (1.0, 20.0), "Tan": (-1.4, 1.4),  # away from the poles at +-pi/2
}


def gen_unary(g, attrs_list=({},), opset=DEFAULT_OPSET, i64=False):
    for shape in UNARY_SHAPES + [g.shape(1, 5)]:
        for attrs in attrs_list:
            if g.op in UNARY_DOMAIN:
                x = g.uniform(*UNARY_DOMAIN[g.op], *shape)
            elif g.op == "Reciprocal":
                x = g.nonzero(*shape) if shape else np.float32(0.75)
            else:
                x = g.randn(*shape, scale=3.0)
            tag = "_".join("%s%s" % (k, v) for k, v in sorted(attrs.items()))
            g.add(shape_tag(shape) + (("_" + tag) if tag else ""),
                  [np.asarray(x, F32)], attrs, opset=opset)
    if i64:
        g.add("i64", [g.ints(-100, 100, 3, 4)], opset=opset)


def gen_simple_unary(g):
    gen_unary(g, i64=g.op in ("Neg", "Abs", "Identity"))


def gen_leakyrelu(g):
    gen_unary(g, ({}, {"alpha": 0.2}, {"alpha": 1.5}))


def gen_hardsigmoid(g):
    gen_unary(g, ({}, {"alpha": 0.5, "beta": 0.1}))


def gen_round(g):
    gen_unary(g)
    # halves round to even: -2.5 -> -2, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2
    g.add("halves", [np.arange(-5.0, 5.5, 0.5, dtype=F32)])


def gen_elu(g):  # Elu, Celu, ThresholdedRelu: alpha only
    gen_unary(g, ({}, {"alpha": 0.5}, {"alpha": 2.0}))


def gen_selu(g):
    gen_unary(g, ({}, {"alpha": 1.5, "gamma": 0.5}))


def gen_gelu(g):
    gen_unary(g, ({}, {"approximate": "tanh"}), opset=20)


def gen_clip(g):
    x = lambda: g.randn(3, 17, scale=3.0)  # noqa: E731
    g.add("no_bounds", [x()])
    g.add("both", [x(), Const(np.array(-1.0, F32)), Const(np.array(2.0, F32))])
    g.add("min_only", [x(), Const(np.array(0.0, F32))])
    g.add("max_only", [x(), None, Const(np.array(0.5, F32))])
    g.add("relu6", [g.randn(2, 3, 4, 5, scale=5.0), Const(np.array(0.0, F32)),
                    Const(np.array(6.0, F32))])
    g.add("runtime_bounds", [x(), np.array(-0.5, F32), np.array(0.5, F32)])
    g.add("min_gt_max", [x(), Const(np.array(1.0, F32)), Const(np.array(-1.0, F32))])
    g.add("opset13", [x(), Const(np.array(-1.0, F32)), Const(np.array(1.0, F32))], opset=13)
    g.add("scalar_x", [np.array(7.5, F32), Const(np.array(0.0, F32)),
                       Const(np.array(6.0, F32))])


def gen_cast(g):
    to = lambda t: {"to": t}  # noqa: E731
    frac = g.uniform(-100.0, 100.0, 3, 17)
    g.add("f32_i64", [frac], to(TensorProto.INT64))
    g.add("f32_i32", [frac], to(TensorProto.INT32))
    g.add("f32_bool", [np.array([0.0, -0.0, 1.0, -2.5, 0.1, 3.0], F32)], to(TensorProto.BOOL))
    g.add("f32_f16", [g.randn(4, 5, scale=10.0)], to(TensorProto.FLOAT16))
    g.add("f16_f32", [g.randn(2, 7).astype(np.float16)], to(TensorProto.FLOAT))
    g.add("f32_f64", [g.randn(9)], to(TensorProto.DOUBLE))
    g.add("f64_f32", [g.randn(9).astype(np.float64)], to(TensorProto.FLOAT))
    g.add("i64_f32", [g.ints(-1000, 1000, 2, 3)], to(TensorProto.FLOAT))
    g.add("i64_i32", [g.ints(-1000, 1000, 17)], to(TensorProto.INT32))
    g.add("i32_i64", [g.ints(-1000, 1000, 5, dtype=I32)], to(TensorProto.INT64))
    g.add("bool_f32", [g.rng.rand(3, 3) > 0.5], to(TensorProto.FLOAT))
    g.add("bool_i64", [g.rng.rand(4) > 0.5], to(TensorProto.INT64))
    g.add("i8_f32", [g.ints(-128, 128, 6, dtype=np.int8)], to(TensorProto.FLOAT))
    g.add("u8_f32", [g.ints(0, 256, 6, dtype=np.uint8)], to(TensorProto.FLOAT))
    g.add("f32_u8", [g.uniform(0.0, 255.0, 8)], to(TensorProto.UINT8))
    g.add("f32_f32", [g.randn(3)], to(TensorProto.FLOAT))
    g.add("opset13", [frac], to(TensorProto.INT64), opset=13)


def gen_matmul(g):
    for a, b in [((3, 4), (4, 5)), ((17,), (17, 3)), ((4, 17), (17,)),
                 ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((1, 3), (3, 1)),
                 ((5,), (5,)), ((3, 2, 7), (3, 7, 1))]:
        g.add("%s_%s" % ("x".join(map(str, a)), "x".join(map(str, b))),
              [g.randn(*a), g.randn(*b)])
    g.add("const_weight", [g.randn(2, 9, 16), Const(g.randn(16, 17))])
    for k in range(3):
        m, kk, n = (int(d) for d in g.rng.choice(g.DIMS, 3))
        ba, bb = g.bcast_pair() if k else ((), ())
        a, b = ba[:2] + (m, kk), bb[:2] + (kk, n)
        g.add("random%d_%s_%s" % (k, shape_tag(a), shape_tag(b)), [g.randn(*a), g.randn(*b)])


def gen_gemm(g):
    m, k, n = 3, 4, 5
    for ta in (0, 1):
        for tb in (0, 1):
            a = g.randn(*((k, m) if ta else (m, k)))
            b = g.randn(*((n, k) if tb else (k, n)))
            g.add("tA%d_tB%d" % (ta, tb), [a, Const(b), Const(g.randn(n))],
                  {"transA": ta, "transB": tb})
    a, b = g.randn(m, k), g.randn(k, n)
    g.add("no_c", [a, b])
    g.add("c_scalar", [a, b, Const(np.array(1.5, F32))])
    g.add("c_row", [a, b, g.randn(1, n)])
    g.add("c_col", [a, b, g.randn(m, 1)])
    g.add("c_full_alpha_beta", [a, b, g.randn(m, n)], {"alpha": 0.5, "beta": 2.0})
    g.add("linear_1x17", [g.randn(1, 17), Const(g.randn(3, 17)), Const(g.randn(3))],
          {"transB": 1})


def gen_conv(g):
    def conv(name, x_shape, w_shape, bias=True, **attrs):
        x = g.randn(*x_shape)
        w = g.randn(*w_shape, scale=0.5)
        ins = [x, Const(w)] + ([Const(g.randn(w_shape[0]))] if bias else [])
        g.add(name, ins, attrs)
    conv("3x3_pad1", (1, 3, 8, 8), (4, 3, 3, 3), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    conv("no_attrs_no_bias", (2, 2, 5, 5), (3, 2, 3, 3), bias=False)
    conv("stride2_odd", (1, 3, 9, 7), (5, 3, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
    conv("dilation2", (1, 2, 9, 9), (3, 2, 3, 3), dilations=[2, 2])
    conv("groups2", (2, 4, 6, 6), (6, 2, 3, 3), group=2, pads=[1, 1, 1, 1])
    conv("depthwise", (1, 6, 7, 7), (6, 1, 3, 3), group=6, pads=[1, 1, 1, 1])
    conv("asym_pads", (1, 2, 6, 5), (2, 2, 3, 3), pads=[0, 1, 2, 0])
    conv("same_upper_s2", (1, 3, 7, 8), (4, 3, 3, 3), auto_pad="SAME_UPPER", strides=[2, 2])
    conv("same_lower", (1, 3, 6, 6), (2, 3, 4, 4), auto_pad="SAME_LOWER")
    conv("valid", (1, 3, 7, 7), (2, 3, 3, 3), auto_pad="VALID", strides=[2, 1])
    conv("1x1", (3, 17, 4, 4), (8, 17, 1, 1))
    conv("kernel_3x1", (1, 2, 7, 5), (3, 2, 3, 1), pads=[1, 0, 1, 0])
    conv("1d", (2, 3, 17), (4, 3, 3), pads=[1, 1], strides=[2])
    conv("stem_7x7_s2", (1, 3, 17, 17), (4, 3, 7, 7), strides=[2, 2], pads=[3, 3, 3, 3])
    for k in range(6):
        n, grp = g.rng.randint(1, 3), int(g.rng.choice([1, 1, 2, 3]))
        cin, cout = grp * g.rng.randint(1, 4), grp * g.rng.randint(1, 3)
        ker = [int(v) for v in g.rng.randint(1, 4, 2)]
        st = [int(v) for v in g.rng.randint(1, 3, 2)]
        dil = [int(v) for v in g.rng.randint(1, 3, 2)]
        pads = [int(g.rng.randint(0, ker[i % 2])) for i in range(4)]
        hw = [int(v) for v in g.rng.randint(5, 12, 2)]
        conv("random%d_g%d_k%dx%d_s%d%d_d%d%d" % (k, grp, ker[0], ker[1], st[0], st[1],
                                                  dil[0], dil[1]),
             (n, cin) + tuple(hw), (cout, cin // grp) + tuple(ker), bias=bool(k % 2),
             group=grp, strides=st, dilations=dil, pads=pads)
    # Padding at the end only (top = left = 0): TensorFlow's "SAME" with an
    # even kernel at stride 1 or an odd one at stride 2 on an even size
    # (after the random cases, so their data stays the same).
    conv("end_pads_2x2_s1", (1, 3, 8, 9), (4, 3, 2, 2), pads=[0, 0, 1, 1])
    conv("end_pads_3x3_s2", (1, 3, 10, 12), (4, 3, 3, 3), strides=[2, 2], pads=[0, 0, 1, 1])
    conv("bottom_pad_only", (2, 2, 7, 6), (3, 2, 3, 3), pads=[0, 0, 2, 0])
    conv("right_pad_only_s2", (1, 2, 7, 8), (3, 2, 3, 3), strides=[2, 2], pads=[0, 0, 0, 1])
    conv("depthwise_end_pads_s2", (1, 8, 10, 10), (8, 1, 3, 3), group=8, strides=[2, 2],
         pads=[0, 0, 1, 1])
    conv("grouped_dilated_end_pads", (1, 4, 9, 9), (6, 2, 3, 3), group=2, dilations=[2, 2],
         pads=[0, 0, 3, 1])


def gen_batchnorm(g):
    def bn(name, shape, opset=DEFAULT_OPSET, **attrs):
        c = shape[1]
        stats = [Const(g.uniform(0.5, 1.5, c)), Const(g.randn(c, scale=0.1)),
                 Const(g.randn(c, scale=0.2)), Const(g.uniform(0.5, 2.0, c))]
        g.add(name, [g.randn(*shape)] + stats, attrs, opset=opset)
    bn("nchw", (2, 3, 4, 5))
    bn("nc", (3, 17))
    bn("ncl", (1, 5, 9))
    bn("eps", (2, 4, 3, 3), epsilon=1e-2)
    bn("batch3_c1", (3, 1, 7, 7))
    bn("opset14", (1, 3, 2, 2), opset=14)


def gen_layernorm(g):
    def ln(name, shape, axis=-1, bias=True, n_out=1, **attrs):
        norm = shape[axis:] if axis < 0 else shape[axis:]
        ins = [g.randn(*shape, scale=2.0), Const(g.uniform(0.5, 1.5, *norm))]
        if bias:
            ins.append(Const(g.randn(*norm, scale=0.1)))
        g.add(name, ins, dict(attrs, axis=axis), n_out=n_out, opset=17)
    ln("last", (2, 3, 17))
    ln("axis1", (2, 3, 17), axis=1)
    ln("axis_neg2", (2, 3, 5), axis=-2)
    ln("no_bias", (4, 17), bias=False)
    ln("eps", (3, 16), epsilon=1e-3)
    ln("rank1", (17,))
    ln("mean_invstd", (2, 5, 8), n_out=3)


def gen_softmax(g):
    x = g.randn(2, 3, 17)
    for axis in (-1, 0, 1, 2, -2):
        g.add("axis%d" % axis, [x], {"axis": axis})
    g.add("default", [g.randn(1, 5)])
    g.add("large", [g.randn(3, 9, scale=100.0)])
    g.add("opset13_axis1", [g.randn(2, 3, 4)], {"axis": 1}, opset=13)
    g.add("rank1", [g.randn(17)])
    shape = g.shape(1, 4)
    g.add("random_" + shape_tag(shape), [g.randn(*shape, scale=4.0)],
          {"axis": int(g.rng.randint(-len(shape), len(shape)))})


def gen_reduce(g):
    x = g.randn(2, 3, 5)
    int_ok = g.op in ("ReduceSum", "ReduceMax")
    for axes in ([1], [0, 2], [-1], [0, 1, 2], None):
        for keep in (1, 0):
            ins = [x] + ([Const(np.array(axes, I64))] if axes is not None else [])
            g.add("axes%s_keep%d" % ("".join(map(str, axes)) if axes else "all", keep),
                  ins, {"keepdims": keep})
    g.add("noop_empty_axes", [x], {"noop_with_empty_axes": 1})
    g.add("rank4_hw", [g.randn(2, 3, 7, 9), Const(np.array([2, 3], I64))])
    g.add("size1", [g.randn(1, 1), Const(np.array([0], I64))], {"keepdims": 0})
    for k in range(2):
        shape = g.shape(1, 4)
        axes = sorted(g.rng.choice(len(shape), g.rng.randint(1, len(shape) + 1), replace=False))
        axes = [int(a) - len(shape) if g.rng.rand() < 0.5 else int(a) for a in axes]
        g.add("random%d_%s" % (k, shape_tag(shape)),
              [g.randn(*shape), Const(np.array(axes, I64))], {"keepdims": k % 2})
    if g.op == "ReduceSum":
        g.add("opset13_input_axes", [x, Const(np.array([1], I64))], opset=13)
    else:
        g.add("opset13_attr_axes", [x], {"axes": [1], "keepdims": 0}, opset=13)
        g.add("opset13_all", [x], {}, opset=13)
    if int_ok or g.op == "ReduceMean":
        g.add("i64", [g.ints(-20, 20, 3, 4), Const(np.array([1], I64))])


def gen_maxpool(g):
    def pool(name, shape, n_out=1, **attrs):
        g.add(name, [g.randn(*shape)], attrs, n_out=n_out)
    pool("k2s2", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
    pool("k3s1p1", (2, 2, 7, 9), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    pool("k3s2_ceil", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    pool("k3s2_floor_odd", (1, 2, 9, 9), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    pool("dilation2", (1, 1, 9, 9), kernel_shape=[2, 2], dilations=[2, 2])
    pool("same_upper", (1, 2, 7, 7), kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    pool("asym_pads", (1, 1, 6, 5), kernel_shape=[2, 3], pads=[1, 0, 0, 2])
    pool("1d", (2, 3, 17), kernel_shape=[3], strides=[2])
    pool("with_indices", (1, 2, 4, 6), n_out=2, kernel_shape=[2, 2], strides=[2, 2])
    for k in range(3):
        shape, attrs = random_pool(g)
        pool("random%d" % k, shape, **attrs)


def gen_avgpool(g):
    def pool(name, shape, **attrs):
        g.add(name, [g.randn(*shape)], attrs)
    pool("k2s2", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
    pool("k3p1_excl_pad", (2, 2, 7, 9), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    pool("k3p1_incl_pad", (1, 2, 5, 5), kernel_shape=[3, 3], pads=[1, 1, 1, 1],
         count_include_pad=1)
    pool("k3s2_ceil", (1, 3, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    pool("same_upper", (1, 2, 7, 7), kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    pool("valid", (1, 1, 7, 6), kernel_shape=[2, 3], auto_pad="VALID")
    pool("1d", (2, 3, 17), kernel_shape=[3], strides=[2])
    for k in range(3):
        shape, attrs = random_pool(g)
        attrs["count_include_pad"] = int(g.rng.randint(0, 2))
        pool("random%d" % k, shape, **attrs)


def random_pool(g):
    """A random 2-D pooling config; ceil_mode only where no window can start
    in the padding (the case opset 22 redefined)."""
    ker = [int(v) for v in g.rng.randint(1, 4, 2)]
    st = [int(min(v, ker[i])) for i, v in enumerate(g.rng.randint(1, 4, 2))]
    ceil = int(g.rng.rand() < 0.5)
    pads = [0] * 4 if ceil else [int(g.rng.randint(0, ker[i % 2])) for i in range(4)]
    hw = tuple(int(v) for v in g.rng.randint(4, 12, 2))
    attrs = {"kernel_shape": ker, "strides": st, "pads": pads, "ceil_mode": ceil}
    return (int(g.rng.randint(1, 3)), int(g.rng.randint(1, 4))) + hw, attrs


def gen_globalavgpool(g):
    for shape in ((2, 3, 5, 7), (1, 17, 1, 1), (2, 3, 9), (1, 4, 16, 16)):
        g.add("x".join(map(str, shape)), [g.randn(*shape)])


def gen_reshape(g):
    x = g.randn(2, 3, 4)
    for shape in ([6, 4], [-1], [0, -1], [2, 0, 2, 2], [1, 24, 1], [4, -1, 3], [24]):
        g.add("to_" + "_".join(str(s) for s in shape), [x, Const(np.array(shape, I64))])
    g.add("i64_data", [g.ints(-9, 9, 3, 2), Const(np.array([2, 3], I64))])
    g.add("bool_data", [g.rng.rand(4, 1) > 0.5, Const(np.array([2, 2], I64))])
    g.add("scalar_to_1", [np.array(3.5, F32), Const(np.array([1, 1], I64))])


def gen_transpose(g):
    g.add("default", [g.randn(2, 3, 4)])
    for perm in ([1, 0], [0, 2, 3, 1], [0, 3, 1, 2], [2, 0, 1], [3, 2, 1, 0]):
        shape = (3, 17) if len(perm) == 2 else (2, 3, 4, 5)[:len(perm)]
        g.add("perm" + "".join(map(str, perm)), [g.randn(*shape)], {"perm": perm})
    g.add("i64", [g.ints(-9, 9, 2, 3, 1)], {"perm": [2, 0, 1]})
    g.add("size1_dims", [g.randn(1, 5, 1, 3)], {"perm": [0, 2, 1, 3]})
    for k in range(3):
        shape = g.shape(2, 5)
        perm = [int(p) for p in g.rng.permutation(len(shape))]
        g.add("random%d_%s" % (k, shape_tag(shape)), [g.randn(*shape)], {"perm": perm})


def gen_flatten(g):
    x = g.randn(2, 3, 4, 5)
    for axis in (0, 1, 2, 3, 4, -1, -3):
        g.add("axis%d" % axis, [x], {"axis": axis})
    g.add("default_i64", [g.ints(0, 5, 3, 2, 2)])


def gen_squeeze(g):
    x = g.randn(1, 3, 1, 5, 1)
    g.add("all", [x])
    for axes in ([0], [-1], [0, 2], [4, 0]):
        g.add("axes" + "_".join(map(str, axes)), [x, Const(np.array(axes, I64))])
    g.add("opset13", [x, Const(np.array([2], I64))], opset=13)
    g.add("to_scalar", [g.randn(1, 1)])


def gen_unsqueeze(g):
    x = g.randn(3, 5)
    for axes in ([0], [-1], [1, 3], [3, 0], [2]):
        g.add("axes" + "_".join(map(str, axes)), [x, Const(np.array(axes, I64))])
    g.add("scalar", [np.array(2.0, F32), Const(np.array([0], I64))])
    g.add("i64", [g.ints(0, 9, 4), Const(np.array([0], I64))], opset=13)


def gen_concat(g):
    g.add("axis0", [g.randn(2, 3), g.randn(1, 3), g.randn(4, 3)], {"axis": 0})
    g.add("axis1", [g.randn(2, 3), g.randn(2, 17)], {"axis": 1})
    g.add("axis_neg1", [g.randn(2, 3, 1), g.randn(2, 3, 2), g.randn(2, 3, 1), g.randn(2, 3, 3)],
          {"axis": -1})
    g.add("one_input", [g.randn(3, 4)], {"axis": 1})
    g.add("const_part", [g.randn(2, 2), Const(g.randn(2, 5))], {"axis": 1})
    g.add("i64_1d", [g.ints(0, 9, 1), Const(np.array([16, 4, 4], I64))], {"axis": 0})
    g.add("4d_channels", [g.randn(1, 3, 4, 4), g.randn(1, 5, 4, 4)], {"axis": 1})
    for k in range(2):
        shape = g.shape(1, 4)
        axis = int(g.rng.randint(0, len(shape)))
        parts = []
        for _ in range(g.rng.randint(2, 5)):
            s = list(shape)
            s[axis] = int(g.rng.choice(g.DIMS))
            parts.append(g.randn(*s))
        g.add("random%d_axis%d" % (k, axis), parts, {"axis": axis})


def gen_split(g):
    x = g.randn(6, 4)
    g.add("equal_axis0_opset13", [x], {"axis": 0}, n_out=3, opset=13)
    g.add("sizes_opset13", [x, Const(np.array([1, 5], I64))], {"axis": 0}, n_out=2, opset=13)
    g.add("num_outputs", [x], {"axis": 1, "num_outputs": 2}, n_out=2)
    g.add("uneven_num_outputs", [g.randn(2, 7)], {"axis": 1, "num_outputs": 3}, n_out=3)
    g.add("sizes_neg_axis", [g.randn(2, 3, 17), Const(np.array([5, 1, 11], I64))],
          {"axis": -1}, n_out=3)
    g.add("qkv", [g.randn(2, 5, 12), Const(np.array([4, 4, 4], I64))], {"axis": 2}, n_out=3)
    g.add("i64_one_output", [g.ints(0, 9, 4)], {"axis": 0, "num_outputs": 1}, n_out=1)


def gen_slice(g):
    x = g.randn(5, 7, 9)

    def sl(name, starts, ends, axes=None, steps=None, data=None):
        ins = [x if data is None else data, Const(np.array(starts, I64)),
               Const(np.array(ends, I64))]
        if axes is not None or steps is not None:
            ins.append(Const(np.array(axes, I64)) if axes is not None else None)
        if steps is not None:
            ins.append(Const(np.array(steps, I64)))
        g.add(name, ins)
    sl("basic", [1, 2], [4, 6], [0, 1])
    sl("no_axes", [0, 1, 2], [5, 6, 8])
    sl("neg_starts", [-3], [-1], [2])
    sl("end_max", [2], [INT64_MAX], [1])
    sl("out_of_bounds", [-100, 3], [100, 1000], [0, 2])
    sl("step2", [0], [9], [2], [2])
    sl("step3_odd", [1, 0], [7, 5], [1, 0], [3, 2])
    sl("neg_step_reverse", [-1], [-INT64_MAX], [1], [-1])
    sl("neg_step2", [8, 4], [0, -6], [2, 0], [-2, -1])
    sl("neg_axes", [1], [3], [-2])
    sl("empty_result", [3], [3], [0])
    sl("i64_shape_tail", [1], [INT64_MAX], [0], data=g.ints(0, 9, 4))
    for k in range(4):
        shape = g.shape(1, 4)
        axes = [int(a) for a in g.rng.permutation(len(shape))[:g.rng.randint(1, len(shape) + 1)]]
        starts, ends, steps = [], [], []
        for a in axes:
            d = shape[a]
            step = int(g.rng.choice([1, 1, 2, 3, -1, -2]))
            starts.append(int(g.rng.randint(-d - 2, d + 2)))
            ends.append(int(g.rng.randint(-d - 2, d + 2)))
            steps.append(step)
        sl("random%d_%s" % (k, shape_tag(shape)), starts, ends, axes, steps,
           data=g.randn(*shape))


def gen_gather(g):
    data = g.randn(5, 4, 3)
    g.add("axis0_1d", [data, Const(np.array([0, 3, 1], I64))], {"axis": 0})
    g.add("axis1_scalar", [data, Const(np.array(2, I64))], {"axis": 1})
    g.add("axis_neg1_2d", [data, Const(np.array([[0, 2], [1, 1]], I64))], {"axis": -1})
    g.add("negative_indices", [data, Const(np.array([-1, -5], I64))], {"axis": 0})
    g.add("runtime_indices", [data, g.ints(0, 4, 2, 3)], {"axis": 1})
    g.add("i32_indices", [data, Const(np.array([2, 0], I32))], {"axis": 2})
    g.add("i64_data", [g.ints(0, 99, 4), Const(np.array(0, I64))], {"axis": 0})
    g.add("embedding", [Const(g.randn(17, 8)), g.ints(0, 17, 2, 5)], {"axis": 0})
    for k in range(2):
        shape = g.shape(1, 3)
        axis = int(g.rng.randint(0, len(shape)))
        ind = g.ints(-shape[axis], shape[axis], *g.shape(0, 2, 64))
        g.add("random%d_%s_axis%d" % (k, shape_tag(shape), axis),
              [g.randn(*shape), Const(ind)], {"axis": axis})


def gen_shape(g):
    x = g.randn(2, 3, 4, 5)
    g.add("full", [x])
    g.add("start1", [x], {"start": 1})
    g.add("end_neg1", [x], {"end": -1})
    g.add("start_neg2", [x], {"start": -2})
    g.add("start1_end3", [x], {"start": 1, "end": 3})
    g.add("clip_range", [x], {"start": -10, "end": 10})
    g.add("scalar", [np.array(1.0, F32)])
    g.add("opset13", [g.randn(1, 17)], opset=13)


def gen_expand(g):
    def ex(name, x, shape):
        g.add(name, [x, Const(np.array(shape, I64))])
    ex("col_to_3d", g.randn(3, 1), [2, 3, 4])
    ex("one_to_n", g.randn(1), [17])
    ex("middle", g.randn(2, 1, 4), [2, 3, 4])
    ex("shape_smaller", g.randn(3, 4), [1, 1])
    ex("shape_ones_rank_up", g.randn(3, 1), [1, 1, 5])
    ex("scalar", np.array(2.5, F32), [2, 2])
    ex("i64", g.ints(0, 9, 1, 3), [4, 3])


def gen_pad(g):
    x = g.randn(1, 2, 4, 5)

    def pad(name, pads, mode=None, value=None, axes=None, data=None, opset=DEFAULT_OPSET):
        ins = [x if data is None else data, Const(np.array(pads, I64))]
        if value is not None or axes is not None:
            ins.append(Const(np.array(value, F32)) if value is not None else None)
        if axes is not None:
            ins.append(Const(np.array(axes, I64)))
        g.add(name, ins, {"mode": mode} if mode else {}, opset=opset)
    pad("constant_zero", [0, 0, 1, 2, 0, 0, 2, 1])
    pad("constant_value", [0, 1, 1, 0, 0, 0, 1, 3], value=1.5)
    pad("reflect", [0, 0, 2, 1, 0, 0, 1, 3], mode="reflect")
    pad("edge", [0, 0, 3, 0, 0, 0, 0, 4], mode="edge")
    pad("wrap", [0, 0, 1, 2, 0, 0, 2, 1], mode="wrap", opset=19)
    pad("negative_crop", [0, 0, -1, 1, 0, 0, -2, 0])
    pad("axes", [1, 2, 0, 1], axes=[2, 3])
    pad("neg_axes_value", [2, 2], value=-3.0, axes=[-1])
    pad("1d_reflect", [2, 3], mode="reflect", data=g.randn(7))
    pad("i64_data", [1, 1], data=g.ints(0, 9, 3))
    for k in range(3):
        shape = g.shape(1, 4, 1024)
        mode = ("constant", "reflect", "edge")[k]
        hi = [d - 1 if mode == "reflect" else 3 for d in shape]  # reflect: pad < dim
        pads = [int(g.rng.randint(0, h + 1)) for h in hi] * 2
        pads = [int(g.rng.randint(0, h + 1)) for h in hi] + pads[len(shape):]
        pad("random_%s_%s" % (mode, shape_tag(shape)), pads, mode=mode, data=g.randn(*shape))


def gen_constant(g):
    # A Constant node consumed by Add, and a graph whose output is constant.
    value = g.randn(3, 4)
    for name, attrs in [("tensor", {"value": numpy_helper.from_array(value, "v")}),
                        ("value_float", {"value_float": 2.5}),
                        ("value_floats", {"value_floats": [1.0, -2.0, 3.0, 0.5]}),
                        ("value_int", {"value_int": 7}),
                        ("value_ints", {"value_ints": [1, 2, 3, 4]})]:
        c = helper.make_node("Constant", [], ["c"], **attrs)
        dtype = I64 if "int" in name else F32
        shape = {"tensor": (3, 4), "value_float": (), "value_int": ()}.get(name, (4,))
        x = (g.ints(-9, 9, *shape) if dtype == I64 else g.randn(*shape)).astype(dtype)
        add = helper.make_node("Add", ["x0", "c"], ["y0"])
        g.graph("add_" + name, [c, add], {"x0": x}, {}, ["y0"])
    c = helper.make_node("Constant", [], ["y0"], value=numpy_helper.from_array(g.randn(2, 3), "v"))
    g.graph("output_only", [c], {}, {}, ["y0"])


def gen_constantofshape(g):
    def cos(name, attrs, x):
        nodes = [helper.make_node("Shape", ["x0"], ["s"]),
                 helper.make_node("ConstantOfShape", ["s"], ["y0"], **attrs)]
        g.graph(name, nodes, {"x0": x}, {}, ["y0"])
    cos("default_zero", {}, g.randn(2, 3))
    cos("f32_value", {"value": numpy_helper.from_array(np.array([2.5], F32), "v")}, g.randn(4))
    cos("i64_value", {"value": numpy_helper.from_array(np.array([7], I64), "v")}, g.randn(1, 3, 1))
    cos("bool_value", {"value": numpy_helper.from_array(np.array([True]), "v")}, g.randn(3))
    g.add("const_shape", [Const(np.array([2, 17], I64))],
          {"value": numpy_helper.from_array(np.array([-1.0], F32), "v")})


def gen_range(g):
    def rng(name, start, limit, delta, dtype):
        g.add(name, [Const(np.array(start, dtype)), Const(np.array(limit, dtype)),
                     Const(np.array(delta, dtype))])
    rng("f32", 0.0, 5.0, 0.7, F32)
    rng("f32_neg_delta", 3.0, -2.0, -0.5, F32)
    rng("i64", 10, 2, -3, I64)
    rng("i64_unit", 0, 17, 1, I64)
    rng("i64_empty", 5, 5, 1, I64)
    rng("i32", -4, 9, 2, I32)
    # torch.arange(x.size(1)): the limit comes from the input's shape.
    nodes = [helper.make_node("Shape", ["x0"], ["s"]),
             helper.make_node("Gather", ["s", "i1"], ["n"], axis=0),
             helper.make_node("Range", ["zero", "n", "one"], ["y0"])]
    inits = {"i1": np.array(1, I64), "zero": np.array(0, I64), "one": np.array(1, I64)}
    g.graph("arange_of_shape", nodes, {"x0": g.randn(2, 13)}, inits, ["y0"])


# ==========================================================================
# Wide generators: the sizes vectorized kernels get wrong (registered in
# WIDE_GENERATORS).  1000 = 62 x 16 + 8, 1001 and 33 leave a 1-lane tail at
# 16, 8 and 4 lanes; reductions and contractions run over ~1000 elements.

WIDE_SHAPES = [(1000,), (17, 33), (3, 1001)]
# Value sweeps over each transcendental's interesting range: both branches
# of the cpu backend's tanh (|x| < 0.625) and erf (|x| < 1), exp near
# overflow and underflow, sigmoid/softplus saturation.
SWEEPS = {
    "Exp": (-87.0, 88.0), "Log": (1e-3, 1e3), "Sqrt": (0.0, 100.0), "Tanh": (-10.0, 10.0),
    "Erf": (-5.0, 5.0), "Sigmoid": (-20.0, 20.0), "Softplus": (-20.0, 20.0),
    "Gelu": (-8.0, 8.0), "HardSigmoid": (-8.0, 8.0), "HardSwish": (-8.0, 8.0),
    "Reciprocal": (0.01, 100.0), "Softsign": (-1e4, 1e4),
    "Sin": (-100.0, 100.0), "Cos": (-100.0, 100.0), "Tan": (-1.5, 1.5),
    "Asin": (-1.0, 1.0), "Acos": (-1.0, 1.0), "Atanh": (-0.999, 0.999),
    "Acosh": (1.0, 1e4), "Asinh": (-1e4, 1e4), "Sinh": (-88.0, 88.0),
    "Cosh": (-88.0, 88.0), "Elu": (-20.0, 20.0), "Selu": (-20.0, 20.0),
    "Celu": (-20.0, 20.0), "Mish": (-20.0, 20.0),
}


# IEEE special values and range edges: signed zeros, infinities, NaN,
# denormals, the largest floats, exp's overflow/underflow thresholds, the
# polynomial branch points of tanh (0.625) and erf (1).
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4028235e38,
                    -3.4028235e38, 88.7, 88.8, -87.5, -103.0, -104.5, 9.0, -9.0, 0.625,
                    -0.625, 1.0, -1.0, 0.5, 20.0, -20.0, 1e-20], F32)


def unary_value(g, shape):
    if g.op in UNARY_DOMAIN:
        return g.uniform(*UNARY_DOMAIN[g.op], *shape)
    if g.op == "Reciprocal":
        return g.nonzero(*shape)
    return g.randn(*shape, scale=3.0)


def wide_unary(g, attrs=None, opset=DEFAULT_OPSET):
    for shape in WIDE_SHAPES:
        g.add("wide_" + shape_tag(shape), [unary_value(g, shape)], attrs, opset=opset)
    lo, hi = SWEEPS.get(g.op, (-10.0, 10.0))
    g.add("sweep_%g_%g" % (lo, hi), [np.linspace(lo, hi, 1001, dtype=F32)], attrs, opset=opset)
    g.add("special", [SPECIAL], attrs, opset=opset)


def wide_leakyrelu(g):
    wide_unary(g, {"alpha": 0.2})


def wide_hardsigmoid(g):
    wide_unary(g, {"alpha": 0.5, "beta": 0.1})


def wide_selu(g):
    wide_unary(g, {"alpha": 1.5, "gamma": 0.5})


def wide_gelu(g):
    wide_unary(g, opset=20)
    g.add("wide_tanh_sweep", [np.linspace(-8.0, 8.0, 1001, dtype=F32)],
          {"approximate": "tanh"}, opset=20)


def wide_clip(g):
    g.add("wide_both", [g.randn(1000, scale=3.0), Const(np.array(-1.0, F32)),
                        Const(np.array(2.0, F32))])
    g.add("wide_min_only", [g.randn(3, 1001, scale=3.0), Const(np.array(0.0, F32))])
    g.add("wide_runtime", [g.randn(17, 33, scale=3.0), np.array(-0.5, F32),
                           np.array(0.5, F32)])
    g.add("special", [SPECIAL, Const(np.array(-1.0, F32)), Const(np.array(2.0, F32))])


def binary_operands(g, a_shape, b_shape):
    if g.op == "Div":
        return g.randn(*a_shape), g.nonzero(*b_shape)
    if g.op == "Pow":
        return g.uniform(0.2, 3.0, *a_shape), g.uniform(-2.0, 2.0, *b_shape)
    return g.randn(*a_shape), g.randn(*b_shape)


WIDE_BCAST = [((1000,), (1000,)), ((3, 1000), (1000,)), ((17, 1001), (17, 1)),
              ((1000, 1), (1, 33)), ((2, 33, 17), (1,)), ((1,), (1001,))]


def wide_binary(g):
    for a_shape, b_shape in WIDE_BCAST:
        a, b = binary_operands(g, a_shape, b_shape)
        g.add("wide_%s_%s" % (shape_tag(a_shape), shape_tag(b_shape)), [a, b])
    a, b = binary_operands(g, (33, 1000), (1000,))
    g.add("wide_const_rhs", [a, Const(b)])
    g.add("special", [SPECIAL.reshape(-1, 1), SPECIAL.reshape(1, -1)])  # every pair
    if g.op == "Pow":
        g.add("wide_square", [g.randn(1001), Const(np.array(2.0, F32))])
    else:
        lo = 1 if g.op == "Div" else -50
        g.add("wide_i64", [g.ints(lo, 100, 1001), g.ints(1, 9, 1001)])


def wide_variadic(g):
    g.add("wide_two", [g.randn(1000), g.randn(1000)])
    g.add("wide_three_bcast", [g.randn(3, 1001), g.randn(1001), g.randn(3, 1)])
    g.add("wide_33", [g.randn(17, 33), g.randn(1, 33)])
    g.add("special", [SPECIAL.reshape(-1, 1), SPECIAL.reshape(1, -1)])  # NaN on either side


def wide_compare(g):
    small = lambda *s: g.ints(-2, 3, *s).astype(F32)  # noqa: E731  (ties happen)
    g.add("wide_same", [small(1000), small(1000)])
    g.add("wide_bcast", [small(17, 1001), small(1, 1001)])
    g.add("wide_scalar", [g.randn(3, 33), Const(np.array(0.0, F32))])
    g.add("special", [SPECIAL.reshape(-1, 1), SPECIAL.reshape(1, -1)])


def wide_where(g):
    cond = lambda *s: g.rng.rand(*s) > 0.5  # noqa: E731
    g.add("wide_same", [cond(1000), g.randn(1000), g.randn(1000)])
    g.add("wide_bcast", [cond(3, 1001), g.randn(1001), g.randn(3, 1)])
    g.add("wide_33", [cond(17, 33), g.randn(17, 33), Const(np.array(0.5, F32))])


def wide_cast(g):
    to = lambda t: {"to": t}  # noqa: E731
    g.add("wide_f32_i64", [g.uniform(-100.0, 100.0, 1000)], to(TensorProto.INT64))
    g.add("wide_i64_f32", [g.ints(-1000, 1000, 3, 1001)], to(TensorProto.FLOAT))
    g.add("wide_f32_bool", [g.ints(-1, 2, 17, 33).astype(F32)], to(TensorProto.BOOL))
    g.add("wide_bool_f32", [g.rng.rand(1001) > 0.5], to(TensorProto.FLOAT))


def wide_matmul(g):
    for a, b in [((3, 1000), (1000, 17)),        # k = 1000
                 ((1000, 17), (17, 33)),         # m = 1000
                 ((17, 33), (33, 1000)),         # n = 1000
                 ((1000,), (1000, 3)),           # vector x matrix
                 ((2, 1, 17, 65), (3, 65, 33))]:  # broadcast batch
        g.add("wide_%s_%s" % (shape_tag(a), shape_tag(b)), [g.randn(*a), g.randn(*b)])
    g.add("wide_const_weight", [g.randn(2, 17, 100), Const(g.randn(100, 33))])
    g.add("wide_const_k1001", [g.randn(5, 1001), Const(g.randn(1001, 17))])


def wide_gemm(g):
    g.add("wide_linear_k1000", [g.randn(17, 1000), Const(g.randn(33, 1000)),
                                Const(g.randn(33))], {"transB": 1})
    g.add("wide_m1000", [g.randn(1000, 17), Const(g.randn(17, 33)), g.randn(1, 33)])
    g.add("wide_tA_n1001", [g.randn(33, 3), g.randn(33, 1001), Const(np.array(0.5, F32))],
          {"transA": 1, "alpha": 1.5, "beta": 2.0})


def wide_conv(g):
    def conv(name, x_shape, w_shape, **attrs):
        # Kaiming scale: outputs stay O(1) whatever the reduction length.
        fan_in = int(np.prod(w_shape[1:]))
        w = g.randn(*w_shape, scale=float(np.sqrt(2.0 / fan_in)))
        g.add(name, [g.randn(*x_shape), Const(w), Const(g.randn(w_shape[0]))], attrs)
    conv("wide_k1008", (1, 112, 9, 9), (17, 112, 3, 3), pads=[1, 1, 1, 1])
    conv("wide_33x31", (1, 17, 33, 31), (33, 17, 3, 3), pads=[1, 1, 1, 1])
    conv("wide_depthwise", (1, 33, 17, 17), (33, 1, 3, 3), group=33, pads=[1, 1, 1, 1])
    conv("wide_1x1_1000px", (2, 64, 25, 40), (17, 64, 1, 1))
    conv("wide_groups2_s2", (1, 34, 11, 13), (18, 17, 3, 3), group=2, strides=[2, 2])
    # end-only padding on the vector paths (odd widths: masked tails)
    conv("wide_end_pads_s2", (1, 17, 34, 66), (33, 17, 3, 3), strides=[2, 2], pads=[0, 0, 1, 1])
    conv("wide_depthwise_end_pads_s2", (1, 32, 34, 34), (32, 1, 3, 3), group=32,
         strides=[2, 2], pads=[0, 0, 1, 1])


def wide_batchnorm(g):
    for shape in ((2, 17, 33, 3), (1, 1000), (1, 33, 1001)):
        c = shape[1]
        stats = [Const(g.uniform(0.5, 1.5, c)), Const(g.randn(c, scale=0.1)),
                 Const(g.randn(c, scale=0.2)), Const(g.uniform(0.5, 2.0, c))]
        g.add("wide_" + shape_tag(shape), [g.randn(*shape)] + stats)


def wide_layernorm(g):
    for shape, axis in (((17, 1000), -1), ((3, 33), -1), ((2, 1001), 1), ((5, 17, 33), 1)):
        norm = shape[axis:]
        ins = [g.randn(*shape, scale=2.0) + 3.0, Const(g.uniform(0.5, 1.5, *norm)),
               Const(g.randn(*norm, scale=0.1))]
        g.add("wide_%s_axis%d" % (shape_tag(shape), axis), ins, {"axis": axis}, opset=17)


def wide_softmax(g):
    g.add("wide_row1000", [g.randn(3, 1000)], {"axis": -1})
    g.add("wide_axis0", [g.randn(1000, 17)], {"axis": 0})
    g.add("wide_middle", [g.randn(2, 1001, 3)], {"axis": 1})
    g.add("wide_large", [g.randn(5, 33, scale=30.0)], {"axis": -1})
    x = g.randn(3, 21)
    x[0, 5], x[1, :20], x[2, 0] = -np.inf, -np.inf, np.nan  # masked; one survivor; NaN row
    g.add("special", [x], {"axis": -1})


def wide_reduce(g):
    def red(name, x, axes, keep=1):
        g.add(name, [x, Const(np.array(axes, I64))], {"keepdims": keep})
    red("wide_all1000", g.randn(1000), [0])
    red("wide_rows", g.randn(17, 1000), [-1])
    red("wide_cols", g.randn(1000, 17), [0], keep=0)
    red("wide_middle", g.randn(3, 1001, 3), [1], keep=0)
    red("wide_outer_inner", g.randn(2, 33, 17), [0, 2])
    # NaN and infinities inside rows (in a vector body and in a tail) and
    # down columns.  ORT's ReduceMax ignores NaN; ref's (numpy's) returns it.
    x = g.randn(4, 37)
    x[0, 3], x[1, 36], x[2, 20], x[3, 0] = np.nan, np.nan, np.inf, -np.inf
    oracles = ["ref"] if g.op == "ReduceMax" else None
    g.add("special_rows", [x, Const(np.array([1], I64))], oracles=oracles)
    g.add("special_cols", [x, Const(np.array([0], I64))], oracles=oracles)


def wide_maxpool(g):
    g.add("wide_k3s2p1", [g.randn(1, 17, 33, 31)],
          {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    g.add("wide_1d", [g.randn(2, 3, 1000)], {"kernel_shape": [3], "strides": [1]})
    g.add("wide_k2s2", [g.randn(1, 33, 17, 17)], {"kernel_shape": [2, 2], "strides": [2, 2]})


def wide_avgpool(g):
    g.add("wide_k3s2p1", [g.randn(1, 17, 33, 31)],
          {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]})
    g.add("wide_1d_incl_pad", [g.randn(2, 3, 1000)],
          {"kernel_shape": [5], "pads": [2, 2], "count_include_pad": 1})
    g.add("wide_k2s2", [g.randn(1, 33, 17, 17)], {"kernel_shape": [2, 2], "strides": [2, 2]})


def wide_globalavgpool(g):
    for shape in ((1, 17, 33, 31), (2, 1000, 1, 1), (1, 3, 1000)):
        g.add("wide_" + shape_tag(shape), [g.randn(*shape)])


def wide_transpose(g):
    g.add("wide_17x1000", [g.randn(17, 1000)], {"perm": [1, 0]})
    g.add("wide_nchw_nhwc", [g.randn(3, 33, 17, 5)], {"perm": [0, 2, 3, 1]})
    g.add("wide_1001x3", [g.randn(1001, 3)], {"perm": [1, 0]})


def wide_data_movement(g):
    """One or two wide cases of each data-movement op (host kernels on cpu)."""
    x = g.randn(1000)
    i64 = lambda v: Const(np.array(v, I64))  # noqa: E731
    op = g.op
    if op == "Reshape":
        g.add("wide_1000_to_8x125", [x, i64([8, 125])])
        g.add("wide_3x1001_flat", [g.randn(3, 1001), i64([-1])])
    elif op == "Flatten":
        g.add("wide_axis2", [g.randn(2, 17, 33)], {"axis": 2})
    elif op == "Squeeze":
        g.add("wide", [g.randn(1, 1000, 1), i64([0, 2])])
    elif op == "Unsqueeze":
        g.add("wide", [x, i64([0, 2])])
    elif op == "Concat":
        g.add("wide_1000_1001", [x, g.randn(1001)], {"axis": 0})
        g.add("wide_rows", [g.randn(3, 33), g.randn(3, 1000)], {"axis": 1})
    elif op == "Split":
        g.add("wide_uneven", [x], {"axis": 0, "num_outputs": 3}, n_out=3)
    elif op == "Slice":
        g.add("wide_step3", [x, i64([1]), i64([1000]), i64([0]), i64([3])])
        g.add("wide_reverse_rows", [g.randn(17, 1001), i64([-1]), i64([-INT64_MAX]),
                                    i64([1]), i64([-1])])
    elif op == "Gather":
        g.add("wide_rows", [g.randn(1000, 17), Const(g.ints(-1000, 1000, 33))], {"axis": 0})
        g.add("wide_cols", [g.randn(17, 1000), g.ints(0, 1000, 1001)], {"axis": 1})
    elif op == "Shape":
        g.add("wide", [x])
    elif op == "Expand":
        g.add("wide_rows", [g.randn(1, 1000), i64([3, 1000])])
        g.add("wide_cols", [g.randn(1001, 1), i64([1001, 17])])
    elif op == "Pad":
        g.add("wide_constant", [x, i64([3, 5]), Const(np.array(1.5, F32))])
        g.add("wide_reflect", [g.randn(3, 1000), i64([0, 2, 0, 7])], {"mode": "reflect"})
    elif op == "Constant":
        c = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
            g.randn(1000), "v"))
        add = helper.make_node("Add", ["x0", "c"], ["y0"])
        g.graph("wide_add", [c, add], {"x0": x}, {}, ["y0"])
    elif op == "ConstantOfShape":
        nodes = [helper.make_node("Shape", ["x0"], ["s"]),
                 helper.make_node("ConstantOfShape", ["s"], ["y0"],
                                  value=numpy_helper.from_array(np.array([0.5], F32), "v"))]
        g.graph("wide", nodes, {"x0": g.randn(1000, 17)}, {}, ["y0"])
    elif op == "Range":
        g.add("wide_f32", [Const(np.array(0.0, F32)), Const(np.array(100.0, F32)),
                           Const(np.array(0.1, F32))])
        g.add("wide_i64", [Const(np.array(-3, I64)), Const(np.array(998, I64)),
                           Const(np.array(1, I64))])
    else:
        raise ValueError("no wide data-movement case for %s" % op)


GENERATORS = {}
for _op in ("Add", "Sub", "Mul", "Div", "Pow"):
    GENERATORS[_op] = gen_binary
for _op in ("Max", "Min"):
    GENERATORS[_op] = gen_variadic
for _op in ("Equal", "Less", "Greater"):
    GENERATORS[_op] = gen_compare
for _op in ("Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Tanh", "Sigmoid",
            "Relu", "HardSwish", "Softplus", "Softsign", "Identity",
            "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
            "Acosh", "Atanh", "Floor", "Ceil", "Sign", "Mish"):
    GENERATORS[_op] = gen_simple_unary
for _op in ("Softmax", "LogSoftmax"):
    GENERATORS[_op] = gen_softmax
for _op in ("ReduceMean", "ReduceSum", "ReduceMax"):
    GENERATORS[_op] = gen_reduce
GENERATORS.update({
    "Where": gen_where, "LeakyRelu": gen_leakyrelu, "Clip": gen_clip,
    "HardSigmoid": gen_hardsigmoid, "Gelu": gen_gelu, "Cast": gen_cast,
    "MatMul": gen_matmul, "Gemm": gen_gemm, "Conv": gen_conv,
    "BatchNormalization": gen_batchnorm, "LayerNormalization": gen_layernorm,
    "MaxPool": gen_maxpool, "AveragePool": gen_avgpool,
    "GlobalAveragePool": gen_globalavgpool, "Reshape": gen_reshape,
    "Transpose": gen_transpose, "Flatten": gen_flatten, "Squeeze": gen_squeeze,
    "Unsqueeze": gen_unsqueeze, "Concat": gen_concat, "Split": gen_split,
    "Slice": gen_slice, "Gather": gen_gather, "Shape": gen_shape, "Expand": gen_expand,
    "Pad": gen_pad, "Constant": gen_constant, "ConstantOfShape": gen_constantofshape,
    "Range": gen_range, "Round": gen_round, "Elu": gen_elu, "Celu": gen_elu,
    "ThresholdedRelu": gen_elu, "Selu": gen_selu,
})

WIDE_GENERATORS = {}
for _op in ("Add", "Sub", "Mul", "Div", "Pow"):
    WIDE_GENERATORS[_op] = wide_binary
for _op in ("Max", "Min"):
    WIDE_GENERATORS[_op] = wide_variadic
for _op in ("Equal", "Less", "Greater"):
    WIDE_GENERATORS[_op] = wide_compare
for _op in ("Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Tanh", "Sigmoid",
            "Relu", "HardSwish", "Softplus", "Softsign", "Identity",
            "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
            "Acosh", "Atanh", "Floor", "Ceil", "Sign", "Mish"):
    WIDE_GENERATORS[_op] = wide_unary
for _op in ("Softmax", "LogSoftmax"):
    WIDE_GENERATORS[_op] = wide_softmax
for _op in ("ReduceMean", "ReduceSum", "ReduceMax"):
    WIDE_GENERATORS[_op] = wide_reduce
for _op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice",
            "Gather", "Shape", "Expand", "Pad", "Constant", "ConstantOfShape", "Range"):
    WIDE_GENERATORS[_op] = wide_data_movement
WIDE_GENERATORS.update({
    "Where": wide_where, "LeakyRelu": wide_leakyrelu, "Clip": wide_clip,
    "HardSigmoid": wide_hardsigmoid, "Gelu": wide_gelu, "Cast": wide_cast,
    "MatMul": wide_matmul, "Gemm": wide_gemm, "Conv": wide_conv,
    "BatchNormalization": wide_batchnorm, "LayerNormalization": wide_layernorm,
    "MaxPool": wide_maxpool, "AveragePool": wide_avgpool,
    "GlobalAveragePool": wide_globalavgpool, "Transpose": wide_transpose,
    "Round": wide_unary, "Elu": wide_unary, "Celu": wide_unary,
    "ThresholdedRelu": wide_unary, "Selu": wide_selu,
})


# Generators of further op families live in tests/py/ortgen_*.py, one
# module per family, so that families added side by side touch no shared
# table. Each module's register(ns) adds to this module's GENERATORS,
# WIDE_GENERATORS, TOL and TOL_CPU_REF (ns is this module).
nccutil.load_extensions("ortgen_", sys.modules[__name__])


def cases_of(op, wide=True, wide_only=False):
    """The op's cases; the wide ones always draw the same data (they run
    after the others on the op's random stream)."""
    g = Gen(op)
    GENERATORS[op](g)
    n_basic = len(g.cases)
    if wide or wide_only:
        WIDE_GENERATORS[op](g)
    return g.cases[n_basic:] if wide_only else g.cases


def abs_model(model):
    """The model with every float initializer replaced by its magnitude."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for init in m.graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype.kind == "f":
            init.CopyFrom(numpy_helper.from_array(np.abs(a), init.name))
    for node in m.graph.node:  # Gemm's alpha/beta
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.FLOAT:
                attr.f = abs(attr.f)
    return m


def tolerance(op, target, oracle, case, name, want):
    """(rtol, atol) of output `name` of `case` against `oracle`'s `want`;
    atol may be a per-element array (see TOL_CPU_REF)."""
    if want.dtype.kind in "biu":
        return TOL_INT.get(op, EXACT) if oracle == "ort" else EXACT
    if oracle == "ort" or target not in TOL_VS_REF:
        return TOL.get(op, EXACT)
    rtol, atol, scale = TOL_VS_REF[target].get(op, (0.0, 0.0, "abs"))
    # Scales count finite values only: an infinite or NaN element must match
    # exactly (same infinity, NaN for NaN).
    x = finite_abs(next(iter(case.feeds.values()))) if case.feeds else None
    if scale == "x":
        return rtol, atol * np.broadcast_to(x, want.shape)
    if scale == "spread":
        finite = next(iter(case.feeds.values()))
        finite = finite[np.isfinite(finite)].astype(np.float64)
        spread = float(finite.max() - finite.min()) if finite.size else 0.0
        return rtol + 2 * U * spread, atol
    if scale == "max":
        return rtol, atol * float(finite_abs(want).max(initial=0.0))
    if scale == "terms":
        feeds = {k: np.abs(v) if v.dtype.kind == "f" else v for k, v in case.feeds.items()}
        terms = nccutil.run_ort(abs_model(case.model), feeds)[name]
        return rtol, atol * finite_abs(terms)
    return rtol, atol


def finite_abs(a):
    a = np.asarray(a).astype(np.float64)
    return np.where(np.isfinite(a), np.abs(a), 0.0)


def oracle_outputs(oracle, ncc, case, names, workdir):
    """({name: array}, None) from one oracle, or (None, why it failed)."""
    if oracle == "ort":
        try:
            return nccutil.run_ort(case.model, case.feeds), None
        except Exception as e:  # a generator bug, not an ncc one: still a failure
            return None, "ONNX Runtime rejected the case: %s" % str(e).splitlines()[0]
    r = nccutil.run_ncc(ncc, case.model, case.feeds, names, workdir, target="ref")
    if r.rc != 0 or r.missing:
        return None, "oracle ncc --target=ref: " + r.describe()
    return r.outputs, None


def run_case(ncc, case, workdir, target, oracles, errors):
    """None when ncc matches every oracle, else the reason.  `errors` maps
    (op, oracle) to the largest error seen, in units of the tolerance."""
    names = [o.name for o in case.model.graph.output]
    wants = {}  # oracle -> {output name: array}
    oracles = [o for o in oracles if not case.oracles or o in case.oracles]
    for oracle in oracles:
        wants[oracle], why = oracle_outputs(oracle, ncc, case, names, workdir)
        if why:
            return why
    r = nccutil.run_ncc(ncc, case.model, case.feeds, names, workdir, target=target)
    if r.rc != 0 or r.missing:
        return r.describe()
    for oracle in oracles:
        for name in names:
            want = wants[oracle][name]
            rtol, atol = tolerance(case.op, target, oracle, case, name, want)
            why = nccutil.compare(want, r.outputs[name], rtol, atol)
            if why:
                return "output %s vs %s: %s" % (name, oracle, why)
            key = (case.op, oracle)
            errors[key] = max(errors.get(key, 0.0),
                              nccutil.tolerance_used(want, r.outputs[name], rtol, atol))
    return None


def parse_oracles(text):
    oracles = [o.strip() for o in text.split(",") if o.strip()]
    bad = [o for o in oracles if o not in ("ort", "ref")]
    if bad or not oracles:
        raise argparse.ArgumentTypeError("oracles are ort and ref, got %r" % text)
    return oracles


# On a compiling target, an op the target compiles no kernel for runs its
# reference kernel on the host: its results are ref's by construction, so
# its first cases check that path (host fallback, dtypes, a chain into
# compiled kernels) and the rest would repeat the ref run; --all-host-cases
# runs them all.
HOST_OP_CASES = 3


def runs_on_host(ncc, case, workdir, target):
    """Whether `ncc check --target` compiles no node of the case's model
    (an op with no kernel on the target; a view, Reshape and its kin, is not
    on the host)."""
    import json
    import subprocess
    path = os.path.join(workdir, "model.onnx")
    onnx.save(case.model, path)
    p = subprocess.run([ncc, "check", path, "--target=" + target, "--json"],
                       capture_output=True, text=True, timeout=600)
    try:
        r = json.loads(p.stdout)
    except ValueError:
        return False  # let the case itself report the problem
    return p.returncode == 0 and r.get("compiled_nodes", 1) == 0 and r.get("views", 0) == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    ap.add_argument("-k", dest="pattern", help="only ops matching this regex (full match)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    nccutil.add_target_arg(ap)
    ap.add_argument("--oracle", type=parse_oracles, default=["ort"],
                    help="what to compare against: ort, ref or ort,ref (default ort)")
    ap.add_argument("--no-wide", action="store_true",
                    help="leave out the wide (1000-element) cases")
    ap.add_argument("--wide-only", action="store_true",
                    help="run only the wide cases (the vector-tail checks)")
    ap.add_argument("--errors", action="store_true",
                    help="print each op's largest error as a fraction of its tolerance")
    ap.add_argument("--all-host-cases", action="store_true",
                    help="on a compiling target, run every case of ops it compiles no "
                         "kernel for (default: their first %d)" % HOST_OP_CASES)
    a = ap.parse_args()
    ops = nccutil.claimed_ops()
    missing = [op for op in ops if op not in GENERATORS or op not in WIDE_GENERATORS]
    ops = [op for op in ops if not a.pattern or re.fullmatch(a.pattern, op)]
    wide = not a.no_wide
    if a.list:
        for op in ops:
            if op not in missing:
                for c in cases_of(op, wide, a.wide_only):
                    print("%s.%s" % (op, c.name))
        return 0
    ncc = nccutil.find_ncc(a.ncc)
    nccutil.require_target(ncc, a.target)
    if a.target == "ref" and "ref" in a.oracle:
        ap.error("--oracle ref compares against the target itself; use --target cpu")

    results = collections.OrderedDict()
    failures = []
    errors = {}
    with nccutil.Workdir() as root:
        for op in ops:
            if op in missing:
                continue
            c = results[op] = collections.Counter()
            cases = cases_of(op, wide, a.wide_only)
            if a.target != "ref" and not a.all_host_cases and cases and \
                    runs_on_host(ncc, cases[0], nccutil.subdir(root, op + ".probe"), a.target):
                cases = cases[:HOST_OP_CASES]
                c["host"] = 1
            for case in cases:
                if case.oracles and not set(case.oracles) & set(a.oracle):
                    continue  # e.g. a ref-only case in a run against ORT
                label = "%s.%s" % (op, case.name)
                why = run_case(ncc, case, nccutil.subdir(root, label), a.target, a.oracle,
                               errors)
                c["fail" if why else "pass"] += 1
                if why:
                    failures.append((label, why))
                    print("FAIL %-40s %s" % (label, why))
                elif a.verbose:
                    print("PASS %s" % label)

    width = os.environ.get("NCC_VECTOR_WIDTH")
    print("\ntarget %s, oracle %s%s%s" % (a.target, ",".join(a.oracle),
                                         ", wide cases only" if a.wide_only else "",
                                         ", NCC_VECTOR_WIDTH=" + width if width else ""))
    head = "".join(" %9s" % ("err/tol " + o) for o in a.oracle) if a.errors else ""
    print("per op:                 passed failed" + head)
    for op, c in results.items():
        errs = "".join(" %9s" % ("%.3f" % errors[(op, o)] if (op, o) in errors else "-")
                       for o in a.oracle) if a.errors else ""
        print("  %-22s %6d %6d%s%s%s" % (op, c["pass"], c["fail"], errs,
                                         "   (host op: first cases)" if c["host"] else "",
                                         "   <-- FAIL" if c["fail"] else ""))
    for op in missing:
        print("  %-22s no generator or wide generator: add them to tests/py/diff_ort.py"
              "   <-- FAIL" % op)
    n_host = sum(c["host"] for c in results.values())
    if n_host:
        print("%d ops run on the host (no %s kernel; their cases are ref's, all run by "
              "--all-host-cases and by node_conformance.py --target %s)"
              % (n_host, a.target, a.target))
    passed = sum(c["pass"] for c in results.values())
    failed = sum(c["fail"] for c in results.values()) + len(missing)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
