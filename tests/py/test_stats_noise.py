#!/usr/bin/env python3
"""tests/py/test_stats_noise.py — the robust noise flag, label `harness`
(tests/stats_noise.cmake).

A row is "noisy" (shown, not ranked) when the robust cv of its timed runs,
1.4826 * MAD / median, is above stats.CV_RANK_MAX; the plain cv (std/mean)
decides only for rows kept without their runs.  Checked here:

  - robust_cv against a direct computation, and equal to the std/mean of a
    large normal sample (the 1.4826 scale);
  - one outlier among 20 steady samples: plain cv above the limit, robust cv
    far below, not noisy; a bimodal sample (two equal modes 2x apart) and a
    uniformly wide one: noisy; without samples, the plain cv decides;
  - measure.summarize gives cv, robust_cv and the new flag;
  - measure.time_group's adaptive extra rounds follow the same rule (a group
    whose only fault is one outlier gets none; a bimodal row runs to the cap);
  - report_rows recomputes the flag from a row's samples (a row stored with
    the old plain-cv flag is not noisy) and falls back to the stored flag,
    then the cv; report_fmt's mark prints both cvs.

Pure Python.  Prints "N passed, M failed"; exit 1 on a failure.
"""
import random
import sys

from nccutil import discovered_cases, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)

from harness import measure, stats  # noqa: E402
from harness import report_fmt, report_rows  # noqa: E402

LIMIT = stats.CV_RANK_MAX


def steady(n=20, seed=0, spread=0.01, median=1.0):
    rng = random.Random(seed)
    return [median * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def one_outlier():
    s = steady()
    s[7] = 3.0  # an interrupt: one run three times as long
    return s


def bimodal():
    rng = random.Random(1)
    return [(1.0 if i % 2 else 2.0) * (1 + rng.uniform(-0.01, 0.01)) for i in range(20)]


def test_robust_cv_definition():
    xs = [1.0, 2.0, 2.0, 3.0, 10.0]
    # median 2, |x - 2| = 1, 0, 0, 1, 8 -> MAD 1
    assert stats.mad(xs) == 1.0
    assert abs(stats.robust_cv(xs) - 1.4826 / 2.0) < 1e-12
    assert stats.robust_cv([]) == 0.0 and stats.robust_cv([0.0, 0.0]) == 0.0
    rng = random.Random(3)
    big = [100.0 + rng.gauss(0.0, 5.0) for _ in range(20000)]
    assert abs(stats.robust_cv(big) - stats.cv(big)) < 0.002, (stats.robust_cv(big),
                                                               stats.cv(big))


def test_one_outlier_is_not_noisy():
    xs = one_outlier()
    assert stats.cv(xs) > LIMIT, stats.cv(xs)     # the old rule would flag it
    assert stats.robust_cv(xs) < LIMIT / 5, stats.robust_cv(xs)
    assert not stats.noisy(stats.cv(xs), xs)


def test_spread_samples_are_noisy():
    b = bimodal()
    assert stats.robust_cv(b) > LIMIT and stats.noisy(stats.cv(b), b), stats.robust_cv(b)
    wide = steady(spread=0.5, seed=2)
    assert stats.noisy(stats.cv(wide), wide), stats.robust_cv(wide)
    assert not stats.noisy(stats.cv(steady()), steady())


def test_without_samples_plain_cv():
    assert stats.noisy(LIMIT * 2) and not stats.noisy(LIMIT / 2)
    assert stats.noisy(LIMIT * 2, []) and not stats.noisy(None)


def test_summarize():
    xs = one_outlier()
    s = measure.summarize(xs)
    assert abs(s["cv"] - stats.cv(xs)) < 1e-12 and s["cv"] > LIMIT
    assert s["robust_cv"] == stats.robust_cv(xs) and s["noisy"] is False, s
    assert measure.summarize(bimodal())["noisy"] is True


def _self_timed(values):
    it = iter(values * 10)
    return measure.Point(lambda: next(it), {}, self_timed=True)


def test_adaptive_rounds_same_rule():
    quiet = [_self_timed(one_outlier()), _self_timed(steady(seed=5))]
    info = measure.time_group(quiet, 0, 20)
    assert info["extra_rounds"] == 0, info
    assert [len(p.samples) for p in quiet] == [20, 20]
    noisy = [_self_timed(bimodal()), _self_timed(steady(seed=6))]
    info = measure.time_group(noisy, 0, 20)
    cap = (1 + measure.MAX_EXTRA_FACTOR) * 20  # still noisy: repeats run to the cap
    assert info["extra_rounds"] == cap - 20 and info["rounds"] == cap and info["capped"], info
    assert [len(p.samples) for p in noisy] == [cap, cap]


def _row(samples=None, cv=None, noisy=None):
    res = {"latency_ms": {"median": 1.0}, "compile_ms": 1.0}
    if samples is not None:
        res["samples_ms"] = samples
    if cv is not None:
        res["cv"] = cv
    if noisy is not None:
        res["noisy"] = noisy
    return {"valid": True, "result": res, "config": {"compiler": "ncc", "config": "ref"}}


def test_report_rows_and_mark():
    xs = one_outlier()
    old_flag = _row(xs, stats.cv(xs), noisy=True)   # written under the plain-cv rule
    assert not report_rows.is_noisy(old_flag) and report_rows.rankable(old_flag)
    assert report_fmt.noisy_mark(old_flag) == ""
    b = bimodal()
    r = _row(b, stats.cv(b), noisy=False)
    assert report_rows.is_noisy(r)
    mark = report_fmt.noisy_mark(r)
    assert "robust cv %.2f" % stats.robust_cv(b) in mark and "cv %.2f" % stats.cv(b) in mark, mark
    # rows without samples: the stored flag, else the plain cv
    assert report_rows.is_noisy(_row(cv=0.01, noisy=True))
    assert report_rows.is_noisy(_row(cv=0.3)) and not report_rows.is_noisy(_row(cv=0.01))
    assert report_fmt.noisy_mark(_row(cv=0.3)) == " ⚠ noisy (cv 0.30)"


def main():
    return run_cases(discovered_cases(globals()))


if __name__ == "__main__":
    sys.exit(main())
