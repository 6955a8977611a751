#!/usr/bin/env python3
"""tests/py/test_index_memo.py -- the LLVM emitter's memo of index
expressions (codegen/llvm/emit.c, memo_*) reuses a value only where it is
still right: odd sizes (so vector remainders, partial tiles and clamped
index chains are all taken), strides, padding, groups and broadcasts, each
kind of kernel (conv, depthwise conv, pooling, matmul, reduction,
softmax, broadcast eltwise), run on the cpu target at tiers 0 and 2 and
compared with ONNX Runtime and with the reference target. A value reused
across an unrolled iteration or out of a loop body it was computed in
reads the wrong elements and shows here as wrong numbers.

Run with NCC=/path/to/ncc (ctest sets it). Exits 77 when the cpu target is
unusable (a build without LLVM).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

NCC = nccutil.find_ncc()
RTOL, ATOL = 1e-4, 1e-4


def model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "memo", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, arr):
    arr = np.asarray(arr, np.float32)
    return helper.make_tensor(name, TensorProto.FLOAT, arr.shape, arr.ravel().tolist())


def check_model(name, m, inputs):
    want = nccutil.run_ort(m, inputs)
    outs = [o.name for o in m.graph.output]
    with nccutil.Workdir() as d:
        for target, extra in (("ref", ()), ("cpu", ("--codegen-opt=0",)),
                              ("cpu", ("--codegen-opt=2",))):
            r = nccutil.run_ncc(NCC, m, inputs, outs, d, extra=("--no-cache",) + extra
                                if target == "cpu" else extra, target=target)
            what = "%s on %s %s" % (name, target, " ".join(extra))
            nccutil.check(r.rc == 0 and not r.missing, "%s: %s" % (what, r.describe()))
            for o in outs:
                err = nccutil.compare(want[o], r.outputs[o], RTOL, ATOL)
                nccutil.check(err is None, "%s, output %s: %s" % (what, o, err))


RNG = np.random.RandomState(7)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_conv_stride_pad_fused():
    # 3x3 stride 2 pad 1 on 13x11, 5 -> 19 channels, + bias, + residual, Relu
    w, b = rand(19, 5, 3, 3), rand(19)
    m = model([helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3],
                                strides=[2, 2], pads=[1, 1, 1, 1]),
               helper.make_node("Add", ["c", "r"], ["s"]),
               helper.make_node("Relu", ["s"], ["y"])],
              [f32("x", [2, 5, 13, 11]), f32("r", [2, 19, 7, 6])], [f32("y", [2, 19, 7, 6])],
              [const("w", w), const("b", b)])
    check_model("conv 3x3/2", m, {"x": rand(2, 5, 13, 11), "r": rand(2, 19, 7, 6)})


def test_conv_1x1_and_7x7():
    w1, w7 = rand(17, 3, 7, 7), rand(23, 17, 1, 1)
    m = model([helper.make_node("Conv", ["x", "w7"], ["a"], kernel_shape=[7, 7],
                                strides=[2, 2], pads=[3, 3, 3, 3]),
               helper.make_node("Conv", ["a", "w1"], ["y"], kernel_shape=[1, 1])],
              [f32("x", [1, 3, 29, 31])], [f32("y", [1, 23, 15, 16])],
              [const("w7", w1), const("w1", w7)])
    check_model("conv 7x7/2 then 1x1", m, {"x": rand(1, 3, 29, 31)})


def test_depthwise_and_pool():
    w = rand(21, 1, 3, 3)
    m = model([helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3],
                                group=21, pads=[1, 1, 1, 1]),
               helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[3, 3],
                                strides=[2, 2], pads=[1, 1, 1, 1]),
               helper.make_node("GlobalAveragePool", ["p"], ["y"])],
              [f32("x", [2, 21, 15, 9])], [f32("y", [2, 21, 1, 1])], [const("w", w)])
    check_model("depthwise, max pool, global average", m, {"x": rand(2, 21, 15, 9)})


def test_matmul_softmax():
    w = rand(37, 19)
    m = model([helper.make_node("MatMul", ["x", "w"], ["a"]),
               helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
              [f32("x", [3, 13, 37])], [f32("y", [3, 13, 19])], [const("w", w)])
    check_model("matmul, softmax", m, {"x": rand(3, 13, 37)})


def test_reduce_broadcast():
    m = model([helper.make_node("Mul", ["x", "s"], ["a"]),
               helper.make_node("ReduceSum", ["a", "axes"], ["y"], keepdims=1)],
              [f32("x", [3, 11, 17, 5]), f32("s", [1, 11, 1, 5])], [f32("y", [3, 1, 17, 1])],
              [helper.make_tensor("axes", TensorProto.INT64, [2], [1, 3])])
    check_model("broadcast mul, reduce", m, {"x": rand(3, 11, 17, 5), "s": rand(1, 11, 1, 5)})


if __name__ == "__main__":
    nccutil.require_target(NCC, "cpu")
    sys.exit(nccutil.run_cases(nccutil.discovered_cases(globals())))
