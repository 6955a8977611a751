"""bench/harness/native.py — the blocks written natively, for compilers that
take their own framework's programs (TorchInductor: a torch module; XLA: a
JAX function).

One forward() describes every block, mirroring bench/blocks.py op for op
(the same GELU formula, BatchNorm in inference form, the same attention
reshapes), over a tiny backend interface `F` that torch and JAX each
implement.  Weights are blocks.params() by initializer name, so the native
model and the ONNX model compute the same function with the same numbers;
every native output is still checked (against ncc's reference, itself
checked against onnxruntime, oracle.py) before it is timed, which catches
any drift between the two descriptions.  Where onnxruntime is missing the
torch form is the outside oracle itself.
"""
import math

import numpy as np

# Same op cycle as blocks.ELTWISE_CYCLE (imported lazily to keep this file
# importable on its own in tests).
SQRT2 = 1.4142135381698608
BN_EPS = 1e-5
LN_EPS = 1e-5


def forward(F, P, cfg, x):
    """The block model of blocks.Config `cfg` on input x with weights P."""
    from blocks import ELTWISE_CYCLE
    for i in range(cfg.depth):
        if cfg.block == "eltwise":
            for j in range(cfg.k):
                op = ELTWISE_CYCLE[j % len(ELTWISE_CYCLE)]
                name = "blk%d.op%d" % (i, j)
                if op == "Mul":
                    x = x * P[name + ".scale"]
                elif op == "Add":
                    x = x + P[name + ".bias"]
                elif op == "Sub":
                    x = x - P[name + ".bias"]
                elif op == "Tanh":
                    x = F.tanh(x)
                elif op == "Sigmoid":
                    x = F.sigmoid(x)
                else:
                    x = F.relu(x)
        elif cfg.block == "mlp":
            p = "blk%d." % i
            y = _linear(F, P, _gelu(F, _linear(F, P, x, p + "fc1")), p + "fc2")
            x = x + y
        elif cfg.block == "conv":
            p = "blk%d." % i
            x = F.relu(_bn(F, P, F.conv(x, P[p + "conv.weight"], 1, 1), p + "bn"))
        elif cfg.block == "resblock":
            p = "blk%d." % i
            y = F.relu(_bn(F, P, F.conv(x, P[p + "conv1.weight"], 1, 1), p + "bn1"))
            y = _bn(F, P, F.conv(y, P[p + "conv2.weight"], 1, 1), p + "bn2")
            x = F.relu(y + x)
        elif cfg.block == "dwsep":
            p = "blk%d." % i
            y = F.relu6(_bn(F, P, F.conv(x, P[p + "dw.weight"], 1, cfg.width), p + "dw_bn"))
            x = F.relu6(_bn(F, P, F.conv(y, P[p + "pw.weight"], 0, 1), p + "pw_bn"))
        elif cfg.block == "transformer":
            x = _transformer(F, P, cfg, x, "blk%d." % i)
        else:
            raise ValueError("no native form of block %r" % cfg.block)
    return x


def _linear(F, P, x, prefix):
    return F.matmul(x, P[prefix + ".weight_t"]) + P[prefix + ".bias"]


def _gelu(F, x):
    # x * (erf(x / sqrt2) + 1) * 0.5, in the exported order.
    return (x * (F.erf(x / SQRT2) + 1.0)) * 0.5


def _bn(F, P, x, prefix):
    return F.batchnorm(x, P[prefix + ".weight"], P[prefix + ".bias"],
                       P[prefix + ".running_mean"], P[prefix + ".running_var"], BN_EPS)


def _transformer(F, P, cfg, x, p):
    e, s, nh = cfg.width, cfg.seq, cfg.heads
    dh = e // nh
    n = F.batch(x)
    h = F.layernorm(x, P[p + "ln1.weight"], P[p + "ln1.bias"], LN_EPS)
    q = F.transpose(F.reshape(_linear(F, P, h, p + "attn.q"), (n, s, nh, dh)), (0, 2, 1, 3))
    k = F.transpose(F.reshape(_linear(F, P, h, p + "attn.k"), (n, s, nh, dh)), (0, 2, 3, 1))
    v = F.transpose(F.reshape(_linear(F, P, h, p + "attn.v"), (n, s, nh, dh)), (0, 2, 1, 3))
    scores = F.matmul(q, k) / np.float32(math.sqrt(dh))
    ctx = F.transpose(F.matmul(F.softmax(scores), v), (0, 2, 1, 3))
    x = x + _linear(F, P, F.reshape(ctx, (n, s, e)), p + "attn.out")
    h = F.layernorm(x, P[p + "ln2.weight"], P[p + "ln2.bias"], LN_EPS)
    return x + _linear(F, P, _gelu(F, _linear(F, P, h, p + "mlp.fc1")), p + "mlp.fc2")


class TorchOps:
    """F for torch (functional ops)."""

    def __init__(self, torch):
        self.t = torch
        self.fn = torch.nn.functional

    def tanh(self, x): return self.t.tanh(x)
    def sigmoid(self, x): return self.t.sigmoid(x)
    def relu(self, x): return self.t.relu(x)
    def relu6(self, x): return self.t.clamp(x, 0.0, 6.0)
    def erf(self, x): return self.t.erf(x)
    def matmul(self, a, b): return self.t.matmul(a, b)
    def conv(self, x, w, pad, groups): return self.fn.conv2d(x, w, None, 1, pad, 1, groups)
    def batch(self, x): return x.shape[0]
    def reshape(self, x, shape): return x.reshape(shape)
    def transpose(self, x, perm): return x.permute(perm)
    def softmax(self, x): return self.t.softmax(x, dim=-1)

    def batchnorm(self, x, w, b, mean, var, eps):
        return self.fn.batch_norm(x, mean, var, w, b, False, 0.0, eps)

    def layernorm(self, x, w, b, eps):
        return self.fn.layer_norm(x, (x.shape[-1],), w, b, eps)


class JaxOps:
    """F for jax.numpy / lax."""

    def __init__(self, jax):
        import jax.numpy as jnp
        self.jax, self.np = jax, jnp

    def tanh(self, x): return self.np.tanh(x)
    def sigmoid(self, x): return self.jax.nn.sigmoid(x)
    def relu(self, x): return self.np.maximum(x, 0.0)
    def relu6(self, x): return self.np.clip(x, 0.0, 6.0)
    def erf(self, x): return self.jax.scipy.special.erf(x)
    def matmul(self, a, b): return self.np.matmul(a, b)
    def batch(self, x): return x.shape[0]
    def reshape(self, x, shape): return self.np.reshape(x, shape)
    def transpose(self, x, perm): return self.np.transpose(x, perm)
    def softmax(self, x): return self.jax.nn.softmax(x, axis=-1)

    def conv(self, x, w, pad, groups):
        return self.jax.lax.conv_general_dilated(
            x, w, window_strides=(1, 1), padding=[(pad, pad), (pad, pad)],
            dimension_numbers=("NCHW", "OIHW", "NCHW"), feature_group_count=groups)

    def batchnorm(self, x, w, b, mean, var, eps):
        c = (-1, 1, 1)
        inv = 1.0 / self.np.sqrt(var + eps)
        return (x - mean.reshape(c)) * inv.reshape(c) * w.reshape(c) + b.reshape(c)

    def layernorm(self, x, w, b, eps):
        mu = self.np.mean(x, axis=-1, keepdims=True)
        var = self.np.mean(self.np.square(x - mu), axis=-1, keepdims=True)
        return (x - mu) / self.np.sqrt(var + eps) * w + b


def torch_module(torch, cfg, params):
    """A torch.nn.Module computing the block model; weights as buffers."""
    ops = TorchOps(torch)

    class Blocks(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.names = list(params)
            for i, (name, a) in enumerate(params.items()):
                self.register_buffer("w%d" % i, torch.from_numpy(np.array(a, copy=True)))

        def forward(self, x):
            P = {n: getattr(self, "w%d" % i) for i, n in enumerate(self.names)}
            return forward(ops, P, cfg, x)

    return Blocks().eval()


def jax_function(jax, cfg):
    """f(params, x) for jax.jit; params is {name: array}."""
    ops = JaxOps(jax)

    def f(P, x):
        return forward(ops, P, cfg, x)

    return f
