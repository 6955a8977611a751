"""bench/harness/report.py — DIR/report.md and DIR/*.png from the rows.

Each experiment's tables are rebuilt by expanding the resolved spec again
and looking rows up by measurement key, so a report of merged shards is
identical to a report of one run.  Only valid rows (output matched ncc ref)
enter a number; other rows show their status in the cell, and are listed
with their reasons under "Flagged rows" and "Skipped".  Without matplotlib
the report is written without plots and says so.
"""
import os

from . import metrics
from . import spec as specmod

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    HAVE_MPL = True
except Exception:  # ImportError, or a broken backend
    plt = None
    HAVE_MPL = False

STATUS_CELL = {"mismatch": "MISMATCH", "skipped": "skipped", "unsupported": "unsupported",
               "error": "error", "timeout": "timeout"}
KIND_TITLE = {"depth": "depth: do gains grow with repeated blocks?",
              "batch": "batch: how much friction is left as batch grows?",
              "ranking": "ranking: does compiling reorder the archetypes (equal FLOPs)?",
              "fusion": "fusion: what does fusion buy?",
              "amortize": "amortization: how many runs pay for compiling?",
              "dynamic": "dynamic shapes: symbolic batch vs a compile per shape",
              "ablation": "pass ablation: which pass earns what?"}


# --------------------------------------------------------------------------
# Formatting.

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


def fpct(v):
    return "–" if v is None else "%+.1f%%" % (100 * v)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Row access.

class Rows:
    def __init__(self, spec, rows):
        self.spec = spec
        self.by_key = {r["key"]: r for r in rows}

    def get(self, m):
        return self.by_key.get(specmod.measurement_key(m))

    def point(self, e, ms, batch, cid):
        name, config = specmod.parse_compiler_id(cid)
        return self.get(specmod._point(self.spec, e, ms, batch, name, config))

    def sequence(self, e, ms, cid, mode):
        name, config = specmod.parse_compiler_id(cid)
        return self.get(specmod._sequence(self.spec, e, ms, name, config, mode))


def valid(row):
    return row is not None and row.get("valid") and row.get("result") is not None


def med(row):
    return row["result"]["latency_ms"]["median"] if valid(row) else None


def comp(row):
    return row["result"]["compile_ms"] if valid(row) else None


def status_cell(row):
    if row is None:
        return "not run"
    return STATUS_CELL.get(row["status"], row["status"])


def cell(row, fmt):
    """fmt(row) when the row is valid, else its status."""
    return fmt(row) if valid(row) else status_cell(row)


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


def _model(e, block, depth, width=None):
    return specmod._model(block, e, depth, width)


# --------------------------------------------------------------------------
# Plots.

class Plots:
    def __init__(self, out_dir, enabled):
        self.out_dir, self.enabled = out_dir, enabled and HAVE_MPL
        self.files = []

    def lines(self, name, panels, xlabel, ylabel, logx=False, logy=False, title=None,
              hline=None, xticks=None):
        """panels: [(panel title, {series: [(x, y)]})] -> one PNG with one
        legend; a series named "X (static)" is dashed in X's colour.
        Returns the markdown image line, or '' when there is nothing to draw."""
        panels = [(t, {s: pts for s, pts in series.items() if pts}) for t, series in panels]
        panels = [(t, s) for t, s in panels if s]
        if not self.enabled or not panels:
            return ""
        n = len(panels)
        fig, axes = plt.subplots(1, n, figsize=(3.6 * n + 2.2, 3.4), squeeze=False)
        handles = {}
        for ax, (ptitle, series) in zip(axes[0], panels):
            for s, pts in series.items():
                pts = sorted(pts)
                base = s.rsplit(" (", 1)[0]
                (h,) = ax.plot([p[0] for p in pts], [p[1] for p in pts],
                               "--" if s.endswith("(static)") else "-", marker="o",
                               markersize=3, color=self._color(base), label=s)
                handles.setdefault(s, h)
            if hline is not None:
                ax.axhline(hline, color="grey", linewidth=0.8)
            ax.set_title(ptitle, fontsize=9)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if logx:
                ax.set_xscale("log", base=2)
                xs = sorted({p[0] for pts in series.values() for p in pts})
                ax.set_xticks(xs)
                ax.set_xticklabels([str(x) for x in xs], fontsize=7)
                ax.minorticks_off()
            if logy:
                ax.set_yscale("log")
            if xticks:
                ax.set_xticks(list(range(1, len(xticks) + 1)))
                ax.set_xticklabels([str(t) for t in xticks], fontsize=7)
            ax.grid(True, alpha=0.3)
        fig.legend(list(handles.values()), list(handles), loc="center right", fontsize=6,
                   frameon=False)
        if title:
            fig.suptitle(title, fontsize=10)
        fig.tight_layout(rect=(0, 0, 1 - 2.1 / (3.6 * n + 2.2), 1))
        return self._save(fig, name, layout=False)

    def _color(self, key):
        if not hasattr(self, "_colors"):
            self._colors = {}
        if key not in self._colors:
            self._colors[key] = "C%d" % (len(self._colors) % 10)
        return self._colors[key]

    def bars(self, name, groups, series_names, values, ylabel, logy=False, title=None,
             hline=None):
        """values[(group, series)] -> grouped bar chart."""
        if not self.enabled or not groups or not any(v is not None and v != float("inf")
                                                     for v in values.values()):
            return ""
        import numpy as np
        series_names = [s for s in series_names
                        if any(values.get((g, s)) not in (None, float("inf")) for g in groups)]
        fig, ax = plt.subplots(figsize=(max(5.0, 1.0 + 0.9 * len(groups) *
                                            max(1, len(series_names)) * 0.4), 3.8))
        w = 0.8 / max(1, len(series_names))
        xs = np.arange(len(groups))
        if hline is not None:
            ax.axhline(hline, color="grey", linewidth=0.8)
        for i, s in enumerate(series_names):
            ys = [values.get((g, s)) for g in groups]
            ys = [y if (y is not None and y != float("inf")) else 0.0 for y in ys]
            ax.bar(xs + i * w - 0.4 + w / 2, ys, w, label=s)
        ax.set_xticks(xs)
        ax.set_xticklabels(groups, rotation=20, ha="right", fontsize=7)
        ax.set_ylabel(ylabel)
        if logy:
            ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=6)
        if title:
            ax.set_title(title, fontsize=10)
        return self._save(fig, name)

    def _save(self, fig, name, layout=True):
        if layout:
            fig.tight_layout()
        path = os.path.join(self.out_dir, name + ".png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        self.files.append(path)
        return "![%s](%s.png)" % (name, name)


# --------------------------------------------------------------------------
# The experiments.

def _baseline_note(spec):
    return "Baseline for speed-ups: `%s`." % spec["baseline"]


def section_depth(e, spec, R, P):
    out = []
    base = spec["baseline"]
    ids = compiler_ids(e, spec)
    sp_panels, c_panels = [], []
    for b in e["blocks"]:
        hdr = ["compiler"] + ["d=%d" % d for d in e["depths"]]
        rows, crows = [], []
        sp_series, c_series = {}, {}
        base_t = {d: med(R.point(e, _model(e, b, d), e["batch"], base)) for d in e["depths"]}
        for cid in ids:
            rs = {d: R.point(e, _model(e, b, d), e["batch"], cid) for d in e["depths"]}
            sps = {d: metrics.speedup(base_t[d], med(rs[d])) for d in e["depths"]}
            g = metrics.depth_gain(sps)
            cells = []
            for d in e["depths"]:
                if not valid(rs[d]):
                    cells.append(status_cell(rs[d]))
                elif cid == base:
                    cells.append("%s ms" % fnum(med(rs[d])))
                else:
                    cells.append("%s ms, %s (G %s)" % (fnum(med(rs[d])), fx(sps[d]),
                                                       fnum(g.get(d))))
            rows.append([cid + (" (baseline)" if cid == base else "")] + cells)
            crows.append([cid] + [cell(rs[d], lambda r: fnum(comp(r))) for d in e["depths"]])
            if cid != base:
                sp_series[cid] = [(d, s) for d, s in sps.items() if s]
            c_series[cid] = [(d, comp(r)) for d, r in rs.items() if valid(r)]
        out.append("**%s** (width %d, batch %d): median latency, speed-up vs baseline, "
                   "depth gain G(d)\n\n%s" % (b, e["model"]["width"], e["batch"],
                                               table(hdr, rows)))
        out.append("Compile time (ms, model to first result):\n\n" + table(hdr, crows))
        sp_panels.append((b, sp_series))
        c_panels.append((b, c_series))
    out.append(P.lines("%s_speedup_vs_depth" % e["id"], sp_panels, "depth", "speed-up vs baseline",
                       logx=True, title="%s: speed-up vs depth" % e["id"], hline=1.0))
    out.append(P.lines("%s_compile_vs_depth" % e["id"], c_panels, "depth", "compile ms",
                       logx=True, logy=True, title="%s: compile time vs depth" % e["id"]))
    return out


def section_batch(e, spec, R, P):
    out = []
    base = spec["baseline"]
    ids = compiler_ids(e, spec)
    thr_panels, fr_panels = [], []
    for b in e["blocks"]:
        ms = _model(e, b, e["depth"])
        hdr = ["compiler"] + ["b=%d" % x for x in e["batches"]]

        def thr_of(cid):
            rs = {x: R.point(e, ms, x, cid) for x in e["batches"]}
            return rs, {x: r["result"]["throughput_per_s"] for x, r in rs.items() if valid(r)}

        _, base_thr = thr_of(base)
        base_eff = metrics.batch_efficiency(base_thr)
        trows, erows = [], []
        thr_series, fr_series = {}, {}
        for cid in ids:
            rs, thr = thr_of(cid)
            eff = metrics.batch_efficiency(thr)
            fr = metrics.friction(eff)
            mu = metrics.mitigation(eff, base_eff)
            trows.append([cid] + [cell(rs[x], lambda r: fnum(r["result"]["throughput_per_s"]))
                                  for x in e["batches"]])
            erows.append([cid] + [
                "E %s · Φ %s · μ %s" % (fnum(eff.get(x), 2), fnum(fr.get(x), 2),
                                        fnum(mu.get(x), 2))
                if x in eff else status_cell(rs[x]) for x in e["batches"]])
            thr_series[cid] = sorted(thr.items())
            fr_series[cid] = sorted(fr.items())
        out.append("**%s** (depth %d, width %d): throughput (samples/s)\n\n%s"
                   % (b, e["depth"], e["model"]["width"], table(hdr, trows)))
        out.append("Batch efficiency E(b), friction Φ(b) = 1 − E(b), mitigation μ(b) = "
                   "E(b) / E_baseline(b):\n\n" + table(hdr, erows))
        thr_panels.append((b, thr_series))
        fr_panels.append((b, fr_series))
    out.append(P.lines("%s_throughput_vs_batch" % e["id"], thr_panels, "batch", "samples/s",
                       logx=True, logy=True, title="%s: throughput vs batch" % e["id"]))
    out.append(P.lines("%s_friction_vs_batch" % e["id"], fr_panels, "batch", "friction Φ(b)",
                       logx=True, title="%s: friction vs batch" % e["id"]))
    return out


def section_ranking(e, spec, R, P):
    ids = compiler_ids(e, spec)
    widths = e.get("widths") or {}
    lat = {cid: {} for cid in ids}
    rowsets = {}
    for b in e["blocks"]:
        ms = _model(e, b, e["depth"], widths.get(b))
        for cid in ids:
            r = R.point(e, ms, e["batch"], cid)
            rowsets[(b, cid)] = r
            if valid(r):
                lat[cid][b] = med(r)
    rk = {cid: metrics.ranks(lat[cid]) for cid in ids}
    hdr = ["block (width, MFLOP/sample)"] + ids
    rows = []
    for b in e["blocks"]:
        ms = _model(e, b, e["depth"], widths.get(b))
        any_row = next((rowsets[(b, c)] for c in ids if valid(rowsets[(b, c)])), None)
        mf = any_row["result"].get("model_mflop") / e["batch"] if any_row and \
            any_row["result"].get("model_mflop") else None
        rows.append(["%s (%d, %s)" % (b, ms.width, fnum(mf))] +
                    [cell(rowsets[(b, c)], lambda r, c=c, b=b: "%s ms (#%d)" % (
                        fnum(med(r)), rk[c][b])) for c in ids])
    base = spec["baseline"]
    tau = ["Kendall τ vs baseline"] + [fnum(metrics.kendall_tau(lat[c], lat[base]), 2)
                                       for c in ids]
    rows.append(tau)
    out = ["Median latency and rank (#1 = fastest) of each block%s, depth %d, batch %d:\n\n%s"
           % (" at ≈%s MFLOP/sample" % fnum(e["mflop"]) if e.get("mflop") else "",
              e["depth"], e["batch"], table(hdr, rows))]
    inv = []
    for c in ids:
        if c == base:
            continue
        pairs = metrics.inverted_pairs(lat[c], lat[base])
        if pairs:
            inv.append("- `%s` reverses %s" % (c, ", ".join("%s/%s" % p for p in pairs)))
    out.append("Order reversals relative to the baseline:\n\n" + ("\n".join(inv) or "- none"))
    return out


def _fusion_models(e):
    models = [("eltwise k=%d" % k, _model(e, "eltwise", e["depth"]).with_(k=k))
              for k in e["eltwise_k"]]
    models += [(b, _model(e, b, e["depth"])) for b in e["blocks"] if b != "eltwise"]
    return models


def section_fusion(e, spec, R, P):
    pairs = e["compare"]
    hdr = ["model"] + ["`%s` vs `%s`" % (a, b) for a, b in pairs]
    rows, values = [], {}
    names = ["%s vs %s" % (a.split(":", 1)[1] if a.split(":")[0] == b.split(":")[0] else a,
                           b.split(":", 1)[1] if a.split(":")[0] == b.split(":")[0] else b)
             for a, b in pairs]
    names = ["%s: %s" % (a.split(":")[0], n) for (a, _), n in zip(pairs, names)]
    groups = []
    for label, ms in _fusion_models(e):
        groups.append(label)
        cells = []
        for (fast, slow), n in zip(pairs, names):
            rf, rs = R.point(e, ms, e["batch"], fast), R.point(e, ms, e["batch"], slow)
            if valid(rf) and valid(rs):
                s = metrics.speedup(med(rs), med(rf))
                values[(label, n)] = s
                cells.append("%s (%s → %s ms)" % (fx(s), fnum(med(rs)), fnum(med(rf))))
            else:
                bad = rf if not valid(rf) else rs
                why = (bad or {}).get("reason") or status_cell(bad)
                cells.append("%s: %s" % (status_cell(bad), why[:80]))
        rows.append([label] + cells)
    out = ["Speed-up of the first configuration over the second (median latency, depth %d, "
           "batch %d):\n\n%s" % (e["depth"], e["batch"], table(hdr, rows))]
    out.append(P.bars("%s_fusion_speedups" % e["id"], groups, names, values, "speed-up",
                      title="%s: speed-ups" % e["id"], hline=1.0))
    return out


def section_amortize(e, spec, R, P):
    base = spec["baseline"]
    ids = compiler_ids(e, spec)
    hdr = ["block", "compiler", "compile ms", "median ms", "baseline ms", "N* (runs)"]
    rows, values = [], {}
    groups = []
    for b in e["blocks"]:
        ms = _model(e, b, e["depth"])
        rb = R.point(e, ms, e["batch"], base)
        groups.append(b)
        for cid in ids:
            if cid == base:
                continue
            r = R.point(e, ms, e["batch"], cid)
            if valid(r) and valid(rb):
                n = metrics.break_even(comp(r), med(rb), med(r))
                values[(b, cid)] = n
                rows.append([b, cid, fnum(comp(r)), fnum(med(r)), fnum(med(rb)),
                             "never (not faster)" if n == float("inf") else fnum(n)])
            else:
                bad = r if not valid(r) else rb
                rows.append([b, cid, "–", "–", "–", status_cell(bad)])
    out = ["N* = compile time / (t_baseline − t_compiled): runs needed before compiling pays "
           "for itself. %s Compile time is model to first result for every compiler "
           "(depth %d, batch %d).\n\n%s" % (_baseline_note(spec), e["depth"], e["batch"],
                                              table(hdr, rows))]
    out.append(P.bars("%s_break_even" % e["id"], groups, [c for c in ids if c != base], values,
                      "break-even runs N*", logy=True, title="%s: break-even N*" % e["id"]))
    return out


def section_dynamic(e, spec, R, P):
    hdr = ["block", "compiler", "symbolic total ms", "static total ms", "reduction",
           "steady slowdown", "compiles (sym/static)"]
    rows, panels = [], []
    for b in e["blocks"]:
        ms = _model(e, b, e["depth"])
        series = {}
        for cid in compiler_ids(e, spec, with_baseline=False):
            rs, rt = R.sequence(e, ms, cid, "symbolic"), R.sequence(e, ms, cid, "static")
            for mode, r in (("symbolic", rs), ("static", rt)):
                if valid(r):
                    series["%s (%s)" % (cid, mode)] = [
                        (i + 1, s["cumulative_ms"]) for i, s in enumerate(r["result"]["steps"])]
            if valid(rs) and valid(rt):
                red = metrics.dynamic_reduction(rs["result"]["total_ms"], rt["result"]["total_ms"])
                slow = metrics.steady_slowdown([s["steady_ms"] for s in rs["result"]["steps"]],
                                               [s["steady_ms"] for s in rt["result"]["steps"]])
                ncomp = "%d/%d" % (sum(1 for s in rs["result"]["steps"] if s["compile_ms"] > 0),
                                   sum(1 for s in rt["result"]["steps"] if s["compile_ms"] > 0))
                rows.append([b, cid, fnum(rs["result"]["total_ms"]), fnum(rt["result"]["total_ms"]),
                             "%.1f%%" % (100 * red) if red is not None else "–",
                             fx(slow), ncomp])
            else:
                total = lambda r: fnum(r["result"]["total_ms"])  # noqa: E731
                rows.append([b, cid, cell(rs, total), cell(rt, total), "–", "–", "–"])
        panels.append((b, series))
    out = ["Batch sequence %s, %d runs per shape. Each shape costs compile (if this mode "
           "compiles there) + first run at the new shape + (runs − 1) × steady latency; "
           "reduction = 1 − symbolic/static total; steady slowdown = mean symbolic/static "
           "steady latency.\n\n%s" % (e["sequence"], e["runs_per_shape"], table(hdr, rows))]
    out.append(P.lines("%s_cumulative_cost" % e["id"], panels, "batch size, in sequence order",
                       "cumulative ms", logy=True, xticks=e["sequence"],
                       title="%s: cumulative cost over the batch sequence" % e["id"]))
    return out


def section_ablation(e, spec, R, P):
    out = []
    groups, values, series = [], {}, ["Δ latency %"]
    for b in e["blocks"]:
        ms = _model(e, b, e["depth"])
        base = R.point(e, ms, e["batch"], "ncc:" + e["base"])
        hdr = ["pass off", "median ms", "Δ latency", "kernels", "MB moved", "Δ compile ms",
               "pass ms"]
        rows = [["(none: `%s`)" % e["base"], cell(base, lambda r: fnum(med(r))), "",
                 cell(base, lambda r: r["result"].get("kernels")),
                 cell(base, lambda r: fnum((r["result"].get("graph") or {}).get("mb_moved"))),
                 cell(base, lambda r: "%s (build)" % fnum(r["result"].get("build_ms"))), ""]]
        pass_ms = (base["result"].get("pass_ms") or {}) if valid(base) else {}
        for p in e.get("passes", []):
            r = R.point(e, ms, e["batch"], "ncc:" + specmod.ablation_config(e, p))
            also = (e.get("also_disable") or {}).get(p)
            name = "%s (+ %s)" % (p, ", ".join(also)) if also else p
            if valid(r) and valid(base):
                _, rel = metrics.delta(med(base), med(r))
                dk, _ = metrics.delta(base["result"].get("kernels"), r["result"].get("kernels"))
                gb, gr = base["result"].get("graph") or {}, r["result"].get("graph") or {}
                dmb, _ = metrics.delta(gb.get("mb_moved"), gr.get("mb_moved"))
                dc, _ = metrics.delta(base["result"].get("build_ms"), r["result"].get("build_ms"))
                rows.append([name, fnum(med(r)), fpct(rel), "%+d" % dk if dk is not None else "–",
                             "%s (%+.3g)" % (fnum(gr.get("mb_moved")), dmb) if dmb is not None
                             else "–", "%+.3g" % dc if dc is not None else "–",
                             fnum(pass_ms.get(p))])
                label = "%s: %s" % (b, name)
                groups.append(label)
                values[(label, series[0])] = 100 * rel if rel is not None else None
            else:
                rows.append([name, status_cell(r if not valid(r) else base),
                             "–", "–", "–", "–", fnum(pass_ms.get(p))])
        out.append("**%s** (depth %d, width %d, batch %d): each pass left out of `ncc %s`, one "
                   "at a time. Δ compile compares single cold compiles (noisy); pass ms is the "
                   "pass's own time in the full pipeline (--time-passes).\n\n%s"
                   % (b, e["depth"], e["model"]["width"], e["batch"], e["base"],
                      table(hdr, rows)))
    if not e.get("passes"):
        out.append("(no passes run at this level)")
    out.append(P.bars("%s_ablation" % e["id"], groups, series, values, "Δ latency % (pass off)",
                      title="%s: pass ablation" % e["id"]))
    return out


SECTIONS = {"depth": section_depth, "batch": section_batch, "ranking": section_ranking,
            "fusion": section_fusion, "amortize": section_amortize, "dynamic": section_dynamic,
            "ablation": section_ablation}


# --------------------------------------------------------------------------
# Summary, flagged rows, environment.

def _baseline_row(R, row):
    m = dict(row["config"])
    name, config = specmod.parse_compiler_id(R.spec["baseline"])
    m.update(compiler=name, config=config, shape_mode="default")
    return R.get(m)


def summary(spec, rows, R):
    """Per compiler configuration: row counts by status, geometric-mean
    speed-up vs the baseline over the points both measured, median compile."""
    by = {}
    for r in rows:
        c = r["config"]
        cid = specmod.compiler_id(c["compiler"], c["config"])
        s = by.setdefault(cid, {"n": 0, "status": {}, "speedups": [], "compile": []})
        s["n"] += 1
        s["status"][r["status"]] = s["status"].get(r["status"], 0) + 1
        if c["kind"] == "point" and valid(r) and c["shape_mode"] == "default":
            s["compile"].append(comp(r))
            rb = _baseline_row(R, r)
            if valid(rb):
                s["speedups"].append(metrics.speedup(med(rb), med(r)))
    hdr = ["compiler", "rows", "ok", "mismatch", "skipped/unsupported", "error/timeout",
           "geomean speed-up vs baseline", "median compile ms"]
    out = []
    for cid in sorted(by):
        s = by[cid]
        st = s["status"]
        cs = sorted(s["compile"])
        out.append([cid, s["n"], st.get("ok", 0), st.get("mismatch", 0),
                    st.get("skipped", 0) + st.get("unsupported", 0),
                    st.get("error", 0) + st.get("timeout", 0),
                    "%s (%d pts)" % (fx(metrics.geomean(s["speedups"])), len(s["speedups"]))
                    if s["speedups"] else "–",
                    fnum(cs[len(cs) // 2]) if cs else "–"])
    return table(hdr, out)


def _row_label(r):
    c, md = r["config"], r["config"]["model"]
    shape = "b%d" % c["batch"] if c["kind"] == "point" else "seq %s (%s)" % (
        c["sequence"], c["shape_mode"])
    return "%s d%d w%d %s, `%s:%s`" % (md["block"], md["depth"], md["width"], shape,
                                        c["compiler"], c["config"])


def flagged(rows):
    bad = [r for r in rows if r["status"] in ("mismatch", "error", "timeout", "unsupported")]
    if not bad:
        return "None: every measured output matched ncc ref."
    lines = ["- **%s** %s: %s" % (r["status"], _row_label(r), (r.get("reason") or "")[:300])
             for r in bad[:200]]
    if len(bad) > 200:
        lines.append("- … and %d more (see results.jsonl)" % (len(bad) - 200))
    return "\n".join(lines)


def skipped(rows):
    groups = {}
    for r in rows:
        if r["status"] != "skipped":
            continue
        k = (r["config"]["compiler"], r.get("reason") or "", r.get("hint") or "")
        groups[k] = groups.get(k, 0) + 1
    if not groups:
        return "None."
    return table(["compiler", "rows", "reason", "install"],
                 [[c, n, reason, "`%s`" % hint if hint else ""]
                  for (c, reason, hint), n in sorted(groups.items())])


def environment(rows):
    envs = {}
    for r in rows:
        env = r.get("env") or {}
        k = (env.get("hostname"), env.get("cpu_model"), (env.get("ncc") or {}).get("commit"))
        envs.setdefault(k, env)
    if not envs:
        return "No rows."
    out = []
    for env in envs.values():
        ncc = env.get("ncc") or {}
        build = ncc.get("build") or {}
        comps = ", ".join("%s %s" % (k, v) for k, v in sorted((env.get("compilers") or {}).items())
                          if v)
        out.append("- host `%s`: %s, %s logical cores (%s physical), %s thread(s)%s; %s; "
                   "Python %s\n- ncc: `%s` (%s), commit %s%s, build %s%s\n- vendors: %s" % (
                       env.get("hostname"), env.get("cpu_model"), env.get("cores"),
                       env.get("physical_cores"), env.get("threads"),
                       ", pinned to CPU %s" % env["pinned_cpus"] if env.get("pinned_cpus")
                       else "", env.get("os"), env.get("python"), ncc.get("path"),
                       ncc.get("version"), (ncc.get("commit") or "?")[:12],
                       " (dirty tree)" if ncc.get("dirty") else "",
                       build.get("build_type") or "?",
                       " **with sanitizers: times not representative**"
                       if str(build.get("sanitize", "")).upper() in ("ON", "1", "TRUE") else "",
                       comps or "none installed"))
    if len(envs) > 1:
        out.insert(0, "**%d different environments** among the rows:" % len(envs))
    return "\n".join(out)


def write(out_dir, spec, rows, plots=True, notes=()):
    """Write out_dir/report.md (and plots); returns its path."""
    R = Rows(spec, rows)
    P = Plots(out_dir, plots)
    md = ["# Experiment report: %s" % spec.get("name", "?"), ""]
    if spec.get("description"):
        md += [spec["description"], ""]
    md += ["Rows: %d. Threads: %d for every compiler. Warm-up %d, %d timed runs (per "
           "experiment overrides apply). Every output was checked against ncc ref -O0 "
           "(rtol %g, atol %g) before timing; only matching rows count. %s"
           % (len(rows), spec["threads"], spec["warmup"], spec["iters"], spec["rtol"],
              spec["atol"], _baseline_note(spec)), ""]
    for n in notes:
        md += ["Note: %s" % n, ""]
    if not HAVE_MPL and plots:
        md += ["Note: plots skipped: matplotlib is not installed (pip install matplotlib).", ""]
    md += ["## Summary", "", summary(spec, rows, R), ""]
    for e in spec["experiments"]:
        md += ["## %s — %s" % (e["id"], e.get("title") or KIND_TITLE[e["kind"]]), ""]
        for part in SECTIONS[e["kind"]](e, spec, R, P):
            if part:
                md += [part, ""]
    md += ["## Flagged rows", "", flagged(rows), "", "## Skipped", "", skipped(rows), "",
           "## Environment", "", environment(rows), "",
           "## Definitions", "",
           "Latency: median of the timed runs after warm-up (p90, p99, min, cv in "
           "results.jsonl). Compile time: model file to first result, the same for every "
           "compiler (lazy compilers compile inside their first call). Speed-up S = "
           "t_baseline / t. G(d) = S(d)/S(1). E(b) = thr(b)/(b·thr(1)), Φ = 1 − E, "
           "μ = E/E_baseline. N* = compile/(t_baseline − t). Metric code: "
           "bench/harness/metrics.py.", ""]
    path = os.path.join(out_dir, "report.md")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    os.replace(path + ".tmp", path)
    return path

