#!/usr/bin/env python3
"""tests/py/qkernels_ort.py — the cpu target's integer kernels (QLinearConv and 8-bit MaxPool
in codegen/lower_conv.c, QLinearMatMul and MatMulInteger in codegen/lower_qmatmul.c, and of two
activations in codegen/lower_qbmm.c: u8/s8
activations, KIR_E_DOT4, i32 accumulation, requantisation) against ONNX
Runtime: as the host compiles them (on a host with AMX, the int8 matrix
products on its tiles: codegen/lower_amx.c) and at width 1 (the portable
shift-and-multiply sum); with --widths (ctest python.qkernels_ort.widths,
run in the release stage) with NCC_AMX=0 at NCC_VECTOR_WIDTH 16, 8, 4 and
1: on a host with AVX512-VNNI that is vpdpbusd on zmm, ymm and xmm
registers, so every form of the emitter is checked; with --tiles (ctest
python.qkernels_ort.tiles, release stage) the AMX tile kernels at width 16
on any host: natively where it has AMX, else through NCC_AMX=emulate (each
tile instruction a C function, codegen/llvm/amx_emu.c).

Every case's integer node must compile on cpu (`ncc check --json`),
so a kernel that quietly stops taking its cases (and falls back to the
reference interpreter) fails here. Outputs are integers: at most one
quantum apart from onnxruntime, and on at most 1% of elements (f32
requantisation rounds a tie differently now and then; a wrong zero point,
rounding mode or channel offset moves most elements).
With --target opencl, the kernels the GPU renderer takes (two-activation
QLinearMatMul and MatMulInteger with per-tensor B, the bmm_* cases) run
once on OpenCL;
exit 77 there when no OpenCL device runs.
DEGENERATE: a tiny (denormal) output scale makes the requantisation
multiplier infinite, and its product with a zero sum NaN; ncc's reference takes a NaN
as 0 (the output zero point) and saturates +-inf, which numpy computes
exactly here (onnxruntime's NaN is the bottom of the range), and the cpu
target must give the same (it leaves such a node to the reference kernel).
Exit 77 when numpy/onnx/onnxruntime are missing.
Usage: NCC=build/ncc python3 tests/py/qkernels_ort.py [-v] [--target cpu|opencl] [--widths|--tiles]
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

NCC = nccutil.find_ncc()
VERBOSE = "-v" in sys.argv[1:]
TARGET = sys.argv[sys.argv.index("--target") + 1] if "--target" in sys.argv else "cpu"
U8, I8 = np.uint8, np.int8
TT = {U8: T.UINT8, I8: T.INT8}


def ints(r, dt, shape):
    lo, hi = (0, 256) if dt == U8 else (-128, 128)
    return r.integers(lo, hi, shape).astype(dt)


def zp(r, dt):
    return np.array(r.integers(0, 256) if dt == U8 else r.integers(-30, 30), dt)


def qconv(name, N=1, C=16, H=9, W=9, OC=32, k=3, stride=1, pad=1, group=1, dil=1,
          xdt=U8, ydt=U8, wdt=I8, per_ch=True, bias=True, pads=None, kw=None, seed=0):
    r = np.random.default_rng(seed)
    w = ints(r, wdt, (OC, C // group, k, kw or k))
    if wdt == U8:  # u8 weights: their zero point keeps w - zw in s8
        wz = np.full(OC if per_ch else (), 128, U8)
    else:
        wz = np.zeros(OC if per_ch else (), I8)
    ws = (r.uniform(0.002, 0.02, OC) if per_ch else np.array(0.01)).astype(np.float32)
    inits = [nh.from_array(np.array(0.02, np.float32), "xs"), nh.from_array(zp(r, xdt), "xz"),
             nh.from_array(w, "w"), nh.from_array(ws, "ws"), nh.from_array(wz, "wz"),
             nh.from_array(np.array(r.uniform(0.03, 0.2), np.float32), "ys"),
             nh.from_array(zp(r, ydt), "yz")]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits.append(nh.from_array(r.integers(-3000, 3000, OC).astype(np.int32), "b"))
        ins.append("b")
    node = h.make_node("QLinearConv", ins, ["y"], pads=pads or [pad] * 4, strides=[stride] * 2,
                       group=group, dilations=[dil] * 2)
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[xdt], [N, C, H, W])],
                     [h.make_tensor_value_info("y", TT[ydt], None)], inits)
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": ints(r, xdt, (N, C, H, W))}


def qmatmul(name, ashape=(5, 64), N=40, adt=U8, bdt=I8, per_col=True, sym_batch=False, seed=0):
    """QLinearMatMul, A [.., K] x constant B [K, N]; y in A's dtype
    (sym_batch: A's first dim symbolic in the model)."""
    r = np.random.default_rng(seed)
    K = ashape[-1]
    b = ints(r, bdt, (K, N))
    bz = np.full(N if per_col else (), 128, U8) if bdt == U8 else np.zeros(N if per_col else (), I8)
    bs = (r.uniform(0.002, 0.02, N) if per_col else np.array(0.01)).astype(np.float32)
    inits = [nh.from_array(np.array(0.02, np.float32), "as"), nh.from_array(zp(r, adt), "az"),
             nh.from_array(b, "b"), nh.from_array(bs, "bs"), nh.from_array(bz, "bz"),
             nh.from_array(np.array(r.uniform(0.1, 0.5), np.float32), "ys"),
             nh.from_array(zp(r, adt), "yz")]
    node = h.make_node("QLinearMatMul", ["x", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    xshape = (["B"] if sym_batch else []) + list(ashape[1 if sym_batch else 0:])
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[adt], xshape)],
                     [h.make_tensor_value_info("y", TT[adt], None)], inits)
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": ints(r, adt, ashape)}


def maxpool(name, shape=(1, 8, 13, 12), dt=U8, k=3, stride=2, pad=1, seed=0):
    """8-bit MaxPool (a QDQ model's pool, folded onto the integers)."""
    r = np.random.default_rng(seed)
    node = h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[k, k], strides=[stride] * 2,
                       pads=[pad] * 4)
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[dt], list(shape))],
                     [h.make_tensor_value_info("y", TT[dt], None)])
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 12)]), {"x": ints(r, dt, shape)}


def reshape8(name, dt=U8, seed=0):
    """Flatten of an 8-bit tensor (a folded Gemm's input: a flat copy)."""
    r = np.random.default_rng(seed)
    node = h.make_node("Flatten", ["x"], ["y"], axis=1)
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[dt], [2, 3, 5, 7])],
                     [h.make_tensor_value_info("y", TT[dt], None)])
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": ints(r, dt, (2, 3, 5, 7))}


def dyn_matmulinteger(name, ashape=(6, 48), N=24, seed=0):
    """DynamicQuantizeLinear(x f32) -> MatMulInteger(., B s8 constant,
    the dynamic zero point): A's zero point reaches the kernel at run time."""
    r = np.random.default_rng(seed)
    b = ints(r, I8, (ashape[-1], N))
    nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             h.make_node("MatMulInteger", ["q", "b", "z"], ["y"])]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, list(ashape))],
                     [h.make_tensor_value_info("y", T.INT32, None)], [nh.from_array(b, "b")])
    x = (r.standard_normal(ashape) * 3 + 1).astype(np.float32)
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": x}


def matmulinteger(name, ashape=(20, 68), N=24, adt=I8, seed=0):
    """MatMulInteger of an 8-bit A (s8: the tiles' signed product) with a
    constant zero point, B s8 constant."""
    r = np.random.default_rng(seed)
    b = ints(r, I8, (ashape[-1], N))
    node = h.make_node("MatMulInteger", ["x", "b", "az"], ["y"])
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[adt], list(ashape))],
                     [h.make_tensor_value_info("y", T.INT32, None)],
                     [nh.from_array(b, "b"), nh.from_array(zp(r, adt), "az")])
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": ints(r, adt, ashape)}


def qgemm(name, M=6, K=40, N=24, trans_b=True, per_col=True, bias=True, y_scale=True,
          alpha=1.0, adt=U8, seed=0):
    """com.microsoft QGemm (onnxruntime's quantized Gemm, e.g. BERT's pooler):
    constant B [N, K] (transB) or [K, N], an i32 bias C, y requantized with
    y_scale / y_zero_point or f32 without them, alpha."""
    r = np.random.default_rng(seed)
    b = ints(r, I8, (N, K) if trans_b else (K, N))
    bs = (r.uniform(0.002, 0.02, N) if per_col else np.array(0.01)).astype(np.float32)
    bz = np.zeros(N if per_col else (), I8)
    names = ["x", "as", "az", "b", "bs", "bz"]
    inits = [nh.from_array(np.array(0.02, np.float32), "as"), nh.from_array(zp(r, adt), "az"),
             nh.from_array(b, "b"), nh.from_array(bs, "bs"), nh.from_array(bz, "bz")]
    if bias:
        inits.append(nh.from_array(r.integers(-3000, 3000, N).astype(np.int32), "c"))
    names.append("c" if bias else "")
    if y_scale:
        inits += [nh.from_array(np.array(r.uniform(0.1, 0.5), np.float32), "ys"),
                  nh.from_array(zp(r, adt), "yz")]
        names += ["ys", "yz"]
    node = h.make_node("QGemm", names, ["y"], domain="com.microsoft", alpha=alpha,
                       transB=int(trans_b))
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[adt], [M, K])],
                     [h.make_tensor_value_info("y", TT[adt] if y_scale else T.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("com.microsoft", 1)])
    return name, m, {"x": ints(r, adt, (M, K))}


def qbmm(name, ashape=(2, 3, 17, 24), bshape=(2, 3, 24, 19), adt=U8, bdt=U8, ydt=U8,
         per_col=False, seed=0):
    """QLinearMatMul of two activations (attention's Q.K^T and P.V), MatMul's
    broadcasting over the batch dims; B's scale and zero point per tensor or
    per column."""
    r = np.random.default_rng(seed)
    N = bshape[-1]
    bs = (r.uniform(0.01, 0.03, N) if per_col else np.array(0.02)).astype(np.float32)
    bz = np.array([zp(r, bdt) for _ in range(N)], bdt) if per_col else zp(r, bdt)
    inits = [nh.from_array(np.array(0.02, np.float32), "as"), nh.from_array(zp(r, adt), "az"),
             nh.from_array(bs, "bs"), nh.from_array(bz, "bz"),
             # sums grow as sqrt(K): keep the output mostly unsaturated
             nh.from_array(np.array(r.uniform(0.5, 2.0) * np.sqrt(ashape[-1] / 24), np.float32),
                           "ys"),
             nh.from_array(zp(r, ydt), "yz")]
    node = h.make_node("QLinearMatMul", ["x", "as", "az", "x2", "bs", "bz", "ys", "yz"], ["y"])
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[adt], list(ashape)),
                                    h.make_tensor_value_info("x2", TT[bdt], list(bshape))],
                     [h.make_tensor_value_info("y", TT[ydt], None)], inits)
    return (name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]),
            {"x": ints(r, adt, ashape), "x2": ints(r, bdt, bshape)})


def bmm_integer(name, ashape=(4, 600), bshape=(600, 9), dynamic=False, zps=True, seed=0):
    """MatMulInteger of two activations, i32 out (exact). u8 near 255 against
    zero points 0 make sums past 2^24 (the kernel's f32 chunks must stay
    exact); dynamic: both quantized by DynamicQuantizeLinear, the zero
    points arriving at run time."""
    r = np.random.default_rng(seed)
    if dynamic:
        nodes = [h.make_node("DynamicQuantizeLinear", ["x"], ["qa", "sa", "za"]),
                 h.make_node("DynamicQuantizeLinear", ["x2"], ["qb", "sb", "zb"]),
                 h.make_node("MatMulInteger", ["qa", "qb", "za", "zb"], ["y"])]
        vi = [h.make_tensor_value_info("x", T.FLOAT, list(ashape)),
              h.make_tensor_value_info("x2", T.FLOAT, list(bshape))]
        feeds = {"x": (r.standard_normal(ashape) * 2 + 1).astype(np.float32),
                 "x2": (r.standard_normal(bshape) - 0.5).astype(np.float32)}
        inits = []
    else:
        nodes = [h.make_node("MatMulInteger", ["x", "x2"] + (["az", "bz"] if zps else []), ["y"])]
        vi = [h.make_tensor_value_info("x", T.UINT8, list(ashape)),
              h.make_tensor_value_info("x2", T.UINT8, list(bshape))]
        feeds = {"x": r.integers(230, 256, ashape).astype(U8),
                 "x2": r.integers(230, 256, bshape).astype(U8)}
        inits = [nh.from_array(np.array(0, U8), "az"), nh.from_array(np.array(3, U8), "bz")] \
            if zps else []
    g = h.make_graph(nodes, name, vi, [h.make_tensor_value_info("y", T.INT32, None)], inits)
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), feeds


CASES = [
    qconv("conv3x3_u8"),
    qconv("conv3x3_s8_in_out", xdt=I8, ydt=I8, seed=1),
    qconv("stem7x7_s2_ic3", C=3, OC=16, k=7, stride=2, pad=3, H=20, W=21, seed=3),
    qconv("conv1x1_flat_14", C=64, OC=64, k=1, pad=0, H=14, W=14, seed=4),
    qconv("conv1x1_s2", C=32, OC=64, k=1, pad=0, stride=2, H=14, W=13, seed=5),
    qconv("per_tensor_no_bias", per_ch=False, bias=False, C=6, OC=12, H=7, W=7, seed=6),
    qconv("grouped", group=4, C=16, OC=16, seed=7),
    qconv("depthwise", group=8, C=8, OC=8, H=11, W=10, seed=8),
    qconv("dilated_ic5", C=5, OC=8, H=28, W=28, dil=2, pad=2, seed=9),
    qconv("batch3_7x7", N=3, C=16, OC=16, H=7, W=7, seed=10),
    qconv("end_pads", C=8, OC=16, H=10, W=11, pads=[0, 0, 1, 2], seed=11),
    qconv("u8_weights_zp128", wdt=U8, C=12, OC=24, seed=12),
    qconv("odd_oc", C=16, OC=20, H=6, W=30, seed=13),
    # the AMX kernel (codegen/lower_qconv.c) where the host has it: weights
    # past 512 KB (a task packs 4 panel pairs, the last one past the image;
    # channel blocks in chunks; 1040 channels: a half block), rows of 8
    # pixels (stride 2, padded), a k of 1170 quads (one panel per tile block)
    qconv("tiles_wide_1x1", C=516, OC=1040, k=1, pad=0, H=10, W=10, seed=14),
    qconv("tiles_s2_rows", C=64, OC=48, k=3, stride=2, H=15, W=15, seed=15),
    qconv("tiles_1x3_u8_weights", C=8, OC=16, k=1, kw=3, pad=0, pads=[0, 1, 0, 1], H=6,
          W=20, wdt=U8, seed=17),
    qconv("tiles_long_k", C=520, OC=16, k=3, H=5, W=6, xdt=I8, ydt=I8, seed=16),
    qmatmul("mm_u8", seed=20),
    qmatmul("mm_s8_k_odd", ashape=(9, 37), N=19, adt=I8, seed=21),
    qmatmul("mm_batched_3d", ashape=(2, 13, 32), N=48, seed=22),
    qmatmul("mm_u8_weights_per_tensor", ashape=(3, 20), N=70, bdt=U8, per_col=False, seed=23),
    qmatmul("mm_one_row", ashape=(1, 128), N=33, seed=24),
    qmatmul("mm_k1", ashape=(6, 1), N=5, seed=31),
    # the AMX tile GEMM (codegen/lower_amx.c) where the host has it: K's
    # last bytes re-read (K % 64), row tiles clamped to M - 16, odd panels,
    # 2 x 2 and 1 x 1 tile blocks, a symbolic M, s8 A (tdpbssd)
    qmatmul("mm_tiles_tail", ashape=(2, 50, 200), N=300, seed=32),
    qmatmul("mm_tiles_s8", ashape=(40, 132), N=33, adt=I8, seed=33),
    qmatmul("mm_tiles_one", ashape=(17, 64), N=16, bdt=U8, per_col=False, seed=34),
    qmatmul("mm_tiles_sym_m", ashape=(3, 16, 96), N=50, sym_batch=True, seed=35),
    qmatmul("mm_tiles_k_short", ashape=(33, 44), N=20, adt=I8, seed=36),
    matmulinteger("mmint_s8", seed=37),
    qgemm("qgemm_pooler_f32", M=1, K=96, N=40, y_scale=False, seed=46),
    qgemm("qgemm_u8_requant", M=20, K=72, N=33, seed=47),
    qgemm("qgemm_b_kn_alpha", M=7, K=30, N=18, trans_b=False, alpha=0.5, per_col=False,
          bias=False, seed=48),
    qgemm("qgemm_s8_f32_tiles", M=40, K=130, N=50, adt=I8, y_scale=False, alpha=2.0, seed=49),
    matmulinteger("mmint_u8_tail", ashape=(2, 24, 100), N=40, adt=U8, seed=38),
    dyn_matmulinteger("dyn_matmulinteger", seed=25),
    maxpool("maxpool_u8", seed=27),
    reshape8("flatten_u8", seed=29),
    reshape8("flatten_s8", dt=I8, seed=30),
    maxpool("maxpool_s8_k2", dt=I8, k=2, stride=2, pad=0, shape=(2, 3, 10, 9), seed=28),
    dyn_matmulinteger("dyn_matmulinteger_k_odd", ashape=(2, 3, 21), N=17, seed=26),
    qbmm("bmm_attention_qk", seed=40),
    qbmm("bmm_s8_broadcast", ashape=(4, 1, 5, 33), bshape=(3, 33, 7), adt=I8, bdt=I8, ydt=I8,
         seed=41),
    qbmm("bmm_per_col_k300", ashape=(3, 300), bshape=(300, 21), bdt=I8, per_col=True, seed=42),
    qbmm("bmm_m1_n_odd", ashape=(2, 1, 64), bshape=(2, 64, 35), seed=43),
    bmm_integer("bmm_integer_k600", seed=44),
    # on AMX tiles where the host has them (lower_qbmm.c): attention's shape,
    # a K past whole 64-byte steps, a padding panel (N 37), clamped row
    # tiles (M 40), per-column zero points, the signedness pairs onnxruntime
    # has (u8 x u8, u8 x s8, s8 x s8; s8 x u8 is the convolutions'), a K
    # below 64, B broadcast over A's batch, MatMulInteger's i32 sums
    qbmm("bmm_tiles_qk", ashape=(1, 12, 128, 64), bshape=(1, 12, 64, 128), seed=50),
    qbmm("bmm_tiles_s8_per_col", ashape=(2, 40, 100), bshape=(100, 37), adt=I8, bdt=I8,
         ydt=I8, per_col=True, seed=51),
    qbmm("bmm_tiles_u8_s8", ashape=(3, 16, 132), bshape=(132, 20), bdt=I8, seed=52),
    qbmm("bmm_tiles_k32", ashape=(2, 20, 32), bshape=(2, 32, 16), adt=I8, bdt=I8, ydt=I8, seed=53),
    bmm_integer("bmm_integer_tiles", ashape=(2, 24, 128), bshape=(2, 128, 40), seed=54),
    bmm_integer("bmm_integer_tiles_no_zp", ashape=(2, 16, 64), bshape=(2, 64, 16), zps=False,
                seed=55),
    bmm_integer("bmm_integer_dynamic", ashape=(2, 9, 40), bshape=(2, 40, 30), dynamic=True,
                seed=45),
]


def inf_multiplier(name, adt=U8, K=24, N=12, seed=40):
    """QLinearMatMul with y_scale 1e-45 (a_scale b_scale / y_scale is inf in
    f32); rows 0 and 3 of A equal its zero point, so their sums are 0:
    (name, model, feeds, expected)."""
    r = np.random.default_rng(seed)
    a, b, az, yz = ints(r, adt, (6, K)), ints(r, I8, (K, N)), zp(r, adt), np.array(100, adt)
    a[[0, 3]] = az
    inits = [nh.from_array(np.array(0.02, np.float32), "as"), nh.from_array(az, "az"),
             nh.from_array(b, "b"), nh.from_array(np.array(0.01, np.float32), "bs"),
             nh.from_array(np.array(0, I8), "bz"), nh.from_array(np.array(1e-45, np.float32), "ys"),
             nh.from_array(yz, "yz")]
    node = h.make_node("QLinearMatMul", ["x", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", TT[adt], [6, K])],
                     [h.make_tensor_value_info("y", TT[adt], None)], inits)
    acc = (a.astype(np.int64) - int(az)) @ b.astype(np.int64)
    lo, hi = (0, 255) if adt == U8 else (-128, 127)
    want = np.where(acc == 0, int(yz), np.where(acc > 0, hi, lo)).astype(adt)
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": a}, want


def conv_inf_multiplier(name, C=8, OC=12, H=5, W=6, seed=42):
    """1x1 QLinearConv (u8) with y_scale 1e-45; the pixels of row 2 equal
    x's zero point in every channel, so their sums are 0."""
    r = np.random.default_rng(seed)
    x, w, xz, yz = ints(r, U8, (1, C, H, W)), ints(r, I8, (OC, C, 1, 1)), zp(r, U8), np.array(100, U8)
    x[:, :, 2, :] = xz
    inits = [nh.from_array(np.array(0.02, np.float32), "xs"), nh.from_array(xz, "xz"),
             nh.from_array(w, "w"), nh.from_array(np.array(0.01, np.float32), "ws"),
             nh.from_array(np.array(0, I8), "wz"), nh.from_array(np.array(1e-45, np.float32), "ys"),
             nh.from_array(yz, "yz")]
    node = h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"])
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", T.UINT8, [1, C, H, W])],
                     [h.make_tensor_value_info("y", T.UINT8, None)], inits)
    acc = np.einsum("nchw,mc->nmhw", x.astype(np.int64) - int(xz), w[:, :, 0, 0].astype(np.int64))
    want = np.where(acc == 0, 100, np.where(acc > 0, 255, 0)).astype(U8)
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": x}, want


def conv_unfit_weights(name, C=4, OC=3, H=6, W=7, seed=43):
    """1x1 QLinearConv whose u8 weights do not fit the kernel's s8 operand in
    one channel (zero point 0, weights up to 255): lower_conv.c must leave it
    to the reference kernel, whose exact result numpy repeats (integer sums,
    the f32 multiplier applied in double, half-even rounding)."""
    r = np.random.default_rng(seed)
    x, xz = ints(r, U8, (1, C, H, W)), zp(r, U8)
    w = r.integers(100, 156, (OC, C, 1, 1)).astype(U8)
    w[OC - 1] = r.integers(0, 256, (C, 1, 1)).astype(U8)
    wz = np.array([128] * (OC - 1) + [0], U8)
    xs, ws, ys, yz = np.float32(0.02), np.full(OC, 0.01, np.float32), np.float32(2.0), np.array(7, U8)
    inits = [nh.from_array(np.array(xs), "xs"), nh.from_array(xz, "xz"), nh.from_array(w, "w"),
             nh.from_array(ws, "ws"), nh.from_array(wz, "wz"), nh.from_array(np.array(ys), "ys"),
             nh.from_array(yz, "yz")]
    node = h.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"])
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", T.UINT8, [1, C, H, W])],
                     [h.make_tensor_value_info("y", T.UINT8, None)], inits)
    wi = w[:, :, 0, 0].astype(np.int64) - wz.astype(np.int64)[:, None]
    acc = np.einsum("nchw,mc->nmhw", x.astype(np.int64) - int(xz), wi)
    mult = (xs * ws / ys).astype(np.float32).astype(np.float64)  # in f32, as the reference
    want = np.clip(np.rint(acc * mult[None, :, None, None]) + int(yz), 0, 255).astype(U8)
    return name, h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), {"x": x}, want


DEGENERATE = [inf_multiplier("mm_inf_multiplier_u8"),
              inf_multiplier("mm_inf_multiplier_s8", adt=I8, seed=41),
              conv_inf_multiplier("conv_inf_multiplier"),
              conv_unfit_weights("conv_unfit_u8_weights")]


AMX_TAG = {"0": " no-amx", "emulate": " tiles"}


def run_ort(model, feeds):
    # s8 B moved to u8 (nccutil.exact_ints): onnxruntime exact on any host
    model, feeds = nccutil.exact_ints(model, feeds)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)[0]


def main():
    failed = 0
    # (width, NCC_AMX): the host's kernels (the tiles where it has them)
    # and the portable sum; --widths: the vector dot products at every width
    cases, widths = CASES, (("", ""), ("1", "0"))
    if "--widths" in sys.argv[1:]:
        widths = (("16", "0"), ("8", "0"), ("4", "0"), ("1", "0"))
    if "--tiles" in sys.argv[1:]:
        # the AMX tile kernels on any host: natively where it has them,
        # else each tile instruction emulated (codegen/llvm/amx_emu.c)
        widths = (("16", "emulate"),)
    if TARGET != "cpu":
        nccutil.require_target(NCC, TARGET)  # exit 77 where it cannot run
        # per-column B needs constant data buffers, which the device
        # runtime does not bind (codegen/cstyle/gpu_lower.c): host there
        cases = [c for c in CASES if c[0].startswith("bmm_") and "per_col" not in c[0]]
        widths = (("", ""),)
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, feeds in cases:
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(model, path)
            args = []
            for iname, arr in feeds.items():
                ip = os.path.join(tmp, "%s.%s.npy" % (name, iname))
                np.save(ip, arr)
                args += ["--input", "%s=%s" % (iname, ip)]
            want = run_ort(model, feeds)
            chk = subprocess.run([NCC, "check", path, "--target=" + TARGET, "--json"],
                                 capture_output=True, text=True)
            rep = json.loads(chk.stdout) if chk.returncode == 0 else {}
            # a view (Flatten, Reshape) runs no kernel and no copy: not on the host
            compiled = (rep.get("compiled_nodes") or 0) + (rep.get("views") or 0)
            # the integer kernel's node must compile (DynamicQuantizeLinear
            # beside it may run on the host)
            host = [e["op"] for e in rep.get("host", [])]
            if not compiled or set(host) & {"QLinearConv", "QLinearMatMul", "MatMulInteger", "QGemm", "MaxPool", "Flatten"}:
                print("FAIL %s: not compiled on cpu (compiled_nodes %s, host %s) %s"
                      % (name, compiled, host, chk.stderr.strip()[-200:]))
                failed += 1
                continue
            for vw, amx in widths:
                out = os.path.join(tmp, "out-" + name + vw + amx)
                p = subprocess.run([NCC, "run", path, "--target=" + TARGET, "--output-dir", out] + args, capture_output=True, text=True,
                                   env=dict(os.environ, NCC_VECTOR_WIDTH=vw, NCC_AMX=amx),
                                   timeout=nccutil.NCC_TIMEOUT)
                if p.returncode != 0:
                    print("FAIL %s w%s%s: ncc exit %d: %s" % (name, vw, AMX_TAG.get(amx, ""), p.returncode, p.stderr[-300:]))
                    failed += 1
                    continue
                got = np.load(os.path.join(out, "y.npy"))
                if got.dtype != want.dtype or got.shape != want.shape:
                    print("FAIL %s w%s%s: %s%s, onnxruntime %s%s" % (name, vw, AMX_TAG.get(amx, ""), got.dtype, got.shape,
                                                                  want.dtype, want.shape))
                    failed += 1
                    continue
                if want.dtype == np.float32:  # QGemm without y_scale: f32 scaling
                    d = np.abs(got.astype(np.float64) - want)
                    frac = float((d > 1e-5 * np.abs(want).max()).mean())
                    ok = frac == 0
                else:
                    d = np.abs(got.astype(np.int64) - want.astype(np.int64))
                    frac = float((d > 0).mean())
                    ok = d.max() <= 1 and frac <= 0.01
                if not ok or VERBOSE:
                    print("%s %s w%s%s: max diff %g, %.2f%% of %d elements differ"
                          % ("PASS" if ok else "FAIL", name, vw, AMX_TAG.get(amx, ""), d.max(), 100 * frac, d.size))
                failed += not ok
        for name, model, feeds, want in (DEGENERATE if TARGET == "cpu" else []):
            path, xp = os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + ".x.npy")
            onnx.save(model, path)
            np.save(xp, feeds["x"])
            out = os.path.join(tmp, "out-" + name)
            p = subprocess.run([NCC, "run", path, "--target=cpu", "--input", "x=" + xp,
                                "--output-dir", out], capture_output=True, text=True,
                               timeout=nccutil.NCC_TIMEOUT)
            got = np.load(os.path.join(out, "y.npy")) if p.returncode == 0 else None
            ok = got is not None and got.dtype == want.dtype and np.array_equal(got, want)
            if not ok or VERBOSE:
                print("%s %s: %s" % ("PASS" if ok else "FAIL", name,
                                     "exit %d %s" % (p.returncode, p.stderr[-300:]) if got is None
                                     else "%d of %d elements differ" % (
                                         int((got != want).sum()), want.size)))
            failed += not ok
    print("qkernels_ort (%s): %d cases x %d settings (width, tiles), %d degenerate, %d failed"
          % (TARGET, len(cases), len(widths), len(DEGENERATE) if TARGET == "cpu" else 0, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
