#!/usr/bin/env python3
"""tests/py/real_nets.py — whole networks: `ncc run --target=T` against ONNX Runtime.

Models (seeded weights, symbolic batch "N", small so an ASan build stays fast):
  resnet        stem conv7x7/2-bn-relu + maxpool, basic blocks with stride-2
                projection shortcuts, global average pool, Gemm (bench/nets.py)
  mobilenet     depthwise-separable and inverted-residual blocks with relu6
                (Clip) and HardSwish (bench/nets.py)
  transformer   the encoder block as torch.onnx exports it (bench/blocks.py),
                one model run at two batch sizes: the batch is symbolic
  <block>.d1/d2 all six bench blocks at depth 1 and 2

ncc's output must equal ONNX Runtime's within rtol 1e-3 and an atol of 1e-4
scaled by the output's magnitude (deep graphs sum in a different order).
The bound is the same for every target: the cpu backend's differences from
ref (a few ulp per transcendental, reassociated sums; tests/py/diff_ort.py
TOL_CPU_REF) are orders of magnitude inside it, and the table prints the
largest error so a drift shows before it fails.  With --target cpu the
whole-graph pipeline (-O2 by default; --opt to change) is what runs.
Prints a results table and "N passed, M failed"; exit 1 on any failure.
Usage: NCC=build/ncc python3 tests/py/real_nets.py [-k REGEX] [--target ref|cpu] [--opt -O2]
"""
import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccutil  # noqa: E402  (also puts bench/ on sys.path)

import numpy as np  # noqa: E402

import blocks  # noqa: E402
import nets  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4


def net_cases():
    """(name, model thunk, [batch sizes], input maker(batch))."""
    img = lambda hw: (lambda n: np.random.RandomState(n).standard_normal(  # noqa: E731
        (n, 3, hw, hw)).astype(np.float32))
    cases = [
        ("resnet", lambda: nets.resnet((2, 1, 1), (8, 16, 32), hw=32, classes=10), [2], img(32)),
        ("mobilenet", lambda: nets.mobilenet(hw=32), [2], img(32)),
        ("transformer.d2", lambda: blocks.build("transformer", 2, 32, seed=3, seq=8),
         [1, 3], lambda n: blocks.make_input("transformer", n, 32, seed=n, seq=8)),
    ]
    for blk in blocks.BLOCKS:
        for depth in (1, 2):
            kw = {"spatial": (8, 8)} if blk not in blocks.SEQ_BLOCKS else {"seq": 8}
            build = lambda blk=blk, depth=depth, kw=kw: blocks.build(blk, depth, 32, **kw)  # noqa
            make_x = lambda n, blk=blk, kw=kw: blocks.make_input(blk, n, 32, seed=n, **kw)  # noqa
            cases.append(("%s.d%d" % (blk, depth), build, [2], make_x))
    return cases


def check(ncc, model, x, workdir, target="ref", extra=()):
    """(status, max abs error or None, detail)."""
    want = nccutil.run_ort(model, {"x": x})["y"]
    r = nccutil.run_ncc(ncc, model, {"x": x}, ["y"], workdir, extra=extra, target=target)
    if r.rc != 0 or r.missing:
        return "FAIL", None, r.describe()
    got = r.outputs["y"]
    atol = ATOL * max(1.0, float(np.abs(want).max()))
    why = nccutil.compare(want, got, RTOL, atol)
    err = float(np.abs(got.astype(np.float64) - want).max()) if got.shape == want.shape else None
    return ("FAIL" if why else "ok"), err, why or ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ncc", help="ncc binary (default $NCC)")
    ap.add_argument("-k", dest="pattern", help="only models whose name matches this regex")
    nccutil.add_target_arg(ap)
    ap.add_argument("--opt", default=None,
                    help="optimization flag passed to ncc run (e.g. -O0, -O3; default ncc's)")
    a = ap.parse_args()
    ncc = nccutil.find_ncc(a.ncc)
    nccutil.require_target(ncc, a.target)
    extra = [a.opt] if a.opt else []

    rows, failed = [], 0
    with nccutil.Workdir() as root:
        for name, make, batches, make_input in net_cases():
            if a.pattern and not re.search(a.pattern, name):
                continue
            model = make()
            wd = nccutil.subdir(root, name)
            path = os.path.join(wd, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            for n in batches:  # the same model file at every batch size
                t0 = time.time()
                status, err, why = check(ncc, path, make_input(n), wd, a.target, extra)
                rows.append((name, n, len(model.graph.node), err, time.time() - t0, status, why))
                failed += status != "ok"

    print("target %s%s" % (a.target, (" " + a.opt) if a.opt else ""))
    print("%-16s %5s %6s %12s %7s  %s" % ("model", "batch", "nodes", "max |err|", "time", "result"))
    for name, n, nodes, err, secs, status, why in rows:
        print("%-16s %5d %6d %12s %6.2fs  %s%s" % (
            name, n, nodes, "-" if err is None else "%.3g" % err, secs, status,
            ("  " + why) if why else ""))
    print("%d passed, %d failed" % (len(rows) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
