"""bench/harness/adapters/inductor.py — TorchInductor through torch.compile,
and torch eager as the uncompiled baseline.

The block is built natively as a torch module from blocks.params (identical
weights, harness/native.py).  Configurations: "default", "max-autotune" and
"max-autotune-no-cudagraphs" (torch.compile modes; on the CPU the two
max-autotune modes are the same: CUDA graphs exist only on a GPU) and
"eager" (no compilation: torch's own baseline, beside ncc:ref).
torch.compile compiles lazily inside the first call, which is why every
compiler's compile_ms is "model to first result".  Shape modes: default
lets torch decide (dynamic=None), "symbolic" is dynamic=True (E6),
"static" dynamic=False (a recompile per new shape).  Threads:
torch.set_num_threads.

Cold and warm compile.  Inductor keeps compiled graphs and kernels in an
on-disk cache (TORCHINDUCTOR_CACHE_DIR, /tmp/torchinductor_$USER by
default, shared by every process and every earlier run) and in in-process
caches, so a "compile" of a block seen before is a cache lookup.  Each
compiled point row therefore compiles twice:

  cold  in a fresh, empty cache directory (one per row, under a temporary
        root removed at exit), torch._dynamo reset and inductor's in-process
        caches cleared: the row's compile_ms (and compile_cold_ms);
  warm  then torch._dynamo reset and the in-process caches cleared again,
        the same directory kept: what a second process start with a warm
        on-disk cache pays (compile_warm_ms, build_warm_ms,
        first_run_warm_ms).  Its output is checked too, and the warm handle
        is the one timed.

result.inductor records the mode, dynamic, and inductor's own counters of
each compile (fxgraph_cache_hit / _miss), so a "warm" compile that missed
the cache shows it.  E6 sequences start in a fresh cache directory; a
dynamo recompile inside the first call at a new shape (dynamic=True still
specialises a dimension of size 1, so the sequence 1, 8, ... compiles twice)
is counted as that step's compile (base.measure_sequence, graphs_compiled).
"""
import atexit
import os
import shutil
import tempfile
import time

from .. import measure
from .base import Adapter

MODES = ("default", "max-autotune", "max-autotune-no-cudagraphs", "eager")
DYNAMIC = {"default": None, "symbolic": True, "static": False}


class InductorAdapter(Adapter):
    name = "inductor"
    dist = "torch"
    install_hint = "pip install torch"
    CONFIGS = MODES

    def load(self):
        self.torch = self._import("torch")
        self._import("torch._inductor.utils")
        self.torch.set_num_threads(self.threads)
        try:
            self.torch.set_num_interop_threads(1)
        except RuntimeError:
            pass  # only settable before the first parallel work
        self.cache_root = tempfile.mkdtemp(prefix="ncc-inductor-")
        atexit.register(shutil.rmtree, self.cache_root, True)
        self._n = 0
        self.fresh_cache()

    def supports(self, config, mode):
        if config == "eager" and mode in ("symbolic", "static"):
            return "eager torch has no compile step, so no shape-mode comparison"
        return None

    # Caches -------------------------------------------------------------------

    def fresh_cache(self):
        """A new, empty inductor cache directory for what compiles next,
        and no compiled state left in this process: a cold compile."""
        self._n += 1
        d = os.path.join(self.cache_root, "c%d" % self._n)
        os.makedirs(d)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = d
        os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton")
        self.forget()
        return d

    def forget(self):
        """torch._dynamo reset and inductor's in-process caches cleared;
        the on-disk cache directory stays."""
        self.torch._dynamo.reset()
        self.torch._inductor.utils.clear_caches()

    def counters(self):
        """Inductor's cache counters (fxgraph_cache_hit, _miss, ...)."""
        from torch._dynamo.utils import counters
        return {k: v for k, v in counters["inductor"].items() if "cache" in k}

    def graphs_compiled(self):
        """How many graphs dynamo has compiled in this process so far."""
        from torch._dynamo.utils import counters
        return counters["stats"]["unique_graphs"]

    # The in-process interface -------------------------------------------------

    def compile(self, task, config, mode, batch):
        from .. import native
        torch = self.torch
        if hasattr(task.ms, "torch_module"):  # a real model (harness/zoo.py)
            module = task.ms.torch_module(torch)
        else:
            module = native.torch_module(torch, task.ms.config(), task.params())
        if config == "eager":
            return module
        torch._dynamo.reset()
        kw = {"dynamic": DYNAMIC[mode]}
        if config != "default":
            kw["mode"] = config
        return torch.compile(module, backend="inductor", **kw)

    def prepare(self, fn, x):
        return self.torch.from_numpy(x)

    def run(self, fn, x):
        with self.torch.inference_mode():
            return fn(x)

    def to_numpy(self, out):
        return out.detach().numpy().copy()

    NO_PREALLOC = "a torch.compile'd module returns new tensors; it has no out= binding"

    def release(self, fn):
        if hasattr(self, "torch"):
            self.torch._dynamo.reset()

    # Measurements -------------------------------------------------------------

    def prepare_point(self, task):
        m = task.m
        if m["config"] == "eager" or self.supports(m["config"], m["shape_mode"]):
            return Adapter.prepare_point(self, task)
        from torch._dynamo.utils import counters
        self.fresh_cache()
        counters["inductor"].clear()
        p = Adapter.prepare_point(self, task)
        try:
            cold = self.counters()
            self._warm(task, p, cold)
        except BaseException:
            p.release()
            raise
        return p

    def _warm(self, task, p, cold_counters):
        """The warm compile of a prepared (cold) Point: same cache
        directory, nothing in memory; checked, recorded in p.result, and
        made the handle the rounds time."""
        from torch._dynamo.utils import counters
        m = task.m
        batch = m["batch"]
        static = batch if m["shape_mode"] == "static" else None
        self.forget()
        counters["inductor"].clear()
        handle, xin, out, build, first = measure.time_first(
            lambda: self.compile(task, m["config"], m["shape_mode"], static),
            self.prepare, self.run, task.input(batch))
        ok, info = measure.compare(task.reference(batch), self.to_numpy(out),
                                   m["rtol"], m["atol"])
        res = p.result
        if res["check_ok"] and not ok:
            res["check_ok"] = False
            res["check"] = dict(info, reason="warm compile: %s" % info.get("reason"))
        warm = self.counters()
        res.update(compile_cold_ms=res["compile_ms"], compile_warm_ms=build + first,
                   build_warm_ms=build, first_run_warm_ms=first)
        res["inductor"] = {
            "torch": self.version(), "mode": m["config"], "dynamic": DYNAMIC[m["shape_mode"]],
            "cold": {"cache_dir": "fresh, empty", "counters": cold_counters},
            "warm": {"cache_dir": "the cold compile's, after dynamo reset and in-process "
                                  "caches cleared", "counters": warm},
            "warm_hit": warm.get("fxgraph_cache_hit", 0) > 0,
        }
        p.run_once = lambda: self.run(handle, xin)
        p.handle, p.xin = handle, xin

    def measure_sequence(self, task):
        if task.m["config"] != "eager":
            self.fresh_cache()
        t0 = time.perf_counter()
        res = Adapter.measure_sequence(self, task)
        res["inductor"] = {"torch": self.version(), "mode": task.m["config"],
                           "dynamic": DYNAMIC[task.m["shape_mode"]],
                           "cache_dir": "fresh, empty at the start of the sequence",
                           "wall_s": time.perf_counter() - t0}
        return res
