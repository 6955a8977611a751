#!/usr/bin/env python3
"""tests/py/test_precision.py — `--precision=bf16|fp16` (passes/precision.c)
against numpy doing the same rounded math, on --target ref and cpu.

The oracle rounds the operands of each Conv / MatMul / Gemm to bf16 (on the
bits, ties to even; checked against torch's and ml_dtypes' conversion where
they are installed) or fp16 (numpy's float16, ties to even), leaves the
bias and every other op in f32, and computes in float64. Checked:
  - the RoundBF16 / RoundF16 kernels on special values: ties, overflow to
    inf, subnormals, NaN, signed zero (text IR, the ops are ncc's own);
  - one contraction of each kind with a graph input and a weight: equal
    to the oracle up to summation order (tight), and far from the
    unrounded f32 result (so a pass that rounds nothing fails);
  - a softmax after a MatMul and a residual Add stay f32: only the
    contraction's own operands are rounded (two layers: a value computed
    by ncc may round to the other neighbour of a tie than the oracle's,
    so almost all elements must be tight and all close);
  - `ncc run --compare-f32` prints the max abs / rel error and cosine
    numpy computes from the bf16 and f32 outputs;
  - a bad --precision, and --compare-f32 without one, are usage errors.
Usage: NCC=build/ncc python3 tests/py/test_precision.py [--target cpu]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)

F32 = np.float32
FAILS = []


def bf16r(a):
    """f32 -> nearest bf16 (ties to even) -> f32, NaN kept."""
    a = np.asarray(a, F32)
    b = a.view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    r = b.astype(np.uint32).view(F32)
    return np.where(np.isnan(a), a, r).astype(F32)


def f16r(a):
    with np.errstate(over="ignore"):
        return np.asarray(a, F32).astype(np.float16).astype(F32)


def check_bf16_oracle():
    """The bit trick against the libraries' bf16, where present."""
    rng = np.random.RandomState(7)
    x = np.concatenate([rng.standard_normal(4096).astype(F32) * 10,
                        (1 + np.arange(256) * 2.0 ** -8).astype(F32)])
    try:
        import ml_dtypes
        assert np.array_equal(bf16r(x), x.astype(ml_dtypes.bfloat16).astype(F32))
    except ImportError:
        pass
    try:
        import torch
        assert np.array_equal(bf16r(x), torch.from_numpy(x).to(torch.bfloat16).float().numpy())
    except ImportError:
        pass


ROUND = {"bf16": bf16r, "fp16": f16r}


def fail(msg):
    print("FAIL: " + msg)
    FAILS.append(msg)


def run(ncc, model, inputs, target, tmp, extra=(), tag="o", env=None):
    args = [ncc, "run", model, "--target=" + target, "--output-dir", os.path.join(tmp, tag)]
    for name, arr in inputs.items():
        p = os.path.join(tmp, "%s_%s.npy" % (tag, name))
        np.save(p, arr)
        args += ["--input", "%s=%s" % (name, p)]
    proc = subprocess.run(args + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=nccutil.NCC_TIMEOUT, env=dict(os.environ, **(env or {})))
    if proc.returncode:
        raise RuntimeError("%s: %s" % (" ".join(args), proc.stderr.decode()))
    return np.load(os.path.join(tmp, tag, "y.npy")), proc.stdout.decode() + proc.stderr.decode()


def save_model(tmp, name, nodes, inputs, inits, out_shape):
    ins = [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
           for k, v in inputs.items()]
    g = helper.make_graph(nodes, name, ins,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(m, path)
    return path


# ---- oracles in float64 on rounded operands ----

def conv2d(x, w, b, pad, stride=1, dil=1):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    oh, ow = (h - dil * (kh - 1) - 1) // stride + 1, (wd - dil * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, oc, oh, ow))
    for i in range(kh):
        for j in range(kw):
            win = x[:, :, i * dil:i * dil + stride * (oh - 1) + 1:stride,
                    j * dil:j * dil + stride * (ow - 1) + 1:stride]
            y += np.einsum("nchw,oc->nohw", win, w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def close(got, want, tol, label, frac=1.0, loose=None):
    """|got - want| <= tol * max|want| for at least `frac` of the elements
    (and <= loose * max|want| for all of them when frac < 1)."""
    scale = max(np.abs(want).max(), 1e-30)
    err = np.abs(got.astype(np.float64) - want) / scale
    ok = np.mean(err <= tol) >= frac and (loose is None or err.max() <= loose)
    if not ok:
        fail("%s: max err %.3g (tol %.1g), %.4f within" % (label, err.max(), tol,
                                                           np.mean(err <= tol)))
    return err


def far(got, want, tol, label):
    """The unrounded result must miss the oracle: the test can fail."""
    scale = max(np.abs(want).max(), 1e-30)
    if np.abs(got.astype(np.float64) - want).max() / scale <= 10 * tol:
        fail("%s: the f32 result is as close as the rounded one; the case checks nothing" % label)


def tile_cases(rng, tmp):
    """The bf16 cases of the cpu target's AMX tiles (codegen/lower_amx.c)."""
    out = []
    # bf16 MatMul on the cpu target's AMX tiles where the host has them
    # (codegen/lower_amx.c): folded batch rows (M 80: a clamped last row
    # tile), K 100 (zero-padded to 128), odd panels, a fused bias + Relu
    a = rng.standard_normal((2, 40, 100)).astype(F32)
    wk = (rng.standard_normal((100, 70)) * 0.1).astype(F32)
    bias = rng.standard_normal(70).astype(F32)
    p = save_model(tmp, "mm_tiles", [helper.make_node("MatMul", ["a", "w"], ["t"]),
                                     helper.make_node("Add", ["t", "bias"], ["u"]),
                                     helper.make_node("Relu", ["u"], ["y"])],
                   {"a": a}, {"w": wk, "bias": bias}, [2, 40, 70])
    out.append(("mm_tiles", p, {"a": a},
                lambda r, a=a, wk=wk, bias=bias: np.maximum(r(a).astype(np.float64) @ r(wk) + bias, 0),
                True))
    # Gemm with transB, alpha and beta * C on the tiles: 48 rows, K 200
    a = rng.standard_normal((48, 200)).astype(F32)
    wt = (rng.standard_normal((33, 200)) * 0.1).astype(F32)
    c = rng.standard_normal((48, 33)).astype(F32)
    p = save_model(tmp, "gemm_tiles", [helper.make_node("Gemm", ["a", "w", "c"], ["y"], transB=1,
                                                        alpha=1.5, beta=0.5)],
                   {"a": a}, {"w": wt, "c": c}, [48, 33])
    out.append(("gemm_tiles", p, {"a": a},
                lambda r, a=a, wt=wt, c=c: 1.5 * (r(a).astype(np.float64) @ r(wt).T) + 0.5 * c,
                True))
    # attention's product of two activations on the tiles (codegen/lower_matmul.c,
    # B packed per task): 4-D batch, M 48 (a clamped row tile), K 72 (padded
    # to 96), N 40 (a padding panel), the mask's Add fused
    a = rng.standard_normal((2, 3, 48, 72)).astype(F32)
    bb = rng.standard_normal((2, 3, 72, 40)).astype(F32)
    mask = rng.standard_normal((2, 1, 1, 40)).astype(F32)
    p = save_model(tmp, "bmm_tiles", [helper.make_node("MatMul", ["a", "b"], ["t"]),
                                      helper.make_node("Add", ["t", "mask"], ["y"])],
                   {"a": a, "b": bb, "mask": mask}, {}, [2, 3, 48, 40])
    out.append(("bmm_tiles", p, {"a": a, "b": bb, "mask": mask},
                lambda r, a=a, bb=bb, mask=mask: np.matmul(r(a).astype(np.float64), r(bb)) + mask,
                True))
    # Conv at bf16 on the tiles, blocked NCHW16c (codegen/lower_bconv_amx.c;
    # NCC_VECTOR_WIDTH=16 makes the blocks): pixels flat over padded rows
    # (9 x 11: the last tile of a task runs into the next task's rows), 48
    # channels (padded to 64 in k, an odd count of output blocks), batch 2,
    # the bias, Relu and a residual Add fused
    x = rng.standard_normal((2, 48, 9, 11)).astype(F32)
    w = (rng.standard_normal((48, 48, 3, 3)) * 0.1).astype(F32)
    b = rng.standard_normal(48).astype(F32)
    res = rng.standard_normal((2, 48, 9, 11)).astype(F32)
    p = save_model(tmp, "conv_tiles", [helper.make_node("Conv", ["x", "w", "b"], ["t"], pads=[1] * 4),
                                       helper.make_node("Relu", ["t"], ["u"]),
                                       helper.make_node("Add", ["u", "res"], ["y"])],
                   {"x": x, "res": res}, {"w": w, "b": b}, [2, 48, 9, 11])
    out.append(("conv_tiles", p, {"x": x, "res": res},
                lambda r, x=x, w=w, b=b, res=res: np.maximum(conv2d(r(x), r(w), b, 1), 0) + res,
                True))
    # dilation 2 (the taps' offsets in the flat scratch scale with it)
    x = rng.standard_normal((1, 32, 12, 12)).astype(F32)
    w = (rng.standard_normal((32, 32, 3, 3)) * 0.1).astype(F32)
    z32 = np.zeros(32, F32)
    p = save_model(tmp, "conv_tiles_dilated",
                   [helper.make_node("Conv", ["x", "w"], ["y"], pads=[2] * 4, dilations=[2, 2])],
                   {"x": x}, {"w": w}, [1, 32, 12, 12])
    out.append(("conv_tiles_dilated", p, {"x": x},
                lambda r, x=x, w=w: conv2d(r(x), r(w), z32, 2, dil=2), True))
    # stride 2 (a row of tiles per output row, A rows two pixels apart),
    # then a 1x1 stride-2 Conv (only the pixels it reads converted): two
    # layers, so the middle value's rounding may tie differently from the
    # oracle's
    x = rng.standard_normal((1, 32, 29, 29)).astype(F32)
    w1 = (rng.standard_normal((64, 32, 3, 3)) * 0.1).astype(F32)
    w2 = (rng.standard_normal((32, 64, 1, 1)) * 0.1).astype(F32)
    z64 = np.zeros(64, F32)
    p = save_model(tmp, "conv_tiles_strided",
                   [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1] * 4, strides=[2, 2]),
                    helper.make_node("Conv", ["a", "w2"], ["y"], strides=[2, 2])],
                   {"x": x}, {"w1": w1, "w2": w2}, [1, 32, 8, 8])
    out.append(("conv_tiles_strided", p, {"x": x},
                lambda r, x=x, w1=w1, w2=w2: conv2d(r(conv2d(r(x), r(w1), z64, 1, stride=2)),
                                                    r(w2), z32, 0, stride=2),
                False))
    return out


def cases(tmp, rng, target):
    """(name, model path, inputs, oracle(rnd), tight?) per case."""
    out = []
    # Conv 3x3 with bias: input and weight rounded, bias f32
    x = rng.standard_normal((2, 8, 9, 11)).astype(F32)
    w = (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(F32)
    b = rng.standard_normal(16).astype(F32)
    p = save_model(tmp, "conv", [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1] * 4)],
                   {"x": x}, {"w": w, "b": b}, [2, 16, 9, 11])
    out.append(("conv", p, {"x": x}, lambda r, x=x, w=w, b=b: conv2d(r(x), r(w), b, 1), True))
    # MatMul of two activations (attention-like) with a 3-D batch
    a = rng.standard_normal((3, 17, 40)).astype(F32)
    bb = rng.standard_normal((3, 40, 23)).astype(F32)
    p = save_model(tmp, "bmm", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                   {"a": a, "b": bb}, {}, [3, 17, 23])
    out.append(("bmm", p, {"a": a, "b": bb},
                lambda r, a=a, bb=bb: np.matmul(r(a).astype(np.float64), r(bb)), True))
    # Gemm, transB, alpha, beta * C: C stays f32
    a = rng.standard_normal((5, 64)).astype(F32)
    wt = (rng.standard_normal((30, 64)) * 0.1).astype(F32)
    c = rng.standard_normal(30).astype(F32)
    p = save_model(tmp, "gemm", [helper.make_node("Gemm", ["a", "w", "c"], ["y"], transB=1,
                                                  alpha=0.5, beta=2.0)],
                   {"a": a}, {"w": wt, "c": c}, [5, 30])
    out.append(("gemm", p, {"a": a},
                lambda r, a=a, wt=wt, c=c: 0.5 * (r(a).astype(np.float64) @ r(wt).T) + 2.0 * c,
                True))
    # bf16 tile cases on cpu only: elsewhere they repeat the cases above
    # (and PoCL under ASan is slow)
    if target == "cpu":
        out += tile_cases(rng, tmp)
    # MatMul -> Softmax: the softmax reads the f32 product, unrounded
    a = (rng.standard_normal((4, 32)) * 2).astype(F32)
    wm = rng.standard_normal((32, 10)).astype(F32)
    p = save_model(tmp, "mm_softmax", [helper.make_node("MatMul", ["a", "w"], ["t"]),
                                       helper.make_node("Softmax", ["t"], ["y"], axis=-1)],
                   {"a": a}, {"w": wm}, [4, 10])
    out.append(("mm_softmax", p, {"a": a},
                lambda r, a=a, wm=wm: softmax(r(a).astype(np.float64) @ r(wm)), True))
    # residual: r = Relu(Conv1(x)); y = Conv2(r) + r -- the Add reads r in f32
    x = rng.standard_normal((1, 8, 7, 7)).astype(F32)
    w1 = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(F32)
    w2 = (rng.standard_normal((8, 8, 1, 1)) * 0.3).astype(F32)
    b1 = np.zeros(8, F32)
    p = save_model(tmp, "residual",
                   [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1] * 4),
                    helper.make_node("Relu", ["c1"], ["r"]),
                    helper.make_node("Conv", ["r", "w2"], ["c2"]),
                    helper.make_node("Add", ["c2", "r"], ["y"])],
                   {"x": x}, {"w1": w1, "w2": w2}, [1, 8, 7, 7])

    def residual(r, x=x, w1=w1, w2=w2, b1=b1):
        rr = np.maximum(conv2d(r(x), r(w1), b1, 0 + 1), 0).astype(F32)
        return conv2d(r(rr), r(w2), b1, 0) + rr
    out.append(("residual", p, {"x": x}, residual, False))
    return out


def special_values(ncc, target, tmp):
    xs = np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11,
                   -(1 + 2.0 ** -9), 3.3895314e38, 3.4028235e38, -3.4028235e38,
                   65504.0, 65519.99, 65520.0, -65536.0, 2.0 ** -25, 3 * 2.0 ** -25,
                   2.0 ** -24 * 1.4, 6.0e-8, 1e-40, -1e-45, 0.0, -0.0,
                   np.inf, -np.inf, np.nan, 0.1, -7.77e-5, 12345.678], F32).reshape(2, 13)
    for prec, op in (("bf16", "RoundBF16"), ("fp16", "RoundF16")):
        path = os.path.join(tmp, "round_%s.nir" % prec)
        with open(path, "w") as f:
            f.write("graph @g(%%x: f32[2,13]) {\n  %%y: f32[2,13] = %s(%%x)\n  return %%y\n}\n" % op)
        got, _ = run(ncc, path, {"x": xs}, target, tmp, tag="round_" + prec)
        want = ROUND[prec](xs)
        same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
        if not same.all():
            bad = np.argwhere(~same.reshape(-1)).reshape(-1)
            fail("%s on %s: %s" % (op, target, ", ".join(
                "%r -> %r (want %r)" % (float(xs.reshape(-1)[i]), float(got.reshape(-1)[i]),
                                        float(want.reshape(-1)[i])) for i in bad[:5])))


def compare_report(ncc, target, tmp, model, inputs):
    lo, text = run(ncc, model, inputs, target, tmp, ["--precision=bf16", "--compare-f32"], "cmp")
    hi, _ = run(ncc, model, inputs, target, tmp, [], "cmp32")
    m = re.search(r"^y: bf16 vs f32: max abs err ([^,\s]+), max rel err ([^,\s]+), cosine ([^,\s]+)",
                  text, re.M)
    if not m:
        fail("--compare-f32 printed no report: %r" % text)
        return
    d = np.abs(lo.astype(np.float64) - hi)
    want = (d.max(), d.max() / np.abs(hi).max(),
            np.dot(lo.ravel().astype(np.float64), hi.ravel()) /
            (np.linalg.norm(lo.astype(np.float64)) * np.linalg.norm(hi.astype(np.float64))))
    got = tuple(float(v) for v in m.groups())
    for name, g, w, tol in zip(("max abs", "max rel", "cosine"), got, want, (2e-3, 2e-3, 2e-6)):
        if abs(g - w) > tol * max(abs(w), 1e-30):
            fail("--compare-f32 %s on %s: printed %.6g, numpy %.6g" % (name, target, g, w))
    if not want[0] > 0:
        fail("--compare-f32: bf16 and f32 outputs are equal; nothing was rounded")


def usage_errors(ncc, tmp, model):
    for extra, word in ((["--precision=int8"], "--precision expects f32, bf16 or fp16"),
                        (["--compare-f32"], "--compare-f32 needs --precision")):
        proc = subprocess.run([ncc, "run", model, "--output-dir", tmp] + extra,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = proc.stderr.decode()
        if proc.returncode != 1 or not err.startswith("ncc: error:") or word not in err \
                or err.count("\n") != 1:
            fail("%s: exit %d, stderr %r" % (" ".join(extra), proc.returncode, err))


def main():
    ap = argparse.ArgumentParser()
    nccutil.add_target_arg(ap)
    args = ap.parse_args()
    ncc = nccutil.find_ncc()
    if not nccutil.target_usable(ncc, args.target):
        print("skipped: target %s does not run here" % args.target)
        return 77
    check_bf16_oracle()
    rng = np.random.RandomState(2026)
    with tempfile.TemporaryDirectory() as tmp:
        special_values(ncc, args.target, tmp)
        all_cases = cases(tmp, rng, args.target)
        for name, path, inputs, oracle, tight in all_cases:
            f32_out, _ = run(ncc, path, inputs, args.target, tmp, [], name + "_f32")
            # bf16 on cpu twice: on the AMX tiles (where the host has
            # them) and with --no-amx (f32 products of the rounded values)
            # them) and with --no-amx (f32 products of the rounded values);
            # the tile cases a third time on the tiles at width 16 on any
            # host (emulated where it has no AMX: codegen/llvm/amx_emu.c)
            variants = [("bf16", [], None)]
            if args.target == "cpu":
                variants.append(("bf16", ["--no-amx"], None))
                if "tiles" in name:
                    variants.append(("bf16", [], {"NCC_AMX": "emulate", "NCC_VECTOR_WIDTH": "16",
                                                  "NCC_DEBUG_KIR": "1"}))
            for prec, extra, env in variants + [("fp16", [], None)]:
                got, log = run(ncc, path, inputs, args.target, tmp, ["--precision=" + prec] + extra,
                               name + "_" + prec + "".join(extra) + ("_tiles" if env else ""), env)
                want = oracle(ROUND[prec])
                label = "%s %s%s%s on %s" % (name, prec, "".join(" " + e for e in extra),
                                             " on tiles" if env else "", args.target)
                if env and "tile<" not in log:
                    fail("%s: no kernel on the tiles" % label)
                if env and name.startswith("conv") and "x_bf16" not in log:
                    fail("%s: not the blocked Conv tile kernel (lower_bconv_amx.c)" % label)
                if env and "on reference kernels" in log:
                    fail("%s: nodes fell back to reference kernels" % label)
                tol = 2e-6
                if tight:
                    close(got, want, tol, label)
                else:
                    close(got, want, tol, label, frac=0.97, loose=2e-2 if prec == "bf16" else 3e-3)
                far(f32_out, want, tol, label)
        compare_report(ncc, args.target, tmp, all_cases[0][1], all_cases[0][2])
        usage_errors(ncc, tmp, all_cases[0][1])
    if FAILS:
        print("%d failure(s)" % len(FAILS))
        return 1
    print("ok: precision cases on %s" % args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
