#!/usr/bin/env python3
"""tests/py/mutation_cases.py — small models that kill the survivors of
mutation testing (tools/mutate.py, docs/TESTING.md "Mutation testing").

Each case is a tiny ONNX model aimed at one code path a mutant showed no fast
test reached; it runs `ncc run --target=T` (ref by default, --target cpu) and
compares every output with ONNX Runtime (graph optimisations off). The cases
are fast (one ncc run each), so tools/mutate.py's TEST_MAP runs this suite
on every mutant of the files they cover. The comment on each case names the
code it guards.

Usage: NCC=build/ncc python3 tests/py/mutation_cases.py [--target ref|cpu] [-k REGEX]
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

F32 = np.float32
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def model(nodes, feeds, inits, outputs, opset=17):
    """A model typed by strict ONNX shape inference and checked."""
    def vi(name, arr):
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype),
                                             list(arr.shape))
    graph = helper.make_graph(nodes, "g", [vi(n, a) for n, a in feeds.items()],
                              [helper.make_empty_tensor_value_info(o) for o in outputs],
                              initializer=[numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="ncc-mutation-cases")
    m.ir_version = helper.find_min_ir_version_for(opsets)
    m = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    onnx.checker.check_model(m)
    return m


def rng(name):
    return np.random.RandomState(sum(map(ord, name)))


def check_vs_ort(name, m, feeds, tol=(1e-4, 1e-5), extra=(), model_path=None):
    """ncc's outputs equal ONNX Runtime's (dtype, shape, values within tol);
    ncc runs `model_path` (the same graph as .nir) when given."""
    outs = [o.name for o in m.graph.output]
    want = nccutil.run_ort(m, feeds)
    with nccutil.Workdir() as wd:
        got = nccutil.run_ncc(NCC, model_path or m, feeds, outs, wd, extra=extra, target=TARGET)
        nccutil.check(got.rc == 0 and not got.missing, "%s: ncc %s" % (name, got.describe()))
        for o in outs:
            why = nccutil.compare(want[o], got.outputs[o], *tol)
            nccutil.check(why is None, "%s: output %s: %s" % (name, o, why))


# ---- shape inference (ir/shape_nn.c) ----------------------------------------

@case
def test_convtranspose_bias_and_none():
    """ConvTranspose's rule checks an optional bias and then sets the output:
    with the bias check inverted it returned before setting the output."""
    r = rng("convt")
    x = r.standard_normal((1, 3, 5, 4)).astype(F32)
    w = r.standard_normal((3, 2, 3, 3)).astype(F32)
    b = r.standard_normal((2,)).astype(F32)
    for with_bias in (True, False):
        ins = ["x", "w", "b"] if with_bias else ["x", "w"]
        inits = {"w": w, "b": b} if with_bias else {"w": w}
        node = helper.make_node("ConvTranspose", ins, ["y"], strides=[2, 1], pads=[1, 0, 0, 1])
        check_vs_ort("convtranspose bias=%s" % with_bias, model([node], {"x": x}, inits, ["y"]),
                     {"x": x})


@case
def test_symbolic_dim_arithmetic():
    """Shape arithmetic on a symbolic batch N (ir/shape_eltwise.c's content
    rules): N+0 and N*1 stay N, N+1 and N*2 are not N. The results size
    ConstantOfShape outputs: checked against ONNX Runtime when run, and the
    types inferred at compile time against the algebra."""
    r = rng("symdim")
    x = r.standard_normal((3, 4)).astype(F32)
    i64 = lambda v: numpy_helper.from_array(np.array(v, dtype=np.int64))  # noqa: E731
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Constant", [], ["zero"], value=i64(0)),
             helper.make_node("Constant", [], ["one"], value=i64(1)),
             helper.make_node("Constant", [], ["two"], value=i64(2)),
             helper.make_node("Constant", [], ["ax"], value=i64([0])),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0)]
    outs = []
    for i, (op, k) in enumerate((("Add", "zero"), ("Add", "one"), ("Mul", "one"),
                                 ("Mul", "two"), ("Sub", "zero"), ("Add", "two"))):
        nodes += [helper.make_node(op, ["n", k] if i % 2 or op == "Sub" else [k, "n"], ["d%d" % i]),
                  helper.make_node("Unsqueeze", ["d%d" % i, "ax"], ["u%d" % i]),
                  helper.make_node("ConstantOfShape", ["u%d" % i], ["y%d" % i],
                                   value=numpy_helper.from_array(np.array([1.5], F32)))]
        outs.append("y%d" % i)
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, ["N", 4])],
                              [helper.make_empty_tensor_value_info(o) for o in outs])
    opsets = [helper.make_opsetid("", 17)]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = helper.find_min_ir_version_for(opsets)
    m = onnx.shape_inference.infer_shapes(m, check_type=True)
    onnx.checker.check_model(m)
    check_vs_ort("N+0, N+1, N*1, N*2, N-0, N+2", m, {"x": x})
    # The compile-time types, from algebra: y0, y2, y4 are N long (N+0, N*1,
    # N-0); y1, y3, y5 (N+1, N*2, N+2) are not (ncc gives them fresh dims).
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "sym.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        p = subprocess.run([NCC, "opt", "-O0", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        nccutil.check(p.returncode == 0, "ncc opt: %s" % p.stderr.decode())
        types = dict(re.findall(r"%(y\d): (\S+) = ", p.stdout.decode()))
        for i in range(6):
            nccutil.check((types.get("y%d" % i) == "f32[N]") == (i % 2 == 0),
                          "y%d has type %s" % (i, types.get("y%d" % i)))


@case
def test_squeeze_runtime_axes_of_shape_content():
    """Squeeze with axes known only at run time keeps its input's content
    (ir/shape_movement.c): the squeezed batch size of a Shape still sizes a
    ConstantOfShape."""
    r = rng("squeeze")
    x = r.standard_normal((3, 4)).astype(F32)
    ax = np.array([0], dtype=np.int64)
    i64 = lambda v: numpy_helper.from_array(np.array(v, dtype=np.int64))  # noqa: E731
    nodes = [helper.make_node("Shape", ["x"], ["s"], end=1),
             helper.make_node("Squeeze", ["s", "ax"], ["n"]),
             helper.make_node("Constant", [], ["zero"], value=i64([0])),
             helper.make_node("Unsqueeze", ["n", "zero"], ["u"]),
             helper.make_node("ConstantOfShape", ["u"], ["y"],
                              value=numpy_helper.from_array(np.array([2.5], F32)))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, ["N", 4]),
                                           helper.make_tensor_value_info("ax", 7, [1])],
                              [helper.make_tensor_value_info("y", 1, ["M"])])
    opsets = [helper.make_opsetid("", 17)]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(m)
    check_vs_ort("Squeeze(Shape(x), runtime axes)", m, {"x": x, "ax": ax})
    # and at compile time (-O0: no pass folds the Squeeze away) y is N long
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "sq.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        p = subprocess.run([NCC, "opt", "-O0", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        nccutil.check(p.returncode == 0, "ncc opt: %s" % p.stderr.decode())
        nccutil.check("%y: f32[N] = ConstantOfShape" in p.stdout.decode(),
                      "y's type: %s" % p.stdout.decode())


@case
def test_bias_length_error_names_sizes():
    """A ConvTranspose bias of the wrong length is rejected (exit 2) with a
    message naming both lengths (ir/shape_nn.c check_vec)."""
    x_vi = helper.make_tensor_value_info("x", 1, [1, 3, 4, 4])
    inits = [numpy_helper.from_array(np.zeros((3, 2, 3, 3), F32), "w"),
             numpy_helper.from_array(np.zeros((5,), F32), "b")]
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"])
    graph = helper.make_graph([node], "g", [x_vi], [helper.make_tensor_value_info("y", 1, None)],
                              initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "bad.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        p = subprocess.run([NCC, "opt", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        err = p.stderr.decode()
        nccutil.check(p.returncode == 2, "exit %d, expected 2: %s" % (p.returncode, err))
        nccutil.check("bias has 5 entries, expected 2" in err, "message: %s" % err.strip())


@case
def test_attention_3d_kv_length():
    """3-D Attention (q_num_heads/kv_num_heads): the kv sequence length is K's
    dim 1, which differs here from its hidden size (dim 2), as do the heads."""
    r = rng("att3d")
    feeds = {"q": r.standard_normal((2, 4, 12)).astype(F32),
             "k": r.standard_normal((2, 6, 12)).astype(F32),
             "v": r.standard_normal((2, 6, 9)).astype(F32)}
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=3, kv_num_heads=3)
    check_vs_ort("Attention 3-D", model([node], feeds, {}, ["y"], opset=23), feeds)
    # with a past: the present K/V hold past + K's sequence length entries
    feeds = {"q": r.standard_normal((1, 2, 8)).astype(F32),
             "k": r.standard_normal((1, 3, 8)).astype(F32),
             "v": r.standard_normal((1, 3, 6)).astype(F32),
             "pk": r.standard_normal((1, 2, 4, 4)).astype(F32),
             "pv": r.standard_normal((1, 2, 4, 3)).astype(F32)}
    node = helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "k2", "v2"],
                            q_num_heads=2, kv_num_heads=2)
    check_vs_ort("Attention 3-D with past",
                 model([node], feeds, {}, ["y", "k2", "v2"], opset=23), feeds)


@case
def test_roialign():
    """RoiAlign's rule checks rois (rank 2) and batch_indices (rank 1)."""
    r = rng("roialign")
    x = r.standard_normal((2, 3, 8, 9)).astype(F32)
    rois = np.array([[0.5, 1.0, 5.0, 6.5], [2.0, 0.0, 8.0, 4.0], [1.0, 1.0, 3.0, 7.0]], F32)
    bi = np.array([1, 0, 1], np.int64)
    node = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y"], output_height=3,
                            output_width=2, sampling_ratio=2)
    feeds = {"x": x, "rois": rois, "bi": bi}
    check_vs_ort("RoiAlign", model([node], feeds, {}, ["y"], opset=16), feeds)


@case
def test_clip_bounds_must_be_scalars():
    """Clip's min and max inputs are scalars of x's dtype (ONNX): a [2] min
    is rejected (exit 2) naming the input; scalar bounds match ONNX Runtime."""
    r = rng("clip")
    x = r.standard_normal((3, 4)).astype(F32)
    inits = {"lo": np.array(-0.5, F32), "hi": np.array(0.7, F32)}
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    check_vs_ort("Clip", model([node], {"x": x}, inits, ["y"]), {"x": x})
    bad = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", 1, [3, 4])],
        [helper.make_tensor_value_info("y", 1, [3, 4])],
        initializer=[numpy_helper.from_array(np.array([-0.5, 0.1], F32), "lo"),
                     numpy_helper.from_array(inits["hi"], "hi")])
    m = helper.make_model(bad, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "bad.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        p = subprocess.run([NCC, "opt", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = p.stderr.decode()
        nccutil.check(p.returncode == 2, "exit %d, expected 2: %s" % (p.returncode, err))
        nccutil.check("input 1 (min) must be a scalar" in err, "message: %s" % err.strip())


# ---- reference kernels (runtime/ref/) ----------------------------------------

@case
def test_lrn_window_clipped_at_both_channel_ends():
    """LRN's window runs past channel 0 and channel C-1 (size 5 > C): the
    clipping at each end, with a second batch image after the first (an
    unclipped window reads the neighbouring image)."""
    r = rng("lrn")
    x = r.standard_normal((2, 3, 2, 3)).astype(F32)
    for size in (3, 5):
        node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.5, beta=0.75, bias=1.5)
        check_vs_ort("LRN size %d" % size, model([node], {"x": x}, {}, ["y"]), {"x": x})


@case
def test_reduce_partial_and_negative_axes():
    """runtime/ref/ref_reduce2.c: negative axes count from the end (axes as
    an input, opset 18), and ReduceLogSumExp's two passes (the max, then the
    sum) restart at output 0: with several outputs a shifted restart adds
    into the neighbour's sum."""
    r = rng("rlse")
    x = r.standard_normal((2, 3, 4)).astype(F32)
    for op in ("ReduceLogSumExp", "ReduceL1", "ReduceSumSquare"):
        for axes, keep in (([1], 1), ([0, 2], 0), ([-1], 1), ([-3, -1], 0)):
            ax = np.array(axes, dtype=np.int64)
            node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)
            check_vs_ort("%s axes=%s" % (op, axes),
                         model([node], {"x": x}, {"axes": ax}, ["y"], opset=18), {"x": x})


@case
def test_global_pools():
    """GlobalMaxPool (all-negative planes: the running maximum starts below
    every value) and GlobalAveragePool / GlobalLpPool."""
    r = rng("gpool")
    x = (r.standard_normal((2, 3, 4, 5)) - 5.0).astype(F32)
    for op, attrs in (("GlobalMaxPool", {}), ("GlobalAveragePool", {}), ("GlobalLpPool", {"p": 2})):
        node = helper.make_node(op, ["x"], ["y"], **attrs)
        check_vs_ort(op, model([node], {"x": x}, {}, ["y"]), {"x": x})


@case
def test_integer_reductions():
    """Integer ReduceSumSquare/L1/Prod/Min (ref_reduce2.c's wrapping integer
    accumulators, written back as integers, not through the float path)."""
    r = rng("ireduce")
    for dt in (np.int32, np.int64):
        x = r.randint(-5, 6, (2, 3, 4)).astype(dt)
        x[0, 0, 0] = 40000  # squares near the int32 range
        for op in ("ReduceSumSquare", "ReduceL1", "ReduceProd", "ReduceMin"):
            ax = np.array([1], dtype=np.int64)
            node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=0)
            check_vs_ort("%s %s" % (op, np.dtype(dt).name),
                         model([node], {"x": x}, {"axes": ax}, ["y"], opset=18), {"x": x})


@case
def test_compare_float_dtypes():
    """Equal/Less/Greater on f32 (the typed rows) and f64 (the generic path of
    ref_eltwise.c, bin_f), with exact ties, near misses and broadcasting."""
    r = rng("equal")
    for dt in (np.float32, np.float64):
        a = r.randint(-2, 3, (3, 5)).astype(dt)
        b = r.randint(-2, 3, (3, 5)).astype(dt)
        b[0, :2] = np.nextafter(a[0, :2], dt(9))
        for op in ("Equal", "Less", "Greater"):
            for bb in (b, b[1:2]):
                node = helper.make_node(op, ["a", "b"], ["y"])
                feeds = {"a": a, "b": bb}
                check_vs_ort("%s %s %s" % (op, np.dtype(dt).name, bb.shape),
                             model([node], feeds, {}, ["y"]), feeds)


# ---- fusion (passes/fusion.c) -----------------------------------------------

@case
def test_fusion_group_over_external_input_limit():
    """A fusion group (fuse.group marks in the IR, here written by hand: the
    pass itself splits chains at the limit) that reads more distinct tensors
    than a fused kernel takes (NCC_FUSE_MAX_EXT, 12): the plan reader drops
    the group and its nodes run unfused, it does not fail the compile."""
    r = rng("fuse-ext")
    n = 16
    feeds = {"x%d" % i: r.standard_normal((3, 7)).astype(F32) for i in range(n)}
    nodes, prev = [], "x0"
    for i in range(1, n):
        out = "y" if i == n - 1 else "s%d" % i
        nodes.append(helper.make_node("Add" if i % 2 else "Mul", [prev, "x%d" % i], [out]))
        prev = out
    m = model(nodes, feeds, {}, ["y"])
    with nccutil.Workdir() as wd:
        src = os.path.join(wd, "chain.onnx")
        with open(src, "wb") as f:
            f.write(m.SerializeToString())
        nir = os.path.join(wd, "chain.nir")
        p = subprocess.run([NCC, "opt", src, "-O2", "-o", nir], stderr=subprocess.PIPE)
        nccutil.check(p.returncode == 0, "ncc opt: %s" % p.stderr.decode())
        text = open(nir).read()
        nccutil.check(text.count("fuse.group") == n - 1, "expected %d fused nodes" % (n - 1))
        with open(nir, "w") as f:
            f.write(re.sub(r"fuse\.group = \d+", "fuse.group = 0", text))
        check_vs_ort("16-input group at -O0", m, feeds, extra=["-O0"], model_path=nir)


# ---- lowering (codegen/lower_matmul.c) -------------------------------------

@case
def test_conv1x1_lowers_as_matmul():
    """An unpadded stride-1 1x1 Conv (auto_pad NOTSET) is lowered as a matrix
    product with the weights as A: its kernel takes the weights (in1) first.
    A 3x3 Conv and a 1x1 Conv with auto_pad VALID keep the conv order. The
    values are checked against ONNX Runtime as well."""
    if TARGET != "cpu":
        return
    r = rng("conv1x1")
    x = r.standard_normal((1, 4, 5, 5)).astype(F32)
    for k, attrs, matmul in ((1, {}, True), (3, {"pads": [1, 1, 1, 1]}, False),
                             (1, {"auto_pad": "VALID"}, False)):
        w = r.standard_normal((8, 4, k, k)).astype(F32)
        m = model([helper.make_node("Conv", ["x", "w"], ["y"], **attrs)], {"x": x}, {"w": w}, ["y"])
        check_vs_ort("Conv %dx%d %s" % (k, k, attrs), m, {"x": x})
        with nccutil.Workdir() as wd:
            path = os.path.join(wd, "conv.onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            p = subprocess.run([NCC, "compile", path, "--target=cpu", "--emit=kir"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            nccutil.check(p.returncode == 0, p.stderr.decode())
            head = p.stdout.decode().splitlines()[0]
            nccutil.check(("(in1: f32, in0: f32," in head) == matmul,
                          "Conv %dx%d %s: kernel %s (matmul form expected: %s)"
                          % (k, k, attrs, head, matmul))


@case
def test_every_node_after_a_group_is_compiled():
    """codegen/lower_graph.c lowers the fused groups, then every other node: a
    MatMul and a Softmax after a fused Add+Relu get kernels of their own
    (none is left to the host); values against ONNX Runtime."""
    if TARGET != "cpu":
        return
    r = rng("lowerall")
    feeds = {"x": r.standard_normal((4, 8)).astype(F32)}
    inits = {"b": r.standard_normal((8,)).astype(F32), "w": r.standard_normal((8, 5)).astype(F32)}
    nodes = [helper.make_node("Add", ["x", "b"], ["a"]), helper.make_node("Relu", ["a"], ["h"]),
             helper.make_node("MatMul", ["h", "w"], ["mm"]),
             helper.make_node("Softmax", ["mm"], ["y"], axis=-1)]
    m = model(nodes, feeds, inits, ["y"])
    check_vs_ort("Add+Relu, MatMul, Softmax", m, feeds)
    with nccutil.Workdir() as wd:
        path = os.path.join(wd, "m.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        p = subprocess.run([NCC, "compile", path, "--target=cpu", "--emit=kir"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        nccutil.check(p.returncode == 0, p.stderr.decode())
        names = re.findall(r"^kernel (\w+)\(", p.stdout.decode(), re.M)
        for op in ("MatMul", "Softmax"):
            nccutil.check(any(op in n for n in names), "no %s kernel in %s" % (op, names))


def main():
    global NCC, TARGET
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ncc")
    nccutil.add_target_arg(ap)
    ap.add_argument("-k", default="", help="run the cases whose name matches")
    a = ap.parse_args()
    NCC = nccutil.find_ncc(a.ncc)
    TARGET = a.target
    nccutil.require_target(NCC, TARGET)
    return nccutil.run_cases([f for f in CASES if re.search(a.k, f.__name__)])


if __name__ == "__main__":
    sys.exit(main())
