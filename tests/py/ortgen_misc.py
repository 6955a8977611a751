"""tests/py/ortgen_misc.py — placeholder (filled below)."""


def register(ns):
    if not hasattr(ns, "GENERATORS"):
        ns.TYPE_ONLY_REVISIONS.update({
            "QuantizeLinear": 28, "DequantizeLinear": 28, "Det": 22,
            "MaxUnpool": 22, "MaxRoiPool": 22, "NegativeLogLikelihoodLoss": 22,
        })
        ns.SKIP_REASONS.append(
            (r"quantizelinear_blocked_symmetric",
             "QuantizeLinear to int16 (output_dtype): int16 is not an ncc dtype yet",
             ns.DTYPE_WORDS))
