"""bench/harness/report_cost.py — the report sections of E4 fusion, E5 amortization,
E6 dynamic shapes, E7 pass ablation.

Speed-ups and ablation deltas carry their 95% CI and a "(within noise)"
verdict; break-even N* is given against the uncompiled framework (ncc:ref,
and torch eager `inductor:eager` where it was measured) and against the
fastest vendor at the same point; an ablation whose graph is identical to
the baseline's (row graph_same) reads "no change" whatever its timing.
"""
import math

from . import metrics
from . import report_fmt as F
from . import report_models as RM
from . import report_rows as rr
from . import report_plots
from . import spec as specmod


def _fusion_models(e):
    models = [("eltwise k=%d" % k, rr.model(e, "eltwise", e["depth"]).with_(k=k))
              for k in e["eltwise_k"]]
    models += [(b, rr.model(e, b, e["depth"])) for b in e["blocks"] if b != "eltwise"]
    return models


def _pair_name(a, b):
    fa, fb = a.split(":")[0], b.split(":")[0]
    if fa == fb:
        return "%s: %s vs %s" % (fa, a.split(":", 1)[1], b.split(":", 1)[1])
    return "%s vs %s" % (a, b)


def section_fusion(e, spec, R, P):
    pairs = e["compare"]
    hdr = ["model"] + ["`%s` vs `%s`" % (a, b) for a, b in pairs]
    names = [_pair_name(a, b) for a, b in pairs]
    rows, values, errors, groups = [], {}, {}, []
    for label, ms in _fusion_models(e):
        groups.append(label)
        cells = []
        for (fast, slow), n in zip(pairs, names):
            rf, rs = R.point(e, ms, e["batch"], fast), R.point(e, ms, e["batch"], slow)
            if rr.valid(rf) and rr.valid(rs):
                s = rr.speedup(R, rs, rf)
                values[(label, n)] = s.value
                if s.has_ci:
                    errors[(label, n)] = (s.lo, s.hi)
                cells.append("%s (%s → %s ms)%s" % (F.fratio(s), F.fnum(rr.med(rs)),
                                                    F.fnum(rr.med(rf)),
                                                    F.noisy_mark(rf) or F.noisy_mark(rs)))
            else:
                bad = rf if not rr.valid(rf) else rs
                why = (bad or {}).get("reason") or rr.status_cell(bad)
                cells.append("%s: %s" % (rr.status_cell(bad), why[:80]))
        rows.append([label] + cells)
    out = ["Speed-up of the first configuration over the second, t(second) / t(first), with "
           "its 95%% CI (depth %d, batch %d). Above 1 the first is faster: for -O2 vs "
           "fusion off that is what fusion buys; \"(within noise)\" means no measurable "
           "difference.\n\n%s" % (e["depth"], e["batch"], F.table(hdr, rows))]
    colors = {n: report_plots.FAMILY.get(a.split(":")[0]) for (a, _), n in zip(pairs, names)}
    out.append(P.bars("%s_fusion_speedups" % e["id"], groups, names, values,
                      "speed-up of first config over second (×)", hline=1.0, errors=errors,
                      colors=colors, title="%s: what fusion buys (depth %d, batch %d)"
                      % (e["id"], e["depth"], e["batch"])))
    return out


def _be_cell(R, r, rb):
    """N* of r against an uncompiled baseline rb, with its range."""
    if not rr.valid(rb):
        return rr.status_cell(rb)
    n = metrics.break_even(rr.comp(r), rr.med(rb), rr.med(r))
    if n is None:
        return "–"
    q = R.ratio(r, rb)  # t / t_base
    rng = metrics.break_even_range(rr.comp(r), rr.med(rb), q.lo, q.hi) if q and q.has_ci \
        else None
    s = "never (not faster)" if n == float("inf") else F.fnum(n)
    if rng and n != float("inf"):
        s += " [%s, %s]" % (F.fnum(rng[0]), F.fnum(rng[1]))
    if q and q.within_noise():
        s += " (within noise)"
    return s


def _vs_vendor_cell(R, r, rv):
    """When r's total cost (compile + N runs) beats the fastest vendor's."""
    if rv is None:
        return "no quiet vendor row"
    v = rr.cid_of(rv)
    n = metrics.break_even_vs(rr.comp(r), rr.med(r), rr.comp(rv), rr.med(rv))
    q = R.ratio(r, rv)
    noise = " (within noise)" if q and q.within_noise() else ""
    if n is None:
        return "–"
    kind, x = n
    runs = F.fnum(math.ceil(x)) if x not in (None, float("inf")) else "∞"
    what = {"always": "from the first run", "after": "after %s runs" % runs,
            "until": "only up to %s runs" % runs, "never": "never"}[kind]
    return "%s (`%s`)%s" % (what, v, noise)


def section_amortize(e, spec, R, P):
    base = spec["baseline"]
    ids = rr.compiler_ids(e, spec)
    frameworks = [base] + [u for u in rr.UNCOMPILED if u != base]
    rows, values, errors, groups = [], {}, {}, []
    any_eager = False
    for b in e["blocks"]:
        ms = rr.model(e, b, e["depth"])
        groups.append(b)
        by = {cid: R.point(e, ms, e["batch"], cid) for cid in ids + frameworks}
        fw = [u for u in frameworks if by.get(u) is not None]
        any_eager = any_eager or len(fw) > 1
        vendors = [c for c in ids if rr.is_vendor(c)]
        for cid in ids:
            if cid in rr.UNCOMPILED:
                continue
            r = by[cid]
            if not rr.valid(r):
                rows.append([RM.title(e, b), cid, rr.status_cell(r)] + ["–"] * 3 + [""] * 3)
                continue
            res = r["result"]
            best = rr.fastest([by[v] for v in vendors if v != cid])
            nb = metrics.break_even(rr.comp(r), rr.med(by[base]), rr.med(r)) \
                if rr.valid(by[base]) else None
            if nb is not None:
                values[(b, cid)] = nb
                q = R.ratio(r, by[base])
                rng = metrics.break_even_range(rr.comp(r), rr.med(by[base]), q.lo, q.hi) \
                    if q and q.has_ci else None
                if rng and rng[1] != float("inf"):
                    errors[(b, cid)] = rng
            rows.append([RM.title(e, b), cid, F.fnum(res.get("build_ms")),
                         F.fnum(res.get("first_run_ms")),
                         F.fms(r),
                         _be_cell(R, r, by[base]),
                         _be_cell(R, r, by[fw[1]]) if len(fw) > 1 else "not measured",
                         _vs_vendor_cell(R, r, best)])
    hdr = ["block", "compiler", "build ms", "first run ms", "median latency",
           "N* vs `%s`" % base,
           "N* vs `%s`" % (frameworks[1] if len(frameworks) > 1 else "eager"),
           "cheaper than the fastest vendor"]
    if not any_eager:  # no torch eager row anywhere: no column of "not measured"
        hdr = hdr[:6] + hdr[7:]
        rows = [r[:6] + r[7:] for r in rows]
    out = ["Break-even N* = compile / (t_framework − t): how many runs before compiling pays "
           "for itself against running the model uncompiled (`%s`, and torch eager "
           "`inductor:eager` when measured). Compile = build + first run, model to first "
           "result. The range comes from the CI of t / t_framework; \"never\" when the "
           "compiled code is not faster. Small N* is good. The last column compares total "
           "cost compile + N·t with the fastest vendor's at this point: \"after N runs\" "
           "(compiles slower, runs faster), \"only up to N runs\" (compiles faster, runs "
           "slower), \"from the first run\" or \"never\" (depth %d, batch %d).\n\n%s"
           % (base, e["depth"], e["batch"], F.table(hdr, rows))]
    out.append(P.bars("%s_break_even" % e["id"], groups, [c for c in ids if c != base], values,
                      "break-even runs N* vs %s" % base, logy=True, errors=errors,
                      title="%s: break-even N* vs %s (depth %d, batch %d)"
                      % (e["id"], base, e["depth"], e["batch"])))
    return out


def section_dynamic(e, spec, R, P):
    hdr = ["block", "compiler", "symbolic total ms", "static total ms", "reduction",
           "steady slowdown", "compiles (sym/static)"]
    rows, panels = [], []
    for b in e["blocks"]:
        ms = rr.model(e, b, e["depth"])
        series = {}
        for cid in rr.compiler_ids(e, spec, with_baseline=False):
            rs, rt = R.sequence(e, ms, cid, "symbolic"), R.sequence(e, ms, cid, "static")
            for mode, r in (("symbolic", rs), ("static", rt)):
                if rr.valid(r):
                    series["%s (%s)" % (cid, mode)] = [
                        (i + 1, s["cumulative_ms"]) for i, s in enumerate(r["result"]["steps"])]
            if rr.valid(rs) and rr.valid(rt):
                red = metrics.dynamic_reduction(rs["result"]["total_ms"], rt["result"]["total_ms"])
                slow = metrics.steady_slowdown([s["steady_ms"] for s in rs["result"]["steps"]],
                                               [s["steady_ms"] for s in rt["result"]["steps"]])
                ncomp = "%d/%d" % (sum(1 for s in rs["result"]["steps"] if s["compile_ms"] > 0),
                                   sum(1 for s in rt["result"]["steps"] if s["compile_ms"] > 0))
                rows.append([RM.title(e, b), cid, F.fnum(rs["result"]["total_ms"]),
                             F.fnum(rt["result"]["total_ms"]),
                             "%.1f%%" % (100 * red) if red is not None else "–",
                             F.fx(slow), ncomp])
            else:
                total = lambda r: F.fnum(r["result"]["total_ms"])  # noqa: E731
                rows.append([RM.title(e, b), cid, F.cell(rs, total), F.cell(rt, total), "–", "–",
                             "–"])
        panels.append((RM.title(e, b), series))
    out = ["Batch sequence %s, %d runs per shape. Each shape costs compile (if this mode "
           "compiles there) + first run at the new shape + (runs − 1) × steady latency. "
           "Reduction = 1 − symbolic/static total: above 0 the symbolic-batch compile is "
           "cheaper over the whole sequence (good). Steady slowdown = mean symbolic/static "
           "steady latency: 1× = no cost for being shape-generic, above 1 the price paid. "
           "Single sequences, no CI.\n\n%s" % (e["sequence"], e["runs_per_shape"],
                                              F.table(hdr, rows))]
    out.append(P.lines("%s_cumulative_cost" % e["id"], panels, "batch size, in sequence order",
                       "cumulative cost (ms)", logy=True, xticks=e["sequence"],
                       title="%s: cumulative cost over the batch sequence %s"
                       % (e["id"], e["sequence"])))
    return out


def section_ablation(e, spec, R, P):
    out = []
    groups, values, errors, series = [], {}, {}, ["Δ latency % (pass off)"]
    colors = {series[0]: report_plots.FAMILY["ncc"]}
    for b in e["blocks"]:
        ms = rr.model(e, b, e["depth"])
        base = R.point(e, ms, e["batch"], "ncc:" + e["base"])
        hdr = ["pass off", "median latency", "Δ latency [95% CI]", "kernels", "MB moved",
               "Δ compile ms", "pass ms"]
        rows = [["(none: `%s`)" % e["base"], F.cell(base, F.fms), "",
                 F.cell(base, lambda r: r["result"].get("kernels")),
                 F.cell(base, lambda r: F.fnum((r["result"].get("graph") or {}).get("mb_moved"))),
                 F.cell(base, lambda r: "%s (build)" % F.fnum(r["result"].get("build_ms"))), ""]]
        pass_ms = (base["result"].get("pass_ms") or {}) if rr.valid(base) else {}
        for p in e.get("passes", []):
            r = R.point(e, ms, e["batch"], "ncc:" + specmod.ablation_config(e, p))
            also = (e.get("also_disable") or {}).get(p)
            name = "%s (+ %s)" % (p, ", ".join(also)) if also else p
            if rr.graph_same(r):
                rows.append([name, F.cell(r, F.fms) if rr.valid(r) else "not timed",
                             "no change (graph identical to the baseline's)", "+0", "=", "–",
                             F.fnum(pass_ms.get(p))])
                continue
            if rr.valid(r) and rr.valid(base):
                q = R.ratio(r, base)  # t_off / t_base
                dk, _ = metrics.delta(base["result"].get("kernels"), r["result"].get("kernels"))
                gb, gr = base["result"].get("graph") or {}, r["result"].get("graph") or {}
                dmb, _ = metrics.delta(gb.get("mb_moved"), gr.get("mb_moved"))
                dc, _ = metrics.delta(base["result"].get("build_ms"), r["result"].get("build_ms"))
                rows.append([name, F.fms(r), F.fdelta(q),
                             "%+d" % dk if dk is not None else "–",
                             "%s (%+.3g)" % (F.fnum(gr.get("mb_moved")), dmb) if dmb is not None
                             else "–", "%+.3g" % dc if dc is not None else "–",
                             F.fnum(pass_ms.get(p))])
                label = "%s: %s" % (b, name)
                groups.append(label)
                if q is not None:
                    values[(label, series[0])] = 100 * (q.value - 1)
                    if q.has_ci:
                        errors[(label, series[0])] = (100 * (q.lo - 1), 100 * (q.hi - 1))
            else:
                rows.append([name, rr.status_cell(r if not rr.valid(r) else base),
                             "–", "–", "–", "–", F.fnum(pass_ms.get(p))])
        out.append("**%s** (%s): each pass left out of `ncc %s`, one "
                   "at a time. Δ latency = t(pass off) / t(all passes) − 1 with its 95%% CI: "
                   "positive means the pass earns that much (good), \"(within noise)\" that "
                   "no effect is measurable; \"no change\" when the graph without the pass is "
                   "identical to the baseline's (nothing to time). Δ compile compares single "
                   "cold compiles (noisy); pass ms is the pass's own time in the full pipeline "
                   "(--time-passes).\n\n%s"
                   % (RM.title(e, b), RM.sizes(e, depth=e["depth"], width=e["model"]["width"],
                                               batch=e["batch"]), e["base"],
                      F.table(hdr, rows)))
    if not e.get("passes"):
        out.append("(no passes run at this level)")
    out.append(P.bars("%s_ablation" % e["id"], groups, series, values,
                      "Δ latency with the pass off (%)", errors=errors, colors=colors,
                      hline=0.0, title="%s: pass ablation, ncc:%s (depth %d, batch %d)"
                      % (e["id"], e["base"], e["depth"], e["batch"])))
    return out
