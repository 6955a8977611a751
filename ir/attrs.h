/* ir/attrs.h — every op's attributes decoded once into a typed view, with
 * ONNX's defaults and validity rules, and the attribute schema (ir/attrs.def).
 *
 * Shape inference decodes each view and reports an invalid attribute as a
 * one-line error naming the node; the reference kernels, the lowerings and
 * the passes decode the same view and so see the same values (after
 * inference they cannot fail). The conv/pool window is ir/window.h's view.
 */
#ifndef NCC_IR_ATTRS_H
#define NCC_IR_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

/* ---- the schema ---- */
typedef struct ncc_attr_schema {
  ncc_op op;
  const char *name;
  ncc_attr_kind kind; /* as an ONNX model writes it */
  int since;          /* the opset it appeared in after 7, else 0 */
  int ir_kind;        /* the ncc_attr_kind the IR holds, -1: none (the
                         importer turns it into an input or drops it) */
  int until;          /* NCC_ATTR_OLD rows: the first opset without it,
                         else 0 (no bound) */
} ncc_attr_schema;

/* The schema row of op's attribute `name`, NULL when op has none such. */
const ncc_attr_schema *ncc_attr_schema_find(ncc_op op, const char *name);

/* ---- typed views ----
 * Each decoder fills every field (defaults for what is absent) and returns
 * NCC_OK, or an error naming the node with the fields it could not decode
 * left at their defaults. */

/* Gemm: Y = alpha * op(A) @ op(B) + beta * C. */
typedef struct ncc_gemm_attrs {
  float alpha, beta;     /* 1, 1 */
  bool trans_a, trans_b; /* 0 or 1 */
} ncc_gemm_attrs;
ncc_status ncc_attrs_gemm(const ncc_node *n, ncc_gemm_attrs *a);

/* LeakyRelu (alpha 0.01), HardSigmoid (alpha 0.2, beta 0.5), Elu, Celu and
 * ThresholdedRelu (alpha 1; Celu alpha != 0), Selu (alpha 1.6733, gamma
 * 1.0507) and Gelu
 * (approximate "none" or "tanh"). */
typedef struct ncc_act_attrs {
  float alpha, beta, gamma; /* gamma: Selu */
  bool gelu_tanh;
} ncc_act_attrs;
ncc_status ncc_attrs_act(const ncc_node *n, ncc_act_attrs *a);

/* ReduceMean/Sum/Max (the axes are input 1, the opset-18 form). */
typedef struct ncc_reduce_attrs {
  bool keepdims;             /* 1 */
  bool noop_with_empty_axes; /* 0 */
} ncc_reduce_attrs;
ncc_status ncc_attrs_reduce(const ncc_node *n, ncc_reduce_attrs *a);

/* BatchNormalization and LayerNormalization. */
typedef struct ncc_norm_attrs {
  float epsilon;         /* 1e-5 */
  int64_t training_mode; /* BatchNormalization: only 0 is supported */
} ncc_norm_attrs;
ncc_status ncc_attrs_norm(const ncc_node *n, ncc_norm_attrs *a);

/* MaxPool's storage_order and AveragePool's count_include_pad (0 or 1). */
typedef struct ncc_pool_attrs {
  bool count_include_pad;
  bool col_major; /* storage_order 1: the indices output is column-major */
} ncc_pool_attrs;
ncc_status ncc_attrs_pool(const ncc_node *n, ncc_pool_attrs *a);

/* The `axis` of Softmax, LogSoftmax, LayerNormalization (default -1),
 * Flatten (1), Concat (required), Split and Gather (0), as written: may be
 * negative and is not checked against a rank. */
int64_t ncc_attrs_axis(const ncc_node *n);

/* The same normalized into [0, rank) ([0, rank] for Flatten); out of range,
 * a wrong kind or Concat without one is an error. */
ncc_status ncc_attrs_axis_norm(const ncc_node *n, int rank, int *axis);

/* An int attribute (dflt when absent); another kind is an input error
 * naming the node. The typed views above and ir/window.c read through it. */
ncc_status ncc_attrs_get_int(const ncc_node *n, const char *name, int64_t dflt,
                             int64_t *v);

/* Transpose's perm as a permutation of 0..rank-1 (reversed when absent). */
ncc_status ncc_attrs_perm(const ncc_node *n, int rank, int *perm);

/* Cast's `to`: the IR holds the dtype's name (the importer converts ONNX's
 * type code). Required; an unknown name is NCC_ERR_UNSUPPORTED. */
ncc_status ncc_attrs_cast(const ncc_node *n, ncc_dtype *to);

/* Split's `num_outputs` (default: the node's output count), which must
 * equal the node's output count. */
ncc_status ncc_attrs_split(const ncc_node *n, int *num_outputs);

/* Reshape's `allowzero` (0 or 1, default 0). */
ncc_status ncc_attrs_reshape(const ncc_node *n, bool *allowzero);

/* Shape's `start` and `end` (defaults 0 and rank), negative ones counted
 * from the end, both clamped into [0, rank]; end may be below start (an
 * empty result). */
ncc_status ncc_attrs_shape(const ncc_node *n, int rank, int *start, int *end);

/* Pad's `mode` (default "constant"). */
typedef enum ncc_pad_mode {
  NCC_PAD_CONSTANT,
  NCC_PAD_REFLECT,
  NCC_PAD_EDGE,
  NCC_PAD_WRAP,
} ncc_pad_mode;
ncc_status ncc_attrs_pad(const ncc_node *n, ncc_pad_mode *mode);
const char *ncc_pad_mode_name(ncc_pad_mode mode); /* as ONNX spells it */

/* The `value` tensor of Constant (required) and ConstantOfShape (NULL when
 * absent: f32 zero; else it must hold one element). */
ncc_status ncc_attrs_value(const ncc_node *n, const ncc_const **value);

/* ---- the IR's check against the schema ----
 * NCC_OK when every attribute of n is one its op takes in the IR, of the
 * kind the IR holds it in (ir/attrs.def's IR column), or a pass
 * annotation (ncc_attr_is_annotation); else an error naming the node. The
 * verifier runs it, so hand-written text IR is checked as ONNX is. */
ncc_status ncc_attrs_check_schema(const ncc_node *n);

/* Whether `name` is an annotation that a pass attaches, not an attribute
 * of the op: any name with a '.' (fuse.group, fuse.kind, mem.offset,
 * mem.offset.batch); no ONNX attribute of ncc's ops has one. */
bool ncc_attr_is_annotation(const char *name);

/* ---- indexing, scatter, resampling, sorting ----
 * Decoded in ir/attrs_index.c. */

/* ScatterND / ScatterElements `reduction` (default "none"). */
typedef enum ncc_scatter_red {
  NCC_SCATTER_NONE,
  NCC_SCATTER_ADD,
  NCC_SCATTER_MUL,
  NCC_SCATTER_MAX,
  NCC_SCATTER_MIN,
} ncc_scatter_red;
ncc_status ncc_attrs_scatter(const ncc_node *n, ncc_scatter_red *red);

/* GatherND `batch_dims` (default 0, >= 0). */
ncc_status ncc_attrs_gather_nd(const ncc_node *n, int64_t *batch_dims);

/* DepthToSpace / SpaceToDepth: `blocksize` (required, >= 1), the
 * `mode` ("DCR" default, or "CRD"). */
typedef struct ncc_depth_space_attrs {
  int64_t blocksize;
  bool crd;
} ncc_depth_space_attrs;
ncc_status ncc_attrs_depth_space(const ncc_node *n, ncc_depth_space_attrs *a);

/* Resize (and Upsample: mode only, "nearest" default, asymmetric
 * coordinates, floor rounding as Resize-10 defines it). */
typedef enum { NCC_RS_NEAREST, NCC_RS_LINEAR, NCC_RS_CUBIC } ncc_resize_mode;
typedef enum {
  NCC_RS_HALF_PIXEL,
  NCC_RS_HALF_PIXEL_SYMMETRIC,
  NCC_RS_PYTORCH_HALF_PIXEL,
  NCC_RS_ALIGN_CORNERS,
  NCC_RS_ASYMMETRIC,
  NCC_RS_TF_CROP_AND_RESIZE,
  NCC_RS_TF_HALF_PIXEL_FOR_NN,
} ncc_resize_coord;
typedef enum {
  NCC_RS_ROUND_PREFER_FLOOR,
  NCC_RS_ROUND_PREFER_CEIL,
  NCC_RS_FLOOR,
  NCC_RS_CEIL,
} ncc_resize_nearest;
typedef enum { NCC_RS_STRETCH, NCC_RS_NOT_LARGER, NCC_RS_NOT_SMALLER } ncc_resize_keep;
typedef struct ncc_resize_attrs {
  ncc_resize_mode mode;         /* nearest */
  ncc_resize_coord coord;       /* half_pixel */
  ncc_resize_nearest nearest;   /* round_prefer_floor */
  float cubic_a;                /* -0.75 */
  bool exclude_outside;         /* 0 */
  float extrapolation;          /* 0 */
  bool antialias;               /* 0 */
  ncc_resize_keep keep;         /* stretch */
  int n_axes;                   /* -1: every axis */
  int64_t axes[NCC_MAX_RANK];   /* as written (may be negative) */
  int n_scales;                 /* Upsample-7's `scales`, -1 when absent */
  float scales[NCC_MAX_RANK];
} ncc_resize_attrs;
ncc_status ncc_attrs_resize(const ncc_node *n, ncc_resize_attrs *a);

/* GridSample: mode (bilinear/linear, nearest, bicubic/cubic), padding_mode
 * (zeros, border, reflection), align_corners (0). */
typedef enum { NCC_GS_ZEROS, NCC_GS_BORDER, NCC_GS_REFLECTION } ncc_gs_pad;
typedef struct ncc_grid_sample_attrs {
  ncc_resize_mode mode;
  ncc_gs_pad pad;
  bool align_corners;
} ncc_grid_sample_attrs;
ncc_status ncc_attrs_grid_sample(const ncc_node *n, ncc_grid_sample_attrs *a);

/* TopK (axis -1, largest 1, sorted 1), ArgMax/ArgMin (axis 0, keepdims 1,
 * select_last_index 0): axis as written. */
typedef struct ncc_sort_attrs {
  int64_t axis;
  bool largest, sorted;         /* TopK */
  bool keepdims, select_last;   /* ArgMax, ArgMin */
} ncc_sort_attrs;
ncc_status ncc_attrs_sort(const ncc_node *n, ncc_sort_attrs *a);

/* Unique (sorted 1, axis optional) and Compress (axis optional). */
ncc_status ncc_attrs_opt_axis(const ncc_node *n, bool *has_axis, int64_t *axis);
ncc_status ncc_attrs_unique(const ncc_node *n, bool *sorted);

/* ReverseSequence: batch_axis (1) and time_axis (0), each 0 or 1, distinct. */
ncc_status ncc_attrs_reverse_sequence(const ncc_node *n, int *batch_axis,
                                      int *time_axis);

/* Einsum's `equation` (required). */
ncc_status ncc_attrs_einsum(const ncc_node *n, const char **equation);

/* NonMaxSuppression's center_point_box (0 or 1, default 0). */
ncc_status ncc_attrs_nms(const ncc_node *n, bool *center_point_box);

/* ---- logical, bitwise, integer and simple elementwise/variadic ops ---- */
/* The attributes of Mod, BitShift, IsInf, Shrink, Hardmax, Trilu, CumSum,
 * OneHot and EyeLike, each with ONNX's default; an op fills only its own
 * fields (the others keep their defaults). CastLike's saturate/round_mode
 * and Dropout's seed change nothing ncc computes and have no field. */
typedef struct ncc_logic_attrs {
  bool fmod;                 /* Mod: 0 (floored, divisor's sign) or 1 (C fmod) */
  bool shift_left;           /* BitShift: direction "LEFT"/"RIGHT", required */
  bool detect_negative;      /* IsInf: 1 */
  bool detect_positive;      /* IsInf: 1 */
  float bias, lambd;         /* Shrink: 0, 0.5 */
  bool upper;                /* Trilu: 1 */
  bool exclusive, reverse;   /* CumSum: 0, 0 */
  int64_t axis;              /* Hardmax, OneHot: -1, as written */
  int64_t k;                 /* EyeLike: 0 */
  ncc_dtype dtype;           /* EyeLike: NCC_DT_UNDEF (the input's) when absent;
                                an ONNX type code ncc lacks is UNSUPPORTED */
} ncc_logic_attrs;
ncc_status ncc_attrs_logic(const ncc_node *n, ncc_logic_attrs *a);

/* ---- reductions, normalization, pooling, ConvTranspose, RoiAlign,
 * attention ---- */

/* InstanceNormalization, GroupNormalization, LpNormalization,
 * MeanVarianceNormalization, RMSNormalization, LRN, LpPool, GlobalLpPool.
 * stash_type is accepted and ignored: the reference computes in double. */
typedef struct ncc_nn_attrs {
  float epsilon;      /* Instance/Group/RMS: 1e-5 */
  int64_t axis;       /* LpNormalization, RMSNormalization: -1, as written */
  int64_t num_groups; /* GroupNormalization: required, >= 1 */
  int64_t p;          /* LpNormalization: 1 or 2; LpPool/GlobalLpPool >= 1;
                         default 2 */
  float alpha, beta, bias; /* LRN: 1e-4, 0.75, 1 */
  int64_t size;            /* LRN: required, >= 1 */
  int n_axes;              /* MVN: default {0, 2, 3}, as written */
  int64_t axes[NCC_MAX_RANK];
} ncc_nn_attrs;
ncc_status ncc_attrs_nn(const ncc_node *n, ncc_nn_attrs *a);

/* ConvTranspose's own attributes (the window is ir/window.h's view, decoded
 * as for Conv): output_padding (0s, each below its stride or dilation) and
 * output_shape (the `rank` spatial sizes; a full [N, C, ...] list is
 * accepted and its spatial tail taken). */
typedef struct ncc_convt_attrs {
  int64_t output_padding[NCC_MAX_RANK];
  bool has_output_shape;
  int64_t output_shape[NCC_MAX_RANK];
} ncc_convt_attrs;
ncc_status ncc_attrs_convt(const ncc_node *n, int rank, const int64_t *stride,
                           const int64_t *dilation, ncc_convt_attrs *a);

/* RoiAlign: mode "avg"/"max", coordinate_transformation_mode
 * "half_pixel" (default) / "output_half_pixel". */
typedef struct ncc_roialign_attrs {
  bool max_mode;
  bool half_pixel;
  int64_t out_h, out_w;    /* 1, 1; >= 1 */
  int64_t sampling_ratio;  /* 0: adaptive; >= 0 */
  float spatial_scale;     /* 1 */
} ncc_roialign_attrs;
ncc_status ncc_attrs_roialign(const ncc_node *n, ncc_roialign_attrs *a);

/* Attention (opsets 23-25). scale 0 means 1/sqrt(head size). */
typedef struct ncc_attention_attrs {
  bool causal;
  int64_t q_heads, kv_heads; /* required for 3-D Q/K/V, else 0 */
  int64_t qk_mode;           /* qk_matmul_output_mode 0..3 */
  float scale, softcap;      /* 0: none */
  int64_t left_window, right_window; /* opset 25 sliding window; -1: none */
} ncc_attention_attrs;
ncc_status ncc_attrs_attention(const ncc_node *n, ncc_attention_attrs *a);

/* RotaryEmbedding (opset 23). */
typedef struct ncc_rotary_attrs {
  bool interleaved;
  int64_t num_heads; /* 0: X is 4-D */
  int64_t rot_dim;   /* 0: the whole head */
} ncc_rotary_attrs;
ncc_status ncc_attrs_rotary(const ncc_node *n, ncc_rotary_attrs *a);

/* ---- quantization, misc and signal ops ---- */

/* An ONNX TensorProto type code (output_dtype, output_datatype) as an ncc
 * dtype; a type ncc lacks is NCC_ERR_UNSUPPORTED naming the ONNX type. */
ncc_status ncc_attrs_onnx_dtype(const ncc_node *n, int64_t code, ncc_dtype *dt);

/* QuantizeLinear / DequantizeLinear: axis (1, as written), block_size (0:
 * per-tensor or per-axis; > 0 blocked), saturate (1; matters for float8
 * only), output_dtype (0: from the zero point, else uint8 / the scale). */
typedef struct ncc_quant_attrs {
  int64_t axis, block_size, output_dtype;
  bool saturate;
} ncc_quant_attrs;
ncc_status ncc_attrs_quant(const ncc_node *n, ncc_quant_attrs *a);

/* NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: reduction "none",
 * "sum" or "mean" (default), ignore_index (has_ignore when given). */
typedef enum { NCC_LOSS_NONE, NCC_LOSS_SUM, NCC_LOSS_MEAN } ncc_loss_reduction;
typedef struct ncc_loss_attrs {
  ncc_loss_reduction reduction;
  bool has_ignore;
  int64_t ignore_index;
} ncc_loss_attrs;
ncc_status ncc_attrs_loss(const ncc_node *n, ncc_loss_attrs *a);

/* The signal ops: windows' periodic (1) and output_datatype (1 = float),
 * MelWeightMatrix's output_datatype, DFT's inverse/onesided (0) and its
 * opset-17 axis attribute (has_axis; default 1), STFT's onesided (1). */
typedef struct ncc_signal_attrs {
  bool periodic, inverse, onesided, has_axis;
  int64_t axis;
  ncc_dtype out_dtype; /* the decoded output_datatype */
} ncc_signal_attrs;
ncc_status ncc_attrs_signal(const ncc_node *n, ncc_signal_attrs *a);

/* MaxRoiPool: pooled_shape (required, 2 positive ints), spatial_scale (1). */
ncc_status ncc_attrs_roipool(const ncc_node *n, int64_t pooled[2], float *scale);

/* CenterCropPad's axes (all of 0..rank-1 when absent), normalized and
 * distinct; AffineGrid's align_corners (0 or 1). */
ncc_status ncc_attrs_crop_axes(const ncc_node *n, int rank, int *axes, int *count);
ncc_status ncc_attrs_align_corners(const ncc_node *n, bool *align);

/* ---- recurrent and control flow ---- */

/* An RNN/GRU/LSTM activation (the ONNX list: Relu, Tanh, Sigmoid, Affine,
 * LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign,
 * Softplus) with its alpha and beta. */
typedef enum ncc_rnn_act_kind {
  NCC_RNN_RELU, NCC_RNN_TANH, NCC_RNN_SIGMOID, NCC_RNN_AFFINE,
  NCC_RNN_LEAKYRELU, NCC_RNN_THRESHOLDEDRELU, NCC_RNN_SCALEDTANH,
  NCC_RNN_HARDSIGMOID, NCC_RNN_ELU, NCC_RNN_SOFTSIGN, NCC_RNN_SOFTPLUS,
} ncc_rnn_act_kind;
typedef struct ncc_rnn_act {
  ncc_rnn_act_kind kind;
  float alpha, beta;
} ncc_rnn_act;

#define NCC_RNN_MAX_ACTS 6 /* LSTM bidirectional: f, g, h twice */

/* RNN (1 gate), GRU (3: z r h) and LSTM (4: i o f c). */
typedef struct ncc_rnn_attrs {
  int gates;          /* 1, 3, 4 */
  int num_dir;        /* 1, or 2 for "bidirectional" */
  bool reverse;       /* direction "reverse" (num_dir 1) */
  int64_t hidden_size; /* -1 when absent */
  bool has_clip;
  float clip;         /* > 0 when has_clip */
  bool batch_first;   /* layout 1 */
  bool input_forget;  /* LSTM */
  bool linear_before_reset; /* GRU */
  int acts_per_dir;   /* RNN 1, GRU 2, LSTM 3 */
  ncc_rnn_act act[NCC_RNN_MAX_ACTS]; /* [dir * acts_per_dir + k] */
} ncc_rnn_attrs;
/* The defaults are ONNX's: direction forward, activations Tanh (RNN),
 * Sigmoid,Tanh (GRU), Sigmoid,Tanh,Tanh (LSTM) for each direction; alpha
 * and beta are consumed in order by the activations that take them, the
 * ones not given default to the ONNX op's (LeakyRelu 0.01, HardSigmoid
 * 0.2/0.5, ThresholdedRelu/Elu/ScaledTanh/Affine 1 (Affine beta 0)). */
ncc_status ncc_attrs_rnn(const ncc_node *n, ncc_rnn_attrs *a);

#endif /* NCC_IR_ATTRS_H */
