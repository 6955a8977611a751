#!/usr/bin/env python3
"""tests/py/test_harness_rounds.py — the harness's interleaved timing
(bench/harness/measure.py time_rounds / time_group, runner.py groups), label
`harness` (tests/harness_rounds.cmake).

  - the round protocol on fake rows that log their runs: warm-up, the start
    rotating each round, one re-warm run before each timed run, one sample
    per row per round, a failing row stopping alone;
  - adaptive repeats: a noisy group gets 2R more rounds, a quiet one none;
  - summarize(): samples kept, the median inside its CI, the noisy flag;
  - groups and shards: one group per model and batch, never split;
  - a quick sweep through `bench/experiment` (ncc ref [+ cpu] and ONNX
    Runtime, few runs): grouped rows have equal-length samples and one
    group id, a CI holding the median, threads and pinned CPUs; resume
    with nothing to do re-measures nothing, resume of a partial group
    re-times the whole group and nothing else; --isolate groups too; the
    command-line fallback for ncc (NCC_HARNESS_INPROCESS=0) says so;
  - rows written before these fields existed still load, validate and
    report;
  - an in-process vendor whose run fails in the middle of the rounds: its
    row is an error, the others of the group keep equal lengths.

Uses $NCC.  Prints "N passed, M failed"; exit 1 on a failure, 77 when
numpy/onnx/onnxruntime are missing.
"""
import json
import os
import shutil
import sys
import tempfile

from nccutil import SRC, check, run_cases, run_experiment  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)

from harness import adapters, measure, results, runner, stats  # noqa: E402
from harness import spec as specmod  # noqa: E402
from harness.adapters.base import Adapter  # noqa: E402

NCC = os.environ.get("NCC")
WITH_LLVM = os.environ.get("NCC_WITH_LLVM", "1") not in ("0", "OFF", "")

ITERS = 6
NCC_CONFIGS = ["ref", "cpu -O2"] if WITH_LLVM else ["ref"]
QUICK = {
    "name": "rounds-test", "threads": 1, "pin_cpus": True, "warmup": 1, "iters": ITERS,
    "model": {"width": 4, "spatial": [4, 4], "seq": 4, "k": 3},
    "compilers": {"ncc": NCC_CONFIGS, "onnxruntime": ["DISABLE_ALL", "ALL"]},
    "experiments": [
        {"id": "E5", "kind": "amortize", "blocks": ["mlp", "conv"]},
        {"id": "E6", "kind": "dynamic", "blocks": ["mlp"], "sequence": [1, 2],
         "runs_per_shape": 2, "compilers": {"onnxruntime": ["ALL"]}},
        {"id": "E7", "kind": "ablation", "blocks": ["mlp"], "depth": 2, "base": "ref -O2"},
    ],
}

# --------------------------------------------------------------------------
# The protocol on fake rows.

class Logged:
    """A fake row: every run appends its name to a shared log."""

    def __init__(self, name, log, fail_after=None):
        self.name, self.log, self.fail_after = name, log, fail_after
        self.calls = 0

    def __call__(self):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("%s broke" % self.name)
        self.log.append(self.name)


def test_rounds_rotate_and_pair():
    log = []
    pts = [measure.Point(Logged(n, log), {}) for n in "abc"]
    measure.time_rounds(pts, warmup=2, rounds=4)
    warm = log[:6]
    check(warm == ["a", "a", "b", "b", "c", "c"], "warm-up in order: %r" % warm)
    turns = log[6:]
    # each turn: one re-warm run then one timed run of the same row
    check(len(turns) == 4 * 3 * 2 and all(turns[i] == turns[i + 1]
                                           for i in range(0, len(turns), 2)), "turns %r" % turns)
    order = turns[::2]
    expect = []
    for r in range(4):
        expect += ["abc"[(r + j) % 3] for j in range(3)]
    check(order == expect, "rounds start at row r mod n: %r, expected %r" % (order, expect))
    check(all(len(p.samples) == 4 for p in pts), "one sample per row per round: %r"
          % [len(p.samples) for p in pts])
    # alone, a row needs no re-warm: warmup then iters back to back
    log2 = []
    one = measure.Point(Logged("z", log2), {})
    measure.time_rounds([one], warmup=3, rounds=5)
    check(len(log2) == 8 and len(one.samples) == 5, "a group of one: %d runs" % len(log2))


def test_rounds_failing_row():
    log = []
    bad = measure.Point(Logged("b", log, fail_after=5), {})
    pts = [measure.Point(Logged("a", log), {}), bad, measure.Point(Logged("c", log), {})]
    measure.time_rounds(pts, warmup=1, rounds=6)
    check(isinstance(bad.error, RuntimeError), "the failure is kept: %r" % bad.error)
    check(len(pts[0].samples) == len(pts[2].samples) == 6, "the others go on: %r"
          % [len(p.samples) for p in pts])


def test_adaptive_rounds():
    pts = [measure.Point(Logged(n, []), {}) for n in "ab"]
    info = measure.time_group(pts, 0, 3, cv_max=-1.0)  # every group "noisy": up to the cap
    cap = (1 + measure.MAX_EXTRA_FACTOR) * 3
    check(info["rounds"] == cap and info["extra_rounds"] == cap - 3, "noisy: %r" % info)
    check(all(len(p.samples) == cap for p in pts), "extra rounds for every row")
    pts = [measure.Point(Logged(n, []), {}) for n in "ab"]
    info = measure.time_group(pts, 0, 3, cv_max=float("inf"), ci_target=float("inf"))
    check(info["rounds"] == 3 and info["extra_rounds"] == 0, "quiet: %r" % info)
    pts = [measure.Point(Logged(n, []), {}) for n in "ab"]
    info = measure.time_group(pts, 0, 3, adaptive=False, cv_max=-1.0)
    check(info["extra_rounds"] == 0, "adaptive off")


def test_summarize():
    xs = [1.0, 1.2, 0.9, 1.1, 1.05, 0.95, 1.3, 1.0, 5.0, 1.02]
    s = measure.summarize(xs)
    lat = s["latency_ms"]
    check(s["samples_ms"] == xs, "samples kept in order")
    check(lat["ci"][0] <= lat["median"] <= lat["ci"][1], "CI holds the median: %r" % lat)
    check(list(stats.median_ci(xs)) == lat["ci"], "the CI is stats.median_ci")
    check(s["robust_cv"] == stats.robust_cv(xs), "robust cv of the samples")
    check(s["noisy"] is stats.noisy(s["cv"], xs) and s["noisy"],
          "robust cv %.2f is noisy" % s["robust_cv"])
    check(not measure.summarize([1.0, 1.01, 0.99, 1.0])["noisy"], "quiet row")


def test_groups_and_shards():
    s = specmod.normalize(QUICK)
    items = specmod.expand(s)
    groups = runner.group_items(items)
    points = [g for g in groups if g[0][1]["kind"] == "point"]
    check(len(points) == 3, "E5: one group per block, E7 one: %d" % len(points))
    check(sorted(e["id"] for e in s["experiments"]) == ["E5", "E6", "E7"], "spec")
    n_rows = len(NCC_CONFIGS) + 2
    check([len(g) for g in points[:2]] == [n_rows] * 2, "each group has every compiler's row")
    check(len(points[2]) == 1, "E7 unresolved: its base only (resolve() adds the passes)")
    for g in points:
        check(len({runner.group_id(m) for _, m, _ in g}) == 1, "one id per group")
        check(len({(m["model"]["block"], m["batch"]) for _, m, _ in g}) == 1, "same model")
    check(all(len(g) == 1 for g in groups if g[0][1]["kind"] == "sequence"),
          "sequence rows stand alone")
    check(runner.group_id(points[0][0][1]) != runner.group_id(points[1][0][1]), "ids differ")
    for n in (2, 3):
        seen = []
        for i in range(n):
            part = runner.shard_items(items, (i, n))
            gids = {runner.group_id(m) for _, m, _ in part if m["kind"] == "point"}
            for gid in gids:
                whole = [k for k, m, _ in items if runner.group_id(m) == gid]
                check(set(whole) <= {k for k, _, _ in part}, "group %s split by shard" % gid)
            seen += [k for k, _, _ in part]
        check(sorted(seen) == sorted(k for k, _, _ in items), "shards cover the sweep once")


# --------------------------------------------------------------------------
# A sweep through bench/experiment.

def _experiment(args, timeout=600):
    return run_experiment(args, timeout)


class Sweep:
    dir = None


def _by_group(rows):
    groups = {}
    for r in rows:
        il = (r.get("result") or {}).get("interleave")
        if il:
            groups.setdefault(il["group"], []).append(r)
    return groups


def _check_grouped(rows, expect_groups):
    groups = _by_group(rows)
    check(len(groups) == expect_groups, "%d interleaved groups, expected %d: %r"
          % (len(groups), expect_groups, list(groups)))
    for gid, rs in groups.items():
        lens = {len(r["result"]["samples_ms"]) for r in rs}
        rounds = {r["result"]["interleave"]["rounds"] for r in rs}
        check(len(lens) == 1 and lens == rounds, "group %s: sample counts %r, rounds %r"
              % (gid, lens, rounds))
        check(min(lens) >= ITERS, "at least iters rounds")
        check({r["result"]["interleave"]["rows"] for r in rs} == {len(rs)},
              "interleave.rows counts the rows timed together")
        check(len({r["result"]["interleave"]["timed_at"] for r in rs}) == 1,
              "one session of rounds per group")
        check(len({runner.group_id(r["config"]) for r in rs}) == 1 and
              runner.group_id(rs[0]["config"]) == gid, "the id is the config's group")
    return groups


def test_quick_sweep():
    check(NCC, "set NCC to the ncc binary")
    d = tempfile.mkdtemp(prefix="ncc-harness-rounds-")
    Sweep.dir = d
    spec_path = os.path.join(d, "quick.json")
    with open(spec_path, "w") as f:
        json.dump(QUICK, f)
    out = os.path.join(d, "out")
    rc, _, err = _experiment([spec_path, "--out", out, "--ncc", NCC, "--quiet", "--no-plots"])
    check(rc == 0, "exit %d: %s" % (rc, err[-2000:]))
    rows = results.read_rows(os.path.join(out, "results.jsonl"))
    check(all(r["status"] == "ok" for r in rows),
          "statuses %r" % [(runner.label(r["config"]), r["status"], r["reason"]) for r in rows])
    for r in rows:
        check(not results.validate_row(r), "row %s: %s" % (runner.label(r["config"]),
                                                           results.validate_row(r)))
        check(r["threads"] == 1 and "pinned_cpus" in r, "threads/pinned_cpus in the row")
        if hasattr(os, "sched_getaffinity"):
            check(isinstance(r["pinned_cpus"], list) and len(r["pinned_cpus"]) == 1,
                  "pinned to one CPU: %r" % r["pinned_cpus"])
    points = [r for r in rows if r["config"]["kind"] == "point"]
    for r in points:
        res = r["result"]
        lat = res["latency_ms"]
        check(lat["ci"][0] <= lat["median"] <= lat["ci"][1], "CI holds the median")
        check(isinstance(res["noisy"], bool) and res["timing"]["where"], "noisy, timing")
        check(res["build_ms"] > 0 and res["first_run_ms"] > 0 and
              abs(res["compile_ms"] - res["build_ms"] - res["first_run_ms"]) < 1e-6,
              "compile split kept")
    ncc_rows = [r for r in points if r["config"]["compiler"] == "ncc"]
    inproc = all(r["result"]["timing"]["where"] == "in-process" for r in ncc_rows)
    if inproc:  # every point row of a group timed together
        groups = _check_grouped(rows, 3)
        check(sorted(len(rs) for rs in groups.values())[:2] == [len(NCC_CONFIGS) + 2] * 2,
              "group sizes")
        check(all(r["result"]["kernels"] >= 1 and "graph" in r["result"] and
                  r["result"]["graph_hash"] for r in ncc_rows), "ncc's figures from the module")
        # E7: a pass with nothing to do leaves the graph as it was (mlp has no
        # BatchNorm), one that rewrites it does not
        abl = {r["config"]["config"]: r["result"] for r in ncc_rows
               if r["config"]["config"].startswith("ref -O2 --disable-pass=")}
        check(abl and all(res.get("graph_same_as") == "ncc:ref -O2" for res in abl.values()),
              "every ablation row compared with its base: %r" % sorted(abl))
        check(abl["ref -O2 --disable-pass=bn-fold"]["graph_same"] is True, "bn-fold on mlp")
        check(any(res["graph_same"] is False for res in abl.values()), "some pass changes it")
    else:  # libncc not loadable (a sanitizer build): ncc rows on their own
        print("        (ncc rows via ncc bench: %s)" % ncc_rows[0]["result"]["timing"]["why"])
        check(all("interleave" not in r["result"] for r in ncc_rows), "ncc not interleaved")
        _check_grouped(rows, 2)
    seq = [r for r in rows if r["config"]["kind"] == "sequence"]
    check(seq and all("interleave" not in r["result"] for r in seq), "E6 rows stand alone")
    md = open(os.path.join(out, "report.md")).read()
    check("## E5" in md and "## E6" in md and "## E7" in md, "report written")


def test_resume_regroups():
    check(Sweep.dir, "needs test_quick_sweep")
    out = os.path.join(Sweep.dir, "out")
    spec_path = os.path.join(Sweep.dir, "quick.json")
    path = os.path.join(out, "results.jsonl")
    before = results.read_rows(path)
    rc, _, err = _experiment([spec_path, "--out", out, "--ncc", NCC, "--no-plots"])
    check(rc == 0 and "0 to run" in err, "resume with nothing to do: %d %s" % (rc, err[-500:]))
    check(len(results.read_rows(path)) == len(before), "nothing re-measured")
    # Drop one row of a group: the whole group (and only it) is timed again.
    victim = next(r for r in before if (r["result"] or {}).get("interleave"))
    gid = victim["result"]["interleave"]["group"]
    members = [r["key"] for r in before if runner.group_id(r["config"]) == gid]
    kept = [r for r in before if r["key"] != victim["key"]]
    results.write_rows(path, kept)
    rc, _, err = _experiment([spec_path, "--out", out, "--ncc", NCC, "--quiet", "--no-plots"])
    check(rc == 0, "resume exit %d: %s" % (rc, err[-1000:]))
    after = results.read_rows(path)
    new = after[len(kept):]
    check(sorted(r["key"] for r in new) == sorted(members),
          "re-timed %r, expected the group %r" % ([r["key"] for r in new], members))
    cur = results.index(after)
    rows = [cur[k] for k in members]
    check(len({r["result"].get("interleave", {}).get("timed_at") for r in rows
               if r["result"].get("interleave")}) == 1, "the group from one session")
    _check_grouped(list(cur.values()), 3 if inprocess_rows(after) else 2)


def inprocess_rows(rows):
    return all(r["result"]["timing"]["where"] == "in-process" for r in rows
               if r["config"]["compiler"] == "ncc" and r["config"]["kind"] == "point")


def test_isolated_groups():
    check(Sweep.dir, "needs test_quick_sweep")
    d = os.path.join(Sweep.dir, "isolated")
    rc, _, err = _experiment([os.path.join(Sweep.dir, "quick.json"), "--out", d, "--ncc", NCC,
                              "--quiet", "--only", "E5", "--isolate", "--no-plots"])
    check(rc == 0, "isolated exit %d: %s" % (rc, err[-1000:]))
    rows = results.read_rows(os.path.join(d, "results.jsonl"))
    check(len(rows) == 2 * (len(NCC_CONFIGS) + 2) and
          all(r["status"] == "ok" and not results.validate_row(r) for r in rows),
          "isolated rows: %r" % [(r["status"], r.get("reason")) for r in rows])
    _check_grouped(rows, 2)


def test_command_line_fallback():
    """NCC_HARNESS_INPROCESS=0: ncc rows through `ncc bench`, on their own
    and saying so; the vendor rows of the group are still interleaved."""
    check(Sweep.dir, "needs test_quick_sweep")
    d = os.path.join(Sweep.dir, "cli")
    env = dict(os.environ, NCC_HARNESS_INPROCESS="0")
    rc, _, err = run_experiment([os.path.join(Sweep.dir, "quick.json"), "--out", d, "--ncc", NCC,
                                 "--quiet", "--only", "E5", "--no-plots"], 600, env)
    check(rc == 0, "exit %d: %s" % (rc, err[-1000:]))
    rows = results.read_rows(os.path.join(d, "results.jsonl"))
    ncc_rows = [r for r in rows if r["config"]["compiler"] == "ncc"]
    check(ncc_rows and all(r["status"] == "ok" and not results.validate_row(r)
                           for r in rows), "rows %r" % [(r["status"], r["reason"]) for r in rows])
    for r in ncc_rows:
        t = r["result"]["timing"]
        check(t["where"] == "ncc bench subprocess" and "NCC_HARNESS_INPROCESS" in t["why"] and
              "interleave" not in r["result"], "ncc row timing %r" % t)
    groups = _check_grouped(rows, 2)
    check(all({r["config"]["compiler"] for r in rs} == {"onnxruntime"}
              for rs in groups.values()), "the vendors' rows grouped")


def test_old_rows_still_report():
    check(Sweep.dir, "needs test_quick_sweep")
    src = os.path.join(Sweep.dir, "out")
    d = os.path.join(Sweep.dir, "old")
    os.makedirs(d)
    shutil.copy(os.path.join(src, "spec.json"), d)
    old = []
    for r in results.read_rows(os.path.join(src, "results.jsonl")):
        r.pop("threads", None)
        r.pop("pinned_cpus", None)
        res = r.get("result") or {}
        for k in ("samples_ms", "interleave", "noisy", "timing"):
            res.pop(k, None)
        (res.get("latency_ms") or {}).pop("ci", None)
        check(not results.validate_row(r), "an old row is valid: %s" % results.validate_row(r))
        old.append(r)
    results.write_rows(os.path.join(d, "results.jsonl"), old)
    rc, outp, err = _experiment(["report", d, "--no-plots"])
    check(rc == 0, "report of old rows: exit %d: %s" % (rc, err[-1500:]))
    md = open(os.path.join(d, "report.md")).read()
    check("## E5" in md, "tables of old rows")
    # and a broken new field is caught
    bad = json.loads(json.dumps(old[0]))
    bad["result"]["samples_ms"] = [1.0, 2.0]
    bad["result"]["interleave"] = {"group": "x", "rounds": 3}
    check(any("rounds" in e for e in results.validate_row(bad)), "rounds vs samples checked")


# --------------------------------------------------------------------------
# An in-process vendor that breaks in the middle of the rounds.

class FlakyVendor(Adapter):
    """Returns the reference output; config "breaks" fails after 4 runs."""
    name = "flakyvendor"
    CONFIGS = ("steady", "breaks")

    def load(self):
        pass

    def compile(self, task, config, mode, batch):
        return {"config": config, "runs": 0, "y": task.reference(task.m["batch"])}

    def run(self, h, x):
        h["runs"] += 1
        if h["config"] == "breaks" and h["runs"] > 4:
            raise RuntimeError("flaky vendor broke")
        return h["y"].copy()


def test_row_failing_in_rounds():
    check(NCC, "set NCC to the ncc binary")
    adapters.register("flakyvendor", FlakyVendor)
    spec = specmod.normalize({
        "name": "flaky", "warmup": 1, "iters": ITERS, "pin_cpus": False,
        "model": {"width": 2, "spatial": [2, 2], "k": 1},
        "compilers": {"flakyvendor": ["steady", "breaks"], "onnxruntime": ["ALL"]},
        "experiments": [{"id": "E5", "kind": "amortize", "blocks": ["eltwise"]}]})
    out = tempfile.mkdtemp(prefix="ncc-harness-flaky-")
    try:
        sweep = runner.Sweep(spec, out, NCC, progress=False, log=None, plots=False)
        sweep.run(sweep.prepare())
        rows = {r["config"]["config"]: r
                for r in results.read_rows(os.path.join(out, "results.jsonl"))}
        check(rows["breaks"]["status"] == "error" and "broke" in rows["breaks"]["reason"],
              "the broken row: %r" % rows["breaks"]["reason"])
        good = [rows[c] for c in ("steady", "ALL", "ref")]
        check(all(r["status"] == "ok" for r in good), "the others: %r"
              % [(r["status"], r["reason"]) for r in good])
        # ncc:ref joins the rounds when libncc loads in-process; a sanitizer
        # build times it on its own through `ncc bench` (the fallback)
        n = 3 if inprocess_rows([rows["ref"]]) else 2
        grouped = [r for r in good if r["result"].get("interleave")]
        lens = {len(r["result"]["samples_ms"]) for r in grouped}
        check(len(grouped) == n and len(lens) == 1 and
              {r["result"]["interleave"]["rows"] for r in grouped} == {n},
              "equal lengths, %d rows completed: %r" % (n, lens))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_ort_stops_spinning():
    """onnxruntime's sessions stop their workers' spinning at the end of a
    run, so in a round they do not take a core from the next compiler."""
    from harness.adapters.ort import OrtAdapter

    class T:
        def model_path(self, batch):
            return os.path.join(SRC, "examples", "resblock.onnx")

    a = OrtAdapter(1)
    a.load()
    sess = a.compile(T(), "ALL", "default", None)
    got = sess.get_session_options().get_session_config_entry("session.force_spinning_stop")
    check(got == "1", "session.force_spinning_stop = %r" % got)


def main():
    rc = run_cases([test_rounds_rotate_and_pair, test_rounds_failing_row, test_adaptive_rounds,
              test_summarize, test_groups_and_shards, test_quick_sweep, test_resume_regroups,
              test_isolated_groups, test_command_line_fallback, test_old_rows_still_report, test_row_failing_in_rounds,
                    test_ort_stops_spinning])
    if Sweep.dir and not os.environ.get("NCC_PY_KEEP"):
        shutil.rmtree(Sweep.dir, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
