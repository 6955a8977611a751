"""bench/harness/report_models.py — the report section of E3 over real models:
does compiling reorder real architectures of matched FLOPs?

The generated blocks of E3 are matched to one FLOP budget by their width;
real architectures cannot be resized, so spec.resolve() groups them by
their MFLOP at batch 1 (within a factor `match` of the group's smallest)
and each group is ranked on its own.  Per group: the median latency [95% CI]
and rank of each model under every compiler, Kendall's tau against the
baseline, and the pairs whose order a compiler reverses against each
uncompiled reference measured (ncc ref, torch eager, onnxruntime with its
graph optimisations off) — the studies' claim that compiling changes which
architecture is faster.  A reversal counts only when neither time ratio's
CI holds 1; noisy rows are shown, never ranked.
"""
from . import metrics
from . import report_fmt as F
from . import report_rows as rr
from .zoo import short

# Uncompiled references a reversal is stated against, when measured.
REFERENCES = ("ncc:ref", "inductor:eager", "onnxruntime:DISABLE_ALL")


def _latencies(e, R, ids, names):
    rows, lat = {}, {cid: {} for cid in ids}
    for n in names:
        ms = rr.model(e, n, e["depth"])
        for cid in ids:
            r = R.point(e, ms, e["batch"], cid)
            rows[(n, cid)] = r
            if rr.rankable(r):
                lat[cid][n] = rr.med(r)
    return rows, lat


def reversals(R, rows, lat, ids, refs):
    """[(compiler, reference, p, q, ratio under compiler, ratio under ref,
    real)] for every pair a compiler orders against a reference's order."""
    out = []
    for ref in refs:
        for c in ids:
            if c in refs:
                continue
            for p, q in metrics.inverted_pairs(lat[c], lat[ref]):
                rc = R.ratio(rows[(p, c)], rows[(q, c)])
                rb = R.ratio(rows[(p, ref)], rows[(q, ref)])
                real = not any(x is None or x.within_noise() for x in (rc, rb))
                out.append((c, ref, p, q, rc, rb, real))
    return out


def group_table(e, spec, R, names):
    """(markdown table, reversal lines) of one FLOP group."""
    ids = rr.compiler_ids(e, spec)
    mflops = e.get("mflops") or {}
    rows, lat = _latencies(e, R, ids, names)
    rk = {cid: metrics.ranks(lat[cid]) for cid in ids}
    body = []
    for n in names:
        cells = []
        for c in ids:
            r = rows[(n, c)]
            if not rr.valid(r):
                cells.append(rr.status_cell(r))
            elif n in rk[c]:
                cells.append("%s (#%d)" % (F.fms(r), rk[c][n]))
            else:
                cells.append("%s (not ranked)" % F.fms(r))
        body.append(["%s (%s)" % (short(n), F.fnum(mflops.get(n)))] + cells)
    base = spec["baseline"]
    body.append(["Kendall τ vs `%s`" % base] +
                [F.fnum(metrics.kendall_tau(lat[c], lat[base]), 2) for c in ids])
    refs = [c for c in REFERENCES if c in ids and lat[c]]
    lines = []
    for c, ref, p, q, rc, rb, real in reversals(R, rows, lat, ids, refs):
        lines.append("- `%s` reverses %s/%s against `%s`: %s under `%s`, %s under `%s`%s"
                     % (c, short(p), short(q), ref, F.fratio(rc, verdict=False), c,
                        F.fratio(rb, verdict=False), ref,
                        "" if real else " (within noise: not a real reversal)"))
    hdr = ["model (MFLOP/sample)"] + ids
    return F.table(hdr, body), lines


def section_ranking(e, spec, R, P):
    fg = e.get("flop_groups") or {"groups": [], "alone": list(e["blocks"])}
    out = ["Real architectures grouped by FLOPs: MFLOP per sample at batch 1 as ncc counts "
           "them, a group holding models within %s× of its smallest. Median latency [95%% "
           "CI] and rank (#1 = fastest) within the group, batch %d; noisy rows are shown, "
           "not ranked. Kendall τ: 1 = the baseline's order, −1 = reversed. A reversal is "
           "stated against each uncompiled reference measured (%s) and counts only when "
           "neither ratio's CI holds 1."
           % (F.fnum(e.get("match")), e["batch"],
              ", ".join("`%s`" % c for c in REFERENCES))]
    if not fg["groups"]:
        out.append("No two models of this experiment are within %s× in FLOPs: nothing to "
                   "rank." % F.fnum(e.get("match")))
    for i, names in enumerate(fg["groups"]):
        table, lines = group_table(e, spec, R, names)
        out.append("**Group %d** (%s):\n\n%s" % (i + 1, ", ".join(map(short, names)), table))
        out.append("Order reversals in group %d:\n\n%s" % (i + 1, "\n".join(lines) or "- none"))
    if fg["alone"]:
        table, _ = group_table(e, spec, R, fg["alone"])
        out.append("Models with no FLOP match (shown, ranked among themselves only for "
                   "reference): %s\n\n%s" % (", ".join(map(short, fg["alone"])), table))
    return out


def title(e, b):
    """How the other sections name block b of experiment e: a real model by
    its short name."""
    return short(b) if e.get("real") else b


def sizes(e, **parts):
    """"depth 2, width 32, batch 1" — a real model has no depth or width."""
    order = ("depth", "width", "batch")
    return ", ".join("%s %d" % (k, parts[k]) for k in order if k in parts and not (
        e.get("real") and k in ("depth", "width")))


SECTIONS = {"ranking": section_ranking}
