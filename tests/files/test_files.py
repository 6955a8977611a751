#!/usr/bin/env python3
"""tests/files/test_files.py -- how ncc treats files and odd-but-legal models:
zero-size tensors (batch 0) on ref/cpu/opencl against onnxruntime, output
file modes under umask 022/077 for every --emit kind and `run
--output-dir`, no temporaries left by SIGINT/SIGTERM/SIGKILL, a 250-byte
-o name, concurrent runs into one --output-dir, an output listed twice,
opsets up to the installed onnx's newest, `--input NAME=FILE` with '=' in
NAME, and file names in run-time errors.

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed".
"""
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402


def ncc(*args, cwd=None, env=None, umask=None, timeout=300):
    pre = (lambda: os.umask(umask)) if umask is not None else None
    p = subprocess.run([NCC, *args], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=timeout, preexec_fn=pre)
    return p


def sane(p):
    return 0 <= p.returncode <= 5 and "Sanitizer" not in p.stderr and \
        "runtime error" not in p.stderr


def one_error(p, code, *mentions):
    lines = p.stderr.splitlines()
    return (p.returncode == code and sane(p) and len(lines) == 1 and
            lines[0].startswith("ncc: error: ") and
            all(m in lines[0] for m in mentions))


# -DNCC_LLVM=OFF: no cpu target and no --emit=kir/llvm/asm/obj/lib; those
# cases are skipped (the ir, run and GPU ones still run).
LLVM = os.environ.get("NCC_WITH_LLVM", "1") != "0"


def usable(target):
    out = subprocess.run([NCC, "targets"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        c = line.split(None, 2)
        if len(c) >= 2 and c[0] == target:
            return c[1] == "yes"
    return False


def save(path, nodes, ins, outs, opset=17, inits=()):
    g = h.make_graph(nodes, "g", ins, outs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = min(m.ir_version, 10)
    onnx.save(m, path)
    return path


def vi(name, dims, t=T.FLOAT):
    return h.make_tensor_value_info(name, t, dims)


def ort_run(model, feeds):
    s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def listing(d):
    return sorted(os.listdir(d))


# ------------------------------------------------------------ zero-size
def zero_model(d):
    """batch N through conv, matmul, reductions, concat and a fused chain."""
    rng = np.random.default_rng(1)
    w = h.make_tensor("w", T.FLOAT, [4, 3, 3, 3],
                      rng.standard_normal((4, 3, 3, 3)).astype(np.float32).ravel())
    b = h.make_tensor("b", T.FLOAT, [4], rng.standard_normal(4).astype(np.float32))
    mm = h.make_tensor("mm", T.FLOAT, [8, 5],
                       rng.standard_normal((8, 5)).astype(np.float32).ravel())
    nodes = [
        h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c"], ["r"]),
        h.make_node("Mul", ["r", "r"], ["r2"]),
        h.make_node("Add", ["r2", "c"], ["chain"]),
        h.make_node("Sigmoid", ["chain"], ["sig"]),
        h.make_node("ReduceMean", ["sig"], ["gap"], axes=[2, 3], keepdims=0),
        h.make_node("Concat", ["gap", "gap"], ["cat"], axis=1),
        h.make_node("MatMul", ["cat", "mm"], ["y"]),
        h.make_node("ReduceSum", ["x", "ax"], ["s"], keepdims=1),
    ]
    return save(os.path.join(d, "zero.onnx"), nodes, [vi("x", ["N", 3, 6, 6])],
                [vi("y", ["N", 5]), vi("s", ["N", 1, 6, 6]), vi("sig", ["N", 4, 6, 6])],
                opset=17, inits=[w, b, mm, h.make_tensor("ax", T.INT64, [1], [1])])


def test_zero_size(d):
    model = zero_model(d)
    x = np.zeros((0, 3, 6, 6), np.float32)
    xp = os.path.join(d, "x0.npy")
    np.save(xp, x)
    want = ort_run(model, {"x": x})
    targets = [t for t in ("ref", "cpu", "opencl") if usable(t)]
    for t in targets:
        env = dict(os.environ)
        if t == "opencl":  # a cold kernel cache is where it crashed
            env["POCL_CACHE_DIR"] = tempfile.mkdtemp(dir=d)
        out = os.path.join(d, "zero_" + t)
        p = ncc("run", model, "--target=" + t, "--input", "x=" + xp,
                "--output-dir", out, env=env)
        # the one line `ncc run` prints when nodes run on reference kernels
        # (Concat and ReduceSum of empty tensors do) is expected, nothing else
        err = "".join(l for l in p.stderr.splitlines(True)
                      if not (l.startswith("ncc: warning: ") and "reference kernels" in l))
        ok = p.returncode == 0 and err == ""
        check(f"zero.{t}.exit", ok, f"rc={p.returncode} {p.stderr[-500:]}")
        if not ok:
            continue
        for name, ref in zip(["y", "s", "sig"], want):
            got = np.load(os.path.join(out, name + ".npy"))
            check(f"zero.{t}.{name}", got.shape == ref.shape and got.size == 0 and
                  got.dtype == ref.dtype, f"{got.shape} vs {ref.shape}")
    # the crash was intermittent (about 2 runs in 5): a whole-device graph,
    # each run with a fresh cold cache
    if "opencl" in targets:
        small = save(os.path.join(d, "relu0.onnx"), [h.make_node("Relu", ["x"], ["y"])],
                     [vi("x", ["N", 4])], [vi("y", ["N", 4])])
        np.save(os.path.join(d, "xs.npy"), np.zeros((0, 4), np.float32))
        bad = []
        for i in range(12):
            env = dict(os.environ, POCL_CACHE_DIR=tempfile.mkdtemp(dir=d))
            p = ncc("run", small, "--target=opencl", "--input", os.path.join(d, "xs.npy"),
                    "--output-dir", os.path.join(d, "relu0_out"), env=env)
            if p.returncode != 0 or p.stderr:
                bad.append(p.returncode)
        y = os.path.join(d, "relu0_out", "y.npy")
        check("zero.opencl.cold_cache", not bad and np.load(y).shape == (0, 4),
              f"exit codes of failed runs: {bad}")
    # a batch-1 run still works
    x1 = np.random.default_rng(2).standard_normal((1, 3, 6, 6)).astype(np.float32)
    np.save(xp, x1)
    want = ort_run(model, {"x": x1})
    for t in targets:
        out = os.path.join(d, "one_" + t)
        p = ncc("run", model, "--target=" + t, "--input", "x=" + xp,
                "--output-dir", out)
        good = p.returncode == 0 and all(
            np.allclose(np.load(os.path.join(out, n + ".npy")), r, rtol=1e-3, atol=1e-4)
            for n, r in zip(["y", "s", "sig"], want))
        check(f"one.{t}", good, p.stderr[-300:])


# ------------------------------------------------------------ modes
def small_model(d, name="m.onnx"):
    return save(os.path.join(d, name), [h.make_node("Relu", ["x"], ["y"])],
                [vi("x", [2, 3])], [vi("y", [2, 3])])


def mode_of(p):
    return stat.S_IMODE(os.stat(p).st_mode)


def test_modes(d):
    model = small_model(d)
    kinds = [("ir", "cpu", ".nir"), ("kir", "cpu", ".kir"), ("llvm", "cpu", ".ll"),
             ("asm", "cpu", ".s"), ("obj", "cpu", ".o"), ("opencl", "opencl", ".cl"),
             ("cuda", "cuda", ".cu"), ("ptx", "cuda", ".ptx")]
    if not LLVM:
        kinds = [("ir", "ref", ".nir")] + [k for k in kinds if k[1] != "cpu"]
    for mask, want in ((0o022, 0o644), (0o077, 0o600)):
        sub = tempfile.mkdtemp(dir=d)
        for kind, target, ext in kinds:
            out = os.path.join(sub, "out_" + kind + ext)
            p = ncc("compile", model, "--target=" + target, "--emit=" + kind,
                    "-o", out, umask=mask)
            if p.returncode == 3:  # e.g. no NVRTC for ptx
                continue
            check(f"mode.{kind}.{mask:03o}", p.returncode == 0 and mode_of(out) == want,
                  f"rc={p.returncode} {p.stderr[-200:]} mode="
                  f"{oct(mode_of(out)) if os.path.exists(out) else None}")
        if LLVM:
            lib = os.path.join(sub, "lib.so")
            p = ncc("compile", model, "--emit=lib", "-o", lib, umask=mask)
            check(f"mode.lib.{mask:03o}", p.returncode == 0 and mode_of(lib) == want and
                  mode_of(os.path.join(sub, "lib.h")) == want,
                  f"{p.stderr} {[oct(mode_of(os.path.join(sub, f))) for f in ('lib.so', 'lib.h') if os.path.exists(os.path.join(sub, f))]}")
        xp = os.path.join(sub, "x.npy")
        np.save(xp, np.ones((2, 3), np.float32))
        outd = os.path.join(sub, "run")
        p = ncc("run", model, "--input", xp, "--output-dir", outd, umask=mask)
        y = os.path.join(outd, "y.npy")
        check(f"mode.run.{mask:03o}", p.returncode == 0 and mode_of(y) == want,
              p.stderr)
        check(f"mode.clean.{mask:03o}", all(not f.startswith(".") for f in os.listdir(sub)),
              listing(sub))


# ------------------------------------------------------------ signals
SLOW_CC = """#!/bin/sh
# a C compiler that starts writing its output and then takes its time (in
# a child process of its own, as a real driver's cc1 is)
for a in "$@"; do case "$prev" in -o) out="$a";; esac; prev="$a"; done
echo partial > "$out"
sleep 60 &
echo $! > "{pidfile}.child"
echo $$ > "{pidfile}"
wait
"""


def wait_for(path, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.05)
    return False


# one that ignores the interrupt as well (some compilers' drivers catch it;
# a shell that forks its next command just after the signal misses it)
DEAF_CC = SLOW_CC.replace("# a C", 'trap "" INT TERM\n# a C')


def slow_lib(d, sig, tag, script=SLOW_CC):
    """Start `ncc compile --emit=lib` with a compiler that hangs, send `sig`
    once it runs; return (ncc's returncode, listing before, after)."""
    sub = os.path.join(d, "sig_" + tag)
    os.mkdir(sub)
    model = small_model(d, "sig_" + tag + ".onnx")
    pidfile = os.path.join(d, "cc_" + tag + ".pid")
    cc = os.path.join(d, "slowcc_" + tag + ".sh")
    with open(cc, "w") as f:
        f.write(script.replace("{pidfile}", pidfile))
    os.chmod(cc, 0o755)
    env = dict(os.environ, NCC_CC=cc)
    before = listing(sub)
    p = subprocess.Popen([NCC, "compile", model, "--emit=lib", "-o",
                          os.path.join(sub, "lib.so")], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started = wait_for(pidfile)
    os.kill(p.pid, sig)
    p.communicate(timeout=60)
    ccpid = int(open(pidfile).read()) if started else None
    return p.returncode, before, listing(sub), sub, model, ccpid


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie still answers: look at its state
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_signals(d):
    if not LLVM:  # the signals arrive during --emit=lib
        return
    for sig, tag in ((signal.SIGINT, "int"), (signal.SIGTERM, "term")):
        rc, before, after, _, _, ccpid = slow_lib(d, sig, tag)
        check(f"signal.{tag}.rc", rc == -sig, f"rc={rc}")
        check(f"signal.{tag}.clean", after == before, f"{before} -> {after}")
        if ccpid:
            time.sleep(0.2)
            check(f"signal.{tag}.cc_stopped", gone(ccpid), f"cc {ccpid} still runs")
            if not gone(ccpid):
                os.kill(ccpid, signal.SIGKILL)
    # a compiler deaf to the signal is killed after a grace period, and
    # its child with it
    t0 = time.time()
    rc, before, after, _, _, ccpid = slow_lib(d, signal.SIGINT, "deaf", DEAF_CC)
    check("signal.deaf.rc", rc == -signal.SIGINT and time.time() - t0 < 30,
          f"rc={rc} after {time.time() - t0:.1f} s")
    check("signal.deaf.clean", after == before, f"{before} -> {after}")
    if ccpid:
        time.sleep(0.2)
        kid = int(open(os.path.join(d, "cc_deaf.pid.child")).read())
        for pid, what in ((ccpid, "cc"), (kid, "its child")):
            check("signal.deaf.cc_stopped", gone(pid), f"{what} {pid} still runs")
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
    rc, before, after, sub, model, ccpid = slow_lib(d, signal.SIGKILL, "kill")
    if ccpid and not gone(ccpid):
        os.kill(ccpid, signal.SIGKILL)
    # the killed run may leave its work dir; the next run must sweep it
    p = ncc("compile", model, "--emit=lib", "-o", os.path.join(sub, "lib.so"))
    check("signal.kill.sweep", p.returncode == 0 and
          listing(sub) == sorted(before + ["lib.h", "lib.so"]),
          f"rc={p.returncode} {p.stderr} {listing(sub)}")


# ------------------------------------------------------------ long names
def test_long_name(d):
    model = small_model(d)
    sub = tempfile.mkdtemp(dir=d)
    for kind, ext in (("ir", ".nir"), ("obj", ".o"), ("lib", ".so"))[:3 if LLVM else 1]:
        name = ("n" * (250 - len(ext))) + ext
        p = ncc("compile", model, "--emit=" + kind, "-o", os.path.join(sub, name))
        check(f"longname.{kind}", p.returncode == 0 and os.path.exists(os.path.join(sub, name)),
              p.stderr[-300:])
    check("longname.clean", all(not f.startswith(".") for f in os.listdir(sub)),
          listing(sub))


# ------------------------------------------------------------ concurrent runs
def test_concurrent(d):
    k = 12
    nodes = [h.make_node("Add", ["x", f"c{i}"], [f"y{i}"]) for i in range(k)]
    inits = [h.make_tensor(f"c{i}", T.FLOAT, [1], [float(i)]) for i in range(k)]
    model = save(os.path.join(d, "many.onnx"), nodes, [vi("x", [256, 256])],
                 [vi(f"y{i}", [256, 256]) for i in range(k)], inits=inits)
    xs = []
    for v in (1000.0, 2000.0):
        p = os.path.join(d, f"x{int(v)}.npy")
        np.save(p, np.full((256, 256), v, np.float32))
        xs.append(p)
    out = os.path.join(d, "shared_out")
    mixed = 0
    for rep in range(15):
        procs = [subprocess.Popen([NCC, "run", model, "--target=ref", "--input", x,
                                   "--output-dir", out],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for x in xs]
        rcs = [p.wait() for p in procs]
        if any(rcs):
            check("concurrent.rc", False, f"{rcs} {procs[0].stderr.read()}")
            break
        bases = {float(np.load(os.path.join(out, f"y{i}.npy"))[0, 0]) - i for i in range(k)}
        if len(bases) != 1:
            mixed += 1
    check("concurrent.consistent", mixed == 0, f"{mixed} of 15 sets mixed")
    check("concurrent.clean", sorted(os.listdir(out)) == sorted(f"y{i}.npy" for i in range(k)),
          listing(out))


# ------------------------------------------------------------ compatibility
def test_duplicate_output(d):
    model = save(os.path.join(d, "dup.onnx"),
                 [h.make_node("Relu", ["x"], ["y"]), h.make_node("Neg", ["x"], ["z"])],
                 [vi("x", [2, 3])], [vi("y", [2, 3]), vi("z", [2, 3]), vi("y", [2, 3])])
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    xp = os.path.join(d, "dupx.npy")
    np.save(xp, x)
    want = ort_run(model, {"x": x})
    for t in ("ref", "cpu") if LLVM else ("ref",):
        out = os.path.join(d, "dup_" + t)
        p = ncc("run", model, "--target=" + t, "--input", xp, "--output-dir", out)
        ok = p.returncode == 0
        check(f"dup.{t}.rc", ok, p.stderr)
        if ok:
            # documented names: the first listing is y.npy, a later one y_<index>.npy
            files = ["y.npy", "z.npy", "y_2.npy"]
            check(f"dup.{t}.files", sorted(os.listdir(out)) == sorted(files), listing(out))
            check(f"dup.{t}.values", all(
                os.path.exists(os.path.join(out, f)) and
                np.array_equal(np.load(os.path.join(out, f)), w)
                for f, w in zip(files, want)))
    if not LLVM:
        return
    lib = os.path.join(d, "duplib.so")
    p = ncc("compile", model, "--emit=lib", "-o", lib)
    check("dup.lib", p.returncode == 0 and os.path.exists(lib), p.stderr)
    if p.returncode == 0:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "aot"))
        import aotutil
        prog = os.path.join(d, "dupprog")
        aotutil.build_program(lib, os.path.join(d, "duplib.h"), prog)
        got = aotutil.run_program(prog, [[x]], 3, 1, d)[0]
        check("dup.lib.values", all(
            shape == w.shape and np.array_equal(raw.view(np.float32).reshape(shape), w)
            for (shape, raw), w in zip(got, want)), got)


def test_opsets(d):
    newest = onnx.defs.onnx_opset_version()
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    xp = os.path.join(d, "opx.npy")
    np.save(xp, x)
    for ops in sorted({21, 22, 23, 24, 25, newest}):
        model = save(os.path.join(d, f"op{ops}.onnx"),
                     [h.make_node("Relu", ["x"], ["r"]),
                      h.make_node("Cast", ["r"], ["c"], to=T.DOUBLE),
                      h.make_node("Reshape", ["c", "shp"], ["y"])],
                     [vi("x", [2, 3])], [vi("y", [3, 2], T.DOUBLE)], opset=ops,
                     inits=[h.make_tensor("shp", T.INT64, [2], [3, 2])])
        want = ort_run(model, {"x": x})[0]
        out = os.path.join(d, f"op{ops}_out")
        p = ncc("run", model, "--input", xp, "--output-dir", out)
        check(f"opset.{ops}", p.returncode == 0 and
              np.array_equal(np.load(os.path.join(out, "y.npy")), want), p.stderr)
    # Cast's round_mode (opset 25+) only concerns float8e8m0: accepted
    m = save(os.path.join(d, "castrm.onnx"),
             [h.make_node("Cast", ["x"], ["y"], to=T.DOUBLE, round_mode="up")],
             [vi("x", [2, 3])], [vi("y", [2, 3], T.DOUBLE)], opset=newest)
    out = os.path.join(d, "castrm_out")
    p = ncc("run", m, "--input", xp, "--output-dir", out)
    check("opset.cast_round_mode", p.returncode == 0 and np.array_equal(
        np.load(os.path.join(out, "y.npy")), ort_run(m, {"x": x})[0]), p.stderr)
    m = save(os.path.join(d, "castrm21.onnx"),
             [h.make_node("Cast", ["x"], ["y"], to=T.DOUBLE, round_mode="up")],
             [vi("x", [2, 3])], [vi("y", [2, 3], T.DOUBLE)], opset=21)
    p = ncc("run", m, "--input", xp, "--output-dir", out)
    check("opset.cast_round_mode_21", one_error(p, 2, "round_mode", "24"), p.stderr)
    # Range 27+: a float16 range accumulates in float32 by default, which
    # ncc cannot honour (exit 3 naming Range and the opset); stash_type=0
    # and other dtypes are ncc's meaning (compared with numpy's arange)
    def rng(path, dt, npdt, **kw):
        vals = [np.array(v, npdt) for v in (0, 4, 1)]
        mk = (lambda n, v: h.make_tensor(n, dt, [], [v.view(np.uint16)])) \
            if npdt == np.float16 else (lambda n, v: h.make_tensor(n, dt, [], [v]))
        return save(os.path.join(d, path),
                    [h.make_node("Range", ["s", "l", "dl"], ["y"], **kw)],
                    [], [vi("y", [4], dt)], opset=newest,
                    inits=[mk(n, v) for n, v in zip(("s", "l", "dl"), vals)])
    if newest >= 27:
        p = ncc("run", rng("r16.onnx", T.FLOAT16, np.float16), "--output-dir", out)
        check("opset.range_stash_f16", one_error(p, 3, "Range", str(newest)), p.stderr)
        p = ncc("run", rng("r32.onnx", T.FLOAT, np.float32, stash_type=1),
                "--output-dir", out)
        check("opset.range_f32", p.returncode == 0 and np.array_equal(
            np.load(os.path.join(out, "y.npy")), np.arange(4, dtype=np.float32)), p.stderr)
    m = save(os.path.join(d, "range21.onnx"),
             [h.make_node("Range", ["s", "l", "dl"], ["y"], stash_type=1)], [],
             [vi("y", [4])], opset=21,
             inits=[h.make_tensor(n, T.FLOAT, [], [v]) for n, v in (("s", 0), ("l", 4), ("dl", 1))])
    p = ncc("run", m, "--output-dir", out)
    check("opset.range_stash_21", one_error(p, 2, "stash_type", "27"), p.stderr)
    # newer than the newest known opset: exit 3, naming it
    m = save(os.path.join(d, "opfuture.onnx"), [h.make_node("Relu", ["x"], ["y"])],
             [vi("x", [2, 3])], [vi("y", [2, 3])], opset=newest + 50)
    p = ncc("run", m, "--input", xp, "--output-dir", out)
    check("opset.future", one_error(p, 3, str(newest + 50), "newer"), p.stderr)


def test_input_equals(d):
    model = save(os.path.join(d, "eq.onnx"),
                 [h.make_node("Add", ["a=b", "c"], ["y"])],
                 [vi("a=b", [2]), vi("c", [2])], [vi("y", [2])])
    ap, cp = os.path.join(d, "a.npy"), os.path.join(d, "c=d.npy")
    np.save(ap, np.array([1, 2], np.float32))
    np.save(cp, np.array([10, 20], np.float32))
    out = os.path.join(d, "eq_out")
    p = ncc("run", model, "--input", "a=b=" + ap, "--input", "c=" + cp,
            "--output-dir", out)
    check("input_eq.split", p.returncode == 0 and np.array_equal(
        np.load(os.path.join(out, "y.npy")), [11, 22]), p.stderr)
    # ambiguous: inputs "a" and "a=b" both exist and "a=b=FILE" fits both
    model2 = save(os.path.join(d, "eq2.onnx"),
                  [h.make_node("Add", ["a", "a=b"], ["y"])],
                  [vi("a", [2]), vi("a=b", [2])], [vi("y", [2])])
    os.makedirs(os.path.join(d, "b="), exist_ok=True)
    np.save(os.path.join(d, "b=", "x.npy"), np.array([1, 2], np.float32))
    p = ncc("run", model2, "--input", "a=b=" + os.path.join(d, "b=", "x.npy"),
            "--input", "a=" + ap, "--output-dir", out, cwd=d)
    check("input_eq.ambiguous", one_error(p, 1, "'a'", "'a=b'"), p.stderr)


def test_error_paths(d):
    model = small_model(d, "err.onnx")
    xp = os.path.join(d, "errx.npy")
    np.save(xp, np.ones((2, 3), np.float32))
    # an output dir where a file is in the way of the lock/commit
    blocked = os.path.join(d, "blocked")
    os.mkdir(blocked)
    os.mkdir(os.path.join(blocked, "y.npy"))
    p = ncc("run", model, "--input", xp, "--output-dir", blocked)
    check("errpath.dir_in_way", one_error(p, 2, os.path.join(blocked, "y.npy")), p.stderr)
    ro = os.path.join(d, "readonly")
    os.mkdir(ro)
    os.chmod(ro, 0o555)
    if os.geteuid() != 0:
        for kind in ("ir", "obj", "lib", "opencl") if LLVM else ("ir", "opencl"):
            tgt = "opencl" if kind == "opencl" else "cpu" if LLVM else "ref"
            o = os.path.join(ro, "o." + kind)
            p = ncc("compile", model, "--target=" + tgt, "--emit=" + kind, "-o", o)
            check(f"errpath.{kind}", one_error(p, 2, o), p.stderr)
        p = ncc("run", model, "--input", xp, "--output-dir", ro)
        check("errpath.run", one_error(p, 2, ro), p.stderr)
    os.chmod(ro, 0o755)
    xp2 = os.path.join(d, "errx2.npy")
    np.save(xp2, np.ones((2, 3), np.float32))
    p = ncc("run", model, "--input", "x=" + xp, "--input", "x=" + xp2, "--output-dir", ro)
    check("errpath.twice", one_error(p, 1, xp, xp2), p.stderr)
    p = ncc("run", model, "--input", os.path.join(d, "missing.npy"), "--output-dir", ro)
    check("errpath.missing_input", one_error(p, 2, os.path.join(d, "missing.npy")), p.stderr)


def main():
    with tempfile.TemporaryDirectory() as d:
        for t in (test_zero_size, test_modes, test_signals, test_long_name,
                  test_concurrent, test_duplicate_output, test_opsets,
                  test_input_equals, test_error_paths):
            sub = os.path.join(d, t.__name__)
            os.mkdir(sub)
            try:
                t(sub)
            except Exception as e:  # a crash in one group must not hide others
                import traceback
                traceback.print_exc()
                check(t.__name__, False, repr(e))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
