"""bench/harness/compare_engines.py — each compiler on the user's ONNX file,
for bench/compare.

The harness adapters (adapters/*.py) take generated single-input blocks;
here they are subclassed, not edited, to take any ONNX file with named
inputs and every output.  Each engine has the same steps, which compare.py
hands to the harness's timing code (measure.time_first, measure.Point,
measure.time_group):

  load()                    import the framework (adapters' Skipped if absent)
  build(model, feeds)       model file -> ready object          (build_ms)
  prepare_feeds(h, feeds)   the inputs in the framework's form  } first_run_ms:
  call(h, prep)             one run, returning its outputs      } prepare + call
  outputs(out)              a call's outputs as numpy arrays
  release(h)

ncc is one of them (NccEngine): libncc in this process through ncclib.py,
exactly as the harness's ncc adapter runs it — build = graph load + pass
pipeline + compile (adapters.ncc.NccAdapter.compile), a call =
ncc_module_run with outputs libncc allocates, fresh on every call like a
vendor's (--outputs fresh, the default), or, with --outputs preallocated,
ncc_module_run_into the first call's outputs while onnxruntime runs through
IOBinding and OpenVINO into tensors set once (bind_outputs; the others stay
fresh, and say so).  So ncc is timed like every vendor: one Python call per
timed run, interleaved call by call with them.  Where libncc cannot be loaded
here (a sanitizer build, no libncc.a beside the binary, no C compiler to
link it, NCC_HARNESS_INPROCESS=0) NccCliEngine takes its place: `ncc run`
for the outputs, and a self-timed turn per round, one `ncc bench --warmup 1
--iters 1 --json` process whose own latency is the round's sample (its
compile is paid every round, never timed); its rows say so in
row["timing"].

Test hook (tests/py/test_compare.py): NCC_COMPARE_TEST_PERTURB=KEY:FACTOR
multiplies the outputs of compiler KEY by FACTOR, to prove a mismatch is
caught.
"""
import json
import os
import shutil
import tempfile

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


class InProcess:
    """Shared steps of an in-process engine: subclasses give compile_file,
    prepare_feeds, call and outputs."""
    kind = "vendor"
    timing = measure.IN_PROCESS

    def build(self, model, feeds):
        self.input_names = list(feeds)
        return self.compile_file(model)

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

    def bind_outputs(self, sess, prep, out):
        """IOBinding: every input and an array per output (the first call's
        shapes) bound once as OrtValues; a call runs into them."""
        ort = self.ort
        io = sess.io_binding()
        keep = []
        for name, v in prep.items():
            keep.append(ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(v)))
            io.bind_ortvalue_input(name, keep[-1])
        ys = [np.empty_like(np.asarray(o)) for o in out]
        for o, y in zip(sess.get_outputs(), ys):
            keep.append(ort.OrtValue.ortvalue_from_numpy(y))
            io.bind_ortvalue_output(o.name, keep[-1])

        def run_bound(keep=keep):
            sess.run_with_iobinding(io)
            return ys
        return run_bound, self.PREALLOCATED


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
        if isinstance(req, list):  # a bound call's own arrays
            return [np.array(y, copy=True) for y in req]
        n = len(req.model_outputs)
        return [np.array(req.get_output_tensor(i).data, copy=True) for i in range(n)]

    def bind_outputs(self, req, prep, out):
        """The request's input and output tensors set once over arrays
        (shared memory); a call infers into them."""
        ov = self.ov
        keep = []
        for name, v in prep.items():
            keep.append(np.ascontiguousarray(v))
            req.set_tensor(name, ov.Tensor(keep[-1], shared_memory=True))
        ys = [np.empty_like(np.asarray(req.get_output_tensor(i).data))
              for i in range(len(req.model_outputs))]
        for i, y in enumerate(ys):
            req.set_output_tensor(i, ov.Tensor(y, shared_memory=True))

        def run_bound(keep=keep):
            req.infer(share_outputs=True)
            return ys
        return run_bound, self.PREALLOCATED


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
    """ncc in this process through libncc (the harness's ncc adapter)."""
    kind = "ncc"
    timing = dict(measure.IN_PROCESS, via="libncc in-process (bench/harness/ncclib.py)")

    def __init__(self, threads, ncc, config, output_names, timeout):
        self.threads, self.ncc, self.timeout = threads, ncc, timeout
        self.config = self.onnx_config = config
        self.adapter = NccAdapter(threads, ncc=ncc)
        self.output_names = output_names
        self.name = "ncc"

    def load(self):
        """The flag checks of the harness (ValueError for a malformed
        configuration, Skipped for a pass or target this ncc lacks)."""
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

    def build(self, model, feeds):
        mod = self.adapter.compile(_FileTask(model), ncc_config_flags(self.config),
                                   "default", None)
        self._out_names = mod.output_names()
        return mod

    def prepare_feeds(self, mod, feeds):
        names = mod.input_names()
        missing = [n for n in names if n not in feeds]
        if missing:
            raise RuntimeError("ncc's graph has inputs %s, the model's are %s"
                               % (names, list(feeds)))
        return mod.inputs([feeds[n] for n in names])

    def call(self, mod, prep):
        return mod.run(prep)

    def outputs(self, out):
        arrays = [out.numpy(i) for i in range(out.n)]
        # in the model's output order (check_outputs pairs them by position)
        names = self._out_names
        if sorted(names) == sorted(self.output_names) and len(set(names)) == len(names):
            arrays = [arrays[names.index(n)] for n in self.output_names]
        return arrays

    def release(self, mod):
        mod.free()

    PREALLOCATED = NccAdapter.PREALLOCATED

    def bind_outputs(self, mod, prep, out):
        """ncc_module_run_into: the first call's outputs written in place."""
        return (lambda: mod.run_into(prep, out)), self.PREALLOCATED

    def row_extras(self, mod):
        """ncc's own figures for the row: kernels compiled and run on
        reference kernels, threads, passes, the optimized graph's hash."""
        return {"ncc": {"kernels": mod.kernels, "reference_kernels": mod.host_kernels,
                        "module_threads": mod.threads, "passes": list(mod.passes),
                        "graph_hash": mod.graph_hash}}


class NccCliEngine(NccEngine):
    """ncc through its command line, when libncc cannot be loaded here:
    `ncc run` for the outputs, a cold `ncc bench` for build and first run,
    and per round a self-timed `ncc bench --warmup 1 --iters 1` process."""

    def __init__(self, eng, why):
        NccEngine.__init__(self, eng.threads, eng.ncc, eng.config, eng.output_names,
                           eng.timeout)
        self.flags, self.why = eng.flags, why
        self.timing = {"where": "ncc bench subprocess per round",
                       "clock": "ncc's own, around each ncc_module_run_into",
                       "outputs": "preallocated (written in place)",
                       "why": "libncc not loadable in-process: %s" % why}
        self._dirs = []

    def _env(self):
        return {"NCC_NUM_THREADS": str(self.threads)}

    def _tmp(self, prefix):
        d = tempfile.mkdtemp(prefix=prefix)
        self._dirs.append(d)
        return d

    def _bench(self, model, inargs, warmup, iters):
        args = ["bench", model] + self.flags + inargs + [
            "--warmup", str(warmup), "--iters", str(iters), "--json"]
        try:
            out, _ = self.ncc.check(args, env=self._env(), timeout=self.timeout)
        except NccError as e:
            raise RuntimeError(e.line)
        line = [l for l in out.splitlines() if l.strip().startswith("{")]
        if not line:
            raise RuntimeError("ncc bench printed no JSON object")
        return json.loads(line[-1])

    def own_point(self, model, feeds):
        """(measure.Point, outputs): build_ms and first_run_ms from a cold
        one-run `ncc bench` (compile_ms, then its first run), the outputs
        from `ncc run`, and a self-timed Point for the rounds."""
        d = self._tmp("ncc-compare-")
        inargs = []
        for i, (name, v) in enumerate(feeds.items()):
            p = os.path.join(d, "in%d.npy" % i)
            np.save(p, v)
            inargs += ["--input", "%s=%s" % (name, p)]
        cold = self._bench(model, inargs, 0, 1)
        first = cold.get("first_run_ms")
        first = first if first is not None else cold["latency_ms"]["median"]
        out_dir = self._tmp("ncc-compare-out-")
        try:
            self.ncc.check(["run", model] + self.flags + inargs + ["--output-dir", out_dir],
                           env=self._env(), timeout=self.timeout)
        except NccError as e:
            raise RuntimeError(e.line)
        outs = [np.load(os.path.join(out_dir, f + ".npy"), allow_pickle=False)
                for f in output_files(self.output_names)]
        res = {"build_ms": cold["compile_ms"], "first_run_ms": first,
               "compile_ms": cold["compile_ms"] + first, "timing": dict(self.timing)}
        if cold.get("kernels") is not None:
            res["ncc"] = {"kernels": cold.get("kernels"), "passes": cold.get("passes")}
        p = measure.Point(
            lambda: self._bench(model, inargs, measure.REWARM, 1)["latency_ms"]["median"],
            res, self._cleanup, self_timed=True)
        return p, outs

    def _cleanup(self):
        for d in self._dirs:
            shutil.rmtree(d, ignore_errors=True)
        self._dirs = []


def load_ncc_engine(threads, ncc, config, output_names, timeout):
    """The loaded ncc engine of one configuration: in-process when libncc
    loads here, else the command line (NccCliEngine, its reason in
    .timing["why"]).  Raises as NccEngine.load."""
    eng = NccEngine(threads, ncc, config, output_names, timeout)
    eng.load()
    if eng.adapter.inprocess() is None:
        return NccCliEngine(eng, eng.adapter.no_lib_reason)
    return eng


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
