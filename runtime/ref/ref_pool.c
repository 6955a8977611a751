/* runtime/ref/ref_pool.c — reference kernels for MaxPool, AveragePool and
 * GlobalAveragePool, plus the sliding-window geometry Conv shares.
 *
 * Output sizes come from shape inference (ceil_mode only shows there); the
 * kernels derive every window from the output position, so a last window
 * that runs past the padded input simply has fewer taps: they are skipped by
 * MaxPool, excluded from the divisor of AveragePool, and with
 * count_include_pad only the taps inside [-pad_begin, in + pad_end) count,
 * never positions beyond the padded bounds (what onnxruntime does).
 * A window with no tap inside the input gives -inf (MaxPool, index -1) or
 * NaN (AveragePool without count_include_pad): such windows only arise from
 * pads at least as large as the kernel.
 */
#include <math.h>
#include <string.h>

#include "../../ir/window.h"
#include "ref_nn.h"

/* ---- window geometry ---- */

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

void ncc_ref_window_range(const ncc_ref_window *w, int i, int64_t t, int64_t lo,
                          int64_t hi, int64_t *o0, int64_t *o1) {
  int64_t shift = w->pb[i] - t * w->d[i];
  int64_t first = -floor_div(-(lo + shift), w->s[i]); /* ceil */
  int64_t last = floor_div(hi - 1 + shift, w->s[i]);
  *o0 = first < 0 ? 0 : first;
  *o1 = last + 1 > w->out[i] ? w->out[i] : last + 1;
}

static void window_lift_defaults(ncc_ref_window *w) {
  for (int i = 0; i < NCC_REF_WIN_DIMS; i++) {
    w->in[i] = w->out[i] = w->k[i] = w->s[i] = w->d[i] = 1;
    w->pb[i] = w->pe[i] = 0;
  }
}

/* The attributes come from the one decoder (ir/window.c); this adds the
 * run-time sizes, lifted to 3 spatial dims, and resolves SAME pads. */
ncc_status ncc_ref_window_init(const ncc_node *n, const ncc_tensor *x,
                               const ncc_tensor *y, const int64_t *kernel,
                               ncc_ref_window *w) {
  char lb[160];
  int sp = x->rank - 2;
  if (sp < 1 || sp > NCC_REF_WIN_DIMS)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: input of rank %d (want 3-5: N, C, 1-3 spatial dims)",
                     ncc_node_label(n, lb, sizeof lb), x->rank);
  if (y->rank != x->rank || y->dims[0] != x->dims[0])
    return ncc_error(NCC_ERR_INPUT, "%s: output shape does not match input",
                     ncc_node_label(n, lb, sizeof lb));
  ncc_window win;
  ncc_status st = ncc_window_decode(n, sp, kernel, &win);
  if (st)
    return st;
  window_lift_defaults(w);
  w->spatial = sp;
  w->batch = x->dims[0];
  w->chans = x->dims[1];
  w->group = win.group;
  int off = NCC_REF_WIN_DIMS - sp;
  for (int i = 0; i < sp; i++) {
    int j = off + i;
    w->in[j] = x->dims[2 + i];
    w->out[j] = y->dims[2 + i];
    w->k[j] = win.kernel[i];
    w->s[j] = win.stride[i];
    w->d[j] = win.dilation[i];
    ncc_window_pads(&win, i, w->in[j], w->out[j], &w->pb[j], &w->pe[j]);
  }
  return NCC_OK;
}

/* ---- shared checks ---- */

static ncc_status need_f32(const ncc_node *n, const ncc_tensor *t) {
  char lb[160];
  if (t->dtype == NCC_DT_F32)
    return NCC_OK;
  return ncc_error(NCC_ERR_UNSUPPORTED, "%s: dtype %s unsupported (want f32)",
                   ncc_node_label(n, lb, sizeof lb), ncc_dtype_name(t->dtype));
}

static ncc_status check_pool_out(const ncc_node *n, const ncc_tensor *x,
                                 const ncc_tensor *y) {
  char lb[160];
  if (y->dtype != x->dtype || y->dims[1] != x->dims[1])
    return ncc_error(NCC_ERR_INPUT, "%s: output does not match input",
                     ncc_node_label(n, lb, sizeof lb));
  return NCC_OK;
}

static int64_t spatial_size(const int64_t *d) { return d[0] * d[1] * d[2]; }

/* Whether output `i` of the node was requested (an omitted trailing or
 * middle output has no value, or no storage). */
static bool has_output(const ncc_node *n, const ncc_tensor *out, int i) {
  return i < n->n_out && n->out[i] && out[i].data;
}

/* ---- MaxPool ---- */

typedef struct max_result {
  float v;
  int64_t at[NCC_REF_WIN_DIMS]; /* input coordinates of the max; -1: none */
} max_result;

/* Max of the window whose first tap is at `o0`; the first maximum wins. */
static max_result max_window(const ncc_ref_window *w, const float *x,
                             const int64_t *o0) {
  max_result r = {-INFINITY, {-1, -1, -1}};
  for (int64_t a = 0; a < w->k[0]; a++) {
    int64_t i0 = o0[0] + a * w->d[0];
    if (i0 < 0 || i0 >= w->in[0])
      continue;
    for (int64_t b = 0; b < w->k[1]; b++) {
      int64_t i1 = o0[1] + b * w->d[1];
      if (i1 < 0 || i1 >= w->in[1])
        continue;
      const float *row = x + (i0 * w->in[1] + i1) * w->in[2];
      for (int64_t c = 0; c < w->k[2]; c++) {
        int64_t i2 = o0[2] + c * w->d[2];
        if (i2 < 0 || i2 >= w->in[2])
          continue;
        if (r.at[0] < 0 || row[i2] > r.v) {
          r.v = row[i2];
          r.at[0] = i0, r.at[1] = i1, r.at[2] = i2;
        }
      }
    }
  }
  return r;
}

/* The same for any MaxPool dtype (f16, bf16, f64, i8, u8) through the
 * accessors: every value of these is exact in double, so the max is too.
 * `base` is the plane's first element. */
static max_result max_window_gen(const ncc_ref_window *w, const ncc_tensor *x,
                                 int64_t base, const int64_t *o0, double *v) {
  max_result r = {-INFINITY, {-1, -1, -1}};
  *v = -INFINITY;
  for (int64_t a = 0; a < w->k[0]; a++) {
    int64_t i0 = o0[0] + a * w->d[0];
    if (i0 < 0 || i0 >= w->in[0])
      continue;
    for (int64_t b = 0; b < w->k[1]; b++) {
      int64_t i1 = o0[1] + b * w->d[1];
      if (i1 < 0 || i1 >= w->in[1])
        continue;
      for (int64_t c = 0; c < w->k[2]; c++) {
        int64_t i2 = o0[2] + c * w->d[2];
        if (i2 < 0 || i2 >= w->in[2])
          continue;
        double e = ncc_ref_get_f(x, base + (i0 * w->in[1] + i1) * w->in[2] + i2);
        if (r.at[0] < 0 || e > *v) {
          *v = e;
          r.at[0] = i0, r.at[1] = i1, r.at[2] = i2;
        }
      }
    }
  }
  return r;
}

/* ONNX Indices: flat over N*C*spatial; storage_order 1 numbers the spatial
 * dims column-major (first spatial dim fastest). Lifted dims are size 1 at
 * index 0, so they do not change either formula. */
static int64_t max_index(const ncc_ref_window *w, const max_result *r,
                         int64_t plane, bool col_major) {
  if (r->at[0] < 0)
    return -1;
  int64_t sp = spatial_size(w->in);
  if (col_major)
    return plane * sp + r->at[0] + w->in[0] * (r->at[1] + w->in[1] * r->at[2]);
  return plane * sp + (r->at[0] * w->in[1] + r->at[1]) * w->in[2] + r->at[2];
}

ncc_status ncc_ref_MAXPOOL(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  char lb[160];
  const ncc_tensor *x = in[0];
  ncc_ref_window w;
  ncc_status st;
  /* ONNX MaxPool: f32 typed below; f16, bf16, f64, i8, u8 generic */
  bool f32 = x->dtype == NCC_DT_F32;
  bool gen = x->dtype == NCC_DT_F16 || x->dtype == NCC_DT_BF16 ||
             x->dtype == NCC_DT_F64 || x->dtype == NCC_DT_I8 || x->dtype == NCC_DT_U8;
  if ((!gen && (st = need_f32(n, x))) || (st = check_pool_out(n, x, &out[0])) ||
      (st = ncc_ref_window_init(n, x, &out[0], NULL, &w)))
    return st;
  int64_t *idx = NULL;
  if (has_output(n, out, 1)) {
    if (out[1].dtype != NCC_DT_I64 ||
        ncc_tensor_numel(&out[1]) != ncc_tensor_numel(&out[0]))
      return ncc_error(NCC_ERR_INPUT, "%s: Indices output must be i64 like Y",
                       ncc_node_label(n, lb, sizeof lb));
    idx = out[1].data;
  }
  ncc_pool_attrs pa;
  ncc_attrs_pool(n, &pa);
  bool col_major = pa.col_major;
  const float *xp = x->data;
  float *yp = out[0].data;
  int64_t in_sz = spatial_size(w.in), planes = w.batch * w.chans, yi = 0;
  for (int64_t pl = 0; pl < planes; pl++) {
    const float *xplane = xp + pl * in_sz;
    int64_t o[NCC_REF_WIN_DIMS];
    for (o[0] = 0; o[0] < w.out[0]; o[0]++)
      for (o[1] = 0; o[1] < w.out[1]; o[1]++)
        for (o[2] = 0; o[2] < w.out[2]; o[2]++) {
          int64_t start[NCC_REF_WIN_DIMS];
          for (int i = 0; i < NCC_REF_WIN_DIMS; i++)
            start[i] = o[i] * w.s[i] - w.pb[i];
          max_result r;
          if (f32) {
            r = max_window(&w, xplane, start);
            yp[yi++] = r.v;
          } else {
            double v;
            r = max_window_gen(&w, x, pl * in_sz, start, &v);
            ncc_ref_set_f(&out[0], yi++, v);
          }
          if (idx)
            *idx++ = max_index(&w, &r, pl, col_major);
        }
  }
  return NCC_OK;
}

/* ---- AveragePool ---- */

/* Taps t < k of dim i whose position start + t*d lies in [lo, hi). */
static int64_t taps_in(const ncc_ref_window *w, int i, int64_t start,
                       int64_t lo, int64_t hi) {
  int64_t cnt = 0;
  for (int64_t t = 0; t < w->k[i]; t++) {
    int64_t p = start + t * w->d[i];
    cnt += p >= lo && p < hi;
  }
  return cnt;
}

static double sum_window(const ncc_ref_window *w, const float *x,
                         const int64_t *o0) {
  double sum = 0.0;
  for (int64_t a = 0; a < w->k[0]; a++) {
    int64_t i0 = o0[0] + a * w->d[0];
    if (i0 < 0 || i0 >= w->in[0])
      continue;
    for (int64_t b = 0; b < w->k[1]; b++) {
      int64_t i1 = o0[1] + b * w->d[1];
      if (i1 < 0 || i1 >= w->in[1])
        continue;
      const float *row = x + (i0 * w->in[1] + i1) * w->in[2];
      for (int64_t c = 0; c < w->k[2]; c++) {
        int64_t i2 = o0[2] + c * w->d[2];
        if (i2 >= 0 && i2 < w->in[2])
          sum += row[i2];
      }
    }
  }
  return sum;
}

ncc_status ncc_ref_AVGPOOL(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_ref_window w;
  ncc_status st;
  if ((st = need_f32(n, x)) || (st = check_pool_out(n, x, &out[0])) ||
      (st = ncc_ref_window_init(n, x, &out[0], NULL, &w)))
    return st;
  ncc_pool_attrs pa;
  ncc_attrs_pool(n, &pa);
  bool include_pad = pa.count_include_pad;
  const float *xp = x->data;
  float *yp = out[0].data;
  int64_t in_sz = spatial_size(w.in), planes = w.batch * w.chans;
  for (int64_t pl = 0; pl < planes; pl++) {
    const float *xplane = xp + pl * in_sz;
    int64_t o[NCC_REF_WIN_DIMS];
    for (o[0] = 0; o[0] < w.out[0]; o[0]++)
      for (o[1] = 0; o[1] < w.out[1]; o[1]++)
        for (o[2] = 0; o[2] < w.out[2]; o[2]++) {
          int64_t start[NCC_REF_WIN_DIMS], count = 1;
          for (int i = 0; i < NCC_REF_WIN_DIMS; i++) {
            start[i] = o[i] * w.s[i] - w.pb[i];
            count *= include_pad
                         ? taps_in(&w, i, start[i], -w.pb[i], w.in[i] + w.pe[i])
                         : taps_in(&w, i, start[i], 0, w.in[i]);
          }
          double sum = sum_window(&w, xplane, start);
          *yp++ = count > 0 ? (float)(sum / (double)count) : NAN;
        }
  }
  return NCC_OK;
}

/* ---- GlobalAveragePool ---- */

ncc_status ncc_ref_GLOBALAVGPOOL(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  char lb[160];
  const ncc_tensor *x = in[0];
  ncc_status st;
  if ((st = need_f32(n, x)))
    return st;
  if (x->rank < 2 || out[0].dtype != NCC_DT_F32)
    return ncc_error(NCC_ERR_INPUT, "%s: input must be f32 [N, C, ...]",
                     ncc_node_label(n, lb, sizeof lb));
  int64_t planes = x->dims[0] * x->dims[1];
  int64_t sp = planes ? ncc_tensor_numel(x) / planes : 0;
  if (ncc_tensor_numel(&out[0]) != planes)
    return ncc_error(NCC_ERR_INPUT, "%s: output must be [N, C, 1, ...]",
                     ncc_node_label(n, lb, sizeof lb));
  const float *xp = x->data;
  float *yp = out[0].data;
  for (int64_t pl = 0; pl < planes; pl++) {
    double sum = 0.0;
    for (int64_t i = 0; i < sp; i++)
      sum += xp[pl * sp + i];
    yp[pl] = sp > 0 ? (float)(sum / (double)sp) : NAN;
  }
  return NCC_OK;
}
