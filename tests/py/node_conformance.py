#!/usr/bin/env python3
"""tests/py/node_conformance.py — ONNX backend node tests against `ncc run --target=T`.

The installed onnx wheel ships the node test-case generators (not the data
files), so the cases are rebuilt in memory with
onnx.backend.test.case.node.collect_testcases(None): a model plus input and
expected-output arrays per case.  A case runs when every op in its graph is
one ncc claims (the NCC_OP rows of ir/ops.def); it then must produce outputs
of the expected dtype and shape within the case's tolerance.

Opsets: ncc reads opsets 7 to onnx's newest; its IR is the opset-21 form.
The wheel writes each case at its op's newest revision, so the old node
forms are tested by tests/py/opset_ort.py instead.  It writes many cases at
a newer opset (22-28) although the op is unchanged for the types ncc has: those
revisions only widened type lists (bfloat16 in 22, 4-/2-bit and float8
types in 23-25, 27-28).  Such a case is re-stamped to opset 21 when every op
in it is in TYPE_ONLY_REVISIONS, uses no attribute opset 21 lacks, and the
re-stamped model passes onnx's checker with strict type inference; otherwise
it is skipped with the reason.  (The ceil_mode pooling cases whose output
shape onnx's stale opset-21 shape inference contests run with their declared
output dims made symbolic: STALE_INFERENCE_OPS.)

Skips: only with a reason.  SKIP_REASONS maps case-name patterns to a reason
and to the message ncc must give: the case is run, and counts as skipped only
when ncc exits 3 (unsupported) with an `ncc: error:` line matching that
message pattern.  Any other exit 3 is a failure, and so is a pattern case
that runs but computes wrong values.  A case that passes passes.

Targets: --target ref (default) or cpu.  The tolerance is the case's own
(onnx's default rtol 1e-3, atol 1e-7, floored at ATOL_FLOOR) for every
target: the expected data are float64 numpy results, and the cpu backend's
few-ulp polynomials and reassociated sums are far inside that; the tight
cpu checks are in diff_ort.py (--oracle ref).  The skips are the same on
every target: a case skipped on ref must be skipped on cpu for the same
documented reason (the cpu backend runs unsupported dtypes nowhere else).

Exit status 1 when any case of a claimed op fails.
Usage: NCC=build/ncc python3 tests/py/node_conformance.py [-v] [-k REGEX] [--target cpu]
"""
import argparse
import collections
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

MIN_OPSET, MAX_OPSET = 7, 21

# Ops whose revisions after opset 21 changed only the accepted types (ONNX
# Changelog: 22 added bfloat16 to float ops; 23-25 added float4/int4/int2/
# float8e8m0 types; 27 Range stash_type and 28 Cast round_mode only matter
# for those types), mapped to the newest revision checked.
TYPE_ONLY_REVISIONS = {
    "AveragePool": 22, "Cast": 28, "Constant": 25, "ConstantOfShape": 25,
    "Conv": 22, "Flatten": 25, "GlobalAveragePool": 22, "HardSigmoid": 22,
    "HardSwish": 22, "Identity": 25, "MaxPool": 22, "Pad": 25, "Range": 27,
    "Reshape": 25, "Shape": 25, "Softplus": 22, "Softsign": 22,
    "Squeeze": 25,
    "Acos": 22, "Acosh": 22, "Asin": 22, "Asinh": 22, "Atan": 22, "Atanh": 22,
    "Cos": 22, "Cosh": 22, "Sin": 22, "Sinh": 22, "Tan": 22, "Elu": 22,
    "Selu": 22, "ThresholdedRelu": 22, "Mish": 22, "Round": 22,
    "Celu": 28,  # 28 added float16/bfloat16/double
    "Transpose": 25, "Unsqueeze": 25,
}

# Ops that first appear after opset MAX_OPSET, mapped to the newest revision
# ncc implements: their cases have no opset-MAX_OPSET form and run at their
# own opset (the importer reads up to 28) when the case's revision is not
# newer and every other op in the case is unchanged since MAX_OPSET.
NEW_OPS = {}

# Op families in tests/py/ortgen_*.py may add to TYPE_ONLY_REVISIONS,
# NEW_OPS and SKIP_REASONS from their register(ns) (ns is this module).
# Names of the dtypes ncc lacks, or has but not in every op: a skip needs
# the error line to name one.
DTYPE_WORDS = (r"(bf16|bfloat16|f16|float16|half|f64|float64|double|"
               r"[iu](2|4|8|16|32|64)\b|u?int(2|4|8|16|32|64)|uint\w*|"
               r"string|float8\w*|f8\w*|float4\w*|e4m3\w*|e5m2\w*|e8m0\w*|"
               r"complex\w*|bool)")

# (case-name regex, reason, regex the `ncc: error:` line must match)
SKIP_REASONS = [
    # Every int/uint width, bool, f16, bf16 and f64 case of the claimed ops
    # runs (IR-CONVENTIONS.md ## Dtypes); what is left are ONNX types that
    # are not ncc dtypes and BatchNormalization training.
    (r"FLOAT8|FLOAT4|e8m0|UINT4|INT4|UINT2|INT2",
     "float8/float4/int4/int2 are not ncc dtypes", DTYPE_WORDS),
    (r"string|STRING", "strings are not an ncc dtype", DTYPE_WORDS),
    (r"fp16|bf16|float16|bfloat16",
     "f16/bf16 input to an op ncc computes in f32 only (Conv, Gemm, "
     "BatchNormalization, LayerNormalization, AveragePool: IR-CONVENTIONS.md "
     "## Dtypes)", r"dtype (f16|bf16) is not supported"),
    (r"^test_scan_sum$", "Scan-8's batched form (batch axis, sequence_lens) "
     "is not supported; Scan 9+ is", r"Scan before opset 9"),
    (r"^test_affine_grid_.*_expanded$", "AffineGrid's function body: an If "
     "whose branches are written for other ranks; ncc imports and types both "
     "branches (IR.md Subgraphs), and one squeezes a dim that is symbolic in "
     "it or never type-checks", r"is never taken|Squeeze without axes on a symbolic dim"),
    (r"batchnorm_.*training_mode",
     "BatchNormalization training_mode=1 is unsupported (inference-only, "
     "IR-CONVENTIONS.md)", r"training"),
]
nccutil.load_extensions("ortgen_", sys.modules[__name__])

try:  # onnx needs ml_dtypes; bfloat16 case data are ml_dtypes arrays
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BF16 = None

# Cases that cannot even be written down for ncc: decided before running.
STATIC_SKIPS = [
    (r"_sequence|_opt$", "sequence/optional values are not tensors"),
]

# ONNX test data is computed in float64 numpy and rounded; an f32 kernel
# differs by a few ulps near zero, which the cases' atol of 1e-7 rejects.
ATOL_FLOOR = 1e-6

# Half-precision outputs: the cases' expected data round after every step
# of the formula (numpy in the output type, or an _expanded graph op by
# op) while ncc computes in double and rounds once, so results may differ
# by a couple of ulps of the output type: 2 ulps of f16 (2^-9 relative)
# and of bf16 (2^-6), never less than the case's own rtol.
HALF_RTOL = {"float16": 2.0 ** -9, "bfloat16": 2.0 ** -6}


def opset_of(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def graph_ops(graph):
    """Every op type in a graph, including subgraphs of control flow."""
    ops = set()
    for node in graph.node:
        ops.add(node.op_type)
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                ops |= graph_ops(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    ops |= graph_ops(g)
    return ops


def restamp_to_max(model, claimed):
    """(model at opset MAX_OPSET, None) or (None, why it cannot be)."""
    v = opset_of(model)
    new = {n.op_type for n in model.graph.node if n.op_type in NEW_OPS}
    for op in new:
        since = onnx.defs.get_schema(op, v).since_version
        if since > NEW_OPS[op]:
            return None, "%s changed in opset %d (ncc implements %d)" % (op, since, NEW_OPS[op])
    for node in model.graph.node:
        op = node.op_type
        if op in new:
            continue
        s21 = onnx.defs.get_schema(op, MAX_OPSET)
        sv = onnx.defs.get_schema(op, v)
        if s21.since_version != sv.since_version and \
                TYPE_ONLY_REVISIONS.get(op, 0) < sv.since_version:
            return None, "%s changed in opset %d (ncc reads %d-%d)" % (
                op, sv.since_version, MIN_OPSET, MAX_OPSET)
        extra = [a.name for a in node.attribute if a.name not in s21.attributes]
        if extra:
            return None, "%s attribute %s is newer than opset %d" % (op, extra[0], MAX_OPSET)
    if new:
        return model, None
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.opset_import[:]
    m.opset_import.extend([helper.make_opsetid("", MAX_OPSET)])
    m.ir_version = helper.find_min_ir_version_for(list(m.opset_import))
    why = checker_error(m)
    if why and STALE_INFERENCE_RE.search(why) and \
            all(n.op_type in STALE_INFERENCE_OPS for n in m.graph.node):
        # onnx's opset-21 shape inference still has the old ceil_mode output
        # size; make the declared dims it contests symbolic: ncc computes
        # them, and the expected data still fix the output shape.
        m = without_declared_shapes(m)
        why = checker_error(m)
    if why:  # checker/inference errors: not expressible at 21
        return None, "not valid at opset %d: %s" % (MAX_OPSET, why)
    return m, None


# MaxPool/AveragePool with ceil_mode: the last window must start inside the
# input or its left padding (ONNX's fix, PyTorch's and ONNX Runtime's rule;
# onnxruntime computes the same at opset 21 and 22). onnx's shape inference
# has it for opset 22 only, so the checker contests the declared output
# shape of a re-stamped ceil case ("Inferred shape and existing shape
# differ"): the op is unchanged, the checker's opset-21 inference is stale.
STALE_INFERENCE_OPS = {"MaxPool", "AveragePool"}
STALE_INFERENCE_RE = re.compile(r"Inferred shape and existing shape differ")


def checker_error(m):
    """The checker's complaint about a model (last line), or None."""
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:
        msg = str(e).strip().splitlines()
        return msg[-1][:200] if msg else "?"
    return None


def without_declared_shapes(model):
    """A copy whose graph outputs and value_info keep their element type and
    rank but declare every dim symbolic (the checker wants a shape field)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for v in list(m.graph.output) + list(m.graph.value_info):
        if v.type.HasField("tensor_type"):
            for i, d in enumerate(v.type.tensor_type.shape.dim):
                d.Clear()
                d.dim_param = "%s_d%d" % (v.name, i)
    return m


def case_op(case, op_of_case):
    """The op a case tests: its single non-Constant op, or for an
    `_expanded` function body, the op of the case it expands."""
    base = re.sub(r"_expanded(_ver\d+)?$", "", case.name)
    if base != case.name:
        return "%s (expanded)" % op_of_case.get(base, base[5:])
    ops = [n.op_type for n in case.model.graph.node if n.op_type != "Constant"]
    ops = ops or [n.op_type for n in case.model.graph.node]
    return "+".join(sorted(set(ops))) if ops else "?"


def load_cases():
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        # Many generators draw from numpy's global generator: seed it so
        # every run tests the same data.
        np.random.seed(0)
        cases = node_cases.collect_testcases(None)
    return [c for c in cases if c.kind == "node" and c.model is not None]


def is_tensor_io(model):
    vis = list(model.graph.input) + list(model.graph.output)
    return all(v.type.HasField("tensor_type") for v in vis)


def skip_rule(name, table):
    for rule in table:
        if re.search(rule[0], name):
            return rule
    return None


def as_array(value):
    """Data sets hold numpy arrays, or TensorProtos for types numpy lacks."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value)


def run_case(ncc, case, model, workdir, target="ref"):
    """('pass'|'fail'|'skip', detail) for one case (all its data sets)."""
    inputs_vi = [i.name for i in model.graph.input]
    outputs_vi = [o.name for o in model.graph.output]
    rtol = case.rtol
    atol = max(case.atol, ATOL_FLOOR)
    for k, (ins, outs) in enumerate(case.data_sets):
        ins, outs = [as_array(a) for a in ins], [as_array(a) for a in outs]
        odd = [np.asarray(a).dtype for a in list(ins) + list(outs)
               if (np.asarray(a).dtype.kind not in "biuf" or np.asarray(a).dtype.isbuiltin != 1)
               and np.asarray(a).dtype != BF16]
        if odd:
            # strings, float8/float4/int4 (ml_dtypes): no .npy form that ncc
            # reads, and none of them is an ncc dtype. bfloat16 is: its .npy
            # form is '<V2' (what np.save writes for ml_dtypes.bfloat16).
            return "skip", "element type %s is not an ncc dtype (no .npy form)" % odd[0]
        feeds = dict(zip(inputs_vi, ins))
        r = nccutil.run_ncc(ncc, model, feeds, outputs_vi, workdir, target=target)
        if r.rc == 3:
            rule = skip_rule(case.name, SKIP_REASONS)
            line = r.error_line()
            if rule and re.search(rule[2], line, re.I):
                return "skip", "%s [%s]" % (rule[1], line)
            return "fail", "unsupported without a documented skip reason: " + line
        if r.rc != 0 or r.missing:
            return "fail", r.describe()
        for name, want in zip(outputs_vi, outs):
            got = r.outputs[name]
            if np.asarray(want).dtype == BF16 and got.dtype.kind == "V":
                got = got.view(BF16)  # ncc's bf16 .npy: '<V2' bits
            r_tol = max(rtol, HALF_RTOL.get(str(np.asarray(want).dtype), 0.0))
            why = nccutil.compare(np.asarray(want), got, r_tol, atol)
            if why:
                return "fail", "data set %d output %s: %s" % (k, name, why)
    return "pass", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    ap.add_argument("-k", dest="pattern", help="only cases whose name matches this regex")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case")
    nccutil.add_target_arg(ap)
    a = ap.parse_args()
    ncc = nccutil.find_ncc(a.ncc)
    nccutil.require_target(ncc, a.target)
    claimed = set(nccutil.claimed_ops())

    cases = load_cases()
    op_of_case = {}
    for c in cases:
        ops = [n.op_type for n in c.model.graph.node]
        if len(set(ops)) == 1:
            op_of_case[c.name] = ops[0]

    per_op = collections.OrderedDict()
    totals = collections.Counter()
    not_claimed = 0
    failures = []
    with nccutil.Workdir() as root:
        for case in cases:
            if a.pattern and not re.search(a.pattern, case.name):
                continue
            if not graph_ops(case.model.graph) <= claimed:
                not_claimed += 1
                continue
            op = case_op(case, op_of_case)
            model, status, detail = case.model, None, ""
            static = skip_rule(case.name, STATIC_SKIPS)
            v = opset_of(model)
            if static or not is_tensor_io(model):
                status, detail = "skip", static[1] if static else "non-tensor inputs/outputs"
            elif v is None or v < MIN_OPSET:
                status, detail = "skip", "opset %s is below %d" % (v, MIN_OPSET)
            elif v > MAX_OPSET:
                model, why = restamp_to_max(model, claimed)
                if model is None:
                    status, detail = "skip", "opset %d: %s" % (v, why)
            if status is None:
                status, detail = run_case(ncc, case, model, nccutil.subdir(root, case.name),
                                          a.target)
            totals[status] += 1
            per_op.setdefault(op, collections.Counter())[status] += 1
            if status == "fail":
                failures.append((case.name, detail))
            if a.verbose or status == "fail":
                print("%-4s %-60s %s" % (status.upper(), case.name, detail))
            elif status == "skip":
                print("SKIP %-60s %s" % (case.name, detail))

    print("\nper op:            passed failed skipped")
    for op in sorted(per_op):
        c = per_op[op]
        print("  %-28s %6d %6d %7d%s" % (op, c["pass"], c["fail"], c["skip"],
                                         "   <-- FAIL" if c["fail"] else ""))
    untested = sorted(claimed - {o for o in per_op if " " not in o and "+" not in o})
    if untested and not a.pattern:
        print("claimed ops with no single-op case: %s" % ", ".join(untested))
    print("not claimed: %d cases" % not_claimed)
    print("%d passed, %d failed, %d skipped" % (totals["pass"], totals["fail"], totals["skip"]))
    if failures:
        print("\nfailed cases:")
        for name, detail in failures:
            print("  %s: %s" % (name, detail))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
