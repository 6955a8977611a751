"""bench/harness/adapters/tvm.py — Apache TVM through Relax (pip apache-tvm), untuned and tuned.

Configurations:

  llvm        the ONNX model through tvm.relax.frontend.onnx (the symbolic
              batch stays a symbolic Relax dim), tvm.compile with TVM's
              default Relax pipeline for the host, run on the Relax VM.  No
              tuning: what TVM gives out of the box.
  llvm-ms     tuned: MetaSchedule with a fixed, small trial budget per task
              (DEFAULT_TRIALS), then tvm.compile with the tuned schedules.
  llvm-ms=N   the same with N trials per task.

Tuned TVM needs static shapes (MetaSchedule tunes one shape), so a tuned
row compiles the model at the row's batch (E6's "symbolic" mode is
unsupported, "static" tunes every shape).  The tuning is part of the
compile cost: compile_ms = tune + build + first run, as a TVM user pays it;
result.tune_ms reports the tuning apart and result.tuning says how
(trials per task, tasks, cost model, seed).  The untuned row stays its own
row, so a report shows both.

The tuning runs in a child process (`python3 -m harness.adapters.tvm
--tune ...`): MetaSchedule forks builder and runner workers, and a crash in
it (this TVM build's serializer has segfaulted here) must end one row, not
the sweep.  The child tunes, compiles, exports the library to a .so and
prints one JSON line; the parent loads the .so into a Relax VM.  A child
that dies or exceeds its time becomes a Skipped row with a one-line reason.
The cost model is XGBoost when xgboost imports, else random (said per row).
Threads: TVM_NUM_THREADS, set by the runner before tvm is imported; the
tuning target gets num-cores = the row's thread count.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from .base import Adapter, Skipped

DEFAULT_TRIALS = 8       # trials per task: small, fixed, the same for every model
TUNE_SEED = 0
TUNE_TIMEOUT_S = 1800    # a child that runs longer is stopped: a skipped row


def tuned_trials(config):
    """Trials per task of a tuned configuration, None for an untuned one."""
    if config == "llvm-ms":
        return DEFAULT_TRIALS
    if config.startswith("llvm-ms="):
        try:
            n = int(config.split("=", 1)[1])
        except ValueError:
            return None
        return n if n > 0 else None
    return None


class TvmAdapter(Adapter):
    name = "tvm"
    dist = "apache-tvm"
    install_hint = "pip install apache-tvm psutil"
    CONFIGS = ("llvm", "llvm-ms", "llvm-ms=N")
    NO_PREALLOC = "the Relax VM returns new outputs on every call"

    @classmethod
    def check_config(cls, config):
        if config == "llvm" or tuned_trials(config):
            return None
        return ("unknown configuration %r (one of: llvm, llvm-ms, llvm-ms=N with N trials "
                "per task > 0)" % config)

    def load(self):
        self.tvm = self._import("tvm")
        self._import("tvm.relax")
        self.onnx = self._import("onnx")
        from tvm.relax.frontend.onnx import from_onnx
        self.from_onnx = from_onnx
        self.last_tuning = None

    def supports(self, config, mode):
        if tuned_trials(config) and mode == "symbolic":
            return "tuned TVM (MetaSchedule) tunes static shapes only"
        return None

    def compile(self, task, config, mode, batch):
        trials = tuned_trials(config)
        if trials:
            return self._compile_tuned(task, trials, batch or task.m.get("batch") or 1)
        tvm = self.tvm
        mod = self.from_onnx(self.onnx.load(task.model_path(batch)), keep_params_in_input=False)
        target = tvm.target.Target(config)
        build = getattr(tvm, "compile", None) or tvm.relax.build
        ex = build(mod, target=target)
        vm = tvm.relax.VirtualMachine(ex, tvm.cpu())
        return vm["main"]

    def _compile_tuned(self, task, trials, batch):
        tmp = tempfile.mkdtemp(prefix="ncc-tvm-ms-")
        lib = os.path.join(tmp, "model.so")
        cmd = [sys.executable, "-m", "harness.adapters.tvm", "--tune",
               task.model_path(batch), str(batch), str(trials), str(self.threads), lib]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))] +
            [p for p in [env.get("PYTHONPATH")] if p])
        timeout = min(TUNE_TIMEOUT_S, getattr(task, "timeout", None) or TUNE_TIMEOUT_S)
        # its own session: on a timeout the builder/runner workers it forked go too
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env, start_new_session=True)
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:
                pass
            child.communicate()
            raise Skipped("tuned TVM: MetaSchedule did not finish in %d s (%d trials per task)"
                          % (timeout, trials))
        p = subprocess.CompletedProcess(cmd, child.returncode, out, err)
        rec = _last_json(p.stdout)
        if p.returncode != 0 or rec is None or "error" in (rec or {}):
            raise Skipped("tuned TVM: MetaSchedule %s" % _child_failure(p, rec))
        rt = self.tvm.runtime
        loaded = rt.load_module(lib)
        vm = self.tvm.relax.VirtualMachine(loaded, self.tvm.cpu())
        self.last_tuning = rec
        return vm["main"]

    def prepare_point(self, task):
        p = Adapter.prepare_point(self, task)
        rec = self.last_tuning
        if rec and tuned_trials(task.m["config"]):
            # compile_ms already holds the tuning (the child's wall time is in
            # build_ms); report it apart too.
            p.result["tune_ms"] = rec["tune_ms"]
            p.result["tuning"] = {k: rec.get(k) for k in (
                "trials_per_task", "tasks", "trials_total", "cost_model", "seed", "batch",
                "tvm_build_ms", "tune_ms")}
        self.last_tuning = None
        return p

    def prepare(self, fn, x):
        rt = self.tvm.runtime
        make = getattr(rt, "tensor", None) or getattr(self.tvm, "nd").array
        return make(x)

    def run(self, fn, x):
        out = fn(x)
        self.tvm.cpu().sync()
        return out

    def to_numpy(self, out):
        return out.numpy()


def _last_json(text):
    for line in reversed((text or "").splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def _child_failure(p, rec):
    """One line on why the tuning child failed."""
    if rec and rec.get("error"):
        return "failed: %s" % rec["error"][:200]
    if p.returncode < 0:
        try:
            sig = signal.Signals(-p.returncode).name
        except ValueError:
            sig = "signal %d" % -p.returncode
        return "crashed (%s) in this TVM build" % sig
    tail = [ln for ln in (p.stderr or "").splitlines() if ln.strip()]
    if any("Segfault" in ln for ln in tail):
        return "crashed (segfault) in this TVM build"
    return "failed (exit %d): %s" % (p.returncode, (tail[-1] if tail else "no output")[:200])


# --------------------------------------------------------------------------
# The tuning child.

def _tune_main(model_path, batch, trials, threads, lib_path):
    import numpy as np  # noqa: F401  (tvm needs it; fail here, not later)
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax import transform as T
    from tvm.relax.frontend.onnx import from_onnx
    from tvm.s_tir.meta_schedule import relax_integration as RI
    from tvm.s_tir.meta_schedule.database import Database
    try:
        import xgboost  # noqa: F401
        cost_model = "xgb"
    except Exception:
        cost_model = "random"
    m = onnx.load(model_path)
    inp = m.graph.input[0]
    dims = [d.dim_value if d.HasField("dim_value") else None
            for d in inp.type.tensor_type.shape.dim]
    dims[0] = batch
    if any(d is None for d in dims):
        raise ValueError("input %s has a symbolic dim besides the batch" % inp.name)
    t0 = time.perf_counter()
    mod = from_onnx(m, shape_dict={inp.name: dims}, keep_params_in_input=False)
    target = tvm.target.Target({"kind": "llvm", "num-cores": int(threads)})
    with tempfile.TemporaryDirectory(prefix="ms-") as wd:
        with target:
            mod = tvm.transform.Sequential([T.DecomposeOpsForInference(), T.CanonicalizeBindings(),
                                            relax.get_pipeline("zero")])(mod)
            tasks = RI.extract_tasks(mod, target, {})
            db = Database.create("memory")
            RI.tune_relax(mod, {}, target, wd, max_trials_global=trials * max(1, len(tasks)),
                          max_trials_per_task=trials, num_trials_per_iter=trials,
                          database=db, cost_model=cost_model, seed=TUNE_SEED)
            t1 = time.perf_counter()
            with db, tvm.transform.PassContext(opt_level=3):
                mod = T.MetaScheduleApplyDatabase()(mod)
        ex = tvm.compile(mod, target=target)
        ex.export_library(lib_path)
    t2 = time.perf_counter()
    return {"tune_ms": (t1 - t0) * 1e3, "tvm_build_ms": (t2 - t1) * 1e3,
            "trials_per_task": trials, "tasks": len(tasks), "trials_total": trials * len(tasks),
            "cost_model": cost_model, "seed": TUNE_SEED, "batch": batch}


if __name__ == "__main__" and len(sys.argv) == 7 and sys.argv[1] == "--tune":
    try:
        rec = _tune_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]),
                         sys.argv[6])
    except Exception as e:  # reported as one line; the parent skips the row
        rec = {"error": "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1]
                                    if str(e).strip() else "")}
    print(json.dumps(rec), flush=True)
    sys.exit(0 if "error" not in rec else 1)
