#!/usr/bin/env python3
"""tests/py/test_harness_models.py — real models and the hardware axis in the
experiment harness (bench/harness/zoo.py, report_models.py, hardware.py,
report_hw.py), label `harness` (tests/harness_models.cmake).

  - FLOP grouping of real architectures on known numbers;
  - spec checks: `models` on the kinds that take them, not with blocks,
    not on fusion; `--models` keeps what it names and refuses unknown names;
  - the zoo lookup without torch: a fake zoo cache ($NCC_ZOO_CACHE) with
    exports named like tests/zoo/export.py's, the newest export of a name
    found, a name that only shares a prefix not; a model with two inputs
    refused in one line; a static-batch copy that onnxruntime runs at the
    new batch;
  - a tiny sweep end to end (ncc ref, onnxruntime) over "real" models (ONNX
    files of bench/blocks.py, and a depth family in the fake zoo): E1 over
    the family's depths, E2, E3 groups by FLOPs, E5 and E6; every row valid
    and checked by the outside oracle; the report ranks the FLOP group;
  - the hardware axis: the sweep's rows relabelled as three machines (one
    emulated) with one compiler's order of two models flipped between the
    timed ones: the merge keeps every machine's rows, the report names the
    reversal and that compiling reverses it (ncc ref keeps one order), and
    the emulated machine is listed but has no speed-up, order or reversal;
  - emulation detection from /proc/cpuinfo text.

Uses $NCC (the suite's ASan build; the models are tiny).  Prints "N passed,
M failed"; exit 1 on a failure, 77 without numpy, onnx, onnxruntime.
"""
import copy
import json
import os
import shutil
import sys
import tempfile

from nccutil import check, run_cases, run_experiment  # noqa: E402  (exits 77 without numpy, onnx, onnxruntime)
import numpy as np  # noqa: E402

import blocks  # noqa: E402  (bench/, on sys.path through nccutil)
from harness import cli, hardware, results, zoo  # noqa: E402
from harness import spec as specmod  # noqa: E402

NCC = os.environ.get("NCC")
TMP = tempfile.mkdtemp(prefix="ncc-harness-models-")
ZOO = os.path.join(TMP, "zoo")
os.environ["NCC_ZOO_CACHE"] = ZOO  # the fake zoo, for this process and the sweep's


def _save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def _setup():
    """Three ONNX files (two conv blocks of similar FLOPs, one far larger)
    and a fake zoo: family tiny at depths 1 and 2, a decoy, a two-input
    model."""
    os.makedirs(ZOO, exist_ok=True)
    kw = {"spatial": [4, 4]}
    _save(blocks.build("conv", 1, 8, 0, **kw), os.path.join(TMP, "a.onnx"))
    _save(blocks.build("conv", 1, 9, 0, **kw), os.path.join(TMP, "b.onnx"))
    _save(blocks.build("conv", 1, 32, 0, **kw), os.path.join(TMP, "c.onnx"))
    for d in (1, 2):
        _save(blocks.build("mlp", d, 8, 0), os.path.join(ZOO, "tiny%d-0123456789ab.onnx" % d))
        json.dump({"name": "tiny%d" % d}, open(os.path.join(ZOO, "tiny%d-0123456789ab.json"
                                                            % d), "w"))
    # a prefix decoy ("tiny1_x") and an older export of tiny1 with another key
    _save(blocks.build("mlp", 3, 8, 0), os.path.join(ZOO, "tiny1_x-aaaaaaaaaaaa.onnx"))
    json.dump({}, open(os.path.join(ZOO, "tiny1_x-aaaaaaaaaaaa.json"), "w"))
    old = os.path.join(ZOO, "tiny1-bbbbbbbbbbbb")
    _save(blocks.build("mlp", 3, 8, 0), old + ".onnx")
    json.dump({}, open(old + ".json", "w"))
    os.utime(old + ".json", (1, 1))  # older than the real one
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Add", ["x", "t"], ["y"])], "two",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
                           helper.make_tensor_value_info("t", TensorProto.FLOAT, ["N", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(ZOO, "twoin-cccccccccccc.onnx"))
    json.dump({}, open(os.path.join(ZOO, "twoin-cccccccccccc.json"), "w"))


_setup()
A, B, C = (os.path.join(TMP, n + ".onnx") for n in "abc")


QEMU = bool(shutil.which(os.environ.get("NCC_QEMU_AARCH64") or "qemu-aarch64") and
            shutil.which(os.environ.get("NCC_AARCH64_CC") or "aarch64-linux-gnu-gcc"))
QEMU_ID = "ncc_qemu:qemu -O2"


def tiny_spec():
    e3 = {"id": "E3", "kind": "ranking", "models": [A, B, C], "match": 1.6}
    if QEMU:  # the emulated target: ncc cross-compiled for AArch64, run by qemu
        e3["compilers"] = {"ncc": ["ref"], "onnxruntime": ["DISABLE_ALL", "ALL"],
                           "ncc_qemu": ["qemu -O2"]}
    return {
        "name": "models-test", "threads": 1, "pin_cpus": False, "warmup": 1, "iters": 4,
        "compilers": {"ncc": ["ref"], "onnxruntime": ["DISABLE_ALL", "ALL"]},
        "experiments": [
            {"id": "E1", "kind": "depth", "models": ["tiny"], "depths": [1, 2]},
            {"id": "E2", "kind": "batch", "models": [A], "batches": [1, 2]},
            e3,
            {"id": "E5", "kind": "amortize", "models": [A]},
            {"id": "E6", "kind": "dynamic", "models": [B], "sequence": [1, 3],
             "runs_per_shape": 3},
        ]}


# --------------------------------------------------------------------------
# Pure parts.

def test_flop_groups():
    mf = {"shufflenet": 8.6, "mv3s": 13.2, "mnas": 19.6, "swin": 33.9, "mv2": 52.0,
          "effb0": 67.9, "r18": 297.0}
    groups, alone = specmod.flop_groups(mf, 1.6)
    check(groups == [["shufflenet", "mv3s"], ["swin", "mv2"]], "groups %r" % groups)
    check(alone == ["mnas", "effb0", "r18"], "alone %r" % alone)
    groups, alone = specmod.flop_groups(mf, 1.0)
    check(groups == [] and len(alone) == len(mf), "match 1: nothing matched")


def test_spec_models():
    s = specmod.normalize(tiny_spec())
    e1, e3 = s["experiments"][0], s["experiments"][2]
    check(e1["real"] and e1["blocks"] == ["tiny"], "E1 takes a family")
    ms = specmod._model("tiny", e1, 2)
    check(isinstance(ms, zoo.ZooSpec) and ms.name == "tiny2", "family + depth: %r" % ms)
    check(specmod._model(A, e3, 1).source == "file:" + A, "a file model")
    for bad, msg in (({"kind": "fusion", "models": ["x"]}, "takes blocks"),
                     ({"kind": "batch", "models": ["x"], "blocks": ["mlp"]}, "not both"),
                     ({"kind": "batch", "models": []}, "non-empty"),
                     ({"kind": "batch", "models": ["a b"]}, "not a zoo model name"),
                     ({"kind": "ranking", "models": ["x"], "mflop": 3.0}, "grouping")):
        sp = tiny_spec()
        sp["experiments"] = [dict(bad, id="X")]
        try:
            specmod.normalize(sp)
            check(False, "accepted %r" % bad)
        except specmod.SpecError as err:
            check(msg in str(err), "%r: %s" % (bad, err))


def test_models_filter():
    s = cli.filter_models(specmod.normalize(tiny_spec()), [A, "tiny2"])
    ids = [e["id"] for e in s["experiments"]]
    check(ids == ["E1", "E2", "E3", "E5"], "experiments kept: %r" % ids)
    e1 = s["experiments"][0]
    check(e1["depths"] == [2], "only the named depth: %r" % e1["depths"])
    check(s["experiments"][2]["blocks"] == [A], "E3 cut to A")
    try:
        cli.filter_models(specmod.normalize(tiny_spec()), ["resnet999"])
        check(False, "an unknown model was accepted")
    except specmod.SpecError as err:
        check("resnet999" in str(err), str(err))


def test_zoo_lookup():
    p = zoo.find_export("tiny1")
    check(p and os.path.basename(p) == "tiny1-0123456789ab.onnx", "newest tiny1: %r" % p)
    check(zoo.find_export("tiny") is None, "a prefix is not a model")
    try:
        zoo.ZooSpec.parse("twoin").info()
        check(False, "a two-input model was accepted")
    except zoo.ZooUnsupported as err:
        check("one input x" in str(err) and "\n" not in str(err), str(err))


def test_static_batch_copy():
    import onnxruntime as ort
    ms = zoo.ZooSpec.parse(B)
    d = os.path.join(TMP, "static")
    os.makedirs(d, exist_ok=True)
    path = zoo.model_path(ms, d, 3)
    import onnx
    m = onnx.load(path)
    check(m.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 3, "batch fixed")
    x = zoo.make_input(ms, 3, 1)
    check(x.shape[0] == 3 and x.dtype == np.float32, "input at batch 3")
    y = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    check(y.shape[0] == 3, "onnxruntime runs the copy at batch 3")


def test_emulation_detection():
    x86 = "vendor_id\t: GenuineIntel\nflags\t\t: fpu sse2\nmodel name\t: Xeon\n"
    arm = "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"
    check(hardware.detect_emulation("aarch64", x86)[0], "aarch64 on x86 cpuinfo: qemu-user")
    check(not hardware.detect_emulation("aarch64", arm)[0], "aarch64 on Arm: native")
    check(not hardware.detect_emulation("x86_64", x86)[0], "x86_64 on x86: native")
    check(hardware.detect_emulation("x86_64", "model name\t: QEMU Virtual CPU\n")[0],
          "qemu's CPU model")
    r = hardware.record("box", "qemu-aarch64", "aarch64", x86)
    check(r["emulated"] and r["emulator"] == "qemu-aarch64" and r["how"] == "declared", r)
    r = hardware.record("box", False, "aarch64", x86)
    check(not r["emulated"], "declared native wins over detection")


# --------------------------------------------------------------------------
# End to end.

SWEEP = os.path.join(TMP, "sweep")


def _sweep():
    if os.path.exists(os.path.join(SWEEP, "results.jsonl")):
        return
    spath = os.path.join(TMP, "spec.json")
    json.dump(tiny_spec(), open(spath, "w"))
    rc, out, err = run_experiment([spath, "--out", SWEEP, "--ncc", NCC, "--quiet",
                                   "--no-plots", "--machine", "box-a"], 600)
    check(rc == 0, "sweep exit %d: %s" % (rc, err[-2000:]))


def test_sweep_real_models():
    check(NCC, "NCC is not set")
    _sweep()
    rows = results.read_rows(os.path.join(SWEEP, "results.jsonl"))
    bad = [(r["config"]["model"]["block"], r["config"]["compiler"], r["status"], r["reason"])
           for r in rows if r["status"] != "ok"]
    check(not bad, "rows not ok: %r" % bad[:5])
    check(all(r["result"]["oracle"]["name"] == "onnxruntime" and
              r["result"]["oracle"]["ref_agrees"] for r in rows), "oracle on every row")
    names = {r["config"]["model"]["block"] for r in rows}
    check(names == {"tiny1", "tiny2", "a", "b", "c"}, "models run: %r" % names)
    check(all(r["env"]["hardware"]["machine"] == "box-a" for r in rows), "machine label")
    seq = [r for r in rows if r["config"]["kind"] == "sequence"]
    check(len(seq) == 2 * 3 and all(len(r["result"]["steps"]) == 2 for r in seq),
          "E6: symbolic and static per compiler")
    spec = json.load(open(os.path.join(SWEEP, "spec.json")))
    e3 = next(e for e in spec["experiments"] if e["id"] == "E3")
    check(e3["flop_groups"] == {"groups": [["a", "b"]], "alone": ["c"]} or
          e3["flop_groups"] == {"groups": [[A, B]], "alone": [C]}, e3["flop_groups"])
    text = open(os.path.join(SWEEP, "report.md")).read()
    check("**Group 1** (a, b)" in text, "the FLOP group is ranked")
    check("**tiny**" in text and "| compiler | d=1 | d=2 |" in text, "E1 over the family")
    qrows = [r for r in rows if r["config"]["compiler"] == "ncc_qemu"]
    if not QEMU:
        print("note: qemu-aarch64 or aarch64-linux-gnu-gcc missing: emulated target not run")
        check("Hardware axis" not in text, "one machine: no hardware axis")
        return
    check(len(qrows) == 3 and all(r["result"]["emulated"]["emulator"] == "qemu-aarch64"
                                  for r in qrows), "the emulated rows: %r" % qrows[:1])
    hw = text[text.index("## Hardware axis"):text.index("## E1")]
    check("box-a · aarch64 (qemu-aarch64)" in hw and "EMULATED" in hw,
          "the emulated target is a machine of its own")
    check("`%s`" % QEMU_ID not in hw and "not ranked" in hw, "emulated rows never ranked")


def _relabel(rows, machine, emulated=False, lat=None):
    """Rows as if measured on `machine`; the point rows of the
    (model, compiler) pairs in `lat` get quiet samples around lat[...] ms
    (the order of a and b set by the test, not by this machine's load)."""
    from harness import measure
    out = []
    for r in rows:
        r = copy.deepcopy(r)
        r["env"]["hardware"] = dict(r["env"]["hardware"], machine=machine, emulated=emulated,
                                    emulator="qemu-aarch64" if emulated else None)
        c = r["config"]
        k = (c["model"]["block"], "%s:%s" % (c["compiler"], c["config"]))
        if lat and k in lat and c["kind"] == "point" and c["batch"] == 1:
            # (ncc's `ncc bench` fallback rows, as under ASan, have no samples)
            n = len(r["result"].get("samples_ms") or []) or c["iters"]
            r["result"].update(measure.summarize(
                [lat[k] * (1 + 0.01 * ((i % 5) - 2)) for i in range(n)]))
        out.append(r)
    return out


def test_hardware_merge():
    check(NCC, "NCC is not set")
    _sweep()
    rows = results.read_rows(os.path.join(SWEEP, "results.jsonl"))
    ort, ref = "onnxruntime:ALL", "ncc:ref"
    dirs = []
    # ncc ref: a before b on both machines; onnxruntime ALL: b before a on
    # box-a, a before b on box-b.  qemu-arm: emulated, its numbers absurd.
    for name, em, lat in (
            ("box-a", False, {("a", ref): 1.0, ("b", ref): 2.0, ("a", ort): 0.5, ("b", ort): 0.2}),
            ("box-b", False, {("a", ref): 1.0, ("b", ref): 2.0, ("a", ort): 0.2, ("b", ort): 0.5}),
            ("qemu-arm", True, {("a", ort): 90.0, ("b", ort): 1.0, ("a", ref): 9.0})):
        d = os.path.join(TMP, "m-" + name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        results.write_rows(os.path.join(d, "results.jsonl"), _relabel(rows, name, em, lat))
        shutil.copy(os.path.join(SWEEP, "spec.json"), d)
        dirs.append(d)
    out = os.path.join(TMP, "merged")
    rc, _, err = run_experiment(["merge"] + dirs + ["--out", out, "--no-plots"], 300)
    check(rc == 0, "merge exit %d: %s" % (rc, err[-1500:]))
    merged = results.read_rows(os.path.join(out, "results.jsonl"))
    check(len(merged) == 3 * len(rows), "every machine's rows kept: %d" % len(merged))
    text = open(os.path.join(out, "report.md")).read()
    hw = text[text.index("## Hardware axis"):text.index("## E1")]
    check("EMULATED (qemu-aarch64)" in hw, "the emulated machine is labelled")
    check("| model | compiler | box-a | box-b |" in hw, "speed-up columns: timed machines only")
    check("qemu-arm:" not in hw, "no order of the emulated machine")
    rev = [ln for ln in hw.splitlines() if ln.startswith("- E3 group 1, `%s`: a/b" % ort)
           and "box-a" in ln and "box-b" in ln]
    check(rev and "compiling reverses" in rev[0] and "`ncc:ref`" in rev[0] and
          "within noise" not in rev[0], "the reversal between the machines: %r" % rev)
    check(not any("qemu-arm" in ln for ln in hw.splitlines() if ln.startswith("- E3")),
          "no reversal involves the emulated machine")
    # `report` on the merged directory keeps the machines apart too
    rc, _, err = run_experiment(["report", out, "--no-plots"], 300)
    check(rc == 0 and "## Hardware axis" in open(os.path.join(out, "report.md")).read(),
          "report DIR of a merged dir: %s" % err[-500:])


if __name__ == "__main__":
    try:
        sys.exit(run_cases([test_flop_groups, test_spec_models, test_models_filter,
                            test_zoo_lookup, test_static_batch_copy, test_emulation_detection,
                            test_sweep_real_models, test_hardware_merge]))
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
