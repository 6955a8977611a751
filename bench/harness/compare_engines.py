"""bench/harness/compare_engines.py — each compiler on the user's ONNX file,
for bench/compare.

The harness adapters (adapters/*.py) take generated single-input blocks;
here they are subclassed, not edited, to take any ONNX file with named
inputs and every output.  Each engine has the same four steps:

  load()                  import the framework (adapters' Skipped if absent)
  build(model, feeds)     model file -> ready object        (build_ms)
  first(h, feeds)         the first call, outputs as arrays  (first_run_ms)
  block(h, feeds, w, k)   w untimed then k timed runs: [ms] (one round)

ncc runs through its command line (adapters.ncc's flag checks, nccbin's
runner): a round is one `ncc bench --json` process whose median is the
round's sample, so its compile is paid once per round but never timed.

Test hook (tests/py/test_compare.py): NCC_COMPARE_TEST_PERTURB=KEY:FACTOR
multiplies the outputs of compiler KEY by FACTOR, to prove a mismatch is
caught.
"""
import os
import tempfile
import time

import numpy as np

from . import measure
from .adapters.base import Skipped
from .adapters.inductor import InductorAdapter
from .adapters.iree import IreeAdapter
from .adapters.ncc import NccAdapter
from .adapters.openvino import OpenVinoAdapter
from .adapters.ort import OrtAdapter
from .adapters.tvm import TvmAdapter
from .nccbin import NccError

# --against names -> engine kind; aliases accepted.
ALIASES = {"ort": "onnxruntime", "onnxruntime": "onnxruntime", "openvino": "openvino",
           "ov": "openvino", "tvm": "tvm", "iree": "iree", "inductor": "inductor",
           "torch": "inductor", "xla": "xla", "ort-noopt": "onnxruntime-noopt",
           "onnxruntime-noopt": "onnxruntime-noopt"}


class _FileTask:
    """What an adapter's compile() asks of a task, for one model file."""

    def __init__(self, path):
        self.path = path

    def model_path(self, batch=None):
        return self.path


def _timed_block(run, warmup, k):
    for _ in range(warmup):
        run()
    lat = []
    for _ in range(k):
        t = time.perf_counter()
        run()
        lat.append((time.perf_counter() - t) * 1e3)
    return lat


class InProcess:
    """Shared steps of an in-process engine: subclasses give compile_file,
    prepare_feeds, call and outputs."""
    kind = "vendor"

    def build(self, model, feeds):
        self.input_names = list(feeds)
        return self.compile_file(model)

    def first(self, h, feeds):
        prep = self.prepare_feeds(h, feeds)
        return prep, self.outputs(self.call(h, prep))

    def block(self, h, prep, warmup, k):
        return _timed_block(lambda: self.call(h, prep), warmup, k)

    def release(self, h):
        pass


class OrtEngine(InProcess, OrtAdapter):
    """onnxruntime with every graph optimisation (ORT_ENABLE_ALL)."""
    onnx_config = "ALL"

    def compile_file(self, model):
        return OrtAdapter.compile(self, _FileTask(model), self.onnx_config, "default", None)

    def prepare_feeds(self, sess, feeds):
        return dict(feeds)

    def call(self, sess, prep):
        return sess.run(None, prep)

    def outputs(self, out):
        return [np.asarray(o) for o in out]


class OrtNoOptEngine(OrtEngine):
    """onnxruntime with graph optimisations off (DISABLE_ALL): the model as
    written, the "uncompiled" baseline; never the fastest vendor."""
    name = "onnxruntime-noopt"
    onnx_config = "DISABLE_ALL"
    kind = "baseline"


class OpenVinoEngine(InProcess, OpenVinoAdapter):
    onnx_config = "CPU"

    def compile_file(self, model):
        return OpenVinoAdapter.compile(self, _FileTask(model), self.onnx_config, "default", None)

    def prepare_feeds(self, req, feeds):
        return dict(feeds)

    def call(self, req, prep):
        req.infer(prep, share_inputs=True)
        return req

    def outputs(self, req):
        n = len(req.model_outputs)
        return [np.array(req.get_output_tensor(i).data, copy=True) for i in range(n)]


class TvmEngine(InProcess, TvmAdapter):
    onnx_config = "llvm"

    def compile_file(self, model):
        return TvmAdapter.compile(self, _FileTask(model), self.onnx_config, "default", None)

    def prepare_feeds(self, fn, feeds):
        return [TvmAdapter.prepare(self, fn, v) for v in feeds.values()]

    def call(self, fn, prep):
        out = fn(*prep)
        self.tvm.cpu().sync()
        return out

    def outputs(self, out):
        if hasattr(out, "numpy"):
            return [out.numpy()]
        return [o.numpy() for o in out]


class IreeEngine(InProcess, IreeAdapter):
    onnx_config = "llvm-cpu"

    def compile_file(self, model):
        return IreeAdapter.compile(self, _FileTask(model), self.onnx_config, "default", None)

    def prepare_feeds(self, h, feeds):
        return [IreeAdapter.prepare(self, h, v) for v in feeds.values()]

    def call(self, h, prep):
        return h[1](*prep)

    def outputs(self, out):
        if isinstance(out, (tuple, list)):
            return [o.to_host() for o in out]
        return [out.to_host()]


class InductorEngine(InProcess, InductorAdapter):
    """torch.compile of the ONNX model converted by onnx2torch (when that
    package is installed and knows every op of the model)."""
    onnx_config = "default"

    def load(self):
        InductorAdapter.load(self)
        try:
            import onnx2torch
        except Exception as e:
            raise Skipped("inductor needs the ONNX model as a torch module, and onnx2torch "
                          "does not import (%s)" % type(e).__name__,
                          "pip install onnx2torch")
        self.onnx2torch = onnx2torch

    def compile_file(self, model):
        torch = self.torch
        try:
            module = self.onnx2torch.convert(model).eval()
        except Exception as e:
            raise Skipped("onnx2torch cannot convert this model (%s)" % str(e).splitlines()[0]
                          if str(e) else type(e).__name__)
        torch._dynamo.reset()
        return torch.compile(module, backend="inductor")

    def prepare_feeds(self, fn, feeds):
        return [self.torch.from_numpy(np.ascontiguousarray(v)) for v in feeds.values()]

    def call(self, fn, prep):
        with self.torch.inference_mode():
            return fn(*prep)

    def outputs(self, out):
        if isinstance(out, (tuple, list)):
            return [o.detach().numpy().copy() for o in out]
        return [out.detach().numpy().copy()]


class XlaEngine(InProcess):
    name = "xla"
    kind = "vendor"

    def __init__(self, threads):
        self.threads = threads

    def load(self):
        raise Skipped("xla runs JAX functions and has no ONNX frontend")

    def version(self):
        return None


VENDORS = {"onnxruntime": OrtEngine, "onnxruntime-noopt": OrtNoOptEngine, "openvino": OpenVinoEngine, "tvm": TvmEngine,
           "iree": IreeEngine, "inductor": InductorEngine, "xla": XlaEngine}


def _sanitize(name, idx):
    """The file name `ncc run --output-dir` gives an output
    (tools/ncc/cmd_run.c sanitize)."""
    out = []
    for c in name[:200]:
        ok = c.isascii() and (c.isalnum() or c in "_-" or (c == "." and out))
        out.append(c if ok else "_")
    return "".join(out) or "output_%d" % idx


def output_files(names):
    """The files of every output, made unique as cmd_run.c's make_unique
    does (the later one gets "_<index>" appended until no clash)."""
    files = []
    for i, n in enumerate(names):
        f, k = _sanitize(n, i), 0
        while f in files:
            f = f[:200] + "_%d" % (i + k)
            k += 1
        files.append(f)
    return files


def ncc_config_flags(config):
    """'cpu-O2' or 'cpu -O2' -> the adapter's configuration string."""
    c = config.strip()
    for lvl in ("-O0", "-O1", "-O2", "-O3"):
        if c.endswith(lvl) and not c.endswith(" " + lvl):
            c = c[: -len(lvl)] + " " + lvl
    return c


class NccEngine:
    """ncc through `ncc run` (outputs) and `ncc bench --json` (timing)."""
    kind = "ncc"

    def __init__(self, threads, ncc, config, output_names, timeout):
        self.threads, self.ncc, self.timeout = threads, ncc, timeout
        self.config = self.onnx_config = config
        self.adapter = NccAdapter(threads, ncc=ncc)
        self.output_names = output_names
        self.name = "ncc"
        self._dirs = []

    def load(self):
        self.adapter.load()
        why = NccAdapter.check_config(ncc_config_flags(self.config))
        if why:
            raise ValueError(why)
        try:
            self.flags = self.adapter._flags(ncc_config_flags(self.config))
        except NccError as e:
            raise Skipped("ncc: %s" % e.line)

    def version(self):
        return self.ncc.version() if self.ncc else None

    def _env(self):
        return {"NCC_NUM_THREADS": str(self.threads)}

    def _inputs(self, feeds):
        d = tempfile.mkdtemp(prefix="ncc-compare-")
        self._dirs.append(d)
        args = []
        for i, (name, v) in enumerate(feeds.items()):
            p = os.path.join(d, "in%d.npy" % i)
            np.save(p, v)
            args += ["--input", "%s=%s" % (name, p)]
        return args

    def _bench(self, h, warmup, iters):
        model, inargs = h
        args = ["bench", model] + self.flags + inargs + [
            "--warmup", str(warmup), "--iters", str(iters), "--json"]
        try:
            out, _ = self.ncc.check(args, env=self._env(), timeout=self.timeout)
        except NccError as e:
            raise RuntimeError(e.line)
        import json
        line = [l for l in out.splitlines() if l.strip().startswith("{")]
        if not line:
            raise RuntimeError("ncc bench printed no JSON object")
        return json.loads(line[-1])

    def build(self, model, feeds):
        """ncc compiles inside each process: build_ms is the compile_ms of
        a cold one-run `ncc bench`, and its run is the first run."""
        h = (model, self._inputs(feeds))
        cold = self._bench(h, 0, 1)
        self._cold = cold
        self.build_ms_override = cold["compile_ms"]
        return h

    def first(self, h, feeds):
        cold = self._cold
        self.first_ms_override = cold.get("first_run_ms") or cold["latency_ms"]["median"]
        model, inargs = h
        d = tempfile.mkdtemp(prefix="ncc-compare-out-")
        self._dirs.append(d)
        try:
            self.ncc.check(["run", model] + self.flags + inargs + ["--output-dir", d],
                           env=self._env(), timeout=self.timeout)
        except NccError as e:
            raise RuntimeError(e.line)
        outs = [np.load(os.path.join(d, f + ".npy"), allow_pickle=False)
                for f in output_files(self.output_names)]
        return h, outs

    def block(self, h, prep, warmup, k):
        """One round: a fresh process; its median stands for the block
        (ncc bench reports no per-run samples)."""
        r = self._bench(h, warmup, k)
        return [r["latency_ms"]["median"]]

    def release(self, h):
        import shutil
        for d in self._dirs:
            shutil.rmtree(d, ignore_errors=True)
        self._dirs = []


def perturb(key, outs):
    """The test hook of the module docstring."""
    spec = os.environ.get("NCC_COMPARE_TEST_PERTURB", "")
    k, _, f = spec.rpartition(":")
    if spec and k == key:
        return [np.asarray(o) * float(f) for o in outs]
    return outs


def check_outputs(ref, outs, names, rtol, atol):
    """(ok, [{name, ok, max_abs_err, max_rel_err, reason}]) of every output
    against the reference's."""
    per = []
    if len(outs) != len(ref):
        return False, [{"name": "*", "ok": False, "max_abs_err": None, "max_rel_err": None,
                        "reason": "%d outputs, reference %d" % (len(outs), len(ref))}]
    for name, e, a in zip(names, ref, outs):
        ok, info = measure.compare(e, a, rtol, atol)
        per.append({"name": name, "ok": ok, "max_abs_err": info.get("max_abs_err"),
                    "max_rel_err": info.get("max_rel_err"), "reason": info.get("reason")})
    return all(p["ok"] for p in per), per
