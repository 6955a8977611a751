/* runtime/ref/ref_norm.c — reference kernels for normalizations and
 * reductions: BatchNormalization (inference), LayerNormalization, Softmax,
 * LogSoftmax, ReduceMean, ReduceSum and ReduceMax.
 *
 * These are memory-bound, so the reference spends its arithmetic on
 * exactness: statistics and sums are accumulated in double (two-pass mean and
 * variance for LayerNorm), softmax subtracts the row maximum before exp.
 * Integer reductions use unsigned arithmetic so overflow wraps instead of
 * being undefined. Reductions follow ONNX opset 18: absent or empty axes
 * reduce everything unless noop_with_empty_axes, and an empty set gives
 * Sum 0, Mean NaN, Max -inf (the type's minimum for integers).
 */
#include <math.h>
#include <string.h>

#include "ref_nn.h"

static ncc_status node_error(const ncc_node *n, ncc_status st,
                             const char *what) {
  char lb[160];
  return ncc_error(st, "%s: %s", ncc_node_label(n, lb, sizeof lb), what);
}

static ncc_status need_f32(const ncc_node *n, const ncc_tensor *t) {
  char lb[160];
  if (t->dtype == NCC_DT_F32)
    return NCC_OK;
  return ncc_error(NCC_ERR_UNSUPPORTED, "%s: dtype %s unsupported (want f32)",
                   ncc_node_label(n, lb, sizeof lb), ncc_dtype_name(t->dtype));
}

static bool has_output(const ncc_node *n, const ncc_tensor *out, int i) {
  return i < n->n_out && n->out[i] && out[i].data;
}

/* Normalize attribute `axis` against rank r (r == 0 behaves like rank 1). */
static ncc_status norm_axis(const ncc_node *n, int r, int *axis) {
  int64_t a = ncc_attrs_axis(n);
  int rr = r > 0 ? r : 1;
  if (a < 0)
    a += rr;
  if (a < 0 || a >= rr)
    return node_error(n, NCC_ERR_INPUT, "axis out of range");
  *axis = (int)a;
  return NCC_OK;
}

static int64_t dims_prod(const int64_t *d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++)
    p *= d[i];
  return p;
}

/* ---- BatchNormalization ---- */

ncc_status ncc_ref_BATCHNORM(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_status st;
  for (int i = 0; i < 5; i++)
    if ((st = need_f32(n, in[i])))
      return st;
  ncc_norm_attrs na;
  ncc_attrs_norm(n, &na);
  if (na.training_mode != 0)
    return node_error(n, NCC_ERR_UNSUPPORTED, "training_mode=1 unsupported");
  if (x->rank < 2)
    return node_error(n, NCC_ERR_INPUT, "X must be [N, C, ...]");
  int64_t nb = x->dims[0], c = x->dims[1];
  for (int i = 1; i < 5; i++)
    if (ncc_tensor_numel(in[i]) != c)
      return node_error(n, NCC_ERR_INPUT, "scale, B, mean, var must be [C]");
  if (out[0].dtype != NCC_DT_F32 ||
      ncc_tensor_numel(&out[0]) != ncc_tensor_numel(x))
    return node_error(n, NCC_ERR_INPUT, "Y must be shaped like X");
  double eps = na.epsilon;
  const float *xp = x->data, *scale = in[1]->data, *b = in[2]->data;
  const float *mean = in[3]->data, *var = in[4]->data;
  float *yp = out[0].data;
  int64_t inner = dims_prod(x->dims, 2, x->rank);
  for (int64_t i = 0; i < nb; i++)
    for (int64_t ch = 0; ch < c; ch++) {
      double k = scale[ch] / sqrt((double)var[ch] + eps);
      double mu = mean[ch], shift = b[ch];
      int64_t base = (i * c + ch) * inner;
      for (int64_t j = 0; j < inner; j++)
        yp[base + j] = (float)((xp[base + j] - mu) * k + shift);
    }
  return NCC_OK;
}

/* ---- LayerNormalization ---- */

/* A LayerNorm parameter (Scale or B) as a float array indexed by
 * row * row_stride + j: row_stride 0 when it spans only the normalized dims
 * (the usual case), D when it also varies with the leading dims. Shapes that
 * are not already of that size are broadcast into `own` (caller frees). */
typedef struct ln_param {
  const float *p;
  float *own;
  size_t own_bytes;
  int64_t row_stride;
} ln_param;

/* Copy t broadcast (numpy, right-aligned) to dims[0:rank] into dst. */
static bool bcast_copy(const ncc_tensor *t, int rank, const int64_t *dims,
                       float *dst) {
  int64_t str[NCC_MAX_RANK], idx[NCC_MAX_RANK] = {0}, s = 1;
  if (t->rank > rank)
    return false;
  for (int i = rank - 1; i >= 0; i--) {
    int j = i - (rank - t->rank);
    int64_t d = j >= 0 ? t->dims[j] : 1;
    if (d != 1 && d != dims[i])
      return false;
    str[i] = d == 1 ? 0 : s;
    s *= d;
  }
  const float *src = t->data;
  int64_t total = dims_prod(dims, 0, rank), off = 0;
  for (int64_t e = 0; e < total; e++) {
    dst[e] = src[off];
    for (int i = rank - 1; i >= 0; i--) {
      off += str[i];
      if (++idx[i] < dims[i])
        break;
      off -= str[i] * dims[i];
      idx[i] = 0;
    }
  }
  return true;
}

static ncc_status ln_param_init(const ncc_node *n, const ncc_tensor *t,
                                const ncc_tensor *x, int axis, ln_param *lp) {
  memset(lp, 0, sizeof *lp);
  ncc_status st = need_f32(n, t);
  if (st)
    return st;
  /* Leading size-1 dims of the parameter never matter: drop them. */
  ncc_tensor v = *t;
  int lead = 0;
  while (lead < v.rank && v.dims[lead] == 1)
    lead++;
  v.rank -= lead;
  memmove(v.dims, v.dims + lead, (size_t)v.rank * sizeof *v.dims);
  bool inner_only = v.rank <= x->rank - axis;
  int from = inner_only ? axis : 0;
  int64_t size = dims_prod(x->dims, from, x->rank);
  lp->row_stride = inner_only ? 0 : dims_prod(x->dims, axis, x->rank);
  bool same = v.rank == x->rank - from;
  for (int i = 0; same && i < v.rank; i++)
    same = v.dims[i] == x->dims[from + i];
  if (same) {
    lp->p = t->data;
    return NCC_OK;
  }
  lp->own_bytes = (size_t)size * sizeof(float);
  if (!(lp->own = ncc_malloc(lp->own_bytes)))
    return NCC_ERR_NOMEM;
  lp->p = lp->own;
  if (!bcast_copy(&v, x->rank - from, x->dims + from, lp->own))
    return node_error(n, NCC_ERR_INPUT, "Scale/B do not broadcast to X");
  return NCC_OK;
}

static void ln_param_free(ln_param *lp) { ncc_free(lp->own, lp->own_bytes); }

/* Normalize `rows` rows of d elements. */
static void ln_rows(const float *x, int64_t rows, int64_t d, double eps,
                    const ln_param *sc, const ln_param *bi, float *y,
                    float *mean_out, float *inv_out) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    double sum = 0.0, sq = 0.0;
    for (int64_t j = 0; j < d; j++)
      sum += xr[j];
    double mu = d > 0 ? sum / (double)d : 0.0;
    for (int64_t j = 0; j < d; j++)
      sq += (xr[j] - mu) * (xr[j] - mu);
    double inv = 1.0 / sqrt((d > 0 ? sq / (double)d : 0.0) + eps);
    const float *s = sc->p + r * sc->row_stride;
    const float *b = bi ? bi->p + r * bi->row_stride : NULL;
    for (int64_t j = 0; j < d; j++) {
      double v = (xr[j] - mu) * inv * s[j];
      y[r * d + j] = (float)(b ? v + b[j] : v);
    }
    if (mean_out)
      mean_out[r] = (float)mu;
    if (inv_out)
      inv_out[r] = (float)inv;
  }
}

/* Optional statistics output i (Mean or InvStdDev): one f32 per row. */
static ncc_status ln_stat_out(const ncc_node *n, ncc_tensor *out, int i,
                              int64_t rows, float **p) {
  *p = NULL;
  if (!has_output(n, out, i))
    return NCC_OK;
  if (out[i].dtype != NCC_DT_F32 || ncc_tensor_numel(&out[i]) != rows)
    return node_error(n, NCC_ERR_INPUT,
                      "Mean/InvStdDev must be f32 with one value per row");
  *p = out[i].data;
  return NCC_OK;
}

ncc_status ncc_ref_LAYERNORM(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  const ncc_tensor *b = n->n_in > 2 ? in[2] : NULL;
  int axis;
  ncc_status st;
  if ((st = need_f32(n, x)) || (st = norm_axis(n, x->rank, &axis)))
    return st;
  if (x->rank == 0)
    return node_error(n, NCC_ERR_INPUT, "X must have rank >= 1");
  if (out[0].dtype != NCC_DT_F32 ||
      ncc_tensor_numel(&out[0]) != ncc_tensor_numel(x))
    return node_error(n, NCC_ERR_INPUT, "Y must be shaped like X");
  int64_t rows = dims_prod(x->dims, 0, axis);
  int64_t d = dims_prod(x->dims, axis, x->rank);
  float *mean_out, *inv_out;
  if ((st = ln_stat_out(n, out, 1, rows, &mean_out)) ||
      (st = ln_stat_out(n, out, 2, rows, &inv_out)))
    return st;
  ln_param sc, bi;
  memset(&bi, 0, sizeof bi);
  if ((st = ln_param_init(n, in[1], x, axis, &sc))) {
    ln_param_free(&sc);
    return st;
  }
  if (b && (st = ln_param_init(n, b, x, axis, &bi))) {
    ln_param_free(&sc);
    ln_param_free(&bi);
    return st;
  }
  ncc_norm_attrs na;
  ncc_attrs_norm(n, &na);
  double eps = na.epsilon;
  ln_rows(x->data, rows, d, eps, &sc, b ? &bi : NULL, out[0].data, mean_out,
          inv_out);
  ln_param_free(&sc);
  ln_param_free(&bi);
  return NCC_OK;
}

/* ---- Softmax / LogSoftmax ---- */

static ncc_status softmax_common(const ncc_node *n, const ncc_tensor *x,
                                 ncc_tensor *y, bool log_out) {
  int axis;
  ncc_status st;
  /* f32 typed; f16/bf16/f64 through the accessors (in double, rounded once) */
  bool f32 = x->dtype == NCC_DT_F32;
  if ((!ncc_ref_is_float(x->dtype) && (st = need_f32(n, x))) ||
      (st = norm_axis(n, x->rank, &axis)))
    return st;
  if (y->dtype != x->dtype || ncc_tensor_numel(y) != ncc_tensor_numel(x))
    return node_error(n, NCC_ERR_INPUT, "output must be shaped like input");
  int64_t outer = dims_prod(x->dims, 0, axis);
  int64_t d = x->rank ? x->dims[axis] : 1;
  int64_t inner = x->rank ? dims_prod(x->dims, axis + 1, x->rank) : 1;
  const float *xp = x->data;
  float *yp = y->data;
#define SM_X(i) (f32 ? (double)xp[i] : ncc_ref_get_f(x, i))
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t base = o * d * inner + j;
      double mx = -INFINITY, sum = 0.0;
      for (int64_t k = 0; k < d; k++)
        if (SM_X(base + k * inner) > mx)
          mx = SM_X(base + k * inner);
      for (int64_t k = 0; k < d; k++)
        sum += exp(SM_X(base + k * inner) - mx);
      double lsum = log(sum);
      for (int64_t k = 0; k < d; k++) {
        double v = SM_X(base + k * inner) - mx;
        double r = log_out ? v - lsum : exp(v) / sum;
        if (f32)
          yp[base + k * inner] = (float)r;
        else
          ncc_ref_set_f(y, base + k * inner, r);
      }
    }
#undef SM_X
  return NCC_OK;
}

ncc_status ncc_ref_SOFTMAX(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  return softmax_common(n, in[0], &out[0], false);
}

ncc_status ncc_ref_LOGSOFTMAX(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  return softmax_common(n, in[0], &out[0], true);
}

/* ---- ReduceMean / ReduceSum / ReduceMax ---- */

typedef enum red_kind { RED_SUM, RED_MEAN, RED_MAX } red_kind;

/* Walks the input in row-major order keeping `off`, the offset of the
 * output element each input element reduces into (reduced dims stride 0). */
typedef struct red_iter {
  int rank;
  int64_t dims[NCC_MAX_RANK], ostr[NCC_MAX_RANK], idx[NCC_MAX_RANK];
  int64_t off;
} red_iter;

static inline void red_next(red_iter *it) {
  for (int i = it->rank - 1; i >= 0; i--) {
    it->off += it->ostr[i];
    if (++it->idx[i] < it->dims[i])
      return;
    it->off -= it->ostr[i] * it->dims[i];
    it->idx[i] = 0;
  }
}

typedef struct red_plan {
  red_iter it;
  int64_t n_in, n_out; /* element counts */
  int64_t count;       /* elements reduced into each output */
  bool noop;           /* empty axes with noop_with_empty_axes: copy */
} red_plan;

/* Mark the reduced axes from the optional `axes` input. */
static ncc_status red_axes(const ncc_node *n, const ncc_tensor *const *in,
                           int rank, bool *mask, bool *any) {
  const ncc_tensor *ax = n->n_in > 1 ? in[1] : NULL;
  int64_t cnt = ax ? ncc_tensor_numel(ax) : 0;
  *any = cnt > 0;
  if (!*any)
    return NCC_OK;
  if (ax->dtype != NCC_DT_I64 && ax->dtype != NCC_DT_I32)
    return node_error(n, NCC_ERR_INPUT, "axes must be i64");
  for (int64_t i = 0; i < cnt; i++) {
    int64_t a = ax->dtype == NCC_DT_I64 ? ((const int64_t *)ax->data)[i]
                                        : ((const int32_t *)ax->data)[i];
    if (a < 0)
      a += rank;
    if (a < 0 || a >= rank)
      return node_error(n, NCC_ERR_INPUT, "axis out of range");
    mask[a] = true;
  }
  return NCC_OK;
}

static ncc_status red_plan_init(const ncc_node *n, const ncc_tensor *const *in,
                                const ncc_tensor *y, red_plan *p) {
  const ncc_tensor *x = in[0];
  bool mask[NCC_MAX_RANK] = {false}, any;
  ncc_status st = red_axes(n, in, x->rank, mask, &any);
  if (st)
    return st;
  memset(p, 0, sizeof *p);
  ncc_reduce_attrs ra;
  ncc_attrs_reduce(n, &ra);
  p->noop = !any && ra.noop_with_empty_axes;
  if (y->dtype != x->dtype)
    return node_error(n, NCC_ERR_INPUT, "output dtype differs from input");
  p->n_in = ncc_tensor_numel(x);
  p->n_out = ncc_tensor_numel(y);
  p->count = 1;
  red_iter *it = &p->it;
  it->rank = x->rank;
  int64_t s = 1;
  for (int i = x->rank - 1; i >= 0; i--) {
    bool red = !any || mask[i];
    it->dims[i] = x->dims[i];
    it->ostr[i] = red ? 0 : s;
    if (red)
      p->count = ncc_ref_dim_mul(p->count, x->dims[i]);
    else
      s = ncc_ref_dim_mul(s, x->dims[i]);
  }
  if (p->noop ? p->n_out != p->n_in : p->n_out != s)
    return node_error(n, NCC_ERR_INPUT, "output size does not match the axes");
  return NCC_OK;
}

static ncc_status reduce_f32(red_kind kind, red_plan *p, const float *x,
                             float *y) {
  if (kind == RED_MAX) {
    for (int64_t i = 0; i < p->n_out; i++)
      y[i] = -INFINITY;
    for (int64_t i = 0; i < p->n_in; i++, red_next(&p->it)) {
      float *d = &y[p->it.off];
      if (x[i] > *d || isnan(x[i]))
        *d = x[i]; /* NaN sticks, like numpy */
    }
    return NCC_OK;
  }
  double *acc = ncc_calloc((size_t)p->n_out, sizeof *acc);
  if (!acc)
    return NCC_ERR_NOMEM;
  for (int64_t i = 0; i < p->n_in; i++, red_next(&p->it))
    acc[p->it.off] += x[i];
  for (int64_t i = 0; i < p->n_out; i++) {
    if (kind == RED_SUM)
      y[i] = (float)acc[i];
    else
      y[i] = p->count > 0 ? (float)(acc[i] / (double)p->count) : NAN;
  }
  ncc_free(acc, (size_t)p->n_out * sizeof *acc);
  return NCC_OK;
}

/* Integer reductions; sums wrap (unsigned), Mean truncates toward zero. */
#define REDUCE_INT(NAME, T, UT, TMIN)                                          \
  static ncc_status NAME(red_kind kind, red_plan *p, const T *x, T *y) {       \
    if (kind == RED_MAX) {                                                     \
      for (int64_t i = 0; i < p->n_out; i++)                                   \
        y[i] = TMIN;                                                           \
      for (int64_t i = 0; i < p->n_in; i++, red_next(&p->it))                  \
        if (x[i] > y[p->it.off])                                               \
          y[p->it.off] = x[i];                                                 \
      return NCC_OK;                                                           \
    }                                                                          \
    uint64_t *acc = ncc_calloc((size_t)p->n_out, sizeof *acc);                 \
    if (!acc)                                                                  \
      return NCC_ERR_NOMEM;                                                    \
    for (int64_t i = 0; i < p->n_in; i++, red_next(&p->it))                    \
      acc[p->it.off] += (uint64_t)(int64_t)x[i];                               \
    for (int64_t i = 0; i < p->n_out; i++) {                                   \
      T sum = (T)(UT)acc[i];                                                   \
      y[i] = kind == RED_MEAN && p->count > 0 ? (T)(sum / p->count) : sum;     \
    }                                                                          \
    ncc_free(acc, (size_t)p->n_out * sizeof *acc);                             \
    return NCC_OK;                                                             \
  }
REDUCE_INT(reduce_i32, int32_t, uint32_t, INT32_MIN)
REDUCE_INT(reduce_i64, int64_t, uint64_t, INT64_MIN)

/* Every other dtype through the accessors: f16/bf16/f64 accumulate in
 * double and round once; integers sum in uint64 (wrapping at the dtype's
 * width when stored) and compare as signed or unsigned by dtype; Mean
 * divides the wrapped sum, truncating toward zero. */
static ncc_status reduce_gen(red_kind kind, red_plan *p, const ncc_tensor *x,
                             ncc_tensor *y) {
  bool fp = ncc_ref_is_float(x->dtype), un = ncc_ref_is_unsigned(x->dtype);
  if (kind == RED_MAX) {
    size_t w = ncc_dtype_size(x->dtype) * 8;
    int64_t tmin = w >= 64 ? INT64_MIN : -(int64_t)(1ull << (w - 1));
    for (int64_t i = 0; i < p->n_out; i++) {
      if (fp) ncc_ref_set_f(y, i, -INFINITY);
      else ncc_ref_set_i(y, i, un || x->dtype == NCC_DT_BOOL ? 0 : tmin);
    }
    for (int64_t i = 0; i < p->n_in; i++, red_next(&p->it)) {
      int64_t o = p->it.off;
      if (fp) {
        double v = ncc_ref_get_f(x, i);
        if (v > ncc_ref_get_f(y, o) || isnan(v)) ncc_ref_set_f(y, o, v);
      } else if (un) {
        uint64_t v = ncc_ref_get_u(x, i);
        if (v > ncc_ref_get_u(y, o)) ncc_ref_set_u(y, o, v);
      } else {
        int64_t v = ncc_ref_get_i(x, i);
        if (v > ncc_ref_get_i(y, o)) ncc_ref_set_i(y, o, v);
      }
    }
    return NCC_OK;
  }
  size_t acc_bytes = (size_t)p->n_out * sizeof(uint64_t);
  void *acc = ncc_calloc((size_t)p->n_out, sizeof(uint64_t)); /* double or u64 */
  if (!acc)
    return NCC_ERR_NOMEM;
  double *accf = acc;
  uint64_t *acci = acc;
  for (int64_t i = 0; i < p->n_in; i++, red_next(&p->it)) {
    if (fp) accf[p->it.off] += ncc_ref_get_f(x, i);
    else acci[p->it.off] += ncc_ref_get_u(x, i);
  }
  for (int64_t i = 0; i < p->n_out; i++) {
    if (fp) {
      ncc_ref_set_f(y, i, kind == RED_SUM ? accf[i]
                          : p->count > 0 ? accf[i] / (double)p->count : NAN);
      continue;
    }
    ncc_ref_set_u(y, i, acci[i]); /* the sum, wrapped to the width */
    if (kind != RED_MEAN || p->count <= 0) continue;
    if (un) ncc_ref_set_u(y, i, ncc_ref_get_u(y, i) / (uint64_t)p->count);
    else ncc_ref_set_i(y, i, ncc_ref_get_i(y, i) / p->count);
  }
  ncc_free(acc, acc_bytes);
  return NCC_OK;
}

static ncc_status reduce(const ncc_node *n, const ncc_tensor *const *in,
                         ncc_tensor *out, red_kind kind) {
  const ncc_tensor *x = in[0];
  red_plan p;
  ncc_status st = red_plan_init(n, in, &out[0], &p);
  if (st)
    return st;
  if (p.noop) {
    memcpy(out[0].data, x->data, ncc_tensor_nbytes(x));
    return NCC_OK;
  }
  switch (x->dtype) {
  case NCC_DT_F32:
    return reduce_f32(kind, &p, x->data, out[0].data);
  case NCC_DT_I32:
    return reduce_i32(kind, &p, x->data, out[0].data);
  case NCC_DT_I64:
    return reduce_i64(kind, &p, x->data, out[0].data);
  default:
    return reduce_gen(kind, &p, x, &out[0]);
  }
}

ncc_status ncc_ref_REDUCEMEAN(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  return reduce(n, in, out, RED_MEAN);
}

ncc_status ncc_ref_REDUCESUM(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  return reduce(n, in, out, RED_SUM);
}

ncc_status ncc_ref_REDUCEMAX(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  return reduce(n, in, out, RED_MAX);
}
