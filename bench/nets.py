#!/usr/bin/env python3
"""bench/nets.py — whole-network ONNX models built with onnx.helper.

Real-network shapes for tests and benchmarks, with seeded random weights
(numpy RandomState, drawn in a fixed order) and a symbolic batch dimension:

  resnet(...)      ResNet with basic blocks: stem conv7x7/2-bn-relu, maxpool
                   3x3/2, stages of basic blocks (stride-2 1x1 projection on
                   downsampling), global average pool, flatten, Gemm.
                   resnet18() is the true ResNet-18 at 224x224.
  mobilenet(...)   MobileNet-style stack: conv3x3/2-bn-hardswish stem,
                   depthwise-separable blocks (dw3x3-bn-relu6, pw1x1-bn) with
                   HardSwish or relu6 (Clip), inverted residuals with skips,
                   global average pool, Gemm.

The building blocks (weights, node helpers) are shared with bench/blocks.py.
Command line:  python3 bench/nets.py resnet18 -o resnet18.onnx
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks  # noqa: E402
from blocks import Builder, Params, _bn, _relu6  # noqa: E402


def _conv(b, x, w, stride=1, pad=None, group=1):
    k = b.p.arrays[w].shape[2]
    pad = k // 2 if pad is None else pad
    return b.node("Conv", [x, w], "conv", kernel_shape=[k, k], pads=[pad] * 4,
                  strides=[stride, stride], dilations=[1, 1], group=group)


def _conv_bn(b, x, name, cin, cout, k, stride=1, group=1, gamma=(0.5, 1.5)):
    w = b.p.conv(name + ".weight", cout, cin // group, k, k)
    bn = b.p.batchnorm(name + ".bn", cout, gamma_range=gamma)
    return _bn(b, _conv(b, x, w, stride=stride, group=group), bn)


def _head(b, x, c, classes, name="fc"):
    """GlobalAveragePool -> Flatten -> Gemm (torch's Linear on 2-D exports Gemm)."""
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x], "gap")], "flat", axis=1)
    bound = 1.0 / np.sqrt(c)
    w = b.p._put(name + ".weight", b.p.rng.uniform(-bound, bound, (classes, c)))
    bias = b.p._put(name + ".bias", b.p.rng.uniform(-bound, bound, classes))
    return b.node("Gemm", [x, w, bias], "logits", alpha=1.0, beta=1.0, transB=1)


def _basic_block(b, x, name, cin, cout, stride):
    y = b.node("Relu", [_conv_bn(b, x, name + ".conv1", cin, cout, 3, stride)])
    y = _conv_bn(b, y, name + ".conv2", cout, cout, 3, 1, gamma=(0.1, 0.4))
    if stride != 1 or cin != cout:
        x = _conv_bn(b, x, name + ".downsample", cin, cout, 1, stride)
    return b.node("Relu", [b.node("Add", [y, x], "residual")])


def _finish(b, x, name, in_shape, out_shape, opset=17):
    producer = [n for n in b.nodes if x in n.output][0]
    producer.output[list(producer.output).index(x)] = "y"
    inits = [numpy_helper.from_array(a, n) for n, a in b.p.arrays.items()]
    inits += [numpy_helper.from_array(np.asarray(a), n) for n, a in b.consts.items()]
    graph = helper.make_graph(
        b.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="ncc-bench-nets", producer_version="1")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def resnet(layers=(2, 2, 2, 2), widths=(64, 128, 256, 512), hw=224, classes=1000,
           in_ch=3, seed=0, batch_dim="N"):
    """A ResNet of basic blocks; layers[i] blocks at widths[i], stride 2 from stage 2."""
    b = Builder(Params(seed))
    x = b.node("Relu", [_conv_bn(b, "x", "stem", in_ch, widths[0], 7, stride=2)])
    x = b.node("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = widths[0]
    for s, (n, c) in enumerate(zip(layers, widths)):
        for i in range(n):
            stride = 2 if s > 0 and i == 0 else 1
            x = _basic_block(b, x, "layer%d.%d" % (s + 1, i), cin, c, stride)
            cin = c
    x = _head(b, x, cin, classes)
    return _finish(b, x, "resnet", [batch_dim, in_ch, hw, hw], [batch_dim, classes])


def resnet18(seed=0, batch_dim="N", hw=224):
    return resnet((2, 2, 2, 2), (64, 128, 256, 512), hw, 1000, seed=seed, batch_dim=batch_dim)


def mobilenet(hw=32, width=16, stages=((16, 1, 1), (24, 2, 2), (32, 2, 1)), classes=10,
              seed=0, batch_dim="N"):
    """MobileNet-style stack; stages are (channels, stride of the first block, blocks)."""
    b = Builder(Params(seed))
    x = b.node("HardSwish", [_conv_bn(b, "x", "stem", 3, width, 3, stride=2)])
    cin = width
    for s, (c, stride, n) in enumerate(stages):
        for i in range(n):
            name = "stage%d.%d" % (s, i)
            st = stride if i == 0 else 1
            if cin == c and st == 1:
                # Inverted residual (MobileNetV2): expand, depthwise, project, skip.
                e = cin * 2
                y = _relu6(b, _conv_bn(b, x, name + ".expand", cin, e, 1))
                y = _relu6(b, _conv_bn(b, y, name + ".dw", e, e, 3, group=e))
                y = _conv_bn(b, y, name + ".project", e, c, 1, gamma=(0.2, 0.5))
                x = b.node("Add", [x, y], "residual")
            else:
                # Depthwise-separable (MobileNetV1/V3 style).
                y = _relu6(b, _conv_bn(b, x, name + ".dw", cin, cin, 3, stride=st, group=cin))
                x = b.node("HardSwish", [_conv_bn(b, y, name + ".pw", cin, c, 1)])
            cin = c
    x = _head(b, x, cin, classes)
    return _finish(b, x, "mobilenet", [batch_dim, 3, hw, hw], [batch_dim, classes])


NETS = {"resnet18": resnet18, "resnet": resnet, "mobilenet": mobilenet}


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate a whole-network ONNX model.")
    ap.add_argument("net", choices=sorted(NETS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-dim", type=blocks._parse_batch, default="N")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args(argv)
    onnx.save(NETS[a.net](seed=a.seed, batch_dim=a.batch_dim), a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
