#!/usr/bin/env python3
"""tests/py/test_stats_ci.py — the report's confidence intervals and adaptive
repeats, label `harness` (tests/stats_ci.cmake).

Synthetic data with a known answer (not ncc: the truth is the generator's):

  - coverage: the bootstrap CI of a ratio of medians (two independent
    log-normal samples, unpaired) and of a paired ratio (rounds sharing a
    drifting load factor) holds the true ratio in about 95% of 120 trials
    (at least 86%: the binomial spread of 120 trials around 0.95 plus the
    bootstrap's small-sample undercoverage); the paired interval is much
    narrower than the unpaired one when the load is shared (what pairing
    is for);
  - geomean_ci covers the true geometric mean of log-normal speed-ups;
  - adaptive repeats: a group whose medians are already precise gets no
    extra rounds; a moderately spread group gets extra rounds until every
    median's CI half-width is below the target, without hitting the cap; a
    bimodal one runs to the cap and says so;
  - the report's warning line on rows too noisy to rank (and none on quiet
    rows); the summary's geomean speed-up carries its interval.

Pure Python.  Prints "N passed, M failed"; exit 1 on a failure.
"""
import math
import random
import sys

from nccutil import check, discovered_cases, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)

from harness import measure, stats  # noqa: E402
from harness import report_fmt, report_summary  # noqa: E402

TRIALS = 120
MIN_COVER = 0.86


def lognormal(rng, median, sigma, n):
    return [median * math.exp(rng.gauss(0.0, sigma)) for _ in range(n)]


def test_unpaired_ratio_coverage():
    rng = random.Random(11)
    truth = 2.0 / 1.0
    hit = 0
    for t in range(TRIALS):
        a = lognormal(rng, 2.0, 0.05, 30)
        b = lognormal(rng, 1.0, 0.05, 30)
        v, lo, hi = stats.ratio_ci(a, b, paired=False, seed=t, n_boot=400)
        check(lo <= v <= hi, "estimate inside its interval: %r" % ((v, lo, hi),))
        hit += lo <= truth <= hi
    check(hit >= MIN_COVER * TRIALS, "unpaired coverage %d/%d" % (hit, TRIALS))


def _paired(rng, n=30):
    load = [math.exp(rng.gauss(0.0, 0.3)) for _ in range(n)]  # a drift both rows see
    a = [1.5 * L * math.exp(rng.gauss(0.0, 0.03)) for L in load]
    b = [1.0 * L * math.exp(rng.gauss(0.0, 0.03)) for L in load]
    return a, b


def test_paired_ratio_coverage_and_width():
    rng = random.Random(12)
    truth = 1.5
    hit, wp, wu = 0, 0.0, 0.0
    for t in range(TRIALS):
        a, b = _paired(rng)
        v, lo, hi = stats.ratio_ci(a, b, paired=True, seed=t, n_boot=400)
        hit += lo <= truth <= hi
        wp += hi - lo
        _, ulo, uhi = stats.ratio_ci(a, b, paired=False, seed=t, n_boot=200)
        wu += uhi - ulo
    check(hit >= MIN_COVER * TRIALS, "paired coverage %d/%d" % (hit, TRIALS))
    check(wp < 0.5 * wu, "pairing cancels the shared load: width %.3g vs %.3g unpaired"
          % (wp / TRIALS, wu / TRIALS))


def test_geomean_coverage():
    rng = random.Random(13)
    truth = 1.8
    hit = 0
    for t in range(TRIALS):
        xs = lognormal(rng, truth, 0.2, 12)
        g, lo, hi = stats.geomean_ci(xs, seed=t, n_boot=400)
        check(lo <= g <= hi, "geomean inside its interval")
        hit += lo <= truth <= hi
    check(hit >= MIN_COVER * TRIALS, "geomean coverage %d/%d" % (hit, TRIALS))
    check(stats.geomean_ci([2.0])[1:] == (None, None), "one point: no interval")


def _self_timed(values):
    it = iter(values)
    return measure.Point(lambda: next(it), {}, self_timed=True)


def test_adaptive_until_precise():
    rng = random.Random(14)
    quiet = [_self_timed(lognormal(rng, 1.0, 0.001, 500)) for _ in range(2)]
    info = measure.time_group(quiet, 0, 10)
    check(info["extra_rounds"] == 0 and not info["capped"], "precise already: %r" % info)
    # spread 5%: 10 rounds give a half-width of several %, a few dozen reach 2%
    spread = [_self_timed(lognormal(rng, 1.0, 0.05, 500)) for _ in range(2)]
    hw10 = stats.ci_halfwidth(lognormal(random.Random(1), 1.0, 0.05, 10))
    check(hw10 > stats.CI_TARGET, "the case needs repeats: %.3f" % hw10)
    info = measure.time_group(spread, 0, 10, max_rounds=200)
    check(info["extra_rounds"] > 0, "repeats added: %r" % info)
    check(not info["capped"] and info["halfwidth"] <= stats.CI_TARGET,
          "stops at the target: %r" % info)
    check(all(stats.ci_halfwidth(p.samples) <= stats.CI_TARGET for p in spread),
          "every row's median precise")
    check(info["rounds"] < 200, "stopped before the cap: %r" % info)
    bi = [_self_timed([1.0 if i % 2 else 2.0 for i in range(500)]),
          _self_timed(lognormal(rng, 1.0, 0.001, 500))]
    info = measure.time_group(bi, 0, 10)
    check(info["capped"] and info["rounds"] == (1 + measure.MAX_EXTRA_FACTOR) * 10,
          "bimodal: to the cap: %r" % info)


def _row(cid, samples):
    name, config = cid.split(":", 1)
    med = stats.median(samples)
    return {"valid": True, "status": "ok",
            "config": {"compiler": name, "config": config, "kind": "point"},
            "result": {"latency_ms": {"median": med}, "compile_ms": 1.0,
                       "samples_ms": samples, "cv": stats.cv(samples)}}


def test_noise_warning():
    rng = random.Random(15)
    quiet = [_row("ncc:cpu -O2", lognormal(rng, 1.0, 0.01, 20)),
             _row("onnxruntime:ALL", lognormal(rng, 1.2, 0.01, 20))]
    check(report_summary.noise_warning(quiet) == "", "no warning on quiet rows")
    loud = quiet + [_row("tvm:llvm-ms", [1.0 if i % 2 else 2.0 for i in range(20)])]
    w = report_summary.noise_warning(loud)
    check("Warning" in w and "1 of 3" in w and "`tvm:llvm-ms`" in w, w)


def test_geomean_cell():
    s = report_fmt.fgeo([2.0, 2.2, 1.9, 2.1])
    check(s.startswith("2.05×") and "[" in s and "within noise" not in s, s)
    s = report_fmt.fgeo([0.8, 1.3, 0.9, 1.2])
    check("within noise" in s, s)


if __name__ == "__main__":
    sys.exit(run_cases(discovered_cases(globals())))
