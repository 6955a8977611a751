"""bench/harness/adapters/xla.py — XLA through jax.jit on the CPU.

The block is a native JAX function of (params, x) built from blocks.params
(harness/native.py); the weights are arguments, not baked-in constants, as
in a real JAX model.  Configuration "jit".  jax.jit specialises on shapes:
there is no symbolic batch, so E6's "symbolic" mode is skipped and "static"
(a compile per new shape) is XLA's natural behaviour.  Threads: the runner
sets XLA_FLAGS before jax is imported and pins the process's CPUs.
"""
from .base import Adapter


class XlaAdapter(Adapter):
    name = "xla"
    dist = "jax"
    install_hint = "pip install jax jaxlib"
    CONFIGS = ("jit",)

    def load(self):
        self.jax = self._import("jax")
        self.jax.config.update("jax_platforms", "cpu")

    def version(self):
        v = Adapter.version(self)
        try:
            import importlib.metadata as md
            return "%s (jaxlib %s)" % (v, md.version("jaxlib"))
        except Exception:
            return v

    def supports(self, config, mode):
        if mode == "symbolic":
            return "jax.jit specialises on shapes (no symbolic batch to compile once)"
        return None

    def compile(self, task, config, mode, batch):
        from .. import native
        jax = self.jax
        params = {k: jax.device_put(v) for k, v in task.params().items()}
        fn = jax.jit(native.jax_function(jax, task.ms.config()))
        return fn, params

    def prepare(self, handle, x):
        return self.jax.device_put(x)

    def run(self, handle, x):
        fn, params = handle
        return fn(params, x).block_until_ready()

    def to_numpy(self, out):
        import numpy as np
        return np.asarray(out)

    def release(self, handle):
        if hasattr(self, "jax"):
            self.jax.clear_caches()
