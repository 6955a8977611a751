"""tests/py/nccutil.py — shared helpers of the Python oracle tests.

Finds the `ncc` binary and the source tree, reads the claimed op list from
ir/ops.def (the one source of truth), runs `ncc run --target=T` on a model
with .npy inputs (T is `ref` unless a suite's --target says otherwise), runs
ONNX Runtime as the oracle, and compares tensors with dtype, shape and
tolerance checks.  Used by node_conformance.py, diff_ort.py, real_nets.py,
bench/ref_resnet18.py and bench/blocks_vs_ort.py; its check() and
run_cases() are the runner of the harness and compare test scripts.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx  # noqa: F401  (every suite needs it; fail early and clearly)
    import onnxruntime  # noqa: F401
except ImportError as e:  # ctest SKIP_RETURN_CODE
    print("skipped: %s (pip install -r tools/requirements.txt)" % e)
    sys.exit(77)

SRC = os.environ.get("NCC_SRC") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BENCH = os.path.join(SRC, "bench")
sys.path.insert(0, BENCH)

# Seconds one `ncc run` may take before the case counts as failed (ASan
# builds are slow; every model in the suites is small).
NCC_TIMEOUT = float(os.environ.get("NCC_PY_TIMEOUT", "120"))


def claimed_ops():
    """The ONNX op names of the NCC_OP rows of ir/ops.def, in file order
    (ncc-internal rows left out)."""
    text = open(os.path.join(SRC, "ir", "ops.def")).read()
    rows = re.findall(r'^\s*NCC_OP\(\s*\w+\s*,\s*"(\w+)"(.*)$', text, re.M)
    # ncc's own ops (Reorder, ...) are not ONNX ops: nothing to check them against
    ops = [name for name, rest in rows if "NCC_OPF_INTERNAL" not in rest]
    if not ops:
        raise RuntimeError("no NCC_OP rows found in %s/ir/ops.def" % SRC)
    return ops


def load_extensions(prefix, ns):
    """Import every tests/py/<prefix>*.py (sorted) and call its
    register(ns): how the oracle scripts take tables from per-family
    modules."""
    import glob
    import importlib
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, prefix + "*.py"))):
        importlib.import_module(os.path.basename(path)[:-3]).register(ns)


def find_ncc(argv_value=None):
    """The ncc binary: --ncc, else $NCC, else an error (tests set NCC)."""
    path = argv_value or os.environ.get("NCC")
    if not path:
        sys.exit("error: set NCC to the ncc binary (or pass --ncc PATH)")
    if not os.access(path, os.X_OK):
        sys.exit("error: ncc binary %r is not executable" % path)
    return path


def add_target_arg(ap):
    """The suites' common --target option (default ref)."""
    ap.add_argument("--target", default="ref",
                    help="ncc target to test: ref (default) or cpu (see `ncc targets`)")


def target_usable(ncc, target):
    """Whether `ncc targets` says `target` runs with this ncc (cpu needs
    LLVM)."""
    proc = subprocess.run([ncc, "targets"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        cols = line.split(None, 2)
        if len(cols) >= 2 and cols[0] == target:
            return cols[1] == "yes"
    return False


def require_target(ncc, target):
    """Exit 77 (ctest: skipped) when `target` cannot run with this ncc,
    e.g. cpu in a build without LLVM; the reason is printed."""
    proc = subprocess.run([ncc, "targets"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        cols = line.split(None, 2)
        if len(cols) >= 2 and cols[0] == target:
            if cols[1] == "yes":
                return
            print("skipped: target %s is not usable here: %s" % (
                target, cols[2] if len(cols) > 2 else "?"))
            sys.exit(77)
    sys.exit("error: `%s targets` does not list target %r" % (ncc, target))


def output_file_name(name, index=0):
    """The file `ncc run` writes for output `name`: characters outside
    [A-Za-z0-9._-] and a leading '.' become '_' (tools/ncc/cmd_run.c)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    if safe.startswith("."):
        safe = "_" + safe[1:]
    return (safe or "output_%d" % index) + ".npy"


class NccResult:
    """Outcome of one `ncc run`: exit status, stderr, outputs by name."""

    def __init__(self, rc, stderr, outputs, missing):
        self.rc, self.stderr, self.outputs, self.missing = rc, stderr, outputs, missing

    def error_line(self):
        lines = [l for l in self.stderr.splitlines() if l.strip()]
        errs = [l for l in lines if l.startswith("ncc: error:")]
        return (errs or lines or ["(no stderr)"])[0]

    def describe(self):
        if self.rc == 124:
            return "timed out after %gs" % NCC_TIMEOUT
        if self.rc != 0:
            return "exit %d: %s" % (self.rc, self.error_line())
        return "missing output file(s): %s" % ", ".join(self.missing)


def run_ncc(ncc, model, inputs, output_names, workdir, extra=(), target="ref"):
    """Run `ncc run MODEL --target=TARGET` with `inputs` ({name: array}).

    `model` is a path or an onnx.ModelProto (saved into workdir).  Returns an
    NccResult whose outputs maps each name in output_names to its array.
    """
    if not isinstance(model, str):
        path = os.path.join(workdir, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        model = path
    outdir = os.path.join(workdir, "out-" + target)
    if os.path.isdir(outdir):
        shutil.rmtree(outdir)
    os.makedirs(outdir)
    cmd = [ncc, "run", model, "--target=" + target, "--output-dir", outdir]
    cmd += list(extra)
    for i, (name, arr) in enumerate(inputs.items()):
        p = os.path.join(workdir, "in%d.npy" % i)  # same for every target
        # np.asarray, not ascontiguousarray: the latter turns 0-d into 1-d.
        np.save(p, np.asarray(arr, order="C"), allow_pickle=False)
        cmd += ["--input", "%s=%s" % (name, p)]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=NCC_TIMEOUT)
        rc, stderr = proc.returncode, proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return NccResult(124, "", {}, [])
    outputs, missing = {}, []
    if rc == 0:
        for i, name in enumerate(output_names):
            p = os.path.join(outdir, output_file_name(name, i))
            if os.path.exists(p):
                outputs[name] = np.load(p, allow_pickle=False)
            else:
                missing.append(name)
    return NccResult(rc, stderr, outputs, missing)


def ort_session(model, threads=1, optimize=False):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    if not optimize:
        # The oracle runs the graph as written: no fused approximations.
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    data = model if isinstance(model, (bytes, str)) else model.SerializeToString()
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def run_ort(model, inputs):
    """ONNX Runtime outputs of `model` as {output name: array}."""
    sess = ort_session(model)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def compare(expected, actual, rtol, atol):
    """None when `actual` matches `expected`, else a one-line reason.
    Floats match when |actual - expected| <= atol + rtol |expected|; atol
    may be an array (a per-element bound) broadcastable to the shape."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.dtype != actual.dtype:
        return "dtype %s, expected %s" % (actual.dtype, expected.dtype)
    if expected.shape != actual.shape:
        return "shape %s, expected %s" % (actual.shape, expected.shape)
    if expected.size == 0:
        return None
    if expected.dtype.kind in "biu":
        # integers are exact unless atol allows a few units (quantized ops)
        bad = expected != actual
        if np.ndim(atol) == 0 and atol > 0 and expected.dtype.kind != "b":
            bad = np.abs(expected.astype(np.int64) - actual.astype(np.int64)) > atol
        if not bad.any():
            return None
        i = np.unravel_index(np.argmax(bad), bad.shape)
        return "%d of %d elements differ (first at %s: %s vs %s)" % (
            int(bad.sum()), bad.size, tuple(int(k) for k in i), actual[i], expected[i])
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    nan_mismatch = np.isnan(e) != np.isnan(a)
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    bad = ~close | nan_mismatch
    if not bad.any():
        return None
    with np.errstate(invalid="ignore"):
        err = np.where(np.isnan(e) | np.isnan(a), np.inf, np.abs(a - e))
    err = np.where(bad, err, 0.0)
    i = np.unravel_index(np.argmax(err), err.shape)
    atol_i = float(np.broadcast_to(atol, e.shape)[i])
    return "%d of %d elements off (worst at %s: %r vs %r; rtol %g atol %g)" % (
        int(bad.sum()), bad.size, tuple(int(k) for k in i), float(a[i]), float(e[i]),
        rtol, atol_i)


def tolerance_used(expected, actual, rtol, atol):
    """The largest |actual - expected| / (atol + rtol |expected|) over the
    elements (1.0 = at the tolerance; 0 for exact dtypes and empty tensors).
    Call after compare() has passed: same dtype and shape."""
    e = np.asarray(expected)
    if e.dtype.kind not in "fc" or e.size == 0:
        return 0.0
    e = e.astype(np.float64)
    a = np.asarray(actual).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(a - e)
        err = np.where(np.isnan(e) & np.isnan(a), 0.0, err)
        err = np.where(err == 0.0, 0.0, err / (atol + rtol * np.abs(e)))
    err = err[np.isfinite(err)]  # equal infinities give nan above
    return float(err.max()) if err.size else 0.0


class Workdir:
    """A temporary directory, removed on exit unless NCC_PY_KEEP is set."""

    def __enter__(self):
        self.path = tempfile.mkdtemp(prefix="ncc-py-")
        return self.path

    def __exit__(self, *exc):
        if not os.environ.get("NCC_PY_KEEP"):
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            print("kept", self.path)
        return False


def subdir(root, name):
    d = os.path.join(root, re.sub(r"[^A-Za-z0-9._-]", "_", name))
    os.makedirs(d, exist_ok=True)
    return d


def run_experiment(args, timeout, env=None):
    """bench/experiment ARGS in a child Python: (exit status, stdout, stderr)."""
    p = subprocess.run([sys.executable, os.path.join(BENCH, "experiment")] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check(cond, msg):
    """An assertion that survives `python -O`."""
    if not cond:
        raise AssertionError(msg)


def run_cases(fns):
    """Run test functions in order, each isolated from the others' failures;
    print "ok NAME seconds" or "FAILED NAME" with the traceback, then the
    "N passed, M failed" summary ctest shows. Returns the exit status."""
    import time
    import traceback
    failed = 0
    for fn in fns:
        t0 = time.time()
        try:
            fn()
            print("ok      %-36s %.1fs" % (fn.__name__, time.time() - t0))
        except Exception:
            failed += 1
            print("FAILED  %s\n%s" % (fn.__name__, traceback.format_exc()))
    print("%d passed, %d failed" % (len(fns) - failed, failed))
    return 1 if failed else 0


def discovered_cases(ns):
    """The test_* functions of a module's globals, by name."""
    return [f for n, f in sorted(ns.items()) if n.startswith("test_") and callable(f)]
