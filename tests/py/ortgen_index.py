"""tests/py/ortgen_index.py — diff_ort generators and node_conformance tables
for the indexing, scatter, resampling, sorting and data-dependent ops
(GatherElements ... NonMaxSuppression).

register(ns) is called by diff_ort.py (ns has GENERATORS) and by
node_conformance.py (ns has TYPE_ONLY_REVISIONS).  Every case is judged by
ONNX Runtime (and, with --oracle ref, by ncc's reference interpreter: the
cpu target runs these ops through the same host kernels, so cpu vs ref is
exact).  Data-dependent ops (Unique, Compress, NonMaxSuppression) also feed
compiled ops whose dims are the data-dependent symbol.
"""
import os
import re

import numpy as np
from onnx import TensorProto, helper

F32, F64, I64, I32, U8 = np.float32, np.float64, np.int64, np.int32, np.uint8

# Revisions after opset 21 that only widened type lists (bfloat16 in 22-28)
# or, for SpaceToDepth-28, added an attribute (`mode`) whose default is the
# old behaviour (a case that sets it is still skipped at opset 21).
TYPE_ONLY = {"DepthToSpace": 28, "SpaceToDepth": 28, "TopK": 24, "Unique": 28,
             "Compress": 28, "ReverseSequence": 28, "Einsum": 28, "GridSample": 22}

# Interpolation in double (ref) against ONNX Runtime's f32 arithmetic.
TOL_INTERP = (1e-5, 1e-5)
TOL = {"Resize": TOL_INTERP, "Upsample": TOL_INTERP, "GridSample": (1e-5, 2e-5),
       "Einsum": (1e-4, 1e-4), "ScatterND": (1e-6, 1e-6),
       "ScatterElements": (1e-6, 1e-6)}


def ncc_min_opset():
    """The oldest opset ncc's importer reads (frontend/frontend.h)."""
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "..", "..", "frontend", "frontend.h")).read()
    return int(re.search(r"#define ONNX_OPSET_MIN (\d+)", text).group(1))


def register(ns):
    if hasattr(ns, "GENERATORS"):
        register_diff_ort(ns)
    else:
        ns.TYPE_ONLY_REVISIONS.update(TYPE_ONLY)


# ---------------------------------------------------------------------------
# generators: g is diff_ort's Gen, ns the diff_ort module

def gen_gather_elements(g, ns):
    C = ns.Const
    x = g.randn(4, 5, 3)
    g.add("axis0", [x, C(g.ints(0, 4, 2, 5, 3))], {"axis": 0})
    g.add("axis1_smaller", [x, C(g.ints(0, 5, 4, 2, 3))], {"axis": 1})
    g.add("axis_neg1", [x, g.ints(0, 3, 4, 5, 6)], {"axis": -1})
    g.add("negative_indices", [x, C(g.ints(-5, 0, 4, 5, 3))], {"axis": 1})
    g.add("i32_indices", [x, C(g.ints(0, 4, 3, 2, 1, dtype=I32))], {"axis": 0})
    g.add("i64_data", [g.ints(-99, 99, 3, 4), g.ints(0, 3, 2, 4)], {"axis": 0})
    g.add("u8_data", [g.ints(0, 255, 6, dtype=U8), g.ints(-6, 6, 9)], {"axis": 0})
    g.add("default_axis", [g.randn(3, 3), C(np.array([[1, 2, 0], [2, 0, 0]], I64))])
    for k in range(2):
        s = g.shape(1, 4, 512)
        axis = int(g.rng.randint(0, len(s)))
        ishape = list(s)
        ishape[axis] = int(g.rng.randint(1, 9))
        g.add("random%d_%s_axis%d" % (k, ns.shape_tag(s), axis),
              [g.randn(*s), g.ints(-s[axis], s[axis], *ishape)], {"axis": axis})


def wide_gather_elements(g, ns):
    g.add("wide_rows", [g.randn(17, 1000), g.ints(0, 1000, 17, 1001)], {"axis": 1})
    g.add("wide_cols", [g.randn(1000, 3), g.ints(-1000, 1000, 1001, 3)], {"axis": 0})


def gen_gather_nd(g, ns):
    C = ns.Const
    x = g.randn(3, 4, 5)
    g.add("depth1", [x, C(np.array([[2], [0]], I64))])
    g.add("depth2", [x, C(np.array([[2, 3], [0, -1], [1, 1]], I64))])
    g.add("depth3_scalars", [x, g.ints(0, 3, 2, 2, 3)])
    g.add("negative", [x, C(np.array([[-1, -4, -5]], I64))])
    g.add("batch1", [x, C(g.ints(0, 4, 3, 2, 1))], {"batch_dims": 1})
    g.add("batch1_depth2", [x, g.ints(0, 4, 3, 2)], {"batch_dims": 1})
    g.add("batch2", [g.randn(2, 3, 4, 5), g.ints(0, 4, 2, 3, 6, 1)], {"batch_dims": 2})
    g.add("i64_data", [g.ints(-9, 9, 4, 4), C(np.array([[3, 1], [0, 0]], I64))])
    g.add("bool_data", [g.rng.rand(3, 4) < 0.5, C(np.array([[2], [1]], I64))])


def wide_gather_nd(g, ns):
    g.add("wide_rows", [g.randn(1000, 17), g.ints(0, 1000, 1001, 1)])
    g.add("wide_elems", [g.randn(33, 1000), g.ints(0, 33, 1000, 2) % [33, 1000]])


def unique_rows(g, count, dims):
    """count distinct index tuples into dims (ScatterND without a reduction
    leaves duplicate indices unspecified)."""
    flat = g.rng.permutation(int(np.prod(dims)))[:count]
    return np.stack(np.unravel_index(flat, dims), -1).astype(I64)


def gen_scatter_nd(g, ns):
    C = ns.Const
    x = g.randn(4, 5, 3)
    g.add("elements", [x, C(unique_rows(g, 6, (4, 5, 3))), g.randn(6)])
    g.add("rows", [x, C(unique_rows(g, 3, (4, 5))), g.randn(3, 3)])
    g.add("slabs", [x, C(np.array([[2], [0]], I64)), g.randn(2, 5, 3)])
    g.add("negative", [x, C(np.array([[-1, -5], [0, 4]], I64)), g.randn(2, 3)])
    g.add("runtime_indices", [x, unique_rows(g, 4, (4, 5)).reshape(2, 2, 2), g.randn(2, 2, 3)])
    g.add("i64_data", [g.ints(-9, 9, 5, 4), C(np.array([[1], [3]], I64)), g.ints(-9, 9, 2, 4)])
    dup = C(np.array([[1, 2], [1, 2], [0, 0], [3, 4], [1, 2]], I64))
    for red in ("add", "mul", "max", "min"):
        g.add("%s_dup" % red, [x, dup, g.randn(5, 3)], {"reduction": red})
        g.add("%s_i64" % red, [g.ints(-5, 5, 4, 5), dup, g.ints(-5, 5, 5)], {"reduction": red})
    g.add("add_opset16", [x, dup, g.randn(5, 3)], {"reduction": "add"}, opset=16)
    g.add("none_opset13", [x, C(np.array([[3]], I64)), g.randn(1, 5, 3)], opset=13)


def wide_scatter_nd(g, ns):
    g.add("wide", [g.randn(1000, 3), unique_rows(g, 1001, (1000, 3)), g.randn(1001)])
    idx = g.ints(0, 17, 1000, 1)
    g.add("wide_add", [g.randn(17, 33), idx, g.randn(1000, 33)], {"reduction": "add"})


def gen_scatter_elements(g, ns):
    C = ns.Const
    x = g.randn(4, 5)
    perm = np.stack([g.rng.permutation(4)[:3] for _ in range(5)], 1).astype(I64)
    g.add("axis0", [x, C(perm), g.randn(3, 5)], {"axis": 0})
    g.add("axis1", [x, C(np.array([[4, 0], [1, 3], [2, 2], [0, 1]], I64)[:, :2]),
                    g.randn(4, 2)], {"axis": 1})
    g.add("negative", [x, C(np.array([[-1, -5]], I64)), g.randn(1, 2)], {"axis": -1})
    g.add("runtime", [g.randn(3, 4, 2), np.array([[[1, 0]], [[2, 1]], [[0, 0]]], I64)[:, :, :1],
                      g.randn(3, 1, 1)], {"axis": 1})
    g.add("i32", [x, C(np.array([[3, 1]], I32)), g.randn(1, 2)], {"axis": 1})
    dup = C(np.array([[1, 1, 1], [1, 0, 1]], I64))
    for red in ("add", "mul", "max", "min"):
        g.add("%s_dup" % red, [g.randn(3, 3), dup, g.randn(2, 3)],
              {"axis": 1, "reduction": red})
        g.add("%s_i64" % red, [g.ints(-5, 5, 3, 3), dup, g.ints(-5, 5, 2, 3)],
              {"axis": 0, "reduction": red})
    g.add("add_opset16", [g.randn(3, 3), dup, g.randn(2, 3)], {"axis": 0, "reduction": "add"},
          opset=16)


def wide_scatter_elements(g, ns):
    g.add("wide_add", [g.randn(3, 1000), g.ints(0, 1000, 3, 1001), g.randn(3, 1001)],
          {"axis": 1, "reduction": "add"})
    idx = np.stack([g.rng.permutation(1000) for _ in range(3)], 0).astype(I64)
    g.add("wide_none", [g.randn(3, 1000), idx, g.randn(3, 1000)], {"axis": 1})


def gen_depth_to_space(g, ns):
    for mode in ("DCR", "CRD"):
        g.add("%s_b2" % mode, [g.randn(1, 8, 3, 5)], {"blocksize": 2, "mode": mode})
        g.add("%s_b3" % mode, [g.randn(2, 18, 2, 3)], {"blocksize": 3, "mode": mode})
    g.add("default_mode", [g.randn(2, 4, 3, 3)], {"blocksize": 2})
    g.add("b1", [g.randn(1, 3, 2, 2)], {"blocksize": 1})
    g.add("f64", [g.randn(1, 4, 2, 2, dtype=F64)], {"blocksize": 2, "mode": "CRD"})
    g.add("u8", [g.ints(0, 255, 1, 9, 1, 2, dtype=U8)], {"blocksize": 3})


def wide_depth_to_space(g, ns):
    g.add("wide", [g.randn(1, 16, 17, 33)], {"blocksize": 4, "mode": "DCR"})
    g.add("wide_crd", [g.randn(1, 4, 1, 1001)], {"blocksize": 2, "mode": "CRD"})


def gen_space_to_depth(g, ns):
    g.add("b2", [g.randn(1, 3, 4, 6)], {"blocksize": 2})
    g.add("b3", [g.randn(2, 2, 3, 9)], {"blocksize": 3})
    g.add("b1", [g.randn(1, 2, 3, 3)], {"blocksize": 1})
    g.add("f64", [g.randn(1, 1, 4, 4, dtype=F64)], {"blocksize": 2})
    g.add("dcr_opset28", [g.randn(1, 2, 4, 4)], {"blocksize": 2, "mode": "DCR"}, opset=28)
    g.add("crd_opset28", [g.randn(1, 2, 4, 6)], {"blocksize": 2, "mode": "CRD"}, opset=28)
    # the inverse of DepthToSpace
    nodes = [helper.make_node("SpaceToDepth", ["x0"], ["s"], blocksize=2),
             helper.make_node("DepthToSpace", ["s"], ["y0"], blocksize=2)]
    g.graph("roundtrip", nodes, {"x0": g.randn(1, 3, 6, 4)}, {}, ["y0"])


def wide_space_to_depth(g, ns):
    g.add("wide", [g.randn(1, 3, 34, 1000)], {"blocksize": 2})


# ---- Resize ----

COORDS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
          "asymmetric")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def resize(g, ns, name, x, scales=None, sizes=None, roi=None, opset=19, const=True, **attrs):
    C = ns.Const
    wrap = C if const else (lambda v: v)
    ins = [x, None if roi is None else wrap(np.array(roi, F32)),
           None if scales is None else wrap(np.array(scales, F32)),
           None if sizes is None else wrap(np.array(sizes, I64))]
    if scales is None and sizes is None:
        raise ValueError(name)
    g.add(name, ins, attrs, opset=opset)


def gen_resize(g, ns):
    # Scales are dyadic and scale * size integral: ONNX Runtime computes the
    # source coordinates in f32 and, for align_corners, divides by the
    # integer output length where ONNX's reference (the node cases, which
    # ncc follows) divides by scale * size; both agree on these.
    x = g.randn(1, 2, 5, 6)
    up, down = [1, 1, 2.0, 1.5], [1, 1, 0.75, 0.5]
    for coord in COORDS:
        for mode in ("nearest", "linear", "cubic"):
            resize(g, ns, "%s_%s_up" % (mode, coord), x, scales=up, mode=mode,
                   coordinate_transformation_mode=coord)
            resize(g, ns, "%s_%s_sizes_down" % (mode, coord), x, sizes=[1, 2, 3, 4],
                   mode=mode, coordinate_transformation_mode=coord)
    for nm in NEAREST:
        for coord in ("half_pixel", "asymmetric", "align_corners"):
            resize(g, ns, "nearest_%s_%s" % (nm, coord), x, sizes=[1, 2, 9, 11],
                   mode="nearest", nearest_mode=nm, coordinate_transformation_mode=coord)
        resize(g, ns, "nearest_%s_down" % nm, x, scales=down, mode="nearest", nearest_mode=nm)
    resize(g, ns, "cubic_a_half", x, scales=up, mode="cubic", cubic_coeff_a=-0.5)
    resize(g, ns, "cubic_exclude_outside", x, scales=up, mode="cubic", exclude_outside=1)
    resize(g, ns, "cubic_exclude_down", x, scales=down, mode="cubic", exclude_outside=1,
           cubic_coeff_a=-0.5)
    resize(g, ns, "linear_antialias_exclude_outside", x, sizes=[1, 2, 3, 2], mode="linear",
           exclude_outside=1, antialias=1)
    # every cropped axis changes size: ONNX Runtime ignores the roi of an
    # axis whose size stays (ONNX's reference crops it)
    for mode in ("nearest", "linear", "cubic"):
        resize(g, ns, "%s_tf_crop" % mode, x, sizes=[1, 2, 4, 5],
               roi=[0, 0, 0.2, -0.1, 1, 1, 0.9, 1.2], mode=mode,
               coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.5)
    resize(g, ns, "tf_crop_axes", x, sizes=[3, 5], roi=[0.1, 0.3, 0.6, 0.9], axes=[2, 3],
           mode="linear", coordinate_transformation_mode="tf_crop_and_resize")
    resize(g, ns, "axes_scales", x, scales=[2.0, 0.5], axes=[3, 2], mode="linear")
    resize(g, ns, "axes_neg_sizes", x, sizes=[10], axes=[-1], mode="cubic")
    for policy in ("not_larger", "not_smaller"):
        resize(g, ns, "keep_%s" % policy, x, sizes=[8, 8], axes=[2, 3], mode="linear",
               keep_aspect_ratio_policy=policy)
        resize(g, ns, "keep_%s_nearest" % policy, x, sizes=[1, 2, 3, 20], mode="nearest",
               keep_aspect_ratio_policy=policy)
    for mode in ("linear", "cubic"):
        resize(g, ns, "antialias_%s_down" % mode, g.randn(1, 1, 16, 13),
               scales=[1, 1, 0.5, 0.3], mode=mode, antialias=1)
        resize(g, ns, "antialias_%s_sizes" % mode, g.randn(1, 2, 9, 12), sizes=[1, 2, 4, 5],
               mode=mode, antialias=1, coordinate_transformation_mode="pytorch_half_pixel")
        resize(g, ns, "antialias_%s_up" % mode, x, scales=up, mode=mode, antialias=1)
    # other ranks (ONNX Runtime: nearest any rank, linear up to 3-D)
    resize(g, ns, "nearest_1d", g.randn(6), scales=[2.5], mode="nearest")
    resize(g, ns, "nearest_5d", g.randn(1, 2, 3, 4, 5), scales=[1, 1, 2, 0.5, 1.5])
    resize(g, ns, "linear_3d_trilinear", g.randn(1, 1, 3, 4, 5), sizes=[1, 1, 5, 3, 8],
           mode="linear")
    resize(g, ns, "linear_2d", g.randn(4, 6), scales=[1.5, 0.5], mode="linear")
    # run-time scales/sizes (the output dims are known only when it runs)
    resize(g, ns, "runtime_scales", x, scales=up, const=False, mode="linear")
    resize(g, ns, "runtime_sizes", x, sizes=[1, 2, 8, 3], const=False, mode="cubic")
    # sizes = Concat(Shape(x)[:2], [h, w]), as exporters write it
    nodes = [helper.make_node("Shape", ["x0"], ["sh"]),
             helper.make_node("Slice", ["sh", "b", "e"], ["nc"]),
             helper.make_node("Concat", ["nc", "hw"], ["sz"], axis=0),
             helper.make_node("Resize", ["x0", "", "", "sz"], ["y0"], mode="linear")]
    g.graph("sizes_from_shape", nodes, {"x0": g.randn(2, 3, 4, 6)},
            {"b": np.array([0], I64), "e": np.array([2], I64), "hw": np.array([8, 3], I64)},
            ["y0"])
    # older forms
    resize(g, ns, "opset13_linear", x, scales=up, mode="linear", opset=13)
    resize(g, ns, "opset13_tf_half_pixel_for_nn", x, scales=up, mode="nearest", opset=13,
           coordinate_transformation_mode="tf_half_pixel_for_nn")
    resize(g, ns, "opset18_axes", x, scales=[3.0], axes=[2], mode="nearest", opset=18)


def wide_resize(g, ns):
    # the long axis is left as is: far from 0, ONNX Runtime's f32 source
    # coordinates lose the bits that decide the weights
    resize(g, ns, "wide_linear", g.randn(1, 3, 1000, 17), scales=[1, 1, 1, 2], mode="linear")
    resize(g, ns, "wide_nearest", g.randn(1, 1, 1001, 3), sizes=[1, 1, 1001, 6])
    resize(g, ns, "wide_cubic_down", g.randn(1, 2, 1000, 33), scales=[1, 1, 1, 0.5],
           mode="cubic")


def gen_upsample(g, ns):
    """Upsample exists up to opset 9 (ONNX Runtime rejects it later): the
    cases run once ncc's importer reads opset 9; until then there
    are none (ncc_min_opset())."""
    if ncc_min_opset() > 9:
        return
    C = ns.Const
    x = g.randn(1, 2, 3, 4)
    g.add("nearest_9", [x, C(np.array([1, 1, 2, 3], F32))], {"mode": "nearest"}, opset=9)
    g.add("linear_9", [x, C(np.array([1, 1, 2, 2], F32))], {"mode": "linear"}, opset=9)
    g.add("nearest_frac_9", [x, C(np.array([1, 1, 1.5, 2.5], F32))], {"mode": "nearest"},
          opset=9)
    g.add("nearest_7", [x], {"mode": "nearest", "scales": [1.0, 1.0, 3.0, 2.0]}, opset=7)
    g.add("linear_7", [x], {"mode": "linear", "scales": [1.0, 1.0, 2.0, 3.0]}, opset=7)


def wide_upsample(g, ns):
    if ncc_min_opset() > 9:
        return
    g.add("wide", [g.randn(1, 1, 3, 1000), ns.Const(np.array([1, 1, 2, 1], F32))],
          {"mode": "nearest"}, opset=9)


def gen_grid_sample(g, ns):
    x = g.randn(2, 3, 5, 6)
    # coordinates past [-1, 1] exercise the padding modes
    grid = g.uniform(-1.3, 1.3, 2, 4, 7, 2)
    inside = g.uniform(-1, 1, 2, 4, 7, 2)
    for mode, old in (("linear", "bilinear"), ("nearest", "nearest"), ("cubic", "bicubic")):
        for pad in ("zeros", "border", "reflection"):
            for ac in (0, 1):
                # cubic with border padding outside the image: ONNX's reference
                # (the node cases; ncc) clamps the coordinate, ONNX Runtime
                # (as PyTorch) clamps each of the 4 taps: they differ there
                gr = inside if (mode, pad) == ("cubic", "border") else grid
                g.add("%s_%s_ac%d" % (mode, pad, ac), [x, gr],
                      {"mode": mode, "padding_mode": pad, "align_corners": ac}, opset=20)
        g.add("%s_opset16" % old, [x, grid], {"mode": old}, opset=16)
    g.add("defaults", [x, grid], opset=20)
    g.add("far_outside_reflection", [x, g.uniform(-4, 4, 2, 3, 3, 2)],
          {"mode": "linear", "padding_mode": "reflection"}, opset=20)
    g.add("const_grid", [x, ns.Const(grid)], {"mode": "linear"}, opset=20)
    x3 = g.randn(1, 2, 3, 4, 5)
    grid3 = g.uniform(-1.2, 1.2, 1, 2, 3, 4, 3)
    for mode in ("linear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            g.add("3d_%s_%s" % (mode, pad), [x3, grid3],
                  {"mode": mode, "padding_mode": pad, "align_corners": int(pad == "border")},
                  opset=20)


def wide_grid_sample(g, ns):
    g.add("wide", [g.randn(1, 2, 17, 33), g.uniform(-1.1, 1.1, 1, 1, 1001, 2)],
          {"mode": "linear"}, opset=20)


def with_ties(g, shape, levels=4):
    """Values drawn from a few levels: ties decide the order."""
    return g.ints(0, levels, *shape).astype(F32) * 0.5


def gen_topk(g, ns):
    C = ns.Const
    k = lambda v: C(np.array([v], I64))  # noqa: E731
    x = g.randn(3, 7)
    g.add("largest_axis1", [x, k(3)], n_out=2)
    g.add("smallest", [x, k(4)], {"largest": 0}, n_out=2)
    g.add("axis0", [x, k(2)], {"axis": 0}, n_out=2)
    g.add("axis_neg", [g.randn(2, 5, 3), k(5)], {"axis": -2}, n_out=2)
    g.add("ties", [with_ties(g, (4, 9)), k(6)], n_out=2)
    g.add("ties_smallest", [with_ties(g, (4, 9)), k(9)], {"largest": 0}, n_out=2)
    g.add("k0", [x, k(0)], n_out=2)
    g.add("k_all", [x, k(7)], n_out=2)
    g.add("i64", [g.ints(-5, 5, 3, 8), k(3)], n_out=2)
    g.add("i32", [g.ints(-5, 5, 8, dtype=I32), k(3)], {"largest": 0}, n_out=2)
    g.add("f64", [g.randn(2, 6, dtype=F64), k(2)], n_out=2)
    # k as a graph input: the output dim is a symbol until the run
    g.add("runtime_k", [x, np.array([5], I64)], n_out=2)
    # k from the shape of another input: a symbol carried as content
    nodes = [helper.make_node("Shape", ["x1"], ["s"]),
             helper.make_node("TopK", ["x0", "s"], ["y0", "y1"], axis=1)]
    g.graph("k_from_shape", nodes, {"x0": g.randn(2, 9), "x1": np.zeros(4, F32)}, {},
            ["y0", "y1"])
    for j in range(2):
        s = g.shape(1, 4, 512)
        axis = int(g.rng.randint(0, len(s)))
        kk = int(g.rng.randint(0, s[axis] + 1))
        g.add("random%d_%s_axis%d_k%d" % (j, ns.shape_tag(s), axis, kk),
              [g.randn(*s), k(kk)], {"axis": axis}, n_out=2)


def wide_topk(g, ns):
    k = lambda v: ns.Const(np.array([v], I64))  # noqa: E731
    g.add("wide", [g.randn(3, 1001), k(17)], n_out=2)
    g.add("wide_ties", [with_ties(g, (1000, 3), 7), k(1000)], {"axis": 0}, n_out=2)


def gen_argminmax(g, ns):
    x = g.randn(3, 4, 5)
    for axis in (0, 1, -1):
        for keep in (0, 1):
            g.add("axis%d_keep%d" % (axis, keep), [x], {"axis": axis, "keepdims": keep})
    g.add("default", [x])
    t = with_ties(g, (4, 7), 3)
    g.add("ties_first", [t], {"axis": 1})
    g.add("ties_last", [t], {"axis": 1, "select_last_index": 1})
    g.add("ties_last_axis0", [t], {"axis": 0, "select_last_index": 1, "keepdims": 0})
    g.add("i64", [g.ints(-3, 3, 5, 6)], {"axis": 1, "select_last_index": 1})
    g.add("i32", [g.ints(-3, 3, 5, 6, dtype=I32)], {"axis": 0})
    g.add("u8", [g.ints(0, 3, 7, dtype=U8)], {"axis": 0})
    g.add("f64", [g.randn(3, 3, dtype=F64)], {"axis": 1})
    g.add("1d", [g.randn(17)], {"keepdims": 0})


def wide_argminmax(g, ns):
    g.add("wide_rows", [g.randn(3, 1001)], {"axis": 1})
    g.add("wide_cols", [with_ties(g, (1000, 17), 5)], {"axis": 0, "select_last_index": 1})


def then_compiled(g, name, op_node, feeds, attrs_out, out_name):
    """op_node's output -> Cast -> Mul by 2 -> ReduceSum: compiled kernels
    over the data-dependent dim."""
    nodes = [op_node,
             helper.make_node("Cast", [out_name], ["c"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["c", "c"], ["y1"]),
             helper.make_node("ReduceSum", ["c"], ["y2"], keepdims=0)]
    g.graph(name, nodes, feeds, {}, attrs_out + ["y1", "y2"])


def gen_unique(g, ns):
    small = g.ints(-3, 4, 12).astype(F32)
    g.add("flat_sorted", [small], n_out=4)
    g.add("flat_unsorted", [small], {"sorted": 0}, n_out=4)
    g.add("flat_2d", [g.ints(0, 5, 3, 4).astype(F32)], n_out=4)
    rows = np.array([[1, 2], [3, 4], [1, 2], [0, 9], [3, 4]], F32)
    g.add("axis0", [rows], {"axis": 0}, n_out=4)
    g.add("axis0_unsorted", [rows], {"axis": 0, "sorted": 0}, n_out=4)
    g.add("axis1", [rows.T.copy()], {"axis": 1}, n_out=4)
    g.add("axis_neg", [np.repeat(g.ints(0, 3, 2, 1, 3), 2, axis=1).astype(F32)],
          {"axis": -2}, n_out=4)
    g.add("i64", [g.ints(-2, 3, 9)], n_out=4)
    g.add("y_only", [g.ints(0, 4, 10)], n_out=1)
    g.add("all_same", [np.full(6, 2.5, F32)], n_out=4)
    g.add("all_distinct", [g.randn(7)], {"sorted": 0}, n_out=4)
    then_compiled(g, "then_compiled",
                  helper.make_node("Unique", ["x0"], ["y0"]), {"x0": g.ints(0, 6, 20)},
                  ["y0"], "y0")


def wide_unique(g, ns):
    g.add("wide", [g.ints(0, 300, 1001).astype(F32)], n_out=4)
    g.add("wide_rows", [g.ints(0, 2, 1000, 3)], {"axis": 0}, n_out=4)


def gen_compress(g, ns):
    C = ns.Const
    x = g.randn(3, 4)
    cond = lambda *v: np.array(v, bool)  # noqa: E731
    g.add("axis0", [x, cond(1, 0, 1)], {"axis": 0})
    g.add("axis1", [x, cond(0, 1, 1, 0)], {"axis": 1})
    g.add("axis_neg_short", [x, cond(1, 0)], {"axis": -1})
    g.add("flat", [x, g.rng.rand(12) < 0.5])
    g.add("flat_short", [x, cond(0, 1, 0, 1, 1)])
    g.add("none", [x, cond(0, 0, 0)], {"axis": 0})
    g.add("condition_longer", [x, cond(1, 0, 1, 1, 1)], {"axis": 0})  # the rest is ignored
    g.add("flat_longer", [x, g.rng.rand(15) < 0.5])
    g.add("const_condition", [x, C(cond(1, 1, 0, 1))], {"axis": 1})
    g.add("i64", [g.ints(-9, 9, 2, 3, 2), cond(1, 0, 1)], {"axis": 1})
    then_compiled(g, "then_compiled",
                  helper.make_node("Compress", ["x0", "x1"], ["y0"], axis=0),
                  {"x0": g.ints(-9, 9, 6, 3).astype(F32), "x1": g.rng.rand(6) < 0.5}, ["y0"],
                  "y0")  # integer values: the sums are exact


def wide_compress(g, ns):
    g.add("wide", [g.randn(1001), g.rng.rand(1001) < 0.3])
    g.add("wide_rows", [g.randn(3, 1000), g.rng.rand(1000) < 0.5], {"axis": 1})


def gen_reverse_sequence(g, ns):
    C = ns.Const
    x = g.randn(4, 3, 2)
    g.add("time0", [x, C(np.array([4, 1, 3], I64))], {"time_axis": 0, "batch_axis": 1})
    g.add("time1", [x.transpose(1, 0, 2).copy(), np.array([2, 0, 4], I64)],
          {"time_axis": 1, "batch_axis": 0})
    g.add("defaults", [g.randn(5, 2), C(np.array([5, 3], I64))])
    g.add("zero_and_full", [g.randn(3, 3), C(np.array([0, 3, 1], I64))],
          {"time_axis": 1, "batch_axis": 0})
    g.add("i64_data", [g.ints(-9, 9, 4, 2, 3), C(np.array([3, 4], I64))])


def wide_reverse_sequence(g, ns):
    g.add("wide", [g.randn(1000, 3), g.ints(0, 1001, 3)])


def gen_einsum(g, ns):
    def es(name, eq, *shapes, dtype=F32):
        ins = [g.randn(*s).astype(dtype) if dtype != I64 else g.ints(-4, 5, *s)
               for s in shapes]
        g.add(name, ins, {"equation": eq})
    es("matmul", "ij,jk->ik", (3, 4), (4, 5))
    es("matmul_implicit", "ij,jk", (3, 4), (4, 5))
    es("batch_matmul", "bij,bjk->bik", (2, 3, 4), (2, 4, 5))
    es("transpose", "ij->ji", (3, 4))
    es("transpose_implicit", "ba", (3, 4))
    es("sum_all", "ij->", (3, 4))
    es("sum_axis", "ijk->ik", (2, 3, 4))
    es("trace", "ii", (4, 4))
    es("diagonal", "ii->i", (5, 5))
    es("diagonal_batch", "bii->bi", (2, 3, 3))
    es("repeated_three", "iij->ji", (3, 3, 2))
    es("outer", "i,j->ij", (3,), (4,))
    es("dot", "i,i", (7,), (7,))
    es("hadamard", "ij,ij->ij", (3, 4), (3, 4))
    es("bilinear", "bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5))
    es("ellipsis_matmul", "...ij,...jk->...ik", (2, 3, 4, 5), (2, 3, 5, 2))
    es("ellipsis_broadcast", "...ij,...jk->...ik", (2, 1, 3, 4), (1, 5, 4, 2))
    es("ellipsis_implicit", "...ij,...jk", (2, 3, 4), (1, 4, 6))
    es("ellipsis_front", "i...->...i", (3, 2, 4))
    es("ellipsis_sum", "...i->...", (2, 3, 4))
    es("attention_scores", "bhqd,bhkd->bhqk", (1, 2, 5, 4), (1, 2, 6, 4))
    es("spaces", "i j , j k -> i k", (2, 3), (3, 2))
    es("uppercase", "Ab,bC->AC", (2, 3), (3, 4))
    es("broadcast_one", "ij,ij->i", (3, 1), (3, 5))
    es("i64", "ij,jk->ik", (3, 4), (4, 2), dtype=I64)
    es("f64", "ij,j->i", (3, 4), (4,), dtype=F64)
    es("single_op", "abc->cab", (2, 3, 4))


def wide_einsum(g, ns):
    g.add("wide_matmul", [g.randn(17, 1000), g.randn(1000, 3)], {"equation": "ik,kj->ij"})
    g.add("wide_rowsum", [g.randn(3, 1001)], {"equation": "ij->i"})


def nms_boxes(g, b, s, center=False):
    """Boxes that overlap in clusters (so IoU thresholds matter)."""
    c = g.uniform(0, 10, b, s, 2)
    c[:, s // 2:] = c[:, :s - s // 2] + g.uniform(-0.5, 0.5, b, s - s // 2, 2)
    wh = g.uniform(0.5, 3, b, s, 2)
    if center:
        return np.concatenate([c, wh], -1).astype(F32)
    lo, hi = c - wh / 2, c + wh / 2
    boxes = np.concatenate([lo[..., ::-1], hi[..., ::-1]], -1)  # y1 x1 y2 x2
    flip = g.rng.rand(b, s) < 0.3  # corners in either order
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    return boxes.astype(F32)


def gen_nms(g, ns):
    C = ns.Const

    def nms(name, b, c, s, mo=None, iou=None, score=None, center=0, runtime=False):
        boxes = nms_boxes(g, b, s, bool(center))
        scores = g.rng.rand(b, c, s).astype(F32)
        wrap = (lambda v: v) if runtime else C
        ins = [boxes, scores,
               None if mo is None else wrap(np.array([mo], I64)),
               None if iou is None else wrap(np.array([iou], F32)),
               None if score is None else wrap(np.array([score], F32))]
        g.add(name, ins, {"center_point_box": center} if center else {}, opset=13)
    nms("defaults_no_max", 1, 1, 6)
    nms("max3", 1, 1, 10, mo=3)
    nms("iou_half", 1, 2, 12, mo=20, iou=0.5)
    nms("iou_and_score", 2, 3, 16, mo=5, iou=0.3, score=0.4)
    nms("center_point_box", 2, 2, 10, mo=4, iou=0.4, center=1)
    nms("score_all_out", 1, 2, 5, mo=5, iou=0.5, score=1.5)
    nms("iou_zero", 1, 1, 8, mo=8, iou=0.0)
    nms("runtime_thresholds", 1, 2, 9, mo=6, iou=0.45, score=0.2, runtime=True)
    # equal scores: the lower box index wins
    boxes = nms_boxes(g, 1, 6)
    g.add("tied_scores", [boxes, np.full((1, 1, 6), 0.5, F32), C(np.array([6], I64)),
                          C(np.array([0.2], F32))], opset=13)
    # the selection feeding compiled ops
    then_compiled(g, "then_compiled",
                  helper.make_node("NonMaxSuppression", ["x0", "x1", "m", "t"], ["y0"]),
                  {"x0": nms_boxes(g, 1, 12), "x1": g.rng.rand(1, 2, 12).astype(F32),
                   "m": np.array([4], I64), "t": np.array([0.3], F32)}, ["y0"], "y0")


def wide_nms(g, ns):
    g.add("wide", [nms_boxes(g, 1, 1000), g.rng.rand(1, 3, 1000).astype(F32),
                   ns.Const(np.array([50], I64)), ns.Const(np.array([0.5], F32)),
                   ns.Const(np.array([0.1], F32))], opset=13)


def register_diff_ort(ns):
    gens = {
        "GatherElements": (gen_gather_elements, wide_gather_elements),
        "GatherND": (gen_gather_nd, wide_gather_nd),
        "ScatterND": (gen_scatter_nd, wide_scatter_nd),
        "ScatterElements": (gen_scatter_elements, wide_scatter_elements),
        "DepthToSpace": (gen_depth_to_space, wide_depth_to_space),
        "SpaceToDepth": (gen_space_to_depth, wide_space_to_depth),
        "Resize": (gen_resize, wide_resize),
        "Upsample": (gen_upsample, wide_upsample),
        "GridSample": (gen_grid_sample, wide_grid_sample),
        "TopK": (gen_topk, wide_topk),
        "ArgMax": (gen_argminmax, wide_argminmax),
        "ArgMin": (gen_argminmax, wide_argminmax),
        "Unique": (gen_unique, wide_unique),
        "Compress": (gen_compress, wide_compress),
        "ReverseSequence": (gen_reverse_sequence, wide_reverse_sequence),
        "Einsum": (gen_einsum, wide_einsum),
        "NonMaxSuppression": (gen_nms, wide_nms),
    }
    for op, (gen, wide) in gens.items():
        ns.GENERATORS[op] = (lambda f: lambda g: f(g, ns))(gen)
        ns.WIDE_GENERATORS[op] = (lambda f: lambda g: f(g, ns))(wide)
    ns.TOL.update(TOL)
