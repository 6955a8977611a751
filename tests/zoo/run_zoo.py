#!/usr/bin/env python3
"""tests/zoo/run_zoo.py — run the model zoo through ncc and compare with torch.

For every model of models.py (exported and cached by export.py, which this
script calls for what is not cached yet):
  1. `ncc check MODEL --json`: the ops (dtypes, opset) ncc lacks; a model
     with any is "unsupported: Op xN, ..." and is not run;
  2. `ncc run MODEL --target=T` for each --target (ref, cpu, opencl...) with
     torch's inputs as .npy files;
  3. each output against torch's: max|ncc - torch| / max|torch| <= 1e-4 (a
     model's `tol` in models.py may be looser, with a written reason);
     integer outputs must be equal; shapes and dtypes must match.
A status is one of: pass, mismatch (numbers), fail (ncc exit, a message),
unsupported (ncc check), export-failed, degenerate (the torch model's
outputs are constant or ignore the input: the zoo entry is broken).

The statuses are compared with tests/zoo/EXPECTED (one line per model:
`name ref-status cpu-status`, status words pass / fail; the lead updates it
when op branches land): a model expected to pass that does not is a
REGRESSION (exit 1); a model that passes but is expected to fail is reported
as NEWLY PASSING (exit 0, update EXPECTED).  A model or target missing
from EXPECTED is expected to fail.

With --bench, each passing model also gets `ncc bench --json` (1 warmup,
3 iterations) for its compile time and median latency; without it the
table's compile column is the wall time of the whole `ncc run` (import,
compile and one run) and latency is left empty.

Usage: NCC=build/ncc python3 tests/zoo/run_zoo.py [--target ref,cpu] [-k REGEX]
         [--cache DIR] [--markdown FILE] [--json FILE] [--bench] [--update-expected]
Exit 0 when nothing regressed against EXPECTED, 1 otherwise, 77 (skipped)
without torch/torchvision/transformers.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

EXPECTED_FILE = os.path.join(HERE, "EXPECTED")
NCC_TIMEOUT = float(os.environ.get("NCC_ZOO_TIMEOUT", "600"))


def read_expected(path=EXPECTED_FILE):
    exp = {}
    if not os.path.exists(path):
        return exp
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        name, rest = line[0], line[1:]
        exp[name] = {}
        for item in rest:
            t, _, s = item.partition("=")
            exp[name][t] = s
    return exp


def write_expected(results, targets, path=EXPECTED_FILE, old=None):
    old = old or {}
    lines = ["# tests/zoo/EXPECTED — the zoo's expected status per model and target",
             "# (pass or fail), compared by run_zoo.py: an expected pass that fails",
             "# is a regression. Regenerate with run_zoo.py --update-expected after",
             "# merging op branches (only the targets that were run are rewritten).",
             "# name target=status ..."]
    names = sorted(set(old) | {r["name"] for r in results})
    by = {r["name"]: r for r in results}
    for n in names:
        st = dict(old.get(n, {}))
        if n in by:
            for t in targets:
                st[t] = "pass" if by[n]["status"].get(t) == "pass" else "fail"
        lines.append("%-22s %s" % (n, " ".join("%s=%s" % kv for kv in sorted(st.items()))))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def ncc_check(ncc, onnx_path):
    """[] when ncc supports everything in the model, else ["Trilu x2", ...]."""
    p = subprocess.run([ncc, "check", onnx_path, "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=NCC_TIMEOUT)
    out = p.stdout.decode("utf-8", "replace")
    try:
        j = json.loads(out)
    except ValueError:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return ["check exit %d: %s" % (p.returncode, err[0] if err else "?")]
    probs = []
    for q in j.get("problems", []):
        label = q["name"] if q["kind"] == "op" else "%s %s" % (q["kind"], q["name"])
        probs.append("%s x%d" % (label, q.get("count", 1)))
    if p.returncode not in (0, 3) and not probs:
        probs.append("check exit %d" % p.returncode)
    return probs


def compare(names, want, got, tol, exact):
    """(ok, worst relative error, reason)."""
    import numpy as np
    worst, reasons = 0.0, []
    for n in names:
        w, g = want[n], got.get(n)
        if g is None:
            reasons.append("%s: no output" % n)
            continue
        if g.shape != w.shape:
            reasons.append("%s: shape %s, torch %s" % (n, g.shape, w.shape))
            continue
        if w.dtype.kind != "f" or n in exact:
            if g.dtype.kind != w.dtype.kind and not (g.dtype.kind in "iu" and w.dtype.kind in "iu"):
                reasons.append("%s: dtype %s, torch %s" % (n, g.dtype, w.dtype))
            elif not np.array_equal(g.astype(np.int64) if g.dtype.kind != "f" else g, w):
                reasons.append("%s: %d of %d elements differ" % (n, int((g != w).sum()), w.size))
            continue
        if g.dtype != w.dtype:
            reasons.append("%s: dtype %s, torch %s" % (n, g.dtype, w.dtype))
            continue
        if w.size == 0:
            continue
        scale = float(np.abs(w).max()) or 1.0
        with np.errstate(invalid="ignore"):
            d = np.abs(g.astype(np.float64) - w.astype(np.float64))
        err = float(np.nanmax(d)) / scale if not np.isnan(d).all() else float("inf")
        if np.isnan(g).any() and not np.isnan(w).any():
            err = float("inf")
        worst = max(worst, err)
        if not err <= tol:
            reasons.append("%s: max|ncc-torch|/max|torch| = %.2e > %.0e" % (n, err, tol))
    return not reasons, worst, "; ".join(reasons)


def bound(meta):
    """The model's relative bound: its entry's tol (1e-4 unless models.py
    gives a reason), raised to 4x the distance between float32 and float64
    torch on this model when that is larger: a random-weight net can
    amplify rounding, and no float32 implementation (ncc, onnxruntime)
    can be held closer to torch than torch's own float32 error."""
    f = meta.get("torch_f32_vs_f64")
    return max(meta["tol"], 4.0 * f) if f is not None else meta["tol"]


def run_target(ncc, onnx_path, meta, arrays, target, work):
    """One `ncc run`: (status, worst rel err, detail, wall ms)."""
    import numpy as np
    import nccutil
    outdir = os.path.join(work, "out-" + target)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    cmd = [ncc, "run", onnx_path, "--target=" + target, "--output-dir", outdir]
    for i, name in enumerate(meta["inputs"]):
        p = os.path.join(work, "in%d.npy" % i)
        if not os.path.exists(p):
            np.save(p, arrays["in." + name], allow_pickle=False)
        cmd += ["--input", "%s=%s" % (name, p)]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=NCC_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "fail", None, "timed out after %gs" % NCC_TIMEOUT, None
    wall_ms = (time.time() - t0) * 1000.0
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
        errs = [l for l in lines if l.startswith("ncc: error:")] or lines or ["(no stderr)"]
        return "fail", None, "exit %d: %s" % (proc.returncode, errs[0]), wall_ms
    outs = list(meta["outputs"])
    got = {}
    for i, n in enumerate(outs):
        p = os.path.join(outdir, nccutil.output_file_name(n, i))
        if os.path.exists(p):
            got[n] = np.load(p, allow_pickle=False)
    want = {n: arrays["out." + n] for n in outs}
    ok, err, why = compare(outs, want, got, bound(meta), set(meta.get("exact_outputs", [])))
    return ("pass" if ok else "mismatch"), err, why, wall_ms


def bench(ncc, onnx_path, meta, target, work):
    """(compile ms, median latency ms) from `ncc bench --json`, or Nones."""
    cmd = [ncc, "bench", onnx_path, "--target=" + target, "--json", "--warmup", "1",
           "--iters", "3"]
    for i, name in enumerate(meta["inputs"]):
        cmd += ["--input", "%s=%s" % (name, os.path.join(work, "in%d.npy" % i))]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=NCC_TIMEOUT)
        j = json.loads(p.stdout.decode())
        return j.get("compile_ms"), (j.get("latency_ms") or {}).get("median")
    except (subprocess.TimeoutExpired, ValueError):
        return None, None


def fmt_params(n):
    if n is None:
        return ""
    return "%.1fM" % (n / 1e6) if n >= 1e6 else "%.1fk" % (n / 1e3) if n >= 1e3 else str(n)


def cell(r, t):
    s = r["status"].get(t, "-")
    if s in ("pass", "-"):
        return s
    if s == "unsupported":
        return "unsupported: " + ", ".join(r["unsupported"])
    return "%s: %s" % (s, r["detail"].get(t, ""))[:160]


def markdown(results, targets, benched):
    tl = targets[-1]
    head = ["model", "source", "ops", "params"] + ["%s" % t for t in targets] + \
        ["max rel err (bound)",
         ("compile ms (%s)" if benched else "ncc run wall ms (%s)") % tl,
         "latency ms (%s)" % tl]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        errs = [r["err"][t] for t in targets if r["err"].get(t) is not None]
        comp = r["compile_ms"].get(tl)
        lat = r["latency_ms"].get(tl)
        row = [r["name"], r["family"], str(r.get("nodes", "")), fmt_params(r.get("params"))]
        row += [cell(r, t).replace("|", "/") for t in targets]
        b = r.get("bound")
        row += [("%.1e" % max(errs) if errs else "") +
                (" (%.1e)" % b if b is not None and b > 1e-4 and errs else ""),
                "%.0f" % comp if comp is not None else "",
                "%.2f" % lat if lat is not None else ""]
        rows.append("| " + " | ".join(row) + " |")
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    ap.add_argument("--target", default="ref,cpu", help="comma-separated targets (default ref,cpu)")
    ap.add_argument("-k", dest="pattern", help="only models whose name matches this regex")
    ap.add_argument("--cache", help="cache dir (default $NCC_ZOO_CACHE, else ~/.cache/ncc-zoo/<torch>)")
    ap.add_argument("--markdown", help="write the status table (markdown) to this file ('-': stdout)")
    ap.add_argument("--json", dest="json_out", help="write the results as JSON to this file")
    ap.add_argument("--bench", action="store_true", help="also `ncc bench` each passing model")
    ap.add_argument("--update-expected", action="store_true",
                    help="rewrite tests/zoo/EXPECTED from this run's statuses")
    ap.add_argument("--expected", default=EXPECTED_FILE, help="the expected-status file")
    a = ap.parse_args()
    try:
        import numpy as np  # noqa: F401
        import onnx  # noqa: F401
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        print("skipped: %s (tools/setup.sh installs tools/requirements-zoo.txt)" % e)
        return 77
    import export
    import nccutil
    ncc = nccutil.find_ncc(a.ncc)
    targets = [t for t in a.target.split(",") if t]
    for t in targets:
        nccutil.require_target(ncc, t)
    cache = export.cache_dir(a.cache)
    ms = export.select(a.pattern)
    if not ms:
        sys.exit("error: no model matches %r" % a.pattern)

    t0 = time.time()
    errors = export.ensure(ms, cache)
    t_export = time.time() - t0
    expected = read_expected(a.expected)
    results = []
    work_root = tempfile.mkdtemp(prefix="ncc-zoo-")
    try:
        for m in ms:
            r = {"name": m.name, "family": m.family, "status": {}, "detail": {}, "err": {},
                 "compile_ms": {}, "latency_ms": {}, "unsupported": []}
            results.append(r)
            if m.name in errors:
                for t in targets:
                    r["status"][t], r["detail"][t] = "export-failed", errors[m.name]
                continue
            onnx_path, meta, arrays = export.load(m, cache)
            r.update(nodes=meta["nodes"], params=meta["params"], key=meta["key"],
                     ort_rel_err=meta["ort_rel_err"], bound=bound(meta),
                     torch_f32_vs_f64=meta.get("torch_f32_vs_f64"))
            if meta["degenerate"]:
                for t in targets:
                    r["status"][t], r["detail"][t] = "degenerate", "; ".join(meta["degenerate"])
                continue
            r["unsupported"] = ncc_check(ncc, onnx_path)
            if r["unsupported"]:
                for t in targets:
                    r["status"][t] = "unsupported"
                    r["detail"][t] = ", ".join(r["unsupported"])
                continue
            work = os.path.join(work_root, m.name)
            os.makedirs(work)
            for t in targets:
                st, err, why, wall = run_target(ncc, onnx_path, meta, arrays, t, work)
                r["status"][t], r["err"][t], r["detail"][t] = st, err, why
                r["compile_ms"][t] = wall  # wall of the whole `ncc run` unless --bench
                if a.bench and st == "pass":
                    c, lat = bench(ncc, onnx_path, meta, t, work)
                    r["compile_ms"][t], r["latency_ms"][t] = c, lat
            shutil.rmtree(work, ignore_errors=True)
            line = "  ".join("%s %s" % (t, r["status"][t]) for t in targets)
            print("%-22s %s%s" % (m.name, line, "" if all(
                r["status"][t] == "pass" for t in targets) else "  (" + "; ".join(
                    "%s: %s" % (t, r["detail"][t]) for t in targets if r["detail"][t]) + ")"),
                flush=True)
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    t_run = time.time() - t0 - t_export

    regress, newly = [], []
    for r in results:
        for t in targets:
            want = expected.get(r["name"], {}).get(t, "fail")
            got = r["status"][t]
            if want == "pass" and got != "pass":
                regress.append("%s on %s: %s (%s)" % (r["name"], t, got, r["detail"].get(t, "")))
            elif want != "pass" and got == "pass":
                newly.append("%s on %s" % (r["name"], t))
        if r["unsupported"]:
            print("%-22s unsupported: %s" % (r["name"], ", ".join(r["unsupported"])))
    for r in results:
        for t in targets:
            if r["status"][t] in ("export-failed", "degenerate"):
                print("%-22s %s: %s" % (r["name"], r["status"][t], r["detail"][t]))
    md = markdown(results, targets, a.bench)
    if a.markdown == "-":
        sys.stdout.write(md)
    elif a.markdown:
        with open(a.markdown, "w") as f:
            f.write(md)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"targets": targets, "export_s": round(t_export, 1),
                       "run_s": round(t_run, 1), "models": results}, f, indent=1)
    if a.update_expected:
        write_expected(results, targets, a.expected, expected)
        print("wrote", a.expected)
    for t in targets:
        n = sum(1 for r in results if r["status"][t] == "pass")
        print("%s: %d of %d models pass" % (t, n, len(results)))
    for s in newly:
        print("NEWLY PASSING (update tests/zoo/EXPECTED): " + s)
    for s in regress:
        print("REGRESSION: " + s)
    print("export/cache %.0fs, ncc %.0fs; %d regressions, %d newly passing" % (
        t_export, t_run, len(regress), len(newly)))
    # the python suites' summary line
    npass = sum(1 for r in results for t in targets
                if r["status"][t] == "pass" or expected.get(r["name"], {}).get(t, "fail") != "pass")
    print("%d passed, %d failed" % (npass, len(regress)))
    return 1 if regress else 0


if __name__ == "__main__":
    sys.exit(main())
