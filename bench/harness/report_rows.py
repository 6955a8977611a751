"""bench/harness/report_rows.py — what the report reads from a row, with its noise.

Every number a report prints comes through here, so that each one carries
its uncertainty the same way:

* a median with its 95% CI: the row's latency_ms.ci when the runner wrote
  one, else stats.median_ci of samples_ms, else none (rows written before
  samples were kept still report, without an interval);
* a ratio of two rows with its CI (stats.ratio_ci): paired per-round ratios
  when both rows were timed interleaved in the same group (same
  interleave.group, same number of samples), else the seeded bootstrap;
* a noisy flag: stats.noisy(cv, samples_ms) — the robust cv (1.4826 *
  MAD / median) above stats.CV_RANK_MAX — recomputed from the samples so
  rows of every age follow one rule; row.noisy for rows without samples,
  else the plain cv.  A noisy row is shown, flagged, and left out of every
  ranking and best-of choice.

The row fields may sit in row["result"] (where the runner writes measured
figures) or at the top of the row; both are read, result first.
"""
from . import spec as specmod
from . import stats

STATUS_CELL = {"mismatch": "MISMATCH", "skipped": "skipped", "unsupported": "unsupported",
               "error": "error", "timeout": "timeout"}
# Configurations that run the model without compiling it: the baselines a
# break-even is measured against, never "the fastest vendor".
UNCOMPILED = ("ncc:ref", "inductor:eager")


class Rows:
    """Rows looked up by the measurement they answer (spec.measurement_key)."""

    def __init__(self, spec, rows):
        self.spec = spec
        self.by_key = {r["key"]: r for r in rows}
        self._ratio_cache = {}

    def get(self, m):
        return self.by_key.get(specmod.measurement_key(m))

    def point(self, e, ms, batch, cid):
        name, config = specmod.parse_compiler_id(cid)
        return self.get(specmod._point(self.spec, e, ms, batch, name, config))

    def sequence(self, e, ms, cid, mode):
        name, config = specmod.parse_compiler_id(cid)
        return self.get(specmod._sequence(self.spec, e, ms, name, config, mode))

    def ratio(self, a, b):
        """Ratio of row a's time to row b's, memoised (bootstraps cost)."""
        k = (id(a), id(b))
        if k not in self._ratio_cache:
            self._ratio_cache[k] = time_ratio(a, b)
        return self._ratio_cache[k]


# --------------------------------------------------------------------------
# Fields.

def valid(row):
    return row is not None and bool(row.get("valid")) and row.get("result") is not None


def field(row, name):
    """row["result"][name], else row[name], else None."""
    if row is None:
        return None
    res = row.get("result") or {}
    if name in res:
        return res[name]
    return row.get(name)


def med(row):
    return row["result"]["latency_ms"]["median"] if valid(row) else None


def comp(row):
    return row["result"]["compile_ms"] if valid(row) else None


def cid_of(row):
    c = row["config"]
    return specmod.compiler_id(c["compiler"], c["config"])


def is_vendor(cid):
    return not cid.startswith("ncc:") and cid not in UNCOMPILED


def samples(row):
    s = field(row, "samples_ms")
    return [float(v) for v in s] if isinstance(s, list) and s else None


def med_ci(row):
    """(lo, hi) of the median, or None when the row cannot give one."""
    if not valid(row):
        return None
    for lat in (row["result"].get("latency_ms"), row.get("latency_ms")):
        if isinstance(lat, dict) and isinstance(lat.get("ci"), (list, tuple)) \
                and len(lat["ci"]) == 2:
            return float(lat["ci"][0]), float(lat["ci"][1])
    s = samples(row)
    return stats.median_ci(s) if s else None


def cv(row):
    v = field(row, "cv")
    return float(v) if isinstance(v, (int, float)) else None


def robust_cv(row):
    """1.4826 * MAD / median of the row's samples (the row's robust_cv
    when it has no samples), or None."""
    s = samples(row)
    if s:
        return stats.robust_cv(s)
    v = field(row, "robust_cv")
    return float(v) if isinstance(v, (int, float)) else None


def is_noisy(row):
    if row is None:
        return False
    s = samples(row)
    if s:
        return stats.noisy(cv(row), s)
    n = field(row, "noisy")
    if isinstance(n, bool):
        return n
    return stats.noisy(cv(row))


def rankable(row):
    """Valid and quiet enough to rank or to be chosen as the best."""
    return valid(row) and not is_noisy(row)


def group(row):
    il = field(row, "interleave")
    return il.get("group") if isinstance(il, dict) else None


def graph_same(row):
    return field(row, "graph_same") is True


# --------------------------------------------------------------------------
# Ratios.

class Ratio:
    """value = t_a / t_b (a time ratio: < 1 means a is faster); lo, hi its
    95% CI or None; paired when the CI comes from interleaved rounds."""

    def __init__(self, value, lo=None, hi=None, paired=False):
        self.value, self.lo, self.hi, self.paired = value, lo, hi, paired

    def inverse(self):
        """The same comparison as a speed-up (t_b / t_a)."""
        inv = lambda v: None if v is None or v == 0 else 1.0 / v  # noqa: E731
        return Ratio(inv(self.value), inv(self.hi), inv(self.lo), self.paired)

    @property
    def has_ci(self):
        return self.lo is not None and self.hi is not None

    def within_noise(self):
        return self.has_ci and self.lo <= 1.0 <= self.hi

    def verdict(self, smaller_is="faster", larger_is="slower"):
        """stats.verdict_ratio on the interval ('unknown' without one)."""
        return stats.verdict_ratio(self.lo, self.hi, smaller_is, larger_is)


def time_ratio(a, b):
    """Ratio of median times t_a / t_b with its CI, or None when either row
    is not valid.  Paired when both rows come from the same interleaved
    group with as many samples; bootstrap when both have samples; no CI
    when either row predates samples."""
    if not (valid(a) and valid(b)):
        return None
    ta, tb = med(a), med(b)
    if not ta or not tb or ta <= 0 or tb <= 0:
        return None
    sa, sb = samples(a), samples(b)
    if not sa or not sb:
        return Ratio(ta / tb)
    ia, ib = field(a, "interleave") or {}, field(b, "interleave") or {}
    paired = group(a) is not None and group(a) == group(b) and len(sa) == len(sb) \
        and ia.get("timed_at") == ib.get("timed_at")  # one session of rounds
    v, lo, hi = stats.ratio_ci(sa, sb, paired=paired)
    return Ratio(v, lo, hi, paired)


def speedup(R, base, row):
    """Speed-up of row over base, t_base / t_row (> 1: row is faster),
    with its CI, or None.  Its verdict: speedup_verdict."""
    return R.ratio(base, row)


def speedup_verdict(r):
    return r.verdict(smaller_is="slower", larger_is="faster") if r else "unknown"


def status_cell(row):
    if row is None:
        return "not run"
    return STATUS_CELL.get(row["status"], row["status"])


def fastest(rows):
    """The rankable row with the smallest median among rows, or None."""
    ok = [r for r in rows if rankable(r)]
    return min(ok, key=med) if ok else None


# --------------------------------------------------------------------------
# The spec's view.

def compiler_ids(e, spec, with_baseline=True):
    ids = []
    if with_baseline:
        ids.append(spec["baseline"])
    for name, configs in e["compilers"].items():
        for c in configs:
            cid = specmod.compiler_id(name, c)
            if cid not in ids:
                ids.append(cid)
    return ids


def model(e, block, depth, width=None):
    return specmod._model(block, e, depth, width)


def peak_gflops(rows):
    """The machine's measured f32 peak (GFLOP/s) when an env record carries
    one (bench/fma_peak.c), else None."""
    for r in rows:
        env = r.get("env") or {}
        for k in ("peak_gflops", "fma_peak_gflops"):
            v = env.get(k)
            if isinstance(v, (int, float)) and v > 0:
                return float(v)
    return None
