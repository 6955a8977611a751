"""bench/harness/compare_report.py — bench/compare's results as readable
text (stdout) and Markdown (--out DIR/report.md): the same tables, each
followed by a line or two on how to read it.  Names from the model or the
user reach the output through _txt (printable, one line)."""
from . import stats


def _txt(s, limit=120):
    s = "".join(c if c.isprintable() else "?" for c in str(s))
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _ms(v):
    if v is None:
        return "-"
    if v >= 100:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.4f" % v


def _err(v):
    return "-" if v is None else ("0" if v == 0 else "%.2g" % v)


def _ratio(e):
    vals = [e["ratio"], e["ci"][0], e["ci"][1]]
    return "%s [%s, %s]" % tuple("-" if v is None else "%.3f" % v for v in vals)


def header_lines(doc):
    s, env = doc["settings"], doc["env"]
    pin = ("pinned to CPUs %s" % ",".join(str(c) for c in s["pinned_cpus"])
           if s["pinned_cpus"] else "not pinned")
    out = ["model    %s" % _txt(doc["model"], 200),
           "threads  %d, %s (%d CPUs allowed); CPU %s" % (
               s["threads"], pin, env.get("allowed_cpus") or 0, _txt(env.get("cpu_model"))),
           "inputs   " + "; ".join("%s %s %s: %s" % (
               _txt(i["name"]), i["dtype"], "[%s]" % ",".join(_txt(d) for d in i["declared"]),
               _txt(i["data"])) for i in doc["inputs"]),
           "timing   %d warm-up calls, then %d interleaved rounds per batch%s: a turn per "
           "compiler per round, one re-warm call then one timed call (perf_counter, %s "
           "outputs, GC paused)" % (s["warmup"], s["rounds"],
                                    " (+%d at a time while a row is noisy or its CI wide, up to %d in all)"
                                    % ((s["rounds"] + 1) // 2, 5 * s["rounds"])
                                    if s.get("adaptive_rounds") else "",
                                    s.get("outputs", "fresh"))]
    for k, note in sorted(((env.get("timing") or {}).get("compilers") or {}).items()):
        out.append("timing   %s: %s" % (_txt(k), _txt(note, 300)))
    out.append("check    every output against %s (an oracle outside ncc), |a - ref| <= "
               "%g + %g * |ref|" % (_txt(s.get("oracle") or s.get("reference")), s["atol"],
                                    s["rtol"]))
    n = env.get("ncc") or {}
    if n.get("path"):
        b = n.get("build") or {}
        out.append("ncc      %s at %s, %s build, commit %s%s" % (
            _txt(n.get("version") or "?"), _txt(n["path"], 200), _txt(b.get("build_type") or "?"),
            (n.get("commit") or "?")[:12], " (modified tree)" if n.get("dirty") else ""))
    out += ["note     " + _txt(x, 300) for x in doc.get("notes", [])]
    for c in doc["compilers"]:
        what = "%s%s" % (c["name"], " (%s)" % _txt(c["config"]) if c.get("config") else "")
        if c.get("status") == "ok":
            role = ", reference only, not timed" if c.get("reference_only") else ""
            t = c.get("timing") or {}
            if t.get("via"):
                role += ", %s" % _txt(t["via"])
            elif t.get("why"):
                role += ", FALLBACK: %s, %s (%s)" % (_txt(t["where"]), _txt(t["clock"]),
                                                     _txt(t["why"], 200))
            out.append("compiler %s: %s%s" % (what, _txt(c.get("version") or "version unknown"),
                                             role))
        else:
            out.append("skipped  %s: %s%s" % (what, _txt(c.get("reason"), 300),
                                              " (%s)" % c["hint"] if c.get("hint") else ""))
    return out


def _check_cell(r):
    if r["status"] in ("skipped", "failed", "unchecked"):
        return r["status"].upper()
    c = r.get("check") or {}
    if r["compiler"] == c.get("reference"):
        return "reference"
    return "ok" if c.get("ok") else "MISMATCH"


def batch_tables(res):
    """[(title, header, rows, how-to-read)] for one batch size."""
    tabs = []
    rows = res["rows"]
    chk = []
    for r in rows:
        c = r.get("check") or {}
        bad = [o for o in c.get("outputs", []) if not o["ok"]]
        note = r.get("reason") or ("; ".join("'%s': %s" % (_txt(o["name"], 40), o["reason"])
                                             for o in bad[:2]) if bad else "")
        chk.append([r["compiler"], _check_cell(r), _err(c.get("max_abs_err")),
                    _err(c.get("max_rel_err")), _txt(note, 160)])
    tabs.append(("outputs against %s" % (res["reference"] or "nothing (no compiler ran)"),
                 ["compiler", "check", "max abs err", "max rel err", "note"], chk,
                 "Every output of each compiler against the reference's, before any timing. "
                 "max rel err = max abs err / the output's largest |value|. A MISMATCH row is "
                 "still timed but left out of the ranking."))
    comp = [[r["compiler"], _ms(r.get("build_ms")), _ms(r.get("first_run_ms")),
             _ms(r.get("compile_ms"))] for r in rows if r.get("compile_ms") is not None]
    cli = [r["compiler"] for r in rows if (r.get("timing") or {}).get("why")]
    how = ("build = model file to a ready-to-run object (ncc: graph load + pass pipeline + "
           "compile, through libncc in this process); first run = input preparation and the "
           "first call (lazy compilers such as torch.compile compile inside it); compile = "
           "both.")
    if cli:
        how += (" %s ran through the command line: its build is `ncc bench`'s compile_ms "
                "and its first run the first run of a fresh process." % ", ".join(cli))
    tabs.append(("compile time (ms)", ["compiler", "build", "first run", "compile"], comp, how))
    rank = {k: i + 1 for i, k in enumerate(res["ranking"])}
    lat = []
    for r in sorted((r for r in rows if r.get("latency_ms")),
                    key=lambda r: r["latency_ms"]["median"]):
        l = r["latency_ms"]
        notes = []
        if r["status"] == "mismatch":
            notes.append("mismatch: not ranked")
        rcv = _rcv(r)
        if r.get("noisy"):
            notes.append("noisy (robust cv > %.2f): not ranked" % stats.CV_RANK_MAX)
        if (r.get("timing") or {}).get("why"):
            notes.append("ncc bench process per round")
        k = r.get("ncc") or {}
        if k.get("reference_kernels") and not r["compiler"].startswith("ncc:ref"):
            notes.append("%d of %d nodes on reference kernels" % (
                k["reference_kernels"], k["reference_kernels"] + (k.get("kernels") or 0)))
        lat.append([str(rank.get(r["compiler"], "-")), r["compiler"], _ms(l["median"]),
                    "[%s, %s]" % (_ms(l["ci"][0]), _ms(l["ci"][1])),
                    "-" if rcv is None else "%.3f" % rcv, "%.3f" % r["cv"],
                    "%.1f" % r["throughput_per_s"], str(len(r["samples_ms"])),
                    ", ".join(notes)])
    how = ("median of the timed calls (one per round) with its 95%% confidence interval "
           "(order statistics; with fewer than 6 rounds it is the min..max); robust cv = "
           "1.4826 x MAD / median (one outlier barely moves it), cv = std/mean; a row whose "
           "robust cv exceeds %.2f is noisy: shown, not ranked. Rank only for rows that "
           "match and are not noisy. Every compiler, ncc included (libncc in this process), "
           "is timed alike: perf_counter around one Python call (a few us of call overhead "
           "on every side), interleaved call by call, outputs as the timing lines above say "
           "(fresh on every call, or bound once with --outputs preallocated)."
           % stats.CV_RANK_MAX)
    if cli:
        how += (" Except %s: libncc could not be loaded here, so each round ran one `ncc "
                "bench` process timed by ncc's own clock (no Python call overhead, "
                "preallocated outputs): compare it with care." % ", ".join(cli))
    tabs.append(("latency (ms)", ["rank", "compiler", "median", "95% CI", "robust cv", "cv",
                                  "inputs/s", "n", "note"], lat, how))
    # ncc first, so each line reads "ncc / vendor"; each pair once (B/A is its inverse)
    keys = sorted((r["compiler"] for r in rows if r.get("latency_ms")),
                  key=lambda k: (not k.startswith("ncc:"),))
    pairs = [e for e in res["ratios"] if keys.index(e["a"]) < keys.index(e["b"])]
    pairs.sort(key=lambda e: (keys.index(e["a"]), keys.index(e["b"])))
    tabs.append(("ratios (latency of A / latency of B, paired by round)",
                 ["A", "B", "A/B [95% CI]", "A is"],
                 [[e["a"], e["b"], _ratio(e), e["verdict"]] for e in pairs],
                 "The median of the per-round ratios with its 95% CI. Below 1: A is faster. "
                 "\"within noise\": the interval holds 1, so this run shows no real "
                 "difference. Noisy or mismatching rows are listed too: read them with care."))
    if res["fastest_vendor"]:
        tabs.append(("against the fastest vendor (%s)" % res["fastest_vendor"],
                     ["compiler", "latency / %s [95%% CI]" % res["fastest_vendor"], "verdict",
                      "break-even runs"],
                     [[e["a"], _ratio(e), e["verdict"], _be(e)]
                      for e in res["vs_fastest_vendor"]],
                     "Fastest vendor = the ranked (matching, not noisy) vendor with the "
                     "lowest median. Below 1 and \"faster\": beats every vendor here. "
                     "Break-even: runs after which compile + runs costs less than the "
                     "fastest vendor's (0: from the first; never: not faster)."))
    else:
        tabs.append(("against the fastest vendor", ["compiler", "ratio", "verdict"], [],
                     "No vendor could be ranked (each is noisy, mismatching or did not run): "
                     "rerun with more --rounds on a quieter machine, or read the pairwise "
                     "ratios above."))
    return tabs


def _rcv(r):
    v = r.get("robust_cv")
    if v is None and r.get("samples_ms"):
        v = stats.robust_cv(r["samples_ms"])
    return v


def _be(e):
    v = e.get("break_even_runs")
    return "never" if v is None else str(v)


def _fmt_table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)] if rows else \
        [len(h) for h in header]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(header)] + [line(r) for r in rows]


def _batch_title(res):
    shapes = ", ".join("%s %s" % (_txt(n, 40), "x".join(str(d) for d in s))
                       for n, s in res["inputs"].items())
    return "batch %d (%s)" % (res["batch"], shapes)


def text(doc):
    out = ["bench/compare: your model against the vendors", ""] + header_lines(doc)
    for res in doc["batches"]:
        out += ["", "=== " + _batch_title(res)]
        for title, header, rows, how in batch_tables(res):
            out += ["", title]
            out += ["  " + l for l in _fmt_table(header, rows)] if rows else ["  (none)"]
            out.append("  how to read: " + how)
    if doc.get("exit_status"):
        out += ["", "--strict: some compiler mismatched or failed (exit 3)"]
    return "\n".join(out) + "\n"


def markdown(doc):
    out = ["# bench/compare: %s" % _txt(doc["model"], 200), ""]
    out += ["    " + l for l in header_lines(doc)]
    for res in doc["batches"]:
        out += ["", "## " + _batch_title(res)]
        for title, header, rows, how in batch_tables(res):
            out += ["", "### " + title, ""]
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "---|" * len(header))
            for r in rows:
                out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
            out += ["", "*How to read:* " + how]
    return "\n".join(out) + "\n"
