"""bench/harness/compare.py — the user's ONNX model against the vendors:
the measurement behind bench/compare (compare_cli.py parses, compare_report
prints).

Per batch size, in this order:
  1. build and first run of every compiler (build_ms, first_run_ms,
     compile_ms = both), each reported apart;
  2. outputs checked FIRST: onnxruntime (every optimisation) is the
     reference, an oracle outside ncc; every output of every compiler is
     compared with rtol/atol; a mismatching compiler is still timed and
     shown but left out of the ranking and of "fastest vendor";
  3. latency in interleaved rounds: round r runs a block (warm-up, then k
     runs) of each compiler in turn, starting with a different compiler
     each round, so slow drift of the machine hits every side alike; the
     round's sample is the block median, so samples_ms[r] of all rows are
     paired;
  4. per row: median with its 95% order-statistic CI, cv, noisy flag
     (stats.py); noisy rows are shown but not ranked;
  5. ratios: every compiler against every other and against the fastest
     vendor, the paired per-round ratio with its CI and a verdict (faster /
     slower / within noise).
"""
import time

from . import stats
from .adapters.base import Skipped
from .compare_engines import check_outputs, perturb


def _row_stats(samples):
    med = stats.median(samples)
    lo, hi = stats.median_ci(samples)
    cv = stats.cv(samples)
    return {"median": med, "ci": [lo, hi], "min": min(samples),
            "mean": sum(samples) / len(samples)}, cv


def ratio_entry(a, b, sa, sb):
    r, lo, hi = stats.ratio_ci(sa, sb, paired=len(sa) == len(sb))
    return {"a": a, "b": b, "ratio": r, "ci": [lo, hi], "verdict": stats.verdict_ratio(lo, hi)}


def measure_batch(engines, info, batch, feeds, opts, log):
    """The rows, ranking and ratios of one batch size.  engines: [(key,
    engine)] already loaded; the reference is the engine keyed
    opts['reference'] (timed only when it is in opts['timed'])."""
    rows = {}
    handles = {}
    ref_out = None
    for key, eng in engines:
        row = {"compiler": key, "batch": batch, "status": "ok"}
        rows[key] = row
        try:
            log("  %s: build + first run" % key)
            t0 = time.perf_counter()
            h = eng.build(info.path, feeds)
            t1 = time.perf_counter()
            prep, outs = eng.first(h, feeds)
            t2 = time.perf_counter()
        except Skipped as e:
            row.update(status="skipped", reason=e.reason)
            continue
        except Exception as e:  # a compiler failing on this model is a result
            row.update(status="failed", reason=_line(e))
            continue
        build = getattr(eng, "build_ms_override", None)
        first = getattr(eng, "first_ms_override", None)
        row["build_ms"] = build if build is not None else (t1 - t0) * 1e3
        row["first_run_ms"] = first if first is not None else (t2 - t1) * 1e3
        row["compile_ms"] = row["build_ms"] + row["first_run_ms"]
        handles[key] = (eng, h, prep)
        row["_outs"] = perturb(key, outs)
        if key == opts["reference"]:
            ref_out = row["_outs"]
    # 2. outputs against the reference, before any timing
    ref_key = opts["reference"]
    if ref_out is None:  # onnxruntime could not run it: the first that did is the yardstick
        ok_keys = [k for k, _ in engines if "_outs" in rows[k]]
        ref_key = ok_keys[0] if ok_keys else None
        ref_out = rows[ref_key]["_outs"] if ref_key else None
    for key, row in rows.items():
        outs = row.pop("_outs", None)
        if outs is None:
            continue
        ok, per = check_outputs(ref_out, outs, info.outputs, opts["rtol"], opts["atol"])
        errs_a = [p["max_abs_err"] for p in per if p["max_abs_err"] is not None]
        errs_r = [p["max_rel_err"] for p in per if p["max_rel_err"] is not None]
        row["check"] = {"ok": ok, "reference": ref_key, "rtol": opts["rtol"],
                        "atol": opts["atol"], "outputs": per,
                        "max_abs_err": max(errs_a) if errs_a else None,
                        "max_rel_err": max(errs_r) if errs_r else None}
        if not ok:
            row["status"] = "mismatch"
    # 3. interleaved rounds
    timed = [k for k, _ in engines if k in handles and k in opts["timed"]]
    samples = {k: [] for k in timed}
    runs = {k: [] for k in timed}
    R = opts["rounds"]
    for r in range(R):
        order = timed[r % len(timed):] + timed[:r % len(timed)] if timed else []
        log("  round %d/%d" % (r + 1, R))
        for key in order:
            eng, h, prep = handles[key]
            try:
                lat = eng.block(h, prep, opts["warmup"], opts["runs"])
            except Exception as e:
                rows[key].update(status="failed", reason="timing: " + _line(e))
                timed.remove(key)
                continue
            samples[key].append(stats.median(lat))
            runs[key] += lat
    for key, (eng, h, _) in handles.items():
        try:
            eng.release(h)
        except Exception:
            pass
    for key in timed:
        row = rows[key]
        s = samples[key]
        row["samples_ms"] = s
        row["runs_ms"] = runs[key]
        row["interleave"] = {"group": "batch%d" % batch, "rounds": len(s)}
        row["latency_ms"], row["cv"] = _row_stats(s)
        row["noisy"] = stats.noisy(row["cv"])
        row["throughput_per_s"] = batch / (row["latency_ms"]["median"] / 1e3)
    # 4. ranking and 5. ratios
    rankable = [k for k in timed if rows[k]["status"] == "ok" and not rows[k]["noisy"]]
    for k in timed:
        rows[k]["ranked"] = k in rankable
    ranking = sorted(rankable, key=lambda k: rows[k]["latency_ms"]["median"])
    vendors = [k for k in ranking if opts["kinds"][k] == "vendor"]
    fastest_vendor = vendors[0] if vendors else None
    ratios = [ratio_entry(a, b, samples[a], samples[b])
              for a in timed for b in timed if a != b]
    vs_fastest = []
    if fastest_vendor:
        vs_fastest = [ratio_entry(k, fastest_vendor, samples[k], samples[fastest_vendor])
                      for k in timed if k != fastest_vendor]
        for e in vs_fastest:
            e["break_even_runs"] = break_even(rows[e["a"]], rows[fastest_vendor], e["verdict"])
    return {"batch": batch, "inputs": {n: list(v.shape) for n, v in feeds.items()},
            "reference": ref_key, "rows": [rows[k] for k, _ in engines],
            "ranking": ranking, "fastest_vendor": fastest_vendor, "ratios": ratios,
            "vs_fastest_vendor": vs_fastest}


def break_even(a, v, verdict):
    """Runs after which compiler a's total time (compile + runs) drops
    below vendor v's: 0 when a is faster and compiles no slower, None
    ("never") when a is slower, or when the difference is within noise."""
    if verdict != "faster":
        return None
    extra = a["compile_ms"] - v["compile_ms"]
    if extra <= 0:
        return 0
    gain = v["latency_ms"]["median"] - a["latency_ms"]["median"]
    return int(extra / gain) + 1 if gain > 0 else None


def _line(e):
    """The telling line of an exception: its first 'error:' line if any
    (compiler tools put the diagnostic under a generic first line)."""
    s = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    # OpenVINO nests its message under "Exception from src/...cpp:N:" lines
    s = [l for l in s if not (l.startswith("Exception from") and l.endswith(":"))] or s
    errs = [l for l in s if "error:" in l]
    return ((errs or s)[0] if s else type(e).__name__)[:300]
