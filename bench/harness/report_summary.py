"""bench/harness/report_summary.py — the report's summary, flagged and skipped rows,
environment, and the definitions of every metric.

The summary counts rows by status per compiler configuration, gives the
geometric-mean speed-up over the baseline (quiet rows only) and the
compile-time split, then the head-to-head of ncc against each vendor and
the fastest vendor over every point measured (report_vs).
"""
from . import metrics
from . import report_fmt as F
from . import report_rows as rr
from . import spec as specmod
from .models import label as model_label


def _baseline_row(R, row):
    m = dict(row["config"])
    name, config = specmod.parse_compiler_id(R.spec["baseline"])
    m.update(compiler=name, config=config, shape_mode="default")
    return R.get(m)


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def summary(spec, rows, R):
    by = {}
    for r in rows:
        c = r["config"]
        cid = specmod.compiler_id(c["compiler"], c["config"])
        s = by.setdefault(cid, {"n": 0, "status": {}, "speedups": [], "build": [],
                                "first": [], "tune": [], "noisy": 0})
        s["n"] += 1
        s["status"][r["status"]] = s["status"].get(r["status"], 0) + 1
        if c["kind"] == "point" and rr.valid(r) and c.get("shape_mode") == "default":
            s["build"].append(r["result"].get("build_ms"))
            s["first"].append(r["result"].get("first_run_ms"))
            if r["result"].get("tune_ms") is not None:
                s["tune"].append(r["result"]["tune_ms"])
            if rr.is_noisy(r):
                s["noisy"] += 1
                continue
            rb = _baseline_row(R, r)
            if rr.rankable(rb):
                s["speedups"].append(metrics.speedup(rr.med(rb), rr.med(r)))
    hdr = ["compiler", "rows", "ok", "noisy", "mismatch", "skipped/unsupported",
           "error/timeout", "geomean speed-up vs `%s`" % spec["baseline"],
           "median build ms", "median first run ms", "median tuning ms"]
    out = []
    for cid in sorted(by):
        s = by[cid]
        st = s["status"]
        out.append([cid, s["n"], st.get("ok", 0), s["noisy"], st.get("mismatch", 0),
                    st.get("skipped", 0) + st.get("unsupported", 0),
                    st.get("error", 0) + st.get("timeout", 0),
                    "%s (%d pts)" % (F.fgeo(s["speedups"]), len(s["speedups"]))
                    if s["speedups"] else "–",
                    F.fnum(_median(s["build"])), F.fnum(_median(s["first"])),
                    F.fnum(_median(s["tune"])) if s["tune"] else "–"])
    return ("Rows per compiler configuration by status; \"noisy\" rows (robust cv, "
            "1.4826·MAD/median of the timed runs, above %.2f; the plain cv for rows "
            "recorded without their runs) are "
            "reported but left out of the geometric mean and of every ranking. Geomean "
            "speed-up over the baseline across the points both measured: above 1 is faster, "
            "with a 95%% bootstrap CI over the points. "
            "Build = model to ready-to-run object, first run = the first call (where lazy "
            "compilers compile); tuning (tuned TVM: MetaSchedule) is inside build and "
            "compile time, and shown apart.\n\n%s" % (rr.stats.CV_RANK_MAX, F.table(hdr, out)))


READING = (
    "**Reading the numbers.** A median is shown with its 95%% confidence interval, "
    "`1.23 ms [1.20, 1.27]` (an order-statistic interval of the timed runs; rows recorded "
    "without their samples show no interval). A ratio or speed-up is shown as "
    "`2.10× [2.01, 2.20]`: a seeded percentile bootstrap, resampling rounds as pairs "
    "when the two rows were timed in interleaved rounds; a geometric mean over points "
    "has a bootstrap CI over the points. Repeats adapt: a group of rows gets more "
    "rounds until every median's CI half-width is within %.0f%% of it, or a cap "
    "(then its interval is simply wider). **(within noise)** means the interval "
    "holds 1 (or 0 for a Δ): the difference is not distinguishable from the timing noise "
    "and should not be reported as an effect. **⚠ noisy (robust cv …, cv …)** marks a row "
    "whose robust cv (MAD/median: 1.4826 × the median absolute deviation of its timed runs "
    "over their median, which one outlier among them barely moves) exceeds %.2f; the plain "
    "cv (std/mean) is shown beside it, and decides for rows recorded without their runs. "
    "A noisy row is shown but left out of rankings, Kendall τ, geometric means and "
    "\"fastest\"/\"best\" choices." % (100 * rr.stats.CI_TARGET, rr.stats.CV_RANK_MAX))


def noise_warning(rows):
    """A warning line when some valid rows are too noisy to rank, else ''."""
    valid = [r for r in rows if rr.valid(r)]
    noisy = [r for r in valid if rr.is_noisy(r)]
    if not noisy:
        return ""
    cids = sorted({rr.cid_of(r) for r in noisy})
    return ("**⚠ Warning: %d of %d measured rows are too noisy to rank** (robust cv above "
            "%.2f even after the adaptive repeats): %s. They are shown but left out of "
            "every ranking and geometric mean; rerun on a quieter machine (pinned, idle) "
            "before drawing conclusions from them (list under \"Flagged rows\")."
            % (len(noisy), len(valid), rr.stats.CV_RANK_MAX, ", ".join("`%s`" % c for c in cids)))


def _row_label(r):
    c, md = r["config"], r["config"]["model"]
    shape = "b%d" % c["batch"] if c["kind"] == "point" else "seq %s (%s)" % (
        c["sequence"], c["shape_mode"])
    return "%s %s, `%s:%s`" % (model_label(md), shape, c["compiler"], c["config"])


def flagged(rows):
    bad = [r for r in rows if r["status"] in ("mismatch", "error", "timeout", "unsupported")]
    noisy = [r for r in rows if rr.valid(r) and rr.is_noisy(r)]
    lines = ["- **%s** %s: %s" % (r["status"], _row_label(r), (r.get("reason") or "")[:300])
             for r in bad[:200]]
    if len(bad) > 200:
        lines.append("- … and %d more (see results.jsonl)" % (len(bad) - 200))
    lines += ["- **noisy** %s: %s, not ranked" % (_row_label(r), F.cv_text(r) or "cv –")
              for r in noisy[:200]]
    if len(noisy) > 200:
        lines.append("- … and %d more noisy rows" % (len(noisy) - 200))
    if not lines:
        return ("None: every measured output matched its yardstick (ncc ref, checked against "
                "the outside oracle) and no row was noisy.")
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
    return F.table(["compiler", "rows", "reason", "install"],
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
        peak = rr.peak_gflops([{"env": env}])
        out.append("- host `%s`: %s, %s logical cores (%s physical), %s thread(s)%s%s; %s; "
                   "Python %s\n- ncc: `%s` (%s), commit %s%s, build %s%s\n- vendors: %s" % (
                       env.get("hostname"), env.get("cpu_model"), env.get("cores"),
                       env.get("physical_cores"), env.get("threads"),
                       ", pinned to CPU %s" % env["pinned_cpus"] if env.get("pinned_cpus")
                       else ", not pinned",
                       ", measured peak %s GFLOP/s" % F.fnum(peak) if peak else "",
                       env.get("os"), env.get("python"), ncc.get("path"),
                       ncc.get("version"), (ncc.get("commit") or "?")[:12],
                       " (dirty tree)" if ncc.get("dirty") else "",
                       build.get("build_type") or "?",
                       " **with sanitizers: times not representative**"
                       if str(build.get("sanitize", "")).upper() in ("ON", "1", "TRUE") else "",
                       comps or "none installed"))
    if len(envs) > 1:
        out.insert(0, "**%d different environments** among the rows:" % len(envs))
    return "\n".join(out)


DEFINITIONS = (
    "Latency: median of the timed runs after warm-up, with a 95% order-statistic CI (p90, "
    "p99, min, cv, robust cv and the samples in results.jsonl). Compile time: model file to first "
    "result = build (to a ready-to-run object) + first run, the same for every compiler "
    "(lazy compilers compile inside their first call). Speed-up S = t_baseline / t, and "
    "head-to-head S = t_vendor / t_ncc, each with a paired or bootstrap 95% CI. G(d) = "
    "S(d)/S(1). Batch gain B(b) = thr(b)/thr(1); E(b) = thr(b)/(b·thr(1)), Φ = 1 − E "
    "(ideal-scaling friction, ≈ 1 − 1/b on a CPU by construction); relative friction Φrel = "
    "1 − E/E_best, E_best the best compiled configuration's E at that batch (the normalised "
    "figure: the friction a compiler adds beyond the best one on the same machine); μ = "
    "E/E_baseline. N* = compile/(t_framework − t) against an uncompiled run; against a "
    "vendor N* = (compile − compile_v)/(t_v − t). Ablation Δ = t(pass off)/t(all) − 1. "
    "Metric code: bench/harness/metrics.py; noise: bench/harness/stats.py.")


def _model_label(r):
    return model_label(r["config"]["model"])


def oracle_verdicts(rows):
    """{(model label, batch): (oracle record, batch verdict)} over the
    measured rows' result.oracle (runner.Task.oracle_record)."""
    out = {}
    for r in rows:
        rec = (r.get("result") or {}).get("oracle")
        if not rec:
            continue
        for b in rec.get("batches", []):
            out.setdefault((_model_label(r), b["batch"]), (rec, b))
    return out


def oracle_line(rows):
    """The report's sentence on how the outputs were checked."""
    v = oracle_verdicts(rows)
    if not v:
        return ("No measured row carries an outside-oracle verdict (rows from before the "
                "oracle check, or none measured): their checks rest on ncc ref -O0 alone.")
    names = sorted({"%s (%s%s)" % (rec["name"], rec["config"],
                                   ", %s" % rec["version"] if rec.get("version") else "")
                    for rec, _ in v.values()})
    bad = sum(1 for _, b in v.values() if not b["ref_agrees"])
    return ("Each model (at each batch) was first checked once against an oracle outside "
            "ncc, %s: ncc ref -O0 agreed on %d of %d; every row was then checked against "
            "ncc ref -O0 where it agreed, against the oracle's output where it did not "
            "(those models are ncc failures: see below)."
            % (" and ".join(names), len(v) - bad, len(v)))


def ncc_failures(rows):
    """The models whose ncc ref disagreed with the outside oracle."""
    v = oracle_verdicts(rows)
    bad = sorted((k, rec, b) for k, (rec, b) in v.items() if not b["ref_agrees"])
    if not bad:
        return ("None: on every model checked, ncc ref -O0 agreed with the outside oracle." if v
                else "No model was checked against an outside oracle.")
    lines = ["- **ncc failure** %s b%d: ncc ref -O0 against %s (%s): %s; its ncc rows are "
             "mismatches, its vendor rows were checked against the oracle"
             % (k[0], k[1], rec["name"], rec["config"],
                (b.get("ref_check") or {}).get("reason", "differs"))
             for k, rec, b in bad[:200]]
    return "\n".join(lines)


def timing_line(rows):
    """How each compiler's runs were timed (env.timing), and any row whose
    timing was not symmetric with the others'."""
    envt = next(((r.get("env") or {}).get("timing") for r in rows
                 if (r.get("env") or {}).get("timing")), None)
    asym = sorted({"%s:%s" % (r["config"]["compiler"], r["config"]["config"]) for r in rows
                   if ((r.get("result") or {}).get("timing") or {}).get("symmetric") is False})
    if not envt:
        return "Timing: not recorded (rows from before the timing record)."
    parts = ["Timing (output policy `%s`): " % envt.get("outputs_policy", "fresh")]
    parts.append("; ".join("**%s**: %s" % (c, note)
                           for c, note in sorted((envt.get("compilers") or {}).items())))
    parts.append(".")
    if asym:
        parts.append(" **Not symmetric**: %s timed differently from the in-process rows "
                     "(see result.timing); compare their latencies with care."
                     % ", ".join(asym))
    return "".join(parts)
