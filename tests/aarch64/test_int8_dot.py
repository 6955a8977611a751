#!/usr/bin/env python3
"""tests/aarch64/test_int8_dot.py — the int8 kernels on AArch64 (ctest
aarch64.int8, label aarch64): eight QLinearConv and QLinearMatMul cases
made by tests/py/qkernels_ort.py's generators, put side by side in one
model (each case's x and y become NAME_x and NAME_y), compiled with `ncc
compile --target=aarch64 --emit=lib` three ways, linked statically by
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
must die under `-cpu cortex-a72` (no I8MM), so the USDOTs are really
executed.

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


def load_cases():
    """The cases, (name, model, feeds), made by qkernels_ort's generators,
    and its onnxruntime runner; None without onnxruntime (importing
    qkernels_ort would exit 77 then). u8 and s8 activations, u8 weights,
    K padded (3 input channels, odd K), grouped, depthwise, batched; small
    kernels (qkernels_ort's 7x7 stem takes LLVM ~20 s to compile for
    aarch64, longer than everything else here)."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return None
    sys.path.insert(0, os.path.join(au.SRC, "tests", "py"))
    import qkernels_ort as q
    cases = [q.qconv("conv3x3_u8"),
             q.qconv("conv3x3_s8_in_out", xdt=q.I8, ydt=q.I8, seed=1),
             q.qconv("stem3x3_s2_ic3", C=3, OC=16, k=3, stride=2, H=12, W=11, seed=3),
             q.qconv("grouped", group=4, C=16, OC=16, seed=7),
             q.qconv("depthwise", group=8, C=8, OC=8, H=11, W=10, seed=8),
             q.qconv("u8_weights_zp128", wdt=q.U8, C=12, OC=24, seed=12),
             q.qmatmul("mm_s8_k_odd", ashape=(9, 37), N=19, adt=q.I8, seed=21),
             q.qmatmul("mm_batched_3d", ashape=(2, 13, 32), N=48, seed=22)]
    return cases, q.run_ort


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


def merged_model(cases):
    """The cases as one model (one build per flavour instead of one per case
    and flavour: compiling and linking is most of the time): case NAME's
    input and output become NAME_x and NAME_y."""
    from onnx import compose, helper
    nodes, inits, ins, outs = [], [], [], []
    for name, model, _ in cases:
        g = compose.add_prefix(model, name + "_").graph
        nodes += g.node
        inits += g.initializer
        ins += g.input
        outs += g.output
    g = helper.make_graph(nodes, "int8_dot", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = cases[0][1].ir_version
    return m


def check_flavour(work, flavour, path, cases, want, objdump, got):
    """One build of the merged model under qemu -cpu max against
    onnxruntime; its outputs go to got[flavour]."""
    sub = au.fresh_dir(os.path.join(work, flavour))
    prog = build(path, sub, flavour, objdump)
    res = au.run_program(prog, [[c[2]["x"] for c in cases]], len(cases), 2, sub,
                         [QEMU, "-cpu", "max"])[0]
    got[flavour] = []
    bad = []
    for (name, _, _), (shape, raw), w in zip(cases, res, want):
        if tuple(shape) != w.shape:
            raise au.Failure("%s %s: shape %s, onnxruntime %s" % (flavour, name, shape, w.shape))
        y = raw.view(w.dtype).reshape(w.shape)
        got[flavour].append(y)
        d = np.abs(y.astype(np.int64) - w.astype(np.int64))
        if d.max() > 1 or (d > 0).mean() > 0.01:
            bad.append("%s: max diff %d from onnxruntime, %.2f%% of elements differ"
                       % (name, d.max(), 100 * (d > 0).mean()))
    if bad:
        raise au.Failure("%s: %s" % (flavour, "; ".join(bad)))


def check_same(cases, got, flavour):
    """The dot-product build's outputs are the portable sum's, bit for bit."""
    if flavour not in got or "baseline" not in got:
        raise au.Failure("%s: no outputs to compare (its build failed)" % flavour)
    for (name, _, _), y, y0 in zip(cases, got[flavour], got["baseline"]):
        if not np.array_equal(y, y0):
            raise au.Failure("%s %s: differs from the portable sum's output on %d elements"
                             % (flavour, name, int((y != y0).sum())))


def check_needs_i8mm(work, cases):
    """The +i8mm build dies on a CPU without I8MM."""
    sub = os.path.join(work, "i8mm")
    args = [QEMU, "-cpu", "cortex-a72", os.path.join(sub, "prog"), "1",
            os.path.join(sub, "a72_out")]
    for i, (_, _, feeds) in enumerate(cases):
        args += [os.path.join(sub, "g0_in%d.raw" % i), ",".join(str(d) for d in feeds["x"].shape)]
    if au.run(args, expect=None).returncode == 0:
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
    if only:
        cases = [c for c in cases if c[0] == only]
        if not cases:
            print("no case named %r" % only)
            return 1
    with tempfile.TemporaryDirectory(prefix="ncc-aarch64-int8-") as work:
        model = merged_model(cases)
        path = os.path.join(work, "int8_dot.onnx")
        import onnx
        onnx.save(model, path)
        want = [run_ort(m, feeds) for _, m, feeds in cases]
        got = {}
        for flavour in FEATURES:
            r.check(flavour, check_flavour, work, flavour, path, cases, want, objdump, got)
        for flavour in ("dotprod", "i8mm"):
            r.check(flavour + " = baseline", check_same, cases, got, flavour)
        if "i8mm" in got:
            r.check("i8mm needs I8MM", check_needs_i8mm, work, cases)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
