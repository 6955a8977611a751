"""bench/harness/layers_vendors.py — per-kernel profiles of the vendors,
each read the way the vendor exposes it, as layers_attr kernel lists.

onnxruntime: SessionOptions.enable_profiling (the harness's own session
  options otherwise: every graph optimisation, the thread count), `warmup`
  runs then `runs` runs, end_profiling(), and its Chrome-trace JSON parsed
  by parse_ort_events: events of cat "Node" named "<node>_kernel_time"
  (dur in microseconds, args.op_name, args.provider), each assigned to the
  "model_run" event it falls in so the warm-up runs are dropped; a
  kernel's ms is its time summed over the timed runs divided by their
  number.  ORT's profile names only the node a fused kernel became, so its
  fusions are reconstructed from the graph (layers_attr, infer=True).
OpenVINO: compiled with PERF_COUNT (ov.properties.enable_profiling) and the
  harness's properties; after each timed run the request's profiling_info
  (node_name, node_type, exec_type, real_time, status); EXECUTED entries
  are kernels, NOT_RUN ones were fused away.  The runtime model
  (compiled.get_runtime_model()) lists for every executed node the
  original layers fused into it (rt_info "originalLayersNames"): that is
  the kernel's "originals", no guessing needed.
"""
import json
import os

from .adapters.base import Skipped
from .layers_attr import attribute, finish

ORT_SUFFIX = "_kernel_time"


def parse_ort_events(events, graph, skip_runs=0):
    """The onnxruntime profile record of a parsed profiling JSON (a list of
    trace events): kernels attributed to nodes, runs counted."""
    if isinstance(events, dict):  # some versions wrap the list
        events = events.get("traceEvents", [])
    runs = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in events
                  if e.get("cat") == "Session" and e.get("name") == "model_run")
    timed = runs[skip_runs:]
    sums, order = {}, []
    for e in events:
        name = e.get("name") or ""
        if e.get("cat") != "Node" or not name.endswith(ORT_SUFFIX):
            continue
        if runs:
            ts = e.get("ts", 0)
            if not any(lo <= ts <= hi for lo, hi in timed):
                continue
        args = e.get("args") or {}
        key = name[: -len(ORT_SUFFIX)]
        if key not in sums:
            order.append(key)
            sums[key] = {"name": key, "op": args.get("op_name"),
                         "provider": args.get("provider"), "us": 0.0, "n": 0}
        sums[key]["us"] += float(e.get("dur", 0))
        sums[key]["n"] += 1
    n_runs = len(timed) if runs else 1
    if not n_runs:
        raise ValueError("the onnxruntime profile holds %d runs, %d of them warm-up"
                         % (len(runs), skip_runs))
    kernels = [{"name": k, "op": s["op"], "provider": s["provider"],
                "ms": s["us"] / 1e3 / n_runs, "calls": s["n"] / n_runs}
               for k, s in ((k, sums[k]) for k in order)]
    rec = attribute(graph, kernels, infer=True)
    rec["runs"] = n_runs
    run_ms = [(hi - lo) / 1e3 for lo, hi in timed]
    rec["run_ms"] = sum(run_ms) / len(run_ms) if run_ms else None
    return finish(rec, graph)


def _ms(t):
    """real_time of a profiling_info entry (a timedelta, or ms already)."""
    return t.total_seconds() * 1e3 if hasattr(t, "total_seconds") else float(t)


def parse_ov_runs(runs, graph, originals=None):
    """The OpenVINO profile record of per-run profiling_info lists (each
    entry {node_name, node_type, exec_type, real_time (ms or timedelta),
    status}); originals: {node_name: [original layer names]} from the
    runtime model, or None (then names alone are traced)."""
    if not runs:
        raise ValueError("no OpenVINO profiling runs")
    sums, order = {}, []
    for run in runs:
        for p in run:
            if str(p["status"]).split(".")[-1] != "EXECUTED":
                continue
            name = p["node_name"]
            if name not in sums:
                order.append(name)
                sums[name] = {"name": name, "op": p.get("node_type"),
                              "exec_type": p.get("exec_type"), "ms": 0.0, "n": 0}
            sums[name]["ms"] += _ms(p["real_time"])
            sums[name]["n"] += 1
    kernels = []
    for name in order:
        s = sums[name]
        k = {"name": name, "op": s["op"], "exec_type": s["exec_type"],
             "ms": s["ms"] / len(runs), "calls": s["n"] / len(runs)}
        orig = (originals or {}).get(name)
        if orig:
            k["originals"] = orig
        kernels.append(k)
    rec = attribute(graph, kernels, infer=False)
    rec["runs"] = len(runs)
    return finish(rec, graph)


def profile_ort(path, feeds, threads, warmup, runs, tmpdir):
    """Live onnxruntime profile of the model (Skipped when not installed)."""
    from .adapters.ort import OrtAdapter
    a = OrtAdapter(threads)
    a.load()
    so = a.session_options("ALL")
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tmpdir, "ort-profile")
    sess = a.ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for _ in range(warmup + runs):
        sess.run(None, feeds)
    prof = sess.end_profiling()
    with open(prof) as f:
        events = json.load(f)
    rec = parse_ort_events(events, _graph_of(path), skip_runs=warmup)
    rec["version"] = a.version() if hasattr(a, "version") else None
    rec["profile_file"] = prof
    return rec


def profile_ov(path, feeds, threads, warmup, runs):
    """Live OpenVINO profile of the model (Skipped when not installed)."""
    from .adapters.openvino import OpenVinoAdapter
    a = OpenVinoAdapter(threads)
    a.load()
    props = a.properties()
    props["PERF_COUNT"] = "YES"
    compiled = a.core.compile_model(path, "CPU", props)
    req = compiled.create_infer_request()
    for _ in range(warmup):
        req.infer(feeds)
    per_run = []
    for _ in range(runs):
        req.infer(feeds)
        per_run.append([{"node_name": p.node_name, "node_type": p.node_type,
                         "exec_type": p.exec_type, "real_time": _ms(p.real_time),
                         "status": str(p.status)} for p in req.profiling_info])
    originals = {}
    try:
        for op in compiled.get_runtime_model().get_ordered_ops():
            rt = op.get_rt_info()
            if "originalLayersNames" in rt:
                names = [s for s in rt["originalLayersNames"].astype(str).split(",") if s]
                originals[op.get_friendly_name()] = names
    except Exception:  # an older runtime model without rt_info: names alone
        originals = None
    rec = parse_ov_runs(per_run, _graph_of(path), originals)
    rec["version"] = a.version() if hasattr(a, "version") else None
    if originals is None:
        rec.setdefault("notes", []).append("the runtime model lists no original layers: "
                                           "fused layers traced by name only")
    return rec


_GRAPHS = {}


def _graph_of(path):
    from .layers_graph import Graph
    if path not in _GRAPHS:
        _GRAPHS[path] = Graph.from_onnx(path)
    return _GRAPHS[path]


VENDOR_PROFILERS = {"onnxruntime": "profile_ort", "openvino": "profile_ov"}
ALIASES = {"ort": "onnxruntime", "onnxruntime": "onnxruntime", "openvino": "openvino",
           "ov": "openvino"}
SHORT = {"onnxruntime": "ort", "openvino": "ov", "ncc": "ncc"}

__all__ = ["parse_ort_events", "parse_ov_runs", "profile_ort", "profile_ov", "Skipped"]
