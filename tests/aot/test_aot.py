#!/usr/bin/env python3
"""tests/aot/test_aot.py — `ncc compile` on this host (label aot).

  * --emit=lib: generated blocks (bench/blocks.py mlp, conv, transformer)
    become a shared library; a C program (tests/aot/aot_main.c) compiled
    against the generated header runs two batch sizes in one process and
    the outputs must match `ncc run --target=ref`. Also: the relocatable
    object (-o NAME.o) linked statically, the x86_64 cross target, and one
    thread versus two.
  * the other --emit kinds (ir, kir, llvm, asm, obj), to files and stdout;
  * errors: unknown kind (exit 1), kinds or targets without a code
    generator and ops without a compiled kernel (exit 3, naming them), a
    missing C compiler (exit 3) — and no output left behind by a failure.

Prints one line per check and "N passed, M failed"; exit 1 on a failure.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aotutil as au  # noqa: E402
import blocks  # noqa: E402  (bench/, put on sys.path by aotutil)

SMALL = {"mlp": dict(width=16, seq=8), "conv": dict(width=8, spatial=(8, 8)),
         "transformer": dict(width=16, seq=8)}


def block_model(work, block):
    path = os.path.join(work, block + ".onnx")
    if not os.path.exists(path):
        onnx.save(blocks.build(block, **SMALL[block]), path)
    return path


def block_inputs(block):
    return lambda b: {"x": blocks.make_input(block, b, **SMALL[block])}


def check_block(work, block, **kw):
    model = block_model(work, block)
    sub = au.fresh_dir(os.path.join(work, "%s_%s" % (block, kw.get("target", "cpu")
                                                      + ("_o" if kw.get("static") else ""))))
    au.check_model(model, sub, [2, 3], block_inputs(block), **kw)


def gather_model(work):
    """y = Gather(x, [2, 0]): an op with no compiled kernel."""
    path = os.path.join(work, "gather.onnx")
    idx = helper.make_tensor("idx", TensorProto.INT64, [2], [2, 0])
    g = helper.make_graph(
        [helper.make_node("Gather", ["x", "idx"], ["y"], axis=0)], "gather",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [idx])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def views_model(work):
    """Views (aliases), outputs copied from an input and from a view, a
    kernel reading a view of scratch, and a bool output."""
    path = os.path.join(work, "views.onnx")
    F = TensorProto.FLOAT
    nodes = [
        helper.make_node("Flatten", ["x"], ["flat"], axis=1),
        helper.make_node("Unsqueeze", ["x", "ax"], ["unsq"]),
        helper.make_node("Identity", ["x"], ["ident"]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Reshape", ["r", "shp"], ["rv"]),
        helper.make_node("Neg", ["rv"], ["neg"]),
        helper.make_node("Greater", ["x", "zero"], ["gt"]),
    ]
    inits = [helper.make_tensor("ax", TensorProto.INT64, [1], [1]),
             helper.make_tensor("shp", TensorProto.INT64, [2], [0, 12]),
             helper.make_tensor("zero", F, [], [0.0])]
    outs = [helper.make_tensor_value_info(n, F, None)
            for n in ("flat", "unsq", "ident", "neg")]
    outs.append(helper.make_tensor_value_info("gt", TensorProto.BOOL, None))
    g = helper.make_graph(nodes, "views",
                          [helper.make_tensor_value_info("x", F, ["N", 3, 4])],
                          outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def check_views(work):
    d = au.fresh_dir(os.path.join(work, "views"))
    au.check_model(views_model(d), d, [1, 4],
                   lambda n: {"x": np.random.RandomState(n).standard_normal(
                       (n, 3, 4)).astype(np.float32)})


def math_model(work):
    """Erf and Tanh in kernels of different vector widths in one module: a
    scalar kernel (a one-element tensor) and a vector one, so the shared
    math helper functions (ncc.erf.*, ncc.tanh.*) must be one per type."""
    path = os.path.join(work, "math.onnx")
    F = TensorProto.FLOAT
    g = helper.make_graph(
        [helper.make_node("Tanh", ["c"], ["tc"]),
         helper.make_node("Erf", ["c"], ["ec"]),
         helper.make_node("Erf", ["x"], ["ex"]),
         helper.make_node("Tanh", ["ex"], ["y"])], "math",
        [helper.make_tensor_value_info("x", F, ["N", 37]),
         helper.make_tensor_value_info("c", F, [1])],
        [helper.make_tensor_value_info(n, F, None) for n in ("tc", "ec", "y")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def check_math(work):
    d = au.fresh_dir(os.path.join(work, "math"))
    au.check_model(math_model(d), d, [1, 4],
                   lambda n: {"x": 2 * np.random.RandomState(n).standard_normal(
                       (n, 37)).astype(np.float32),
                              "c": np.array([0.7], np.float32)})


def data_shape_model(work):
    """y = Relu(Reshape(x, s)) with the shape s an input: dims from data."""
    path = os.path.join(work, "datashape.onnx")
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["r"]),
         helper.make_node("Relu", ["r"], ["y"])], "datashape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 12]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def check_glue_warnings(work):
    """The generated glue compiles cleanly with -std=c11 -pedantic -Werror."""
    d = au.fresh_dir(os.path.join(work, "glue"))
    lib = os.path.join(d, "tf.so")
    p = au.run([au.NCC, "compile", block_model(work, "transformer"), "--emit=lib",
                "-o", lib], env={"NCC_KEEP_AOT_TEMPS": "1"})
    kept = p.stderr.strip().split()[-1]
    if not os.path.isfile(os.path.join(kept, "glue.c")):
        raise au.Failure("NCC_KEEP_AOT_TEMPS: no glue.c in %r" % kept)
    shutil.copy(os.path.join(d, "tf.h"), os.path.join(kept, "model.h"))
    for cc in ("cc", "clang-19"):
        if shutil.which(cc):
            au.run([cc, "-std=c11", "-pedantic", "-Wall", "-Wextra", "-Wshadow",
                    "-Werror", "-O2", "-fPIC", "-c", os.path.join(kept, "glue.c"),
                    "-o", os.path.join(kept, "glue.o")])
    shutil.rmtree(kept)


def check_emit_kinds(work):
    model = block_model(work, "mlp")
    d = au.fresh_dir(os.path.join(work, "emit"))
    for kind, needle in (("ir", "MatMul"), ("kir", "kernel"), ("llvm", "define"),
                         ("asm", "MatMul")):
        out = au.run([au.NCC, "compile", model, "--emit=" + kind]).stdout
        if needle not in out:
            raise au.Failure("--emit=%s to stdout lacks %r" % (kind, needle))
        path = os.path.join(d, "m." + kind)
        au.run([au.NCC, "compile", model, "--emit=" + kind, "-o", path])
        if os.path.getsize(path) == 0:
            raise au.Failure("--emit=%s -o: empty file" % kind)
    for target in ("cpu", "x86_64", "aarch64"):
        path = os.path.join(d, "m_%s.o" % target)
        au.run([au.NCC, "compile", model, "--target=" + target, "--emit=obj", "-o", path])
        with open(path, "rb") as f:
            if f.read(4) != b"\x7fELF":
                raise au.Failure("--emit=obj --target=%s: not an ELF object" % target)
    # obj is the default kind, named after the model in the current directory
    au.run([au.NCC, "compile", model], cwd=d)
    if not os.path.isfile(os.path.join(d, "mlp.o")):
        raise au.Failure("ncc compile MODEL did not write mlp.o")
    # a text kind for a cross target
    if "neon" not in au.run([au.NCC, "compile", model, "--target=aarch64",
                             "--emit=llvm"]).stdout:
        raise au.Failure("--target=aarch64 --emit=llvm lacks +neon")


def no_leftovers(d, allowed=()):
    left = sorted(set(os.listdir(d)) - set(allowed))
    if left:
        raise au.Failure("files left behind: %s" % ", ".join(left))


def check_errors(work):
    model = block_model(work, "mlp")
    d = au.fresh_dir(os.path.join(work, "errors"))
    out = os.path.join(d, "m.so")
    cases = [
        (["--emit=bogus"], 1, "unknown --emit kind 'bogus'"),
        (["--target=nope", "--emit=obj"], 1, "nope"),
        (["--emit=cuda"], 3, "--emit=cuda"),
        (["--target=ref", "--emit=obj"], 3, "target 'ref' cannot emit 'obj'"),
        (["--target=opencl", "--emit=lib"], 3, "target 'opencl'"),
    ]
    for args, rc, needle in cases:
        p = au.run([au.NCC, "compile", model, "-o", out] + args, expect=rc)
        if needle not in p.stderr or not p.stderr.startswith("ncc: error:"):
            raise au.Failure("%s: message %r lacks %r" % (" ".join(args),
                                                          p.stderr.strip(), needle))
    p = au.run([au.NCC, "compile", gather_model(d), "--emit=lib", "-o", out], expect=3)
    if "op 'Gather' has no compiled kernel for --emit=lib" not in p.stderr:
        raise au.Failure("unsupported op: %r" % p.stderr.strip())
    p = au.run([au.NCC, "compile", data_shape_model(d), "--emit=lib", "-o", out],
               expect=3)
    if "is not known from the input shapes" not in p.stderr:
        raise au.Failure("data-dependent shape: %r" % p.stderr.strip())
    p = au.run([au.NCC, "compile", model, "--emit=lib", "-o", out], expect=3,
               env={"NCC_CC": "/nonexistent/cc"})
    if "C compiler" not in p.stderr or "NCC_CC" not in p.stderr:
        raise au.Failure("missing compiler: %r" % p.stderr.strip())
    p = au.run([au.NCC, "compile", model, "--emit=lib", "-o", out], expect=5,
               env={"NCC_CC": "false"})
    no_leftovers(d, ["gather.onnx", "datashape.onnx"])


def check_threads(work):
    """One thread and four threads give the same bytes."""
    model = block_model(work, "conv")
    d = au.fresh_dir(os.path.join(work, "threads"))
    lib = os.path.join(d, "libx.so")  # API prefix "x": X_OK is a system macro
    header = au.compile_lib(model, lib)
    if not header.endswith("libx.h"):
        raise au.Failure("header name %s" % header)
    prog = os.path.join(d, "prog")
    au.build_program(lib, header, prog)
    x = [blocks.make_input("conv", 5, **SMALL["conv"])]
    one = au.run_program(prog, [x], 1, 1, d)[0][0]
    four = au.run_program(prog, [x], 1, 4, d)[0][0]
    if one[0] != four[0] or not np.array_equal(one[1], four[1]):
        raise au.Failure("1 and 4 threads differ")


def host_has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx2" in f.read()
    except OSError:
        return False


def check_empty_weights(work):
    """y = MatMul(x[N,0], w[0,4]) + b: the packed weights of an empty
    initializer are zero bytes; every row of y is b (numpy's answer)."""
    d = au.fresh_dir(os.path.join(work, "emptyw"))
    path = os.path.join(d, "emptyw.onnx")
    F = TensorProto.FLOAT
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]),
         helper.make_node("Add", ["m", "b"], ["y"])], "emptyw",
        [helper.make_tensor_value_info("x", F, ["N", 0])],
        [helper.make_tensor_value_info("y", F, None)],
        [helper.make_tensor("w", F, [0, 4], []),
         helper.make_tensor("b", F, [4], [1.0, -2.0, 3.5, 0.25])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    lib = os.path.join(d, "emptyw.so")
    header = au.compile_lib(path, lib, "cpu", extra=("-O0",))
    prog = os.path.join(d, "emptyw_prog")
    au.build_program(lib, header, prog)
    batches = [1, 3]
    got = au.run_program(prog, [[np.zeros((n, 0), np.float32)] for n in batches], 1,
                         2, d)
    b = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
    for n, res in zip(batches, got):
        want = np.zeros((n, 0), np.float32) @ np.zeros((0, 4), np.float32) + b
        au.compare("emptyw batch %d" % n, res[0], want, 0, 0)


def main():
    r = au.Runner()
    with tempfile.TemporaryDirectory(prefix="ncc-aot-") as work:
        r.check("lib mlp (cpu, .so)", check_block, work, "mlp")
        r.check("lib conv (cpu, .so, 1 thread)", check_block, work, "conv", threads=1)
        r.check("lib transformer (cpu, .so: views, shape subgraph)", check_block,
                work, "transformer")
        if host_has_avx2():  # the x86_64 target's baseline is x86-64-v3
            r.check("lib mlp (x86_64, .o linked statically)", check_block, work,
                    "mlp", target="x86_64", static=True)
        r.check("lib conv threads 1 vs 4", check_threads, work)
        r.check("lib views, copies, bool output", check_views, work)
        r.check("lib erf/tanh helpers in scalar and vector kernels", check_math, work)
        r.check("generated glue is warning-free", check_glue_warnings, work)
        r.check("emit kinds", check_emit_kinds, work)
        r.check("errors", check_errors, work)
        r.check("lib with empty weights", check_empty_weights, work)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
