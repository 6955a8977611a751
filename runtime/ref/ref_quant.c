/* runtime/ref/ref_quant.c — reference kernels of the quantization ops:
 * QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
 * ConvInteger, QLinearMatMul, QLinearConv.
 *
 * Rounding is half to even (nearbyint in the default rounding mode), then
 * saturation to the output dtype's range, as ONNX specifies. Integer
 * products are accumulated exactly in int64 (ConvInteger and MatMulInteger
 * outputs are exact); the QLinear ops requantize the exact sum once, in
 * double. Elements are read and written through the generic accessors, so
 * every integer dtype the IR has (i16, u16, ... included) works unchanged.
 */
#include <math.h>
#include <string.h>

#include "../../ir/window.h"
#include "ref.h"

/* [lo, hi] of an integer dtype ("i<bits>" or "u<bits>"). */
static void qrange(ncc_dtype dt, double *lo, double *hi) {
  int bits = (int)ncc_dtype_size(dt) * 8;
  if (ncc_dtype_name(dt)[0] == 'u') {
    *lo = 0;
    *hi = ldexp(1.0, bits) - 1;
  } else {
    *lo = -ldexp(1.0, bits - 1);
    *hi = ldexp(1.0, bits - 1) - 1;
  }
}

/* round half to even, add the zero point, saturate */
static int64_t requant(double v, double zp, double lo, double hi) {
  if (isnan(v)) v = 0;
  v = nearbyint(v) + zp;
  return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

/* Index of x's element i in its scale / zero point: per-tensor, per-axis
 * (1-D along axis) or blocked (x's rank, axis divided by block). */
static int64_t qindex(const ncc_tensor *x, const ncc_tensor *s, int axis,
                      int64_t block, int64_t i) {
  if (ncc_tensor_numel(s) == 1 && s->rank <= 1 && block == 0) return 0;
  int64_t xs[NCC_MAX_RANK];
  ncc_ref_strides(x, xs);
  if (block == 0) return (i / xs[axis]) % x->dims[axis];
  int64_t ss[NCC_MAX_RANK], j = 0;
  ncc_ref_strides(s, ss);
  for (int d = 0; d < x->rank; d++) {
    int64_t c = (i / xs[d]) % x->dims[d];
    if (d == axis) c /= block;
    j += c * ss[d];
  }
  return j;
}

static int quant_axis(const ncc_node *n, const ncc_tensor *x, ncc_quant_attrs *qa) {
  ncc_status st = ncc_attrs_quant(n, qa);
  NCC_ASSERT(st == NCC_OK);
  (void)st;
  if (x->rank == 0) return 0;
  return (int)(qa->axis < 0 ? qa->axis + x->rank : qa->axis);
}

ncc_status ncc_ref_QUANTIZELINEAR(const ncc_node *n, const ncc_tensor *const *in,
                                  ncc_tensor *out) {
  const ncc_tensor *x = in[0], *s = in[1], *zp = n->n_in > 2 ? in[2] : NULL;
  ncc_quant_attrs qa;
  int axis = quant_axis(n, x, &qa);
  double lo, hi;
  qrange(out->dtype, &lo, &hi);
  /* x / scale in x's float precision (f32 models divide in f32), then
   * rounded once more by nearbyint */
  bool f32 = x->dtype == NCC_DT_F32 || x->dtype == NCC_DT_F16;
  int64_t numel = ncc_tensor_numel(x);
  for (int64_t i = 0; i < numel; i++) {
    int64_t k = qindex(x, s, axis, qa.block_size, i);
    double q = ncc_ref_get_f(x, i) / ncc_ref_get_f(s, k);
    if (f32) q = (float)q;
    double z = zp ? (double)ncc_ref_get_i(zp, k) : 0.0;
    ncc_ref_set_i(out, i, requant(q, z, lo, hi));
  }
  return NCC_OK;
}

ncc_status ncc_ref_DEQUANTIZELINEAR(const ncc_node *n, const ncc_tensor *const *in,
                                    ncc_tensor *out) {
  const ncc_tensor *x = in[0], *s = in[1], *zp = n->n_in > 2 ? in[2] : NULL;
  ncc_quant_attrs qa;
  int axis = quant_axis(n, x, &qa);
  int64_t numel = ncc_tensor_numel(x);
  for (int64_t i = 0; i < numel; i++) {
    int64_t k = qindex(x, s, axis, qa.block_size, i);
    int64_t v = ncc_ref_get_i(x, i) - (zp ? ncc_ref_get_i(zp, k) : 0);
    /* one rounding: the exact (x - zp) * scale rounded to the output */
    ncc_ref_set_f(out, i, (double)v * ncc_ref_get_f(s, k));
  }
  return NCC_OK;
}

/* u8 quantization of x's range widened to include 0, as ONNX and ONNX
 * Runtime compute it (in f32). An all-zero x gets scale 1 as in ONNX
 * Runtime (ONNX's reference gives 1/255; y and the zero point are 0
 * either way). */
ncc_status ncc_ref_DYNAMICQUANTIZELINEAR(const ncc_node *n, const ncc_tensor *const *in,
                                         ncc_tensor *out) {
  (void)n;
  const ncc_tensor *x = in[0];
  int64_t numel = ncc_tensor_numel(x);
  float mn = 0, mx = 0;
  for (int64_t i = 0; i < numel; i++) {
    float v = (float)ncc_ref_get_f(x, i);
    if (v < mn) mn = v;
    if (v > mx) mx = v;
  }
  float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
  float zpf = 0.0f - mn / scale;
  /* clamped as ONNX Runtime's max(0, min(255, zpf)) does, so the NaN of a
   * range below the smallest scale (0 / 0) or of an infinite one (inf /
   * inf) becomes 255 */
  zpf = zpf < 255 ? zpf : 255;
  zpf = 0 < zpf ? zpf : 0;
  double zp = nearbyint(zpf);
  for (int64_t i = 0; i < numel; i++)
    ncc_ref_set_i(&out[0], i, requant((float)(ncc_ref_get_f(x, i) / scale), zp, 0, 255));
  ncc_ref_set_f(&out[1], 0, scale);
  ncc_ref_set_i(&out[2], 0, (int64_t)zp);
  return NCC_OK;
}

/* ---- integer matmul ---- */

/* zero point of row/column r: scalar, or one per row/column */
static int64_t zp_at(const ncc_tensor *zp, int64_t r) {
  if (!zp) return 0;
  return ncc_ref_get_i(zp, ncc_tensor_numel(zp) == 1 ? 0 : r);
}

/* Exact batched (A - azp) @ (B - bzp) with MatMul's broadcasting; acc
 * receives out's numel int64 sums. */
static void int_matmul(const ncc_tensor *a, const ncc_tensor *b, const ncc_tensor *azp,
                       const ncc_tensor *bzp, const ncc_tensor *out, int64_t *acc) {
  int64_t M = a->rank == 1 ? 1 : a->dims[a->rank - 2], K = a->dims[a->rank - 1];
  int64_t N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  /* batch dims of the output: all but the matrix dims it keeps */
  int orank = out->rank - (a->rank > 1) - (b->rank > 1);
  int64_t bat = 1;
  for (int d = 0; d < orank; d++) bat *= out->dims[d];
  int abr = a->rank > 2 ? a->rank - 2 : 0, bbr = b->rank > 2 ? b->rank - 2 : 0;
  for (int64_t p = 0; p < bat; p++) {
    /* unravel p over the output batch dims into A's and B's batch offsets */
    int64_t rest = p, ao = 0, bo = 0, as = M * K, bs = K * N;
    for (int d = orank - 1; d >= 0; d--) {
      int64_t c = rest % out->dims[d];
      rest /= out->dims[d];
      int da = d - (orank - abr), db = d - (orank - bbr);
      if (da >= 0) {
        if (a->dims[da] != 1) ao += c * as;
        as *= a->dims[da];
      }
      if (db >= 0) {
        if (b->dims[db] != 1) bo += c * bs;
        bs *= b->dims[db];
      }
    }
    for (int64_t m = 0; m < M; m++)
      for (int64_t j = 0; j < N; j++) {
        int64_t s = 0;
        for (int64_t k = 0; k < K; k++)
          s += (ncc_ref_get_i(a, ao + m * K + k) - zp_at(azp, m)) *
               (ncc_ref_get_i(b, bo + k * N + j) - zp_at(bzp, j));
        acc[(p * M + m) * N + j] = s;
      }
  }
}

ncc_status ncc_ref_MATMULINTEGER(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  int64_t numel = ncc_tensor_numel(out);
  int64_t *acc = ncc_calloc((size_t)(numel ? numel : 1), sizeof *acc);
  if (!acc) return NCC_ERR_NOMEM;
  int_matmul(in[0], in[1], n->n_in > 2 ? in[2] : NULL, n->n_in > 3 ? in[3] : NULL, out, acc);
  for (int64_t i = 0; i < numel; i++) ncc_ref_set_i(out, i, acc[i]);
  ncc_free(acc, 0);
  return NCC_OK;
}

/* f32 scales combined as ONNX Runtime does, in f32 */
static double multiplier(const ncc_tensor *sa, int64_t ia, const ncc_tensor *sb,
                         int64_t ib, const ncc_tensor *sy) {
  float m = (float)ncc_ref_get_f(sa, ia) * (float)ncc_ref_get_f(sb, ib);
  return (float)(m / (float)ncc_ref_get_f(sy, 0));
}

ncc_status ncc_ref_QLINEARMATMUL(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  (void)n;
  int64_t numel = ncc_tensor_numel(out);
  int64_t *acc = ncc_calloc((size_t)(numel ? numel : 1), sizeof *acc);
  if (!acc) return NCC_ERR_NOMEM;
  const ncc_tensor *b = in[3];
  int64_t N = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  int64_t M = in[0]->rank == 1 ? 1 : in[0]->dims[in[0]->rank - 2];
  int_matmul(in[0], b, in[2], in[5], out, acc);
  double lo, hi, yzp = (double)ncc_ref_get_i(in[7], 0);
  qrange(out->dtype, &lo, &hi);
  for (int64_t i = 0; i < numel; i++) {
    int64_t m = (i / N) % M, j = i % N;
    int64_t ia = ncc_tensor_numel(in[1]) == 1 ? 0 : m;
    int64_t ib = ncc_tensor_numel(in[4]) == 1 ? 0 : j;
    ncc_ref_set_i(out, i, requant((double)acc[i] * multiplier(in[1], ia, in[4], ib, in[6]),
                                  yzp, lo, hi));
  }
  ncc_free(acc, 0);
  return NCC_OK;
}

/* ---- integer convolution ---- */

/* Exact grouped convolution of (x - xzp) and (w - wzp[m]) plus bias into
 * acc (out's numel). The window is the Conv view of the node. */
static ncc_status int_conv(const ncc_node *n, const ncc_tensor *x, const ncc_tensor *w,
                           const ncc_tensor *xzp, const ncc_tensor *wzp,
                           const ncc_tensor *bias, const ncc_tensor *out, int64_t *acc) {
  int k = x->rank - 2;
  ncc_node conv = *n; /* ncc_window_decode reads a Conv's attributes */
  conv.op = NCC_OP_CONV;
  ncc_window win;
  ncc_status st = ncc_window_decode(&conv, k, w->dims + 2, &win);
  if (st) return st;
  int64_t pb[NCC_MAX_RANK], pe[NCC_MAX_RANK];
  for (int i = 0; i < k; i++)
    ncc_window_pads(&win, i, x->dims[i + 2], out->dims[i + 2], &pb[i], &pe[i]);
  int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], G = win.group;
  int64_t cg = C / G, mg = M / G, osp = 1, ksp = 1, isp = 1;
  for (int i = 0; i < k; i++) {
    osp *= out->dims[i + 2];
    ksp *= w->dims[i + 2];
    isp *= x->dims[i + 2];
  }
  int64_t xz = zp_at(xzp, 0);
  for (int64_t b = 0; b < N; b++)
    for (int64_t m = 0; m < M; m++) {
      int64_t wz = zp_at(wzp, m), g = m / mg;
      for (int64_t o = 0; o < osp; o++) {
        int64_t oc[NCC_MAX_RANK], rest = o;
        for (int i = k - 1; i >= 0; i--) {
          oc[i] = rest % out->dims[i + 2];
          rest /= out->dims[i + 2];
        }
        int64_t s = bias ? ncc_ref_get_i(bias, m) : 0;
        for (int64_t c = 0; c < cg; c++)
          for (int64_t q = 0; q < ksp; q++) {
            int64_t r = q, xi = 0;
            bool inside = true;
            for (int i = k - 1; i >= 0; i--) {
              int64_t kc = r % w->dims[i + 2];
              r /= w->dims[i + 2];
              int64_t pos = oc[i] * win.stride[i] - pb[i] + kc * win.dilation[i];
              if (pos < 0 || pos >= x->dims[i + 2]) inside = false;
              int64_t str = 1;
              for (int j = i + 1; j < k; j++) str *= x->dims[j + 2];
              xi += pos * str;
            }
            if (!inside) continue; /* padding holds the zero point: adds 0 */
            int64_t xv = ncc_ref_get_i(x, (b * C + g * cg + c) * isp + xi) - xz;
            int64_t wv = ncc_ref_get_i(w, (m * cg + c) * ksp + q) - wz;
            s += xv * wv;
          }
        acc[(b * M + m) * osp + o] = s;
      }
    }
  return NCC_OK;
}

ncc_status ncc_ref_CONVINTEGER(const ncc_node *n, const ncc_tensor *const *in,
                               ncc_tensor *out) {
  int64_t numel = ncc_tensor_numel(out);
  int64_t *acc = ncc_calloc((size_t)(numel ? numel : 1), sizeof *acc);
  if (!acc) return NCC_ERR_NOMEM;
  ncc_status st = int_conv(n, in[0], in[1], n->n_in > 2 ? in[2] : NULL,
                           n->n_in > 3 ? in[3] : NULL, NULL, out, acc);
  for (int64_t i = 0; !st && i < numel; i++) ncc_ref_set_i(out, i, acc[i]);
  ncc_free(acc, 0);
  return st;
}

ncc_status ncc_ref_QLINEARCONV(const ncc_node *n, const ncc_tensor *const *in,
                               ncc_tensor *out) {
  int64_t numel = ncc_tensor_numel(out);
  int64_t *acc = ncc_calloc((size_t)(numel ? numel : 1), sizeof *acc);
  if (!acc) return NCC_ERR_NOMEM;
  ncc_status st = int_conv(n, in[0], in[3], in[2], in[5], n->n_in > 8 ? in[8] : NULL,
                           out, acc);
  double lo, hi, yzp = (double)ncc_ref_get_i(in[7], 0);
  qrange(out->dtype, &lo, &hi);
  int64_t M = out->dims[1], osp = 1;
  for (int i = 2; i < out->rank; i++) osp *= out->dims[i];
  for (int64_t i = 0; !st && i < numel; i++) {
    int64_t m = (i / osp) % M;
    int64_t iw = ncc_tensor_numel(in[4]) == 1 ? 0 : m;
    ncc_ref_set_i(out, i, requant((double)acc[i] * multiplier(in[1], 0, in[4], iw, in[6]),
                                  yzp, lo, hi));
  }
  ncc_free(acc, 0);
  return st;
}
