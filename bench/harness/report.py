"""bench/harness/report.py — DIR/report.md and DIR/*.png from the rows.

Each experiment's tables are rebuilt by expanding the resolved spec again
and looking rows up by measurement key, so a report of merged shards is
identical to a report of one run.  Only valid rows (output matched ncc ref)
enter a number; other rows show their status in the cell, and are listed
with their reasons under "Flagged rows" and "Skipped".  Every median has
its CI, every ratio its CI and a "(within noise)" verdict, and noisy rows
stay out of rankings (report_rows.py).  Without matplotlib the report is
written without plots and says so.

The parts: report_rows (row access, noise), report_fmt (spelling of numbers),
report_plots (PNGs, one colour per compiler), report_vs (ncc against each
vendor), report_vendors (which vendors ran live, cold and warm compiles),
report_scaling (E1-E3), report_cost (E4-E7), report_summary.
"""
import os

from . import attrib_report
from . import report_cost
from . import report_hw
from . import report_models
from . import report_plots
from . import report_rows
from . import report_scaling
from . import report_summary as S
from . import report_vs
from . import report_vendors
# the names report.py had before it was split, for scripts that import them
from .report_fmt import cell, fnum, fpct, fx, table  # noqa: F401
from .report_rows import Rows, comp, compiler_ids, med, status_cell, valid  # noqa: F401
from .report_summary import environment, flagged, skipped, summary  # noqa: F401

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    HAVE_MPL = True
except Exception:  # ImportError, or a broken backend
    plt = None
    HAVE_MPL = False

KIND_TITLE = {"depth": "depth: do gains grow with repeated blocks?",
              "batch": "batch: how much friction is left as batch grows?",
              "ranking": "ranking: does compiling reorder the archetypes (equal FLOPs)?",
              "fusion": "fusion: what does fusion buy?",
              "amortize": "amortization: how many runs pay for compiling?",
              "dynamic": "dynamic shapes: symbolic batch vs a compile per shape",
              "ablation": "pass ablation: which pass earns what?",
              "shapley": attrib_report.TITLE}

SECTIONS = {"depth": report_scaling.section_depth, "batch": report_scaling.section_batch,
            "ranking": report_scaling.section_ranking, "fusion": report_cost.section_fusion,
            "amortize": report_cost.section_amortize, "dynamic": report_cost.section_dynamic,
            "ablation": report_cost.section_ablation, "shapley": attrib_report.section}


def _all_ids(spec):
    ids = [spec["baseline"]]
    for e in spec["experiments"]:
        ids += report_rows.compiler_ids(e, spec, with_baseline=False)
    return ids


LAST_PLOTS = None  # the Plots of the last report built (tests read .drawn)


def build(out_dir, spec, rows, plots=True, notes=()):
    """The report's markdown text (plots written to out_dir as a side effect)."""
    global LAST_PLOTS
    machines = report_hw.split(rows)
    if len(machines) > 1:  # a merge of several machines: the first timed one's tables
        rows = machines[report_hw.primary(machines)]
        notes = list(notes) + ["rows of %d machines; the tables show `%s`, the hardware "
                               "axis section all of them" % (len(machines),
                                                             report_hw.primary(machines))]
    R = report_rows.Rows(spec, rows)
    P = report_plots.Plots(out_dir, plots and HAVE_MPL, plt, _all_ids(spec))
    LAST_PLOTS = P
    md = ["# Experiment report: %s" % spec.get("name", "?"), ""]
    if spec.get("description"):
        md += [spec["description"], ""]
    md += ["Rows: %d. Threads: %d for every compiler. Warm-up %d, %d timed runs (per "
           "experiment overrides apply). Every output was checked (rtol %g, atol %g) before "
           "timing; only matching rows count. Baseline for "
           "speed-ups: `%s`; ncc is also compared with each vendor directly."
           % (len(rows), spec["threads"], spec["warmup"], spec["iters"], spec["rtol"],
              spec["atol"], spec["baseline"]), ""]
    md += [S.oracle_line(rows), "", S.timing_line(rows), ""]
    md += [report_vendors.vendors_line(spec, rows), ""]
    for n in notes:
        md += ["Note: %s" % n, ""]
    if not HAVE_MPL and plots:
        md += ["Note: plots skipped: matplotlib is not installed (pip install matplotlib).", ""]
    if S.noise_warning(rows):
        md += [S.noise_warning(rows), ""]
    md += [S.READING, ""]
    md += ["## Summary", "", S.summary(spec, rows, R), ""]
    h2h = report_vs.table(R, report_vs.collect(rows))
    md += ["## ncc against the vendors", "",
           h2h or "No point was measured by both an ncc compiled configuration and a vendor.",
           ""]
    if len(machines) > 1:
        md += ["## Hardware axis", ""]
        for part in report_hw.section(spec, machines):
            md += [part, ""]
    cw = report_vendors.compile_cold_warm(rows)
    if cw:
        md += ["## Compile time: cold and warm cache", "", cw, ""]
    for e in spec["experiments"]:
        md += ["## %s — %s" % (e["id"], e.get("title") or KIND_TITLE[e["kind"]]), ""]
        section = (report_models.SECTIONS.get(e["kind"]) if e.get("real") else None) or \
            SECTIONS[e["kind"]]
        for part in section(e, spec, R, P):
            if part:
                md += [part, ""]
    md += ["## ncc failures (ncc ref against the outside oracle)", "", S.ncc_failures(rows), "",
           "## Flagged rows", "", S.flagged(rows), "", "## Skipped", "", S.skipped(rows), "",
           "## Environment", "", S.environment(rows), "",
           "## Definitions", "", S.DEFINITIONS, ""]
    return "\n".join(md)


def write(out_dir, spec, rows, plots=True, notes=()):
    """Write out_dir/report.md (and plots); returns its path."""
    text = build(out_dir, spec, rows, plots, notes)
    path = os.path.join(out_dir, "report.md")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return path
