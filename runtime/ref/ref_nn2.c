/* runtime/ref/ref_nn2.c — reference kernels of InstanceNormalization,
 * GroupNormalization, LpNormalization, MeanVarianceNormalization,
 * RMSNormalization, LRN, GlobalMaxPool, LpPool and GlobalLpPool.
 *
 * Elements go through the generic accessors (any float dtype shape
 * inference admits), statistics are accumulated in double, mean and
 * variance in two passes. GroupNormalization takes scale/bias per channel
 * (opset 21) or per group (opset 18), told apart by their length.
 * MeanVarianceNormalization is ONNX's function: (x - mean) / (std + 1e-9).
 */
#include <math.h>
#include <string.h>

#include "ref_nn.h"

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p = ncc_ref_dim_mul(p, d[i]);
  return p;
}

/* ---- Instance / Group normalization ---- */

/* x viewed as [N, G, per] (per = C/G * spatial); scale/bias indexed by
 * channel (per_channel) or by group. */
static void group_norm(const ncc_tensor *x, int64_t groups, const ncc_tensor *scale,
                       const ncc_tensor *bias, bool per_channel, double eps,
                       ncc_tensor *y) {
  int64_t nb = x->dims[0], ch = x->dims[1], sp = prod(x->dims, 2, x->rank);
  int64_t cpg = ch / groups, per = cpg * sp;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t g = 0; g < groups; g++) {
      int64_t base = (b * groups + g) * per;
      double sum = 0.0, sq = 0.0;
      for (int64_t j = 0; j < per; j++) sum += ncc_ref_get_f(x, base + j);
      double mu = per > 0 ? sum / (double)per : 0.0;
      for (int64_t j = 0; j < per; j++) {
        double d = ncc_ref_get_f(x, base + j) - mu;
        sq += d * d;
      }
      double inv = 1.0 / sqrt((per > 0 ? sq / (double)per : 0.0) + eps);
      for (int64_t c = 0; c < cpg; c++) {
        int64_t pi = per_channel ? g * cpg + c : g;
        double s = ncc_ref_get_f(scale, pi), sh = ncc_ref_get_f(bias, pi);
        int64_t at = base + c * sp;
        for (int64_t j = 0; j < sp; j++)
          ncc_ref_set_f(y, at + j, (ncc_ref_get_f(x, at + j) - mu) * inv * s + sh);
      }
    }
}

ncc_status ncc_ref_INSTANCENORM(const ncc_node *n, const ncc_tensor *const *in,
                                ncc_tensor *out) {
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(n, &a);
  if (st) return st;
  int64_t ch = in[0]->dims[1];
  if (ncc_tensor_numel(in[1]) != ch || ncc_tensor_numel(in[2]) != ch)
    return ncc_node_error(n, NCC_ERR_INPUT, "scale and B must have one entry per channel");
  group_norm(in[0], ch, in[1], in[2], true, a.epsilon, &out[0]);
  return NCC_OK;
}

ncc_status ncc_ref_GROUPNORM(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(n, &a);
  if (st) return st;
  int64_t ch = in[0]->dims[1];
  if (ch % a.num_groups != 0)
    return ncc_node_error(n, NCC_ERR_INPUT, "num_groups does not divide the channels");
  bool per_channel = ncc_tensor_numel(in[1]) == ch;
  int64_t want = per_channel ? ch : a.num_groups;
  if (ncc_tensor_numel(in[1]) != want || ncc_tensor_numel(in[2]) != want)
    return ncc_node_error(n, NCC_ERR_INPUT,
                          "scale and bias must have one entry per channel or per group");
  group_norm(in[0], a.num_groups, in[1], in[2], per_channel, a.epsilon, &out[0]);
  return NCC_OK;
}

/* ---- LpNormalization: x / ||x||_p along axis (0 where the norm is 0) ---- */

ncc_status ncc_ref_LPNORM(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(n, &a);
  if (st) return st;
  int axis = (int)(a.axis < 0 ? a.axis + x->rank : a.axis);
  int64_t outer = prod(x->dims, 0, axis), d = x->dims[axis];
  int64_t inner = prod(x->dims, axis + 1, x->rank);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t base = o * d * inner + j;
      double s = 0.0;
      for (int64_t k = 0; k < d; k++) {
        double v = ncc_ref_get_f(x, base + k * inner);
        s += a.p == 1 ? fabs(v) : v * v;
      }
      double norm = a.p == 1 ? s : sqrt(s);
      /* a zero vector stays zero (ONNX's reference; not 0/0) */
      for (int64_t k = 0; k < d; k++)
        ncc_ref_set_f(&out[0], base + k * inner,
                      norm == 0.0 ? 0.0 : ncc_ref_get_f(x, base + k * inner) / norm);
    }
  return NCC_OK;
}

/* ---- MeanVarianceNormalization and RMSNormalization ----
 * Both normalize over a set of dims: x is walked with the "row" offset of
 * every element (the reduced dims have stride 0), as the reductions do. */

typedef struct set_iter {
  int rank;
  int64_t dims[NCC_MAX_RANK], ostr[NCC_MAX_RANK], idx[NCC_MAX_RANK], off;
} set_iter;

static void set_next(set_iter *it) {
  for (int i = it->rank - 1; i >= 0; i--) {
    it->off += it->ostr[i];
    if (++it->idx[i] < it->dims[i]) return;
    it->off -= it->ostr[i] * it->dims[i];
    it->idx[i] = 0;
  }
}

static int64_t set_init(set_iter *it, const ncc_tensor *x, const bool *red) {
  memset(it, 0, sizeof *it);
  it->rank = x->rank;
  int64_t s = 1;
  for (int i = x->rank - 1; i >= 0; i--) {
    it->dims[i] = x->dims[i];
    it->ostr[i] = red[i] ? 0 : s;
    if (!red[i]) s = ncc_ref_dim_mul(s, x->dims[i]);
  }
  return s; /* the number of rows */
}

ncc_status ncc_ref_MVN(const ncc_node *n, const ncc_tensor *const *in,
                       ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(n, &a);
  if (st) return st;
  bool red[NCC_MAX_RANK] = {false};
  for (int i = 0; i < a.n_axes; i++)
    red[a.axes[i] < 0 ? a.axes[i] + x->rank : a.axes[i]] = true;
  set_iter it;
  int64_t rows = set_init(&it, x, red), total = ncc_tensor_numel(x);
  int64_t cnt = rows > 0 ? total / rows : 0;
  size_t bytes = (size_t)(rows ? rows : 1) * 2 * sizeof(double);
  double *acc = ncc_calloc((size_t)(rows ? rows : 1) * 2, sizeof(double));
  if (!acc) return NCC_ERR_NOMEM;
  double *mean = acc, *var = acc + rows;
  for (int64_t i = 0; i < total; i++, set_next(&it)) mean[it.off] += ncc_ref_get_f(x, i);
  for (int64_t r = 0; r < rows; r++) mean[r] /= (double)cnt;
  memset(it.idx, 0, sizeof it.idx), it.off = 0;
  for (int64_t i = 0; i < total; i++, set_next(&it)) {
    double d = ncc_ref_get_f(x, i) - mean[it.off];
    var[it.off] += d * d;
  }
  for (int64_t r = 0; r < rows; r++) var[r] = sqrt(var[r] / (double)cnt) + 1e-9;
  memset(it.idx, 0, sizeof it.idx), it.off = 0;
  for (int64_t i = 0; i < total; i++, set_next(&it))
    ncc_ref_set_f(&out[0], i, (ncc_ref_get_f(x, i) - mean[it.off]) / var[it.off]);
  ncc_free(acc, bytes);
  return NCC_OK;
}

/* y = x / sqrt(mean(x^2 over dims [axis, rank)) + eps) * scale, scale
 * broadcast to those dims. */
ncc_status ncc_ref_RMSNORM(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  const ncc_tensor *x = in[0], *scale = in[1];
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(n, &a);
  if (st) return st;
  int axis = (int)(a.axis < 0 ? a.axis + x->rank : a.axis);
  int nr = x->rank - axis;
  int64_t rows = prod(x->dims, 0, axis), d = prod(x->dims, axis, x->rank);
  int64_t sstr[NCC_MAX_RANK];
  ncc_ref_bcast_strides(scale, nr, x->dims + axis, sstr);
  for (int64_t r = 0; r < rows; r++) {
    double sq = 0.0;
    for (int64_t j = 0; j < d; j++) {
      double v = ncc_ref_get_f(x, r * d + j);
      sq += v * v;
    }
    double inv = 1.0 / sqrt((d > 0 ? sq / (double)d : 0.0) + a.epsilon);
    int64_t idx[NCC_MAX_RANK] = {0}, so = 0;
    for (int64_t j = 0; j < d; j++) {
      ncc_ref_set_f(&out[0], r * d + j,
                    ncc_ref_get_f(x, r * d + j) * inv * ncc_ref_get_f(scale, so));
      for (int k = nr - 1; k >= 0; k--) { /* next scale offset */
        so += sstr[k];
        if (++idx[k] < x->dims[axis + k]) break;
        so -= sstr[k] * x->dims[axis + k];
        idx[k] = 0;
      }
    }
  }
  return NCC_OK;
}

/* ---- LRN across channels ---- */

ncc_status ncc_ref_LRN(const ncc_node *n, const ncc_tensor *const *in,
                       ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(n, &a);
  if (st) return st;
  int64_t nb = x->dims[0], ch = x->dims[1], sp = prod(x->dims, 2, x->rank);
  int64_t lo = (a.size - 1) / 2, hi = a.size - 1 - lo; /* floor, ceil */
  double k = (double)a.alpha / (double)a.size;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t c = 0; c < ch; c++)
      for (int64_t j = 0; j < sp; j++) {
        double sq = 0.0;
        int64_t c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= ch ? ch - 1 : c + hi;
        for (int64_t i = c0; i <= c1; i++) {
          double v = ncc_ref_get_f(x, (b * ch + i) * sp + j);
          sq += v * v;
        }
        int64_t at = (b * ch + c) * sp + j;
        ncc_ref_set_f(&out[0], at, ncc_ref_get_f(x, at) / pow(a.bias + k * sq, a.beta));
      }
  return NCC_OK;
}

/* ---- GlobalMaxPool, GlobalLpPool, LpPool ---- */

static double lp_term(double v, int64_t p) {
  v = fabs(v);
  return p == 1 ? v : p == 2 ? v * v : pow(v, (double)p);
}

static double lp_root(double s, int64_t p) {
  return p == 1 ? s : p == 2 ? sqrt(s) : pow(s, 1.0 / (double)p);
}

static ncc_status global_pool(const ncc_node *n, const ncc_tensor *x, ncc_tensor *y,
                              bool max) {
  ncc_nn_attrs a;
  ncc_status st = ncc_attrs_nn(n, &a);
  if (st) return st;
  int64_t planes = x->dims[0] * x->dims[1], sp = prod(x->dims, 2, x->rank);
  for (int64_t pl = 0; pl < planes; pl++) {
    double r = max ? -INFINITY : 0.0;
    for (int64_t j = 0; j < sp; j++) {
      double v = ncc_ref_get_f(x, pl * sp + j);
      if (!max) r += lp_term(v, a.p);
      else if (v > r || isnan(v)) r = v; /* NaN sticks */
    }
    ncc_ref_set_f(y, pl, max ? r : lp_root(r, a.p));
  }
  return NCC_OK;
}

ncc_status ncc_ref_GLOBALMAXPOOL(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  return global_pool(n, in[0], &out[0], true);
}

ncc_status ncc_ref_GLOBALLPPOOL(const ncc_node *n, const ncc_tensor *const *in,
                                ncc_tensor *out) {
  return global_pool(n, in[0], &out[0], false);
}

/* (sum of |x|^p over the window's taps inside the input)^(1/p): padding
 * adds zeros. */
ncc_status ncc_ref_LPPOOL(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_nn_attrs a;
  ncc_ref_window w;
  ncc_status st;
  if ((st = ncc_attrs_nn(n, &a)) || (st = ncc_ref_window_init(n, x, &out[0], NULL, &w)))
    return st;
  int64_t in_sz = w.in[0] * w.in[1] * w.in[2], planes = w.batch * w.chans, at = 0;
  for (int64_t pl = 0; pl < planes; pl++) {
    int64_t o[3], t[3];
    for (o[0] = 0; o[0] < w.out[0]; o[0]++)
      for (o[1] = 0; o[1] < w.out[1]; o[1]++)
        for (o[2] = 0; o[2] < w.out[2]; o[2]++) {
          double s = 0.0;
          for (t[0] = 0; t[0] < w.k[0]; t[0]++) {
            int64_t i0 = o[0] * w.s[0] - w.pb[0] + t[0] * w.d[0];
            if (i0 < 0 || i0 >= w.in[0]) continue;
            for (t[1] = 0; t[1] < w.k[1]; t[1]++) {
              int64_t i1 = o[1] * w.s[1] - w.pb[1] + t[1] * w.d[1];
              if (i1 < 0 || i1 >= w.in[1]) continue;
              for (t[2] = 0; t[2] < w.k[2]; t[2]++) {
                int64_t i2 = o[2] * w.s[2] - w.pb[2] + t[2] * w.d[2];
                if (i2 < 0 || i2 >= w.in[2]) continue;
                s += lp_term(ncc_ref_get_f(x, pl * in_sz + (i0 * w.in[1] + i1) * w.in[2] + i2),
                             a.p);
              }
            }
          }
          ncc_ref_set_f(&out[0], at++, lp_root(s, a.p));
        }
  }
  return NCC_OK;
}
