#!/usr/bin/env python3
"""tests/py/test_harness.py — tests of the experiment harness (bench/harness,
bench/experiment), label `harness` (tests/harness.cmake).

  - the metric formulas and the latency statistics on known numbers;
  - spec checking (unknown keys, compilers, configurations);
  - a tiny sweep end to end through `bench/experiment` with ncc (ref) and
    ONNX Runtime: every row passes the JSONL schema, statuses are what they
    should be (the missing 'fusion' pass is a skip with its reason), the
    report has every experiment; then resume (nothing re-measured), shards
    and merge;
  - a vendor whose package does not import is skipped with its install hint;
  - the outside oracle: every measured row says which oracle (onnxruntime
    ORT_DISABLE_ALL) checked its model and that ncc ref agreed; a planted
    bug shared by ncc ref and ncc's compiled rows (ref output and ncc's
    outputs scaled alike) makes ncc's rows mismatches ("ncc failure") and
    keeps the vendors' rows valid, checked against the oracle; the report
    lists the failure; with no outside oracle at all rows are skipped;
  - the output policy: env.timing and every row's result.timing record it
    per compiler; "preallocated" binds onnxruntime's outputs once
    (IOBinding), a binding that leaves its outputs unwritten is caught by
    the check, and ncc's command-line fallback is flagged as not symmetric;
  - the report without matplotlib (a note, no plots).

Uses $NCC (the suite's ASan build: the sweep is sized to stay well under a
minute there).  Prints "N passed, M failed"; exit 1 on a failure, 77 when
numpy/onnx/onnxruntime are missing.
"""
import io
import json
import os
import shutil
import sys
import tempfile
import time

from nccutil import check, run_cases, run_experiment  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)
import numpy as np  # noqa: E402

from harness import adapters, metrics, measure, report, results, runner  # noqa: E402
from harness import models, oracle  # noqa: E402
from harness import spec as specmod  # noqa: E402
from harness.adapters.base import Adapter, sequence_result, sequence_step  # noqa: E402
from harness.nccbin import Ncc  # noqa: E402

NCC = os.environ.get("NCC")

# The end-to-end spec: every experiment kind, tiny blocks, few runs, ncc ref
# and ONNX Runtime only (the ASan ncc is slow and has no vendor to lean on).
TINY = {
    "name": "harness-test", "threads": 1, "pin_cpus": False, "warmup": 1, "iters": 3,
    "model": {"width": 4, "spatial": [4, 4], "seq": 4, "k": 3},
    "compilers": {"ncc": ["ref"], "onnxruntime": ["DISABLE_ALL", "ALL"]},
    "experiments": [
        {"id": "E1", "kind": "depth", "blocks": ["resblock", "mlp"], "depths": [1, 2]},
        {"id": "E2", "kind": "batch", "blocks": ["conv"], "batches": [1, 2]},
        {"id": "E3", "kind": "ranking", "blocks": ["eltwise", "conv", "mlp"], "mflop": 0.01},
        {"id": "E4", "kind": "fusion", "eltwise_k": [2], "blocks": ["mlp"],
         "compare": [["ncc:ref -O2", "ncc:ref -O2 --disable-pass=fusion"],
                     ["ncc:ref -O2", "ncc:ref -O0"],
                     ["onnxruntime:ALL", "onnxruntime:DISABLE_ALL"]]},
        {"id": "E5", "kind": "amortize", "blocks": ["resblock"]},
        {"id": "E6", "kind": "dynamic", "blocks": ["mlp"], "sequence": [1, 2],
         "runs_per_shape": 4},
        {"id": "E7", "kind": "ablation", "blocks": ["mlp"], "base": "ref -O2"},
    ],
}

def close(a, b, tol=1e-9):
    return a is not None and b is not None and abs(a - b) <= tol * max(1.0, abs(b))


# --------------------------------------------------------------------------
# Arithmetic on known numbers.

def test_latency_stats_match_numpy():
    lat = [5.0, 1.0, 3.0, 2.0, 4.0, 10.0, 7.0]
    st, cv = measure.latency_stats(lat)
    a = np.array(lat)
    for k, p in (("median", 50), ("p90", 90), ("p99", 99)):
        check(close(st[k], float(np.percentile(a, p))), "%s %r vs numpy" % (k, st[k]))
    check(st["min"] == 1.0 and close(st["mean"], a.mean()), "min/mean")
    check(close(cv, a.std() / a.mean()), "cv is population std / mean")
    st1, cv1 = measure.latency_stats([2.5])
    check(st1["median"] == st1["p99"] == 2.5 and cv1 == 0.0, "one sample")
    check(close(measure.throughput(8, 4.0), 2000.0), "throughput = batch / median")


def test_metric_formulas():
    check(close(metrics.speedup(10.0, 4.0), 2.5), "speed-up")
    g = metrics.depth_gain({1: 2.0, 2: 3.0, 4: 5.0})
    check(close(g[1], 1.0) and close(g[2], 1.5) and close(g[4], 2.5), "G(d) %r" % g)
    check(close(metrics.depth_gain({2: 2.0, 8: 4.0})[8], 2.0), "G without depth 1")
    # thr(1)=100/s, thr(4)=300/s: E(4) = 300 / (4 * 100) = 0.75, friction 0.25.
    e = metrics.batch_efficiency({1: 100.0, 4: 300.0})
    check(close(e[1], 1.0) and close(e[4], 0.75), "E(b) %r" % e)
    check(close(metrics.friction(e)[4], 0.25), "friction")
    base = metrics.batch_efficiency({1: 50.0, 4: 100.0})  # E(4) = 0.5
    check(close(metrics.mitigation(e, base)[4], 1.5), "mu = E/E_base")
    # 500 ms of compiling, 10 ms -> 6 ms per run: 125 runs to break even.
    check(close(metrics.break_even(500.0, 10.0, 6.0), 125.0), "N*")
    check(metrics.break_even(500.0, 5.0, 6.0) == float("inf"), "N* when slower")
    check(metrics.ranks({"a": 3.0, "b": 1.0, "c": 2.0}) == {"a": 3, "b": 1, "c": 2}, "ranks")
    check(close(metrics.kendall_tau({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": 3}), 1.0),
          "tau same order")
    check(close(metrics.kendall_tau({"a": 1, "b": 2, "c": 3}, {"a": 3, "b": 2, "c": 1}), -1.0),
          "tau reversed")
    check(metrics.inverted_pairs({"a": 1, "b": 2}, {"a": 2, "b": 1}) == [("a", "b")], "pairs")
    check(close(metrics.dynamic_reduction(30.0, 100.0), 0.7), "70% reduction")
    check(close(metrics.steady_slowdown([1.1, 2.4], [1.0, 2.0]), 1.15), "steady slowdown")
    d, rel = metrics.delta(4.0, 5.0)
    check(close(d, 1.0) and close(rel, 0.25), "ablation delta")
    check(close(metrics.geomean([2.0, 8.0]), 4.0), "geomean")


def test_sequence_costs():
    st = {"median": 2.0}
    steps = [sequence_step(1, 100.0, 5.0, st, 0.0, True, {}),
             sequence_step(4, 0.0, 3.0, {"median": 1.0}, 0.0, True, {})]
    res = sequence_result(steps, runs_per_shape=10)
    # step 1: 100 + 5 + 9 * 2 = 123; step 2: 0 + 3 + 9 * 1 = 12.
    check(close(steps[0]["cost_ms"], 123.0) and close(steps[1]["cost_ms"], 12.0), "costs")
    check(close(steps[1]["cumulative_ms"], 135.0) and close(res["total_ms"], 135.0), "total")
    check(res["check_ok"] and close(res["compile_ms"], 100.0), "compile total")


def test_compare():
    ref = np.array([1.0, -2.0, 3.0], np.float32)
    ok, info = measure.compare(ref, ref + 1e-5, 1e-3, 1e-4)
    check(ok and info["max_abs_err"] < 2e-5, "close values pass")
    ok, info = measure.compare(ref, ref * 1.1, 1e-3, 1e-4)
    check(not ok and "elements off" in info["reason"], "far values fail")
    ok, info = measure.compare(ref, ref[:2], 1e-3, 1e-4)
    check(not ok and "shape" in info["reason"], "shape mismatch")
    ok, _ = measure.compare(ref, np.array([1.0, np.nan, 3.0], np.float32), 1e-3, 1e-4)
    check(not ok, "NaN where the reference has a number")


# --------------------------------------------------------------------------
# Specs.

def test_spec_checks():
    s = specmod.normalize(TINY)
    check(s["experiments"][0]["depths"] == [1, 2] and s["baseline"] == "ncc:ref", "defaults")
    for bad, word in (({"bogus": 1}, "bogus"),
                      ({"compilers": {"nosuch": ["x"]}}, "nosuch"),
                      ({"compilers": {"onnxruntime": ["FAST"]}}, "FAST"),
                      ({"compilers": {"ncc": ["cpu -O9"]}}, "-O9")):
        sp = dict(TINY)
        sp.update(bad)
        try:
            specmod.normalize(sp)
        except specmod.SpecError as e:
            check(word in str(e), "error %r should name %r" % (str(e), word))
        else:
            raise AssertionError("spec %r accepted" % bad)
    for preset in ("quick", "full"):
        p = specmod.load(preset)
        check({e["kind"] for e in p["experiments"]} == set(specmod.KINDS),
              "preset %s covers every experiment kind" % preset)
    # Keys: the same measurement from two experiments is one row.
    items = specmod.expand(s)
    keys = [k for k, _, _ in items]
    check(len(keys) == len(set(keys)), "expansion has unique keys")
    check(any(len(ex) > 1 for _, _, ex in items), "shared measurements carry all their ids")


# --------------------------------------------------------------------------
# End to end.

def _experiment(args, timeout=300):
    return run_experiment(args, timeout)


class Sweep:
    dir = None


def test_end_to_end():
    check(NCC, "set NCC to the ncc binary")
    d = tempfile.mkdtemp(prefix="ncc-harness-test-")
    Sweep.dir = d
    spec_path = os.path.join(d, "tiny.json")
    with open(spec_path, "w") as f:
        json.dump(TINY, f)
    out = os.path.join(d, "out")
    t0 = time.time()
    rc, _, err = _experiment([spec_path, "--out", out, "--ncc", NCC, "--quiet"])
    took = time.time() - t0
    check(rc == 0, "bench/experiment exit %d: %s" % (rc, err[-2000:]))
    rows = results.read_rows(os.path.join(out, "results.jsonl"))
    check(rows, "no rows")
    expected = {k for k, _, _ in specmod.expand(json.load(open(os.path.join(out, "spec.json"))))}
    check({r["key"] for r in rows} == expected, "one row per measurement")
    for r in rows:
        errs = results.validate_row(r)
        check(not errs, "row %s: %s" % (runner.label(r["config"]), errs))
    by_status = {}
    for r in rows:
        by_status.setdefault(r["status"], []).append(r)
    bad = [(runner.label(r["config"]), r["reason"]) for r in rows
           if r["status"] not in ("ok", "skipped")]
    check(not bad, "rows neither ok nor skipped: %s" % bad)
    skipped = by_status.get("skipped", [])
    has_fusion = "fusion" in [n for n, _ in Ncc(NCC).passes()]
    # ncc has a 'fusion' pass, so no row is skipped; a build without one skips
    # exactly its fusion-off rows, saying so (the check holds either way).
    check(all("fusion" in r["config"]["config"] and "no pass 'fusion'" in r["reason"]
              for r in skipped) and bool(skipped) != has_fusion,
          "skipped rows: %s" % [(runner.label(r["config"]), r["reason"]) for r in skipped])
    ncc_row = next(r for r in rows if r["config"]["compiler"] == "ncc" and r["valid"] and
                   r["config"]["kind"] == "point")
    res = ncc_row["result"]
    check(res["compile_ms"] >= res["build_ms"] and res["kernels"] >= 1 and
          res["model_mflop"] > 0 and "graph" in res, "ncc row details: %r" % res)
    # the per-kernel breakdown of one profiled run after the timing (the ref
    # target times whole runs only: no kernel rows, but the run is there)
    prof = res.get("profile") or {}
    check(prof.get("runs", 0) >= 1 and isinstance(prof.get("kernels"), list) and
          prof.get("run_ms", 0) > 0, "ncc row profile: %r" % prof)
    env = ncc_row["env"]
    check(env["threads"] == 1 and env["ncc"]["version"], "environment record")
    # which oracle checked each model, and how each compiler was timed
    for r in rows:
        if r["status"] not in results.MEASURED:
            continue
        o = r["result"].get("oracle") or {}
        check(o.get("name") == "onnxruntime" and "DISABLE_ALL" in o.get("config", "") and
              o.get("ref_agrees") is True and o.get("batches") and
              o.get("row_checked_against") == "ncc ref -O0",
              "row %s oracle record %r" % (runner.label(r["config"]), o))
        t = r["result"].get("timing") or {}
        if r["config"]["kind"] == "point":
            check(t.get("outputs_policy") == "fresh" and t.get("outputs"),
                  "row %s timing %r" % (runner.label(r["config"]), t))
    et = env.get("timing") or {}
    check(et.get("outputs_policy") == "fresh" and
          set(et.get("compilers") or {}) == {"ncc", "onnxruntime"} and
          "fresh per call" in et["compilers"]["onnxruntime"], "env.timing %r" % et)
    md = open(os.path.join(out, "report.md")).read()
    for e in TINY["experiments"]:
        check("## %s" % e["id"] in md, "report lacks %s" % e["id"])
    check("Kendall" in md and "N*" in md and "reduction" in md, "report sections")
    check("oracle outside ncc, onnxruntime (ORT_DISABLE_ALL" in md and
          "Timing (output policy `fresh`)" in md and "## ncc failures" in md,
          "report states the oracle and the timing")
    if report.HAVE_MPL:
        pngs = [f for f in os.listdir(out) if f.endswith(".png")]
        check(len(pngs) >= 6, "plots: %s" % pngs)
    # reported, not asserted: speed is for bench/, and a loaded machine
    # made a 60 s limit fail here
    print("        (sweep of %d rows took %.1fs)" % (len(rows), took))


def test_resume():
    check(Sweep.dir, "needs test_end_to_end")
    out = os.path.join(Sweep.dir, "out")
    path = os.path.join(out, "results.jsonl")
    before = results.read_rows(path)
    rc, _, err = _experiment([os.path.join(Sweep.dir, "tiny.json"), "--out", out, "--ncc", NCC])
    check(rc == 0, "resume exit %d: %s" % (rc, err[-1000:]))
    after = results.read_rows(path)
    check(len(after) == len(before), "resume appended %d rows" % (len(after) - len(before)))
    check("0 to run" in err or "to run" in err, "resume message: %s" % err[:300])


def test_shards_and_merge():
    check(Sweep.dir, "needs test_end_to_end")
    spec_path = os.path.join(Sweep.dir, "tiny.json")
    dirs = []
    for i in range(2):
        d = os.path.join(Sweep.dir, "shard%d" % i)
        rc, _, err = _experiment([spec_path, "--out", d, "--ncc", NCC, "--quiet",
                                  "--shard", "%d/2" % i, "--only", "E1", "--no-plots"])
        check(rc == 0, "shard %d exit %d: %s" % (i, rc, err[-1000:]))
        dirs.append(d)
    keys = [{r["key"] for r in results.read_rows(os.path.join(d, "results.jsonl"))}
            for d in dirs]
    check(keys[0] and keys[1] and not keys[0] & keys[1], "shards are disjoint and non-empty")
    merged = os.path.join(Sweep.dir, "merged")
    rc, _, err = _experiment(["merge"] + dirs + ["--out", merged, "--no-plots"])
    check(rc == 0, "merge exit %d: %s" % (rc, err))
    mrows = results.read_rows(os.path.join(merged, "results.jsonl"))
    check({r["key"] for r in mrows} == keys[0] | keys[1], "merge is the union")
    check(os.path.exists(os.path.join(merged, "report.md")), "merged report")
    rc, _, err = _experiment(["bogus-preset", "--out", merged])
    check(rc == 1 and "no spec file" in err, "unknown preset: %d %s" % (rc, err))


def test_isolated_rows():
    check(Sweep.dir, "needs test_end_to_end")
    d = os.path.join(Sweep.dir, "isolated")
    rc, _, err = _experiment([os.path.join(Sweep.dir, "tiny.json"), "--out", d, "--ncc", NCC,
                              "--quiet", "--only", "E5", "--isolate", "--no-plots"])
    check(rc == 0, "isolated run exit %d: %s" % (rc, err[-1000:]))
    rows = results.read_rows(os.path.join(d, "results.jsonl"))
    check(len(rows) == 3 and all(r["status"] == "ok" and not results.validate_row(r)
                                 for r in rows), "isolated rows: %s" % [
                                     (r["status"], r.get("reason")) for r in rows])


class MissingVendor(Adapter):
    """A compiler whose framework is not installed."""
    name = "missingvendor"
    install_hint = "pip install no-such-vendor"
    CONFIGS = ("fast",)

    def load(self):
        self._import("ncc_harness_test_no_such_module")


def test_missing_vendor_skipped():
    check(NCC, "set NCC to the ncc binary")
    adapters.register("missingvendor", MissingVendor)
    spec = specmod.normalize({
        "name": "missing", "warmup": 0, "iters": 1, "pin_cpus": False, "compile_repeats": 2,
        "model": {"width": 2, "spatial": [2, 2], "k": 1},
        "compilers": {"missingvendor": ["fast"]},
        "experiments": [{"id": "E5", "kind": "amortize", "blocks": ["eltwise"]}]})
    out = tempfile.mkdtemp(prefix="ncc-harness-missing-")
    try:
        sweep = runner.Sweep(spec, out, NCC, progress=False, log=None, plots=False)
        counts = sweep.run(sweep.prepare())
        sweep.report()
        rows = results.read_rows(os.path.join(out, "results.jsonl"))
        mv = [r for r in rows if r["config"]["compiler"] == "missingvendor"]
        check(counts.get("skipped") == 1 and counts.get("ok") == 1, "counts %r" % counts)
        check(len(mv) == 1 and mv[0]["status"] == "skipped" and not mv[0]["valid"], "status")
        check("not installed" in mv[0]["reason"] and mv[0]["hint"] == MissingVendor.install_hint,
              "reason/hint: %r %r" % (mv[0]["reason"], mv[0]["hint"]))
        check(not results.validate_row(mv[0]), "schema of a skipped row")
        md = open(os.path.join(out, "report.md")).read()
        check("pip install no-such-vendor" in md, "the report gives the install hint")
    finally:
        shutil.rmtree(out, ignore_errors=True)


ORACLE_SPEC = {
    "name": "oracle", "warmup": 0, "iters": 2, "pin_cpus": False,
    "model": {"width": 2, "spatial": [2, 2], "k": 2},
    "compilers": {"ncc": ["ref"], "onnxruntime": ["DISABLE_ALL", "ALL"]},
    "experiments": [{"id": "E2", "kind": "batch", "blocks": ["conv"], "batches": [1]},
                    {"id": "E6", "kind": "dynamic", "blocks": ["eltwise"], "sequence": [1, 2],
                     "runs_per_shape": 2}]}


def _sweep(spec, tag):
    out = tempfile.mkdtemp(prefix="ncc-harness-%s-" % tag)
    sweep = runner.Sweep(specmod.normalize(spec), out, NCC, progress=False, log=None,
                         plots=False)
    sweep.run(sweep.prepare())
    sweep.report()
    return out, results.read_rows(os.path.join(out, "results.jsonl"))


def test_shared_ncc_bug_is_an_ncc_failure():
    """An importer bug shared by ncc ref and ncc's rows (planted: ref's output
    and every ncc output scaled by the same factor) must not keep ncc's rows
    and drop the vendors': the outside oracle catches it."""
    check(NCC, "set NCC to the ncc binary")
    from harness.adapters.ncc import NccAdapter
    k = 1.5
    saved = (models.ModelCache.reference, NccAdapter._check_output, NccAdapter.to_numpy)

    def bad_ref(self, ms, batch, seed):
        return saved[0](self, ms, batch, seed) * k

    def bad_check(self, task, model, flags, xpath, ref):  # the command line's output, scaled
        return saved[1](self, task, model, flags, xpath, ref / k)

    models.ModelCache.reference = bad_ref
    NccAdapter._check_output = bad_check
    NccAdapter.to_numpy = lambda self, out: saved[2](self, out) * k
    try:
        out, rows = _sweep(ORACLE_SPEC, "oracle")
    finally:
        models.ModelCache.reference, NccAdapter._check_output, NccAdapter.to_numpy = saved
    try:
        ncc = [r for r in rows if r["config"]["compiler"] == "ncc"]
        ven = [r for r in rows if r["config"]["compiler"] == "onnxruntime"]
        check(len(ncc) == 3 and len(ven) == 6, "rows %r" % [runner.label(r["config"])
                                                            for r in rows])
        for r in ncc:
            check(r["status"] == "mismatch" and not r["valid"] and
                  r["reason"].startswith("ncc failure: ncc ref -O0 disagrees with the outside "
                                         "oracle (onnxruntime") and
                  r["result"]["oracle"]["ref_agrees"] is False,
                  "ncc row %s: %s %r" % (runner.label(r["config"]), r["status"], r["reason"]))
            check(not results.validate_row(r), "schema %r" % results.validate_row(r))
        for r in ven:
            o = r["result"]["oracle"]
            check(r["status"] == "ok" and r["valid"] and o["ref_agrees"] is False and
                  o["row_checked_against"].startswith("onnxruntime"),
                  "vendor row %s: %s %r %r" % (runner.label(r["config"]), r["status"],
                                               r["reason"], o))
        md = open(os.path.join(out, "report.md")).read()
        check(md.count("**ncc failure** ") >= 2 and "agreed on 0 of 3" in md,
              "the report lists the ncc failures")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_no_outside_oracle_validates_nothing():
    """Without onnxruntime or torch no row is validated by ncc ref alone."""
    check(NCC, "set NCC to the ncc binary")
    saved = oracle.which

    def none():
        raise oracle.OracleUnavailable("no outside oracle (test)", "pip install onnxruntime")
    oracle.which = none
    try:
        spec = dict(ORACLE_SPEC, compilers={"ncc": ["ref"]},
                    experiments=ORACLE_SPEC["experiments"][:1])
        out, rows = _sweep(spec, "no-oracle")
    finally:
        oracle.which = saved
    try:
        check(rows and all(r["status"] == "skipped" and "no outside oracle" in r["reason"] and
                           r["hint"] == "pip install onnxruntime" for r in rows),
              "rows %r" % [(r["status"], r["reason"]) for r in rows])
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_preallocated_outputs():
    """outputs = "preallocated": onnxruntime through IOBinding, recorded per
    row and per compiler; a binding that never writes its outputs is caught;
    ncc outside this process (the sanitizer build) is flagged asymmetric."""
    check(NCC, "set NCC to the ncc binary")
    from harness.adapters.ort import OrtAdapter
    spec = dict(ORACLE_SPEC, outputs="preallocated", experiments=ORACLE_SPEC["experiments"][:1])
    out, rows = _sweep(spec, "prealloc")
    try:
        check(rows and all(r["status"] == "ok" for r in rows),
              "rows %r" % [(r["status"], r["reason"]) for r in rows])
        for r in rows:
            t = r["result"]["timing"]
            check(t["outputs_policy"] == "preallocated", "policy %r" % t)
            if r["config"]["compiler"] == "onnxruntime":
                check("IOBinding" in t["outputs"] and t["symmetric"] is True, "ort %r" % t)
            elif t["where"] == "in-process":
                check("ncc_module_run_into" in t["outputs"], "ncc in-process %r" % t)
            else:
                check(t["symmetric"] is False, "ncc fallback %r" % t)
        et = rows[0]["env"]["timing"]
        check(et["outputs_policy"] == "preallocated" and
              "IOBinding" in et["compilers"]["onnxruntime"] and et["compilers"]["ncc"],
              "env.timing %r" % et)
        md = open(os.path.join(out, "report.md")).read()
        check("Timing (output policy `preallocated`)" in md and "IOBinding" in md, "report")
        if any(r["result"]["timing"]["where"] != "in-process" for r in rows):
            check("**Not symmetric**: ncc:ref" in md, "asymmetric ncc rows flagged")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    saved = OrtAdapter.bind_outputs

    def unwritten(self, sess, x, y0):
        run, how = saved(self, sess, x, y0)
        y = np.zeros_like(np.asarray(y0))
        return (lambda: (run(), y)[1]), how
    OrtAdapter.bind_outputs = unwritten
    try:
        out, rows = _sweep(spec, "prealloc-bad")
    finally:
        OrtAdapter.bind_outputs = saved
    try:
        ort = [r for r in rows if r["config"]["compiler"] == "onnxruntime"]
        check(ort and all(r["status"] == "mismatch" and "with preallocated outputs" in
                          r["reason"] for r in ort), "rows %r" % [(r["status"], r["reason"])
                                                               for r in ort])
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_report_without_matplotlib():
    check(Sweep.dir, "needs test_end_to_end")
    src = os.path.join(Sweep.dir, "out")
    d = os.path.join(Sweep.dir, "nompl")
    os.makedirs(d)
    rows = results.read_rows(os.path.join(src, "results.jsonl"))
    spec = json.load(open(os.path.join(src, "spec.json")))
    saved = report.HAVE_MPL
    report.HAVE_MPL = False
    try:
        report.write(d, spec, rows)
    finally:
        report.HAVE_MPL = saved
    md = open(os.path.join(d, "report.md")).read()
    check("matplotlib is not installed" in md, "note about missing matplotlib")
    check(not [f for f in os.listdir(d) if f.endswith(".png")], "no plots")
    check("## E7" in md, "tables still written")


def test_torn_results_line():
    d = tempfile.mkdtemp(prefix="ncc-harness-torn-")
    try:
        p = os.path.join(d, "results.jsonl")
        with open(p, "w") as f:
            f.write('{"key": "a", "status": "ok"}\n{"key": "b", "sta')
        rows = results.read_rows(p, warn=io.StringIO())
        check([r["key"] for r in rows] == ["a"], "a torn last line is ignored")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    rc = run_cases([test_latency_stats_match_numpy, test_metric_formulas, test_sequence_costs,
              test_compare, test_spec_checks, test_torn_results_line, test_end_to_end,
              test_resume, test_shards_and_merge, test_isolated_rows,
              test_missing_vendor_skipped, test_shared_ncc_bug_is_an_ncc_failure,
              test_no_outside_oracle_validates_nothing, test_preallocated_outputs,
              test_report_without_matplotlib])
    if Sweep.dir and not os.environ.get("NCC_PY_KEEP"):
        shutil.rmtree(Sweep.dir, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
