/* runtime/ref/ref_linalg.c — reference kernels for MatMul, Gemm and Conv.
 *
 * All f32 work goes through the blocked GEMM core (ref_gemm.c):
 * - MatMul follows numpy: 1-D operands are promoted to a row (A) or column
 *   (B) and the promoted dim dropped; batch dims broadcast. When B has no
 *   batch, A's batch rows fold into one tall GEMM. i32/i64 use a plain loop
 *   that wraps on overflow, as two's-complement hardware does.
 * - Gemm: Y = alpha * op(A) op(B) + beta * C, C broadcast to [M, N].
 * - Conv (1-3 spatial dims, NC...): per image and group, im2col into a
 *   [Cg*kernel, pixels] buffer — in chunks of pixels so it never exceeds
 *   COL_LIMIT — then W_g [Mg, Cg*kernel] x col. Pointwise convs skip im2col
 *   (the input already is that matrix), and convs with one input channel per
 *   group (depthwise) run a direct loop, where GEMM would have K = kernel
 *   size only.
 */
#include <string.h>

#include "ref_nn.h"

#define COL_LIMIT ((int64_t)64 << 20) /* bytes of one im2col chunk */

static ncc_status dtype_error(const ncc_node *n, const ncc_tensor *t) {
  char lb[160];
  return ncc_error(NCC_ERR_UNSUPPORTED, "%s: dtype %s unsupported",
                   ncc_node_label(n, lb, sizeof lb), ncc_dtype_name(t->dtype));
}

static ncc_status shape_error(const ncc_node *n, const char *what) {
  char lb[160];
  return ncc_error(NCC_ERR_INPUT, "%s: %s", ncc_node_label(n, lb, sizeof lb),
                   what);
}

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- MatMul ---- */

typedef struct matmul_geom {
  int64_t m, n, k;
  int nb;                      /* batch rank of the output */
  int64_t bdims[NCC_MAX_RANK]; /* output batch dims */
  int64_t astr[NCC_MAX_RANK];  /* A offset per batch index, 0: broadcast */
  int64_t bstr[NCC_MAX_RANK];  /* B likewise */
  int64_t batches, a_batches, b_batches;
} matmul_geom;

/* Batch strides of one operand with `own` batch dims, aligned right to the
 * output's nb batch dims; broadcast (size-1 or missing) dims get 0. */
static bool matmul_batch(const ncc_tensor *t, int own, int64_t mat,
                         matmul_geom *g, int64_t *str, int64_t *count) {
  int64_t s = mat;
  *count = 1;
  for (int i = g->nb - 1; i >= 0; i--) {
    int j = i - (g->nb - own);
    int64_t d = j >= 0 ? t->dims[j] : 1;
    if (d != 1 && d != g->bdims[i])
      return false;
    str[i] = d == 1 ? 0 : s;
    s *= d;
    *count *= d;
  }
  return true;
}

static ncc_status matmul_geometry(const ncc_node *n, const ncc_tensor *a,
                                  const ncc_tensor *b, const ncc_tensor *y,
                                  matmul_geom *g) {
  if (a->rank < 1 || b->rank < 1)
    return shape_error(n, "operands must have rank >= 1");
  int ra = a->rank, rb = b->rank;
  g->m = ra > 1 ? a->dims[ra - 2] : 1;
  g->k = a->dims[ra - 1];
  g->n = rb > 1 ? b->dims[rb - 1] : 1;
  int64_t kb = rb > 1 ? b->dims[rb - 2] : b->dims[0];
  if (kb != g->k)
    return shape_error(n, "inner dimensions differ");
  int mat_dims = (ra > 1) + (rb > 1);
  g->nb = y->rank - mat_dims;
  if (g->nb < 0 || g->nb < ra - 2 || g->nb < rb - 2)
    return shape_error(n, "output rank does not match the operands");
  if ((ra > 1 && y->dims[g->nb] != g->m) ||
      (rb > 1 && y->dims[y->rank - 1] != g->n))
    return shape_error(n, "output matrix dims do not match the operands");
  g->batches = 1;
  for (int i = 0; i < g->nb; i++)
    g->batches *= g->bdims[i] = y->dims[i];
  int own_a = ra > 2 ? ra - 2 : 0, own_b = rb > 2 ? rb - 2 : 0;
  if (!matmul_batch(a, own_a, g->m * g->k, g, g->astr, &g->a_batches) ||
      !matmul_batch(b, own_b, g->k * g->n, g, g->bstr, &g->b_batches))
    return shape_error(n, "batch dimensions do not broadcast to the output");
  return NCC_OK;
}

/* Element offsets of A's and B's matrices for output batch `bi`. */
static void matmul_offsets(const matmul_geom *g, int64_t bi, int64_t *ao,
                           int64_t *bo) {
  *ao = *bo = 0;
  for (int i = g->nb - 1; i >= 0; i--) {
    int64_t idx = bi % g->bdims[i];
    bi /= g->bdims[i];
    *ao += idx * g->astr[i];
    *bo += idx * g->bstr[i];
  }
}

static ncc_status matmul_f32(const matmul_geom *g, const float *a,
                             const float *b, float *y) {
  memset(y, 0, (size_t)(g->batches * g->m * g->n) * sizeof *y);
  /* B shared by every batch and A not broadcast: one tall product. */
  if (g->b_batches == 1 && g->a_batches == g->batches)
    return ncc_ref_sgemm(g->batches * g->m, g->n, g->k, 1.0f, a, g->k, 1, b,
                         g->n, 1, y, g->n);
  for (int64_t bi = 0; bi < g->batches; bi++) {
    int64_t ao, bo;
    matmul_offsets(g, bi, &ao, &bo);
    ncc_status st = ncc_ref_sgemm(g->m, g->n, g->k, 1.0f, a + ao, g->k, 1,
                                  b + bo, g->n, 1, y + bi * g->m * g->n, g->n);
    if (st)
      return st;
  }
  return NCC_OK;
}

/* Integer MatMul: unsigned arithmetic, so overflow wraps instead of being
 * undefined. */
#define MATMUL_INT(NAME, T, UT)                                                \
  static void NAME(const matmul_geom *g, const T *a, const T *b, T *y) {       \
    for (int64_t bi = 0; bi < g->batches; bi++) {                              \
      int64_t ao, bo;                                                          \
      matmul_offsets(g, bi, &ao, &bo);                                         \
      const T *ab = a + ao, *bb = b + bo;                                      \
      T *yb = y + bi * g->m * g->n;                                            \
      for (int64_t i = 0; i < g->m; i++)                                       \
        for (int64_t j = 0; j < g->n; j++) {                                   \
          UT acc = 0;                                                          \
          for (int64_t p = 0; p < g->k; p++)                                   \
            acc += (UT)ab[i * g->k + p] * (UT)bb[p * g->n + j];                \
          yb[i * g->n + j] = (T)acc;                                           \
        }                                                                      \
    }                                                                          \
  }
MATMUL_INT(matmul_i32, int32_t, uint32_t)
MATMUL_INT(matmul_i64, int64_t, uint64_t)

/* Every other dtype through the accessors: f16/bf16/f64 accumulate in
 * double and round once; u32/u64 in uint64, wrapping at the width. */
static void matmul_gen(const matmul_geom *g, const ncc_tensor *a,
                       const ncc_tensor *b, ncc_tensor *y) {
  bool fp = ncc_ref_is_float(a->dtype);
  for (int64_t bi = 0; bi < g->batches; bi++) {
    int64_t ao, bo, yo = bi * g->m * g->n;
    matmul_offsets(g, bi, &ao, &bo);
    for (int64_t i = 0; i < g->m; i++)
      for (int64_t j = 0; j < g->n; j++) {
        double accf = 0;
        uint64_t acci = 0;
        for (int64_t p = 0; p < g->k; p++) {
          int64_t ia = ao + i * g->k + p, ib = bo + p * g->n + j;
          if (fp) accf += ncc_ref_get_f(a, ia) * ncc_ref_get_f(b, ib);
          else acci += ncc_ref_get_u(a, ia) * ncc_ref_get_u(b, ib);
        }
        if (fp) ncc_ref_set_f(y, yo + i * g->n + j, accf);
        else ncc_ref_set_u(y, yo + i * g->n + j, acci);
      }
  }
}

ncc_status ncc_ref_MATMUL(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  const ncc_tensor *a = in[0], *b = in[1];
  ncc_tensor *y = &out[0];
  if (b->dtype != a->dtype || y->dtype != a->dtype)
    return shape_error(n, "operand and result dtypes differ");
  matmul_geom g;
  ncc_status st = matmul_geometry(n, a, b, y, &g);
  if (st)
    return st;
  switch (a->dtype) {
  case NCC_DT_F32:
    return matmul_f32(&g, a->data, b->data, y->data);
  case NCC_DT_I32:
    matmul_i32(&g, a->data, b->data, y->data);
    return NCC_OK;
  case NCC_DT_I64:
    matmul_i64(&g, a->data, b->data, y->data);
    return NCC_OK;
  case NCC_DT_F16: case NCC_DT_BF16: case NCC_DT_F64:
  case NCC_DT_U32: case NCC_DT_U64:
    matmul_gen(&g, a, b, y);
    return NCC_OK;
  default:
    return dtype_error(n, a);
  }
}

/* ---- Gemm ---- */

/* Y = beta * C, C unidirectionally broadcast to [m, n]. */
static ncc_status gemm_init_c(const ncc_node *n, const ncc_tensor *c,
                              float beta, int64_t m, int64_t nn, float *y) {
  if (c->rank > 2)
    return shape_error(n, "C must have rank <= 2");
  int64_t rows = c->rank == 2 ? c->dims[0] : 1;
  int64_t cols = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
  if ((rows != 1 && rows != m) || (cols != 1 && cols != nn))
    return shape_error(n, "C does not broadcast to [M, N]");
  const float *cp = c->data;
  int64_t rs = rows == 1 ? 0 : cols, cs = cols == 1 ? 0 : 1;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < nn; j++)
      y[i * nn + j] = beta * cp[i * rs + j * cs];
  return NCC_OK;
}

ncc_status ncc_ref_GEMM(const ncc_node *n, const ncc_tensor *const *in,
                        ncc_tensor *out) {
  const ncc_tensor *a = in[0], *b = in[1];
  const ncc_tensor *c = n->n_in > 2 ? in[2] : NULL;
  ncc_tensor *y = &out[0];
  if (a->dtype != NCC_DT_F32)
    return dtype_error(n, a);
  if (b->dtype != NCC_DT_F32 || y->dtype != NCC_DT_F32 ||
      (c && c->dtype != NCC_DT_F32))
    return shape_error(n, "operand and result dtypes differ");
  if (a->rank != 2 || b->rank != 2 || y->rank != 2)
    return shape_error(n, "A, B and Y must be matrices");
  ncc_gemm_attrs ga;
  ncc_attrs_gemm(n, &ga);
  bool ta = ga.trans_a, tb = ga.trans_b;
  float alpha = ga.alpha, beta = ga.beta;
  int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1];
  int64_t kb = b->dims[tb ? 1 : 0], nn = b->dims[tb ? 0 : 1];
  if (k != kb)
    return shape_error(n, "inner dimensions differ");
  if (y->dims[0] != m || y->dims[1] != nn)
    return shape_error(n, "output is not [M, N]");
  float *yp = y->data;
  if (c && beta != 0.0f) {
    ncc_status st = gemm_init_c(n, c, beta, m, nn, yp);
    if (st)
      return st;
  } else {
    memset(yp, 0, (size_t)(m * nn) * sizeof *yp);
  }
  int64_t lda = a->dims[1], ldb = b->dims[1];
  return ncc_ref_sgemm(m, nn, k, alpha, a->data, ta ? 1 : lda, ta ? lda : 1,
                       b->data, tb ? 1 : ldb, tb ? ldb : 1, yp, nn);
}

/* ---- Conv ---- */

typedef struct conv_geom {
  ncc_ref_window w;
  int64_t group, cg, mg; /* groups, input / output channels per group */
  int64_t m;             /* output channels */
  int64_t ksize;         /* kernel elements per channel */
  int64_t in_sz, out_sz; /* spatial sizes */
} conv_geom;

static ncc_status conv_geometry(const ncc_node *n, const ncc_tensor *x,
                                const ncc_tensor *wt, const ncc_tensor *bias,
                                const ncc_tensor *y, conv_geom *g) {
  if (wt->rank != x->rank || x->rank < 3)
    return shape_error(n, "X and W must both be [N|M, C, spatial...]");
  ncc_status st = ncc_ref_window_init(n, x, y, wt->dims + 2, &g->w);
  if (st)
    return st;
  g->group = g->w.group;
  g->m = wt->dims[0];
  g->cg = wt->dims[1];
  if (g->group < 1 || g->m % g->group != 0 || g->cg * g->group != x->dims[1])
    return shape_error(n, "group does not divide the channels");
  g->mg = g->m / g->group;
  if (y->rank != x->rank || y->dims[1] != g->m)
    return shape_error(n, "output channels differ from W");
  if (bias && (bias->rank != 1 || bias->dims[0] != g->m))
    return shape_error(n, "bias B must be [M]");
  const ncc_ref_window *w = &g->w;
  g->ksize = w->k[0] * w->k[1] * w->k[2];
  g->in_sz = w->in[0] * w->in[1] * w->in[2];
  g->out_sz = w->out[0] * w->out[1] * w->out[2];
  return NCC_OK;
}

static void conv_init_bias(const conv_geom *g, const ncc_tensor *bias,
                           float *y) {
  int64_t total = g->w.batch * g->m;
  if (!bias) {
    memset(y, 0, (size_t)(total * g->out_sz) * sizeof *y);
    return;
  }
  const float *bp = bias->data;
  for (int64_t i = 0; i < total; i++)
    for (int64_t p = 0; p < g->out_sz; p++)
      y[i * g->out_sz + p] = bp[i % g->m];
}

/* One channel-group of one image: pointwise with unit stride and no pads,
 * where X itself is the [Cg, pixels] matrix. */
static bool conv_is_pointwise(const conv_geom *g) {
  const ncc_ref_window *w = &g->w;
  for (int i = 0; i < NCC_REF_WIN_DIMS; i++)
    if (w->k[i] != 1 || w->s[i] != 1 || w->pb[i] != 0 || w->in[i] != w->out[i])
      return false;
  return true;
}

/* Copy one kernel row of im2col: the taps at kernel offset (a, b, t) of
 * channel plane x for output pixels [p0, p0 + pc). */
static void im2col_row(const ncc_ref_window *w, const float *x, int64_t a,
                       int64_t b, int64_t t, int64_t p0, int64_t pc,
                       float *dst) {
  int64_t lo2, hi2;
  ncc_ref_window_range(w, 2, t, 0, w->in[2], &lo2, &hi2);
  int64_t shift2 = t * w->d[2] - w->pb[2], s2 = w->s[2];
  for (int64_t p = p0, end = p0 + pc; p < end;) {
    int64_t o2 = p % w->out[2], o01 = p / w->out[2];
    int64_t o1 = o01 % w->out[1], o0 = o01 / w->out[1];
    int64_t len = min64(w->out[2] - o2, end - p);
    int64_t i0 = o0 * w->s[0] - w->pb[0] + a * w->d[0];
    int64_t i1 = o1 * w->s[1] - w->pb[1] + b * w->d[1];
    if (i0 < 0 || i0 >= w->in[0] || i1 < 0 || i1 >= w->in[1]) {
      memset(dst, 0, (size_t)len * sizeof *dst);
    } else {
      const float *row = x + (i0 * w->in[1] + i1) * w->in[2];
      for (int64_t q = 0; q < len; q++) {
        int64_t oo = o2 + q;
        dst[q] = oo >= lo2 && oo < hi2 ? row[oo * s2 + shift2] : 0.0f;
      }
    }
    dst += len;
    p += len;
  }
}

/* im2col of one channel group: rows (c, a, b, t), columns pixels p0.. */
static void im2col(const conv_geom *g, const float *x, int64_t p0, int64_t pc,
                   float *col) {
  const ncc_ref_window *w = &g->w;
  for (int64_t c = 0; c < g->cg; c++)
    for (int64_t a = 0; a < w->k[0]; a++)
      for (int64_t b = 0; b < w->k[1]; b++)
        for (int64_t t = 0; t < w->k[2]; t++, col += pc)
          im2col_row(w, x + c * g->in_sz, a, b, t, p0, pc, col);
}

static ncc_status conv_gemm(const conv_geom *g, const float *x, const float *wt,
                            float *y) {
  int64_t kdim = g->cg * g->ksize;
  bool pointwise = conv_is_pointwise(g);
  int64_t chunk = min64(g->out_sz, COL_LIMIT / (int64_t)sizeof(float) / kdim);
  if (chunk < 1)
    chunk = 1;
  size_t col_bytes = pointwise ? 0 : (size_t)(kdim * chunk) * sizeof(float);
  float *col = NULL;
  if (!pointwise && !(col = ncc_malloc(col_bytes)))
    return NCC_ERR_NOMEM;
  ncc_status st = NCC_OK;
  for (int64_t nb = 0; nb < g->w.batch && !st; nb++)
    for (int64_t gr = 0; gr < g->group && !st; gr++) {
      const float *xg = x + (nb * g->group + gr) * g->cg * g->in_sz;
      const float *wg = wt + gr * g->mg * kdim;
      float *yg = y + (nb * g->m + gr * g->mg) * g->out_sz;
      if (pointwise) {
        st = ncc_ref_sgemm(g->mg, g->out_sz, kdim, 1.0f, wg, kdim, 1, xg,
                           g->in_sz, 1, yg, g->out_sz);
        continue;
      }
      for (int64_t p0 = 0; p0 < g->out_sz && !st; p0 += chunk) {
        int64_t pc = min64(chunk, g->out_sz - p0);
        im2col(g, xg, p0, pc, col);
        st = ncc_ref_sgemm(g->mg, pc, kdim, 1.0f, wg, kdim, 1, col, pc, 1,
                           yg + p0, g->out_sz);
      }
    }
  ncc_free(col, col_bytes);
  return st;
}

/* y_plane += wv * x_plane shifted by kernel tap (a, b, t), valid taps only. */
static void conv_direct_tap(const ncc_ref_window *w, const float *x, float wv,
                            int64_t a, int64_t b, int64_t t, float *y) {
  int64_t lo0, hi0, lo1, hi1, lo2, hi2;
  ncc_ref_window_range(w, 0, a, 0, w->in[0], &lo0, &hi0);
  ncc_ref_window_range(w, 1, b, 0, w->in[1], &lo1, &hi1);
  ncc_ref_window_range(w, 2, t, 0, w->in[2], &lo2, &hi2);
  int64_t s2 = w->s[2], shift2 = t * w->d[2] - w->pb[2];
  for (int64_t o0 = lo0; o0 < hi0; o0++) {
    int64_t i0 = o0 * w->s[0] - w->pb[0] + a * w->d[0];
    for (int64_t o1 = lo1; o1 < hi1; o1++) {
      int64_t i1 = o1 * w->s[1] - w->pb[1] + b * w->d[1];
      const float *row = x + (i0 * w->in[1] + i1) * w->in[2];
      float *dst = y + (o0 * w->out[1] + o1) * w->out[2];
      for (int64_t o2 = lo2; o2 < hi2; o2++)
        dst[o2] += wv * row[o2 * s2 + shift2];
    }
  }
}

/* One input channel per group (depthwise, any channel multiplier). */
static void conv_depthwise(const conv_geom *g, const float *x, const float *wt,
                           float *y) {
  const ncc_ref_window *w = &g->w;
  for (int64_t nb = 0; nb < w->batch; nb++)
    for (int64_t m = 0; m < g->m; m++) {
      const float *xp = x + (nb * w->chans + m / g->mg) * g->in_sz;
      const float *wk = wt + m * g->ksize;
      float *yp = y + (nb * g->m + m) * g->out_sz;
      for (int64_t a = 0; a < w->k[0]; a++)
        for (int64_t b = 0; b < w->k[1]; b++)
          for (int64_t t = 0; t < w->k[2]; t++, wk++)
            conv_direct_tap(w, xp, *wk, a, b, t, yp);
    }
}

ncc_status ncc_ref_CONV(const ncc_node *n, const ncc_tensor *const *in,
                        ncc_tensor *out) {
  const ncc_tensor *x = in[0], *wt = in[1];
  const ncc_tensor *bias = n->n_in > 2 ? in[2] : NULL;
  ncc_tensor *y = &out[0];
  if (x->dtype != NCC_DT_F32)
    return dtype_error(n, x);
  if (wt->dtype != NCC_DT_F32 || y->dtype != NCC_DT_F32 ||
      (bias && bias->dtype != NCC_DT_F32))
    return shape_error(n, "operand and result dtypes differ");
  conv_geom g;
  ncc_status st = conv_geometry(n, x, wt, bias, y, &g);
  if (st)
    return st;
  conv_init_bias(&g, bias, y->data);
  if (g.out_sz == 0 || g.m == 0 || g.cg * g.ksize == 0)
    return NCC_OK;
  if (g.cg == 1) {
    conv_depthwise(&g, x->data, wt->data, y->data);
    return NCC_OK;
  }
  return conv_gemm(&g, x->data, wt->data, y->data);
}
