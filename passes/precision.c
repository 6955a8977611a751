/* passes/precision.c — low-precision matmuls and convolutions
 * (ncc_pipeline_set_precision, `--precision=bf16|fp16`).
 *
 * The operands of every f32 Conv, MatMul and Gemm are rounded to bf16 (or
 * f16), to nearest even: constant ones (weights) once, here, into a new
 * constant; computed ones (activations, graph inputs) by a RoundBF16 /
 * RoundF16 node placed right after the value's producer, which fusion then
 * puts into the producer's epilogue, so rounding costs no extra pass over
 * memory where the value has one reader. The contraction itself is left
 * alone: it multiplies exactly representable values and accumulates in
 * f32, the arithmetic of AVX512-BF16 / AMX dot products, so a kernel using
 * them computes the same numbers up to summation order. The bias (Conv's
 * B, Gemm's C) and everything outside the contraction -- softmax, norms,
 * reductions, exp/log, residual adds -- stay f32: only the values a
 * contraction reads are rounded, and a value other ops also read is
 * rounded on a separate edge, the others still seeing the f32 one.
 *
 * The rounded values are kept in f32 storage, so every kernel and the
 * reference interpreter run the graph unchanged (and agree); a kernel that
 * stores them narrower loses nothing.
 */
#include <string.h>

#include "../ir/f16.h"
#include "pass.h"

typedef struct prec {
  ncc_graph *g;
  int precision;
  ncc_op round_op;
  ncc_value **memo;    /* by source value id: its rounded twin */
  ncc_node **rounds;   /* the Round nodes made, and where each goes: */
  int *pos;            /* after original node pos[i]; -1: first */
  int n_rounds;
  int n_orig;
  int rewrites;
} prec;

static float round_one(int precision, float x) {
  if (precision == NCC_PRECISION_BF16) return ncc_bf16_to_f32(ncc_bf16_from_f32(x));
  return ncc_f16_to_f32(ncc_f16_from_f32(x));
}

/* A constant with every element rounded; `v` itself when none changes (so
 * running the pass twice changes nothing). */
static ncc_value *round_const(prec *P, ncc_value *v) {
  int64_t n = ncc_shape_numel(&v->shape);
  if (n < 0) return NULL;
  const float *src = v->data;
  int64_t i = 0;
  while (i < n && (src[i] != src[i] || round_one(P->precision, src[i]) == src[i])) i++;
  if (i == n) return v;
  float *buf = ncc_malloc(n ? (size_t)n * sizeof *buf : 1);
  if (!buf) return NULL;
  for (int64_t j = 0; j < n; j++)
    buf[j] = src[j] != src[j] ? src[j] : round_one(P->precision, src[j]);
  ncc_value *r = ncc_graph_add_const(P->g, NULL, NCC_DT_F32, &v->shape, buf);
  ncc_free(buf, (size_t)n * sizeof *buf);
  return r;
}

/* The Round node of a computed value, recorded for placement. */
static ncc_value *round_node(prec *P, ncc_value *v) {
  /* already rounded (the pass ran before) */
  if (v->producer && v->producer->op == P->round_op) return v;
  ncc_value *r = ncc_graph_add_value(P->g, NULL, NCC_VAL_NODE, NCC_DT_F32, &v->shape);
  ncc_value *in[1] = {v};
  ncc_node *n = r ? ncc_graph_add_node(P->g, P->round_op, "", 1, in, 1) : NULL;
  if (!n) return NULL;
  ncc_node_set_output(n, 0, r);
  P->rounds[P->n_rounds] = n;
  P->pos[P->n_rounds++] = v->producer ? v->producer->id : -1;
  return r;
}

/* Operand `idx` of contraction `n`, rounded. */
static ncc_status round_operand(prec *P, ncc_node *n, int idx) {
  ncc_value *v = n->in[idx];
  if (!v || v->dtype != NCC_DT_F32) return NCC_OK;
  ncc_value *r = P->memo[v->id];
  if (!r) {
    if (v->kind == NCC_VAL_CONST && v->data) r = round_const(P, v);
    else r = round_node(P, v);
    if (!r) return NCC_ERR_NOMEM;
    P->memo[v->id] = r;
  }
  if (r != v) {
    n->in[idx] = r;
    P->rewrites++;
  }
  return NCC_OK;
}

static bool eligible(const ncc_node *n) {
  if (n->op != NCC_OP_CONV && n->op != NCC_OP_MATMUL && n->op != NCC_OP_GEMM) return false;
  if (n->n_out != 1 || !n->out[0] || n->out[0]->dtype != NCC_DT_F32) return false;
  return n->in[0] && n->in[1] && n->in[0]->dtype == NCC_DT_F32 &&
         n->in[1]->dtype == NCC_DT_F32;
}

/* The new order: rounds of graph inputs first, then each original node
 * followed by the rounds of its outputs (pos[] grows with the sweep, so
 * one merge keeps the order topological). */
static ncc_status place(prec *P) {
  ncc_graph *g = P->g;
  ncc_node **order = ncc_malloc(sizeof *order * (size_t)g->n_nodes);
  if (!order) return NCC_ERR_NOMEM;
  int k = 0, r = 0;
  /* pos[] is not sorted (operands of a late node may come from early
   * nodes): bucket by position */
  int *cnt = ncc_calloc((size_t)P->n_orig + 2, sizeof *cnt);
  ncc_node **by = ncc_malloc(sizeof *by * (size_t)(P->n_rounds ? P->n_rounds : 1));
  if (!cnt || !by) {
    ncc_free(order, 0);
    ncc_free(cnt, 0);
    ncc_free(by, 0);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < P->n_rounds; i++) cnt[P->pos[i] + 2]++;
  for (int i = 1; i < P->n_orig + 2; i++) cnt[i] += cnt[i - 1];
  /* cnt[p + 1] is now where position p's rounds start in by[] */
  for (int i = 0; i < P->n_rounds; i++) by[cnt[P->pos[i] + 1]++] = P->rounds[i];
  /* and cnt[p + 1] where they end */
  for (; r < cnt[0]; r++) order[k++] = by[r];
  for (int i = 0; i < P->n_orig; i++) {
    order[k++] = g->nodes[i];
    for (; r < cnt[i + 1]; r++) order[k++] = by[r];
  }
  NCC_ASSERT(k == g->n_nodes);
  memcpy(g->nodes, order, sizeof *order * (size_t)k);
  for (int i = 0; i < k; i++) g->nodes[i]->id = i;
  ncc_free(order, 0);
  ncc_free(cnt, 0);
  ncc_free(by, 0);
  return NCC_OK;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  if (ctx->precision == NCC_PRECISION_F32) return NCC_OK;
  prec P = {.g = g, .precision = ctx->precision, .n_orig = g->n_nodes,
            .round_op = ctx->precision == NCC_PRECISION_BF16 ? NCC_OP_ROUNDBF16
                                                             : NCC_OP_ROUNDF16};
  /* new values and constants get ids past n_values; only originals are
   * looked up in memo */
  int nv = g->n_values;
  P.memo = ncc_calloc((size_t)nv + 1, sizeof *P.memo);
  /* at most two rounds per contraction */
  P.rounds = ncc_calloc((size_t)P.n_orig * 2 + 1, sizeof *P.rounds);
  P.pos = ncc_calloc((size_t)P.n_orig * 2 + 1, sizeof *P.pos);
  ncc_status st = P.memo && P.rounds && P.pos ? NCC_OK : NCC_ERR_NOMEM;
  for (int i = 0; i < P.n_orig && !st; i++) {
    ncc_node *n = g->nodes[i];
    if (!eligible(n)) continue;
    for (int j = 0; j < 2 && !st; j++)
      if (n->in[j]->id < nv) st = round_operand(&P, n, j);
  }
  if (!st && P.rewrites) st = place(&P);
  if (!st && P.rewrites && ncc_dce(g) < 0) st = NCC_ERR_NOMEM;
  ncc_free(P.memo, 0);
  ncc_free(P.rounds, 0);
  ncc_free(P.pos, 0);
  ctx->rewrites = P.rewrites;
  ctx->changed = P.rewrites > 0;
  return st;
}

const ncc_pass ncc_pass_precision = {
    .name = "precision",
    .level = 0,
    .needs = "",
    .desc = "round the operands of Conv, MatMul and Gemm to bf16 or fp16 "
            "(--precision); f32 accumulation, other ops stay f32",
    .run = run,
};
