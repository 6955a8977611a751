#!/usr/bin/env python3
"""tests/tiers/test_tiers_cli.py -- the compile-speed tiers from the command
line: `--codegen-opt=N` and NCC_CODEGEN_OPT reach libncc's
ncc_options.codegen_level (the LLVM IR that `ncc compile --emit=llvm` writes
differs between tier 0 and tier 3, and the flag and the variable give the
same IR for the same tier), the flag wins over the variable, bad values
are one `ncc: error:` line with exit status 1, and `ncc run` at every tier
computes what tier 3 does on
examples/resblock.onnx (each op's numerics oracle is diff_ort at each
tier: tests/tiers.cmake).

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed" and
exits non-zero when something failed.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402
CLEAN = {k: v for k, v in os.environ.items() if k != "NCC_CODEGEN_OPT"}


def ncc(*args, env=None):
    e = dict(CLEAN, **(env or {}))
    return subprocess.run([NCC, *args], capture_output=True, text=True, env=e,
                          timeout=300)


def emit_llvm(d, model, name, *args, env=None):
    out = os.path.join(d, name + ".ll")
    p = ncc("compile", model, "--target=cpu", "--emit=llvm", "-o", out, *args, env=env)
    check(name + " (exit 0)", p.returncode == 0, p.stderr)
    with open(out) if p.returncode == 0 else open(os.devnull) as f:
        return f.read()


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    model = os.path.join(root, "examples", "resblock.onnx")
    with tempfile.TemporaryDirectory() as d:
        t0 = emit_llvm(d, model, "flag0", "--codegen-opt=0")
        t3 = emit_llvm(d, model, "flag3", "--codegen-opt=3")
        e0 = emit_llvm(d, model, "env0", env={"NCC_CODEGEN_OPT": "0"})
        both = emit_llvm(d, model, "flag-over-env", "--codegen-opt=3",
                         env={"NCC_CODEGEN_OPT": "0"})
        o3 = emit_llvm(d, model, "O3", "-O3")
        check("tier 0 and tier 3 optimise differently", t0 and t3 and t0 != t3)
        check("NCC_CODEGEN_OPT=0 is --codegen-opt=0", e0 == t0)
        check("--codegen-opt wins over NCC_CODEGEN_OPT", both == t3)
        check("-O3 is tier 3", o3 == t3)

        for bad in ("4", "-1", "x", ""):
            p = ncc("compile", model, "--emit=llvm", "-o", os.path.join(d, "bad.ll"),
                    "--codegen-opt=" + bad)
            lines = p.stderr.strip().splitlines()
            check(f"--codegen-opt={bad!r}: exit 1", p.returncode == 1, p.stderr)
            check(f"--codegen-opt={bad!r}: one error line",
                  len(lines) == 1 and lines[0].startswith("ncc: error:"), p.stderr)

        # outputs at every tier: resblock against its own tier-3 run (the
        # numerics oracle of each op is diff_ort at each tier, tiers.cmake)
        x = np.random.RandomState(0).standard_normal((1, 16, 16, 16)).astype(np.float32)
        xp = os.path.join(d, "x.npy")
        np.save(xp, x)
        outs = {}
        for t in range(4):
            od = os.path.join(d, f"out{t}")
            os.mkdir(od)
            p = ncc("run", model, "--input", xp, "--output-dir", od, f"--codegen-opt={t}")
            check(f"run at tier {t} (exit 0)", p.returncode == 0, p.stderr)
            files = sorted(os.listdir(od))
            outs[t] = [np.load(os.path.join(od, f)) for f in files]
        for t in range(3):
            same = len(outs[t]) == len(outs[3]) and len(outs[3]) > 0 and all(
                np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(outs[t], outs[3]))
            check(f"tier {t} computes what tier 3 does", same)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
