"""bench/harness/adapters/tvm.py — Apache TVM through Relax (pip apache-tvm).

Configuration "llvm": the ONNX model through tvm.relax.frontend.onnx (the
symbolic batch stays a symbolic Relax dim), tvm.compile with TVM's default
Relax pipeline for the host, run on the Relax VM.  No auto-tuning (a tuned
TVM is a different experiment: compile times of hours).  Threads:
TVM_NUM_THREADS, set by the runner before tvm is imported.
"""
from .base import Adapter


class TvmAdapter(Adapter):
    name = "tvm"
    dist = "apache-tvm"
    install_hint = "pip install apache-tvm"
    CONFIGS = ("llvm",)

    def load(self):
        self.tvm = self._import("tvm")
        self._import("tvm.relax")
        self.onnx = self._import("onnx")
        from tvm.relax.frontend.onnx import from_onnx
        self.from_onnx = from_onnx

    def compile(self, task, config, mode, batch):
        tvm = self.tvm
        mod = self.from_onnx(self.onnx.load(task.model_path(batch)), keep_params_in_input=False)
        target = tvm.target.Target(config)
        build = getattr(tvm, "compile", None) or tvm.relax.build
        ex = build(mod, target=target)
        vm = tvm.relax.VirtualMachine(ex, tvm.cpu())
        return vm["main"]

    def prepare(self, fn, x):
        rt = self.tvm.runtime
        make = getattr(rt, "tensor", None) or getattr(self.tvm, "nd").array
        return make(x)

    def run(self, fn, x):
        out = fn(x)
        self.tvm.cpu().sync()
        return out

    def to_numpy(self, out):
        return out.numpy()
