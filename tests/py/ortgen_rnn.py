"""tests/py/ortgen_rnn.py — the recurrent and control-flow family:
RNN, GRU, LSTM, If, Loop, Scan for diff_ort.py (generators against ONNX
Runtime) and node_conformance.py (type-only revisions).  register(ns) is called by both
scripts with the script's module as ns."""
import numpy as np
from onnx import helper

F32, I32 = np.float32, np.int32

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
NS = None  # diff_ort.py's module, set by register()


def Const(v):
    return NS.Const(v)


def rnn_inputs(g, op, seq, batch, inp, hid, ndir=1, bias=True, lens=None,
               init_h=False, init_c=False, peep=False, layout=0, scale=0.5):
    """The input list of one RNN/GRU/LSTM node (None for omitted ones):
    X is a graph input, the weights initializers."""
    G = GATES[op]
    x = g.randn(*((batch, seq, inp) if layout else (seq, batch, inp)))
    ins = [x, Const(g.randn(ndir, G * hid, inp, scale=scale)),
           Const(g.randn(ndir, G * hid, hid, scale=scale)),
           Const(g.randn(ndir, 2 * G * hid, scale=scale)) if bias else None,
           np.asarray(lens, I32) if lens is not None else None]
    state = (batch, ndir, hid) if layout else (ndir, batch, hid)
    ins.append(g.randn(*state) if init_h else None)
    if op == "LSTM":
        ins.append(g.randn(*state) if init_c else None)
        ins.append(Const(g.randn(ndir, 3 * hid, scale=scale)) if peep else None)
    while ins and ins[-1] is None:
        ins.pop()
    return ins


def gen_rnn_family(g):
    op, n_out = g.op, 3 if g.op == "LSTM" else 2
    add = lambda name, ins, attrs, opset=18, outs=n_out: g.add(  # noqa: E731
        name, ins, dict(attrs), n_out=outs, opset=opset)
    for d in ("forward", "reverse", "bidirectional"):
        nd = 2 if d == "bidirectional" else 1
        add(d, rnn_inputs(g, op, 5, 3, 4, 6, nd), {"hidden_size": 6, "direction": d})
        add(d + "_init_seqlens",
            rnn_inputs(g, op, 5, 3, 4, 6, nd, lens=[5, 2, 3], init_h=True, init_c=True,
                       peep=True),
            {"hidden_size": 6, "direction": d})
    # layout 1 (batch first) and a missing hidden_size: ONNX Runtime has
    # neither; the node cases *_batchwise and tests/py/test_rnn_control.py
    # check layout 1.
    add("no_bias", rnn_inputs(g, op, 3, 1, 7, 4, bias=False), {"hidden_size": 4})
    add("only_Y_h", rnn_inputs(g, op, 3, 2, 3, 4, 1), {"hidden_size": 4}, outs=2)
    # an omitted Y in front of Y_h
    ins = rnn_inputs(g, op, 3, 2, 3, 4, 1)
    feeds, names, inits = {"x0": ins[0]}, ["x0"], {}
    for i, v in enumerate(ins[1:], 1):
        if v is None:
            names.append("")
        else:
            names.append("c%d" % i)
            inits["c%d" % i] = v.value
    node = helper.make_node(op, names, ["", "y1"], hidden_size=4)
    g.graph("skip_Y", [node], feeds, inits, ["y1"], 18)
    add("clip", rnn_inputs(g, op, 4, 2, 3, 4, 1, scale=2.0), {"hidden_size": 4, "clip": 0.7})
    add("opset13", rnn_inputs(g, op, 3, 2, 3, 4, 1), {"hidden_size": 4}, opset=13)
    acts = {"RNN": [["Relu"], ["LeakyRelu", "HardSigmoid"]],
            "GRU": [["HardSigmoid", "Softsign"], ["Sigmoid", "Tanh", "Affine", "Elu"]],
            "LSTM": [["HardSigmoid", "Tanh", "Softplus"],
                     ["Sigmoid", "LeakyRelu", "ScaledTanh", "Sigmoid", "Tanh", "Tanh"]]}[op]
    add("acts_" + "_".join(acts[0]), rnn_inputs(g, op, 4, 2, 3, 4, 1),
        {"hidden_size": 4, "activations": acts[0]})
    add("acts_bidir_alpha_beta", rnn_inputs(g, op, 4, 2, 3, 4, 2),
        {"hidden_size": 4, "direction": "bidirectional", "activations": acts[1],
         "activation_alpha": [0.3, 0.7, 1.5], "activation_beta": [0.2, 0.9]})
    if op == "GRU":
        for lbr in (0, 1):
            add("linear_before_reset%d_bidir" % lbr,
                rnn_inputs(g, op, 5, 3, 4, 6, 2, lens=[5, 1, 4], init_h=True),
                {"hidden_size": 6, "direction": "bidirectional", "linear_before_reset": lbr})
    if op == "LSTM":
        add("input_forget", rnn_inputs(g, op, 4, 2, 3, 4, 1, init_c=True, peep=True),
            {"hidden_size": 4, "input_forget": 1})
    # torch-like: two bidirectional layers, batch 2, as torch.onnx exports
    # nn.LSTM / nn.GRU (Y [S, 2, B, H] -> Transpose -> Reshape [S, B, 2H])
    if op != "RNN":
        torch_like(g, op)


def torch_like(g, op):
    S, B, I, H = 7, 2, 5, 8
    G = GATES[op]
    feeds = {"x": g.randn(S, B, I)}
    inits, nodes, cur = {}, [], "x"
    for layer in range(2):
        isz = I if layer == 0 else 2 * H
        inits["W%d" % layer] = g.randn(2, G * H, isz, scale=0.3)
        inits["R%d" % layer] = g.randn(2, G * H, H, scale=0.3)
        inits["B%d" % layer] = g.randn(2, 2 * G * H, scale=0.3)
        outs = ["Y%d" % layer, "Yh%d" % layer] + (["Yc%d" % layer] if op == "LSTM" else [])
        nodes.append(helper.make_node(op, [cur, "W%d" % layer, "R%d" % layer, "B%d" % layer],
                                      outs, hidden_size=H, direction="bidirectional",
                                      **({"linear_before_reset": 1} if op == "GRU" else {})))
        nodes.append(helper.make_node("Transpose", ["Y%d" % layer], ["T%d" % layer],
                                      perm=[0, 2, 1, 3]))
        inits["shape%d" % layer] = np.array([S, B, 2 * H], np.int64)
        nodes.append(helper.make_node("Reshape", ["T%d" % layer, "shape%d" % layer],
                                      ["L%d" % layer]))
        cur = "L%d" % layer
    outputs = ["L1", "Yh1"] + (["Yc1"] if op == "LSTM" else [])
    g.graph("torch_like_2layer_bidir", nodes, feeds, inits, outputs, 17)


def wide_rnn_family(g):
    """Longer sequences and a hidden size past the vector widths."""
    op = g.op
    n_out = 3 if op == "LSTM" else 2
    g.add("wide_seq33_h17", rnn_inputs(g, op, 33, 3, 17, 17, 2, init_h=True, scale=0.3),
          {"hidden_size": 17, "direction": "bidirectional"}, n_out=n_out)
    g.add("wide_batch17_lens", rnn_inputs(g, op, 9, 17, 5, 8, 1, scale=0.3,
                                          lens=[int(v) for v in g.rng.randint(0, 10, 17)]),
          {"hidden_size": 8}, n_out=n_out)


# ---- If and Loop: subgraphs reading outer values, data-dependent shapes ----

def vi(name, elem, shape=None):
    """A value info; an int shape is a rank with unknown dims."""
    if isinstance(shape, int):
        shape = [None] * shape
    return helper.make_tensor_value_info(name, elem, shape)


FLOAT, BOOL, INT64 = 1, 9, 7  # TensorProto codes


def cf_graph(g, name, nodes, feeds, inits, outputs, opset=18):
    """A case whose outputs are declared with their rank only (ONNX's
    inference leaves Loop-carried shapes open, which the checker refuses
    in a graph output)."""
    from onnx import numpy_helper
    import onnx
    feeds = {k: np.asarray(v) for k, v in feeds.items()}
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                         list(v.shape)) for k, v in feeds.items()]
    outs = [vi(o, elem, rank) for o, elem, rank in outputs]
    graph = helper.make_graph(nodes, "g", ins, outs, initializer=[
        numpy_helper.from_array(np.asarray(a), n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="ncc-diff-ort")
    m.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(m, full_check=True)
    g.cases.append(NS.Case(g.op, name, m, feeds))


def branch(name, nodes, outs, rank=2):
    return helper.make_graph(nodes, name, [], [vi(o, FLOAT, rank) for o in outs])


def gen_if(g):
    x = g.randn(3, 4)
    then_b = branch("then", [helper.make_node("Add", ["x", "w"], ["t"])], ["t"])
    else_b = branch("else", [helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], ["e"])
    for cond in (True, False):
        # outer-scope reads (x, the initializer w) and branch shapes [3,4] / [6,4]
        cf_graph(g, "capture_shapes_differ_%s" % cond,
                [helper.make_node("Relu", ["x0"], ["x"]),
                 helper.make_node("If", ["c"], ["y"], then_branch=then_b,
                                  else_branch=else_b)],
                {"c": np.array(cond), "x0": x}, {"w": g.randn(4)}, [("y", FLOAT, 2)])
    # the condition computed in the graph, two outputs, a Constant branch
    two = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])],
        "two", [], [vi("a", FLOAT), vi("b", FLOAT)])
    const_b = helper.make_graph(
        [helper.make_node("Constant", [], ["k"], value=helper.make_tensor(
            "k", FLOAT, [3, 4], [float(v) for v in range(12)])),
         helper.make_node("Identity", ["x"], ["i"])],
        "const", [], [vi("k", FLOAT), vi("i", FLOAT)])
    for k, data in enumerate((g.randn(3, 4) + 3, g.randn(3, 4) - 3)):
        cf_graph(g, "computed_cond_%d" % k,
                [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                 helper.make_node("Greater", ["s", "zero"], ["c"]),
                 helper.make_node("If", ["c"], ["p", "q"], then_branch=two,
                                  else_branch=const_b),
                 helper.make_node("Add", ["p", "q"], ["y"])],
                {"x": data}, {"zero": np.array(0.0, F32)}, [("y", FLOAT, 2), ("p", FLOAT, 2)])
    # an If nested in a branch, reading the outermost graph's value
    inner = branch("inner", [helper.make_node("Mul", ["x", "x"], ["m"])], ["m"], 1)
    inner_e = branch("inner_e", [helper.make_node("Abs", ["x"], ["m2"])], ["m2"], 1)
    outer_t = branch("outer_t", [helper.make_node("If", ["c2"], ["r"], then_branch=inner,
                                                  else_branch=inner_e)], ["r"], 1)
    outer_e = branch("outer_e", [helper.make_node("Identity", ["x"], ["r2"])], ["r2"], 1)
    for c1, c2 in ((True, True), (True, False), (False, True)):
        cf_graph(g, "nested_%d%d" % (c1, c2),
                [helper.make_node("If", ["c1"], ["y"], then_branch=outer_t,
                                  else_branch=outer_e)],
                {"c1": np.array(c1), "c2": np.array(c2), "x": g.randn(5)}, {}, [("y", FLOAT, 1)])


def loop_body(nodes, carried, scans, rank=1, p=""):
    """A Loop body: (i, cond_in, carried...) -> (cond_out, carried..., scans...);
    p prefixes the iteration and condition names (a nested body's)."""
    ins = [vi(p + "i", INT64, []), vi(p + "cond_in", BOOL, [])] + \
        [vi(n + "_in", FLOAT, rank) for n in carried]
    outs = [vi(p + "cond_out", BOOL, [])] + [vi(n + "_out", FLOAT, rank) for n in carried] + \
        [vi(n, FLOAT, rank) for n in scans]
    return helper.make_graph(nodes, "body", ins, outs)


def gen_loop(g):
    # acc += i * w (w outer), scan of acc; trip count only
    body = loop_body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                      helper.make_node("Cast", ["i"], ["fi"], to=FLOAT),
                      helper.make_node("Mul", ["fi", "w"], ["wi"]),
                      helper.make_node("Add", ["acc_in", "wi"], ["acc_out"]),
                      helper.make_node("Identity", ["acc_out"], ["scan"])], ["acc"], ["scan"])
    for m in (0, 1, 5):
        cf_graph(g, "trip_%d" % m, [helper.make_node("Loop", ["M", "", "a0"], ["af", "sc"],
                                                 body=body)],
                {"M": np.array(m, np.int64), "a0": g.randn(3)}, {"w": g.randn(3)},
                [("af", FLOAT, 1), ("sc", FLOAT, 2)])
    # while loop: the body computes cond (i < limit), M absent
    wbody = loop_body([helper.make_node("Less", ["i", "limit"], ["cond_out"]),
                       helper.make_node("Mul", ["v_in", "half"], ["v_out"])], ["v"], [], 2)
    wbody1 = loop_body([helper.make_node("Less", ["i", "limit"], ["cond_out"]),
                        helper.make_node("Mul", ["v_in", "half"], ["v_out"])], ["v"], [], 1)
    cf_graph(g, "while_cond", [helper.make_node("Loop", ["", "c", "v0"], ["vf"], body=wbody)],
            {"c": np.array(True), "v0": g.randn(2, 3)},
            {"limit": np.array(4, np.int64), "half": np.array(0.5, F32)}, [("vf", FLOAT, 2)])
    cf_graph(g, "cond_false_first", [helper.make_node("Loop", ["M", "c", "v0"], ["vf"],
                                                  body=wbody)],
            {"M": np.array(9, np.int64), "c": np.array(False), "v0": g.randn(2, 3)},
            {"limit": np.array(4, np.int64), "half": np.array(0.5, F32)}, [("vf", FLOAT, 2)])
    cf_graph(g, "trip_and_cond", [helper.make_node("Loop", ["M", "c", "v0"], ["vf"],
                                               body=wbody1)],
            {"M": np.array(2, np.int64), "c": np.array(True), "v0": g.randn(4)},
            {"limit": np.array(4, np.int64), "half": np.array(0.5, F32)}, [("vf", FLOAT, 1)])
    # a carried value that grows every iteration (Concat): its shape is data
    gbody = loop_body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                       helper.make_node("Concat", ["s_in", "piece"], ["s_out"], axis=0)],
                      ["s"], [], 2)
    cf_graph(g, "growing_carried", [helper.make_node("Loop", ["M", "", "s0"], ["sf"],
                                                 body=gbody)],
            {"M": np.array(3, np.int64), "s0": g.randn(1, 2)}, {"piece": g.randn(2, 2)},
            [("sf", FLOAT, 2)])
    # a Loop in a Loop: the inner body reads the outer body's carried value
    ibody = loop_body([helper.make_node("Identity", ["j_cond_in"], ["j_cond_out"]),
                       helper.make_node("Add", ["t_in", "acc_in"], ["t_out"])], ["t"], [],
                      p="j_")
    obody = loop_body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                       helper.make_node("Loop", ["K", "", "acc_in"], ["inner"], body=ibody),
                       helper.make_node("Sin", ["inner"], ["acc_out"]),
                       helper.make_node("Identity", ["inner"], ["trace"])], ["acc"], ["trace"])
    cf_graph(g, "nested", [helper.make_node("Loop", ["M", "", "a0"], ["af", "tr"], body=obody)],
            {"M": np.array(3, np.int64), "a0": g.randn(2)}, {"K": np.array(2, np.int64)},
            [("af", FLOAT, 1), ("tr", FLOAT, 2)])
    # If inside a Loop body, on the iteration parity
    tb = branch("even", [helper.make_node("Add", ["x_in", "one"], ["r"])], ["r"], 1)
    eb = branch("odd", [helper.make_node("Mul", ["x_in", "two"], ["r2"])], ["r2"], 1)
    ifbody = loop_body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                        helper.make_node("Less", ["i", "k2"], ["even"]),
                        helper.make_node("If", ["even"], ["x_out"], then_branch=tb,
                                         else_branch=eb)], ["x"], [])
    cf_graph(g, "if_in_loop", [helper.make_node("Loop", ["M", "", "x0"], ["xf"],
                                            body=ifbody)],
             {"M": np.array(5, np.int64), "x0": g.randn(3)},
             {"one": np.array(1.0, F32), "two": np.array(2.0, F32),
              "k2": np.array(2, np.int64)}, [("xf", FLOAT, 1)])


def gen_scan(g):
    """Running sum and product over the scan axis, with an outer value."""
    def body(rank):
        return helper.make_graph(
            [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
             helper.make_node("Mul", ["s_out", "w"], ["y_t"]),
             helper.make_node("Neg", ["z_t"], ["n_t"])],
            "body", [vi("s_in", FLOAT, rank), vi("x_t", FLOAT, rank), vi("z_t", FLOAT, rank)],
            [vi("s_out", FLOAT, rank), vi("y_t", FLOAT, rank), vi("n_t", FLOAT, rank)])
    variants = [
        ("default", {}, (5, 3), (5, 3)),
        ("reverse_in", {"scan_input_directions": [1, 0]}, (4, 2), (4, 2)),
        ("axis1_in", {"scan_input_axes": [1, -1]}, (3, 6), (3, 6)),
        ("out_axis1_reverse", {"scan_output_axes": [1, -1], "scan_output_directions": [1, 0]},
         (4, 3), (4, 3)),
        ("mixed", {"scan_input_axes": [0, 1], "scan_input_directions": [0, 1],
                   "scan_output_axes": [0, 1]}, (5, 2), (2, 5)),
    ]
    for name, attrs, xs, zs in variants:
        ax = attrs.get("scan_input_axes", [0, 0])
        state = tuple(d for i, d in enumerate(xs) if i != (ax[0] % 2))
        cf_graph(g, name, [helper.make_node("Scan", ["s0", "x", "z"], ["sf", "ys", "ns"],
                                            body=body(1), num_scan_inputs=2, **attrs)],
                 {"s0": g.randn(*state), "x": g.randn(*xs), "z": g.randn(*zs)},
                 {"w": g.randn(*state)}, [("sf", FLOAT, 1), ("ys", FLOAT, 2), ("ns", FLOAT, 2)])


def wide_control(g):
    """Bigger tensors through the bodies (the cpu target's compiled kernels
    around the If/Loop nodes)."""
    if g.op == "If":
        tb = branch("t", [helper.make_node("Tanh", ["x"], ["t"])], ["t"])
        eb = branch("e", [helper.make_node("Sigmoid", ["x"], ["e"])], ["e"])
        for cond in (True, False):
            cf_graph(g, "wide_%s" % cond,
                    [helper.make_node("Relu", ["x0"], ["x"]),
                     helper.make_node("If", ["c"], ["y0"], then_branch=tb, else_branch=eb),
                     helper.make_node("Add", ["y0", "x0"], ["y"])],
                    {"c": np.array(cond), "x0": g.randn(33, 1001)}, {}, [("y", FLOAT, 2)])
    elif g.op == "Scan":
        body = helper.make_graph(
            [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
             helper.make_node("Tanh", ["s_out"], ["y_t"])],
            "body", [vi("s_in", FLOAT, 1), vi("x_t", FLOAT, 1)],
            [vi("s_out", FLOAT, 1), vi("y_t", FLOAT, 1)])
        cf_graph(g, "wide", [helper.make_node("Scan", ["s0", "x"], ["sf", "ys"], body=body,
                                              num_scan_inputs=1)],
                 {"s0": g.randn(1001), "x": g.randn(9, 1001)}, {},
                 [("sf", FLOAT, 1), ("ys", FLOAT, 2)])
    else:
        body = loop_body([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                          helper.make_node("Tanh", ["v_in"], ["v_out"]),
                          helper.make_node("Identity", ["v_out"], ["scan"])], ["v"], ["scan"])
        cf_graph(g, "wide", [helper.make_node("Relu", ["x0"], ["x"]),
                         helper.make_node("Loop", ["M", "", "x"], ["vf", "sc"], body=body)],
                {"M": np.array(7, np.int64), "x0": g.randn(1001)}, {}, [("vf", FLOAT, 1), ("sc", FLOAT, 2)])


# Sums of a few dozen products through tanh/sigmoid, in a different order
# than ONNX Runtime's, and repeated over the time steps.
TOL_RNN = (1e-4, 1e-5)


def register(ns):
    global NS
    NS = ns
    if hasattr(ns, "GENERATORS"):  # diff_ort.py
        for op in GATES:
            ns.GENERATORS[op] = gen_rnn_family
            ns.WIDE_GENERATORS[op] = wide_rnn_family
            ns.TOL[op] = TOL_RNN
            # the cpu target runs these through the reference kernel: exact
            ns.TOL_CPU_REF[op] = (0.0, 0.0, "abs")
        ns.GENERATORS.update({"If": gen_if, "Loop": gen_loop, "Scan": gen_scan})
        ns.WIDE_GENERATORS.update({"If": wide_control, "Loop": wide_control,
                                   "Scan": wide_control})
        # The bodies run on the reference kernels on every host target;
        # against ONNX Runtime they hold its elementwise tolerances.
        for op in ("If", "Loop", "Scan"):
            ns.TOL[op] = (1e-5, 1e-5)
            ns.TOL_CPU_REF[op] = (0.0, 0.0, "abs")
    else:  # node_conformance.py
        # opset 22 only added bfloat16 to RNN/GRU/LSTM
        ns.TYPE_ONLY_REVISIONS.update({"RNN": 22, "GRU": 22, "LSTM": 22})
