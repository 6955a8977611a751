"""tests/py/ortgen_index.py — diff_ort generators and node_conformance tables
for the indexing, scatter, resampling, sorting and data-dependent ops
(GatherElements ... NonMaxSuppression; branch t-index).

register(ns) is called by diff_ort.py (ns has GENERATORS) and by
node_conformance.py (ns has TYPE_ONLY_REVISIONS).
"""
import numpy as np
from onnx import helper

F32, I64, I32 = np.float32, np.int64, np.int32

# Revisions after opset 21 that only widened type lists (bfloat16 in 22-28)
# or, for SpaceToDepth-28, added an attribute (`mode`) whose default is the
# old behaviour (a case that sets it is still skipped at opset 21).
TYPE_ONLY = {"DepthToSpace": 28, "SpaceToDepth": 28, "TopK": 24, "Unique": 28,
             "Compress": 28, "ReverseSequence": 28, "Einsum": 28, "GridSample": 22}


def register(ns):
    if hasattr(ns, "GENERATORS"):
        register_diff_ort(ns)
    else:
        ns.TYPE_ONLY_REVISIONS.update(TYPE_ONLY)


def register_diff_ort(ns):
    pass
