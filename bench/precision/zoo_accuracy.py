#!/usr/bin/env python3
"""bench/precision/zoo_accuracy.py — the accuracy of `--precision=bf16`
(and fp16) against f32 on the model zoo, run by hand.

For every model of the zoo (tests/zoo/export.py writes ~/.cache/ncc-zoo/,
each model with its inputs in an .npz) and any extra ONNX file given with
--model (an image input gets seeded uniform [0, 1) data), runs
`ncc run MODEL --precision=P --compare-f32` and prints one Markdown row per
model and output: max abs err, max rel err (over the f32 output's largest
magnitude), cosine and top-1 agreement. Both runs use the same target and
pipeline: the figures are the rounding's cost alone.

    python3 bench/precision/zoo_accuracy.py --ncc build/ncc [--precision bf16,fp16]
        [--only resnet18,bert] [--model /work/models/resnet18.onnx]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np


def zoo_models(root, only):
    out = []
    for d in sorted(glob.glob(os.path.join(os.path.expanduser(root), "*"))):
        for onnx_path in sorted(glob.glob(os.path.join(d, "*.onnx"))):
            name = os.path.basename(onnx_path).rsplit("-", 1)[0]
            npz = onnx_path[:-5] + ".npz"
            if only and name not in only:
                continue
            if os.path.exists(npz):
                out.append((name, onnx_path, npz))
    return out


def inputs_from_npz(npz, tmp):
    z = np.load(npz)
    args = []
    for k in z.files:
        if k.startswith("in."):
            p = os.path.join(tmp, k[3:].replace("/", "_") + ".npy")
            np.save(p, z[k])
            args += ["--input", "%s=%s" % (k[3:], p)]
    return args


def image_input(model, tmp):
    """A model file without saved inputs: its first input filled with seeded
    uniform [0, 1) data, symbolic dims as 1."""
    import onnx
    g = onnx.load(model, load_external_data=False).graph
    inits = set(i.name for i in g.initializer)
    x = [i for i in g.input if i.name not in inits][0]
    shape = [d.dim_value if d.dim_value > 0 else 1 for d in x.type.tensor_type.shape.dim]
    p = os.path.join(tmp, "x.npy")
    np.save(p, np.random.RandomState(0).rand(*shape).astype(np.float32))
    return ["--input", "%s=%s" % (x.name, p)]


ROW = re.compile(r"^(.*): (\w+) vs f32: max abs err (\S+), max rel err (\S+), cosine ([^,\s]+)"
                 r"(?:, top-1 (\d+)/(\d+))?")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", default=os.environ.get("NCC", "build/ncc"))
    ap.add_argument("--zoo", default="~/.cache/ncc-zoo")
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--only", default="", help="comma-separated zoo model names")
    ap.add_argument("--model", action="append", default=[], help="an extra ONNX file")
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()
    only = set(s for s in args.only.split(",") if s)
    models = zoo_models(args.zoo, only) + [(os.path.basename(m)[:-5], m, None)
                                           for m in args.model]
    print("| model | output | precision | max abs err | max rel err | cosine | top-1 | s |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for prec in args.precision.split(","):
        for name, path, npz in models:
            with tempfile.TemporaryDirectory() as tmp:
                ins = inputs_from_npz(npz, tmp) if npz else image_input(path, tmp)
                cmd = [args.ncc, "run", path, "--target=" + args.target, "--precision=" + prec,
                       "--compare-f32", "--output-dir", tmp] + ins
                t0 = time.time()
                try:
                    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    print("| %s | - | %s | timeout | | | | |" % (name, prec))
                    bad += 1
                    continue
                dt = time.time() - t0
                if p.returncode:
                    err = p.stderr.decode().strip().splitlines()
                    print("| %s | - | %s | exit %d: %s | | | | |" % (
                        name, prec, p.returncode, err[-1] if err else ""))
                    bad += 1
                    continue
                for line in p.stdout.decode().splitlines():
                    m = ROW.match(line)
                    if m:
                        top = "%s/%s" % (m.group(6), m.group(7)) if m.group(6) else "-"
                        print("| %s | %s | %s | %s | %s | %s | %s | %.0f |" % (
                            name, m.group(1), m.group(2), m.group(3), m.group(4), m.group(5),
                            top, dt))
                sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
