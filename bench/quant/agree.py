#!/usr/bin/env python3
"""bench/quant/agree.py — how closely ncc's run of an int8 model follows ONNX
Runtime's run of the same model (the issue's accuracy target: cosine >= 0.99
and top-1 agreement >= 99% on 100 random inputs), and both against the f32
model.

Takes the files bench/quant/quantize.py made (its cache directory). For
ResNet-50 the inputs go as one batch of --n images (the model's batch is
symbolic); BERT-base runs one sequence at a time. Per output: the smallest
cosine over the inputs, the largest |difference| relative to the largest
|reference|, and for a classifier the share of inputs whose arg-max agrees.
Rows: ncc int8 vs onnxruntime int8, ncc int8 vs onnxruntime f32,
onnxruntime int8 vs onnxruntime f32 (the quantization's own error).

Usage: NCC=build/ncc python3 bench/quant/agree.py [-k REGEX] [--format qdq|qop]
           [--n 100] [--target cpu] [--cache DIR]
A measurement, not a test: it prints the figures and exits 0 unless a run
fails.
"""
import argparse
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "py"))
import nccutil  # noqa: E402
import quantize  # noqa: E402


def feeds_of(name, n):
    import numpy as np
    rng = np.random.default_rng(quantize.CHECK_SEED)
    spec = quantize.MODELS[name]
    if name == "resnet50":
        return [{"x": np.concatenate([f["x"] for f in spec["inputs"](rng, n)])}]
    return spec["inputs"](rng, n)


def stats(want, got, classify):
    import numpy as np
    w = want.astype(np.float64).reshape(want.shape[0], -1)
    g = got.astype(np.float64).reshape(got.shape[0], -1)
    cos = (w * g).sum(1) / (np.linalg.norm(w, axis=1) * np.linalg.norm(g, axis=1) + 1e-30)
    rel = float(np.abs(w - g).max() / (np.abs(w).max() or 1.0))
    out = "cos_min %.5f  max_rel %.3g" % (cos.min(), rel)
    if classify:
        out += "  top1 %.1f%%" % (100.0 * (w.argmax(1) == g.argmax(1)).mean())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", dest="pattern")
    ap.add_argument("--format", choices=("qdq", "qop"), default="qdq")
    ap.add_argument("--n", type=int, default=100, help="random inputs (default 100)")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--cache")
    ap.add_argument("--ncc")
    a = ap.parse_args()
    import numpy as np
    ncc = nccutil.find_ncc(a.ncc)
    cache = quantize.cache_dir(a.cache)
    for name, spec in quantize.MODELS.items():
        if a.pattern and not re.search(a.pattern, name):
            continue
        f32 = os.path.join(cache, name + "-f32.onnx")
        int8 = os.path.join(cache, "%s-int8-%s.onnx" % (name, a.format))
        if not (os.path.exists(f32) and os.path.exists(int8)):
            print("%s: not in %s: run bench/quant/quantize.py first" % (name, cache))
            continue
        outs = spec["out_names"]
        sa, sb = nccutil.ort_session(f32), nccutil.ort_session(int8)
        res = {"ncc": {o: [] for o in outs}, "ort8": {o: [] for o in outs},
               "ort32": {o: [] for o in outs}}
        with tempfile.TemporaryDirectory(prefix="ncc-agree-") as tmp:
            for i, feed in enumerate(feeds_of(name, a.n)):
                r = nccutil.run_ncc(ncc, int8, feed, outs, tmp, target=a.target)
                if r.rc != 0 or r.missing:
                    print("%s: ncc failed: %s" % (name, r.describe()))
                    return 1
                for o, v in zip(outs, sb.run(outs, feed)):
                    res["ort8"][o].append(v)
                for o, v in zip(outs, sa.run(outs, feed)):
                    res["ort32"][o].append(v)
                for o in outs:
                    res["ncc"][o].append(r.outputs[o])
        classify = name == "resnet50"
        print("%s %s (%d inputs, ncc --target=%s):" % (name, a.format, a.n, a.target))
        for o in outs:
            got = {k: np.concatenate(v[o]) for k, v in res.items()}
            for x, y in (("ncc", "ort8"), ("ncc", "ort32"), ("ort8", "ort32")):
                print("  %-18s %-5s vs %-5s: %s" % (o, x, y, stats(got[y], got[x], classify)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
