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
The vendors' timed runs are interleaved (profile_vendors), one run each per
round; ncc profiles in its own process before them.
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


class OrtProfiler:
    """A live onnxruntime session with profiling on (Skipped when
    onnxruntime is not installed); run() once per run, then record()."""
    key = "onnxruntime"

    def __init__(self, path, threads, tmpdir):
        from .adapters.ort import OrtAdapter
        a = OrtAdapter(threads)
        a.load()
        so = a.session_options("ALL")
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmpdir, "ort-profile")
        self.path, self.adapter = path, a
        self.sess = a.ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    def run(self, feeds, timed):
        self.sess.run(None, feeds)

    def record(self, warmup):
        prof = self.sess.end_profiling()
        try:
            with open(prof) as f:
                events = json.load(f)
        finally:
            os.unlink(prof)
        rec = parse_ort_events(events, _graph_of(self.path), skip_runs=warmup)
        rec["version"] = self.adapter.version()
        return rec


class OvProfiler:
    """A live OpenVINO request with PERF_COUNT (Skipped when openvino is
    not installed); run() once per run, then record()."""
    key = "openvino"

    def __init__(self, path, threads, tmpdir=None):
        from .adapters.openvino import OpenVinoAdapter
        a = OpenVinoAdapter(threads)
        a.load()
        props = a.properties()
        props["PERF_COUNT"] = "YES"
        self.path, self.adapter = path, a
        self.compiled = a.core.compile_model(path, "CPU", props)
        self.req = self.compiled.create_infer_request()
        self.per_run = []

    def run(self, feeds, timed):
        self.req.infer(feeds)
        if timed:
            self.per_run.append([{"node_name": p.node_name, "node_type": p.node_type,
                                  "exec_type": p.exec_type, "real_time": _ms(p.real_time),
                                  "status": str(p.status)} for p in self.req.profiling_info])

    def record(self, warmup):
        originals = {}
        try:
            for op in self.compiled.get_runtime_model().get_ordered_ops():
                rt = op.get_rt_info()
                if "originalLayersNames" in rt:
                    names = [s for s in rt["originalLayersNames"].astype(str).split(",") if s]
                    originals[op.get_friendly_name()] = names
        except Exception:  # an older runtime model without rt_info: names alone
            originals = None
        rec = parse_ov_runs(self.per_run, _graph_of(self.path), originals)
        rec["version"] = self.adapter.version()
        if originals is None:
            rec.setdefault("notes", []).append("the runtime model lists no original layers: "
                                               "fused layers traced by name only")
        return rec


def profile_vendors(profilers, feeds, warmup, runs):
    """Warm every profiler up, then `runs` rounds in which each takes one
    run, the first turn rotating: a change in the machine's load during
    the runs hits every vendor alike (as bench/compare's rounds do)."""
    for p in profilers:
        for _ in range(warmup):
            p.run(feeds, False)
    for r in range(runs):
        for j in range(len(profilers)):
            profilers[(r + j) % len(profilers)].run(feeds, True)
    return {p.key: p.record(warmup) for p in profilers}


PROFILERS = {"onnxruntime": OrtProfiler, "openvino": OvProfiler}


_GRAPHS = {}


def _graph_of(path):
    from .layers_graph import Graph
    if path not in _GRAPHS:
        _GRAPHS[path] = Graph.from_onnx(path)
    return _GRAPHS[path]


ALIASES = {"ort": "onnxruntime", "onnxruntime": "onnxruntime", "openvino": "openvino",
           "ov": "openvino"}
SHORT = {"onnxruntime": "ort", "openvino": "ov", "ncc": "ncc"}

__all__ = ["parse_ort_events", "parse_ov_runs", "OrtProfiler", "OvProfiler",
           "profile_vendors", "Skipped"]
