#!/usr/bin/env python3
"""bench/blocks.py — the block generator of the block-level experiments.

One spec (block type, depth, width, seed, sizes) builds one ONNX model with
identical weights every time, so ncc, ONNX Runtime and every vendor compiler
see the same graph (docs/EXPERIMENTS.md).  The batch
dimension is symbolic ("N" by default).  Blocks:

  eltwise      a chain of k elementwise ops on one tensor (fusion-friendly)
  mlp          Linear(h,4h) -> GELU -> Linear(4h,h) + residual
  conv         Conv 3x3 -> BatchNorm -> ReLU
  resblock     conv-bn-relu-conv-bn + skip -> ReLU
  dwsep        depthwise 3x3-bn-relu6, pointwise 1x1-bn-relu6
  transformer  pre-LN encoder block, written the way torch.onnx exports it

Weights come from numpy.random.RandomState(seed) drawn in a fixed order
(block 0 first), so the first d blocks of a depth-D model equal a depth-d
model.  `params()` returns the weights as numpy arrays so that adapters for
other frameworks (a torch module, a JAX function) can load the same values.

Library use:   import blocks; m = blocks.build("resblock", depth=2, width=64)
Command line:  python3 bench/blocks.py resblock --depth 2 --width 64 -o m.onnx
"""
import argparse
import collections
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BLOCKS = ("eltwise", "mlp", "conv", "resblock", "dwsep", "transformer")
SEQ_BLOCKS = ("mlp", "transformer")  # [N, seq, width] inputs; others NCHW
DEFAULT_OPSET = 17
# The elementwise chain cycles through these (bounded ops keep values finite
# at any depth); the binary ones take a per-channel constant.
ELTWISE_CYCLE = ("Mul", "Add", "Tanh", "Mul", "Sigmoid", "Sub", "Relu", "Add")


class Config:
    """Everything that determines a model; one place for the defaults."""

    def __init__(self, block, depth=1, width=64, seed=0, batch_dim="N",
                 spatial=(16, 16), seq=16, heads=None, k=8,
                 opset=DEFAULT_OPSET, gelu="erf"):
        if block not in BLOCKS:
            raise ValueError("unknown block %r (one of %s)" % (block, ", ".join(BLOCKS)))
        if depth < 1 or width < 1 or k < 1 or seq < 1:
            raise ValueError("depth, width, k and seq must be >= 1")
        if not 17 <= opset <= 21:
            raise ValueError("opset must be in 17..21 (LayerNormalization needs 17)")
        if gelu not in ("erf", "op"):
            raise ValueError("gelu must be 'erf' or 'op'")
        if gelu == "op" and opset < 20:
            raise ValueError("gelu='op' needs opset >= 20")
        self.block, self.depth, self.width, self.seed = block, depth, width, seed
        self.batch_dim = batch_dim
        self.spatial = tuple(spatial)
        self.seq, self.k, self.opset, self.gelu = seq, k, opset, gelu
        if heads is None:
            heads = max(1, width // 16)
        if block == "transformer" and width % heads:
            raise ValueError("width %d is not divisible by heads %d" % (width, heads))
        self.heads = heads

    def input_shape(self, batch=None):
        """Input shape; the batch is the symbolic name unless `batch` is given."""
        b = self.batch_dim if batch is None else batch
        if self.block in SEQ_BLOCKS:
            return [b, self.seq, self.width]
        return [b, self.width, self.spatial[0], self.spatial[1]]


# --------------------------------------------------------------------------
# Weights: drawn in a fixed order from one RandomState.

class Params:
    """Ordered name -> float32 array store fed by one seeded generator."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.arrays = collections.OrderedDict()

    def _put(self, name, a):
        self.arrays[name] = np.ascontiguousarray(a, dtype=np.float32)
        return name

    def conv(self, name, cout, cin_per_group, kh, kw):
        # Kaiming-normal (fan_in, ReLU gain): keeps activations O(1) in depth.
        fan_in = cin_per_group * kh * kw
        w = self.rng.standard_normal((cout, cin_per_group, kh, kw)) * np.sqrt(2.0 / fan_in)
        return self._put(name, w)

    def batchnorm(self, prefix, c, gamma_range=(0.5, 1.5)):
        """Realistic inference stats: non-zero means, variances away from 1."""
        scale = self.rng.uniform(gamma_range[0], gamma_range[1], c)
        bias = self.rng.normal(0.0, 0.1, c)
        mean = self.rng.normal(0.0, 0.2, c)
        var = self.rng.uniform(0.5, 2.0, c)
        return (self._put(prefix + ".weight", scale), self._put(prefix + ".bias", bias),
                self._put(prefix + ".running_mean", mean),
                self._put(prefix + ".running_var", var))

    def linear(self, prefix, fin, fout):
        """torch.nn.Linear init; stored [in, out] as torch.onnx exports MatMul."""
        bound = 1.0 / np.sqrt(fin)
        w = self.rng.uniform(-bound, bound, (fout, fin))
        b = self.rng.uniform(-bound, bound, fout)
        return self._put(prefix + ".weight_t", w.T), self._put(prefix + ".bias", b)

    def layernorm(self, prefix, c):
        g = 1.0 + self.rng.normal(0.0, 0.1, c)
        b = self.rng.normal(0.0, 0.05, c)
        return self._put(prefix + ".weight", g), self._put(prefix + ".bias", b)

    def channel_const(self, name, c, lo, hi):
        return self._put(name, self.rng.uniform(lo, hi, (c, 1, 1)))


# --------------------------------------------------------------------------
# Graph construction helpers.

class Builder:
    """Collects nodes and constants; hands out unique value names."""

    def __init__(self, params):
        self.p = params
        self.nodes = []
        self.consts = collections.OrderedDict()  # non-weight initializers
        self.counter = collections.Counter()

    def fresh(self, hint):
        self.counter[hint] += 1
        return "%s_%d" % (hint, self.counter[hint])

    def node(self, op, inputs, hint=None, n_out=1, **attrs):
        outs = [self.fresh(hint or op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.fresh("n_" + op), **attrs))
        return outs[0] if n_out == 1 else outs

    def const_init(self, name, array):
        """A shared constant initializer (scalars such as Clip bounds)."""
        if name not in self.consts:
            self.consts[name] = np.asarray(array)
        return name

    def const_node(self, array, hint="const"):
        """A Constant node, as torch.onnx emits for shape arithmetic."""
        out = self.fresh(hint)
        t = numpy_helper.from_array(np.asarray(array), out + "_value")
        self.nodes.append(helper.make_node("Constant", [], [out],
                                           name=self.fresh("n_Constant"), value=t))
        return out


def _conv(b, x, w, pads=1, group=1, stride=1):
    k = b.p.arrays[w].shape[2]
    return b.node("Conv", [x, w], "conv", kernel_shape=[k, k], pads=[pads] * 4,
                  strides=[stride, stride], dilations=[1, 1], group=group)


def _bn(b, x, names):
    return b.node("BatchNormalization", [x] + list(names), "bn", epsilon=1e-5, momentum=0.9)


def _relu6(b, x):
    lo = b.const_init("relu6.min", np.float32(0.0))
    hi = b.const_init("relu6.max", np.float32(6.0))
    return b.node("Clip", [x, lo, hi], "relu6")


def _linear(b, x, names):
    w, bias = names
    return b.node("Add", [b.node("MatMul", [x, w], "matmul"), bias], "linear")


def _gelu(b, x, cfg):
    if cfg.gelu == "op":
        return b.node("Gelu", [x], "gelu")
    # torch.onnx before opset 20: x * 0.5 * (1 + erf(x / sqrt(2))), in this order.
    d = b.node("Div", [x, b.const_node(np.array(1.4142135381698608, np.float32))], "gelu_div")
    e = b.node("Erf", [d], "gelu_erf")
    a = b.node("Add", [e, b.const_node(np.array(1.0, np.float32))], "gelu_add")
    m = b.node("Mul", [x, a], "gelu_mul")
    return b.node("Mul", [m, b.const_node(np.array(0.5, np.float32))], "gelu")


# --------------------------------------------------------------------------
# The blocks: each takes the builder, the input value name, the block index.

def block_eltwise(b, cfg, x, i):
    for j in range(cfg.k):
        op = ELTWISE_CYCLE[j % len(ELTWISE_CYCLE)]
        name = "blk%d.op%d" % (i, j)
        if op == "Mul":
            x = b.node(op, [x, b.p.channel_const(name + ".scale", cfg.width, 0.5, 1.5)])
        elif op in ("Add", "Sub"):
            x = b.node(op, [x, b.p.channel_const(name + ".bias", cfg.width, -0.5, 0.5)])
        else:
            x = b.node(op, [x])
    return x


def block_mlp(b, cfg, x, i):
    h = cfg.width
    fc1 = b.p.linear("blk%d.fc1" % i, h, 4 * h)
    fc2 = b.p.linear("blk%d.fc2" % i, 4 * h, h)
    y = _linear(b, _gelu(b, _linear(b, x, fc1), cfg), fc2)
    return b.node("Add", [x, y], "residual")


def block_conv(b, cfg, x, i):
    w = b.p.conv("blk%d.conv.weight" % i, cfg.width, cfg.width, 3, 3)
    bn = b.p.batchnorm("blk%d.bn" % i, cfg.width)
    return b.node("Relu", [_bn(b, _conv(b, x, w), bn)])


def block_resblock(b, cfg, x, i):
    c = cfg.width
    w1 = b.p.conv("blk%d.conv1.weight" % i, c, c, 3, 3)
    bn1 = b.p.batchnorm("blk%d.bn1" % i, c)
    w2 = b.p.conv("blk%d.conv2.weight" % i, c, c, 3, 3)
    # A small last-BN scale (as with zero-init residual training) keeps the
    # residual stream bounded when blocks are stacked 32 deep.
    bn2 = b.p.batchnorm("blk%d.bn2" % i, c, gamma_range=(0.1, 0.4))
    y = b.node("Relu", [_bn(b, _conv(b, x, w1), bn1)])
    y = _bn(b, _conv(b, y, w2), bn2)
    return b.node("Relu", [b.node("Add", [y, x], "residual")])


def block_dwsep(b, cfg, x, i):
    c = cfg.width
    wd = b.p.conv("blk%d.dw.weight" % i, c, 1, 3, 3)
    bnd = b.p.batchnorm("blk%d.dw_bn" % i, c)
    wp = b.p.conv("blk%d.pw.weight" % i, c, c, 1, 1)
    bnp = b.p.batchnorm("blk%d.pw_bn" % i, c)
    y = _relu6(b, _bn(b, _conv(b, x, wd, group=c), bnd))
    return _relu6(b, _bn(b, _conv(b, y, wp, pads=0), bnp))


def _batch_dim_of(b, x):
    """torch's x.size(0): Shape -> Gather(0) -> Unsqueeze, evaluated at run time."""
    shape = b.node("Shape", [x], "shape")
    n = b.node("Gather", [shape, b.const_node(np.array(0, np.int64))], "batch", axis=0)
    return b.node("Unsqueeze", [n, b.const_node(np.array([0], np.int64))], "batch_1d")


def _reshape_to(b, x, batch_1d, dims):
    parts = [batch_1d] + [b.const_node(np.array([d], np.int64)) for d in dims]
    return b.node("Reshape", [x, b.node("Concat", parts, "shape_cat", axis=0)], "view")


def block_transformer(b, cfg, x, i):
    e, s, nh = cfg.width, cfg.seq, cfg.heads
    dh = e // nh
    p = "blk%d" % i
    ln1 = b.p.layernorm(p + ".ln1", e)
    q_w = b.p.linear(p + ".attn.q", e, e)
    k_w = b.p.linear(p + ".attn.k", e, e)
    v_w = b.p.linear(p + ".attn.v", e, e)
    o_w = b.p.linear(p + ".attn.out", e, e)
    ln2 = b.p.layernorm(p + ".ln2", e)
    fc1 = b.p.linear(p + ".mlp.fc1", e, 4 * e)
    fc2 = b.p.linear(p + ".mlp.fc2", 4 * e, e)

    batch = _batch_dim_of(b, x)
    h = b.node("LayerNormalization", [x, ln1[0], ln1[1]], "ln", axis=-1, epsilon=1e-5)
    q = _reshape_to(b, _linear(b, h, q_w), batch, (s, nh, dh))
    k = _reshape_to(b, _linear(b, h, k_w), batch, (s, nh, dh))
    v = _reshape_to(b, _linear(b, h, v_w), batch, (s, nh, dh))
    q = b.node("Transpose", [q], "q_heads", perm=[0, 2, 1, 3])
    # k.transpose(1, 2).transpose(-2, -1): the exporter fuses the two.
    k = b.node("Transpose", [k], "k_heads_t", perm=[0, 2, 3, 1])
    v = b.node("Transpose", [v], "v_heads", perm=[0, 2, 1, 3])
    scores = b.node("MatMul", [q, k], "scores")
    scale = b.const_node(np.array(np.sqrt(dh), np.float32))
    probs = b.node("Softmax", [b.node("Div", [scores, scale], "scaled")], "probs", axis=-1)
    ctx = b.node("Transpose", [b.node("MatMul", [probs, v], "ctx")], "ctx_t", perm=[0, 2, 1, 3])
    ctx = _reshape_to(b, ctx, batch, (s, e))
    x = b.node("Add", [x, _linear(b, ctx, o_w)], "residual")

    h = b.node("LayerNormalization", [x, ln2[0], ln2[1]], "ln", axis=-1, epsilon=1e-5)
    y = _linear(b, _gelu(b, _linear(b, h, fc1), cfg), fc2)
    return b.node("Add", [x, y], "residual")


BLOCK_FNS = {
    "eltwise": block_eltwise, "mlp": block_mlp, "conv": block_conv,
    "resblock": block_resblock, "dwsep": block_dwsep, "transformer": block_transformer,
}


# --------------------------------------------------------------------------
# Public API.

def _assemble(cfg):
    params = Params(cfg.seed)
    b = Builder(params)
    x = "x"
    for i in range(cfg.depth):
        x = BLOCK_FNS[cfg.block](b, cfg, x, i)
    # Name the final value "y" by renaming its producer's output (no Identity).
    producer = [n for n in b.nodes if x in n.output]
    assert len(producer) == 1 and all(x not in n.input for n in b.nodes)
    producer[0].output[list(producer[0].output).index(x)] = "y"
    return b, params


def build_config(cfg):
    """The ONNX model of a Config."""
    b, params = _assemble(cfg)
    inits = [numpy_helper.from_array(a, n) for n, a in params.arrays.items()]
    inits += [numpy_helper.from_array(np.asarray(a), n) for n, a in b.consts.items()]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, cfg.input_shape())
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, cfg.input_shape())
    graph = helper.make_graph(b.nodes, "%s_d%d_w%d" % (cfg.block, cfg.depth, cfg.width),
                              [x], [y], initializer=inits)
    opsets = [helper.make_opsetid("", cfg.opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="ncc-bench-blocks",
                              producer_version="1")
    model.ir_version = 8  # IR of opsets 17/18; newer readers take it too
    if cfg.opset >= 19:
        model.ir_version = helper.find_min_ir_version_for(opsets)
    meta = {"block": cfg.block, "depth": cfg.depth, "width": cfg.width, "seed": cfg.seed,
            "spatial": "%dx%d" % cfg.spatial, "seq": cfg.seq, "heads": cfg.heads, "k": cfg.k}
    helper.set_model_props(model, {k: str(v) for k, v in meta.items()})
    onnx.checker.check_model(model, full_check=True)
    return model


def build(block, depth=1, width=64, seed=0, **kw):
    """ONNX ModelProto of `block` repeated `depth` times (see Config for kw:
    batch_dim, spatial=(H, W), seq, heads, k, opset, gelu)."""
    return build_config(Config(block, depth, width, seed, **kw))


def params(block, depth=1, width=64, seed=0, **kw):
    """The weights of build(...) by initializer name, as float32 arrays."""
    _, p = _assemble(Config(block, depth, width, seed, **kw))
    return collections.OrderedDict(p.arrays)


def input_shape(block, batch, width=64, **kw):
    """Concrete input shape for a batch size."""
    return Config(block, 1, width, **kw).input_shape(batch)


def make_input(block, batch, width=64, seed=1, **kw):
    """A seeded standard-normal input of the block's shape (float32)."""
    shape = input_shape(block, batch, width, **kw)
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32)


def _parse_spatial(text):
    try:
        h, w = text.lower().split("x")
        return int(h), int(w)
    except ValueError:
        raise argparse.ArgumentTypeError("expected HxW, e.g. 16x16, got %r" % text)


def _parse_batch(text):
    return int(text) if text.isdigit() else text


def main(argv=None):
    ap = argparse.ArgumentParser(description="Generate a block-level ONNX model.")
    ap.add_argument("block", choices=BLOCKS)
    ap.add_argument("--depth", type=int, default=1, help="number of repeated blocks")
    ap.add_argument("--width", type=int, default=64, help="channels / hidden size")
    ap.add_argument("--batch-dim", type=_parse_batch, default="N",
                    help="batch dimension: a name (symbolic, default N) or an integer")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spatial", type=_parse_spatial, default=(16, 16), help="HxW of NCHW blocks")
    ap.add_argument("--seq", type=int, default=16, help="sequence length of mlp/transformer")
    ap.add_argument("--heads", type=int, default=None, help="attention heads (default width/16)")
    ap.add_argument("--k", type=int, default=8, help="ops per eltwise block")
    ap.add_argument("--opset", type=int, default=DEFAULT_OPSET)
    ap.add_argument("--gelu", choices=("erf", "op"), default="erf",
                    help="erf: the Div/Erf/Add/Mul/Mul export; op: the Gelu op (opset >= 20)")
    ap.add_argument("-o", "--output", required=True, help="output .onnx path")
    a = ap.parse_args(argv)
    try:
        model = build(a.block, a.depth, a.width, a.seed, batch_dim=a.batch_dim,
                      spatial=a.spatial, seq=a.seq, heads=a.heads, k=a.k,
                      opset=a.opset, gelu=a.gelu)
    except ValueError as e:
        ap.error(str(e))
    onnx.save(model, a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
