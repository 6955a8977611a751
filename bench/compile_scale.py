#!/usr/bin/env python3
"""bench/compile_scale.py — compile time against graph size.

Generates elementwise chains of 10^3 .. 10^5 nodes (text IR, x: f32[4,16],
ops cycling Relu, Neg, Neg, Tanh, Sigmoid) and times, per size, the three
commands that go through the whole compiler:

  ncc opt -O2 CHAIN.nir -o /dev/null                 passes only
  ncc compile CHAIN.nir -o CHAIN.o                   passes + LLVM object
  ncc run CHAIN.nir --input x=X.npy --output-dir D   passes + JIT + one run

The figure is the child's user CPU time (resource.getrusage of the
children), not wall time: the machines these run on are shared, and user
time does not count waiting for a CPU. Run by hand; nothing here asserts a
time. Compile time should grow about linearly (x10 per row).

Usage: python3 bench/compile_scale.py [--ncc build/ncc] [--sizes 1000,10000,100000]
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np

OPS = ["Relu", "Neg", "Neg", "Tanh", "Sigmoid"]


def write_chain(path, n):
    with open(path, "w") as f:
        f.write("graph @chain(%x: f32[4,16]) {\n")
        prev = "x"
        for i in range(n):
            f.write(f"  %v{i} = {OPS[i % len(OPS)]}(%{prev})\n")
            prev = f"v{i}"
        f.write(f"  return %{prev}\n}}\n")


def user_time(cmd):
    """User CPU seconds of one child run (and its exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    if p.returncode:
        print(f"  {' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-300:]}",
              file=sys.stderr)
    return after - before, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ncc", default=os.environ.get("NCC", "build/ncc"))
    ap.add_argument("--sizes", default="1000,10000,100000")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    tmp = tempfile.mkdtemp(prefix="ncc_compile_scale_")
    xp = os.path.join(tmp, "x.npy")
    np.save(xp, np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32))
    print(f"{'nodes':>8} {'opt -O2 (s)':>12} {'compile (s)':>12} {'run (s)':>10}   user CPU time")
    for n in sizes:
        src = os.path.join(tmp, f"chain{n}.nir")
        write_chain(src, n)
        t_opt, _ = user_time([a.ncc, "opt", "-O2", src, "-o", os.devnull])
        t_cc, _ = user_time([a.ncc, "compile", src, "-o", os.path.join(tmp, f"chain{n}.o")])
        t_run, _ = user_time([a.ncc, "run", src, "--input", f"x={xp}", "--output-dir", tmp])
        print(f"{n:>8} {t_opt:>12.2f} {t_cc:>12.2f} {t_run:>10.2f}")
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
