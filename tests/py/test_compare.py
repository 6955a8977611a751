#!/usr/bin/env python3
"""tests/py/test_compare.py — bench/compare (the user's ONNX model against
the vendors), label `compare` (tests/compare.cmake).

  - a small generated model (two outputs, symbolic batch) through ncc and
    onnxruntime at two batch sizes, few rounds: the JSON object's structure,
    every check passing, lo <= median <= hi, a complete ratio table whose
    ratios are the medians of the paired per-round ratios (computed here
    from samples_ms, so an inverted ratio fails), --out files, the text
    report's tables with their how-to-read lines;
  - ncc is timed in-process through libncc exactly like onnxruntime (same
    timing record, one sample per round on both sides, ncc's kernel
    figures) when libncc loads here (a Release build); with
    NCC_HARNESS_INPROCESS=0 (or a sanitizer build) the command-line
    fallback, still interleaved and paired, is labelled in the JSON, the
    notes, the compiler line and the latency table;
  - the ranking logic on deterministic self-timed rows: a bimodal row is
    noisy and not ranked, a row with one outlier among its rounds is
    ranked (robust cv), the start of each round rotates;
  - a planted mismatch (NCC_COMPARE_TEST_PERTURB scales one compiler's
    outputs) is marked, left out of the ranking, exit 0, and --strict
    exits 3;
  - the oracle is onnxruntime with graph optimisations off, outside ncc:
    it is the reference of every row; where it cannot run, a vendor is,
    never ncc (ncc's rows are then "unchecked", not ok);
  - --outputs preallocated: onnxruntime IOBinding and ncc run_into, each
    recorded per row and in env.timing; a binding that never writes its
    outputs is caught (the bound call's outputs are the checked ones);
  - usage errors exit 1 with one "bench/compare: error:" line: a missing
    or unreadable model, a symbolic non-batch dim without --dim (the line
    names the flag), an unknown compiler;
  - integer inputs get values in [0, 100); a static model runs once at its
    own batch with a note.

Uses $NCC (may be the suite's ASan build: tiny model, few rounds).  Prints
"N passed, M failed"; exit 1 on a failure, 77 when numpy/onnx/onnxruntime
are missing.
"""
import json
import os
import subprocess
import sys
import tempfile

from nccutil import SRC, discovered_cases, run_cases  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
COMPARE = os.path.join(SRC, "bench", "compare")

from harness import compare as cmpmod  # noqa: E402
from harness import compare_report  # noqa: E402
from harness import measure  # noqa: E402
from harness import stats  # noqa: E402
from harness.compare_model import ModelInfo  # noqa: E402

TMP = tempfile.mkdtemp(prefix="ncc-test-compare-")
FAST = ["--rounds", "6", "--warmup", "0", "--threads", "1", "--no-pin",
        "--quiet"]


def save(model, name):
    model.ir_version = 8
    p = os.path.join(TMP, name)
    onnx.save(model, p)
    return p


def mlp_model():
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal((8,)).astype(np.float32), "B")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]),
             helper.make_node("Add", ["h", "B"], ["h2"]),
             helper.make_node("Relu", ["h2"], ["y"]),
             helper.make_node("Sigmoid", ["h2"], ["z"])]
    g = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 8])], [w, b])
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "mlp.onnx")


def seq_model():
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "seq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "seq", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "seq", 4])])
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "seq.onnx")


def static_ids_model():
    emb = numpy_helper.from_array(np.arange(400, dtype=np.float32).reshape(100, 4), "E")
    g = helper.make_graph(
        [helper.make_node("Gather", ["E", "ids"], ["y"])], "ids",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5, 4])], [emb])
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "ids.onnx")


def compare(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([sys.executable, COMPARE] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=e, timeout=600)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def one_error_line(rc, err, want=None):
    lines = [l for l in err.splitlines() if l.strip()]
    assert rc == 1, (rc, err)
    assert len(lines) == 1 and lines[0].startswith("bench/compare: error: "), err
    if want:
        assert want in lines[0], (want, lines[0])


MLP = mlp_model()


def run_json(*extra, env=None):
    rc, out, err = compare(MLP, "--against", "ort", "--ncc-configs", "ref", "--batch", "1,3",
                           "--json", *(FAST + list(extra)), env=env)
    return rc, (json.loads(out) if out.strip().startswith("{") else None), err


def test_json_structure_and_statistics():
    outdir = os.path.join(TMP, "out")
    rc, doc, err = run_json("--out", outdir)
    assert rc == 0, err
    for k in ("model", "settings", "inputs", "outputs", "compilers", "batches", "env"):
        assert k in doc, k
    assert doc["settings"]["threads"] == 1 and doc["env"]["threads"] == 1
    assert doc["settings"]["pinned_cpus"] is None  # --no-pin
    assert doc["outputs"] == ["y", "z"]
    assert "standard normal" in doc["inputs"][0]["data"]
    assert [b["batch"] for b in doc["batches"]] == [1, 3]
    for res in doc["batches"]:
        assert res["inputs"] == {"x": [res["batch"], 16]}
        # the oracle outside ncc: onnxruntime with graph optimisations off,
        # run for the check only (not asked for with --against, so not timed)
        assert res["reference"] == "onnxruntime-noopt"
        assert [r["compiler"] for r in res["rows"]] == ["onnxruntime-noopt", "onnxruntime",
                                                        "ncc:ref"]
        ref = res["rows"][0]
        assert ref["check"]["ok"] and "samples_ms" not in ref, ref
        timed = [r for r in res["rows"] if r["compiler"] != "onnxruntime-noopt"]
        keys = [r["compiler"] for r in timed]
        for r in timed:
            assert r["status"] == "ok", r
            assert r["check"]["ok"] and len(r["check"]["outputs"]) == 2
            assert r["check"]["reference"] == "onnxruntime-noopt"
            assert r["timing"]["outputs_policy"] == "fresh", r["timing"]
            assert r["compile_ms"] == r["build_ms"] + r["first_run_ms"]
            # 6 rounds, plus steps of 3 while a row's CI is wide or it is
            # noisy (measure.time_group: up to (1 + MAX_EXTRA_FACTOR) * 6)
            il = r["interleave"]
            cap = (1 + measure.MAX_EXTRA_FACTOR) * 6
            assert 6 <= il["rounds"] <= cap and il["extra_rounds"] == il["rounds"] - 6 and \
                il["extra_rounds"] % 3 == 0, il
            assert len(r["samples_ms"]) == il["rounds"] == timed[0]["interleave"]["rounds"]
            lo, hi = r["latency_ms"]["ci"]
            assert lo <= r["latency_ms"]["median"] <= hi, r["latency_ms"]
            assert abs(r["latency_ms"]["median"] - stats.median(r["samples_ms"])) < 1e-12
            assert r["robust_cv"] == stats.robust_cv(r["samples_ms"])
            assert r["noisy"] == stats.noisy(r["cv"], r["samples_ms"])
            assert r["build_ms"] > 0 and r["first_run_ms"] > 0, r
        n = len(keys)
        assert len(res["ratios"]) == n * (n - 1)
        samples = {r["compiler"]: r["samples_ms"] for r in timed}
        for e in res["ratios"]:
            want = stats.median([a / b for a, b in zip(samples[e["a"]], samples[e["b"]])])
            assert abs(e["ratio"] - want) <= 1e-9 * want, (e, want)
            assert e["ci"][0] <= e["ratio"] <= e["ci"][1]
            assert e["verdict"] == stats.verdict_ratio(*e["ci"])
        fv = res["fastest_vendor"]
        if fv:
            assert fv == "onnxruntime"
            assert [e["a"] for e in res["vs_fastest_vendor"]] == ["ncc:ref"]
            e = res["vs_fastest_vendor"][0]
            assert "break_even_runs" in e
            if e["verdict"] != "faster":
                assert e["break_even_runs"] is None
    assert doc["settings"]["oracle"].startswith("onnxruntime, ORT_DISABLE_ALL")
    et = doc["env"]["timing"]
    assert et["outputs_policy"] == "fresh" and set(et["compilers"]) == {"onnxruntime", "ncc:ref"}
    assert "outputs fresh per call" in et["compilers"]["onnxruntime"], et
    assert os.path.isfile(os.path.join(outdir, "report.md"))
    with open(os.path.join(outdir, "results.json")) as f:
        assert json.load(f)["batches"][0]["batch"] == 1


def _inprocess_expected():
    """True when libncc can be loaded here (not a sanitizer build)."""
    from harness import ncclib
    if os.environ.get("NCC_HARNESS_INPROCESS", "1") == "0" or not os.environ.get("NCC"):
        return False
    try:
        ncclib.NccLib(ncclib.shared_library(os.environ["NCC"], os.path.join(TMP, "lib")))
        return True
    except ncclib.Unavailable:
        return False


def _ncc_row(doc, b=0):
    return _row(doc, "ncc:ref", b)


def _row(doc, key, b=0):
    return [r for r in doc["batches"][b]["rows"] if r["compiler"] == key][0]


def test_ncc_in_process_like_the_vendors():
    rc, doc, err = run_json("--batch", "2")
    assert rc == 0, err
    rec = [c for c in doc["compilers"] if c["key"] == "ncc:ref"][0]
    row, ort = _ncc_row(doc), _row(doc, "onnxruntime")
    if not _inprocess_expected():  # the suite's sanitizer build: the fallback's checks
        assert rec["timing"]["why"], rec
        return
    assert rec["timing"]["where"] == "in-process" and "libncc" in rec["timing"]["via"], rec
    assert not any("ncc bench` process" in n for n in doc["notes"]), doc["notes"]
    for r in (row, ort):
        t = r["timing"]
        assert t["where"] == "in-process" and t["outputs"] == "fresh per call", t
        assert t["rewarm_per_turn"] == 1 and t["warmup"] == 0, t
    k = row["ncc"]
    assert k["kernels"] + k["reference_kernels"] >= 1 and k["module_threads"] >= 1, row
    assert len(row["samples_ms"]) == len(ort["samples_ms"]) == row["interleave"]["rounds"]


def test_ncc_command_line_fallback():
    env = {"NCC_HARNESS_INPROCESS": "0"}
    rc, doc, err = run_json("--batch", "2", env=env)
    assert rc == 0, err
    rec = [c for c in doc["compilers"] if c["key"] == "ncc:ref"][0]
    assert "NCC_HARNESS_INPROCESS=0" in rec["timing"]["why"], rec
    assert any("ncc bench` process per round" in n for n in doc["notes"]), doc["notes"]
    row, ort = _ncc_row(doc), _row(doc, "onnxruntime")
    assert row["status"] == "ok" and row["check"]["ok"], row
    assert row["timing"]["where"] == "ncc bench subprocess per round", row["timing"]
    assert row["timing"]["rewarm_per_turn"] == 0 and ort["timing"]["where"] == "in-process"
    # still interleaved, one sample per round on both sides: paired ratios
    assert len(row["samples_ms"]) == len(ort["samples_ms"]) == row["interleave"]["rounds"]
    rc, out, err = compare(MLP, "--against", "ort", "--ncc-configs", "ref", *FAST, env=env)
    assert rc == 0, err
    assert "FALLBACK: ncc bench subprocess per round" in out, out
    lat = out.split("\nlatency (ms)")[1]
    assert [l for l in lat.splitlines() if l.split()[1:2] == ["ncc:ref"]
            and "ncc bench process per round" in l], lat


def test_text_report():
    rc, out, err = compare(MLP, "--against", "ort", "--ncc-configs", "ref", *FAST)
    assert rc == 0, err
    for title in ("outputs against onnxruntime", "compile time (ms)", "latency (ms)",
                  "ratios (latency of A / latency of B", "threads  1, not pinned"):
        assert title in out, title
    assert out.count("how to read:") >= 4
    assert not [l for l in out.splitlines() if "MISMATCH" in l and "how to read" not in l]


def test_mismatch_is_caught():
    env = {"NCC_COMPARE_TEST_PERTURB": "ncc:ref:1.01"}
    rc, doc, err = run_json(env=env)
    assert rc == 0, err
    for res in doc["batches"]:
        row = [r for r in res["rows"] if r["compiler"] == "ncc:ref"][0]
        assert row["status"] == "mismatch" and not row["check"]["ok"], row
        assert row["check"]["max_abs_err"] > 0
        assert "ncc:ref" not in res["ranking"] and row["ranked"] is False
        assert len(row["samples_ms"]) == row["interleave"]["rounds"] >= 6  # still timed
    rc, doc, err = run_json("--strict", env=env)
    assert rc == 3 and doc["exit_status"] == 3, (rc, err)
    rc, out, err = compare(MLP, "--against", "ort", "--ncc-configs", "ref", "--strict",
                           *FAST, env=env)
    assert rc == 3, (rc, out)
    assert [l for l in out.splitlines() if l.split()[:2] == ["ncc:ref", "MISMATCH"]], out


CALLS = []


class FakeEngine:
    """Deterministic latencies and compile times, for the ranking logic: a
    self-timed measure.Point whose k-th call reports lat[k % len(lat)]."""

    def __init__(self, lat, compile_ms, kind="vendor", out=1.0):
        self.lat, self.kind, self.out = lat, kind, out
        self.compile_ms = compile_ms
        self.r = 0

    def own_point(self, model, feeds):
        res = {"build_ms": self.compile_ms, "first_run_ms": 0.0,
               "compile_ms": self.compile_ms, "timing": {"where": "test"}}
        return (measure.Point(self.call, res, self_timed=True),
                [np.full((2, 2), self.out, np.float32)])

    def call(self):
        v = self.lat[self.r % len(self.lat)]
        self.r += 1
        CALLS.append(self)
        return v


def test_ranking_fastest_vendor_break_even():
    class Info:
        path, outputs = "m.onnx", ["y"]
    engines = [("onnxruntime", FakeEngine([10.0, 10.1, 9.9], 50.0)),
               ("openvino", FakeEngine([8.0, 8.1, 7.9], 60.0)),
               ("jumpy", FakeEngine([1.0, 20.0], 1.0)),          # bimodal: noisy
               # one outlier in 12 rounds: plain cv far above 0.10, robust cv 0: ranked
               ("spiky", FakeEngine([12.0] * 11 + [120.0], 1.0)),
               ("wrong", FakeEngine([2.0, 2.1], 1.0, out=2.0)),  # fast but mismatching
               ("ncc:cpu-O2", FakeEngine([5.0, 5.05, 4.95], 160.0, kind="ncc"))]
    kinds = {k: e.kind for k, e in engines}
    del CALLS[:]
    opts = {"reference": "onnxruntime", "timed": set(kinds), "rounds": 12,
            "warmup": 0, "adaptive": False, "rtol": 1e-3, "atol": 1e-4, "kinds": kinds}
    res = cmpmod.measure_batch(engines, Info(), 1, {"x": np.zeros((1, 2), np.float32)}, opts,
                               lambda s: None)
    rows = {r["compiler"]: r for r in res["rows"]}
    assert rows["jumpy"]["noisy"] and rows["wrong"]["status"] == "mismatch"
    assert rows["spiky"]["cv"] > stats.CV_RANK_MAX and rows["spiky"]["robust_cv"] == 0.0
    assert not rows["spiky"]["noisy"] and rows["spiky"]["ranked"], rows["spiky"]
    assert res["ranking"] == ["ncc:cpu-O2", "openvino", "onnxruntime", "spiky"], res["ranking"]
    assert res["fastest_vendor"] == "openvino"
    vs = {e["a"]: e for e in res["vs_fastest_vendor"]}
    assert vs["ncc:cpu-O2"]["verdict"] == "faster" and vs["onnxruntime"]["verdict"] == "slower"
    # ncc compiles 100 ms longer and gains ~3 ms a run: 34 runs to break even
    assert vs["ncc:cpu-O2"]["break_even_runs"] == 34, vs["ncc:cpu-O2"]
    assert vs["onnxruntime"]["break_even_runs"] is None
    r = [e for e in res["ratios"] if (e["a"], e["b"]) == ("ncc:cpu-O2", "onnxruntime")][0]
    assert abs(r["ratio"] - 0.5) < 0.01 and r["verdict"] == "faster", r
    # interleaved: every round runs each compiler once, round r starting with
    # the r-th (mod 5), so no compiler is always first after another's block
    assert all(len(rows[k]["samples_ms"]) == 12 for k in kinds)
    n = len(engines)
    firsts = [CALLS[i * n] for i in range(12)]
    assert firsts == [engines[r % n][1] for r in range(12)]
    assert all(len(set(map(id, CALLS[i * n:(i + 1) * n]))) == n for i in range(12))
    # the reports render every table, the fastest-vendor one included
    doc = {"model": "m.onnx", "settings": {"threads": 2, "pinned_cpus": [0, 1], "rounds": 12,
                                           "adaptive_rounds": False, "warmup": 0,
                                           "rtol": 1e-3,
                                           "atol": 1e-4},
           "env": {"allowed_cpus": 2, "cpu_model": "test"}, "inputs": [], "compilers": [],
           "batches": [res]}
    text = compare_report.text(doc)
    assert "against the fastest vendor (openvino)" in text and "break-even runs" in text
    assert "threads  2, pinned to CPUs 0,1" in text
    line = [l for l in text.splitlines() if l.split()[:1] == ["ncc:cpu-O2"] and "34" in l]
    assert line and "faster" in line[0], text
    assert "| ncc:cpu-O2 |" in compare_report.markdown(doc)


def test_bad_model_and_usage():
    rc, out, err = compare(os.path.join(TMP, "nope.onnx"))
    one_error_line(rc, err, "no such model file")
    junk = os.path.join(TMP, "junk.onnx")
    with open(junk, "wb") as f:
        f.write(b"\x08\x07not a model\xff\xfe" * 10)
    rc, out, err = compare(junk)
    one_error_line(rc, err)
    rc, out, err = compare(MLP, "--against", "nosuch")
    one_error_line(rc, err, "unknown compiler 'nosuch'")
    rc, out, err = compare(MLP, "--batch", "0")
    one_error_line(rc, err, "--batch")
    rc, out, err = compare("--bogus-flag")
    one_error_line(rc, err)


def test_model_nobody_runs():
    g = helper.make_graph(
        [helper.make_node("NoSuchOp", ["x"], ["y"])], "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    bad = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "bad.onnx")
    rc, out, err = compare(bad, "--against", "ort", "--ncc-configs", "ref", *FAST)
    one_error_line(rc, err, "no compiler could run")
    assert "NoSuchOp" in err


def test_help():
    rc, out, err = compare("--help")
    assert rc == 0 and not err, (rc, err)
    for want in ("exit status:", "3  --strict", "--threads", "--dim NAME=VALUE", "95% confidence"):
        assert want in out, want


def test_symbolic_dim_needs_dim_flag():
    seq = seq_model()
    rc, out, err = compare(seq, "--against", "ort", "--ncc-configs", "none", *FAST)
    one_error_line(rc, err, "--dim seq=VALUE")
    rc, out, err = compare(seq, "--against", "ort", "--ncc-configs", "none", "--dim", "seq=7",
                           "--json", *FAST)
    assert rc == 0, err
    assert json.loads(out)["batches"][0]["inputs"] == {"x": [1, 7, 4]}


def test_int_inputs_and_static_batch():
    ids = static_ids_model()
    info = ModelInfo(ids)
    feeds = info.feeds(1, {}, {}, 0)
    v = feeds["ids"]
    assert v.dtype == np.int64 and v.shape == (3, 5) and v.min() >= 0 and v.max() < 100
    rc, out, err = compare(ids, "--against", "ort", "--ncc-configs", "ref", "--batch", "1,8",
                           "--json", *FAST)
    assert rc == 0, err
    doc = json.loads(out)
    assert [b["batch"] for b in doc["batches"]] == [3]
    assert any("--batch 1,8 ignored" in n for n in doc["notes"]), doc["notes"]
    assert "integers in [0, 100)" in doc["inputs"][0]["data"]
    assert all(r["check"]["ok"] for r in doc["batches"][0]["rows"])


def test_two_inputs_int_and_float():
    emb = numpy_helper.from_array(np.arange(400, dtype=np.float32).reshape(100, 4) / 400, "E")
    g = helper.make_graph(
        [helper.make_node("Gather", ["E", "ids"], ["g"]),
         helper.make_node("Add", ["g", "x"], ["out/y"]),
         helper.make_node("Neg", ["x"], ["out_y"])], "two",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 5]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 5, 4])],
        [helper.make_tensor_value_info("out/y", TensorProto.FLOAT, ["N", 5, 4]),
         helper.make_tensor_value_info("out_y", TensorProto.FLOAT, ["N", 5, 4])], [emb])
    two = save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), "two.onnx")
    rc, out, err = compare(two, "--against", "ort", "--ncc-configs", "ref", "--batch", "2",
                           "--json", *FAST)
    assert rc == 0, err
    doc = json.loads(out)
    res = doc["batches"][0]
    assert res["inputs"] == {"ids": [2, 5], "x": [2, 5, 4]}
    assert all(r["check"]["ok"] for r in res["rows"]), res["rows"]
    assert [r["compiler"] for r in res["rows"]] == ["onnxruntime-noopt", "onnxruntime",
                                                    "ncc:ref"]
    # ncc run writes out_y.npy and out_y_1.npy: read back in the right order
    assert [o["name"] for o in res["rows"][2]["check"]["outputs"]] == ["out/y", "out_y"]
    # the same model with every output bound once (two inputs, two outputs)
    rc, out, err = compare(two, "--against", "ort,openvino", "--ncc-configs", "ref", "--batch",
                           "2", "--outputs", "preallocated", "--json", *FAST)
    assert rc == 0, err
    res = json.loads(out)["batches"][0]
    assert all(r["check"]["ok"] for r in res["rows"]), res["rows"]


def test_oracle_outside_ncc_only():
    """The yardstick is never ncc: with the oracle and every vendor failing,
    ncc's rows are "unchecked" (not ok; --strict fails); with the oracle
    failing, a vendor that ran is the yardstick."""
    class Info:
        path, outputs = "m.onnx", ["y"]

    class Broken(FakeEngine):
        def own_point(self, model, feeds):
            raise RuntimeError("cannot run this model")
    feeds = {"x": np.zeros((1, 2), np.float32)}
    engines = [("onnxruntime-noopt", Broken([1.0], 1.0)),
               ("ncc:ref", FakeEngine([2.0], 1.0, kind="ncc", out=3.0)),
               ("ncc:cpu-O2", FakeEngine([1.0], 1.0, kind="ncc", out=3.0))]
    kinds = {k: e.kind for k, e in engines}
    opts = {"reference": "onnxruntime-noopt", "timed": {"ncc:ref", "ncc:cpu-O2"}, "rounds": 3,
            "warmup": 0, "adaptive": False, "rtol": 1e-3, "atol": 1e-4, "kinds": kinds}
    res = cmpmod.measure_batch(engines, Info(), 1, feeds, opts, lambda s: None)
    rows = {r["compiler"]: r for r in res["rows"]}
    assert res["reference"] is None, res["reference"]
    for k in ("ncc:ref", "ncc:cpu-O2"):
        assert rows[k]["status"] == "unchecked" and not rows[k]["check"]["ok"], rows[k]
        assert not rows[k]["ranked"]
    engines.insert(1, ("openvino", FakeEngine([1.5], 1.0, out=1.0)))
    kinds["openvino"] = "vendor"
    res = cmpmod.measure_batch(engines, Info(), 1, feeds, opts, lambda s: None)
    rows = {r["compiler"]: r for r in res["rows"]}
    assert res["reference"] == "openvino", res["reference"]
    assert rows["ncc:ref"]["status"] == "mismatch", rows["ncc:ref"]


def test_preallocated_outputs():
    """--outputs preallocated: onnxruntime through IOBinding, ncc through
    ncc_module_run_into (in-process) or flagged not symmetric (the command
    line), each recorded per row and in env.timing; the bound call's
    outputs are the ones checked, so a binding that never writes them is a
    mismatch."""
    rc, doc, err = run_json("--outputs", "preallocated", "--batch", "2")
    assert rc == 0, err
    assert doc["settings"]["outputs"] == "preallocated"
    ort, row = _row(doc, "onnxruntime"), _ncc_row(doc)
    assert ort["status"] == "ok" and row["status"] == "ok", (ort, row)
    assert "IOBinding" in ort["timing"]["outputs"] and ort["timing"]["symmetric"], ort["timing"]
    if row["timing"]["where"] == "in-process":
        assert "ncc_module_run_into" in row["timing"]["outputs"], row["timing"]
    et = doc["env"]["timing"]
    assert et["outputs_policy"] == "preallocated" and "IOBinding" in et["compilers"]["onnxruntime"]
    if not _inprocess_expected():
        assert "NOT symmetric" in et["compilers"]["ncc:ref"], et
    # a planted binding bug: outputs bound but never written
    from harness.compare_engines import OrtEngine
    eng = OrtEngine(1)
    eng.load()
    feeds = ModelInfo(MLP).feeds(2, {}, {}, 0)
    saved = OrtEngine.bind_outputs

    def unwritten(self, sess, prep, out):
        run, how = saved(self, sess, prep, out)
        zeros = [np.zeros_like(np.asarray(o)) for o in out]
        return (lambda: (run(), zeros)[1]), how
    OrtEngine.bind_outputs = unwritten
    try:
        p, outs = cmpmod.prepare(eng, MLP, feeds, "preallocated")
        p.release()
    finally:
        OrtEngine.bind_outputs = saved
    assert all(not np.any(o) for o in outs), "the bound call's outputs are the ones checked"
    p, good = cmpmod.prepare(eng, MLP, feeds, "preallocated")
    p.release()
    assert all(np.any(o) for o in good)


def test_input_file():
    x = np.full((2, 16), 0.5, dtype=np.float32)
    p = os.path.join(TMP, "x.npy")
    np.save(p, x)
    rc, out, err = compare(MLP, "--against", "ort", "--ncc-configs", "none", "--batch", "4",
                           "--input", "x=" + p, "--json", *FAST)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["batches"][0]["inputs"] == {"x": [4, 16]}
    assert p in doc["inputs"][0]["data"]


def main():
    return run_cases(discovered_cases(globals()))


if __name__ == "__main__":
    sys.exit(main())
