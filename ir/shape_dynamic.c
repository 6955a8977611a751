/* ir/shape_dynamic.c — shape rules of the ops whose output dims depend on
 * input values (NCC_OPF_DYNAMIC in ir/ops.def). Such a dim is a fresh
 * symbol at compile time and NCC_DIM_DATA at run time, where the reference
 * kernel sizes and allocates the output (docs/DYNAMIC-SHAPES.md). */
#include "shape_rule.h"

/* NonZero: [rank(X), count of non-zero elements] of i64. A rank-0 input
 * gives [0, count], as ONNX's shape inference and reference implementation
 * say (onnxruntime gives [1, count]; models exported with ONNX's inferred
 * shapes declare 0). When the input's content is known (small int
 * tensors) the count is too. */
ncc_status ncc_rule_nonzero(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY))) return st;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank;
  ncc_shape o = {.rank = 2, .d = {r, 0}};
  int64_t count = 0;
  bool known = x->content_len >= 0;
  for (int i = 0; known && i < x->content_len; i++) {
    if (ncc_dim_is_sym(x->content[i])) known = false;
    else count += x->content[i] != 0;
  }
  if (known) o.d[1] = count;
  else if ((st = ncc_si_fresh_dim(c, &o.d[1]))) return st;
  set_out(c, 0, NCC_DT_I64, &o);
  return NCC_OK;
}
