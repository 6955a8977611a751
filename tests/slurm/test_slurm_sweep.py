#!/usr/bin/env python3
"""tests/slurm/test_slurm_sweep.py — the sharded sweep on a real scheduler
(ctest `slurm.sweep`, tests/slurm.cmake).

Starts a one-node Slurm cluster from Debian's slurm-wlm and munge in a
temporary directory (cluster.py), submits tests/slurm/tiny.toml as a job
array of SHARDS tasks (shard.sbatch: `bench/experiment SPEC --shard
$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`), merges the shards with
`bench/experiment merge`, runs the same spec locally in one go (alongside
the array job: only its rows are compared, not its times), and checks:

  - every array task completed with exit code 0 and wrote its shard; each
    shard says which array task ran it (job id, task id, task count);
  - the shards are disjoint, none is empty, and a group (the rows timed
    together) is never split between two shards;
  - the merged rows are the local run's rows: the same keys, and row by row
    the same content once the timing fields are taken out (TIMING_KEYS:
    latencies, compile times, rates derived from them, the wall clock, the
    noise flags, the per-kernel profile times); the environment record is
    compared too (same machine, same ncc);
  - the merged report renders, and its row count is the local report's.

Then stops the daemons and removes the directory (also when a check fails;
NCC_PY_KEEP=1 keeps the directory for a look).  Killed outright (SIGKILL),
the daemons die with it (PR_SET_PDEATHSIG) and a watchdog process
(cluster.start_watchdog) ends what still runs in the directory and removes
it.

Skips (exit 77, a `skipped:` line) when numpy/onnx/onnxruntime are missing,
when not root (slurmd runs job steps as the submitting user, which needs
root), or when slurm-wlm/munge are not installed and this is not CI.  In CI
(CI=true or NCC_STRICT_TESTS=1) a root run installs the two packages with
apt-get first; docs/TESTING.md says why a skip here fails strict CI.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("NCC_SRC") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "py"))
sys.path.insert(0, HERE)

from nccutil import check, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)

import cluster as clustermod  # noqa: E402

sys.path.insert(0, os.path.join(SRC, "bench"))
from harness import results, runner  # noqa: E402
from harness import spec as specmod  # noqa: E402

SHARDS = 3
JOB_TIMEOUT_S = 240
EXPERIMENT = os.path.join(SRC, "bench", "experiment")

# Fields that are measured time, or derived from it, anywhere in a row: the
# only fields allowed to differ between two runs of the same spec on the
# same machine.  (`profile.kernels` is also sorted by time, so it is
# compared as a set.)
TIMING_KEYS = {
    "started", "wall_s",                                   # the row's wall clock
    "latency_ms", "samples_ms", "cv", "robust_cv", "noisy",  # the timed runs
    "compile_ms", "build_ms", "first_run_ms", "ncc_compile_ms", "pass_ms",
    "throughput_per_s", "gflop_per_s",                     # rates from the median
    # interleave: when, and how many rounds: adaptive repeats add rounds
    # to a group whose rows were noisy (runner.py)
    "timed_at", "extra_rounds", "rounds",
    "adaptive",  # the adaptive repeats' record: CI half-width reached, capped
    "ms", "gbps", "gflops", "share", "roofline", "run_ms", "total_ms",  # profile
    "peak_gbps", "peak_gflops",                            # the machine's, measured
}


def strip_timing(obj, key=None):
    """obj without TIMING_KEYS at any depth (and keys ending _ms: a new
    timing field is excluded without touching this list)."""
    if isinstance(obj, dict):
        return {k: strip_timing(v, k) for k, v in obj.items()
                if k not in TIMING_KEYS and not k.endswith("_ms")}
    if isinstance(obj, list):
        items = [strip_timing(v) for v in obj]
        if key == "kernels" and all(isinstance(v, dict) for v in items):
            items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return obj


def row_diff(a, b, path=""):
    """The first few paths where two stripped rows differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append("%s.%s only in %s" % (path, k, "merged" if k in a else "local"))
            else:
                out += row_diff(a[k], b[k], "%s.%s" % (path, k))
        return out[:5]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += row_diff(x, y, "%s[%d]" % (path, i))
        return out[:5]
    return [] if a == b else ["%s: %s != %s" % (path, json.dumps(a)[:80], json.dumps(b)[:80])]


def skip(reason):
    print("skipped: %s" % reason)
    sys.exit(77)


def strict_ci():
    return os.environ.get("CI") == "true" or os.environ.get("NCC_STRICT_TESTS") == "1"


def preconditions():
    ncc = os.environ.get("NCC")
    if not ncc or not os.access(ncc, os.X_OK):
        print("error: set NCC to the ncc binary (ctest does)")
        sys.exit(1)
    if os.geteuid() != 0:
        skip("not root: the one-node Slurm cluster needs root (slurmd starts job steps as "
             "the submitting user); run the suite as root, as CI does")
    missing = clustermod.missing_programs()
    if missing and strict_ci() and shutil.which("apt-get"):
        print("installing %s (CI): %s missing" % (" ".join(clustermod.PACKAGES),
                                                   ", ".join(missing)))
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-q"], env=env, check=False)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] +
                       list(clustermod.PACKAGES), env=env, check=False)
        missing = clustermod.missing_programs()
    if missing:
        skip("slurm-wlm/munge not installed (%s missing): tools/setup.sh installs them, or "
             "apt-get install slurm-wlm munge" % ", ".join(missing))
    return ncc


def write_spec(tmp):
    """tiny.toml as JSON; without LLVM (NCC_WITH_LLVM=0) the compiled row
    is ncc's ref target at -O2 instead of cpu."""
    spec = specmod.load(os.path.join(HERE, "tiny.toml"))
    if os.environ.get("NCC_WITH_LLVM") == "0":
        for e in spec["experiments"] + [spec]:
            e["compilers"]["ncc"] = ["ref", "ref -O2"]
    path = os.path.join(tmp, "tiny.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    return path


def experiment(args, env=None, timeout=JOB_TIMEOUT_S):
    p = subprocess.run([sys.executable, EXPERIMENT] + args, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


class State:
    tmp = None
    cluster = None
    ncc = None
    spec = None
    job = None
    shard_rows = None
    merged = None
    local = None
    local_run = None


def test_cluster_up():
    S = State
    S.cluster = clustermod.Cluster(os.path.join(S.tmp, "cluster"))
    t0 = time.time()
    S.cluster.start()
    nodes = S.cluster.cmd(["sinfo", "-h", "-N", "-o", "%N %T %c"]).split()
    check(nodes[1] == "idle", "one idle node: %s" % nodes)
    print("  cluster up in %.1fs: node %s, %s CPUs" % (time.time() - t0, nodes[0], nodes[2]))


def test_array_job():
    S = State
    check(S.cluster is not None, "needs the cluster")
    out = os.path.join(S.tmp, "sweep")
    os.makedirs(os.path.join(out, "logs"))
    env = S.cluster.env()
    env.update(PYTHON=sys.executable, NCC_SRC=SRC, NCC=S.ncc, SWEEP_SPEC=S.spec,
               SWEEP_OUT=out)
    t0 = time.time()
    p = subprocess.run([clustermod.which("sbatch"), "--parsable", "--array=0-%d" % (SHARDS - 1),
                        "--job-name=ncc-sweep", "--cpus-per-task=1", "--time=10",
                        "--chdir=" + out, "--output=" + os.path.join(out, "logs", "%A_%a.log"),
                        os.path.join(HERE, "shard.sbatch")],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    check(p.returncode == 0, "sbatch: %s" % p.stderr.decode(errors="replace"))
    S.job = int(p.stdout.decode().strip().split(";")[0])
    # the local run goes alongside the array job (only its rows matter here,
    # not its times): the test takes the longer of the two, not their sum
    S.local_run = subprocess.Popen(
        [sys.executable, EXPERIMENT, S.spec, "--out", os.path.join(S.tmp, "local"), "--ncc",
         S.ncc, "--quiet", "--no-plots", "--strict"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=S.tmp)
    tasks = S.cluster.wait_job(S.job, JOB_TIMEOUT_S)
    took = time.time() - t0
    logs = ""
    for f in sorted(os.listdir(os.path.join(out, "logs"))):
        logs += "--- %s\n%s" % (f, open(os.path.join(out, "logs", f)).read()[-1500:])
    check(sorted(tasks) == list(range(SHARDS)), "array tasks %s" % sorted(tasks))
    for i, (state, code) in sorted(tasks.items()):
        check(state == "COMPLETED" and code == "0:0",
              "array task %d: %s, exit %s\n%s" % (i, state, code, logs))
    S.shard_rows = []
    for i in range(SHARDS):
        d = os.path.join(out, "shard-%d" % i)
        ran = open(os.path.join(d, "slurm-task.txt")).read().split()
        check(ran[:3] == [str(S.job), str(i), str(SHARDS)],
              "shard %d was run by array task %s of job %s (expected %d_%d of %d)"
              % (i, ran[1], ran[0], S.job, i, SHARDS))
        S.shard_rows.append(results.read_rows(os.path.join(d, "results.jsonl")))
    print("  array job %d: %d tasks completed in %.1fs, %s rows" % (
        S.job, SHARDS, took, "+".join(str(len(r)) for r in S.shard_rows)))


def test_shards_split_by_group():
    S = State
    check(S.shard_rows is not None, "needs the array job")
    keys = [{r["key"] for r in rows} for rows in S.shard_rows]
    check(all(keys), "an empty shard: %s" % [len(k) for k in keys])
    for i in range(SHARDS):
        for j in range(i + 1, SHARDS):
            check(not keys[i] & keys[j], "shards %d and %d share rows" % (i, j))
    owner = {}
    for i, rows in enumerate(S.shard_rows):
        for r in rows:
            g = runner.group_id(r["config"])
            check(owner.setdefault(g, i) == i, "group %s split between shards %d and %d"
                  % (g, owner[g], i))


def test_merged_equals_local():
    S = State
    check(S.shard_rows is not None, "needs the array job")
    sweep = os.path.join(S.tmp, "sweep")
    merged_dir, local_dir = os.path.join(S.tmp, "merged"), os.path.join(S.tmp, "local")
    rc, _, err = experiment(["merge"] + [os.path.join(sweep, "shard-%d" % i)
                                         for i in range(SHARDS)] +
                            ["--out", merged_dir, "--no-plots"])
    check(rc == 0, "merge exited %d: %s" % (rc, err[-800:]))
    check(S.local_run is not None, "needs the local run")
    _, err = S.local_run.communicate(timeout=JOB_TIMEOUT_S)
    err = err.decode(errors="replace")
    check(S.local_run.returncode == 0, "the local run exited %d: %s"
          % (S.local_run.returncode, err[-800:]))
    merged = results.index(results.read_rows(os.path.join(merged_dir, "results.jsonl")))
    local = results.index(results.read_rows(os.path.join(local_dir, "results.jsonl")))
    S.merged, S.local = merged, local
    expected = {k for k, _, _ in specmod.expand(json.load(open(os.path.join(local_dir,
                                                                           "spec.json"))))}
    check(set(local) == expected, "the local run has %d of the spec's %d rows"
          % (len(set(local) & expected), len(expected)))
    check(set(merged) == set(local), "merged rows: %d missing, %d extra"
          % (len(set(local) - set(merged)), len(set(merged) - set(local))))
    for k in sorted(local):
        check(not results.validate_row(merged[k]), "merged row %s: %s"
              % (k, results.validate_row(merged[k])))
        check(merged[k]["status"] == "ok", "row %s: %s (%s)"
              % (k, merged[k]["status"], merged[k].get("reason")))
        a, b = strip_timing(merged[k]), strip_timing(local[k])
        check(a == b, "row %s (%s) differs from the local run's: %s"
              % (k, runner.label(local[k]["config"]), "; ".join(row_diff(a, b))))
    for d in (merged_dir, local_dir):
        text = open(os.path.join(d, "report.md")).read()
        check("Rows: %d." % len(local) in text, "%s/report.md counts %d rows" % (d, len(local)))
    print("  %d merged rows equal the local run's (timing fields excluded)" % len(local))


def test_strip_keeps_content():
    """The comparison is not vacuous: stripping keeps the fields that say
    what was run and what came out, and a changed one is seen."""
    S = State
    check(S.local, "needs the rows")
    r = next(iter(S.local.values()))
    s = strip_timing(r)
    for k in ("key", "config", "status", "experiments", "env"):
        check(k in s, "strip_timing dropped %s" % k)
    check("check" in s["result"] and "graph_hash" in s["result"] or
          r["config"]["config"] == "ref", "strip_timing dropped result.check/graph_hash")
    changed = json.loads(json.dumps(r))
    changed["result"]["check"]["max_abs_err"] = 1.0
    check(strip_timing(changed) != s, "a changed error is not seen")


def main():
    State.ncc = preconditions()
    State.tmp = tempfile.mkdtemp(prefix="ncc-slurm-")
    watchdog = None if os.environ.get("NCC_PY_KEEP") else clustermod.start_watchdog(State.tmp)
    # ctest's timeout sends SIGTERM first: clean up then too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        State.spec = write_spec(State.tmp)
        return run_cases([test_cluster_up, test_array_job, test_shards_split_by_group,
                          test_merged_equals_local, test_strip_keeps_content])
    finally:
        if State.local_run is not None and State.local_run.poll() is None:
            State.local_run.kill()
            State.local_run.wait()
        if State.cluster is not None:
            State.cluster.stop()
            left = State.cluster.stray_pids()
            if left:
                print("warning: processes still in the cluster directory: %s" % left)
        if os.environ.get("NCC_PY_KEEP"):
            print("kept %s" % State.tmp)
        else:
            shutil.rmtree(State.tmp, ignore_errors=True)
        if watchdog is not None:
            watchdog.terminate()
            watchdog.wait(5)


if __name__ == "__main__":
    sys.exit(main())
