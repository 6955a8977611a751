/* passes/memplan.c — activation memory planning: the planner (see
 * passes/memplan.h) and the `memplan` pass (-O2).
 *
 * The planner is greedy first fit (passes/memplan_core.c, which the AOT
 * glue embeds too): each buffer starts at offset 0 and is
 * bumped past every already-placed buffer that is alive at the same time
 * and overlaps it, until it overlaps none; buffers are placed largest
 * first, and again in order of their first step, and the smaller of the
 * two arenas wins. With sizes
 * a * batch + b the offsets are pairs too; "u lies below v" means u's end
 * is at or below v's offset in both parts, which makes them disjoint for
 * every batch >= 0 (a bump moves v to the componentwise maximum of its
 * offset and u's end). With static sizes this is plain first fit.
 *
 * The pass records the plan on the nodes that write arena values:
 *   mem.offset = [b0, b1, ...]        per output, bytes; -1: not in the
 *                                     arena (graph output, fused-internal)
 *   mem.offset.batch = [a0, ...]      only when the plan depends on the
 *                                     batch: offset = a * batch + b
 * The executor plans with the same function, so these attributes describe
 * what it does; they are informational (nothing reads them back but the
 * statistics, whose peak becomes the arena plus graph inputs and outputs).
 */
#include <stdlib.h>
#include <string.h>

#include "../ir/budget.h"
#include "memplan.h"
#include "pass.h"

#define SIZE_CAP ((int64_t)1 << 50)

bool ncc_memplan_value_size(const ncc_value *v, int *sym, int64_t *a,
                            int64_t *b) {
  int64_t c = (int64_t)ncc_dtype_size(v->dtype);
  bool symbolic = false;
  if (c <= 0) return false;
  for (int d = 0; d < v->shape.rank; d++) {
    int64_t x = v->shape.d[d];
    if (ncc_dim_is_sym(x)) {
      int id = ncc_dim_sym_id(x);
      if (symbolic || (*sym >= 0 && *sym != id)) return false;
      *sym = id;
      symbolic = true;
      continue;
    }
    if (x < 0) return false;
    if (x && c > SIZE_CAP / x) return false;
    c *= x;
  }
  *a = symbolic ? c : 0;
  *b = symbolic ? 0 : c;
  return true;
}

/* The packing itself is passes/memplan_core.c (shared with the glue of
 * generated libraries); this wrapper gives it its scratch. An arena past
 * INT64_MAX bytes cannot be allocated: out of memory. */
ncc_status ncc_memplan_layout(ncc_membuf *bufs, int n, int64_t *arena_a,
                              int64_t *arena_b) {
  *arena_a = *arena_b = 0;
  if (n <= 0) return NCC_OK;
  size_t bytes = ncc_memplan_work_bytes(bufs, n);
  void *work = bytes ? ncc_malloc(bytes) : NULL;
  if (!work) return NCC_ERR_NOMEM;
  int r = ncc_memplan_pack(bufs, n, INT64_MAX, work, arena_a, arena_b);
  ncc_free(work, bytes);
  if (r)
    return ncc_error(NCC_ERR_NOMEM, "the activation plan needs more than 2^63 bytes");
  return NCC_OK;
}

void ncc_memplan_free(ncc_memplan *p) {
  if (!p) return;
  ncc_free(p->in_arena, 0);
  ncc_free(p->size_a, 0);
  ncc_free(p->size_b, 0);
  ncc_free(p->off_a, 0);
  ncc_free(p->off_b, 0);
  ncc_free(p, sizeof *p);
}

ncc_status ncc_memplan_build(const ncc_graph *g, const ncc_fuse_plan *fp,
                             ncc_memplan **out) {
  *out = NULL;
  size_t nv = (size_t)g->n_values + 1;
  ncc_memplan *p = ncc_calloc(1, sizeof *p);
  int *def = ncc_calloc(nv, sizeof(int)), *last = ncc_calloc(nv, sizeof(int));
  bool *is_out = ncc_calloc(nv, sizeof(bool));
  ncc_membuf *bufs = ncc_calloc(nv, sizeof *bufs);
  int *buf_of = ncc_calloc(nv, sizeof(int));
  ncc_status st = NCC_OK;
  if (p) {
    p->in_arena = ncc_calloc(nv, sizeof(bool));
    p->size_a = ncc_calloc(nv, sizeof(int64_t));
    p->size_b = ncc_calloc(nv, sizeof(int64_t));
    p->off_a = ncc_calloc(nv, sizeof(int64_t));
    p->off_b = ncc_calloc(nv, sizeof(int64_t));
  }
  if (!p || !def || !last || !is_out || !bufs || !buf_of || !p->in_arena ||
      !p->size_a || !p->size_b || !p->off_a || !p->off_b) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  p->n_values = g->n_values;
  p->sym = -1;
  p->ok = true;
  for (int v = 0; v < g->n_values; v++) def[v] = last[v] = -1;
  for (int o = 0; o < g->n_outputs; o++) is_out[g->outputs[o]->id] = true;
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    int pos = ncc_fuse_exec_pos(fp, i);
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k]) def[n->out[k]->id] = pos;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] && last[n->in[k]->id] < pos) last[n->in[k]->id] = pos;
  }
  int nb = 0;
  for (int v = 0; v < g->n_values && p->ok; v++) {
    const ncc_value *val = g->values[v];
    if (val->kind != NCC_VAL_NODE || !val->producer || def[v] < 0 || is_out[v] ||
        ncc_fuse_value_internal(fp, val))
      continue;
    int64_t a, b;
    if (!ncc_memplan_value_size(val, &p->sym, &a, &b)) {
      p->ok = false;
      break;
    }
    p->in_arena[v] = true;
    p->size_a[v] = a;
    p->size_b[v] = b;
    buf_of[v] = nb;
    bufs[nb].a = a;
    bufs[nb].b = b;
    bufs[nb].begin = def[v];
    bufs[nb].end = last[v] > def[v] ? last[v] : def[v];
    nb++;
  }
  if (!p->ok) {
    memset(p->in_arena, 0, nv * sizeof(bool));
    goto done;
  }
  st = ncc_memplan_layout(bufs, nb, &p->arena_a, &p->arena_b);
  for (int v = 0; v < g->n_values && !st; v++)
    if (p->in_arena[v]) {
      p->off_a[v] = bufs[buf_of[v]].off_a;
      p->off_b[v] = bufs[buf_of[v]].off_b;
    }
done:
  ncc_free(def, 0);
  ncc_free(last, 0);
  ncc_free(is_out, 0);
  ncc_free(bufs, 0);
  ncc_free(buf_of, 0);
  if (st) {
    ncc_memplan_free(p);
    return st;
  }
  *out = p;
  return NCC_OK;
}

/* ---- the pass ---- */

static double value_bytes(const ncc_value *v, int64_t batch);

static int clear_mem_attrs(ncc_graph *g) {
  int cleared = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ncc_node *n = g->nodes[i];
    int j = 0;
    for (int a = 0; a < n->n_attrs; a++)
      if (strncmp(n->attrs[a].name, "mem.", 4) != 0) n->attrs[j++] = n->attrs[a];
    if (j != n->n_attrs) cleared++;
    n->n_attrs = j;
  }
  return cleared;
}

static ncc_status annotate(ncc_graph *g, const ncc_memplan *mp, int *planned) {
  int64_t offs[64], per[64];
  for (int i = 0; i < g->n_nodes; i++) {
    ncc_node *n = g->nodes[i];
    bool any = false, batch = false;
    int cnt = n->n_out < 64 ? n->n_out : 64;
    for (int k = 0; k < cnt; k++) {
      const ncc_value *v = n->out[k];
      offs[k] = per[k] = -1;
      if (!v || !mp->in_arena[v->id]) continue;
      offs[k] = mp->off_b[v->id];
      per[k] = mp->off_a[v->id];
      any = true;
      batch |= per[k] != 0;
      (*planned)++;
    }
    if (!any) continue;
    ncc_status st = ncc_node_set_attr_ints(g, n, "mem.offset", offs, cnt);
    if (!st && mp->sym >= 0 && batch) {
      for (int k = 0; k < cnt; k++)
        if (per[k] < 0) per[k] = 0;
      st = ncc_node_set_attr_ints(g, n, "mem.offset.batch", per, cnt);
    }
    if (st) return st;
  }
  return NCC_OK;
}

/* The static part of the plan (the arena at batch 0 plus the static graph
 * outputs) against the memory budget, so that a model whose activations
 * cannot fit fails at compile time, naming the largest value's node. */
static ncc_status check_budget(const ncc_graph *g, const ncc_fuse_plan *fp,
                               const ncc_memplan *mp) {
  double total = mp->ok ? (double)mp->arena_b : 0, big = -1;
  const ncc_value *bv = NULL;
  /* the values the graph's nodes write (g->values may hold dead ones) */
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_out; k++) {
      const ncc_value *val = g->nodes[i]->out[k];
      if (!val || ncc_fuse_value_internal(fp, val) || !ncc_shape_is_static(&val->shape))
        continue;
      double b = value_bytes(val, 0);
      if (!mp->ok && b > total) total = b; /* no plan: at least this */
      if (b > big) big = b, bv = val;
    }
  for (int o = 0; o < g->n_outputs; o++) { /* written by a node, listed once */
    const ncc_value *val = g->outputs[o];
    bool dup = val->kind != NCC_VAL_NODE || !ncc_shape_is_static(&val->shape);
    for (int j = 0; j < o && !dup; j++) dup = g->outputs[j] == val;
    if (!dup) total += value_bytes(val, 0);
  }
  if (total < 9.2e18 && ncc_budget_fits((int64_t)total)) return NCC_OK;
  ncc_status st = ncc_budget_check(total < 9.2e18 ? (int64_t)total : -1,
                                   "the activation plan (arena and outputs)");
  char lb[160];
  if (bv) ncc_error_prefix("%s", ncc_node_label(bv->producer, lb, sizeof lb));
  return st;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  int cleared = clear_mem_attrs(g);
  ncc_fuse_plan *fp = NULL;
  ncc_memplan *mp = NULL;
  ncc_status st = ncc_fuse_plan_build(g, &fp);
  if (!st) st = ncc_memplan_build(g, fp, &mp);
  if (!st) st = check_budget(g, fp, mp);
  int planned = 0;
  if (!st && mp->ok) st = annotate(g, mp, &planned);
  ncc_memplan_free(mp);
  ncc_fuse_plan_free(fp);
  if (st) return st;
  ctx->rewrites = planned;
  ctx->changed = planned > 0 || cleared > 0;
  return NCC_OK;
}

const ncc_pass ncc_pass_memplan = {
    .name = "memplan",
    .level = 2,
    .needs = "",
    .desc = "plan activation memory: arena offsets by liveness, linear in the "
            "batch (mem.offset)",
    .run = run,
};

/* ---- peak memory for the statistics ---- */

static double value_bytes(const ncc_value *v, int64_t batch) {
  double n = (double)ncc_dtype_size(v->dtype);
  for (int i = 0; i < v->shape.rank; i++)
    n *= (double)(ncc_dim_is_sym(v->shape.d[i]) ? batch : v->shape.d[i]);
  return n;
}

bool ncc_memplan_annotated(const ncc_graph *g) {
  for (int i = 0; i < g->n_nodes; i++)
    if (ncc_node_attr(g->nodes[i], "mem.offset")) return true;
  return false;
}

static double io_bytes(const ncc_graph *g, int64_t batch) {
  double t = 0;
  for (int i = 0; i < g->n_inputs; i++) t += value_bytes(g->inputs[i], batch);
  for (int i = 0; i < g->n_outputs; i++) {
    bool dup = false; /* an output listed twice, or that is an input */
    for (int j = 0; j < i && !dup; j++) dup = g->outputs[j] == g->outputs[i];
    for (int j = 0; j < g->n_inputs && !dup; j++) dup = g->inputs[j] == g->outputs[i];
    if (!dup) t += value_bytes(g->outputs[i], batch);
  }
  return t;
}

double ncc_memplan_peak(const ncc_graph *g, const ncc_fuse_plan *fp,
                        int64_t batch, bool planned) {
  if (planned) {
    ncc_memplan *mp = NULL;
    if (ncc_memplan_build(g, fp, &mp) != NCC_OK) return -1;
    bool ok = mp->ok;
    double arena = (double)mp->arena_a * (double)batch + (double)mp->arena_b;
    ncc_memplan_free(mp);
    if (ok) return arena + io_bytes(g, batch);
  }
  /* liveness: delta[s] = bytes born at step s minus bytes freed after s-1 */
  int ns = g->n_nodes + 2;
  double *delta = ncc_calloc((size_t)ns + 1, sizeof *delta);
  int *last = ncc_calloc((size_t)g->n_values + 1, sizeof *last);
  int *def = ncc_calloc((size_t)g->n_values + 1, sizeof *def);
  if (!delta || !last || !def) {
    ncc_free(delta, 0);
    ncc_free(last, 0);
    ncc_free(def, 0);
    return -1;
  }
  for (int v = 0; v < g->n_values; v++) def[v] = last[v] = -2;
  for (int i = 0; i < g->n_inputs; i++) def[g->inputs[i]->id] = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    int pos = ncc_fuse_exec_pos(fp, i) + 1; /* step 0: before any node */
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k] && !ncc_fuse_value_internal(fp, n->out[k])) def[n->out[k]->id] = pos;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] && last[n->in[k]->id] < pos) last[n->in[k]->id] = pos;
  }
  for (int o = 0; o < g->n_outputs; o++) last[g->outputs[o]->id] = ns - 1;
  for (int v = 0; v < g->n_values; v++) {
    const ncc_value *val = g->values[v];
    if (def[v] < 0 || val->kind == NCC_VAL_CONST) continue;
    int end = last[v] > def[v] ? last[v] : def[v];
    double b = value_bytes(val, batch);
    delta[def[v]] += b;
    delta[end + 1] -= b;
  }
  double live = 0, peak = 0;
  for (int s = 0; s < ns; s++) {
    live += delta[s];
    if (live > peak) peak = live;
  }
  ncc_free(delta, 0);
  ncc_free(last, 0);
  ncc_free(def, 0);
  return peak;
}
