"""bench/harness/measure.py — how an in-process compiler is timed and checked.

The statistics match `ncc bench` exactly (tools/ncc/cmd_bench.c): percentiles
interpolate linearly between order statistics (numpy's default), cv is the
population standard deviation over the mean, throughput is batch / median.
So an ncc row and a vendor row are summarised by the same arithmetic.

The timing protocol is the same for every in-process adapter:

  t0 -> adapter.compile(model)  -> t1 -> first run -> t2
  compile_ms   = t2 - t0   (model to first result: the comparable number,
                            because some compilers, torch.compile and
                            jax.jit, compile lazily inside the first call)
  build_ms     = t1 - t0   (model to ready-to-run object)
  first_run_ms = t2 - t1
  then the output is checked against the reference, then `warmup` untimed
  runs, then `iters` runs each timed on its own.
"""
import math
import time

import numpy as np


def percentile(sorted_vals, p):
    """Linear interpolation between order statistics (numpy's default)."""
    n = len(sorted_vals)
    pos = p * (n - 1)
    lo = int(math.floor(pos))
    if lo >= n - 1:
        return sorted_vals[-1]
    frac = pos - lo
    return sorted_vals[lo] + (sorted_vals[lo + 1] - sorted_vals[lo]) * frac


def latency_stats(lat_ms):
    """{median, p90, p99, min, mean} and cv of a list of latencies (ms)."""
    if not lat_ms:
        raise ValueError("no latencies")
    s = sorted(float(v) for v in lat_ms)
    mean = sum(s) / len(s)
    var = sum((v - mean) ** 2 for v in s) / len(s)
    stats = {"median": percentile(s, 0.5), "p90": percentile(s, 0.9),
             "p99": percentile(s, 0.99), "min": s[0], "mean": mean}
    cv = math.sqrt(var) / mean if mean > 0 else 0.0
    return stats, cv


def throughput(batch, median_ms):
    return batch / (median_ms / 1e3) if median_ms and median_ms > 0 else None


def compare(expected, actual, rtol, atol):
    """(ok, info): elementwise |a - e| <= atol + rtol * |e|, same shape, no
    NaN where the reference has none.  info carries the error figures."""
    e = np.asarray(expected, dtype=np.float64)
    a = np.asarray(actual)
    info = {"rtol": rtol, "atol": atol, "max_abs_err": None, "max_rel_err": None}
    if a.shape != e.shape:
        info["reason"] = "shape %s, reference %s" % (list(a.shape), list(e.shape))
        return False, info
    a = a.astype(np.float64)
    if e.size == 0:
        return True, info
    nan_bad = np.isnan(a) != np.isnan(e)
    with np.errstate(invalid="ignore"):
        err = np.abs(a - e)
    err = np.where(np.isnan(err), np.inf, err)
    err = np.where(np.isnan(a) & np.isnan(e), 0.0, err)
    bad = (err > atol + rtol * np.abs(np.nan_to_num(e))) | nan_bad
    scale = float(np.max(np.abs(np.nan_to_num(e)))) or 1.0
    info["max_abs_err"] = float(np.max(err))
    info["max_rel_err"] = float(np.max(err)) / scale
    if bad.any():
        info["reason"] = "%d of %d elements off (max abs err %.3g, output scale %.3g)" % (
            int(bad.sum()), bad.size, info["max_abs_err"], scale)
        return False, info
    return True, info


def time_runs(run_fn, handle, x, warmup, iters):
    """Latency statistics of `iters` timed runs after `warmup` untimed ones."""
    for _ in range(warmup):
        run_fn(handle, x)
    lat = []
    for _ in range(iters):
        s = time.perf_counter()
        run_fn(handle, x)
        lat.append((time.perf_counter() - s) * 1e3)
    return latency_stats(lat)


def time_first(compile_fn, prepare_fn, run_fn, x):
    """(handle, prepared input, output, build_ms, first_run_ms): compile,
    then one run; preparing the input (a copy into the framework's tensor
    type) counts as part of the first result."""
    t0 = time.perf_counter()
    handle = compile_fn()
    t1 = time.perf_counter()
    xin = prepare_fn(handle, x)
    out = run_fn(handle, xin)
    t2 = time.perf_counter()
    return handle, xin, out, (t1 - t0) * 1e3, (t2 - t1) * 1e3


def median(values):
    s = sorted(values)
    return percentile(s, 0.5)


def time_in_process(compile_fn, prepare_fn, run_fn, to_numpy, x, warmup, iters, check_fn,
                    repeats=1, release_fn=None):
    """The protocol of the module docstring.  compile_fn() -> handle;
    prepare_fn(handle, x) -> framework input; run_fn(handle, input) ->
    framework output (synchronised); to_numpy(out) -> array; check_fn(array)
    -> (ok, info).  With repeats > 1 the compile and first run are repeated
    (each from scratch) and their medians reported; the last handle is the
    one checked and timed.  Returns the measured part of a row."""
    builds, firsts = [], []
    for i in range(repeats):
        handle, xin, out, build_ms, first_ms = time_first(compile_fn, prepare_fn, run_fn, x)
        builds.append(build_ms)
        firsts.append(first_ms)
        if i + 1 < repeats and release_fn:
            release_fn(handle)
    build_ms, first_ms = median(builds), median(firsts)
    ok, info = check_fn(to_numpy(out))
    stats, cv = time_runs(run_fn, handle, xin, warmup, iters)
    return {"compile_ms": build_ms + first_ms, "build_ms": build_ms,
            "first_run_ms": first_ms, "latency_ms": stats, "cv": cv,
            "check": info, "check_ok": ok}
