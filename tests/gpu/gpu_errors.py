#!/usr/bin/env python3
"""tests/gpu/gpu_errors.py — the GPU targets' error paths through the `ncc`
command: each must be one `ncc: error:` line and the right exit status
(docs/CLI.md: 3 for an unavailable target or an unsupported request, 5 for
generated code a compiler rejects, 1 for a bad command line).

--target opencl: no OpenCL platform (OCL_ICD_VENDORS at an empty
    directory), no ICD loader at all, and a program that fails to compile
    (the NCC_GPU_TEST_BAD_KERNEL hook).
--target cuda: no CUDA driver (NCC_CUDA_DRIVER_LIB at a missing file), a
    stub libcuda when the toolkit has one, a program NVRTC rejects, an
    unsupported and a malformed arch, emit kinds the target lacks.
Usage: NCC=build/ncc python3 tests/gpu/gpu_errors.py --target opencl|cuda
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

MODEL = """graph @t(%x: f32[N,17]) {
  %y: f32[N,17] = Exp(%x)
  return %y
}
"""


class Checker:
    def __init__(self, ncc, work, verbose):
        self.ncc, self.work, self.verbose, self.failed = ncc, work, verbose, 0
        self.model = os.path.join(work, "m.nir")
        with open(self.model, "w") as f:
            f.write(MODEL)
        import numpy as np
        self.x = os.path.join(work, "x.npy")
        np.save(self.x, np.ones((2, 17), np.float32))

    def expect(self, what, args, rc, pattern, env=None, absent=None):
        e = dict(os.environ)
        e.update(env or {})
        cmd = [self.ncc] + args
        p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=300)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        errs = [l for l in lines if l.startswith("ncc: error:")]
        ok = p.returncode == rc and len(errs) == 1 and pattern in errs[0]
        if absent and os.path.exists(absent):
            ok = False
            errs.append("(left %s behind)" % absent)
        print("%-44s %s" % (what, "ok" if ok else "FAIL"))
        if not ok or self.verbose:
            print("  $ %s\n  exit %d (want %d), stderr: %s" %
                  (" ".join(cmd), p.returncode, rc, " | ".join(lines) or "(none)"))
            print("  want one 'ncc: error:' line containing %r" % pattern)
        self.failed += not ok

    def usable(self, target):
        p = subprocess.run([self.ncc, "targets"], stdout=subprocess.PIPE,
                           universal_newlines=True)
        return [target, "yes"] in [l.split()[:2] for l in p.stdout.splitlines()]

    def usable_nvrtc(self):
        p = subprocess.run([self.ncc, "targets"], stdout=subprocess.PIPE,
                           universal_newlines=True)
        line = [l for l in p.stdout.splitlines() if l.startswith("cuda")]
        return bool(line) and ("NVRTC" in line[0] and "is here" in line[0] or
                               line[0].split()[1] == "yes")

    def run_args(self, target):
        return ["run", self.model, "--target=" + target, "--input", self.x,
                "--output-dir", self.work]



def opencl(c):
    empty = os.path.join(c.work, "no-vendors")
    os.makedirs(empty, exist_ok=True)
    c.expect("no OpenCL platform", c.run_args("opencl"), 3, "no OpenCL platform",
             env={"OCL_ICD_VENDORS": empty})
    c.expect("no OpenCL ICD loader", c.run_args("opencl"), 3, "cannot load the OpenCL",
             env={"NCC_OPENCL_LIB": os.path.join(c.work, "libOpenCL-missing.so")})
    if c.usable("opencl"):
        c.expect("kernel fails to compile (opencl)", c.run_args("opencl"), 5,
                 "failed to compile", env={"NCC_GPU_TEST_BAD_KERNEL": "1"})
    else:
        print("%-44s skipped (no OpenCL device here)" % "kernel fails to compile (opencl)")
    out = os.path.join(c.work, "k.cl")
    c.expect("opencl cannot emit ptx", ["compile", c.model, "--target=opencl",
                                        "--emit=ptx", "-o", out], 3, "ptx", absent=out)


def cuda(c):
    missing = os.path.join(c.work, "libcuda-missing.so.1")
    c.expect("no CUDA driver", c.run_args("cuda"), 3, "no CUDA driver",
             env={"NCC_CUDA_DRIVER_LIB": missing})
    if not c.usable_nvrtc():
        print("%-44s skipped (no NVRTC here)" % "NVRTC cases")
        return
    stubs = glob.glob("/usr/local/cuda/lib*/stubs/libcuda.so")
    if stubs:
        c.expect("stub libcuda", c.run_args("cuda"), 3, "only a stub",
                 env={"NCC_CUDA_DRIVER_LIB": stubs[0]})
    out = os.path.join(c.work, "k.ptx")
    c.expect("kernel fails to compile (NVRTC)", ["compile", c.model, "--target=cuda",
                                                 "--emit=ptx", "-o", out], 5,
             "failed to compile", env={"NCC_GPU_TEST_BAD_KERNEL": "1"}, absent=out)
    c.expect("arch NVRTC lacks", ["compile", c.model, "--target=cuda", "--emit=ptx",
                                  "-o", out], 3, "sm_10", env={"NCC_CUDA_ARCH": "sm_10"},
             absent=out)
    c.expect("malformed arch", ["compile", c.model, "--target=cuda", "--emit=ptx",
                                "-o", out], 1, "bad CUDA arch", env={"NCC_CUDA_ARCH": "gfx90a"},
             absent=out)
    c.expect("cuda cannot emit opencl", ["compile", c.model, "--target=cuda",
                                         "--emit=opencl", "-o", out], 3, "opencl", absent=out)
    c.expect("cpu cannot emit ptx", ["compile", c.model, "--target=cpu", "--emit=ptx",
                                     "-o", out], 3, "ptx", absent=out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncc", default=os.environ.get("NCC"))
    ap.add_argument("--target", choices=("opencl", "cuda"), required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if not a.ncc:
        sys.exit("error: set NCC or pass --ncc")
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("skipped: numpy missing")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="ncc_gpu_errors_")
    try:
        c = Checker(a.ncc, work, a.verbose)
        (opencl if a.target == "opencl" else cuda)(c)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if c.failed else 0)


if __name__ == "__main__":
    main()
