"""bench/harness/adapters/openvino.py — OpenVINO on the CPU plugin.

Configuration "CPU".  f32 inference precision is forced (the CPU plugin
would otherwise pick bf16 on CPUs that have it, and the output check
would then rightly fail); one stream, latency hint, and
INFERENCE_NUM_THREADS = the sweep's thread count.  The symbolic batch of the
ONNX model stays dynamic (the plugin specialises per shape lazily: the
first run at a new shape carries that cost).
"""
from .base import Adapter


class OpenVinoAdapter(Adapter):
    name = "openvino"
    dist = "openvino"
    install_hint = "pip install openvino"
    CONFIGS = ("CPU",)

    def load(self):
        self.ov = self._import("openvino")
        self.core = self.ov.Core()

    def properties(self):
        """The compile properties of the harness (bench/layers adds
        PERF_COUNT to them)."""
        return {"INFERENCE_NUM_THREADS": self.threads, "NUM_STREAMS": 1,
                "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}

    def compile(self, task, config, mode, batch):
        compiled = self.core.compile_model(task.model_path(batch), config, self.properties())
        return compiled.create_infer_request()

    def run(self, req, x):
        req.infer({0: x}, share_inputs=True)
        return req.get_output_tensor(0).data

    PREALLOCATED = ("infer request with input and output tensors set once "
                    "(shared memory), infer(share_outputs=True)")

    def bind_outputs(self, req, x, out):
        """The request's input and output tensors set once over arrays
        (shared memory); each call infers into them."""
        import numpy as np
        ov = self.ov
        req.set_input_tensor(0, ov.Tensor(x, shared_memory=True))
        y = np.empty_like(np.asarray(out))
        req.set_output_tensor(0, ov.Tensor(y, shared_memory=True))

        def run_bound(keep=(x,)):
            req.infer(share_outputs=True)
            return y
        return run_bound, self.PREALLOCATED

    def to_numpy(self, out):
        import numpy as np
        return np.array(out, copy=True)
