/* runtime/ref/ref_resize.c — reference kernels of the resampling ops:
 * Resize, Upsample and GridSample.
 *
 * Resize is separable: each resized axis is one pass over a double buffer,
 * where output position y reads n taps at i0 + 1 - n/2 + k (clamped: edge
 * padding) with weights from the mode (nearest: a one-hot pair; linear;
 * cubic with cubic_coeff_a; antialias widens linear/cubic by 1/scale when
 * downsampling), i0 + ratio being the source coordinate x given by the
 * coordinate_transformation_mode (ratio in (0, 1]: an integer x counts as
 * the right tap). This is how ONNX's reference defines every mode.
 * GridSample follows ONNX's reference (and PyTorch's grid_sample).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

#define MAX_TAPS 64 /* antialias taps: 2*ceil(2/scale); scales below 1/16 fall back */

/* Source coordinate of output index y along an axis of in_w -> out_w. */
static double src_coord(const ncc_resize_attrs *a, double y, double scale, int64_t in_w,
                        int64_t out_w, double roi0, double roi1) {
  double ow = scale * (double)in_w;
  switch (a->coord) {
  case NCC_RS_ALIGN_CORNERS: return ow == 1 ? 0 : y * (double)(in_w - 1) / (ow - 1);
  case NCC_RS_ASYMMETRIC: return y / scale;
  case NCC_RS_TF_CROP_AND_RESIZE: {
    double x = ow == 1 ? (roi1 - roi0) * (double)(in_w - 1) / 2
                       : y * (roi1 - roi0) * (double)(in_w - 1) / (ow - 1);
    return x + roi0 * (double)(in_w - 1);
  }
  case NCC_RS_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
  case NCC_RS_HALF_PIXEL_SYMMETRIC: {
    double adj = (double)out_w / ow, center = (double)in_w / 2;
    return center * (1 - adj) + (y + 0.5) / scale - 0.5;
  }
  case NCC_RS_TF_HALF_PIXEL_FOR_NN: return (y + 0.5) / scale;
  case NCC_RS_HALF_PIXEL:
  default: return (y + 0.5) / scale - 0.5;
  }
}

static double cubic_w(double x, double A) {
  x = fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0;
}

/* The taps' weights for ratio r; returns their count. */
static int tap_weights(const ncc_resize_attrs *a, double r, double scale, double *w) {
  if (a->mode == NCC_RS_NEAREST) {
    bool right;
    if (r == 1) right = true;
    else if (a->nearest == NCC_RS_ROUND_PREFER_FLOOR) right = r > 0.5;
    else if (a->nearest == NCC_RS_ROUND_PREFER_CEIL) right = r >= 0.5;
    else right = a->nearest == NCC_RS_CEIL;
    w[0] = !right;
    w[1] = right;
    return 2;
  }
  double s = a->antialias && scale < 1 ? scale : 1;
  if (a->antialias && s < 1.0 / 16) s = 1.0 / 16;
  int start = a->mode == NCC_RS_LINEAR ? (int)floor(-1 / s) + 1 : (int)floor(-2 / s) + 1;
  int n = 2 - 2 * start;
  double sum = 0;
  for (int k = 0; k < n; k++) {
    double t = ((double)(start + k) - r) * s;
    if (a->mode == NCC_RS_LINEAR) w[k] = fmax(0.0, fmin(1.0, 1 - fabs(t)));
    else w[k] = cubic_w(t, a->cubic_a);
    sum += w[k];
  }
  if (a->antialias)
    for (int k = 0; k < n; k++) w[k] /= sum;
  return n;
}

/* One separable pass: src [outer, in_w, inner] -> dst [outer, out_w, inner]. */
static void resize_axis(const ncc_resize_attrs *a, const double *src, double *dst,
                        int64_t outer, int64_t in_w, int64_t out_w, int64_t inner,
                        double scale, double roi0, double roi1) {
  double w[MAX_TAPS];
  for (int64_t y = 0; y < out_w; y++) {
    double x = src_coord(a, (double)y, scale, in_w, out_w, roi0, roi1);
    bool extrap = a->coord == NCC_RS_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(in_w - 1));
    double fx = floor(x), r = x == fx ? 1 : x - fx;
    int64_t i0 = (int64_t)(x - r);
    int n = tap_weights(a, r, scale, w);
    int64_t first = i0 + 1 - n / 2;
    if (a->exclude_outside) {
      double sum = 0;
      for (int k = 0; k < n; k++) {
        if (first + k < 0 || first + k >= in_w) w[k] = 0;
        sum += w[k];
      }
      for (int k = 0; k < n; k++) w[k] /= sum == 0 ? 1 : sum;
    }
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        double acc = 0;
        if (extrap) {
          acc = a->extrapolation;
        } else {
          for (int k = 0; k < n; k++) {
            if (w[k] == 0) continue;
            int64_t j = first + k;
            j = j < 0 ? 0 : j >= in_w ? in_w - 1 : j;
            acc += w[k] * src[(o * in_w + j) * inner + i];
          }
        }
        dst[(o * out_w + y) * inner + i] = acc;
      }
  }
}

static ncc_status resize(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_resize_attrs a;
  ncc_status st = ncc_attrs_resize(n, &a);
  if (st) return st;
  int r = x->rank, na = r, axes[NCC_MAX_RANK];
  for (int i = 0; i < r; i++) axes[i] = i;
  if (a.n_axes >= 0) {
    na = a.n_axes;
    for (int i = 0; i < na; i++) axes[i] = (int)(a.axes[i] < 0 ? a.axes[i] + r : a.axes[i]);
  }
  bool up = n->op == NCC_OP_UPSAMPLE;
  const ncc_tensor *scales = up ? (n->n_in > 1 ? in[1] : NULL) : (n->n_in > 2 ? in[2] : NULL);
  const ncc_tensor *sizes = !up && n->n_in > 3 ? in[3] : NULL;
  const ncc_tensor *roi = !up && n->n_in > 1 ? in[1] : NULL;
  if (scales && ncc_tensor_numel(scales) == 0) scales = NULL;
  if (roi && ncc_tensor_numel(roi) == 0) roi = NULL;
  double sc[NCC_MAX_RANK], keep = a.keep == NCC_RS_NOT_LARGER ? INFINITY : 0;
  for (int i = 0; i < na; i++) {
    int64_t iw = x->dims[axes[i]];
    if (scales) sc[i] = ncc_ref_get_f(scales, i);
    else if (up && a.n_scales >= 0) sc[i] = a.scales[i];
    else sc[i] = (double)ncc_ref_get_i(sizes, i) / (double)iw;
    if (a.keep == NCC_RS_NOT_LARGER && sc[i] < keep) keep = sc[i];
    if (a.keep == NCC_RS_NOT_SMALLER && sc[i] > keep) keep = sc[i];
  }
  if (!scales && !(up && a.n_scales >= 0) && a.keep != NCC_RS_STRETCH)
    for (int i = 0; i < na; i++) sc[i] = keep;
  int64_t total = ncc_tensor_numel(x), cap = total, dims[NCC_MAX_RANK] = {0};
  for (int i = 0; i < r; i++) dims[i] = x->dims[i];
  /* the largest intermediate: grow axis by axis */
  for (int i = 0; i < na; i++) {
    int64_t t = dims[axes[i]] ? total / dims[axes[i]] * out->dims[axes[i]] : 0;
    total = t;
    dims[axes[i]] = out->dims[axes[i]];
    if (t > cap) cap = t;
  }
  double *b0 = ncc_malloc(sizeof(double) * (size_t)(cap + 1));
  double *b1 = ncc_malloc(sizeof(double) * (size_t)(cap + 1));
  if (!b0 || !b1) {
    ncc_free(b0, 0);
    ncc_free(b1, 0);
    return NCC_ERR_NOMEM;
  }
  int64_t m = ncc_tensor_numel(x);
  for (int64_t i = 0; i < m; i++) b0[i] = ncc_ref_get_f(x, i);
  for (int i = 0; i < r; i++) dims[i] = x->dims[i];
  for (int i = 0; i < na; i++) {
    int ax = axes[i];
    int64_t iw = dims[ax], ow = out->dims[ax], outer = 1, inner = 1;
    double r0 = roi ? ncc_ref_get_f(roi, i) : 0, r1 = roi ? ncc_ref_get_f(roi, na + i) : 1;
    bool trivial = sc[i] == 1 && iw == ow &&
                   (a.coord != NCC_RS_TF_CROP_AND_RESIZE || (r0 == 0 && r1 == 1));
    if (trivial) continue;
    for (int k = 0; k < ax; k++) outer *= dims[k];
    for (int k = ax + 1; k < r; k++) inner *= dims[k];
    resize_axis(&a, b0, b1, outer, iw, ow, inner, sc[i], r0, r1);
    dims[ax] = ow;
    double *t = b0;
    b0 = b1;
    b1 = t;
  }
  m = ncc_tensor_numel(out);
  for (int64_t i = 0; i < m; i++) ncc_ref_set_f(out, i, b0[i]);
  ncc_free(b0, 0);
  ncc_free(b1, 0);
  return NCC_OK;
}

ncc_status ncc_ref_RESIZE(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return resize(n, in, out);
}

ncc_status ncc_ref_UPSAMPLE(const ncc_node *n, const ncc_tensor *const *in,
                            ncc_tensor *out) {
  return resize(n, in, out);
}

/* ---- GridSample ---- */

static double gs_reflect(double x, double lo, double hi) {
  double rng = hi - lo, fx = x;
  if (rng <= 0) return lo;
  if (fx < lo) {
    double dx = lo - fx;
    int64_t k = (int64_t)(dx / rng);
    double r = dx - (double)k * rng;
    fx = k % 2 == 0 ? lo + r : hi - r;
  } else if (fx > hi) {
    double dx = fx - hi;
    int64_t k = (int64_t)(dx / rng);
    double r = dx - (double)k * rng;
    fx = k % 2 == 0 ? hi - r : lo + r;
  }
  return fx;
}

/* Index i along a dim of d with the padding mode; -1: a zero (outside). */
static int64_t gs_index(int64_t i, int64_t d, ncc_gs_pad pad, double lo, double hi) {
  if (pad == NCC_GS_ZEROS) return i >= 0 && i < d ? i : -1;
  if (pad == NCC_GS_BORDER) return i < 0 ? 0 : i >= d ? d - 1 : i;
  int64_t j = (int64_t)gs_reflect((double)i, lo, hi);
  return j < 0 ? 0 : j >= d ? d - 1 : j;
}

static void gs_cubic(double t, double *c) {
  const double A = -0.75;
  t = fabs(t);
  c[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
  c[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

ncc_status ncc_ref_GRIDSAMPLE(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  const ncc_tensor *x = in[0], *g = in[1];
  ncc_grid_sample_attrs a;
  ncc_status st = ncc_attrs_grid_sample(n, &a);
  if (st) return st;
  int nd = x->rank - 2;
  int64_t N = x->dims[0], C = x->dims[1], in_sp = 1, out_sp = 1;
  for (int k = 0; k < nd; k++) {
    in_sp *= x->dims[2 + k];
    out_sp *= out->dims[2 + k];
  }
  double lo[3], hi[3];
  for (int k = 0; k < nd; k++) {
    double d = (double)x->dims[2 + k];
    lo[k] = a.align_corners ? 0 : -0.5;
    hi[k] = a.align_corners ? d - 1 : d - 0.5;
  }
  for (int64_t b = 0; b < N; b++)
    for (int64_t p = 0; p < out_sp; p++) {
      /* grid point: (x, y, z) for dims (W, H, D), i.e. reversed */
      int64_t taps_i[3][4];
      double taps_w[3][4];
      int nt = a.mode == NCC_RS_CUBIC ? 4 : a.mode == NCC_RS_LINEAR ? 2 : 1;
      for (int k = 0; k < nd; k++) {
        int64_t d = x->dims[2 + k];
        float gv = (float)ncc_ref_get_f(g, (b * out_sp + p) * nd + (nd - 1 - k));
        float v = a.align_corners ? (gv + 1) / 2.0f * (float)(d - 1)
                                  : ((gv + 1) * (float)d - 1) / 2.0f;
        double c = v;
        if (a.mode == NCC_RS_NEAREST) c = nearbyint(c);
        if (c < lo[k] || c > hi[k]) {
          if (a.pad == NCC_GS_BORDER) c = c < 0 ? 0 : c > (double)(d - 1) ? (double)(d - 1) : c;
          else if (a.pad == NCC_GS_REFLECTION) c = gs_reflect(c, lo[k], hi[k]);
        }
        if (a.mode == NCC_RS_NEAREST) {
          taps_i[k][0] = gs_index((int64_t)c, d, a.pad, lo[k], hi[k]);
          taps_w[k][0] = 1;
          continue;
        }
        double f = floor(c);
        int64_t i0 = (int64_t)f;
        if (a.mode == NCC_RS_LINEAR) {
          taps_w[k][0] = 1 - (c - f);
          taps_w[k][1] = c - f;
          for (int t = 0; t < 2; t++) taps_i[k][t] = gs_index(i0 + t, d, a.pad, lo[k], hi[k]);
        } else {
          gs_cubic(c - f, taps_w[k]);
          for (int t = 0; t < 4; t++)
            taps_i[k][t] = gs_index(i0 - 1 + t, d, a.pad, lo[k], hi[k]);
        }
      }
      for (int64_t ch = 0; ch < C; ch++) {
        double acc = 0;
        int64_t base = (b * C + ch) * in_sp;
        int cnt = 1;
        for (int k = 0; k < nd; k++) cnt *= nt;
        for (int t = 0; t < cnt; t++) {
          int rem = t;
          double w = 1;
          int64_t off = 0;
          bool zero = false;
          for (int k = nd - 1; k >= 0; k--) {
            int q = rem % nt;
            rem /= nt;
            int64_t idx = taps_i[k][q];
            w *= taps_w[k][q];
            if (idx < 0) zero = true;
            int64_t stride = 1;
            for (int j = k + 1; j < nd; j++) stride *= x->dims[2 + j];
            off += idx * stride;
          }
          if (!zero && w != 0) acc += w * ncc_ref_get_f(x, base + off);
        }
        ncc_ref_set_f(out, (b * C + ch) * out_sp + p, acc);
      }
    }
  return NCC_OK;
}
