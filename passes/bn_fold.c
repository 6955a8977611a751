/* passes/bn_fold.c — fold an inference BatchNormalization into the Conv or
 * Gemm that feeds it.
 *
 * BN computes y = (t - mean) * k + B per channel c, with
 * k = scale / sqrt(var + epsilon). When t = Conv(x, W, b), each output
 * channel is linear in its own filter, so
 *     y = Conv(x, W * k, (b - mean) * k + B)
 * and likewise for Gemm's output column n (Y = alpha*A*B + beta*C):
 *     y = Gemm(A, B * k[column n], (beta*C - mean) * k + B_bn), beta = 1.
 * The new weights are computed in double and rounded once, so the folded
 * graph differs from the original only by float rounding (the products are
 * now rounded before, not after, the sum) — well inside the drift finder's
 * tolerance.
 *
 * Conditions: W, b/C and the four BN parameters are f32 constants (they are
 * after const-fold, which turns Constant nodes and shape subgraphs into
 * constants — hence the declared dependency); the Conv/Gemm output has no
 * other reader and is not a graph output (the BN output keeps its name and
 * becomes the Conv's); BN is in inference mode; every k is finite. For Gemm
 * the output is [M, N] with BN's channel axis 1 = N, and C, when present, is
 * a scalar or a row [N] / [1, N] (a C varying along M cannot become a
 * per-column bias). MatMul + BN is left alone.
 *
 * A BN that no producer absorbs (DenseNet's and pre-activation ResNets'
 * BN-ReLU-Conv, where the BN reads a Concat, a pool or a value with other
 * readers) becomes y = x * k + shift: a Mul and an Add by per-channel
 * constants [C, 1, ...]. They are plain elementwise ops, so fusion puts
 * them in one kernel with the ReLU after them (or in a Conv's epilogue) and
 * the layout pass keeps them blocked, where a BN kernel would be one more
 * pass over memory in the plain layout. Same conditions on the parameters;
 * C must be static.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../ir/attrs.h"
#include "pass.h"

typedef struct bn_params {
  int64_t c;      /* channels */
  double *k;      /* scale / sqrt(var + eps) */
  double *shift;  /* B - mean * k: y = t * k + shift */
} bn_params;

static bool f32_const(const ncc_value *v) {
  return v && v->kind == NCC_VAL_CONST && v->data && v->dtype == NCC_DT_F32;
}

static void bn_params_free(bn_params *p) {
  ncc_free(p->k, 0);
  ncc_free(p->shift, 0);
}

/* The BN's per-channel factors, when its parameters allow a fold. Returns
 * NCC_OK with p->c == 0 when they do not. */
static ncc_status bn_params_get(const ncc_node *bn, int64_t channels,
                                bn_params *p) {
  memset(p, 0, sizeof *p);
  ncc_norm_attrs na;
  ncc_attrs_norm(bn, &na);
  if (na.training_mode != 0) return NCC_OK;
  for (int i = 1; i < 5; i++)
    if (!f32_const(bn->in[i]) || ncc_shape_numel(&bn->in[i]->shape) != channels)
      return NCC_OK;
  const float *scale = bn->in[1]->data, *b = bn->in[2]->data;
  const float *mean = bn->in[3]->data, *var = bn->in[4]->data;
  double eps = na.epsilon; /* as the reference */
  p->k = ncc_calloc((size_t)channels, sizeof(double));
  p->shift = ncc_calloc((size_t)channels, sizeof(double));
  if (!p->k || !p->shift) {
    bn_params_free(p);
    return NCC_ERR_NOMEM;
  }
  for (int64_t ch = 0; ch < channels; ch++) {
    double k = scale[ch] / sqrt((double)var[ch] + eps);
    if (!isfinite(k)) { /* NaN/inf would spread differently once folded */
      bn_params_free(p);
      return NCC_OK;
    }
    p->k[ch] = k;
    p->shift[ch] = (double)b[ch] - (double)mean[ch] * k;
  }
  p->c = channels;
  return NCC_OK;
}

/* A new constant named after `base` (unique), holding `data`. */
static ncc_value *new_const(ncc_graph *g, const char *base, const char *suffix,
                            int rank, const int64_t *dims, const float *data) {
  ncc_shape s = {rank, {0}};
  memcpy(s.d, dims, sizeof(int64_t) * (size_t)rank);
  char name[256];
  for (int i = 0; i < 100; i++) {
    if (i) snprintf(name, sizeof name, "%.200s.%s%d", base, suffix, i + 1);
    else snprintf(name, sizeof name, "%.200s.%s", base, suffix);
    if (!ncc_graph_find_value(g, name))
      return ncc_graph_add_const(g, name, NCC_DT_F32, &s, data);
  }
  return ncc_graph_add_const(g, NULL, NCC_DT_F32, &s, data);
}

/* The BN's output becomes the producer's output (it keeps its name); the
 * BN node is left without outputs for DCE. */
static ncc_status rewire(ncc_graph *g, ncc_node *prod, ncc_node *bn,
                         ncc_value *w, ncc_value *bias) {
  ncc_value **in = ncc_arena_alloc(&g->arena, 3 * sizeof *in);
  if (!in) return NCC_ERR_NOMEM;
  in[0] = prod->in[0];
  in[1] = w;
  in[2] = bias;
  prod->in = in;
  prod->n_in = 3;
  ncc_value *y = bn->out[0], *t = prod->out[0];
  bn->out[0] = NULL;
  ncc_node_set_output(prod, 0, y);
  t->producer = NULL;
  t->producer_idx = 0;
  return NCC_OK;
}

/* Conv(x, W[M, C/g, k...], b[M]) -> BN over channel axis 1 (= M). */
static ncc_status fold_conv(ncc_graph *g, ncc_node *conv, ncc_node *bn,
                            bool *done) {
  ncc_value *w = conv->in[1];
  ncc_value *b = conv->n_in > 2 ? conv->in[2] : NULL;
  if (!f32_const(w) || w->shape.rank < 1 || (b && !f32_const(b))) return NCC_OK;
  int64_t m = w->shape.d[0];
  if (m <= 0 || (b && ncc_shape_numel(&b->shape) != m)) return NCC_OK;
  bn_params p;
  ncc_status st = bn_params_get(bn, m, &p);
  if (st || !p.c) return st;
  int64_t per = ncc_shape_numel(&w->shape) / m;
  float *nw = ncc_malloc((size_t)(m * per) * sizeof(float));
  float *nb = ncc_malloc((size_t)m * sizeof(float));
  if (!nw || !nb) st = NCC_ERR_NOMEM;
  for (int64_t c = 0; c < m && !st; c++) {
    const float *wc = (const float *)w->data + c * per;
    for (int64_t j = 0; j < per; j++)
      nw[c * per + j] = (float)((double)wc[j] * p.k[c]);
    double bc = b ? ((const float *)b->data)[c] : 0.0;
    nb[c] = (float)(bc * p.k[c] + p.shift[c]);
  }
  ncc_value *vw = NULL, *vb = NULL;
  if (!st && (!(vw = new_const(g, w->name, "bnfold", w->shape.rank, w->shape.d, nw)) ||
              !(vb = new_const(g, b ? b->name : w->name, b ? "bnfold" : "bnfold_bias",
                               1, &m, nb))))
    st = NCC_ERR_NOMEM;
  if (!st) st = rewire(g, conv, bn, vw, vb);
  if (!st) *done = true;
  ncc_free(nw, 0);
  ncc_free(nb, 0);
  bn_params_free(&p);
  return st;
}

/* Gemm's C as a per-column vector of n: a scalar or [N] / [1, N]. */
static bool gemm_bias(const ncc_node *gemm, int64_t n, const float **c,
                      int64_t *stride) {
  *c = NULL;
  *stride = 0;
  if (gemm->n_in < 3 || !gemm->in[2]) return true;
  ncc_gemm_attrs ga;
  ncc_attrs_gemm(gemm, &ga);
  if (ga.beta == 0.0f) return true; /* C unused */
  const ncc_value *v = gemm->in[2];
  if (!f32_const(v)) return false;
  int64_t cnt = ncc_shape_numel(&v->shape);
  bool row = v->shape.rank == 1 || (v->shape.rank == 2 && v->shape.d[0] == 1);
  if (cnt == 1) *stride = 0;
  else if (row && cnt == n) *stride = 1;
  else return false;
  *c = v->data;
  return true;
}

/* Gemm(A, B, C) [M, N] -> BN over axis 1 (= N): scale column n of op(B). */
static ncc_status fold_gemm(ncc_graph *g, ncc_node *gemm, ncc_node *bn,
                            bool *done) {
  ncc_value *b = gemm->in[1];
  if (!f32_const(b) || b->shape.rank != 2 || gemm->out[0]->shape.rank != 2)
    return NCC_OK;
  ncc_gemm_attrs ga;
  ncc_attrs_gemm(gemm, &ga);
  bool tb = ga.trans_b;
  int64_t rows = b->shape.d[0], cols = b->shape.d[1];
  int64_t n = tb ? rows : cols;
  const float *c;
  int64_t cs;
  if (n <= 0 || !gemm_bias(gemm, n, &c, &cs)) return NCC_OK;
  double beta = ga.beta;
  bn_params p;
  ncc_status st = bn_params_get(bn, n, &p);
  if (st || !p.c) return st;
  float *nw = ncc_malloc((size_t)(rows * cols) * sizeof(float));
  float *nb = ncc_malloc((size_t)n * sizeof(float));
  if (!nw || !nb) st = NCC_ERR_NOMEM;
  const float *bp = b->data;
  for (int64_t i = 0; i < rows && !st; i++)
    for (int64_t j = 0; j < cols; j++)
      nw[i * cols + j] = (float)((double)bp[i * cols + j] * p.k[tb ? i : j]);
  for (int64_t j = 0; j < n && !st; j++) {
    double cj = c ? beta * (double)c[j * cs] : 0.0;
    nb[j] = (float)(cj * p.k[j] + p.shift[j]);
  }
  ncc_value *vw = NULL, *vb = NULL;
  if (!st && (!(vw = new_const(g, b->name, "bnfold", 2, b->shape.d, nw)) ||
              !(vb = new_const(g, b->name, "bnfold_bias", 1, &n, nb))))
    st = NCC_ERR_NOMEM;
  if (!st) st = ncc_node_set_attr_float(g, gemm, "beta", 1.0f);
  if (!st) st = rewire(g, gemm, bn, vw, vb);
  if (!st) *done = true;
  ncc_free(nw, 0);
  ncc_free(nb, 0);
  bn_params_free(&p);
  return st;
}

/* BN -> Mul(x, k) then Add(., shift), k and shift [C, 1, ...] (rank of x
 * minus one, so they broadcast over the batch and the spatial axes). The
 * BN node becomes the Mul (it keeps its ONNX name for the profile); the
 * Add is appended to the graph and *add set, for run() to move it right
 * after the Mul. */
static ncc_status to_affine(ncc_graph *g, ncc_node *bn, ncc_node **add) {
  *add = NULL;
  ncc_value *x = bn->in[0], *y = bn->out[0];
  int r = x->shape.rank;
  if (r < 2 || r > NCC_MAX_RANK || ncc_dim_is_sym(x->shape.d[1]) || x->shape.d[1] <= 0)
    return NCC_OK;
  int64_t c = x->shape.d[1];
  bn_params p;
  ncc_status st = bn_params_get(bn, c, &p);
  if (st || !p.c) return st;
  int64_t dims[NCC_MAX_RANK];
  dims[0] = c;
  for (int i = 1; i < r - 1; i++) dims[i] = 1;
  float *kf = ncc_malloc((size_t)c * sizeof(float)), *sf = ncc_malloc((size_t)c * sizeof(float));
  if (!kf || !sf) st = NCC_ERR_NOMEM;
  for (int64_t ch = 0; ch < c && !st; ch++) {
    kf[ch] = (float)p.k[ch];
    sf[ch] = (float)p.shift[ch];
  }
  ncc_value *vk = NULL, *vs = NULL, *t = NULL;
  ncc_value **in = NULL;
  if (!st && (!(vk = new_const(g, bn->in[1]->name, "bnscale", r - 1, dims, kf)) ||
              !(vs = new_const(g, bn->in[2]->name, "bnshift", r - 1, dims, sf)) ||
              !(t = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, NCC_DT_F32, &y->shape)) ||
              !(in = ncc_arena_alloc(&g->arena, 2 * sizeof *in))))
    st = NCC_ERR_NOMEM;
  ncc_value *add_in[2] = {t, vs};
  if (!st && !(*add = ncc_graph_add_node(g, NCC_OP_ADD, "", 2, add_in, 1))) st = NCC_ERR_NOMEM;
  if (!st) {
    in[0] = x;
    in[1] = vk;
    bn->op = NCC_OP_MUL;
    bn->in = in;
    bn->n_in = 2;
    bn->n_attrs = 0;
    bn->attrs = NULL;
    bn->out[0] = NULL;
    y->producer = NULL;
    ncc_node_set_output(bn, 0, t);
    ncc_node_set_output(*add, 0, y);
  }
  ncc_free(kf, 0);
  ncc_free(sf, 0);
  bn_params_free(&p);
  return st;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  int *uses = ncc_count_uses(g);
  int n_orig = g->n_nodes;
  ncc_node **add_after = ncc_calloc((size_t)n_orig + 1, sizeof *add_after);
  if (!uses || !add_after) {
    ncc_free(uses, 0);
    ncc_free(add_after, 0);
    return NCC_ERR_NOMEM;
  }
  ncc_status st = NCC_OK;
  int folded = 0, affine = 0;
  for (int i = 0; i < n_orig && !st; i++) {
    ncc_node *bn = g->nodes[i];
    if (bn->op != NCC_OP_BATCHNORM || !bn->out[0] || bn->n_out != 1) continue;
    ncc_value *t = bn->in[0];
    if (t->dtype != NCC_DT_F32 || bn->out[0]->dtype != NCC_DT_F32) continue;
    ncc_node *prod = t->producer;
    bool done = false;
    if (t->kind == NCC_VAL_NODE && prod && uses[t->id] == 1 && prod->n_out == 1) {
      if (prod->op == NCC_OP_CONV) st = fold_conv(g, prod, bn, &done);
      else if (prod->op == NCC_OP_GEMM) st = fold_gemm(g, prod, bn, &done);
    }
    folded += done;
    if (!st && !done) {
      st = to_affine(g, bn, &add_after[i]);
      affine += add_after[i] != NULL;
    }
  }
  ncc_free(uses, 0);
  /* each Add of to_affine right after its Mul */
  if (!st && affine) st = ncc_place_around(g, n_orig, add_after, 0, 1);
  ncc_free(add_after, 0);
  if (!st && folded && ncc_dce(g) < 0) st = NCC_ERR_NOMEM;
  ctx->rewrites = folded + affine;
  ctx->changed = folded + affine > 0;
  return st;
}

const ncc_pass ncc_pass_bn_fold = {
    .name = "bn-fold",
    .level = 2,
    .needs = "const-fold",
    .desc = "fold inference BatchNormalization into the Conv or Gemm before it, "
            "else into a per-channel Mul and Add",
    .run = run,
};
