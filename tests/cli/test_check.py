#!/usr/bin/env python3
"""tests/cli/test_check.py -- `ncc check MODEL [--json]` (docs/CLI.md): every
unsupported op, dtype and opset of a model listed at once with its count and
first node, exit 3 if any, 0 for a supported model, 2 for a corrupt file.

The models are built here with onnx.helper, and the expected problems,
counts and first nodes come from how they were built (the lists below), not
from ncc. Run with NCC=/path/to/ncc (ctest sets it). Prints
"N passed, M failed" and exits non-zero when something failed.
"""
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto as T
from onnx import helper as h

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402


def ncc(*args):
    p = subprocess.run([NCC, *args], capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def model(nodes, inputs, outputs, opsets, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets])


X = h.make_tensor_value_info("x", T.FLOAT, [2, 3])

# The problem model: unsupported ops (Bernoulli x3, RandomUniformLike x2, one com.example op),
# float8 in two places (a Cast target and an initializer) and an old opset,
# behind a supported Relu so the first problem node is not node 0.
NODES = [
    h.make_node("Relu", ["x"], ["r"], name="relu_0"),
    h.make_node("Bernoulli", ["r"], ["t1"], name="bern_a"),
    h.make_node("RandomUniformLike", ["t1"], ["m1"], name="rul_a"),
    h.make_node("Bernoulli", ["m1"], ["t2"], name="bern_b"),
    h.make_node("Cast", ["t2"], ["c1"], name="cast_bf", to=T.FLOAT8E4M3FN),
    h.make_node("Cast", ["c1"], ["c2"], name="cast_back", to=T.FLOAT),
    h.make_node("RandomUniformLike", ["c2"], ["m2"], name="rul_b"),
    h.make_node("Bernoulli", ["m2"], ["t3"], name="bern_c"),
    h.make_node("Frob", ["t3"], ["y"], name="frob_0", domain="com.example"),
]
BF_INIT = h.make_tensor("w_bf", T.FLOAT8E4M3FN, [1], [0])  # unused weight, float8
EXPECT = {  # (kind, name): (count, first, first_op), from NODES above
    ("opset", "ai.onnx opset 6"): (1, "", ""),
    ("op", "Bernoulli"): (3, "bern_a", "Bernoulli"),
    ("op", "RandomUniformLike"): (2, "rul_a", "RandomUniformLike"),
    ("op", "com.example:Frob"): (1, "frob_0", "Frob"),
    ("dtype", "float8e4m3fn"): (2, "w_bf", "initializer"),
}


def main():
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.onnx")
        onnx.save(model(NODES, [X], [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
                        [("", 6), ("com.example", 1)], [BF_INIT]), bad)
        good = os.path.join(d, "good.onnx")
        onnx.save(model([h.make_node("Relu", ["x"], ["a"], name="r0"),
                         h.make_node("Add", ["a", "x"], ["b"], name="add0"),
                         h.make_node("Relu", ["b"], ["y"], name="r1")],
                        [X], [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], [("", 17)]), good)
        corrupt = os.path.join(d, "corrupt.onnx")
        with open(corrupt, "wb") as f:
            f.write(b"\x0a\xff\xff\xff\x0f")

        # text
        rc, out, err = ncc("check", bad)
        check("bad exit 3", rc == 3, f"rc={rc} err={err}")
        check("bad one error line", err.count("ncc: error:") == 1, err)
        lines = out.splitlines()
        want_lines = [
            "unsupported ai.onnx opset 6",
            "unsupported op Bernoulli: 3 nodes, first node 'bern_a'",
            "unsupported op RandomUniformLike: 2 nodes, first node 'rul_a'",
            "unsupported op com.example:Frob: 1 node, first node 'frob_0'",
            "unsupported dtype float8e4m3fn: 2 uses, first initializer 'w_bf'",
        ]
        for w in want_lines:
            check(f"text line: {w}", w in lines, out)
        types = len({n.op_type for n in NODES})
        check("text summary", f"{bad}: {len(NODES)} nodes, {types} op types: unsupported" in lines
              and "5 problems" in lines, out)
        check("text one line per problem", sum(l.startswith("unsupported ") for l in lines) == len(EXPECT), out)

        # json
        rc, out, err = ncc("check", bad, "--json")
        check("bad --json exit 3", rc == 3, f"rc={rc} err={err}")
        try:
            j = json.loads(out)
        except ValueError as e:
            j = {}
            check("json parses", False, f"{e}: {out!r}")
        got = {(p["kind"], p["name"]): (p["count"], p["first"], p["first_op"])
               for p in j.get("problems", [])}
        check("json problems", got == EXPECT, f"got {got}")
        check("json problem count", len(j.get("problems", [])) == len(EXPECT), out)
        check("json summary", j.get("nodes") == len(NODES) and j.get("op_types") == types
              and j.get("ok") is False and j.get("model") == bad, out)

        # a model without the opset problem still lists the rest
        only_ops = os.path.join(d, "ops.onnx")
        onnx.save(model(NODES[:4], [X], [h.make_tensor_value_info("t2", T.FLOAT, [2, 3])],
                        [("", 17)]), only_ops)
        rc, out, err = ncc("check", only_ops, "--json")
        got = {(p["kind"], p["name"]): (p["count"], p["first"]) for p in json.loads(out)["problems"]} if out else {}
        check("ops-only model", rc == 3 and got == {("op", "Bernoulli"): (2, "bern_a"),
                                                     ("op", "RandomUniformLike"): (1, "rul_a")}, f"rc={rc} {got}")

        # supported model
        rc, out, err = ncc("check", good)
        check("good exit 0", rc == 0 and err == "", f"rc={rc} err={err}")
        check("good summary", out == f"{good}: 3 nodes, 2 op types: OK\n", repr(out))
        rc, out, err = ncc("check", good, "--json")
        ok = rc == 0 and json.loads(out) == {"model": good, "nodes": 3, "op_types": 2,
                                             "ok": True, "problems": []} if rc == 0 else False
        check("good --json", ok, f"rc={rc} out={out!r}")

        # malformed files keep the importer's error
        for args in (["check", corrupt], ["check", corrupt, "--json"]):
            rc, out, err = ncc(*args)
            check(f"corrupt exit 2 {args[2:]}", rc == 2 and out == "" and
                  "not a valid ONNX model" in err, f"rc={rc} out={out!r} err={err}")
        rc, out, err = ncc("check", os.path.join(d, "missing.onnx"))
        check("missing file exit 2", rc == 2, f"rc={rc} err={err}")
        rc, out, err = ncc("check")
        check("no model exit 1", rc == 1, f"rc={rc} err={err}")
        rc, out, err = ncc("check", good, "--batch", "2")
        check("bench flag refused exit 1", rc == 1, f"rc={rc} err={err}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
