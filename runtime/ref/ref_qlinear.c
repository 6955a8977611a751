/* runtime/ref/ref_qlinear.c — reference kernels of ONNX Runtime's
 * com.microsoft QLinear ops, which onnxruntime.quantization's QOperator
 * format emits: QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
 * QLinearGlobalAveragePool, QLinearConcat, QGemm.
 *
 * These ops have no ONNX specification; their meaning is ONNX Runtime's
 * (onnxruntime/contrib_ops/cpu/quantization and MLAS), so the arithmetic
 * follows it step for step in f32: scale ratios folded first, the real
 * value rounded half to even, the zero point added, saturated. The
 * table-driven ops (Sigmoid, LeakyRelu, Concat's requantization) compute
 * dequantize -> f -> quantize per value as ONNX Runtime's lookup tables
 * do. Scales and zero points are per tensor (the shape rules check it).
 */
#include <math.h>

#include "../../ir/attrs.h"
#include "ref.h"

/* [lo, hi] of an 8-bit dtype */
static void range8(ncc_dtype dt, int64_t *lo, int64_t *hi) {
  *lo = dt == NCC_DT_U8 ? 0 : -128;
  *hi = dt == NCC_DT_U8 ? 255 : 127;
}

static int64_t zp_of(const ncc_tensor *const *in, int n_in, int i) {
  return i < n_in && in[i] ? ncc_ref_get_i(in[i], 0) : 0;
}

static float scale_of(const ncc_tensor *t) { return (float)ncc_ref_get_f(t, 0); }

/* round half to even, add zp, saturate to [lo, hi] (NaN counts as 0) */
static int64_t sat_round(float v, int64_t zp, int64_t lo, int64_t hi) {
  if (isnan(v)) v = 0;
  double r = nearbyint((double)v) + (double)zp;
  return r < (double)lo ? lo : r > (double)hi ? hi : (int64_t)r;
}

/* ONNX Runtime's MlasQuantizeLinear of one f32 value */
static int64_t quantize(float v, float scale, int64_t zp, int64_t lo, int64_t hi) {
  return sat_round(v / scale, zp, lo, hi);
}

/* QLinearAdd / QLinearMul with numpy broadcasting of A (input 0) and B
 * (input 3). */
static ncc_status qlinear_binary(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out, bool mul) {
  const ncc_tensor *a = in[0], *b = in[3];
  float sa = scale_of(in[1]), sb = scale_of(in[4]), sc = scale_of(in[6]);
  int64_t za = zp_of(in, n->n_in, 2), zb = zp_of(in, n->n_in, 5);
  int64_t zc = zp_of(in, n->n_in, 7), lo, hi;
  range8(out->dtype, &lo, &hi);
  int64_t as[NCC_MAX_RANK], bs[NCC_MAX_RANK];
  ncc_ref_bcast_strides(a, out->rank, out->dims, as);
  ncc_ref_bcast_strides(b, out->rank, out->dims, bs);
  /* MLAS's x86 form: c = fixed + ra a + rb b, with the zero points folded
   * into fixed = zc - (ra za + rb zb) */
  float ratio_a = sa / sc, ratio_b = sb / sc, ratio_ab = sa * sb / sc;
  float fixed = (float)zc - (ratio_a * (float)za + ratio_b * (float)zb);
  int64_t numel = ncc_tensor_numel(out);
  for (int64_t i = 0; i < numel; i++) {
    int64_t ia = 0, ib = 0, rest = i;
    for (int d = out->rank - 1; d >= 0; d--) {
      int64_t c = rest % out->dims[d];
      rest /= out->dims[d];
      ia += c * as[d];
      ib += c * bs[d];
    }
    int64_t va = ncc_ref_get_i(a, ia), vb = ncc_ref_get_i(b, ib);
    if (mul) {
      float v = (float)((va - za) * (vb - zb)) * ratio_ab;
      ncc_ref_set_i(out, i, sat_round(v, zc, lo, hi));
    } else {
      float v = (fixed + (float)va * ratio_a) + (float)vb * ratio_b;
      ncc_ref_set_i(out, i, sat_round(v, 0, lo, hi));
    }
  }
  return NCC_OK;
}

ncc_status ncc_ref_QLINEARADD(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  return qlinear_binary(n, in, out, false);
}

ncc_status ncc_ref_QLINEARMUL(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  return qlinear_binary(n, in, out, true);
}

/* The 256-entry table of dequantize -> f -> quantize (ONNX Runtime's
 * QlinearBuildLookupTable), applied to every element. */
typedef float (*qfn)(float x, float alpha);

static ncc_status qlinear_table(const ncc_node *n, const ncc_tensor *const *in,
                                ncc_tensor *out, qfn f, float alpha) {
  const ncc_tensor *x = in[0];
  float sx = scale_of(in[1]), sy = scale_of(in[3]);
  int64_t zx = zp_of(in, n->n_in, 2), zy = zp_of(in, n->n_in, 4), lo, hi;
  range8(out->dtype, &lo, &hi);
  int64_t table[256];
  for (int64_t v = lo; v <= hi; v++) {
    float d = sx * (float)(v - zx);
    table[v - lo] = quantize(f ? f(d, alpha) : d, sy, zy, lo, hi);
  }
  int64_t numel = ncc_tensor_numel(x);
  for (int64_t i = 0; i < numel; i++) ncc_ref_set_i(out, i, table[ncc_ref_get_i(x, i) - lo]);
  return NCC_OK;
}

static float sigmoid(float x, float alpha) {
  (void)alpha;
  return 1.0f / (1.0f + expf(-x));
}

static float leaky(float x, float alpha) { return x >= 0 ? x : x * alpha; }

ncc_status ncc_ref_QLINEARSIGMOID(const ncc_node *n, const ncc_tensor *const *in,
                                  ncc_tensor *out) {
  return qlinear_table(n, in, out, sigmoid, 0);
}

ncc_status ncc_ref_QLINEARLEAKYRELU(const ncc_node *n, const ncc_tensor *const *in,
                                    ncc_tensor *out) {
  const ncc_attr *a = ncc_node_attr(n, "alpha");
  float alpha = !a ? 0.01f : a->kind == NCC_ATTR_FLOAT ? a->f : (float)a->i;
  return qlinear_table(n, in, out, leaky, alpha);
}

/* Sum of each (n, c) image in int64, requantized once with ONNX Runtime's
 * scale x_scale / (y_scale * image size) (MlasQLinearGlobalAveragePool). */
ncc_status ncc_ref_QLINEARGLOBALAVERAGEPOOL(const ncc_node *n, const ncc_tensor *const *in,
                                            ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  int64_t last;
  ncc_status st = ncc_attrs_get_int(n, "channels_last", 0, &last);
  if (st) return st;
  int r = x->rank;
  int64_t N = x->dims[0], C = x->dims[last ? r - 1 : 1], img = 1;
  for (int d = 1; d < r; d++)
    if (d != (last ? r - 1 : 1)) img *= x->dims[d];
  float scale = scale_of(in[1]) / (scale_of(in[3]) * (float)img);
  int64_t zx = ncc_ref_get_i(in[2], 0), zy = ncc_ref_get_i(in[4], 0), lo, hi;
  range8(out->dtype, &lo, &hi);
  for (int64_t b = 0; b < N; b++)
    for (int64_t c = 0; c < C; c++) {
      int64_t s = 0;
      for (int64_t p = 0; p < img; p++)
        s += ncc_ref_get_i(x, last ? (b * img + p) * C + c : (b * C + c) * img + p);
      s -= zx * img;
      ncc_ref_set_i(out, b * C + c, sat_round((float)s * scale, zy, lo, hi));
    }
  return NCC_OK;
}

/* Each input requantized to Y's scale and zero point (copied when they are
 * the same), placed along the axis. */
ncc_status ncc_ref_QLINEARCONCAT(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  int64_t axis;
  ncc_status st = ncc_attrs_get_int(n, "axis", 0, &axis);
  if (st) return st;
  int r = out->rank;
  if (axis < 0) axis += r;
  float sy = scale_of(in[0]);
  int64_t zy = ncc_ref_get_i(in[1], 0), lo, hi;
  range8(out->dtype, &lo, &hi);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= out->dims[d];
  for (int d = (int)axis + 1; d < r; d++) inner *= out->dims[d];
  int64_t orow = out->dims[axis] * inner, off = 0;
  for (int j = 2; j + 2 < n->n_in; j += 3) {
    const ncc_tensor *x = in[j];
    float sx = scale_of(in[j + 1]);
    int64_t zx = ncc_ref_get_i(in[j + 2], 0);
    bool same = sx == sy && zx == zy;
    int64_t len = x->dims[axis] * inner;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t q = 0; q < len; q++) {
        int64_t v = ncc_ref_get_i(x, o * len + q);
        if (!same) v = quantize(sx * (float)(v - zx), sy, zy, lo, hi);
        ncc_ref_set_i(out, o * orow + off + q, v);
      }
    off += len;
  }
  return NCC_OK;
}

/* Exact int64 (A - a_zp) op(B - b_zp[n]) + C, then y = acc * alpha a_scale
 * b_scale[n] (f32), requantized with / y_scale when given (ONNX Runtime's
 * QGemm: its output scale is a_scale b_scale[n] / y_scale, times alpha). */
ncc_status ncc_ref_QGEMM(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_tensor *a = in[0], *b = in[3];
  const ncc_tensor *bias = n->n_in > 6 ? in[6] : NULL;
  const ncc_tensor *ys = n->n_in > 7 ? in[7] : NULL;
  int64_t ta, tb;
  ncc_status st;
  if ((st = ncc_attrs_get_int(n, "transA", 0, &ta)) ||
      (st = ncc_attrs_get_int(n, "transB", 0, &tb)))
    return st;
  const ncc_attr *al = ncc_node_attr(n, "alpha");
  float alpha = !al ? 1.0f : al->kind == NCC_ATTR_FLOAT ? al->f : (float)al->i;
  int64_t M = out->dims[0], N = out->dims[1], K = a->dims[ta ? 0 : 1];
  int64_t za = zp_of(in, n->n_in, 2), zy = zp_of(in, n->n_in, 8), lo = 0, hi = 0;
  if (ys) range8(out->dtype, &lo, &hi);
  float sa = scale_of(in[1]);
  bool bper = ncc_tensor_numel(in[4]) > 1;
  bool zper = n->n_in > 5 && in[5] && ncc_tensor_numel(in[5]) > 1;
  int64_t cs[NCC_MAX_RANK] = {0};
  if (bias) ncc_ref_bcast_strides(bias, 2, out->dims, cs);
  for (int64_t m = 0; m < M; m++)
    for (int64_t j = 0; j < N; j++) {
      int64_t zb = n->n_in > 5 && in[5] ? ncc_ref_get_i(in[5], zper ? j : 0) : 0;
      int64_t acc = bias ? ncc_ref_get_i(bias, m * cs[0] + j * cs[1]) : 0;
      for (int64_t k = 0; k < K; k++)
        acc += (ncc_ref_get_i(a, ta ? k * M + m : m * K + k) - za) *
               (ncc_ref_get_i(b, tb ? j * K + k : k * N + j) - zb);
      float scale = sa * (float)ncc_ref_get_f(in[4], bper ? j : 0);
      if (ys) {
        scale = scale / scale_of(ys);
        if (alpha != 1.0f) scale *= alpha;
        ncc_ref_set_i(out, m * N + j, sat_round((float)acc * scale, zy, lo, hi));
      } else {
        if (alpha != 1.0f) scale *= alpha;
        ncc_ref_set_f(out, m * N + j, (float)acc * scale);
      }
    }
  return NCC_OK;
}
