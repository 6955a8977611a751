"""bench/harness/adapters/iree.py — IREE, llvm-cpu backend (pip
iree-base-compiler + iree-base-runtime).

Configuration "llvm-cpu": the ONNX model is imported to MLIR with IREE's
own ONNX importer (in-process), compiled for the host CPU
(--iree-llvmcpu-target-cpu=host) and run with the local-task driver.  The
symbolic batch stays dynamic.  Threads: --task_topology_max_group_count,
set once before the first driver is made.  The entry function is named
after the ONNX graph.
"""
import os
import tempfile

from .base import Adapter


class IreeAdapter(Adapter):
    name = "iree"
    dist = "iree-base-compiler"
    install_hint = "pip install iree-base-compiler iree-base-runtime"
    CONFIGS = ("llvm-cpu",)

    def load(self):
        self.compiler = self._import("iree.compiler")
        self.rt = self._import("iree.runtime")
        self.importer = self._import("iree.compiler.tools.import_onnx.__main__")
        self.onnx = self._import("onnx")
        self.rt.flags.parse_flags("--task_topology_max_group_count=%d" % self.threads)
        self.config = self.rt.Config("local-task")

    def version(self):
        v = Adapter.version(self)
        try:
            import importlib.metadata as md
            return "%s (runtime %s)" % (v, md.version("iree-base-runtime"))
        except Exception:
            return v

    def compile(self, task, config, mode, batch):
        path = task.model_path(batch)
        with tempfile.TemporaryDirectory(prefix="ncc-iree-") as d:
            mlir = os.path.join(d, "model.mlir")
            self.importer.main(self.importer.parse_arguments([path, "-o", mlir]))
            vmfb = self.compiler.compile_file(
                mlir, target_backends=[config],
                extra_args=["--iree-llvmcpu-target-cpu=host"])
        ctx = self.rt.SystemContext(config=self.config)
        vm = self.rt.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm)
        graph = self.onnx.load(path, load_external_data=False).graph.name
        names = [f for f in vm.function_names if f != "__init" and not f.endswith("$async")]
        return ctx, ctx.modules.module[graph if graph in names else names[0]]

    def prepare(self, handle, x):
        return self.rt.asdevicearray(self.config.device, x)

    def run(self, handle, x):
        return handle[1](x)

    def to_numpy(self, out):
        return out.to_host()
