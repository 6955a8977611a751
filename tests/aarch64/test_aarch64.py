#!/usr/bin/env python3
"""tests/aarch64/test_aarch64.py — cross-compilation to AArch64 (NEON, 4
f32 lanes), run under qemu-aarch64 (label aarch64).

Each model is compiled with `ncc compile --target=aarch64 --emit=lib -o
NAME.o` (kernels, glue and weights in one relocatable object), linked with
tests/aot/aot_main.c into a static executable by aarch64-linux-gnu-gcc
(static: no AArch64 sysroot needed at run time), run under qemu-aarch64 on
two batch sizes in one process with two threads, and compared with
`ncc run --target=ref` on the host.

Models: small multi-output op models covering elementwise ops with
broadcasting, MatMul (constant, batched) and Gemm, Conv (3x3, strided,
depthwise, 1x1), pooling, Softmax, LogSoftmax, LayerNorm, reductions and
Transpose; then the six generated blocks of bench/blocks.py.

`--only NAME` runs one model. Skips (exit 77) when qemu-aarch64 or the
cross compiler is missing. Prints "N passed, M failed"; exit 1 on failure.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "aot"))
import aotutil as au  # noqa: E402
import blocks  # noqa: E402  (bench/, put on sys.path by aotutil)

CC = os.environ.get("NCC_AARCH64_CC") or "aarch64-linux-gnu-gcc"
QEMU = os.environ.get("NCC_QEMU_AARCH64") or "qemu-aarch64"
F = TensorProto.FLOAT


class ModelBuilder:
    """A tiny ONNX graph builder: seeded constants, named outputs."""

    def __init__(self, name, seed=0):
        self.name, self.nodes, self.inits, self.outputs = name, [], [], []
        self.inputs, self.rng, self.k = [], np.random.RandomState(seed), 0

    def input(self, name, shape):
        self.inputs.append(helper.make_tensor_value_info(name, F, shape))
        return name

    def const(self, array):
        self.k += 1
        name = "c%d" % self.k
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, *shape, lo=-0.5, hi=0.5):
        return self.const(self.rng.uniform(lo, hi, shape).astype(np.float32))

    def node(self, op, inputs, out=None, **attrs):
        self.k += 1
        name = out or "t%d" % self.k
        self.nodes.append(helper.make_node(op, inputs, [name], **attrs))
        return name

    def output(self, op, inputs, name, **attrs):
        self.node(op, inputs, name, **attrs)
        self.outputs.append(helper.make_tensor_value_info(name, F, None))

    def save(self, path):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
        m.ir_version = 8
        onnx.save(m, path)


def rand(shape, seed):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


def ops_eltwise(path):
    b = ModelBuilder("ops_eltwise")
    a = b.input("a", ["N", 4, 5])
    v = b.input("v", [5])
    col = b.weight(4, 1)
    pos = b.weight(4, 1, lo=0.5, hi=2.0)
    b.output("Add", [a, v], "add")
    b.output("Mul", [a, col], "mul")
    b.output("Sub", [v, a], "sub")
    b.output("Div", [a, pos], "div")
    b.output("Max", [a, v], "max")
    b.output("Sigmoid", [a], "sigmoid")
    b.output("Tanh", [a], "tanh")
    b.output("Erf", [a], "erf")
    b.output("Exp", [a], "exp")
    b.output("Relu", [a], "relu")
    b.output("LeakyRelu", [a], "leaky", alpha=0.1)
    b.output("Clip", [a, b.const(np.float32(-0.5)), b.const(np.float32(0.5))], "clip")
    b.output("Sqrt", [b.node("Abs", [a])], "sqrt")
    b.output("Where", [b.node("Greater", [a, v]), a, v], "where")
    b.save(path)
    return lambda n: {"a": rand((n, 4, 5), n), "v": rand((5,), 7)}


def ops_linalg(path):
    b = ModelBuilder("ops_linalg")
    a = b.input("a", ["N", 7, 9])
    m = b.input("m", ["N", 9, 5])
    g = b.input("g", ["N", 9])
    b.output("MatMul", [a, b.weight(9, 13)], "mm_const")
    b.output("MatMul", [a, m], "mm_batched")
    b.output("Gemm", [g, b.weight(11, 9), b.weight(11)], "gemm_tb", transB=1)
    b.output("Gemm", [g, b.weight(9, 6), b.weight(1, 6)], "gemm_ab", alpha=0.5, beta=2.0)
    b.save(path)
    return lambda n: {"a": rand((n, 7, 9), n), "m": rand((n, 9, 5), n + 1),
                      "g": rand((n, 9), n + 2)}


def ops_conv(path):
    b = ModelBuilder("ops_conv")
    x = b.input("x", ["N", 4, 9, 9])
    b.output("Conv", [x, b.weight(6, 4, 3, 3), b.weight(6)], "conv3x3", pads=[1, 1, 1, 1])
    b.output("Conv", [x, b.weight(5, 4, 3, 3)], "conv_s2", strides=[2, 2])
    b.output("Conv", [x, b.weight(4, 1, 3, 3), b.weight(4)], "depthwise", group=4,
             pads=[1, 1, 1, 1])
    b.output("Conv", [x, b.weight(7, 4, 1, 1), b.weight(7)], "conv1x1")
    b.output("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    b.output("AveragePool", [x], "avgpool", kernel_shape=[2, 2], strides=[2, 2])
    b.output("GlobalAveragePool", [x], "gap")
    b.save(path)
    return lambda n: {"x": rand((n, 4, 9, 9), n)}


def ops_rows(path):
    b = ModelBuilder("ops_rows")
    x = b.input("x", ["N", 6, 10])
    b.output("Softmax", [x], "softmax", axis=-1)
    b.output("LogSoftmax", [x], "logsoftmax", axis=-1)
    b.output("LayerNormalization", [x, b.weight(10, lo=0.5, hi=1.5), b.weight(10)],
             "layernorm", axis=-1, epsilon=1e-5)
    b.output("ReduceMean", [x, b.const(np.array([2], np.int64))], "reducemean")
    b.output("ReduceSum", [x, b.const(np.array([1, 2], np.int64))], "reducesum",
             keepdims=0)
    b.output("ReduceMax", [x, b.const(np.array([2], np.int64))], "reducemax")
    b.output("Transpose", [x], "transpose", perm=[0, 2, 1])
    b.save(path)
    return lambda n: {"x": rand((n, 6, 10), n)}


OP_MODELS = {"ops_eltwise": ops_eltwise, "ops_linalg": ops_linalg,
             "ops_conv": ops_conv, "ops_rows": ops_rows}

BLOCK_SIZES = {"eltwise": dict(width=8, spatial=(8, 8)),
               "mlp": dict(width=16, seq=8),
               "conv": dict(width=8, spatial=(8, 8)),
               "resblock": dict(width=8, spatial=(8, 8)),
               "dwsep": dict(width=8, spatial=(8, 8)),
               "transformer": dict(width=16, seq=8)}


def check(work, name, model, make_inputs):
    sub = au.fresh_dir(os.path.join(work, name))
    au.check_model(model, sub, [1, 3], make_inputs, target="aarch64", threads=2,
                   static=True, cc=CC, emulator=[QEMU], rtol=1e-4, atol=1e-4)


def main(argv):
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    missing = [t for t in (QEMU, CC) if not shutil.which(t)]
    if missing:
        print("SKIP: %s not found (tools/setup.sh installs qemu-user and "
              "gcc-aarch64-linux-gnu)" % ", ".join(missing))
        return 77
    r = au.Runner()
    with tempfile.TemporaryDirectory(prefix="ncc-aarch64-") as work:
        for name, make in OP_MODELS.items():
            if only and only != name:
                continue
            path = os.path.join(work, name + ".onnx")
            r.check(name, check, work, name, path, make(path))
        for block, kw in BLOCK_SIZES.items():
            name = "block_" + block
            if only and only != name:
                continue
            path = os.path.join(work, name + ".onnx")
            onnx.save(blocks.build(block, **kw), path)
            r.check(name, check, work, name, path,
                    lambda n, block=block, kw=kw: {"x": blocks.make_input(block, n, **kw)})
    return r.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
