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
  int since;          /* the opset it appeared in after 13, else 0 */
  int ir_kind;        /* the ncc_attr_kind the IR holds, -1: none (the
                         importer turns it into an input or drops it) */
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

/* ---- recurrent and control flow (t-rnn) ---- */

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
