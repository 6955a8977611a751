"""bench/harness/report_vendors.py — the report's vendor parts: which vendor
compilers ran live here (with the version each row recorded) and which could
not (with the one-line reason), and the cold and warm compile times of the
compilers that record both (TorchInductor: adapters/inductor.py).

A vendor with no measured row is never silent: it is "skipped" with its
reason and install command, or its rows' failure statuses are counted.
"""
from . import report_fmt as F
from . import report_rows as rr
from . import results

# ncc is the subject, not a vendor
SUBJECT = "ncc"


def _label(row):
    c = row["config"]
    md = c["model"]
    return "%s d%d w%d b%s" % (md["block"], md["depth"], md["width"], c.get("batch", "?"))


def vendor_status(spec, rows):
    """{vendor: {"configs": [...], "ok": n, "rows": n, "statuses": {...},
    "reason": first skip/error reason, "version": ...}} over the compilers
    the spec names (top level and per experiment)."""
    names = {}
    # a resolved spec gives every experiment its compilers (--compilers
    # filters those); the top-level table only when no experiment has one
    tables = [e["compilers"] for e in spec.get("experiments", []) if e.get("compilers")]
    for table in tables or [spec.get("compilers") or {}]:
        for n, configs in table.items():
            if n != SUBJECT:
                cs = names.setdefault(n, [])
                cs += [c for c in configs if c not in cs]
    out = {n: {"configs": cs, "ok": 0, "rows": 0, "statuses": {}, "reason": None,
               "hint": None, "version": None} for n, cs in names.items()}
    for r in rows:
        n = r["config"]["compiler"]
        if n not in out:
            continue
        v = out[n]
        v["rows"] += 1
        v["statuses"][r["status"]] = v["statuses"].get(r["status"], 0) + 1
        if r["status"] in results.MEASURED and rr.valid(r):
            v["ok"] += 1
        elif v["reason"] is None and r.get("reason"):
            v["reason"], v["hint"] = r["reason"], r.get("hint")
        ver = ((r.get("env") or {}).get("compilers") or {}).get(n)
        v["version"] = v["version"] or ver
    return out


def vendors_line(spec, rows):
    """One line per vendor: live (how many of its rows measured and valid)
    or why not."""
    st = vendor_status(spec, rows)
    if not st:
        return "Vendors: none in this spec."
    parts = []
    for n, v in sorted(st.items()):
        cfg = ", ".join(v["configs"])
        if v["ok"]:
            others = ", ".join("%d %s" % (k, s) for s, k in sorted(v["statuses"].items())
                               if s != "ok")
            parts.append("- **%s** %s (%s): live, %d of %d rows valid%s" % (
                n, v["version"] or "", cfg, v["ok"], v["rows"],
                "; %s" % others if others else ""))
        elif v["rows"]:
            parts.append("- **%s** (%s): no valid row: %s%s" % (
                n, cfg, (v["reason"] or "see Flagged rows")[:160],
                " (`%s`)" % v["hint"] if v["hint"] else ""))
        else:
            parts.append("- **%s** (%s): no row in this run (filtered out)" % (n, cfg))
    return "Vendors in this run:\n\n" + "\n".join(parts)


def compile_cold_warm(rows):
    """The table of rows that recorded a cold and a warm compile, or None."""
    out = []
    for r in rows:
        res = r.get("result") or {}
        if not rr.valid(r) or res.get("compile_warm_ms") is None:
            continue
        cold = res.get("compile_cold_ms", res.get("compile_ms"))
        warm = res["compile_warm_ms"]
        ind = res.get("inductor") or {}
        hit = ind.get("warm_hit")
        out.append((_label(r), rr.cid_of(r), cold, res.get("build_ms"),
                    res.get("first_run_ms"), warm,
                    cold / warm if warm else None,
                    "yes" if hit else ("no" if hit is not None else "–")))
    if not out:
        return None
    out.sort(key=lambda t: (t[1], t[0]))
    hdr = ["model", "compiler", "cold compile ms", "(build + first run)", "warm compile ms",
           "cold / warm", "warm hit the cache"]
    cells = [[m, "`%s`" % c, F.fnum(cold), "%s + %s" % (F.fnum(b), F.fnum(f)), F.fnum(w),
              F.fx(q), hit] for m, c, cold, b, f, w, q, hit in out]
    return ("Compile time with a cold and a warm cache, model to first result. Cold: "
            "a fresh, empty TORCHINDUCTOR_CACHE_DIR and nothing compiled in the process "
            "(the row's compile time everywhere else in this report); warm: the same "
            "directory after torch._dynamo.reset() and inductor's in-process caches "
            "cleared, which is what a second process start pays. Single compiles, not "
            "repeated: rough.\n\n" + F.table(hdr, cells))
