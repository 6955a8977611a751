#!/usr/bin/env python3
"""tests/py/test_harness_report.py — the harness report reads noise honestly
(bench/harness/report*.py), label `harness` (tests/harness_report.cmake).

A report is built from synthetic rows written here (no compiler runs): ncc
and ONNX Runtime timed in interleaved rounds with known samples, an
OpenVINO row that is the fastest but noisy (cv ~0.5), old rows without
samples, and ablation rows (one with a graph identical to the baseline).
The report must show every median's CI, mark overlapping pairs "(within
noise)", keep the noisy row out of rankings and of "fastest vendor", give
ncc's ratio against the vendor directly, and still report the old rows.
Plots are drawn when matplotlib is there (their files are checked, not
their pixels).  Prints "N passed, M failed"; exit 1 on a failure.
"""
import json
import math
import os
import random
import shutil
import sys
import tempfile
import traceback

from nccutil import check, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)

from harness import metrics, report, report_rows, report_vs, stats  # noqa: E402
from harness import spec as specmod  # noqa: E402

SPEC = {
    "name": "report-test", "threads": 1, "pin_cpus": False, "warmup": 1, "iters": 20,
    "model": {"width": 4, "spatial": [4, 4], "seq": 4, "k": 3},
    "compilers": {"ncc": ["ref", "cpu -O2"], "onnxruntime": ["ALL"], "openvino": ["CPU"]},
    "experiments": [
        {"id": "E1", "kind": "depth", "blocks": ["mlp"], "depths": [1, 2]},
        {"id": "E2", "kind": "batch", "blocks": ["conv"], "batches": [1, 8], "depth": 2},
        {"id": "E3", "kind": "ranking", "blocks": ["eltwise", "conv", "mlp"],
         "widths": {"eltwise": 4, "conv": 4, "mlp": 4}, "depth": 3},
        {"id": "E5", "kind": "amortize", "blocks": ["resblock"],
         "compilers": {"ncc": ["cpu -O2"], "onnxruntime": ["ALL"], "openvino": ["CPU"],
                       "inductor": ["eager"]}},
        {"id": "E7", "kind": "ablation", "blocks": ["mlp"], "base": "cpu -O2", "depth": 4,
         "passes": ["fusion", "layout", "cse"]},
    ],
}

# Median latency (ms) per compiler, and per block for E3 (where ncc:cpu -O2
# reverses the interpreter's order of eltwise and conv, clearly).
BASE_MS = {"ncc:ref": 10.0, "ncc:cpu -O2": 1.0, "onnxruntime:ALL": 2.0, "openvino:CPU": 0.5,
           "inductor:eager": 4.0}
E3_MS = {"ncc:ref": {"eltwise": 1.0, "conv": 2.0, "mlp": 3.0},
         "ncc:cpu -O2": {"eltwise": 0.3, "conv": 0.2, "mlp": 0.25},
         "onnxruntime:ALL": {"eltwise": 0.5, "conv": 0.6, "mlp": 0.7},
         "openvino:CPU": {"eltwise": 0.1, "conv": 0.05, "mlp": 0.2}}
ABL_MS = {"cpu -O2": 1.0, "cpu -O2 --disable-pass=fusion": 1.0,
          "cpu -O2 --disable-pass=layout": 1.01, "cpu -O2 --disable-pass=cse": 1.3}
ROUNDS = 20

def _samples(median, spread, seed):
    """ROUNDS samples whose median is `median`, multiplicative spread."""
    rng = random.Random(seed)
    s = [median * math.exp(rng.gauss(0.0, spread)) for _ in range(ROUNDS)]
    m = stats.median(s)
    return [v * median / m for v in s]


def make_rows(spec):
    rows = []
    for i, (key, m, exps) in enumerate(specmod.expand(spec)):
        cid = specmod.compiler_id(m["compiler"], m["config"])
        block, depth, batch = m["model"]["block"], m["model"]["depth"], m["batch"]
        old = "E5" in exps and len(exps) == 1     # a row from before samples were kept
        if "E7" in exps:
            t = ABL_MS[m["config"]]
        elif "E3" in exps:
            t = E3_MS[cid][block]
        else:
            t = BASE_MS[cid] * depth * batch ** 0.5
            if "E1" in exps and depth == 2 and cid == "onnxruntime:ALL":
                t = BASE_MS["ncc:cpu -O2"] * depth * 1.005  # overlaps ncc: within noise
        spread = 0.5 if cid == "openvino:CPU" else 0.03
        s = _samples(t, spread, i)
        lat = {"median": stats.median(s), "p90": sorted(s)[int(0.9 * (ROUNDS - 1))],
               "p99": max(s), "min": min(s), "mean": sum(s) / len(s)}
        cv = stats.cv(s)
        res = {"compile_ms": 100.0 + t, "build_ms": 100.0, "first_run_ms": t,
               "latency_ms": lat, "cv": cv, "throughput_per_s": batch / (lat["median"] / 1e3),
               "model_mflop": 1.0 * batch, "gflop_per_s": 1.0, "kernels": 5,
               "graph": {"mb_moved": 2.0}}
        row = {"schema": 1, "key": key, "experiments": exps, "config": m, "status": "ok",
               "valid": True, "result": res, "env": {"cpu_model": "test", "cores": 2,
                                                     "threads": 1, "compilers": {},
                                                     "ncc": {}},
               "started": "2026-01-01T00:00:00Z", "wall_s": 1.0}
        if not old:
            lat["ci"] = list(stats.median_ci(s))
            row["samples_ms"] = s
            row["interleave"] = {"group": json.dumps([m["model"], batch], sort_keys=True),
                                 "rounds": ROUNDS}
            row["noisy"] = stats.noisy(cv)
        if m["config"] == "cpu -O2 --disable-pass=fusion":
            row["graph_same"] = True
        rows.append(row)
    return rows


def table_row(md, section, first_cells, after=None):
    """The cells of the first markdown table row in `section` (an '## ID'
    heading; after the text `after` if given) that starts with first_cells,
    with the header's names."""
    part = md.split("\n## %s " % section, 1)[1].split("\n## ", 1)[0]
    if after:
        part = part.split(after, 1)[1]
    header = None
    for line in part.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if header is None:
            header = cells
            continue
        if cells[:len(first_cells)] == first_cells:
            return dict(zip(header, cells))
    raise AssertionError("no row %s in %s" % (first_cells, section))


class Built:
    dir = md = rows = spec = None


def build():
    Built.spec = specmod.normalize(SPEC)
    Built.rows = make_rows(Built.spec)
    Built.dir = tempfile.mkdtemp(prefix="ncc-report-")
    report.write(Built.dir, Built.spec, Built.rows)
    Built.md = open(os.path.join(Built.dir, "report.md"), encoding="utf-8").read()


def by(cid, block, depth=None, exp=None):
    for r in Built.rows:
        c = r["config"]
        if specmod.compiler_id(c["compiler"], c["config"]) == cid and \
                c["model"]["block"] == block and (depth is None or c["model"]["depth"] == depth) \
                and (exp is None or exp in r["experiments"]):
            return r
    raise KeyError((cid, block, depth))


# --------------------------------------------------------------------------

def test_medians_have_ci():
    r = table_row(Built.md, "E1", ["ncc:cpu -O2"])
    check("[" in r["d=1"] and "ms" in r["d=1"], "median with CI: %r" % r["d=1"])
    lo, hi = report_rows.med_ci(by("ncc:cpu -O2", "mlp", 1, "E1"))
    check(lo < report_rows.med(by("ncc:cpu -O2", "mlp", 1, "E1")) < hi, "CI holds the median")
    # without latency_ms.ci the CI comes from the samples
    row = json.loads(json.dumps(by("ncc:cpu -O2", "mlp", 1, "E1")))
    del row["result"]["latency_ms"]["ci"]
    check(report_rows.med_ci(row) == stats.median_ci(row["samples_ms"]), "CI from samples")


def test_ratio_vs_vendor():
    # ncc:cpu -O2 is 2x faster than onnxruntime:ALL at d=1: the direct ratio
    r = table_row(Built.md, "E1", ["d=1", "`ncc:cpu -O2`"])
    cell = r["vs onnxruntime:ALL"]
    check(cell.startswith("2×") or cell.startswith("2.0"), "ratio vs the vendor: %r" % cell)
    check("within noise" not in cell, "a 2x gap is not noise: %r" % cell)
    rt = report_rows.time_ratio(by("onnxruntime:ALL", "mlp", 1, "E1"),
                                by("ncc:cpu -O2", "mlp", 1, "E1"))
    check(rt.paired and rt.lo > 1.9 and rt.hi < 2.1, "paired CI near 2: %s" % vars(rt))


def test_within_noise():
    r = table_row(Built.md, "E1", ["d=2", "`ncc:cpu -O2`"])
    check("(within noise)" in r["vs onnxruntime:ALL"], "overlap: %r" % r["vs onnxruntime:ALL"])
    check("(within noise)" not in r["vs fastest vendor"] or
          "onnxruntime:ALL" in r["vs fastest vendor"], "fastest vendor cell")


def test_noisy_not_ranked():
    ov = by("openvino:CPU", "mlp", 1, "E1")
    check(report_rows.is_noisy(ov), "the openvino rows are noisy")
    # the fastest vendor is onnxruntime, not the (faster, noisy) openvino
    r = table_row(Built.md, "E1", ["d=1", "`ncc:cpu -O2`"])
    check("`onnxruntime:ALL`" in r["vs fastest vendor"], "fastest vendor: %r"
          % r["vs fastest vendor"])
    check(r["vs openvino:CPU"].endswith("⚠ noisy"), "noisy pair: %r" % r["vs openvino:CPU"])
    # E3: shown, not ranked, no tau
    r3 = table_row(Built.md, "E3", ["conv (4, 1)"])
    check("not ranked" in r3["openvino:CPU"] and "noisy" in r3["openvino:CPU"],
          "E3 noisy cell: %r" % r3["openvino:CPU"])
    check("#1" in r3["ncc:cpu -O2"], "ncc ranks conv first: %r" % r3["ncc:cpu -O2"])
    tau = table_row(Built.md, "E3", ["Kendall τ vs baseline"])
    check(tau["openvino:CPU"] == "–", "no tau from noisy rows: %r" % tau["openvino:CPU"])
    check("`ncc:cpu -O2` reverses conv/eltwise" in Built.md, "the real reversal is listed")
    check("`openvino:CPU` reverses" not in Built.md, "no reversal from noisy rows")
    check("**noisy**" in Built.md.split("## Flagged rows")[1], "noisy rows are flagged")
    # the summary's head-to-head: noisy openvino counted apart
    t = report_vs.head_to_head(report_rows.Rows(Built.spec, Built.rows),
                               report_vs.collect(Built.rows))
    tv = t[("ncc:cpu -O2", "openvino:CPU")]
    check(not tv.s and tv.noisy > 0, "openvino compared %d times" % len(tv.s))
    tf = t[("ncc:cpu -O2", "fastest vendor")]
    check(set(tf.vendors) == {"onnxruntime:ALL"}, "fastest vendors: %s" % tf.vendors)


def test_batch_normalised_friction():
    r = table_row(Built.md, "E2", ["ncc:cpu -O2"], after="Batch scaling, normalised")
    check("Φrel" in r["b=8"] and "B " in r["b=8"], "normalised scaling: %r" % r["b=8"])
    check("E_best" in Built.md and "ideal" in Built.md.lower(), "friction explained")
    eff = metrics.batch_efficiency({1: 100.0, 8: 200.0})
    check(abs(metrics.relative_friction(eff, {1: 1.0, 8: 0.5})[8] - 0.5) < 1e-12, "Φrel")
    check(metrics.batch_gain({1: 100.0, 8: 200.0}) == {1: 1.0, 8: 2.0}, "batch gain")


def test_old_rows_still_report():
    e5 = Built.md.split("\n## E5 ", 1)[1].split("\n## ", 1)[0]
    r = table_row(Built.md, "E5", ["resblock", "ncc:cpu -O2"])
    check("ms" in r["median latency"] and "[" not in r["median latency"],
          "old row: a median without CI: %r" % r["median latency"])
    check(r["N* vs `ncc:ref`"] not in ("–", ""), "N* from old rows: %r" % r)
    # against torch eager: compile 101 ms / (4 - 1) ms per run
    check(r["N* vs `inductor:eager`"].startswith("33.7"), "N* vs eager: %r" % r)
    # torch eager is no vendor: the fastest vendor is onnxruntime (openvino is noisy)
    check("onnxruntime:ALL" in r["cheaper than the fastest vendor"], "vs vendor: %r" % r)
    check("build ms" in e5 and "first run ms" in e5, "compile split from first run")
    rt = report_rows.time_ratio(by("ncc:ref", "resblock"), by("ncc:cpu -O2", "resblock"))
    check(rt.value > 1 and not rt.has_ci and rt.verdict() == "unknown", "no CI, no verdict")


def test_ablation():
    r = table_row(Built.md, "E7", ["fusion"])
    check("no change" in r["Δ latency [95% CI]"], "identical graph: %r" % r)
    r = table_row(Built.md, "E7", ["layout"])
    check("(within noise)" in r["Δ latency [95% CI]"], "1%% on 3%% noise: %r" % r)
    r = table_row(Built.md, "E7", ["cse"])
    d = r["Δ latency [95% CI]"]
    check(25 < float(d.split("%")[0]) < 35 and "within noise" not in d, "cse earns 30%%: %r" % d)


def test_break_even_formulas():
    check(metrics.break_even_vs(100, 1, 50, 2) == ("after", 50.0), "after")
    check(metrics.break_even_vs(10, 1, 50, 2) == ("always", 0.0), "always")
    check(metrics.break_even_vs(10, 3, 50, 2) == ("until", 40.0), "until")
    check(metrics.break_even_vs(100, 3, 50, 2)[0] == "never", "never")
    lo, hi = metrics.break_even_range(90, 10, 0.1, 1.0)
    check(abs(lo - 10) < 1e-9 and hi == float("inf"), "range to infinity at ratio 1")


def test_plots():
    if not report.HAVE_MPL:
        print("  (matplotlib missing: plots not checked)")
        return
    pngs = sorted(f for f in os.listdir(Built.dir) if f.endswith(".png"))
    for name in ("E1_speedup_vs_depth.png", "E2_throughput_vs_batch.png",
                 "E2_friction_vs_batch.png", "E7_ablation.png"):
        check(name in pngs, "%s drawn (have %s)" % (name, pngs))
        check("](%s)" % name in Built.md, "%s linked" % name)
    drawn = report.LAST_PLOTS.drawn
    sp = drawn["E1_speedup_vs_depth"]
    check("speed-up over ncc:ref" in sp["ylabel"], "baseline on the axis: %s" % sp)
    check("batch 1" in sp["title"], "batch in the title: %s" % sp)
    check(sp["errorbars"], "error bars from the CIs")
    check(drawn["E7_ablation"]["errorbars"], "ablation error bars")
    check("batch 1" in drawn["E7_ablation"]["title"], "batch in the ablation title")


def main():
    try:
        build()
    except Exception:
        print("FAILED  build\n%s" % traceback.format_exc())
        return 1
    rc = run_cases([test_medians_have_ci, test_ratio_vs_vendor, test_within_noise,
              test_noisy_not_ranked, test_batch_normalised_friction, test_old_rows_still_report,
              test_ablation, test_break_even_formulas, test_plots])
    if os.environ.get("NCC_PY_KEEP"):
        print("report kept in %s" % Built.dir)
    else:
        shutil.rmtree(Built.dir, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
