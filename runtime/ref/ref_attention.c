/* runtime/ref/ref_attention.c — reference kernels of Attention (opsets
 * 23-25) and RotaryEmbedding (opset 23).
 *
 * Attention follows ONNX's reference: 3-D Q/K/V are split into heads; K/V
 * are appended to past_key/past_value (the present outputs); query head h
 * reads kv head h / (Hq / Hkv) (grouped-query attention); the scores
 * scale * q.k are soft-capped (softcap * tanh(s / softcap)) before the
 * bias is added. The bias is the mask (bool: 0 or -inf; float: added; a
 * mask shorter than the keys is padded with -inf), the causal frontier
 * j <= i + offset (offset: the past length, or nonpad_kv_seqlen[b] - S),
 * the sliding window and the nonpad_kv_seqlen padding. A row whose bias is
 * -inf everywhere gives zeros. qk_matmul_output is, as the reference
 * computes it, the scores (modes 0 and 1), the scores plus bias (2) or the
 * softmax (3). Everything is computed in double.
 */
#include <math.h>
#include <string.h>

#include "ref.h"

typedef struct att {
  int64_t b, hq, hkv, s, l, p, t, dk, dv, tm; /* tm: the mask's key length */
  bool in3d;
} att;

/* Element d of head h, row i of a Q/K/V input in its 3-D or 4-D layout. */
static int64_t at_in(const att *g, int64_t heads, int64_t rows, int64_t dim, int64_t b,
                     int64_t h, int64_t i, int64_t d) {
  if (g->in3d) return (b * rows + i) * heads * dim + h * dim + d;
  return ((b * heads + h) * rows + i) * dim + d;
}

/* present = concat(past, new) along the sequence, as doubles [B, Hkv, T, D]. */
static void present(const att *g, const ncc_tensor *past, const ncc_tensor *x, int64_t dim,
                    double *dst) {
  for (int64_t b = 0; b < g->b; b++)
    for (int64_t h = 0; h < g->hkv; h++)
      for (int64_t j = 0; j < g->t; j++)
        for (int64_t d = 0; d < dim; d++) {
          double v = j < g->p ? ncc_ref_get_f(past, ((b * g->hkv + h) * g->p + j) * dim + d)
                              : ncc_ref_get_f(x, at_in(g, g->hkv, g->l, dim, b, h, j - g->p, d));
          dst[((b * g->hkv + h) * g->t + j) * dim + d] = v;
        }
}

/* The mask's strides against [B, Hq, S, Tm] (numpy broadcasting). */
static ncc_status mask_strides(const ncc_node *n, const ncc_tensor *m, const att *g,
                               int64_t *str) {
  int64_t want[4] = {g->b, g->hq, g->s, g->tm};
  if (m->rank < 1 || m->rank > 4)
    return ncc_node_error(n, NCC_ERR_INPUT, "attn_mask must have rank 1-4");
  for (int i = 0; i < 4; i++) {
    int j = i - (4 - m->rank);
    if (j >= 0 && m->dims[j] != 1 && m->dims[j] != want[i])
      return ncc_node_error(n, NCC_ERR_INPUT, "attn_mask does not broadcast to [B, H, S, T]");
  }
  ncc_ref_bcast_strides(m, 4, want, str);
  return NCC_OK;
}

ncc_status ncc_ref_ATTENTION(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  const ncc_tensor *q = in[0], *k = in[1], *v = in[2];
  const ncc_tensor *mask = n->n_in > 3 ? in[3] : NULL, *pk = n->n_in > 4 ? in[4] : NULL;
  const ncc_tensor *pv = n->n_in > 5 ? in[5] : NULL, *nonpad = n->n_in > 6 ? in[6] : NULL;
  ncc_attention_attrs a;
  ncc_status st = ncc_attrs_attention(n, &a);
  if (st) return st;
  att g = {.b = q->dims[0], .in3d = q->rank == 3};
  if (g.in3d) {
    g.hq = a.q_heads, g.hkv = a.kv_heads, g.s = q->dims[1], g.l = k->dims[1];
    g.dk = q->dims[2] / g.hq, g.dv = v->dims[2] / g.hkv;
    if (k->dims[2] != g.dk * g.hkv || q->dims[2] % g.hq || v->dims[2] % g.hkv)
      return ncc_node_error(n, NCC_ERR_INPUT, "hidden sizes do not split into the heads");
  } else {
    g.hq = q->dims[1], g.hkv = k->dims[1], g.s = q->dims[2], g.l = k->dims[2];
    g.dk = q->dims[3], g.dv = v->dims[3];
    if (k->dims[3] != g.dk || v->dims[1] != g.hkv)
      return ncc_node_error(n, NCC_ERR_INPUT, "Q, K and V disagree on heads or head size");
  }
  if (g.hkv < 1 || g.hq % g.hkv != 0 || k->dims[0] != g.b || v->dims[0] != g.b ||
      v->dims[q->rank - 2] != g.l)
    return ncc_node_error(n, NCC_ERR_INPUT, "Q, K and V disagree on batch, heads or length");
  g.p = pk ? pk->dims[2] : 0;
  g.t = g.p + g.l;
  if (pk && (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != g.b || pk->dims[1] != g.hkv ||
             pk->dims[3] != g.dk || pv->dims[0] != g.b || pv->dims[1] != g.hkv ||
             pv->dims[2] != g.p || pv->dims[3] != g.dv))
    return ncc_node_error(n, NCC_ERR_INPUT, "past_key/past_value do not match K/V");
  g.tm = mask ? mask->dims[mask->rank - 1] : g.t;
  if (g.tm > g.t) return ncc_node_error(n, NCC_ERR_INPUT, "attn_mask is longer than the keys");
  int64_t mstr[4] = {0, 0, 0, 0};
  if (mask && (st = mask_strides(n, mask, &g, mstr))) return st;
  int64_t rep = g.hq / g.hkv;
  size_t kb = (size_t)(g.b * g.hkv * g.t * g.dk + 1) * sizeof(double);
  size_t vb = (size_t)(g.b * g.hkv * g.t * g.dv + 1) * sizeof(double);
  size_t rb = (size_t)(3 * g.t + 1) * sizeof(double);
  double *kk = ncc_malloc(kb), *vv = ncc_malloc(vb), *row = ncc_malloc(rb);
  if (!kk || !vv || !row) {
    ncc_free(kk, kb), ncc_free(vv, vb), ncc_free(row, rb);
    return NCC_ERR_NOMEM;
  }
  double *bias = row + g.t, *qk = row + 2 * g.t;
  present(&g, pk, k, g.dk, kk);
  present(&g, pv, v, g.dv, vv);
  double scale = a.scale != 0.0f ? a.scale : 1.0 / sqrt((double)g.dk);
  bool has_qk = n->n_out > 3 && n->out[3] && out[3].data;
  for (int64_t b = 0; b < g.b; b++) {
    int64_t off = pk ? g.p : nonpad ? ncc_ref_get_i(nonpad, b) - g.s : 0;
    int64_t valid = nonpad ? ncc_ref_get_i(nonpad, b) : g.t;
    for (int64_t h = 0; h < g.hq; h++) {
      int64_t kh = h / rep;
      const double *kr = kk + (b * g.hkv + kh) * g.t * g.dk;
      const double *vr = vv + (b * g.hkv + kh) * g.t * g.dv;
      for (int64_t i = 0; i < g.s; i++) {
        double bmax = -INFINITY, smax = -INFINITY;
        for (int64_t j = 0; j < g.t; j++) {
          double s = 0.0;
          for (int64_t d = 0; d < g.dk; d++)
            s += ncc_ref_get_f(q, at_in(&g, g.hq, g.s, g.dk, b, h, i, d)) * kr[j * g.dk + d];
          s *= scale;
          if (a.softcap > 0.0f) s = a.softcap * tanh(s / a.softcap);
          double bj = 0.0;
          if (mask) {
            if (j >= g.tm) bj = -INFINITY;
            else {
              int64_t mo = b * mstr[0] + h * mstr[1] + i * mstr[2] + j * mstr[3];
              bj = mask->dtype == NCC_DT_BOOL ? (ncc_ref_get_i(mask, mo) ? 0.0 : -INFINITY)
                                              : ncc_ref_get_f(mask, mo);
            }
          }
          if (a.causal && j > i + off) bj += -INFINITY;
          int64_t diff = i + off - j;
          if ((a.left_window >= 0 && diff > a.left_window) ||
              (a.right_window >= 0 && -diff > a.right_window))
            bj += -INFINITY;
          if (nonpad && j >= valid) bj += -INFINITY;
          qk[j] = s;
          bias[j] = bj;
          row[j] = s + bj;
          if (bj > bmax) bmax = bj;
          if (row[j] > smax) smax = row[j];
        }
        /* softmax, a fully masked row (by its scores) dividing by 1 */
        double safe = isinf(smax) && smax < 0 ? 0.0 : smax, sum = 0.0;
        for (int64_t j = 0; j < g.t; j++) sum += (row[j] = exp(row[j] - safe));
        if (sum == 0.0) sum = 1.0;
        bool dead = isinf(bmax) && bmax < 0; /* masked everywhere by the bias */
        for (int64_t j = 0; j < g.t; j++) {
          double pj = dead ? 0.0 : row[j] / sum;
          if (has_qk) {
            double o = a.qk_mode == 3 ? pj : a.qk_mode == 2 ? qk[j] + bias[j] : qk[j];
            ncc_ref_set_f(&out[3], ((b * g.hq + h) * g.s + i) * g.t + j, o);
          }
          row[j] = pj;
        }
        for (int64_t d = 0; d < g.dv; d++) {
          double y = 0.0;
          for (int64_t j = 0; j < g.t; j++) y += row[j] * vr[j * g.dv + d];
          int64_t yo = g.in3d ? (b * g.s + i) * g.hq * g.dv + h * g.dv + d
                              : ((b * g.hq + h) * g.s + i) * g.dv + d;
          ncc_ref_set_f(&out[0], yo, y);
        }
      }
    }
  }
  if (n->n_out > 1 && n->out[1] && out[1].data)
    for (int64_t e = 0; e < g.b * g.hkv * g.t * g.dk; e++) ncc_ref_set_f(&out[1], e, kk[e]);
  if (n->n_out > 2 && n->out[2] && out[2].data)
    for (int64_t e = 0; e < g.b * g.hkv * g.t * g.dv; e++) ncc_ref_set_f(&out[2], e, vv[e]);
  ncc_free(kk, kb), ncc_free(vv, vb), ncc_free(row, rb);
  return NCC_OK;
}

/* ---- RotaryEmbedding ----
 * X [B, H, S, D] or [B, S, H*D]; the first R = rotary_embedding_dim (or D)
 * features of each head rotate by the cache's angle for the token's
 * position: pairs (x[j], x[j + R/2]), or (x[2j], x[2j+1]) when
 * interleaved; cos/sin are [max_pos, R/2] indexed by position_ids[b, s],
 * or [B, S, R/2] without them. */
ncc_status ncc_ref_ROTARYEMB(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  const ncc_tensor *x = in[0], *cc = in[1], *sc = in[2];
  const ncc_tensor *pos = n->n_in > 3 ? in[3] : NULL;
  ncc_rotary_attrs a;
  ncc_status st = ncc_attrs_rotary(n, &a);
  if (st) return st;
  bool in3d = x->rank == 3;
  int64_t nb = x->dims[0], heads = in3d ? a.num_heads : x->dims[1];
  int64_t seq = in3d ? x->dims[1] : x->dims[2];
  if (heads < 1) return NCC_OK; /* an empty X (3-D X has num_heads >= 1) */
  int64_t dim = in3d ? x->dims[2] / heads : x->dims[3];
  int64_t rot = a.rot_dim ? a.rot_dim : dim, half = rot / 2;
  int64_t cache_rows = pos ? cc->dims[0] : 0;
  if ((in3d && x->dims[2] % heads) || rot > dim || rot % 2 ||
      cc->dims[cc->rank - 1] != half || sc->dims[sc->rank - 1] != half ||
      ncc_tensor_numel(cc) != ncc_tensor_numel(sc) ||
      (!pos && ncc_tensor_numel(cc) != nb * seq * half) ||
      (pos && ncc_tensor_numel(pos) != nb * seq))
    return ncc_node_error(n, NCC_ERR_INPUT, "X, the caches and position_ids do not agree");
  for (int64_t b = 0; b < nb; b++)
    for (int64_t s = 0; s < seq; s++) {
      int64_t crow = b * seq + s;
      if (pos) {
        crow = ncc_ref_get_i(pos, b * seq + s);
        if (crow < 0 || crow >= cache_rows)
          return ncc_node_error(n, NCC_ERR_INPUT, "position id %lld out of range",
                                (long long)crow);
      }
      for (int64_t h = 0; h < heads; h++) {
        int64_t base = in3d ? (b * seq + s) * heads * dim + h * dim
                            : ((b * heads + h) * seq + s) * dim;
        for (int64_t j = 0; j < half; j++) {
          double c = ncc_ref_get_f(cc, crow * half + j), sn = ncc_ref_get_f(sc, crow * half + j);
          int64_t i1 = a.interleaved ? base + 2 * j : base + j;
          int64_t i2 = a.interleaved ? base + 2 * j + 1 : base + j + half;
          double x1 = ncc_ref_get_f(x, i1), x2 = ncc_ref_get_f(x, i2);
          ncc_ref_set_f(&out[0], i1, c * x1 - sn * x2);
          ncc_ref_set_f(&out[0], i2, sn * x1 + c * x2);
        }
        for (int64_t d = rot; d < dim; d++)
          ncc_ref_set_f(&out[0], base + d, ncc_ref_get_f(x, base + d));
      }
    }
  return NCC_OK;
}
