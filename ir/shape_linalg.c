/* ir/shape_linalg.c — contraction and window rules: MatMul, Gemm, Conv, MaxPool,
 * AveragePool, GlobalAveragePool (the window is ir/window.c's view).
 */
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"
#include "window.h"

/* ------------------------------------------------------------------------ */
/* contractions and convolution                                              */


ncc_status ncc_rule_matmul(ictx *c) {
  ncc_status st;
  /* ONNX MatMul: floats and (u)int32/64 */
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOATS | DT(I32) | DT(I64) | DT(U32) | DT(U64))) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 1)) || (st = ncc_si_check_min_rank(c, 1, 1)))
    return st;
  ncc_shape a = IN(c, 0)->shape, b = IN(c, 1)->shape;
  int ra = a.rank, rb = b.rank;
  if (ra == 1) { /* [K] -> [1, K] */
    a.rank = 2;
    a.d[1] = a.d[0];
    a.d[0] = 1;
  }
  if (rb == 1) { /* [K] -> [K, 1] */
    b.rank = 2;
    b.d[1] = 1;
  }
  int64_t k;
  if (!ncc_si_merge_dim(c->g, a.d[a.rank - 1], b.d[b.rank - 2], &k)) {
    char sa[256], sb[256];
    return ncc_si_fail(c, NCC_ERR_INPUT, "inner dims differ: %s x %s",
                ncc_si_fmt_shape(c->g, &IN(c, 0)->shape, sa, sizeof sa),
                ncc_si_fmt_shape(c->g, &IN(c, 1)->shape, sb, sizeof sb));
  }
  ncc_shape ba = {.rank = a.rank - 2}, bb = {.rank = b.rank - 2}, o;
  memcpy(ba.d, a.d, sizeof(int64_t) * (size_t)ba.rank);
  memcpy(bb.d, b.d, sizeof(int64_t) * (size_t)bb.rank);
  if (ncc_broadcast_shapes(c->g, &ba, &bb, &o)) {
    ncc_error_prefix("%s: batch dims", ncc_si_label(c));
    return NCC_ERR_INPUT;
  }
  if (ra > 1) o.d[o.rank++] = a.d[a.rank - 2];
  if (rb > 1) {
    if ((st = ncc_si_check_out_rank(c, o.rank + 1))) return st;
    o.d[o.rank++] = b.d[b.rank - 1];
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

ncc_status ncc_rule_gemm(ictx *c) {
  ncc_status st;
  ncc_gemm_attrs ga;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOAT)) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_rank(c, 0, 2)) || (st = ncc_si_check_rank(c, 1, 2)) ||
      (st = ncc_attrs_gemm(c->n, &ga)))
    return st;
  bool ta = ga.trans_a, tb = ga.trans_b;
  const int64_t *A = IN(c, 0)->shape.d, *B = IN(c, 1)->shape.d;
  int64_t m = A[ta], ka = A[!ta], kb = B[tb], n = B[!tb], k;
  if (!ncc_si_merge_dim(c->g, ka, kb, &k))
    return ncc_si_fail(c, NCC_ERR_INPUT, "inner dims differ: %lld vs %lld",
                (long long)ka, (long long)kb);
  ncc_shape o = {.rank = 2, .d = {m, n}};
  if (has_in(c, 2) &&
      ((st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_si_check_unidir(c, 2, &o))))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* Output size of spatial dim i for input size `in`. */
static ncc_status window_dim(ictx *c, const ncc_window *w, int i, int64_t in,
                             int64_t *out) {
  int64_t s = w->stride[i], pb = w->pad_begin[i], pe = w->pad_end[i];
  int64_t eff = ncc_window_extent(w, i);
  if (!is_static(in)) {
    /* Only "same"-sized windows keep a symbolic dim. */
    bool same =
        s == 1 && ((w->auto_pad == NCC_AUTO_PAD_NOTSET && pb + pe == eff - 1) ||
                   w->auto_pad == NCC_AUTO_PAD_SAME_UPPER || w->auto_pad == NCC_AUTO_PAD_SAME_LOWER ||
                   (w->auto_pad == NCC_AUTO_PAD_VALID && eff == 1));
    if (same) {
      *out = in;
      return NCC_OK;
    }
    return ncc_si_fresh_dim(c, out);
  }
  if (w->auto_pad == NCC_AUTO_PAD_SAME_UPPER || w->auto_pad == NCC_AUTO_PAD_SAME_LOWER) {
    *out = in / s + (in % s != 0);
    return NCC_OK;
  }
  int64_t padded;
  if (__builtin_add_overflow(in, pb + pe, &padded))
    return ncc_si_fail(c, NCC_ERR_INPUT, "spatial dim %d is too large", i);
  if (padded < eff)
    return ncc_si_fail(c, NCC_ERR_INPUT,
                "spatial dim %d (%lld, padded %lld) is smaller than the kernel "
                "extent %lld",
                i, (long long)in, (long long)padded, (long long)eff);
  int64_t span = padded - eff;
  int64_t o = span / s + 1;
  if (w->ceil_mode && span % s) {
    o++;
    /* The last window must start inside the input or its left padding
     * (PyTorch's and ONNX Runtime's rule): (o-1)*s < in + pb. */
    int64_t lim = in + pb; /* <= padded: no overflow */
    if (o - 1 >= lim / s + (lim % s != 0)) o--;
  }
  *out = o;
  return NCC_OK;
}

ncc_status ncc_rule_conv(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOAT)) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 3)) || (st = ncc_si_check_rank(c, 1, rank_of(c, 0))))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape, *wt = &IN(c, 1)->shape;
  ncc_window w;
  if ((st = ncc_window_decode(c->n, x->rank - 2, wt->d + 2, &w))) return st;
  int64_t group = w.group;
  int64_t ch = x->d[1], wc = wt->d[1], m = wt->d[0];
  if (is_static(ch) && is_static(wc) && (ch % group != 0 || ch / group != wc))
    return ncc_si_fail(
        c, NCC_ERR_INPUT,
        "input has %lld channels but the weight expects %lld x group %lld",
        (long long)ch, (long long)wc, (long long)group);
  if (is_static(m) && m % group != 0)
    return ncc_si_fail(c, NCC_ERR_INPUT,
                "group %lld does not divide the %lld output channels",
                (long long)group, (long long)m);
  if (has_in(c, 2)) {
    int64_t r;
    if ((st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_si_check_rank(c, 2, 1)))
      return st;
    if (!ncc_si_merge_dim(c->g, IN(c, 2)->shape.d[0], m, &r))
      return ncc_si_fail(c, NCC_ERR_INPUT, "bias has %lld entries, expected %lld",
                  (long long)IN(c, 2)->shape.d[0], (long long)m);
  }
  ncc_shape o = {.rank = x->rank, .d = {x->d[0], m}};
  for (int i = 0; i < w.rank; i++)
    if ((st = window_dim(c, &w, i, x->d[i + 2], &o.d[i + 2]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* MaxPool (optional i64 Indices output), AveragePool. */
ncc_status ncc_rule_pool(ictx *c) {
  ncc_status st;
  /* MaxPool: ONNX's f16/bf16/f32/f64/i8/u8 (ref computes them exactly) */
  unsigned mask = c->n->op == NCC_OP_MAXPOOL ? DT_FLOATS | DT(I8) | DT(U8) : DT_FLOAT;
  if ((st = ncc_si_check_dtype(c, 0, mask)) || (st = ncc_si_check_min_rank(c, 0, 3)))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  ncc_window w;
  ncc_pool_attrs pa;
  if ((st = ncc_attrs_pool(c->n, &pa)) || (st = ncc_window_decode(c->n, x->rank - 2, NULL, &w))) return st;
  ncc_shape o = *x;
  for (int i = 0; i < w.rank; i++)
    if ((st = window_dim(c, &w, i, x->d[i + 2], &o.d[i + 2]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  if (c->n->n_out > 1) set_out(c, 1, NCC_DT_I64, &o);
  return NCC_OK;
}

ncc_status ncc_rule_global_pool(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_FLOAT)) || (st = ncc_si_check_min_rank(c, 0, 3)))
    return st;
  ncc_shape o = IN(c, 0)->shape;
  for (int i = 2; i < o.rank; i++) o.d[i] = 1;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}
