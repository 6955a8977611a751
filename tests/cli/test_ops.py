#!/usr/bin/env python3
"""tests/cli/test_ops.py -- `ncc ops`, "did you mean", and -o's directories.

- `ncc ops --json` parses and lists exactly the ops of ir/ops.def (parsed
  here, independently of the library), each once, with a known compiled op
  (Conv on cpu) and known reference-only ops (NonZero everywhere, Gather,
  and every op on ref); --target=T keeps one column; a bad target is exit 1
  with a suggestion; the table's last lines count the ops.
- Misspelt pass, target, command and option names get "did you mean 'x'?"; a name
  far from every known one gets no suggestion.
- `-o DIR/SUB/FILE` creates the missing directories for compile (every
  --emit kind that this build can make), import and opt; a compile that
  fails (--emit=lib of a model with an op that has no compiled kernel)
  leaves neither the file nor the directories it made.

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed".
"""
import json
import os
import re
import subprocess
import sys
import tempfile

NCC = os.environ.get("NCC", "ncc")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
from checks import check, finish  # noqa: E402
from nccutil import target_usable  # noqa: E402


def ncc(*args, cwd=None):
    return subprocess.run([NCC, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def ops_def_names():
    text = open(os.path.join(ROOT, "ir", "ops.def")).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.findall(r'^\s*NCC_OP\(\s*\w+\s*,\s*"([^"]+)"', text, re.M)


def one_error(p, code, *mentions):
    lines = p.stderr.splitlines()
    return (p.returncode == code and len(lines) == 1 and lines[0].startswith("ncc: error: ")
            and all(m in lines[0] for m in mentions))


def test_ops():
    names = ops_def_names()
    check("ir/ops.def parsed (over 100 ops)", len(names) > 100, len(names))
    p = ncc("ops", "--json")
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        check("ncc ops --json parses", False, f"{e}: {p.stdout[:300]!r} {p.stderr!r}")
        return
    check("ncc ops --json: exit 0, nothing on stderr", p.returncode == 0 and not p.stderr, p.stderr)
    ops = {o["name"]: o for o in doc["ops"]}
    check("count is the number of ops in ir/ops.def", doc["count"] == len(names) == len(doc["ops"]),
          (doc["count"], len(names), len(doc["ops"])))
    check("the names are ir/ops.def's, each once",
          sorted(names) == sorted(o["name"] for o in doc["ops"]), set(names) ^ set(ops))
    targets = doc["targets"]
    check("every target has a column", {"ref", "cpu", "x86_64", "aarch64", "opencl", "cuda"} <=
          set(targets), targets)
    conv = ops.get("Conv", {})
    check("Conv compiles on cpu (f32)", conv.get("targets", {}).get("cpu", {}).get("compiled") and
          "f32" in conv["targets"]["cpu"]["dtypes"], conv)
    check("Conv compiles on x86_64, aarch64, opencl, cuda",
          all(conv["targets"][t]["compiled"] for t in ("x86_64", "aarch64", "opencl", "cuda")), conv)
    check("Conv: ai.onnx, opsets 7-28", conv["domain"] == "ai.onnx" and conv["opset_min"] == 7
          and conv["opset_max"] >= 21, conv)
    for host_only in ("NonZero", "Gather", "Loop"):
        o = ops[host_only]
        check(f"{host_only} runs on reference kernels everywhere",
              not any(t["compiled"] for t in o["targets"].values()), o)
    check("nothing compiles on ref", not any(o["targets"]["ref"]["compiled"] for o in doc["ops"]))
    check("Gelu imported from opset 20", ops["Gelu"]["opset_min"] == 20, ops["Gelu"])
    check("Reorder is ncc's own op, not imported",
          ops["Reorder"]["domain"] == "ncc" and ops["Reorder"]["opset_min"] == 0, ops["Reorder"])
    check("Reorder (a blocked layout) compiles on the LLVM targets, not on the GPU ones",
          ops["Reorder"]["targets"]["cpu"]["compiled"] and
          not ops["Reorder"]["targets"]["opencl"]["compiled"], ops["Reorder"])
    check("Add accepts f32 and i64", {"f32", "i64"} <= set(ops["Add"]["dtypes"]), ops["Add"])
    # the table
    p = ncc("ops")
    rows = {ln.split()[0]: ln.split() for ln in p.stdout.splitlines() if ln.strip()}
    check("ncc ops: exit 0", p.returncode == 0 and not p.stderr, p.stderr)
    head = rows.get("OP", [])
    if "cpu" in head:
        ci = head.index("cpu")
        check("table: Conv compiled on cpu", rows["Conv"][ci] == "compiled", rows.get("Conv"))
        check("table: NonZero ref on cpu", rows["NonZero"][ci] == "ref", rows.get("NonZero"))
    check("table: a summary counting the ops", f"{len(names)} ops." in p.stdout, p.stdout[-300:])
    p = ncc("ops", "--target=cuda", "--json")
    d = json.loads(p.stdout) if p.returncode == 0 else {}
    check("--target=cuda: one column (also where cuda cannot run)",
          d.get("targets") == ["cuda"] and all(list(o["targets"]) == ["cuda"] for o in d["ops"]), p)
    p = ncc("ops", "--target=cpux")
    check("--target=cpux: exit 1, did you mean 'cpu'", one_error(p, 1, "cpux", "did you mean 'cpu'"),
          p.stderr)


def test_ops_agree_with_check():
    """What `ncc ops` says per op is what compiling a model does: every node
    of a small chain runs on the host exactly when its op is 'ref' on cpu."""
    targets = [t for t in ("cpu", "opencl", "cuda") if target_usable(NCC, t) and
               (t != "cpu" or os.environ.get("NCC_WITH_LLVM", "1") != "0")]
    if not targets:
        return
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    chain = ["Relu", "Shrink", "Sigmoid", "Softmax", "Flatten", "MatMul", "Neg", "Identity"]
    nodes, prev = [], "x"
    for i, op in enumerate(chain):
        ins = [prev, "w"] if op == "MatMul" else [prev]
        nodes.append(helper.make_node(op, ins, [f"v{i}"], name=f"n_{op}"))
        prev = f"v{i}"
    w = numpy_helper.from_array(np.ones((128, 16), np.float32), "w")
    g = helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 16])], [w])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "chain.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
        for t in targets:
            p = ncc("check", path, f"--target={t}", "-O0", "--json")
            try:
                host = {h["op"] for h in json.loads(p.stdout)["host"]}
            except (ValueError, KeyError) as e:
                check(f"ncc check --target={t} --json on the chain", False,
                      f"{e}: {p.stdout[:300]} {p.stderr}")
                continue
            doc = json.loads(ncc("ops", f"--target={t}", "--json").stdout)
            ops = {o["name"]: o for o in doc["ops"]}
            said = {op for op in chain if not ops[op]["targets"][t]["compiled"]}
            check(f"{t}: the ops 'ncc ops' calls ref are the host nodes 'ncc check' finds",
                  said == host and "Shrink" in host, (said, host))


def test_did_you_mean():
    m = os.path.join(ROOT, "examples", "resblock.onnx")
    p = ncc("opt", m, "--disable-pass=fusoin")
    check("--disable-pass=fusoin suggests fusion",
          one_error(p, 1, "unknown pass 'fusoin'; did you mean 'fusion'? (see 'ncc passes')"),
          p.stderr)
    p = ncc("opt", m, "--passes=const-fold,memplna")
    check("--passes with a misspelt name suggests it (swapped letters)",
          one_error(p, 1, "unknown pass 'memplna'; did you mean 'memplan'?"), p.stderr)
    p = ncc("opt", m, "--print-after=fuson")
    check("--print-after=fuson suggests fusion", one_error(p, 1, "fuson", "did you mean 'fusion'"),
          p.stderr)
    p = ncc("opt", m, "--disable-pass=zzzzzzzz")
    check("a name near nothing: no suggestion",
          one_error(p, 1, "unknown pass 'zzzzzzzz'") and "did you mean" not in p.stderr, p.stderr)
    p = ncc("run", m, "--target=cpux")
    check("--target=cpux suggests cpu", one_error(p, 1, "unknown target 'cpux'; did you mean 'cpu'?"),
          p.stderr)
    p = ncc("compile", m, "--target=aarch46", "--emit=asm")
    check("--target=aarch46 suggests aarch64", one_error(p, 1, "did you mean 'aarch64'"), p.stderr)
    p = ncc("bnech", m)
    check("ncc bnech suggests bench",
          one_error(p, 1, "unknown command 'bnech'; did you mean 'bench'?"), p.stderr)
    p = ncc("frobnicate")
    check("ncc frobnicate: no suggestion",
          one_error(p, 1, "frobnicate") and "did you mean" not in p.stderr, p.stderr)
    p = ncc("bench", m, "--iter", "5")
    check("--iter suggests --iters",
          one_error(p, 1, "unknown option '--iter'; did you mean '--iters'?"), p.stderr)
    p = ncc("opt", m, "--disable-passes=fusion")
    check("--disable-passes=fusion suggests --disable-pass",
          one_error(p, 1, "did you mean '--disable-pass'?"), p.stderr)
    p = ncc("import", m, "--bach")
    check("an option of another command is not suggested (import has no --batch)",
          one_error(p, 1, "unknown option '--bach'") and "did you mean" not in p.stderr, p.stderr)


def failing_lib_model(path):
    """x -> NonZero: its output shape depends on values, so --emit=lib has
    no compiled kernel for it."""
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.INT64, [1, None])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_output_dirs():
    m = os.path.join(ROOT, "examples", "resblock.onnx")
    llvm = os.environ.get("NCC_WITH_LLVM", "1") != "0" and target_usable(NCC, "cpu")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("import", ["import", m, "-o", "imp/a/m.nir"], "imp/a/m.nir"),
                 ("opt", ["opt", m, "-o", "opt/a/m.nir"], "opt/a/m.nir"),
                 ("compile --emit=ir", ["compile", m, "--emit=ir", "-o", "ir/a/m.nir"],
                  "ir/a/m.nir")]
        if llvm:
            for kind, ext in (("kir", "kir"), ("llvm", "ll"), ("asm", "s"), ("obj", "o"),
                              ("lib", "so")):
                cases.append((f"compile --emit={kind}",
                              ["compile", m, f"--emit={kind}", "-o", f"{kind}/a/b/m.{ext}"],
                              f"{kind}/a/b/m.{ext}"))
        for name, args, out in cases:
            p = ncc(*args, cwd=tmp)
            check(f"{name} -o: creates the missing directories",
                  p.returncode == 0 and os.path.isfile(os.path.join(tmp, out)), p.stderr)
        if llvm:
            check("--emit=lib -o: the header beside the library",
                  os.path.isfile(os.path.join(tmp, "lib/a/b/m.h")))
            bad = os.path.join(tmp, "nonzero.onnx")
            failing_lib_model(bad)
            p = ncc("compile", bad, "--emit=lib", "-o", "fail/x/y.so", cwd=tmp)
            check("a failing --emit=lib: one error, no file, no directory left",
                  one_error(p, 3) and not os.path.exists(os.path.join(tmp, "fail")), p.stderr)
            os.makedirs(os.path.join(tmp, "kept"))
            p = ncc("compile", bad, "--emit=lib", "-o", "kept/x/y.so", cwd=tmp)
            check("a failing --emit=lib keeps the directory that existed",
                  p.returncode == 3 and os.listdir(os.path.join(tmp, "kept")) == [], p.stderr)
        open(os.path.join(tmp, "file"), "w").close()
        p = ncc("import", m, "-o", "file/m.nir", cwd=tmp)
        check("-o under a file: exit 2, one error", one_error(p, 2, "not a directory"), p.stderr)


def main():
    test_ops()
    test_ops_agree_with_check()
    test_did_you_mean()
    test_output_dirs()
    sys.exit(finish())


if __name__ == "__main__":
    main()
