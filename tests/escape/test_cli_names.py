#!/usr/bin/env python3
"""tests/escape/test_cli_names.py — a model's bytes never reach the terminal
raw (label escape).

A model whose graph, input, output, node and symbolic-dim names hold
terminal controls (ESC, BEL, CSI sequences, 8-bit CSI), a newline and bytes
that are not UTF-8, stored under a file name with ESC, DEL and a byte that is not UTF-8, goes
through every command of the driver: import, opt (with --print-after and
--time-passes), compile --emit=ir|kir, run, run --check-each-pass, bench,
bench --json, bench --ablate (table and --json), passes, targets, and
commands that fail with messages naming the model's inputs and nodes.
For each: stdout and stderr are valid UTF-8 with no byte below 0x20 but
the newline, no DEL and no C1 control; --json output parses; an error is
one "ncc: error:" line.

Prints one line per check and "N passed, M failed"; exit 1 on a failure.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnx_bytes  # noqa: E402

NCC = os.environ.get("NCC", "ncc")
ESC, BEL = b"\x1b", b"\x07"
NAMES = {
    "graph": ESC + b"]0;pwned" + BEL + b"g",
    "x": b"x" + ESC + b"[2J" + ESC + b"[H",
    "w": b"w" + BEL,
    "t": b"t\x9b31m" + b"\xc2\x9b" + b"1m",   # 8-bit CSI, raw and as UTF-8
    "y": b"y" + ESC + b"[31mred\nline\r\x7f",
    "z": b"z\xff\xfe" + ESC + b"c",
    "dim": b"N" + ESC + b"[5m",
    "node": b"node" + ESC + b"[8m" + BEL,
}


def build(path, unsupported=False):
    nm = onnx_bytes.Names()
    n = {k: nm(v) for k, v in NAMES.items()}
    F = TensorProto.FLOAT
    w = helper.make_tensor(n["w"], F, [4], [1.0, -2.0, 0.5, 3.0])
    if unsupported:
        idx = helper.make_tensor(n["w"], TensorProto.INT64, [1], [0])
        nodes = [helper.make_node("Gather", [n["x"], n["w"]], [n["y"]], name=n["node"]),
                 helper.make_node("Relu", [n["y"]], [n["z"]])]
        outs = [helper.make_tensor_value_info(n["z"], F, None)]
        inits = [idx]
    else:
        nodes = [helper.make_node("Mul", [n["x"], n["w"]], [n["t"]], name=n["node"]),
                 helper.make_node("Relu", [n["t"]], [n["y"]]),
                 helper.make_node("Neg", [n["t"]], [n["z"]])]
        outs = [helper.make_tensor_value_info(n["y"], F, [n["dim"], 4]),
                helper.make_tensor_value_info(n["z"], F, [n["dim"], 4])]
        inits = [w]
    g = helper.make_graph(nodes, n["graph"],
                          [helper.make_tensor_value_info(n["x"], F, [n["dim"], 4])],
                          outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(nm.serialize(m))


class Failure(Exception):
    pass


def clean(what, data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failure("%s is not UTF-8: %s" % (what, e))
    for ch in text:
        c = ord(ch)
        if (c < 0x20 and ch != "\n") or 0x7f <= c < 0xa0:
            raise Failure("%s holds the raw control U+%04X: %r" % (what, c, text[-300:]))
    return text


def check(args, expect=0, is_json=False, cwd=None):
    p = subprocess.run([NCC] + args, capture_output=True, timeout=120, cwd=cwd)
    out, err = clean("stdout", p.stdout), clean("stderr", p.stderr)
    if p.returncode != expect:
        raise Failure("exit %d (expected %d): %s" % (p.returncode, expect, err[-400:]))
    if expect:
        lines = err.splitlines()
        if len(lines) != 1 or not lines[0].startswith("ncc: error: "):
            raise Failure("not one error line: %r" % err)
        if "\\x1b" not in err:
            raise Failure("the error does not show the name's ESC as \\x1b: %r" % err)
    if is_json:
        try:
            json.loads(out)
        except ValueError as e:
            raise Failure("--json output does not parse: %s: %r" % (e, out[:300]))
    return out


def main():
    work = tempfile.mkdtemp(prefix="ncc_cli_names_")
    passed = failed = 0
    try:
        model = os.fsencode(os.path.join(work, "m")) + b"\x1b[31m\xff\x7f.onnx"
        build(model)
        bad = os.path.join(work, "gather.onnx")
        build(bad, unsupported=True)
        xin = os.path.join(work, "x.npy")
        np.save(xin, np.arange(8, dtype=np.float32).reshape(2, 4) - 3)
        xname = NAMES["x"].decode()
        wrong = os.path.join(work, "wrong.npy")
        np.save(wrong, np.zeros((2, 5), np.float32))
        outdir = os.path.join(work, "out")
        os.makedirs(outdir)
        bench = ["--iters", "2", "--warmup", "0"]
        checks = [
            ("import", [["import", model]]),
            ("opt --print-after --time-passes",
             [["opt", model, "--print-after=all", "--time-passes"]]),
            ("compile --emit=ir", [["compile", model, "--emit=ir"]]),
            ("compile --emit=kir", [["compile", model, "--emit=kir"]]),
            ("run", [["run", model, "--input", "%s=%s" % (xname, xin),
                      "--output-dir", outdir]]),
            ("run --target=ref", [["run", model, "--target=ref", "--input", xin,
                                   "--output-dir", outdir]]),
            ("run --check-each-pass", [["run", model, "--check-each-pass"]]),
            ("bench", [["bench", model] + bench]),
            ("bench --json", [["bench", model, "--json"] + bench], True),
            ("bench --ablate", [["bench", model, "--ablate"] + bench]),
            ("bench --ablate --json", [["bench", model, "--ablate", "--json"] + bench],
             True),
            ("passes", [["passes"]]),
            ("targets", [["targets"]]),
            ("error: unknown input", [["run", model, "--input", "nosuch=" + xin]], False, 2),
            ("error: wrong input shape", [["run", model, "--input", wrong]], False, 2),
            ("error: no kernel for a named node",
             [["compile", bad, "--emit=lib", "-o", os.path.join(work, "libg.so")]], False, 3),
        ]
        if os.environ.get("NCC_WITH_LLVM", "1") == "0":
            # -DNCC_LLVM=OFF: no cpu target, so no kernel IR and no --emit=lib
            checks = [c for c in checks
                      if c[0] not in ("compile --emit=kir", "error: no kernel for a named node")]
        for entry in checks:
            name, argv = entry[0], entry[1][0]
            is_json = len(entry) > 2 and entry[2]
            expect = entry[3] if len(entry) > 3 else 0
            try:
                check([a if isinstance(a, str) else a for a in argv], expect, is_json)
                passed += 1
                print("ok      %s" % name)
            except Failure as e:
                failed += 1
                print("FAILED  %s: %s" % (name, e))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
