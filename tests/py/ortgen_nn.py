"""tests/py/ortgen_nn.py — the reduction, normalization, pooling and attention ops for diff_ort.py and
node_conformance.py: ReduceL1/L2/Prod/Min/LogSum/LogSumExp/SumSquare,
Instance/Group/Lp/MeanVariance/RMS normalization, LRN, GlobalMaxPool,
LpPool, GlobalLpPool, ConvTranspose, RoiAlign, Attention, RotaryEmbedding.

register(ns) is called with the script's module: diff_ort.py (it has
GENERATORS) gets the generators and tolerances, node_conformance.py the
type-only revisions, the skip reasons, and the ops that first appear after
opset 21 (Attention, RotaryEmbedding, RMSNormalization: NEW_OPS, run at
their own opset).
"""
import numpy as np

REDUCES = ["ReduceL1", "ReduceL2", "ReduceProd", "ReduceMin", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceSumSquare"]

# Ops of this family that exist only from opset 23 on, and the newest
# revision implemented (Attention 24 added nonpad_kv_seqlen, 25 the sliding
# window).
NEW_AFTER_21 = {"Attention": 25, "RotaryEmbedding": 23, "RMSNormalization": 23}


# ---------------------------------------------------------------------------
# node_conformance.py

def _register_conformance(ns):
    ns.TYPE_ONLY_REVISIONS.update({
        # 22 added bfloat16 only
        "ConvTranspose": 22, "GlobalMaxPool": 22, "InstanceNormalization": 22,
        "LpNormalization": 22, "LpPool": 22, "GlobalLpPool": 22, "RoiAlign": 22,
        # 28 dropped the integer types (float semantics unchanged)
        "ReduceLogSum": 28, "ReduceLogSumExp": 28,
    })
    ns.NEW_OPS.update(NEW_AFTER_21)


def register(ns):
    if hasattr(ns, "GENERATORS"):
        _register_diff_ort(ns)
    else:
        _register_conformance(ns)


# ---------------------------------------------------------------------------
# diff_ort.py generators (ns is diff_ort's module: Gen, Const, F32, I64)

F32, I64 = np.float32, np.int64


def _add_typed(g, ns, name, ins, attrs, out_shape, opset, out_shapes=None):
    """One node whose outputs are typed by hand (float32, out_shape, or
    each of out_shapes; None: an omitted input): onnx's
    shape inference gives no shape for GroupNormalization and fails on
    MeanVarianceNormalization without `axes`, which diff_ort's make_model
    insists on."""
    from onnx import helper, numpy_helper
    feeds, inits, names = {}, [], []
    for i, x in enumerate(ins):
        if x is None:
            names.append("")
        elif isinstance(x, ns.Const):
            names.append("c%d" % i)
            inits.append(numpy_helper.from_array(x.value, "c%d" % i))
        else:
            names.append("x%d" % i)
            feeds["x%d" % i] = np.asarray(x)
    out_shapes = out_shapes or [out_shape]
    outs = ["y%d" % i for i in range(len(out_shapes))]
    node = helper.make_node(g.op, names, outs, **attrs)
    _graph_typed(g, ns, name, [node], feeds, inits, dict(zip(outs, out_shapes)), opset)


def _graph_typed(g, ns, name, nodes, feeds, inits, outs, opset):
    """A graph of `nodes` with float32 outputs {name: shape} typed by hand
    (inits: TensorProtos)."""
    from onnx import helper
    graph = helper.make_graph(
        nodes, "g", [ns._vi(k, v) for k, v in feeds.items()],
        [helper.make_tensor_value_info(o, 1, list(sh)) for o, sh in outs.items()],
        initializer=inits)
    opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="ncc-diff-ort")
    m.ir_version = helper.find_min_ir_version_for(opsets)
    if not (g.op == "GroupNormalization" and opset < 21):  # deprecated there
        ns.onnx.checker.check_model(m)
    g.cases.append(ns.Case(g.op, name, m, feeds))


def _after_conv(g, ns, name, c, node_of, out_shape, opset=18, extra_inits=()):
    """Conv (3x3, pad 1, c -> c channels) then Relu then the op: on the cpu
    target the op's reference kernel reads the output of a compiled (fused
    Conv+Relu) kernel. Small integers make every conv sum exact, so that
    only the op's own rounding is compared."""
    from onnx import helper, numpy_helper
    x = g.ints(-3, 4, 1, c, 9, 9).astype(F32)
    w = g.ints(-2, 3, c, c, 3, 3).astype(F32)
    inits = [numpy_helper.from_array(w, "w")] + [
        numpy_helper.from_array(v, k) for k, v in extra_inits]
    nodes = [helper.make_node("Conv", ["x", "w"], ["t"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["t"], ["r"]), node_of("r", "y0")]
    _graph_typed(g, ns, name, nodes, {"x": x}, inits, {"y0": out_shape}, opset)


def _reduce_data(g, *shape):
    if g.op == "ReduceLogSum":
        return g.uniform(0.1, 2.0, *shape)
    if g.op == "ReduceProd":
        return (g.uniform(0.8, 1.25, *shape) * g.rng.choice([-1.0, 1.0], shape)).astype(F32)
    return g.randn(*shape)


def gen_reduce_nn(g, ns):
    C = ns.Const
    x = _reduce_data(g, 2, 3, 5)
    for axes in ([1], [0, 2], [-1], [0, 1, 2], None):
        for keep in (1, 0):
            ins = [x] + ([C(np.array(axes, I64))] if axes is not None else [])
            g.add("axes%s_keep%d" % ("".join(map(str, axes)) if axes else "all", keep),
                  ins, {"keepdims": keep})
    g.add("noop_empty_axes", [x], {"noop_with_empty_axes": 1})
    g.add("rank4_hw", [_reduce_data(g, 2, 3, 7, 9), C(np.array([2, 3], I64))])
    g.add("size1", [_reduce_data(g, 1, 1), C(np.array([0], I64))], {"keepdims": 0})
    for k in range(2):
        shape = g.shape(1, 4)
        axes = sorted(g.rng.choice(len(shape), g.rng.randint(1, len(shape) + 1), replace=False))
        axes = [int(a) - len(shape) if g.rng.rand() < 0.5 else int(a) for a in axes]
        g.add("random%d_%s" % (k, ns.shape_tag(shape)),
              [_reduce_data(g, *shape), C(np.array(axes, I64))], {"keepdims": k % 2})
    # the opset 13-17 form: axes as an attribute (kept in ncc's IR)
    g.add("opset13_attr_axes", [x], {"axes": [1], "keepdims": 0}, opset=13)
    g.add("opset13_attr_neg_axes", [x], {"axes": [-1, 0]}, opset=13)
    g.add("opset13_all", [x], {}, opset=13)
    if g.op in ("ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1"):
        g.add("i64", [g.ints(-20, 20, 3, 4), C(np.array([1], I64))])
        g.add("i32", [g.ints(-20, 20, 3, 4, dtype=np.int32), C(np.array([0], I64))])


def wide_reduce_nn(g, ns):
    C = ns.Const

    def red(name, x, axes, keep=1):
        g.add(name, [x, C(np.array(axes, I64))], {"keepdims": keep})
    if g.op == "ReduceProd":  # products of ~1000 terms stay finite near 1
        big = lambda *s: (g.uniform(0.995, 1.005, *s)).astype(F32)  # noqa: E731
    else:
        big = lambda *s: _reduce_data(g, *s)  # noqa: E731
    red("wide_all1000", big(1000), [0])
    red("wide_rows", big(17, 1000), [-1])
    red("wide_cols", big(1000, 17), [0], keep=0)
    red("wide_middle", big(3, 1001, 3), [1], keep=0)
    if g.op in ("ReduceMin", "ReduceLogSumExp", "ReduceL1", "ReduceL2", "ReduceSumSquare"):
        x = g.randn(4, 37)
        x[1, 36], x[2, 20], x[3, 0] = np.inf, -np.inf, -np.inf
        x[3, :] = -np.inf if g.op == "ReduceLogSumExp" else x[3, :]
        g.add("special_rows", [x, C(np.array([1], I64))])
    if g.op == "ReduceLogSumExp":
        g.add("large", [g.randn(3, 33, scale=100.0), C(np.array([1], I64))])


def _norm_params(g, c):
    return [g.uniform(0.5, 1.5, c), g.randn(c, scale=0.1)]


def gen_instancenorm(g, ns):
    C = ns.Const
    for name, shape in (("nchw", (2, 3, 5, 7)), ("ncl", (3, 4, 17)), ("c1", (1, 1, 6, 6)),
                        ("ncdhw", (1, 2, 3, 4, 5)), ("wide_c", (1, 17, 3, 3))):
        sc, b = _norm_params(g, shape[1])
        g.add(name, [g.randn(*shape, scale=2.0) + 1.0, C(sc), C(b)])
    sc, b = _norm_params(g, 3)
    g.add("eps", [g.randn(2, 3, 4, 4), C(sc), C(b)], {"epsilon": 1e-2})
    g.add("runtime_params", [g.randn(2, 3, 4, 4), sc, b])
    g.add("opset13", [g.randn(1, 3, 4, 4), C(sc), C(b)], opset=13)
    sc, b = _norm_params(g, 16)
    _after_conv(g, ns, "after_conv", 16,
                lambda i, o: ns.helper.make_node("InstanceNormalization", [i, "s", "b"], [o]),
                (1, 16, 9, 9), 18, [("s", sc), ("b", b)])


def wide_instancenorm(g, ns):
    sc, b = _norm_params(g, 3)
    g.add("wide_1001", [g.randn(2, 3, 1001, scale=3.0) + 2.0, ns.Const(sc), ns.Const(b)])


def gen_groupnorm(g, ns):
    C = ns.Const

    def gn(name, shape, groups, opset=21, per_group=False, **attrs):
        c = groups if per_group else shape[1]
        sc, b = _norm_params(g, c)
        _add_typed(g, ns, name, [g.randn(*shape, scale=2.0) + 0.5, C(sc), C(b)],
                   dict(attrs, num_groups=groups), shape, opset)
    gn("g2_nchw", (2, 4, 5, 5), 2)
    gn("g1", (1, 6, 4, 4), 1)
    gn("g_eq_c", (2, 3, 7), 3)
    gn("g4_ncl", (3, 8, 17), 4)
    gn("eps", (1, 4, 3, 3), 2, epsilon=1e-2)
    gn("unet_like", (1, 32, 8, 8), 8)
    gn("ncdhw", (1, 4, 2, 3, 4), 2)
    gn("opset18_per_group", (2, 6, 4, 4), 3, opset=18, per_group=True)
    gn("opset18_g1", (1, 4, 5, 5), 1, opset=18, per_group=True)
    sc, b = _norm_params(g, 16)
    _after_conv(g, ns, "after_conv", 16,
                lambda i, o: ns.helper.make_node("GroupNormalization", [i, "s", "b"], [o],
                                                 num_groups=4),
                (1, 16, 9, 9), 21, [("s", sc), ("b", b)])


def wide_groupnorm(g, ns):
    sc, b = _norm_params(g, 64)
    _add_typed(g, ns, "wide_sd_block",
               [g.randn(1, 64, 33, 31, scale=3.0), ns.Const(sc), ns.Const(b)],
               {"num_groups": 32}, (1, 64, 33, 31), 21)


def gen_lpnorm(g, ns):
    for p in (1, 2):
        for axis in (-1, 0, 1):
            g.add("p%d_axis%d" % (p, axis), [g.nonzero(3, 4, 5)], {"p": p, "axis": axis})
    g.add("default", [g.nonzero(2, 17)])
    g.add("rank1", [g.nonzero(17)], {"p": 2, "axis": 0})
    g.add("rank4_axis1", [g.nonzero(2, 3, 4, 5)], {"axis": 1})
    z = g.nonzero(3, 4)
    z[1, :] = 0.0  # a zero vector stays zero
    g.add("zero_row", [z], {"axis": 1})


def wide_lpnorm(g, ns):
    g.add("wide_rows", [g.nonzero(3, 1001)], {"p": 2, "axis": -1})
    g.add("wide_cols", [g.nonzero(1000, 3)], {"p": 1, "axis": 0})


def gen_mvn(g, ns):
    _add_typed(g, ns, "default_nchw", [g.randn(2, 3, 4, 5, scale=2.0) + 1.0], {},
               (2, 3, 4, 5), 18)
    for axes in ([1], [2, 3], [0, 1, 2, 3], [-1], [0]):
        g.add("axes" + "".join(str(a) for a in axes), [g.randn(2, 3, 4, 5) + 0.5], {"axes": axes})
    g.add("rank3", [g.randn(3, 5, 7)], {"axes": [0, 2]})
    _add_typed(g, ns, "opset13", [g.randn(2, 3, 3, 3)], {}, (2, 3, 3, 3), 13)


def wide_mvn(g, ns):
    g.add("wide", [g.randn(2, 1001, 3, scale=4.0)], {"axes": [1]})


def gen_rmsnorm(g, ns):
    C = ns.Const

    def rms(name, shape, axis=-1, scale_shape=None, **attrs):
        norm = shape[axis:] if scale_shape is None else scale_shape
        g.add(name, [g.randn(*shape, scale=2.0), C(g.uniform(0.5, 1.5, *norm))],
              dict(attrs, axis=axis), opset=23)
    rms("last", (2, 3, 17))
    rms("axis1", (2, 3, 5), axis=1)
    rms("axis0", (3, 4), axis=0)
    rms("axis_neg2", (2, 3, 5), axis=-2)
    rms("eps", (3, 16), epsilon=1e-2)
    rms("bcast_scale", (2, 3, 5), axis=1, scale_shape=(1, 5))
    rms("rank1", (17,))
    g.add("runtime_scale", [g.randn(4, 8), g.uniform(0.5, 1.5, 8)], {"axis": -1}, opset=23)


def wide_rmsnorm(g, ns):
    g.add("wide_1001", [g.randn(3, 1001, scale=3.0), ns.Const(g.uniform(0.5, 1.5, 1001))],
          opset=23)


def gen_lrn(g, ns):
    g.add("size3", [g.randn(2, 5, 4, 4)], {"size": 3})
    g.add("size5_attrs", [g.randn(1, 7, 3, 3)], {"size": 5, "alpha": 1e-3, "beta": 0.5,
                                                 "bias": 2.0})
    g.add("size1", [g.randn(1, 3, 2, 2)], {"size": 1})
    g.add("size_gt_c", [g.randn(2, 3, 3, 3)], {"size": 7, "alpha": 0.1})
    g.add("c17", [g.randn(1, 17, 3, 5)], {"size": 5, "alpha": 0.3, "beta": 1.0})
    # (ONNX Runtime takes only 4-D inputs and odd sizes; the node cases and
    # the even-size/3-D forms are ONNX's reference's)


def wide_lrn(g, ns):
    g.add("wide", [g.randn(1, 33, 17, 17, scale=3.0)], {"size": 5, "alpha": 0.5})


def gen_globalmaxpool(g, ns):
    for shape in ((2, 3, 5, 7), (1, 17, 1, 1), (2, 3, 9), (1, 4, 16, 16), (1, 2, 3, 4, 5)):
        g.add("x".join(map(str, shape)), [g.randn(*shape)])


def _gmp_after_conv(g, ns):
    _after_conv(g, ns, "after_conv", 16,
                lambda i, o: ns.helper.make_node("GlobalMaxPool", [i], [o]), (1, 16, 1, 1))


def wide_globalmaxpool(g, ns):
    _gmp_after_conv(g, ns)
    g.add("wide", [g.randn(1, 33, 33, 31)])
    x = g.randn(1, 2, 3, 37)
    x[0, 0, 1, 5], x[0, 1, 2, 36] = np.inf, -np.inf
    g.add("special", [x])


def gen_globallppool(g, ns):
    for shape in ((2, 3, 5, 7), (1, 17, 1, 1), (2, 3, 9), (1, 2, 3, 4, 5)):
        g.add("p2_" + "x".join(map(str, shape)), [g.randn(*shape)])
    for p in (1, 3):
        g.add("p%d" % p, [g.randn(2, 3, 4, 4)], {"p": p})


def wide_globallppool(g, ns):
    g.add("wide", [g.randn(1, 33, 33, 31)], {"p": 2})


def gen_lppool(g, ns):
    def pool(name, shape, **attrs):
        g.add(name, [g.randn(*shape)], attrs)
    pool("k2s2", (1, 3, 8, 8), kernel_shape=[2, 2], strides=[2, 2])
    pool("k3p1", (2, 2, 7, 9), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    pool("p1", (1, 2, 6, 6), kernel_shape=[2, 2], p=1)
    pool("p3", (1, 2, 6, 6), kernel_shape=[3, 3], p=3)
    pool("same_upper", (1, 2, 7, 7), kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    pool("dilation2", (1, 1, 9, 9), kernel_shape=[2, 2], dilations=[2, 2])
    pool("ceil", (1, 2, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    pool("1d", (2, 3, 17), kernel_shape=[3], strides=[2])
    pool("3d", (1, 2, 4, 5, 6), kernel_shape=[2, 2, 2])
    g.add("opset13", [g.randn(1, 2, 5, 5)], {"kernel_shape": [2, 2]}, opset=13)


def wide_lppool(g, ns):
    g.add("wide", [g.randn(1, 17, 33, 31)], {"kernel_shape": [3, 3], "strides": [2, 2],
                                              "pads": [1, 1, 1, 1]})


def gen_convtranspose(g, ns):
    C = ns.Const

    def ct(name, x_shape, w_shape, bias=True, group=1, **attrs):
        x = g.randn(*x_shape)
        w = g.randn(*w_shape, scale=0.5)
        ins = [x, C(w)] + ([C(g.randn(w_shape[1] * group))] if bias else [])
        if group != 1:
            attrs["group"] = group
        g.add(name, ins, attrs)
    ct("k3", (1, 3, 5, 5), (3, 2, 3, 3))
    ct("k3_no_bias", (2, 2, 4, 6), (2, 3, 3, 3), bias=False)
    ct("s2_k4_p1_upsample", (1, 4, 6, 6), (4, 3, 4, 4), strides=[2, 2], pads=[1, 1, 1, 1])
    ct("s2_k3_p1_outpad1", (1, 3, 5, 7), (3, 2, 3, 3), strides=[2, 2], pads=[1, 1, 1, 1],
       output_padding=[1, 1])
    ct("s2_k2", (2, 3, 4, 4), (3, 5, 2, 2), strides=[2, 2])
    ct("dilation2", (1, 2, 5, 5), (2, 2, 3, 3), dilations=[2, 2])
    ct("groups2", (1, 4, 5, 5), (4, 3, 3, 3), group=2, pads=[1, 1, 1, 1])
    ct("depthwise", (1, 3, 4, 4), (3, 1, 3, 3), group=3, strides=[2, 2])
    ct("asym_pads", (1, 2, 5, 4), (2, 2, 3, 3), pads=[0, 1, 2, 0])
    ct("output_shape", (1, 2, 3, 3), (2, 2, 3, 3), strides=[3, 2], output_shape=[10, 8])
    ct("same_upper_s2", (1, 2, 4, 4), (2, 3, 4, 4), strides=[2, 2], auto_pad="SAME_UPPER")
    ct("valid", (1, 2, 3, 3), (2, 2, 3, 3), auto_pad="VALID", strides=[2, 1])
    ct("1d", (2, 3, 17), (3, 4, 3), strides=[2], pads=[1, 1], output_padding=[1])
    ct("3d", (1, 2, 3, 4, 3), (2, 2, 3, 3, 2), strides=[2, 1, 2])
    ct("1x1", (1, 5, 4, 4), (5, 3, 1, 1))
    ct("stride_gt_kernel", (1, 2, 3, 3), (2, 2, 2, 2), strides=[3, 3])
    _after_conv(g, ns, "after_conv", 16,
                lambda i, o: ns.helper.make_node("ConvTranspose", [i, "wt", "bt"], [o],
                                                 strides=[2, 2], pads=[1, 1, 1, 1]),
                (1, 8, 18, 18), 18,
                [("wt", g.randn(16, 8, 4, 4, scale=0.2)), ("bt", g.randn(8))])
    for k in range(4):
        grp = int(g.rng.choice([1, 1, 2]))
        cin, cout = grp * g.rng.randint(1, 4), g.rng.randint(1, 3)
        ker = [int(v) for v in g.rng.randint(1, 4, 2)]
        st = [int(v) for v in g.rng.randint(1, 3, 2)]
        dil = [int(v) for v in g.rng.randint(1, 3, 2)]
        pads = [int(g.rng.randint(0, ker[i % 2])) for i in range(4)]
        op = [int(g.rng.randint(0, st[i])) for i in range(2)]  # ORT: < stride
        hw = [int(v) for v in g.rng.randint(3, 8, 2)]
        ct("random%d_g%d_k%dx%d_s%d%d_d%d%d" % (k, grp, ker[0], ker[1], st[0], st[1],
                                                dil[0], dil[1]),
           (1, cin) + tuple(hw), (cin, cout) + tuple(ker), bias=bool(k % 2), group=grp,
           strides=st, dilations=dil, pads=pads, output_padding=op)


def wide_convtranspose(g, ns):
    C = ns.Const
    g.add("wide_unet_up", [g.randn(1, 32, 17, 16), C(g.randn(32, 16, 4, 4, scale=0.2)),
                           C(g.randn(16))], {"strides": [2, 2], "pads": [1, 1, 1, 1]})
    g.add("wide_1d", [g.randn(1, 8, 500), C(g.randn(8, 3, 3, scale=0.3))],
          {"strides": [2], "pads": [1, 1], "output_padding": [1]})


def gen_roialign(g, ns):
    C = ns.Const

    def rois(n, h, w, scale=1.0):
        x0 = g.uniform(0, w / scale * 0.6, n)
        y0 = g.uniform(0, h / scale * 0.6, n)
        x1 = x0 + g.uniform(0.5, w / scale * 0.5, n)
        y1 = y0 + g.uniform(0.5, h / scale * 0.5, n)
        return np.stack([x0, y0, x1, y1], axis=1).astype(F32)

    def ra(name, x_shape, n, scale=1.0, **attrs):
        x = g.randn(*x_shape)
        r = rois(n, x_shape[2], x_shape[3], scale)
        bi = g.ints(0, x_shape[0], n)
        if scale != 1.0:
            attrs["spatial_scale"] = scale
        g.add(name, [x, r, bi], attrs, opset=16)
    ra("default", (1, 2, 8, 8), 3)
    ra("out3x2_sr2", (2, 3, 10, 9), 4, output_height=3, output_width=2, sampling_ratio=2)
    ra("adaptive_scale", (1, 2, 12, 12), 3, scale=0.5, output_height=4, output_width=4)
    ra("max", (1, 2, 8, 8), 3, mode="max", output_height=2, output_width=2, sampling_ratio=2)
    ra("output_half_pixel", (1, 2, 8, 8), 3, coordinate_transformation_mode="output_half_pixel",
       output_height=2, output_width=3)
    ra("max_output_half_pixel", (2, 1, 7, 9), 2, mode="max",
       coordinate_transformation_mode="output_half_pixel", output_height=3, output_width=3)
    # regions partly outside the map
    x = g.randn(1, 2, 6, 6)
    r = np.array([[-2.0, -1.0, 3.0, 4.0], [4.0, 4.0, 8.5, 7.0], [0.0, 0.0, 0.2, 0.3]], F32)
    g.add("outside", [x, r, np.zeros(3, I64)], {"output_height": 2, "output_width": 2},
          opset=16)
    g.add("const_rois", [g.randn(1, 3, 8, 8), C(rois(2, 8, 8)), C(np.zeros(2, I64))],
          {"output_height": 3, "output_width": 3}, opset=16)


def wide_roialign(g, ns):
    x = g.randn(2, 17, 33, 31)
    r = np.array([[1.0, 2.0, 30.0, 25.0], [0.0, 0.0, 31.0, 33.0], [5.5, 6.5, 9.0, 12.0]], F32)
    g.add("wide", [x, r, np.array([0, 1, 1], I64)],
          {"output_height": 7, "output_width": 7, "spatial_scale": 1.0}, opset=16)


def gen_attention(g, ns):
    C = ns.Const

    def att(name, q, k, v, extra=(), n_out=1, **attrs):
        ins = [g.randn(*q), g.randn(*k), g.randn(*v)] + list(extra)
        g.add(name, ins, attrs, n_out=n_out, opset=23)
    att("4d", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5))
    att("4d_gqa", (1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8))
    att("4d_scaled", (1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), scale=0.3)
    att("4d_causal", (1, 2, 5, 4), (1, 2, 5, 4), (1, 2, 5, 4), is_causal=1)
    att("4d_causal_rect", (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), is_causal=1)
    att("3d", (2, 4, 12), (2, 6, 12), (2, 6, 9), q_num_heads=3, kv_num_heads=3)
    att("3d_gqa", (1, 4, 16), (1, 5, 8), (1, 5, 8), q_num_heads=4, kv_num_heads=2)
    att("mask_float", (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4),
        [g.randn(3, 5)])
    m = g.rng.rand(1, 2, 3, 5) > 0.3
    m[..., 0] = True
    att("mask_bool_4d", (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), [m])
    att("mask_3d_causal", (1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 4, 4),
        [g.randn(2, 4, 4)], is_causal=1)
    att("softcap", (1, 2, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8), softcap=2.0, scale=1.0)
    att("past_present", (1, 2, 2, 4), (1, 2, 3, 4), (1, 2, 3, 6),
        [None, g.randn(1, 2, 4, 4), g.randn(1, 2, 4, 6)], n_out=3)
    att("past_present_causal_gqa", (1, 4, 2, 4), (1, 2, 2, 4), (1, 2, 2, 4),
        [None, g.randn(1, 2, 3, 4), g.randn(1, 2, 3, 4)], n_out=3, is_causal=1)
    # qk_matmul_output: ONNX's reference (the node cases) soft-caps before
    # the mask in every mode, ONNX Runtime gives mode 0 before the softcap
    # and writes masked scores as -FLT_MAX: compared here where both agree
    # (a finite mask; softcap only in modes 1 and 3).
    qk_shapes = [(1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 3, 4)]
    for mode in range(4):
        attrs = {"qk_matmul_output_mode": mode}
        if mode in (1, 3):
            attrs.update(softcap=3.0, is_causal=1)
        _add_typed(g, ns, "qk_out_mode%d" % mode,
                   [g.randn(1, 2, 3, 4), g.randn(1, 2, 4, 4), g.randn(1, 2, 4, 4),
                    C(g.randn(3, 4)), None, None], attrs, None, 23, qk_shapes)


def wide_attention(g, ns):
    g.add("wide", [g.randn(1, 2, 33, 64), g.randn(1, 2, 100, 64), g.randn(1, 2, 100, 17)],
          {"is_causal": 1}, opset=23)


def gen_rotary(g, ns):
    def caches(rows, half, batch=None, seq=None):
        shape = (rows, half) if batch is None else (batch, seq, half)
        ang = g.uniform(0, 6.283, *shape)
        return np.cos(ang).astype(F32), np.sin(ang).astype(F32)

    def rot(name, x_shape, half, pos=True, **attrs):
        b, s = x_shape[0], x_shape[2] if len(x_shape) == 4 else x_shape[1]
        if pos:
            cos, sin = caches(12, half)
            ins = [g.randn(*x_shape), cos, sin, g.ints(0, 12, b, s)]
        else:
            cos, sin = caches(0, half, b, s)
            ins = [g.randn(*x_shape), cos, sin]
        g.add(name, ins, attrs, opset=23)
    rot("4d", (2, 3, 4, 8), 4)
    rot("4d_interleaved", (1, 2, 5, 6), 3, interleaved=1)
    rot("3d", (2, 3, 12), 2, num_heads=3)
    rot("3d_interleaved", (1, 4, 16), 4, num_heads=2, interleaved=1)
    rot("partial_dim", (1, 2, 3, 8), 2, rotary_embedding_dim=4)
    rot("partial_interleaved", (1, 2, 3, 8), 3, rotary_embedding_dim=6, interleaved=1)
    rot("no_position_ids", (2, 2, 3, 4), 2, pos=False)
    rot("no_position_ids_3d", (1, 3, 8), 2, pos=False, num_heads=2)


def wide_rotary(g, ns):
    cos = np.cos(g.uniform(0, 6.283, 128, 32)).astype(F32)
    sin = np.sin(g.uniform(0, 6.283, 128, 32)).astype(F32)
    g.add("wide", [g.randn(1, 4, 100, 64), cos, sin, g.ints(0, 128, 1, 100)], opset=23)


GEN = {
    "InstanceNormalization": (gen_instancenorm, wide_instancenorm),
    "GroupNormalization": (gen_groupnorm, wide_groupnorm),
    "LpNormalization": (gen_lpnorm, wide_lpnorm),
    "MeanVarianceNormalization": (gen_mvn, wide_mvn),
    "RMSNormalization": (gen_rmsnorm, wide_rmsnorm),
    "LRN": (gen_lrn, wide_lrn),
    "GlobalMaxPool": (gen_globalmaxpool, wide_globalmaxpool),
    "LpPool": (gen_lppool, wide_lppool),
    "GlobalLpPool": (gen_globallppool, wide_globallppool),
    "ConvTranspose": (gen_convtranspose, wide_convtranspose),
    "RoiAlign": (gen_roialign, wide_roialign),
    "Attention": (gen_attention, wide_attention),
    "RotaryEmbedding": (gen_rotary, wide_rotary),
}
for _op in REDUCES:
    GEN[_op] = (gen_reduce_nn, wide_reduce_nn)

# Against ONNX Runtime: sums in another order and float32 statistics.
TOL = {
    "ReduceL1": (1e-5, 1e-5), "ReduceL2": (1e-5, 1e-5), "ReduceProd": (1e-5, 1e-6),
    "ReduceMin": (0.0, 0.0), "ReduceLogSum": (1e-5, 1e-5), "ReduceLogSumExp": (1e-5, 1e-5),
    "ReduceSumSquare": (1e-5, 1e-5),
    "InstanceNormalization": (1e-4, 1e-5), "GroupNormalization": (1e-4, 1e-5),
    "LpNormalization": (1e-5, 1e-6), "MeanVarianceNormalization": (1e-4, 1e-5),
    "RMSNormalization": (1e-4, 1e-5), "LRN": (1e-5, 1e-6),
    "GlobalMaxPool": (0.0, 0.0), "LpPool": (1e-5, 1e-6), "GlobalLpPool": (1e-5, 1e-5),
    "ConvTranspose": (1e-4, 1e-4), "RoiAlign": (1e-4, 1e-5),
    "Attention": (1e-4, 1e-5), "RotaryEmbedding": (1e-5, 1e-6),
}


def _bind(fn, ns):
    return lambda g: fn(g, ns)


def _register_diff_ort(ns):
    for op, (basic, wide) in GEN.items():
        ns.GENERATORS[op] = _bind(basic, ns)
        ns.WIDE_GENERATORS[op] = _bind(wide, ns)
    ns.TOL.update(TOL)
    # The cpu target runs these ops through the reference kernels (no
    # TOL_CPU_REF entry: the cpu result must equal ref's bit for bit).
