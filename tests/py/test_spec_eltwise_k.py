#!/usr/bin/env python3
"""tests/py/test_spec_eltwise_k.py -- an E4 (fusion) spec with `eltwise_k = []`.

An empty list means "no eltwise k axis": the blocks of `blocks` are measured
as listed, the eltwise block (when named there) once at the model's k (its
default, 8, or model.k), and with no blocks either the spec is refused with a
message saying what to write. Checked through bench/harness/spec.py's
normalize and expand (no measurement runs). Prints "N passed, M failed".
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.normpath(os.path.join(HERE, "..", "..", "bench")))
sys.path.insert(0, HERE)
from checks import check, finish  # noqa: E402
from harness import spec as specmod  # noqa: E402

BASE = {"name": "eltwise-k", "compilers": {"ncc": ["ref"]}, "model": {"width": 4}}


def fusion(**e):
    s = dict(BASE)
    s["experiments"] = [dict({"id": "E4", "kind": "fusion",
                              "compare": [["ncc:ref -O2", "ncc:ref -O0"]]}, **e)]
    return s


def blocks_of(spec):
    seen = set()
    for _, meas, _ in specmod.expand(spec):
        ms = meas["model"]
        seen.add((ms["block"], ms.get("k")) if isinstance(ms, dict) else (ms.block, ms.k))
    return seen


def main():
    s = specmod.normalize(fusion(eltwise_k=[], blocks=["mlp"]))
    e = s["experiments"][0]
    check("eltwise_k = [] with blocks: accepted, no eltwise models", e["eltwise_k"] == [], e)
    got = {b for b, _ in blocks_of(s)}
    check("... and only the named blocks are measured", got == {"mlp"}, got)

    s = specmod.normalize(fusion(eltwise_k=[], blocks=["eltwise", "mlp"]))
    e = s["experiments"][0]
    check("eltwise_k = [] with 'eltwise' in blocks: eltwise at the default k (8)",
          e["eltwise_k"] == [8], e["eltwise_k"])
    got = blocks_of(s)
    check("... measured once, with mlp", sorted(b for b, _ in got) == ["eltwise", "mlp"] and
          ("eltwise", 8) in got, got)

    sp = fusion(eltwise_k=[], blocks=["eltwise"])
    sp["model"] = {"width": 4, "k": 3}
    e = specmod.normalize(sp)["experiments"][0]
    check("... at model.k when the spec sets it", e["eltwise_k"] == [3], e["eltwise_k"])

    for bad in (fusion(eltwise_k=[]), fusion(eltwise_k=[], blocks=[])):
        try:
            specmod.normalize(bad)
        except specmod.SpecError as err:
            check("eltwise_k = [] and no blocks: refused, saying what to write",
                  "eltwise_k" in str(err) and "blocks" in str(err), str(err))
        else:
            check("eltwise_k = [] and no blocks: refused", False, bad)

    e = specmod.normalize(fusion(eltwise_k=[2, 4]))["experiments"][0]
    check("a non-empty eltwise_k is kept", e["eltwise_k"] == [2, 4], e)
    e = specmod.normalize(fusion())["experiments"][0]
    check("no eltwise_k: the default [8]", e["eltwise_k"] == [8], e)
    for bad in ([0], ["x"], [2, -1]):
        try:
            specmod.normalize(fusion(eltwise_k=bad))
            check("eltwise_k = %r refused" % bad, False)
        except specmod.SpecError as err:
            check("eltwise_k = %r refused" % bad, "eltwise_k" in str(err), str(err))
    sys.exit(finish())


if __name__ == "__main__":
    main()
