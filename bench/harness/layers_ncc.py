"""bench/harness/layers_ncc.py — ncc's per-kernel profile for bench/layers.

`ncc bench MODEL --profile --json --batch B --threads N --warmup W --iters
R` prints the usual bench object with a "profile" key (docs/CLI.md):
  {"runs", "total_ms", "kernels": [{"name", "ops", "nodes", "shapes", "ms",
   "share", "calls", "gflops", "gbps", "roofline", "ref"}]}
where "nodes" are the ONNX node names fused into the kernel (they survive
import as IR node names) and total_ms includes host steps.  A kernel's
"nodes" are its "originals" (layers_attr); its time beyond the kernels
(total_ms minus the kernels that map to nodes) is ncc's unattributed time.
An ncc that predates the profiler rejects --profile or prints no
"profile": NoProfile, and the report says "this ncc has no --profile".
"""
import json

from .layers_attr import attribute, finish
from .nccbin import NccError


class NoProfile(Exception):
    pass


NO_PROFILE = "this ncc has no --profile"


def parse_ncc_profile(doc, graph):
    """The ncc profile record of a `ncc bench --profile --json` object."""
    if isinstance(doc, list):  # one object per batch: the first
        doc = doc[0] if doc else {}
    prof = doc.get("profile") if isinstance(doc, dict) else None
    if not isinstance(prof, dict):
        raise NoProfile(NO_PROFILE)
    kernels = []
    for k in prof.get("kernels") or []:
        ops = k.get("ops") or []
        kernels.append({"name": k.get("name", "?"), "op": "+".join(ops) if ops else None,
                        "ms": float(k.get("ms") or 0.0), "calls": k.get("calls"),
                        "ref": k.get("ref"),
                        "originals": list(k.get("nodes") or [])})
    rec = attribute(graph, kernels, infer=False)
    rec["runs"] = prof.get("runs")
    if prof.get("run_ms") is not None:
        rec["run_ms"] = prof["run_ms"]
    for key in ("peak_gflops", "peak_gbps"):
        if prof.get(key) is not None:
            rec[key] = prof[key]
    return finish(rec, graph, prof.get("total_ms"))


def run_ncc_profile(ncc, path, graph, batch, threads, warmup, runs, inputs, timeout):
    """Run the profiler; (record, the bench object).  inputs: [name=file.npy]."""
    args = ["bench", path, "--profile", "--json", "--batch", str(batch),
            "--threads", str(threads), "--warmup", str(warmup), "--iters", str(runs)]
    for it in inputs:
        args += ["--input", it]
    try:
        out, _ = ncc.check(args, env={"NCC_NUM_THREADS": str(threads)}, timeout=timeout)
    except NccError as e:
        if "--profile" in e.line and ("unknown" in e.line or "unrecognized" in e.line):
            raise NoProfile(NO_PROFILE)
        raise RuntimeError(e.line)
    doc = _json_of(out)
    rec = parse_ncc_profile(doc, graph)
    rec["version"] = ncc.version()
    return rec, doc


def _json_of(out):
    try:
        return json.loads(out)
    except ValueError:
        lines = [l for l in out.splitlines() if l.strip().startswith(("{", "["))]
        if not lines:
            raise RuntimeError("ncc bench printed no JSON object")
        return json.loads(lines[-1])
