"""bench/harness/report_plots.py — the report's PNGs, drawn to go in a paper.

* One colour per compiler id in every plot of every report: a fixed palette
  for the compilers the harness knows (ncc blues, ONNX Runtime orange, ...),
  then the remaining colours handed out in sorted id order, so that two
  reports of the same spec colour alike.
* Legends sit below the axes (never outside to the right, where they left
  the figure 40% empty, and never over the bars).
* Error bars are the 95% CIs of the values plotted, where the rows have
  samples; a bar whose CI holds "no change" is faded, a noisy point hollow.
  Titles carry the batch size, axis labels name the baseline.
"""
import os

# Known compiler ids -> colour.  Families share a hue; the uncompiled runs
# are grey/light so the compiled ones stand out.
PALETTE = {
    "ncc:ref": "#7f7f7f",
    "ncc:cpu -O0": "#9ecae1",
    "ncc:cpu -O1": "#4292c6",
    "ncc:cpu -O2": "#08519c",
    "onnxruntime:ALL": "#ff7f0e",
    "onnxruntime:EXTENDED": "#fdae6b",
    "onnxruntime:BASIC": "#fdd0a2",
    "onnxruntime:DISABLE_ALL": "#fdd0a2",
    "openvino:CPU": "#9467bd",
    "xla:jit": "#2ca02c",
    "tvm:llvm": "#d62728",
    "iree:llvm-cpu": "#8c564b",
    "inductor:default": "#e377c2",
    "inductor:max-autotune-no-cudagraphs": "#c51b8a",
    "inductor:eager": "#bcbd22",
}
FAMILY = {"ncc": "#3182bd", "onnxruntime": "#ff7f0e", "openvino": "#9467bd", "xla": "#2ca02c",
          "tvm": "#d62728", "iree": "#8c564b", "inductor": "#e377c2"}
SPARE = ["#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3",
         "#6b6ecf", "#b5cf6b", "#e7ba52", "#ad494a", "#a55194", "#000000"]
HATCHES = ["", "//", "..", "xx", "\\\\", "oo", "--", "++"]


class Plots:
    def __init__(self, out_dir, enabled, plt=None, all_ids=()):
        self.out_dir, self.enabled, self.plt = out_dir, bool(enabled and plt), plt
        self.files = []
        self.drawn = {}  # name -> {"title", "ylabel", "labels"}: what tests check
        self._colors = dict(PALETTE)
        spare = iter(SPARE * 4)
        for cid in sorted(set(all_ids)):
            if cid not in self._colors:
                self._colors[cid] = next(spare)
        self._spare = spare

    def color(self, key):
        """The colour of a compiler id (a series label 'ID (mode)' uses ID's)."""
        base = key.rsplit(" (", 1)[0]
        if base not in self._colors:
            self._colors[base] = next(self._spare)
        return self._colors[base]

    # ------------------------------------------------------------------
    def lines(self, name, panels, xlabel, ylabel, logx=False, logy=False, title=None,
              hline=None, xticks=None):
        """panels: [(panel title, {series: [(x, y[, lo, hi[, noisy]])]})] -> one
        PNG, one legend below the panels; lo/hi (may be None) draw error bars,
        a true `noisy` draws the point hollow;
        a series named "X (static)" is dashed in X's colour.  Returns the
        markdown image line, or '' when there is nothing to draw."""
        plt = self.plt
        panels = [(t, {s: pts for s, pts in series.items() if pts}) for t, series in panels]
        panels = [(t, s) for t, s in panels if s]
        if not self.enabled or not panels:
            return ""
        n = len(panels)
        nseries = len({s for _, series in panels for s in series})
        width = 3.8 * n + 0.6
        if nseries > 6:  # room for the legend's columns under a single panel
            width = max(width, 7.5)
        fig, axes = plt.subplots(1, n, figsize=(width, 3.6), squeeze=False)
        handles = {}
        for ax, (ptitle, series) in zip(axes[0], panels):
            for s, pts in series.items():
                pts = sorted(pts, key=lambda p: p[0])
                xs = [p[0] for p in pts]
                ys = [p[1] for p in pts]
                err = _yerr(pts)
                style = "--" if s.endswith("(static)") else "-"
                h = ax.errorbar(xs, ys, yerr=err, fmt=style, marker="o", markersize=3,
                                color=self.color(s), label=s, capsize=2, elinewidth=0.8,
                                linewidth=1.2)
                hollow = [p for p in pts if len(p) >= 5 and p[4]]
                if hollow:
                    ax.plot([p[0] for p in hollow], [p[1] for p in hollow], "o", markersize=5,
                            markerfacecolor="white", markeredgecolor=self.color(s), zorder=3)
                handles.setdefault(s, h)
            if hline is not None:
                ax.axhline(hline, color="grey", linewidth=0.8, zorder=0)
            ax.set_title(ptitle, fontsize=9)
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel(ylabel, fontsize=8)
            ax.tick_params(labelsize=7)
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
        self.drawn[name] = {"title": title, "ylabel": ylabel, "labels": list(handles),
                            "errorbars": any(_yerr(p) for _, ser in panels for p in ser.values())}
        return self._finish(fig, name, list(handles.values()), list(handles), title)

    def bars(self, name, groups, series_names, values, ylabel, logy=False, title=None,
             hline=None, errors=None, colors=None):
        """values[(group, series)] -> grouped bar chart; errors[(group,
        series)] = (lo, hi) draws the CI; colors[series] overrides the
        compiler colour (series that share a colour get hatches)."""
        plt = self.plt
        ok = lambda v: v is not None and v != float("inf")  # noqa: E731
        if not self.enabled or not groups or not any(ok(v) for v in values.values()):
            return ""
        import numpy as np
        errors = errors or {}
        series_names = [s for s in series_names if any(ok(values.get((g, s))) for g in groups)]
        width = max(5.0, 1.2 + 0.35 * len(groups) * max(1, len(series_names)))
        fig, ax = plt.subplots(figsize=(min(width, 14.0), 3.8))
        w = 0.8 / max(1, len(series_names))
        xs = np.arange(len(groups))
        if hline is not None:
            ax.axhline(hline, color="grey", linewidth=0.8, zorder=0)
        handles, seen = [], {}
        for i, s in enumerate(series_names):
            ys, lo, hi = [], [], []
            for g in groups:
                y = values.get((g, s))
                y = y if ok(y) else float("nan")
                e = errors.get((g, s))
                ys.append(y)
                lo.append(max(0.0, y - e[0]) if e and ok(e[0]) and y == y else 0.0)
                hi.append(max(0.0, e[1] - y) if e and ok(e[1]) and y == y else 0.0)
            col = (colors or {}).get(s) or self.color(s)
            hatch = HATCHES[seen.get(col, 0) % len(HATCHES)]
            seen[col] = seen.get(col, 0) + 1
            h = ax.bar(xs + i * w - 0.4 + w / 2, ys, w, label=s, color=col, hatch=hatch,
                       edgecolor="white" if not hatch else "black", linewidth=0.3,
                       yerr=[lo, hi] if any(lo) or any(hi) else None,
                       error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "black"})
            if hline is not None:  # a bar whose CI holds "no change" is drawn faded
                for patch, g in zip(h.patches, groups):
                    e = errors.get((g, s))
                    if e and ok(e[0]) and ok(e[1]) and e[0] <= hline <= e[1]:
                        patch.set_alpha(0.35)
            handles.append(h)
        ax.set_xticks(xs)
        ax.set_xticklabels(groups, rotation=20, ha="right", fontsize=7)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        finite = [v for v in values.values() if ok(v) and v > 0]
        if logy and finite and max(finite) / min(finite) >= 20:  # else linear reads better
            ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
        self.drawn[name] = {"title": title, "ylabel": ylabel, "labels": list(series_names),
                            "errorbars": bool(errors)}
        return self._finish(fig, name, handles, series_names, title)

    # ------------------------------------------------------------------
    def _finish(self, fig, name, handles, labels, title):
        """Legend below the axes, in as many columns as fit; title on top."""
        fig_w = fig.get_size_inches()[0]
        # columns that fit: ~0.06 in per character at 7 pt, plus the handle
        col_w = 0.5 + 0.06 * max([len(str(x)) for x in labels] or [1])
        ncol = max(1, min(len(labels), int(fig_w / col_w)))
        nrows = (len(labels) + ncol - 1) // ncol
        if title:
            fig.suptitle(title, fontsize=10)
        legend_h = 0.2 * nrows + 0.15  # inches
        fig_h = fig.get_size_inches()[1]
        fig.set_size_inches(fig_w, fig_h + legend_h)
        bottom = legend_h / (fig_h + legend_h)
        if labels:
            fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=7,
                       frameon=False, bbox_to_anchor=(0.5, 0.0))
        fig.tight_layout(rect=(0, bottom, 1, 1))
        path = os.path.join(self.out_dir, name + ".png")
        fig.savefig(path, dpi=110)
        self.plt.close(fig)
        self.files.append(path)
        return "![%s](%s.png)" % (name, name)


def _yerr(pts):
    """Asymmetric error bars from points (x, y, lo, hi); None when no point has a CI."""
    lo, hi, any_ci = [], [], False
    for p in pts:
        if len(p) >= 4 and p[2] is not None and p[3] is not None:
            lo.append(max(0.0, p[1] - p[2]))
            hi.append(max(0.0, p[3] - p[1]))
            any_ci = True
        else:
            lo.append(0.0)
            hi.append(0.0)
    return [lo, hi] if any_ci else None
