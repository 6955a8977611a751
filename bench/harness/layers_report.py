"""bench/harness/layers_report.py — the bench/layers document as a text
table (the terminal) and as Markdown (layers.md): one row per group of
ONNX nodes, each compiler's ms on it, the winner and ncc / best vendor;
then the total of the rows, the time no row holds (unattributed) and the
profiled total, and what could not be traced."""

SHORT = {"ncc": "ncc", "onnxruntime": "ort", "openvino": "ov"}


def _f(v):
    if v is None:
        return "-"
    return "%.3f" % v if abs(v) >= 0.1 or v == 0 else "%.4f" % v


def _r(v):
    return "-" if v is None else "%.2fx" % v


def _clip(s, n):
    return s if len(s) <= n else "..." + s[-(n - 3):]


def _table(doc):
    cols = doc["columns"]
    ok = {c for c in cols if doc["compilers"][c]["status"] == "ok"}
    head = ["layer", "ops"] + ["%s ms" % SHORT.get(c, c) for c in cols] + ["winner", "ncc/best"]
    rows = []
    for r in doc["rows"][: doc["settings"].get("top") or None]:
        rows.append([_clip(r["layer"], 46), _clip(r["ops"], 22)]
                    + [(_f(r["ms"].get(c)) + ("r" if c in r.get("reference_kernel", ()) else ""))
                       if c in ok else "n/a" for c in cols]
                    + [SHORT.get(r["winner"], "-") if r["winner"] else "-", _r(r["ratio"])])
    t = doc["totals"]
    rows.append(["total of the rows", ""]
                + [_f(t[c]["attributed_ms"]) if c in ok else "n/a" for c in cols]
                + [SHORT.get(doc["winner"], "-") if doc["winner"] else "-", _r(doc["ratio"])])
    rows.append(["unattributed", ""]
                + [_f(t[c]["unattributed_ms"]) if c in ok else "n/a" for c in cols] + ["", ""])
    rows.append(["profiled total", ""]
                + [_f(t[c]["total_ms"]) if c in ok else "n/a" for c in cols] + ["", ""])
    walls = {c: doc["compilers"][c].get("run_ms") for c in cols if c in ok}
    if any(v is not None for v in walls.values()):  # a whole run, as the profiler saw it
        rows.append(["run (wall)", ""] + [_f(walls.get(c)) if c in ok else "n/a"
                                          for c in cols] + ["", ""])
    return head, rows, len(doc["rows"])


def _notes(doc):
    out = []
    for c in doc["columns"]:
        rec = doc["compilers"][c]
        name = SHORT.get(c, c)
        if rec["status"] != "ok":
            out.append("%s: %s" % (name, rec.get("reason", rec["status"])))
            continue
        um = rec.get("unmapped", [])
        if um:
            top = sorted(um, key=lambda k: -k["ms"])[:4]
            out.append("%s: %.3f ms in %d kernels that trace to no ONNX node (%s)" % (
                name, sum(k["ms"] for k in um), len(um),
                ", ".join("%s %.3f: %s" % (_clip(k["name"], 40), k["ms"], k["why"])
                          for k in top)))
        host = rec["unattributed_ms"] - sum(k["ms"] for k in um)
        if abs(host) > 5e-4:
            out.append("%s: %.3f ms outside its kernels (host steps)" % (name, host))
        inferred = sum(len(k.get("inferred", [])) for k in rec["kernels"])
        if inferred:
            out.append("%s: %d nodes attributed to a fused kernel from the graph (its profile "
                       "names only the fused node)" % (name, inferred))
        idle = set(doc.get("idle_nodes") or [])
        nk = [n for n in rec.get("no_kernel", []) if n not in idle]
        if nk:
            out.append("%s: no kernel for %d nodes (folded or eliminated): %s%s" % (
                name, len(nk), ", ".join(nk[:5]), " ..." if len(nk) > 5 else ""))
    if any(r.get("reference_kernel") for r in doc["rows"]):
        out.append("r after a time: that compiler ran a reference (unoptimised) kernel there")
    idle = doc.get("idle_nodes") or []
    if idle:
        out.append("%d nodes ran no kernel in any compiler (no row): %s%s" % (
            len(idle), ", ".join(idle[:5]), " ..." if len(idle) > 5 else ""))
    return out + doc.get("notes", [])


def text(doc):
    s = doc["settings"]
    lines = ["bench/layers %s: batch %d, %d threads, %d profiled runs after %d warm-up"
             % (doc["model"], s["batch"], s["threads"], s["runs"], s["warmup"]),
             "  each row: ONNX nodes that every compiler runs in whole kernels; ms = mean "
             "kernel time per run", ""]
    head, rows, n = _table(doc)
    tail = 4 if rows[-1][0] == "run (wall)" else 3
    widths = [max(len(str(x[i])) for x in [head] + rows) for i in range(len(head))]
    fmt = lambda r: "  ".join(str(v).ljust(w) if i < 2 else str(v).rjust(w)  # noqa: E731
                              for i, (v, w) in enumerate(zip(r, widths)))
    lines.append(fmt(head))
    body = rows[:-tail]
    for r in body:
        lines.append(fmt(r))
    if len(body) < n:
        lines.append("  ... %d more rows (--top)" % (n - len(body)))
    lines.append("-" * len(fmt(head)))
    for r in rows[-tail:]:
        lines.append(fmt(r))
    wins = doc.get("wins") or {}
    if wins:
        lines.append("")
        lines.append("rows won: " + ", ".join("%s %d" % (SHORT.get(c, c), v)
                                              for c, v in wins.items()))
    notes = _notes(doc)
    if notes:
        lines.append("")
        lines += ["note: " + x for x in notes]
    return "\n".join(lines) + "\n"


def markdown(doc):
    s = doc["settings"]
    out = ["# Layer by layer: %s" % doc["model"], "",
           "Batch %d, %d threads, %d profiled runs after %d warm-up (%s).  Each row is a set "
           "of ONNX nodes that every compiler runs in whole kernels; ms is the mean kernel "
           "time per run; ncc/best is ncc's time over the best vendor's."
           % (s["batch"], s["threads"], s["runs"], s["warmup"], doc["created"]), ""]
    head, rows, _ = _table(doc)
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(["---", "---"] + ["---:"] * (len(head) - 2)) + "|")
    for r in rows:
        out.append("| " + " | ".join(str(v).replace("|", "\\|") for v in r) + " |")
    notes = _notes(doc)
    if notes:
        out.append("")
        out += ["- " + x for x in notes]
    return "\n".join(out) + "\n"
