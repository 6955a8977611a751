/* ir/shape_nn.c — shape rules of this family: the further reductions
 * (ReduceL1/L2/Prod/Min/LogSum/LogSumExp/SumSquare), Instance/Group/Lp/
 * MeanVariance/RMS normalization, LRN, LpPool, GlobalLpPool, ConvTranspose,
 * RoiAlign, Attention and RotaryEmbedding. Every output is f32 like input 0
 * except where noted; the window ops read ir/window.c's view.
 */
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"
#include "window.h"

/* ---- reductions ---- */

/* Float dtypes of the kernels that read and write through the generic
 * accessors (runtime/ref: double arithmetic, any float storage). */

/* The shared `reduce` rule (the importer turns an opset 13-17 `axes`
 * attribute into input 1, as for ReduceMean), with f64/f16 inputs
 * presented to it as f32 and ReduceMin's bool (opset 20: a logical and)
 * as i64: its dtype set is the older reductions'. */
ncc_status ncc_rule_reduce_nn(ictx *c) {
  ncc_dtype dt = IN(c, 0)->dtype;
  bool wide = dt == NCC_DT_F64 || dt == NCC_DT_F16 ||
              (dt == NCC_DT_BOOL && c->n->op == NCC_OP_REDUCEMIN);
  if (!wide) return ncc_rule_reduce(c);
  ncc_tinfo in2[2];
  ictx c2 = *c;
  c2.in = in2;
  in2[0] = c->in[0];
  in2[0].dtype = dt == NCC_DT_BOOL ? NCC_DT_I64 : NCC_DT_F32;
  if (c->n->n_in > 1) in2[1] = c->in[1];
  ncc_status st = ncc_rule_reduce(&c2);
  if (!st) c->out[0].dtype = dt;
  return st;
}

/* ---- normalizations ---- */

static ncc_status check_vec(ictx *c, int i, int64_t want, const char *what) {
  ncc_status st;
  int64_t r;
  if ((st = ncc_si_check_same_dtype(c, 0, i)) || (st = ncc_si_check_rank(c, i, 1)))
    return st;
  if (!ncc_si_merge_dim(c->g, IN(c, i)->shape.d[0], want, &r))
    return ncc_si_fail(c, NCC_ERR_INPUT, "%s has %lld entries, expected %lld", what,
                       (long long)IN(c, i)->shape.d[0], (long long)want);
  return NCC_OK;
}

ncc_status ncc_rule_instnorm(ictx *c) {
  ncc_status st;
  ncc_nn_attrs a;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_min_rank(c, 0, 3)) ||
      (st = ncc_attrs_nn(c->n, &a)) ||
      (st = check_vec(c, 1, IN(c, 0)->shape.d[1], "scale")) ||
      (st = check_vec(c, 2, IN(c, 0)->shape.d[1], "B")))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* scale and bias: [C] (opset 21) or [num_groups] (opset 18); when the two
 * counts are equal both forms mean the same. */
ncc_status ncc_rule_groupnorm(ictx *c) {
  ncc_status st;
  ncc_nn_attrs a;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_min_rank(c, 0, 2)) ||
      (st = ncc_attrs_nn(c->n, &a)))
    return st;
  int64_t ch = IN(c, 0)->shape.d[1];
  if (is_static(ch) && ch % a.num_groups != 0)
    return ncc_si_fail(c, NCC_ERR_INPUT, "num_groups %lld does not divide the %lld channels",
                       (long long)a.num_groups, (long long)ch);
  for (int i = 1; i < 3; i++) {
    if ((st = ncc_si_check_same_dtype(c, 0, i)) || (st = ncc_si_check_rank(c, i, 1)))
      return st;
    int64_t d = IN(c, i)->shape.d[0], r;
    if (!ncc_si_merge_dim(c->g, d, ch, &r) && d != a.num_groups)
      return ncc_si_fail(c, NCC_ERR_INPUT,
                         "%s has %lld entries, expected %lld (channels) or %lld (groups)",
                         i == 1 ? "scale" : "bias", (long long)d, (long long)ch,
                         (long long)a.num_groups);
  }
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* LpNormalization, MeanVarianceNormalization, LRN: Y shaped like X. */
ncc_status ncc_rule_nn_same(ictx *c) {
  ncc_status st;
  ncc_nn_attrs a;
  int r = rank_of(c, 0), axis;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_attrs_nn(c->n, &a)))
    return st;
  switch (c->n->op) {
  case NCC_OP_LPNORM:
    if ((st = ncc_si_check_min_rank(c, 0, 1)) ||
        (st = ncc_si_norm_axis(c, "axis", a.axis, r, false, &axis)))
      return st;
    break;
  case NCC_OP_LRN:
    if ((st = ncc_si_check_min_rank(c, 0, 2))) return st;
    break;
  default: { /* MVN */
    bool seen[NCC_MAX_RANK] = {false};
    for (int i = 0; i < a.n_axes; i++) {
      if ((st = ncc_si_norm_axis(c, "axis", a.axes[i], r, false, &axis))) return st;
      if (seen[axis])
        return ncc_si_fail(c, NCC_ERR_INPUT, "axis %lld is repeated", (long long)a.axes[i]);
      seen[axis] = true;
    }
  }
  }
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* RMSNormalization: scale broadcasts to X's dims [axis, rank). */
ncc_status ncc_rule_rmsnorm(ictx *c) {
  ncc_status st;
  ncc_nn_attrs a;
  int r = rank_of(c, 0), axis;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_nn(c->n, &a)) ||
      (st = ncc_si_norm_axis(c, "axis", a.axis, r, false, &axis)) ||
      (st = ncc_si_check_same_dtype(c, 0, 1)))
    return st;
  ncc_shape norm = {.rank = r - axis};
  memcpy(norm.d, IN(c, 0)->shape.d + axis, sizeof(int64_t) * (size_t)norm.rank);
  if ((st = ncc_si_check_unidir(c, 1, &norm))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* ---- pools ---- */

/* The pool rules check for f32: f64/f16 are presented as f32 to them
 * (these kernels compute in double through the generic accessors). */
static ncc_status as_f32(ictx *c, ncc_status (*rule)(ictx *)) {
  ncc_dtype dt = IN(c, 0)->dtype;
  if (dt != NCC_DT_F64 && dt != NCC_DT_F16) return rule(c);
  ncc_tinfo in0 = c->in[0];
  in0.dtype = NCC_DT_F32;
  ictx c2 = *c;
  c2.in = &in0;
  ncc_status st = rule(&c2);
  if (!st) c->out[0].dtype = dt;
  return st;
}

ncc_status ncc_rule_lppool(ictx *c) {
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(c->n, &a);
  return st ? st : as_f32(c, ncc_rule_pool);
}

/* GlobalMaxPool and GlobalLpPool. */
ncc_status ncc_rule_global_lppool(ictx *c) {
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(c->n, &a);
  return st ? st : as_f32(c, ncc_rule_global_pool);
}

/* ---- ConvTranspose ---- */

/* X [N, C, spatial...], W [C, M/group, kernel...], B [M]. */
ncc_status ncc_rule_convtranspose(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOAT)) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 3)) || (st = ncc_si_check_rank(c, 1, rank_of(c, 0))))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape, *wt = &IN(c, 1)->shape;
  int k = x->rank - 2;
  ncc_window w;
  if ((st = ncc_window_decode(c->n, k, wt->d + 2, &w))) return st;
  int64_t ch = x->d[1], wc = wt->d[0];
  int64_t m = is_static(wt->d[1]) ? wt->d[1] * w.group : -1;
  if (is_static(ch) && is_static(wc) && (ch != wc || ch % w.group != 0))
    return ncc_si_fail(c, NCC_ERR_INPUT,
                       "input has %lld channels but the weight has %lld (group %lld)",
                       (long long)ch, (long long)wc, (long long)w.group);
  if (m < 0 && (st = ncc_si_fresh_dim(c, &m))) return st;
  if (has_in(c, 2) && (st = check_vec(c, 2, m, "bias"))) return st;
  ncc_shape o = {.rank = x->rank, .d = {x->d[0], m}};
  int64_t in[NCC_MAX_RANK], out[NCC_MAX_RANK], pb[NCC_MAX_RANK], pe[NCC_MAX_RANK];
  bool stat = true;
  for (int i = 0; i < k; i++) {
    in[i] = x->d[i + 2];
    stat = stat && is_static(in[i]);
  }
  if (stat) {
    if ((st = ncc_convt_geometry(c->n, k, wt->d + 2, in, &w, out, pb, pe))) return st;
    for (int i = 0; i < k; i++) o.d[i + 2] = out[i];
  } else {
    for (int i = 0; i < k; i++)
      if ((st = ncc_si_fresh_dim(c, &o.d[i + 2]))) return st;
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* ---- RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, oh, ow] ---- */
ncc_status ncc_rule_roialign(ictx *c) {
  ncc_status st;
  ncc_roialign_attrs a;
  int64_t r;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_rank(c, 0, 4)) ||
      (st = ncc_si_check_same_dtype(c, 0, 1)) || (st = ncc_si_check_rank(c, 1, 2)) ||
      (st = ncc_si_check_index(c, 2)) || (st = ncc_si_check_rank(c, 2, 1)) ||
      (st = ncc_attrs_roialign(c->n, &a)))
    return st;
  const ncc_shape *rois = &IN(c, 1)->shape;
  if (is_static(rois->d[1]) && rois->d[1] != 4)
    return ncc_si_fail(c, NCC_ERR_INPUT, "rois must be [num_rois, 4]");
  if (!ncc_si_merge_dim(c->g, rois->d[0], IN(c, 2)->shape.d[0], &r))
    return ncc_si_fail(c, NCC_ERR_INPUT, "rois and batch_indices disagree on num_rois");
  ncc_shape o = {.rank = 4, .d = {rois->d[0], IN(c, 0)->shape.d[1], a.out_h, a.out_w}};
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* ---- Attention (opsets 23-25) ----
 * Q [B, Hq, S, D] or [B, S, Hq*D]; K [B, Hkv, L, D]; V [B, Hkv, L, Dv];
 * past_key/value [B, Hkv, P, D/Dv]; Y like Q with Dv; present_* [B, Hkv,
 * P+L, D/Dv]; qk_matmul_output [B, Hq, S, P+L]. */
ncc_status ncc_rule_attention(ictx *c) {
  ncc_status st;
  ncc_attention_attrs a;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOATS)) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_attrs_attention(c->n, &a)))
    return st;
  int r = rank_of(c, 0);
  if (r != 3 && r != 4)
    return ncc_si_fail(c, NCC_ERR_INPUT, "Q must have rank 3 or 4, got %d", r);
  for (int i = 1; i < 3; i++)
    if ((st = ncc_si_check_rank(c, i, r))) return st;
  const ncc_shape *q = &IN(c, 0)->shape, *k = &IN(c, 1)->shape, *v = &IN(c, 2)->shape;
  int64_t b = q->d[0], hq, hkv, s, l, dv;
  if (r == 4) {
    hq = q->d[1], hkv = k->d[1], s = q->d[2], l = k->d[2], dv = v->d[3];
  } else {
    if (a.q_heads < 1 || a.kv_heads < 1)
      return ncc_si_fail(c, NCC_ERR_INPUT, "3-D inputs need q_num_heads and kv_num_heads");
    if (!is_static(v->d[2]))
      return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "V's hidden size is symbolic");
    hq = a.q_heads, hkv = a.kv_heads, s = q->d[1], l = k->d[1];
    dv = v->d[2] / a.kv_heads;
  }
  if (is_static(hq) && is_static(hkv) && (hkv < 1 || hq % hkv != 0))
    return ncc_si_fail(c, NCC_ERR_INPUT, "%lld query heads are not a multiple of %lld kv heads",
                       (long long)hq, (long long)hkv);
  if (has_in(c, 3) && (st = ncc_si_check_dtype(c, 3, DT_FLOATS | DT(BOOL)))) return st;
  if (has_in(c, 6) && ((st = ncc_si_check_index(c, 6)) || (st = ncc_si_check_rank(c, 6, 1))))
    return st;
  if (has_in(c, 6) && has_in(c, 4))
    return ncc_si_fail(c, NCC_ERR_INPUT, "nonpad_kv_seqlen cannot be combined with past_key");
  int64_t total = l;
  if (has_in(c, 4) != has_in(c, 5))
    return ncc_si_fail(c, NCC_ERR_INPUT, "past_key and past_value go together");
  if (has_in(c, 4)) {
    if ((st = ncc_si_check_same_dtype(c, 0, 4)) || (st = ncc_si_check_rank(c, 4, 4)) ||
        (st = ncc_si_check_same_dtype(c, 0, 5)) || (st = ncc_si_check_rank(c, 5, 4)))
      return st;
    int64_t p = IN(c, 4)->shape.d[2];
    if (!is_static(p) || !is_static(l)) {
      if ((st = ncc_si_fresh_dim(c, &total))) return st;
    } else {
      total = p + l;
    }
  }
  ncc_shape y = *q;
  if (r == 4) y.d[3] = dv;
  else y.d[2] = is_static(dv) && is_static(hq) ? dv * hq : -1;
  if (y.d[r - 1] < 0 && (st = ncc_si_fresh_dim(c, &y.d[r - 1]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &y);
  int64_t dk = r == 4 ? k->d[3] : (is_static(k->d[2]) ? k->d[2] / hkv : -1);
  if (dk < 0 && (st = ncc_si_fresh_dim(c, &dk))) return st;
  ncc_shape pk = {.rank = 4, .d = {b, hkv, total, dk}};
  ncc_shape pv = {.rank = 4, .d = {b, hkv, total, dv}};
  ncc_shape qk = {.rank = 4, .d = {b, hq, s, total}};
  if (c->n->n_out > 1) set_out(c, 1, IN(c, 0)->dtype, &pk);
  if (c->n->n_out > 2) set_out(c, 2, IN(c, 0)->dtype, &pv);
  if (c->n->n_out > 3) set_out(c, 3, IN(c, 0)->dtype, &qk);
  return NCC_OK;
}

/* ---- RotaryEmbedding (opset 23): X [B, H, S, D] or [B, S, H*D];
 * cos/sin caches [B, S, R/2] (no position_ids) or [max_pos, R/2]. ---- */
ncc_status ncc_rule_rotary(ictx *c) {
  ncc_status st;
  ncc_rotary_attrs a;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOATS)) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_attrs_rotary(c->n, &a)))
    return st;
  int r = rank_of(c, 0);
  if (r != 3 && r != 4)
    return ncc_si_fail(c, NCC_ERR_INPUT, "X must have rank 3 or 4, got %d", r);
  if (r == 3 && a.num_heads < 1)
    return ncc_si_fail(c, NCC_ERR_INPUT, "3-D X needs num_heads");
  bool pos = has_in(c, 3);
  if (pos && ((st = ncc_si_check_index(c, 3)) || (st = ncc_si_check_rank(c, 3, 2))))
    return st;
  for (int i = 1; i < 3; i++)
    if ((st = ncc_si_check_rank(c, i, pos ? 2 : 3))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}
