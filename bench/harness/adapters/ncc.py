"""bench/harness/adapters/ncc.py — ncc, in this process through libncc.

A configuration is the target followed by ncc pipeline flags, exactly as
they would be typed: "ref", "cpu -O0", "cpu -O2 --disable-pass=cse".  A
pass that this ncc does not have (say 'fusion' before it exists) makes the
row skipped with that reason rather than failed.

Point measurements run ncc in-process, as every vendor runs (ncclib.py:
the build's libncc.a linked into a shared library and loaded with ctypes).
compile() is what `ncc bench` does before it times (model file -> graph,
the pass pipeline, the target's backend), so build_ms is ncc bench's
compile_ms; prepare/run/to_numpy/release make ncc an ordinary in-process
adapter, and the base class's protocol applies unchanged: first run,
check against the reference, then timing in rounds interleaved with the
other rows of the same model and batch (runner.py, measure.py), with the
same clock and the same output policy as the vendors (fresh outputs per
call, ncc_module_run; or, under outputs = "preallocated", the first run's
outputs reused by ncc_module_run_into, as onnxruntime's IOBinding).

Why in-process rather than the alternatives:
  * `ncc bench --json` per row (what the harness did): ncc timed in C into
    preallocated outputs, vendors in Python with fresh outputs, and each
    row in its own minutes — not comparable and not interleavable;
  * `ncc bench` per round: a compile per round, a cold process per round,
    and still the C clock;
  * a persistent ncc worker over a pipe: interleavable, but the pipe's
    round trip (tens of microseconds) is either inside the time (more than
    a small block's run) or outside it (the C clock again);
  * an --emit=lib library per row (docs/AOT.md): the same Python call as
    here, but only for compiled targets with a kernel for every op — no
    `ref` (the baseline of every report), no reference-kernel fallback —
    and it times the AOT runtime rather than the JIT `ncc bench` and
    `ncc run` use.
libncc in-process covers every target and every model `ncc bench` runs,
with the JIT it uses.

Fallback: when libncc cannot be loaded here (no libncc.a beside the binary,
a sanitizer build, no C compiler to link it; or NCC_HARNESS_INPROCESS=0),
point rows are measured each on its own through the command
line: `ncc run` checks the output, `ncc bench --json --time-passes` times
it, a cold `ncc bench --warmup 0 --iters 1` gives the first run.  Such rows
are not interleaved; result.timing says how they were timed and why.

Sequence measurements (E6) use the command line: separate
processes per shape.

Besides the vendors' fields a point row gets kernels (compiled + run on
reference kernels), host_kernels, module_threads, passes, pass_ms, graph
{nodes, kernels, mflop, mb_moved, peak_mb} after the last pass (from the
pipeline's --time-passes report) and graph_hash (ncc_graph_hash of the
optimized graph: equal up to naming).  The runner compares the hashes of a
group: a row with passes disabled whose graph is the one of the same
configuration without them gets graph_same = true (the report then says
"no change", whatever the timing shows).
"""
import os
import shlex
import tempfile

import numpy as np

from .. import measure, ncclib, stats
from ..nccbin import NccError, parse_time_passes
from .base import Adapter, Skipped, sequence_result, sequence_step


def parse_flags(config):
    """(target, [flags]) of a configuration, or raise ValueError."""
    toks = shlex.split(config)
    if not toks:
        raise ValueError("empty ncc configuration")
    target = toks[0][len("--target="):] if toks[0].startswith("--target=") else toks[0]
    if not target or target.startswith("-"):
        raise ValueError("an ncc configuration starts with the target (ref, cpu, ...): %r"
                         % config)
    flags = []
    for t in toks[1:]:
        ok = (t in ("-O0", "-O1", "-O2", "-O3") or
              (t.startswith("--disable-pass=") and len(t) > 15) or
              (t.startswith("--passes=") and len(t) > 9) or
              t in ("--precision=f32", "--precision=bf16", "--precision=fp16"))
        if not ok:
            raise ValueError("ncc configuration %r: %r is not -O0..-O3, --disable-pass=P, "
                             "--passes=a,b or --precision=f32|bf16|fp16" % (config, t))
        flags.append(t)
    return target, flags


def pass_names_in(flags):
    names = []
    for f in flags:
        if f.startswith("--disable-pass="):
            names.append(f.split("=", 1)[1])
        elif f.startswith("--passes="):
            names += [p for p in f.split("=", 1)[1].split(",") if p]
    return names


class NccAdapter(Adapter):
    name = "ncc"
    install_hint = "build ncc (cmake -S . -B build && make -C build) or pass --ncc PATH"

    def __init__(self, threads, ncc=None):
        Adapter.__init__(self, threads)
        self.ncc = ncc
        self._targets = None
        self.lib_dir = None   # where the shared libncc is linked (runner: DIR/cache)
        self._lib = None      # NccLib, or the Unavailable that says why not

    def inprocess(self):
        """The loaded libncc, or None (then self.no_lib_reason says why)."""
        if self._lib is None:
            try:
                if os.environ.get("NCC_HARNESS_INPROCESS", "1") == "0":
                    raise ncclib.Unavailable("NCC_HARNESS_INPROCESS=0")
                d = self.lib_dir or os.path.join(tempfile.gettempdir(), "ncc-harness-lib")
                self._lib = ncclib.NccLib(ncclib.shared_library(self.ncc.path, d))
            except ncclib.Unavailable as e:
                self._lib = e
        return None if isinstance(self._lib, ncclib.Unavailable) else self._lib

    @property
    def no_lib_reason(self):
        return str(self._lib) if isinstance(self._lib, ncclib.Unavailable) else None

    @classmethod
    def check_config(cls, config):
        try:
            parse_flags(config)
        except ValueError as e:
            return str(e)
        return None

    def load(self):
        if self.ncc is None:
            raise Skipped("no ncc binary (set NCC or pass --ncc)", self.install_hint)

    def version(self):
        return self.ncc.version() if self.ncc else None

    def _usable_targets(self):
        if self._targets is None:
            out, _ = self.ncc.check(["targets"], timeout=30)
            self._targets = {}
            for line in out.splitlines()[1:]:
                tok = line.split()
                if len(tok) >= 2:
                    self._targets[tok[0]] = tok[1] == "yes"
        return self._targets

    def _flags(self, config):
        target, flags = parse_flags(config)
        known = [n for n, _ in self.ncc.passes()]
        missing = [p for p in pass_names_in(flags) if p not in known]
        if missing:
            raise Skipped("ncc has no pass %s yet (ncc passes: %s)"
                          % (", ".join("'%s'" % p for p in missing), ", ".join(known)))
        usable = self._usable_targets()
        if target not in usable:
            raise Skipped("ncc has no target %r (ncc targets: %s)"
                          % (target, ", ".join(usable)))
        if not usable[target]:
            raise Skipped("ncc target %r is not usable in this build (see 'ncc targets')"
                          % target)
        return ["--target=" + target] + flags

    def _env(self):
        return {"NCC_NUM_THREADS": str(self.threads)}

    def _check_output(self, task, model, flags, xpath, ref):
        m = task.m
        with tempfile.TemporaryDirectory(prefix="ncc-harness-") as d:
            self.ncc.check(["run", model] + flags + ["--input", "x=" + xpath,
                                                     "--output-dir", d],
                           env=self._env(), timeout=task.timeout)
            y = np.load(os.path.join(d, "y.npy"), allow_pickle=False)
        return measure.compare(ref, y, m["rtol"], m["atol"])

    def _one_shape(self, task, flags, batch, static, warmup, iters):
        """Check, then time, one model at one batch: a partial point result."""
        x, xpath = task.input_with_path(batch)
        ref = task.reference(batch)
        model = task.model_path(batch if static else None)
        ok, info = self._check_output(task, model, flags, xpath, ref)
        bflags = flags + ["--batch", str(batch)]
        # --profile: the profiled runs come after the timed ones (cmd_bench.c)
        main = self.ncc.bench(model, bflags + ["--profile"], xpath, warmup, iters,
                              env=self._env(), timeout=task.timeout, time_passes=True)
        builds, firsts = [], []
        for _ in range(task.m.get("compile_repeats", 1)):
            if main.get("first_run_ms") is not None and not builds:
                builds.append(main["compile_ms"])
                firsts.append(main["first_run_ms"])
                continue
            cold = self.ncc.bench(model, bflags, xpath, 0, 1, env=self._env(),
                                  timeout=task.timeout)
            builds.append(cold["compile_ms"])
            firsts.append(cold.get("first_run_ms") or cold["latency_ms"]["median"])
        build, first = measure.median(builds), measure.median(firsts)
        res = {"compile_ms": build + first, "build_ms": build, "first_run_ms": first,
               "latency_ms": main["latency_ms"], "cv": main["cv"],
               "check": info, "check_ok": ok, "kernels": main.get("kernels"),
               "passes": main.get("passes"), "ncc_compile_ms": main.get("compile_ms"),
               "noisy": stats.noisy(main["cv"])}
        if main.get("profile"):
            res["profile"] = main["profile"]
        if isinstance(main.get("robust_cv"), (int, float)):
            # an ncc bench that flags by the robust cv itself (same rule as stats.noisy)
            res["robust_cv"] = main["robust_cv"]
            res["noisy"] = main["robust_cv"] > stats.CV_RANK_MAX
        if main.get("samples_ms"):  # an ncc bench that reports every run
            res.update(measure.summarize(main["samples_ms"]))
        table = main.get("pass_table") or []
        if table:
            last = table[-1]
            res["graph"] = {k: last[k] for k in ("nodes", "kernels", "mflop", "mb_moved",
                                                 "peak_mb")}
            res["pass_ms"] = {r["name"]: r["ms"] for r in table[1:] if r["ms"] is not None}
        return res

    # The in-process interface (base.Adapter) ---------------------------------

    def compile(self, task, config, mode, batch):
        lib = self.inprocess()
        if lib is None:
            raise ncclib.Unavailable(self.no_lib_reason)
        flags = self._flags(config)
        target, opt, passes, disabled = _pipeline_of(flags)
        precision = ([f.split("=", 1)[1] for f in flags if f.startswith("--precision=")]
                     or [None])[-1]
        stats_batch = batch or (task.m.get("batch") if hasattr(task, "m") else None) or 1
        try:
            return lib.compile(task.model_path(batch), target, opt, passes, disabled,
                               self.threads, stats_batch, time_passes=True,
                               precision=precision)
        except ncclib.NccLibError as e:
            raise _classify(NccError(e.status, "ncc: error: %s" % e.message,
                                     ["(libncc)", config]))

    def prepare(self, module, x):
        return module.inputs([x])

    def run(self, module, xin):
        return module.run(xin)

    def to_numpy(self, out):
        return out.numpy(0)

    def release(self, module):
        module.free()

    PREALLOCATED = "ncc_module_run_into, the first run's outputs reused"

    def bind_outputs(self, module, xin, out):
        """ncc_module_run_into: the first run's outputs written in place."""
        return (lambda: module.run_into(xin, out)), self.PREALLOCATED

    FALLBACK_NOTE = ("ncc bench subprocess, ncc's own C clock around each "
                     "ncc_module_run_into; outputs preallocated; NOT symmetric with the "
                     "in-process vendors")

    def timing_note_here(self, policy):
        """env.timing's line for ncc in this process: the in-process line,
        or the fallback's (which is not symmetric with the vendors)."""
        if self.inprocess() is None:
            return "%s (libncc not loadable in-process: %s)" % (self.FALLBACK_NOTE,
                                                                 self.no_lib_reason)
        return self.timing_note(policy) + " [libncc via ctypes]"

    def warm_configs(self):
        return ["cpu -O2", "ref"]

    # Measurements -------------------------------------------------------------

    def prepare_point(self, task):
        """In-process: the base protocol plus ncc's figures from the module
        (a Point to be timed in rounds).  Without libncc: the command line,
        timed here on its own (a Point that is already done)."""
        m = task.m
        flags = self._flags(m["config"])  # Skipped for a missing pass or target
        if self.inprocess() is None:
            try:
                res = self._one_shape(task, flags, m["batch"], m["shape_mode"] == "static",
                                      m["warmup"], m["iters"])
            except NccError as e:
                raise _classify(e)
            res["timing"] = {"where": "ncc bench subprocess",
                             "clock": "ncc's own, around each ncc_module_run_into",
                             "outputs": "preallocated (written in place)",
                             "outputs_policy": m.get("outputs", "fresh"),
                             "symmetric": False,
                             "why": "libncc not loadable in-process: %s" % self.no_lib_reason}
            return measure.Point(None, res, done=True)
        p = Adapter.prepare_point(self, task)
        mod = p.handle
        res = p.result
        if hasattr(mod, "profile"):  # one profiled run after the timing (measure.py)
            p.profile_fn = lambda: mod.profile(p.xin, runs=1)
        res.update({"kernels": mod.kernels + mod.host_kernels, "host_kernels": mod.host_kernels,
                    "module_threads": mod.threads, "passes": list(mod.passes),
                    "graph_hash": mod.graph_hash,
                    "ncc_compile_ms": res["build_ms"]})
        table, _ = parse_time_passes(mod.pass_report)
        if table:
            last = table[-1]
            res["graph"] = {k: last[k] for k in ("nodes", "kernels", "mflop", "mb_moved",
                                                 "peak_mb")}
            res["pass_ms"] = {r["name"]: r["ms"] for r in table[1:] if r["ms"] is not None}
        return p

    def measure_sequence(self, task):
        """Separate processes per shape; "symbolic" charges the compile of
        the first shape only (one module would serve every batch), "static"
        compiles the static-batch model of each shape."""
        m = task.m
        flags = self._flags(m["config"])
        symbolic = m["shape_mode"] == "symbolic"
        steps = []
        try:
            for i, b in enumerate(m["sequence"]):
                r = self._one_shape(task, flags, b, not symbolic, m["warmup"], m["iters"])
                charged = r["build_ms"] if (i == 0 or not symbolic) else 0.0
                s = sequence_step(b, charged, r["first_run_ms"], r["latency_ms"], r["cv"],
                                  r["check_ok"], r["check"])
                s["measured_build_ms"] = r["build_ms"]
                steps.append(s)
        except NccError as e:
            raise _classify(e)
        return sequence_result(steps, m["runs_per_shape"])


def _pipeline_of(flags):
    """(target, -O level, --passes list or None, [disabled]) of _flags()."""
    target, opt, passes, disabled = "cpu", 2, None, []
    for f in flags:
        if f.startswith("--target="):
            target = f.split("=", 1)[1]
        elif f in ("-O0", "-O1", "-O2", "-O3"):
            opt = int(f[2])
        elif f.startswith("--passes="):
            passes = f.split("=", 1)[1]
        elif f.startswith("--disable-pass="):
            disabled.append(f.split("=", 1)[1])
    return target, opt, passes, disabled


class NccUnsupported(Skipped):
    """ncc exit 3: the model uses something this target does not support."""


def _classify(e):
    if e.rc == 3:
        return NccUnsupported("ncc: %s" % e.line)
    return e
