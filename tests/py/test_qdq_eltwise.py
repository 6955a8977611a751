#!/usr/bin/env python3
"""tests/py/test_qdq_eltwise.py — QuantizeLinear / DequantizeLinear compiled
on the cpu target as elementwise kernels that fusion chains, against ONNX
Runtime.

What QDQ models keep between folded contractions: DQ -> float work -> Q
(a residual Add of two dequantized tensors, an activation, a fake-quant
Q -> DQ pair). Checked here, for u8 and s8, per-tensor and per-axis (axis
1, the last and the first) parameters, and sizes with vector tails:
  - values equal ONNX Runtime's exactly: Q's integers (round half to even,
    saturation, NaN and infinities included) and DQ's floats (one rounding,
    the product's);
  - `ncc check --target=cpu` reports every node compiled into ONE kernel
    and none on the host (the chain is fused, Q/DQ are not host ops);
  - a per-axis scale that is also added as a plain operand (read two ways)
    still computes right (the group falls back to kernels per node);
  - NaN quantizes to the zero point on cpu as on ref (ONNX leaves it
    undefined; ONNX Runtime's x86 clamp gives the minimum instead, so this
    one is judged against ncc's reference interpreter).
Usage: NCC=build/ncc python3 tests/py/test_qdq_eltwise.py
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402  (exits 77, skipped, without numpy/onnx/onnxruntime)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

NCC = nccutil.find_ncc()
F32, U8, I8 = np.float32, np.uint8, np.int8


def tdt(dt):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dt))


def zp(rng, dt, *shape):
    lo, hi = (0, 256) if dt == U8 else (-128, 128)
    return rng.integers(lo, hi, shape).astype(dt)


def ints(rng, dt, *shape):
    return zp(rng, dt, *shape)


def model(nodes, inputs, outputs, inits):
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, tdt(a.dtype), list(a.shape))
                     for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, tdt(dt), list(shape)) for n, dt, shape in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    return m


def params(rng, shape, axis, dt, lo=0.01, hi=0.1):
    """scale and zero point: per tensor (axis None) or along axis."""
    if axis is None:
        return np.array(rng.uniform(lo, hi), F32), np.array(zp(rng, dt), dt)
    c = shape[axis]
    return rng.uniform(lo, hi, c).astype(F32), zp(rng, dt, c)


def residual_model(rng, shape, dt, axis):
    """y = Q(Relu(DQ(a) + DQ(b))): b's parameters per axis when axis given."""
    sa, za = params(rng, shape, None, dt)
    sb, zb = params(rng, shape, axis, dt)
    sy, zy = params(rng, shape, axis, dt, 0.02, 0.2)
    kw = {} if axis is None else {"axis": axis}
    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["fa"]),
             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["fb"], **kw),
             helper.make_node("Add", ["fa", "fb"], ["s"]),
             helper.make_node("Relu", ["s"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "sy", "zy"], ["y"], **kw)]
    feeds = {"a": ints(rng, dt, *shape), "b": ints(rng, dt, *shape)}
    inits = dict(sa=sa, za=za, sb=sb, zb=zb, sy=sy, zy=zy)
    return model(nodes, feeds, [("y", dt, shape)], inits), feeds, 5


def fake_quant_model(rng, shape, dt, axis, special=False):
    """y = DQ(Q(x)) * 2, and q = Q(x) as a second output (not fused then:
    it leaves the group) — one f32 and one integer result."""
    s, z = params(rng, shape, axis, dt)
    kw = {} if axis is None else {"axis": axis}
    x = (rng.standard_normal(shape) * 4).astype(F32)
    if special:
        flat = x.reshape(-1)
        vals = [np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 3e-45]
        flat[:len(vals)] = vals
        if axis is None:  # exact ties: x / s = k + 0.5
            k = np.arange(len(vals), min(flat.size, len(vals) + 40))
            flat[k] = ((k % 13) - 6 + 0.5) * s
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], **kw),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], **kw),
             helper.make_node("Mul", ["d", "two"], ["y"])]
    return model(nodes, {"x": x}, [("y", F32, shape), ("q", dt, shape)],
                 dict(s=s, z=z, two=np.array(2.0, F32))), {"x": x}, None


def run_and_compare(tmp, name, m, feeds):
    outs = [o.name for o in m.graph.output]
    want = nccutil.run_ort(m, feeds)
    r = nccutil.run_ncc(NCC, m, feeds, outs, nccutil.subdir(tmp, name), target="cpu")
    nccutil.check(r.rc == 0 and not r.missing, "%s: %s" % (name, r.describe()))
    for o in outs:
        why = nccutil.compare(want[o], r.outputs[o], 0.0, 0.0)
        nccutil.check(why is None, "%s output %s vs onnxruntime: %s" % (name, o, why))


def check_one_kernel(tmp, name, m, n_nodes):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    p = subprocess.run([NCC, "check", path, "--target=cpu"], capture_output=True, text=True,
                       timeout=120)
    text = p.stdout + p.stderr
    want = r"cpu: %d of %d nodes compiled into 1 kernels, 0 on the host" % (n_nodes, n_nodes)
    nccutil.check(p.returncode == 0 and re.search(want, text),
                  "%s: expected '%s', got: %s" % (name, want, text))


CASES = [  # (shape, dtype, axis)
    ((2, 5, 7, 7), U8, None), ((1, 3, 1001), I8, None), ((2, 5, 7, 7), U8, 1),
    ((3, 17, 33), I8, -1), ((4, 3, 5), U8, 0), ((1, 1000), I8, 1), ((2, 3, 4, 5), I8, 2),
]


def test_residual_chain():
    rng = np.random.default_rng(0)
    with nccutil.Workdir() as tmp:
        for k, (shape, dt, axis) in enumerate(CASES):
            m, feeds, n = residual_model(rng, shape, dt, axis)
            name = "residual_%d" % k
            run_and_compare(tmp, name, m, feeds)
            check_one_kernel(tmp, name, m, n)


def test_fake_quant_and_specials():
    rng = np.random.default_rng(1)
    with nccutil.Workdir() as tmp:
        for k, (shape, dt, axis) in enumerate(CASES):
            for special in (False, True):
                m, feeds, _ = fake_quant_model(rng, shape, dt, axis, special)
                run_and_compare(tmp, "fq_%d_%d" % (k, special), m, feeds)


def test_single_nodes_compiled():
    """Q alone and DQ alone (no chain): compiled kernels, not host ops."""
    rng = np.random.default_rng(2)
    with nccutil.Workdir() as tmp:
        for k, (shape, dt, axis) in enumerate(CASES):
            s, z = params(rng, shape, axis, dt)
            kw = {} if axis is None else {"axis": axis}
            x = (rng.standard_normal(shape) * 3).astype(F32)
            mq = model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **kw)],
                       {"x": x}, [("y", dt, shape)], dict(s=s, z=z))
            run_and_compare(tmp, "q_%d" % k, mq, {"x": x})
            check_one_kernel(tmp, "q_%d" % k, mq, 1)
            xi = ints(rng, dt, *shape)
            md = model([helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], **kw)],
                       {"x": xi}, [("y", F32, shape)], dict(s=s, z=z))
            run_and_compare(tmp, "dq_%d" % k, md, {"x": xi})
            check_one_kernel(tmp, "dq_%d" % k, md, 1)


def test_scale_read_two_ways():
    """A per-axis scale s[C] used by DQ along axis 1 of [2,C,C] and added
    to the result as a plain (right-aligned) operand: two readings of one
    value in one chain."""
    rng = np.random.default_rng(3)
    C = 5
    s = rng.uniform(0.01, 0.1, C).astype(F32)
    z = zp(rng, U8, C)
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["d"], axis=1),
             helper.make_node("Add", ["d", "s"], ["y"])]
    x = ints(rng, U8, 2, C, C)
    m = model(nodes, {"x": x}, [("y", F32, x.shape)], dict(s=s, z=z))
    with nccutil.Workdir() as tmp:
        run_and_compare(tmp, "two_ways", m, {"x": x})


def test_nan_matches_ref():
    rng = np.random.default_rng(4)
    with nccutil.Workdir() as tmp:
        for k, (shape, dt, axis) in enumerate(CASES[:4]):
            s, z = params(rng, shape, axis, dt)
            kw = {} if axis is None else {"axis": axis}
            x = (rng.standard_normal(shape) * 3).astype(F32)
            x.reshape(-1)[::7] = np.nan
            m = model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **kw)],
                      {"x": x}, [("y", dt, shape)], dict(s=s, z=z))
            res = {}
            for t in ("ref", "cpu"):
                r = nccutil.run_ncc(NCC, m, {"x": x}, ["y"],
                                    nccutil.subdir(tmp, "nan_%d_%s" % (k, t)), target=t)
                nccutil.check(r.rc == 0 and not r.missing, r.describe())
                res[t] = r.outputs["y"]
            why = nccutil.compare(res["ref"], res["cpu"], 0.0, 0.0)
            nccutil.check(why is None, "nan_%d cpu vs ref: %s" % (k, why))
            zb = np.broadcast_to(z.reshape([-1 if d == (axis or 0) % len(shape) and axis is not None
                                            else 1 for d in range(len(shape))])
                                 if axis is not None else z, shape)
            nan = np.isnan(x)
            nccutil.check((res["cpu"][nan] == zb[nan]).all(), "nan_%d: NaN is not the zero point" % k)


if __name__ == "__main__":
    sys.exit(nccutil.run_cases(nccutil.discovered_cases(globals())))
