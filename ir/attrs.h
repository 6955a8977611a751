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

/* LeakyRelu (alpha 0.01), HardSigmoid (alpha 0.2, beta 0.5) and Gelu
 * (approximate "none" or "tanh"). */
typedef struct ncc_act_attrs {
  float alpha, beta;
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

/* Transpose's perm as a permutation of 0..rank-1 (reversed when absent). */
ncc_status ncc_attrs_perm(const ncc_node *n, int rank, int *perm);

#endif /* NCC_IR_ATTRS_H */
