"""bench/harness/report_fmt.py — how the report writes numbers, intervals and verdicts.

One spelling everywhere, so a reader learns it once (the report's
"Reading the numbers" paragraph explains it):

  1.23 ms [1.20, 1.27]         median latency and its 95% CI
  2.10× [2.01, 2.20]           a ratio with its 95% CI
  1.02× [0.97, 1.08] (within noise)   the interval holds 1: no real difference
  … ⚠ noisy (robust cv 0.14, cv 0.36)   a row too noisy to rank (left out
                               of rankings): robust cv = 1.4826·MAD/median
"""
from . import report_rows as rr

NOISE_MARK = "(within noise)"  # the interval holds "no change"


def fnum(v, digits=3):
    if v is None:
        return "–"
    if v == float("inf"):
        return "∞"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    return "%.*g" % (digits, v)


def fx(v):
    return "–" if v is None else "%s×" % fnum(v)


def fgeo(values):
    """'1.52× [1.31, 1.77]': the geometric mean of speed-ups with the
    bootstrap CI over the points (stats.geomean_ci); '(within noise)' when
    it holds 1; no interval for a single point."""
    g, lo, hi = rr.stats.geomean_ci(values)
    if g is None:
        return "–"
    s = fx(g)
    if lo is not None:
        s += " [%s, %s]" % (fnum(lo), fnum(hi))
        if lo <= 1.0 <= hi:
            s += " " + NOISE_MARK
    return s


def fpct(v):
    return "–" if v is None else "%+.1f%%" % (100 * v)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(out)


def cv_text(row):
    """'robust cv 0.14, cv 0.36' (what the row has of the two), or ''."""
    rc, c = rr.robust_cv(row), rr.cv(row)
    parts = (["robust cv %.2f" % rc] if rc is not None else []) + \
        (["cv %.2f" % c] if c is not None else [])
    return ", ".join(parts)


def noisy_mark(row):
    """' ⚠ noisy (robust cv 0.14, cv 0.36)' for a noisy valid row, else ''."""
    if not rr.valid(row) or not rr.is_noisy(row):
        return ""
    t = cv_text(row)
    return " ⚠ noisy%s" % (" (%s)" % t if t else "")


def fms(row, unit=" ms"):
    """'1.23 ms [1.20, 1.27]' (no interval for rows without samples), with
    the noisy mark."""
    m = rr.med(row)
    ci = rr.med_ci(row)
    s = fnum(m) + unit
    if ci:
        s += " [%s, %s]" % (fnum(ci[0]), fnum(ci[1]))
    return s + noisy_mark(row)


def fratio(r, suffix="×", verdict=True):
    """'2.10× [2.01, 2.20]', '(within noise)' appended when the CI holds 1."""
    if r is None or r.value is None:
        return "–"
    s = "%s%s" % (fnum(r.value), suffix)
    if r.has_ci:
        s += " [%s, %s]" % (fnum(r.lo), fnum(r.hi))
        if verdict and r.within_noise():
            s += " " + NOISE_MARK
    return s


def fdelta(r):
    """A time ratio off/base as a relative change: '+3.1% [+1.0, +5.2]',
    "(within noise)" when the interval holds 0."""
    if r is None or r.value is None:
        return "–"
    s = "%+.1f%%" % (100 * (r.value - 1))
    if r.has_ci:
        s += " [%+.1f, %+.1f]" % (100 * (r.lo - 1), 100 * (r.hi - 1))
        if r.within_noise():
            s += " " + NOISE_MARK
    return s


def cell(row, fmt):
    """fmt(row) when the row is valid, else its status."""
    return fmt(row) if rr.valid(row) else rr.status_cell(row)
