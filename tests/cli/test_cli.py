#!/usr/bin/env python3
"""tests/cli/test_cli.py -- the `ncc` command line against its contract
(docs/CLI.md): exit codes, the single "ncc: error:" line,
sub-commands on tiny ONNX and text-IR models checked against numpy, a corpus
of malformed .npy inputs, and all-or-nothing output writing.

Run with NCC=/path/to/ncc (ctest sets it). Every model and input is generated
into a temporary directory; nothing is written elsewhere. Prints
"N passed, M failed" and exits non-zero when something failed.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

NCC = os.environ.get("NCC", "ncc")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "py"))
from checks import check, finish  # noqa: E402


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self):
        return f"rc={self.rc} stdout={self.out[-300:]!r} stderr={self.err[-600:]!r}"


def ncc(*args, cwd=None):
    p = subprocess.run([NCC, *args], capture_output=True, text=True, cwd=cwd,
                       timeout=120)
    return Result(p.returncode, p.stdout, p.stderr)


def sane(r):
    """Never a crash: no signal, a documented exit code, and no sanitizer
    report (it would add lines to stderr)."""
    return 0 <= r.rc <= 5 and "Sanitizer" not in r.err and "runtime error" not in r.err


def check_ok(name, r):
    check(name, r.rc == 0 and r.err == "" and sane(r), r)


def check_error(name, r, code, *mentions):
    """Exit `code` (a tuple allows several), exactly one stderr line
    "ncc: error: ...", naming every string in `mentions`."""
    codes = code if isinstance(code, tuple) else (code,)
    lines = r.err.splitlines()
    ok = (r.rc in codes and sane(r) and len(lines) == 1 and
          lines[0].startswith("ncc: error: ") and
          all(m in lines[0] for m in mentions))
    check(name, ok, f"want exit {codes} naming {mentions}: {r}")


# ---------------------------------------------------------------- models
def make_models(d):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    def save(nodes, ins, outs, path, name="g"):
        g = h.make_graph(nodes, name, ins, outs)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        onnx.save(m, os.path.join(d, path))

    f32 = T.FLOAT
    x = h.make_tensor_value_info("x", f32, ["N", 3])
    y = h.make_tensor_value_info("y", f32, ["N", 3])
    # two inputs, two outputs, one output name with a '/'
    save([h.make_node("Add", ["x", "y"], ["out/sum"]),
          h.make_node("Relu", ["out/sum"], ["relu"])],
         [x, y], [h.make_tensor_value_info("out/sum", f32, None),
                  h.make_tensor_value_info("relu", f32, None)], "two.onnx")
    # one input, one output
    save([h.make_node("Relu", ["x"], ["r"])], [x],
         [h.make_tensor_value_info("r", f32, None)], "one.onnx")
    # a symbolic dim that is not the batch (bench cannot invent it)
    s = h.make_tensor_value_info("s", f32, ["N", "S"])
    save([h.make_node("Neg", ["s"], ["n"])], [s],
         [h.make_tensor_value_info("n", f32, None)], "seq.onnx")
    with open(os.path.join(d, "garbage.onnx"), "wb") as f:
        f.write(b"\x08\x07this is not a protobuf\xff\xff\xff")


def ref_two(x, y):
    s = x + y
    return s, np.maximum(s, 0)


# ------------------------------------------------------ malformed .npy files
def npy_bytes(header, data=b"", major=1, pad=True):
    if isinstance(header, str):
        header = header.encode("latin1")
    if pad:
        lenbytes = 2 if major == 1 else 4
        total = 8 + lenbytes + len(header) + 1
        header = header + b" " * ((64 - total % 64) % 64) + b"\n"
    lb = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + lb + header + data


def hdr(descr="<f4", fortran="False", shape="(2, 3)"):
    return f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"


GOOD = np.arange(6, dtype=np.float32).reshape(2, 3).tobytes()

MALFORMED = {
    "empty": b"",
    "bad_magic": b"\x93NUMPX\x01\x00" + GOOD,
    "magic_only": b"\x93NUMPY",
    "no_header_len": b"\x93NUMPY\x01\x00\x10",
    "header_past_eof": b"\x93NUMPY\x01\x00\xff\x00{'descr'",
    "huge_header_len": b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{",
    "version_9": b"\x93NUMPY\x09\x00\x10\x00" + b"{}" + b" " * 14,
    "not_a_dict": npy_bytes("['descr', '<f4']", GOOD),
    "missing_descr": npy_bytes("{'fortran_order': False, 'shape': (2, 3), }", GOOD),
    "missing_shape": npy_bytes("{'descr': '<f4', 'fortran_order': False, }", GOOD),
    "missing_fortran": npy_bytes("{'descr': '<f4', 'shape': (2, 3), }", GOOD),
    "garbage_shape": npy_bytes(hdr(shape="(2, three)"), GOOD),
    "shape_not_tuple": npy_bytes(hdr(shape="6"), GOOD),
    "negative_dim": npy_bytes(hdr(shape="(-2, 3)"), GOOD),
    "dim_overflow": npy_bytes(hdr(shape="(123456789012345678901234567890,)"), GOOD),
    "size_overflow": npy_bytes(hdr(shape="(4611686018427387904, 8)"), GOOD),
    "data_short": npy_bytes(hdr(), GOOD[:-4]),
    "data_long": npy_bytes(hdr(), GOOD + b"\0\0\0\0"),
    "huge_shape_no_data": npy_bytes(hdr(shape="(1000000000, 3)"), GOOD),
    "big_endian": npy_bytes(hdr(descr=">f4"), GOOD),
    "fortran_order": npy_bytes(hdr(fortran="True"), GOOD),
    "fortran_not_bool": npy_bytes(hdr(fortran="0"), GOOD),
    "complex": npy_bytes(hdr(descr="<c8", shape="(3,)"), GOOD[:24]),
    "object": npy_bytes(hdr(descr="|O", shape="(3,)"), GOOD[:24]),
    "structured": npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", GOOD),
    "rank_9": npy_bytes(hdr(shape="(1,1,1,1,1,1,1,1,6)"), GOOD[:24]),
    "unterminated_string": npy_bytes("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3), }", GOOD),
    "duplicate_key": npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", GOOD),
    "unknown_key": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1, }", GOOD),
    "unclosed_dict": npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", GOOD),
    "junk_after_dict": npy_bytes(hdr() + " junk", GOOD),
    "nul_in_header": npy_bytes("{'descr': '<f\0', 'fortran_order': False, 'shape': (2, 3), }", GOOD),
    "wrong_dtype_for_model": npy_bytes(hdr(descr="<f8"), GOOD + GOOD),
    "wrong_rank_for_model": npy_bytes(hdr(shape="(6,)"), GOOD),
    "wrong_dim_for_model": npy_bytes(hdr(shape="(3, 2)"), GOOD),
}


# ----------------------------------------------------------------- tests
def test_basics():
    r = ncc("--version")
    check("version", r.rc == 0 and r.out == "ncc 0.1.0\n" and r.err == "", r)
    r = ncc("--help")
    check("help", r.rc == 0 and "usage: ncc" in r.out and r.err == "", r)
    for cmd in ["import", "opt", "compile", "run", "bench", "passes", "targets"]:
        r = ncc(cmd, "--help")
        check(f"help {cmd}", r.rc == 0 and f"usage: ncc {cmd}" in r.out, r)
    check_error("no command", ncc(), 1)
    check_error("unknown command", ncc("frobnicate"), 1, "frobnicate")
    check_error("unknown option first", ncc("--frob"), 1, "--frob")


def test_usage_errors(d):
    m = os.path.join(d, "one.onnx")
    check_error("unknown flag", ncc("run", m, "--frobnicate"), 1, "--frobnicate")
    check_error("flag of another command", ncc("import", m, "--batch", "2"), 1, "--batch")
    check_error("bad -O", ncc("opt", m, "-O7"), 1, "-O7")
    check_error("iters 0", ncc("bench", m, "--target=ref", "--iters", "0"), 1, "--iters")
    check_error("batch not a number", ncc("bench", m, "--target=ref", "--batch=abc"), 1, "abc")
    check_error("extra argument", ncc("opt", m, m + "x"), 1, m + "x")
    check_error("missing value", ncc("run", m, "--target"), 1, "--target")
    check_error("missing model", ncc("run", "--target=ref"), 1, "MODEL")
    check_error("value for a switch", ncc("bench", m, "--json=yes"), 1, "--json")
    check_error("unknown target", ncc("run", m, "--target=tpu"), 1, "tpu")
    check_error("unknown emit", ncc("compile", m, "--target=ref", "--emit=wasm"), 1, "wasm")
    for cmd in ["opt", "run", "bench"]:
        check_error(f"unknown pass {cmd}", ncc(cmd, m, "--target=ref", "--passes=nope")
                    if cmd != "opt" else ncc(cmd, m, "--passes=nope"), 1, "unknown pass 'nope'")
    check_error("disable unknown pass", ncc("opt", m, "--disable-pass=nope"), 1, "nope")
    check_error("print-after unknown pass", ncc("opt", m, "--print-after=nope"), 1, "nope")
    check_error("passes > /dev/full", ncc_to_full("passes"), 2, "standard output")


def ncc_to_full(*args):
    if not os.path.exists("/dev/full"):
        return Result(2, "", "ncc: error: standard output (no /dev/full here)\n")
    with open("/dev/full", "w") as full:
        p = subprocess.run([NCC, *args], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=60)
    return Result(p.returncode, "", p.stderr)


def test_missing_inputs_files(d):
    missing = os.path.join(d, "nope.onnx")
    for cmd in [["import"], ["opt"], ["run", "--target=ref"], ["bench", "--target=ref"]]:
        check_error(f"missing model {cmd[0]}", ncc(*cmd, missing), 2, missing)
    check_error("model is a directory", ncc("opt", d), 2, d)
    garbage = os.path.join(d, "garbage.onnx")
    out = os.path.join(d, "garbage.nir")
    check_error("garbage onnx", ncc("import", garbage, "-o", out), 2, garbage)
    check("garbage onnx writes nothing", not os.path.exists(out))


def targets_usable():
    r = ncc("targets")
    usable = {}
    for line in r.out.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2:
            usable[parts[0]] = parts[1] == "yes"
    return r, usable


def test_info():
    r = ncc("passes")
    lines = r.out.splitlines()
    check("passes header", r.rc == 0 and lines and
          lines[0].split() == ["NAME", "LEVEL", "NEEDS", "DESCRIPTION"], r)
    r, usable = targets_usable()
    check("targets", r.rc == 0 and set(usable) ==
          {"ref", "cpu", "x86_64", "aarch64", "opencl", "cuda"} and usable["ref"], r)


def test_import_opt(d):
    m = os.path.join(d, "two.onnx")
    r = ncc("import", m)
    check("import stdout", r.rc == 0 and "Add(" in r.out and "Relu(" in r.out and r.err == "", r)
    nir = os.path.join(d, "two.nir")
    r = ncc("import", m, "-o", nir)
    check("import -o", r.rc == 0 and r.out == "" and os.path.exists(nir), r)
    check("import -o leaves no temporary",
          not [f for f in os.listdir(d) if f.startswith(".two.nir")])
    # missing directories are created (tests/cli/test_ops.py); one under a
    # regular file cannot be
    open(os.path.join(d, "a_file"), "w").close()
    bad_out = os.path.join(d, "a_file", "dir", "x.nir")
    check_error("import -o under a file", ncc("import", m, "-o", bad_out), 2, bad_out)
    for flags in [[], ["-O0"], ["-O3"], ["--verify-each"], ["--passes="]]:
        r = ncc("opt", m, *flags)
        check_ok(f"opt {flags}", r)
        check(f"opt {flags} prints IR", "Relu(" in r.out, r)
    r = ncc("opt", m, "--time-passes")
    check("opt --time-passes", r.rc == 0 and "Relu(" in r.out and "total" in r.err, r)
    r = ncc("opt", m, "--print-after=all")
    check("opt --print-after=all", r.rc == 0 and "Relu(" in r.out and sane(r), r)
    r = ncc("opt", nir)
    check("opt on .nir", r.rc == 0 and "Relu(" in r.out, r)
    r = ncc("compile", m, "--target=ref", "--emit=ir")
    check("compile --emit=ir", r.rc == 0 and "Relu(" in r.out, r)
    check_error("compile --emit=obj for ref", ncc("compile", m, "--target=ref"), 3, "ref")


def test_run(d):
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    y = np.array([[0.5, 0.5, -9], [4, 1, 1]], np.float32)
    xp, yp = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
    np.save(xp, x)
    np.save(yp, y)
    want_sum, want_relu = ref_two(x, y)
    for model in ["two.onnx", "two.nir"]:
        m = os.path.join(d, model)
        out = os.path.join(d, "out-" + model)
        r = ncc("run", m, "--target=ref", "--input", f"x={xp}", "--input", f"y={yp}",
                "--output-dir", out)
        check(f"run {model}", r.rc == 0 and sane(r), r)
        files = sorted(os.listdir(out)) if os.path.isdir(out) else []
        check(f"run {model} files", files == ["out_sum.npy", "relu.npy"], files)
        if files == ["out_sum.npy", "relu.npy"]:
            s = np.load(os.path.join(out, "out_sum.npy"))
            rl = np.load(os.path.join(out, "relu.npy"))
            check(f"run {model} values", s.dtype == np.float32 and
                  np.array_equal(s, want_sum) and np.array_equal(rl, want_relu))

    # one input: a bare --input FILE; the default output dir is the cwd
    one = os.path.join(d, "one.onnx")
    cwd = os.path.join(d, "cwd")
    os.mkdir(cwd)
    r = ncc("run", os.path.abspath(one), "--target=ref", "--input", os.path.abspath(xp), cwd=cwd)
    check("run bare --input", r.rc == 0 and os.listdir(cwd) == ["r.npy"], r)
    if os.path.exists(os.path.join(cwd, "r.npy")):
        check("run bare --input values",
              np.array_equal(np.load(os.path.join(cwd, "r.npy")), np.maximum(x, 0)))

    # .npy files numpy writes in every format version, and a batch of 5
    from numpy.lib import format as npf
    xb = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    for ver in [(1, 0), (2, 0), (3, 0)]:
        p = os.path.join(d, f"xv{ver[0]}.npy")
        with open(p, "wb") as f:
            npf.write_array(f, xb, version=ver)
        out = os.path.join(d, f"outv{ver[0]}")
        r = ncc("run", one, "--target=ref", "--input", p, "--output-dir", out)
        ok = r.rc == 0 and np.array_equal(np.load(os.path.join(out, "r.npy")), np.maximum(xb, 0))
        check(f"run npy format {ver}", ok, r)

    # input errors: exit 2 naming what is wrong
    two = os.path.join(d, "two.onnx")
    out = os.path.join(d, "out-err")
    check_error("missing input", ncc("run", two, "--target=ref", "--input", f"x={xp}",
                                     "--output-dir", out), 2, "'y'")
    check_error("extra input", ncc("run", two, "--target=ref", "--input", f"x={xp}",
                                   "--input", f"y={yp}", "--input", f"z={yp}",
                                   "--output-dir", out), 2, "'z'")
    check_error("bare input, two inputs", ncc("run", two, "--target=ref", "--input", xp,
                                              "--output-dir", out), 2, xp)
    check_error("input twice", ncc("run", two, "--target=ref", "--input", f"x={xp}",
                                   "--input", f"x={xp}", "--input", f"y={yp}",
                                   "--output-dir", out), 1, "'x'")
    y3 = os.path.join(d, "y3.npy")
    np.save(y3, np.ones((3, 3), np.float32))
    check_error("batch conflict", ncc("run", two, "--target=ref", "--input", f"x={xp}",
                                      "--input", f"y={y3}", "--output-dir", out), 2, y3)
    missing = os.path.join(d, "missing.npy")
    check_error("missing npy", ncc("run", one, "--target=ref", "--input", missing,
                                   "--output-dir", out), 2, missing)
    check("failed runs write nothing", not os.path.exists(out))
    afile = os.path.join(d, "afile")
    open(afile, "w").close()
    check_error("output dir is a file", ncc("run", one, "--target=ref", "--input", xp,
                                            "--output-dir", afile), 2, afile)

    # the default target is cpu where LLVM is built (usable, or exit 3
    # naming it); a -DNCC_LLVM=OFF build has no cpu, so its default is ref
    _, usable = targets_usable()
    r = ncc("run", one, "--input", xp, "--output-dir", os.path.join(d, "out-cpu"))
    if os.environ.get("NCC_WITH_LLVM", "1") == "0":
        check("default target ref runs (no LLVM)", r.rc == 0, r)
    elif usable.get("cpu"):
        check("default target cpu runs", r.rc == 0, r)
    else:
        check_error("default target cpu unavailable", r, 3, "cpu")
    for t in ["x86_64", "aarch64", "opencl", "cuda"]:
        if not usable.get(t):
            check_error(f"target {t} unavailable",
                        ncc("run", one, "--target=" + t, "--input", xp,
                            "--output-dir", os.path.join(d, "out-" + t)), 3, t)


def test_atomic_outputs(d):
    """A failing run leaves the output directory exactly as it was."""
    two = os.path.join(d, "two.onnx")
    xp, yp = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
    out = os.path.join(d, "stale")
    os.mkdir(out)
    with open(os.path.join(out, "out_sum.npy"), "wb") as f:
        f.write(b"stale")
    bad = os.path.join(d, "bad_y.npy")
    with open(bad, "wb") as f:
        f.write(npy_bytes(hdr(), GOOD[:-1]))
    check_error("atomic: bad input", ncc("run", two, "--target=ref", "--input", f"x={xp}",
                                         "--input", f"y={bad}", "--output-dir", out), 2, bad)
    check("atomic: stale file untouched", sorted(os.listdir(out)) == ["out_sum.npy"] and
          open(os.path.join(out, "out_sum.npy"), "rb").read() == b"stale", os.listdir(out))
    # the second output cannot be written (a directory is in its way): the
    # first must not be replaced either, and no temporary may remain
    os.mkdir(os.path.join(out, "relu.npy"))
    r = ncc("run", two, "--target=ref", "--input", f"x={xp}", "--input", f"y={yp}",
            "--output-dir", out)
    check_error("atomic: blocked output", r, 2, "relu.npy")
    check("atomic: nothing replaced", sorted(os.listdir(out)) == ["out_sum.npy", "relu.npy"] and
          open(os.path.join(out, "out_sum.npy"), "rb").read() == b"stale", os.listdir(out))


def test_malformed_npy(d):
    one = os.path.join(d, "one.onnx")
    corpus = os.path.join(d, "npy-corpus")
    os.mkdir(corpus)
    check("corpus has >= 20 cases", len(MALFORMED) >= 20)
    for name, data in MALFORMED.items():
        p = os.path.join(corpus, name + ".npy")
        with open(p, "wb") as f:
            f.write(data)
        out = os.path.join(d, "out-bad-" + name)
        r = ncc("run", one, "--target=ref", "--input", f"x={p}", "--output-dir", out)
        check_error(f"malformed npy {name}", r, (2, 3), p)
        check(f"malformed npy {name} writes nothing", not os.path.exists(out))
    check_error("npy is a directory", ncc("run", one, "--target=ref", "--input", corpus,
                                          "--output-dir", os.path.join(d, "o")), 2, corpus)


def test_bench(d):
    one = os.path.join(d, "one.onnx")
    r = ncc("bench", one, "--target=ref", "--json", "--batch", "4", "--warmup", "1",
            "--iters", "7")
    check("bench json runs", r.rc == 0 and r.err == "", r)
    try:
        j = json.loads(r.out)
    except ValueError:
        j = {}
    keys = {"model", "target", "batch", "compile_ms", "warmup", "iters", "latency_ms",
            "cv", "throughput_per_s", "kernels", "passes"}
    check("bench json keys", keys <= set(j), j)
    if keys <= set(j):
        lat = j["latency_ms"]
        check("bench json values", j["model"] == one and j["target"] == "ref" and
              j["batch"] == 4 and j["warmup"] == 1 and j["iters"] == 7 and
              j["kernels"] == 1 and isinstance(j["passes"], list) and
              set(lat) >= {"median", "p90", "p99", "min", "mean"} and
              0 < lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"], j)
        check("bench throughput = batch / median",
              abs(j["throughput_per_s"] - 4 / (lat["median"] / 1e3)) <=
              1e-3 * j["throughput_per_s"], j)
    r = ncc("bench", one, "--target=ref", "--iters", "3")
    check("bench table", r.rc == 0 and "median" in r.out and "throughput" in r.out, r)
    xp = os.path.join(d, "x.npy")
    r = ncc("bench", one, "--target=ref", "--json", "--input", xp, "--iters", "2")
    check("bench with --input", r.rc == 0 and json.loads(r.out or "{}").get("batch") == 2, r)
    check_error("bench --batch disagrees with input",
                ncc("bench", one, "--target=ref", "--input", xp, "--batch", "3"), 1, "--batch")
    check_error("bench non-batch symbol", ncc("bench", os.path.join(d, "seq.onnx"),
                                              "--target=ref"), 1, "'S'")
    r = ncc("bench", os.path.join(d, "seq.onnx"), "--target=ref", "--iters", "2",
            "--input", f"s={xp}")
    check("bench non-batch symbol with --input", r.rc == 0, r)


def main():
    with tempfile.TemporaryDirectory(prefix="ncc-cli-") as d:
        make_models(d)
        test_basics()
        test_info()
        test_usage_errors(d)
        test_missing_inputs_files(d)
        test_import_opt(d)
        test_run(d)
        test_atomic_outputs(d)
        test_malformed_npy(d)
        test_bench(d)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
