#!/usr/bin/env python3
"""tests/py/test_precision_table.py — bench/precision/table.py (the precision table),
label `compare` (tests/compare.cmake).

  - accuracy() against hand-computed answers: identical outputs (cosine 1,
    error 0, top-1 1.0), a scaled output (cosine 1, relative error 1), a
    flipped class on one row of two (top-1 0.5), a shape mismatch (an
    error, not a number);
  - end to end on a small conv model and its QDQ file made here with
    onnxruntime.quantization: every f32 and int8 row of ncc and
    onnxruntime is "ok" with a latency, the int8 rows carry a speed-up
    over their own f32 row whose CI holds its ratio, their accuracy is
    int8's (cosine above 0.98, error below 0.2 but not 0: a row that runs
    the f32 model instead would show 0), ncc's bf16 row is bf16's (error
    above 0, below 0.05: the precision flag reached the pipeline), the bf16
    row of onnxruntime is skipped with its reason, --json holds the rows.

Uses $NCC. Prints "N passed, M failed"; exit 1 on a failure, 77 when
numpy/onnx/onnxruntime are missing.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as T, helper as h, numpy_helper as nh  # noqa: E402

sys.path.insert(0, nccutil.BENCH)
from harness.precision import accuracy  # noqa: E402

NCC = nccutil.find_ncc()
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail and not ok else ""))


def test_accuracy():
    a = [[np.array([[1.0, 2.0, 3.0], [3.0, 1.0, 0.0]])]]
    r = accuracy(a, a)
    check("accuracy.identical", r["cosine_min"] > 0.999999 and r["rel_err_max"] == 0 and
          r["top1_agree"] == 1.0, str(r))
    r = accuracy(a, [[a[0][0] * 2]])
    check("accuracy.scaled", abs(r["cosine_min"] - 1) < 1e-9 and abs(r["rel_err_max"] - 1) < 1e-9,
          str(r))
    g = [[np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 3.0]])]]
    r = accuracy(a, g)
    check("accuracy.top1_half", r["top1_agree"] == 0.5 and r["top1_n"] == 2, str(r))
    r = accuracy(a, [[np.zeros((3, 3))]])
    check("accuracy.shape_mismatch", r["cosine_min"] is None and "error" in r, str(r))


def make_models(d):
    r = np.random.default_rng(0)
    w1 = (r.standard_normal((16, 3, 3, 3)) * 0.3).astype(np.float32)
    w2 = (r.standard_normal((8, 16, 3, 3)) * 0.1).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], pads=[1] * 4),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1] * 4),
             h.make_node("GlobalAveragePool", ["c2"], ["g"]),
             h.make_node("Flatten", ["g"], ["y"])]
    g = h.make_graph(nodes, "p", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(w1, "w1"), nh.from_array(w2, "w2")])
    f32 = os.path.join(d, "m.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), f32)
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.i = 0

        def get_next(self):
            self.i += 1
            if self.i > 4:
                return None
            return {"x": np.random.default_rng(self.i).standard_normal((1, 3, 16, 16))
                    .astype(np.float32)}
    q = os.path.join(d, "m_int8.onnx")
    quantize_static(f32, q, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return f32, q


def test_end_to_end():
    with tempfile.TemporaryDirectory() as d:
        f32, q = make_models(d)
        js = os.path.join(d, "rows.json")
        p = subprocess.run([sys.executable, os.path.join(nccutil.BENCH, "precision", "table.py"), f32,
                            "--int8", q, "--against", "onnxruntime", "--rounds", "3",
                            "--warmup", "1", "--accuracy-inputs", "2", "--ncc", NCC,
                            "--json", js], capture_output=True, text=True, timeout=900)
        check("e2e.exit", p.returncode == 0, p.stderr[-500:])
        if p.returncode:
            return
        rows = {r["key"]: r for r in json.load(open(js))}
        for k in ("ncc/f32", "onnxruntime/f32", "ncc/int8", "onnxruntime/int8"):
            r = rows.get(k, {})
            check("e2e.%s.ok" % k, r.get("status") == "ok" and r["latency_ms"]["median"] > 0,
                  str(r.get("status")) + " " + str(r.get("reason")))
        for k in ("ncc/int8", "onnxruntime/int8"):
            r = rows.get(k, {})
            sp, acc = r.get("speedup_vs_f32"), r.get("accuracy", {})
            check("e2e.%s.speedup" % k, bool(sp) and sp["ci"][0] <= sp["ratio"] <= sp["ci"][1],
                  str(sp))
            check("e2e.%s.accuracy" % k, acc.get("cosine_min") is not None and
                  acc["cosine_min"] > 0.98 and 0 < acc["rel_err_max"] < 0.2, str(acc))
        r = rows.get("ncc/bf16", {})
        acc = r.get("accuracy", {})
        check("e2e.ncc_bf16", r.get("status") == "ok" and acc.get("cosine_min", 0) > 0.999 and
              0 < acc.get("rel_err_max", 0) < 0.05, str(r.get("reason")) + " " + str(acc))
        r = rows.get("onnxruntime/bf16", {})
        check("e2e.ort_bf16_skipped", r.get("status") == "skipped" and "bf16" in r.get("reason", ""),
              str(r))
        check("e2e.table", "| ncc | int8 |" in p.stdout, p.stdout[-400:])


test_accuracy()
test_end_to_end()
print("%d passed, %d failed" % (sum(results), len(results) - sum(results)))
sys.exit(0 if all(results) else 1)
