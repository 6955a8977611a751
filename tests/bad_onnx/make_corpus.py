#!/usr/bin/env python3
"""tests/bad_onnx/make_corpus.py — write the malformed-ONNX corpus into OUTDIR:
one NN_name.onnx per entry plus manifest.json listing, for each file, the
exit status `ncc import` must end with (2 bad input, 3 unsupported), what
is wrong with it, and the text the error line must contain to say so
(REASONS). run_corpus.py checks them.

Each entry is a good model with one thing broken (or bytes that are no
model at all), so a failure points at one check of the importer, the shape
inference or the verifier. Deterministic: random bytes come from a fixed seed.

  make_corpus.py OUTDIR
"""
import json
import os
import random
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import (F32, I64, init, mlp, model, serialize,  # noqa: E402
                    typed_init, vi, write)
import onnx  # noqa: E402

BAD, UNSUP = 2, 3


def relu_model(**kw):
    """y = Relu(x), x: f32[2,3]; keyword args override model()'s."""
    args = dict(nodes=[helper.make_node("Relu", ["x"], ["y"], name="relu")],
                inputs=[vi("x", F32, [2, 3])], outputs=[vi("y", F32, [2, 3])])
    args.update(kw)
    return model(**args)


def one_node(node, inputs, outputs, inits=(), **kw):
    return model([node], inputs, outputs, inits, **kw)


def with_init(t, op="Identity", out_elem=F32, out_shape=None):
    """One initializer `t` passed through `op` to the output."""
    return model([helper.make_node(op, [t.name], ["y"], name="n")], [],
                 [vi("y", out_elem, out_shape)], [t])


def bare_tensor(name, elem, dims, float_data=()):
    """A TensorProto built field by field (helper.make_tensor would check
    the element count, which these entries get wrong on purpose)."""
    t = TensorProto()
    t.name, t.data_type = name, elem
    t.dims.extend(dims)
    t.float_data.extend(float_data)
    return t


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):
    """A length-delimited protobuf field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def deep_nesting(levels):
    """ModelProto.graph -> node -> attribute.g -> node -> ... `levels` deep:
    well-formed protobuf that would recurse once per level when decoded."""
    inner = b""
    for _ in range(levels):
        attr = field(6, inner)        # AttributeProto.g (GraphProto)
        node = field(5, attr)         # NodeProto.attribute
        inner = field(1, node)        # GraphProto.node
    return field(7, inner)            # ModelProto.graph


def truncations(data):
    """Prefixes of a good model that protobuf must reject (a length running
    past the end). Cuts that happen to land on a field boundary would be a
    valid, smaller message, so those are skipped."""
    out = []
    for cut in (1, 3, 7, 12, 20, len(data) // 4, len(data) // 3,
                len(data) // 2, 2 * len(data) // 3, len(data) - 9,
                len(data) - 2, len(data) - 1):
        m = onnx.ModelProto()
        try:
            m.ParseFromString(data[:cut])
        except Exception:
            out.append((cut, data[:cut]))
    return out


def entries():
    """(name, expected status, why, ModelProto or bytes)."""
    E = []

    def add(name, status, why, m):
        E.append((name, status, why, m))

    base = serialize(mlp())
    # ---- not a model at all ----
    for cut, data in truncations(base):
        add(f"truncated_at_{cut}", BAD, f"model cut after {cut} bytes", data)
    rng = random.Random(1234)
    for n in (16, 64, 1000, 4096):
        add(f"random_{n}", BAD, f"{n} random bytes",
            bytes(rng.randrange(256) for _ in range(n)))
    add("empty", BAD, "empty file", b"")
    add("zeros", BAD, "1000 zero bytes", bytes(1000))
    add("text", BAD, "a text file", b"graph @g(%x: f32[2]) {\n  return %x\n}\n")
    add("deep_nesting", BAD, "subgraphs nested 300 deep", deep_nesting(300))
    flipped = bytearray(base)
    flipped[len(flipped) // 2] ^= 0xFF
    flipped[len(flipped) // 2 + 1] ^= 0xFF
    try:
        onnx.ModelProto().ParseFromString(bytes(flipped))
    except Exception:
        add("bitflip", BAD, "two bytes flipped mid-model", bytes(flipped))
    no_graph = mlp()
    no_graph.ClearField("graph")
    add("no_graph", BAD, "model without a graph", no_graph)

    # ---- opsets and domains ----
    add("opset_6", UNSUP, "opset 6", relu_model(opset=6))
    add("opset_99", UNSUP, "opset 99", relu_model(opset=99))
    add("no_opset", UNSUP, "no default-domain opset import", relu_model(opsets=[]))
    add("opset_twice", BAD, "default opset imported as 13 and 17",
        relu_model(opsets=[helper.make_opsetid("", 13), helper.make_opsetid("", 17)]))
    add("unknown_domain", UNSUP, "node from domain com.example",
        relu_model(nodes=[helper.make_node("Relu", ["x"], ["y"], domain="com.example")],
                   opsets=[helper.make_opsetid("", 21),
                           helper.make_opsetid("com.example", 1)]))
    add("unknown_op", UNSUP, "op FooBar",
        relu_model(nodes=[helper.make_node("FooBar", ["x"], ["y"], name="foo")]))
    add("internal_op", UNSUP, "op Reorder (ncc's own op, not ONNX)",
        relu_model(nodes=[helper.make_node("Reorder", ["x"], ["y"], name="r")]))
    add("subgraph_op", UNSUP, "op SequenceMap (a subgraph over sequences)",
        relu_model(nodes=[helper.make_node("SequenceMap", ["x"], ["y"])]))
    add("if_no_branches", BAD, "If on an f32 condition, without branches",
        relu_model(nodes=[helper.make_node("If", ["x"], ["y"])]))

    # ---- element types ----
    add("elem_string", UNSUP, "input of type string",
        relu_model(inputs=[vi("x", TensorProto.STRING, [2, 3])]))
    add("elem_complex", UNSUP, "input of type complex64",
        relu_model(inputs=[vi("x", TensorProto.COMPLEX64, [2, 3])]))
    add("elem_undefined", BAD, "input of element type 0",
        relu_model(inputs=[vi("x", 0, [2, 3])]))
    add("elem_999", BAD, "input of element type 999",
        relu_model(inputs=[vi("x", 999, [2, 3])]))
    add("init_float8", UNSUP, "float8e4m3fn initializer",
        with_init(helper.make_tensor("w", TensorProto.FLOAT8E4M3FN, [1], [1.0])))
    add("add_f32_i64", BAD, "Add of f32 and i64",
        one_node(helper.make_node("Add", ["x", "k"], ["y"], name="add"),
                 [vi("x", F32, [2])], [vi("y", F32, [2])],
                 [init("k", np.array([1, 2], dtype=np.int64))]))
    seq = relu_model()
    seq.graph.input[0].type.CopyFrom(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(F32, [2])))
    add("sequence_input", UNSUP, "input of sequence type", seq)
    no_shape = relu_model()
    no_shape.graph.input[0].type.tensor_type.ClearField("shape")
    add("input_no_shape", UNSUP, "input of unknown rank", no_shape)
    no_type = relu_model()
    no_type.graph.input[0].ClearField("type")
    add("input_no_type", BAD, "input without a type", no_type)

    # ---- names: undefined, duplicated ----
    add("missing_initializer", BAD, "MatMul weight W never defined",
        one_node(helper.make_node("MatMul", ["x", "W"], ["y"], name="mm"),
                 [vi("x", F32, [2, 3])], [vi("y", F32, [2, 4])]))
    add("undefined_input", BAD, "node reads a name nothing defines",
        relu_model(nodes=[helper.make_node("Relu", ["nothing"], ["y"], name="r")]))
    add("cycle", BAD, "a = Relu(b), b = Relu(a)",
        relu_model(nodes=[helper.make_node("Relu", ["b"], ["a"], name="ra"),
                          helper.make_node("Relu", ["a"], ["b"], name="rb"),
                          helper.make_node("Relu", ["x"], ["y"], name="r")]))
    add("cycle_behind", BAD, "a cycle feeding a later node",
        relu_model(nodes=[helper.make_node("Add", ["x", "b"], ["y"], name="last"),
                          helper.make_node("Add", ["x", "b"], ["a"], name="c1"),
                          helper.make_node("Relu", ["a"], ["b"], name="c2")]))
    add("self_loop", BAD, "a = Relu(a)",
        relu_model(nodes=[helper.make_node("Relu", ["y"], ["y"], name="r")]))
    # (an output listed twice is valid ONNX, two outputs: tests/files)
    add("duplicate_node_outputs", BAD, "two nodes write y",
        relu_model(nodes=[helper.make_node("Relu", ["x"], ["y"], name="a"),
                          helper.make_node("Neg", ["x"], ["y"], name="b")]))
    add("duplicate_initializers", BAD, "initializer w twice",
        model([helper.make_node("Identity", ["w"], ["y"])], [], [vi("y", F32, [1])],
              [init("w", np.ones(1, np.float32)), init("w", np.ones(1, np.float32))]))
    add("duplicate_inputs", BAD, "graph input x listed twice",
        relu_model(inputs=[vi("x", F32, [2, 3]), vi("x", F32, [2, 3])]))
    add("output_shadows_input", BAD, "a node writes the graph input x",
        relu_model(nodes=[helper.make_node("Relu", ["x"], ["x"], name="r"),
                          helper.make_node("Relu", ["x"], ["y"], name="r2")]))
    add("undefined_output", BAD, "graph output nobody produces",
        relu_model(outputs=[vi("y", F32, [2, 3]), vi("ghost", F32, [2, 3])]))
    add("no_outputs", BAD, "graph without outputs", relu_model(outputs=[]))
    add("unnamed_initializer", BAD, "initializer without a name",
        model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F32, [1])],
              [vi("y", F32, [1])], [init("", np.ones(1, np.float32))]))
    add("empty_required_input", BAD, "Add with its first input omitted",
        one_node(helper.make_node("Add", ["", "x"], ["y"], name="add"),
                 [vi("x", F32, [2])], [vi("y", F32, [2])]))
    add("no_node_outputs", BAD, "Relu without outputs",
        model([helper.make_node("Relu", ["x"], [], name="r"),
               helper.make_node("Neg", ["x"], ["y"])],
              [vi("x", F32, [2])], [vi("y", F32, [2])]))
    add("too_many_inputs", BAD, "Gemm with 4 inputs",
        one_node(helper.make_node("Gemm", ["x", "x", "x", "x"], ["y"], name="gemm"),
                 [vi("x", F32, [2, 2])], [vi("y", F32, [2, 2])]))

    # ---- shapes and dims ----
    add("add_mismatch", BAD, "Add of [2,3] and [4,5]",
        one_node(helper.make_node("Add", ["a", "b"], ["y"], name="add"),
                 [vi("a", F32, [2, 3]), vi("b", F32, [4, 5])], [vi("y", F32, None)]))
    add("newline_in_name", BAD, "Add of [2,3] and [4,5] in a node named 'a\\nb'",
        one_node(helper.make_node("Add", ["a", "b"], ["y"], name="a\nb"),
                 [vi("a", F32, [2, 3]), vi("b", F32, [4, 5])], [vi("y", F32, None)]))
    add("matmul_mismatch", BAD, "MatMul of [2,3] and [4,5]",
        one_node(helper.make_node("MatMul", ["a", "b"], ["y"], name="mm"),
                 [vi("a", F32, [2, 3]), vi("b", F32, [4, 5])], [vi("y", F32, None)]))
    add("absurd_input_dim", BAD, "input dim 1e12",
        relu_model(inputs=[vi("x", F32, [10 ** 12, 3])]))
    add("overflow_input_dims", BAD, "input dims whose product overflows",
        relu_model(inputs=[vi("x", F32, [1 << 31, 1 << 31, 1 << 31])]))
    add("negative_input_dim", BAD, "input dim -5",
        relu_model(inputs=[vi("x", F32, [2, -5])]))
    add("rank_12_input", UNSUP, "input of rank 12",
        relu_model(inputs=[vi("x", F32, [1] * 12)]))
    add("absurd_init_dim", BAD, "initializer of 1e12 elements",
        with_init(bare_tensor("w", F32, [10 ** 12])))
    add("huge_init_no_data", BAD, "initializer of 2^33 f32 without data",
        with_init(bare_tensor("w", F32, [1 << 33])))
    huge = init("w", np.ones(1, np.float32))
    huge.ClearField("dims")
    huge.dims.extend([1 << 20, 1 << 13])
    add("huge_init_short_raw", BAD, "initializer of 2^33 f32 with 4 bytes",
        with_init(huge))
    add("negative_init_dim", BAD, "initializer dim -1",
        with_init(bare_tensor("w", F32, [-1])))
    add("rank_12_init", UNSUP, "initializer of rank 12",
        with_init(helper.make_tensor("w", F32, [1] * 12, [1.0])))
    add("declared_shape_mismatch", BAD, "value_info says [3,2] for a [2,3] value",
        model([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Neg", ["h"], ["y"])],
              [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3])],
              value_info=[vi("h", F32, [3, 2])]))
    add("declared_output_dtype", BAD, "output declared i64, computed f32",
        relu_model(outputs=[vi("y", I64, [2, 3])]))
    add("conv_group", BAD, "Conv group 3 with 4 input channels",
        one_node(helper.make_node("Conv", ["x", "w"], ["y"], group=3, name="conv"),
                 [vi("x", F32, [1, 4, 5, 5])], [vi("y", F32, None)],
                 [init("w", np.ones((3, 2, 3, 3), np.float32))]))
    add("conv_channels", BAD, "Conv weight for 3 channels on 4",
        one_node(helper.make_node("Conv", ["x", "w"], ["y"], name="conv"),
                 [vi("x", F32, [1, 4, 5, 5])], [vi("y", F32, None)],
                 [init("w", np.ones((2, 3, 3, 3), np.float32))]))
    add("reshape_two_minus1", BAD, "Reshape to [-1,-1]",
        one_node(helper.make_node("Reshape", ["x", "s"], ["y"], name="rs"),
                 [vi("x", F32, [2, 3])], [vi("y", F32, None)],
                 [init("s", np.array([-1, -1], np.int64))]))
    add("reshape_bad_size", BAD, "Reshape of 6 elements to [4]",
        one_node(helper.make_node("Reshape", ["x", "s"], ["y"], name="rs"),
                 [vi("x", F32, [2, 3])], [vi("y", F32, None)],
                 [init("s", np.array([4], np.int64))]))
    add("concat_axis", BAD, "Concat axis 5 of rank-2 inputs",
        one_node(helper.make_node("Concat", ["x", "x"], ["y"], axis=5, name="cat"),
                 [vi("x", F32, [2, 3])], [vi("y", F32, None)]))
    add("transpose_perm", BAD, "Transpose perm [0,0]",
        one_node(helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0], name="tr"),
                 [vi("x", F32, [2, 3])], [vi("y", F32, None)]))
    add("softmax_axis", BAD, "Softmax axis 7 of a rank-2 input",
        one_node(helper.make_node("Softmax", ["x"], ["y"], axis=7, name="sm"),
                 [vi("x", F32, [2, 3])], [vi("y", F32, None)]))

    # ---- tensor data ----
    short = init("w", np.ones(4, np.float32))
    short.raw_data = short.raw_data[:-3]
    add("raw_data_short", BAD, "raw_data 3 bytes short", with_init(short))
    long = init("w", np.ones(4, np.float32))
    long.raw_data = long.raw_data + b"\0\0\0\0"
    add("raw_data_long", BAD, "raw_data 4 bytes long", with_init(long))
    add("float_data_count", BAD, "float_data with 3 values for 4 elements",
        with_init(bare_tensor("w", F32, [4], [1.0, 2.0, 3.0])))
    wrong_field = helper.make_tensor("w", F32, [2], [1.0, 2.0], raw=False)
    wrong_field.ClearField("float_data")
    wrong_field.int64_data.extend([1, 2])
    add("wrong_data_field", BAD, "f32 tensor in int64_data", with_init(wrong_field))
    both = init("w", np.ones(2, np.float32))
    both.float_data.extend([1.0, 1.0])
    add("two_data_fields", BAD, "data in raw_data and float_data", with_init(both))
    add("int8_out_of_range", BAD, "int8 tensor holding 300",
        with_init(typed_init("w", TensorProto.INT8, [1], [0]),
                  out_elem=TensorProto.INT8))
    E[-1][3].graph.initializer[0].int32_data[0] = 300
    add("no_data", BAD, "initializer of 4 elements without data",
        with_init(bare_tensor("w", F32, [4])))
    no_dtype = init("w", np.ones(2, np.float32))
    no_dtype.ClearField("data_type")
    add("init_no_dtype", BAD, "initializer without a data type", with_init(no_dtype))
    ext = bare_tensor("w", F32, [4])
    ext.data_location = TensorProto.EXTERNAL
    e = ext.external_data.add()
    e.key, e.value = "location", "weights.bin"
    add("external_data", UNSUP, "initializer in an external file", with_init(ext))
    sp = relu_model()
    sp.graph.sparse_initializer.add().CopyFrom(helper.make_sparse_tensor(
        helper.make_tensor("s", F32, [1], [1.0]),
        helper.make_tensor("si", I64, [1], [0]), [4]))
    add("sparse_initializer", UNSUP, "sparse initializer", sp)
    add("init_input_mismatch", BAD, "initializer w [2] listed as input [3]",
        model([helper.make_node("Relu", ["w"], ["y"])], [vi("w", F32, [3])],
              [vi("y", F32, [2])], [init("w", np.ones(2, np.float32))]))

    # ---- attributes ----
    add("attr_wrong_kind", BAD, "Transpose perm given as FLOAT",
        one_node(helper.make_node("Transpose", ["x"], ["y"], perm=1.0, name="tr"),
                 [vi("x", F32, [2, 3])], [vi("y", F32, None)]))
    add("attr_string_for_float", BAD, "LeakyRelu alpha given as STRING",
        one_node(helper.make_node("LeakyRelu", ["x"], ["y"], alpha="big", name="lr"),
                 [vi("x", F32, [2])], [vi("y", F32, [2])]))
    add("attr_unknown", BAD, "Relu with attribute 'fancy'",
        relu_model(nodes=[helper.make_node("Relu", ["x"], ["y"], fancy=1, name="r")]))
    add("attr_twice", BAD, "Softmax with axis given twice",
        relu_model(nodes=[helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                           axis=1)]))
    E[-1][3].graph.node[0].attribute.add().CopyFrom(helper.make_attribute("axis", 0))
    add("cast_to_string", UNSUP, "Cast to STRING",
        one_node(helper.make_node("Cast", ["x"], ["y"], to=TensorProto.STRING, name="c"),
                 [vi("x", F32, [2])], [vi("y", TensorProto.STRING, [2])]))
    add("cast_no_to", BAD, "Cast without 'to'",
        one_node(helper.make_node("Cast", ["x"], ["y"], name="c"),
                 [vi("x", F32, [2])], [vi("y", F32, [2])]))
    add("cast_to_999", BAD, "Cast to type 999",
        one_node(helper.make_node("Cast", ["x"], ["y"], to=999, name="c"),
                 [vi("x", F32, [2])], [vi("y", F32, [2])]))
    add("constant_no_value", BAD, "Constant without attribute",
        model([helper.make_node("Constant", [], ["y"], name="k")], [], [vi("y", F32, [1])]))
    add("constant_string", UNSUP, "Constant with value_string",
        model([helper.make_node("Constant", [], ["y"], value_string="hi", name="k")],
              [], [vi("y", F32, [1])]))
    bad_raw = init("t", np.ones(3, np.float32))
    bad_raw.raw_data = bad_raw.raw_data[:5]
    add("constant_bad_tensor", BAD, "Constant tensor with raw_data too short",
        model([helper.make_node("Constant", [], ["y"], value=bad_raw, name="k")],
              [], [vi("y", F32, [3])]))
    add("batchnorm_training", UNSUP, "BatchNormalization training_mode=1",
        one_node(helper.make_node("BatchNormalization", ["x", "s", "s", "s", "s"], ["y"],
                                  training_mode=1, name="bn"),
                 [vi("x", F32, [1, 2, 3, 3])], [vi("y", F32, None)],
                 [init("s", np.ones(2, np.float32))]))
    add("split_attr_and_input", BAD, "Split sizes as attribute and as input",
        one_node(helper.make_node("Split", ["x", "s"], ["a", "b"], split=[1, 1],
                                  name="sp"),
                 [vi("x", F32, [2])], [vi("a", F32, None), vi("b", F32, None)],
                 [init("s", np.array([1, 1], np.int64))]))
    add("constantofshape_value", BAD, "ConstantOfShape value of 2 elements",
        one_node(helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos",
                                  value=helper.make_tensor("v", F32, [2], [1.0, 2.0])),
                 [], [vi("y", F32, None)], [init("s", np.array([2], np.int64))]))
    # (A read mask is supported since Dropout became an op: all true.)
    add("dropout_training_ratio", UNSUP, "Dropout in training mode with a nonzero ratio",
        model([helper.make_node("Dropout", ["x", "r", "t"], ["d", "m"], name="drop"),
               helper.make_node("Cast", ["m"], ["y"], to=F32)],
              [vi("x", F32, [2])], [vi("y", F32, [2])],
              [init("r", np.array(0.25, np.float32)), init("t", np.array(True))]))
    add("dropout_training", UNSUP, "Dropout with training_mode true",
        one_node(helper.make_node("Dropout", ["x", "", "t"], ["y"], name="drop"),
                 [vi("x", F32, [2])], [vi("y", F32, [2])],
                 [init("t", np.array(True))]))
    add("sum_empty_input", BAD, "Sum with an omitted input",
        one_node(helper.make_node("Sum", ["x", "", "x"], ["y"], name="sum"),
                 [vi("x", F32, [2])], [vi("y", F32, [2])]))
    # ---- quantization (ir/shape_quant.c) ----
    U8 = TensorProto.UINT8
    ms = [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
    add("quant_scalar_axis_scale", BAD, "QuantizeLinear of a scalar with a [0] scale",
        one_node(helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q"),
                 [vi("x", F32, [])], [vi("y", U8, None)],
                 [init("s", np.zeros(0, np.float32))]))
    add("quant_block_size_huge", BAD, "QuantizeLinear block_size 2^63-1, scale of 2 blocks",
        one_node(helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", axis=1,
                                  block_size=(1 << 63) - 1),
                 [vi("x", F32, [3, 4])], [vi("y", U8, None)],
                 [init("s", np.ones((3, 2), np.float32))]))
    add("quant_axis_opset10", BAD, "QuantizeLinear axis in opset 10",
        one_node(helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", axis=1),
                 [vi("x", F32, [2, 3])], [vi("y", U8, None)],
                 [init("s", np.float32(0.1))], opset=10))
    qc_in = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
    qc_inits = [init("xs", np.float32(0.1)), init("xz", np.uint8(3)),
                init("w", np.ones((6, 4, 3, 3), np.int8)), init("ws", np.float32(0.05)),
                init("wz", np.int8(0)), init("ys", np.float32(0.3)), init("yz", np.uint8(4))]
    add("qlinearconv_bias_short", BAD, "QLinearConv bias of 3 for 6 output channels",
        one_node(helper.make_node("QLinearConv", qc_in, ["y"], name="qc"),
                 [vi("x", U8, [1, 4, 5, 5])], [vi("y", U8, None)],
                 qc_inits + [init("b", np.arange(3, dtype=np.int32))]))
    add("qlinearconv_bias_2d", BAD, "QLinearConv bias of shape [1,6]",
        one_node(helper.make_node("QLinearConv", qc_in, ["y"], name="qc"),
                 [vi("x", U8, [1, 4, 5, 5])], [vi("y", U8, None)],
                 qc_inits + [init("b", np.zeros((1, 6), np.int32))]))
    add("qgap_empty_image", BAD, "QLinearGlobalAveragePool over a 0x5 image",
        one_node(helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"],
                                  ["y"], name="gap", domain="com.microsoft"),
                 [vi("x", U8, [2, 3, 0, 5])], [vi("y", U8, None)],
                 [init("xs", np.float32(0.1)), init("xz", np.uint8(3)),
                  init("ys", np.float32(0.05)), init("yz", np.uint8(4))], opsets=ms))
    qg_in = ["a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"]
    qg_inits = [init("as", np.float32(0.1)), init("az", np.uint8(3)), init("bs", np.float32(0.05)),
                init("bz", np.uint8(128)), init("ys", np.float32(0.3)), init("yz", np.uint8(4))]
    add("qgemm_b_rank3", BAD, "QGemm with a 3-D B",
        one_node(helper.make_node("QGemm", qg_in[:6], ["y"], name="qg", domain="com.microsoft"),
                 [vi("a", U8, [2, 4])], [vi("y", F32, None)],
                 qg_inits[:4] + [init("b", np.ones((4, 3, 2), np.uint8))], opsets=ms))
    add("qgemm_a_scale_vector", BAD, "QGemm with a per-row a_scale",
        one_node(helper.make_node("QGemm", qg_in[:6], ["y"], name="qg", domain="com.microsoft"),
                 [vi("a", U8, [2, 4])], [vi("y", F32, None)],
                 [init("as", np.full(2, 0.1, np.float32))] + qg_inits[1:4] +
                 [init("b", np.ones((4, 3), np.uint8))], opsets=ms))
    add("attr_graph", BAD, "Relu with a GRAPH attribute",
        relu_model(nodes=[helper.make_node(
            "Relu", ["x"], ["y"], name="r",
            body=helper.make_graph([], "sub", [], []))]))
    return E


# What the one error line must say (a substring after "ncc: error: FILE: "),
# per entry name (fnmatch patterns): the reason the file is refused, so a
# model rejected by an earlier, unrelated check fails run_corpus.py. Every
# entry needs one.
REASONS = {
    "truncated_at_*": "not a valid ONNX model (protobuf parse failed)",
    "random_*": "not a valid ONNX model (protobuf parse failed)",
    "empty": "not a valid ONNX model (empty file)",
    "zeros": "not a valid ONNX model (protobuf parse failed)",
    "text": "not a valid ONNX model (protobuf parse failed)",
    "deep_nesting": "messages nested more than 100 deep",
    "bitflip": "not a valid ONNX model",
    "no_graph": "not a valid ONNX model (no graph)",
    "opset_6": "opset 6 of the default ONNX domain is not supported",
    "opset_99": "opset 99 of the default ONNX domain is newer than any ncc knows",
    "no_opset": "imports no opset of the default ONNX domain",
    "opset_twice": "imports the default ONNX opset twice (13 and 17)",
    "unknown_domain": "op 'Relu' of domain 'com.example' is not supported",
    "unknown_op": "unsupported op 'FooBar'",
    "internal_op": "unsupported op 'Reorder'",
    "subgraph_op": "unsupported op 'SequenceMap'",
    "if_no_branches": "(If): the condition must be bool, not f32",
    "elem_string": "graph input 'x' has element type STRING, which ncc does not support",
    "elem_complex": "graph input 'x' has element type COMPLEX64",
    "elem_undefined": "graph input 'x' has no element type",
    "elem_999": "graph input 'x' has an invalid element type (999)",
    "init_float8": "initializer 'w' has element type FLOAT8E4M3FN",
    "add_f32_i64": "input 1 has dtype i64, expected f32",
    "sequence_input": "graph input 'x' is a sequence",
    "input_no_shape": "graph input 'x' has no shape",
    "input_no_type": "graph input 'x' has no type",
    "missing_initializer": "input 'W' is not defined",
    "undefined_input": "input 'nothing' is not defined",
    "cycle": "graph has a cycle through node",
    "cycle_behind": "graph has a cycle through node 'c",
    "self_loop": "graph has a cycle through node 'r'",
    "duplicate_node_outputs": "node 'b': output 'y' is already defined",
    "duplicate_initializers": "value 'w' is defined twice",
    "duplicate_inputs": "graph input 'x' is listed twice",
    "output_shadows_input": "output 'x' is already defined",
    "undefined_output": "graph output 'ghost' is not defined",
    "no_outputs": "graph has no outputs",
    "unnamed_initializer": "initializer #0 has no name",
    "empty_required_input": "required input 0 of Add is empty",
    "no_node_outputs": "Relu takes 1 output, not 0",
    "too_many_inputs": "Gemm takes 2 to 3 inputs, not 4",
    "add_mismatch": "cannot broadcast shapes [2,3] and [4,5]",
    "newline_in_name": "node 'a\\x0ab' (Add): cannot broadcast shapes [2,3] and [4,5]",
    "matmul_mismatch": "inner dims differ: [2,3] x [4,5]",
    "absurd_input_dim": "graph input 'x': dim 0 is 1000000000000, larger than 2^36",
    "overflow_input_dims": "graph input 'x' is too large",
    "negative_input_dim": "graph input 'x': dim 1 is negative (-5)",
    "rank_12_input": "graph input 'x' has rank 12",
    "absurd_init_dim": "initializer 'w': dim 0 is 1000000000000, larger than 2^36",
    "huge_init_no_data": "initializer 'w' has no data (expected 8589934592 values)",
    "huge_init_short_raw": "raw_data holds 4 bytes, expected 34359738368",
    "negative_init_dim": "initializer 'w': dim 0 is negative (-1)",
    "rank_12_init": "initializer 'w' has rank 12",
    "declared_shape_mismatch": "value 'h': dim 0 is declared 3 but computed as 2",
    "declared_output_dtype": "value 'y' is declared i64 but computed as f32",
    "conv_group": "input has 4 channels but the weight expects 2 x group 3",
    "conv_channels": "input has 4 channels but the weight expects 3 x group 1",
    "reshape_two_minus1": "shape has more than one -1",
    "reshape_bad_size": "cannot reshape [2,3] (6 elements) into [4]",
    "concat_axis": "(Concat): axis 5 is out of range for rank 2",
    "transpose_perm": "perm is not a permutation",
    "softmax_axis": "(Softmax): axis 7 is out of range for rank 2",
    "raw_data_short": "raw_data holds 13 bytes, expected 16",
    "raw_data_long": "raw_data holds 20 bytes, expected 16",
    "float_data_count": "float_data holds 3 values, expected 4",
    "wrong_data_field": "keeps its data in float_data, not int64_data",
    "two_data_fields": "holds data in more than one field",
    "int8_out_of_range": "value 300 is out of range for i8",
    "no_data": "initializer 'w' has no data (expected 4 values)",
    "init_no_dtype": "initializer 'w' has no data type",
    "external_data": "uses external data",
    "sparse_initializer": "sparse initializer 's' is not supported",
    "init_input_mismatch": "graph input 'w' does not match the initializer",
    "attr_wrong_kind": "attribute 'perm' must be INTS, not FLOAT",
    "attr_string_for_float": "attribute 'alpha' must be FLOAT, not STRING",
    "attr_unknown": "Relu has no attribute 'fancy'",
    "attr_twice": "attribute 'axis' is given twice",
    "cast_to_string": "Cast target has element type STRING",
    "cast_no_to": "Cast needs attribute 'to'",
    "cast_to_999": "Cast target has an invalid element type (999)",
    "constant_no_value": "Constant needs exactly one value attribute, not 0",
    "constant_string": "Constant with 'value_string' is not supported",
    "constant_bad_tensor": "attribute 'value': raw_data holds 5 bytes, expected 12",
    "batchnorm_training": "BatchNormalization in training mode is not supported",
    "split_attr_and_input": "Split has no attribute 'split' in opset 21",
    "constantofshape_value": "ConstantOfShape 'value' must hold one element",
    "dropout_training_ratio": "Dropout in training mode (training_mode=true, ratio=0.25)",
    "dropout_training": "Dropout in training mode (training_mode=true, ratio=0.5)",
    "sum_empty_input": "(Sum): input 1 is missing",
    "quant_scalar_axis_scale": "(QuantizeLinear): input 1 of a scalar x must hold one value",
    "quant_block_size_huge": "(QuantizeLinear): blocked input 1 has dim 1 = 2, expected 1",
    "quant_axis_opset10": "QuantizeLinear has no attribute 'axis' in opset 10 (it exists from "
                          "opset 13)",
    "qlinearconv_bias_short": "(QLinearConv): bias has 3 entries, expected 6",
    "qlinearconv_bias_2d": "(QLinearConv): input 8 has 2 dims, expected 1",
    "qgap_empty_image": "(QLinearGlobalAveragePool): spatial dim 2 is 0: no values to average",
    "qgemm_b_rank3": "(QGemm): input 3 has 3 dims, expected 2",
    "qgemm_a_scale_vector": "(QGemm): input 1 has 2 values, expected 1",
    # a GRAPH attribute only control flow has: refused by the schema check
    "attr_graph": "Relu has no attribute 'body'",
}


def reason_for(name):
    import fnmatch
    for pat, text in REASONS.items():
        if fnmatch.fnmatchcase(name, pat):
            return text
    raise SystemExit(f"make_corpus: entry {name!r} has no REASONS row")


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    outdir = argv[0]
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    for i, (name, status, why, m) in enumerate(entries()):
        fname = f"{i:02d}_{name}.onnx"
        write(os.path.join(outdir, fname), m)
        manifest.append({"file": fname, "status": status, "why": why,
                         "expect": reason_for(name)})
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"make_corpus: {len(manifest)} malformed models in {outdir}")


if __name__ == "__main__":
    main(sys.argv[1:])
