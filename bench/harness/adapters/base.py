"""bench/harness/adapters/base.py — what every compiler adapter provides.

An in-process adapter implements load() (import the framework, apply the
thread count), compile(task, mode, batch), prepare(), run(), to_numpy();
the base class turns those into the two measurement kinds with one timing
protocol for everybody (measure.py):

  point     compile -> first result (checked against ncc ref, or the outside
            oracle's output where ncc ref disagreed with it: runner.Task
            .reference); with outputs "preallocated" the outputs are then
            bound once (bind_outputs) and the bound call is timed: prepare_point
            gives a measure.Point; the runner then times the Points of one
            model and batch together in interleaved rounds (measure.py);
            measure_point does both for one row alone
  sequence  E6: the batch sizes of the sequence in order.  "symbolic"
            compiles once (symbolic batch) and then meets each new shape;
            "static" compiles a static-batch model for every shape.  Each
            step records the compile it needed, its first run at the new
            shape (the shape-transition cost, which includes any lazy
            re-specialisation inside the framework), and the steady latency.

mode is "default" (the symbolic-batch ONNX model, or the framework's own
default), "symbolic" or "static"; batch is the static batch, else None.
The ncc adapter implements the same interface over libncc in this process
(ncclib.py); it overrides prepare_point (ncc's own figures, and the
`ncc bench` fallback) and measure_sequence (the command line).
"""
import importlib.metadata

from .. import measure


class Skipped(Exception):
    """This compiler (or this configuration) cannot run here; not an error."""

    def __init__(self, reason, hint=None):
        Exception.__init__(self, reason)
        self.reason, self.hint = reason, hint


class Adapter:
    name = "?"
    dist = None            # pip distribution, for the version and the hint
    install_hint = None    # the pip command that installs it
    CONFIGS = ()           # valid configurations (check_config's default)

    def __init__(self, threads):
        self.threads = threads

    @classmethod
    def check_config(cls, config):
        if config in cls.CONFIGS:
            return None
        return "unknown configuration %r (one of: %s)" % (config, ", ".join(cls.CONFIGS))

    def load(self):
        """Import the framework; raise Skipped when it is not installed."""
        raise NotImplementedError

    def _import(self, module):
        try:
            return importlib.import_module(module)
        except Exception as e:  # ImportError, or a broken install (OSError, ...)
            raise Skipped("%s is not installed or does not import (%s: %s)"
                          % (self.name, type(e).__name__, str(e).splitlines()[0] if str(e) else ""),
                          self.install_hint)

    def version(self):
        try:
            return importlib.metadata.version(self.dist) if self.dist else None
        except importlib.metadata.PackageNotFoundError:
            return None

    def supports(self, config, mode):
        """None, or why this configuration cannot run in this shape mode."""
        return None

    def graphs_compiled(self):
        """How many graphs the framework has compiled in this process, for
        a lazy compiler that may recompile inside a call at a new shape
        (E6, symbolic mode: such a first call is counted as the step's
        compile, compile_ms, with first_run_ms 0, the total unchanged);
        None when it cannot tell."""
        return None

    # The in-process interface -------------------------------------------------

    def compile(self, task, config, mode, batch):
        raise NotImplementedError

    def prepare(self, handle, x):
        return x

    def run(self, handle, xin):
        raise NotImplementedError

    def to_numpy(self, out):
        import numpy as np
        return np.asarray(out)

    def release(self, handle):
        """Drop what compile() made (caches between rows)."""

    # Outputs bound once (spec outputs = "preallocated", measure.py) ---------

    PREALLOCATED = None   # how bind_outputs binds them, or None: cannot
    NO_PREALLOC = "its API returns new outputs on every call"

    def bind_outputs(self, handle, xin, out):
        """(run_bound, how) where run_bound() runs writing into outputs
        bound once (shaped like `out`, the first run's) and returns them;
        None when this compiler's API cannot."""
        return None

    @classmethod
    def timing_note(cls, policy):
        """One line for env.timing: how this compiler's runs are timed."""
        base = "in-process, time.perf_counter around one Python call"
        if policy == "preallocated" and cls.PREALLOCATED:
            return "%s; outputs preallocated, bound once (%s)" % (base, cls.PREALLOCATED)
        if policy == "preallocated":
            return "%s; outputs fresh per call (%s)" % (base, cls.NO_PREALLOC)
        return "%s; outputs fresh per call" % base

    # Measurements -------------------------------------------------------------

    def prepare_point(self, task):
        """Compile, first run and check of a point measurement: a
        measure.Point, not yet timed (the runner times the Points of one
        model and batch together, in rounds).  The caller releases it."""
        m = task.m
        why = self.supports(m["config"], m["shape_mode"])
        if why:
            raise Skipped(why)
        batch = m["batch"]
        x = task.input(batch)
        ref = task.reference(batch)
        static = batch if m["shape_mode"] == "static" else None
        return measure.prepare_in_process(
            lambda: self.compile(task, m["config"], m["shape_mode"], static),
            self.prepare, self.run, self.to_numpy, x,
            lambda y: measure.compare(ref, y, m["rtol"], m["atol"]),
            repeats=m.get("compile_repeats", 1), release_fn=self.release,
            outputs=m.get("outputs", "fresh"), bind_fn=self.bind_outputs,
            no_bind_why="%s: %s" % (self.name, self.NO_PREALLOC))

    def measure_point(self, task):
        """A point measurement on its own: prepare_point, then `warmup` and
        `iters` timed runs (a group of one)."""
        m = task.m
        p = self.prepare_point(task)
        try:
            if p.done:
                return p.result
            measure.time_rounds([p], m["warmup"], m["iters"])
            if p.error is not None:
                raise p.error
            measure.collect_profiles([p])
            res = dict(p.result)
            res.update(measure.summarize(p.samples))
            return res
        finally:
            p.release()

    def measure_sequence(self, task):
        m = task.m
        why = self.supports(m["config"], m["shape_mode"])
        if why:
            raise Skipped(why)
        symbolic = m["shape_mode"] == "symbolic"
        steps, handle = [], None
        try:
            for i, b in enumerate(m["sequence"]):
                x, ref = task.input(b), task.reference(b)
                recompiled = 0
                if symbolic and handle is not None:
                    seen = self.graphs_compiled()
                    _, xin, out, _, first = measure.time_first(
                        lambda: handle, self.prepare, self.run, x)
                    build = 0.0
                    if seen is not None and self.graphs_compiled() > seen:
                        # the framework recompiled inside this first call: a compile
                        build, first = first, 0.0
                        recompiled = self.graphs_compiled() - seen
                else:
                    if handle is not None:
                        self.release(handle)
                    handle, xin, out, build, first = measure.time_first(
                        lambda: self.compile(task, m["config"], m["shape_mode"],
                                             None if symbolic else b),
                        self.prepare, self.run, x)
                ok, info = measure.compare(ref, self.to_numpy(out), m["rtol"], m["atol"])
                stats, cv = measure.time_runs(self.run, handle, xin, m["warmup"], m["iters"])
                steps.append(sequence_step(b, build, first, stats, cv, ok, info))
                if recompiled:
                    steps[-1]["recompiled_in_first_call"] = recompiled
        finally:
            if handle is not None:
                self.release(handle)
        return sequence_result(steps, m["runs_per_shape"])


def sequence_step(batch, compile_ms, first_run_ms, stats, cv, ok, info):
    return {"batch": batch, "compile_ms": compile_ms, "first_run_ms": first_run_ms,
            "steady_ms": stats["median"], "latency_ms": stats, "cv": cv,
            "check_ok": ok, "check": info}


def sequence_result(steps, runs_per_shape):
    """Totals of a sequence: each step costs compile + first run + (R-1)
    steady runs (R = runs_per_shape)."""
    total = 0.0
    for s in steps:
        s["cost_ms"] = s["compile_ms"] + s["first_run_ms"] + (runs_per_shape - 1) * s["steady_ms"]
        total += s["cost_ms"]
        s["cumulative_ms"] = total
    return {"steps": steps, "total_ms": total,
            "compile_ms": sum(s["compile_ms"] for s in steps),
            "check_ok": all(s["check_ok"] for s in steps),
            "check": next((s["check"] for s in steps if not s["check_ok"]),
                          steps[-1]["check"] if steps else None)}
