/* passes/winograd.c — choose Winograd F(m x m, 3 x 3) for the 3x3
 * stride-1 convolutions where it pays, marking them `conv.winograd = m`
 * (m = 2 or 4); the cpu lowering (codegen/lower_wino.c) then computes them
 * as a^2 channel GEMMs on transformed tiles (a = m + 2) instead of the
 * direct convolution. `--disable-pass=winograd` keeps every Conv direct:
 * the ablation row of the algorithm.
 *
 * Candidates: f32 Conv, group 1, 3x3 window, strides and dilations 1,
 * constant f32 weights, input and output blocked (the layout pass ran:
 * the kernel is written for blocked values), static C, H and W. Not at
 * --precision=bf16/fp16: the transforms would round the rounded operands
 * again, where the low-precision contract is exact products.
 *
 * Whether it pays, per Conv, counted in vector operations (a multiply-add,
 * an add or a load each):
 *   direct  OH*OW*C*OC*9 multiply-adds;
 *   F(m)    tiles*a^2*C*OC multiply-adds (the GEMMs; more where a
 *           task has fewer tiles than the register tile's R), the transforms
 *           (input: about 8 a^2 operations per tile and input channel;
 *           output: about 7 a^2 per tile and output channel), and the
 *           transformed weights, a^2*C*OC floats that every task reads:
 *           past L2 they stream from L3 or memory (STREAM_L3, STREAM_MEM),
 *           so a Conv whose tiles are few (deep layers at 7x7 and 14x14)
 *           and whose weights are large gains nothing.
 * The cheapest of the three wins if it is at least 15% below the direct
 * count (the direct kernel's tile is tuned; the estimate is rough).
 */
#include <string.h>

#include "../ir/window.h"
#include "pass.h"

#define L2_BYTES (512 * 1024)
/* operations a byte of transformed weights costs from L3 (taken as the
 * 8 MB of it a core can count on) and from memory: fitted to single
 * layers (docs/PASSES.md, "winograd") */
#define L3_BYTES (8 << 20)
#define STREAM_L3 0.03
#define STREAM_MEM 0.3
/* V and M of a task's tiles on its stack (codegen/lower_wino.c) */
#define SCRATCH_BYTES (128 * 1024)

static bool candidate(const ncc_node *n, int precision) {
  if (n->op != NCC_OP_CONV || n->n_in < 2 || n->n_out != 1 || precision != NCC_PRECISION_F32)
    return false;
  const ncc_value *x = n->in[0], *wt = n->in[1], *y = n->out[0];
  if (!x || !wt || !y || x->dtype != NCC_DT_F32 || y->dtype != NCC_DT_F32 ||
      wt->dtype != NCC_DT_F32 || wt->kind != NCC_VAL_CONST || !wt->data ||
      x->shape.rank != 4 || y->shape.rank != 4 || wt->shape.rank != 4 ||
      !ncc_value_block(x) || !ncc_value_block(y))
    return false;
  for (int i = 1; i < 4; i++)
    if (ncc_dim_is_sym(x->shape.d[i]) || ncc_dim_is_sym(y->shape.d[i])) return false;
  if (!ncc_shape_is_static(&wt->shape) || wt->shape.d[2] != 3 || wt->shape.d[3] != 3 ||
      wt->shape.d[1] != x->shape.d[1])
    return false;
  ncc_window w;
  int64_t wk[2] = {3, 3};
  if (ncc_window_decode(n, 2, wk, &w) != NCC_OK) return false;
  /* group 1 is W's dim 1 == C, checked above (it is C / group) */
  for (int i = 0; i < 2; i++)
    if (w.stride[i] != 1 || w.dilation[i] != 1) return false;
  return true;
}

/* Estimated vector operations of F(m x m, 3 x 3) for a Conv over C -> OC
 * channels and an OH x OW output, kb-lane blocks; < 0: does not fit. */
static double wino_cost(int m, int64_t C, int64_t OC, int64_t OH, int64_t OW, int kb) {
  int64_t a = m + 2, a2 = a * a;
  int64_t tiles = ((OH + m - 1) / m) * ((OW + m - 1) / m);
  /* the kernel's register tile (ncc_lower_conv_tile): nb output blocks x
   * R tiles, R at most the tiles; 16 vector registers: 3 x 4 where the
   * blocks divide by 3, else 2 x 6; 32 (16-lane blocks): 4 x 6 */
  int64_t ocb = OC / kb;
  int64_t nb = kb >= 16 ? 4 : ocb % 3 == 0 ? 3 : 2, R = nb == 3 ? 4 : 6, full = R;
  if (R > tiles) R = tiles;
  /* tiles per task: V (a^2 * C floats per tile) and M (a^2 x R x nb
   * blocks) share the scratch; in runs of R, the fewest tiles computed
   * (chunks x T, a last chunk repeating the last tile), then the largest
   * T, as codegen/lower_wino.c chooses */
  int64_t per = a2 * C * 4, mbytes = a2 * R * nb * kb * 4;
  if (mbytes + per > SCRATCH_BYTES) return -1;
  int64_t tmax = (SCRATCH_BYTES - mbytes) / per;
  int64_t r = tmax < R ? tmax : R, T = r;
  for (int64_t t = 2 * r; t <= tmax; t += r)
    if ((tiles + t - 1) / t * t <= (tiles + T - 1) / T * T) T = t;
  /* tile chunks, and the parts of the output channels that make up 8
   * tasks an image (each transforms its tiles' input again) */
  int64_t chunks = (tiles + T - 1) / T, ngrp = ocb / nb, done = chunks * T;
  int64_t parts = (8 + chunks - 1) / chunks;
  if (parts > ngrp) parts = ngrp;
  if (parts < 1) parts = 1;
  /* a register tile of fewer than R tiles: fewer multiply-adds per load
   * (nb * r FMAs for nb + r loads) */
  double eff = ((double)(nb * r) / (double)(nb + r)) / ((double)(nb * full) / (double)(nb + full));
  double lanes = kb;
  double gemm = (double)done * a2 * C * OC / lanes / eff;
  /* F(4x4)'s transforms move 36 vectors through an L1 scratch (too many
   * for the registers): measured, they cost 2.5 times the count (fitted
   * with the per-byte costs on the layers of docs/PASSES.md) */
  double spill = m == 4 ? 2.5 : 1.0;
  double xform = spill * (double)done * (8.0 * a2 * C * parts + 7.0 * a2 * OC) / lanes;
  /* every tile chunk reads all of U */
  double ubytes = (double)a2 * C * OC * 4;
  double per_byte = ubytes > L3_BYTES ? STREAM_MEM : ubytes > L2_BYTES ? STREAM_L3 : 0;
  double stream = (double)chunks * ubytes * per_byte;
  return gemm + xform + stream;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  int marked = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ncc_node *n = g->nodes[i];
    /* a mark already there (text IR) is the user's choice */
    if (!candidate(n, ctx->precision) || ncc_node_attr(n, "conv.winograd")) continue;
    const ncc_shape *ys = &n->out[0]->shape;
    int64_t C = n->in[0]->shape.d[1], OC = ys->d[1], OH = ys->d[2], OW = ys->d[3];
    int kb = ncc_value_block(n->out[0]);
    double direct = (double)OH * OW * C * OC * 9 / kb, best = 0.85 * direct;
    int m = 0;
    for (int cand = 4; cand >= 2; cand -= 2) {
      double c = wino_cost(cand, C, OC, OH, OW, kb);
      if (c < 0) continue;
      if (ctx->winograd == cand) { /* forced: the first that fits */
        m = cand;
        break;
      }
      if (!ctx->winograd && c < best) best = c, m = cand;
    }
    if (!m) continue;
    ncc_status st = ncc_node_set_attr_int(g, n, "conv.winograd", m);
    if (st != NCC_OK) return st;
    marked++;
  }
  ctx->rewrites = marked;
  ctx->changed = marked > 0;
  return NCC_OK;
}

const ncc_pass ncc_pass_winograd = {
    .name = "winograd",
    .level = 2,
    .needs = "layout",
    .desc = "3x3 stride-1 Convs computed by Winograd F(2x2 or 4x4, 3x3) where the "
            "estimate says it pays (marks conv.winograd; cpu)",
    .run = run,
};
