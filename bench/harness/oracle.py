"""bench/harness/oracle.py — the check of each model against an oracle
outside ncc, before ncc's reference is trusted for the rows.

Why: every row is checked against `ncc run --target=ref -O0` (models.py),
which is cheap and exact per op, but it is ncc.  An importer bug shared by
ref and cpu (a misread attribute, say) would then keep ncc's rows valid and
flag every vendor as the one that is wrong.  So each model, at each batch
and input seed a sweep uses, is first run ONCE by an oracle outside ncc:

  onnxruntime with ORT_DISABLE_ALL   the graph as written, no fusion or
                                     rewrite; one thread, CPU provider
  torch eager (bench/harness/native.py: the block written in torch with
                                     the same weights), only where
                                     onnxruntime does not import

and ncc ref's output is compared with the oracle's (the row's rtol/atol).
Then (runner.py):

  ref agrees     rows are checked against ncc ref, as before;
  ref disagrees  the model is an ncc failure: every ncc row of it gets
                 status "mismatch" (not valid) with reason "ncc failure:
                 ...", whatever its own output matched; every vendor row is
                 checked against the oracle's output instead, so vendors
                 are never dropped for ncc's bug;
  no oracle      (neither onnxruntime nor torch imports, or the oracle
                 fails on the model) the rows are skipped/errors with that
                 reason: no row is validated by ncc alone.

Each measured row records result.oracle: which oracle checked the model
(name, config, version), whether ncc ref agreed, the error figures of ref
against the oracle, and what the row's own output was checked against.
"""
import importlib.metadata

import numpy as np

from . import measure

REF_NAME = "ncc ref -O0"


class OracleUnavailable(Exception):
    """No outside oracle can run here (reason, install hint)."""

    def __init__(self, reason, hint=None):
        Exception.__init__(self, reason)
        self.reason, self.hint = reason, hint


class OracleFailed(Exception):
    """The outside oracle could not run this model."""


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _first_line(e):
    s = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, s[0][:300] if s else "")


def run_ort(model_path, x):
    """y of onnxruntime with every graph optimisation off, one thread."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.asarray(sess.run(None, {name: x})[0])


def run_torch(ms, params, x):
    """y of the block written in torch (native.py), eager, same weights."""
    import torch
    from . import native
    module = native.torch_module(torch, ms.config(), params)
    with torch.inference_mode():
        return module(torch.from_numpy(np.ascontiguousarray(x))).detach().numpy().copy()


def which():
    """The oracle this environment has: its record, or OracleUnavailable."""
    try:
        import onnxruntime  # noqa: F401
        return {"name": "onnxruntime", "config": "ORT_DISABLE_ALL, 1 thread",
                "version": _version("onnxruntime")}
    except Exception as e_ort:
        try:
            import torch  # noqa: F401
            return {"name": "torch", "config": "eager, bench/harness/native.py",
                    "version": _version("torch"),
                    "why": "onnxruntime does not import (%s)" % _first_line(e_ort)}
        except Exception:
            raise OracleUnavailable(
                "no outside oracle: neither onnxruntime nor torch imports (%s); ncc ref "
                "alone validates nothing" % _first_line(e_ort), "pip install onnxruntime")


def run(record, model_path, ms, params_fn, x):
    """The oracle's output for input x (OracleFailed when it cannot)."""
    try:
        if record["name"] == "onnxruntime":
            return run_ort(model_path, x)
        return run_torch(ms, params_fn(), x)
    except Exception as e:
        raise OracleFailed("the outside oracle (%s) cannot run this model: %s"
                           % (record["name"], _first_line(e)))


def verdict(record, oracle_y, ref_y, rtol, atol):
    """ncc ref's output against the oracle's: the row-independent part of
    result.oracle ({name, config, version, ref_agrees, ref_check})."""
    ok, info = measure.compare(oracle_y, ref_y, rtol, atol)
    v = dict(record)
    v["ref_agrees"] = bool(ok)
    v["ref_check"] = {k: info.get(k) for k in ("rtol", "atol", "max_abs_err", "max_rel_err",
                                                "reason") if info.get(k) is not None}
    return v


def failure_reason(v):
    """The reason an ncc row gets when ref disagrees with the oracle."""
    return ("ncc failure: %s disagrees with the outside oracle (%s %s) on this model: %s"
            % (REF_NAME, v["name"], v["config"],
               (v.get("ref_check") or {}).get("reason", "see result.oracle")))
