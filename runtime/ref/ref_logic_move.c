/* runtime/ref/ref_logic_move.c — reference kernels of Hardmax, Trilu,
 * CumSum, Tile, OneHot, EyeLike, Size and Dropout (inference).
 *
 * Data that is only moved or selected (Trilu, Tile, OneHot's values,
 * Dropout) is copied as bytes, so every dtype works unchanged; arithmetic
 * (CumSum) and constants (Hardmax, EyeLike) go through the ref_util.c
 * accessors.
 */
#include <math.h>
#include <string.h>

#include "../../ir/f16.h"
#include "ref.h"

static bool is_fp(ncc_dtype dt) {
  const char *nm = ncc_dtype_name(dt);
  return nm[0] == 'f' || strcmp(nm, "bf16") == 0;
}

/* Product of dims [lo, hi). */
static int64_t span(const ncc_tensor *t, int lo, int hi) {
  int64_t p = 1;
  for (int i = lo; i < hi; i++) p = ncc_ref_dim_mul(p, t->dims[i]);
  return p;
}

static int norm_axis(int64_t axis, int rank) {
  return (int)(axis < 0 ? axis + rank : axis);
}

/* Hardmax: 1 at the first maximum along the axis, 0 elsewhere; NaN is the
 * maximum where it occurs (numpy's argmax, which ONNX's reference uses). */
ncc_status ncc_ref_HARDMAX(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  ncc_logic_attrs at;
  ncc_status st = ncc_attrs_logic(n, &at);
  if (st) return st;
  const ncc_tensor *x = in[0];
  int ax = norm_axis(at.axis, x->rank);
  int64_t outer = span(x, 0, ax), len = x->dims[ax], inner = span(x, ax + 1, x->rank);
  memset(out->data, 0, ncc_tensor_nbytes(out));
  if (len == 0) return NCC_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * len * inner + i, best = 0;
      double bv = ncc_ref_get_f(x, base);
      for (int64_t k = 1; k < len && !isnan(bv); k++) {
        double v = ncc_ref_get_f(x, base + k * inner);
        if (v > bv || isnan(v)) bv = v, best = k;
      }
      ncc_ref_set_f(out, base + best * inner, 1.0);
    }
  return NCC_OK;
}

/* Trilu: keep element (i, j) of each trailing matrix where j - i >= k
 * (upper) or j - i <= k (lower), zero elsewhere. */
ncc_status ncc_ref_TRILU(const ncc_node *n, const ncc_tensor *const *in,
                         ncc_tensor *out) {
  ncc_logic_attrs at;
  ncc_status st = ncc_attrs_logic(n, &at);
  if (st) return st;
  const ncc_tensor *x = in[0];
  int64_t k = n->n_in > 1 && in[1] ? ncc_ref_get_i(in[1], 0) : 0;
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  int64_t mats = span(x, 0, x->rank - 2);
  size_t es = ncc_dtype_size(x->dtype);
  memset(out->data, 0, ncc_tensor_nbytes(out));
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        /* j - i without overflow: |i|, |j| < 2^62 for any tensor in memory */
        bool keep = at.upper ? j - i >= k : j - i <= k;
        if (!keep) continue;
        size_t e = (size_t)((m * rows + i) * cols + j) * es;
        memcpy((char *)out->data + e, (const char *)x->data + e, es);
      }
  return NCC_OK;
}

/* acc rounded to dt after each step, as the dtype's own accumulation does
 * (numpy's cumsum, ONNX Runtime). */
static double round_to(ncc_dtype dt, double v) {
  if (dt == NCC_DT_F32) return (float)v;
  if (dt == NCC_DT_F16) return ncc_f16_to_f64(ncc_f16_from_f64(v));
  return v;
}

/* CumSum along the axis (input 1), optionally exclusive and/or reversed;
 * integers wrap. */
ncc_status ncc_ref_CUMSUM(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  ncc_logic_attrs at;
  ncc_status st = ncc_attrs_logic(n, &at);
  if (st) return st;
  const ncc_tensor *x = in[0];
  int64_t a = ncc_ref_get_i(in[1], 0);
  if (a < -(int64_t)x->rank || a >= x->rank)
    return ncc_node_error(n, NCC_ERR_INPUT, "axis %lld is out of range for rank %d",
                          (long long)a, x->rank);
  int ax = norm_axis(a, x->rank);
  int64_t outer = span(x, 0, ax), len = x->dims[ax], inner = span(x, ax + 1, x->rank);
  bool fp = is_fp(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double facc = 0;
      int64_t iacc = 0;
      for (int64_t s = 0; s < len; s++) {
        int64_t kk = at.reverse ? len - 1 - s : s;
        int64_t e = (o * len + kk) * inner + i;
        if (fp) {
          double v = ncc_ref_get_f(x, e);
          if (!at.exclusive) facc = round_to(x->dtype, facc + v);
          ncc_ref_set_f(out, e, facc);
          if (at.exclusive) facc = round_to(x->dtype, facc + v);
        } else {
          int64_t v = ncc_ref_get_i(x, e);
          if (!at.exclusive) iacc = (int64_t)((uint64_t)iacc + (uint64_t)v);
          ncc_ref_set_i(out, e, iacc);
          if (at.exclusive) iacc = (int64_t)((uint64_t)iacc + (uint64_t)v);
        }
      }
    }
  return NCC_OK;
}

/* Tile: output element (c_0 .. c_r-1) is input element (c_i mod d_i). */
ncc_status ncc_ref_TILE(const ncc_node *n, const ncc_tensor *const *in,
                        ncc_tensor *out) {
  (void)n;
  const ncc_tensor *x = in[0];
  int r = x->rank;
  int64_t cnt = ncc_tensor_numel(out);
  if (cnt <= 0) return NCC_OK;
  size_t es = ncc_dtype_size(x->dtype);
  int64_t st[NCC_MAX_RANK], coord[NCC_MAX_RANK] = {0}, icoord[NCC_MAX_RANK] = {0};
  int64_t src = 0; /* input element of the output element at coord */
  ncc_ref_strides(x, st);
  for (int64_t i = 0; i < cnt; i++) {
    memcpy((char *)out->data + (size_t)i * es, (const char *)x->data + (size_t)src * es, es);
    for (int d = r - 1; d >= 0; d--) { /* next output coordinate */
      src += st[d];
      if (++icoord[d] == x->dims[d]) { /* the input axis wraps around */
        src -= st[d] * x->dims[d];
        icoord[d] = 0;
      }
      if (++coord[d] < out->dims[d]) break;
      src -= st[d] * icoord[d]; /* the output axis is done: back to 0 */
      coord[d] = icoord[d] = 0;
    }
  }
  return NCC_OK;
}

/* OneHot: values[0] everywhere, values[1] where the coordinate along
 * `axis` equals the index (negative ones count from depth; indices
 * outside [-depth, depth) select nothing). Float indices truncate. */
ncc_status ncc_ref_ONEHOT(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  ncc_logic_attrs at;
  ncc_status st = ncc_attrs_logic(n, &at);
  if (st) return st;
  const ncc_tensor *idx = in[0], *vals = in[2];
  int ax = norm_axis(at.axis, out->rank);
  int64_t depth = out->dims[ax];
  int64_t outer = span(out, 0, ax), inner = span(out, ax + 1, out->rank);
  size_t es = ncc_dtype_size(out->dtype);
  const char *off = vals->data, *on = (const char *)vals->data + es;
  int64_t cnt = ncc_tensor_numel(out);
  for (int64_t i = 0; i < cnt; i++) memcpy((char *)out->data + (size_t)i * es, off, es);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t v = ncc_ref_get_i(idx, o * inner + i);
      if (v < 0) v += depth;
      if (v < 0 || v >= depth) continue;
      memcpy((char *)out->data + (size_t)((o * depth + v) * inner + i) * es, on, es);
    }
  return NCC_OK;
}

/* EyeLike: ones on diagonal k (j = i + k), zeros elsewhere. */
ncc_status ncc_ref_EYELIKE(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  ncc_logic_attrs at;
  ncc_status st = ncc_attrs_logic(n, &at);
  if (st) return st;
  (void)in;
  int64_t rows = out->dims[0], cols = out->dims[1];
  memset(out->data, 0, ncc_tensor_nbytes(out));
  for (int64_t i = 0; i < rows; i++) {
    if (at.k > cols || at.k < -rows) break; /* no diagonal inside (and no overflow) */
    int64_t j = i + at.k;
    if (j >= 0 && j < cols) ncc_ref_set_i(out, i * cols + j, 1);
  }
  return NCC_OK;
}

ncc_status ncc_ref_SIZE(const ncc_node *n, const ncc_tensor *const *in,
                        ncc_tensor *out) {
  (void)n;
  ncc_ref_set_i(out, 0, ncc_tensor_numel(in[0]));
  return NCC_OK;
}

/* Dropout outside training: y = x, mask all true. training_mode=true with
 * ratio 0 is the same; with a nonzero ratio the output would be random. */
ncc_status ncc_ref_DROPOUT(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  const ncc_tensor *ratio = n->n_in > 1 ? in[1] : NULL;
  const ncc_tensor *train = n->n_in > 2 ? in[2] : NULL;
  if (train && ncc_ref_get_i(train, 0)) {
    double r = ratio ? ncc_ref_get_f(ratio, 0) : 0.5;
    if (r != 0)
      return ncc_node_error(n, NCC_ERR_UNSUPPORTED,
                            "Dropout in training mode (training_mode=true, ratio=%g) is "
                            "not supported: its output is random",
                            r);
  }
  memcpy(out[0].data, in[0]->data, ncc_tensor_nbytes(&out[0]));
  if (n->n_out > 1 && n->out[1] && out[1].data) memset(out[1].data, 1, ncc_tensor_nbytes(&out[1]));
  return NCC_OK;
}
