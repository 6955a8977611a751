/* passes/layout.c — blocked NCHW[k]c layouts for convolutions (CPU).
 *
 * In NCHW[k]c a tensor [N,C,H,W] is stored [N][C/k][H][W][k]: the k
 * channels of one pixel are one vector, so a direct convolution becomes the
 * same broadcast-FMA micro-kernel everywhere (one weight vector per output
 * channel block, one broadcast input scalar per pixel) with no gathers, no
 * im2col buffer and no masked row tails (oneDNN, TVM x86, ORT's NCHWc
 * transformer). The block k comes from the pipeline (--layout-block, by
 * default the target's f32 vector width); k <= 1 leaves the graph alone.
 *
 * Values keep their logical shapes; only their `layout` changes, and the
 * Reorder op converts. One forward sweep in topological order decides each
 * node's mode from its inputs as already rewritten:
 *  - a Conv whose output channels are a multiple of k (group 1, or
 *    depthwise with C a multiple of k) and whose weights are constant
 *    produces a blocked output; its data input is made blocked when its
 *    channels divide by k, else (a network's 3-channel image) the kernel
 *    reads it plain, in place;
 *  - MaxPool / AveragePool / GlobalAveragePool on a blocked input, and an
 *    elementwise f32 op with a blocked operand whose other operands all
 *    have the output's shape or are single elements, stay blocked: their
 *    plain full-size operands are reordered to blocked;
 *  - every other node reads plain values: blocked inputs are reordered
 *    back (once per value, shared by its readers).
 * So conversions appear only where the blocked region meets the rest of
 * the graph: at its inputs, at its outputs (a graph output keeps its name
 * and plain layout; the blocked result gets a new name) and around ops
 * with no blocked form (Flatten, Gemm, Softmax, ...).
 */
#include <stdio.h>
#include <string.h>

#include "pass.h"

typedef struct lay {
  ncc_graph *g;
  int k;
  ncc_value **to_blk, **to_plain; /* per value id: its converted twin */
  int n_vals;                     /* size of the two maps */
  ncc_node **order;               /* the new node order */
  int n_order, cap_order;
  int blocked_nodes, reorders;
} lay;

static bool is_blocked(const ncc_value *v) {
  return v && v->layout.kind == NCC_LAYOUT_NCHWC && v->layout.block > 1;
}

/* f32 NCHW with static C divisible by k. */
static bool blockable(const ncc_value *v, int k) {
  return v && v->dtype == NCC_DT_F32 && v->shape.rank == 4 && v->shape.d[1] > 0 &&
         v->shape.d[1] % k == 0;
}

static bool window_attrs_ok(const ncc_node *n) {
  const char *ap = ncc_attr_string(n, "auto_pad", "NOTSET");
  return strcmp(ap, "NOTSET") == 0 || strcmp(ap, "VALID") == 0;
}

static bool conv_blocks(const ncc_node *n, int k) {
  if (n->n_in < 2 || n->n_out != 1 || !blockable(n->out[0], k)) return false;
  const ncc_value *x = n->in[0], *w = n->in[1];
  if (!x || x->dtype != NCC_DT_F32 || x->shape.rank != 4 || !w ||
      w->kind != NCC_VAL_CONST || w->shape.rank != 4 || !window_attrs_ok(n))
    return false;
  if (n->n_in > 2 && n->in[2] && n->in[2]->kind != NCC_VAL_CONST) return false;
  int64_t group = ncc_attr_int(n, "group", 1);
  if (group == 1) return true;
  /* depthwise: one input channel per output channel, both blocked */
  return group == n->out[0]->shape.d[1] && w->shape.d[1] == 1 && blockable(x, k) &&
         x->shape.d[1] == group;
}

static bool pool_blocks(const ncc_node *n, int k) {
  if (n->n_out < 1 || !blockable(n->out[0], k) || !is_blocked(n->in[0])) return false;
  if (n->op == NCC_OP_MAXPOOL) return (n->n_out < 2 || !n->out[1]) && window_attrs_ok(n);
  if (n->op == NCC_OP_AVGPOOL) return window_attrs_ok(n);
  return n->op == NCC_OP_GLOBALAVGPOOL;
}

static bool single(const ncc_value *v) { return ncc_shape_numel(&v->shape) == 1; }

/* An elementwise op stays blocked when one operand is, and every operand
 * either has the output's shape (it is or becomes blocked) or is a single
 * element (read as a scalar in any layout). */
static bool eltwise_blocks(const ncc_node *n, int k) {
  if (!(ncc_op_table[n->op].flags & NCC_OPF_ELTWISE) || n->op == NCC_OP_REORDER ||
      n->n_out != 1 || !blockable(n->out[0], k))
    return false;
  bool any = false;
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (!v) continue;
    if (v->dtype != NCC_DT_F32) return false;
    if (is_blocked(v)) any = true;
    else if (!single(v) && !ncc_shape_eq(&v->shape, &n->out[0]->shape)) return false;
    else if (!single(v) && v->kind == NCC_VAL_CONST) return false; /* stays plain data */
  }
  return any;
}

static bool push(lay *L, ncc_node *n) {
  if (L->n_order == L->cap_order) {
    int cap = L->cap_order ? 2 * L->cap_order : 64;
    ncc_node **o = ncc_malloc(sizeof *o * (size_t)cap);
    if (!o) return false;
    if (L->n_order) memcpy(o, L->order, sizeof *o * (size_t)L->n_order);
    ncc_free(L->order, 0);
    L->order = o;
    L->cap_order = cap;
  }
  L->order[L->n_order++] = n;
  return true;
}

/* A fresh value named after v ("<v>.<suffix>" when free). */
static ncc_value *twin(lay *L, const ncc_value *v, const char *suffix) {
  char name[256];
  snprintf(name, sizeof name, "%s.%s", v->name, suffix);
  bool taken = strlen(v->name) + strlen(suffix) + 2 > sizeof name ||
               ncc_graph_find_value(L->g, name);
  ncc_value *t = ncc_graph_add_value(L->g, taken ? NULL : name, NCC_VAL_NODE, v->dtype,
                                     &v->shape);
  return t;
}

/* Reorder(src) -> dst, appended to the new order. */
static bool reorder(lay *L, ncc_value *src, ncc_value *dst) {
  ncc_value *in[1] = {src};
  ncc_node *r = ncc_graph_add_node(L->g, NCC_OP_REORDER, "", 1, in, 1);
  if (!r) return false;
  ncc_node_set_output(r, 0, dst);
  L->reorders++;
  return push(L, r);
}

/* v in the blocked layout (creating its Reorder once); NULL on OOM. */
static ncc_value *as_blocked(lay *L, ncc_value *v) {
  if (is_blocked(v)) return v;
  NCC_ASSERT(v->id < L->n_vals); /* original nodes read original values */
  if (L->to_blk[v->id]) return L->to_blk[v->id];
  char suffix[32];
  snprintf(suffix, sizeof suffix, "nchw%dc", L->k);
  ncc_value *b = twin(L, v, suffix);
  if (!b) return NULL;
  b->layout = (ncc_layout){NCC_LAYOUT_NCHWC, L->k};
  if (!reorder(L, v, b)) return NULL;
  L->to_blk[v->id] = b;
  return b;
}

static ncc_value *as_plain(lay *L, ncc_value *v) {
  if (!is_blocked(v)) return v;
  NCC_ASSERT(v->id < L->n_vals);
  if (L->to_plain[v->id]) return L->to_plain[v->id];
  ncc_value *p = twin(L, v, "plain");
  if (!p || !reorder(L, v, p)) return NULL;
  L->to_plain[v->id] = p;
  return p;
}

static bool is_graph_output(const ncc_graph *g, const ncc_value *v) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return true;
  return false;
}

/* n's output 0 becomes blocked. A graph output keeps its name and plain
 * layout: n writes a blocked twin, and a Reorder writes the output. */
static bool block_output(lay *L, ncc_node *n) {
  ncc_value *y = n->out[0];
  L->blocked_nodes++;
  if (!is_graph_output(L->g, y)) {
    y->layout = (ncc_layout){NCC_LAYOUT_NCHWC, L->k};
    return true;
  }
  char suffix[32];
  snprintf(suffix, sizeof suffix, "nchw%dc", L->k);
  ncc_value *b = twin(L, y, suffix);
  if (!b) return false;
  b->layout = (ncc_layout){NCC_LAYOUT_NCHWC, L->k};
  ncc_node_set_output(n, 0, b);
  if (!reorder(L, b, y)) return false;
  L->to_blk[y->id] = b; /* blocked readers of y read b */
  return true;
}

static ncc_status rewrite_node(lay *L, ncc_node *n) {
  int k = L->k;
  bool conv = n->op == NCC_OP_CONV && conv_blocks(n, k);
  bool blk = conv || pool_blocks(n, k) || eltwise_blocks(n, k);
  for (int i = 0; i < n->n_in; i++) {
    ncc_value *v = n->in[i];
    if (!v) continue;
    ncc_value *w = v;
    if (!blk) w = as_plain(L, v);
    /* the conv kernel also reads a plain input in place, but a blocked one
     * is faster (measured) and cheap to make: only inputs whose channels
     * do not divide by k (a network's RGB image) stay plain */
    else if (conv) w = i == 0 && blockable(v, k) ? as_blocked(L, v) : v;
    else if (!single(v) || is_blocked(v)) w = as_blocked(L, v);
    if (!w) return NCC_ERR_NOMEM;
    n->in[i] = w;
  }
  /* a depthwise conv reads its input blocked (its channels are its groups) */
  if (conv && ncc_attr_int(n, "group", 1) > 1 && !(n->in[0] = as_blocked(L, n->in[0])))
    return NCC_ERR_NOMEM;
  if (!push(L, n)) return NCC_ERR_NOMEM;
  /* pushed before its output's Reorder (block_output appends it) */
  if (blk && !block_output(L, n)) return NCC_ERR_NOMEM;
  return NCC_OK;
}

static void lay_free(lay *L) {
  ncc_free(L->to_blk, 0);
  ncc_free(L->to_plain, 0);
  ncc_free(L->order, 0);
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  if (ctx->layout_block <= 1) return NCC_OK;
  lay L = {.g = g, .k = ctx->layout_block};
  /* new values only come from Reorders: at most two per value, plus
   * the twins of graph outputs */
  L.n_vals = g->n_values;
  L.to_blk = ncc_calloc((size_t)L.n_vals + 1, sizeof *L.to_blk);
  L.to_plain = ncc_calloc((size_t)L.n_vals + 1, sizeof *L.to_plain);
  ncc_status st = L.to_blk && L.to_plain ? NCC_OK : NCC_ERR_NOMEM;
  int n_nodes = g->n_nodes;
  ncc_node **old = st ? NULL : ncc_malloc(sizeof *old * (size_t)(n_nodes + 1));
  if (!st && !old) st = NCC_ERR_NOMEM;
  if (!st && n_nodes) memcpy(old, g->nodes, sizeof *old * (size_t)n_nodes);
  for (int i = 0; i < n_nodes && !st; i++) {
    ncc_node *n = old[i];
    /* values made during the sweep are Reorder outputs, never inputs of
     * an original node; ids of original values index the maps */
    st = rewrite_node(&L, n);
  }
  /* graph outputs stay plain (the verifier insists); a graph output fed
   * by a blocked value directly is impossible: block_output renamed it */
  if (!st && L.n_order > 0 && L.reorders + L.blocked_nodes > 0) {
    NCC_ASSERT(L.n_order == g->n_nodes);
    memcpy(g->nodes, L.order, sizeof *g->nodes * (size_t)L.n_order);
    for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->id = i;
    ctx->changed = true;
    ctx->rewrites = L.blocked_nodes;
  }
  ncc_free(old, 0);
  lay_free(&L);
  return st;
}

const ncc_pass ncc_pass_layout = {
    .name = "layout",
    .level = 2,
    .needs = "",
    .desc = "blocked NCHW[k]c layout for convolutions and what follows them "
            "(--layout-block=k, default: the target's vector width)",
    .run = run,
};
