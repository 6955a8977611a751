"""tests/py/nccutil.py — shared helpers of the Python oracle tests.

Finds the `ncc` binary and the source tree, reads the claimed op list from
ir/ops.def (the one source of truth), runs `ncc run --target=T` on a model
with .npy inputs (T is `ref` unless a suite's --target says otherwise), runs
ONNX Runtime as the oracle, and compares tensors with dtype, shape and
tolerance checks.  Used by node_conformance.py, diff_ort.py, real_nets.py,
bench/ref_resnet18.py and bench/blocks_vs_ort.py; its check() and
run_cases() are the runner of the harness and compare test scripts.
"""
import contextlib
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


# Operand indices (B, B's zero point) of the 8-bit products whose B is s8
S8_B = {"QLinearConv": (3, 5), "QLinearMatMul": (3, 5), "MatMulInteger": (1, 3),
        "ConvInteger": (1, 3), "QGemm": (3, 5)}


def exact_ints(model, feeds=None):
    """(model, feeds) computing the same integers with the s8 operands of
    8-bit products (an A read only as A, a B, and every constant s8 input
    of a DequantizeLinear) stored as u8 (+128, zero point +128: the
    differences are unchanged). ONNX
    Runtime's u8 x s8 kernels on x86 without VNNI add byte pairs in 16
    bits with saturation (vpmaddubsw), off by tens of quanta there (a QDQ
    model's DequantizeLinear + Conv becomes such a kernel when optimized);
    its u8 x u8 kernels are exact on every host. `model`: a ModelProto,
    bytes or a path; returned as given when nothing changes."""
    import onnx
    from onnx import TensorProto as T, numpy_helper as nh
    m = model if isinstance(model, onnx.ModelProto) else (
        onnx.load_model_from_string(model) if isinstance(model, bytes) else onnx.load(model))
    ops = {n.op_type for n in m.graph.node}
    if not ops & (set(S8_B) | {"DequantizeLinear"}):
        return model, feeds
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    g, feeds = m2.graph, dict(feeds or {})
    inits = {i.name: i for i in g.initializer}
    inputs = {i.name: i for i in g.input}
    made_u8 = {o for n in g.node if n.op_type == "DynamicQuantizeLinear" for o in n.output[:1]}
    consumers = {}
    for n in g.node:
        for x in set(n.input):
            consumers.setdefault(x, []).append(n)
    changed = [False]

    def dtype_of(name):
        if name in made_u8:
            return T.UINT8
        if name in inits:
            return inits[name].data_type
        if name in inputs:
            return inputs[name].type.tensor_type.elem_type
        return None

    def to_u8(name):
        arr = (nh.to_array(inits[name]).astype(np.int16) + 128).astype(np.uint8)
        inits[name].CopyFrom(nh.from_array(arr, name))
        changed[0] = True

    def zero_point(n, zi, like):
        z = n.input[zi] if len(n.input) > zi else ""
        if z:
            to_u8(z)
            return
        while len(n.input) < zi:
            n.input.append("")
        z = "%s_zero_point_u8_%d" % (n.output[0], zi)
        n.input.append(z)
        g.initializer.append(nh.from_array(np.full(like, 128, np.uint8), z))

    for n in g.node:
        if n.op_type == "DequantizeLinear":
            x = n.input[0]
            zi_ok = len(n.input) < 3 or not n.input[2] or n.input[2] in inits
            if x in inits and dtype_of(x) == T.INT8 and zi_ok and len(n.input) > 1:
                to_u8(x)
                zero_point(n, 2, nh.to_array(inits[n.input[1]]).shape)
            continue
        if n.op_type not in S8_B:
            continue
        a = n.input[0]
        if dtype_of(a) == T.INT8 and all(c.op_type in ("MatMulInteger", "ConvInteger") and
                                         list(c.input).index(a) == 0 for c in consumers[a]):
            # an s8 A of the integer-output products (a QLinear op's output
            # type must be its A's) read only as A: to u8 in every reader
            zs = [c.input[2] if len(c.input) > 2 else "" for c in consumers[a]]
            if all(not z or z in inits for z in zs) and (a in inits or (a in inputs and a in feeds)):
                if a in inits:
                    to_u8(a)
                else:
                    inputs[a].type.tensor_type.elem_type = T.UINT8
                    feeds[a] = (feeds[a].astype(np.int16) + 128).astype(np.uint8)
                for c in consumers[a]:
                    zero_point(c, 2, ())
                made_u8.add(a)
                changed[0] = True
        if dtype_of(a) != T.UINT8:
            continue
        bi, zi = S8_B[n.op_type]
        b = n.input[bi]
        if dtype_of(b) != T.INT8 or (len(n.input) > zi and n.input[zi] and n.input[zi] not in inits):
            continue
        if b in inits:
            to_u8(b)
        elif b in inputs and b in feeds:
            inputs[b].type.tensor_type.elem_type = T.UINT8
            feeds[b] = (feeds[b].astype(np.int16) + 128).astype(np.uint8)
            changed[0] = True
        else:
            continue
        zero_point(n, zi, ())
    return (m2 if changed[0] else model), feeds


def ort_session(model, threads=1, optimize=False):
    import onnxruntime as ort
    model, _ = exact_ints(model)
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
    model, inputs = exact_ints(model, inputs)
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


def kaiming(rng, shape):
    """f32 weights of realistic scale (He init over shape[1:]): a zero or
    unit-scale weight hides sums in the wrong order or of the wrong terms."""
    fan = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan)).astype(np.float32)


def checked_model(nodes, name, inputs, outputs, inits, opset=18):
    """An ONNX model of `nodes` (default domain at `opset`) with `inputs`
    (value infos), `outputs` (names, types left to inference) and `inits`
    ({name: array}), shape-inferred in strict mode and checked: a test's
    model the ONNX tools accept, so a mismatch is ncc's."""
    from onnx import helper, numpy_helper
    g = helper.make_graph(nodes, name, inputs,
                          [helper.make_empty_tensor_value_info(o) for o in outputs],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(g, opset_imports=opsets, producer_name="ncc-" + name)
    m.ir_version = helper.find_min_ir_version_for(opsets)
    m = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    onnx.checker.check_model(m)
    return m


@contextlib.contextmanager
def environ(values):
    """os.environ with `values` set (None: unset) inside the block."""
    def put(kv):
        for k, v in kv.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    saved = {k: os.environ.get(k) for k in values}
    try:
        put(values)
        yield
    finally:
        put(saved)


def check_close(what, expected, outputs, rtol, atol):
    """Every expected output ({name: array}) matches outputs[name]."""
    bad = []
    for name, want in expected.items():
        why = compare(want, outputs[name], rtol, atol)
        if why:
            bad.append("%s: %s" % (name, why))
    check(not bad, "%s differs from ONNX Runtime:\n  %s" % (what, "\n  ".join(bad)))


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
