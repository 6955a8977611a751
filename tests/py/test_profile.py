#!/usr/bin/env python3
"""tests/py/test_profile.py -- `ncc bench --profile` and `--trace` (docs/PROFILING.md).

A small model built here with onnx (Conv -> Flatten -> MatMul -> Relu -> Shrink, every
node named) is profiled on cpu with two threads, and the checks are
consistency ones, never speed:
  (a) the steps' mean times add up to about the run's wall time (never
      more; at least half: the executor between steps is small);
  (b) every kernel's nodes are ONNX node names of the file, each in one
      kernel, its ops are those nodes' op types, Shrink (no cpu kernel) is
      a reference kernel row and Flatten (a compiled copy) is not;
  (c) the trace JSON parses, has a named lane per thread used and every
      event of a run lies inside that run's event;
  (d) the Conv kernel's and the MatMul kernel's FLOPs equal the counts
      computed from the numpy arrays (2 per multiply-add; a fused Relu adds
      one per output element, the documented model);
  (e) a --trace path that cannot be written: one `ncc: error:` line, exit 2,
      on bench and on run, and nothing else written.
Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed".
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

C_IN, C_OUT, HW, K, N_OUT = 3, 16, 32, 3, 10


def build(path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((C_OUT, C_IN, K, K)).astype(np.float32)
    w2 = rng.standard_normal((C_OUT * HW * HW, N_OUT)).astype(np.float32)
    nodes = [
        h.make_node("Conv", ["x", "w"], ["c"], name="my_conv", pads=[1, 1, 1, 1]),
        h.make_node("Flatten", ["c"], ["f"], name="my_flatten", axis=1),
        h.make_node("MatMul", ["f", "w2"], ["m"], name="my_matmul"),
        h.make_node("Relu", ["m"], ["r"], name="my_relu"),
        # an op with no cpu kernel (ncc ops), so the profile has a host row
        h.make_node("Shrink", ["r"], ["y"], name="my_shrink", lambd=0.0),
    ]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, C_IN, HW, HW])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, N_OUT])],
                     initializer=[numpy_helper.from_array(w, "w"),
                                  numpy_helper.from_array(w2, "w2")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    x = np.zeros((1, C_IN, HW, HW), np.float32)
    return {n.name: n.op_type for n in nodes}, x, w, w2


def ncc(*args):
    r = subprocess.run([NCC, *args], capture_output=True, timeout=300)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def main():
    tmp = tempfile.mkdtemp(prefix="ncc_profile_")
    model = os.path.join(tmp, "m.onnx")
    names, x, w, w2 = build(model)
    trace = os.path.join(tmp, "t.json")
    rc, out, err = ncc("bench", model, "--target=cpu", "--threads", "2", "--iters", "5",
                       "--warmup", "1", "--profile", "--json", "--trace", trace)
    check("bench --profile --json exits 0", rc == 0, err)
    if rc != 0:
        return finish()
    prof = json.loads(out)["profile"]
    ks = prof["kernels"]
    check("runs", prof["runs"] == 5, prof["runs"])
    # (a) the steps add up to the run
    check("steps <= run", prof["total_ms"] <= prof["run_ms"] * 1.0001 + 1e-6,
          (prof["total_ms"], prof["run_ms"]))
    check("steps >= half the run", prof["total_ms"] >= 0.5 * prof["run_ms"],
          (prof["total_ms"], prof["run_ms"]))
    check("shares add to 1", abs(sum(k["share"] for k in ks) - 1) < 1e-3,
          [k["share"] for k in ks])
    check("sorted by time", all(ks[i]["ms"] >= ks[i + 1]["ms"] for i in range(len(ks) - 1)))
    check("keys", all(set(k) >= {"name", "ops", "nodes", "shapes", "ms", "share", "calls",
                                  "gflops", "gbps", "roofline", "ref"} for k in ks), ks[0])
    # (b) nodes and ops map to the ONNX graph
    seen = [n for k in ks for n in k["nodes"]]
    check("nodes are ONNX node names", set(seen) <= set(names), seen)
    check("each node in one kernel", len(seen) == len(set(seen)), seen)
    check("the ONNX compute nodes all appear", {"my_conv", "my_matmul", "my_relu"} <= set(seen),
          seen)
    for k in ks:
        check("ops of " + k["name"], k["ops"] == [names.get(n, "Reorder") for n in k["nodes"]]
              if all(n in names for n in k["nodes"]) else True, k)
    by_node = {n: k for k in ks for n in k["nodes"]}
    flat = by_node.get("my_flatten")
    if flat is not None:
        check("Flatten is a compiled kernel (not a marked row)", flat["ref"] is False, flat)
    shrink = by_node.get("my_shrink")
    check("Shrink runs on a reference kernel (a marked row)",
          shrink is not None and shrink["ref"] is True, shrink)
    # (d) FLOPs against numpy's count
    conv = by_node["my_conv"]
    y = np.zeros((1, C_OUT, HW, HW))  # the conv's output (pads 1, stride 1)
    conv_flops = 2 * y.size * w[0].size  # a multiply-add per weight per output
    conv_flops += sum(y.size for o in conv["ops"] if o == "Relu")
    check("Conv kernel FLOPs", conv["flops"] == conv_flops, (conv, conv_flops))
    mm = by_node["my_matmul"]
    f = y.reshape(1, -1)  # Flatten of the conv output
    mm_flops = 2 * f.shape[0] * f.shape[1] * w2.shape[1]
    if "Relu" in mm["ops"]:
        mm_flops += f.shape[0] * w2.shape[1]
    check("MatMul kernel FLOPs", mm["flops"] == mm_flops, (mm, mm_flops))
    check("shapes", conv["shapes"] == ["1x%dx%dx%d" % (C_OUT, HW, HW)] or
          conv["shapes"][0].startswith("1x"), conv["shapes"])
    # (c) the trace
    try:
        t = json.load(open(trace))
    except (OSError, ValueError) as e:
        check("trace parses", False, e)
        return finish()
    ev = t["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X"]
    lanes = {e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    used = {e["tid"] for e in xs}
    shares = {e["tid"] for e in xs if e.get("cat") == "thread"}
    check("a named lane per thread used", used == lanes, (used, lanes))
    check("lanes are the threads", shares <= {0, 1} and shares == set(range(len(shares))),
          shares)
    check("threads_used", prof["threads_used"] == len(shares), (prof["threads_used"], shares))
    # a lane is one thread: its kernel shares never overlap in time
    overlap = []
    for tid in shares:
        evs = sorted((e["ts"], e["ts"] + e["dur"]) for e in xs
                     if e.get("cat") == "thread" and e["tid"] == tid)
        overlap += [(tid, a, b) for a, b in zip(evs, evs[1:]) if b[0] < a[1] - 1e-3]
    check("a lane's shares do not overlap", not overlap, overlap[:3])
    runs = {e["args"]["run"]: e for e in xs if e.get("cat") == "run"}
    check("one run event per run", len(runs) == prof["runs"], len(runs))
    inside = all(runs[e["args"]["run"]]["ts"] - 1e-3 <= e["ts"] and
                 e["ts"] + e["dur"] <= runs[e["args"]["run"]]["ts"] +
                 runs[e["args"]["run"]]["dur"] + 1e-3 for e in xs if e.get("cat") != "run")
    check("events nest in their run", inside)
    steps = [e for e in xs if e.get("cat") in ("kernel", "ref")]
    check("step events carry the nodes", all(e["args"]["nodes"] for e in steps))
    check("kernel names in the trace", {e["name"] for e in steps} == {k["name"] for k in ks})
    # (f) the ref target (the interpreter) records one host row per node
    rc, out, err = ncc("bench", model, "--target=ref", "--iters", "3", "--warmup", "0",
                       "--profile", "--json")
    check("ref: bench --profile exits 0", rc == 0, err)
    if rc == 0:
        rp = json.loads(out)["profile"]
        rnodes = [n for k in rp["kernels"] for n in k["nodes"]]
        check("ref: every node once", sorted(rnodes) == sorted(names), rnodes)
        check("ref: host rows", all(k["ref"] and k["kind"] == "ref" for k in rp["kernels"]),
              rp["kernels"][:2])
        check("ref: steps add up to the run",
              0.5 * rp["run_ms"] <= rp["total_ms"] <= rp["run_ms"] * 1.0001 + 1e-6,
              (rp["total_ms"], rp["run_ms"]))
    # (e) a bad --trace path
    bad = os.path.join(tmp, "no_such_dir", "t.json")
    for cmd in (["bench", model, "--iters", "1", "--warmup", "0"],
                ["run", model, "--output-dir", tmp, "--input", os.path.join(tmp, "x.npy")]):
        np.save(os.path.join(tmp, "x.npy"), x)
        rc, out, err = ncc(*cmd, "--trace", bad)
        lines = err.strip().splitlines()
        check(cmd[0] + " bad --trace: exit 2", rc == 2, (rc, err))
        check(cmd[0] + " bad --trace: one error line",
              len(lines) == 1 and lines[0].startswith("ncc: error:"), err)
        check(cmd[0] + " bad --trace: nothing written", not os.path.exists(bad))
    # ncc run --trace: one run
    t2 = os.path.join(tmp, "run.json")
    rc, out, err = ncc("run", model, "--output-dir", tmp, "--input", os.path.join(tmp, "x.npy"),
                       "--trace", t2)
    check("run --trace exits 0", rc == 0, err)
    if rc == 0:
        ev = json.load(open(t2))["traceEvents"]
        check("run --trace: one run", sum(1 for e in ev if e.get("cat") == "run") == 1)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
