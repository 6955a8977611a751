#!/usr/bin/env python3
"""tests/cli/test_targets.py -- `ncc targets` tells the truth (docs/CLI.md).

Every target is tried, whatever the table says, and the table must agree:
RUN is "yes" exactly when `ncc run --target=T` works (its output checked
against numpy), COMPILE is "yes" exactly when `ncc compile --target=T
--emit=<code>` writes code (an ELF object for the machine the target names,
read from the ELF header; GPU source text), "-" for ref, which emits no code.
A target that does not run or compile here fails with exit 3 and one
`ncc: error:` line naming it. Run with NCC=/path/to/ncc (ctest sets it).
Prints "N passed, M failed" and exits non-zero when something failed.
"""
import os
import platform
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402
KNOWN = ["ref", "cpu", "x86_64", "aarch64", "opencl", "cuda"]
# ELF e_machine of the object each LLVM target writes (the ELF spec).
EM_X86_64, EM_AARCH64 = 62, 183
HOST_EM = {"x86_64": EM_X86_64, "aarch64": EM_AARCH64}.get(platform.machine())
# What `ncc compile` is asked to write per target, and how to recognise it.
EMIT = {"ref": "obj", "cpu": "obj", "x86_64": "obj", "aarch64": "obj",
        "opencl": "opencl", "cuda": "cuda"}


def ncc(*args):
    p = subprocess.run([NCC, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def one_error_line(err):
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("ncc: error:")


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    return struct.unpack("<H", head[18:20])[0]


def compiled_ok(target, path):
    """Whether the file at path is the code asked for (not ncc's word)."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return False
    if EMIT[target] == "obj":
        want = {"x86_64": EM_X86_64, "aarch64": EM_AARCH64}.get(target, HOST_EM)
        return elf_machine(path) == want
    text = open(path, errors="replace").read()
    return ("__kernel" in text) if target == "opencl" else ("__global__" in text)


def parse_table(out):
    lines = out.splitlines()
    rows = {}
    for line in lines[1:]:
        c = line.split(None, 3)
        if len(c) >= 3:
            rows[c[0]] = (c[1], c[2], c[3] if len(c) > 3 else "")
    return (lines[0].split() if lines else []), rows


def main():
    rc, out, err = ncc("targets")
    header, rows = parse_table(out)
    check("targets exits 0", rc == 0, err)
    check("targets header", header == ["TARGET", "RUN", "COMPILE", "NOTE"], out)
    check("targets lists every known target", sorted(rows) == sorted(KNOWN), out)
    check("ref runs and emits no code", rows.get("ref", ("", ""))[:2] == ("yes", "-"), out)
    check("no target is 'not implemented'", "not implemented" not in out, out)

    work = tempfile.mkdtemp(prefix="ncc_targets_")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                               helper.make_node("Add", ["r", "x"], ["y"])],
                              "tiny", [x], [y])
    model = os.path.join(work, "tiny.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              model)
    xv = np.array([[-1.5, 0.0, 2.0], [3.0, -4.0, 0.25]], dtype=np.float32)
    xin = os.path.join(work, "x.npy")
    np.save(xin, xv)
    want = np.maximum(xv, 0) + xv

    for t in KNOWN:
        run_col, comp_col, note = rows.get(t, ("?", "?", ""))
        # compile: try it whatever the table says
        path = os.path.join(work, f"out_{t}.{EMIT[t]}")
        rc, _, err = ncc("compile", model, f"--target={t}", f"--emit={EMIT[t]}", "-o", path)
        made = rc == 0 and compiled_ok(t, path)
        if comp_col == "-":
            check(f"{t}: '-' emits no code (exit 3)", rc == 3 and one_error_line(err), err)
        else:
            check(f"{t}: COMPILE={comp_col} matches compile (rc={rc})",
                  made == (comp_col == "yes"), err)
            if rc != 0:
                check(f"{t}: compile failure is exit 3, one line naming it",
                      rc == 3 and one_error_line(err) and t in err, f"rc={rc} {err}")
        # run: likewise
        d = os.path.join(work, "run_" + t)
        os.mkdir(d)
        rc, _, err = ncc("run", model, f"--target={t}", "--input", xin, "--output-dir", d)
        got = None
        if rc == 0 and os.path.exists(os.path.join(d, "y.npy")):
            got = np.load(os.path.join(d, "y.npy"))
        ran = got is not None and got.shape == want.shape and np.allclose(got, want)
        check(f"{t}: RUN={run_col} matches run (rc={rc})", ran == (run_col == "yes"), err)
        if rc != 0:
            check(f"{t}: run failure is exit 3, one line naming it",
                  rc == 3 and one_error_line(err) and t in err, f"rc={rc} {err}")
        if run_col != "yes":
            check(f"{t}: the note says why it does not run", note.strip() != "", note)

    sys.exit(finish())


if __name__ == "__main__":
    main()
