#!/usr/bin/env python3
"""bench/precision/ort_rounded.py — an outside oracle for a whole model's
`--precision=bf16` run: ONNX Runtime on the same model with every Conv /
MatMul / Gemm operand rounded to bf16 (weights in numpy, activations by a
Cast to bfloat16 and back inserted before the node), graph optimisations
off. Writes the rounded and the f32 outputs (first output) as .npy.

    python3 bench/precision/ort_rounded.py MODEL.onnx X.npy OUTDIR
then compare OUTDIR/ort_bf16_y.npy with `ncc run MODEL --precision=bf16`.
A model with BatchNormalization nodes rounds the unfolded weights here,
while ncc rounds after bn-fold: compare models exported with BN folded.
"""
import sys
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper, TensorProto
path, xin, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
m = onnx.load(path)
g = m.graph
print("BN nodes:", sum(n.op_type == "BatchNormalization" for n in g.node))
def bf16r(a):
    b = a.view(np.uint32).astype(np.uint64); b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)
inits = {i.name: i for i in g.initializer}
consts = {}
for n in g.node:
    if n.op_type == "Constant":
        consts[n.output[0]] = n
new_nodes = []; k = 0; done = {}
for n in g.node:
    if n.op_type in ("Conv", "MatMul", "Gemm"):
        for j in (0, 1):
            v = n.input[j]
            if v in inits:
                a = numpy_helper.to_array(inits[v])
                if a.dtype == np.float32:
                    inits[v].CopyFrom(numpy_helper.from_array(bf16r(a.copy()), v))
                continue
            if v not in done:
                k += 1
                t1, t2 = "bfr%d_a" % k, "bfr%d_b" % k
                new_nodes.append(helper.make_node("Cast", [v], [t1], to=TensorProto.BFLOAT16))
                new_nodes.append(helper.make_node("Cast", [t1], [t2], to=TensorProto.FLOAT))
                done[v] = t2
            n.input[j] = done[v]
    new_nodes.append(n)
del g.node[:]; g.node.extend(new_nodes)
so = ort.SessionOptions(); so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
x = np.load(xin)
y = s.run(None, {s.get_inputs()[0].name: x})[0]
np.save(outdir + "/ort_bf16_y.npy", y)
s32 = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
np.save(outdir + "/ort_f32_y.npy", s32.run(None, {s32.get_inputs()[0].name: x})[0])
