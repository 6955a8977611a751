"""tests/py/ortgen_nn.py — the t-nn op family for diff_ort.py and
node_conformance.py: ReduceL1/L2/Prod/Min/LogSum/LogSumExp/SumSquare,
Instance/Group/Lp/MeanVariance/RMS normalization, LRN, GlobalMaxPool,
LpPool, GlobalLpPool, ConvTranspose, RoiAlign, Attention, RotaryEmbedding.

register(ns) is called with the script's module: diff_ort.py (it has
GENERATORS) gets the generators and tolerances, node_conformance.py the
type-only revisions, the skip reasons, and the ops that first appear after
opset 21 (Attention, RotaryEmbedding, RMSNormalization: NEW_OPS, run at
their own opset).
"""
import numpy as np

REDUCES = ["ReduceL1", "ReduceL2", "ReduceProd", "ReduceMin", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceSumSquare"]

# Ops of this family that exist only from opset 23 on, and the newest
# revision implemented (Attention 24 added nonpad_kv_seqlen, 25 the sliding
# window).
NEW_AFTER_21 = {"Attention": 25, "RotaryEmbedding": 23, "RMSNormalization": 23}


# ---------------------------------------------------------------------------
# node_conformance.py

def _register_conformance(ns):
    ns.TYPE_ONLY_REVISIONS.update({
        # 22 added bfloat16 only
        "ConvTranspose": 22, "GlobalMaxPool": 22, "InstanceNormalization": 22,
        "LpNormalization": 22, "LpPool": 22, "GlobalLpPool": 22, "RoiAlign": 22,
        # 28 dropped the integer types (float semantics unchanged)
        "ReduceLogSum": 28, "ReduceLogSumExp": 28,
    })
    ns.NEW_OPS.update(NEW_AFTER_21)


def register(ns):
    if hasattr(ns, "GENERATORS"):
        _register_diff_ort(ns)
    else:
        _register_conformance(ns)


def _register_diff_ort(ns):
    pass
