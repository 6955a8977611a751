#!/usr/bin/env python3
"""bench/blocks_vs_ort.py — ncc's cpu backend against ONNX Runtime on the bench blocks.

For each block (mlp, conv, resblock, dwsep, transformer; bench/blocks.py) at
each depth and batch size, one ONNX model and one seeded input go to both:

  ncc   `ncc bench MODEL -O2 --target=cpu --input x=X.npy --json`, with
        NCC_NUM_THREADS=THREADS (the pool size), in a subprocess
  ORT   onnxruntime, ORT_ENABLE_ALL, intra_op_num_threads=THREADS,
        inter_op_num_threads=1, CPUExecutionProvider, in this process

Protocol (the machine is shared and noisy, so only same-run ratios mean
anything):
  1. cross-check: `ncc run` on the input must match ORT within rtol 1e-3
     and atol 1e-4 x max|y| (tests/py/real_nets.py's rule); a mismatch is
     reported and that row is not timed
  2. calibrate: the iteration count per round is chosen so that each side
     runs about --budget seconds per round (at least 3, at most 200 runs)
  3. --rounds rounds; each round times both sides back to back, alternating
     which goes first, each with its own warm-up; a round yields one median
     per side.  The reported latency is the median of the round medians,
     and `spread` is (max - min) / median of ncc's round medians, a noise
     indicator (> 0.2: rerun on a quieter machine)

Prints a table: latency (ms) of both, ratio ncc/ort (< 1: ncc faster), and
the geometric mean of the ratios; --json prints one JSON object instead.
Defaults (width 64, 28x28 images, sequence 64, depths 1 and 8, batches 1
and 16, 5 rounds of 0.5 s a side) take about 3 minutes on 2 cores.  Run by
hand:

  python3 bench/blocks_vs_ort.py --ncc build-rel/ncc [--json] [--blocks conv,mlp]

Use a release build of ncc: an ASan build measures the sanitizer.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "py"))
import blocks  # noqa: E402
from harness.envinfo import cpu_model  # noqa: E402
import nccutil  # noqa: E402  (exits 77 without numpy/onnx/onnxruntime)

DEFAULT_BLOCKS = ("mlp", "conv", "resblock", "dwsep", "transformer")
RTOL, ATOL = 1e-3, 1e-4  # as tests/py/real_nets.py; atol scaled by max|y|


def load_average():
    try:
        return os.getloadavg()
    except OSError:
        return None


def int_list(text):
    try:
        vals = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers, got %r" % text)
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError("expected positive integers, got %r" % text)
    return vals


def block_list(text):
    names = [b.strip() for b in text.split(",") if b.strip()]
    bad = [b for b in names if b not in blocks.BLOCKS]
    if bad or not names:
        raise argparse.ArgumentTypeError("unknown block %r (one of %s)" % (
            ",".join(bad), ", ".join(blocks.BLOCKS)))
    return names


def spatial(text):
    try:
        h, w = text.lower().split("x")
        return int(h), int(w)
    except ValueError:
        raise argparse.ArgumentTypeError("expected HxW, e.g. 28x28, got %r" % text)


class Ncc:
    """Runs the ncc binary with the thread count and flags of this run."""

    def __init__(self, path, target, opt):
        self.path, self.target, self.opt = path, target, opt

    def bench(self, model, x_path, warmup, iters):
        """`ncc bench --json` report (a dict); raises RuntimeError on failure."""
        cmd = [self.path, "bench", model, self.opt, "--target=" + self.target,
               "--input", "x=" + x_path, "--warmup", str(warmup), "--iters", str(iters),
               "--json"]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.returncode != 0:
            raise RuntimeError("ncc bench exit %d: %s" % (
                proc.returncode, proc.stderr.decode("utf-8", "replace").strip()[:300]))
        return json.loads(proc.stdout.decode())

    def run(self, model, x, workdir):
        """ncc's output for input x (one `ncc run`), or raises RuntimeError."""
        r = nccutil.run_ncc(self.path, model, {"x": x}, ["y"], workdir, extra=[self.opt],
                            target=self.target)
        if r.rc != 0 or r.missing:
            raise RuntimeError("ncc run: " + r.describe())
        return r.outputs["y"]


def ort_session(model, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def ort_times(sess, x, warmup, iters):
    """Per-run latencies (ms) of `iters` runs after `warmup` untimed ones."""
    feeds = {"x": x}
    for _ in range(warmup):
        sess.run(None, feeds)
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def iters_for(latency_ms, budget_s):
    return int(min(200, max(3, round(budget_s * 1e3 / max(latency_ms, 1e-3)))))


def measure(cfg, a, ncc, tmp):
    """One table row: a dict with the configuration, both latencies, the
    ratio, the cross-check error, or an `error` string."""
    block, depth, batch = cfg
    kw = {"seq": a.seq} if block in blocks.SEQ_BLOCKS else {"spatial": a.spatial}
    row = {"block": block, "depth": depth, "batch": batch, "width": a.width}
    row.update({k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()})
    name = "%s_d%d_b%d" % (block, depth, batch)
    model_path = os.path.join(tmp, name + ".onnx")
    with open(model_path, "wb") as f:
        f.write(blocks.build(block, depth, a.width, seed=0, **kw).SerializeToString())
    x = blocks.make_input(block, batch, a.width, seed=1, **kw)
    x_path = os.path.join(tmp, name + "_x.npy")
    np.save(x_path, x)

    sess = ort_session(model_path, a.threads)
    want = sess.run(None, {"x": x})[0]
    try:
        got = ncc.run(model_path, x, nccutil.subdir(tmp, name))
    except RuntimeError as e:
        row["error"] = str(e)
        return row
    why = nccutil.compare(want, got, RTOL, ATOL * max(1.0, float(np.abs(want).max())))
    if got.shape == want.shape:
        row["max_abs_err"] = float(np.abs(got.astype(np.float64) - want).max())
    if why:
        row["error"] = "outputs differ: " + why
        return row

    # Calibration (also the first warm-up of both).
    cal = ncc.bench(model_path, x_path, 1, 3)
    n_iters = iters_for(cal["latency_ms"]["median"], a.budget)
    o_iters = iters_for(float(np.median(ort_times(sess, x, 1, 3))), a.budget)
    row["compile_ms"] = cal.get("compile_ms")
    row["kernels"] = cal.get("kernels")
    n_meds, o_meds = [], []
    for r in range(a.rounds):
        sides = ["ncc", "ort"] if r % 2 == 0 else ["ort", "ncc"]
        for side in sides:
            if side == "ncc":
                rep = ncc.bench(model_path, x_path, a.warmup, n_iters)
                n_meds.append(rep["latency_ms"]["median"])
            else:
                o_meds.append(float(np.median(ort_times(sess, x, a.warmup, o_iters))))
    row["ncc_ms"] = float(np.median(n_meds))
    row["ort_ms"] = float(np.median(o_meds))
    row["ratio"] = row["ncc_ms"] / row["ort_ms"]
    row["ncc_spread"] = (max(n_meds) - min(n_meds)) / row["ncc_ms"]
    row["ort_spread"] = (max(o_meds) - min(o_meds)) / row["ort_ms"]
    row["iters"] = {"ncc": n_iters, "ort": o_iters, "rounds": a.rounds}
    return row


def geomean(vals):
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def print_table(res):
    m = res["machine"]
    print("blocks vs onnxruntime %s: ncc %s --target=%s, %d threads each; %s; "
          "load %s -> %s" % (m["onnxruntime"], res["opt"], res["target"], res["threads"],
                             m["cpu"], m["load_before"], m["load_after"]))
    print("width %d, images %dx%d, seq %d; median of %d round medians" % (
        res["width"], res["spatial"][0], res["spatial"][1], res["seq"], res["rounds"]))
    print("%-12s %5s %5s %10s %10s %8s %7s %7s %9s" % (
        "block", "depth", "batch", "ncc ms", "ort ms", "ncc/ort", "spread", "kernels",
        "max|err|"))
    for r in res["rows"]:
        err = "%.2g" % r["max_abs_err"] if "max_abs_err" in r else "-"
        if "error" in r:
            print("%-12s %5d %5d  FAILED: %s" % (r["block"], r["depth"], r["batch"], r["error"]))
            continue
        print("%-12s %5d %5d %10.3f %10.3f %8.2f %6.0f%% %7s %9s" % (
            r["block"], r["depth"], r["batch"], r["ncc_ms"], r["ort_ms"], r["ratio"],
            100 * max(r["ncc_spread"], r["ort_spread"]), r.get("kernels", "-"), err))
    g = res["geomean_ratio"]
    print("geometric mean ncc/ort: %s over %d rows%s (wall %.0f s)" % (
        "%.3f" % g if g else "-", res["timed_rows"],
        ", %d FAILED" % res["failed_rows"] if res["failed_rows"] else "", res["wall_s"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC); use a release build")
    ap.add_argument("--blocks", type=block_list, default=list(DEFAULT_BLOCKS))
    ap.add_argument("--depths", type=int_list, default=[1, 8])
    ap.add_argument("--batches", type=int_list, default=[1, 16])
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--spatial", type=spatial, default=(28, 28), help="HxW of image blocks")
    ap.add_argument("--seq", type=int, default=64, help="sequence length of mlp/transformer")
    ap.add_argument("--threads", type=int, default=2, help="threads for each side (default 2)")
    ap.add_argument("--target", default="cpu", help="ncc target (default cpu)")
    ap.add_argument("--opt", default="-O2", help="ncc optimization flag (default -O2)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--budget", type=float, default=0.5,
                    help="seconds each side runs per round (sets the iterations; default 0.5)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed runs per side per round")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()
    if a.rounds < 1 or a.threads < 1 or a.budget <= 0:
        ap.error("--rounds, --threads and --budget must be positive")
    # The pool size of every ncc subprocess (ORT takes its own option).
    os.environ["NCC_NUM_THREADS"] = str(a.threads)
    os.environ.setdefault("NCC_CACHE", "0")  # cold compile times (docs/CODEGEN.md)
    ncc = Ncc(nccutil.find_ncc(a.ncc), a.target, a.opt)
    nccutil.require_target(ncc.path, a.target)
    import onnxruntime

    t0 = time.time()
    load_before = load_average()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ncc-bvo-") as tmp:
        for block in a.blocks:
            for depth in a.depths:
                for batch in a.batches:
                    row = measure((block, depth, batch), a, ncc, tmp)
                    rows.append(row)
                    if not a.json:
                        print("  %s d%d b%d: %s" % (block, depth, batch,
                                                    row.get("error") or "%.2f" % row["ratio"]),
                              file=sys.stderr, flush=True)
    timed = [r for r in rows if "ratio" in r]
    fmt_load = lambda v: "/".join("%.2f" % x for x in v) if v else "?"  # noqa: E731
    res = {
        "benchmark": "blocks_vs_ort", "target": a.target, "opt": a.opt,
        "threads": a.threads, "width": a.width, "spatial": list(a.spatial), "seq": a.seq,
        "rounds": a.rounds, "budget_s": a.budget, "warmup": a.warmup,
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                    "onnxruntime": onnxruntime.__version__, "ncc": ncc.path,
                    "load_before": fmt_load(load_before), "load_after": fmt_load(load_average())},
        "rows": rows, "timed_rows": len(timed), "failed_rows": len(rows) - len(timed),
        "geomean_ratio": geomean([r["ratio"] for r in timed]),
        "wall_s": time.time() - t0,
    }
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print_table(res)
    return 1 if len(timed) != len(rows) else 0


if __name__ == "__main__":
    sys.exit(main())
