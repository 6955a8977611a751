/* runtime/ref/ref_misc.c — reference kernels of Det, Col2Im, CenterCropPad,
 * AffineGrid, MaxUnpool, MaxRoiPool, NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss. Arithmetic in double, rounded once on store. */
#include <math.h>
#include <string.h>

#include "../../ir/window.h"
#include "ref.h"

/* A float coordinate as an int64, saturated (NaN: 0): user data may hold
 * anything, and an out-of-range conversion is undefined in C. */
static int64_t to_i64(double v) {
  if (!(v == v)) return 0;
  return v < -0x1p52 ? -(INT64_C(1) << 52) : v > 0x1p52 ? INT64_C(1) << 52 : (int64_t)v;
}

static void zero(ncc_tensor *t) {
  size_t nb = (size_t)ncc_tensor_numel(t) * ncc_dtype_size(t->dtype);
  if (nb) memset(t->data, 0, nb);
}

/* Det of each trailing M x M matrix: LU with partial pivoting. */
ncc_status ncc_ref_DET(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  (void)n;
  const ncc_tensor *x = in[0];
  int64_t m = x->dims[x->rank - 1], count = ncc_tensor_numel(out);
  double *a = ncc_calloc((size_t)(m > 0 ? m * m : 1), sizeof *a);
  if (!a) return NCC_ERR_NOMEM;
  for (int64_t b = 0; b < count; b++) {
    for (int64_t i = 0; i < m * m; i++) a[i] = ncc_ref_get_f(x, b * m * m + i);
    double det = 1;
    for (int64_t k = 0; k < m && det != 0; k++) {
      int64_t p = k;
      for (int64_t i = k + 1; i < m; i++)
        if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
      if (a[p * m + k] == 0) {
        det = 0;
        break;
      }
      if (p != k) {
        for (int64_t j = 0; j < m; j++) {
          double t = a[k * m + j];
          a[k * m + j] = a[p * m + j];
          a[p * m + j] = t;
        }
        det = -det;
      }
      det *= a[k * m + k];
      for (int64_t i = k + 1; i < m; i++) {
        double f = a[i * m + k] / a[k * m + k];
        for (int64_t j = k; j < m; j++) a[i * m + j] -= f * a[k * m + j];
      }
    }
    ncc_ref_set_f(out, b, det);
  }
  ncc_free(a, 0);
  return NCC_OK;
}

/* Col2Im: each column of x (one block position) added into the image.
 * The block walk is the Conv window with the block as kernel. */
ncc_status ncc_ref_COL2IM(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  int k = out->rank - 2;
  int64_t blk[NCC_MAX_RANK] = {0}, nb[NCC_MAX_RANK] = {0}, K = 1, L = x->dims[2];
  for (int i = 0; i < k; i++) {
    blk[i] = ncc_ref_get_i(in[2], i);
    K *= blk[i];
  }
  ncc_node conv = *n; /* the window view reads Conv's attributes */
  conv.op = NCC_OP_CONV;
  ncc_window w;
  ncc_status st = ncc_window_decode(&conv, k, blk, &w);
  if (st) return st;
  int64_t total = 1;
  for (int i = 0; i < k; i++) {
    nb[i] = (out->dims[i + 2] + w.pad_begin[i] + w.pad_end[i] - ncc_window_extent(&w, i)) /
                w.stride[i] + 1;
    total *= nb[i] < 0 ? 0 : nb[i];
  }
  if (total != L)
    return ncc_error(NCC_ERR_INPUT, "Col2Im: input has %lld blocks, the image %lld",
                     (long long)L, (long long)total);
  zero(out);
  int64_t N = out->dims[0], C = out->dims[1], isp = 1;
  for (int i = 0; i < k; i++) isp *= out->dims[i + 2];
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t q = 0; q < K; q++)
        for (int64_t l = 0; l < L; l++) {
          int64_t rq = q, rl = l, off = 0, str = 1;
          bool inside = true;
          for (int i = k - 1; i >= 0; i--) {
            int64_t kc = rq % blk[i], lc = rl % nb[i];
            rq /= blk[i];
            rl /= nb[i];
            int64_t pos = lc * w.stride[i] - w.pad_begin[i] + kc * w.dilation[i];
            if (pos < 0 || pos >= out->dims[i + 2]) inside = false;
            off += pos * str;
            str *= out->dims[i + 2];
          }
          if (!inside) continue;
          int64_t o = (b * C + c) * isp + off;
          ncc_ref_set_f(out, o, ncc_ref_get_f(out, o) +
                                    ncc_ref_get_f(x, ((b * C + c) * K + q) * L + l));
        }
  return NCC_OK;
}

/* CenterCropPad: out[o] = in[o + offset], offset (in - out) / 2 when
 * cropping, -((out - in) / 2) when padding (with zeros). */
ncc_status ncc_ref_CENTERCROPPAD(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  (void)n;
  const ncc_tensor *x = in[0];
  int r = x->rank;
  int64_t off[NCC_MAX_RANK], xs[NCC_MAX_RANK];
  ncc_ref_strides(x, xs);
  for (int d = 0; d < r; d++) {
    int64_t a = x->dims[d], b = out->dims[d];
    off[d] = a >= b ? (a - b) / 2 : -((b - a) / 2);
  }
  size_t es = ncc_dtype_size(x->dtype);
  int64_t numel = ncc_tensor_numel(out);
  for (int64_t i = 0; i < numel; i++) {
    int64_t rest = i, src = 0;
    bool inside = true;
    for (int d = r - 1; d >= 0; d--) {
      int64_t c = rest % out->dims[d] + off[d];
      rest /= out->dims[d];
      if (c < 0 || c >= x->dims[d]) inside = false;
      src += c * xs[d];
    }
    char *dst = (char *)out->data + (size_t)i * es;
    if (inside) memcpy(dst, (const char *)x->data + (size_t)src * es, es);
    else memset(dst, 0, es);
  }
  return NCC_OK;
}

/* AffineGrid: theta applied to the normalized base grid (x along W, then
 * y along H, then z along D). */
ncc_status ncc_ref_AFFINEGRID(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  bool align;
  ncc_status st = ncc_attrs_align_corners(n, &align);
  if (st) return st;
  const ncc_tensor *th = in[0];
  int sp = out->rank - 2; /* 2 or 3 */
  int64_t N = out->dims[0], pts = 1;
  for (int i = 0; i < sp; i++) pts *= out->dims[i + 1];
  for (int64_t b = 0; b < N; b++)
    for (int64_t p = 0; p < pts; p++) {
      double base[4];
      int64_t rest = p;
      for (int i = sp - 1; i >= 0; i--) { /* dims D?, H, W: W is x */
        int64_t len = out->dims[i + 1], c = rest % len;
        rest /= len;
        double v = align ? (len > 1 ? -1.0 + 2.0 * (double)c / (double)(len - 1) : -1.0)
                         : (2.0 * (double)c + 1.0) / (double)len - 1.0;
        base[sp - 1 - i] = v;
      }
      base[sp] = 1.0;
      for (int r = 0; r < sp; r++) {
        double s = 0;
        for (int j = 0; j <= sp; j++)
          s += ncc_ref_get_f(th, (b * sp + r) * (sp + 1) + j) * base[j];
        ncc_ref_set_f(out, (b * pts + p) * sp + r, s);
      }
    }
  return NCC_OK;
}

/* MaxUnpool: x[i] lands at the flat index indices[i] of the unpooled
 * shape ((in - 1) * stride + kernel - pads), which sits at the origin of
 * an explicit output_shape (ONNX's reference; zeros elsewhere). */
ncc_status ncc_ref_MAXUNPOOL(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  int k = x->rank - 2;
  ncc_window w;
  ncc_status st = ncc_window_decode(n, k, NULL, &w);
  if (st) return st;
  int64_t inf[NCC_MAX_RANK] = {x->dims[0], x->dims[1]}, on = 1, os[NCC_MAX_RANK];
  for (int i = 0; i < k; i++)
    inf[i + 2] = (x->dims[i + 2] - 1) * w.stride[i] + w.kernel[i] - w.pad_begin[i] -
                 w.pad_end[i];
  for (int d = 0; d < x->rank; d++) on *= inf[d];
  ncc_ref_strides(out, os);
  zero(out);
  int64_t numel = ncc_tensor_numel(x);
  for (int64_t i = 0; i < numel; i++) {
    int64_t j = ncc_ref_get_i(in[1], i), o = 0;
    if (j < 0 || j >= on)
      return ncc_error(NCC_ERR_INPUT, "MaxUnpool: index %lld is outside the output",
                       (long long)j);
    bool inside = true;
    for (int d = x->rank - 1; d >= 0; d--) {
      int64_t c = j % inf[d];
      j /= inf[d];
      if (c >= out->dims[d]) inside = false;
      o += c * os[d];
    }
    if (inside) ncc_ref_set_f(out, o, ncc_ref_get_f(x, i));
  }
  return NCC_OK;
}

/* MaxRoiPool as ONNX Runtime computes it: box corners rounded half away
 * from zero, bins of (box + 1) / pooled in f32, empty bins 0. */
ncc_status ncc_ref_MAXROIPOOL(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  int64_t pooled[2];
  float scale;
  ncc_status st = ncc_attrs_roipool(n, pooled, &scale);
  if (st) return st;
  const ncc_tensor *x = in[0], *rois = in[1];
  int64_t B = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t R = rois->dims[0], PH = pooled[0], PW = pooled[1];
  for (int64_t r = 0; r < R; r++) {
    int64_t b = ncc_ref_get_i(rois, r * 5);
    if (b < 0 || b >= B)
      return ncc_error(NCC_ERR_INPUT, "MaxRoiPool: roi %lld has batch index %lld",
                       (long long)r, (long long)b);
    int64_t c4[4];
    for (int j = 0; j < 4; j++)
      c4[j] = to_i64(roundf((float)ncc_ref_get_f(rois, r * 5 + 1 + j) * scale));
    int64_t rh = c4[3] - c4[1] + 1, rw = c4[2] - c4[0] + 1;
    rh = rh < 1 ? 1 : rh;
    rw = rw < 1 ? 1 : rw;
    float bh = (float)rh / (float)PH, bw = (float)rw / (float)PW;
    for (int64_t c = 0; c < C; c++)
      for (int64_t ph = 0; ph < PH; ph++)
        for (int64_t pw = 0; pw < PW; pw++) {
          int64_t hs = to_i64(floorf((float)ph * bh)) + c4[1];
          int64_t he = to_i64(ceilf((float)(ph + 1) * bh)) + c4[1];
          int64_t ws = to_i64(floorf((float)pw * bw)) + c4[0];
          int64_t we = to_i64(ceilf((float)(pw + 1) * bw)) + c4[0];
          hs = hs < 0 ? 0 : hs > H ? H : hs;
          he = he < 0 ? 0 : he > H ? H : he;
          ws = ws < 0 ? 0 : ws > W ? W : ws;
          we = we < 0 ? 0 : we > W ? W : we;
          double m = (he <= hs || we <= ws) ? 0 : -INFINITY;
          for (int64_t h = hs; h < he; h++)
            for (int64_t w = ws; w < we; w++) {
              double v = ncc_ref_get_f(x, ((b * C + c) * H + h) * W + w);
              if (v > m) m = v;
            }
          ncc_ref_set_f(out, ((r * C + c) * PH + ph) * PW + pw, m);
        }
  }
  return NCC_OK;
}

/* -logp[n, t, d] * weight[t] per element, reduced; logp is x itself (NLL)
 * or its log-softmax over dim 1 (SCE, computed into lp). */
static ncc_status loss(const ncc_node *n, const ncc_tensor *x, const double *lp,
                       const ncc_tensor *target, const ncc_tensor *weight, ncc_tensor *out) {
  ncc_loss_attrs la;
  ncc_status st = ncc_attrs_loss(n, &la);
  if (st) return st;
  int64_t N = x->dims[0], C = x->dims[1], D = 1;
  for (int i = 2; i < x->rank; i++) D *= x->dims[i];
  double sum = 0, wsum = 0;
  for (int64_t b = 0; b < N; b++)
    for (int64_t d = 0; d < D; d++) {
      int64_t t = ncc_ref_get_i(target, b * D + d), j = b * D + d;
      double l = 0, w = 0;
      if (!(la.has_ignore && t == la.ignore_index)) {
        if (t < 0 || t >= C)
          return ncc_error(NCC_ERR_INPUT, "%s: target %lld is not a class in [0, %lld)",
                           ncc_op_name(n->op), (long long)t, (long long)C);
        int64_t k = (b * C + t) * D + d;
        w = weight ? ncc_ref_get_f(weight, t) : 1.0;
        l = -(lp ? lp[k] : ncc_ref_get_f(x, k)) * w;
      }
      if (la.reduction == NCC_LOSS_NONE) ncc_ref_set_f(out, j, l);
      sum += l;
      wsum += w;
    }
  if (la.reduction == NCC_LOSS_SUM) ncc_ref_set_f(out, 0, sum);
  if (la.reduction == NCC_LOSS_MEAN) ncc_ref_set_f(out, 0, sum / wsum);
  return NCC_OK;
}

ncc_status ncc_ref_NLLLOSS(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return loss(n, in[0], NULL, in[1], n->n_in > 2 ? in[2] : NULL, out);
}

ncc_status ncc_ref_SCELOSS(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  int64_t numel = ncc_tensor_numel(x), N = x->dims[0], C = x->dims[1], D = 1;
  for (int i = 2; i < x->rank; i++) D *= x->dims[i];
  double *lp = ncc_calloc((size_t)(numel ? numel : 1), sizeof *lp);
  if (!lp) return NCC_ERR_NOMEM;
  for (int64_t b = 0; b < N; b++)
    for (int64_t d = 0; d < D; d++) {
      double mx = -INFINITY, s = 0;
      for (int64_t c = 0; c < C; c++) mx = fmax(mx, ncc_ref_get_f(x, (b * C + c) * D + d));
      for (int64_t c = 0; c < C; c++) s += exp(ncc_ref_get_f(x, (b * C + c) * D + d) - mx);
      for (int64_t c = 0; c < C; c++) {
        int64_t k = (b * C + c) * D + d;
        lp[k] = ncc_ref_get_f(x, k) - mx - log(s);
      }
    }
  ncc_status st = loss(n, x, lp, in[1], n->n_in > 2 ? in[2] : NULL, &out[0]);
  if (!st && n->n_out > 1 && out[1].dtype != NCC_DT_UNDEF && out[1].data)
    for (int64_t k = 0; k < numel; k++) ncc_ref_set_f(&out[1], k, lp[k]);
  ncc_free(lp, 0);
  return st;
}
