"""bench/harness/attrib_report.py — the report section of a `shapley`
experiment (E8): per model, the Shapley credit of each pass for the total
speed-up, the one-at-a-time ablation beside it, the pairwise ablation with
each pair's interaction, and two bar plots (credit per pass; interaction
per pair), every figure with a 95% bootstrap interval over the rounds.

Numbers are factors: a pass credited 1.20× earned a 20% shorter latency;
the credits multiply to the total speed-up t(none of the passes) / t(all).
An interaction factor above 1: the pair is worth more together than the
sum of each alone (complements); below 1: either does much of the other's
job (substitutes).
"""
import math

import numpy as np

from . import attrib, attrib_spec
from . import report_fmt as F
from . import report_plots
from . import report_rows as rr

TITLE = "pass attribution: who earned the speed-up (Shapley values, pairwise ablation)"


def _fx_ci(v, ci, verdict=True):
    """exp of a log value with its interval: '1.23× [1.18, 1.27]' (none
    when ci is None: rows without samples)."""
    if v is None:
        return "–"
    s = "%s×" % F.fnum(math.exp(v))
    if ci:
        s += " [%s, %s]" % (F.fnum(math.exp(ci[0])), F.fnum(math.exp(ci[1])))
        if verdict and ci[0] <= 0 <= ci[1]:
            s += " " + F.NOISE_MARK
    return s


def _log_samples(rows):
    """{effective coalition: per-round log times}, coalitions whose
    optimized graphs hash alike pooled (per-round mean when the rounds
    pair, else all samples together)."""
    by_hash = {}
    for c, r in rows.items():
        h = rr.field(r, "graph_hash") or ("row", c)
        by_hash.setdefault(h, []).append(c)
    out = {}
    for cs in by_hash.values():
        arrs = [np.log(np.asarray(rr.samples(rows[c]) or [rr.med(rows[c])], dtype=float))
                for c in cs]
        if len({len(a) for a in arrs}) == 1:
            pooled = np.mean(np.stack(arrs), axis=0)
        else:
            pooled = np.concatenate(arrs)
        for c in cs:
            out[c] = pooled
    return out


def measure_game(e, R, ms):
    """(attrib.Game, rows by coalition, None) for one model, or (None,
    rows, why) when a coalition's row is missing or not valid."""
    needs = e.get("needs") or {}
    shape = attrib_spec.game_shape(e)
    rows, bad = {}, []
    for c in shape.coalitions():
        eff = attrib.effective(c, needs)
        if eff in rows:
            continue
        r = R.point(e, ms, e["batch"], "ncc:" + attrib_spec.config_of(e, eff))
        rows[eff] = r
        if not rr.valid(r):
            bad.append("`ncc:%s`: %s" % (attrib_spec.config_of(e, eff), rr.status_cell(r)))
    if bad:
        return None, rows, "; ".join(bad[:3]) + (" (and %d more)" % (len(bad) - 3)
                                                 if len(bad) > 3 else "")
    return attrib.Game(e["passes"], needs, e.get("orders"), _log_samples(rows)), rows, None


def _no_ci(pt):
    """The shape of Game.bootstrap()'s answer, every interval None."""
    return {"phi": {p: None for p in pt["phi"]}, "single": {p: None for p in pt["single"]},
            "total": None, "pairs": {pr: {f: None for f in d} for pr, d in pt["pairs"].items()}}


def analyse(e, R, ms, seed=0):
    """{"game", "point", "ci", "rows"} or {"why"}; ci is None when a row
    has no samples (ncc timed by `ncc bench` in a subprocess keeps only
    its summary): then the credits come from the medians, without
    intervals."""
    game, rows, why = measure_game(e, R, ms)
    if game is None:
        return {"why": why, "rows": rows}
    has_samples = all(rr.samples(r) for r in rows.values())
    return {"game": game, "point": game.point(), "rows": rows,
            "ci": game.bootstrap(seed=seed) if has_samples else None}


def _method_text(e):
    if e.get("orders") is None:
        return "exact (all %d coalitions)" % (1 << len(e["passes"]))
    return ("permutation sampling: %d orders, seed %d (an estimate; the credits still "
            "multiply to the total exactly)" % (len(e["orders"]), e.get("perm_seed", 0)))


def section(e, spec, R, P):
    out = []
    if not e.get("passes"):
        return ["(no passes run at this level)"]
    groups, values, errors = [], {}, {}
    pgroups, pvalues, perrors = [], {}, {}
    s_credit, s_single, s_inter = "Shapley credit", "one-at-a-time (pass off)", "interaction"
    needs = e.get("needs") or {}
    for b in e["blocks"]:
        ms = rr.model(e, b, e["depth"])
        a = analyse(e, R, ms)
        head = ("**%s** (depth %d, width %d, batch %d), `ncc %s`, passes %s; %s."
                % (b, e["depth"], e["model"]["width"], e["batch"], e["base"],
                   ", ".join("`%s`" % p for p in e["passes"]), _method_text(e)))
        if "why" in a:
            out.append(head + " Not computed: %s." % a["why"])
            continue
        pt, rows = a["point"], a["rows"]
        ci = a["ci"] or _no_ci(pt)
        full, none = rows[frozenset(e["passes"])], rows[attrib.effective((), needs)]
        total = pt["total"]
        lines = [head, "",
                 "Total speed-up of these passes: %s (%s with none of them, %s with all)."
                 % (_fx_ci(total, ci["total"]), F.fms(none), F.fms(full))]
        if needs:
            lines.append("A pass whose prerequisite is off does not run (%s), so the "
                         "prerequisite shares its credit." %
                         "; ".join("%s needs %s" % (p, ", ".join(q)) for p, q in needs.items()))
        hdr = ["pass", "Shapley credit [95% CI]", "share of the total",
               "one at a time: t(pass off) / t(all) [95% CI]"]
        trows = []
        for p in e["passes"]:
            phi = pt["phi"][p]
            share = "%.0f%%" % (100 * phi / total) if abs(total) > 1e-12 else "–"
            trows.append(["`%s`" % p, _fx_ci(phi, ci["phi"][p]), share,
                          _fx_ci(pt["single"][p], ci["single"][p])])
            label = "%s: %s" % (b, p)
            groups.append(label)
            values[(label, s_credit)] = 100 * (math.exp(phi) - 1)
            values[(label, s_single)] = 100 * (math.exp(pt["single"][p]) - 1)
            if a["ci"]:
                errors[(label, s_credit)] = tuple(100 * (math.exp(x) - 1) for x in ci["phi"][p])
                errors[(label, s_single)] = tuple(100 * (math.exp(x) - 1)
                                                  for x in ci["single"][p])
        trows.append(["(product)", "%s×" % F.fnum(math.exp(sum(pt["phi"].values()))),
                      "100%", ""])
        lines += ["", F.table(hdr, trows), ""]
        phdr = ["pair", "first off", "second off", "both off", "interaction [95% CI]",
                "reading"]
        prows = []
        for (i, j), d in pt["pairs"].items():
            dc = ci["pairs"][(i, j)]
            lo, hi = dc["interaction"] or (None, None)
            reading = ("complements" if d["interaction"] > 0 else "substitutes") + \
                ("" if lo is not None else " (no interval)")
            if lo is not None and lo <= 0 <= hi:
                reading = "additive (within noise)"
            prows.append(["`%s` + `%s`" % (i, j), _fx_ci(d["off_i"], dc["off_i"], False),
                          _fx_ci(d["off_j"], dc["off_j"], False),
                          _fx_ci(d["off_both"], dc["off_both"], False),
                          _fx_ci(d["interaction"], dc["interaction"]), reading])
            label = "%s: %s+%s" % (b, i, j)
            pgroups.append(label)
            pvalues[(label, s_inter)] = 100 * (math.exp(d["interaction"]) - 1)
            if lo is not None:
                perrors[(label, s_inter)] = (100 * (math.exp(lo) - 1),
                                             100 * (math.exp(hi) - 1))
        lines += ["Pairwise ablation from `ncc %s`: the slow-down of switching off the first, "
                  "the second and both passes (t(off) / t(all)), and their interaction "
                  "((first off × second off) ÷ both off): above 1 the two are worth more "
                  "together than apart (complements), below 1 they overlap (substitutes)."
                  % e["base"], "", F.table(phdr, prows)]
        if not a["ci"]:
            lines.append("\nNo intervals: some rows kept no samples (ncc timed by `ncc bench` "
                         "in a subprocess); the credits come from the medians.")
        out.append("\n".join(lines))
    color = report_plots.FAMILY["ncc"]
    out.append(P.bars("%s_shapley" % e["id"], groups, [s_credit, s_single], values,
                      "speed-up credited to the pass (%)", errors=errors,
                      colors={s_credit: color, s_single: "#9ecae1"}, hline=0.0,
                      title="%s: credit per pass, ncc:%s (depth %d, batch %d)"
                      % (e["id"], e["base"], e["depth"], e["batch"])))
    out.append(P.bars("%s_pairs" % e["id"], pgroups, [s_inter], pvalues,
                      "interaction of the pair (%)", errors=perrors, colors={s_inter: color},
                      hline=0.0, title="%s: pairwise interaction, ncc:%s"
                      % (e["id"], e["base"])))
    out.append("Credits are Shapley values of the log speed-up: each pass gets its marginal "
               "effect averaged over every order in which the passes could be switched on, "
               "so a pair that only pays together (layout and fusion, const-fold and bn-fold) "
               "splits the gain instead of each being credited with all of it (one at a time) "
               "or none of it. Intervals: %d bootstrap resamples of the interleaved rounds."
               % attrib.BOOTSTRAP_N)
    return out
