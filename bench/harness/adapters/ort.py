"""bench/harness/adapters/ort.py — ONNX Runtime (CPU execution provider).

Configurations are the graph optimization levels: DISABLE_ALL (the graph as
written; a baseline option for break-even), BASIC, EXTENDED, ALL.  Threads:
intra_op_num_threads = the sweep's thread count, inter-op 1, sequential
execution.  The session is built from the model file, so compile_ms covers
reading the file like ncc's does.

session.force_spinning_stop: onnxruntime's intra-op workers otherwise keep
spinning after Run() returns, and in interleaved rounds (measure.py) that
spinning takes a core from whichever compiler runs next.  Measured here on
ResNet-18, 2 threads, batch 1: the compiler after onnxruntime ran at 17 ms
instead of 9.5 in every round that put it there, a periodic pattern that
vanished with this option, while onnxruntime's own latency did not get
worse (9.7 -> 9.3 ms).  Spinning inside a run, which is what helps its
latency, is unchanged.
"""
from .base import Adapter

LEVELS = {"DISABLE_ALL": "ORT_DISABLE_ALL", "BASIC": "ORT_ENABLE_BASIC",
          "EXTENDED": "ORT_ENABLE_EXTENDED", "ALL": "ORT_ENABLE_ALL"}


class OrtAdapter(Adapter):
    name = "onnxruntime"
    dist = "onnxruntime"
    install_hint = "pip install onnxruntime"
    CONFIGS = tuple(LEVELS)

    def load(self):
        self.ort = self._import("onnxruntime")

    def compile(self, task, config, mode, batch):
        return self.ort.InferenceSession(task.model_path(batch), self.session_options(config),
                                         providers=["CPUExecutionProvider"])

    def session_options(self, config):
        """The SessionOptions every onnxruntime session of the harness uses
        (bench/layers adds profiling to them)."""
        ort = self.ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        # no spinning after Run(): it would slow the next compiler of a round
        so.add_session_config_entry("session.force_spinning_stop", "1")
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, LEVELS[config])
        return so

    def run(self, sess, x):
        return sess.run(None, {"x": x})[0]

    PREALLOCATED = "IOBinding, input and output OrtValues bound once, run_with_iobinding"

    def bind_outputs(self, sess, x, out):
        """IOBinding: the input and an output array of the first run's shape
        bound once as OrtValues (sharing the arrays' memory); each call
        runs into them."""
        import numpy as np
        ort = self.ort
        io = sess.io_binding()
        xv = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(x))
        io.bind_ortvalue_input(sess.get_inputs()[0].name, xv)
        y = np.empty_like(np.asarray(out))
        yv = ort.OrtValue.ortvalue_from_numpy(y)
        io.bind_ortvalue_output(sess.get_outputs()[0].name, yv)

        def run_bound(keep=(xv, yv)):
            sess.run_with_iobinding(io)
            return y
        return run_bound, self.PREALLOCATED
