#!/usr/bin/env python3
"""tests/py/opset_ort.py — every claimed op in the node forms of opsets 7 to
the installed onnx's newest, `ncc run --target=T` against ONNX Runtime.

The importer reads opsets 7..newest and rewrites each older node form into
the canonical (opset-21) IR (docs/IR-CONVENTIONS.md).  ONNX Runtime runs
every opset from 7 with each revision's own semantics, so it is the oracle
for the rewrites.  Three groups of cases:

  restamped  the first cases of each claimed op's diff_ort.py generator,
             re-stamped to the first opset of every revision of the op in
             7..newest (7 for what opset 7 already had), kept where onnx's
             checker (strict shape inference)
             accepts the node at that opset: the forms that did not change,
             run under each revision's semantics (Softmax-11 on axis=-1 is
             such a case; a non-last axis is one below).
  old forms  hand-written nodes in the forms only old opsets have:
             attributes that later became inputs (Clip-6 min/max and their
             FLT_MAX defaults, Slice-1 starts/ends/axes, Pad-2 pads/value,
             Squeeze/Unsqueeze-11 and Split-11 attributes, Reduce*-11 axes),
             Softmax/LogSoftmax (and Hardmax, TopK, Upsample, Resize once
             claimed) before 13, BatchNormalization-7 spatial and training
             outputs, Dropout-7/10 ratio, pool attributes by opset, ...
  refusals   models ncc must refuse: an opset below 7 or above the newest
             (exit 3 naming it), an attribute outside its opsets, an op
             used before the opset that added it (exit 2).

Usage: NCC=build/ncc python3 tests/py/opset_ort.py [-v] [-k REGEX] [--target cpu]
Prints "N passed, M failed"; exit 1 on any failure.
"""
import argparse
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402
import diff_ort as D  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

F32, I64 = np.float32, np.int64
MIN_OPSET = 7
NEWEST = onnx.defs.onnx_opset_version()
RESTAMP_CASES = 2  # first cases of each op's generator re-stamped
COMPOSITES = ["Dropout", "Sum"]  # ONNX ops the importer builds from others


def revisions(op):
    """Opsets in MIN_OPSET..NEWEST where `op`'s schema changed (the first
    one is where it first exists in that range)."""
    out = []
    for v in range(MIN_OPSET, NEWEST + 1):
        try:
            sv = onnx.defs.get_schema(op, v).since_version
        except Exception:  # the op does not exist yet at v
            continue
        if not out or onnx.defs.get_schema(op, out[-1]).since_version != sv:
            out.append(v)
    return out


def restamp(model, opset):
    """`model` at `opset`, or None where onnx's checker refuses it there."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.opset_import[:]
    m.opset_import.extend([helper.make_opsetid("", opset)])
    m.ir_version = helper.find_min_ir_version_for(list(m.opset_import))
    for vi in list(m.graph.value_info):
        m.graph.value_info.remove(vi)
    if m.ir_version < 4:  # opsets 7-9: initializers are graph inputs too
        known = {i.name for i in m.graph.input}
        m.graph.input.extend([helper.make_tensor_value_info(t.name, t.data_type, t.dims)
                              for t in m.graph.initializer if t.name not in known])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onnx.checker.check_model(m, full_check=True)
    except Exception:
        return None
    return m


def ort_loads(model):
    """Whether onnxruntime builds a session for the model: it lacks kernels
    for some revisions (GlobalLpPool-22, QuantizeLinear-28 ...), which then
    cannot be an oracle."""
    try:
        nccutil.ort_session(model)
        return True
    except Exception:  # noqa: BLE001 - any rejection means no oracle
        return False


def restamped_cases(ops):
    cases = []
    for op in ops:
        if op not in D.GENERATORS:
            continue
        base = D.cases_of(op, wide=False)[:RESTAMP_CASES]
        for case in base:
            own = [o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx")]
            for v in revisions(op):
                if [v] == own:
                    continue
                m = restamp(case.model, v)
                if m is not None and op == "Dropout" and v < 12 and len(m.graph.output) > 1:
                    # the mask of Dropout 7-11 at inference: all true by ONNX's
                    # reference implementation (and ncc), all false by
                    # onnxruntime; compare Y only
                    del m.graph.output[1:]
                if m is not None and not ort_loads(m):
                    continue  # a revision onnxruntime has no kernel for (RoiAlign-22 ...)
                if m is not None:
                    cases.append(D.Case(op, "restamp%d.%s" % (v, case.name), m, case.feeds))
    return cases


# ---- old forms, hand-written ----

class Old(D.Gen):
    """D.Gen whose cases name their opset; `ops` are the claimed ones."""

    def __init__(self, op, claimed):
        super().__init__(op)
        self.claimed = claimed

    def at(self, opset, name, ins, attrs=None, n_out=1, op=None):
        D.Gen.add(self, "op%d.%s" % (opset, name), ins, attrs, n_out, opset, op)

    def graph(self, name, nodes, feeds, inits, outputs, opset=None, oracles=None):
        """The model's outputs are typed from what ONNX Runtime computes
        (the old schemas' shape inference leaves some untyped, Slice-1's),
        then onnx's checker must accept it."""
        if self.op not in self.claimed:
            return
        feeds = {k: np.asarray(v) for k, v in feeds.items()}
        graph = helper.make_graph(
            nodes, "g", [D._vi(n, a) for n, a in feeds.items()],
            [helper.make_empty_tensor_value_info(o) for o in outputs],
            initializer=[D.numpy_helper.from_array(a, n) for n, a in inits.items()])
        ops = [helper.make_opsetid("", opset)]
        m = helper.make_model(graph, opset_imports=ops, producer_name="ncc-opset-ort")
        m.ir_version = helper.find_min_ir_version_for(ops)
        if m.ir_version < 4:  # initializers were graph inputs too, then
            m.graph.input.extend([D._vi(n, np.asarray(a)) for n, a in inits.items()])
        got = nccutil.run_ort(m, feeds)
        del m.graph.output[:]
        m.graph.output.extend([D._vi(o, got[o]) for o in outputs])
        onnx.checker.check_model(m)
        self.cases.append(D.Case(self.op, name, m, feeds, oracles))


def old_forms(claimed):
    """{op: [Case]} of the hand-written old-form cases of claimed ops."""
    Const = D.Const
    out = {}

    def gen(op):
        g = Old(op, claimed)
        out[op] = g.cases
        return g

    g = gen("Clip")
    x = np.array([[-3, -0.5, 0.25, 2, 7], [np.inf, -np.inf, 1e38, -1e38, 0]], F32)
    g.at(7, "min_max", [x], {"min": -1.0, "max": 1.5})
    g.at(7, "min_only", [x], {"min": 0.0})
    g.at(7, "max_only", [x], {"max": 0.5})
    g.at(7, "defaults_flt_max", [x])  # inf -> FLT_MAX in Clip-6
    g.at(11, "inputs", [x, Const(np.array(-1, F32)), Const(np.array(1, F32))])
    g.at(12, "no_bounds", [x])

    g = gen("Slice")
    d = g.randn(4, 5, 6)
    g.at(7, "starts_ends", [d], {"starts": [1, 0], "ends": [3, 4]})
    g.at(7, "axes_clamp", [d], {"starts": [1, 1], "ends": [1000, 4], "axes": [2, 1]})
    g.at(9, "start_past_end", [d], {"starts": [3], "ends": [2], "axes": [0]})
    g.at(10, "inputs_steps", [d, Const(np.array([5], I64)), Const(np.array([0], I64)),
                              Const(np.array([2], I64)), Const(np.array([-2], I64))])

    g = gen("Pad")
    d = g.randn(2, 3, 4)
    g.at(7, "constant", [d], {"pads": [0, 1, 2, 0, 2, 1]})
    g.at(7, "value", [d], {"pads": [1, 0, 0, 0, 0, 1], "value": 2.5})
    g.at(7, "reflect", [d], {"pads": [0, 0, 2, 0, 0, 1], "mode": "reflect"})
    g.at(7, "edge", [d], {"pads": [0, 2, 1, 0, 1, 3], "mode": "edge"})
    g.at(11, "inputs", [d, Const(np.array([0, 1, 1, 0, 0, 2], I64)),
                        Const(np.array(-1.5, F32))])

    g = gen("Squeeze")
    d = g.randn(1, 3, 1, 2)
    g.at(7, "axes", [d], {"axes": [0, 2]})
    g.at(7, "all", [d])
    g.at(11, "neg_axes", [d], {"axes": [-2]})
    g = gen("Unsqueeze")
    d = g.randn(3, 2)
    g.at(7, "axes", [d], {"axes": [0, 3]})
    g.at(11, "neg_axes", [d], {"axes": [-1, 1]})

    g = gen("Split")
    d = g.randn(6, 4)
    g.at(7, "split", [d], {"split": [2, 4]}, n_out=2)
    g.at(7, "equal", [d], {"axis": 1}, n_out=2)
    g.at(11, "neg_axis", [d], {"axis": -2, "split": [1, 2, 3]}, n_out=3)

    for op, until in (("ReduceSum", 13), ("ReduceMean", 18), ("ReduceMax", 18),
                      ("ReduceMin", 18), ("ReduceProd", 18), ("ReduceL1", 18),
                      ("ReduceL2", 18), ("ReduceLogSum", 18),
                      ("ReduceLogSumExp", 18), ("ReduceSumSquare", 18)):
        g = gen(op)
        d = g.uniform(0.5, 2.0, 2, 3, 4)
        g.at(7, "axes", [d], {"axes": [1]})
        g.at(7, "axes_keep0", [d], {"axes": [0, 2], "keepdims": 0})
        g.at(7, "all", [d])
        g.at(11, "neg_axes", [d], {"axes": [-1]})
        if until > 13:
            g.at(13, "axes_attr", [d], {"axes": [2, 0]})
        g.at(until, "axes_input", [d, Const(np.array([1], I64))])

    for op in ("Softmax", "LogSoftmax", "Hardmax"):
        g = gen(op)
        d3 = g.randn(2, 3, 4)
        d4 = g.randn(2, 3, 2, 5)
        for v in (7, 11):
            g.at(v, "default_axis1_r3", [d3])
            g.at(v, "default_axis1_r4", [d4])
            g.at(v, "axis0", [d3], {"axis": 0})
            g.at(v, "axis2_r4", [d4], {"axis": 2})
            g.at(v, "axis_last", [d4], {"axis": 3})
            g.at(v, "r2", [g.randn(3, 7)])
        g.at(11, "neg_axis", [d4], {"axis": -3})
        g.at(13, "axis1", [d4], {"axis": 1})

    g = gen("BatchNormalization")
    x = g.randn(2, 3, 4, 5)
    c = [Const(g.uniform(0.5, 1.5, 3)), Const(g.randn(3)), Const(g.randn(3)),
         Const(g.uniform(0.5, 2.0, 3))]
    g.at(7, "spatial1", [x] + c, {"epsilon": 1e-3})
    g.at(7, "spatial_default", [x] + c)
    per = [Const(g.uniform(0.5, 1.5, 3, 4, 5)), Const(g.randn(3, 4, 5)),
           Const(g.randn(3, 4, 5)), Const(g.uniform(0.5, 2.0, 3, 4, 5))]
    g.at(7, "spatial0", [x] + per, {"spatial": 0, "epsilon": 1e-4})
    g.at(9, "plain", [x] + c)
    g.at(14, "training_mode0", [x] + c, {"training_mode": 0})

    g = gen("Dropout")
    x = g.randn(3, 4)
    g.at(7, "ratio", [x], {"ratio": 0.3})
    g.at(10, "ratio", [x], {"ratio": 0.7})
    nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"], ratio=0.5)]
    g.graph("op10.unread_mask", nodes, {"x": x}, {}, ["y"], 10)
    g.at(12, "ratio_input", [x, Const(np.array(0.2, F32))], {"seed": 3})
    g.at(13, "training_false", [x, Const(np.array(0.2, F32)), Const(np.array(False))])
    g.at(22, "plain", [x])

    g = gen("Gemm")
    a, b = g.randn(3, 4), g.randn(4, 5)
    g.at(7, "c_bcast", [a, b, Const(g.randn(5))], {"alpha": 0.5, "beta": 2.0})
    g.at(9, "transA", [g.randn(4, 3), b, Const(g.randn(3, 1))], {"transA": 1})
    g.at(11, "no_c", [a, b])

    g = gen("MaxPool")
    x = g.randn(1, 2, 7, 6)
    g.at(7, "k3s2", [x], {"kernel_shape": [3, 3], "strides": [2, 2]})
    g.at(7, "pads", [x], {"kernel_shape": [2, 3], "pads": [1, 1, 0, 1]})
    g.at(7, "same_upper", [x], {"kernel_shape": [3, 2], "auto_pad": "SAME_UPPER"})
    g.at(8, "storage_order", [x], {"kernel_shape": [2, 2], "storage_order": 0})
    g.at(10, "ceil_dil", [x], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1,
                               "dilations": [1, 2]})
    g.at(12, "ceil", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})

    g = gen("AveragePool")
    x = g.randn(1, 2, 7, 6)
    g.at(7, "count_pad0", [x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    g.at(7, "count_pad1", [x], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                "count_include_pad": 1})
    g.at(10, "ceil", [x], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1})
    g.at(11, "ceil_pad", [x], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1,
                               "pads": [1, 0, 1, 0], "count_include_pad": 1})

    g = gen("Flatten")
    d = g.randn(2, 3, 4)
    g.at(7, "axis0", [d], {"axis": 0})
    g.at(7, "axis2", [d], {"axis": 2})
    g.at(11, "neg", [d], {"axis": -1})

    g = gen("Concat")
    g.at(7, "axis1", [g.randn(2, 3), g.randn(2, 1)], {"axis": 1})
    g.at(11, "neg", [g.randn(2, 3), g.randn(1, 3)], {"axis": -2})

    g = gen("Gather")
    d = g.randn(4, 5)
    g.at(7, "axis1", [d, Const(np.array([[0, 4], [2, 2]], I64))], {"axis": 1})
    g.at(11, "neg_idx", [d, Const(np.array([-1, 0], I64))], {"axis": -2})

    g = gen("Reshape")
    d = g.randn(2, 3, 4)
    g.at(7, "zero_copy", [d, Const(np.array([0, -1], I64))])
    g.at(14, "allowzero0", [d, Const(np.array([0, 12], I64))], {"allowzero": 0})

    for op in ("Max", "Min", "Sum"):
        g = gen(op)
        g.at(7, "same_shape", [g.randn(3, 4), g.randn(3, 4), g.randn(3, 4)])
        g.at(8, "bcast", [g.randn(3, 4), g.randn(4), g.randn(3, 1)])
        g.at(13, "bcast", [g.randn(2, 1, 4), g.randn(3, 1)])

    g = gen("Cast")
    x = np.array([-2.7, -0.5, 0.0, 1.5, 3.9], F32)
    g.at(7, "to_i64", [x], {"to": TensorProto.INT64})
    g.at(9, "to_f64", [x], {"to": TensorProto.DOUBLE})

    g = gen("Equal")
    g.at(7, "i64", [g.ints(0, 3, 3, 4), g.ints(0, 3, 4)])
    g.at(11, "f32", [g.ints(0, 3, 3, 4).astype(F32), g.ints(0, 3, 4).astype(F32)])

    for op in ("Less", "Greater"):
        g = gen(op)
        g.at(7, "f32", [g.randn(3, 4), g.randn(4)])
        g.at(9, "i64", [g.ints(0, 5, 3, 4), g.ints(0, 5, 4)])

    g = gen("Pow")
    g.at(7, "f32", [g.uniform(0.5, 2, 3, 4), g.randn(4)])
    g.at(12, "int_exp", [g.uniform(0.5, 2, 3, 4), Const(np.array([2], I64))])

    g = gen("Upsample")
    x = g.randn(1, 2, 3, 4)
    g.at(7, "nearest_attr", [x], {"scales": [1.0, 1.0, 2.0, 3.0], "mode": "nearest"})
    g.at(9, "nearest_input", [x, Const(np.array([1, 1, 2, 2], F32))], {"mode": "nearest"})

    g = gen("Resize")
    g.at(10, "nearest", [x, Const(np.array([1, 1, 2, 3], F32))], {"mode": "nearest"})
    g.at(10, "linear", [x, Const(np.array([1, 1, 2, 2], F32))], {"mode": "linear"})

    g = gen("TopK")
    d = g.randn(3, 7)
    g.at(7, "k_attr", [d], {"k": 3}, n_out=2)
    g.at(10, "k_input", [d, Const(np.array([2], I64))], {"axis": 0}, n_out=2)

    g = gen("Constant")
    for v, attr in ((9, {"value": helper.make_tensor("t", TensorProto.FLOAT, [2], [1.5, -2])}),
                    (12, {"value_floats": [1.5, -2.0]}),
                    (12, {"value_int": 7})):
        nodes = [helper.make_node("Constant", [], ["c"], **attr),
                 helper.make_node("Identity", ["c"], ["y"])]
        g.graph("op%d.%s" % (v, next(iter(attr))), nodes, {}, {}, ["y"], v)

    return {op: cases for op, cases in out.items() if op in claimed}


# ---- refusals ----

def relu_model(opset, node=None, inputs=None):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_empty_tensor_value_info("y")
    node = node or helper.make_node("Relu", ["x"], ["y"])
    g = helper.make_graph([node], "g", inputs or [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def refusals():
    """(name, model, exit status, regex the `ncc: error:` line must match)."""
    mk = helper.make_node
    x = np.zeros((2, 3), F32)
    out = [
        ("opset6", relu_model(6), 3, r"opset 6\b.*(7-%d)" % NEWEST),
        ("opset_newest_plus1", relu_model(NEWEST + 1), 3,
         r"opset %d\b.*newer" % (NEWEST + 1)),
        ("clip13_min_attr", relu_model(13, mk("Clip", ["x"], ["y"], min=0.0)), 2,
         r"Clip has no attribute 'min' in opset 13 \(it is an input from opset 11\)"),
        ("reducesum13_axes_attr", relu_model(13, mk("ReduceSum", ["x"], ["y"], axes=[1])), 2,
         r"ReduceSum has no attribute 'axes' in opset 13"),
        ("reducemean18_axes_attr", relu_model(18, mk("ReduceMean", ["x"], ["y"], axes=[1])), 2,
         r"ReduceMean has no attribute 'axes' in opset 18"),
        ("slice10_attrs", relu_model(10, mk("Slice", ["x"], ["y"], starts=[0], ends=[1])), 2,
         r"Slice has no attribute '(starts|ends)' in opset 10"),
        # the extra outputs of BatchNormalization before 14 mean training
        # mode (onnxruntime then normalizes with the batch's statistics)
        ("bn7_training_outputs", relu_model(7, mk("BatchNormalization", list("xxxxx"),
                                                  ["y", "m", "v", "sm", "sv"])), 3,
         r"BatchNormalization with 5 outputs \(training"),
        ("bn7_spatial0_training_outputs",
         relu_model(7, mk("BatchNormalization", list("xxxxx"), ["y", "m"], spatial=0)), 3,
         r"BatchNormalization with 2 outputs \(training"),
        ("squeeze13_axes_attr", relu_model(13, mk("Squeeze", ["x"], ["y"], axes=[0])), 2,
         r"Squeeze has no attribute 'axes' in opset 13"),
        ("maxpool9_ceil", relu_model(9, mk("MaxPool", ["x"], ["y"], kernel_shape=[1],
                                           ceil_mode=1)), 2,
         r"MaxPool has no attribute 'ceil_mode' in opset 9 \(it exists from opset 10\)"),
        ("reshape13_allowzero", relu_model(13, mk("Reshape", ["x", "x"], ["y"], allowzero=1)),
         2, r"allowzero' in opset 13"),
        ("bn9_spatial", relu_model(9, mk("BatchNormalization", list("xxxxx"), ["y"],
                                         spatial=1)), 2,
         r"no attribute 'spatial' in opset 9"),
        ("where8_before_op", relu_model(8, mk("Where", ["x", "x", "x"], ["y"])), 2,
         r"op 'Where' does not exist in opset 8 \(it was added in opset 9\)"),
        ("constant11_value_float", relu_model(11, mk("Constant", [], ["y"], value_float=1.0)),
         2, r"Constant has no attribute 'value_float' in opset 11"),
        ("dropout11_seed", relu_model(11, mk("Dropout", ["x"], ["y"], seed=1)), 2,
         r"Dropout has no attribute 'seed' in opset 11"),
        ("dropout12_ratio_attr", relu_model(12, mk("Dropout", ["x"], ["y"], ratio=0.5)), 2,
         r"Dropout has no attribute 'ratio' in opset 12"),
        ("maxpool7_indices", relu_model(7, mk("MaxPool", ["x"], ["y", "i"],
                                              kernel_shape=[1])), 2,
         r"MaxPool of opset 7 has one output"),
        ("softmax11_axis_range", relu_model(11, mk("Softmax", ["x"], ["y"], axis=2)), 2,
         r"axis 2 is out of range for rank 2"),
    ]
    return [(n, m, rc, pat, {"x": x}) for n, m, rc, pat in out]


def run_refusal(ncc, model, feeds, rc, pattern, workdir, target):
    r = nccutil.run_ncc(ncc, model, feeds, ["y"], workdir, target=target)
    line = r.error_line()
    if r.rc != rc:
        return "exit %d, expected %d: %s" % (r.rc, rc, line)
    if not line.startswith("ncc: error:") or not re.search(pattern, line):
        return "error line %r does not match %r" % (line, pattern)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    ap.add_argument("-k", dest="pattern", help="only cases whose label matches this regex")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    nccutil.add_target_arg(ap)
    a = ap.parse_args()
    claimed = nccutil.claimed_ops() + COMPOSITES
    cases = restamped_cases(claimed)
    for op, cs in old_forms(set(claimed)).items():
        cases += cs
    labels = [("%s.%s" % (c.op, c.name), c) for c in cases]
    refs = [("refuse.%s" % r[0], r) for r in refusals()]
    if a.pattern:
        labels = [(lb, c) for lb, c in labels if re.search(a.pattern, lb)]
        refs = [(lb, r) for lb, r in refs if re.search(a.pattern, lb)]
    if a.list:
        for lb, _ in labels + refs:
            print(lb)
        return 0
    ncc = nccutil.find_ncc(a.ncc)
    nccutil.require_target(ncc, a.target)
    passed, failed = 0, 0
    with nccutil.Workdir() as root:
        for lb, case in labels:
            why = D.run_case(ncc, case, nccutil.subdir(root, lb), a.target, ["ort"], {})
            passed, failed = (passed, failed + 1) if why else (passed + 1, failed)
            if why:
                print("FAIL %-50s %s" % (lb, why))
            elif a.verbose:
                print("PASS %s" % lb)
        for lb, (_, model, rc, pattern, feeds) in refs:
            why = run_refusal(ncc, model, feeds, rc, pattern, nccutil.subdir(root, lb),
                              a.target)
            passed, failed = (passed, failed + 1) if why else (passed + 1, failed)
            if why:
                print("FAIL %-50s %s" % (lb, why))
            elif a.verbose:
                print("PASS %s" % lb)
    print("target %s, opsets %d-%d: %d cases (%d refusals)" % (
        a.target, MIN_OPSET, NEWEST, len(labels) + len(refs), len(refs)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
