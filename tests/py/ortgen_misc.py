"""tests/py/ortgen_misc.py — the quantization, misc and signal ops:
diff_ort generators checked against ONNX Runtime, and node_conformance's
revisions and skips for them.

QuantizeLinear and DequantizeLinear cover per-tensor, per-axis and
(opset 21) blocked parameters, ties at .5 (round half to even) and
saturation; the integer ops (MatMulInteger, ConvInteger, QLinear*) are
compared exactly (integer outputs). A few cases where ONNX Runtime and the
ONNX reference disagree are judged against ref only (oracles=("ref",)):
they then run only with `--target cpu --oracle ref`. Sizes and lengths
are constants here (ONNX's strict shape inference, which every generated
model passes, cannot type an output whose dims come from a graph input);
the node cases feed them as graph inputs.
"""
import numpy as np
from onnx import TensorProto, helper

F32, I64, I32, U8, I8 = np.float32, np.int64, np.int32, np.uint8, np.int8
OPSET = 21


def _q(g, ns, name, ins, attrs=None, n_out=1, opset=OPSET, oracles=None):
    g.add(name, ins, attrs, n_out=n_out, opset=opset, oracles=oracles)


# ---- quantization ----

def gen_quantize(g, ns):
    C = ns.Const
    x = g.randn(3, 5, scale=3.0)
    _q(g, ns, "u8_tensor", [x, C(np.array(0.05, F32)), C(np.array(128, U8))])
    _q(g, ns, "i8_tensor", [x, C(np.array(0.03, F32)), C(np.array(-7, I8))])
    _q(g, ns, "no_zp_u8", [np.abs(x), C(np.array(0.1, F32))])
    _q(g, ns, "scale_input", [x, np.array(0.07, F32), np.array(3, I8)])
    # exact ties: x / scale = k + 0.5 rounds to the even neighbour
    ties = np.arange(-6.5, 7.0, 1.0).astype(F32)
    _q(g, ns, "ties_even", [ties, C(np.array(1.0, F32)), C(np.array(0, I8))])
    _q(g, ns, "ties_u8", [ties, C(np.array(0.5, F32)), C(np.array(100, U8))])
    sat = np.array([-1e6, -300, -129, -128.6, 127.4, 127.6, 300, 1e6], F32)
    _q(g, ns, "saturate_i8", [sat, C(np.array(1.0, F32)), C(np.array(0, I8))])
    _q(g, ns, "saturate_u8", [sat, C(np.array(1.0, F32)), C(np.array(0, U8))])
    x4 = g.randn(2, 3, 4, 5, scale=2.0)
    s1 = g.uniform(0.01, 0.1, 3)
    _q(g, ns, "axis1_u8", [x4, C(s1), C(g.ints(0, 255, 3, dtype=U8))])
    s3 = g.uniform(0.01, 0.1, 5)
    _q(g, ns, "axis_neg1_i8", [x4, C(s3), C(g.ints(-20, 20, 5, dtype=I8))], {"axis": -1})
    _q(g, ns, "axis0_i8", [x4, C(g.uniform(0.01, 0.1, 2)), C(np.zeros(2, I8))], {"axis": 0})
    # blocked (opset 21): blocks of 2 and 3 (a ragged last block) along axis 1
    xb = g.randn(3, 8, scale=2.0)
    _q(g, ns, "blocked2_i8", [xb, C(g.uniform(0.01, 0.1, 3, 4)), C(g.ints(-5, 5, 3, 4, dtype=I8))],
       {"axis": 1, "block_size": 2})
    xb = g.randn(4, 7, 2, scale=2.0)
    _q(g, ns, "blocked3_u8", [xb, C(g.uniform(0.01, 0.1, 4, 3, 2)),
                              C(g.ints(100, 150, 4, 3, 2, dtype=U8))], {"axis": 1, "block_size": 3})
    _q(g, ns, "blocked_axis0", [xb, C(g.uniform(0.01, 0.1, 2, 7, 2))], {"axis": 0, "block_size": 3})
    _q(g, ns, "output_dtype_i8", [x, C(np.array(0.05, F32))], {"output_dtype": TensorProto.INT8})
    _q(g, ns, "opset13", [x, C(np.array(0.05, F32)), C(np.array(10, U8))], opset=13)
    _q(g, ns, "scalar_x", [np.array(1.37, F32), C(np.array(0.01, F32)), C(np.array(0, I8))])


def wide_quantize(g, ns):
    C = ns.Const
    x = g.randn(3, 1001, scale=4.0)
    _q(g, ns, "wide_u8", [x, C(np.array(0.031, F32)), C(np.array(127, U8))])
    _q(g, ns, "wide_axis", [x, C(g.uniform(0.01, 0.1, 1001)), C(g.ints(-9, 9, 1001, dtype=I8))],
       {"axis": 1})
    _q(g, ns, "wide_blocked", [x.T.copy(), C(g.uniform(0.01, 0.1, 32, 3))], {"axis": 0, "block_size": 32})


def gen_dequantize(g, ns):
    C = ns.Const
    _q(g, ns, "u8_tensor", [g.ints(0, 256, 3, 5, dtype=U8), C(np.array(0.05, F32)),
                            C(np.array(128, U8))])
    _q(g, ns, "i8_tensor", [g.ints(-128, 128, 17, dtype=I8), C(np.array(0.3, F32)),
                            C(np.array(-3, I8))])
    _q(g, ns, "no_zp", [g.ints(-128, 128, 2, 3, dtype=I8), C(np.array(0.25, F32))])
    _q(g, ns, "i32", [g.ints(-100000, 100000, 9, dtype=I32), C(np.array(0.001, F32))])
    x4 = g.ints(0, 256, 2, 3, 4, dtype=U8)
    _q(g, ns, "axis1", [x4, C(g.uniform(0.01, 0.1, 3)), C(g.ints(0, 255, 3, dtype=U8))])
    _q(g, ns, "axis_neg1", [x4, C(g.uniform(0.01, 0.1, 4)), C(g.ints(0, 255, 4, dtype=U8))],
       {"axis": -1})
    xb = g.ints(-128, 128, 3, 8, dtype=I8)
    _q(g, ns, "blocked", [xb, C(g.uniform(0.01, 0.1, 3, 4)), C(g.ints(-5, 5, 3, 4, dtype=I8))],
       {"axis": 1, "block_size": 2})
    _q(g, ns, "scale_f16", [g.ints(0, 256, 6, dtype=U8), C(np.array(0.125, np.float16)),
                            C(np.array(7, U8))])
    _q(g, ns, "opset13", [g.ints(0, 256, 5, dtype=U8), C(np.array(0.5, F32))], opset=13)
    # opset 23's output_dtype need not be the scale's type (a power-of-two
    # scale: exact in f16 whichever precision the product is taken in)
    _q(g, ns, "output_dtype_f16", [g.ints(0, 256, 2, 5, dtype=U8), C(np.array(0.125, F32)),
                                   C(np.array(100, U8))],
       {"output_dtype": TensorProto.FLOAT16}, opset=23)


def wide_dequantize(g, ns):
    C = ns.Const
    x = g.ints(-128, 128, 2, 1001, dtype=I8)
    _q(g, ns, "wide", [x, C(np.array(0.02, F32)), C(np.array(5, I8))])
    _q(g, ns, "wide_axis", [x, C(g.uniform(0.01, 0.1, 1001)), C(g.ints(-9, 9, 1001, dtype=I8))],
       {"axis": 1})


def gen_dynquant(g, ns):
    for k, x in enumerate([g.randn(3, 5, scale=2.0), g.uniform(0.5, 4.0, 17),
                           g.uniform(-4.0, -0.5, 2, 3), np.zeros((4,), F32),
                           np.array([-1.0, 0.0, 0.5, 1.0, 254.0], F32)]):
        _q(g, ns, "case%d" % k, [x], n_out=3)
    # a range below f32's smallest scale: scale 0, zero point 0 / 0 (NaN),
    # which ONNX Runtime's clamp makes 255
    _q(g, ns, "denormal_range", [np.array([1e-45, 1.4e-45], F32)], n_out=3)


def wide_dynquant(g, ns):
    _q(g, ns, "wide", [g.randn(7, 1001, scale=5.0)], n_out=3)


def gen_matmulinteger(g, ns):
    C = ns.Const
    a, b = g.ints(0, 256, 3, 5, dtype=U8), g.ints(0, 256, 5, 4, dtype=U8)
    _q(g, ns, "u8", [a, b])
    _q(g, ns, "u8_zp", [a, b, C(np.array(12, U8)), C(np.array(200, U8))])
    _q(g, ns, "u8_i8_zp", [a, g.ints(-128, 128, 5, 4, dtype=I8), C(np.array(3, U8)),
                           C(np.array(-5, I8))])
    _q(g, ns, "b_zp_per_column", [a, b, C(np.array(1, U8)), C(g.ints(0, 255, 4, dtype=U8))])
    _q(g, ns, "batched", [g.ints(0, 256, 2, 3, 7, dtype=U8), g.ints(0, 256, 7, 5, dtype=U8),
                          C(np.array(128, U8)), C(np.array(128, U8))])
    _q(g, ns, "batched_bcast", [g.ints(0, 256, 2, 1, 3, 7, dtype=U8),
                                g.ints(0, 256, 4, 7, 2, dtype=U8)])
    _q(g, ns, "a_1d", [g.ints(0, 256, 6, dtype=U8), g.ints(0, 256, 6, 3, dtype=U8)])


def wide_matmulinteger(g, ns):
    C = ns.Const
    _q(g, ns, "wide", [g.ints(0, 256, 17, 1001, dtype=U8), g.ints(-128, 128, 1001, 33, dtype=I8),
                       C(np.array(128, U8)), C(np.array(-1, I8))])


def gen_convinteger(g, ns):
    C = ns.Const
    x, w = g.ints(0, 256, 1, 3, 7, 6, dtype=U8), g.ints(0, 256, 4, 3, 3, 3, dtype=U8)
    _q(g, ns, "basic", [x, w])
    _q(g, ns, "zp", [x, w, C(np.array(100, U8)), C(np.array(30, U8))])
    _q(g, ns, "pads_strides", [x, w, C(np.array(7, U8))], {"pads": [1, 2, 1, 0], "strides": [2, 1]})
    _q(g, ns, "dilations", [x, w], {"dilations": [2, 2]})
    _q(g, ns, "same_upper", [x, w, C(np.array(128, U8))], {"auto_pad": "SAME_UPPER", "strides": [2, 2]})
    # (a per-channel w_zero_point: ONNX Runtime's ConvInteger refuses it;
    # QLinearConv.u8w_zp_per_channel covers the kernel's path)
    _q(g, ns, "group", [g.ints(0, 256, 2, 4, 5, 5, dtype=U8), g.ints(0, 256, 6, 2, 3, 3, dtype=U8),
                        C(np.array(9, U8)), C(np.array(17, U8))], {"group": 2})


def wide_convinteger(g, ns):
    _q(g, ns, "wide", [g.ints(0, 256, 1, 16, 33, 31, dtype=U8),
                       g.ints(0, 256, 8, 16, 3, 3, dtype=U8)], {"pads": [1, 1, 1, 1]})


def _qparams(g, ns, n, dt, per=None):
    """(scale, zero point) consts: scalars, or per-row/column vectors."""
    C = ns.Const
    lo, hi = (0, 256) if dt == U8 else (-20, 20)
    if per:
        return C(g.uniform(0.005, 0.05, per)), C(g.ints(lo, hi, per, dtype=dt))
    return C(np.array(g.uniform(0.005, 0.05), F32)), C(np.array(g.ints(lo, hi), dt))


def gen_qlinearmatmul(g, ns):
    for dt, tag in ((U8, "u8"), (I8, "i8")):
        lo, hi = (0, 256) if dt == U8 else (-128, 128)
        for shapes in (((3, 5), (5, 4)), ((2, 3, 7), (7, 5)), ((2, 1, 3, 6), (4, 6, 2))):
            a, b = g.ints(lo, hi, *shapes[0], dtype=dt), g.ints(lo, hi, *shapes[1], dtype=dt)
            sa, za = _qparams(g, ns, 1, dt)
            sb, zb = _qparams(g, ns, 1, dt)
            sy, zy = _qparams(g, ns, 1, dt)
            _q(g, ns, "%s_%s" % (tag, "x".join(map(str, shapes[0]))), [a, sa, za, b, sb, zb, sy, zy])
        a, b = g.ints(lo, hi, 3, 5, dtype=dt), g.ints(lo, hi, 5, 4, dtype=dt)
        sb, zb = _qparams(g, ns, 1, dt, per=4)
        sa, za = _qparams(g, ns, 1, dt)
        sy, zy = _qparams(g, ns, 1, dt)
        _q(g, ns, "%s_per_column" % tag, [a, sa, za, b, sb, zb, sy, zy])


def wide_qlinearmatmul(g, ns):
    a, b = g.ints(0, 256, 9, 1001, dtype=U8), g.ints(0, 256, 1001, 33, dtype=U8)
    sa, za = _qparams(g, ns, 1, U8)
    sb, zb = _qparams(g, ns, 1, U8)
    C = ns.Const
    _q(g, ns, "wide", [a, sa, za, b, sb, zb, C(np.array(40.0, F32)), C(np.array(128, U8))])


def gen_qlinearconv(g, ns):
    C = ns.Const
    x = g.ints(0, 256, 1, 3, 7, 6, dtype=U8)
    w = g.ints(0, 256, 4, 3, 3, 3, dtype=U8)
    sx, zx = _qparams(g, ns, 1, U8)
    sw, zw = _qparams(g, ns, 1, U8)
    sy, zy = _qparams(g, ns, 1, U8)
    sy = C(np.array(2.0, F32))
    _q(g, ns, "basic", [x, sx, zx, w, sw, zw, sy, zy])
    _q(g, ns, "bias_pads", [x, sx, zx, w, sw, zw, sy, zy, C(g.ints(-500, 500, 4, dtype=I32))],
       {"pads": [1, 1, 1, 1]})
    _q(g, ns, "strides_dil", [x, sx, zx, w, sw, zw, sy, zy], {"strides": [2, 1], "dilations": [1, 2]})
    wi = g.ints(-128, 128, 4, 3, 3, 3, dtype=I8)
    swc = C(g.uniform(0.005, 0.05, 4))
    _q(g, ns, "i8w_per_channel", [x, sx, zx, wi, swc, C(np.zeros(4, I8)), sy, zy,
                                  C(g.ints(-500, 500, 4, dtype=I32))])
    _q(g, ns, "u8w_zp_per_channel", [x, sx, zx, w, swc, C(g.ints(0, 255, 4, dtype=U8)), sy, zy])
    xi = g.ints(-128, 128, 2, 4, 5, 5, dtype=I8)
    wg = g.ints(-128, 128, 4, 1, 3, 3, dtype=I8)
    _q(g, ns, "i8_depthwise", [xi, C(np.array(0.02, F32)), C(np.array(3, I8)), wg,
                               C(np.array(0.03, F32)), C(np.array(0, I8)), C(np.array(0.1, F32)),
                               C(np.array(-4, I8))], {"group": 4, "pads": [1, 1, 1, 1]})


def wide_qlinearconv(g, ns):
    C = ns.Const
    x = g.ints(0, 256, 1, 16, 33, 17, dtype=U8)
    w = g.ints(0, 256, 8, 16, 3, 3, dtype=U8)
    _q(g, ns, "wide", [x, C(np.array(0.02, F32)), C(np.array(128, U8)), w, C(np.array(0.01, F32)),
                       C(np.array(127, U8)), C(np.array(3.0, F32)), C(np.array(120, U8))],
       {"pads": [1, 1, 1, 1]})


# ---- misc ----

def gen_det(g, ns):
    for s in ((1, 1), (2, 2), (3, 3), (5, 5), (2, 4, 4), (2, 3, 3, 3)):
        g.add("x".join(map(str, s)), [g.randn(*s)], opset=OPSET)
    sing = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], F32)
    g.add("singular", [sing], opset=OPSET)
    g.add("permuted", [np.array([[0, 1, 0], [0, 0, 2], [3, 0, 0]], F32)], opset=OPSET)


def wide_det(g, ns):
    g.add("wide_17x17", [g.randn(3, 17, 17)], opset=OPSET)


def gen_col2im(g, ns):
    C = ns.Const

    def case(name, img, blk, c=2, attrs=None):
        attrs = attrs or {}
        k = len(img)
        st = attrs.get("strides", [1] * k)
        dl = attrs.get("dilations", [1] * k)
        pd = attrs.get("pads", [0] * 2 * k)
        L = 1
        for i in range(k):
            L *= (img[i] + pd[i] + pd[i + k] - (dl[i] * (blk[i] - 1) + 1)) // st[i] + 1
        x = g.randn(2, c * int(np.prod(blk)), L)
        a, b = np.array(img, I64), np.array(blk, I64)
        g.add(name, [x, C(a), C(b)], attrs, opset=OPSET)
    case("basic", [5, 5], [2, 2])
    case("strides", [6, 7], [3, 2], attrs={"strides": [2, 3]})
    case("pads", [5, 4], [3, 3], attrs={"pads": [1, 0, 1, 2]})
    case("dilations", [7, 6], [2, 3], attrs={"dilations": [2, 2]})


def wide_col2im(g, ns):
    C = ns.Const
    x = g.randn(1, 3 * 9, 31 * 29)
    g.add("wide", [x, C(np.array([33, 31], I64)), C(np.array([3, 3], I64))], opset=OPSET)


def gen_centercroppad(g, ns):
    C = ns.Const
    x = g.randn(6, 7, 3)
    g.add("crop", [x, C(np.array([4, 3, 3], I64))], opset=OPSET)
    g.add("pad", [x, C(np.array([9, 10, 3], I64))], opset=OPSET)
    g.add("crop_pad_odd", [x, C(np.array([3, 10, 2], I64))], opset=OPSET)
    g.add("axes", [x, C(np.array([5, 8], I64))], {"axes": [0, 1]}, opset=OPSET)
    g.add("neg_axes", [x, C(np.array([2, 5], I64))], {"axes": [-1, 0]}, opset=OPSET)
    g.add("i64", [g.ints(-9, 9, 5, 4), C(np.array([2, 7], I64))], opset=OPSET)
    g.add("u8", [g.ints(0, 255, 5, 4, dtype=U8), C(np.array([8, 1], I64))], opset=OPSET)


def wide_centercroppad(g, ns):
    g.add("wide", [g.randn(3, 1001), ns.Const(np.array([5, 998], I64))], opset=OPSET)


def gen_affinegrid(g, ns):
    C = ns.Const
    for ac in (0, 1):
        g.add("2d_ac%d" % ac, [g.randn(2, 2, 3), C(np.array([2, 3, 5, 7], I64))],
              {"align_corners": ac}, opset=OPSET)
        g.add("3d_ac%d" % ac, [g.randn(2, 3, 4), C(np.array([2, 1, 3, 4, 5], I64))],
              {"align_corners": ac}, opset=OPSET)
        # a dim of size 1 with align_corners: ONNX's reference puts its one
        # point at -1, ONNX Runtime at +1; ncc follows ONNX (judged by ref)
        g.add("size1_ac%d" % ac, [g.randn(1, 2, 3), C(np.array([1, 1, 1, 4], I64))],
              {"align_corners": ac}, opset=OPSET, oracles=("ref",) if ac else None)


def wide_affinegrid(g, ns):
    g.add("wide", [g.randn(2, 2, 3), ns.Const(np.array([2, 1, 33, 31], I64))], opset=OPSET)


def _pool_unpool(g, name, x, attrs):
    """MaxPool's values and indices into MaxUnpool."""
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], **attrs),
             helper.make_node("MaxUnpool", ["p", "i"], ["y"], **attrs)]
    g.graph(name, nodes, {"x": x}, {}, ["y"], OPSET)


def gen_maxunpool(g, ns):
    _pool_unpool(g, "k2s2", g.randn(1, 2, 4, 6), {"kernel_shape": [2, 2], "strides": [2, 2]})
    _pool_unpool(g, "k3s2p1", g.randn(2, 1, 5, 5), {"kernel_shape": [3, 3], "strides": [2, 2],
                                                     "pads": [1, 1, 1, 1]})
    _pool_unpool(g, "1d", g.randn(2, 3, 9), {"kernel_shape": [3], "strides": [3]})
    # (output_shape: ONNX's shape inference cannot type the output from an
    # input, even an initializer; the node case test_maxunpool_export_with_
    # output_shape covers it)


def wide_maxunpool(g, ns):
    _pool_unpool(g, "wide", g.randn(1, 3, 34, 66), {"kernel_shape": [2, 2], "strides": [2, 2]})


def gen_maxroipool(g, ns):
    C = ns.Const
    x = g.randn(2, 3, 10, 12)
    rois = np.array([[0, 1, 1, 6, 5], [1, 0, 0, 11, 9], [0, 2.6, 3.4, 2.6, 3.4],
                     [1, 4, 2, 30, 40], [0, -3, -2, 3, 4]], F32)
    g.add("basic", [x, C(rois)], {"pooled_shape": [2, 2]}, opset=OPSET)
    g.add("scale_half", [x, rois], {"pooled_shape": [3, 2], "spatial_scale": 0.5}, opset=OPSET)
    g.add("pooled_1x4", [x, C(rois)], {"pooled_shape": [1, 4]}, opset=OPSET)


def wide_maxroipool(g, ns):
    rois = np.array([[0, 0, 0, 32, 30], [0, 5, 3, 20, 17]], F32)
    g.add("wide", [g.randn(1, 17, 31, 33), ns.Const(rois)], {"pooled_shape": [7, 7]}, opset=OPSET)


def _loss_cases(g, ns, n_out):
    C = ns.Const
    for shape in ((4, 5), (2, 3, 4), (2, 4, 3, 2)):
        x = g.randn(*shape)
        t = g.ints(0, shape[1], shape[0], *shape[2:])
        tag = "x".join(map(str, shape))
        w = C(g.uniform(0.2, 2.0, shape[1]))
        for red in ("none", "sum", "mean"):
            g.add("%s_%s" % (tag, red), [x, t], {"reduction": red}, n_out=n_out, opset=OPSET)
            g.add("%s_%s_w" % (tag, red), [x, t, w], {"reduction": red}, n_out=n_out, opset=OPSET)
        ti = t.copy()
        ti.flat[::3] = -1
        g.add("%s_ignore" % tag, [x, ti, w], {"ignore_index": -1}, n_out=n_out, opset=OPSET)
        ti = t.copy()
        ti.flat[::2] = 1
        g.add("%s_ignore_class" % tag, [x, ti], {"ignore_index": 1, "reduction": "sum"},
              n_out=n_out, opset=OPSET)
    g.add("i32_target", [g.randn(3, 4), g.ints(0, 4, 3, dtype=I32)], n_out=n_out, opset=OPSET)


def gen_nllloss(g, ns):
    _loss_cases(g, ns, 1)


def gen_sceloss(g, ns):
    _loss_cases(g, ns, 2)
    g.add("loss_only", [g.randn(3, 4), g.ints(0, 4, 3)], {"reduction": "mean"}, opset=OPSET)


def wide_loss(g, ns, n_out):
    g.add("wide", [g.randn(33, 1001), g.ints(0, 1001, 33)], n_out=n_out, opset=OPSET)


# ---- signal ----

def gen_window(g, ns):
    C = ns.Const
    for size in (1, 2, 10, 17):
        for periodic in (0, 1):
            if size == 1 and periodic == 0:
                continue  # 0 / 0 in the symmetric form
            g.add("n%d_p%d" % (size, periodic), [C(np.array(size, I64))], {"periodic": periodic},
                  opset=OPSET)
    g.add("i32_size", [C(np.array(9, I32))], opset=OPSET)
    g.add("f64", [C(np.array(8, I64))], {"output_datatype": TensorProto.DOUBLE}, opset=OPSET)


def wide_window(g, ns):
    g.add("wide", [ns.Const(np.array(1001, I64))], opset=OPSET)


def gen_dft(g, ns):
    C = ns.Const
    ax = lambda a: C(np.array(a, I64))  # noqa: E731
    g.add("real_axis1", [g.randn(2, 8, 1), None, ax(1)], opset=20)
    g.add("complex", [g.randn(3, 5, 2), None, ax(-2)], opset=20)
    g.add("real_rank4_axis2", [g.randn(2, 3, 6, 1), None, ax(2)], opset=20)
    g.add("complex_rank4_axis1", [g.randn(2, 3, 6, 2), None, ax(1)], opset=20)
    g.add("onesided", [g.randn(2, 9, 1), None, ax(1)], {"onesided": 1}, opset=20)
    g.add("onesided_even", [g.randn(2, 3, 10, 1), None, ax(2)], {"onesided": 1}, opset=20)
    g.add("inverse", [g.randn(2, 7, 2), None, ax(1)], {"inverse": 1}, opset=20)
    g.add("length_pad", [g.randn(2, 5, 2), C(np.array(8, I64)), ax(1)], opset=20)
    g.add("length_trunc", [g.randn(2, 9, 1), C(np.array(4, I64)), ax(1)], opset=20)
    g.add("default_axis", [g.randn(3, 6, 2)], opset=20)
    g.add("opset17_attr", [g.randn(2, 6, 1)], {"axis": 1}, opset=17)
    g.add("opset17_inverse", [g.randn(2, 3, 4, 2)], {"axis": 2, "inverse": 1}, opset=17)
    # inverse one-sided (irfft): ONNX's reference; ONNX Runtime lacks it
    g.add("irfft", [g.randn(2, 5, 2), None, ax(1)], {"inverse": 1, "onesided": 1}, opset=20,
          oracles=("ref",))
    # opset 17-19 without `axis`: the attribute's default 1 (not 20's -2,
    # which differs from 1 from rank 4 on)
    g.add("opset17_default_axis_rank4", [g.randn(2, 5, 6, 1)], opset=17)


def wide_dft(g, ns):
    # a power of 2: ONNX Runtime's radix-2 FFT is accurate there (its O(n^2)
    # f32 sums for other lengths drift past 1e-4 from n ~ 200)
    g.add("wide", [g.randn(2, 512, 1), None, ns.Const(np.array(1, I64))], opset=20)
    g.add("wide_complex", [g.randn(3, 256, 2), None, ns.Const(np.array(1, I64))], {"inverse": 1},
          opset=20)


def gen_stft(g, ns):
    C = ns.Const
    x = g.randn(1, 64, 1)
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(F32)
    # onesided is written out: ONNX's shape inference takes an absent one as
    # 0 (its default is 1, as ONNX Runtime and ncc take it)
    g.add("window", [x, C(np.array(8, I64)), C(hann)], {"onesided": 1}, opset=17)
    g.add("frame_length", [x, C(np.array(6, I64)), None, C(np.array(10, I64))], {"onesided": 1},
          opset=17)
    g.add("two_sided", [g.randn(2, 40, 1), C(np.array(5, I64)), C(g.uniform(0, 1, 12))],
          {"onesided": 0}, opset=17)
    g.add("complex", [g.randn(2, 30, 2), C(np.array(7, I64)), C(g.uniform(0, 1, 9))],
          {"onesided": 0}, opset=17)


def wide_stft(g, ns):
    w = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(64) / 64)).astype(F32)
    g.add("wide", [g.randn(2, 1001, 1), ns.Const(np.array(33, I64)), ns.Const(w)],
          {"onesided": 1}, opset=17)


def gen_melweight(g, ns):
    C = ns.Const
    for k, (bins, n, rate, lo, hi) in enumerate([(8, 16, 8192, 0.0, 4096.0), (10, 64, 16000, 20.0, 8000.0),
                                                 (4, 32, 44100, 100.0, 5000.0), (20, 512, 16000, 0.0, 8000.0)]):
        g.add("case%d" % k, [C(np.array(bins, I64)), C(np.array(n, I64)), C(np.array(rate, I64)),
                             C(np.array(lo, F32)), C(np.array(hi, F32))], opset=17)


def wide_melweight(g, ns):
    C = ns.Const
    g.add("wide", [C(np.array(64, I64)), C(np.array(2000, I64)), C(np.array(16000, I64)),
                   C(np.array(0.0, F32)), C(np.array(8000.0, F32))], opset=17)


GENS = {
    "QuantizeLinear": (gen_quantize, wide_quantize, None),
    "DequantizeLinear": (gen_dequantize, wide_dequantize, (1e-6, 1e-7)),
    "DynamicQuantizeLinear": (gen_dynquant, wide_dynquant, (1e-6, 1e-7)),
    "MatMulInteger": (gen_matmulinteger, wide_matmulinteger, None),
    "ConvInteger": (gen_convinteger, wide_convinteger, None),
    "QLinearMatMul": (gen_qlinearmatmul, wide_qlinearmatmul, None),
    "QLinearConv": (gen_qlinearconv, wide_qlinearconv, None),
    "Det": (gen_det, wide_det, (1e-4, 1e-5)),
    "Col2Im": (gen_col2im, wide_col2im, (1e-5, 1e-6)),
    "CenterCropPad": (gen_centercroppad, wide_centercroppad, None),
    "AffineGrid": (gen_affinegrid, wide_affinegrid, (1e-5, 1e-6)),
    "MaxUnpool": (gen_maxunpool, wide_maxunpool, None),
    "MaxRoiPool": (gen_maxroipool, wide_maxroipool, None),
    "NegativeLogLikelihoodLoss": (gen_nllloss, lambda g, ns: wide_loss(g, ns, 1), (1e-5, 1e-6)),
    "SoftmaxCrossEntropyLoss": (gen_sceloss, lambda g, ns: wide_loss(g, ns, 2), (1e-5, 1e-5)),
    "HannWindow": (gen_window, wide_window, (1e-5, 1e-6)),
    "HammingWindow": (gen_window, wide_window, (1e-5, 1e-6)),
    "BlackmanWindow": (gen_window, wide_window, (1e-5, 1e-6)),
    "DFT": (gen_dft, wide_dft, (1e-4, 1e-4)),
    "STFT": (gen_stft, wide_stft, (1e-4, 1e-4)),
    "MelWeightMatrix": (gen_melweight, wide_melweight, (1e-5, 1e-6)),
}


def register(ns):
    if hasattr(ns, "GENERATORS"):
        for op, (gen, wide, tol) in GENS.items():
            ns.GENERATORS[op] = (lambda f: lambda g: f(g, ns))(gen)
            ns.WIDE_GENERATORS[op] = (lambda f: lambda g: f(g, ns))(wide)
            if tol:
                ns.TOL[op] = tol
        return
    # node_conformance: revisions after 21 that only added types (bfloat16
    # in 22; float4/float8e8m0/int2 and the float8 `precision` in 23-28:
    # a case using those is still skipped, by its dtype or attribute)
    ns.TYPE_ONLY_REVISIONS.update({
        "QuantizeLinear": 28, "DequantizeLinear": 28, "Det": 22,
        "MaxUnpool": 22, "MaxRoiPool": 22, "NegativeLogLikelihoodLoss": 22,
    })
    ns.SKIP_REASONS.append(
        (r"quantizelinear_blocked_symmetric",
         "QuantizeLinear to int16 (output_dtype): int16 is not an ncc dtype yet",
         ns.DTYPE_WORDS))
