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
 * Reorder op converts. A sweep in topological order decides each node's
 * mode from its inputs' layouts (run twice: a planning sweep that costs
 * the blocked regions, then the rewrite of the regions that pay, see "the
 * plan" below):
 *  - a Conv whose output channels are a multiple of k (group 1, or
 *    depthwise with C a multiple of k) and whose weights are constant
 *    produces a blocked output; its data input is made blocked when its
 *    channels divide by k, else (a network's 3-channel image) the kernel
 *    reads it plain, in place;
 *  - MaxPool / AveragePool / GlobalAveragePool on a blocked input, and an
 *    elementwise f32 op with a blocked operand whose other operands all
 *    have the output's shape or are single elements, stay blocked: their
 *    plain full-size operands are reordered to blocked;
 *  - a Concat along C whose inputs' channels all divide by k, one of
 *    them blocked, stays blocked (the other inputs are reordered);
 *  - every other node reads plain values: blocked inputs are reordered
 *    back (once per value, shared by its readers).
 * So conversions appear only where the blocked region meets the rest of
 * the graph: at its inputs, at its outputs (a graph output keeps its name
 * and plain layout; the blocked result gets a new name) and around ops
 * with no blocked form (Flatten, Gemm, Softmax, ...).
 */
#include <stdio.h>
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/window.h"
#include "pass.h"

typedef struct lay {
  ncc_graph *g;
  int k;
  ncc_value **to_blk, **to_plain; /* per value id: its converted twin */
  int n_vals;                     /* size of the two maps */
  ncc_node **order;               /* the new node order */
  int n_order, cap_order;
  int blocked_nodes, reorders;
  bool *blk;     /* per original value: stored blocked (planned or made) */
  int *region;   /* per node id: its blocked region (union-find), -1: none */
  double *flops; /* per node id: conv FLOPs; then per region root */
  double *edge;  /* per node id: bytes its Reorders move; then per root */
  bool *charged; /* per value: its Reorder back to plain is counted */
  bool planning; /* the first sweep: decide and cost, change nothing */
} lay;

/* Original values through the plan (the first sweep changes nothing);
 * values the rewrite made through their layout. */
static bool is_blocked_in(const lay *L, const ncc_value *v) {
  if (!v) return false;
  return v->id < L->n_vals ? L->blk[v->id] : ncc_value_block(v) > 0;
}

/* f32 NCHW with static C divisible by k. */
static bool blockable(const ncc_value *v, int k) {
  return v && v->dtype == NCC_DT_F32 && v->shape.rank == 4 && v->shape.d[1] > 0 &&
         v->shape.d[1] % k == 0;
}

/* The blocked kernels take explicit pads only (auto_pad NOTSET or VALID). */
static bool window_ok(const ncc_node *n, ncc_window *w) {
  const ncc_value *x = n->n_in > 0 ? n->in[0] : NULL;
  const ncc_value *wt = n->op == NCC_OP_CONV && n->n_in > 1 ? n->in[1] : NULL;
  if (!x || x->shape.rank < 3 || (n->op == NCC_OP_CONV && (!wt || wt->shape.rank != x->shape.rank)))
    return false;
  if (ncc_window_decode(n, x->shape.rank - 2, wt ? wt->shape.d + 2 : NULL, w)) return false;
  return w->auto_pad == NCC_AUTO_PAD_NOTSET || w->auto_pad == NCC_AUTO_PAD_VALID;
}

static bool conv_blocks(const ncc_node *n, int k) {
  if (n->n_in < 2 || n->n_out != 1 || !blockable(n->out[0], k)) return false;
  const ncc_value *x = n->in[0], *w = n->in[1];
  ncc_window win;
  if (!x || x->dtype != NCC_DT_F32 || x->shape.rank != 4 || !w ||
      w->kind != NCC_VAL_CONST || w->shape.rank != 4 || !window_ok(n, &win))
    return false;
  if (n->n_in > 2 && n->in[2] && n->in[2]->kind != NCC_VAL_CONST) return false;
  int64_t group = win.group;
  if (group == 1) return true;
  /* depthwise: one input channel per output channel, both blocked */
  return group == n->out[0]->shape.d[1] && w->shape.d[1] == 1 && blockable(x, k) &&
         x->shape.d[1] == group;
}

static bool pool_blocks(const lay *L, const ncc_node *n, int k) {
  if (n->n_out < 1 || !blockable(n->out[0], k) || !is_blocked_in(L, n->in[0])) return false;
  ncc_window win;
  if (n->op == NCC_OP_MAXPOOL) return (n->n_out < 2 || !n->out[1]) && window_ok(n, &win);
  if (n->op == NCC_OP_AVGPOOL) return window_ok(n, &win);
  return n->op == NCC_OP_GLOBALAVGPOOL;
}

static bool single(const ncc_value *v) { return ncc_shape_numel(&v->shape) == 1; }

/* A plain per-channel operand of a blocked NCHW output y: [C,1,1] or
 * [1,C,1,1] (a BatchNormalization's scale and shift after bn-fold, a
 * bias). The cpu kernels read k consecutive channels of it as one vector,
 * so it stays plain. */
static bool per_channel(const lay *L, const ncc_value *v, const ncc_value *y) {
  /* (a [1,C,1,1] of a [1,C,1,1] output is a same-shape operand instead) */
  if (is_blocked_in(L, v) || v->dtype != NCC_DT_F32 || ncc_shape_eq(&v->shape, &y->shape))
    return false;
  const ncc_shape *s = &v->shape;
  int64_t c = y->shape.d[1];
  return (s->rank == 3 && s->d[0] == c && s->d[1] == 1 && s->d[2] == 1) ||
         (s->rank == 4 && s->d[0] == 1 && s->d[1] == c && s->d[2] == 1 && s->d[3] == 1);
}

/* An elementwise op stays blocked when one operand is, and every operand
 * either has the output's shape (it is or becomes blocked), is a single
 * element (read as a scalar in any layout) or is per channel (read plain). */
static bool eltwise_blocks(const lay *L, const ncc_node *n, int k) {
  if (!(ncc_op_table[n->op].flags & NCC_OPF_ELTWISE) || n->op == NCC_OP_REORDER ||
      n->n_out != 1 || !blockable(n->out[0], k))
    return false;
  bool any = false;
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (!v) continue;
    if (v->dtype != NCC_DT_F32) return false;
    if (is_blocked_in(L, v)) any = true;
    else if (per_channel(L, v, n->out[0])) continue;
    else if (!single(v) && !ncc_shape_eq(&v->shape, &n->out[0]->shape)) return false;
    else if (!single(v) && v->kind == NCC_VAL_CONST) return false; /* stays plain data */
  }
  return any;
}

/* A Concat along the channels stays blocked when one input is and every
 * input's channels divide by k: per image, input j is then the contiguous
 * run of C_j*H*W elements at offset (C_0 + ... + C_j-1)*H*W in both
 * layouts, so the plain copy kernel is the blocked one (codegen). The
 * branches of SqueezeNet's fire modules, Inception and DenseNet stay in
 * the blocked region instead of a Reorder pair around every join. A
 * Concat of more inputs than one kernel takes would run on the host,
 * which reads plain values: it stays plain. */
#define CONCAT_MAX_IN 63 /* inputs of the cpu copy kernel (KIR_MAX_BUFS - 1) */

static bool concat_blocks(const lay *L, const ncc_node *n, int k) {
  if (n->op != NCC_OP_CONCAT || n->n_out != 1 || !blockable(n->out[0], k) ||
      n->n_in > CONCAT_MAX_IN)
    return false;
  int axis;
  if (ncc_attrs_axis_norm(n, 4, &axis) != NCC_OK || axis != 1) return false;
  bool any = false;
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (!blockable(v, k) || v->kind == NCC_VAL_CONST) return false;
    any = any || is_blocked_in(L, v);
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

/* A fresh blocked value for v's contents, "<v>.nchw<k>c". */
static ncc_value *blocked_twin(lay *L, const ncc_value *v) {
  char suffix[32];
  snprintf(suffix, sizeof suffix, "nchw%dc", L->k);
  ncc_value *b = twin(L, v, suffix);
  if (b) b->layout = (ncc_layout){NCC_LAYOUT_NCHWC, L->k};
  return b;
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

/* ---- the plan: regions and their cost ----
 * Blocking pays inside a region of blocked nodes (joined by blocked
 * values) and costs at its edges: each Reorder is a pass over memory and a
 * kernel launch. The first sweep makes every decision without changing the
 * graph, records each region's conv FLOPs and edge costs (symbolic dims
 * counted as 1: both scale with the batch), and a region is blocked only
 * when its convs do at least MIN_FLOPS_PER_EDGE_BYTE per byte of edge cost
 * (docs/PASSES.md has the measurements). Measured on AVX-512, 1 thread: a
 * lone depthwise-separable pair at 16x16x64 (~18 by this count) lost 18%
 * blocked; a stack of 8 (~200) won 19-25%, and on real networks blocking
 * every region beat the earlier bytes-only rule at 150 FLOP/B (which left
 * EfficientNet-B0's early stages plain) by 20% on EfficientNet-B0. */
#define MIN_FLOPS_PER_EDGE_BYTE 20.0
/* A Reorder also costs a kernel launch (fork/join): about 2 us, the time
 * of this many bytes at the 1-thread copy bandwidth (~14 GB/s). It is what
 * makes a lone depthwise-separable pair at 16x16 lose to its Reorders
 * while the same ops at 56x56 win. */
#define REORDER_FIXED_BYTES 32768.0
/* A depthwise conv's FLOPs count this many times: its plain kernel is far
 * slower per FLOP than the blocked one (EfficientNet-B0, 1 thread: 3.4x at
 * 3x3 stride 2, 4.9x at 5x5 stride 2), so blocking pays at fewer FLOPs.
 * With 1, MobileNetV3's and EfficientNet's early regions stayed plain and
 * the whole network ran 10-20% slower (measured against threshold 0). */
#define DEPTHWISE_WEIGHT 4.0

static double reorder_cost(const ncc_value *v) {
  return (double)ncc_value_bytes(v, 1) + REORDER_FIXED_BYTES;
}

static bool depthwise(const ncc_node *n) {
  const ncc_value *w = n->n_in > 1 ? n->in[1] : NULL;
  return n->op == NCC_OP_CONV && w && w->shape.rank == 4 && w->shape.d[1] == 1 &&
         n->out[0] && n->out[0]->shape.d[1] > 1 && ncc_attr_int(n, "group", 1) == n->out[0]->shape.d[1];
}

static int find(int *r, int i) {
  while (r[i] != i) i = r[i] = r[r[i]];
  return i;
}

/* The region of node `id` absorbs the region of v's producer. */
static void join(lay *L, int id, const ncc_value *v) {
  const ncc_node *p = v->producer;
  if (!p || L->region[p->id] < 0) return;
  int a = find(L->region, id), b = find(L->region, p->id);
  if (a != b) L->region[b] = a;
}

/* v in the blocked layout (creating its Reorder once); NULL on OOM. */
static ncc_value *as_blocked(lay *L, ncc_node *reader, ncc_value *v) {
  if (is_blocked_in(L, v)) return v;
  NCC_ASSERT(v->id < L->n_vals); /* original nodes read original values */
  if (L->to_blk[v->id]) return L->to_blk[v->id];
  if (L->planning) { /* a Reorder at the reader's region edge */
    if (!L->charged[v->id]) L->edge[reader->id] += reorder_cost(v);
    L->charged[v->id] = true;
    return v;
  }
  ncc_value *b = blocked_twin(L, v);
  if (!b || !reorder(L, v, b)) return NULL;
  L->to_blk[v->id] = b;
  return b;
}

static ncc_value *as_plain(lay *L, ncc_value *v) {
  if (!is_blocked_in(L, v)) return v;
  NCC_ASSERT(v->id < L->n_vals);
  if (L->to_plain[v->id]) return L->to_plain[v->id];
  if (L->planning) { /* a Reorder at the producer's region edge */
    if (v->producer && !L->charged[v->id]) L->edge[v->producer->id] += reorder_cost(v);
    L->charged[v->id] = true;
    return v;
  }
  ncc_value *p = twin(L, v, "plain");
  if (!p || !reorder(L, v, p)) return NULL;
  L->to_plain[v->id] = p;
  return p;
}

/* n's output 0 becomes blocked. A graph output keeps its name and plain
 * layout: n writes a blocked twin, and a Reorder writes the output. */
static bool block_output(lay *L, ncc_node *n) {
  ncc_value *y = n->out[0];
  bool out = ncc_is_graph_output(L->g, y);
  if (L->planning) {
    if (out) L->edge[n->id] += reorder_cost(y);
    else L->blk[y->id] = true;
    return true;
  }
  L->blocked_nodes++;
  if (!out) {
    y->layout = (ncc_layout){NCC_LAYOUT_NCHWC, L->k};
    L->blk[y->id] = true;
    return true;
  }
  ncc_value *b = blocked_twin(L, y);
  if (!b) return false;
  ncc_node_set_output(n, 0, b);
  if (!reorder(L, b, y)) return false;
  L->to_blk[y->id] = b; /* blocked readers of y read b */
  return true;
}

/* Whether n is blocked: by its op and inputs, and (second sweep) by the
 * verdict on its region. */
static bool decide(lay *L, const ncc_node *n, bool *conv) {
  int k = L->k;
  *conv = n->op == NCC_OP_CONV && conv_blocks(n, k);
  bool blk = *conv || pool_blocks(L, n, k) || eltwise_blocks(L, n, k) ||
             concat_blocks(L, n, k);
  if (L->planning || !blk) return blk;
  if (L->region[n->id] < 0) return false;
  int r = find(L->region, n->id);
  return L->edge[r] * MIN_FLOPS_PER_EDGE_BYTE <= L->flops[r];
}

static ncc_status rewrite_node(lay *L, ncc_node *n) {
  int k = L->k;
  bool conv;
  bool blk = decide(L, n, &conv);
  if (L->planning && blk) {
    L->region[n->id] = n->id;
    for (int i = 0; i < n->n_in; i++)
      if (n->in[i] && is_blocked_in(L, n->in[i])) join(L, n->id, n->in[i]);
    if (conv) L->flops[n->id] += ncc_node_flops(n, 1) * (depthwise(n) ? DEPTHWISE_WEIGHT : 1);
  }
  for (int i = 0; i < n->n_in; i++) {
    ncc_value *v = n->in[i];
    if (!v) continue;
    ncc_value *w = v;
    if (!blk) w = as_plain(L, v);
    /* the conv kernel also reads a plain input in place, but a blocked one
     * is faster (measured) and cheap to make: only inputs whose channels
     * do not divide by k (a network's RGB image) stay plain */
    else if (conv) w = i == 0 && blockable(v, k) ? as_blocked(L, n, v) : v;
    else if (is_blocked_in(L, v) ||
             (!single(v) && !per_channel(L, v, n->out[0])))
      w = as_blocked(L, n, v);
    if (!w) return NCC_ERR_NOMEM;
    if (!L->planning) n->in[i] = w;
  }
  if (L->planning) return blk && !block_output(L, n) ? NCC_ERR_NOMEM : NCC_OK;
  if (!push(L, n)) return NCC_ERR_NOMEM;
  /* pushed before its output's Reorder (block_output appends it) */
  if (blk && !block_output(L, n)) return NCC_ERR_NOMEM;
  return NCC_OK;
}

static void lay_free(lay *L) {
  ncc_free(L->to_blk, 0);
  ncc_free(L->to_plain, 0);
  ncc_free(L->order, 0);
  ncc_free(L->blk, 0);
  ncc_free(L->region, 0);
  ncc_free(L->flops, 0);
  ncc_free(L->edge, 0);
  ncc_free(L->charged, 0);
}

static void init_blk(lay *L) {
  for (int i = 0; i < L->n_vals; i++) {
    L->blk[i] = ncc_value_block(L->g->values[i]) > 0;
    L->charged[i] = false;
  }
}

/* Sum each region's FLOPs and edge bytes at its root. */
static void total_regions(lay *L, int n_nodes) {
  for (int i = 0; i < n_nodes; i++) {
    if (L->region[i] < 0) continue;
    int r = find(L->region, i);
    if (r == i) continue;
    L->flops[r] += L->flops[i];
    L->edge[r] += L->edge[i];
  }
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  if (ctx->layout_block <= 1) return NCC_OK;
  lay L = {.g = g, .k = ctx->layout_block};
  L.n_vals = g->n_values;
  int n_nodes = g->n_nodes;
  size_t nv = (size_t)L.n_vals + 1, nn = (size_t)n_nodes + 1;
  L.to_blk = ncc_calloc(nv, sizeof *L.to_blk);
  L.to_plain = ncc_calloc(nv, sizeof *L.to_plain);
  L.blk = ncc_calloc(nv, sizeof *L.blk);
  L.charged = ncc_calloc(nv, sizeof *L.charged);
  L.region = ncc_malloc(nn * sizeof *L.region);
  L.flops = ncc_calloc(nn, sizeof *L.flops);
  L.edge = ncc_calloc(nn, sizeof *L.edge);
  ncc_node **old = ncc_malloc(sizeof *old * nn);
  ncc_status st = L.to_blk && L.to_plain && L.blk && L.charged && L.region && L.flops &&
                          L.edge && old
                      ? NCC_OK
                      : NCC_ERR_NOMEM;
  if (!st && n_nodes) memcpy(old, g->nodes, sizeof *old * (size_t)n_nodes);
  for (int pass = 0; pass < 2 && !st; pass++) {
    L.planning = pass == 0;
    init_blk(&L);
    if (L.planning)
      for (int i = 0; i < n_nodes; i++) L.region[i] = -1;
    /* values made during the sweep are Reorder outputs, never inputs of
     * an original node; ids of original values index the maps */
    for (int i = 0; i < n_nodes && !st; i++) st = rewrite_node(&L, old[i]);
    if (L.planning) total_regions(&L, n_nodes);
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
