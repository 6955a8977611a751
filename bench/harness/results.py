"""bench/harness/results.py — DIR/results.jsonl: one self-describing row per
measurement, appended and flushed as soon as it is measured.

A row (schema 1):

  schema       1
  key          16 hex digits: sha1 of the measurement config (spec.measurement_key)
  experiments  ids of the experiments that use this measurement
  config       the measurement: kind ("point" | "sequence"), model {block,
               depth, width, seed, spatial, seq, k, heads, opset, gelu},
               batch (point) or sequence + runs_per_shape, compiler, config,
               shape_mode, threads, warmup, iters, input_seed, rtol, atol
  status       ok | mismatch | skipped | unsupported | error | timeout
  valid        true only for ok: the output matched the reference, so the
               times count.  A mismatch row keeps its times, flagged; every
               ncc row of a model whose ncc ref disagrees with the outside
               oracle is a mismatch ("ncc failure: ...").
  reason, hint why it is not ok, and (skipped) how to install what is missing
  result       point: compile_ms (model -> first result), build_ms,
               first_run_ms, latency_ms {median, p90, p99, min, mean, ci},
               cv, robust_cv, noisy, samples_ms, timing, [interleave],
               throughput_per_s, model_mflop, gflop_per_s, check {rtol, atol,
               max_abs_err, max_rel_err[, reason]} and, for ncc, kernels,
               host_kernels, passes, pass_ms, graph {nodes, kernels, mflop,
               mb_moved, peak_mb}; sequence: steps [{batch, compile_ms,
               first_run_ms, steady_ms, latency_ms, cv, check_ok, check,
               cost_ms, cumulative_ms}], total_ms, compile_ms, check
    samples_ms   every timed latency (ms) in timing order
    latency_ms.ci  [lo, hi]: the 95% order-statistic interval of the median
                 (stats.median_ci; (min, max) below 6 samples)
    cv           std / mean of samples_ms; robust_cv: 1.4826 * MAD / median
                 of samples_ms (stats.robust_cv), which one outlier barely moves
    noisy        stats.noisy(cv, samples_ms): the robust cv above
                 stats.CV_RANK_MAX (the plain cv for rows without samples),
                 not to be ranked
    interleave   {group, rounds, extra_rounds, rows, timed_at} when the row
                 was timed in rounds with other rows of its group (same
                 model, batch and settings; runner.py): samples_ms[i] of
                 each of them comes from round i, all have `rounds` samples
                 (extra_rounds of them added because the group was noisy),
                 so ratios between them pair by index.  rows: how many
                 finished the rounds; timed_at: the same for all rows of
                 one session of rounds
    graph_hash   (ncc in-process) the optimized graph's ncc_graph_hash;
    graph_same   (ncc rows with --disable-pass) true when that graph is the
                 one of graph_same_as, the same configuration without the
                 flags, timed in the same group: a "no change" by construction
    timing       {where, clock, outputs, outputs_policy, symmetric[,
                 outputs_why, warmup, rewarm_per_turn, why]}: how the
                 latencies were taken ("in-process", perf_counter around
                 one call; outputs fresh per call or, under the spec's
                 outputs = "preallocated", bound once — outputs_why says why
                 a compiler could not; or ncc's fallback "ncc bench
                 subprocess" into preallocated outputs, symmetric false)
    emulated     {emulator, target} on the rows of a compiler that runs
                 emulated (ncc_qemu: AArch64 under qemu-aarch64): checked,
                 never ranked (report_hw.py)
    oracle       {name, config, version, ref_agrees, batches [{batch,
                 ref_agrees, ref_check}], row_checked_against}: the outside
                 oracle that checked the model (oracle.py), whether ncc ref
                 agreed with it, and what this row was checked against
  threads      the sweep's thread count; pinned_cpus: the CPUs the sweep
               was pinned to (null when not pinned); also in env
  env          the environment record (envinfo.py), with timing
               {outputs_policy, compilers {name: how its runs are timed}} and
               hardware {machine, arch, cpu, cores, emulated, emulator, why,
               how} (hardware.py: the machine of the hardware axis)
  spec         {name, hash} of the spec that asked for it
  started      UTC time, wall_s: seconds the row took

Resuming keys rows by `key`; the last row of a key wins when a file has
several (a skipped row is retried on resume and its new row appended; a
group re-timed on resume appends new rows for all its measured rows).
Rows written before samples_ms, ci, noisy, robust_cv, timing, interleave, threads and
pinned_cpus existed lack them and are still valid rows.
"""
import json
import os
import sys

from . import SCHEMA_VERSION

STATUSES = ("ok", "mismatch", "skipped", "unsupported", "error", "timeout")
MEASURED = ("ok", "mismatch")
LAT_KEYS = ("median", "p90", "p99", "min", "mean")
REQUIRED = {"schema": int, "key": str, "experiments": list, "config": dict,
            "status": str, "valid": bool, "env": dict, "started": str, "wall_s": (int, float)}
CONFIG_REQUIRED = ("kind", "model", "compiler", "config", "shape_mode", "threads",
                   "warmup", "iters", "input_seed", "rtol", "atol")
MODEL_REQUIRED = ("block", "depth", "width", "seed", "spatial", "seq", "k", "heads")
ENV_REQUIRED = ("cpu_model", "cores", "threads", "compilers", "ncc")


def validate_row(row):
    """[] for a well-formed row, else the list of problems."""
    errs = []
    if not isinstance(row, dict):
        return ["row is not an object"]
    for k, t in REQUIRED.items():
        if k not in row:
            errs.append("missing %s" % k)
        elif not isinstance(row[k], t):
            errs.append("%s has type %s" % (k, type(row[k]).__name__))
    if errs:
        return errs
    if row["schema"] != SCHEMA_VERSION:
        errs.append("schema %r, expected %d" % (row["schema"], SCHEMA_VERSION))
    if row["status"] not in STATUSES:
        errs.append("unknown status %r" % row["status"])
    if row["valid"] != (row["status"] == "ok"):
        errs.append("valid must be true exactly when status is ok")
    cfg = row["config"]
    errs += ["config missing %s" % k for k in CONFIG_REQUIRED if k not in cfg]
    errs += ["config.model missing %s" % k for k in MODEL_REQUIRED
             if k not in cfg.get("model", {})]
    if cfg.get("kind") == "point" and not isinstance(cfg.get("batch"), int):
        errs.append("point config needs an integer batch")
    if cfg.get("kind") == "sequence" and not isinstance(cfg.get("sequence"), list):
        errs.append("sequence config needs a sequence list")
    errs += ["env missing %s" % k for k in ENV_REQUIRED if k not in row["env"]]
    if row["status"] in MEASURED:
        errs += _validate_result(cfg.get("kind"), row.get("result"))
    elif not row.get("reason"):
        errs.append("status %s needs a reason" % row["status"])
    return errs


def _validate_result(kind, res):
    if not isinstance(res, dict):
        return ["measured row without a result"]
    errs = []
    if kind == "point":
        for k in ("compile_ms", "build_ms", "first_run_ms", "cv", "throughput_per_s"):
            if not isinstance(res.get(k), (int, float)):
                errs.append("result.%s is not a number" % k)
        lat = res.get("latency_ms")
        if not isinstance(lat, dict) or not all(isinstance(lat.get(k), (int, float))
                                                for k in LAT_KEYS):
            errs.append("result.latency_ms needs %s" % ", ".join(LAT_KEYS))
        elif not lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"]:
            errs.append("result.latency_ms is not ordered min <= median <= p90 <= p99")
        if not isinstance(res.get("check"), dict):
            errs.append("result.check missing")
        errs += _validate_samples(res)
    else:
        steps = res.get("steps")
        if not isinstance(steps, list) or not steps:
            errs.append("result.steps missing")
        else:
            for s in steps:
                for k in ("batch", "compile_ms", "first_run_ms", "steady_ms", "cost_ms",
                          "cumulative_ms"):
                    if not isinstance(s.get(k), (int, float)):
                        errs.append("result.steps[].%s is not a number" % k)
                        break
        if not isinstance(res.get("total_ms"), (int, float)):
            errs.append("result.total_ms is not a number")
    return errs


def _validate_samples(res):
    """The noise fields of a point result, when present (older rows have none)."""
    errs = []
    samples = res.get("samples_ms")
    if samples is not None and (not isinstance(samples, list) or not samples or
                                not all(isinstance(v, (int, float)) for v in samples)):
        errs.append("result.samples_ms is not a non-empty list of numbers")
        samples = None
    lat = res.get("latency_ms") or {}
    ci = lat.get("ci") if isinstance(lat, dict) else None
    if ci is not None:
        if not (isinstance(ci, list) and len(ci) == 2 and
                all(isinstance(v, (int, float)) for v in ci)):
            errs.append("result.latency_ms.ci is not [lo, hi]")
        elif isinstance(lat.get("median"), (int, float)) and \
                not ci[0] <= lat["median"] <= ci[1]:
            errs.append("result.latency_ms.ci does not hold the median")
    il = res.get("interleave")
    if il is not None:
        if not isinstance(il, dict) or not isinstance(il.get("group"), str) or \
                not isinstance(il.get("rounds"), int):
            errs.append("result.interleave needs group and rounds")
        elif samples is not None and len(samples) != il["rounds"]:
            errs.append("result.interleave.rounds %d but %d samples"
                        % (il["rounds"], len(samples)))
    if "noisy" in res and not isinstance(res["noisy"], bool):
        errs.append("result.noisy is not a boolean")
    return errs


def read_rows(path, warn=sys.stderr):
    """Every row of a results file, in order; a torn last line (a crash
    mid-write) or any malformed line is skipped with a warning."""
    rows = []
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        return rows
    with f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except ValueError:
                if warn:
                    print("warning: %s:%d: not a JSON row, ignored" % (path, n), file=warn)
                continue
            if isinstance(row, dict) and "key" in row:
                rows.append(row)
    return rows


def index(rows):
    """key -> row, the last row of a key winning."""
    out = {}
    for r in rows:
        out[r["key"]] = r
    return out


def append_row(path, row):
    line = json.dumps(row, sort_keys=True, allow_nan=False, default=_jsonable)
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def _jsonable(o):
    if hasattr(o, "item"):  # numpy scalars
        return o.item()
    raise TypeError("not JSON serializable: %r" % type(o))


def write_rows(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True, allow_nan=False, default=_jsonable) + "\n")
    os.replace(tmp, path)


_RANK = {"ok": 0, "mismatch": 0, "unsupported": 1, "error": 1, "timeout": 1, "skipped": 2}


def _env_id(row):
    env = row.get("env", {})
    return (env.get("cpu_model"), env.get("cores"), (env.get("ncc") or {}).get("commit"))


def merge_rows(row_lists):
    """Rows of several runs (shards) as one list.  For a key measured more
    than once, a measured row beats an error, which beats a skip; among
    equals the first wins.  Returns (rows, stats) where stats counts the
    duplicates and those whose environment differed (rows of different
    machines should not be mixed in one report)."""
    best, order = {}, []
    dups = env_conflicts = 0
    for rows in row_lists:
        for r in index(rows).values():
            k = r["key"]
            if k not in best:
                best[k] = r
                order.append(k)
                continue
            dups += 1
            if _env_id(r) != _env_id(best[k]):
                env_conflicts += 1
            if _RANK.get(r["status"], 3) < _RANK.get(best[k]["status"], 3):
                best[k] = r
    return [best[k] for k in order], {"duplicates": dups, "env_conflicts": env_conflicts}
