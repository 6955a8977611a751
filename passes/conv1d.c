/* passes/conv1d.c — 1-D Conv, MaxPool and AveragePool (the audio encoders
 * of Whisper and wav2vec2, temporal CNNs) as their 2-D forms over a height
 * of one:
 *
 *     y[N,OC,OL] = Conv(x[N,C,L], W[OC,C/g,K])
 *   = Reshape(Conv(Reshape(x, [0,C,1,-1]), W as [OC,C/g,1,K]), [0,OC,-1])
 *
 * with every window attribute given a leading height entry: kernel_shape
 * [1,K], strides [1,s], dilations [1,d], pads [0,b,0,e] (a kernel of 1 at
 * stride 1 with no padding reads each row once, so the sums are the 1-D
 * ones, term for term). The 2-D kernels of every target then run them: the
 * cpu lowering has no 1-D window, so without this pass they run on the
 * reference kernels. The Reshapes are views on the host executor. A
 * constant W is re-shaped as a constant (the same bytes); another W gets a
 * Reshape too.
 *
 * Conditions: input rank 3, one output (MaxPool without Indices), auto_pad
 * NOTSET or VALID (SAME would need the height's pads worked out too; it
 * would be 0, but the 2-D SAME pads are derived per run), plain layouts.
 */
#include <string.h>

#include "pass.h"

static bool eligible(const ncc_node *n) {
  if (n->op != NCC_OP_CONV && n->op != NCC_OP_MAXPOOL && n->op != NCC_OP_AVGPOOL) return false;
  const ncc_value *x = n->n_in > 0 ? n->in[0] : NULL;
  if (!x || x->shape.rank != 3 || n->n_out != 1 || !n->out[0] ||
      n->out[0]->shape.rank != 3 || x->layout.kind != NCC_LAYOUT_PLAIN)
    return false;
  if (n->op == NCC_OP_CONV && (n->n_in < 2 || !n->in[1] || n->in[1]->shape.rank != 3 ||
                               ncc_dim_is_sym(n->in[1]->shape.d[2])))
    return false;
  const char *ap = ncc_attr_string(n, "auto_pad", "NOTSET");
  return strcmp(ap, "NOTSET") == 0 || strcmp(ap, "VALID") == 0;
}

/* Reshape(v, dims) into `out` (NULL: a fresh value of `shape`), appended
 * to the graph. */
static ncc_node *reshape(ncc_graph *g, ncc_value *v, const int64_t *dims, int n,
                         const ncc_shape *shape, ncc_value *out) {
  ncc_value *c = ncc_i64_const(g, dims, n);
  if (c && !out) out = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, v->dtype, shape);
  ncc_node *r = out ? ncc_graph_add_node(g, NCC_OP_RESHAPE, "", 2, (ncc_value *[]){v, c}, 1)
                    : NULL;
  if (r) ncc_node_set_output(r, 0, out);
  return r;
}

/* A window attribute of one entry (or two: pads) with a height entry in
 * front: `fill` (the height's value) before each half. */
static ncc_status widen(ncc_graph *g, ncc_node *n, const char *name, int64_t fill) {
  int cnt = 0;
  const int64_t *v = ncc_attr_ints(n, name, &cnt);
  if (!v || cnt < 1 || cnt > 2) return NCC_OK; /* absent: the 2-D default is the same */
  int64_t w[4] = {fill, v[0], fill, cnt == 2 ? v[1] : 0};
  return ncc_node_set_attr_ints(g, n, name, w, cnt == 2 ? 4 : 2);
}

/* Rewrite node n when it is eligible; its new nodes go to slot[0..1]
 * (before it) and slot[2] (after it). */
static ncc_status rewrite(ncc_graph *g, ncc_node *n, ncc_node **slot, bool *took) {
  if (!(*took = eligible(n))) return NCC_OK;
  ncc_node **pre = slot, **post = slot + 2;
  ncc_value *x = n->in[0], *y = n->out[0];
  ncc_shape x4 = {4, {x->shape.d[0], x->shape.d[1], 1, x->shape.d[2]}};
  ncc_shape y4 = {4, {y->shape.d[0], y->shape.d[1], 1, y->shape.d[2]}};
  static const int64_t to4[4] = {0, 0, 1, -1}, to3[3] = {0, 0, -1};
  if (!(pre[0] = reshape(g, x, to4, 4, &x4, NULL))) return NCC_ERR_NOMEM;
  n->in[0] = pre[0]->out[0];
  if (n->op == NCC_OP_CONV) {
    ncc_value *w = n->in[1];
    ncc_shape w4 = {4, {w->shape.d[0], w->shape.d[1], 1, w->shape.d[2]}};
    if (w->kind == NCC_VAL_CONST && w->data && ncc_shape_is_static(&w->shape)) {
      n->in[1] = ncc_graph_add_const(g, NULL, w->dtype, &w4, w->data);
    } else {
      pre[1] = reshape(g, w, to4, 4, &w4, NULL);
      n->in[1] = pre[1] ? pre[1]->out[0] : NULL;
    }
    if (!n->in[1]) return NCC_ERR_NOMEM;
  }
  ncc_value *t = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, y->dtype, &y4);
  if (!t) return NCC_ERR_NOMEM;
  ncc_node_set_output(n, 0, t); /* y (its name, its readers) moves to the Reshape */
  y->producer = NULL;
  if (!(*post = reshape(g, t, to3, 3, NULL, y))) return NCC_ERR_NOMEM;
  ncc_status st = NCC_OK;
  static const char *const ones[] = {"kernel_shape", "strides", "dilations"};
  for (int i = 0; i < 3 && !st; i++) st = widen(g, n, ones[i], 1);
  if (!st) st = widen(g, n, "pads", 0);
  return st;
}

/* reshapes of a node's inputs go before it, of its output right after it */
static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  return ncc_rewrite_nodes(g, ctx, rewrite, 2, 1);
}

const ncc_pass ncc_pass_conv1d = {
    .name = "conv1d",
    .level = 2,
    .needs = "",
    .desc = "1-D Conv, MaxPool and AveragePool -> their 2-D forms over a height of 1 "
            "(Reshapes around them), which every target compiles",
    .run = run,
};
