#!/usr/bin/env python3
"""bench/precision/table.py — one model at f32, int8 and bf16 on ncc, onnxruntime and
OpenVINO: latency (interleaved, medians with CIs), speed-up over each
compiler's own f32, accuracy against f32 (bench/harness/precision.py).

  python3 bench/quant/quantize.py resnet50 --out /tmp/r50     # f32 + int8 QDQ files
  bench/precision/table.py /tmp/r50/resnet50.onnx --int8 /tmp/r50/resnet50_int8.onnx --threads 2
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(prog="bench/precision/table.py", description=__doc__.split("\n")[1])
    ap.add_argument("model", help="the f32 ONNX model")
    ap.add_argument("--int8", help="its int8 QDQ model (bench/quant/quantize.py)")
    ap.add_argument("--precisions", default="f32,int8,bf16")
    ap.add_argument("--against", default="onnxruntime,openvino")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--accuracy-inputs", type=int, default=10,
                    help="seeded input sets the accuracy is measured on")
    ap.add_argument("--dim", action="append", default=[], help="NAME=VALUE for symbolic dims")
    ap.add_argument("--input", action="append", default=[],
                    help="NAME=file.npy: that input fixed (e.g. an attention mask); the "
                    "others are seeded random per input set")
    ap.add_argument("--ncc", help="ncc binary (default: build/ncc)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    from harness.compare_model import CompareError, ModelInfo, load_inputs, parse_dims
    try:
        precisions = [p for p in a.precisions.split(",") if p]
        from harness import precision as P
        bad = [p for p in precisions if p not in P.PRECISIONS]
        if bad or a.threads < 1 or a.rounds < 1 or a.accuracy_inputs < 1:
            raise CompareError("bad option: precisions %s (known %s), --threads/--rounds/"
                               "--accuracy-inputs >= 1" % (bad, ",".join(P.PRECISIONS)))
        info = ModelInfo(a.model)
        dims = parse_dims(a.dim)
        given, _ = load_inputs(a.input, info)
        feed_sets = [info.feeds(a.batch, dims, given, seed) for seed in range(a.accuracy_inputs)]
    except CompareError as e:
        print("bench/precision/table.py: error: %s" % e, file=sys.stderr)
        return 1
    from harness import envinfo
    envinfo.apply_threads(a.threads, True)
    from harness.nccbin import Ncc, find_ncc
    path = find_ncc(a.ncc)
    ncc = Ncc(path, timeout=a.timeout) if path else None
    compilers = ["ncc"] + [c for c in a.against.split(",") if c]
    models = {"f32": a.model, "bf16": a.model, "int8": a.int8}
    rows = P.run(models, compilers, precisions, feed_sets, info.outputs, a.threads, ncc,
                 {"rounds": a.rounds, "warmup": a.warmup, "outputs": "fresh",
                  "timeout": a.timeout}, lambda s: sys.stderr.write(s + "\n"))
    print("model %s, batch %d, %d thread(s), %d rounds, accuracy over %d input sets vs "
          "onnxruntime (no graph optimisations) at f32\n" % (
              os.path.basename(a.model), a.batch, a.threads, a.rounds, a.accuracy_inputs))
    print(P.table(rows))
    if a.json:
        for r in rows:
            r.pop("samples_ms", None)
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
