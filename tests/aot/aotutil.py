"""tests/aot/aotutil.py — shared by the aot and aarch64 tests: build a
library with `ncc compile --emit=lib`, a program around it
(tests/aot/aot_main.c), run it (natively or under qemu-aarch64) and compare
its outputs with `ncc run --target=ref` on the same inputs.

Environment (set by ctest): NCC (the ncc binary), NCC_SRC (the source tree).
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx

NCC = os.environ.get("NCC", "ncc")
SRC = os.environ.get("NCC_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
MAIN_C = os.path.join(SRC, "tests", "aot", "aot_main.c")
sys.path.insert(0, os.path.join(SRC, "bench"))


class Failure(Exception):
    """A check that failed; the message says which and why."""


def run(cmd, expect=0, env=None, cwd=None, timeout=120):
    """Run cmd (a list); Failure unless it exits with `expect`."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=cwd,
                       timeout=timeout)
    if expect is not None and p.returncode != expect:
        raise Failure("%s: exit %d (expected %d): %s" % (
            " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd)),
            p.returncode, expect, (p.stderr or p.stdout).strip()[-600:]))
    return p


def io_names(model_path):
    """Graph input (non-initializer) and output names of an ONNX model."""
    m = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    ins = [i.name for i in m.graph.input if i.name not in inits]
    return ins, [o.name for o in m.graph.output]


def file_name(name):
    """An output name as `ncc run` writes it (CLI: other chars become _)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def api_prefix(lib_path):
    """The API prefix ncc derives from the library name."""
    base = os.path.basename(lib_path).split(".")[0]
    if base.startswith("lib") and len(base) > 3:
        base = base[3:]
    # codegen/escape.c ncc_escape_api_prefix
    base = re.sub(r"[^A-Za-z0-9]+", "_", base).strip("_")
    return base if re.match(r"[A-Za-z]", base) else "m" + base


def compile_lib(model, out, target="cpu", extra=()):
    run([NCC, "compile", model, "--target=" + target, "--emit=lib", "-o", out]
        + list(extra))
    header = os.path.splitext(out)[0] + ".h"
    if not os.path.isfile(out) or not os.path.isfile(header):
        raise Failure("%s: the library or its header is missing" % out)
    return header


def build_program(lib, header, prog, cc="cc", static=False):
    """Compile aot_main.c against the header and link the library."""
    p = api_prefix(lib)
    cmd = [cc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror",
           "-DMODEL=" + p, "-DMODEL_UPPER=" + p.upper(),
           '-DMODEL_H="%s"' % os.path.basename(header),
           "-I", os.path.dirname(os.path.abspath(header)), MAIN_C, lib,
           "-o", prog]
    if static:
        cmd[1:1] = ["-static"]
    else:
        cmd += ["-Wl,-rpath," + os.path.dirname(os.path.abspath(lib))]
    cmd += ["-lm", "-lpthread"]
    run(cmd)


def reference(model, inputs, outdir):
    """Outputs of `ncc run --target=ref` for inputs {name: array}."""
    os.makedirs(outdir, exist_ok=True)
    args = [NCC, "run", model, "--target=ref", "--output-dir", outdir]
    for i, (name, a) in enumerate(inputs.items()):
        path = os.path.join(outdir, "in%d.npy" % i)
        np.save(path, a)
        args += ["--input", "%s=%s" % (name, path)]
    run(args)
    _, outs = io_names(model)
    return [np.load(os.path.join(outdir, file_name(o) + ".npy")) for o in outs]


def run_program(prog, groups, n_outputs, threads, workdir, emulator=()):
    """Run prog on groups (a list of [array per input]) in one process;
    returns per group the list of output arrays (with their dtypes from
    `dtypes`)."""
    args = list(emulator) + [prog, str(threads)]
    prefixes = []
    for g, arrays in enumerate(groups):
        if g:
            args.append("--")
        prefix = os.path.join(workdir, "g%d_out" % g)
        prefixes.append(prefix)
        args.append(prefix)
        for i, a in enumerate(arrays):
            path = os.path.join(workdir, "g%d_in%d.raw" % (g, i))
            np.ascontiguousarray(a).tofile(path)
            args += [path, ",".join(str(d) for d in a.shape) if a.ndim else "-"]
    run(args, timeout=180)
    result = []
    for prefix in prefixes:
        outs = []
        for o in range(n_outputs):
            with open("%s%d.shape" % (prefix, o)) as f:
                shape = tuple(int(x) for x in f.read().split())
            outs.append((shape, np.fromfile("%s%d.raw" % (prefix, o), dtype=np.uint8)))
        result.append(outs)
    return result


def compare(name, got, want, rtol, atol):
    """got: (shape, raw bytes) from the library; want: the ref array."""
    shape, raw = got
    if tuple(shape) != tuple(want.shape):
        raise Failure("%s: shape %s, ref %s" % (name, shape, want.shape))
    g = raw.view(want.dtype).reshape(want.shape)
    if want.dtype.kind == "f":
        if not np.allclose(g, want, rtol=rtol, atol=atol, equal_nan=True):
            err = np.max(np.abs(g.astype(np.float64) - want))
            raise Failure("%s: max abs error %.3g (rtol %g, atol %g)" % (
                name, err, rtol, atol))
    elif not np.array_equal(g, want):
        raise Failure("%s: values differ" % name)


def check_model(model, workdir, batches, make_inputs, target="cpu", threads=2,
                static=False, cc="cc", emulator=(), rtol=1e-4, atol=1e-4):
    """Compile `model` for `target`, run it for every batch in one process
    and compare with ref. make_inputs(batch) -> {name: array}."""
    os.makedirs(workdir, exist_ok=True)
    base = os.path.splitext(os.path.basename(model))[0]
    lib = os.path.join(workdir, base + (".o" if static else ".so"))
    header = compile_lib(model, lib, target)
    prog = os.path.join(workdir, base + "_prog")
    build_program(lib, header, prog, cc=cc, static=static)
    ins, outs = io_names(model)
    feeds = [make_inputs(b) for b in batches]
    got = run_program(prog, [[f[n] for n in ins] for f in feeds], len(outs),
                      threads, workdir, emulator)
    for b, feed, res in zip(batches, feeds, got):
        want = reference(model, feed, os.path.join(workdir, "ref_b%d" % b))
        for o, name in enumerate(outs):
            compare("%s batch %d output '%s'" % (base, b, name), res[o], want[o],
                    rtol, atol)


class Runner:
    """Counts passed and failed checks and prints the summary line."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, fn, *args, **kw):
        try:
            fn(*args, **kw)
        except (Failure, subprocess.TimeoutExpired, OSError, ValueError) as e:
            self.failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)
            return False
        self.passed += 1
        print("ok   %s" % name, flush=True)
        return True

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path
