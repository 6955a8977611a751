/* ir/shape_reduce.c — normalization and reduction rules: BatchNormalization,
 * LayerNormalization, Softmax/LogSoftmax, ReduceMean/Sum/Max.
 */
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"

/* ------------------------------------------------------------------------ */
/* normalization and reductions                                              */

ncc_status ncc_rule_batchnorm(ictx *c) {
  ncc_status st;
  ncc_norm_attrs na;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOAT)) || (st = ncc_si_check_min_rank(c, 0, 2)) ||
      (st = ncc_attrs_norm(c->n, &na)))
    return st;
  int64_t training = na.training_mode;
  if (training != 0)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "training_mode=%lld is not supported",
                (long long)training);
  int64_t ch = IN(c, 0)->shape.d[1];
  static const char *names[] = {"", "scale", "B", "mean", "var"};
  for (int i = 1; i < 5; i++) {
    int64_t r;
    if ((st = ncc_si_check_same_dtype(c, 0, i)) || (st = ncc_si_check_rank(c, i, 1)))
      return st;
    if (!ncc_si_merge_dim(c->g, IN(c, i)->shape.d[0], ch, &r))
      return ncc_si_fail(c, NCC_ERR_INPUT, "%s has %lld entries, expected %lld",
                  names[i], (long long)IN(c, i)->shape.d[0], (long long)ch);
  }
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

ncc_status ncc_rule_layernorm(ictx *c) {
  ncc_status st;
  ncc_norm_attrs na;
  int r = rank_of(c, 0), axis = 0;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOAT)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_axis_norm(c->n, r, &axis)) || (st = ncc_attrs_norm(c->n, &na)))
    return st;
  ncc_shape norm = {.rank = r - axis};
  memcpy(norm.d, IN(c, 0)->shape.d + axis, sizeof(int64_t) * (size_t)norm.rank);
  for (int i = 1; i < c->n->n_in; i++) {
    if (!has_in(c, i)) continue;
    if ((st = ncc_si_check_same_dtype(c, 0, i)) || (st = ncc_si_check_unidir(c, i, &norm)))
      return st;
  }
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  ncc_shape stat = IN(c, 0)->shape;
  for (int i = axis; i < r; i++) stat.d[i] = 1;
  for (int k = 1; k < c->n->n_out; k++) set_out(c, k, NCC_DT_F32, &stat);
  return NCC_OK;
}

ncc_status ncc_rule_softmax(ictx *c) {
  ncc_status st;
  int axis = 0;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOATS)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_axis_norm(c->n, rank_of(c, 0), &axis)))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* ReduceMean/Sum/Max with optional axes input (opset-18 form). */
ncc_status ncc_rule_reduce(ictx *c) {
  ncc_status st;
  ncc_reduce_attrs ra;
  /* ONNX: ReduceSum/Mean take floats and (u)int32/64; ReduceMax also
   * int8, uint8 and (opset 20) bool */
  unsigned mask = DT_FLOATS | DT(I32) | DT(I64) | DT(U32) | DT(U64);
  if (c->n->op == NCC_OP_REDUCEMAX) mask |= DT(I8) | DT(U8) | DT(BOOL);
  if ((st = ncc_si_check_dtype(c, 0, mask)) || (st = ncc_attrs_reduce(c->n, &ra)))
    return st;
  bool keep = ra.keepdims, noop = ra.noop_with_empty_axes;
  const ncc_shape *x = &IN(c, 0)->shape;
  int r = x->rank, n = 0, len = 0;
  int axes[NCC_CONTENT_MAX];
  bool known = true;
  if (has_in(c, 1)) {
    if ((st = ncc_si_check_index(c, 1)) || (st = ncc_si_vec_len(c, 1, &len)) ||
        (st = ncc_si_input_axes(c, 1, r, axes, &n, &known)))
      return st;
  }
  ncc_shape o = {.rank = 0};
  if (!known && len > 0) {
    /* Which dims are reduced depends on data: only the rank is known. */
    if (len > r) return ncc_si_fail(c, NCC_ERR_INPUT, "%d axes for rank %d", len, r);
    for (int i = 0; i < r; i++) {
      if (!keep && i >= r - len) break;
      if (keep && x->d[i] == 1) o.d[o.rank++] = 1;
      else if ((st = ncc_si_fresh_dim(c, &o.d[o.rank++]))) return st;
    }
    set_out(c, 0, IN(c, 0)->dtype, &o);
    return NCC_OK;
  }
  bool red[NCC_MAX_RANK] = {false};
  if (n == 0 && noop) {
    set_out(c, 0, IN(c, 0)->dtype, x);
    ncc_si_pass_content(c, 0, 0);
    return NCC_OK;
  }
  for (int i = 0; i < r; i++) red[i] = n == 0;
  for (int i = 0; i < n; i++) red[axes[i]] = true;
  for (int i = 0; i < r; i++) {
    if (!red[i]) o.d[o.rank++] = x->d[i];
    else if (keep) o.d[o.rank++] = 1;
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}
