#!/usr/bin/env python3
"""tests/zoo/test_runner.py — the zoo's checks can fail: the comparison, the
degeneracy check, and the whole runner on a cached model whose torch
reference or ONNX weight was tampered with (both must be reported as a
mismatch and, with the model expected to pass, as a regression: exit 1).

Uses squeezenet1_1 from the zoo cache (exported if missing; the smallest
passing CNN, under a second on ref).  Prints "N passed, M failed".
Usage: NCC=build/ncc python3 tests/zoo/test_runner.py
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "py"))

MODEL = "squeezenet1_1"
passed, failed = 0, 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def unit_checks():
    import numpy as np
    import export
    import run_zoo
    r = np.random.RandomState(0)
    w = r.standard_normal((4, 10)).astype(np.float32)
    ok, err, _ = run_zoo.compare(["y"], {"y": w}, {"y": w.copy()}, 1e-4, set())
    check(ok and err == 0.0, "identical outputs pass")
    g = w.copy()
    g[1, 3] += 5e-5 * np.abs(w).max()
    check(run_zoo.compare(["y"], {"y": w}, {"y": g}, 1e-4, set())[0], "5e-5 relative passes")
    g[1, 3] += 1e-4 * np.abs(w).max()
    ok, err, why = run_zoo.compare(["y"], {"y": w}, {"y": g}, 1e-4, set())
    check(not ok and "1.50e-04" in why, "1.5e-4 relative fails: %s" % why)
    g = w.copy()
    g[0, 0] = np.nan
    check(not run_zoo.compare(["y"], {"y": w}, {"y": g}, 1e-4, set())[0], "NaN fails")
    check(not run_zoo.compare(["y"], {"y": w}, {"y": w[:, :9]}, 1e-4, set())[0], "shape fails")
    check(not run_zoo.compare(["y"], {"y": w}, {}, 1e-4, set())[0], "missing output fails")
    lab = np.array([1, 2, 3], np.int64)
    check(run_zoo.compare(["l"], {"l": lab}, {"l": lab.copy()}, 1e-4, {"l"})[0], "equal ints pass")
    check(not run_zoo.compare(["l"], {"l": lab}, {"l": lab[::-1].copy()}, 1e-4, {"l"})[0],
          "different ints fail")
    check(run_zoo.bound({"tol": 1e-4, "torch_f32_vs_f64": 1e-6}) == 1e-4, "bound stays 1e-4")
    check(abs(run_zoo.bound({"tol": 1e-4, "torch_f32_vs_f64": 1e-4}) - 4e-4) < 1e-12,
          "bound follows torch's own float32 error")
    # degeneracy: a zero head, a constant output, an input-blind net
    z = np.zeros((1, 10), np.float32)
    check(export.degeneracy([z], [z], ["y"], ())[0], "all-zero output is degenerate")
    c = np.full((1, 10), 3.0, np.float32)
    check(export.degeneracy([c], [c + 1], ["y"], ())[0], "constant output is degenerate")
    check(export.degeneracy([w], [w * (1 + 1e-5)], ["y"], ())[0], "input-blind output is degenerate")
    check(not export.degeneracy([w], [w[::-1].copy()], ["y"], ())[0], "random output is fine")


def run(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def tamper_checks(ncc):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import export
    import models
    cache = export.cache_dir()
    m = models.BY_NAME[MODEL]
    errs = export.ensure([m], cache)
    check(not errs, "%s exports: %s" % (MODEL, errs))
    if errs:
        return
    p = export.paths(m, cache)
    tmp = tempfile.mkdtemp(prefix="ncc-zoo-test-")
    try:
        exp = os.path.join(tmp, "EXPECTED")
        with open(exp, "w") as f:
            f.write("%s ref=pass\n" % MODEL)
        env = dict(os.environ, NCC=ncc)
        base = [sys.executable, os.path.join(HERE, "run_zoo.py"), "--target", "ref",
                "-k", "^%s$" % MODEL, "--expected", exp, "--cache", tmp]

        def fresh():
            for k in p.values():
                shutil.copy(k, os.path.join(tmp, os.path.basename(k)))

        fresh()
        rc, out = run(base, env)
        check(rc == 0 and "%s" % MODEL in out and "ref pass" in out,
              "untouched copy passes (rc %d):\n%s" % (rc, out))

        # 1. the torch reference, one element moved by 1e-3 of its scale
        fresh()
        npz = os.path.join(tmp, os.path.basename(p["npz"]))
        arrays = dict(np.load(npz))
        y = arrays["out.y"]
        y.flat[7] += 1e-3 * float(np.abs(y).max())
        np.savez(npz, **arrays)
        rc, out = run(base, env)
        check(rc == 1 and "mismatch" in out and "REGRESSION" in out,
              "perturbed reference is a mismatch and a regression (rc %d):\n%s" % (rc, out))

        # 2. one weight row of the last conv in the ONNX file
        fresh()
        path = os.path.join(tmp, os.path.basename(p["onnx"]))
        proto = onnx.load(path)
        conv = [n for n in proto.graph.node if n.op_type == "Conv"][-1]
        init = {t.name: t for t in proto.graph.initializer}
        t = init[conv.input[1]]
        a = numpy_helper.to_array(t).copy()
        a[0] += 1.0
        t.CopyFrom(numpy_helper.from_array(a, t.name))
        onnx.save(proto, path)
        rc, out = run(base, env)
        check(rc == 1 and "mismatch" in out and "REGRESSION" in out,
              "perturbed ONNX weight is a mismatch and a regression (rc %d):\n%s" % (rc, out))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        print("skipped: %s (tools/setup.sh installs tools/requirements-zoo.txt)" % e)
        return 77
    import nccutil
    ncc = nccutil.find_ncc()
    unit_checks()
    tamper_checks(ncc)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
