"""bench/harness/adapters/ncc_qemu.py — ncc cross-compiled for AArch64 and run
under qemu-aarch64: an emulated target on the hardware axis.

Configurations "qemu -O2" / "qemu -O0" (any further ncc flags may follow).
compile: `ncc compile MODEL --target=aarch64 --emit=lib` (kernels, glue and
weights in one object), linked with tests/aot/aot_main.c into a static
AArch64 program by aarch64-linux-gnu-gcc; run: one qemu-aarch64 process per
call (input and output through raw files).  The output is checked against
ncc ref on the host like every row: that part is real — the cross-compiled
code computes the right answer.  The times are not: they measure qemu's
translation of AArch64 to the host's instructions plus a process start, so
every row carries result.emulated and the report (report_hw.py) lists them
on a machine of their own, "HOST · aarch64 (qemu-aarch64)", never ranked
and never in a speed-up.  NCC_AARCH64_CC and NCC_QEMU_AARCH64 name other
tools (as in tests/aarch64).
"""
import os
import shutil
import subprocess
import tempfile

import numpy as np

from . import ncc as ncc_adapter
from ..nccbin import NccError
from .base import Adapter, Skipped

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
AOT_MAIN = os.path.join(REPO, "tests", "aot", "aot_main.c")
EMULATOR = "qemu-aarch64"


class NccQemuAdapter(Adapter):
    name = "ncc_qemu"
    CONFIGS = ("qemu -O2", "qemu -O0")
    EMULATED = {"emulator": EMULATOR, "target": "aarch64"}
    NEEDS_NCC = True
    NO_PREALLOC = "each call is a qemu-aarch64 process reading and writing files"

    def __init__(self, threads, ncc=None):
        Adapter.__init__(self, threads)
        self.ncc = ncc

    @classmethod
    def check_config(cls, config):
        toks = config.split()
        if not toks or toks[0] != "qemu" or not all(t.startswith("-") for t in toks[1:]):
            return ("unknown configuration %r (\"qemu\" then ncc flags, e.g. %s)"
                    % (config, ", ".join(cls.CONFIGS)))
        return None

    @classmethod
    def timing_note(cls, policy):
        return ("EMULATED: one %s process per call (AArch64 code translated by qemu); "
                "checked for correctness, times not comparable" % EMULATOR)

    def load(self):
        self.cc = os.environ.get("NCC_AARCH64_CC") or "aarch64-linux-gnu-gcc"
        self.qemu = os.environ.get("NCC_QEMU_AARCH64") or EMULATOR
        for tool, hint in ((self.cc, "apt-get install gcc-aarch64-linux-gnu"),
                           (self.qemu, "apt-get install qemu-user")):
            if not shutil.which(tool):
                raise Skipped("%s is not installed (the emulated AArch64 target needs it)"
                              % tool, hint)
        if self.ncc is None:  # `bench/experiment list`: the ncc it would find
            from ..nccbin import Ncc, find_ncc
            path = find_ncc()
            if path is None:
                raise Skipped("no ncc binary for the cross-compilation")
            self.ncc = Ncc(path, 600)
        if not os.path.exists(AOT_MAIN):
            raise Skipped("tests/aot/aot_main.c is missing")

    def version(self):
        try:
            p = subprocess.run([self.qemu, "--version"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, timeout=30)
            return p.stdout.decode().splitlines()[0].strip()
        except (OSError, subprocess.SubprocessError, IndexError):
            return None

    def compile(self, task, config, mode, batch):
        d = tempfile.mkdtemp(prefix="ncc-qemu-")
        try:
            # the API prefix comes from the file name; not "model": aot_main.c's
            # MODEL_UPPER=MODEL would expand to the MODEL macro again
            lib = os.path.join(d, "nccq.o")
            flags = config.split()[1:]
            try:
                self.ncc.check(["compile", task.model_path(batch), "--target=aarch64",
                                "--emit=lib", "-o", lib] + flags, timeout=task.timeout)
            except NccError as e:
                raise ncc_adapter._classify(e)  # "no compiled kernel": unsupported
            prog = os.path.join(d, "prog")
            cmd = [self.cc, "-static", "-std=c11", "-O1", "-DMODEL=nccq",
                   "-DMODEL_UPPER=NCCQ", '-DMODEL_H="nccq.h"', "-I", d, AOT_MAIN, lib,
                   "-o", prog, "-lm", "-lpthread"]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=task.timeout)
            if p.returncode != 0:
                raise RuntimeError("%s failed: %s" % (self.cc, p.stderr.decode(
                    "utf-8", "replace").strip().splitlines()[-1:]))
        except Exception:
            shutil.rmtree(d, ignore_errors=True)
            raise
        return {"dir": d, "prog": prog, "timeout": task.timeout}

    def prepare(self, h, x):
        x = np.ascontiguousarray(x, dtype=np.float32)
        path = os.path.join(h["dir"], "in_%s.raw" % "x".join(map(str, x.shape)))
        x.tofile(path)
        return path, ",".join(map(str, x.shape))

    def run(self, h, xin):
        path, dims = xin
        prefix = os.path.join(h["dir"], "out")
        p = subprocess.run([self.qemu, h["prog"], str(self.threads), prefix, path, dims],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=h["timeout"])
        if p.returncode != 0:
            raise RuntimeError("the AArch64 program failed under %s (exit %d): %s" % (
                self.qemu, p.returncode, p.stderr.decode("utf-8", "replace").strip()[-300:]))
        with open(prefix + "0.shape") as f:
            shape = tuple(int(v) for v in f.read().split())
        return np.fromfile(prefix + "0.raw", dtype=np.float32).reshape(shape)

    def release(self, h):
        shutil.rmtree(h["dir"], ignore_errors=True)
