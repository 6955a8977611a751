#!/usr/bin/env python3
"""tests/bad_onnx/make_fixtures.py — write the good ONNX models that
tests/unit/test_onnx.c imports (one NAME.onnx per entry of
models.good_models()) into OUTDIR, plus bad_NAME.onnx for a few entries of
the malformed corpus whose exact status and message the unit test checks.
Run by ctest as the `onnx_fixtures` fixture before unit.test_onnx.

  make_fixtures.py OUTDIR            fixtures for the unit test
  make_fixtures.py --seeds OUTDIR    the few small seeds of the fuzz corpus
                                     (tests/fuzz/corpus_onnx/ is made so)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_corpus  # noqa: E402
import models  # noqa: E402

SEEDS = ("mlp", "constants", "reduce13", "symbolic", "cast_clip", "layernorm",
         "split", "composite")
BAD = ("cycle", "unknown_op", "opset_6", "external_data", "raw_data_short",
       "attr_wrong_kind", "missing_initializer", "rank_12_input",
       "absurd_input_dim", "add_mismatch")


def main(argv):
    seeds = "--seeds" in argv
    args = [a for a in argv if a != "--seeds"]
    if len(args) != 1:
        sys.exit(__doc__)
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    good = models.good_models()
    names = SEEDS if seeds else sorted(good)
    for name in names:
        models.write(os.path.join(outdir, name + ".onnx"), good[name])
    n = len(names)
    if not seeds:
        for name, _, _, m in make_corpus.entries():
            if name in BAD:
                models.write(os.path.join(outdir, "bad_" + name + ".onnx"), m)
                n += 1
    print(f"make_fixtures: {n} models in {outdir}")


if __name__ == "__main__":
    main(sys.argv[1:])
