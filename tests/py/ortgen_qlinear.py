"""tests/py/ortgen_qlinear.py — ONNX Runtime's com.microsoft QLinear ops
(QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
QLinearGlobalAveragePool, QLinearConcat, QGemm): diff_ort generators checked
against ONNX Runtime, whose kernels define these ops (they have no ONNX
specification).

The models import the com.microsoft domain; ONNX's shape inference does not
know these ops, so each output is declared with its dtype and shape here.
Cases cover u8 and s8, broadcasting, omitted zero points, equal and
different scales (QLinearConcat copies or requantizes), saturation (scales
that push most values out of range), and the wide sizes of vector tails.
The outputs are integers, compared exactly but for QLinearAdd: ONNX Runtime
adds in f32 or, on long rows with AVX2, in fixed point, which rounds a value
near a tie differently, so ncc's result (runtime/ref/ref_qlinear.c follows
the f32 path) may be one unit off there: TOL_INT. (ONNX Runtime 1.32 rejects QLinearAdd/Mul with an
omitted input zero point and aborts on QLinearSigmoid without Y's: no
case omits them; an omitted X zero point of QLinearSigmoid/LeakyRelu runs.)
"""
import numpy as np
import onnx
from onnx import helper, numpy_helper

F32, U8, I8 = np.float32, np.uint8, np.int8
OPSET = 21


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                         list(shape))


def _case(g, ns, name, ins, out_dtype, out_shape, attrs=None):
    """One com.microsoft node of g.op; ins as diff_ort's Gen.add (arrays are
    graph inputs, Const initializers, None an omitted input)."""
    feeds, inits, names = g.node_inputs(ins)
    node = helper.make_node(g.op, names, ["y0"], domain="com.microsoft", **(attrs or {}))
    graph = helper.make_graph(
        [node], "g", [_vi(k, v.dtype, v.shape) for k, v in feeds.items()],
        [_vi("y0", out_dtype, out_shape)],
        initializer=[numpy_helper.from_array(a, k) for k, a in inits.items()])
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="ncc-diff-ort")
    m.ir_version = 10
    onnx.checker.check_model(m)
    g.cases.append(ns.Case(g.op, name, m, feeds))


def _q(g, dt, *shape):
    lo, hi = (0, 256) if dt == U8 else (-128, 128)
    return g.ints(lo, hi, *shape, dtype=dt)


def _zp(g, dt):
    return np.array(g.ints(0, 256) if dt == U8 else g.ints(-128, 128), dt)


def _s(v):
    return np.array(v, F32)


def gen_binary(g, ns):
    C = ns.Const
    shapes = [((3, 4), (3, 4)), ((2, 3, 5), (5,)), ((2, 1, 5), (1, 4, 1)), ((17,), ()),
              ((), (2, 3)), ((1, 3, 7, 7), (1, 3, 7, 7))]
    for k, (sa, sb) in enumerate(shapes):
        dt = U8 if k % 2 == 0 else I8
        a, b = _q(g, dt, *sa), _q(g, dt, *sb)
        out = np.broadcast_shapes(sa, sb)
        sc = g.uniform(0.01, 0.2)
        ins = [a, C(_s(g.uniform(0.01, 0.2))), C(_zp(g, dt)), b, C(_s(g.uniform(0.01, 0.2))),
               C(_zp(g, dt)), C(_s(sc)), C(_zp(g, dt))]
        _case(g, ns, "%s_%d" % (np.dtype(dt).name, k), ins, dt, out)
    a, b = _q(g, U8, 4, 6), _q(g, U8, 4, 6)
    # a tiny output scale: most results saturate
    _case(g, ns, "saturate", [a, C(_s(0.5)), C(np.array(128, U8)), b, C(_s(0.5)),
                              C(np.array(100, U8)), C(_s(0.01)), C(np.array(128, U8))], U8, (4, 6))
    # the scales as graph inputs
    _case(g, ns, "scale_inputs", [a, _s(0.03), np.array(7, U8), b, _s(0.02), np.array(200, U8),
                                  _s(0.04), np.array(90, U8)], U8, (4, 6))


def wide_binary(g, ns):
    C = ns.Const
    for dt in (U8, I8):
        a, b = _q(g, dt, 3, 1001), _q(g, dt, 1001)
        _case(g, ns, "wide_" + np.dtype(dt).name,
              [a, C(_s(0.031)), C(_zp(g, dt)), b, C(_s(0.017)), C(_zp(g, dt)), C(_s(0.05)),
               C(_zp(g, dt))], dt, (3, 1001))


def gen_unary(g, ns, alpha=False):
    C = ns.Const
    for k, (shape, dt) in enumerate([((3, 5), U8), ((2, 3, 4), I8), ((17,), U8), ((), I8)]):
        x = _q(g, dt, *shape)
        attrs = {"alpha": float(g.uniform(0.01, 0.3))} if alpha and k % 2 else None
        ins = [x, C(_s(g.uniform(0.02, 0.1))), C(_zp(g, dt)), C(_s(g.uniform(0.002, 0.02))),
               C(_zp(g, dt))]
        _case(g, ns, "%s_%d" % (np.dtype(dt).name, k), ins, dt, shape, attrs)
    # every u8 value once, the output scale that spans the result
    _case(g, ns, "all_values", [np.arange(256, dtype=U8), C(_s(0.1)), C(np.array(128, U8)),
                                C(_s(1 / 255.0 if g.op == "QLinearSigmoid" else 0.1)),
                                C(np.array(0 if g.op == "QLinearSigmoid" else 128, U8))],
          U8, (256,))
    # X's zero point omitted (optional in onnxruntime's schema: 0), Y's given
    x = _q(g, U8, 4, 5)
    _case(g, ns, "no_x_zero_point", [x, C(_s(0.05)), None, C(_s(0.01)), C(np.array(3, U8))],
          U8, (4, 5))


def wide_unary(g, ns):
    C = ns.Const
    x = _q(g, I8, 7, 1001)
    _case(g, ns, "wide", [x, C(_s(0.04)), C(np.array(-3, I8)), C(_s(0.01)), C(np.array(5, I8))],
          I8, (7, 1001))


def gen_gap(g, ns):
    C = ns.Const
    for k, (shape, dt, last) in enumerate([((1, 3, 7, 7), U8, 0), ((2, 5, 3, 4), I8, 0),
                                           ((2, 4, 4, 6), U8, 1), ((1, 8, 5), I8, 0),
                                           ((3, 2, 1, 1), U8, 0)]):
        x = _q(g, dt, *shape)
        out = list(shape)
        for d in range(1, len(shape)):
            if d != (len(shape) - 1 if last else 1):
                out[d] = 1
        ins = [x, C(_s(g.uniform(0.01, 0.1))), C(_zp(g, dt)), C(_s(g.uniform(0.005, 0.05))),
               C(_zp(g, dt))]
        _case(g, ns, "%s_%d" % (np.dtype(dt).name, k), ins, dt, out,
              {"channels_last": last} if last else None)


def wide_gap(g, ns):
    C = ns.Const
    x = _q(g, U8, 2, 33, 31, 33)
    _case(g, ns, "wide", [x, C(_s(0.02)), C(np.array(120, U8)), C(_s(0.01)), C(np.array(130, U8))],
          U8, (2, 33, 1, 1))


def gen_concat(g, ns):
    C = ns.Const
    for k, (shapes, axis, dt) in enumerate([([(2, 3), (2, 5)], 1, U8),
                                            ([(1, 3, 4, 4), (1, 2, 4, 4), (1, 1, 4, 4)], 1, I8),
                                            ([(3, 2), (1, 2)], 0, U8),
                                            ([(2, 2, 3), (2, 2, 1)], -1, I8)]):
        sy, zy = _s(g.uniform(0.02, 0.1)), _zp(g, dt)
        ins = [C(sy), C(zy)]
        for j, s in enumerate(shapes):
            # the first input shares Y's parameters (a copy), the second
            # Y's scale only, the others neither
            zx = zy if j == 0 else np.array(zy + 3 if zy < 100 else zy - 3, dt)
            ins += [_q(g, dt, *s), C(sy if j < 2 else _s(g.uniform(0.01, 0.2))),
                    C(zx if j < 2 else _zp(g, dt))]
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        _case(g, ns, "%s_%d" % (np.dtype(dt).name, k), ins, dt, out, {"axis": axis})


def wide_concat(g, ns):
    C = ns.Const
    ins = [C(_s(0.05)), C(np.array(128, U8))]
    for n in (1001, 33):
        ins += [_q(g, U8, 3, n), C(_s(g.uniform(0.01, 0.2))), C(_zp(g, U8))]
    _case(g, ns, "wide", ins, U8, (3, 1034), {"axis": 1})


def gen_qgemm(g, ns):
    C = ns.Const
    I32 = np.int32
    for k, (M, K, N, ta, tb, dta, dtb, per, bias, yq, alpha) in enumerate([
            (3, 5, 4, 0, 0, U8, I8, False, False, True, 1.0),
            (1, 17, 10, 0, 1, U8, I8, True, True, True, 1.0),   # the classifier form
            (4, 7, 3, 1, 0, I8, I8, True, True, False, 1.0),   # f32 output
            (2, 9, 5, 1, 1, U8, U8, False, True, True, 0.5),
            (5, 3, 1, 0, 1, U8, I8, True, False, False, 2.0)]):
        a = _q(g, dta, *((K, M) if ta else (M, K)))
        b = _q(g, dtb, *((N, K) if tb else (K, N)))
        sb = g.uniform(0.001, 0.02, N) if per else np.array(g.uniform(0.001, 0.02), F32)
        zb = np.zeros(N if per else (), dtb)  # ONNX Runtime takes symmetric weights
        ins = [a, C(_s(g.uniform(0.01, 0.1))), C(_zp(g, dta)), C(b), C(sb.astype(F32)), C(zb),
               C(g.ints(-2000, 2000, N, dtype=I32)) if bias else None]
        if yq:
            ins += [C(_s(g.uniform(0.05, 0.5))), C(_zp(g, dta))]
        attrs = {"transA": ta, "transB": tb}
        if alpha != 1.0:
            attrs["alpha"] = alpha
        _case(g, ns, "case%d" % k, ins, dta if yq else F32, (M, N), attrs)


def wide_qgemm(g, ns):
    C = ns.Const
    a, b = _q(g, U8, 3, 1001), _q(g, I8, 33, 1001)
    _case(g, ns, "wide", [a, C(_s(0.05)), C(np.array(128, U8)), C(b),
                          C(g.uniform(0.001, 0.01, 33).astype(F32)), C(np.zeros(33, I8)),
                          C(g.ints(-500, 500, 33, dtype=np.int32)), C(_s(0.3)),
                          C(np.array(120, U8))], U8, (3, 33), {"transB": 1})


# ---- random sweeps over the ONNX integer ops (their basic cases are in
# ortgen_misc.py): shapes, groups, strides, pads, dilations, u8/s8, scales
# sized so that the outputs spread over the range instead of saturating ----

def _conv_ref(x, w, group, stride, pad, dil):
    """float (x) conv (w), NCHW, for sizing y_scale only."""
    N, Cin, H, W = x.shape
    M, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    OH = (H + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    OW = (W + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    y = np.zeros((N, M, OH, OW))
    mg = M // group
    for m in range(M):
        g0 = (m // mg) * cg
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g0:g0 + cg, i * dil:i * dil + stride * OH:stride,
                           j * dil:j * dil + stride * OW:stride]
                y[:, m] += np.tensordot(patch, w[m, :, i, j], axes=([1], [0]))
    return y


def sweep_qlinearconv(g, ns):
    C = ns.Const
    I32 = np.int32
    # u8 weights: channels around 128 fit the kernel's s8 operand, a
    # channel with zero point 0 and weights past 127 does not, so the node
    # must stay on the reference kernel (codegen/lower_conv.c's fit check)
    x = _q(g, U8, 1, 4, 6, 7)
    w = g.ints(100, 156, 3, 4, 3, 3, dtype=U8)
    w[2] = g.ints(0, 256, 4, 3, 3, dtype=U8)
    zw = np.array([128, 120, 0], U8)
    g.add("u8_weights_one_channel_unfit",
          [x, C(_s(0.02)), C(np.array(_zp(g, U8), U8)), C(w), C(np.full(3, 0.01, F32)),
           C(zw), C(_s(0.5)), C(np.array(_zp(g, U8), U8))], {"pads": [1] * 4}, opset=OPSET)
    for k in range(10):
        dt = (U8, I8)[k % 2]
        N = 1 + k % 2
        group = [1, 1, 2, 0][k % 4]  # 0: depthwise
        cin = [1, 3, 4, 8, 5][k % 5] * (2 if group == 2 else 1)
        group = cin if group == 0 else group
        M = group * [1, 2, 3][k % 3]
        kh = [1, 3, 5][k % 3]
        stride, pad, dil = 1 + k % 2, [0, 1, 2][k % 3], 1 + (k % 4 == 3)
        H, W = 5 + k % 4, 6 + k % 3
        x = _q(g, dt, N, cin, H, W)
        w = g.ints(-128, 128, M, cin // group, kh, kh, dtype=I8)
        sx, zx = g.uniform(0.01, 0.05), _zp(g, dt)
        sw = g.uniform(0.002, 0.02, M).astype(F32) if k % 3 else np.array(0.01, F32)
        bias = g.ints(-3000, 3000, M, dtype=I32)
        xf = (x.astype(np.float64) - zx) * sx
        wf = w * sw.reshape(-1, 1, 1, 1) if sw.ndim else w * float(sw)
        yf = _conv_ref(xf, wf, group, stride, pad, dil)
        sy = max(float(np.abs(yf).max()), 1e-3) / 100.0
        attrs = {"group": group, "strides": [stride, stride], "pads": [pad] * 4,
                 "dilations": [dil, dil]}
        g.add("sweep%d" % k,
                [x, C(_s(sx)), C(np.array(zx, dt)), C(w), C(sw),
                 C(np.zeros(sw.shape, I8)), C(_s(sy)), C(_zp(g, dt)), C(bias)], attrs,
              opset=OPSET)


def sweep_convinteger(g, ns):
    C = ns.Const
    for k in range(6):
        dt = (U8, I8)[k % 2]
        group = [1, 2, 1][k % 3]
        cin, M, kh = 2 * (1 + k % 3), 2 * (1 + k % 2), [1, 3, 2][k % 3]
        x = _q(g, dt, 1 + k % 2, cin, 5 + k, 4 + k % 3)
        w = _q(g, (U8, I8)[(k // 2) % 2], M, cin // group, kh, kh)
        zw = w.dtype.type(0) if k % 2 else w.dtype.type(3)
        g.add("sweep%d" % k, [x, C(w), C(np.array(_zp(g, dt), dt)), C(np.array(zw))],
              {"group": group, "strides": [1 + k % 2, 1], "pads": [k % 2] * 4}, opset=OPSET)


def sweep_matmul(g, ns, qlinear):
    C = ns.Const
    shapes = [((1, 8), (8, 3)), ((4, 16), (16, 9)), ((2, 3, 5), (5, 7)), ((3, 2, 4), (3, 4, 6)),
              ((2, 1, 3, 4), (1, 5, 4, 2)), ((7,), (7, 5)), ((6, 33), (33, 17))]
    for k, (sa_, sb_) in enumerate(shapes):
        dta, dtb = (U8, I8)[k % 2], (I8, U8)[(k // 2) % 2] if not qlinear else (U8, I8)[k % 2]
        a, b = _q(g, dta, *sa_), _q(g, dtb, *sb_)
        if not qlinear:
            g.add("sweep%d" % k, [a, b, C(np.array(_zp(g, dta), dta)),
                                  C(np.array(_zp(g, dtb), dtb))], opset=OPSET)
            continue
        za, zb = _zp(g, dta), _zp(g, dtb)
        sa, sb = g.uniform(0.01, 0.05), g.uniform(0.01, 0.05)
        yf = np.matmul((a.astype(np.float64) - za) * sa, (b.astype(np.float64) - zb) * sb)
        sy = max(float(np.abs(yf).max()), 1e-3) / 100.0
        g.add("sweep%d" % k, [a, C(_s(sa)), C(np.array(za, dta)), C(b), C(_s(sb)),
                              C(np.array(zb, dtb)), C(_s(sy)), C(_zp(g, dta))], opset=OPSET)


SWEEPS = {
    "QLinearConv": sweep_qlinearconv,
    "ConvInteger": sweep_convinteger,
    "MatMulInteger": lambda g, ns: sweep_matmul(g, ns, False),
    "QLinearMatMul": lambda g, ns: sweep_matmul(g, ns, True),
}


GENS = {
    "QLinearAdd": (gen_binary, wide_binary),
    "QLinearMul": (gen_binary, wide_binary),
    "QLinearSigmoid": (gen_unary, wide_unary),
    "QLinearLeakyRelu": (lambda g, ns: gen_unary(g, ns, alpha=True), wide_unary),
    "QLinearGlobalAveragePool": (gen_gap, wide_gap),
    "QLinearConcat": (gen_concat, wide_concat),
    "QGemm": (gen_qgemm, wide_qgemm),
}


def register(ns):
    if hasattr(ns, "GENERATORS"):
        for op, (gen, wide) in GENS.items():
            ns.GENERATORS[op] = (lambda f: lambda g: f(g, ns))(gen)
            ns.WIDE_GENERATORS[op] = (lambda f: lambda g: f(g, ns))(wide)
        ns.TOL_INT["QLinearAdd"] = (0.0, 1.0)
        # the sweeps run after the op's own cases (ortgen_misc.py), on the
        # op's random stream, so those keep their data
        for op, sweep in SWEEPS.items():
            base = ns.GENERATORS[op]
            ns.GENERATORS[op] = (lambda b, f: lambda g: (b(g), f(g, ns)))(base, sweep)
