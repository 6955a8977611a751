#!/usr/bin/env python3
"""tests/gpu/gpu_blocks.py — every generated block (bench/blocks.py) on a GPU
target against the reference interpreter.

  --mode run  (default): `ncc run --target=T` and `ncc run --target=ref` on
              the same input at two batch sizes (the batch is symbolic, so
              one compiled module serves both); outputs must agree.
  --mode ptx: `ncc compile --target=cuda --emit=ptx` for every block, then
              ptxas (--ptxas) assembles the PTX for --arch (needs no GPU).

Shapes are small on purpose (PoCL compiles every kernel on the CPU).
Usage: NCC=build/ncc python3 tests/gpu/gpu_blocks.py [--target opencl]
       [--mode run|ptx] [--blocks a,b] [--batches 1,3] [-v]
Exit status 1 when any block fails, 77 when numpy/onnx are missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx  # noqa: F401
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("NCC_SRC") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "bench"))
import blocks  # noqa: E402

# Small configurations of every block type: (block, depth, keyword args).
CASES = [
    ("eltwise", 2, dict(width=8, spatial=(5, 7), k=8)),
    ("mlp", 1, dict(width=16, seq=5)),
    ("conv", 2, dict(width=8, spatial=(6, 6))),
    ("resblock", 1, dict(width=8, spatial=(6, 6))),
    ("dwsep", 1, dict(width=8, spatial=(6, 6))),
    ("transformer", 1, dict(width=32, seq=6, heads=2)),
]
TIMEOUT = float(os.environ.get("NCC_PY_TIMEOUT", "300"))


def run(cmd, verbose):
    if verbose:
        print("  $ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=TIMEOUT)
    return p.returncode, p.stdout + p.stderr


def check_run(ncc, target, name, model, batches, kw, work, verbose):
    errs = []
    for b in batches:
        x = blocks.make_input(name, b, **{k: v for k, v in kw.items() if k != "k"})
        xin = os.path.join(work, "x.npy")
        np.save(xin, x)
        outs = {}
        for t in ("ref", target):
            d = os.path.join(work, "%s_b%d" % (t, b))
            os.makedirs(d, exist_ok=True)
            rc, log = run([ncc, "run", model, "--target=" + t, "--input", xin,
                           "--output-dir", d], verbose)
            if rc != 0:
                return ["batch %d: ncc run --target=%s exit %d: %s" %
                        (b, t, rc, log.strip().splitlines()[-1] if log.strip() else "")]
            outs[t] = np.load(os.path.join(d, "y.npy"))
        a, g = outs["ref"], outs[target]
        if a.shape != g.shape:
            errs.append("batch %d: shape %s vs %s" % (b, a.shape, g.shape))
            continue
        scale = max(1.0, float(np.abs(a).max()))
        err = float(np.abs(a - g).max()) if a.size else 0.0
        if not (err <= 1e-4 * scale) or not np.isfinite(g).all():
            errs.append("batch %d: max |ref - %s| = %g (scale %g)" % (b, target, err, scale))
        elif verbose:
            print("  batch %d: max err %.3g" % (b, err))
    return errs


def check_ptx(ncc, ptxas, arch, model, work, verbose):
    ptx = os.path.join(work, "m.ptx")
    rc, log = run([ncc, "compile", model, "--target=cuda", "--emit=ptx", "-o", ptx], verbose)
    if rc != 0:
        return ["ncc compile --emit=ptx exit %d: %s" % (rc, log.strip())]
    rc, log = run([ptxas, "-arch=" + arch, ptx, "-o", os.path.join(work, "m.cubin")], verbose)
    if rc != 0:
        return ["ptxas -arch=%s failed: %s" % (arch, log.strip()[:500])]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncc", default=os.environ.get("NCC"))
    ap.add_argument("--target", default="opencl")
    ap.add_argument("--mode", choices=("run", "ptx"), default="run")
    ap.add_argument("--blocks", default="")
    ap.add_argument("--batches", default="1,3")
    ap.add_argument("--ptxas", default=os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--skip-unavailable", action="store_true",
                    help="exit 77 when the target cannot run here")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if not a.ncc:
        sys.exit("error: set NCC or pass --ncc")
    if a.mode == "ptx" and not os.access(a.ptxas, os.X_OK):
        print("skipped: no ptxas at %s" % a.ptxas)
        sys.exit(77)
    if a.mode == "ptx":
        p = subprocess.run([a.ncc, "targets"], stdout=subprocess.PIPE, universal_newlines=True)
        line = [l for l in p.stdout.splitlines() if l.startswith("cuda")]
        if not line or not (line[0].split()[1] == "yes" or "is here" in line[0]):
            print("skipped: no NVRTC here")
            sys.exit(77)
    if a.mode == "run" and a.skip_unavailable:
        p = subprocess.run([a.ncc, "targets"], stdout=subprocess.PIPE, universal_newlines=True)
        rows = [l.split(None, 3) for l in p.stdout.splitlines() if l.split()]
        row = [r for r in rows if r[0] == a.target]
        if not row or row[0][1] != "yes":
            # the reason `ncc targets` gives (e.g. "no CUDA driver"): CI's
            # strict mode allows hardware reasons only (tools/test_skips.py)
            print("skipped: target %s is unavailable here: %s" % (
                a.target, row[0][3] if row and len(row[0]) > 3 else "not built"))
            sys.exit(77)
    want = set(a.blocks.split(",")) if a.blocks else None
    batches = [int(b) for b in a.batches.split(",")]
    work = tempfile.mkdtemp(prefix="ncc_gpu_blocks_")
    failed = 0
    try:
        for name, depth, kw in CASES:
            if want and name not in want:
                continue
            model = os.path.join(work, name + ".onnx")
            onnx.save(blocks.build(name, depth=depth, **kw), model)
            if a.mode == "run":
                errs = check_run(a.ncc, a.target, name, model, batches, kw, work, a.verbose)
            else:
                errs = check_ptx(a.ncc, a.ptxas, a.arch, model, work, a.verbose)
            print("%-12s %s" % (name, "ok" if not errs else "FAIL"))
            for e in errs:
                print("  " + e)
            failed += bool(errs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d block(s) failed" % failed if failed else "all blocks agree"
          if a.mode == "run" else "all blocks assemble")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
