#!/usr/bin/env python3
"""tests/py/pass_numerics.py — every pass keeps the numerics of real models.

For each model of real_nets.py (the bench blocks at depth 1 and 2, a
ResNet, a MobileNet, a transformer encoder):

  1. `ncc run --target=ref -O2 --verify-each` (the IR verifier after every
     pass) must match ONNX Runtime as in real_nets.py;
  2. `ncc run --target=ref -O3 --check-each-pass` (the drift finder: the
     reference interpreter after every prefix of the pipeline against the
     unoptimized model, rtol 1e-4, atol 1e-5) must exit 0, "no pass drifts".

Prints a results table and "N passed, M failed"; exit 1 on any failure.
Usage: NCC=build/ncc python3 tests/py/pass_numerics.py [-k REGEX]
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402  (exits 77 without numpy/onnx/onnxruntime)

import numpy as np  # noqa: E402

import real_nets  # noqa: E402


def verify_each(ncc, path, x, wd):
    """Step 1: (ok, detail)."""
    want = nccutil.run_ort(path, {"x": x})["y"]
    r = nccutil.run_ncc(ncc, path, {"x": x}, ["y"], wd, extra=["-O2", "--verify-each"])
    if r.rc != 0 or r.missing:
        return False, "--verify-each: " + r.describe()
    atol = real_nets.ATOL * max(1.0, float(np.abs(want).max()))
    why = nccutil.compare(want, r.outputs["y"], real_nets.RTOL, atol)
    return why is None, ("vs onnxruntime: " + why) if why else ""


def drift(ncc, path, x, wd):
    """Step 2: (ok, detail, the drift table)."""
    inp = os.path.join(wd, "drift_in.npy")
    np.save(inp, x, allow_pickle=False)
    cmd = [ncc, "run", path, "--target=ref", "-O3", "--check-each-pass", "--input", "x=" + inp]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=nccutil.NCC_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, "--check-each-pass timed out", ""
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace").strip()
    if p.returncode != 0 or "no pass drifts" not in out:
        return False, "--check-each-pass: exit %d: %s" % (p.returncode, err), out
    return True, "", out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    ap.add_argument("-k", dest="pattern", help="only models whose name matches this regex")
    ap.add_argument("-v", action="store_true", help="print every drift table")
    a = ap.parse_args()
    ncc = nccutil.find_ncc(a.ncc)

    rows, failed = [], 0
    with nccutil.Workdir() as root:
        for name, make, batches, make_input in real_nets.net_cases():
            if a.pattern and not re.search(a.pattern, name):
                continue
            wd = nccutil.subdir(root, name)
            path = os.path.join(wd, "model.onnx")
            with open(path, "wb") as f:
                f.write(make().SerializeToString())
            x = make_input(batches[-1])
            ok1, why1 = verify_each(ncc, path, x, wd)
            ok2, why2, table = drift(ncc, path, x, wd)
            ok = ok1 and ok2
            failed += not ok
            rows.append((name, "ok" if ok else "FAIL", "; ".join(w for w in (why1, why2) if w)))
            if a.v or not ok2:
                print(table)

    print("%-16s %s" % ("model", "result"))
    for name, status, why in rows:
        print("%-16s %s%s" % (name, status, ("  " + why) if why else ""))
    print("%d passed, %d failed" % (len(rows) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
