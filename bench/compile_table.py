#!/usr/bin/env python3
"""bench/compile_table.py — cold and warm compile time of real models against the vendors.

For each ONNX model (paths, or --zoo: every model of the zoo cache that
tests/zoo/export.py wrote), in rounds, interleaved model by model:

  ncc cold    `ncc bench M --no-cache`: compile_ms (import, passes, kernels,
              packing) as ncc measures it in its own process
  ncc warm    the same with --cache-dir D, D filled by one untimed compile
              first: every kernel object comes from the persistent cache
  openvino    ov.Core().compile_model(path, "CPU") (reads the file too)
  onnxruntime ort.InferenceSession(path) with ORT_ENABLE_ALL (reads the file too)

The vendors are timed in one long-lived Python process after one
untimed compile of each model, so plugin loading and first-use costs are
not charged to a model, as ncc's process start and LLVM initialisation
are not in compile_ms either. Medians over --rounds; the geomean of the
ratios ncc cold / openvino (the compile-time target of issue 14) and
warm / cold. Run by hand, on an idle machine: nothing here asserts a time.

Usage: python3 bench/compile_table.py [--ncc build/ncc] [--zoo | MODEL.onnx ...]
           [--rounds 3] [--threads 2] [--json FILE] [--vendors ort,openvino]
"""
import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def zoo_models():
    base = os.environ.get("NCC_ZOO_CACHE")
    if not base:
        dirs = sorted(glob.glob(os.path.expanduser("~/.cache/ncc-zoo/*/")))
        if not dirs:
            sys.exit("compile_table: no zoo cache (run python3 tests/zoo/export.py first)")
        base = dirs[-1]
    return sorted(glob.glob(os.path.join(base, "*.onnx")))


def model_name(path):
    b = os.path.basename(path)[:-5]
    # the zoo names files NAME-HASH.onnx
    head, _, tail = b.rpartition("-")
    return head if head and len(tail) == 12 else b


def zoo_inputs(path, tmp):
    """--input flags for a zoo model: its .npz (written by tests/zoo/export.py
    next to the .onnx) holds every input as in.NAME, so models with symbolic
    dims that --batch does not set (BERT's and GPT-2's sequence) run on
    the inputs the zoo checks them with. [] for other models."""
    npz = path[:-5] + ".npz"
    if not os.path.isfile(npz):
        return []
    import numpy as np
    flags = []
    with np.load(npz) as d:
        for k in d.files:
            if k.startswith("in."):
                f = os.path.join(tmp, "%s-%s.npy" % (model_name(path), k[3:]))
                np.save(f, d[k])
                flags += ["--input", "%s=%s" % (k[3:], f)]
    return flags


def ncc_compile_ms(ncc, path, threads, cache_args, input_args=()):
    cmd = [ncc, "bench", path, "--warmup", "0", "--iters", "1", "--json",
           "--threads", str(threads)] + cache_args + list(input_args)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        err = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        raise RuntimeError(err)
    d = json.loads(p.stdout)
    if isinstance(d, list):
        d = d[0]
    return float(d["compile_ms"])


class Vendors:
    def __init__(self, names, threads):
        self.fns = {}
        if "ort" in names:
            try:
                import onnxruntime as ort

                def ort_build(path):
                    so = ort.SessionOptions()
                    so.intra_op_num_threads = threads
                    so.inter_op_num_threads = 1
                    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
                self.fns["onnxruntime"] = ort_build
            except ImportError:
                print("compile_table: onnxruntime not installed", file=sys.stderr)
        if "openvino" in names:
            try:
                import openvino as ov
                core = ov.Core()

                def ov_build(path):
                    return core.compile_model(path, "CPU", {"INFERENCE_NUM_THREADS": threads})
                self.fns["openvino"] = ov_build
            except ImportError:
                print("compile_table: openvino not installed", file=sys.stderr)

    def time(self, name, path):
        t0 = time.perf_counter()
        obj = self.fns[name](path)
        ms = (time.perf_counter() - t0) * 1e3
        del obj
        return ms


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--zoo", action="store_true")
    ap.add_argument("--ncc", default=os.path.join(os.path.dirname(__file__), "..", "build", "ncc"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vendors", default="ort,openvino")
    ap.add_argument("--only", default="", help="comma-separated model names to keep")
    ap.add_argument("--json")
    a = ap.parse_args()
    models = (zoo_models() if a.zoo else []) + a.models
    if a.only:
        keep = set(a.only.split(","))
        models = [m for m in models if model_name(m) in keep]
    if not models:
        ap.error("no models (paths or --zoo)")
    vend = Vendors(a.vendors.split(","), a.threads)
    cols = ["ncc cold", "ncc warm"] + list(vend.fns)
    cache = tempfile.mkdtemp(prefix="ncc-ctable-")
    samples = {m: {c: [] for c in cols} for m in models}
    errors = {m: {} for m in models}
    inputs = {m: zoo_inputs(m, cache) for m in models}
    try:
        # untimed: fill ncc's cache, load the vendors' plugins, page the files in
        for m in models:
            try:
                ncc_compile_ms(a.ncc, m, a.threads, ["--cache-dir", cache], inputs[m])
            except RuntimeError as e:
                errors[m]["ncc cold"] = errors[m]["ncc warm"] = str(e)
            for v in vend.fns:
                try:
                    vend.time(v, m)
                except Exception as e:  # a vendor that cannot build the model
                    errors[m][v] = str(e).splitlines()[0][:100]
        for r in range(a.rounds):
            for m in models:
                order = cols[r % len(cols):] + cols[:r % len(cols)]
                for c in order:
                    if c in errors[m]:
                        continue
                    if c == "ncc cold":
                        samples[m][c].append(ncc_compile_ms(a.ncc, m, a.threads, ["--no-cache"],
                                                            inputs[m]))
                    elif c == "ncc warm":
                        samples[m][c].append(ncc_compile_ms(a.ncc, m, a.threads,
                                                            ["--cache-dir", cache], inputs[m]))
                    else:
                        samples[m][c].append(vend.time(c, m))
            print("round %d/%d done" % (r + 1, a.rounds), file=sys.stderr)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    med = {m: {c: (statistics.median(s) if s else None) for c, s in samples[m].items()}
           for m in models}
    hdr = "%-22s" % "model" + "".join("%13s" % c for c in cols) + "%12s%12s" % (
        "cold/ov", "warm/cold")
    print("compile time, ms (median of %d rounds, %d threads)" % (a.rounds, a.threads))
    print(hdr)
    r_ov, r_warm = [], []
    for m in models:
        d = med[m]
        cells = "".join("%13s" % ("%.1f" % d[c] if d[c] is not None else "fail") for c in cols)
        ov = d.get("openvino")
        x = d["ncc cold"] / ov if ov and d["ncc cold"] else None
        w = d["ncc warm"] / d["ncc cold"] if d["ncc cold"] and d["ncc warm"] else None
        r_ov.append(x)
        r_warm.append(w)
        print("%-22s%s%12s%12s" % (model_name(m), cells, "%.2f" % x if x else "-",
                                    "%.3f" % w if w else "-"))
    g_ov, g_w = geomean(r_ov), geomean(r_warm)
    print("geomean ncc cold / openvino: %s   ncc warm / cold: %s" % (
        "%.2f" % g_ov if g_ov else "-", "%.3f" % g_w if g_w else "-"))
    for m in models:
        for c, e in errors[m].items():
            print("  %s %s: %s" % (model_name(m), c, e))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rounds": a.rounds, "threads": a.threads, "columns": cols,
                       "models": {model_name(m): {"median_ms": med[m], "samples_ms": samples[m],
                                                  "errors": errors[m]} for m in models},
                       "geomean_cold_over_openvino": g_ov, "geomean_warm_over_cold": g_w}, f,
                      indent=1)


if __name__ == "__main__":
    main()
