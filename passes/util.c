/* passes/util.c — graph helpers shared by passes: use counts, replacing
 * uses, dead-code removal, and the statistics the pass manager reports. */
#include <string.h>

#include "memplan.h"
#include "../ir/attrs.h"
#include "pass.h"

int *ncc_count_uses(const ncc_graph *g) {
  int *uses = ncc_calloc((size_t)g->n_values + 1, sizeof(int));
  if (!uses) return NULL;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++)
      if (g->nodes[i]->in[k]) uses[g->nodes[i]->in[k]->id]++;
  for (int i = 0; i < g->n_outputs; i++) uses[g->outputs[i]->id]++;
  return uses;
}

ncc_status ncc_place_around(ncc_graph *g, int n_orig, ncc_node *const *slots, int n_before,
                            int n_after) {
  int per = n_before + n_after, n = 0;
  ncc_node **order = ncc_malloc(sizeof *order * (size_t)(g->n_nodes + 1));
  if (!order) return NCC_ERR_NOMEM;
  for (int i = 0; i < n_orig; i++) {
    for (int j = 0; j < per; j++) {
      if (j == n_before) order[n++] = g->nodes[i];
      if (slots[i * per + j]) order[n++] = slots[i * per + j];
    }
    if (n_after == 0) order[n++] = g->nodes[i];
  }
  NCC_ASSERT(n == g->n_nodes);
  memcpy(g->nodes, order, sizeof *order * (size_t)n);
  for (int i = 0; i < n; i++) g->nodes[i]->id = i;
  ncc_free(order, 0);
  return NCC_OK;
}

ncc_status ncc_rewrite_nodes(ncc_graph *g, ncc_pass_ctx *ctx, ncc_node_rewrite_fn fn,
                             int n_before, int n_after) {
  int n_orig = g->n_nodes, per = n_before + n_after, done = 0;
  ncc_node **slots = ncc_calloc((size_t)n_orig * (size_t)per + 1, sizeof *slots);
  if (!slots) return NCC_ERR_NOMEM;
  ncc_status st = NCC_OK;
  for (int i = 0; i < n_orig && !st; i++) {
    bool took = false;
    st = fn(g, g->nodes[i], slots + i * per, &took);
    done += !st && took;
  }
  if (!st && done) st = ncc_place_around(g, n_orig, slots, n_before, n_after);
  ncc_free(slots, 0);
  if (!st && done && ncc_dce(g) < 0) st = NCC_ERR_NOMEM;
  ctx->rewrites = done;
  ctx->changed = done > 0;
  return st;
}

ncc_value *ncc_i64_const(ncc_graph *g, const int64_t *v, int n) {
  ncc_shape s = {1, {n}};
  return ncc_graph_add_const(g, NULL, NCC_DT_I64, &s, v);
}

void ncc_replace_uses(ncc_graph *g, ncc_value *from, ncc_value *to) {
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++)
      if (g->nodes[i]->in[k] == from) g->nodes[i]->in[k] = to;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == from) g->outputs[i] = to;
}

/* A constant nothing reads any more (folded weights, merged duplicates,
 * unused initializers) becomes an undefined value, like the outputs of a
 * removed node: the printer and the backends skip it, and its name stays
 * taken so that no later value can reuse it. uses[] is up to date. */
static int drop_unused_consts(ncc_graph *g, const int *uses) {
  int dropped = 0;
  for (int i = 0; i < g->n_values; i++) {
    ncc_value *v = g->values[i];
    if (v->kind != NCC_VAL_CONST || uses[v->id]) continue;
    v->kind = NCC_VAL_NODE;
    v->data = NULL;
    v->content_len = -1;
    dropped++;
  }
  return dropped;
}

int ncc_dce(ncc_graph *g) {
  int *uses = ncc_count_uses(g);
  bool *dead = ncc_calloc((size_t)g->n_nodes + 1, sizeof(bool));
  if (!uses || !dead) {
    ncc_free(uses, 0);
    ncc_free(dead, 0);
    return -1;
  }
  int removed = 0;
  /* Reverse topological order: a node's users are decided before it. */
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    ncc_node *n = g->nodes[i];
    bool used = false;
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] && uses[n->out[k]->id]) used = true;
    if (used) continue;
    dead[n->id] = true;
    removed++;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]) uses[n->in[k]->id]--;
  }
  if (removed) ncc_graph_remove_nodes(g, dead);
  removed += drop_unused_consts(g, uses);
  ncc_free(uses, 0);
  ncc_free(dead, 0);
  return removed;
}

bool ncc_is_graph_output(const ncc_graph *g, const ncc_value *v) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return true;
  return false;
}

/* ---- statistics ---- */
static double numel(const ncc_value *v, int64_t sym_value) {
  if (!v) return 0;
  double n = 1;
  for (int i = 0; i < v->shape.rank; i++)
    n *= (double)(ncc_dim_is_sym(v->shape.d[i]) ? sym_value : v->shape.d[i]);
  return n;
}

double ncc_value_bytes(const ncc_value *v, int64_t sym_value) {
  return v ? numel(v, sym_value) * (double)ncc_dtype_size(v->dtype) : 0;
}

/* A rough FLOP count per node: enough to compare pipelines, not a model. */
double ncc_node_flops(const ncc_node *n, int64_t sv) {
  double out = numel(n->out[0], sv);
  switch (n->op) {
  case NCC_OP_MATMUL: {
    const ncc_value *a = n->in[0];
    int64_t k = a->shape.rank ? a->shape.d[a->shape.rank - 1] : 1;
    return 2.0 * out * (double)(ncc_dim_is_sym(k) ? sv : k);
  }
  case NCC_OP_GEMM: {
    const ncc_value *a = n->in[0];
    ncc_gemm_attrs ga;
    ncc_attrs_gemm(n, &ga);
    int64_t k = a->shape.d[ga.trans_a ? 0 : 1];
    return 2.0 * out * (double)(ncc_dim_is_sym(k) ? sv : k);
  }
  case NCC_OP_MATMULINTEGER:
  case NCC_OP_QLINEARMATMUL: { /* integer ops count as ops (2 per MAC) */
    const ncc_value *a = n->in[0];
    int64_t k = a->shape.rank ? a->shape.d[a->shape.rank - 1] : 1;
    return 2.0 * out * (double)(ncc_dim_is_sym(k) ? sv : k);
  }
  case NCC_OP_CONV:
  case NCC_OP_CONVINTEGER:
  case NCC_OP_QLINEARCONV: {
    const ncc_value *w = n->in[n->op == NCC_OP_QLINEARCONV ? 3 : 1];
    double per = 1;
    for (int i = 1; i < w->shape.rank; i++) per *= (double)w->shape.d[i];
    return 2.0 * out * per;
  }
  default:
    break;
  }
  unsigned f = ncc_op_table[n->op].flags;
  if (f & NCC_OPF_SHAPE) return 0;
  double in = numel(n->in[0], sv);
  if (f & (NCC_OPF_REDUCTION | NCC_OPF_NORM | NCC_OPF_POOL))
    return (in > out ? in : out) * ((f & NCC_OPF_NORM) ? 5 : 1);
  return out;
}

static bool is_kernel(const ncc_node *n) {
  /* Constants and pure metadata ops launch no work. */
  return n->op != NCC_OP_CONSTANT && n->op != NCC_OP_SHAPE &&
         n->op != NCC_OP_IDENTITY;
}

/* Fused groups (passes/fusion.h) launch one kernel whose traffic is its
 * external inputs and its result; peak memory is the memplan planner's
 * (passes/memplan.c): the arena once the `memplan` pass has run, else the
 * liveness bound. */
void ncc_graph_compute_stats(const ncc_graph *g, int64_t sv,
                             ncc_graph_stats *st) {
  memset(st, 0, sizeof *st);
  st->nodes = g->n_nodes;
  ncc_fuse_plan *fp = NULL;
  if (ncc_fuse_plan_build(g, &fp) != NCC_OK) fp = NULL;
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    int gi = fp ? fp->group_of[i] : -1;
    if (gi >= 0) {
      const ncc_fuse_group *gr = &fp->groups[gi];
      st->flops += ncc_node_flops(n, sv);
      if (gr->members[gr->n_members - 1] != n) continue; /* counted at the root */
      st->kernels++;
      for (int e = 0; e < gr->n_ext; e++) st->bytes_moved += ncc_value_bytes(gr->ext[e], sv);
      st->bytes_moved += ncc_value_bytes(n->out[0], sv);
      continue;
    }
    if (!is_kernel(n)) continue;
    st->kernels++;
    st->flops += ncc_node_flops(n, sv);
    for (int k = 0; k < n->n_in; k++) st->bytes_moved += ncc_value_bytes(n->in[k], sv);
    for (int k = 0; k < n->n_out; k++) st->bytes_moved += ncc_value_bytes(n->out[k], sv);
  }
  double peak = ncc_memplan_peak(g, fp, sv, ncc_memplan_annotated(g));
  st->peak_act_bytes = peak > 0 ? peak : 0;
  ncc_fuse_plan_free(fp);
}
