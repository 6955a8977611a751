#!/usr/bin/env python3
"""tests/aarch64/test_int8_dot.py — the int8 kernels on AArch64 (ctest
aarch64.int8, label aarch64): QLinearConv, QLinearMatMul and MatMulInteger
models of tests/py/qkernels_ort.py compiled with `ncc compile
--target=aarch64 --emit=lib` three ways, linked statically by
aarch64-linux-gnu-gcc, run under `qemu-aarch64 -cpu max` (which has
FEAT_DotProd and FEAT_I8MM) and compared with onnxruntime on the host:

  baseline    no --target-features: the portable shift-and-multiply sum
  dotprod     --target-features=+dotprod: SDOT on u8 ^ 0x80 plus the
              128 * sum(b) correction
  i8mm        --target-features=+i8mm: USDOT on the bytes as they are

The library's object, disassembled, must hold exactly the expected
instruction (sdot without usdot, usdot, or neither), so a quiet fallback to
the portable sum fails; the outputs must be within one quantum of
onnxruntime's on at most 1% of elements (its tie rounding, as in
qkernels_ort.py) and equal bit for bit across the three builds (integer
arithmetic: any difference is a wrong dot product). Last, the i8mm build
of one case must die under `-cpu cortex-a72` (no I8MM), so the USDOTs are
really executed.

`--only NAME` runs one case. Skips (exit 77) when qemu-aarch64, the cross
compiler, an objdump for AArch64 or onnxruntime is missing. Prints
"N passed, M failed"; exit 1 on failure.
"""
import os
import re
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "aot"))
import aotutil as au  # noqa: E402

CC = os.environ.get("NCC_AARCH64_CC") or "aarch64-linux-gnu-gcc"
QEMU = os.environ.get("NCC_QEMU_AARCH64") or "qemu-aarch64"
OBJDUMPS = ("llvm-objdump-19", "llvm-objdump", "aarch64-linux-gnu-objdump")

FEATURES = {"baseline": None, "dotprod": "+dotprod", "i8mm": "+i8mm"}
# the mnemonics in a disassembly ("sdot" does not match inside "usdot")
INSN = {"sdot": re.compile(r"\bsdot\s+v\d+\.4s"), "usdot": re.compile(r"\busdot\s+v\d+\.4s")}
WANT = {"baseline": (), "dotprod": ("sdot",), "i8mm": ("usdot",)}
# u8 and s8 activations, u8 weights, K padded (3 input channels, odd K),
# grouped, batched; DynamicQuantizeLinear has no --emit=lib kernel
CASE_NAMES = ("conv3x3_u8", "conv3x3_s8_in_out", "stem7x7_s2_ic3", "depthwise",
              "u8_weights_zp128", "mm_s8_k_odd", "mm_batched_3d")


def load_cases():
    """The chosen qkernels_ort cases, (name, model, feeds), and its
    onnxruntime runner; None without onnxruntime (importing qkernels_ort
    would exit 77 then)."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return None
    sys.path.insert(0, os.path.join(au.SRC, "tests", "py"))
    import qkernels_ort as q
    return [c for c in q.CASES if c[0] in CASE_NAMES], q.run_ort


def build(model, sub, flavour, objdump):
    """The static program of `model` for `flavour`, after checking the dot
    product instructions of its library object."""
    lib = os.path.join(sub, "m.o")
    extra = ["--target-features=" + FEATURES[flavour]] if FEATURES[flavour] else []
    header = au.compile_lib(model, lib, "aarch64", extra)
    text = au.run([objdump, "-d", lib]).stdout
    for insn, pat in INSN.items():
        has, want = bool(pat.search(text)), insn in WANT[flavour]
        if has != want:
            raise au.Failure("%s: %s in the library's code: %s, expected %s" % (
                flavour, insn, "yes" if has else "no", "yes" if want else "no"))
    prog = os.path.join(sub, "prog")
    au.build_program(lib, header, prog, cc=CC, static=True)
    return prog


def check_case(work, name, model, feeds, run_ort, objdump):
    """One model, three builds; raises au.Failure."""
    import onnx
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    want = run_ort(model, feeds)
    got = {}
    for flavour in FEATURES:
        sub = au.fresh_dir(os.path.join(work, name, flavour))
        prog = build(path, sub, flavour, objdump)
        (shape, raw), = au.run_program(prog, [[feeds["x"]]], 1, 2, sub,
                                        [QEMU, "-cpu", "max"])[0]
        if tuple(shape) != want.shape:
            raise au.Failure("%s: shape %s, onnxruntime %s" % (flavour, shape, want.shape))
        y = raw.view(want.dtype).reshape(want.shape)
        d = np.abs(y.astype(np.int64) - want.astype(np.int64))
        if d.max() > 1 or (d > 0).mean() > 0.01:
            raise au.Failure("%s: max diff %d from onnxruntime, %.2f%% of elements differ"
                             % (flavour, d.max(), 100 * (d > 0).mean()))
        got[flavour] = y
    for flavour in ("dotprod", "i8mm"):
        if not np.array_equal(got[flavour], got["baseline"]):
            raise au.Failure("%s: differs from the portable sum's output on %d elements"
                             % (flavour, int((got[flavour] != got["baseline"]).sum())))


def check_needs_i8mm(work, cases):
    """The +i8mm build of the first case dies on a CPU without I8MM."""
    name, _, feeds = cases[0]
    sub = os.path.join(work, name, "i8mm")
    p = au.run([QEMU, "-cpu", "cortex-a72", os.path.join(sub, "prog"), "1",
                os.path.join(sub, "a72_out"), os.path.join(sub, "g0_in0.raw"),
                ",".join(str(d) for d in feeds["x"].shape)], expect=None)
    if p.returncode == 0:
        raise au.Failure("the +i8mm build ran on cortex-a72 (no I8MM): its USDOTs are "
                         "not executed")


def main(argv):
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    objdump = next((t for t in OBJDUMPS if shutil.which(t)), None)
    missing = [t for t in (QEMU, CC) if not shutil.which(t)]
    if not objdump:
        missing.append(" or ".join(OBJDUMPS))
    if missing:
        print("SKIP: %s not found (tools/setup.sh installs qemu-user and "
              "gcc-aarch64-linux-gnu)" % ", ".join(missing))
        return 77
    loaded = load_cases()
    if loaded is None:
        print("SKIP: onnxruntime is not installed (pip install -r tools/requirements.txt)")
        return 77
    cases, run_ort = loaded
    r = au.Runner()
    with tempfile.TemporaryDirectory(prefix="ncc-aarch64-int8-") as work:
        ran = [c for c in cases if (not only or only == c[0]) and
               r.check(c[0], check_case, work, c[0], c[1], c[2], run_ort, objdump)]
        if ran and not only:
            r.check("needs_i8mm", check_needs_i8mm, work, ran)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
