#!/usr/bin/env python3
"""tests/cache/test_cache.py -- the persistent compile cache of the cpu
target (docs/CODEGEN.md, "Compile cache"; `ncc cache`).

Cold compile: one entry written per compiled kernel (misses = kernels);
warm compile: every kernel a hit, outputs byte-identical to the cold run
and close to onnxruntime's; a second model with one equal Conv+Relu block
(other node names, other weights) hits for that kernel only; damaged
entries (truncated, a payload byte flipped, another key in the header) are
misses, rebuilt, and the outputs stay right; two kernels of the same name
and other code never share an entry; a narrower vector width
(NCC_VECTOR_WIDTH) has entries of its own; a cache directory that cannot
exist (under a regular file: the tests run as root, so chmod would not
stop writes) leaves the compile working; two concurrent `ncc run` on an
empty cache both succeed and leave a valid cache; NCC_CACHE_DIR and
--no-cache; `ncc cache stats|clear` and their usage errors.

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed".
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
from checks import check, finish  # noqa: E402

NCC = os.environ.get("NCC", "ncc")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("NCC_")}
HEADER = 88  # ir/kcache.h


def model(path, convs, seed, prefix, hw=12):
    """x[1,8,hw,hw] -> (Conv+Relu) per (oc, ic) in convs; node and value
    names start with `prefix` so two models share no names."""
    rng = np.random.default_rng(seed)
    nodes, inits, cur = [], [], "x"
    for i, (oc, ic) in enumerate(convs):
        w, c, r = f"{prefix}w{i}", f"{prefix}c{i}", f"{prefix}r{i}"
        inits.append(numpy_helper.from_array(
            rng.standard_normal((oc, ic, 3, 3)).astype(np.float32) * 0.2, w))
        nodes.append(helper.make_node("Conv", [cur, w], [c], pads=[1, 1, 1, 1],
                                      name=prefix + "conv%d" % i))
        nodes.append(helper.make_node("Relu", [c], [r], name=prefix + "relu%d" % i))
        cur = r
    nodes.append(helper.make_node("Identity", [cur], ["y"], name=prefix + "out"))
    oc = convs[-1][0]
    g = helper.make_graph(
        nodes, prefix + "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, oc, hw, hw])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def run(args, env=None):
    e = dict(ENV)
    e.update(env or {})
    return subprocess.run([NCC, *args], capture_output=True, text=True, env=e)


def bench(m, cache_args, env=None):
    """compile_breakdown of a one-run bench (None when it failed)."""
    p = run(["bench", m, "--iters", "1", "--warmup", "0", "--json", *cache_args], env)
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        return None
    return json.loads(p.stdout)["compile_breakdown"]


def compiled(b):
    return [k for k in b["kernels"] if not k["reused"]]


def outputs(m, x_path, out_dir, cache_args, env=None):
    os.makedirs(out_dir, exist_ok=True)
    p = run(["run", m, "--input", "x=" + x_path, "--output-dir", out_dir, *cache_args], env)
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        return None
    return np.load(os.path.join(out_dir, "y.npy"))


def entries(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".ncck")) if os.path.isdir(d) else []


def stats(d):
    p = run(["cache", "stats", "--cache-dir", d])
    rows = dict(l.split(None, 1) for l in p.stdout.splitlines() if l.strip())
    return p.returncode, rows


def main():
    tmp = tempfile.mkdtemp(prefix="ncc-cache-test-")
    a, b = os.path.join(tmp, "a.onnx"), os.path.join(tmp, "b.onnx")
    model(a, [(16, 8), (8, 16)], 0, "a_")
    # shares only the first block's kernel (Conv 8->16 + Relu), other
    # weights and names; its second conv differs (16 -> 4)
    model(b, [(16, 8), (4, 16)], 1, "b_")
    x = np.random.default_rng(2).standard_normal((1, 8, 12, 12)).astype(np.float32)
    xp = os.path.join(tmp, "x.npy")
    np.save(xp, x)
    want = ort.InferenceSession(a, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    d = os.path.join(tmp, "cache")
    cd = ["--cache-dir", d]

    # cold, then warm
    cold = bench(a, cd)
    check("cold: compiles", cold is not None)
    if cold is None:
        return finish()
    n = len(compiled(cold))
    check("cold: kernels compiled", n >= 2, cold["kernels"])
    check("cold: misses = kernels, no hits",
          cold["cache_misses"] == n and cold["cache_hits"] == 0, cold)
    check("cold: one entry per kernel", len(entries(d)) == n, entries(d))
    check("cold: cache_dir reported", cold["cache_dir"] == d, cold["cache_dir"])
    warm = bench(a, cd)
    check("warm: every kernel a hit",
          warm and warm["cache_hits"] == n and warm["cache_misses"] == 0, warm)
    check("warm: rows flagged, no opt or codegen by LLVM",
          warm and all(k["cache_hit"] and k["opt"] == 0 for k in compiled(warm)), warm)
    # another compile-speed tier optimises differently: its own entries
    tier = bench(a, cd + ["--codegen-opt=1"])
    check("another tier (--codegen-opt=1): every kernel a miss",
          tier and tier["cache_misses"] == n and tier["cache_hits"] == 0, tier)
    check("another tier: entries of its own", len(entries(d)) == 2 * n, entries(d))
    # tiers 0 and 1 share the pass pipeline and differ in machine-code level
    tier0 = bench(a, cd + ["--codegen-opt=0"])
    check("tier 0 after tier 1 (same passes, other machine code): every kernel a miss",
          tier0 and tier0["cache_misses"] == n and tier0["cache_hits"] == 0, tier0)
    y_cold = outputs(a, xp, os.path.join(tmp, "o1"), ["--no-cache"])
    y_warm = outputs(a, xp, os.path.join(tmp, "o2"), cd)
    check("warm: outputs identical to a cache-less run",
          y_cold is not None and y_warm is not None and np.array_equal(y_cold, y_warm))
    check("warm: outputs match onnxruntime",
          y_warm is not None and np.allclose(y_warm, want, rtol=1e-4, atol=1e-4))

    # another model sharing one kernel
    sb = bench(b, cd)
    check("shared: one hit, the rest misses",
          sb and sb["cache_hits"] == 1 and sb["cache_misses"] == len(compiled(sb)) - 1, sb)
    want_b = ort.InferenceSession(b, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    yb = outputs(b, xp, os.path.join(tmp, "o3"), cd)
    check("shared: outputs match onnxruntime",
          yb is not None and np.allclose(yb, want_b, rtol=1e-4, atol=1e-4))

    # the key is the kernel's code, not its name: c and e each have one
    # Conv+Relu kernel under the same name; e's image is 10x10, not 12x12,
    # so its kernel differs from c's in constants only (loop bounds,
    # strides). e must not load c's object, nor overwrite it.
    c, e = os.path.join(tmp, "c.onnx"), os.path.join(tmp, "e.onnx")
    model(c, [(16, 8)], 3, "c_")
    model(e, [(16, 8)], 3, "c_", hw=10)
    xe = np.random.default_rng(5).standard_normal((1, 8, 10, 10)).astype(np.float32)
    xep = os.path.join(tmp, "xe.npy")
    np.save(xep, xe)
    d5 = os.path.join(tmp, "cache5")
    sc = bench(c, ["--cache-dir", d5])
    se = bench(e, ["--cache-dir", d5])
    names = lambda r: sorted(k["name"] for k in compiled(r)) if r else None
    check("same name, other code: the names are equal",
          sc and se and names(sc) == names(se), (names(sc), names(se)))
    check("same name, other code: a miss",
          se and se["cache_hits"] == 0 and se["cache_misses"] == len(compiled(se)), se)
    for m_, xin, xpath, tag in ((e, xe, xep, "e"), (c, x, xp, "c")):
        want_m = ort.InferenceSession(m_, providers=["CPUExecutionProvider"]).run(
            None, {"x": xin})[0]
        y = outputs(m_, xpath, os.path.join(tmp, "o_" + tag), ["--cache-dir", d5])
        check(f"same name, other code: outputs of {tag} right",
              y is not None and y.shape == want_m.shape and
              np.allclose(y, want_m, rtol=1e-4, atol=1e-4))
    sc = bench(c, ["--cache-dir", d5])
    check("same name, other code: the first entry kept (all hits)",
          sc and sc["cache_hits"] == len(compiled(sc)) and sc["cache_misses"] == 0, sc)

    # a narrower vector width (ncc_options.vector_width) lowers other code:
    # its own entries, then hits, and right outputs from them
    d6 = os.path.join(tmp, "cache6")
    bench(a, ["--cache-dir", d6])
    for rnd in ("miss", "hit"):
        r = bench(a, ["--cache-dir", d6], {"NCC_VECTOR_WIDTH": "4"})
        ok = r and (r["cache_misses"] == n and r["cache_hits"] == 0 if rnd == "miss"
                    else r["cache_hits"] == n and r["cache_misses"] == 0)
        check(f"NCC_VECTOR_WIDTH=4 after the host width: {rnd}", ok, r)
    y = outputs(a, xp, os.path.join(tmp, "o6"), ["--cache-dir", d6], {"NCC_VECTOR_WIDTH": "4"})
    check("NCC_VECTOR_WIDTH=4 from the cache: outputs right",
          y is not None and np.allclose(y, want, rtol=1e-4, atol=1e-4))

    # damaged entries: each is a miss, rebuilt, and the outputs stay right
    d2 = os.path.join(tmp, "cache2")
    bench(a, ["--cache-dir", d2])
    files = [os.path.join(d2, f) for f in entries(d2)]
    check("damage: entries to damage", len(files) == n, files)
    damages = {
        "truncated": lambda p: open(p, "r+b").truncate(os.path.getsize(p) - 7),
        "payload byte flipped": lambda p: flip(p, os.path.getsize(p) - 1),
        "wrong key in header": lambda p: flip(p, 20),
        "empty file": lambda p: open(p, "wb").close(),
    }
    for what, damage in damages.items():
        damage(files[0])
        r = bench(a, ["--cache-dir", d2])
        check(f"damage ({what}): rebuilt",
              r and r["cache_misses"] == 1 and r["cache_hits"] == n - 1, r)
        y = outputs(a, xp, os.path.join(tmp, "o4"), ["--cache-dir", d2])
        check(f"damage ({what}): outputs right",
              y is not None and np.allclose(y, want, rtol=1e-4, atol=1e-4))
        r = bench(a, ["--cache-dir", d2])
        check(f"damage ({what}): the rebuilt entry is good",
              r and r["cache_hits"] == n and r["cache_misses"] == 0, r)

    # a directory that cannot be made
    f = os.path.join(tmp, "plainfile")
    open(f, "w").close()
    bad = os.path.join(f, "cache")
    r = bench(a, ["--cache-dir", bad])
    check("unwritable dir: compile succeeds", r is not None and r["cache_hits"] == 0, r)
    y = outputs(a, xp, os.path.join(tmp, "o5"), ["--cache-dir", bad])
    check("unwritable dir: outputs right",
          y is not None and np.allclose(y, want, rtol=1e-4, atol=1e-4))

    # two concurrent runs on an empty cache
    d3 = os.path.join(tmp, "cache3")
    procs = []
    for i in range(2):
        od = os.path.join(tmp, "c%d" % i)
        os.makedirs(od)
        e = dict(ENV)
        procs.append((od, subprocess.Popen(
            [NCC, "run", a, "--input", "x=" + xp, "--output-dir", od, "--cache-dir", d3],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)))
    for od, p in procs:
        p.communicate()
        check("concurrent: run succeeds", p.returncode == 0)
        check("concurrent: outputs right",
              np.allclose(np.load(os.path.join(od, "y.npy")), want, rtol=1e-4, atol=1e-4))
    check("concurrent: no temporaries left", all(f.endswith(".ncck") for f in os.listdir(d3)),
          os.listdir(d3))
    r = bench(a, ["--cache-dir", d3])
    check("concurrent: the cache is valid (all hits)",
          r and r["cache_hits"] == n and r["cache_misses"] == 0, r)

    # the environment: NCC_CACHE_DIR, NCC_CACHE=0, --no-cache
    d4 = os.path.join(tmp, "cache4")
    r = bench(a, [], {"NCC_CACHE_DIR": d4})
    check("env: NCC_CACHE_DIR used", r and r["cache_dir"] == d4 and len(entries(d4)) == n, r)
    r = bench(a, [], {"NCC_CACHE_DIR": d4, "NCC_CACHE": "0"})
    check("env: NCC_CACHE=0 turns it off",
          r and r["cache_dir"] is None and r["cache_hits"] == 0, r)
    r = bench(a, ["--no-cache"], {"NCC_CACHE_DIR": d4})
    check("--no-cache: off", r and r["cache_dir"] is None and r["cache_hits"] == 0, r)
    r = bench(a, [], {"HOME": tmp, "XDG_CACHE_HOME": ""})
    check("default: ~/.cache/ncc", r and r["cache_dir"] == os.path.join(tmp, ".cache", "ncc"),
          r and r["cache_dir"])

    # ncc cache stats | clear
    rc, rows = stats(d)
    size = sum(os.path.getsize(os.path.join(d, f)) for f in entries(d))
    check("stats: entries and bytes",
          rc == 0 and rows.get("entries") == str(len(entries(d))) and
          rows.get("bytes") == str(size) and rows.get("directory") == d, rows)
    open(os.path.join(d, "keep.txt"), "w").close()
    p = run(["cache", "clear", "--cache-dir", d])
    check("clear: succeeds", p.returncode == 0, p.stderr)
    check("clear: entries gone, other files kept",
          entries(d) == [] and os.path.exists(os.path.join(d, "keep.txt")), os.listdir(d))
    rc, rows = stats(d)
    check("stats after clear: empty", rc == 0 and rows.get("entries") == "0", rows)
    rc, rows = stats(os.path.join(tmp, "never-made"))
    check("stats: a missing directory is an empty cache", rc == 0 and rows.get("entries") == "0")
    p = run(["cache", "frob", "--cache-dir", d])
    check("cache: unknown action is a usage error",
          p.returncode == 1 and p.stderr.startswith("ncc: error: unknown cache action"), p.stderr)
    p = run(["cache"])
    check("cache: no action is a usage error", p.returncode == 1 and "stats or clear" in p.stderr,
          p.stderr)
    p = run(["cache", "stats"], {"NCC_CACHE": "0"})
    check("cache: no cache directory is a usage error", p.returncode == 1, p.stderr)
    return finish()


def flip(path, off):
    with open(path, "r+b") as f:
        f.seek(off)
        c = f.read(1)
        f.seek(off)
        f.write(bytes([c[0] ^ 0x55]))


if __name__ == "__main__":
    sys.exit(main())
