"""tests/py/ortgen_rnn.py — the recurrent and control-flow family (t-rnn):
RNN, GRU, LSTM for diff_ort.py (generators against ONNX Runtime) and
node_conformance.py (type-only revisions).  register(ns) is called by both
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
    else:  # node_conformance.py
        # opset 22 only added bfloat16 to RNN/GRU/LSTM
        ns.TYPE_ONLY_REVISIONS.update({"RNN": 22, "GRU": 22, "LSTM": 22})
