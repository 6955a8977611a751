#!/usr/bin/env python3
"""tests/py/dtype_ort.py — every ncc dtype through the ops that compute on it,
on `ncc run --target ref` and `--target cpu`, against onnxruntime.

For each dtype (int8/16/32/64, uint8/16/32/64, float16, bfloat16, float32,
float64) one model holds every op ncc claims for it (Add Sub Mul Div Max Min
Equal Less Greater Where Neg Abs Relu Sign Clip Pow ReduceSum ReduceMean
ReduceMax, the float ops Sqrt/Exp for float dtypes), each as its own output;
one model per source dtype casts to every dtype (bool included).  The data
hold the corner cases: each type's minimum and maximum (so + - * Neg Abs and
the sums wrap around), uint64 values above 2^63 (which must never pass
through int64 or double), Div with negative operands (ONNX integer Div
truncates toward zero), NaN for Max/Min/ReduceMax.

Oracle: onnxruntime wherever it has a CPU kernel for the op and dtype;
otherwise (bfloat16 arithmetic, some int16/uint reductions) the op's ONNX
definition written in numpy (+ ml_dtypes for bfloat16) with Python integers
for Div, so every expected value comes from outside ncc.  Integer and bool
outputs must match exactly; float outputs to a tolerance per dtype that
admits the one-rounding difference between ncc's double arithmetic and
ORT's float (tight for + - * /, which both round correctly).

Casts int -> float are also checked exactly against Python's integer
arithmetic where ORT double-rounds (int -> float -> bf16).

Exit status 1 on any failure.  Usage:
  NCC=build/ncc python3 tests/py/dtype_ort.py [-v] [-k REGEX] [--target ref|cpu|both]
"""
import argparse
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as TP, helper  # noqa: E402

try:
    import ml_dtypes  # noqa: E402
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 cases need ml_dtypes (onnx depends on it)
    ml_dtypes, BF16 = None, None

OPSET = 21
SHAPE = (4, 6)

# name -> (numpy dtype, TensorProto code)
DTYPES = {
    "int8": (np.dtype(np.int8), TP.INT8),
    "int16": (np.dtype(np.int16), TP.INT16),
    "int32": (np.dtype(np.int32), TP.INT32),
    "int64": (np.dtype(np.int64), TP.INT64),
    "uint8": (np.dtype(np.uint8), TP.UINT8),
    "uint16": (np.dtype(np.uint16), TP.UINT16),
    "uint32": (np.dtype(np.uint32), TP.UINT32),
    "uint64": (np.dtype(np.uint64), TP.UINT64),
    "float16": (np.dtype(np.float16), TP.FLOAT16),
    "float32": (np.dtype(np.float32), TP.FLOAT),
    "float64": (np.dtype(np.float64), TP.DOUBLE),
}
if BF16 is not None:
    DTYPES["bfloat16"] = (BF16, TP.BFLOAT16)
BOOL = (np.dtype(np.bool_), TP.BOOL)

# Float tolerances (rtol, atol): + - * / Max Min Where Neg Abs are
# correctly rounded on both sides, so these only absorb the transcendental
# ops and the sums (ncc sums in double, ORT in the dtype or float).
FTOL = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2),
        "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-300)}


def is_int(dt):
    return dt.kind in "iu"


def make_data(name, rng, nonzero=False):
    """SHAPE values of dtype `name`, with the type's corner cases."""
    dt = DTYPES[name][0]
    n = int(np.prod(SHAPE))
    if is_int(dt):
        info = np.iinfo(dt)
        corners = [info.min, info.max, info.min + 1, info.max - 1, 0, 1, 2, 7]
        if info.min < 0:
            corners += [-1, -7, -2]
        if dt == np.uint64:
            corners += [2**63, 2**63 + 12345, 2**64 - 3, 2**63 - 1]
        lo, hi = int(info.min), int(info.max)
        vals = [int(v) for v in corners]
        while len(vals) < n:  # uniform over the full range, Python ints
            vals.append(int(rng.integers(0, 2**64, dtype=np.uint64)) % (hi - lo + 1) + lo)
        vals = vals[:n]
        rng.shuffle(vals)
        if nonzero:
            vals = [v if v != 0 else 3 for v in vals]
        return np.array(vals, dtype=object).astype(dt).reshape(SHAPE)
    x = rng.standard_normal(n) * 8
    x[:4] = [0.5, -2.0, 3.25, -0.0]
    if nonzero:
        x = np.where(x == 0, 1.5, x)
    return x.astype(np.float32).astype(dt).reshape(SHAPE)


def int_div(a, b, dt):
    """ONNX integer Div: truncation toward zero, wrapped to dt."""
    out = []
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist()):
        q = abs(int(x)) // abs(int(y))
        if (x < 0) != (y < 0):
            q = -q
        out.append(q)
    bits = dt.itemsize * 8
    wrapped = [v & ((1 << bits) - 1) for v in out]
    if dt.kind == "i":
        wrapped = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in wrapped]
    return np.array(wrapped, dtype=object).astype(dt).reshape(a.shape)


def np_reduce(kind, x, axis):
    dt = x.dtype
    if is_int(dt):
        s = np.sum(x, axis=axis, dtype=dt)  # wraps at the dtype's width
        if kind == "ReduceSum":
            return s
        if kind == "ReduceMax":
            return np.max(x, axis=axis)
        cnt = x.shape[axis] if axis is not None else x.size
        return int_div(s, np.full(s.shape, cnt, dtype=object), dt) if s.ndim else \
            int_div(np.array([s]), np.array([cnt]), dt).reshape(())
    f = x.astype(np.float64)
    if kind == "ReduceSum":
        r = np.sum(f, axis=axis)
    elif kind == "ReduceMean":
        r = np.mean(f, axis=axis)
    else:
        r = np.max(f, axis=axis)
    return np.asarray(r).astype(dt)


# ---- the per-dtype op model -------------------------------------------------

def op_list(name):
    """(output name, op, inputs, attrs, extra initializers, numpy oracle)."""
    dt = DTYPES[name][0]
    signed = dt.kind == "i" or dt.kind == "f" or dt == BF16
    is_float = not is_int(dt)
    ops = []

    def add(op, ins, fn, attrs=None, inits=None, out=None):
        ops.append((out or op, op, ins, attrs or {}, inits or [], fn))

    add("Add", ["a", "b"], lambda a, b, c, m: a + b)
    add("Sub", ["a", "b"], lambda a, b, c, m: a - b)
    add("Mul", ["a", "b"], lambda a, b, c, m: a * b)
    add("Div", ["a", "bnz"], lambda a, b, c, m: int_div(a, b, dt) if is_int(dt) else a / b)
    add("Add", ["a", "brow"], lambda a, b, c, m: a + m, out="AddBcast")
    add("Max", ["a", "b"], lambda a, b, c, m: np.maximum(a, b))
    add("Min", ["a", "b"], lambda a, b, c, m: np.minimum(a, b))
    add("Equal", ["a", "b2"], lambda a, b, c, m: np.equal(a, c))
    add("Less", ["a", "b"], lambda a, b, c, m: np.less(a, b))
    add("Greater", ["a", "b"], lambda a, b, c, m: np.greater(a, b))
    add("Where", ["cond", "a", "b"], None)  # oracle below (needs cond)
    add("Abs", ["a"], lambda a, b, c, m: np.abs(a))
    # ORT's float16 Sign(NaN) is 0, its float Sign(NaN) NaN: no NaN here
    add("Sign", ["b"], lambda a, b, c, m: np.sign(b))
    add("Clip", ["a", "lo", "hi"], None)
    if signed:
        add("Neg", ["a"], lambda a, b, c, m: -a)
        add("Relu", ["a"], lambda a, b, c, m: np.maximum(a, np.zeros((), a.dtype)))
    reduce_ok = is_float or dt in (np.int32, np.int64, np.uint32, np.uint64)
    for r in ("ReduceSum", "ReduceMean", "ReduceMax"):
        if reduce_ok or (r == "ReduceMax" and dt in (np.int8, np.uint8)):
            # "ra": no NaN (ORT's ReduceMax skips NaN, ncc's keeps it, as numpy)
            add(r, ["ra", "axes1"], None, attrs={"keepdims": 0}, out=r)
            add(r, ["ra"], None, attrs={"keepdims": 1}, out=r + "All")
    if is_float:
        add("Sqrt", ["absa"], lambda a, b, c, m: None)
        add("Exp", ["small"], lambda a, b, c, m: None)
    if dt in (np.int32, np.int64) or is_float:
        add("Pow", ["powbase", "powexp"], None)
    return ops


def op_inputs(name, rng):
    dt = DTYPES[name][0]
    a = make_data(name, rng)
    b = make_data(name, rng)
    b2 = np.where(rng.random(SHAPE) < 0.5, a, b).astype(dt)  # equal half the time
    bnz = make_data(name, rng, nonzero=True)
    if dt in (np.int32, np.int64):
        # INT_MIN / -1 traps in ORT (x86 idiv); ncc wraps it (unit tested)
        bnz = np.where((a == np.iinfo(dt).min) & (bnz == -1), np.array(3, dt), bnz).astype(dt)
    if not is_int(dt):
        a.flat[5], b.flat[5] = np.nan, 1  # NaN propagates through Max/Min
    feeds = {"a": a, "b": b, "b2": b2, "bnz": bnz, "ra": np.where(np.isnan(a), b, a).astype(dt),
             "brow": make_data(name, rng)[0],
             "cond": rng.random(SHAPE) < 0.5}
    if is_int(dt):
        info = np.iinfo(dt)
        lo, hi = (info.min // 3, info.max // 3) if info.min < 0 else (info.max // 5, info.max // 2)
    else:
        lo, hi = -3.0, 4.5
    feeds["lo"], feeds["hi"] = np.array(lo, dt), np.array(hi, dt)
    if not is_int(dt):
        feeds["absa"] = np.abs(a).astype(dt)
        feeds["small"] = (rng.random(SHAPE) * 4 - 2).astype(np.float32).astype(dt)
    if dt in (np.int32, np.int64):
        feeds["powbase"] = rng.integers(-9, 10, SHAPE).astype(dt)
        feeds["powexp"] = rng.integers(0, 8, SHAPE).astype(dt)
    elif not is_int(dt):
        feeds["powbase"] = (rng.random(SHAPE) * 3).astype(np.float32).astype(dt)
        feeds["powexp"] = (rng.random(SHAPE) * 4 - 2).astype(np.float32).astype(dt)
    return feeds


def elem_type_of(arr):
    if arr.dtype == np.bool_:
        return TP.BOOL
    for _, (d, code) in DTYPES.items():
        if arr.dtype == d:
            return code
    raise ValueError(arr.dtype)


def one_op_model(op, ins, attrs, feeds, out_dt):
    inputs = [helper.make_tensor_value_info(i, elem_type_of(feeds[i]), list(feeds[i].shape))
              for i in ins if i != "axes1"]
    inits = []
    if "axes1" in ins:
        inits.append(helper.make_tensor("axes1", TP.INT64, [1], [1]))
    node = helper.make_node(op, ins, ["y"], **attrs)
    out = helper.make_tensor_value_info("y", out_dt, None)
    g = helper.make_graph([node], "g", inputs, [out], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    return m


def ort_eval(model, feeds):
    """ORT's outputs, or None when it has no CPU kernel for them."""
    try:
        sess = nccutil.ort_session(model)
    except Exception:
        return None
    names = [i.name for i in sess.get_inputs()]
    try:  # ORT takes no ml_dtypes.bfloat16 arrays
        return sess.run(None, {k: feeds[k] for k in names})
    except Exception:
        return None


def numpy_oracle(label, op, ins, attrs, fn, feeds, dt):
    a, b = feeds["a"], feeds["b"]
    if op == "Where":
        return np.where(feeds["cond"], a, b)
    if op == "Clip":
        return np.minimum(np.maximum(a, feeds["lo"]), feeds["hi"]).astype(dt)
    if op.startswith("Reduce"):
        r = np_reduce(op, feeds["ra"], 1 if "axes1" in ins else None)
        return r if "axes1" in ins else np.asarray(r).reshape((1, 1))
    if op == "Pow":
        x, y = feeds["powbase"], feeds["powexp"]
        return (x.astype(np.float64) ** y.astype(np.float64)).astype(dt)
    if op in ("Sqrt", "Exp"):
        x = feeds[ins[0]].astype(np.float64)
        return (np.sqrt(x) if op == "Sqrt" else np.exp(x)).astype(dt)
    c = feeds["b2"]
    with np.errstate(all="ignore"):
        if label == "AddBcast":
            return (a + feeds["brow"]).astype(dt)
        if label == "Div":
            b = feeds["bnz"]
        r = fn(a, b, c, feeds["brow"])
    return np.asarray(r)


def build_op_case(name, rng):
    """(model with one output per op, feeds, {output: (expected, oracle name)})."""
    dt, code = DTYPES[name]
    feeds = op_inputs(name, rng)
    nodes, outs, expected, used = [], [], {}, set()
    for label, op, ins, attrs, _, fn in op_list(name):
        cmp = op in ("Equal", "Less", "Greater")
        out_dt = TP.BOOL if cmp else code
        m1 = one_op_model(op, ins, attrs, feeds, out_dt)
        # ORT sums int64 through double (low bits lost, no wrap-around)
        ort_ok = not (dt == np.int64 and op in ("ReduceSum", "ReduceMean"))
        got = ort_eval(m1, feeds) if ort_ok else None
        if got is not None:
            want, oracle = got[0], "onnxruntime"
        else:
            want, oracle = numpy_oracle(label, op, ins, attrs, fn, feeds, dt), "numpy"
        y = "y_" + label
        nodes.append(helper.make_node(op, ins, [y], **attrs))
        outs.append(helper.make_tensor_value_info(y, out_dt, None))
        expected[y] = (np.asarray(want), oracle)
        used.update(i for i in ins if i != "axes1")
    inputs = [helper.make_tensor_value_info(i, elem_type_of(feeds[i]), list(feeds[i].shape))
              for i in sorted(used)]
    inits = [helper.make_tensor("axes1", TP.INT64, [1], [1])]
    g = helper.make_graph(nodes, "dtype_" + name, inputs, outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    return m, {k: feeds[k] for k in sorted(used)}, expected


# ---- casts -------------------------------------------------------------------

def cast_sources(name, rng):
    """Source data for casts from `name`: (label, array, targets) — float
    sources keep to values every target represents (ONNX leaves float ->
    int overflow undefined), integer sources use the full range (int ->
    int wraps, defined)."""
    dt = DTYPES[name][0]
    targets = list(DTYPES) + ["bool"]
    if is_int(dt):
        return [("full", make_data(name, rng), targets)]
    x = np.concatenate([rng.random(16) * 127, [0.0, 0.5, 1.5, 2.5, 126.9, 3.75, -0.0, 0.25]])
    nonneg = x.astype(np.float32).astype(dt).reshape(SHAPE)
    y = rng.standard_normal(24) * 50
    y[:4] = [-127.9, 126.5, -0.5, -2.5]
    signed_t = [t for t in targets if t == "bool" or not DTYPES[t][0].kind == "u"]
    signed = y.astype(np.float32).astype(dt).reshape(SHAPE)
    srcs = [("nonneg", nonneg, targets),
            ("signed", signed, [t for t in signed_t if t not in ("int8", "uint8")])]
    if dt == np.float64:  # the wide integer range, above 2^63 for uint64
        big = np.array([1.5e19, 2.0**63, 9.2e18, 3e9, 4294967295.0, 1.8e19] * 4,
                       dtype=np.float64).reshape(SHAPE)
        srcs.append(("big", big, ["uint64", "float32", "float64"]))
    return srcs


def exact_round_int(n, p):
    """Integer n rounded to p significant bits, to nearest even (Python ints)."""
    if n == 0:
        return 0
    s, m = (-1 if n < 0 else 1), abs(n)
    drop = max(m.bit_length() - p, 0)
    if drop == 0:
        return n
    q, r = m >> drop, m & ((1 << drop) - 1)
    half = 1 << (drop - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return s * (q << drop)


def build_cast_case(name, label, x, targets):
    code = DTYPES[name][1]
    nodes, outs, expected = [], [], {}
    for t in targets:
        tdt, tcode = BOOL if t == "bool" else DTYPES[t]
        m1 = one_op_model("Cast", ["x"], {"to": tcode}, {"x": x}, tcode)
        got = ort_eval(m1, {"x": x})
        if got is not None:
            want, oracle = got[0], "onnxruntime"
        else:
            want, oracle = x.astype(tdt), "numpy"
        if is_int(x.dtype) and t in ("bfloat16", "float16", "float32") and want is not None:
            # ORT rounds int -> f32 -> bf16/f16 (twice); the ONNX cast is one
            # rounding: the exact value from Python integers.
            p = {"bfloat16": 8, "float16": 11, "float32": 24}[t]
            vals = [exact_round_int(int(v), p) for v in x.ravel().tolist()]
            with np.errstate(over="ignore"):
                want = np.array([float(v) for v in vals]).astype(tdt).reshape(x.shape)
            oracle = "python ints"
        y = "to_" + t
        nodes.append(helper.make_node("Cast", ["x"], [y], to=tcode))
        outs.append(helper.make_tensor_value_info(y, tcode, None))
        expected[y] = (np.asarray(want), oracle)
    inp = [helper.make_tensor_value_info("x", code, list(x.shape))]
    g = helper.make_graph(nodes, "cast_" + name, inp, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    return m, {"x": x}, expected


def build_round_case(rng):
    """float32/float64 -> bfloat16/float16 rounding on awkward values (ties,
    subnormals, overflow, NaN, values that f64 -> f32 -> bf16 rounds twice),
    checked bit-exactly against ml_dtypes and numpy."""
    bits = np.concatenate([rng.integers(0, 2**32, 4000, dtype=np.uint64),
                           [0x3f808000, 0x3f818000, 0x3f80ffff, 0x7f7fffff, 0x7f7f8000,
                            0x00000001, 0x00400000, 0x00008000, 0x80018000, 0x7fc00000,
                            0x3f800001, 0x477ff000, 0x477fefff, 0x33000000, 0x33000001]])
    f32 = bits.astype(np.uint32).view(np.float32)
    f32 = np.where(np.isnan(f32), np.float32(np.nan), f32).astype(np.float32)
    f64 = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-45, 40, 3000),
                          [1 + 2**-8 + 2**-30, 1 + 2**-8, 1 + 3 * 2**-8, 2.0**-133,
                           2.0**-134, 2.0**-134 * 1.0000001, 3.3961e38, 65520.0,
                           65519.99, 2.0**-25, 2.0**-25 * 1.0000001]])
    cases = []
    for name, x in (("float32", f32.reshape(-1, 1)), ("float64", f64.reshape(-1, 1))):
        code = DTYPES[name][1]
        nodes, outs, expected = [], [], {}
        for t in ("bfloat16", "float16"):
            if t not in DTYPES:
                continue
            tdt, tcode = DTYPES[t]
            y = "to_" + t
            nodes.append(helper.make_node("Cast", ["x"], [y], to=tcode))
            outs.append(helper.make_tensor_value_info(y, tcode, None))
            with np.errstate(all="ignore"):
                expected[y] = (x.astype(tdt), "ml_dtypes/numpy (exact)")
        g = helper.make_graph(nodes, "round_" + name,
                              [helper.make_tensor_value_info("x", code, list(x.shape))], outs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 10
        cases.append(("round_" + name, m, {"x": x}, expected))
    return cases


def build_init_cases(rng):
    """Initializers of every dtype in both storage forms ONNX allows: the
    typed field (int32_data carries int8/16, uint8/16, bool and the bits of
    float16/bfloat16; uint64_data carries uint32/64) and raw_data; the
    expected values are onnx.numpy_helper's decoding."""
    from onnx import numpy_helper
    cases = []
    for name, (dt, code) in list(DTYPES.items()) + [("bool", BOOL)]:
        x = make_data(name, rng) if name != "bool" else rng.random(SHAPE) < 0.5
        nodes, outs, expected, inits = [], [], {}, []
        for raw in (False, True):
            vals = x.astype(np.float32) if dt == BF16 else x
            t = helper.make_tensor("w_%s" % raw, code, list(SHAPE),
                                   vals.tobytes() if raw and dt != BF16 else vals.ravel().tolist(),
                                   raw=raw and dt != BF16)
            inits.append(t)
            y = "y_raw" if raw else "y_typed"
            nodes.append(helper.make_node("Identity", [t.name], [y]))
            outs.append(helper.make_tensor_value_info(y, code, list(SHAPE)))
            expected[y] = (numpy_helper.to_array(t), "onnx.numpy_helper (exact)")
        g = helper.make_graph(nodes, "init_" + name, [], outs, initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 10
        cases.append(("init_" + name, m, {}, expected))
    return cases


def check_bad_typed_field(ncc, workdir):
    """int32_data holding a value an int16 cannot: exit 2 (bad input), with a
    message naming the dtype, nothing written."""
    t = helper.make_tensor("w", TP.INT16, [2], [1, 2])
    t.int32_data[1] = 40000
    g = helper.make_graph([helper.make_node("Identity", ["w"], ["y"])], "bad", [],
                          [helper.make_tensor_value_info("y", TP.INT16, [2])], initializer=[t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 10
    r = nccutil.run_ncc(ncc, m, {}, ["y"], workdir)
    if r.rc == 2 and "i16" in r.error_line():
        return None
    return "int16 int32_data 40000: exit %d, %s" % (r.rc, r.error_line())


# ---- running -------------------------------------------------------------------

def as_comparable(arr, like):
    """ncc writes bfloat16 as '<V2' (numpy has no bfloat16): view it back."""
    arr = np.asarray(arr)
    if BF16 is not None and like.dtype == BF16 and arr.dtype.kind == "V":
        return arr.view(BF16)
    return arr


def check(want, got, dtname):
    if BF16 is not None and want.dtype == BF16:
        if got.dtype != BF16:
            return "dtype %s, expected bfloat16" % got.dtype
        want, got = want.astype(np.float32), got.astype(np.float32)
        rtol, atol = FTOL["bfloat16"]
    else:
        rtol, atol = FTOL.get(dtname, (0, 0))
    return nccutil.compare(want, got, rtol, atol)


def run_case(ncc, label, model, feeds, expected, targets, workdir, verbose):
    """Returns (passed, failed) counts; one count per output per target."""
    passed = failed = 0
    for target in targets:
        r = nccutil.run_ncc(ncc, model, feeds, list(expected), workdir, target=target)
        if r.rc != 0 or r.missing:
            print("FAIL %s [%s]: %s" % (label, target, r.describe()))
            failed += len(expected)
            continue
        for y, (want, oracle) in expected.items():
            got = as_comparable(r.outputs[y], want)
            dtname = next((k for k, (d, _) in DTYPES.items() if d == want.dtype), "")
            if oracle.endswith("(exact)"):  # rounding checks: bit for bit
                if got.dtype != want.dtype:
                    why = "dtype %s" % got.dtype
                elif want.dtype.kind in "biu":
                    why = nccutil.compare(want, got, 0, 0)
                else:
                    why = nccutil.compare(want.astype(np.float64), got.astype(np.float64), 0, 0)
            else:
                why = check(want, got, dtname)
            if why:
                failed += 1
                print("FAIL %s %s [%s] vs %s: %s" % (label, y, target, oracle, why))
            else:
                passed += 1
                if verbose:
                    print("ok   %s %s [%s] vs %s" % (label, y, target, oracle))
    return passed, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    ap.add_argument("-k", dest="pattern", help="only cases whose label matches")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--target", default="both",
                    help="ref, cpu, both (ref and cpu; default) or another runnable target")
    args = ap.parse_args()
    ncc = nccutil.find_ncc(args.ncc)
    targets = ["ref", "cpu"] if args.target == "both" else [args.target]
    for t in targets:
        nccutil.require_target(ncc, t)
    rng = np.random.default_rng(12)
    cases = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in DTYPES:
            cases.append(("ops_" + name,) + build_op_case(name, rng))
        for name in DTYPES:
            for label, x, tg in cast_sources(name, rng):
                cases.append(("cast_%s_%s" % (name, label),) + build_cast_case(name, label, x, tg))
        cases += build_round_case(rng)
        cases += build_init_cases(rng)
    passed = failed = 0
    with nccutil.Workdir() as root:
        if not args.pattern or re.search(args.pattern, "bad_typed_field"):
            why = check_bad_typed_field(ncc, nccutil.subdir(root, "bad_typed_field"))
            print("FAIL bad_typed_field: " + why if why else "ok   bad_typed_field")
            passed, failed = (0, 1) if why else (1, 0)
        for label, model, feeds, expected in cases:
            if args.pattern and not re.search(args.pattern, label):
                continue
            wd = nccutil.subdir(root, label)
            p, f = run_case(ncc, label, model, feeds, expected, targets, wd, args.verbose)
            passed += p
            failed += f
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
