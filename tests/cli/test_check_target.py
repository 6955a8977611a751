#!/usr/bin/env python3
"""tests/cli/test_check_target.py -- `ncc check MODEL --target=T` (docs/CLI.md,
docs/DYNAMIC-SHAPES.md): what did not compile for T, per op, with its count,
first node and reason.

The model is built here so that the expected report follows from the ops'
documented behaviour, not from ncc: NonZero's output shape depends on its
input's values (always on the host, "data-dependent"), Relu/Add/Mul are
elementwise f32 ops every compiling target lowers, and the ref target
compiles nothing. Prints "N passed, M failed"; exit 1 on a failure.
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
import nccutil  # noqa: E402


def ncc(*args):
    p = subprocess.run([NCC, *args], capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def save(path, nodes, outputs, opset=17):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [3, 4])], outputs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    onnx.save(m, path)


def main():
    d = tempfile.mkdtemp(prefix="ncc-check-target-")
    dyn = os.path.join(d, "dyn.onnx")
    # two NonZero nodes (named), between compiled elementwise ops
    save(dyn, [
        h.make_node("Relu", ["x"], ["r"], name="relu"),
        h.make_node("NonZero", ["r"], ["nz"], name="nonzero_a"),
        h.make_node("Add", ["x", "x"], ["a"], name="add"),
        h.make_node("Mul", ["a", "x"], ["m"], name="mul"),
        h.make_node("NonZero", ["m"], ["nz2"], name="nonzero_b"),
    ], [h.make_tensor_value_info("nz", T.INT64, None),
        h.make_tensor_value_info("nz2", T.INT64, None)])

    # without --target: the support check alone, as before
    rc, out, err = ncc("check", dyn)
    check("no target: exit 0", rc == 0, err)
    check("no target: no compile report", "on the host" not in out and "kernels" not in out, out)

    cpu = nccutil.target_usable(NCC, "cpu")  # not in a build without LLVM
    for target in (["cpu"] if cpu else []) + ["ref"]:
        rc, out, err = ncc("check", dyn, "--target=" + target, "--json")
        check(target + ": exit 0", rc == 0, err)
        try:
            r = json.loads(out)
        except ValueError as e:
            check(target + ": json", False, "%s: %r" % (e, out))
            continue
        check(target + ": json target", r.get("target") == target, out)
        host = {x["op"]: x for x in r.get("host", [])}
        nz = host.get("NonZero", {})
        check(target + ": NonZero on the host twice", nz.get("count") == 2, out)
        check(target + ": first NonZero named", nz.get("first") == "nonzero_a", out)
        check(target + ": host counts add up",
              r.get("host_nodes") == sum(x["count"] for x in r["host"]), out)
        if target == "ref":
            check("ref: everything on the host", r.get("compiled_nodes") == 0 and
                  r.get("kernels") == 0 and r.get("host_nodes", 0) >= 5, out)
            check("ref: why", all(x["why"] == "the target compiles nothing"
                                  for x in r["host"]), out)
        else:
            check("cpu: NonZero why", nz.get("why") == "data-dependent output shape", out)
            check("cpu: elementwise ops compiled", not ({"Relu", "Add", "Mul"} & set(host)), out)
            check("cpu: kernels", r.get("kernels", 0) >= 1, out)
        rc, out, err = ncc("check", dyn, "--target=" + target)
        check(target + ": text names the node and reason",
              rc == 0 and "on the host NonZero: 2 nodes, first 'nonzero_a'" in out, out + err)

    # an unsupported model is not compiled: exit 3, the problem, no report
    bad = os.path.join(d, "bad.onnx")
    save(bad, [h.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf", mode="TF",
                           min_gram_length=1, max_gram_length=1, max_skip_count=0,
                           ngram_counts=[0], ngram_indexes=[0], pool_int64s=[1])],
         [h.make_tensor_value_info("y", T.FLOAT, None)])
    rc, out, err = ncc("check", bad, "--target=ref")
    check("unsupported: exit 3", rc == 3, out + err)
    check("unsupported: no compile report", "on the host" not in out, out)
    # bad target and bad pipeline flags are usage errors before any work
    rc, out, err = ncc("check", dyn, "--target=nosuch")
    check("unknown target: exit 1", rc == 1 and err.startswith("ncc: error:"), err)
    rc, out, err = ncc("check", dyn, "--target=ref", "--disable-pass=nosuch")
    check("unknown pass: exit 1", rc == 1 and err.startswith("ncc: error:"), err)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
