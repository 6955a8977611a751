"""bench/harness/compare.py — the user's ONNX model against the vendors:
the measurement behind bench/compare (compare_cli.py parses, compare_report
prints).  The timing is the experiment harness's own (measure.py), so a
bench/compare row and a harness row are measured alike.

Per batch size, in this order:
  1. build and first run of every compiler (measure.time_first: build_ms =
     model file to ready object — for ncc graph load + pass pipeline +
     compile through libncc in this process —, first_run_ms = input
     preparation + the first call, compile_ms = both), each reported apart;
  2. outputs checked FIRST: onnxruntime with every graph optimisation off
     (ORT_DISABLE_ALL, the graph as written: the harness's oracle too,
     oracle.py) is the reference, an oracle outside ncc; every output of
     every compiler is compared with rtol/atol; a mismatching compiler is
     still timed and shown but left out of the ranking and of "fastest
     vendor".  Where the oracle cannot run the model the first vendor that
     did is the reference, never ncc: with no vendor, ncc's rows are
     "unchecked";
  3. latency in interleaved rounds (measure.time_group): `warmup` untimed
     calls of each compiler, then R rounds; in round r the compilers take
     turns starting from the r-th (mod n), a turn being one untimed
     re-warm call and ONE timed call — time.perf_counter around one Python
     call, the garbage collector paused, outputs per --outputs (measure.py:
     "fresh", the default, new outputs on every call for every compiler,
     ncc's included; "preallocated", outputs bound once where the API
     allows: onnxruntime IOBinding, OpenVINO's request tensors, ncc
     ncc_module_run_into; row["timing"] says which) — so samples_ms[r]
     of all rows come from round r and are paired; while a row's median
     CI is wider than stats.CI_TARGET or a row is noisy, ceil(R/2) more
     rounds, up to (1 + measure.MAX_EXTRA_FACTOR) * R in all (adaptive, as
     the harness; interleave.extra_rounds says so).  ncc's call is
     ncc_module_run through ncclib, like a vendor's; only where libncc
     cannot be loaded does ncc run as a process per round (self-timed,
     compare_engines.NccCliEngine; row["timing"] says so);
  4. per row (measure.summarize): median with its 95% order-statistic CI,
     cv (std/mean), robust cv (1.4826 MAD/median) and the noisy flag
     (stats.noisy: the robust cv above stats.CV_RANK_MAX); noisy rows are
     shown but not ranked;
  5. ratios: every compiler against every other and against the fastest
     vendor, the paired per-round ratio with its CI and a verdict (faster /
     slower / within noise).
"""
from . import measure, stats
from .adapters.base import Skipped
from .compare_engines import check_outputs, perturb


def ratio_entry(a, b, sa, sb):
    r, lo, hi = stats.ratio_ci(sa, sb, paired=len(sa) == len(sb))
    return {"a": a, "b": b, "ratio": r, "ci": [lo, hi], "verdict": stats.verdict_ratio(lo, hi)}


def prepare(eng, path, feeds, outputs="fresh"):
    """(measure.Point, outputs as arrays) of one compiler: built, run once,
    not yet timed.  An engine with an own_point method (ncc's command
    line fallback) gives both itself.  outputs="preallocated": an engine
    that can (bind_outputs) gets its outputs bound once, the Point times
    the bound call, and the outputs returned (the ones checked) are the
    bound call's."""
    own = getattr(eng, "own_point", None)
    if own is not None:
        p, outs = own(path, feeds)
        p.result["timing"]["outputs_policy"] = outputs
        return p, outs
    h, prep, out, build_ms, first_ms = measure.time_first(
        lambda: eng.build(path, feeds), eng.prepare_feeds, eng.call, feeds)
    try:
        outs = eng.outputs(out)
        run_once = lambda: eng.call(h, prep)  # noqa: E731
        bind = getattr(eng, "bind_outputs", None) if outputs == "preallocated" else None
        bound = bind(h, prep, out) if bind else None
        del out
        timing = dict(eng.timing)
        if bound is not None:
            run_once, how = bound
            outs = eng.outputs(run_once())
            timing.update(measure.timing_record(outputs, how=how))
        else:
            timing.update(measure.timing_record(outputs, why="%s: %s" % (
                eng.name, getattr(eng, "NO_PREALLOC", "no API to bind outputs"))))
        res = {"build_ms": build_ms, "first_run_ms": first_ms,
               "compile_ms": build_ms + first_ms, "timing": timing}
        extras = getattr(eng, "row_extras", None)
        if extras:
            res.update(extras(h))
    except BaseException:
        eng.release(h)
        raise
    p = measure.Point(run_once, res, lambda: eng.release(h))
    p.handle = h
    return p, outs


def measure_batch(engines, info, batch, feeds, opts, log):
    """The rows, ranking and ratios of one batch size.  engines: [(key,
    engine)] already loaded; the reference is the engine keyed
    opts['reference'] (timed only when it is in opts['timed'])."""
    rows, points = {}, {}
    ref_out = None
    try:
        for key, eng in engines:
            row = {"compiler": key, "batch": batch, "status": "ok"}
            rows[key] = row
            try:
                log("  %s: build + first run" % key)
                p, outs = prepare(eng, info.path, feeds, opts.get("outputs", "fresh"))
            except Skipped as e:
                row.update(status="skipped", reason=e.reason)
                continue
            except Exception as e:  # a compiler failing on this model is a result
                row.update(status="failed", reason=_line(e))
                continue
            points[key] = p
            row.update(p.result)
            row["_outs"] = perturb(key, outs)
            if key == opts["reference"]:
                ref_out = row["_outs"]
        ref_key = _check(rows, engines, ref_out, info, opts)
        timed = [k for k, _ in engines if k in points and k in opts["timed"]]
        for k, p in points.items():  # the reference only: freed before the rounds
            if k not in timed:
                p.release()
        rounds = {"rounds": 0, "extra_rounds": 0}
        if timed:
            log("  %d interleaved rounds of %s" % (opts["rounds"], ", ".join(timed)))
            rounds = measure.time_group([points[k] for k in timed], opts["warmup"],
                                        opts["rounds"], adaptive=opts.get("adaptive", True))
            if rounds["extra_rounds"]:
                log("  noisy: %d more rounds" % rounds["extra_rounds"])
    finally:
        for p in points.values():
            try:
                p.release()
            except Exception:
                pass
    samples = {}
    for key in list(timed):
        p, row = points[key], rows[key]
        if p.error is not None:
            row.update(status="failed", reason="timing: " + _line(p.error))
            timed.remove(key)
            continue
        samples[key] = p.samples
        row.update(measure.summarize(p.samples))
        row["timing"]["warmup"] = opts["warmup"]
        row["timing"]["rewarm_per_turn"] = (0 if p.self_timed else
                                            measure.REWARM if len(timed) > 1 else 0)
        row["interleave"] = {"group": "batch%d" % batch, "rounds": len(p.samples),
                             "extra_rounds": rounds["extra_rounds"]}
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


def _check(rows, engines, ref_out, info, opts):
    """Step 2: every row's outputs against the reference's (before any
    timing); returns the reference's key."""
    ref_key = opts["reference"]
    if ref_out is None:  # the oracle could not run it: the first vendor that did, never ncc
        ok_keys = [k for k, _ in engines if "_outs" in rows[k] and
                   opts["kinds"].get(k, "vendor") != "ncc"]
        ref_key = ok_keys[0] if ok_keys else None
        ref_out = rows[ref_key]["_outs"] if ref_key else None
    for key, row in rows.items():
        outs = row.pop("_outs", None)
        if outs is None:
            continue
        if ref_out is None:  # nothing outside ncc ran: ncc is not checked against itself
            row["check"] = {"ok": False, "reference": None, "rtol": opts["rtol"],
                            "atol": opts["atol"], "outputs": [], "max_abs_err": None,
                            "max_rel_err": None}
            row.update(status="unchecked", reason="no compiler outside ncc could run the "
                       "model: nothing to check ncc's outputs against")
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
    return ref_key


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
