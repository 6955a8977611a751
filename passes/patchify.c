/* passes/patchify.c — a Conv whose kernel tiles its input (kernel = stride,
 * no padding, no dilation: the patch embedding of ViT, DeiT, BEiT, CLIP and
 * Swin, ConvNeXt's stem and downsamples) becomes a 1x1 Conv over the
 * patches laid out as channels:
 *
 *     y = Conv(x[N,C,H,W], W[OC,C,KH,KW])            stride (KH,KW)
 *   = Conv(p, W'[OC, C*KH*KW, 1, 1])                  stride 1
 *     p = Reshape(Transpose(Reshape(x, [N,C,OH,KH,OW,KW]), [0,1,3,5,2,4]),
 *                 [N, C*KH*KW, OH, OW])
 *
 * Patch channel c*KH*KW + kh*KW + kw holds x[c, oh*KH + kh, ow*KW + kw],
 * which is the order W's bytes already have, so W' is W under another
 * shape. The two Reshapes are views (no copy on the host executor); the
 * Transpose moves the input once, and the Conv becomes the 1x1 GEMM (or a
 * blocked 1x1) instead of a direct convolution whose inner loop runs over
 * a KH x KW window it never reuses — 6-10 GFLOP/s for ViT's patch embedding
 * before this pass. Sums run in another order (the GEMM's k order is the
 * same c, kh, kw as the reference's, so only the blocking differs).
 *
 * Conditions: 2-D f32 Conv, group 1, W a constant, every stride equal to
 * its kernel dim and > 1 somewhere, no pads, no dilation, auto_pad NOTSET
 * or VALID, H and W static and divisible by the kernel (a remainder would
 * be dropped by the Conv; the rewrite does not model it), layouts plain.
 */
#include <stdio.h>
#include <string.h>

#include "../ir/window.h"
#include "pass.h"

/* The window when Conv n tiles its input; false otherwise. */
static bool tiles(const ncc_node *n, ncc_window *w) {
  const ncc_value *x = n->n_in > 1 ? n->in[0] : NULL, *wt = n->n_in > 1 ? n->in[1] : NULL;
  const ncc_value *y = n->n_out == 1 ? n->out[0] : NULL;
  if (n->op != NCC_OP_CONV || !x || !wt || !y || x->dtype != NCC_DT_F32 ||
      y->dtype != NCC_DT_F32 || wt->dtype != NCC_DT_F32 || x->shape.rank != 4 ||
      wt->shape.rank != 4 || wt->kind != NCC_VAL_CONST || !wt->data ||
      !ncc_shape_is_static(&wt->shape) || x->layout.kind != NCC_LAYOUT_PLAIN ||
      y->layout.kind != NCC_LAYOUT_PLAIN)
    return false;
  if (ncc_window_decode(n, 2, wt->shape.d + 2, w) != NCC_OK) return false;
  if (w->group != 1 ||
      (w->auto_pad != NCC_AUTO_PAD_NOTSET && w->auto_pad != NCC_AUTO_PAD_VALID))
    return false;
  bool strided = false;
  for (int i = 0; i < 2; i++) {
    int64_t in = x->shape.d[2 + i];
    if (w->kernel[i] != w->stride[i] || w->dilation[i] != 1 || w->pad_begin[i] ||
        w->pad_end[i] || in <= 0 || in % w->kernel[i])
      return false;
    strided |= w->kernel[i] > 1;
  }
  return strided && x->shape.d[1] == wt->shape.d[1];
}

/* A node op(in...) with one fresh output of `shape`, appended to the graph. */
static ncc_node *add(ncc_graph *g, ncc_op op, int n_in, ncc_value *const *in,
                     const ncc_shape *shape) {
  ncc_value *v = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, NCC_DT_F32, shape);
  ncc_node *n = v ? ncc_graph_add_node(g, op, "", n_in, in, 1) : NULL;
  if (n) ncc_node_set_output(n, 0, v);
  return n;
}

/* Rewrite Conv c when it tiles its input; the three new nodes go to
 * pre[0..2], to be placed right before it. */
static ncc_status rewrite(ncc_graph *g, ncc_node *c, ncc_node **pre, bool *took) {
  ncc_window win, *w = &win;
  if (!(*took = tiles(c, w))) return NCC_OK;
  ncc_value *x = c->in[0], *wt = c->in[1];
  int64_t ch = x->shape.d[1], kh = w->kernel[0], kw = w->kernel[1];
  int64_t oh = x->shape.d[2] / kh, ow = x->shape.d[3] / kw, k = ch * kh * kw;
  /* dim 0 is copied from x by Reshape's 0 (allowzero 0): a symbolic batch */
  int64_t s6[6] = {0, ch, oh, kh, ow, kw}, s4[4] = {0, k, oh, ow};
  int64_t perm[6] = {0, 1, 3, 5, 2, 4};
  ncc_shape r6 = {6, {x->shape.d[0], ch, oh, kh, ow, kw}};
  ncc_shape t6 = {6, {x->shape.d[0], ch, kh, kw, oh, ow}};
  ncc_shape p4 = {4, {x->shape.d[0], k, oh, ow}};
  ncc_shape w4 = {4, {wt->shape.d[0], k, 1, 1}};
  ncc_value *c6 = ncc_i64_const(g, s6, 6), *c4 = ncc_i64_const(g, s4, 4);
  ncc_value *wv = ncc_graph_add_const(g, NULL, NCC_DT_F32, &w4, wt->data);
  if (!c6 || !c4 || !wv) return NCC_ERR_NOMEM;
  if (!(pre[0] = add(g, NCC_OP_RESHAPE, 2, (ncc_value *[]){x, c6}, &r6)) ||
      !(pre[1] = add(g, NCC_OP_TRANSPOSE, 1, (ncc_value *[]){pre[0]->out[0]}, &t6)) ||
      !(pre[2] = add(g, NCC_OP_RESHAPE, 2, (ncc_value *[]){pre[1]->out[0], c4}, &p4)))
    return NCC_ERR_NOMEM;
  ncc_status st = ncc_node_set_attr_ints(g, pre[1], "perm", perm, 6);
  static const int64_t one[2] = {1, 1};
  if (!st) st = ncc_node_set_attr_ints(g, c, "strides", one, 2);
  if (!st && ncc_node_attr(c, "kernel_shape"))
    st = ncc_node_set_attr_ints(g, c, "kernel_shape", one, 2);
  if (st) return st;
  c->in[0] = pre[2]->out[0];
  c->in[1] = wv;
  return NCC_OK;
}

/* the three new nodes go right before their Conv; the old weights go */
static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  return ncc_rewrite_nodes(g, ctx, rewrite, 3, 0);
}

const ncc_pass ncc_pass_patchify = {
    .name = "patchify",
    .level = 2,
    .needs = "",
    .desc = "a Conv whose kernel tiles its input (kernel = stride, no pads: patch embeddings) "
            "-> Reshape/Transpose of the patches into channels and a 1x1 Conv",
    .run = run,
};
