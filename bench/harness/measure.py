"""bench/harness/measure.py — how an in-process compiler is timed and checked.

The statistics match `ncc bench` exactly (tools/ncc/cmd_bench.c): percentiles
interpolate linearly between order statistics (numpy's default), cv is the
population standard deviation over the mean, throughput is batch / median.
So an ncc row and a vendor row are summarised by the same arithmetic.  Each
median also gets stats.median_ci's distribution-free 95% interval, and the
row keeps every timed latency (samples_ms) so a report can pair rounds.

The protocol is the same for every in-process adapter (ncc included, via
ncclib):

  t0 -> adapter.compile(model)  -> t1 -> first run -> t2
  compile_ms   = t2 - t0   (model to first result: the comparable number,
                            because some compilers, torch.compile and
                            jax.jit, compile lazily inside the first call)
  build_ms     = t1 - t0   (model to ready-to-run object)
  first_run_ms = t2 - t1
  then the output is checked against the reference (prepare_in_process
  returns a Point: compiled, checked, not yet timed), then the Points are
  timed by time_rounds():

  warm-up   `warmup` untimed runs of each Point, in order;
  rounds    R rounds; in round r the Points take turns starting from Point
            r mod n (the start rotates, so no row always runs first or
            always follows the same neighbour); a turn is REWARM untimed
            runs (the caches and thread pool are the row's own again after
            another model ran) then ONE timed run.  samples[i] of every
            Point therefore comes from round i: a load that drifts over the
            rounds hits all rows alike, and ratios between rows can be
            taken round by round (stats.ratio_ci, paired).  One timed run
            per turn, not a block of several, keeps the pairs independent:
            consecutive runs of one turn share that moment's load, so k of
            them would count one round's luck k times in a paired CI.
            A Point timed alone (n = 1) needs no re-warm run: its previous
            run was its own: plain `warmup` then `iters` timed runs.

A self-timed Point (Point.self_timed: a subprocess that reports its own
latency, as bench/compare's ncc fallback `ncc bench` per round) takes its
turns like the others, but its call returns the sample in ms and nothing
runs untimed for it: each call is a fresh process that warms itself.

Timing is identical for every compiler: time.perf_counter around one Python
call, with Python's cyclic garbage collector paused during the rounds (as
timeit does; reference counting still frees every output).  What the call
does with its outputs is the sweep's output policy (spec key `outputs`),
the same for every compiler and recorded per row (result.timing.outputs,
.outputs_policy) and per compiler (env.timing):

  fresh         (default) the outputs are new arrays on every call: a
                vendor's run returns fresh arrays; ncc's in-process run
                lets libncc allocate them (ncc_module_run) and frees them
                when dropped; so allocation and first touch of the outputs
                are inside every compiler's time alike — ncc is timed
                through the vendors' Python path, not in C;
  preallocated  outputs bound once, after the checked first run, and
                written in place by every timed call: onnxruntime
                IOBinding (input and output OrtValues bound once),
                OpenVINO's infer request (input and output tensors set
                once), ncc ncc_module_run_into (the first run's outputs
                reused); the bound run's output is checked too.  A compiler
                whose API cannot write into caller-bound outputs
                (torch.compile, TVM, IREE, XLA here) stays fresh, and its
                rows say so (result.timing.outputs_why).

`ncc bench` instead writes into preallocated outputs (run_into) and times
in C; rows measured that way (the ncc adapter's fallback when libncc
cannot load in-process) say so in result.timing, with symmetric = false.
"""
import gc
import math
import time

import numpy as np

from . import stats as statsmod

REWARM = 1  # untimed runs before each timed run of an interleaved turn

# How every in-process row was timed (result.timing).
IN_PROCESS = {"where": "in-process", "clock": "time.perf_counter around one call",
              "outputs": "fresh per call"}
POLICIES = ("fresh", "preallocated")


def timing_record(policy="fresh", how=None, why=None):
    """result.timing of an in-process row under output policy `policy`:
    `how` the adapter bound its outputs (preallocated), or `why` it could
    not (then its outputs stay fresh per call)."""
    t = dict(IN_PROCESS, outputs_policy=policy, symmetric=True)
    if policy == "preallocated":
        if how:
            t["outputs"] = "preallocated, bound once: %s" % how
        else:
            t["outputs_why"] = why or "no API to write into caller-bound outputs"
    return t


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


class Point:
    """One compiled and checked model, ready to be timed: `result` holds
    the compile split and the check; time_rounds() fills `samples`.  A
    Point made `done` (a row timed elsewhere, e.g. by `ncc bench`) has its
    whole result and takes no part in rounds."""

    def __init__(self, run_once, result, release=None, done=False, self_timed=False):
        self.run_once, self.result, self._release = run_once, result, release
        self.done = done
        self.self_timed = self_timed  # run_once() returns its own latency (ms)
        self.samples = []
        self.error = None      # the exception that stopped its runs, if any
        self.run_s = 0.0       # wall seconds spent in its warm-up and turns
        self.handle = None     # the compiled object (prepare_in_process)
        self.xin = None        # the prepared input (prepare_in_process)
        # profile_fn() -> the per-kernel breakdown of one more run, taken
        # after the timing (collect_profiles) into result["profile"]
        self.profile_fn = None

    def release(self):
        if self._release:
            r, self._release = self._release, None
            r()


def prepare_in_process(compile_fn, prepare_fn, run_fn, to_numpy, x, check_fn, repeats=1,
                       release_fn=None, outputs="fresh", bind_fn=None, no_bind_why=None):
    """Compile (repeats times, each from scratch: medians reported), run
    once, check: a Point over the last handle.  Arguments as for
    time_in_process; with outputs="preallocated", bind_fn(handle, input,
    first output) -> (run_bound, how) or None: run_bound() writes into
    outputs bound once and returns them (checked like the first run), and
    is then what the rounds time."""
    builds, firsts = [], []
    handle = None
    try:
        for i in range(repeats):
            handle, xin, out, build_ms, first_ms = time_first(compile_fn, prepare_fn, run_fn, x)
            builds.append(build_ms)
            firsts.append(first_ms)
            if i + 1 < repeats and release_fn:
                release_fn(handle)
                handle = None
        ok, info = check_fn(to_numpy(out))
        h = handle
        run_once = lambda: run_fn(h, xin)  # noqa: E731
        bound = bind_fn(handle, xin, out) if (outputs == "preallocated" and bind_fn) else None
        if bound is not None:
            run_once, how = bound
            ok2, info2 = check_fn(to_numpy(run_once()))
            if ok and not ok2:
                ok, info = False, dict(info2, reason="with preallocated outputs: %s"
                                       % info2.get("reason"))
            timing = timing_record(outputs, how=how)
        else:
            timing = timing_record(outputs, why=no_bind_why)
        del out
    except BaseException:
        if handle is not None and release_fn:
            release_fn(handle)
        raise
    build_ms, first_ms = median(builds), median(firsts)
    res = {"compile_ms": build_ms + first_ms, "build_ms": build_ms, "first_run_ms": first_ms,
           "check": info, "check_ok": ok, "timing": timing}
    p = Point(run_once, res, (lambda: release_fn(h)) if release_fn else None)
    p.handle = h
    p.xin = xin
    return p


def collect_profiles(points):
    """After the timed rounds: each point with a profile_fn (ncc in-process:
    one profiled run, ncclib.Module.profile) gets result["profile"], the
    per-kernel breakdown of where its time goes; a failure there is
    recorded as result["profile_error"] and leaves the timing alone."""
    for p in points:
        if p.profile_fn is None or p.error is not None or p.done or "profile" in p.result:
            continue
        try:
            p.result["profile"] = p.profile_fn()
        except Exception as e:  # the row stays valid without its profile
            p.result["profile_error"] = str(e)


def time_rounds(points, warmup, rounds, first_round=0, rewarm=REWARM):
    """The warm-up (when first_round is 0) and `rounds` interleaved rounds
    of the module docstring over `points` (Points that fail stop there,
    with .error set; the others go on).  Returns the wall seconds."""
    t_all = time.perf_counter()
    n = len(points)
    per_turn = rewarm if n > 1 else 0
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # as timeit does: no collection pause inside anyone's run
    try:
        if first_round == 0:
            for p in points:
                _turn(p, warmup, False)
        for r in range(first_round, first_round + rounds):
            for j in range(n):
                _turn(points[(r + j) % n], per_turn, True)
    finally:
        if was_enabled:
            gc.enable()
    return time.perf_counter() - t_all


def _turn(p, untimed, timed):
    if p.error is not None or p.done:
        return
    t0 = time.perf_counter()
    try:
        if p.self_timed:
            if timed:
                p.samples.append(float(p.run_once()))
            p.run_s += time.perf_counter() - t0
            return
        for _ in range(untimed):
            p.run_once()
        if timed:
            s = time.perf_counter()
            p.run_once()
            p.samples.append((time.perf_counter() - s) * 1e3)
    except Exception as e:  # a run that fails mid-sweep ends this row only
        p.error = e
    p.run_s += time.perf_counter() - t0


MAX_EXTRA_FACTOR = 4  # adaptive repeats: at most this many times R extra rounds


def time_group(points, warmup, rounds, adaptive=True, cv_max=None, ci_target=None,
               max_rounds=None):
    """time_rounds, then adaptive repeats: while some row's median is not
    yet precise (its 95% CI half-width over the median, stats.ci_halfwidth,
    above ci_target, default stats.CI_TARGET) or the group is noisy (a
    row's robust cv above cv_max, default stats.CV_RANK_MAX: the rule of
    the noisy flag), ceil(R/2) more rounds, up to max_rounds in all
    (default (1 + MAX_EXTRA_FACTOR) * R).  Returns {"rounds",
    "extra_rounds", "wall_s", "ci_target", "halfwidth", "capped"};
    "capped" says the cap stopped it before the target was met (the row's
    CI is then simply wider: it is reported, never hidden)."""
    cv_max = statsmod.CV_RANK_MAX if cv_max is None else cv_max
    ci_target = statsmod.CI_TARGET if ci_target is None else ci_target
    cap = max_rounds if max_rounds is not None else (1 + MAX_EXTRA_FACTOR) * rounds
    wall = time_rounds(points, warmup, rounds)
    extra = 0
    step = max(1, (rounds + 1) // 2)

    def unmet():
        return _group_halfwidth(points) > ci_target or _group_cv(points) > cv_max
    while adaptive and rounds > 0 and rounds + extra < cap and unmet():
        n = min(step, cap - rounds - extra)
        wall += time_rounds(points, 0, n, first_round=rounds + extra)
        extra += n
    collect_profiles(points)
    return {"rounds": rounds + extra, "extra_rounds": extra, "wall_s": wall,
            "ci_target": ci_target, "halfwidth": _group_halfwidth(points),
            "capped": bool(adaptive and rounds > 0 and unmet())}


def _group_cv(points):
    """The largest robust cv of the group's timed rows."""
    cvs = [statsmod.robust_cv(p.samples) for p in points
           if p.error is None and not p.done and p.samples]
    return max(cvs) if cvs else 0.0


def _group_halfwidth(points):
    """The largest relative CI half-width of the group's timed rows."""
    hw = [statsmod.ci_halfwidth(p.samples) for p in points
          if p.error is None and not p.done and p.samples]
    return max(hw) if hw else 0.0


def summarize(samples):
    """The timed part of a point result from its latencies, in order:
    latency_ms {median, p90, p99, min, mean, ci: [lo, hi]}, cv (std/mean),
    robust_cv (1.4826 MAD/median), noisy (stats.noisy on the samples: the
    robust cv above stats.CV_RANK_MAX), samples_ms."""
    lat, cv = latency_stats(samples)
    lo, hi = statsmod.median_ci(samples)
    lat["ci"] = [lo, hi]
    return {"latency_ms": lat, "cv": cv, "robust_cv": statsmod.robust_cv(samples),
            "noisy": statsmod.noisy(cv, samples), "samples_ms": [float(v) for v in samples]}


def time_in_process(compile_fn, prepare_fn, run_fn, to_numpy, x, warmup, iters, check_fn,
                    repeats=1, release_fn=None):
    """One row alone: compile_fn() -> handle; prepare_fn(handle, x) ->
    framework input; run_fn(handle, input) -> framework output
    (synchronised); to_numpy(out) -> array; check_fn(array) -> (ok, info).
    With repeats > 1 the compile and first run are repeated (each from
    scratch) and their medians reported; the last handle is the one
    checked and timed (`warmup` then `iters` timed runs, as a group of
    one).  The caller releases the last handle.  Returns the measured part
    of a row."""
    p = prepare_in_process(compile_fn, prepare_fn, run_fn, to_numpy, x, check_fn,
                           repeats, release_fn)  # (p.release() is left to the caller)
    time_rounds([p], warmup, iters)
    if p.error is not None:
        raise p.error
    collect_profiles([p])
    res = dict(p.result)
    res.update(summarize(p.samples))
    return res
