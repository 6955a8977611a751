#!/usr/bin/env python3
"""bench/ref_resnet18.py — ResNet-18 (224x224, batch 1): ncc's ref target next to ONNX Runtime.

Builds a true ResNet-18 with random weights (bench/nets.py), times
`ncc bench --target=ref --json` on it and ONNX Runtime (1 thread, default
graph optimizations) in the same run, checks that ncc computes ONNX
Runtime's logits (rtol/atol 1e-3) and prints both latencies and their ratio.
Exit status 1 when the logits differ or could not be checked: a benchmark of
wrong results is no benchmark.  Run by hand, not in the tests: the
reference interpreter is meant to be simple, not fast.

Usage: python3 bench/ref_resnet18.py [--ncc build/ncc] [--warmup 1] [--iters 3]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "py"))
import nets  # noqa: E402
from harness.envinfo import cpu_model  # noqa: E402
import nccutil  # noqa: E402


def time_ort(path, x, warmup, iters):
    sess = nccutil.ort_session(path, threads=1, optimize=True)
    for _ in range(warmup):
        y = sess.run(None, {"x": x})[0]
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        y = sess.run(None, {"x": x})[0]
        times.append((time.perf_counter() - t0) * 1e3)
    return y, times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC, else build/ncc)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    ncc = a.ncc or os.environ.get("NCC") or os.path.join(os.path.dirname(HERE), "build", "ncc")
    ncc = nccutil.find_ncc(ncc)

    with tempfile.TemporaryDirectory(prefix="ncc-r18-") as tmp:
        model_path = os.path.join(tmp, "resnet18.onnx")
        with open(model_path, "wb") as f:
            f.write(nets.resnet18(seed=a.seed, batch_dim=1).SerializeToString())
        x = np.random.RandomState(a.seed + 1).standard_normal((1, 3, 224, 224)).astype(np.float32)
        x_path = os.path.join(tmp, "x.npy")
        np.save(x_path, x)

        cmd = [ncc, "bench", model_path, "--target=ref", "--input", "x=" + x_path,
               "--warmup", str(a.warmup), "--iters", str(a.iters), "--json"]
        t0 = time.time()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = time.time() - t0
        if proc.returncode != 0:
            sys.exit("ncc bench failed (exit %d): %s" % (
                proc.returncode, proc.stderr.decode(errors="replace").strip()))
        report = json.loads(proc.stdout.decode())
        ncc_ms = report["latency_ms"]["median"]

        y_ort, ort_times = time_ort(model_path, x, a.warmup, a.iters)
        ort_ms = float(np.median(ort_times))

        # Same logits? (one extra reference run; outside the timings)
        with nccutil.Workdir() as wd:
            r = nccutil.run_ncc(ncc, model_path, {"x": x}, ["y"], wd)
        why = r.describe() if r.rc or r.missing else \
            nccutil.compare(y_ort, r.outputs["y"], 1e-3, 1e-3)
        agree = "NO: " + why if why else "yes"

    print("ResNet-18, 1x3x224x224, %s, %d cores" % (cpu_model(), os.cpu_count()))
    print("  %-34s %10.2f ms  (compile %.1f ms, %s iters, wall %.1f s)" % (
        "ncc bench --target=ref (median)", ncc_ms, report.get("compile_ms", float("nan")),
        report.get("iters", a.iters), wall))
    print("  %-34s %10.2f ms" % ("onnxruntime 1 thread (median)", ort_ms))
    print("  ref / ort = %.1fx slower" % (ncc_ms / ort_ms))
    print("  outputs agree: %s" % agree)
    print(json.dumps({"model": "resnet18", "batch": 1, "ncc_ref_ms": ncc_ms,
                      "ort_1thread_ms": ort_ms, "ratio": ncc_ms / ort_ms,
                      "outputs_agree": not why, "ncc": report}))
    if why:
        print("ref_resnet18: FAILED: ncc's logits differ from onnxruntime's: %s" % why,
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
