"""bench/harness/precision.py — the precision table (issue: low precision):
one model at f32, int8 and bf16 on ncc and the vendors that run that
precision, latency interleaved in one group, speed-up over the same
compiler's f32, and accuracy against f32.

  f32   the model as given, every compiler at f32 (OpenVINO's f32 hint);
  int8  a QDQ model of it (bench/quant/quantize.py makes one with
        onnxruntime.quantization): ncc folds the Q/DQ pairs into integer
        kernels (pass qdq-fold), onnxruntime and OpenVINO run their own
        int8 paths;
  bf16  the f32 model with ncc's `precision = bf16` and OpenVINO's
        INFERENCE_PRECISION_HINT = bf16; onnxruntime's CPU provider has
        no bf16 execution of an f32 model (skipped, saying so).

Accuracy is measured on --accuracy-inputs seeded input sets against
onnxruntime with graph optimisations off on the f32 model (the oracle
outside ncc): the smallest cosine similarity of the flattened outputs,
the largest error relative to the reference's largest magnitude, and,
for an output of shape [N, classes], the top-1 agreement.
Timing is compare.py's: build and first run, then every (compiler,
precision) in one interleaved group (measure.time_group), medians with
95% CIs, speed-ups as paired per-round ratios with their CIs.
"""
import math

import numpy as np

from . import compare, measure, stats
from .adapters.base import Skipped
from .compare_engines import OpenVinoEngine, OrtEngine, OrtNoOptEngine, load_ncc_engine

PRECISIONS = ("f32", "int8", "bf16")


class OpenVinoBf16(OpenVinoEngine):
    def properties(self):
        p = OpenVinoEngine.properties(self)
        p["INFERENCE_PRECISION_HINT"] = "bf16"
        return p


def engines_for(compiler, precision, threads, ncc, outputs, timeout):
    """The loaded engine of one (compiler, precision); Skipped with a
    reason where that compiler has no such precision."""
    if compiler == "ncc":
        cfg = "cpu -O2" + (" --precision=bf16" if precision == "bf16" else "")
        try:
            return load_ncc_engine(threads, ncc, cfg, outputs, timeout)
        except ValueError as e:
            raise Skipped("ncc: %s" % e)
    if compiler == "onnxruntime":
        if precision == "bf16":
            raise Skipped("onnxruntime's CPU provider has no bf16 execution of an f32 model")
        eng = OrtEngine(threads)
    elif compiler == "openvino":
        eng = OpenVinoBf16(threads) if precision == "bf16" else OpenVinoEngine(threads)
    else:
        raise ValueError("unknown compiler %r" % compiler)
    eng.load()
    return eng


def accuracy(ref_sets, got_sets):
    """{cosine_min, rel_err_max, top1_agree} of outputs (lists of arrays per
    input set) against the reference's."""
    cos, rel, agree, n_top = 1.0, 0.0, 0, 0
    for ref, got in zip(ref_sets, got_sets):
        for r, g in zip(ref, got):
            r = np.asarray(r, np.float64).ravel()
            g = np.asarray(g, np.float64).ravel()
            if r.shape != g.shape:
                return {"cosine_min": None, "rel_err_max": None, "top1_agree": None,
                        "error": "output shape %s, reference %s" % (g.shape, r.shape)}
            den = np.linalg.norm(r) * np.linalg.norm(g)
            cos = min(cos, float(r @ g / den) if den > 0 else (1.0 if not g.any() else 0.0))
            scale = float(np.abs(r).max()) or 1.0
            rel = max(rel, float(np.abs(r - g).max()) / scale)
        r0, g0 = np.asarray(ref[0]), np.asarray(got[0])
        if r0.ndim == 2 and r0.shape[1] > 1:
            agree += int((r0.argmax(1) == g0.argmax(1)).sum())
            n_top += r0.shape[0]
    return {"cosine_min": cos, "rel_err_max": rel,
            "top1_agree": agree / n_top if n_top else None, "top1_n": n_top}


def _outs(eng, h, prep_feeds):
    return eng.outputs(eng.call(h, eng.prepare_feeds(h, prep_feeds)))


def run(models, compilers, precisions, feed_sets, output_names, threads, ncc, opts, log):
    """Rows for every (compiler, precision): status, latency, compile,
    accuracy; then speed-ups over the compiler's own f32 row."""
    ref_eng = OrtNoOptEngine(threads)
    ref_eng.load()
    h = ref_eng.build(models["f32"], feed_sets[0])
    ref_sets = [_outs(ref_eng, h, f) for f in feed_sets]
    ref_eng.release(h)
    rows, points = [], {}
    try:
        for p in precisions:
            for c in compilers:
                key = "%s/%s" % (c, p)
                row = {"compiler": c, "precision": p, "key": key, "status": "ok",
                       "model": models.get(p)}
                rows.append(row)
                if models.get(p) is None:
                    row.update(status="skipped", reason="no %s model (give --int8 QDQ.onnx)" % p)
                    continue
                try:
                    log("  %s: build + accuracy" % key)
                    eng = engines_for(c, p, threads, ncc, output_names, opts["timeout"])
                    pt, outs0 = compare.prepare(eng, models[p], feed_sets[0], opts["outputs"])
                except Skipped as e:
                    row.update(status="skipped", reason=e.reason)
                    continue
                except Exception as e:
                    row.update(status="failed", reason=compare._line(e))
                    continue
                row.update(pt.result)
                hd = getattr(pt, "handle", None)
                if hd is not None:
                    got = [_outs(eng, hd, f) for f in feed_sets]
                    row["accuracy"] = accuracy(ref_sets, got)
                else:  # ncc as a process (no libncc here): the first set's outputs
                    row["accuracy"] = accuracy(ref_sets[:1], [outs0])
                row["accuracy"]["inputs"] = len(feed_sets) if hd is not None else 1
                points[key] = pt
        keys = list(points)
        log("  %d interleaved rounds of %d rows" % (opts["rounds"], len(keys)))
        rounds = measure.time_group([points[k] for k in keys], opts["warmup"], opts["rounds"])
    finally:
        for pt in points.values():
            try:
                pt.release()
            except Exception:
                pass
    by_key = {r["key"]: r for r in rows}
    for k in keys:
        pt, row = points[k], by_key[k]
        if pt.error is not None:
            row.update(status="failed", reason="timing: " + compare._line(pt.error))
            continue
        row.update(measure.summarize(pt.samples))
        row["samples_ms"] = list(pt.samples)
        row["interleave"] = {"rounds": len(pt.samples), "extra_rounds": rounds["extra_rounds"]}
    for row in rows:
        base = by_key.get("%s/f32" % row["compiler"])
        if row["precision"] == "f32" or not base or "samples_ms" not in row or \
                "samples_ms" not in base:
            continue
        r, lo, hi = stats.ratio_ci(base["samples_ms"], row["samples_ms"], paired=True)
        row["speedup_vs_f32"] = {"ratio": r, "ci": [lo, hi]}
    return rows


def table(rows):
    """The markdown precision table."""
    out = ["| compiler | precision | median ms [95% CI] | speed-up vs own f32 [95% CI] | "
           "cosine (min) | max rel err | top-1 agree | compile ms |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok" or "latency_ms" not in r:
            out.append("| %s | %s | %s: %s | | | | | |" % (r["compiler"], r["precision"],
                                                        r["status"], r.get("reason", "")))
            continue
        lat = r["latency_ms"]
        sp = r.get("speedup_vs_f32")
        acc = r.get("accuracy", {})

        def f(v, fmt):
            return fmt % v if v is not None and not (isinstance(v, float) and math.isnan(v)) \
                else "–"
        out.append("| %s | %s | %.3f [%.3f, %.3f]%s | %s | %s | %s | %s | %.0f |" % (
            r["compiler"], r["precision"], lat["median"], lat["ci"][0], lat["ci"][1],
            " (noisy)" if r.get("noisy") else "",
            "%.2f× [%.2f, %.2f]" % (sp["ratio"], sp["ci"][0], sp["ci"][1]) if sp else "–",
            f(acc.get("cosine_min"), "%.5f"), f(acc.get("rel_err_max"), "%.2e"),
            f(acc.get("top1_agree"), "%.3f"),
            r.get("compile_ms", float("nan"))))
    return "\n".join(out)
