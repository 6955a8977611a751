"""bench/harness/runner.py — runs a sweep: resolve the spec, expand it, skip
what DIR/results.jsonl already holds (resume), keep this shard's share,
measure, append each row at once, then write the report.

Order matters for honest numbers: the thread count is applied (variables
plus CPU pinning) before any vendor is imported; each model (at each batch
and input seed) is first checked ONCE against an oracle outside ncc
(oracle.py: onnxruntime ORT_DISABLE_ALL, or torch), and only where ncc ref
agrees with it is ncc ref the yardstick; each measurement checks its output
against that yardstick (or the oracle's output, where ncc ref disagreed:
then every ncc row of the model is a mismatch, "ncc failure", and the
vendors' rows stand on the oracle) before it times anything.

Groups and rounds.  Point measurements that share everything but the
compiler and its configuration — one model at one batch, the rows a report
compares (ncc vs the vendors, -O2 vs -O0, the ablation rows with one pass
off) — form a group, timed together:

  1. each row of the group is compiled, run once and checked, one by one
     and on its own (compile_ms, build_ms, first_run_ms stay per row);
  2. the rows that passed (and the mismatches, whose times are kept,
     flagged) are timed in interleaved rounds (measure.time_rounds:
     warm-up, then `iters` rounds of one timed run per row with the start
     rotating), so a load that drifts during the group slows all rows
     alike and round i of every row can be paired;
  3. adaptive repeats (measure.time_group): while a row's median CI
     half-width is above stats.CI_TARGET of the median, or its robust cv
     above stats.CV_RANK_MAX (the rule of the noisy flag), the whole group
     runs more rounds, up to a cap; interleave.extra_rounds and
     timing.adaptive {ci_target, halfwidth, capped} say so;
  4. every row gets result.samples_ms (its R [+ extra] latencies, in
     round order), result.latency_ms.ci, result.cv, result.robust_cv,
     result.noisy, and — when two or more rows were timed together —
     result.interleave {group, rounds, extra_rounds, rows, timed_at}: the
     group id is a hash of the shared configuration, so it is the same in
     every run of the spec.

  5. ncc rows with --disable-pass flags whose optimized graph hashes like
     the row of the same configuration without them get graph_same
     (adapters/ncc.py): the passes changed nothing, so any difference in
     time is noise.

All compiled objects of a group are alive at once.  An adapter whose
compile resets framework-wide caches (inductor's torch._dynamo.reset)
makes the group's earlier handle of that framework recompile on its next
call: that call is in the warm-up, never timed, and the checked result is
the same configuration's.

Rows that cannot be interleaved are each timed on their own:
sequence measurements (E6), and ncc rows when libncc cannot be loaded in
this process (adapters/ncc.py: then `ncc bench` in a subprocess).  Every
row, grouped or not, carries threads and pinned_cpus at its top level.

Resume works per group: a group none of whose rows needs running is left
alone.  When some rows need running (new, skipped before, or an error with
--retry-errors), those are prepared first; if none of them can be timed
(still skipped, unsupported, failing) only their rows are written and the
rows already measured stand.  Otherwise the rows already measured are
compiled and checked again and the whole group is re-timed together, so
that every row of a group always comes from one session of rounds (their
new rows supersede the old: the last row of a key wins).  Rows that were
unsupported, an error or a timeout are not retried without --retry-errors.

Shards (--shard i/n) split the sweep by group — every n-th group from the
i-th, in expansion order — so a group is never split between shards.

With --isolate each group runs in a child process (`bench/experiment
_row`): a crashing or hanging vendor then costs that group's rows (status
error or timeout after row_timeout_s per row of the group) rather than the
sweep, and no framework's caches or threads outlive the group.
"""
import hashlib
import json
import os
import subprocess
import sys
import time
import traceback

from . import adapters, envinfo, hardware, measure, oracle, report, report_hw, results
from . import spec as specmod
from .adapters.base import Skipped
from .adapters.ncc import NccAdapter, NccUnsupported
from .models import ModelCache, spec_from
from .models import label as model_label
from .nccbin import Ncc, NccError
from .progress import Progress

EXPERIMENT_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "experiment")

# Fields of a point measurement that do not make it a different group.
_NOT_GROUP = ("compiler", "config")


class Task:
    """One measurement's model, inputs and reference, as adapters see them."""

    def __init__(self, m, cache, timeout):
        self.m, self.cache, self.timeout = m, cache, timeout
        self.ms = spec_from(m["model"])

    def model_path(self, batch=None):
        return self.cache.model_path(self.ms, batch)

    def params(self):
        return self.cache.params(self.ms)

    def input(self, batch):
        return self.cache.input(self.ms, batch, self.m["input_seed"])[0]

    def input_with_path(self, batch):
        return self.cache.input(self.ms, batch, self.m["input_seed"])

    def check(self, batch):
        """ncc ref against the outside oracle at `batch` (oracle.py), once
        per model, batch and input seed."""
        m = self.m
        return self.cache.check(self.ms, batch, m["input_seed"], m["rtol"], m["atol"])

    def reference(self, batch):
        """What this row's output is checked against: ncc ref when it agrees
        with the outside oracle, else the oracle's own output."""
        if self.check(batch)["ref_agrees"]:
            return self.cache.reference(self.ms, batch, self.m["input_seed"])
        return self.cache.oracle_output(self.ms, batch, self.m["input_seed"])

    def batches(self):
        m = self.m
        return [m["batch"]] if m["kind"] == "point" else list(m["sequence"])

    def oracle_record(self):
        """result.oracle: which oracle checked the model, whether ncc ref
        agreed (per batch), what this row was checked against."""
        vs = [(b, self.check(b)) for b in self.batches()]
        rec = {k: vs[0][1][k] for k in ("name", "config", "version", "why") if k in vs[0][1]}
        rec["ref_agrees"] = all(v["ref_agrees"] for _, v in vs)
        rec["batches"] = [{"batch": b, "ref_agrees": v["ref_agrees"], "ref_check": v["ref_check"]}
                          for b, v in vs]
        rec["row_checked_against"] = (oracle.REF_NAME if rec["ref_agrees"] else
                                      "%s (%s)" % (rec["name"], rec["config"]))
        return rec


class Context:
    """What every measurement of a sweep shares: ncc, the model cache, the
    loaded adapters (or why each is skipped), the environment record."""

    def __init__(self, out_dir, ncc, threads, timeout, env, spec_id):
        self.out_dir, self.ncc, self.threads, self.timeout = out_dir, ncc, threads, timeout
        self.env, self.spec_id = env, spec_id
        self.cache = ModelCache(os.path.join(out_dir, "cache"), ncc, timeout)
        self._adapters = {}

    def adapter(self, name):
        """The loaded adapter; raises Skipped (remembered) when it cannot load."""
        if name not in self._adapters:
            try:
                cls = adapters.adapter_class(name)
                if issubclass(cls, NccAdapter):
                    a = cls(self.threads, self.ncc)
                    a.lib_dir = self.cache.root
                elif getattr(cls, "NEEDS_NCC", False):  # e.g. ncc cross-compiled (ncc_qemu)
                    a = cls(self.threads, self.ncc)
                else:
                    a = cls(self.threads)
                a.load()
                self._warm_up(a)
                self._adapters[name] = a
                if self.env["compilers"].get(name) is None and name != "ncc":
                    self.env["compilers"][name] = a.version()
            except Skipped as e:
                self._adapters[name] = e
            except ImportError as e:  # the adapter module itself does not import
                self._adapters[name] = Skipped("%s adapter does not import (%s)" % (name, e))
            except Exception as e:  # a broken install: every row would fail alike
                self._adapters[name] = Skipped("%s does not load (%s: %s)" % (
                    name, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        a = self._adapters[name]
        if isinstance(a, Skipped):
            raise a
        return a

    def _warm_up(self, a):
        """Compile and run a tiny model once, untimed, so the framework's
        one-time start-up (lazy imports, thread pools, JIT initialisation;
        for ncc in-process, LLVM's) does not land on whichever row happens
        to come first."""
        if isinstance(a, NccAdapter):
            if a.inprocess() is None:
                return  # command-line rows start a fresh process each time
            configs = a.warm_configs()
        else:
            configs = list(a.CONFIGS[:1])
        m = {"model": {"block": "eltwise", "depth": 1, "width": 2, "seed": 0,
                       "spatial": [2, 2], "k": 2}, "input_seed": 0, "batch": 1}
        for config in configs:
            try:
                task = Task(m, self.cache, self.timeout)
                for mode, batch in (("default", None), ("static", 1)):
                    h = a.compile(task, config, mode, batch)
                    a.to_numpy(a.run(h, a.prepare(h, task.input(1))))
                    a.release(h)
            except Exception:
                pass  # a real row will meet and report the same problem


def label(m):
    md = m["model"]
    shape = ("b%d" % m["batch"]) if m["kind"] == "point" else \
        ("seq %s %s" % ("/".join(map(str, m["sequence"])), m["shape_mode"]))
    extra = " k%d" % md["k"] if md["block"] == "eltwise" else ""
    return "%s%s %s  %s:%s" % (model_label(md), extra, shape, m["compiler"], m["config"])


def group_id(m):
    """The id of the group a measurement is timed in, or None: point
    measurements equal in all but compiler and configuration share one
    (a hash, so every run of the spec and every shard agree)."""
    if m.get("kind") != "point":
        return None
    shared = {k: v for k, v in m.items() if k not in _NOT_GROUP}
    return hashlib.sha1(json.dumps(shared, sort_keys=True).encode()).hexdigest()[:12]


def group_items(items):
    """[(key, m, exps)] -> lists of items, one per group (a measurement
    that has none is a list of its own), in order of first appearance."""
    groups, where = [], {}
    for it in items:
        gid = group_id(it[1])
        if gid is None:
            groups.append([it])
        elif gid in where:
            groups[where[gid]].append(it)
        else:
            where[gid] = len(groups)
            groups.append([it])
    return groups


def _new_row(key, m, experiments, ctx):
    return {"schema": results.SCHEMA_VERSION, "key": key, "experiments": list(experiments),
            "config": m, "status": "ok", "valid": False, "reason": None, "hint": None,
            "result": None, "env": ctx.env, "spec": ctx.spec_id, "started": envinfo.now_utc(),
            "threads": ctx.threads, "pinned_cpus": ctx.env.get("pinned_cpus")}


def _fail(row, e):
    """The row's status and reason for an exception a measurement raised."""
    if isinstance(e, oracle.OracleUnavailable):
        row["status"], row["reason"], row["hint"] = "skipped", e.reason, e.hint
    elif isinstance(e, oracle.OracleFailed):
        row["status"], row["reason"] = "error", str(e)
    elif isinstance(e, NccUnsupported):
        row["status"], row["reason"] = "unsupported", e.reason
    elif isinstance(e, Skipped):
        row["status"], row["reason"], row["hint"] = "skipped", e.reason, e.hint
    elif isinstance(e, NccError):
        row["status"] = "timeout" if e.rc == 124 else "error"
        row["reason"] = "ncc %s" % e
    else:  # a vendor failing on a model is a result, not a crash
        row["status"] = "error"
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        tb = "".join(tb).strip().splitlines()
        row["reason"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        row["traceback"] = tb[-6:]


def _set_result(row, res, task):
    """The measured result, its check and the model's oracle verdict: an
    ncc row of a model whose ncc ref disagrees with the outside oracle is a
    mismatch (an ncc failure) whatever its own output matched."""
    row["result"] = res
    em = hardware.emulated_by(row["config"]["compiler"])
    if em:
        res["emulated"] = em
    ok = res.pop("check_ok")
    rec = task.oracle_record()
    res["oracle"] = rec
    row["status"] = "ok" if ok else "mismatch"
    if not ok:
        row["reason"] = "output differs from %s: %s" % (
            rec["row_checked_against"], (res.get("check") or {}).get("reason", "see result.check"))
    if row["config"]["compiler"] == "ncc" and not rec["ref_agrees"]:
        bad = next(v for v in rec["batches"] if not v["ref_agrees"])
        row["status"] = "mismatch"
        row["reason"] = oracle.failure_reason(dict(rec, ref_check=bad["ref_check"]))


def _close(row, seconds):
    row["valid"] = row["status"] == "ok"
    row["wall_s"] = round(seconds, 3)
    return row


def execute(key, m, experiments, ctx):
    """Measure one measurement on its own; always returns a row (never
    raises).  Point rows get the protocol of a group of one."""
    t0 = time.time()
    row = _new_row(key, m, experiments, ctx)
    try:
        adapter = ctx.adapter(m["compiler"])
        task = Task(m, ctx.cache, ctx.timeout)
        if m["kind"] == "point":
            res = adapter.measure_point(task)
            _derive_point(res, m, task, ctx)
        else:
            res = adapter.measure_sequence(task)
        _set_result(row, res, task)
    except Exception as e:
        _fail(row, e)
    return _close(row, time.time() - t0)


def execute_group(need, present, ctx):
    """Measure a group (see the module docstring): `need` are the items
    that must run, `present` those of the same group already measured,
    re-timed only if a needed one gets timed.  Returns the rows to append,
    needed ones first; never raises."""
    if len(need) == 1 and not present and need[0][1]["kind"] != "point":
        return [execute(*need[0], ctx)]
    prepared = []  # (row, task, point, seconds)

    def prep(item):
        key, m, exps = item
        t0 = time.time()
        row, task, point = _new_row(key, m, exps, ctx), None, None
        try:
            adapter = ctx.adapter(m["compiler"])
            task = Task(m, ctx.cache, ctx.timeout)
            point = adapter.prepare_point(task)
        except Exception as e:
            _fail(row, e)
        prepared.append((row, task, point, time.time() - t0))

    for it in need:
        prep(it)
    if any(p is not None and not p.done for _, _, p, _ in prepared):
        for it in present:
            prep(it)
    timed = [p for _, _, p, _ in prepared if p is not None and not p.done]
    try:
        rounds = None
        if timed:
            m0 = prepared[0][0]["config"]
            iters, warmup = m0["iters"], m0["warmup"]
            rounds = measure.time_group(timed, warmup, iters)
            stamp = envinfo.now_utc()
            completed = sum(1 for p in timed if p.error is None)
        out = []
        for row, task, point, secs in prepared:
            if point is None:
                out.append(_close(row, secs))
                continue
            try:
                res = dict(point.result)
                if not point.done:
                    if point.error is not None:
                        raise point.error
                    res.update(measure.summarize(point.samples))
                    timing = res.setdefault("timing", {})
                    timing["warmup"] = row["config"]["warmup"]
                    timing["rewarm_per_turn"] = measure.REWARM if len(timed) > 1 else 0
                    timing["adaptive"] = {k: rounds.get(k) for k in ("ci_target", "halfwidth",
                                                                     "capped")}
                    if len(timed) > 1:
                        res["interleave"] = {"group": group_id(row["config"]),
                                             "rounds": rounds["rounds"],
                                             "extra_rounds": rounds["extra_rounds"],
                                             "rows": completed, "timed_at": stamp}
                    elif rounds["extra_rounds"]:
                        timing["extra_rounds"] = rounds["extra_rounds"]
                _derive_point(res, row["config"], task, ctx)
                _set_result(row, res, task)
            except Exception as e:
                _fail(row, e)
            out.append(_close(row, secs + point.run_s))
        _same_graphs(out)
        return out
    finally:
        for _, _, point, _ in prepared:
            if point is not None:
                try:
                    point.release()
                except Exception:
                    pass


def _same_graphs(rows):
    """graph_same on each measured ncc row whose configuration is another
    row's plus --disable-pass flags: true when both optimized graphs hash
    the same (the passes turned off changed nothing), with graph_same_as
    naming that row's configuration."""
    hashes = {r["config"]["config"]: r["result"].get("graph_hash") for r in rows
              if r["config"]["compiler"] == "ncc" and r["status"] in results.MEASURED}
    for r in rows:
        cfg = r["config"]["config"]
        if cfg not in hashes or not hashes[cfg] or "--disable-pass=" not in cfg:
            continue
        base = " ".join(t for t in cfg.split() if not t.startswith("--disable-pass="))
        if hashes.get(base):
            r["result"]["graph_same"] = hashes[cfg] == hashes[base]
            r["result"]["graph_same_as"] = "ncc:" + base


def _derive_point(res, m, task, ctx):
    med = res["latency_ms"]["median"]
    res["throughput_per_s"] = m["batch"] / (med / 1e3) if med > 0 else None
    try:
        mf = ctx.cache.mflop(task.ms) * m["batch"]
    except NccError:
        mf = None
    res["model_mflop"] = mf
    res["gflop_per_s"] = (mf / 1e3) / (med / 1e3) if mf and med > 0 else None


def parse_shard(text):
    """'i/n' with 0 <= i < n -> (i, n)."""
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise ValueError("--shard takes I/N, e.g. 0/4 (got %r)" % text)
    if n < 1 or not 0 <= i < n:
        raise ValueError("--shard I/N needs 0 <= I < N (got %r)" % text)
    return i, n


def shard_items(items, shard):
    """The measurements of every n-th group from the i-th, in expansion
    order: a group is never split, and every shard computes the same split
    as long as all run the same spec with the same ncc (the expansion
    depends on nothing else)."""
    i, n = shard
    return [it for j, g in enumerate(group_items(items)) if j % n == i for it in g]


def _needs_run(row, retry_errors):
    if row is None or row["status"] == "skipped":
        return True
    return retry_errors and row["status"] in ("error", "timeout")


def _error_row(key, m, experiments, ctx, status, reason, seconds):
    row = _new_row(key, m, experiments, ctx)
    row.update(status=status, reason=reason)
    return _close(row, seconds)


def run_isolated(need, present, ctx, timeout):
    """execute_group() in a child process with a hard time limit
    (`timeout` per row of the group).  On a crash or timeout each needed
    row gets an error or timeout row; the present rows stand."""
    payload = json.dumps({"need": need, "present": present, "out_dir": ctx.out_dir,
                          "ncc": ctx.ncc.path if ctx.ncc else None, "threads": ctx.threads,
                          "timeout": ctx.timeout, "env": ctx.env, "spec": ctx.spec_id})
    t0 = time.time()
    limit = timeout * (len(need) + len(present))
    try:
        p = subprocess.run([sys.executable, EXPERIMENT_SCRIPT, "_row"], input=payload.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=limit)
        rows = []
        for line in p.stdout.decode("utf-8", "replace").splitlines():
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
        if p.returncode == 0 and {r.get("key") for r in rows} >= {k for k, _, _ in need}:
            return rows
        reason = "child exited %d: %s" % (p.returncode, (p.stderr.decode("utf-8", "replace")
                                                           .strip().splitlines() or ["?"])[-1])
        status = "error"
    except subprocess.TimeoutExpired:
        reason = "no result after %gs (row_timeout_s x %d rows of the group)" % (
            limit, len(need) + len(present))
        status = "timeout"
    return [_error_row(k, m, e, ctx, status, reason, time.time() - t0) for k, m, e in need]


def row_child(stdin=sys.stdin, stdout=sys.stdout):
    """`bench/experiment _row`: one group from JSON on stdin, a row per line."""
    req = json.loads(stdin.read())
    ncc = Ncc(req["ncc"], req["timeout"]) if req["ncc"] else None
    ctx = Context(req["out_dir"], ncc, req["threads"], req["timeout"], req["env"], req["spec"])
    need = [tuple(it) for it in req["need"]]
    present = [tuple(it) for it in req["present"]]
    for row in execute_group(need, present, ctx):
        stdout.write(json.dumps(row, sort_keys=True, default=results._jsonable) + "\n")
    stdout.flush()
    return 0


class Sweep:
    """One `bench/experiment SPEC --out DIR` invocation."""

    def __init__(self, spec, out_dir, ncc_path, shard=(0, 1), resume=True,
                 retry_errors=False, isolate=False, progress=True, log=sys.stderr,
                 plots=True, machine=None, emulated=None):
        self.spec, self.out_dir, self.shard = spec, out_dir, shard
        self.machine, self.emulated = machine, emulated
        self.resume, self.retry_errors, self.isolate = resume, retry_errors, isolate
        self.progress, self.log, self.plots = progress, log, plots
        self.ncc = Ncc(ncc_path, spec["row_timeout_s"]) if ncc_path else None

    def _say(self, msg):
        if self.log:
            print(msg, file=self.log)
            self.log.flush()

    def prepare(self):
        """Apply threads, resolve the spec, write DIR/spec.json; returns the
        measurements of this shard that still need running."""
        os.makedirs(self.out_dir, exist_ok=True)
        if self.ncc is None:
            raise RuntimeError("no ncc binary: build it (cmake -S . -B build && make -C build) "
                               "or pass --ncc PATH / set NCC (ncc ref is every check's reference)")
        threads = self.spec["threads"]
        pinned = envinfo.apply_threads(threads, self.spec["pin_cpus"])
        env = envinfo.collect(self.ncc, threads, pinned)
        env["hardware"] = hardware.record(self.machine, self.emulated)
        if env["hardware"]["emulated"]:
            self._say("note: %s runs emulated (%s): its rows are checked, their times are "
                      "not ranked" % (env["hardware"]["machine"], env["hardware"]["why"]))
        self.resolved = specmod.resolve(self.spec, ModelCache(
            os.path.join(self.out_dir, "cache"), self.ncc, self.spec["row_timeout_s"]), self.ncc)
        spec_id = {"name": self.resolved["name"], "hash": specmod.spec_hash(self.resolved)}
        self.ctx = Context(self.out_dir, self.ncc, threads, self.spec["row_timeout_s"], env,
                           spec_id)
        items_all = specmod.expand(self.resolved)
        env["timing"] = timing_env(self.resolved, [m["compiler"] for _, m, _ in items_all],
                                   self.ctx)
        _write_json(os.path.join(self.out_dir, "spec.json"), self.resolved)
        self.results_path = os.path.join(self.out_dir, "results.jsonl")
        existing = results.index(results.read_rows(self.results_path)) if self.resume else {}
        self.existing = existing
        if not self.resume and os.path.exists(self.results_path):
            os.replace(self.results_path, self.results_path + ".old")
            self._say("moved the old results to %s.old (--no-resume)" % self.results_path)
        items = shard_items(specmod.expand(self.resolved), self.shard)
        self.groups = group_items(items)
        todo = [it for it in items if _needs_run(existing.get(it[0]), self.retry_errors)]
        self._say("%s: %d measurements in %d groups%s, %d already in %s, %d to run; "
                  "%d thread(s)%s"
                  % (self.resolved["name"], len(items), len(self.groups),
                     " in shard %d/%d" % self.shard if self.shard[1] > 1 else "",
                     len(items) - len(todo), self.results_path, len(todo), threads,
                     ", pinned to CPU %s" % ",".join(map(str, pinned)) if pinned else ""))
        if env["ncc"]["build"].get("sanitize", "").upper() in ("ON", "1", "TRUE"):
            self._say("note: %s is a sanitizer build; its times are not representative"
                      % self.ncc.path)
        return todo

    def run(self, todo):
        """Measure `todo` group by group (the rows of a group that are
        already measured are re-timed with it when needed)."""
        bar = Progress(len(todo), self.log or sys.stderr, enabled=self.progress)
        counts = {}
        todo_keys = {k for k, _, _ in todo}
        groups = getattr(self, "groups", None) or group_items(todo)
        for group in groups:
            need = [it for it in group if it[0] in todo_keys]
            if not need:
                continue
            present = [it for it in group if it[0] not in todo_keys and
                       (self.existing.get(it[0]) or {}).get("status") in results.MEASURED]
            bar.start(label(need[0][1]) + (" (+%d in its group)" % (len(group) - 1)
                                           if len(group) > 1 else ""))
            if self.isolate:
                rows = run_isolated(need, present, self.ctx, self.spec["row_timeout_s"])
            else:
                rows = execute_group(need, present, self.ctx)
            extra = len(rows) - len(need)
            if extra > 0:
                bar.total += extra
                self._say_retimed(extra, group)
            for row in rows:
                old = self.existing.get(row["key"])
                if not (old and old["status"] == row["status"] == "skipped" and
                        old.get("reason") == row.get("reason")):
                    results.append_row(self.results_path, row)  # (an unchanged skip is not repeated)
                self.existing[row["key"]] = row
                counts[row["status"]] = counts.get(row["status"], 0) + 1
                lab = label(row["config"])
                bar.finish(lab + ("" if row["valid"] else "  (%s)" % (row["reason"] or "")[:100]),
                           row["status"], row["wall_s"])
        bar.close()
        return counts

    def _say_retimed(self, n, group):
        self._say("note: %d measured row(s) of group %s re-timed with the new ones"
                  % (n, group_id(group[0][1])))

    def report(self):
        rows = report_hw.latest(results.read_rows(self.results_path))
        return report.write(self.out_dir, self.resolved, rows, plots=self.plots)

def timing_env(spec, compilers, ctx):
    """env.timing: the sweep's output policy and, per compiler, one line
    saying how its runs are timed (measure.py) — the record that the
    timing was symmetric, or where it was not."""
    policy = spec.get("outputs", "fresh")
    notes = {}
    for name in dict.fromkeys(compilers):
        try:
            if name == "ncc":
                notes[name] = ctx.adapter("ncc").timing_note_here(policy)
            else:
                notes[name] = adapters.adapter_class(name).timing_note(policy)
        except Exception as e:  # skipped or broken: its rows say why
            notes[name] = "not run here (%s)" % (getattr(e, "reason", None) or e)
    return {"outputs_policy": policy, "compilers": notes}


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def merge(dirs, out_dir, plots=True, log=sys.stderr):
    """Rows of several result dirs (shards, or runs on several machines)
    into out_dir, with one report.  Rows are merged per machine
    (hardware.machine_id): shards of one machine become one set of rows;
    the rows of different machines are all kept, and the report gets a
    hardware axis (report_hw.py)."""
    lists, spec, hashes = [], None, set()
    for d in dirs:
        p = os.path.join(d, "results.jsonl")
        if not os.path.exists(p):
            raise RuntimeError("%s has no results.jsonl" % d)
        lists.append(results.read_rows(p, warn=log))
        sp = os.path.join(d, "spec.json")
        if os.path.exists(sp):
            s = json.load(open(sp))
            hashes.add(specmod.spec_hash(s))
            spec = spec or s
    by_machine = {}
    for rows in lists:
        for r in rows:
            by_machine.setdefault(hardware.machine_id(r), [[] for _ in lists])
    for i, rows in enumerate(lists):
        for r in rows:
            by_machine[hardware.machine_id(r)][i].append(r)
    rows, stats = [], {"duplicates": 0, "env_conflicts": 0}
    for machine, per_dir in by_machine.items():
        mrows, mstats = results.merge_rows(per_dir)
        rows += mrows
        for k in stats:
            stats[k] += mstats[k]
    os.makedirs(out_dir, exist_ok=True)
    results.write_rows(os.path.join(out_dir, "results.jsonl"), rows)
    if spec is not None:
        _write_json(os.path.join(out_dir, "spec.json"), spec)
    if log:
        print("merged %d rows from %d dir(s) into %s (%d machine(s): %s; %d duplicate keys, "
              "%d from a different environment)"
              % (len(rows), len(dirs), out_dir, len(by_machine), ", ".join(by_machine),
                 stats["duplicates"], stats["env_conflicts"]), file=log)
        if len(hashes) > 1:
            print("warning: the inputs were run from %d different specs; the report follows "
                  "the first" % len(hashes), file=log)
    if spec is not None:
        report.write(out_dir, spec, rows, plots=plots,
                     notes=["merged from: %s" % ", ".join(dirs)] +
                     (["%d keys measured in more than one environment of one machine; the "
                       "first measured row was kept" % stats["env_conflicts"]]
                      if stats["env_conflicts"] else []))
    return rows, stats
