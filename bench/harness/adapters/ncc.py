"""bench/harness/adapters/ncc.py — ncc through its command line.

A configuration is the target followed by ncc pipeline flags, exactly as
they would be typed: "ref", "cpu -O0", "cpu -O2 --disable-pass=cse".  A
pass that this ncc does not have (say 'fusion' before it exists) makes the
row skipped with that reason rather than failed.

Per point measurement (each a fresh process, NCC_NUM_THREADS set):
  1. `ncc run` with the seeded input: the output is checked against the
     reference (ncc ref -O0) before anything is timed;
  2. `ncc bench --json --time-passes --batch B --input x=...`: latency
     statistics, kernels, the passes that ran with their times, and the
     graph statistics after the last pass (MFLOP, MB moved, peak MB);
  3. the first result, when `ncc bench` does not report `first_run_ms`
     itself: a cold `ncc bench --warmup 0 --iters 1`, whose compile_ms is
     model file -> ready module and whose one run is the first run
     (compile_repeats such runs, medians taken, as for every compiler).
compile_ms of the row = build + first run, as for every other compiler.
"""
import os
import shlex
import tempfile

import numpy as np

from .. import measure
from ..nccbin import NccError
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
              (t.startswith("--passes=") and len(t) > 9))
        if not ok:
            raise ValueError("ncc configuration %r: %r is not -O0..-O3, --disable-pass=P "
                             "or --passes=a,b" % (config, t))
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
        main = self.ncc.bench(model, bflags, xpath, warmup, iters, env=self._env(),
                              timeout=task.timeout, time_passes=True)
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
               "passes": main.get("passes"), "ncc_compile_ms": main.get("compile_ms")}
        table = main.get("pass_table") or []
        if table:
            last = table[-1]
            res["graph"] = {k: last[k] for k in ("nodes", "kernels", "mflop", "mb_moved",
                                                 "peak_mb")}
            res["pass_ms"] = {r["name"]: r["ms"] for r in table[1:] if r["ms"] is not None}
        return res

    def measure_point(self, task):
        m = task.m
        flags = self._flags(m["config"])
        try:
            return self._one_shape(task, flags, m["batch"], m["shape_mode"] == "static",
                                   m["warmup"], m["iters"])
        except NccError as e:
            raise _classify(e)

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


class NccUnsupported(Skipped):
    """ncc exit 3: the model uses something this target does not support."""


def _classify(e):
    if e.rc == 3:
        return NccUnsupported("ncc: %s" % e.line)
    return e
