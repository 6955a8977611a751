#!/usr/bin/env python3
"""tests/py/test_harness_vendors.py — the vendor adapters of the experiment
harness (bench/harness/adapters/) against an oracle outside both ncc and the
harness, and a sweep with every vendor that must give live rows; label
`harness` (tests/harness_vendors.cmake).

  - each installed vendor adapter (onnxruntime, OpenVINO, XLA, TVM, IREE,
    TorchInductor default and max-autotune, torch eager) compiles and runs
    tiny blocks, and its output is compared here with onnxruntime
    ORT_DISABLE_ALL run directly on the block's ONNX file: the harness's own
    check (against ncc ref) is not what is trusted;
  - a tiny sweep (E5 amortization, E6 dynamic batch) with every vendor:
    every measurement the spec expands to has a row (no adapter drops rows
    silently), every installed vendor's rows are measured and valid, each
    row's environment names every vendor package's version, inductor rows
    carry a cold and a warm compile (the warm one hit inductor's cache) and
    E6's inductor rows ran with dynamic=True and count every recompile as a
    compile; the report says which vendors ran live;
  - an adapter with wrong outputs is a mismatch and one that cannot load is
    skipped with its reason: in the report, never silent.

A vendor that is not installed is not tested: when the rest passed the
script exits 77 with "skipped: ... not installed" (tools/setup.sh installs
them all; strict CI fails such a skip).  Uses $NCC (ncc ref is the sweep's
reference).  Prints "N passed, M failed"; exit 1 on a failure.
"""
import importlib.util
import json
import os
import shutil
import sys
import tempfile

from nccutil import check, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

from harness import adapters, envinfo, results, runner  # noqa: E402
from harness import spec as specmod  # noqa: E402
from harness.adapters.base import Adapter, Skipped  # noqa: E402
from harness.models import ModelCache, ModelSpec  # noqa: E402

NCC = os.environ.get("NCC")
RTOL = ATOL = 1e-3

# vendor -> (modules it needs, configurations to test)
VENDORS = {
    "onnxruntime": (["onnxruntime"], ["ALL"]),
    "openvino": (["openvino"], ["CPU"]),
    "xla": (["jax", "jaxlib"], ["jit"]),
    "tvm": (["tvm"], ["llvm"]),
    "iree": (["iree.compiler", "iree.runtime"], ["llvm-cpu"]),
    "inductor": (["torch"], ["eager", "default", "max-autotune"]),
}
MODEL = {"width": 4, "spatial": [4, 4], "seq": 4, "k": 3}
BLOCKS = ("resblock", "transformer")


def installed(name):
    mods = VENDORS[name][0]
    try:
        return all(importlib.util.find_spec(m) is not None for m in mods)
    except (ImportError, ValueError):
        return False


MISSING = [v for v in VENDORS if not installed(v)]
PRESENT = [v for v in VENDORS if v not in MISSING]
# NCC_VENDORS_TEST_ONLY=inductor,xla: only those (to debug one adapter; the
# others then count as not tested, and the script exits 77)
if os.environ.get("NCC_VENDORS_TEST_ONLY"):
    _only = os.environ["NCC_VENDORS_TEST_ONLY"].split(",")
    MISSING += [v for v in PRESENT if v not in _only]
    PRESENT = [v for v in PRESENT if v in _only]

# The shape modes a compiler does not have: those rows are skipped, with
# the adapter's reason; every other row must be measured.
UNSUPPORTED = {("xla", "jit", "symbolic")}


def oracle_output(path, x):
    """onnxruntime, graph as written (no rewrite), one thread: outside ncc
    and outside the harness's adapters."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def close_to(want, got, what):
    got = np.asarray(got)
    check(got.shape == want.shape, "%s: shape %s, oracle %s" % (what, got.shape, want.shape))
    err = np.abs(got.astype(np.float64) - want)
    bad = err > ATOL + RTOL * np.abs(want)
    check(not bad.any(), "%s: %d of %d elements off the oracle (max abs err %.3g)"
          % (what, int(bad.sum()), bad.size, float(err.max())))
    check(float(np.abs(want).max()) > 0, "%s: the oracle's output is all zeros" % what)


class _Task:
    """The slice of runner.Task an adapter's compile() reads."""

    def __init__(self, cache, ms, batch):
        self.cache, self.ms, self.batch = cache, ms, batch
        self.m = {"model": {}, "batch": batch}

    def model_path(self, batch=None):
        return self.cache.model_path(self.ms, batch)

    def params(self):
        return self.cache.params(self.ms)


def test_adapters_match_outside_oracle():
    root = tempfile.mkdtemp(prefix="ncc-vendors-")
    try:
        cache = ModelCache(root)
        for name in PRESENT:
            a = adapters.adapter_class(name)(1)
            a.load()
            for config in VENDORS[name][1]:
                # max-autotune compiles slowly (it benchmarks GEMM templates): one block
                for block in ("mlp",) if config == "max-autotune" else BLOCKS:
                    ms = ModelSpec(block, 1, MODEL["width"], 0, **{k: v for k, v in MODEL.items()
                                                                   if k != "width"})
                    batch = 2
                    x = cache.input(ms, batch, 0)[0]
                    want = oracle_output(cache.model_path(ms), x).astype(np.float64)
                    h = a.compile(_Task(cache, ms, batch), config, "default", None)
                    try:
                        got = a.to_numpy(a.run(h, a.prepare(h, x)))
                        close_to(want, got, "%s:%s on %s" % (name, config, block))
                        # a second call (the one a timed run makes) is right too
                        got = a.to_numpy(a.run(h, a.prepare(h, x)))
                        close_to(want, got, "%s:%s on %s, 2nd call" % (name, config, block))
                    finally:
                        a.release(h)
    finally:
        shutil.rmtree(root, ignore_errors=True)


SWEEP = {
    "name": "vendors-test", "threads": 1, "pin_cpus": False, "warmup": 1, "iters": 3,
    "model": MODEL,
    "compilers": {"ncc": ["ref"]},
    "experiments": [
        {"id": "E5", "kind": "amortize", "blocks": ["mlp"], "depth": 1},
        {"id": "E6", "kind": "dynamic", "blocks": ["mlp"], "depth": 1, "sequence": [1, 2, 3],
         "runs_per_shape": 4},
    ],
}


def _sweep_spec():
    s = json.loads(json.dumps(SWEEP))
    comps = {"ncc": ["ref"]}
    # max-autotune is checked against the oracle above; here it would only
    # add minutes of autotuning to what default already shows
    comps.update({v: [c for c in VENDORS[v][1] if c != "max-autotune"] for v in PRESENT})
    s["experiments"][0]["compilers"] = comps
    s["experiments"][1]["compilers"] = {v: [c for c in VENDORS[v][1] if c != "eager"][:1]
                                        for v in PRESENT}
    s["experiments"][1]["compilers"]["ncc"] = ["ref"]
    return specmod.normalize(s)


def test_sweep_has_live_vendor_rows():
    check(NCC, "set NCC to the ncc binary")
    spec = _sweep_spec()
    out = tempfile.mkdtemp(prefix="ncc-vendors-sweep-")
    try:
        sweep = runner.Sweep(spec, out, NCC, progress=False, log=None, plots=False)
        todo = sweep.prepare()
        sweep.run(todo)
        sweep.report()
        rows = list(results.index(results.read_rows(os.path.join(out, "results.jsonl")))
                    .values())
        keys = {k for k, _, _ in specmod.expand(sweep.resolved)}
        check({r["key"] for r in rows} == keys,
              "every measurement has a row: %d rows for %d measurements (missing %s)"
              % (len(rows), len(keys), sorted(keys - {r["key"] for r in rows})[:3]))
        for r in rows:
            check(not results.validate_row(r), "schema: %s" % results.validate_row(r))
        by = {}
        for r in rows:
            by.setdefault(r["config"]["compiler"], []).append(r)
        for v in PRESENT:
            vr = by.get(v, [])
            check(vr, "%s: no row at all" % v)
            for r in vr:
                what = "%s:%s %s" % (v, r["config"]["config"], r["config"]["kind"])
                c = r["config"]
                if (v, c["config"], c["shape_mode"]) in UNSUPPORTED:
                    why = adapters.adapter_class(v)(1).supports(c["config"], c["shape_mode"])
                    check(r["status"] == "skipped" and r["reason"] == why,
                          "%s: status %s (%s), want skipped: %s" % (what, r["status"],
                                                                    r.get("reason"), why))
                    continue
                check(r["status"] == "ok" and r["valid"],
                      "%s: status %s (%s)" % (what, r["status"], r.get("reason")))
                env = r["env"]
                check(env["compilers"].get(v), "%s: no version in env.compilers" % what)
                check(env["vendor_packages"].get(VENDOR_DIST[v]), "%s: no %s version in "
                      "env.vendor_packages" % (what, VENDOR_DIST[v]))
                if r["config"]["kind"] == "point":
                    check(r["result"]["latency_ms"]["median"] > 0, "%s: no latency" % what)
            configs = {r["config"]["config"] for r in vr}
            check(set(c for c in VENDORS[v][1] if c != "max-autotune") <= configs,
                  "%s: configurations measured %s" % (v, sorted(configs)))
        if "inductor" in PRESENT:
            _check_inductor(by["inductor"])
        md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
        for v in PRESENT:
            check("- **%s** " % v in md and ": live, " in md.split("- **%s** " % v, 1)[1]
                  .split("\n", 1)[0], "the report says %s ran live" % v)
        if "inductor" in PRESENT:
            check("## Compile time: cold and warm cache" in md and "`inductor:default`" in
                  md.split("## Compile time: cold and warm cache", 1)[1],
                  "the report has inductor's cold and warm compile")
    finally:
        shutil.rmtree(out, ignore_errors=True)


VENDOR_DIST = {"onnxruntime": "onnxruntime", "openvino": "openvino", "xla": "jaxlib",
               "tvm": "apache-tvm", "iree": "iree-base-runtime", "inductor": "torch"}


def _check_inductor(rows):
    for r in rows:
        res, c = r["result"], r["config"]
        if c["kind"] == "point" and c["config"] != "eager":
            what = "inductor:%s" % c["config"]
            for k in ("compile_cold_ms", "compile_warm_ms"):
                check(isinstance(res.get(k), float) and res[k] > 0, "%s: %s %r"
                      % (what, k, res.get(k)))
            check(res["compile_ms"] == res["compile_cold_ms"], "%s: compile_ms is the cold "
                  "compile" % what)
            check(abs(res["compile_warm_ms"] - res["build_warm_ms"] - res["first_run_warm_ms"])
                  < 1e-6, "%s: warm compile = build + first run (the lazy compile)" % what)
            ind = res["inductor"]
            check(ind["mode"] == c["config"], "%s: mode %r" % (what, ind["mode"]))
            check(ind["cold"]["counters"].get("fxgraph_cache_miss", 0) >= 1 and
                  not ind["cold"]["counters"].get("fxgraph_cache_hit"),
                  "%s: the cold compile missed the cache: %r" % (what, ind["cold"]))
            check(ind["warm_hit"], "%s: the warm compile hit the cache: %r" % (what, ind["warm"]))
        if c["kind"] == "sequence":
            what = "inductor E6 %s" % c["shape_mode"]
            steps = res["steps"]
            check([s["batch"] for s in steps] == [1, 2, 3], "%s: steps %r" % (what, steps))
            check(res["inductor"]["dynamic"] is {"symbolic": True, "static": False}
                  [c["shape_mode"]], "%s: dynamic %r" % (what, res["inductor"]["dynamic"]))
            check(steps[0]["compile_ms"] > 0, "%s: the first step compiles" % what)
            for s in steps[1:]:
                compiled = s["compile_ms"] > 0
                if c["shape_mode"] == "static":
                    check(compiled, "%s: static compiles at batch %d" % (what, s["batch"]))
                else:  # a recompile inside the first call is counted, and only then
                    check(compiled == ("recompiled_in_first_call" in s),
                          "%s: step %r" % (what, s))


class WrongVendor(Adapter):
    """A vendor whose outputs are off by 1%: its rows must be mismatches."""
    name = "wrongvendor"
    CONFIGS = ("fast",)

    def load(self):
        pass

    def compile(self, task, config, mode, batch):
        return task

    def run(self, task, x):
        return np.asarray(task.reference(x.shape[0])) * 1.01


class BrokenVendor(Adapter):
    """A vendor that cannot load here: skipped, with the reason."""
    name = "brokenvendor"
    install_hint = "pip install broken-vendor"
    CONFIGS = ("fast",)

    def load(self):
        raise Skipped("brokenvendor does not import (OSError: libfoo.so)", self.install_hint)


def test_wrong_or_broken_vendor_not_silent():
    check(NCC, "set NCC to the ncc binary")
    adapters.register("wrongvendor", WrongVendor)
    adapters.register("brokenvendor", BrokenVendor)
    spec = specmod.normalize({
        "name": "wrong", "warmup": 0, "iters": 2, "pin_cpus": False,
        "model": {"width": 2, "spatial": [2, 2], "k": 1},
        "compilers": {"ncc": ["ref"], "wrongvendor": ["fast"], "brokenvendor": ["fast"]},
        "experiments": [{"id": "E5", "kind": "amortize", "blocks": ["eltwise"]}]})
    out = tempfile.mkdtemp(prefix="ncc-vendors-wrong-")
    try:
        sweep = runner.Sweep(spec, out, NCC, progress=False, log=None, plots=False)
        sweep.run(sweep.prepare())
        sweep.report()
        rows = results.read_rows(os.path.join(out, "results.jsonl"))
        st = {r["config"]["compiler"]: r for r in rows}
        check(st["wrongvendor"]["status"] == "mismatch" and not st["wrongvendor"]["valid"],
              "wrong outputs: %r" % st["wrongvendor"]["status"])
        check(st["brokenvendor"]["status"] == "skipped" and "libfoo" in
              st["brokenvendor"]["reason"], "broken: %r" % st["brokenvendor"])
        md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
        line = md.split("- **wrongvendor**", 1)[1].split("\n", 1)[0]
        check("no valid row" in line, "report line of wrongvendor: %r" % line)
        line = md.split("- **brokenvendor**", 1)[1].split("\n", 1)[0]
        check("libfoo" in line and "pip install broken-vendor" in line,
              "report line of brokenvendor: %r" % line)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_env_names_every_vendor_package():
    vp = envinfo.vendor_packages()
    for d in ("onnxruntime", "openvino", "jax", "jaxlib", "apache-tvm", "iree-base-compiler",
              "iree-base-runtime", "torch", "onnx2torch"):
        check(d in vp, "env.vendor_packages lists %s: %r" % (d, sorted(vp)))
    cv = envinfo.compiler_versions()
    for v in PRESENT:
        check(cv.get(v), "env.compilers has %s's version: %r" % (v, cv))


if __name__ == "__main__":
    rc = run_cases([test_env_names_every_vendor_package, test_wrong_or_broken_vendor_not_silent,
                    test_adapters_match_outside_oracle, test_sweep_has_live_vendor_rows])
    if rc == 0 and MISSING:
        print("skipped: vendor(s) not installed: %s (bash tools/setup.sh installs them; "
              "pip install -r bench/requirements-vendors.txt)" % ", ".join(MISSING))
        sys.exit(77)
    sys.exit(rc)
