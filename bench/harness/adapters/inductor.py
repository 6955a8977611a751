"""bench/harness/adapters/inductor.py — TorchInductor through torch.compile.

The block is built natively as a torch module from blocks.params (identical
weights, harness/native.py).  Configurations: "default" and
"max-autotune-no-cudagraphs" (torch.compile modes) and "eager" (no
compilation: torch's own baseline).  torch.compile compiles lazily inside
the first call, which is why every compiler's compile_ms is "model to first
result".  Shape modes: default lets torch decide (dynamic=None), "symbolic"
is dynamic=True, "static" dynamic=False (a recompile per new shape).
torch._dynamo is reset before each compile so no row inherits another's
cache.  Threads: torch.set_num_threads.
"""
from .base import Adapter

MODES = ("default", "max-autotune-no-cudagraphs", "eager")


class InductorAdapter(Adapter):
    name = "inductor"
    dist = "torch"
    install_hint = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
    CONFIGS = MODES

    def load(self):
        self.torch = self._import("torch")
        self.torch.set_num_threads(self.threads)
        try:
            self.torch.set_num_interop_threads(1)
        except RuntimeError:
            pass  # only settable before the first parallel work

    def supports(self, config, mode):
        if config == "eager" and mode in ("symbolic", "static"):
            return "eager torch has no compile step, so no shape-mode comparison"
        return None

    def compile(self, task, config, mode, batch):
        from .. import native
        torch = self.torch
        if hasattr(task.ms, "torch_module"):  # a real model (harness/zoo.py)
            module = task.ms.torch_module(torch)
        else:
            module = native.torch_module(torch, task.ms.config(), task.params())
        if config == "eager":
            return module
        torch._dynamo.reset()
        dynamic = {"default": None, "symbolic": True, "static": False}[mode]
        kw = {"dynamic": dynamic}
        if config != "default":
            kw["mode"] = config
        return torch.compile(module, backend="inductor", **kw)

    def prepare(self, fn, x):
        return self.torch.from_numpy(x)

    def run(self, fn, x):
        with self.torch.inference_mode():
            return fn(x)

    def to_numpy(self, out):
        return out.detach().numpy().copy()

    NO_PREALLOC = "a torch.compile'd module returns new tensors; it has no out= binding"

    def release(self, fn):
        if hasattr(self, "torch"):
            self.torch._dynamo.reset()
