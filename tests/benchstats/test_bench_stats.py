#!/usr/bin/env python3
"""tests/benchstats/test_bench_stats.py -- what `ncc bench` says beside its
numbers, so that a reader can tell an effect from noise: the median's 95%
order-statistic CI (lo <= median <= hi, min..max under 6 runs; its ranks
against bench/harness/stats.py are tests/unit/test_cli_stats.c), the cv and
its "noisy" flag (stats.noisy is the oracle), the thread count and the CPU pinning (the oracle: the affinity this
test sets with os.sched_setaffinity), the count of nodes that ran on
reference kernels (the oracle: `ncc check --target=cpu --json`), and
--batch lists (one result per batch, a JSON array).

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed" and
exits non-zero when something failed.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "harness"))
from checks import check, finish  # noqa: E402
import stats  # noqa: E402  (bench/harness/stats.py)

NCC = os.environ.get("NCC", "ncc")
WITH_LLVM = os.environ.get("NCC_WITH_LLVM", "1") == "1"
ENV = {k: v for k, v in os.environ.items() if k != "NCC_NUM_THREADS"}

RELU = """graph @g(%x: f32[N,64]) {
  %y = Relu(%x)
  return %y
}
"""
# Gather has no compiled cpu kernel today: it runs on its reference kernel.
GATHER = """graph @g(%x: f32[N,4]) {
  %i: i64[2] = const [0, 2]
  %a = Gather(%x, %i) {axis = 1}
  %r = Relu(%a)
  return %r
}
"""
FIXED = """graph @g(%x: f32[1,4]) {
  %y = Relu(%x)
  return %y
}
"""


class R:
    def __init__(self, p):
        self.rc, self.out, self.err = p.returncode, p.stdout, p.stderr

    def __repr__(self):
        return "rc=%d\nstdout:\n%s\nstderr:\n%s" % (self.rc, self.out, self.err)


def ncc(*args, cpus=None):
    pre = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    return R(subprocess.run([NCC, *args], capture_output=True, text=True, env=ENV,
                            timeout=300, preexec_fn=pre))


def jload(r):
    try:
        return json.loads(r.out)
    except ValueError:
        return None


def test_ci_and_noise(relu):
    r = ncc("bench", relu, "--json", "--iters", "25", "--warmup", "1", "--target=ref")
    j = jload(r) or {}
    lat = j.get("latency_ms", {})
    check("bench --json has latency_ms.ci", r.rc == 0 and len(lat.get("ci", [])) == 2, r)
    if len(lat.get("ci", [])) == 2:
        lo, hi = lat["ci"]
        check("ci: lo <= median <= hi", lo <= lat["median"] <= hi, lat)
        check("ci: min <= lo", lat["min"] <= lo, lat)
    check("bench --json has robust_cv", isinstance(j.get("robust_cv"), (int, float)), j)
    check("noisy is robust cv > 10%",
          j.get("noisy") == (j.get("robust_cv", 0) > stats.CV_RANK_MAX), j)
    # the table: "median  X ms [lo, hi] 95% CI" and the cv row
    r = ncc("bench", relu, "--iters", "25", "--warmup", "1", "--target=ref")
    rows = {l.split()[0]: l for l in r.out.splitlines() if l.strip()}
    check("table: median row with its 95% CI",
          "95% CI" in rows.get("median", "") and "[" in rows.get("median", ""), r)
    cv = rows.get("cv", "")
    noisy = "noisy (robust cv > 10%): do not rank" in cv
    rcv = cv.split("robust cv (MAD/median)")[-1].split()[0] if "robust cv" in cv else "nan"
    check("table: the noisy flag follows the robust cv", noisy == (float(rcv) > 10), cv)
    # under 6 runs no 95% interval exists: min..max, and the table says so
    r = ncc("bench", relu, "--iters", "3", "--warmup", "0", "--target=ref", "--json")
    j = jload(r) or {}
    lat = j.get("latency_ms", {})
    check("3 runs: the ci is min..max", lat.get("ci", [None])[0] == lat.get("min"), lat)


def test_threads_and_pinning(relu):
    allowed = sorted(os.sched_getaffinity(0))
    online = os.sysconf("SC_NPROCESSORS_ONLN")
    r = ncc("bench", relu, "--iters", "2", "--threads", "1")
    line = [l for l in r.out.splitlines() if l.startswith("threads")]
    check("--threads 1 shows 'threads 1,'", line and line[0].split()[:2] == ["threads", "1,"], r)
    j = jload(ncc("bench", relu, "--iters", "2", "--threads", "1", "--json")) or {}
    check("json threads 1", j.get("threads") == 1, j)
    check("json cpus_allowed is the affinity's size", j.get("cpus_allowed") == len(allowed),
          (j, allowed))
    pinned = len(allowed) < online
    check("json pinned_cpus", j.get("pinned_cpus") == (allowed if pinned else None), j)
    if len(allowed) >= 2:
        one = [allowed[-1]]
        r = ncc("bench", relu, "--iters", "2", "--threads", "1", cpus=one)
        check("pinned to one CPU: the table says which",
              "threads      1, pinned to CPU %d\n" % one[0] in r.out, r)
        j = jload(ncc("bench", relu, "--iters", "2", "--json", cpus=one)) or {}
        check("pinned to one CPU: json", j.get("pinned_cpus") == one and
              j.get("cpus_allowed") == 1, j)
        if allowed[:2] == [allowed[0], allowed[0] + 1]:
            two = allowed[:2]
            r = ncc("bench", relu, "--iters", "2", cpus=two)
            want = "not pinned (2 CPUs allowed)" if online == 2 else \
                "pinned to CPUs %d-%d" % (two[0], two[1])
            check("two adjacent CPUs print as a range", want in r.out, r)


def test_batch_list(relu, fixed, d):
    r = ncc("bench", relu, "--iters", "6", "--warmup", "0", "--batch", "1,8", "--json",
            "--target=ref")
    j = jload(r)
    check("--batch 1,8 --json is an array of two", isinstance(j, list) and
          [x.get("batch") for x in j] == [1, 8], r)
    if isinstance(j, list) and len(j) == 2:
        check("each has its CI", all(x["latency_ms"]["ci"][0] <= x["latency_ms"]["median"]
                                     <= x["latency_ms"]["ci"][1] for x in j), j)
        check("one compile serves both", j[0]["compile_ms"] == j[1]["compile_ms"], j)
    r = ncc("bench", relu, "--iters", "6", "--warmup", "0", "--batch", "4", "--json",
            "--target=ref")
    check("a single --batch keeps one object", isinstance(jload(r), dict), r)
    r = ncc("bench", relu, "--iters", "2", "--warmup", "0", "--batch", "2,3", "--target=ref")
    batches = [l.split()[1] for l in r.out.splitlines() if l.startswith("batch ")]
    check("table: one block per batch", r.rc == 0 and batches == ["2", "3"], r)
    for bad, what in (("1,1", "twice"), ("1,", "list"), ("0,2", "list"), ("a", "list")):
        r = ncc("bench", relu, "--batch", bad, "--target=ref")
        check("--batch %s is a usage error" % bad, r.rc == 1 and
              r.err.startswith("ncc: error: --batch") and what in r.err, r)
    xp = os.path.join(d, "x.npy")
    with open(xp, "wb") as f:  # an f32[2,64] .npy written by hand (no numpy needed)
        hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 64), }"
        hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode())
        f.write(b"\x00" * (2 * 64 * 4))
    r = ncc("bench", relu, "--batch", "1,2", "--input", xp, "--target=ref")
    check("a --batch list with --input is a usage error", r.rc == 1 and
          "--batch list" in r.err, r)
    r = ncc("bench", fixed, "--batch", "8", "--target=ref", "--iters", "1")
    check("--batch on a model with a fixed batch is a usage error",
          r.rc == 1 and "no symbolic first dim" in r.err, r)
    r = ncc("bench", fixed, "--batch", "1", "--target=ref", "--iters", "1")
    check("--batch equal to the fixed batch is fine", r.rc == 0, r)


def test_reference_kernels(gather):
    if not WITH_LLVM:
        return
    c = jload(ncc("check", gather, "--target=cpu", "--json")) or {}
    host = c.get("host_nodes")
    check("the Gather model has nodes on reference kernels on cpu (else pick another op)",
          isinstance(host, int) and host > 0, c)
    ops = {h["op"]: h["count"] for h in c.get("host", [])}
    r = ncc("bench", gather, "--iters", "2", "--json")
    j = jload(r) or {}
    rk = j.get("reference_kernels") or {}
    check("bench json counts the reference-kernel nodes as check does",
          rk.get("nodes") == host and rk.get("ops") == ops, (rk, c))
    warn = [l for l in r.err.splitlines() if l.startswith("ncc: warning:")]
    check("bench warns once on stderr", len(warn) == 1 and
          ("%d node" % host) in warn[0] and "reference kernels on target cpu: Gather" in warn[0]
          and ("ncc check %s --target=cpu lists them" % gather) in warn[0], r)
    r = ncc("bench", gather, "--iters", "2")
    check("bench table: the ref kernels row", "ref kernels  %d node%s (Gather x%d" %
          (host, "" if host == 1 else "s", ops.get("Gather", 0)) in r.out, r)
    r = ncc("bench", gather, "--iters", "2", "--target=ref", "--json")
    j = jload(r) or {}
    check("target ref: no count, no warning", "reference_kernels" in j and
          j["reference_kernels"] is None and "warning" not in r.err, r)
    r = ncc("bench", gather, "--ablate", "--iters", "6", "--json")
    j = jload(r) or {}
    check("bench --ablate counts them too", (j.get("reference_kernels") or {}).get("nodes")
          == host and r.err.count("ncc: warning:") == 1, r)
    with tempfile.TemporaryDirectory() as out:
        r = ncc("run", gather, "--output-dir", out, "--input",
                write_npy(out, "x.npy", (3, 4)))
        warn = [l for l in r.err.splitlines() if l.startswith("ncc: warning:")]
        check("run warns once, one line", r.rc == 0 and len(warn) == 1 and warn[0] ==
              "ncc: warning: %d node%s on reference kernels on target cpu: Gather "
              "(ncc check %s --target=cpu lists them)" %
              (host, " runs" if host == 1 else "s run", gather), r)
        r = ncc("run", gather, "--output-dir", out, "--target=ref", "--input",
                os.path.join(out, "x.npy"))
        check("run on ref does not warn", r.rc == 0 and r.err == "", r)
    r = ncc("run", os.path.join(os.path.dirname(gather), "relu.nir"), "--output-dir",
            os.path.dirname(gather), "--input", write_npy(os.path.dirname(gather), "r.npy",
                                                          (2, 64)))
    check("run of a fully compiled model does not warn", r.rc == 0 and r.err == "", r)


def write_npy(d, name, shape):
    path = os.path.join(d, name)
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': %r, }" % (tuple(shape),)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    n = 1
    for s in shape:
        n *= s
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode())
        f.write(b"\x00\x00\x80\x3f" * n)
    return path


def main():
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, text in (("relu", RELU), ("gather", GATHER), ("fixed", FIXED)):
            paths[name] = os.path.join(d, name + ".nir")
            with open(paths[name], "w") as f:
                f.write(text)
        test_ci_and_noise(paths["relu"])
        test_threads_and_pinning(paths["relu"])
        test_batch_list(paths["relu"], paths["fixed"], d)
        test_reference_kernels(paths["gather"])
    sys.exit(finish())


if __name__ == "__main__":
    main()
