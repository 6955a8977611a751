#!/usr/bin/env python3
"""tests/py/test_rnn_control.py — what diff_ort.py cannot say about the
recurrent and control-flow family, checked against onnxruntime:

  - RNN/GRU/LSTM with layout 1 (batch first), which onnxruntime lacks:
    ncc's layout-1 model against onnxruntime on the same weights in
    layout 0 with X, initial_h/c transposed in and Y, Y_h/Y_c out;
  - the ONNX backend node cases of If, Loop and Scan (test_if, test_loop11,
    test_scan9_*), generated at opsets 9-11, re-stamped to opset 13 (the
    three did not change between them for tensors; Unsqueeze's axes become
    an input);
  - bad models: exit 2 with one `ncc: error:` line, never a crash (a body
    with the wrong input/output count, a cycle through an outer reference,
    an If on a non-bool condition, a body that changes a carried dtype,
    branches of different dtypes, an undefined outer name, Loop's IR-only
    `captures` attribute written in a model);
  - refusals: exit 3 (`ncc compile --emit=lib` of a model with an If;
    If branches of different ranks);
  - `ncc check` looks inside subgraphs.

Usage: NCC=build/ncc python3 tests/py/test_rnn_control.py [--target ref|cpu]
Prints "N passed, M failed"; exit 1 on any failure.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as T, helper, numpy_helper  # noqa: E402

F32 = np.float32
RESULTS = {"pass": 0, "fail": 0}


def report(name, why):
    RESULTS["fail" if why else "pass"] += 1
    print("%s %-44s %s" % ("FAIL" if why else "PASS", name, why or ""))


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, ins, outs, inits=None, opset=17):
    g = helper.make_graph(nodes, "m", ins, outs, initializer=[
        numpy_helper.from_array(np.asarray(a), n) for n, a in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def run(args, workdir, m):
    path = os.path.join(workdir, "model.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    p = subprocess.run([NCC] + [a.replace("MODEL", path) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def expect_error(name, workdir, m, rc_want, pattern, args=("run", "MODEL", "--target=ref")):
    """ncc exits rc_want with exactly one `ncc: error:` line matching pattern."""
    import re
    d = nccutil.subdir(workdir, name)
    rc, err = run(list(args), d, m)
    lines = [l for l in err.splitlines() if l.strip()]
    why = None
    if rc != rc_want:
        why = "exit %d, expected %d: %s" % (rc, rc_want, err.strip()[:300])
    elif len(lines) != 1 or not lines[0].startswith("ncc: error:"):
        why = "expected one 'ncc: error:' line, got %r" % err[:300]
    elif not re.search(pattern, lines[0]):
        why = "message %r does not match %r" % (lines[0], pattern)
    report(name, why)


def compare_ort(name, workdir, m, feeds, target, rtol=1e-5, atol=1e-5, ort_model=None,
                post=None):
    d = nccutil.subdir(workdir, name)
    want = nccutil.run_ort(ort_model or m, feeds)
    if post:
        want = post(want)
    outs = [o.name for o in m.graph.output]
    r = nccutil.run_ncc(NCC, m, feeds, outs, d, target=target)
    if r.rc != 0 or r.missing:
        return report(name, r.describe())
    for o in outs:
        why = nccutil.compare(want[o], r.outputs[o], rtol, atol)
        if why:
            return report(name, "%s: %s" % (o, why))
    report(name, None)


# ---- RNN/GRU/LSTM in layout 1 ----

def layout1(workdir, target):
    rng = np.random.RandomState(12)
    for op, G in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        for d in ("forward", "reverse", "bidirectional"):
            D = 2 if d == "bidirectional" else 1
            S, B, I, H = 5, 3, 4, 6
            x = rng.randn(B, S, I).astype(F32)
            h0 = rng.randn(B, D, H).astype(F32)
            c0 = rng.randn(B, D, H).astype(F32)
            lens = np.array([5, 2, 4], np.int32)
            inits = {"W": rng.randn(D, G * H, I).astype(F32) * 0.5,
                     "R": rng.randn(D, G * H, H).astype(F32) * 0.5,
                     "B": rng.randn(D, 2 * G * H).astype(F32) * 0.5}
            if op == "LSTM":
                inits["P"] = rng.randn(D, 3 * H).astype(F32) * 0.5
            names = ["x", "W", "R", "B", "lens", "h0"] + (["c0", "P"] if op == "LSTM" else [])
            outs = ["Y", "Yh"] + (["Yc"] if op == "LSTM" else [])
            feeds = {"x": x, "lens": lens, "h0": h0}
            ins = [vi("x", T.FLOAT, x.shape), vi("lens", T.INT32, lens.shape),
                   vi("h0", T.FLOAT, h0.shape)]
            if op == "LSTM":
                feeds["c0"] = c0
                ins.append(vi("c0", T.FLOAT, c0.shape))
            attrs = {"hidden_size": H, "direction": d}
            m1 = model([helper.make_node(op, names, outs, layout=1, **attrs)], ins,
                       [vi(o, T.FLOAT, None) for o in outs], inits)
            # the same in layout 0, with the transposes around it
            tr = [helper.make_node("Transpose", ["x"], ["x0"], perm=[1, 0, 2]),
                  helper.make_node("Transpose", ["h0"], ["h00"], perm=[1, 0, 2])]
            names0 = ["x0", "W", "R", "B", "lens", "h00"]
            if op == "LSTM":
                tr.append(helper.make_node("Transpose", ["c0"], ["c00"], perm=[1, 0, 2]))
                names0 += ["c00", "P"]
            outs0 = [o + "0" for o in outs]
            post = [helper.make_node("Transpose", ["Y0"], ["Y"], perm=[2, 0, 1, 3])] + \
                [helper.make_node("Transpose", [o + "0"], [o], perm=[1, 0, 2]) for o in outs[1:]]
            m0 = model(tr + [helper.make_node(op, names0, outs0, **attrs)] + post, ins,
                       [vi(o, T.FLOAT, None) for o in outs], inits)
            compare_ort("layout1_%s_%s" % (op, d), workdir, m1, feeds, target, 1e-4, 1e-5,
                        ort_model=m0)


# ---- the ONNX node cases of If and Loop, re-stamped to opset 13 ----

def restamp13(m):
    """Opset 11 -> 13: Unsqueeze/Squeeze axes attributes become inputs."""
    def fix(g):
        nodes = []
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    fix(a.g)
            if n.op_type in ("Unsqueeze", "Squeeze") and any(a.name == "axes" for a in n.attribute):
                axes = [a for a in n.attribute if a.name == "axes"][0].ints
                cname = n.output[0] + "_axes"
                nodes.append(helper.make_node("Constant", [], [cname], value=helper.make_tensor(
                    cname, T.INT64, [len(axes)], list(axes))))
                keep = [a for a in n.attribute if a.name != "axes"]
                del n.attribute[:]
                n.attribute.extend(keep)
                n.input.append(cname)
            nodes.append(n)
        del g.node[:]
        g.node.extend(nodes)
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    fix(m2.graph)
    del m2.opset_import[:]
    m2.opset_import.extend([helper.make_opsetid("", 13)])
    m2.ir_version = 7
    onnx.checker.check_model(m2, full_check=True)
    return m2


def node_cases(workdir, target):
    import warnings
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases(None)
                 if c.name in ("test_if", "test_loop11") or c.name.startswith("test_scan9")]
    for c in cases:
        m = restamp13(c.model)
        for k, (ins, outs) in enumerate(c.data_sets):
            feeds = {i.name: np.asarray(a) for i, a in zip(m.graph.input, ins)}
            names = [o.name for o in m.graph.output]
            r = nccutil.run_ncc(NCC, m, feeds, names, nccutil.subdir(workdir, c.name), target=target)
            why = r.describe() if r.rc != 0 or r.missing else None
            for o, want in zip(names, outs):
                why = why or nccutil.compare(np.asarray(want), r.outputs[o], c.rtol,
                                             max(c.atol, 1e-6))
            report("%s_opset13_%d" % (c.name, k), why)


# ---- bad models ----

def branch(name, nodes, outs, ins=()):
    return helper.make_graph(nodes, name, list(ins), outs)


def bad_models(workdir):
    out_f = [vi("y", T.FLOAT, None)]
    ok_then = branch("t", [helper.make_node("Neg", ["x"], ["a"])], [vi("a", T.FLOAT, None)])
    ok_else = branch("e", [helper.make_node("Abs", ["x"], ["b"])], [vi("b", T.FLOAT, None)])
    x_in = [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3])]

    with_input = branch("t", [helper.make_node("Neg", ["z"], ["a"])], [vi("a", T.FLOAT, None)],
                        [vi("z", T.FLOAT, [3])])
    expect_error("bad_if_branch_with_input", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=with_input,
                                         else_branch=ok_else)], x_in, out_f),
                 2, r"then_branch takes 1 inputs")

    two_outs = branch("t", [helper.make_node("Neg", ["x"], ["a"]),
                            helper.make_node("Abs", ["x"], ["a2"])],
                      [vi("a", T.FLOAT, None), vi("a2", T.FLOAT, None)])
    expect_error("bad_if_output_count", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=two_outs,
                                         else_branch=ok_else)], x_in, out_f),
                 2, r"then_branch has 2 outputs, the node 1")

    expect_error("bad_if_float_cond", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=ok_then,
                                         else_branch=ok_else)],
                       [vi("c", T.FLOAT, []), vi("x", T.FLOAT, [3])], out_f),
                 2, r"condition must be bool, not f32")

    int_else = branch("e", [helper.make_node("Cast", ["x"], ["b"], to=T.INT64)],
                      [vi("b", T.INT64, None)])
    expect_error("bad_if_branch_dtypes", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=ok_then,
                                         else_branch=int_else)], x_in, out_f),
                 2, r"output 0 is f32 in then_branch but i64 in else_branch")

    # the then branch reads z, which a node computes from the If's output
    cyc = branch("t", [helper.make_node("Neg", ["z"], ["a"])], [vi("a", T.FLOAT, None)])
    expect_error("bad_cycle_through_outer_reference", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=cyc,
                                         else_branch=ok_else),
                        helper.make_node("Relu", ["y"], ["z"])], x_in, out_f),
                 2, r"cycle")
    self_ref = branch("t", [helper.make_node("Neg", ["y"], ["a"])], [vi("a", T.FLOAT, None)])
    expect_error("bad_branch_reads_own_output", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=self_ref,
                                         else_branch=ok_else)], x_in, out_f),
                 2, r"cycle")
    undefined = branch("t", [helper.make_node("Neg", ["nowhere"], ["a"])],
                       [vi("a", T.FLOAT, None)])
    expect_error("bad_undefined_outer_name", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=undefined,
                                         else_branch=ok_else)], x_in, out_f),
                 2, r"'nowhere' is not defined")

    def body(nodes, ins, outs):
        return helper.make_graph(nodes, "body", ins, outs)
    loop_in = [vi("M", T.INT64, []), vi("v0", T.FLOAT, [3])]
    b_ins = [vi("i", T.INT64, []), vi("ci", T.BOOL, []), vi("v", T.FLOAT, [3])]
    changes = body([helper.make_node("Identity", ["ci"], ["co"]),
                    helper.make_node("Cast", ["v"], ["w"], to=T.INT64)], b_ins,
                   [vi("co", T.BOOL, []), vi("w", T.INT64, [3])])
    expect_error("bad_loop_changes_carried_dtype", workdir,
                 model([helper.make_node("Loop", ["M", "", "v0"], ["y"], body=changes)],
                       loop_in, out_f),
                 2, r"turns loop-carried value 0 from f32 of rank 1 into i64")
    few_ins = body([helper.make_node("Identity", ["ci"], ["co"])], b_ins[:2],
                   [vi("co", T.BOOL, [])])
    expect_error("bad_loop_body_input_count", workdir,
                 model([helper.make_node("Loop", ["M", "", "v0"], ["y"], body=few_ins)],
                       loop_in, out_f),
                 2, r"body takes 2 inputs, Loop gives it 3")
    few_outs = body([helper.make_node("Identity", ["ci"], ["co"])], b_ins,
                    [vi("co", T.BOOL, [])])
    expect_error("bad_loop_body_output_count", workdir,
                 model([helper.make_node("Loop", ["M", "", "v0"], ["y"], body=few_outs)],
                       loop_in, out_f),
                 2, r"body has 1 outputs, fewer than the condition and 1 carried")
    good = body([helper.make_node("Identity", ["ci"], ["co"]),
                 helper.make_node("Neg", ["v"], ["w"])], b_ins,
                [vi("co", T.BOOL, []), vi("w", T.FLOAT, [3])])
    expect_error("bad_loop_float_trip_count", workdir,
                 model([helper.make_node("Loop", ["M", "", "v0"], ["y"], body=good)],
                       [vi("M", T.FLOAT, []), vi("v0", T.FLOAT, [3])], out_f),
                 2, r"trip count M must be i64")
    expect_error("bad_loop_captures_attribute", workdir,
                 model([helper.make_node("Loop", ["M", "", "v0"], ["y"], body=good,
                                         captures=0)], loop_in, out_f),
                 2, r"no attribute 'captures'")

    sbody = body([helper.make_node("Add", ["s", "xt"], ["s2"])],
                 [vi("s", T.FLOAT, [3]), vi("xt", T.FLOAT, [3])], [vi("s2", T.FLOAT, [3])])
    expect_error("bad_scan_input_count", workdir,
                 model([helper.make_node("Scan", ["s0", "xs", "xs"], ["y"], body=sbody,
                                         num_scan_inputs=2)],
                       [vi("s0", T.FLOAT, [3]), vi("xs", T.FLOAT, [4, 3])], out_f),
                 2, r"body takes 2 inputs, Scan gives it 3")
    expect_error("bad_scan_axis", workdir,
                 model([helper.make_node("Scan", ["s0", "xs"], ["y"], body=sbody,
                                         num_scan_inputs=1, scan_input_axes=[2])],
                       [vi("s0", T.FLOAT, [3]), vi("xs", T.FLOAT, [4, 3])], out_f),
                 2, r"scan_input_axes\[0\] is 2, outside the rank 2")

    # refusals (exit 3)
    rank3 = branch("e", [helper.make_node("Unsqueeze", ["x", "ax"], ["b"])],
                   [vi("b", T.FLOAT, None)])
    expect_error("unsupported_branch_ranks_differ", workdir,
                 model([helper.make_node("If", ["c"], ["y"], then_branch=ok_then,
                                         else_branch=rank3)], x_in, out_f,
                       {"ax": np.array([0], np.int64)}),
                 3, r"rank 1 in then_branch but 2 in else_branch")
    ok = model([helper.make_node("If", ["c"], ["y"], then_branch=ok_then,
                                 else_branch=ok_else)], x_in, out_f)
    if nccutil.target_usable(NCC, "cpu"):  # --emit=lib needs LLVM
        expect_error("unsupported_aot_lib_if", workdir, ok, 3, r"'If' has no compiled kernel",
                     ("compile", "MODEL", "--emit=lib", "-o", os.path.join(workdir, "if.so")))

    # ncc check looks into bodies: ops nobody adds, inside a Loop body and
    # beside it; before, only the top-level StringNormalizer was listed
    inner = body([helper.make_node("Identity", ["ci"], ["co"]),
                  helper.make_node("TfIdfVectorizer", ["v"], ["w"]),
                  helper.make_node("StringNormalizer", ["v"], ["w2"])], b_ins,
                 [vi("co", T.BOOL, []), vi("w", T.FLOAT, [3])])
    d = nccutil.subdir(workdir, "check_body")
    path = os.path.join(d, "model.onnx")
    onnx.save(model([helper.make_node("Loop", ["M", "", "v0"], ["y"], body=inner),
                     helper.make_node("StringNormalizer", ["y"], ["z"])], loop_in, out_f), path)
    p = subprocess.run([NCC, "check", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    text = p.stdout.decode()
    report("check_looks_into_loop_body",
           None if p.returncode == 3 and "unsupported op TfIdfVectorizer: 1 node" in text
           and "unsupported op StringNormalizer: 2 nodes" in text else
           "exit %d: %s" % (p.returncode, text[:300]))


def main():
    global NCC
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    nccutil.add_target_arg(ap)
    a = ap.parse_args()
    NCC = nccutil.find_ncc(a.ncc)
    nccutil.require_target(NCC, a.target)
    with nccutil.Workdir() as root:
        layout1(root, a.target)
        node_cases(root, a.target)
        bad_models(root)
    print("%d passed, %d failed" % (RESULTS["pass"], RESULTS["fail"]))
    return 1 if RESULTS["fail"] else 0


NCC = None
if __name__ == "__main__":
    sys.exit(main())
