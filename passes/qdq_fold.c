/* passes/qdq_fold.c — fold QDQ (DequantizeLinear ... QuantizeLinear) groups
 * into integer ops, as onnxruntime's QDQ transformer does.
 *
 * A QDQ model (onnxruntime.quantization.quantize_static, QuantFormat.QDQ)
 * computes every layer in float between a DequantizeLinear of its integer
 * inputs and a QuantizeLinear of its output. Three rewrites run the layer
 * on the integers instead:
 *
 *  1. DQ(x), DQ(w) [, DQ(bias i32)] -> Conv [-> Relu | Clip] -> Q
 *     becomes QLinearConv(x, sx, zx, w, sw, zw, sy, zy [, bias]);
 *     DQ(a), DQ(b) -> MatMul [-> Relu | Clip] -> Q becomes QLinearMatMul;
 *     DQ(a), DQ(b) [, DQ(c i32)] -> Gemm [-> Relu | Clip] -> Q becomes a
 *     1x1 QLinearConv between two integer Reshapes ([M,K] -> [M,K,1,1],
 *     [M,N,1,1] -> [M,N], shapes [-1,K,1,1] and [-1,N]): the standard ops have no integer Gemm, and a 1x1
 *     convolution is exactly a Gemm with transB and a per-column bias.
 *     The integer sum is exact and requantised once (ir/ops.def's QLinear
 *     rows, runtime/ref/ref_quant.c), where the QDQ graph rounds the float
 *     products and sum: the two agree within one quantum of y.
 *  2. The activation between the contraction and its Q becomes a clamp of
 *     the integer result: Q is monotone, so Q(relu(y)) = max(Q(y), Q(0)) =
 *     max(Q(y), zy) and Q(clip(y, a, b)) = clip(Q(y), Q(a), Q(b)) exactly.
 *     No clamp is emitted when it cannot bind (zy at the bottom of the
 *     range: what quantize_static's calibration gives after a Relu).
 *  3. DQ(q) -> MaxPool | Relu | Reshape | Flatten | Transpose, then any
 *     chain of data movement (Reshape, Flatten, Transpose, Squeeze,
 *     Unsqueeze: a transformer's Reshape -> Transpose between a Linear and
 *     the attention MatMul) -> Q with the
 *     same (bit-equal) scale, zero point and dtype runs on q: Q(DQ(q)) = q
 *     for every q (the f32 round trip (q - z) * s / s is within an ulp of
 *     the integer q - z), moving data commutes with DQ, and a positive
 *     scale makes DQ increasing, so the max of a window and Relu (as
 *     max(q, z)) commute with it too.
 *
 * Conditions (else the group is left in float, which stays correct):
 * scales are f32 constants, zero points constants (or absent = 0); x, a
 * and y are per-tensor and u8/s8, w and b u8/s8 per-tensor or per output
 * channel (Conv: w's axis 0; MatMul: b's last axis; Gemm: B's N axis),
 * no blocked quantization; the bias is an i32 constant with zero point 0
 * and scale sx * sw[m] (to 2^-20 relative: quantize_static writes exactly
 * that product); Gemm has alpha 1, transA 0, beta 1 (or no C), a constant
 * B, a rank-2 A and a C of N entries; every intermediate float value has
 * the next node of the group as its only reader and is no graph output.
 *
 * The pass runs first in the pipeline: const-fold would otherwise turn
 * DQ(constant weights) into float constants and the integers would be
 * gone. It does not look through Constant nodes (quantize_static writes
 * initializers). Add of two DQs -> Q is left alone: fusion makes the DQs,
 * the Add and the Q one elementwise kernel already.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../ir/attrs.h"
#include "pass.h"

/* ---- quantization parameters ---- */

static bool is_q8(ncc_dtype dt) { return dt == NCC_DT_U8 || dt == NCC_DT_I8; }

static void qrange(ncc_dtype dt, int64_t *lo, int64_t *hi) {
  *lo = dt == NCC_DT_U8 ? 0 : -128;
  *hi = dt == NCC_DT_U8 ? 255 : 127;
}

static bool is_const(const ncc_value *v) {
  return v && v->kind == NCC_VAL_CONST && v->data;
}

/* integer constant element i (8/32-bit types) */
static int64_t int_at(const ncc_value *v, int64_t i) {
  switch (v->dtype) {
  case NCC_DT_U8: return ((const uint8_t *)v->data)[i];
  case NCC_DT_I8: return ((const int8_t *)v->data)[i];
  case NCC_DT_I32: return ((const int32_t *)v->data)[i];
  default: NCC_ASSERT(0); return 0;
  }
}

/* The parameters of one DequantizeLinear or QuantizeLinear node. */
typedef struct qparam {
  ncc_node *node;
  ncc_value *q;     /* the integer side: DQ's input, Q's output */
  ncc_value *scale; /* f32 constant */
  ncc_value *zp;    /* constant of q's dtype, or NULL (= 0) */
  int64_t n;        /* 1 (per-tensor) or the entries along axis */
  int axis;         /* normalized; meaningful when n > 1 */
} qparam;

static float scale_at(const qparam *p, int64_t i) {
  return ((const float *)p->scale->data)[p->n == 1 ? 0 : i];
}
static int64_t zp_at(const qparam *p, int64_t i) {
  return p->zp ? int_at(p->zp, p->n == 1 ? 0 : i) : 0;
}

/* Whether node n (a DQ or Q) has parameters this pass can read: constant
 * f32 scales that are positive and finite, a constant zero point of q's
 * dtype, per-tensor or per-axis (1-D), not blocked. */
static bool qparam_get(ncc_node *n, qparam *p) {
  memset(p, 0, sizeof *p);
  if (n->n_out != 1 || !n->out[0] || n->n_in < 2) return false;
  ncc_quant_attrs qa;
  if (ncc_attrs_quant(n, &qa) || qa.block_size != 0) return false;
  p->node = n;
  p->q = n->op == NCC_OP_DEQUANTIZELINEAR ? n->in[0] : n->out[0];
  p->scale = n->in[1];
  p->zp = n->n_in > 2 ? n->in[2] : NULL;
  /* 8-bit data, or the i32 of a bias (int_at reads these types only) */
  if (!p->q || !(is_q8(p->q->dtype) || p->q->dtype == NCC_DT_I32)) return false;
  const ncc_value *s = p->scale;
  if (!is_const(s) || s->dtype != NCC_DT_F32 || s->shape.rank > 1) return false;
  p->n = ncc_shape_numel(&s->shape);
  if (p->n < 1) return false;
  if (p->zp && (!is_const(p->zp) || p->zp->dtype != p->q->dtype ||
                ncc_shape_numel(&p->zp->shape) != p->n))
    return false;
  int r = p->q->shape.rank;
  if (p->n > 1) {
    if (s->shape.rank != 1 || qa.axis < -r || qa.axis >= r) return false;
    p->axis = (int)(qa.axis < 0 ? qa.axis + r : qa.axis);
    if (p->q->shape.d[p->axis] != p->n) return false;
  }
  for (int64_t i = 0; i < p->n; i++) {
    float f = scale_at(p, i);
    if (!(f > 0) || !isfinite(f)) return false;
  }
  return true;
}

/* The DequantizeLinear producing v, with readable parameters. */
static bool dq_of(const ncc_value *v, qparam *p) {
  if (!v || v->kind != NCC_VAL_NODE || !v->producer ||
      v->producer->op != NCC_OP_DEQUANTIZELINEAR)
    return false;
  return qparam_get(v->producer, p);
}

/* ---- the pass state ---- */

typedef struct fold {
  ncc_graph *g;
  int n_values;      /* values at the start: uses and reader cover these */
  int *uses;         /* per value id, as counted at the start */
  ncc_node **reader; /* per value id: a node reading it (the one when uses == 1) */
  int rewrites;
} fold;

/* The only reader of v, when it has exactly one and v is no graph output. */
static ncc_node *only_reader(const fold *f, const ncc_value *v) {
  if (!v || v->id >= f->n_values || f->uses[v->id] != 1 || ncc_is_graph_output(f->g, v))
    return NULL;
  return f->reader[v->id];
}

/* The per-tensor Q reading v alone, with readable parameters. */
static bool q_after(const fold *f, const ncc_value *v, qparam *p) {
  ncc_node *r = only_reader(f, v);
  return r && r->op == NCC_OP_QUANTIZELINEAR && r->in[0] == v && qparam_get(r, p) &&
         p->n == 1;
}

static ncc_value *scalar_const(ncc_graph *g, ncc_dtype dt, int64_t v) {
  ncc_shape s = {0, {0}};
  uint8_t u = (uint8_t)v;
  int8_t i = (int8_t)v;
  return ncc_graph_add_const(g, NULL, dt, &s, dt == NCC_DT_U8 ? (const void *)&u : &i);
}

/* p's zero point as a value (a new 0 of q's dtype when p has none). */
static ncc_value *zp_value(ncc_graph *g, const qparam *p) {
  return p->zp ? p->zp : scalar_const(g, p->q->dtype, 0);
}

/* QuantizeLinear's value for a float constant a (f32 division, half to
 * even, saturation), as ncc's reference and onnxruntime compute it. */
static int64_t quantize_const(const qparam *y, float a) {
  int64_t lo, hi;
  qrange(y->q->dtype, &lo, &hi);
  double v = nearbyint((float)((double)a / scale_at(y, 0))) + (double)zp_at(y, 0);
  return v < (double)lo ? lo : v > (double)hi ? hi : (int64_t)v;
}

/* ---- the activation between a contraction and its Q ---- */

/* The clamp [*clo, *chi] that the Relu / Clip `act` puts on the quantized
 * output y; false when it cannot be read (non-constant bounds). */
static bool act_clamp(const ncc_node *act, const qparam *y, int64_t *clo, int64_t *chi) {
  qrange(y->q->dtype, clo, chi);
  if (act->op == NCC_OP_RELU) {
    *clo = quantize_const(y, 0.0f);
    return true;
  }
  for (int i = 1; i < 3; i++) {
    const ncc_value *b = i < act->n_in ? act->in[i] : NULL;
    if (!b) continue;
    if (!is_const(b) || b->dtype != NCC_DT_F32 || ncc_shape_numel(&b->shape) != 1)
      return false;
    float v = *(const float *)b->data;
    if (isnan(v)) return false;
    int64_t q = quantize_const(y, v);
    if (i == 1) *clo = q;
    else *chi = q;
  }
  return *clo <= *chi;
}

/* The tail of a contraction: its output t, an optional Relu/Clip reading
 * t alone, and the per-tensor u8/s8 Q reading the last of them alone. */
typedef struct tail {
  ncc_node *act; /* NULL when the Q reads t */
  qparam y;
  int64_t clo, chi; /* the activation's clamp on y */
} tail;

static bool tail_get(const fold *f, ncc_value *t, tail *tl) {
  memset(tl, 0, sizeof *tl);
  if (t->dtype != NCC_DT_F32) return false;
  ncc_node *r = only_reader(f, t);
  if (r && (r->op == NCC_OP_RELU || r->op == NCC_OP_CLIP) && r->in[0] == t &&
      r->n_out == 1 && r->out[0]) {
    tl->act = r;
    t = r->out[0];
  }
  if (!q_after(f, t, &tl->y) || !is_q8(tl->y.q->dtype)) return false;
  qrange(tl->y.q->dtype, &tl->clo, &tl->chi);
  return !tl->act || act_clamp(tl->act, &tl->y, &tl->clo, &tl->chi);
}

/* ---- rewiring ---- */

/* Nodes the pass adds go to the end of g->nodes; order() moves them. */
static ncc_node *add_node(fold *f, ncc_op op, const char *name, int n_in,
                          ncc_value *const *in, ncc_value *out) {
  ncc_node *n = ncc_graph_add_node(f->g, op, name, n_in, in, 1);
  if (n) ncc_node_set_output(n, 0, out);
  return n;
}

/* Node n (the contraction, rewritten in place to `op` with inputs `in`)
 * now produces `out`; its old output is left to the dead nodes reading it. */
static ncc_status retarget(fold *f, ncc_node *n, ncc_op op, int n_in, ncc_value *const *in,
                           ncc_value *out) {
  ncc_value **ins = ncc_arena_alloc(&f->g->arena, (size_t)n_in * sizeof *ins);
  if (!ins) return NCC_ERR_NOMEM;
  memcpy(ins, in, (size_t)n_in * sizeof *ins);
  ncc_value *old = n->out[0];
  n->op = op;
  n->in = ins;
  n->n_in = n_in;
  if (old != out) {
    ncc_node *prev = out->producer;
    if (prev) prev->out[out->producer_idx] = NULL;
    ncc_node_set_output(n, 0, out);
    old->producer = NULL;
  }
  return NCC_OK;
}

/* The integer result r of a contraction whose tail is tl: routed through
 * a clamp when the activation binds, into the Q's output. Returns the
 * value the contraction must produce (r itself, or a new value). */
static ncc_value *clamp_into(fold *f, tail *tl, const ncc_node *contr) {
  ncc_value *y = tl->y.q;
  /* the Q goes: the contraction (or the clamp) produces y now (which
   * sets y's producer) */
  tl->y.node->out[0] = NULL;
  int64_t lo, hi;
  qrange(y->dtype, &lo, &hi);
  if (tl->clo <= lo && tl->chi >= hi) return y;
  ncc_value *r = ncc_graph_add_value(f->g, NULL, NCC_VAL_NODE, y->dtype, &y->shape);
  ncc_value *a = r ? scalar_const(f->g, y->dtype, tl->clo) : NULL;
  ncc_value *b = a ? scalar_const(f->g, y->dtype, tl->chi) : NULL;
  ncc_value *in[3] = {r, a, b};
  if (!b || !add_node(f, NCC_OP_CLIP, contr->name, 3, in, y)) return NULL;
  return r;
}

/* Whether the bias DQ (i32, zero point 0) has scale sx * sw[m] for each
 * of the m output channels. */
static bool bias_ok(const qparam *b, const qparam *x, const qparam *w, int64_t m) {
  if (b->q->dtype != NCC_DT_I32 || !(b->n == 1 || b->n == m)) return false;
  if (ncc_shape_numel(&b->q->shape) != m) return false;
  for (int64_t c = 0; c < m; c++) {
    double want = (float)(scale_at(x, 0) * scale_at(w, c));
    if (fabs(scale_at(b, c) - want) > want * 0x1p-20 || zp_at(b, c) != 0) return false;
  }
  return true;
}

/* ---- rewrite 1: contractions ---- */

static bool act_ok(const qparam *x) { return x->n == 1 && is_q8(x->q->dtype); }

static bool weight_ok(const qparam *w, int axis) {
  return is_q8(w->q->dtype) && (w->n == 1 || w->axis == axis);
}

/* in[] of QLinearConv / QLinearMatMul */
static bool qlinear_inputs(fold *f, const qparam *x, ncc_value *xq, const qparam *w,
                           ncc_value *wq, const qparam *y, ncc_value *in[8]) {
  in[0] = xq;
  in[1] = x->scale;
  in[2] = zp_value(f->g, x);
  in[3] = wq;
  in[4] = w->scale;
  in[5] = zp_value(f->g, w);
  in[6] = y->scale;
  in[7] = zp_value(f->g, y);
  return in[2] && in[5] && in[7];
}

static ncc_status fold_conv(fold *f, ncc_node *n) {
  qparam x, w, b;
  tail tl;
  if (n->n_out != 1 || !dq_of(n->in[0], &x) || !act_ok(&x) || !dq_of(n->in[1], &w) ||
      w.q->shape.rank < 3 || !weight_ok(&w, 0) || !tail_get(f, n->out[0], &tl))
    return NCC_OK;
  int64_t m = w.q->shape.d[0];
  bool has_b = n->n_in > 2 && n->in[2];
  if (has_b && (!dq_of(n->in[2], &b) || !bias_ok(&b, &x, &w, m))) return NCC_OK;
  ncc_value *in[9];
  if (!qlinear_inputs(f, &x, x.q, &w, w.q, &tl.y, in)) return NCC_ERR_NOMEM;
  in[8] = has_b ? b.q : NULL;
  ncc_value *r = clamp_into(f, &tl, n);
  if (!r) return NCC_ERR_NOMEM;
  f->rewrites++;
  return retarget(f, n, NCC_OP_QLINEARCONV, has_b ? 9 : 8, in, r);
}

static ncc_status fold_matmul(fold *f, ncc_node *n) {
  qparam a, b;
  tail tl;
  if (n->n_out != 1 || !dq_of(n->in[0], &a) || !act_ok(&a) || !dq_of(n->in[1], &b) ||
      !weight_ok(&b, b.q->shape.rank - 1) || (b.n > 1 && b.q->shape.rank < 2) ||
      !tail_get(f, n->out[0], &tl))
    return NCC_OK;
  ncc_value *in[8];
  if (!qlinear_inputs(f, &a, a.q, &b, b.q, &tl.y, in)) return NCC_ERR_NOMEM;
  ncc_value *r = clamp_into(f, &tl, n);
  if (!r) return NCC_ERR_NOMEM;
  f->rewrites++;
  return retarget(f, n, NCC_OP_QLINEARMATMUL, 8, in, r);
}

static ncc_value *i64_const(ncc_graph *g, int64_t n, const int64_t *v) {
  ncc_shape s = {1, {n}};
  return ncc_graph_add_const(g, NULL, NCC_DT_I64, &s, v);
}

/* B (u8/s8 constant, [K,N] or with transB [N,K]) as QLinearConv's
 * [N,K,1,1] weight. */
static ncc_value *gemm_weight(ncc_graph *g, const ncc_value *bq, bool tb) {
  int64_t n = tb ? bq->shape.d[0] : bq->shape.d[1], k = tb ? bq->shape.d[1] : bq->shape.d[0];
  ncc_shape s = {4, {n, k, 1, 1}};
  if (tb) return ncc_graph_add_const(g, NULL, bq->dtype, &s, bq->data);
  uint8_t *t = ncc_malloc((size_t)(n * k) + 1);
  if (!t) return NULL;
  const uint8_t *src = bq->data;
  for (int64_t i = 0; i < k; i++)
    for (int64_t j = 0; j < n; j++) t[j * k + i] = src[i * n + j];
  ncc_value *v = ncc_graph_add_const(g, NULL, bq->dtype, &s, t);
  ncc_free(t, 0);
  return v;
}

/* The i32 bias as a 1-D [N] constant (C may be [1, N]). */
static ncc_value *gemm_bias(ncc_graph *g, ncc_value *cq, int64_t n) {
  if (cq->shape.rank == 1) return cq;
  ncc_shape s = {1, {n}};
  return ncc_graph_add_const(g, NULL, NCC_DT_I32, &s, cq->data);
}

static ncc_status fold_gemm(fold *f, ncc_node *n) {
  qparam a, b, c;
  tail tl;
  ncc_gemm_attrs ga;
  if (n->n_out != 1 || ncc_attrs_gemm(n, &ga) || ga.alpha != 1.0f || ga.trans_a ||
      !dq_of(n->in[0], &a) || !act_ok(&a) || a.q->shape.rank != 2 ||
      !dq_of(n->in[1], &b) || !is_const(b.q) || b.q->shape.rank != 2 ||
      !weight_ok(&b, ga.trans_b ? 0 : 1) || !tail_get(f, n->out[0], &tl))
    return NCC_OK;
  int64_t nn = b.q->shape.d[ga.trans_b ? 0 : 1], k = b.q->shape.d[ga.trans_b ? 1 : 0];
  bool has_c = n->n_in > 2 && n->in[2] && ga.beta != 0.0f;
  if (has_c && (ga.beta != 1.0f || !dq_of(n->in[2], &c) || !is_const(c.q) ||
                c.q->shape.rank > 2 || (c.q->shape.rank == 2 && c.q->shape.d[0] != 1) ||
                !bias_ok(&c, &a, &b, nn)))
    return NCC_OK;
  ncc_graph *g = f->g;
  const ncc_shape *as = &a.q->shape, *ys = &tl.y.q->shape;
  ncc_shape x4 = {4, {as->d[0], k, 1, 1}}, y4 = {4, {ys->d[0], nn, 1, 1}};
  /* -1 for M and static K / N (no 0 = "copy the dim"): simplify may then
   * merge the first Reshape with a Flatten before it, or drop both */
  const int64_t to4[4] = {-1, k, 1, 1}, to2[2] = {-1, nn};
  ncc_value *w4 = gemm_weight(g, b.q, ga.trans_b);
  ncc_value *bias = has_c ? gemm_bias(g, c.q, nn) : NULL;
  ncc_value *s4 = i64_const(g, 4, to4), *s2 = i64_const(g, 2, to2);
  ncc_value *xv = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, a.q->dtype, &x4);
  ncc_value *yv = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, tl.y.q->dtype, &y4);
  ncc_value *r = clamp_into(f, &tl, n);
  ncc_value *in[9];
  if (!w4 || (has_c && !bias) || !s4 || !s2 || !xv || !yv || !r ||
      !qlinear_inputs(f, &a, xv, &b, w4, &tl.y, in))
    return NCC_ERR_NOMEM;
  in[8] = bias;
  ncc_value *rs_in[2] = {a.q, s4}, *rs_out[2] = {yv, s2};
  if (!add_node(f, NCC_OP_RESHAPE, n->name, 2, rs_in, xv) ||
      !add_node(f, NCC_OP_RESHAPE, n->name, 2, rs_out, r))
    return NCC_ERR_NOMEM;
  ncc_status st = retarget(f, n, NCC_OP_QLINEARCONV, has_c ? 9 : 8, in, yv);
  n->n_attrs = 0; /* Gemm's attributes mean nothing to QLinearConv */
  n->attrs = NULL;
  f->rewrites++;
  return st;
}

/* ---- rewrite 3: integer pass-through ---- */

static bool same_qparams(const qparam *a, const qparam *b) {
  return a->n == 1 && b->n == 1 && a->q->dtype == b->q->dtype &&
         scale_at(a, 0) == scale_at(b, 0) && zp_at(a, 0) == zp_at(b, 0);
}

/* Data movement: commutes with a per-tensor DQ (and keeps its values). */
static bool is_move(ncc_op op) {
  return op == NCC_OP_RESHAPE || op == NCC_OP_FLATTEN || op == NCC_OP_TRANSPOSE ||
         op == NCC_OP_SQUEEZE || op == NCC_OP_UNSQUEEZE;
}

#define CHAIN_MAX 8

static ncc_status fold_through(fold *f, ncc_node *n) {
  qparam x, y;
  if (!n->out[0] || !dq_of(n->in[0], &x)) return NCC_OK;
  /* n, then data movement with one reader each (a transformer's
   * Reshape -> Transpose between its Linear and the attention MatMul),
   * then the Q */
  ncc_node *chain[CHAIN_MAX];
  int len = 0;
  for (ncc_value *v = n->out[0]; !q_after(f, v, &y);) {
    ncc_node *r = only_reader(f, v);
    if (!r || len == CHAIN_MAX || !is_move(r->op) || r->in[0] != v || r->n_out != 1 ||
        !r->out[0])
      return NCC_OK;
    chain[len++] = r;
    v = r->out[0];
  }
  if (!same_qparams(&x, &y)) return NCC_OK;
  for (int k = 1; k < n->n_out; k++) /* MaxPool's Indices */
    if (n->out[k]) return NCC_OK;
  ncc_dtype dt = x.q->dtype;
  if (!is_q8(dt)) return NCC_OK; /* Q(DQ(q)) = q needs |q - z| << 2^24 */
  ncc_value *in[8];
  int n_in = n->n_in < 8 ? n->n_in : 8;
  if (n->n_in > 8) return NCC_OK;
  memcpy(in, n->in, (size_t)n_in * sizeof *in);
  in[0] = x.q;
  ncc_op op = n->op;
  if (op == NCC_OP_RELU) {
    int64_t lo, hi;
    qrange(dt, &lo, &hi);
    /* relu on DQ(q) is max(q, z); nothing when z is the bottom of the range */
    if (zp_at(&x, 0) <= lo && !ncc_is_graph_output(f->g, y.q) && len == 0) {
      ncc_replace_uses(f->g, y.q, x.q);
      y.node->out[0] = NULL;
      y.q->producer = NULL;
      f->rewrites++;
      return NCC_OK;
    }
    op = NCC_OP_MAX;
    n_in = 2;
    if (!(in[1] = zp_value(f->g, &x))) return NCC_ERR_NOMEM;
    n->n_attrs = 0;
    n->attrs = NULL;
  }
  f->rewrites++;
  if (len == 0) return retarget(f, n, op, n_in, in, y.q);
  /* the chain's values become integers in place (each has one reader,
   * the next node of the chain); the last one produces the Q's output */
  ncc_status st = retarget(f, n, op, n_in, in, n->out[0]);
  n->out[0]->dtype = dt;
  for (int i = 0; i + 1 < len && !st; i++) chain[i]->out[0]->dtype = dt;
  if (!st) {
    ncc_node *last = chain[len - 1];
    st = retarget(f, last, last->op, last->n_in, last->in, y.q);
  }
  return st;
}

/* ---- order ---- */

static bool ready(const ncc_node *n, const bool *placed) {
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && n->in[i]->producer && !placed[n->in[i]->producer->id]) return false;
  return true;
}

/* Depth-first from node n, producers first (an original node whose added
 * input producer is not placed yet: cannot happen with the ready scan
 * below, kept so that the order is topological whatever the rewrites). */
static void visit(ncc_node *n, bool *placed, ncc_node **order, int *k) {
  if (placed[n->id]) return;
  placed[n->id] = true;
  for (int i = 0; i < n->n_in; i++) {
    ncc_value *v = n->in[i];
    if (v && v->producer) visit(v->producer, placed, order, k);
  }
  order[(*k)++] = n;
}

/* The original nodes keep their order; each added node (the Gemm
 * reshapes, the clamps) goes right after the last of its producers, so
 * the clamp follows its contraction (and fusion sees them together). */
static ncc_status reorder(ncc_graph *g, int n_orig) {
  bool *placed = ncc_calloc((size_t)g->n_nodes + 1, sizeof *placed);
  ncc_node **order = ncc_malloc(((size_t)g->n_nodes + 1) * sizeof *order);
  if (!placed || !order) {
    ncc_free(placed, 0);
    ncc_free(order, 0);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->id = i;
  int k = 0;
  for (int i = 0; i <= n_orig; i++) {
    if (i < n_orig) visit(g->nodes[i], placed, order, &k);
    for (bool more = true; more;) {
      more = false;
      for (int j = n_orig; j < g->n_nodes; j++)
        if (!placed[j] && ready(g->nodes[j], placed)) {
          placed[j] = true;
          order[k++] = g->nodes[j];
          more = true;
        }
    }
  }
  for (int j = n_orig; j < g->n_nodes; j++) visit(g->nodes[j], placed, order, &k);
  NCC_ASSERT(k == g->n_nodes);
  memcpy(g->nodes, order, (size_t)k * sizeof *order);
  for (int i = 0; i < k; i++) g->nodes[i]->id = i;
  ncc_free(placed, 0);
  ncc_free(order, 0);
  return NCC_OK;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  fold f = {.g = g, .n_values = g->n_values};
  f.uses = ncc_count_uses(g);
  f.reader = ncc_calloc((size_t)g->n_values + 1, sizeof *f.reader);
  if (!f.uses || !f.reader) {
    ncc_free(f.uses, 0);
    ncc_free(f.reader, 0);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++)
      if (g->nodes[i]->in[k]) f.reader[g->nodes[i]->in[k]->id] = g->nodes[i];
  ncc_status st = NCC_OK;
  int n_orig = g->n_nodes;
  /* Every rewrite reads only the DQs before its node and the nodes after
   * it that it consumes; the uses and readers of the values it looks at
   * are not changed by earlier rewrites (those only orphan float values). */
  for (int i = 0; i < n_orig && !st; i++) {
    ncc_node *n = g->nodes[i];
    if (n->n_out < 1 || !n->out[0] || n->n_in < 1) continue;
    switch (n->op) {
    case NCC_OP_CONV: st = fold_conv(&f, n); break;
    case NCC_OP_MATMUL: st = fold_matmul(&f, n); break;
    case NCC_OP_GEMM: st = fold_gemm(&f, n); break;
    case NCC_OP_MAXPOOL:
    case NCC_OP_RELU:
    case NCC_OP_RESHAPE:
    case NCC_OP_FLATTEN:
    case NCC_OP_SQUEEZE:
    case NCC_OP_UNSQUEEZE:
    case NCC_OP_TRANSPOSE: st = fold_through(&f, n); break;
    default: break;
    }
  }
  ncc_free(f.uses, 0);
  ncc_free(f.reader, 0);
  if (!st && f.rewrites && g->n_nodes != n_orig) st = reorder(g, n_orig);
  if (!st && f.rewrites && ncc_dce(g) < 0) st = NCC_ERR_NOMEM;
  ctx->rewrites = f.rewrites;
  ctx->changed = f.rewrites > 0;
  return st;
}

const ncc_pass ncc_pass_qdq_fold = {
    .name = "qdq-fold",
    .level = 2,
    .needs = "",
    .desc = "fold DequantizeLinear/QuantizeLinear around Conv, MatMul, Gemm (+Relu/Clip) "
            "into QLinearConv/QLinearMatMul; pools and reshapes run on the integers",
    .run = run,
};
