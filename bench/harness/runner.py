"""bench/harness/runner.py — runs a sweep: resolve the spec, expand it, skip
what DIR/results.jsonl already holds (resume), keep this shard's share
(--shard i/n: by key hash, so every shard agrees without talking), run each
measurement through its adapter, append its row at once, then write the
report.

Order matters for honest numbers: the thread count is applied (variables
plus CPU pinning) before any vendor is imported; each measurement checks
the output against ncc's reference before it times anything.  With
--isolate each measurement runs in a child process (`bench/experiment
_row`): a crashing or hanging vendor then costs one row (status error or
timeout after row_timeout_s) rather than the sweep, and no framework's
caches or threads outlive its row.
"""
import json
import os
import subprocess
import sys
import time
import traceback

from . import adapters, envinfo, report, results
from . import spec as specmod
from .adapters.base import Skipped
from .adapters.ncc import NccAdapter, NccUnsupported
from .models import ModelCache, ModelSpec
from .nccbin import Ncc, NccError
from .progress import Progress

EXPERIMENT_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "experiment")


class Task:
    """One measurement's model, inputs and reference, as adapters see them."""

    def __init__(self, m, cache, timeout):
        self.m, self.cache, self.timeout = m, cache, timeout
        md = dict(m["model"])
        self.ms = ModelSpec(md.pop("block"), md.pop("depth"), md.pop("width"), md.pop("seed"),
                            **md)

    def model_path(self, batch=None):
        return self.cache.model_path(self.ms, batch)

    def params(self):
        return self.cache.params(self.ms)

    def input(self, batch):
        return self.cache.input(self.ms, batch, self.m["input_seed"])[0]

    def input_with_path(self, batch):
        return self.cache.input(self.ms, batch, self.m["input_seed"])

    def reference(self, batch):
        return self.cache.reference(self.ms, batch, self.m["input_seed"])


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
                else:
                    a = cls(self.threads)
                a.load()
                if not isinstance(a, NccAdapter):
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
        one-time start-up (lazy imports, thread pools, JIT initialisation)
        does not land on whichever row happens to come first."""
        m = {"model": {"block": "eltwise", "depth": 1, "width": 2, "seed": 0,
                       "spatial": [2, 2], "k": 2}, "input_seed": 0}
        try:
            task = Task(m, self.cache, self.timeout)
            for mode, batch in (("default", None), ("static", 1)):
                h = a.compile(task, a.CONFIGS[0], mode, batch)
                a.run(h, a.prepare(h, task.input(1)))
                a.release(h)
        except Exception:
            pass  # a real row will meet and report the same problem


def label(m):
    md = m["model"]
    shape = ("b%d" % m["batch"]) if m["kind"] == "point" else \
        ("seq %s %s" % ("/".join(map(str, m["sequence"])), m["shape_mode"]))
    extra = " k%d" % md["k"] if md["block"] == "eltwise" else ""
    return "%s d%d w%d%s %s  %s:%s" % (md["block"], md["depth"], md["width"], extra, shape,
                                       m["compiler"], m["config"])


def execute(key, m, experiments, ctx):
    """Measure one measurement; always returns a row (never raises)."""
    t0 = time.time()
    row = {"schema": results.SCHEMA_VERSION, "key": key, "experiments": list(experiments),
           "config": m, "status": "ok", "valid": False, "reason": None, "hint": None,
           "result": None, "env": ctx.env, "spec": ctx.spec_id, "started": envinfo.now_utc()}
    try:
        adapter = ctx.adapter(m["compiler"])
        task = Task(m, ctx.cache, ctx.timeout)
        if m["kind"] == "point":
            res = adapter.measure_point(task)
            _derive_point(res, m, task, ctx)
        else:
            res = adapter.measure_sequence(task)
        row["result"] = res
        ok = res.pop("check_ok")
        row["status"] = "ok" if ok else "mismatch"
        if not ok:
            row["reason"] = "output differs from ncc ref -O0: %s" % (
                (res.get("check") or {}).get("reason", "see result.check"))
    except NccUnsupported as e:
        row["status"], row["reason"] = "unsupported", e.reason
    except Skipped as e:
        row["status"], row["reason"], row["hint"] = "skipped", e.reason, e.hint
    except NccError as e:
        row["status"] = "timeout" if e.rc == 124 else "error"
        row["reason"] = "ncc %s" % e
    except Exception as e:  # a vendor failing on a model is a result, not a crash
        row["status"] = "error"
        tb = traceback.format_exc().strip().splitlines()
        row["reason"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        row["traceback"] = tb[-6:]
    row["valid"] = row["status"] == "ok"
    row["wall_s"] = round(time.time() - t0, 3)
    return row


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
    """Every n-th measurement from the i-th, in expansion order: balanced,
    and the same split in every shard as long as all run the same spec
    with the same ncc (the expansion depends on nothing else)."""
    i, n = shard
    return [it for j, it in enumerate(items) if j % n == i]


def _needs_run(row, retry_errors):
    if row is None or row["status"] == "skipped":
        return True
    return retry_errors and row["status"] in ("error", "timeout")


def run_isolated(key, m, experiments, ctx, timeout):
    """execute() in a child process with a hard time limit."""
    payload = json.dumps({"key": key, "m": m, "experiments": experiments,
                          "out_dir": ctx.out_dir, "ncc": ctx.ncc.path if ctx.ncc else None,
                          "threads": ctx.threads, "timeout": ctx.timeout, "env": ctx.env,
                          "spec": ctx.spec_id})
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, EXPERIMENT_SCRIPT, "_row"], input=payload.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        lines = [l for l in p.stdout.decode("utf-8", "replace").splitlines()
                 if l.startswith("{")]
        if p.returncode == 0 and lines:
            return json.loads(lines[-1])
        reason = "child exited %d: %s" % (p.returncode, (p.stderr.decode("utf-8", "replace")
                                                           .strip().splitlines() or ["?"])[-1])
        status = "error"
    except subprocess.TimeoutExpired:
        reason, status = "no result after %gs (row_timeout_s)" % timeout, "timeout"
    return {"schema": results.SCHEMA_VERSION, "key": key, "experiments": experiments,
            "config": m, "status": status, "valid": False, "reason": reason, "hint": None,
            "result": None, "env": ctx.env, "spec": ctx.spec_id,
            "started": envinfo.now_utc(), "wall_s": round(time.time() - t0, 3)}


def row_child(stdin=sys.stdin, stdout=sys.stdout):
    """`bench/experiment _row`: one measurement from JSON on stdin."""
    req = json.loads(stdin.read())
    ncc = Ncc(req["ncc"], req["timeout"]) if req["ncc"] else None
    ctx = Context(req["out_dir"], ncc, req["threads"], req["timeout"], req["env"], req["spec"])
    row = execute(req["key"], req["m"], req["experiments"], ctx)
    stdout.write(json.dumps(row, sort_keys=True, default=results._jsonable) + "\n")
    return 0


class Sweep:
    """One `bench/experiment SPEC --out DIR` invocation."""

    def __init__(self, spec, out_dir, ncc_path, shard=(0, 1), resume=True,
                 retry_errors=False, isolate=False, progress=True, log=sys.stderr,
                 plots=True):
        self.spec, self.out_dir, self.shard = spec, out_dir, shard
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
        self.resolved = specmod.resolve(self.spec, ModelCache(
            os.path.join(self.out_dir, "cache"), self.ncc, self.spec["row_timeout_s"]), self.ncc)
        spec_id = {"name": self.resolved["name"], "hash": specmod.spec_hash(self.resolved)}
        self.ctx = Context(self.out_dir, self.ncc, threads, self.spec["row_timeout_s"], env,
                           spec_id)
        _write_json(os.path.join(self.out_dir, "spec.json"), self.resolved)
        self.results_path = os.path.join(self.out_dir, "results.jsonl")
        existing = results.index(results.read_rows(self.results_path)) if self.resume else {}
        self.existing = existing
        if not self.resume and os.path.exists(self.results_path):
            os.replace(self.results_path, self.results_path + ".old")
            self._say("moved the old results to %s.old (--no-resume)" % self.results_path)
        items = shard_items(specmod.expand(self.resolved), self.shard)
        todo = [it for it in items if _needs_run(existing.get(it[0]), self.retry_errors)]
        self._say("%s: %d measurements%s, %d already in %s, %d to run; %d thread(s)%s"
                  % (self.resolved["name"], len(items),
                     " in shard %d/%d" % self.shard if self.shard[1] > 1 else "",
                     len(items) - len(todo), self.results_path, len(todo), threads,
                     ", pinned to CPU %s" % ",".join(map(str, pinned)) if pinned else ""))
        if env["ncc"]["build"].get("sanitize", "").upper() in ("ON", "1", "TRUE"):
            self._say("note: %s is a sanitizer build; its times are not representative"
                      % self.ncc.path)
        return todo

    def run(self, todo):
        bar = Progress(len(todo), self.log or sys.stderr, enabled=self.progress)
        counts = {}
        for key, m, exps in todo:
            lab = label(m)
            bar.start(lab)
            if self.isolate:
                row = run_isolated(key, m, exps, self.ctx, self.spec["row_timeout_s"])
            else:
                row = execute(key, m, exps, self.ctx)
            old = self.existing.get(key)
            if not (old and old["status"] == row["status"] == "skipped" and
                    old.get("reason") == row.get("reason")):
                results.append_row(self.results_path, row)  # (an unchanged skip is not repeated)
            counts[row["status"]] = counts.get(row["status"], 0) + 1
            bar.finish(lab + ("" if row["valid"] else "  (%s)" % (row["reason"] or "")[:100]),
                       row["status"], row["wall_s"])
        bar.close()
        return counts

    def report(self):
        rows = list(results.index(results.read_rows(self.results_path)).values())
        return report.write(self.out_dir, self.resolved, rows, plots=self.plots)


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def merge(dirs, out_dir, plots=True, log=sys.stderr):
    """Rows of several result dirs (shards) into out_dir, with one report."""
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
    rows, stats = results.merge_rows(lists)
    os.makedirs(out_dir, exist_ok=True)
    results.write_rows(os.path.join(out_dir, "results.jsonl"), rows)
    if spec is not None:
        _write_json(os.path.join(out_dir, "spec.json"), spec)
    if log:
        print("merged %d rows from %d dir(s) into %s (%d duplicate keys, %d from a different "
              "environment)" % (len(rows), len(dirs), out_dir, stats["duplicates"],
                                stats["env_conflicts"]), file=log)
        if len(hashes) > 1:
            print("warning: the inputs were run from %d different specs; the report follows "
                  "the first" % len(hashes), file=log)
    if spec is not None:
        report.write(out_dir, spec, rows, plots=plots,
                     notes=["merged from: %s" % ", ".join(dirs)] +
                     (["%d keys measured in more than one environment; the first measured "
                       "row was kept" % stats["env_conflicts"]] if stats["env_conflicts"]
                      else []))
    return rows, stats
