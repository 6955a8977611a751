#!/usr/bin/env python3
"""tests/py/test_tvm_tuned.py — tuned TVM (MetaSchedule) as its own row beside
untuned TVM, label `harness` (tests/tvm_tuned.cmake).

  - the configurations: llvm (untuned), llvm-ms (DEFAULT_TRIALS trials per
    task), llvm-ms=N; a bad N is refused; a tuned row refuses E6's
    symbolic mode (MetaSchedule tunes static shapes);
  - on a tiny MatMul+Relu model (reference: numpy), the untuned row
    compiles and matches, with no tuning time; the tuned row (2 trials per
    task) is present too: either it matches numpy and carries tune_ms
    inside its compile time (compile_ms >= tune_ms > 0) with its budget in
    result.tuning, or — where MetaSchedule cannot work in this TVM build —
    it is a Skipped row whose reason is one line starting "tuned TVM";
  - a tuning child that dies of a signal is reported in one line.

Exit 77 when tvm (or numpy/onnx/onnxruntime) is missing.  Tuning a 2-task
model with 2 trials each takes a minute or two on a loaded 2-core machine.
"""
import os
import subprocess
import sys
import tempfile
import types

from nccutil import check, discovered_cases, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

try:
    import tvm  # noqa: F401
except Exception as e:  # not installed, or a broken install
    print("skipped: tvm does not import (%s)" % e)
    sys.exit(77)

from harness.adapters import tvm as tvmad  # noqa: E402
from harness.adapters.base import Skipped  # noqa: E402

TMP = tempfile.mkdtemp(prefix="ncc-tvm-tuned-")
W = np.random.RandomState(0).randn(16, 8).astype(np.float32)


def _model():
    path = os.path.join(TMP, "mm.onnx")
    if not os.path.exists(path):
        g = helper.make_graph(
            [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
            "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])],
            [numpy_helper.from_array(W, "W")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, path)
    return path


def _task(config, batch=2):
    x = np.random.RandomState(1).randn(batch, 16).astype(np.float32)
    m = {"config": config, "shape_mode": "default", "batch": batch, "rtol": 1e-4, "atol": 1e-4,
         "compile_repeats": 1, "outputs": "fresh"}
    return types.SimpleNamespace(m=m, timeout=600, model_path=lambda b=None: _model(),
                                 input=lambda b: x, reference=lambda b: np.maximum(x @ W, 0))


def test_configs():
    C = tvmad.TvmAdapter
    for ok in ("llvm", "llvm-ms", "llvm-ms=4"):
        check(C.check_config(ok) is None, ok)
    for bad in ("llvm-ms=0", "llvm-ms=-1", "llvm-ms=x", "cuda"):
        check(C.check_config(bad) is not None, bad)
    check(tvmad.tuned_trials("llvm-ms") == tvmad.DEFAULT_TRIALS, "default budget")
    a = C(1)
    check(a.supports("llvm-ms", "symbolic"), "tuned: no symbolic batch")
    check(a.supports("llvm-ms", "static") is None and a.supports("llvm", "symbolic") is None,
          "static tuned and symbolic untuned run")


def test_untuned_and_tuned_rows():
    a = tvmad.TvmAdapter(1)
    a.load()
    rows = {}
    for config in ("llvm", "llvm-ms=2"):
        try:
            p = a.prepare_point(_task(config))
            rows[config] = ("ok", dict(p.result))
            p.release()
        except Skipped as e:
            rows[config] = ("skipped", e.reason)
    st, res = rows["llvm"]
    check(st == "ok" and res["check_ok"] and "tune_ms" not in res, "untuned row: %r" % (rows["llvm"],))
    st, res = rows["llvm-ms=2"]
    print("tuned TVM row: %s %s" % (st, res if st == "skipped" else
                                    {k: res.get(k) for k in ("compile_ms", "tune_ms", "tuning")}))
    if st == "ok":
        check(res["check_ok"], "tuned output matches numpy: %r" % res["check"])
        check(0 < res["tune_ms"] <= res["compile_ms"], "tuning inside compile time: %r" % res)
        check(res["tuning"]["trials_per_task"] == 2 and res["tuning"]["tasks"] >= 1, res["tuning"])
    else:
        check(res.startswith("tuned TVM") and "\n" not in res, "one-line reason: %r" % res)


def test_child_crash_one_line():
    p = subprocess.CompletedProcess([], -11, "", "!!!!!!! Segfault encountered !!!!!!!\n  File x\n")
    why = tvmad._child_failure(p, None)
    check(why == "crashed (SIGSEGV) in this TVM build", why)
    p = subprocess.CompletedProcess([], 1, "", "")
    why = tvmad._child_failure(p, {"error": "ValueError: no tasks"})
    check("\n" not in why and "no tasks" in why, why)


if __name__ == "__main__":
    sys.exit(run_cases(discovered_cases(globals())))
