"""bench/harness/stats.py — how the harness tells an effect from noise.

Every figure a report ranks by is a median of timed runs; this module gives
each one an interval and decides whether a difference is real.

* Median CI: a distribution-free confidence interval from order statistics
  (the binomial method: the k-th smallest and k-th largest of n samples
  bound the median with probability 1 - 2*P(Bin(n, 1/2) < k)). No resampling,
  so it is deterministic and matches `ncc bench` (tools/ncc/stats.c).
* Ratio CI: a seeded percentile bootstrap (BOOTSTRAP_N resamples, fixed
  seed, so a report is reproducible).  When two sides were timed
  interleaved (same number of rounds, round i of both sides side by side)
  the rounds are resampled as pairs and the statistic is the median of the
  per-round ratios (a load that hits both rows of a round cancels);
  otherwise each side is resampled on its own and the statistic is the
  ratio of medians.
* Geomean CI: a summary over points (geomean of speed-ups) gets a bootstrap
  over the points (geomean_ci).
* Adaptive repeats: ci_halfwidth (relative half-width of the median's CI)
  is what measure.time_group drives below CI_TARGET, up to a cap.
* Verdict: "within noise" when the interval of a ratio contains 1 (or of a
  delta contains 0); otherwise "faster" / "slower".
* Noise flag: rows whose spread exceeds CV_RANK_MAX are reported but left
  out of rankings and best-of choices.  The spread is the robust cv
  (robust_cv: 1.4826 * MAD / median, the cv a normal sample would have)
  when the samples are at hand, so one outlier among 20 runs (an
  interrupt, a page fault) does not flag a row whose median is steady;
  rows kept without samples fall back to the plain cv (std / mean).  What
  the robust cv misses (a minority mode, a drift) widens the median's CI,
  and every ratio's verdict reads that.
"""
import math
import random

CONFIDENCE = 0.95
CV_RANK_MAX = 0.10  # above this a row is flagged "noisy" and not ranked
BOOTSTRAP_N = 2000
CI_TARGET = 0.02    # adaptive repeats stop when every median's CI half-width is below 2%


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("median of nothing")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _binom_cdf_half(k, n):
    """P(Bin(n, 1/2) <= k), in log space so n in the thousands is exact enough."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2)
            for i in range(k + 1)]
    m = max(logs)
    return min(1.0, math.exp(m) * sum(math.exp(v - m) for v in logs))


def median_ci(xs, level=CONFIDENCE):
    """(lo, hi) bounding the median with at least `level` confidence; for
    fewer than 6 samples no such interval exists and (min, max) is
    returned (wide, as it should be)."""
    s = sorted(float(v) for v in xs)
    n = len(s)
    if n == 0:
        raise ValueError("median_ci of nothing")
    alpha = (1.0 - level) / 2
    # the largest k with P(X < k) = P(X <= k-1) <= alpha; interval [s[k-1], s[n-k]]
    k = 0
    while k + 1 <= n // 2 and _binom_cdf_half(k, n) <= alpha:
        k += 1
    if k == 0:
        return s[0], s[-1]
    return s[k - 1], s[n - k]


def _percentiles(boots, level):
    boots = sorted(boots)
    q = (1.0 - level) / 2
    lo = boots[int(q * (len(boots) - 1))]
    hi = boots[int(math.ceil((1 - q) * (len(boots) - 1)))]
    return lo, hi


def ratio_ci(a, b, paired=None, level=CONFIDENCE, seed=0, n_boot=None):
    """(ratio, lo, hi) of median(a) / median(b) with a bootstrap CI.
    `paired` (default: when the lengths match) resamples rounds i as pairs
    and takes the median of the per-round ratios a[i]/b[i]."""
    a = [float(v) for v in a]
    b = [float(v) for v in b]
    if not a or not b:
        raise ValueError("ratio_ci needs samples on both sides")
    if paired is None:
        paired = len(a) == len(b)
    rng = random.Random(seed)
    nb = n_boot or BOOTSTRAP_N
    boots = []
    if paired:
        r = [x / y for x, y in zip(a, b) if y > 0]
        if not r:
            raise ValueError("ratio_ci: no positive pair")
        n = len(r)
        for _ in range(nb):
            boots.append(median([r[rng.randrange(n)] for _ in range(n)]))
        lo, hi = _percentiles(boots, level)
        return median(r), lo, hi
    for _ in range(nb):
        ma = median([a[rng.randrange(len(a))] for _ in a])
        mb = median([b[rng.randrange(len(b))] for _ in b])
        boots.append(ma / mb if mb > 0 else float("inf"))
    lo, hi = _percentiles(boots, level)
    mb = median(b)
    return (median(a) / mb if mb > 0 else float("inf")), lo, hi


def geomean_ci(values, level=CONFIDENCE, seed=0, n_boot=None):
    """(geomean, lo, hi) of positive values, the CI a bootstrap over the
    values (the points a summary spans); (g, None, None) for fewer than 2."""
    v = [float(x) for x in values if x is not None and x > 0 and x != float("inf")]
    if not v:
        return None, None, None
    logs = [math.log(x) for x in v]
    g = math.exp(sum(logs) / len(logs))
    if len(v) < 2:
        return g, None, None
    rng = random.Random(seed)
    n = len(logs)
    boots = [math.exp(sum(logs[rng.randrange(n)] for _ in range(n)) / n)
             for _ in range(n_boot or BOOTSTRAP_N)]
    lo, hi = _percentiles(boots, level)
    return g, lo, hi


def ci_halfwidth(xs, level=CONFIDENCE):
    """Half the width of median_ci(xs) over the median: the relative
    precision of a row's median (inf for fewer than 2 samples)."""
    if len(xs) < 2:
        return float("inf")
    m = median(xs)
    if m <= 0:
        return 0.0
    lo, hi = median_ci(xs, level)
    return 0.5 * (hi - lo) / m


def verdict_ratio(lo, hi, smaller_is="faster", larger_is="slower"):
    """What a time ratio's interval says: within noise when it holds 1."""
    if lo is None or hi is None:
        return "unknown"
    if lo <= 1.0 <= hi:
        return "within noise"
    return smaller_is if hi < 1.0 else larger_is


def cv(xs):
    xs = [float(v) for v in xs]
    if not xs:
        return 0.0
    m = sum(xs) / len(xs)
    if m <= 0:
        return 0.0
    return math.sqrt(sum((v - m) ** 2 for v in xs) / len(xs)) / m


def noisy(cv_value, samples=None):
    """A row too noisy to rank: robust_cv(samples) above CV_RANK_MAX when
    the samples are given, else the plain cv_value (rows without samples)."""
    if samples:
        return robust_cv(samples) > CV_RANK_MAX
    return cv_value is not None and cv_value > CV_RANK_MAX


def mad(xs):
    """Median absolute deviation from the median."""
    m = median(xs)
    return median([abs(float(v) - m) for v in xs])


def robust_cv(xs):
    """1.4826 * MAD / median: the spread of the bulk of the samples, scaled
    so that it equals std / mean for normal samples; one outlier barely
    moves it.  0 for no samples or a median of 0."""
    xs = [float(v) for v in xs]
    if not xs:
        return 0.0
    m = median(xs)
    if m <= 0:
        return 0.0
    return 1.4826 * mad(xs) / m
