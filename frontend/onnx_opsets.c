/* frontend/onnx_opsets.c — node forms of opsets 7-12 rewritten into the
 * canonical (opset-21) form of docs/IR-CONVENTIONS.md, and the opset each
 * ONNX op appeared in.
 *
 * onnx_ops.c upgrades the 13-20 forms; this file does what only the older
 * opsets need: attributes that later became inputs (Clip min/max, Slice
 * starts/ends/axes, Pad pads/value, TopK k, Upsample scales; the Reduce*,
 * Squeeze/Unsqueeze and Split ones are shared with 13-17), and semantics
 * that changed: Softmax/LogSoftmax/Hardmax before 13 coerce the input to
 * 2-D at `axis` (default 1), BatchNormalization before 9 has `spatial`,
 * Resize 10 has no roi input and the asymmetric coordinate rule.
 *
 * Conversions are keyed by the ONNX op name, not by ncc's op enum, so that a
 * row here for an op ncc does not have yet (TopK, Upsample, Hardmax, the
 * other Reduce*) starts to work as soon as the op's ir/ops.def row and its
 * NCC_ATTR_OLD rows exist (ir/attrs.def): the attribute schema still
 * decides which attributes a node may carry in which opset.
 */
#include <float.h>
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/f16.h"
#include "../ir/shape.h"
#include "frontend.h"

/* ---- the opset each op appeared in ----
 * Every ai.onnx op added after opset 7 (onnx.defs schemas' first
 * since_version), so that a model using an op before it existed is refused
 * the way onnxruntime refuses it; ops missing here existed by opset 7. */
static const struct {
  const char *op;
  int since;
} op_since[] = {
    {"Acosh", 9}, {"AffineGrid", 20}, {"Asinh", 9}, {"Atanh", 9},
    {"Attention", 23}, {"Bernoulli", 15}, {"BitCast", 26}, {"BitShift", 11},
    {"BitwiseAnd", 18}, {"BitwiseNot", 18}, {"BitwiseOr", 18},
    {"BitwiseXor", 18}, {"BlackmanWindow", 17}, {"CastLike", 15},
    {"CausalConvWithState", 27}, {"Celu", 12}, {"CenterCropPad", 18},
    {"Col2Im", 18}, {"Compress", 9}, {"ConcatFromSequence", 11},
    {"ConstantOfShape", 9}, {"ConvInteger", 10}, {"Cosh", 9}, {"CumProd", 26},
    {"CumSum", 11}, {"DFT", 17}, {"DeformConv", 19}, {"DequantizeLinear", 10},
    {"Det", 11}, {"DynamicQuantizeLinear", 11}, {"Einsum", 12}, {"Erf", 9},
    {"Expand", 8}, {"EyeLike", 9}, {"GatherElements", 11}, {"GatherND", 11},
    {"Gelu", 20}, {"GreaterOrEqual", 12}, {"GridSample", 16},
    {"GroupNormalization", 18}, {"HammingWindow", 17}, {"HannWindow", 17},
    {"HardSwish", 14}, {"ImageDecoder", 20}, {"IsInf", 10}, {"IsNaN", 9},
    {"LayerNormalization", 17}, {"LessOrEqual", 12}, {"LinearAttention", 27},
    {"MatMulInteger", 10}, {"MaxUnpool", 9}, {"MeanVarianceNormalization", 9},
    {"MelWeightMatrix", 17}, {"Mish", 18}, {"Mod", 10},
    {"NegativeLogLikelihoodLoss", 12}, {"NonMaxSuppression", 10},
    {"NonZero", 9}, {"OneHot", 9}, {"Optional", 15}, {"OptionalGetElement", 15},
    {"OptionalHasElement", 15}, {"QLinearConv", 10}, {"QLinearMatMul", 10},
    {"QuantizeLinear", 10}, {"RMSNormalization", 23}, {"Range", 11},
    {"RegexFullMatch", 20}, {"Resize", 10}, {"ReverseSequence", 10},
    {"RoiAlign", 10}, {"RotaryEmbedding", 23}, {"Round", 11}, {"STFT", 17},
    {"Scan", 8}, {"Scatter", 9}, {"ScatterElements", 11}, {"ScatterND", 11},
    {"SequenceAt", 11}, {"SequenceConstruct", 11}, {"SequenceEmpty", 11},
    {"SequenceErase", 11}, {"SequenceInsert", 11}, {"SequenceLength", 11},
    {"SequenceMap", 17}, {"Shrink", 9}, {"Sign", 9}, {"Sinh", 9},
    {"SoftmaxCrossEntropyLoss", 12}, {"SplitToSequence", 11},
    {"StringConcat", 20}, {"StringNormalizer", 10}, {"StringSplit", 20},
    {"SwiGLU", 28}, {"Swish", 24}, {"TensorScatter", 24},
    {"TfIdfVectorizer", 9}, {"ThresholdedRelu", 10}, {"Trilu", 14},
    {"Unique", 11}, {"Where", 9},
};

int onnx_op_since(const char *op_type) {
  for (size_t i = 0; i < sizeof op_since / sizeof op_since[0]; i++)
    if (strcmp(op_since[i].op, op_type) == 0) return op_since[i].since;
  return 1;
}

/* ---- attributes that later became inputs ----
 * The attribute (allowed by its ir/attrs.def row only in the opsets that
 * have it) becomes a constant input at `slot`:
 *   I64S    INTS -> i64 [n]            (axes, split, starts, pads)
 *   I64_1   INT -> i64 [1]             (TopK k)
 *   F32S    FLOATS -> f32 [n]          (Upsample scales)
 *   LIKE_0  FLOAT -> a scalar of input 0's dtype (Clip min/max, Pad value)
 * Another op family whose older form has such an attribute adds a row. */
typedef enum { AS_I64S, AS_I64_1, AS_F32S, AS_LIKE_0 } as_kind;

static const struct {
  const char *op, *attr;
  int slot;
  as_kind as;
} attr_inputs[] = {
    {"Squeeze", "axes", 1, AS_I64S},     {"Unsqueeze", "axes", 1, AS_I64S},
    {"Split", "split", 1, AS_I64S},      {"ReduceSum", "axes", 1, AS_I64S},
    {"ReduceMean", "axes", 1, AS_I64S},  {"ReduceMax", "axes", 1, AS_I64S},
    {"ReduceMin", "axes", 1, AS_I64S},   {"ReduceProd", "axes", 1, AS_I64S},
    {"ReduceL1", "axes", 1, AS_I64S},    {"ReduceL2", "axes", 1, AS_I64S},
    {"ReduceLogSum", "axes", 1, AS_I64S},
    {"ReduceLogSumExp", "axes", 1, AS_I64S},
    {"ReduceSumSquare", "axes", 1, AS_I64S},
    {"Slice", "starts", 1, AS_I64S},     {"Slice", "ends", 2, AS_I64S},
    {"Slice", "axes", 3, AS_I64S},       {"Pad", "pads", 1, AS_I64S},
    {"Pad", "value", 2, AS_LIKE_0},      {"Clip", "min", 1, AS_LIKE_0},
    {"Clip", "max", 2, AS_LIKE_0},       {"TopK", "k", 1, AS_I64_1},
    {"Upsample", "scales", 1, AS_F32S},  {"Dropout", "ratio", 1, AS_LIKE_0},
};


/* Set (or add) an attribute of the node being built; b->attrs has room
 * for ONNX_EXTRA_ATTRS more than the model wrote. */
static ncc_attr *put_attr(onnx_node_build *b, const char *name,
                          ncc_attr_kind kind) {
  int i = onnx_find_attr(b, name);
  ncc_attr *a = &b->attrs[i >= 0 ? i : b->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = name;
  a->kind = kind;
  return a;
}

/* The dtype and rank of `v` while the graph is still being built: values
 * computed by nodes are typed by inferring the nodes built so far. */
static ncc_status typed(onnx_node_build *b, const ncc_value *v) {
  if (v->dtype != NCC_DT_UNDEF) return NCC_OK;
  return ncc_infer_graph_from(b->g, b->infer_value, b->infer_node);
}

/* A scalar constant holding `f` in `dt` (a float type; an integer one
 * truncates, which no valid old-opset model needs). */
static ncc_value *scalar_of(onnx_node_build *b, double f, ncc_dtype dt) {
  union {
    float f32;
    double f64;
    uint16_t f16;
    int8_t i8;
    uint8_t u8;
    int32_t i32;
    int64_t i64;
  } u;
  memset(&u, 0, sizeof u);
  switch (dt) {
  case NCC_DT_F64: u.f64 = f; break;
  case NCC_DT_F16: u.f16 = ncc_f16_from_f64(f); break;
  case NCC_DT_I8: u.i8 = (int8_t)f; break;
  case NCC_DT_U8: u.u8 = (uint8_t)f; break;
  case NCC_DT_I32: u.i32 = (int32_t)f; break;
  case NCC_DT_I64: u.i64 = (int64_t)f; break;
  case NCC_DT_BOOL: u.u8 = f != 0; break;
  default: u.f32 = (float)f; dt = NCC_DT_F32; break;
  }
  ncc_shape shape = {.rank = 0};
  return ncc_graph_add_const(b->g, NULL, dt, &shape, &u);
}

/* Put `v` at input `slot` (empty slots before it stay NULL). */
static ncc_status set_input(onnx_node_build *b, int slot, ncc_value *v,
                            const char *name) {
  if (!v) return NCC_ERR_NOMEM;
  if (b->n_in > slot && b->in[slot])
    return ncc_error(NCC_ERR_INPUT,
                     "%s: '%s' is given both as attribute and as input",
                     b->label, name);
  NCC_ASSERT(slot < b->cap_in);
  while (b->n_in < slot) b->in[b->n_in++] = NULL;
  b->in[slot] = v;
  if (b->n_in <= slot) b->n_in = slot + 1;
  return NCC_OK;
}

static ncc_status attr_to_input(onnx_node_build *b, int ai, int slot,
                                as_kind as) {
  const ncc_attr *a = &b->attrs[ai];
  ncc_value *v = NULL;
  ncc_shape s1 = {.rank = 1, .d = {a->n}};
  switch (as) {
  case AS_I64S:
    v = ncc_graph_add_const(b->g, NULL, NCC_DT_I64, &s1, a->ints);
    break;
  case AS_I64_1:
    s1.d[0] = 1;
    v = ncc_graph_add_const(b->g, NULL, NCC_DT_I64, &s1, &a->i);
    break;
  case AS_F32S:
    v = ncc_graph_add_const(b->g, NULL, NCC_DT_F32, &s1, a->floats);
    break;
  case AS_LIKE_0: {
    if (b->n_in < 1 || !b->in[0]) return NCC_OK; /* arity check reports it */
    ncc_status st = typed(b, b->in[0]);
    if (st) return st;
    v = scalar_of(b, a->f, b->in[0]->dtype);
    break;
  }
  }
  ncc_status st = set_input(b, slot, v, a->name);
  if (st) return st;
  onnx_drop_attr(b, ai);
  return NCC_OK;
}

static ncc_status attrs_to_inputs(onnx_node_build *b) {
  const char *op = ncc_op_name(b->op);
  for (size_t r = 0; r < sizeof attr_inputs / sizeof attr_inputs[0]; r++) {
    if (strcmp(attr_inputs[r].op, op) != 0) continue;
    int i = onnx_find_attr(b, attr_inputs[r].attr);
    if (i < 0) continue;
    ncc_status st = attr_to_input(b, i, attr_inputs[r].slot, attr_inputs[r].as);
    if (st) return st;
  }
  return NCC_OK;
}

/* ---- nodes the upgrade adds around the node ---- */

/* A node of `op` named like the ONNX node, writing a fresh value. */
static ncc_status emit(onnx_node_build *b, ncc_op op, int n_in,
                       ncc_value *const *in, ncc_node **node,
                       ncc_value **out) {
  ncc_node *n = ncc_graph_add_node(b->g, op, onnx_str(b->np->name), n_in, in, 1);
  if (!n) return NCC_ERR_NOMEM;
  if (!*out)
    *out = ncc_graph_add_value(b->g, NULL, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  if (!*out) return NCC_ERR_NOMEM;
  ncc_node_set_output(n, 0, *out);
  if (node) *node = n;
  return NCC_OK;
}

/* ---- Softmax, LogSoftmax, Hardmax before opset 13 ----
 * They coerced the input to 2-D, [prod(d[0:axis]), prod(d[axis:])], and
 * normalized over the second dim; `axis` defaults to 1. When `axis` is the
 * last dim that is the opset-13 op on axis -1; otherwise the node becomes
 *   Flatten(x, axis) -> op(axis=-1) -> Reshape(to Shape(x), allowzero=1)
 * (allowzero: a 0 in x's shape is a 0, not "copy"). */
static ncc_status reshape_back(onnx_node_build *b, ncc_node *n) {
  ncc_value *in[2] = {n->out[0], b->aux};
  ncc_node *r;
  ncc_value *out = b->out_final;
  ncc_status st = emit(b, NCC_OP_RESHAPE, 2, in, &r, &out);
  if (st) return st;
  return ncc_node_set_attr_int(b->g, r, "allowzero", 1);
}

static ncc_status coerce_2d(onnx_node_build *b) {
  int i = onnx_find_attr(b, "axis");
  int64_t axis = i >= 0 ? b->attrs[i].i : 1;
  put_attr(b, "axis", NCC_ATTR_INT)->i = -1;
  if (b->n_in < 1 || !b->in[0] || b->n_out < 1 || !*b->np->output[0])
    return NCC_OK; /* the arity check reports it */
  ncc_value *x = b->in[0];
  ncc_status st = typed(b, x);
  if (st) return st;
  int r = x->shape.rank;
  if (axis < -r || axis >= r)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: %s axis %lld is out of range for rank %d", b->label,
                     ncc_op_name(b->op), (long long)axis, r);
  if (axis < 0) axis += r;
  if (axis == r - 1) return NCC_OK;
  ncc_node *fl;
  ncc_value *flat = NULL, *shape = NULL;
  if ((st = emit(b, NCC_OP_FLATTEN, 1, &x, &fl, &flat)) ||
      (st = ncc_node_set_attr_int(b->g, fl, "axis", axis)) ||
      (st = emit(b, NCC_OP_SHAPE, 1, &x, NULL, &shape)))
    return st;
  b->in[0] = flat;
  b->aux = shape;
  b->out_final = ncc_graph_find_value(b->g, b->np->output[0]);
  b->out0 = ncc_graph_add_value(b->g, NULL, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  if (!b->out0) return NCC_ERR_NOMEM;
  b->finish = reshape_back;
  return NCC_OK;
}

/* ---- BatchNormalization before opset 9: `spatial` ----
 * spatial=1 (the default) is the later op. spatial=0 normalizes each
 * activation with statistics of shape (C, D1, ...), which is numpy
 * broadcasting of (X - mean) / sqrt(var + epsilon) * scale + B: the node
 * becomes those elementwise nodes, the last Add being the node itself. */
static ncc_status bn_spatial(onnx_node_build *b) {
  int i = onnx_find_attr(b, "spatial");
  if (i < 0) return NCC_OK;
  int64_t spatial = b->attrs[i].i;
  onnx_drop_attr(b, i);
  /* training outputs: refused as BatchNormalization (onnx_upgrade_node) */
  if (spatial != 0 || b->n_in != 5 || b->n_out != 1) return NCC_OK;
  for (int k = 0; k < 5; k++)
    if (!b->in[k]) return NCC_OK; /* the arity check reports it */
  int e = onnx_find_attr(b, "epsilon");
  double eps = e >= 0 ? b->attrs[e].f : 1e-5;
  ncc_status st = typed(b, b->in[0]);
  if (st) return st;
  ncc_value *x = b->in[0], *scale = b->in[1], *bias = b->in[2],
            *mean = b->in[3], *var = b->in[4];
  ncc_value *ve = NULL, *sd = NULL, *xc = NULL, *xn = NULL, *xs = NULL;
  ncc_value *eps_v = scalar_of(b, eps, x->dtype);
  if (!eps_v) return NCC_ERR_NOMEM;
  ncc_value *a1[2] = {var, eps_v};
  if ((st = emit(b, NCC_OP_ADD, 2, a1, NULL, &ve)) ||
      (st = emit(b, NCC_OP_SQRT, 1, &ve, NULL, &sd)))
    return st;
  ncc_value *a2[2] = {x, mean};
  if ((st = emit(b, NCC_OP_SUB, 2, a2, NULL, &xc))) return st;
  ncc_value *a3[2] = {xc, sd};
  if ((st = emit(b, NCC_OP_DIV, 2, a3, NULL, &xn))) return st;
  ncc_value *a4[2] = {xn, scale};
  if ((st = emit(b, NCC_OP_MUL, 2, a4, NULL, &xs))) return st;
  b->op = NCC_OP_ADD;
  b->in[0] = xs;
  b->in[1] = bias;
  b->n_in = 2;
  b->n_attrs = 0;
  return NCC_OK;
}

/* ---- Resize 10 ----
 * Inputs (X, scales); the opset-11 form is (X, roi, scales). Opset 10
 * resized with the asymmetric coordinate rule (x_in = x_out / scale) and
 * nearest rounding down (onnxruntime's opset-10 kernel), which opset 11
 * spells with attributes. Upsample 7-9 is left as Upsample (its scales
 * attribute of 7-8 becomes input 1 above): the Upsample kernel
 * applies the same rule. */
static ncc_status resize_10(onnx_node_build *b) {
  if (b->n_in == 2 && b->in[1]) {
    b->in[2] = b->in[1];
    b->in[1] = NULL;
    b->n_in = 3;
  }
  if (onnx_find_attr(b, "coordinate_transformation_mode") < 0)
    put_attr(b, "coordinate_transformation_mode", NCC_ATTR_STRING)->s =
        "asymmetric";
  if (onnx_find_attr(b, "nearest_mode") < 0)
    put_attr(b, "nearest_mode", NCC_ATTR_STRING)->s = "floor";
  return NCC_OK;
}

/* ---- Clip: absent bounds ----
 * ONNX's Clip (6 as attributes, 11+ as inputs) takes an absent min or max
 * as the type's lowest or largest value, so +-inf become +-FLT_MAX in f32
 * (onnxruntime does so); in the IR an absent bound does not clamp. For a
 * float input the importer writes the bound out. */
static ncc_status clip_bounds(onnx_node_build *b) {
  if (b->n_in < 1 || !b->in[0]) return NCC_OK; /* the arity check reports it */
  if ((b->n_in > 1 && b->in[1]) && (b->n_in > 2 && b->in[2])) return NCC_OK;
  ncc_status st = typed(b, b->in[0]);
  if (st) return st;
  double big;
  switch (b->in[0]->dtype) {
  case NCC_DT_F32: big = FLT_MAX; break;
  case NCC_DT_F64: big = DBL_MAX; break;
  case NCC_DT_F16: big = 65504.0; break;
  default: return NCC_OK; /* integers: the bound is the type's own */
  }
  for (int k = 1; k <= 2; k++)
    if (b->n_in <= k || !b->in[k]) {
      st = set_input(b, k, scalar_of(b, k == 1 ? -big : big, b->in[0]->dtype),
                     k == 1 ? "min" : "max");
      if (st) return st;
    }
  return NCC_OK;
}

ncc_status onnx_upgrade_old(onnx_node_build *b) {
  const char *op = ncc_op_name(b->op);
  ncc_status st = attrs_to_inputs(b);
  if (st) return st;
  if (b->opset < 13 && (b->op == NCC_OP_SOFTMAX || b->op == NCC_OP_LOGSOFTMAX ||
                        strcmp(op, "Hardmax") == 0))
    return coerce_2d(b);
  if (b->op == NCC_OP_BATCHNORM && b->opset < 9) return bn_spatial(b);
  if (b->op == NCC_OP_SLICE && b->opset < 10 && b->n_in < 3)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: Slice of opset %lld needs attributes 'starts' and "
                     "'ends'",
                     b->label, (long long)b->opset);
  if (b->op == NCC_OP_PAD && b->opset < 11 && b->n_in < 2)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: Pad of opset %lld needs attribute 'pads'", b->label,
                     (long long)b->opset);
  if (b->op == NCC_OP_MAXPOOL && b->opset < 8 && b->n_out > 1)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: MaxPool of opset %lld has one output (Indices "
                     "came in opset 8)",
                     b->label, (long long)b->opset);
  /* DFT 17-19 reads `axis` as an attribute defaulting to 1; from 20 it is
   * input 2 defaulting to -2, the IR's default (the kernel's): write the
   * old default out */
  if (strcmp(op, "DFT") == 0 && b->opset < 20 && onnx_find_attr(b, "axis") < 0)
    put_attr(b, "axis", NCC_ATTR_INT)->i = 1;
  /* RoiAlign 10 samples without the half-pixel offset that 16 made the
   * default (its coordinate_transformation_mode came in 16) */
  if (strcmp(op, "RoiAlign") == 0 && b->opset < 16)
    put_attr(b, "coordinate_transformation_mode", NCC_ATTR_STRING)->s = "output_half_pixel";
  if (b->op == NCC_OP_CLIP) return clip_bounds(b);
  if (b->opset < 11 && strcmp(op, "Resize") == 0) return resize_10(b);
  return NCC_OK;
}
