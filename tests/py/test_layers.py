#!/usr/bin/env python3
"""tests/py/test_layers.py — bench/layers (one model profiled layer by layer
by ncc, onnxruntime and OpenVINO, aligned on its ONNX nodes), label
`layers` (tests/layers.cmake).

  - parsers on small fixtures: an onnxruntime profile excerpt (warm-up run
    dropped, NCHWc names traced through their output tensor, the
    Conv+Relu kernel named after the Relu walked back to its Conv, a fused
    Add absorbed, reorders unmapped, fusion suffixes, the shortcut Add of
    a ResNet block given to the conv that runs last), an OpenVINO
    profiling_info-like list (NOT_RUN skipped, runs averaged, the runtime
    model's original layer names, output-tensor and "/WithoutBiases"
    names, reorders unmapped), an ncc profile contract object (host time
    unattributed, a missing "profile" said so);
  - the alignment: fused groups that differ between compilers merge into
    one row, every attributed millisecond lands in exactly one row, the
    rows are the coarsest partition (each row's nodes are linked by
    kernels) — on a fixed case and on random kernel sets; the vendors' runs
    interleaved round by round, warm-up runs untimed;
  - end to end: a tiny Conv-Relu-Conv-Add-MatMul model built here, profiled
    by live onnxruntime and OpenVINO, ncc from `ncc bench --profile` when
    the binary has it, else from a contract fixture (--ncc-json); JSON,
    text, --out files, --sort time; usage errors as one line, exit 1.

Exit 77 when numpy/onnx/onnxruntime/openvino are missing.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

from nccutil import SRC, discovered_cases, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)
try:
    import openvino  # noqa: F401
except ImportError as e:
    print("skipped: %s (pip install -r bench/requirements-vendors.txt)" % e)
    sys.exit(77)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from harness.layers_align import align, partition  # noqa: E402
from harness.layers_graph import Graph  # noqa: E402
from harness.layers_ncc import NO_PROFILE, NoProfile, parse_ncc_profile  # noqa: E402
from harness.layers_vendors import parse_ort_events, parse_ov_runs, profile_vendors  # noqa: E402

LAYERS = os.path.join(SRC, "bench", "layers")
TMP = tempfile.mkdtemp(prefix="ncc-test-layers-")

# The tiny model's graph: conv1 -> relu1 -> conv2 -> add(conv2, relu1) -> matmul
TINY_NODES = [("conv1", "Conv", ["x", "W1", "B1"], ["c1"]), ("relu1", "Relu", ["c1"], ["r1"]),
              ("conv2", "Conv", ["r1", "W2"], ["c2"]), ("add", "Add", ["c2", "r1"], ["a"]),
              ("matmul", "MatMul", ["a", "M"], ["y"])]


def tiny_graph():
    return Graph([{"name": n, "op": o, "inputs": i, "outputs": out}
                  for n, o, i, out in TINY_NODES], ["W1", "B1", "W2", "M"], ["x"], ["y"])


def tiny_model():
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("W1", (4, 3, 3, 3)), ("B1", (4,)), ("W2", (4, 4, 3, 3)),
                          ("M", (8, 8)))]
    nodes = [helper.make_node(o, i, out, name=n, **({"pads": [1, 1, 1, 1]} if o == "Conv" else {}))
             for n, o, i, out in TINY_NODES]
    g = helper.make_graph(nodes, "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 8, 8])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    p = os.path.join(TMP, "tiny.onnx")
    onnx.save(m, p)
    return p


def names(graph, rec):
    return {k["name"]: [graph.name(i) for i in k["nodes"]] for k in rec["kernels"]}


def ort_event(name, op, ts, dur):
    return {"cat": "Node", "name": name + "_kernel_time", "ts": ts, "dur": dur, "ph": "X",
            "args": {"op_name": op, "provider": "CPUExecutionProvider"}}


def ort_fixture():
    """Two runs of the tiny model as onnxruntime 1.2x profiles it (ORT_ENABLE_ALL,
    NCHWc): the first is the warm-up."""
    ev = [{"cat": "Session", "name": "model_loading_uri", "ts": 0, "dur": 50},
          {"cat": "Session", "name": "model_run", "ts": 100, "dur": 100},
          {"cat": "Session", "name": "model_run", "ts": 300, "dur": 100}]
    for base, scale in ((100, 9), (300, 1)):
        ev += [ort_event("r1_nchwc", "Conv", base + 1, 20 * scale),
               ort_event("ReorderOutput_token_4", "ReorderOutput", base + 22, 5 * scale),
               ort_event("c2_nchwc", "Conv", base + 30, 30 * scale),
               ort_event("ReorderOutput", "ReorderOutput", base + 61, 4 * scale),
               ort_event("matmul", "MatMul", base + 70, 10 * scale),
               {"cat": "Node", "name": "matmul_fence_before", "ts": base + 69, "dur": 1}]
    return ev


def close(a, b, tol=1e-9):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def test_ort_parser_nchwc_fusions_and_warmup():
    g = tiny_graph()
    rec = parse_ort_events(ort_fixture(), g, skip_runs=1)
    assert rec["runs"] == 1, rec["runs"]
    ks = names(g, rec)
    assert ks == {"r1_nchwc": ["conv1", "relu1"], "c2_nchwc": ["conv2", "add"],
                  "matmul": ["matmul"]}, ks
    by = {k["name"]: k for k in rec["kernels"]}
    assert close(by["r1_nchwc"]["ms"], 0.020) and close(by["matmul"]["ms"], 0.010), by
    assert sorted(g.name(i) for i in by["r1_nchwc"]["inferred"]) == ["conv1"]
    assert sorted(g.name(i) for i in by["c2_nchwc"]["inferred"]) == ["add"]
    assert sorted(u["name"] for u in rec["unmapped"]) == ["ReorderOutput",
                                                          "ReorderOutput_token_4"]
    assert all(u["why"] == "layout reorder" for u in rec["unmapped"])
    assert close(rec["total_ms"], 0.069) and close(rec["attributed_ms"], 0.060), rec
    assert close(rec["unattributed_ms"], 0.009)
    assert rec["no_kernel"] == [] and close(rec["run_ms"], 0.1)
    # without dropping the warm-up, the times are the mean of both runs
    both = parse_ort_events(ort_fixture(), g, skip_runs=0)
    assert both["runs"] == 2 and close(both["total_ms"], 0.069 * 5), both["total_ms"]


def test_ort_fusion_suffixes_and_consumer_absorb():
    # conv -> bn -> relu -> mm -> addb -> sig -> swish(addb, sig), as ORT_ENABLE_EXTENDED
    # runs it: FusedConv "conv", Gemm "mm/MatMulAddFusion", QuickGelu "swish/QuickGeluFusion/"
    g = Graph([{"name": "conv", "op": "Conv", "inputs": ["x", "w"], "outputs": ["c"]},
               {"name": "bn", "op": "BatchNormalization", "inputs": ["c", "s"], "outputs": ["b"]},
               {"name": "relu", "op": "Relu", "inputs": ["b"], "outputs": ["r"]},
               {"name": "mm", "op": "MatMul", "inputs": ["r", "W"], "outputs": ["m"]},
               {"name": "addb", "op": "Add", "inputs": ["m", "B"], "outputs": ["ad"]},
               {"name": "sig", "op": "Sigmoid", "inputs": ["ad"], "outputs": ["sg"]},
               {"name": "swish", "op": "Mul", "inputs": ["ad", "sg"], "outputs": ["y"]}],
              ["w", "s", "W", "B"], ["x"], ["y"])
    ev = [ort_event("conv", "FusedConv", 1, 10), ort_event("gemm_input_reshape", "Reshape", 2, 1),
          ort_event("mm/MatMulAddFusion", "Gemm", 3, 10),
          ort_event("swish/QuickGeluFusion/", "QuickGelu", 4, 10)]
    rec = parse_ort_events(ev, g)
    ks = names(g, rec)
    assert ks == {"conv": ["conv", "bn", "relu"], "mm/MatMulAddFusion": ["mm", "addb"],
                  "swish/QuickGeluFusion/": ["sig", "swish"]}, ks
    assert [u["name"] for u in rec["unmapped"]] == ["gemm_input_reshape"]
    assert rec["unmapped"][0]["why"] == "its name traces to no ONNX node"


def test_ort_shortcut_add_goes_to_the_conv_that_runs_last():
    # a ResNet downsampling block: both convs feed the Add only; ORT runs the
    # downsample first and fuses the Add (and Relu) into conv2
    g = Graph([{"name": "conv1", "op": "Conv", "inputs": ["x", "w1"], "outputs": ["c1"]},
               {"name": "down", "op": "Conv", "inputs": ["x", "w3"], "outputs": ["d"]},
               {"name": "conv2", "op": "Conv", "inputs": ["c1", "w2"], "outputs": ["c2"]},
               {"name": "add", "op": "Add", "inputs": ["c2", "d"], "outputs": ["a"]},
               {"name": "relu", "op": "Relu", "inputs": ["a"], "outputs": ["y"]}],
              ["w1", "w2", "w3"], ["x"], ["y"])
    ev = [ort_event("c1_nchwc", "Conv", 1, 10), ort_event("d_nchwc", "Conv", 2, 10),
          ort_event("c2_nchwc", "Conv", 3, 10)]
    ks = names(g, parse_ort_events(ev, g))
    assert ks == {"c1_nchwc": ["conv1"], "d_nchwc": ["down"],
                  "c2_nchwc": ["conv2", "add", "relu"]}, ks


def test_ort_conv_relu_chain_walks_back():
    # VGG-like conv_a -> relu_a -> conv_b -> relu_b: ORT names each Conv+Relu
    # kernel after the Relu's output; conv_b must not be absorbed by the kernel
    # before it (relu_a's output has conv_b as its only consumer)
    g = Graph([{"name": "conv_a", "op": "Conv", "inputs": ["x", "w1"], "outputs": ["ca"]},
               {"name": "relu_a", "op": "Relu", "inputs": ["ca"], "outputs": ["ra"]},
               {"name": "conv_b", "op": "Conv", "inputs": ["ra", "w2"], "outputs": ["cb"]},
               {"name": "relu_b", "op": "Relu", "inputs": ["cb"], "outputs": ["y"]}],
              ["w1", "w2"], ["x"], ["y"])
    ev = [ort_event("ra_nchwc", "Conv", 1, 10), ort_event("y_nchwc", "Conv", 2, 10)]
    ks = names(g, parse_ort_events(ev, g))
    assert ks == {"ra_nchwc": ["conv_a", "relu_a"], "y_nchwc": ["conv_b", "relu_b"]}, ks


def ov_run(scale):
    return [{"node_name": "x", "node_type": "Parameter", "exec_type": "unknown_f32",
             "real_time": 0.0, "status": "Status.NOT_RUN"},
            {"node_name": "x_abcd_acdb_conv1/WithoutBiases", "node_type": "Reorder",
             "exec_type": "ref", "real_time": 0.004 * scale, "status": "Status.EXECUTED"},
            {"node_name": "conv1/WithoutBiases", "node_type": "Convolution",
             "exec_type": "brgconv", "real_time": 0.020 * scale, "status": "Status.EXECUTED"},
            {"node_name": "relu1", "node_type": "Relu", "exec_type": "undef",
             "real_time": 0.0, "status": "Status.NOT_RUN"},
            {"node_name": "conv2", "node_type": "Convolution", "exec_type": "brgconv",
             "real_time": 0.010 * scale, "status": "Status.EXECUTED"},
            {"node_name": "add", "node_type": "Eltwise", "exec_type": "jit",
             "real_time": 0.002 * scale, "status": "Status.EXECUTED"},
            {"node_name": "y", "node_type": "FullyConnected", "exec_type": "jit",
             "real_time": 0.030 * scale, "status": "EXECUTED"}]


def test_ov_parser_originals_runs_and_names():
    g = tiny_graph()
    originals = {"conv1/WithoutBiases": ["conv1/WithoutBiases", "conv1", "relu1"],
                 "x_abcd_acdb_conv1/WithoutBiases": [], "conv2": ["conv2"], "add": ["add"],
                 "y": ["y"]}
    rec = parse_ov_runs([ov_run(1), ov_run(3)], g, originals)
    assert rec["runs"] == 2
    ks = names(g, rec)
    assert ks == {"conv1/WithoutBiases": ["conv1", "relu1"], "conv2": ["conv2"],
                  "add": ["add"], "y": ["matmul"]}, ks
    by = {k["name"]: k for k in rec["kernels"]}
    assert close(by["y"]["ms"], 0.060) and close(by["conv2"]["ms"], 0.020), by
    assert [u["name"] for u in rec["unmapped"]] == ["x_abcd_acdb_conv1/WithoutBiases"]
    assert rec["unmapped"][0]["why"] == "layout reorder"
    assert close(rec["total_ms"], 0.132) and close(rec["unattributed_ms"], 0.008)
    # without the runtime model: "/WithoutBiases" and the output tensor still trace,
    # but the Relu fused into conv1 is only known from the runtime model
    bare = names(g, parse_ov_runs([ov_run(1)], g, None))
    assert bare == {"conv1/WithoutBiases": ["conv1"], "conv2": ["conv2"], "add": ["add"],
                    "y": ["matmul"]}, bare


def ncc_fixture(nodes_of_k1=("conv1", "relu1", "conv2")):
    return {"latency_ms": {"median": 0.1}, "profile": {
        "runs": 20, "total_ms": 0.100, "peak_gflops": 100.0, "peak_gbps": 20.0,
        "kernels": [
            {"name": "k0_Conv_fused", "ops": ["Conv", "Relu", "Conv"], "nodes": list(nodes_of_k1),
             "shapes": ["1x4x8x8"], "ms": 0.050, "share": 0.5, "calls": 1, "gflops": 1.0,
             "gbps": 1.0, "roofline": 0.1, "ref": False},
            {"name": "k1_Add", "ops": ["Add"], "nodes": ["add"], "shapes": ["1x4x8x8"],
             "ms": 0.010, "share": 0.1, "calls": 1, "gflops": 0.1, "gbps": 1.0,
             "roofline": None, "ref": False},
            {"name": "k2_MatMul", "ops": ["MatMul"], "nodes": ["matmul"], "shapes": ["1x4x8x8"],
             "ms": 0.030, "share": 0.3, "calls": 1, "gflops": 0.5, "gbps": 1.0,
             "roofline": 0.2, "ref": True},
            {"name": "k3_layout", "ops": ["Transpose"], "nodes": ["ncc_layout_0"],
             "shapes": ["1x4x8x8"], "ms": 0.004, "share": 0.04, "calls": 1, "gflops": 0.0,
             "gbps": 1.0, "roofline": None, "ref": False},
            {"name": "k4_Reorder", "ops": ["Reorder"], "nodes": [""], "shapes": ["1x4x8x8"],
             "ms": 0.001, "share": 0.01, "calls": 1, "gflops": 0.0, "gbps": 1.0,
             "roofline": None, "ref": False, "kind": "copy"}]}}


def test_ncc_parser_contract():
    g = tiny_graph()
    rec = parse_ncc_profile(ncc_fixture(), g)
    assert names(g, rec) == {"k0_Conv_fused": ["conv1", "relu1", "conv2"], "k1_Add": ["add"],
                             "k2_MatMul": ["matmul"]}, names(g, rec)
    assert [(u["name"], u["why"]) for u in rec["unmapped"]] == [
        ("k3_layout", "none of its nodes (ncc_layout_0) is in the model"),
        ("k4_Reorder", "layout reorder")], rec["unmapped"]
    assert rec["runs"] == 20 and rec["peak_gflops"] == 100.0
    assert close(rec["total_ms"], 0.100) and close(rec["attributed_ms"], 0.090)
    assert close(rec["unattributed_ms"], 0.010)  # 0.005 unmapped + 0.005 host steps
    assert [k for k in rec["kernels"] if k["name"] == "k2_MatMul"][0]["ref"] is True
    # a list (several batches): the first; no "profile": this ncc has none
    assert parse_ncc_profile([ncc_fixture()], g)["runs"] == 20
    for doc in ({"latency_ms": {"median": 1.0}}, [], {"profile": None}):
        try:
            parse_ncc_profile(doc, g)
        except NoProfile as e:
            assert str(e) == NO_PROFILE
        else:
            raise AssertionError("no NoProfile for %r" % (doc,))


def test_alignment_merges_differing_fusions():
    g = tiny_graph()
    profiles = {"ncc": parse_ncc_profile(ncc_fixture(), g),
                "onnxruntime": parse_ort_events(ort_fixture(), g, skip_runs=1),
                "openvino": parse_ov_runs([ov_run(1)], g, {"conv1/WithoutBiases":
                                                           ["conv1", "relu1"]})}
    res = align(g, profiles, ["onnxruntime", "openvino"])
    rows = res["rows"]
    # ncc: {conv1,relu1,conv2}; ort: {conv1,relu1},{conv2,add}; ov: {conv1,relu1},{conv2},{add}
    assert [r["nodes"] for r in rows] == [["conv1", "relu1", "conv2", "add"], ["matmul"]], rows
    assert rows[0]["layer"] == "conv1 +3" and rows[0]["ops"] == "Conv+Relu+Conv+Add"
    assert rows[0]["kernels"] == {"ncc": 2, "onnxruntime": 2, "openvino": 3}, rows[0]
    assert close(rows[0]["ms"]["ncc"], 0.060) and close(rows[0]["ms"]["onnxruntime"], 0.050)
    assert close(rows[0]["ms"]["openvino"], 0.032)
    assert rows[0]["winner"] == "openvino" and close(rows[0]["ratio"], 0.060 / 0.032)
    assert rows[1]["winner"] == "onnxruntime" and close(rows[1]["ratio"], 3.0)
    assert rows[0]["reference_kernel"] == [] and rows[1]["reference_kernel"] == ["ncc"]
    for c, rec in profiles.items():
        assert close(sum(r["ms"][c] for r in rows), rec["attributed_ms"]), c
        t = res["totals"][c]
        assert close(t["attributed_ms"] + t["unattributed_ms"], t["total_ms"]), (c, t)
    assert res["wins"] == {"ncc": 0, "onnxruntime": 1, "openvino": 1}
    # --sort time: the largest row first
    assert [r["layer"] for r in align(g, profiles, ["onnxruntime"], "time")["rows"]] == \
        ["conv1 +3", "matmul"]


def _connected(nodes, kernels):
    """True when the nodes are linked into one piece by kernels inside them."""
    nodes = set(nodes)
    seen, todo = set(), [min(nodes)]
    while todo:
        a = todo.pop()
        if a in seen:
            continue
        seen.add(a)
        for ks in kernels:
            if a in ks:
                todo.extend(ks)
    return seen == nodes


def test_alignment_random_kernels_preserve_time():
    rng = random.Random(7)
    for trial in range(200):
        n = rng.randint(1, 14)
        profiles = {}
        for c in ("ncc", "onnxruntime", "openvino"):
            left = list(range(n))
            rng.shuffle(left)
            kernels = []
            while left:
                take = rng.randint(1, min(3, len(left)))
                if rng.random() < 0.15:  # a node this compiler ran no kernel for
                    left.pop()
                    continue
                kernels.append({"nodes": sorted(left[:take]), "ms": rng.uniform(0.0, 2.0)})
                left = left[take:]
            att = sum(k["ms"] for k in kernels)
            profiles[c] = {"kernels": kernels, "attributed_ms": att, "unattributed_ms": 0.5,
                           "total_ms": att + 0.5}
        g = Graph([{"name": "n%d" % i, "op": "Relu", "inputs": ["t%d" % i],
                    "outputs": ["t%d" % (i + 1)]} for i in range(n)], [], ["t0"])
        groups = partition(n, profiles)
        assert sorted(i for grp in groups for i in grp) == list(range(n)), groups
        allk = [set(k["nodes"]) for p in profiles.values() for k in p["kernels"]]
        for grp in groups:
            for ks in allk:  # no kernel is split between groups
                assert ks <= set(grp) or not (ks & set(grp)), (trial, grp, ks)
            assert len(grp) == 1 or _connected(grp, allk), (trial, grp)  # coarsest
        res = align(g, profiles, ["onnxruntime", "openvino"])
        for c, p in profiles.items():
            assert close(sum(r["ms"][c] for r in res["rows"]), p["attributed_ms"],
                         1e-9), (trial, c)
            assert sum(r["kernels"][c] for r in res["rows"]) == len(p["kernels"])


def test_vendor_runs_interleaved():
    log = []

    class Fake:
        def __init__(self, key):
            self.key = key

        def run(self, feeds, timed):
            log.append((self.key, timed))

        def record(self, warmup):
            return {"warmup": warmup, "timed": sum(1 for k, t in log if k == self.key and t)}

    recs = profile_vendors([Fake("a"), Fake("b")], {}, 2, 3)
    assert recs == {"a": {"warmup": 2, "timed": 3}, "b": {"warmup": 2, "timed": 3}}, recs
    assert log[:4] == [("a", False)] * 2 + [("b", False)] * 2, log
    assert [k for k, _ in log[4:]] == ["a", "b", "b", "a", "a", "b"], log


def layers(*args):
    p = subprocess.run([sys.executable, LAYERS] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


TINY = tiny_model()
FAST = ["--runs", "4", "--warmup", "1", "--threads", "1", "--no-pin", "--quiet"]


def _ncc_args():
    """Run the real ncc when it has --profile, else read the contract fixture."""
    ncc = os.environ.get("NCC") or os.path.join(SRC, "build", "ncc")
    if os.path.isfile(ncc):
        p = subprocess.run([ncc, "bench", TINY, "--profile", "--json", "--iters", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        if p.returncode == 0 and '"profile"' in p.stdout.decode():
            return ["--ncc", ncc], True
    fx = os.path.join(TMP, "ncc_profile.json")
    with open(fx, "w") as f:
        json.dump(ncc_fixture(), f)
    return ["--ncc-json", fx], False


def test_end_to_end_live_vendors():
    ncc_args, live_ncc = _ncc_args()
    out_dir = os.path.join(TMP, "out")
    rc, out, err = layers(TINY, "--against", "ort,openvino", "--json", "--out", out_dir,
                          *(ncc_args + FAST))
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["columns"] == ["ncc", "onnxruntime", "openvino"]
    assert doc["inputs"] == {"x": [1, 3, 8, 8]} and doc["settings"]["runs"] == 4
    for c in doc["columns"]:
        assert doc["compilers"][c]["status"] == "ok", (c, doc["compilers"][c])
    rows = doc["rows"]
    covered = [n for r in rows for n in r["nodes"]]
    assert sorted(covered) == sorted(n for n, _, _, _ in TINY_NODES), rows
    assert len(covered) == len(set(covered))
    for c in doc["columns"]:
        rec, t = doc["compilers"][c], doc["totals"][c]
        assert close(sum(r["ms"][c] for r in rows), t["attributed_ms"], 1e-6), c
        assert close(t["attributed_ms"] + t["unattributed_ms"], t["total_ms"], 1e-6), c
        # onnxruntime and OpenVINO time nodes in whole microseconds: on a fast
        # machine every node of this tiny model can read 0. ncc's profile is
        # in ns on every target (ref included: a no-LLVM build profiles it)
        assert (t["total_ms"] > 0 if c == "ncc" else t["total_ms"] >= 0), (c, t)
        assert all(k["ms"] >= 0 for k in rec["kernels"]), (c, rec["kernels"])
        # every node of a kernel is in the row that holds the kernel's first node
        for k in rec["kernels"]:
            row = [r for r in rows if k["nodes"][0] in r["nodes"]][0]
            assert set(k["nodes"]) <= set(row["nodes"]), (c, k, row)
    # onnxruntime and OpenVINO both run the conv with its Relu as one kernel
    first = rows[0]["nodes"]
    assert first[:2] == ["conv1", "relu1"], rows
    for r in rows:
        best = min(r["ms"].values())
        if r["winner"] is not None:
            assert r["ms"][r["winner"]] == best
        vend = min(r["ms"]["onnxruntime"], r["ms"]["openvino"])
        if vend > 0:
            assert close(r["ratio"], r["ms"]["ncc"] / vend, 1e-9), r
    with open(os.path.join(out_dir, "layers.json")) as f:
        assert json.load(f)["rows"] == rows
    md = open(os.path.join(out_dir, "layers.md")).read()
    assert "| layer | ops | ncc ms | ort ms | ov ms | winner | ncc/best |" in md, md
    if not live_ncc:
        assert doc["compilers"]["ncc"]["source"].endswith("ncc_profile.json")
    # the text table and --sort time
    rc, txt, err = layers(TINY, "--sort", "time", *(ncc_args + FAST))
    assert rc == 0, err
    assert "winner" in txt and "total of the rows" in txt and "unattributed" in txt, txt
    body = [l for l in txt.splitlines() if l.startswith(("conv", "matmul", "add", "relu"))]
    times = [max(float(v.rstrip("r")) for v in l.split()[-5:-2]) for l in body]
    assert times == sorted(times, reverse=True) and times, (body, txt)
    if not live_ncc:  # the fixture's MatMul ran on a reference kernel
        mm = [l for l in body if l.startswith("matmul")][0]
        assert mm.split()[-5].endswith("r") and "reference (unoptimised) kernel" in txt, txt


def test_ncc_without_profile_says_so():
    ncc = os.environ.get("NCC") or os.path.join(SRC, "build", "ncc")
    if not os.path.isfile(ncc):
        return
    rc, out, err = layers(TINY, "--against", "ort", "--ncc", ncc, "--json", *FAST)
    assert rc == 0, err
    rec = json.loads(out)["compilers"]["ncc"]
    if rec["status"] != "ok":  # until `ncc bench --profile` exists
        assert rec == {"status": "skipped", "reason": NO_PROFILE}, rec
        rc, txt, err = layers(TINY, "--against", "ort", "--ncc", ncc, *FAST)
        assert "note: ncc: " + NO_PROFILE in txt and " n/a " in txt, txt


def test_usage_errors_one_line():
    for args, want in (([os.path.join(TMP, "none.onnx")], "no such model file"),
                       ([TINY, "--against", "tvm"], "unknown compiler 'tvm'"),
                       ([TINY, "--runs", "0"], "--runs must be at least 1"),
                       ([TINY, "--ncc-json", os.path.join(TMP, "nope.json")], "no such file"),
                       ([TINY, "--frobnicate"], "unrecognized arguments")):
        rc, out, err = layers(*args)
        lines = [l for l in err.splitlines() if l.strip()]
        assert rc == 1 and len(lines) == 1, (args, rc, err)
        assert lines[0].startswith("bench/layers: error: ") and want in lines[0], lines


def main():
    return run_cases(discovered_cases(globals()))


if __name__ == "__main__":
    sys.exit(main())
