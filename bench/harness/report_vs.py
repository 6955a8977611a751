"""bench/harness/report_vs.py — ncc against each vendor, and against the fastest one.

The question a user brings is "is ncc faster than onnxruntime on my
blocks?", not "how much faster than ncc's own interpreter".  For every point
(same model, batch, threads) measured by an ncc compiled configuration and
by vendors, the speed-up S = t_vendor / t_ncc is taken with its CI, then
summarised per pair over the points: geometric mean, and how many points
are faster / within noise / slower by their intervals.  "fastest vendor"
is, at each point, the quickest vendor row that is valid and not noisy.
Noisy rows take no part (they are counted apart).
"""
import json

from . import report_fmt as F
from . import report_rows as rr


def point_key(row):
    """What makes two rows the same point, whatever the compiler."""
    c = row["config"]
    return json.dumps([c.get("model"), c.get("batch"), c.get("threads")], sort_keys=True)


def collect(rows):
    """{point key: {compiler id: row}} for the default-shape point rows."""
    pts = {}
    for r in rows:
        c = r.get("config") or {}
        if c.get("kind") != "point" or c.get("shape_mode", "default") != "default":
            continue
        pts.setdefault(point_key(r), {})[rr.cid_of(r)] = r
    return pts


class Tally:
    def __init__(self):
        self.s, self.faster, self.noise, self.slower, self.no_ci, self.noisy = [], 0, 0, 0, 0, 0
        self.vendors = {}

    def add(self, r, vendor=None):
        self.s.append(r.value)
        if vendor:
            self.vendors[vendor] = self.vendors.get(vendor, 0) + 1
        v = rr.speedup_verdict(r)
        if v == "faster":
            self.faster += 1
        elif v == "slower":
            self.slower += 1
        elif v == "within noise":
            self.noise += 1
        else:
            self.no_ci += 1


def head_to_head(R, points):
    """points: {key: {cid: row}} -> {(ncc id, vendor id or 'fastest vendor'):
    Tally} over every point."""
    out = {}
    for by_cid in points.values():
        nccs = [c for c in by_cid if c.startswith("ncc:") and c not in rr.UNCOMPILED
                and "--disable-pass" not in c]  # ablation configs have their own section
        vendors = [c for c in by_cid if rr.is_vendor(c)]
        if not nccs or not vendors:
            continue
        best = rr.fastest([by_cid[v] for v in vendors])
        for n in nccs:
            rn = by_cid[n]
            if not rr.valid(rn):
                continue
            for v in vendors + ["fastest vendor"]:
                rv = best if v == "fastest vendor" else by_cid[v]
                t = out.setdefault((n, v), Tally())
                if not rr.valid(rv):
                    continue
                if rr.is_noisy(rn) or rr.is_noisy(rv):
                    t.noisy += 1
                    continue
                r = rr.speedup(R, rv, rn)
                if r is not None:
                    t.add(r, rr.cid_of(rv) if v == "fastest vendor" else None)
    return out


EXPLAIN = ("S = t_vendor / t_ncc at each point where both ran (same model, batch, threads): "
           "above 1 ncc is faster. The geometric mean summarises the points (95% bootstrap CI "
           "over the points); the counts say "
           "at how many points the 95% CI of S lies above 1 (ncc faster), holds 1 (within "
           "noise) or lies below 1 (ncc slower). Noisy rows are left out and counted apart. "
           "A good result for ncc: geomean ≥ 1 and no point slower.")


def table(R, points):
    """The head-to-head table (or '' when no point has ncc and a vendor)."""
    tallies = head_to_head(R, points)
    if not tallies:
        return ""
    hdr = ["ncc", "vs", "points", "geomean S (ncc over it)", "ncc faster", "within noise",
           "ncc slower", "no CI", "noisy (left out)"]
    rows = []
    for (n, v), t in sorted(tallies.items(), key=lambda kv: (
            kv[0][0], kv[0][1] == "fastest vendor", kv[0][1])):
        who = v
        if v == "fastest vendor" and t.vendors:
            who = "fastest vendor (%s)" % ", ".join(
                "%s ×%d" % (k, c) for k, c in sorted(t.vendors.items(), key=lambda x: -x[1]))
        rows.append(["`%s`" % n, who, len(t.s), F.fgeo(t.s), t.faster, t.noise, t.slower, t.no_ci,
                     t.noisy])
    return "%s\n\n%s" % (EXPLAIN, F.table(hdr, rows))


MATRIX_EXPLAIN = ("ncc against each vendor: S = t_vendor / t_ncc with its 95% CI, above 1 "
                  "ncc is faster, \"(within noise)\" no measurable difference; the last "
                  "column is the fastest quiet vendor at that point. \"⚠ noisy\": one of the "
                  "two rows is too noisy to rank; its ratio is shown, not counted.")


def matrix(R, pts, split_name):
    """pts: [(label, {cid: row})] of one experiment -> a table with one row
    per (label, ncc configuration) and one column per vendor plus the
    fastest vendor; '' when no point has both."""
    vendors = []
    for _, by in pts:
        vendors += [c for c in by if rr.is_vendor(c) and c not in vendors]
    nccs = []
    for _, by in pts:
        nccs += [c for c in by if c.startswith("ncc:") and c not in rr.UNCOMPILED
                 and "--disable-pass" not in c and c not in nccs]
    if not vendors or not nccs:
        return ""

    def cell(rn, rv, name=False):
        if rv is None:
            return "–"
        if not rr.valid(rv) or not rr.valid(rn):
            return rr.status_cell(rv if not rr.valid(rv) else rn)
        s = F.fratio(rr.speedup(R, rv, rn))
        if rr.is_noisy(rn) or rr.is_noisy(rv):  # shown, but not a result
            return s + " ⚠ noisy"
        return s + (" `%s`" % rr.cid_of(rv) if name else "")
    rows = []
    for label, by in pts:
        best = rr.fastest([by[v] for v in vendors if v in by])
        for n in nccs:
            if n not in by:
                continue
            rows.append([label, "`%s`" % n] + [cell(by[n], by.get(v)) for v in vendors] +
                        [cell(by[n], best, name=True) if best else "no quiet vendor row"])
    hdr = [split_name, "ncc"] + ["vs %s" % v for v in vendors] + ["vs fastest vendor"]
    return "%s\n\n%s" % (MATRIX_EXPLAIN, F.table(hdr, rows))
