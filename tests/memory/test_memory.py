#!/usr/bin/env python3
"""tests/memory/test_memory.py -- the memory budget (--max-memory) from the
command line: models that would make ncc allocate more than the budget fail
with exit status 4 and one "ncc: error:" line naming the node, constant or
value, before they allocate (peak RSS of the child stays small), and models
within the budget still run and match numpy.

Peak RSS is read with resource.getrusage(RUSAGE_CHILDREN) (the largest
child so far), so the small-RSS cases run first. Run with NCC=/path/to/ncc
(ctest sets it). Prints "N passed, M failed"; exits non-zero on failure.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402
RSS_LIMIT_KB = 200 * 1024  # deterministic: nothing big is ever touched
PHYS = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def ncc(*args, timeout=120):
    p = subprocess.run([NCC, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def peak_rss_kb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def expect_nomem(name, args, *needles, rss=False):
    rc, out, err = ncc(*args)
    lines = err.strip().splitlines()
    check(f"{name}: exit 4", rc == 4, f"rc={rc} err={err[-500:]!r}")
    check(f"{name}: one error line", len(lines) == 1 and lines[0].startswith("ncc: error: "),
          repr(err[-500:]))
    for n in ("over the memory budget of", "(--max-memory)") + needles:
        check(f"{name}: mentions {n!r}", n in err, repr(err[-500:]))
    if rss:  # the amplifying models; the small ones need no bound
        check(f"{name}: peak RSS below 200 MB", peak_rss_kb() < RSS_LIMIT_KB,
              f"{peak_rss_kb()} KB")


def concat_bomb(path):
    """The reported model: Concat(c, c) 34 times, about 1.4 KB."""
    c = numpy_helper.from_array(np.ones(16, np.float32), "c")
    nodes, prev = [], "c"
    for i in range(34):
        nodes.append(helper.make_node("Concat", [prev, prev], [f"t{i}"], axis=0))
        prev = f"t{i}"
    g = helper.make_graph(nodes, "amp", [],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)],
                          initializer=[c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, path)


# -DNCC_LLVM=OFF: no cpu target and no --emit=obj; those cases are skipped.
LLVM = os.environ.get("NCC_WITH_LLVM", "1") != "0"
TARGETS = ("cpu", "ref") if LLVM else ("ref",)


def main():
    tmp = tempfile.mkdtemp(prefix="ncc_memory_")
    out = os.path.join(tmp, "out")
    os.mkdir(out)

    # 1. the Concat bomb, default budget: compile, run, the interpreter
    amp = os.path.join(tmp, "amp.onnx")
    concat_bomb(amp)
    check("amp: about 1.4 KB", os.path.getsize(amp) < 1500, os.path.getsize(amp))
    if LLVM:
        expect_nomem("amp compile", ["compile", amp, "-o", os.path.join(tmp, "amp.o")],
                     "(Concat)", "TiB", rss=True)
    expect_nomem("amp run", ["run", amp, "--output-dir", out], "Concat", rss=True)
    expect_nomem("amp run -O0 ref", ["run", "-O0", "--target=ref", amp, "--output-dir", out],
                 "value 't33'", rss=True)
    check("amp: nothing written", os.listdir(out) == [], os.listdir(out))

    # 2. many big splats (256 MiB each, each within the per-splat limit)
    # adding up to more than the default budget (75% of physical memory)
    n = int(0.75 * PHYS) // (256 << 20) + 2
    lines = ["graph @s(%x: f32[67108864]) {"]
    lines += [f"  %c{i}: f32[67108864] = const splat({i}.0)" for i in range(n)]
    prev = "x"
    for i in range(n):
        lines.append(f"  %a{i} = Add(%{prev}, %c{i})")
        prev = f"a{i}"
    lines += [f"  return %{prev}", "}"]
    splats = os.path.join(tmp, "splats.nir")
    with open(splats, "w") as f:
        f.write("\n".join(lines) + "\n")
    expect_nomem("splats opt", ["opt", splats, "-o", os.path.join(tmp, "s.nir")],
                 "splats.nir:", "constant f32[67108864]", rss=True)
    expect_nomem("splats small budget", ["opt", "--max-memory=600M", splats],
                 "splats.nir:4:", "768.0 MiB", "600.0 MiB", rss=True)

    # 3. activations over --max-memory=1M: five 256 KiB values alive at once
    x = np.random.default_rng(1).standard_normal((64, 1024)).astype(np.float32)
    xp = os.path.join(tmp, "x.npy")
    np.save(xp, x)
    act = os.path.join(tmp, "act.nir")
    with open(act, "w") as f:
        f.write("graph @act(%x: f32[64,1024]) {\n"
                "  %a = Exp(%x)\n  %b = Neg(%x)\n  %c = Relu(%x)\n  %d = Tanh(%x)\n"
                "  %e = Sigmoid(%x)\n  %s1 = Add(%a, %b)\n  %s2 = Add(%s1, %c)\n"
                "  %s3 = Add(%s2, %d)\n  %y = Add(%s3, %e)\n  return %y\n}\n")
    if LLVM:
        expect_nomem("act compile 1M", ["compile", "--max-memory=1M", "--disable-pass=fusion",
                                        act, "-o", os.path.join(tmp, "act.o")], "node #")
    for tgt in TARGETS:
        expect_nomem(f"act run {tgt} 1M", ["run", "--max-memory=1M", f"--target={tgt}", act,
                                            "--input", f"x={xp}", "--output-dir", out],
                     "value '")
    want = np.exp(x) - x + np.maximum(x, 0) + np.tanh(x) + 1 / (1 + np.exp(-x))
    for tgt in TARGETS:
        rc, _, err = ncc("run", "--max-memory=4M", f"--target={tgt}", act, "--input",
                         f"x={xp}", "--output-dir", out)
        got = np.load(os.path.join(out, "y.npy")) if rc == 0 else None
        check(f"act run {tgt} 4M: ok", rc == 0 and np.allclose(got, want, rtol=1e-5, atol=1e-5),
              err[-300:])

    # 4. a symbolic batch bound to a huge value under a small budget
    w = numpy_helper.from_array(
        np.random.default_rng(2).standard_normal((16, 4096)).astype(np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("ReduceMax", ["r"], ["y"], keepdims=1, axes=[1], name="max")],
        "sym", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])], initializer=[w])
    sym = os.path.join(tmp, "sym.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sym)
    xb = np.random.default_rng(3).standard_normal((4000, 16)).astype(np.float32)
    xbp = os.path.join(tmp, "xb.npy")
    np.save(xbp, xb)
    for tgt in TARGETS:
        expect_nomem(f"sym run {tgt} batch 4000", ["run", "--max-memory=8M", f"--target={tgt}",
                                                    sym, "--input", f"x={xbp}",
                                                    "--output-dir", out],
                     "value 'h' (f32[N,4096], N = 4000)")
    # within the default budget it runs and matches numpy
    want = np.maximum(xb @ numpy_helper.to_array(w), 0).max(axis=1, keepdims=True)
    for tgt in TARGETS:
        rc, _, err = ncc("run", f"--target={tgt}", sym, "--input", f"x={xbp}", "--output-dir", out)
        got = np.load(os.path.join(out, "y.npy")) if rc == 0 else None
        check(f"sym run {tgt} default: ok",
              rc == 0 and np.allclose(got, want, rtol=1e-4, atol=1e-4), err[-300:])

    # 5. ONNX initializers count in total: three of 512 KiB each, 1M budget
    inits = [numpy_helper.from_array(np.full(131072, i, np.float32), f"w{i}") for i in range(3)]
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w0"], ["a"]), helper.make_node("Add", ["a", "w1"], ["b"]),
         helper.make_node("Add", ["b", "w2"], ["y"])], "inits",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [131072])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [131072])], initializer=inits)
    ini = os.path.join(tmp, "inits.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), ini)
    expect_nomem("initializers 1M", ["import", "--max-memory=1M", ini],
                 "initializer 'w2' (with the initializers before it)", "1.5 MiB",
                 "1.0 MiB")
    rc, _, err = ncc("import", "--max-memory=2M", ini, "-o", os.path.join(tmp, "inits.nir"))
    check("initializers 2M: ok", rc == 0, err)

    # 6. the option itself
    for bad in ("", "abc", "0", "12X", "-5", "1.5Q"):
        rc, _, err = ncc("opt", f"--max-memory={bad}", act)
        check(f"--max-memory={bad!r}: usage error", rc == 1 and "--max-memory" in err, err)
    for good in ("1048576", "1M", "1MiB", "1024K", "0.5G", "2T"):
        rc, _, err = ncc("opt", f"--max-memory={good}", act)
        check(f"--max-memory={good}: accepted", rc == 0, err)
    rc, out_help, _ = ncc("run", "--help")
    check("run --help describes --max-memory",
          "--max-memory=SIZE" in out_help and "75% of the" in out_help, out_help[-400:])

    shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
