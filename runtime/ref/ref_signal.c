/* runtime/ref/ref_signal.c — reference kernels of the signal ops: the
 * Hann, Hamming and Blackman windows, DFT, STFT and MelWeightMatrix.
 *
 * The transforms are direct O(n^2) sums in double with the phase reduced
 * exactly (k * t mod n) before the sine and cosine: exact enough to be the
 * semantics, and these ops are rare and small in real models.
 */
#include <math.h>
#include <string.h>

#include "ref.h"

#define TWO_PI 6.283185307179586476925286766559

/* ---- windows ---- */

static ncc_status window(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out,
                         double a0, double a1, double a2) {
  ncc_signal_attrs sa;
  ncc_status st = ncc_attrs_signal(n, &sa);
  if (st) return st;
  int64_t size = ncc_ref_get_i(in[0], 0);
  double len = (double)(sa.periodic ? size : size - 1);
  for (int64_t i = 0; i < size; i++) {
    double ph = TWO_PI * (double)i / len;
    ncc_ref_set_f(out, i, a0 - a1 * cos(ph) + a2 * cos(2 * ph));
  }
  return NCC_OK;
}

ncc_status ncc_ref_HANNWINDOW(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  return window(n, in, out, 0.5, 0.5, 0);
}

ncc_status ncc_ref_HAMMINGWINDOW(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  return window(n, in, out, 25.0 / 46.0, 21.0 / 46.0, 0);
}

ncc_status ncc_ref_BLACKMANWINDOW(const ncc_node *n, const ncc_tensor *const *in,
                                  ncc_tensor *out) {
  return window(n, in, out, 0.42, 0.5, 0.08);
}

/* ---- the transform ---- */

/* One 1-D transform of length n: src holds `len` complex values (re, im)
 * (zero past len), dst gets `nout` of them. sign -1 forward, +1 inverse
 * (then scaled by 1/n). hermitian: src is the one-sided half of a real
 * signal's spectrum (irfft), dst real parts only. */
static void dft1(const double *src, int64_t len, int64_t n, int64_t nout, int sign,
                 bool hermitian, double *dst) {
  for (int64_t k = 0; k < nout; k++) {
    double re = 0, im = 0;
    for (int64_t t = 0; t < n; t++) {
      double xr, xi;
      if (hermitian) { /* X[t] for t <= n/2, conj(X[n - t]) above */
        int64_t j = t <= n / 2 ? t : n - t;
        xr = j < len ? src[2 * j] : 0;
        xi = j < len ? src[2 * j + 1] : 0;
        if (t > n / 2) xi = -xi;
      } else {
        xr = t < len ? src[2 * t] : 0;
        xi = t < len ? src[2 * t + 1] : 0;
      }
      double ph = sign * TWO_PI * (double)((k * t) % n) / (double)n;
      double c = cos(ph), s = sin(ph);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (sign > 0) {
      re /= (double)n;
      im /= (double)n;
    }
    dst[2 * k] = re;
    dst[2 * k + 1] = im;
  }
}

ncc_status ncc_ref_DFT(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  ncc_signal_attrs sa;
  ncc_status st = ncc_attrs_signal(n, &sa);
  if (st) return st;
  const ncc_tensor *x = in[0];
  int r = x->rank;
  int64_t axis = n->n_in > 2 && in[2] ? ncc_ref_get_i(in[2], 0) : sa.has_axis ? sa.axis : -2;
  int ax = (int)(axis < 0 ? axis + r : axis);
  int64_t len = x->dims[ax], nout = out->dims[ax], ci = x->dims[r - 1], co = out->dims[r - 1];
  bool irfft = sa.inverse && sa.onesided;
  int64_t dl = n->n_in > 1 && in[1] ? ncc_ref_get_i(in[1], 0) : irfft ? 2 * (len - 1) : len;
  int64_t pre = 1, inner = 1;
  for (int d = 0; d < ax; d++) pre *= x->dims[d];
  for (int d = ax + 1; d < r - 1; d++) inner *= x->dims[d];
  double *src = ncc_calloc((size_t)(2 * len + 2), sizeof *src);
  double *dst = ncc_calloc((size_t)(2 * nout + 2), sizeof *dst);
  if (!src || !dst) {
    ncc_free(src, 0);
    ncc_free(dst, 0);
    return NCC_ERR_NOMEM;
  }
  for (int64_t p = 0; p < pre; p++)
    for (int64_t j = 0; j < inner; j++) {
      for (int64_t t = 0; t < len; t++) {
        int64_t e = ((p * len + t) * inner + j) * ci;
        src[2 * t] = ncc_ref_get_f(x, e);
        src[2 * t + 1] = ci == 2 ? ncc_ref_get_f(x, e + 1) : 0;
      }
      dft1(src, len, dl, nout, sa.inverse ? 1 : -1, irfft, dst);
      for (int64_t k = 0; k < nout; k++) {
        int64_t e = ((p * nout + k) * inner + j) * co;
        ncc_ref_set_f(out, e, dst[2 * k]);
        if (co == 2) ncc_ref_set_f(out, e + 1, dst[2 * k + 1]);
      }
    }
  ncc_free(src, 0);
  ncc_free(dst, 0);
  return NCC_OK;
}

/* STFT: frames of frame_length every frame_step, weighted by the window
 * (ones when absent), each transformed forward. */
ncc_status ncc_ref_STFT(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_tensor *x = in[0], *win = n->n_in > 2 ? in[2] : NULL;
  int64_t step = ncc_ref_get_i(in[1], 0);
  int64_t fl = n->n_in > 3 && in[3] ? ncc_ref_get_i(in[3], 0) : win ? win->dims[0] : x->dims[1];
  if (win && win->dims[0] != fl)
    return ncc_error(NCC_ERR_INPUT, "STFT: window of %lld for frames of %lld",
                     (long long)win->dims[0], (long long)fl);
  int64_t B = x->dims[0], L = x->dims[1], ci = x->dims[2], F = out->dims[1],
          bins = out->dims[2];
  double *src = ncc_calloc((size_t)(2 * fl + 2), sizeof *src);
  double *dst = ncc_calloc((size_t)(2 * bins + 2), sizeof *dst);
  if (!src || !dst) {
    ncc_free(src, 0);
    ncc_free(dst, 0);
    return NCC_ERR_NOMEM;
  }
  for (int64_t b = 0; b < B; b++)
    for (int64_t f = 0; f < F; f++) {
      for (int64_t t = 0; t < fl; t++) {
        int64_t pos = f * step + t;
        double w = win ? ncc_ref_get_f(win, t) : 1.0;
        bool in_sig = pos < L;
        src[2 * t] = in_sig ? ncc_ref_get_f(x, (b * L + pos) * ci) * w : 0;
        src[2 * t + 1] = in_sig && ci == 2 ? ncc_ref_get_f(x, (b * L + pos) * ci + 1) * w : 0;
      }
      dft1(src, fl, fl, bins, -1, false, dst);
      for (int64_t k = 0; k < bins; k++) {
        ncc_ref_set_f(out, ((b * F + f) * bins + k) * 2, dst[2 * k]);
        ncc_ref_set_f(out, ((b * F + f) * bins + k) * 2 + 1, dst[2 * k + 1]);
      }
    }
  ncc_free(src, 0);
  ncc_free(dst, 0);
  return NCC_OK;
}

/* out[j, i] = v, for spectrogram bins j inside the matrix */
static void put(ncc_tensor *out, int64_t j, int64_t i, double v) {
  if (j >= 0 && j < out->dims[0]) ncc_ref_set_f(out, j * out->dims[1] + i, v);
}

/* MelWeightMatrix as ONNX's reference computes it: the mel edges and step
 * in f32 (the input dtype), the bin frequencies in double, floored to
 * spectrogram bins; triangular filters between consecutive bins. */
ncc_status ncc_ref_MELWEIGHTMATRIX(const ncc_node *n, const ncc_tensor *const *in,
                                   ncc_tensor *out) {
  (void)n;
  int64_t bins = ncc_ref_get_i(in[0], 0), len = ncc_ref_get_i(in[1], 0);
  int64_t rate = ncc_ref_get_i(in[2], 0), nspec = out->dims[0];
  float lo = (float)ncc_ref_get_f(in[3], 0), hi = (float)ncc_ref_get_f(in[4], 0);
  float ln10 = (float)log(10.0);
  float lmel = 2595.0f * log1pf(lo / 700.0f) / ln10;
  float hmel = 2595.0f * log1pf(hi / 700.0f) / ln10;
  float step = (hmel - lmel) / (float)(bins + 2);
  int64_t *fb = ncc_calloc((size_t)(bins + 2), sizeof *fb);
  if (!fb) return NCC_ERR_NOMEM;
  for (int64_t i = 0; i < bins + 2; i++) {
    double f = (double)i * (double)step + (double)lmel;
    f = 700.0 * expm1(f / 2595.0 * log(10.0));
    f = floor((double)(len + 1) * f / (double)rate);
    fb[i] = f == f && fabs(f) < 0x1p52 ? (int64_t)f : -1; /* NaN, huge: no bin */
  }
  int64_t numel = ncc_tensor_numel(out);
  for (int64_t i = 0; i < numel; i++) ncc_ref_set_f(out, i, 0);
  for (int64_t i = 0; i < bins; i++) {
    int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
    if (c == l) {
      put(out, c, i, 1.0);
    } else {
      for (int64_t j = l < 0 ? 0 : l; j <= c && j < nspec; j++)
        put(out, j, i, (double)(j - l) / (double)(c - l));
    }
    for (int64_t j = c < 0 ? 0 : c; j < h && j < nspec; j++)
      put(out, j, i, (double)(h - j) / (double)(h - c));
  }
  ncc_free(fb, 0);
  return NCC_OK;
}
