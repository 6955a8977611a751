#!/usr/bin/env python3
"""tests/ctime/test_ctime.py -- where compile time goes: `ncc bench --json`'s
"compile_breakdown" and the --time-passes tables of `ncc bench` and
`ncc compile` (docs/CODEGEN.md, "Where compile time goes").

Checks structure and bookkeeping, never speed: every phase is reported and
non-negative; the phases add up to compile_ms ("other" is the rest); the
per-kernel rows add up to the phase totals the cpu target measures per
kernel; there is one row per compiled kernel of the module; on a model of
two identical Conv+Relu blocks (built here with onnx.helper, different
weights) the second block's kernels are flagged "reused" with no LLVM time,
and none are with NCC_KERNEL_REUSE=0. The cpu kernels compiled on several
threads (--compile-threads): the phases are per-kernel sums and the
parallel section counts at its wall time (kernels_wall_ms) in the sum that
makes compile_ms; kernels_work_ms is the kernels' ir+opt+codegen; a bad
value is a usage error. Target ref reports only import,
passes and other; opencl (where it runs) its compile as "backend".

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed".
"""
import json
import re
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
from checks import check, finish  # noqa: E402

NCC = os.environ.get("NCC", "ncc")
WITH_LLVM = os.environ.get("NCC_WITH_LLVM", "1") == "1"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("NCC_")}
ENV["NCC_CACHE"] = "0"  # cold compiles: every phase is measured (tests/cache)

DRIVER = ["import", "passes", "pipeline"]
LIB = ["lower", "pack", "ir", "opt", "codegen", "link", "backend"]
PHASES = DRIVER + LIB + ["other"]
PER_KERNEL = ["ir", "opt", "codegen", "link"]  # measured per kernel on cpu


def two_blocks(path):
    """x -> Conv(8->16)+Relu -> Conv(16->8)+Relu, twice: the same shapes,
    other weights (two distinct kernels, each used twice)."""
    rng = np.random.default_rng(0)
    nodes, inits, cur = [], [], "x"
    for b in range(2):
        for c, (oc, ic) in enumerate([(16, 8), (8, 16)]):
            w = f"w{b}{c}"
            inits.append(numpy_helper.from_array(
                rng.standard_normal((oc, ic, 3, 3)).astype(np.float32), w))
            nodes.append(helper.make_node("Conv", [cur, w], [f"c{b}{c}"],
                                          pads=[1, 1, 1, 1]))
            nodes.append(helper.make_node("Relu", [f"c{b}{c}"], [f"r{b}{c}"]))
            cur = f"r{b}{c}"
    g = helper.make_graph(
        nodes, "two_blocks",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [1, 8, 16, 16])],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, path)


def run(args, env=None):
    e = dict(ENV)
    e.update(env or {})
    return subprocess.run([NCC, *args], capture_output=True, text=True, env=e)


def bench_json(model, target, env=None, extra=()):
    p = run(["bench", model, "--target=" + target, "--iters", "1", "--warmup", "0",
             "--json", *extra], env)
    if p.returncode != 0:
        check(f"bench {target} runs", False, p.stderr)
        return None
    return json.loads(p.stdout)


def check_breakdown(tag, r):
    b = r.get("compile_breakdown")
    check(f"{tag}: has compile_breakdown", isinstance(b, dict), r)
    if not isinstance(b, dict):
        return None
    for ph in PHASES:
        check(f"{tag}: phase {ph}", isinstance(b.get(ph), (int, float)) and b[ph] >= 0,
              b.get(ph))
    # the kernels' compiles ran in parallel: their phases are summed over
    # the kernels, so count that section at its wall time
    total = (sum(b.get(ph, 0) for ph in PHASES) - b.get("kernels_work_ms", 0)
             + b.get("kernels_wall_ms", 0))
    # the phases partition the measured compile time (printed to 6 digits)
    check(f"{tag}: phases add up to compile_ms",
          abs(total - r["compile_ms"]) <= 1e-3 * r["compile_ms"] + 0.01,
          (total, r["compile_ms"], b))
    check(f"{tag}: named phases within compile_ms",
          total - b["other"] <= r["compile_ms"] * (1 + 1e-5) + 0.01, b)
    check(f"{tag}: passes listed", [p["name"] for p in b["per_pass"]] == r["passes"],
          (b["per_pass"], r["passes"]))
    check(f"{tag}: passes = sum of per_pass",
          abs(sum(p["ms"] for p in b["per_pass"]) - b["passes"]) <= 1e-3 * b["passes"] + 1e-3,
          b)
    for k in b["kernels"]:
        for ph in LIB:
            check(f"{tag}: kernel {k['name']} {ph} >= 0", k[ph] >= 0, k)
        check(f"{tag}: kernel {k['name']} total",
              abs(k["total"] - sum(k[ph] for ph in LIB)) <= 1e-3 * k["total"] + 1e-3, k)
    return b


def compiled_kernels(r):
    refk = r["reference_kernels"]
    return r["kernels"] - (refk["nodes"] if refk else 0)


def test_cpu(model):
    r = bench_json(model, "cpu")
    if not r:
        return
    b = check_breakdown("cpu", r)
    if not b:
        return
    ks = b["kernels"]
    check("cpu: one row per compiled kernel", len(ks) == compiled_kernels(r) and len(ks) > 0,
          (len(ks), r["kernels"]))
    check("cpu: every kernel lowered", all(k["lower"] > 0 for k in ks), ks)
    reused = [k for k in ks if k["reused"]]
    fresh = [k for k in ks if not k["reused"]]
    # block 2 repeats block 1's kernels: half of the blocks' kernels share a
    # function (where the layout pass blocks the 8 channels -- 8-lane
    # hosts -- the Reorders at the graph's ends are kernels of their own)
    blocks = [k for k in ks if "Conv" in k["name"]]
    check("cpu: repeated block reused",
          [k for k in blocks if k["reused"]] == reused and len(reused) == len(blocks) // 2
          and fresh and blocks, ks)
    for k in reused:
        check(f"cpu: reused {k['name']} has no LLVM time",
              all(k[ph] == 0 for ph in PER_KERNEL), k)
    for k in fresh:
        for ph in PER_KERNEL:
            check(f"cpu: {k['name']} {ph} measured", k[ph] > 0, k)
    for ph in PER_KERNEL:
        s = sum(k[ph] for k in ks)
        check(f"cpu: kernels' {ph} add up to the phase",
              abs(s - b[ph]) <= 1e-3 * b[ph] + 1e-3, (s, b[ph]))
    check("cpu: pack measured (constant conv weights)", b["pack"] > 0, b)
    check("cpu: no backend phase", b["backend"] == 0, b)

    for n in (1, 2):
        rt = bench_json(model, "cpu", extra=[f"--compile-threads={n}"])
        bt = rt and check_breakdown(f"cpu --compile-threads={n}", rt)
        if not bt:
            continue
        check(f"cpu --compile-threads={n}: threads used", bt["compile_threads"] == n, bt)
        work = sum(k[ph] for k in bt["kernels"] for ph in ["ir", "opt", "codegen"])
        check(f"cpu --compile-threads={n}: work is the kernels' ir+opt+codegen",
              abs(work - bt["kernels_work_ms"]) <= 1e-3 * work + 1e-2, (work, bt))
        if n == 1:
            check("cpu one thread: the work fits in the wall time",
                  bt["kernels_work_ms"] <= bt["kernels_wall_ms"] + 1e-2, bt)
    p = run(["bench", model, "--compile-threads=x"])
    check("--compile-threads=x: usage error", p.returncode == 1 and "compile-threads" in p.stderr,
          p.stderr)

    r0 = bench_json(model, "cpu", env={"NCC_KERNEL_REUSE": "0"})
    if r0 and r0.get("compile_breakdown"):
        ks0 = r0["compile_breakdown"]["kernels"]
        check("cpu reuse off: nothing reused", ks0 and not any(k["reused"] for k in ks0),
              ks0)
        check("cpu reuse off: every kernel compiled", all(k["opt"] > 0 for k in ks0), ks0)


def test_ref(model):
    r = bench_json(model, "ref")
    if not r:
        return
    b = check_breakdown("ref", r)
    if b:
        check("ref: only import, passes and other",
              all(b[ph] == 0 for ph in LIB) and not b["kernels"], b)


def test_opencl(model):
    p = run(["targets"])
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("opencl ")]
    if not line or line[0].split()[1] != "yes":
        print("opencl: not available here, skipped")
        return
    r = bench_json(model, "opencl")
    if not r:
        return
    b = check_breakdown("opencl", r)
    if b:
        check("opencl: its compile is the backend phase", b["backend"] > 0, b)
        check("opencl: no LLVM phases",
              all(b[ph] == 0 for ph in ["ir", "opt", "codegen", "link"]), b)


def test_tables(model, tmp):
    p = run(["bench", model, "--iters", "1", "--warmup", "0", "--time-passes"])
    check("bench --time-passes runs", p.returncode == 0, p.stderr)
    out = p.stdout
    head = out.find("\ncompile time\n")
    check("bench: table after the result", head > out.find("throughput"), out)
    for ph in PHASES + ["total"]:
        check(f"bench table: row {ph}", f"\n{ph} " in out[head:], out)
    # 4 kernels, 2 reused; 6 where the layout pass adds the two Reorders
    check("bench table: kernels",
          re.search(r"kernels by compile time \(([46]) of \1; 2 reused\)", out) is not None, out)
    check("bench table: reused flagged", out.count("  reused\n") == 2, out)
    check("bench: pass table on stderr", "pass " in p.stderr and "compile time" not in p.stderr,
          p.stderr)
    obj = os.path.join(tmp, "m.o")
    p = run(["compile", model, "-o", obj, "--time-passes"])
    check("compile --time-passes runs", p.returncode == 0 and os.path.getsize(obj) > 0,
          p.stderr)
    check("compile: table on stderr", "compile time" in p.stderr and not p.stdout, p)
    rows = {ln.split()[0]: float(ln.split()[1]) for ln in p.stderr.splitlines()
            if len(ln.split()) == 3 and ln.split()[0] in PHASES}
    check("compile: every phase", sorted(rows) == sorted(PHASES), rows)
    check("compile: object code generation timed", rows.get("codegen", 0) > 0, rows)
    check("compile: emitted kernels reused", "; 2 reused)" in p.stderr, p.stderr)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "two_blocks.onnx")
        two_blocks(model)
        test_ref(model)
        if WITH_LLVM:
            test_cpu(model)
            test_tables(model, tmp)
        test_opencl(model)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
