"""tests/bad_onnx/models.py — small ONNX models built with onnx.helper, shared
by make_fixtures.py (good models for tests/unit/test_onnx.c and the fuzz seed
corpus) and make_corpus.py (malformed models, most derived from good ones).

onnx.helper builds whatever it is told, valid or not, so malformed models are
written by building a good one and breaking one thing. Nothing here runs the
ONNX checker: the importer is what is under test.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=21, value_info=(),
          name="g", opsets=None):
    """A ModelProto around one graph; `opsets` overrides the default import."""
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                              initializer=list(inits),
                              value_info=list(value_info))
    if opsets is None:
        opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="ncc-tests")
    m.ir_version = 8  # what /usr/include/onnx/onnx.proto describes
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    """An initializer stored in raw_data (numpy_helper's choice)."""
    return numpy_helper.from_array(np.asarray(array), name)


def typed_init(name, elem, dims, vals):
    """An initializer stored in its typed field (float_data, int32_data...)."""
    return helper.make_tensor(name, elem, dims, vals, raw=False)


def mlp():
    """x[2,3] -> MatMul W[3,4] -> Add b[4] -> Relu -> y[2,4]: the base model
    of the truncation and random-edit entries of the corpus."""
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    b = np.array([0.5, -0.5, 1.0, -1.0], dtype=np.float32)
    return model(
        [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
         helper.make_node("Add", ["h", "b"], ["z"], name="add"),
         helper.make_node("Relu", ["z"], ["y"], name="relu")],
        [vi("x", F32, [2, 3])], [vi("y", F32, [2, 4])],
        [init("W", w), init("b", b)])


def good_models():
    """name -> ModelProto: every form the importer must read."""
    out = {}
    out["mlp"] = mlp()

    # Initializers in raw_data and in each typed field, each passed through
    # Identity to an output so the test can find it by name.
    inits, nodes, outs = [], [], []

    def keep(t, elem, shape):
        inits.append(t)
        nodes.append(helper.make_node("Identity", [t.name], ["o_" + t.name]))
        outs.append(vi("o_" + t.name, elem, shape))

    keep(typed_init("f32_typed", F32, [2, 2], [1.5, -2.0, 3.25, 0.0]), F32, [2, 2])
    keep(typed_init("i64_typed", I64, [3], [1, -2, 1 << 40]), I64, [3])
    keep(typed_init("i32_typed", TensorProto.INT32, [2], [7, -8]),
         TensorProto.INT32, [2])
    keep(typed_init("f64_typed", TensorProto.DOUBLE, [2], [0.25, -1e300]),
         TensorProto.DOUBLE, [2])
    keep(typed_init("f16_typed", TensorProto.FLOAT16, [2],
                    np.array([1.0, -2.0], dtype=np.float16)),
         TensorProto.FLOAT16, [2])
    keep(typed_init("bool_typed", TensorProto.BOOL, [3], [True, False, True]),
         TensorProto.BOOL, [3])
    keep(typed_init("i8_typed", TensorProto.INT8, [2], [-128, 127]),
         TensorProto.INT8, [2])
    keep(typed_init("u8_typed", TensorProto.UINT8, [2], [0, 255]),
         TensorProto.UINT8, [2])
    keep(init("f32_raw", np.array([[1, 2], [3, 4]], dtype=np.float32)), F32, [2, 2])
    keep(init("i64_raw", np.array([5, -6], dtype=np.int64)), I64, [2])
    keep(init("f16_raw", np.array([0.5], dtype=np.float16)), TensorProto.FLOAT16, [1])
    keep(init("bool_raw", np.array([True, False])), TensorProto.BOOL, [2])
    keep(init("scalar_raw", np.array(2.5, dtype=np.float32)), F32, [])
    keep(init("empty_raw", np.zeros((0, 3), dtype=np.float32)), F32, [0, 3])
    # Big enough (>= 4 KB) for the importer to take the decoded buffer over
    # instead of copying it; bool's bytes 0/3/6 still read as 0/1/1.
    keep(init("f32_big_raw", np.arange(3000, dtype=np.float32) * 0.25 - 100),
         F32, [3000])
    big_bool = TensorProto(name="bool_big_raw", data_type=TensorProto.BOOL,
                           dims=[5000], raw_data=bytes(i % 3 * 3 for i in range(5000)))
    keep(big_bool, TensorProto.BOOL, [5000])
    out["inits"] = model(nodes, [], outs, inits)

    # Constant nodes in each form.
    consts = [
        ("c_tensor", helper.make_tensor("t", F32, [2], [1.0, 2.0]), "value", F32, [2]),
        ("c_float", 1.5, "value_float", F32, []),
        ("c_floats", [1.0, 2.0, 3.0], "value_floats", F32, [3]),
        ("c_int", 7, "value_int", I64, []),
        ("c_ints", [4, 5], "value_ints", I64, [2]),
    ]
    nodes, outs = [], []
    for name, val, attr, elem, shape in consts:
        nodes.append(helper.make_node("Constant", [], [name], **{attr: val}))
        nodes.append(helper.make_node("Identity", [name], ["o_" + name]))
        outs.append(vi("o_" + name, elem, shape))
    out["constants"] = model(nodes, [], outs)

    # Opset 13: ReduceMean/ReduceMax take `axes` as an attribute (upgraded
    # to an input), ReduceSum already as an input.
    out["reduce13"] = model(
        [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=0, name="rm"),
         helper.make_node("ReduceMax", ["x"], ["mx"], axes=[0, 2], name="rx"),
         helper.make_node("ReduceSum", ["x", "ax"], ["s"], keepdims=0, name="rs")],
        [vi("x", F32, [2, 3, 4])],
        [vi("m", F32, [2, 4]), vi("mx", F32, [1, 3, 1]), vi("s", F32, [2, 3])],
        [init("ax", np.array([2], dtype=np.int64))], opset=13)

    # Symbolic dims: a named one, an unnamed one, and the same name twice.
    out["symbolic"] = model(
        [helper.make_node("Add", ["x", "b"], ["y"], name="add")],
        [vi("x", F32, ["N", 3, None]), vi("b", F32, ["N", 1, 1])],
        [vi("y", F32, ["N", 3, None])])

    # Nodes listed out of topological order.
    out["unsorted"] = model(
        [helper.make_node("Relu", ["a"], ["y"], name="second"),
         helper.make_node("Neg", ["x"], ["a"], name="first")],
        [vi("x", F32, [4])], [vi("y", F32, [4])])

    # Split: opset-13 even split (-> num_outputs), split sizes as attribute
    # (older form, -> input 1).
    out["split"] = model(
        [helper.make_node("Split", ["x"], ["a", "b"], axis=1, name="even"),
         helper.make_node("Split", ["x"], ["c", "d"], axis=1, split=[1, 3],
                          name="sized")],
        [vi("x", F32, [2, 4])],
        [vi("a", F32, [2, 2]), vi("b", F32, [2, 2]), vi("c", F32, [2, 1]),
         vi("d", F32, [2, 3])], opset=11)  # `split` an attribute: before 13

    # Cast.to (ONNX code) -> ncc dtype name; Clip with min omitted (the
    # importer writes ONNX's default, the lowest f32, out).
    out["cast_clip"] = model(
        [helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16, name="cast"),
         helper.make_node("Clip", ["x", "", "mx"], ["c"], name="clip")],
        [vi("x", F32, [3])], [vi("h", TensorProto.FLOAT16, [3]), vi("c", F32, [3])],
        [init("mx", np.array(1.0, dtype=np.float32))])

    # LayerNormalization with its middle output omitted; value_info agreeing
    # with inference; an initializer also listed as a graph input (IR 3).
    out["layernorm"] = model(
        [helper.make_node("LayerNormalization", ["x", "s"], ["y", "", "inv"],
                          axis=-1, epsilon=1e-5, name="ln"),
         helper.make_node("Relu", ["y"], ["r"], name="relu")],
        [vi("x", F32, [2, 4]), vi("s", F32, [4])],
        [vi("r", F32, [2, 4]), vi("inv", F32, [2, 1])],
        [init("s", np.ones(4, dtype=np.float32))],
        value_info=[vi("y", F32, [2, 4])], opset=17)

    # Sum of three inputs and two Dropouts (one with its mask named but
    # unread, one with training_mode a constant false).
    out["composite"] = model(
        [helper.make_node("Sum", ["a", "b", "c"], ["s"], name="sum"),
         helper.make_node("Dropout", ["s"], ["d", "mask"], name="drop"),
         helper.make_node("Dropout", ["d", "ratio", "off"], ["y"], name="drop2")],
        [vi("a", F32, [2, 3]), vi("b", F32, [3]), vi("c", F32, [2, 1])],
        [vi("y", F32, [2, 3])],
        [init("ratio", np.array(0.5, dtype=np.float32)),
         init("off", np.array(False))],
        value_info=[vi("mask", TensorProto.BOOL, [2, 3]), vi("s", F32, [2, 3])])
    return out


def serialize(m):
    return m.SerializeToString()


def write(path, m_or_bytes):
    data = m_or_bytes if isinstance(m_or_bytes, bytes) else serialize(m_or_bytes)
    with open(path, "wb") as f:
        f.write(data)
