#!/usr/bin/env python3
"""tests/options/test_options_cli.py -- the driver's configuration: the
environment variables `ncc` documents (libncc reads none; the driver turns
them into ncc_options) and --threads on `ncc run` and `ncc bench`.

`ncc bench` reports the kernel threads it ran with (text and --json): from
NCC_NUM_THREADS, overridden by --threads, else one per online core (the
oracle: os.sysconf). Outputs are checked against numpy; NCC_VECTOR_WIDTH
must still shape the emitted kernels (a width-w loop is vector(4*w)).

Run with NCC=/path/to/ncc (ctest sets it). Prints "N passed, M failed" and
exits non-zero when something failed.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402
# the variables under test start unset, whatever the caller's shell has
CLEAN = {k: v for k, v in os.environ.items()
         if k not in ("NCC_NUM_THREADS", "NCC_VECTOR_WIDTH", "NCC_DEBUG_KIR",
                      "NCC_KERNEL_REUSE")}
MODEL = """graph @g(%x: f32[N,256]) {
  %y = Relu(%x)
  return %y
}
"""


def ncc(*args, env=None):
    e = dict(CLEAN, **(env or {}))
    return subprocess.run([NCC, *args], capture_output=True, text=True, env=e,
                          timeout=120)


def bench_threads(name, model, *args, env=None):
    p = ncc("bench", model, "--iters", "1", "--warmup", "0", "--batch", "4",
            "--json", *args, env=env)
    try:
        got = json.loads(p.stdout).get("threads")
    except ValueError:
        got = None
    check(name + " (exit 0)", p.returncode == 0, p.stderr)
    return got


def main():
    cores = os.sysconf("SC_NPROCESSORS_ONLN")
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "relu.nir")
        with open(model, "w") as f:
            f.write(MODEL)

        # bench: the thread count, from the environment or --threads
        t = bench_threads("env 1", model, env={"NCC_NUM_THREADS": "1"})
        check("NCC_NUM_THREADS=1 bench --json reports 1 thread", t == 1, t)
        t = bench_threads("flag 1", model, "--threads", "1")
        check("bench --threads 1 --json reports 1 thread", t == 1, t)
        t = bench_threads("flag 3", model, "--threads", "3")
        check("bench --threads 3 --json reports 3 threads", t == 3, t)
        t = bench_threads("flag over env", model, "--threads", "2",
                          env={"NCC_NUM_THREADS": "1"})
        check("--threads wins over NCC_NUM_THREADS", t == 2, t)
        t = bench_threads("default", model)
        check("the default is one thread per online core", t == cores, (t, cores))
        t = bench_threads("bad env", model, env={"NCC_NUM_THREADS": "lots"})
        check("a malformed NCC_NUM_THREADS is ignored, as before", t == cores, t)
        t = bench_threads("ref", model, "--target", "ref", "--threads", "4")
        check("ref runs no pool threads", t == 1, t)
        p = ncc("bench", model, "--iters", "1", "--batch", "2", "--threads", "3")
        rows = [l.split() for l in p.stdout.splitlines()]
        # "threads      3, pinned to CPUs 0-1" / "3, not pinned (N CPUs allowed)"
        check("bench's table has a threads row", ["threads", "3,"] in [r[:2] for r in rows],
              p.stdout)

        for bad in ("0", "-1", "two", "1025"):
            p = ncc("bench", model, "--threads", bad)
            lines = p.stderr.strip().splitlines()
            check(f"--threads {bad} is a usage error",
                  p.returncode == 1 and len(lines) == 1 and
                  lines[0].startswith("ncc: error: --threads"), p.stderr)
        p = ncc("compile", model, "--threads", "2", "--emit=kir")
        check("compile takes no --threads", p.returncode == 1, p.stderr)

        # run --threads: the outputs are numpy's
        x = np.linspace(-1, 1, 64 * 256, dtype=np.float32).reshape(64, 256)
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)
        for n in ("1", "3"):
            out = os.path.join(d, "out" + n)
            os.mkdir(out)
            p = ncc("run", model, "--input", "x=" + xin, "--output-dir", out,
                    "--threads", n)
            ok = p.returncode == 0
            check(f"run --threads {n}", ok, p.stderr)
            if ok:
                y = np.load(os.path.join(out, "y.npy"))
                check(f"run --threads {n} equals numpy", np.array_equal(y, np.maximum(x, 0)))

        # NCC_VECTOR_WIDTH still shapes what the driver compiles
        for w, loop in (("1", None), ("4", "vector(16)"), ("8", "vector(32)")):
            p = ncc("compile", model, "--emit=kir", env={"NCC_VECTOR_WIDTH": w})
            has = ("vector(" not in p.stdout) if loop is None else (loop in p.stdout)
            check(f"NCC_VECTOR_WIDTH={w} kernels", p.returncode == 0 and has, p.stdout)
        # NCC_DEBUG_KIR still prints the kernel IR on stderr
        p = ncc("run", model, "--input", "x=" + xin, "--output-dir", d,
                env={"NCC_DEBUG_KIR": "1"})
        check("NCC_DEBUG_KIR prints kernels", p.returncode == 0 and
              "kernel k0_Relu" in p.stderr, p.stderr[-300:])

        # the help documents the variables and the flag
        p = ncc("--help")
        check("ncc --help lists the environment",
              all(v in p.stdout for v in ("NCC_NUM_THREADS", "NCC_VECTOR_WIDTH",
                                          "NCC_KERNEL_REUSE", "NCC_CC")), p.stdout)
        for cmd in ("run", "bench"):
            p = ncc(cmd, "--help")
            check(f"ncc {cmd} --help has --threads", "--threads N" in p.stdout)

    return finish()


if __name__ == "__main__":
    sys.exit(main())
