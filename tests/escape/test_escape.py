#!/usr/bin/env python3
"""tests/escape/test_escape.py — model bytes in generated source (label escape).

Names in a model (graph, values, nodes, inputs, outputs, symbolic dims)
are arbitrary bytes chosen by whoever made the model; ncc copies them into
C headers, C glue and GPU kernels. Property test: with a fixed seed, models
whose names are hostile byte strings — comment closers and openers, a
trailing backslash, trigraphs, quotes, control bytes, bytes that are not
UTF-8, 250-byte names, names that collide when made identifiers, and a
payload that would define a constructor if it escaped a comment — must

  * `--emit=lib`: give a header that compiles alone as C11 and as C++ with
    -Wall -Wextra -Werror, glue that does the same, a library that exports
    only the API its header declares (nm -D), and a program that links it,
    gets the right numbers (numpy) and the exact name bytes back from
    <prefix>_input_name/_output_name, with no injected code running;
  * `--emit=opencl`: OpenCL C that clang accepts (-cl-std=CL1.2);
  * `--emit=ptx` (`--target=cuda`): CUDA C that NVRTC compiles;
  and no payload text outside a comment in any of them.

Prints one line per check and "N passed, M failed"; exit 1 on a failure.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnx_bytes  # noqa: E402

NCC = os.environ.get("NCC", "ncc")
MAIN_C = os.path.join(HERE, "escape_main.c")
CC = os.environ.get("CC_FOR_TESTS", "cc")
CXX = shutil.which("c++") or shutil.which("g++")
CLANG = shutil.which("clang-19")

MARK = "PWNED"
PAYLOAD = (b"*/ int pwn_export(void) { return 7; } __attribute__((constructor)) "
           b"static void pwn(void) { extern int puts(const char *); static const "
           b"char m[] = {80, 87, 78, 69, 68, 0}; puts(m); } /*")
ESC, BEL = b"\x1b", b"\x07"

# The slots of the model (see build()): value names must be distinct.
VALUES = ["a", "b", "c", "axes", "t", "t2", "y1", "y2"]
OTHERS = ["graph", "dim", "n1", "n2", "n3"]

FIXED = [
    # the constructor payload in a symbolic dim (issue 10 defect 1) and in
    # names; comment openers and closers, line splices, trigraphs, quotes
    dict(dim=PAYLOAD, graph=PAYLOAD, a=b"/*", b=b"*/", c=b"//", t=b"x\\",
         t2=b"??/", y1=b'"', y2=b"y\\", axes=b"\\", n1=b"\n", n2=b"n" + PAYLOAD,
         n3=b"??="),
    dict(dim=b"S\\", a=b"in" + PAYLOAD, b=b"a??/", y1=b"o*/x", y2=b"/*o",
         graph=b"g\\", n1=b"//\\"),
    # control bytes, terminal escapes, bytes that are not UTF-8
    dict(dim=ESC + b"]0;title" + BEL, graph=b"\x9b2J" + ESC + b"[2J",
         a=ESC + b"[31mred" + ESC + b"[0m", b=BEL + b"bell", c=b"\xff\xfe\x80",
         t=b"\xc3\x28", y1=b"line\nbreak\r", y2=b"tab\there\x7f", n1=ESC,
         n2=BEL, n3=b"\x01\x02\x1f"),
    # long names (and a long dim)
    dict(dim=b"D" * 250, graph=b"G" * 250, a=b"A" * 250, b=b"/*" * 125,
         c=b"*/" * 125, t=b"\\" * 250, y1=b"?" * 250, y2=b"\xff" * 250),
    # names that collide once made identifiers, leading digits, reserved
    # identifier shapes
    dict(dim=b"1N", a=b"a-b", b=b"a_b", c=b"a.b", t=b"__X", t2=b"_Y",
         y1=b"y.1", y2=b"y_1", graph=b"__attribute__", n1=b"int", n2=b"0"),
]

ALPHABET = (list(b"*/\\?\"'\n\r\t\x1b\x07\x7f\x80\xc3\xff#%{}();_-. ")
            + list(range(0x61, 0x7b)))


def random_name(rng):
    n = rng.choice([1, 2, 3, 5, 8, 13, 40])
    return bytes(rng.choice(ALPHABET) for _ in range(n))


def random_case(rng):
    case = {}
    used = set()
    for k in VALUES + OTHERS:
        while True:
            v = random_name(rng)
            if k not in VALUES or v not in used:
                break
        used.add(v)
        case[k] = v
    return case


def names_of(case):
    """Every slot named: the case's bytes, else a plain default."""
    return {k: case.get(k, k.encode()) for k in VALUES + OTHERS}


def build(case, path):
    """t = ReduceSum(a [4,S], axes=1, keepdims) ; t2 = t + b [4,1] ;
    y1 = Relu(t2) ; y2 = t2 * c. S is the symbolic dim, used by a only, so
    it appears once in the header."""
    nm = onnx_bytes.Names()
    n = {k: nm(v) for k, v in names_of(case).items()}
    F = TensorProto.FLOAT
    c = helper.make_tensor(n["c"], F, [4, 1], [0.5, -1.0, 2.0, 0.25])
    axes = helper.make_tensor(n["axes"], TensorProto.INT64, [1], [1])
    nodes = [
        helper.make_node("ReduceSum", [n["a"], n["axes"]], [n["t"]], name=n["n1"],
                         keepdims=1),
        helper.make_node("Add", [n["t"], n["b"]], [n["t2"]], name=n["n2"]),
        helper.make_node("Relu", [n["t2"]], [n["y1"]], name=n["n3"]),
        helper.make_node("Mul", [n["t2"], n["c"]], [n["y2"]]),
    ]
    g = helper.make_graph(
        nodes, n["graph"],
        [helper.make_tensor_value_info(n["a"], F, [4, n["dim"]]),
         helper.make_tensor_value_info(n["b"], F, [4, 1])],
        [helper.make_tensor_value_info(n["y1"], F, [4, 1]),
         helper.make_tensor_value_info(n["y2"], F, [4, 1])], [c, axes])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(nm.serialize(m))


def expected():
    S = 3
    a = np.array([((i * 7) % 11 - 5) * 0.25 for i in range(S * 4)], np.float32)
    b = np.array([((i * 5) % 13 - 6) * 0.5 for i in range(4)], np.float32)
    t2 = a.reshape(4, S).sum(1) + b
    return [np.maximum(t2, 0), t2 * np.array([0.5, -1.0, 2.0, 0.25], np.float32)]


class Failure(Exception):
    pass


def run(cmd, expect=0, env=None, cwd=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run(cmd, capture_output=True, env=e, cwd=cwd, timeout=120)
    if expect is not None and p.returncode != expect:
        msg = (p.stderr or p.stdout).decode("utf-8", "backslashreplace").strip()
        raise Failure("%s: exit %d: %s" % (os.path.basename(cmd[0]) + " " + " ".join(
            os.path.basename(c) for c in cmd[1:4]), p.returncode, msg[-800:]))
    return p


def no_payload_code(text, what):
    """The payload's code must not be outside a comment: strip comments
    (and string literals) the way a C compiler would, then look for it."""
    s = re.sub(rb'"(\\.|[^"\\\n])*"', b'""', text)
    s = re.sub(rb"/\*.*?\*/", b" ", s, flags=re.S)
    s = re.sub(rb"//[^\n]*", b" ", s)
    for word in (b"pwn", b"constructor"):
        if word in s:
            raise Failure("%s: '%s' outside a comment or string" % (what, word.decode()))


def api_names(header, prefix="net"):
    """The functions the header declares with the API prefix (a function
    smuggled into the header by a name is not part of the API)."""
    text = open(header, "rb").read().decode("ascii")
    body = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return set(re.findall(r"\b(%s_\w+)\s*\(" % prefix, body))


def check_lib(model, work, case):
    lib = os.path.join(work, "libnet.so")
    p = run([NCC, "compile", model, "--emit=lib", "-o", lib],
            env={"NCC_KEEP_AOT_TEMPS": "1"})
    header = os.path.join(work, "libnet.h")
    kept = re.search(rb"kept the temporary files in (\S+)", p.stderr)
    # exports: only what the header declares
    nm = run(["nm", "-D", "--defined-only", lib]).stdout.decode()
    syms = {ln.split()[-1] for ln in nm.splitlines() if ln.strip()}
    extra = syms - api_names(header) - {"_init", "_fini"}
    if extra:
        raise Failure("the library exports %s beyond its API" % sorted(extra))
    prog = os.path.join(work, "prog")
    # (warnings are the header checks' business, below)
    run([CC, "-std=c11", "-DMODEL=net",
         '-DMODEL_H="libnet.h"', "-I", work, MAIN_C, lib, "-o", prog,
         "-Wl,-rpath," + work, "-lm", "-lpthread"])
    out = run([prog]).stdout.decode("ascii", "backslashreplace")
    if MARK in out:
        raise Failure("the injected constructor ran: %r" % out)
    hdr = open(header, "rb").read()
    if any(c >= 0x7f or (c < 0x20 and c != 0x0a) for c in hdr):
        raise Failure("the header has bytes outside printable ASCII")
    no_payload_code(hdr, "header")
    flags = ["-Wall", "-Wextra", "-Werror", "-fsyntax-only"]
    run([CC, "-std=c11", "-pedantic"] + flags + ["-x", "c", header])
    if CXX:
        run([CXX] + flags + ["-x", "c++", header])
    if kept:
        tmp = kept.group(1).decode()
        shutil.copy(header, os.path.join(tmp, "model.h"))
        glue = os.path.join(tmp, "glue.c")
        no_payload_code(open(glue, "rb").read(), "glue")
        run([CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
             "-Wno-unused-function", "-fsyntax-only", "-I", tmp, glue])
        shutil.rmtree(tmp)
    nm_ = names_of(case)
    want_names = {("in", 0): nm_["a"], ("in", 1): nm_["b"],
                  ("out", 0): nm_["y1"], ("out", 1): nm_["y2"]}
    want = expected()
    lines = [ln.split() for ln in out.splitlines()]
    if len(lines) != 4:
        raise Failure("program output: %r" % out)
    for ln in lines:
        kind, i, h = ln[0], int(ln[1]), ln[2]
        got = b"" if h == "-" else bytes.fromhex(h)
        if got != want_names[(kind, i)]:
            raise Failure("%s %d: name %r, model has %r" % (kind, i, got,
                                                           want_names[(kind, i)]))
        if kind == "out":
            vals = np.array([float(x) for x in ln[3:]], np.float32)
            if not np.allclose(vals, want[i], rtol=1e-5, atol=1e-5):
                raise Failure("output %d: %s, numpy %s" % (i, vals, want[i]))


def check_opencl(model, work):
    src = os.path.join(work, "k.cl")
    run([NCC, "compile", model, "--target=opencl", "--emit=opencl", "-o", src])
    text = open(src, "rb").read()
    no_payload_code(text, "opencl source")
    if CLANG:
        run([CLANG, "-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header",
             "-Werror", "-fsyntax-only", src])


def check_cuda(model, work):
    src = os.path.join(work, "k.cu")
    run([NCC, "compile", model, "--target=cuda", "--emit=cuda", "-o", src])
    no_payload_code(open(src, "rb").read(), "cuda source")
    ptx = os.path.join(work, "k.ptx")
    p = run([NCC, "compile", model, "--target=cuda", "--emit=ptx", "-o", ptx], expect=None)
    if p.returncode == 3 and b"NVRTC" in p.stderr:
        return  # no NVRTC on this machine: the source check above stands
    if p.returncode != 0:
        raise Failure("--emit=ptx: exit %d: %s" % (p.returncode,
                                                   p.stderr.decode("ascii", "replace")))


def main():
    rng = random.Random(20261202)
    cases = [("fixed%d" % i, c) for i, c in enumerate(FIXED)]
    cases += [("random%d" % i, random_case(rng)) for i in range(6)]
    targets = run([NCC, "targets"]).stdout.decode()
    gpu = {t: re.search(r"^%s\s+yes" % t, targets, re.M) is not None or
           (t == "cuda" and "--emit=cuda|ptx work" in targets) for t in ("opencl", "cuda")}
    passed = failed = 0
    work = tempfile.mkdtemp(prefix="ncc_escape_")
    try:
        for name, case in cases:
            d = os.path.join(work, name)
            os.makedirs(d)
            model = os.path.join(d, "m.onnx")
            build(case, model)
            checks = [("lib", lambda: check_lib(model, d, case))]
            if gpu["opencl"]:
                checks.append(("opencl", lambda: check_opencl(model, d)))
            if gpu["cuda"]:
                checks.append(("cuda", lambda: check_cuda(model, d)))
            for what, fn in checks:
                try:
                    fn()
                    passed += 1
                    print("ok      %s %s" % (name, what))
                except Failure as e:
                    failed += 1
                    print("FAILED  %s %s: %s" % (name, what, e))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
