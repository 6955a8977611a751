/* passes/memplan.c — activation memory planning: the planner (see
 * passes/memplan.h) and the `memplan` pass (-O2).
 *
 * The planner is greedy first fit: each buffer starts at offset 0 and is
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

static int64_t round_up(int64_t v) {
  return (v + NCC_MEMPLAN_ALIGN - 1) / NCC_MEMPLAN_ALIGN * NCC_MEMPLAN_ALIGN;
}

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

typedef struct ent {
  int idx;
  int64_t a, b; /* rounded sizes */
  int begin;
} ent;

static int by_size_desc(const void *x, const void *y) {
  const ent *p = x, *q = y;
  if (p->a != q->a) return p->a > q->a ? -1 : 1;
  if (p->b != q->b) return p->b > q->b ? -1 : 1;
  return p->idx - q->idx;
}

static int by_begin(const void *x, const void *y) {
  const ent *p = x, *q = y;
  if (p->begin != q->begin) return p->begin < q->begin ? -1 : 1;
  return by_size_desc(x, y);
}

/* u ends at or below v's offset in both parts. */
static bool below(int64_t ua, int64_t ub, int64_t va, int64_t vb) {
  return ua <= va && ub <= vb;
}

/* ---- which placed buffers are alive together with a new one ----
 * A segment tree over the steps. A placed buffer is listed in `cover` at
 * the O(log T) nodes its lifetime decomposes into, and in `part` at those
 * nodes and their ancestors. The buffers alive together with [lo, hi] are
 * then `part` of hi's decomposition nodes plus `cover` of those nodes'
 * ancestors: every overlap is found, in O(log T) lists. The lists are
 * CSR arrays sized up front (every buffer is eventually placed). Scanning
 * all placed buffers instead made planning quadratic in the graph. */
typedef struct stree {
  int size; /* leaves, a power of two */
  int *cover_off, *cover_fill, *cover;
  int *part_off, *part_fill, *part;
} stree;

/* Calls visit(node, is_decomposition_node) for the nodes of [lo, hi]. */
typedef void (*stree_fn)(stree *t, int node, bool full, void *ud);

static void stree_walk(stree *t, int node, int nl, int nr, int lo, int hi,
                       stree_fn fn, void *ud) {
  if (hi < nl || nr < lo) return;
  if (lo <= nl && nr <= hi) {
    fn(t, node, true, ud);
    return;
  }
  fn(t, node, false, ud);
  int mid = nl + (nr - nl) / 2;
  stree_walk(t, 2 * node, nl, mid, lo, hi, fn, ud);
  stree_walk(t, 2 * node + 1, mid + 1, nr, lo, hi, fn, ud);
}

static void count_fn(stree *t, int node, bool full, void *ud) {
  (void)ud;
  if (full) t->cover_off[node + 1]++;
  t->part_off[node + 1]++;
}

typedef struct {
  int id;
} put_ud;

static void put_fn(stree *t, int node, bool full, void *ud) {
  int id = ((put_ud *)ud)->id;
  if (full) t->cover[t->cover_off[node] + t->cover_fill[node]++] = id;
  t->part[t->part_off[node] + t->part_fill[node]++] = id;
}

typedef struct {
  int *out, n, *stamp, mark;
} get_ud;

static void add_list(get_ud *q, const int *l, int n) {
  for (int i = 0; i < n; i++)
    if (q->stamp[l[i]] != q->mark) {
      q->stamp[l[i]] = q->mark;
      q->out[q->n++] = l[i];
    }
}

static void get_fn(stree *t, int node, bool full, void *ud) {
  get_ud *q = ud;
  if (full) add_list(q, t->part + t->part_off[node], t->part_fill[node]);
  else add_list(q, t->cover + t->cover_off[node], t->cover_fill[node]);
}

static void stree_free(stree *t) {
  ncc_free(t->cover_off, 0);
  ncc_free(t->part_off, 0);
  ncc_free(t->cover, 0);
  ncc_free(t->part, 0);
}

/* steps are shifted by -t0 into [0, size) */
static ncc_status stree_init(stree *t, const ncc_membuf *bufs, const ent *e, int n,
                             int t0) {
  memset(t, 0, sizeof *t);
  int span = 1;
  for (int i = 0; i < n; i++) {
    int end = bufs[e[i].idx].end > bufs[e[i].idx].begin ? bufs[e[i].idx].end
                                                         : bufs[e[i].idx].begin;
    if (end - t0 + 1 > span) span = end - t0 + 1;
  }
  t->size = 1;
  while (t->size < span) t->size *= 2;
  size_t nodes = 2 * (size_t)t->size + 1;
  t->cover_off = ncc_calloc(2 * nodes, sizeof(int));
  t->part_off = ncc_calloc(2 * nodes, sizeof(int));
  if (!t->cover_off || !t->part_off) return NCC_ERR_NOMEM;
  t->cover_fill = t->cover_off + nodes;
  t->part_fill = t->part_off + nodes;
  for (int i = 0; i < n; i++) {
    const ncc_membuf *b = &bufs[e[i].idx];
    stree_walk(t, 1, 0, t->size - 1, b->begin - t0,
               (b->end > b->begin ? b->end : b->begin) - t0, count_fn, NULL);
  }
  for (size_t k = 1; k < nodes; k++) {
    t->cover_off[k] += t->cover_off[k - 1];
    t->part_off[k] += t->part_off[k - 1];
  }
  t->cover = ncc_malloc(sizeof(int) * ((size_t)t->cover_off[nodes - 1] + 1));
  t->part = ncc_malloc(sizeof(int) * ((size_t)t->part_off[nodes - 1] + 1));
  return t->cover && t->part ? NCC_OK : NCC_ERR_NOMEM;
}

static int by_int(const void *x, const void *y) {
  int p = *(const int *)x, q = *(const int *)y;
  return (p > q) - (p < q);
}

static _Thread_local const int64_t *sort_off;

static int by_off(const void *x, const void *y) {
  int64_t p = sort_off[*(const int *)x], q = sort_off[*(const int *)y];
  return (p > q) - (p < q);
}

/* First fit in the order of e[]; offsets into oa/ob (by buffer index).
 * With static sizes the first fit offset is the lowest one clear of every
 * buffer alive at the same time: one pass over those sorted by offset
 * finds it. With linear sizes a bump is to the componentwise maximum, so
 * the old fixed-point loop runs, over the same buffers in placement order
 * (its result is unchanged; only the buffers it skipped are not visited). */
static ncc_status first_fit(const ncc_membuf *bufs, const ent *e, int n, int64_t *oa,
                            int64_t *ob, int64_t *arena_a, int64_t *arena_b) {
  *arena_a = *arena_b = 0;
  bool linear = false;
  int t0 = bufs[e[0].idx].begin;
  for (int i = 0; i < n; i++) {
    linear |= e[i].a != 0;
    if (bufs[e[i].idx].begin < t0) t0 = bufs[e[i].idx].begin;
  }
  stree t;
  ncc_status st = stree_init(&t, bufs, e, n, t0);
  int *cand = ncc_malloc(sizeof(int) * ((size_t)n + 1));
  int *stamp = ncc_calloc((size_t)n + 1, sizeof(int));
  if (st || !cand || !stamp) {
    stree_free(&t);
    ncc_free(cand, 0);
    ncc_free(stamp, 0);
    return NCC_ERR_NOMEM;
  }
  /* cand[] holds positions in e[] (placement order) */
  for (int i = 0; i < n; i++) {
    const ncc_membuf *v = &bufs[e[i].idx];
    int lo = v->begin - t0, hi = (v->end > v->begin ? v->end : v->begin) - t0;
    int64_t va = 0, vb = 0;
    bool empty = e[i].a + e[i].b == 0;
    if (!empty) {
      get_ud q = {.out = cand, .n = 0, .stamp = stamp, .mark = i + 1};
      stree_walk(&t, 1, 0, t.size - 1, lo, hi, get_fn, &q);
      if (!linear) {
        sort_off = ob;
        for (int c = 0; c < q.n; c++) cand[c] = e[cand[c]].idx; /* by buffer */
        qsort(cand, (size_t)q.n, sizeof *cand, by_off);
        for (int c = 0; c < q.n; c++) {
          int u = cand[c];
          int64_t ue = ob[u] + round_up(bufs[u].b);
          if (ob[u] < vb + e[i].b && ue > vb) vb = ue;
        }
      } else {
        qsort(cand, (size_t)q.n, sizeof *cand, by_int);
        for (bool moved = true; moved;) {
          moved = false;
          for (int c = 0; c < q.n; c++) {
            int j = cand[c];
            int64_t ua = oa[e[j].idx], ub = ob[e[j].idx];
            int64_t uea = ua + e[j].a, ueb = ub + e[j].b;
            if (below(uea, ueb, va, vb) || below(va + e[i].a, vb + e[i].b, ua, ub))
              continue;
            va = va > uea ? va : uea;
            vb = vb > ueb ? vb : ueb;
            moved = true;
          }
        }
      }
      put_ud pu = {.id = i};
      stree_walk(&t, 1, 0, t.size - 1, lo, hi, put_fn, &pu);
    }
    oa[e[i].idx] = va;
    ob[e[i].idx] = vb;
    if (va + e[i].a > *arena_a) *arena_a = va + e[i].a;
    if (vb + e[i].b > *arena_b) *arena_b = vb + e[i].b;
  }
  stree_free(&t);
  ncc_free(cand, 0);
  ncc_free(stamp, 0);
  return NCC_OK;
}

/* Two orders are tried, largest first and by start time (each wins on
 * some graphs); the smaller arena is kept (the batch part decides). */
ncc_status ncc_memplan_layout(ncc_membuf *bufs, int n, int64_t *arena_a,
                              int64_t *arena_b) {
  *arena_a = *arena_b = 0;
  if (n <= 0) return NCC_OK;
  ent *e = ncc_calloc((size_t)n, sizeof *e);
  int64_t *off = ncc_calloc(4 * (size_t)n, sizeof *off);
  if (!e || !off) {
    ncc_free(e, 0);
    ncc_free(off, 0);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < n; i++) {
    e[i].idx = i;
    e[i].a = round_up(bufs[i].a);
    e[i].b = round_up(bufs[i].b);
    e[i].begin = bufs[i].begin;
  }
  int64_t sa[2], sb[2];
  qsort(e, (size_t)n, sizeof *e, by_size_desc);
  ncc_status st = first_fit(bufs, e, n, off, off + n, &sa[0], &sb[0]);
  qsort(e, (size_t)n, sizeof *e, by_begin);
  if (!st) st = first_fit(bufs, e, n, off + 2 * n, off + 3 * n, &sa[1], &sb[1]);
  if (st) {
    ncc_free(e, 0);
    ncc_free(off, 0);
    return st;
  }
  int k = sa[1] < sa[0] || (sa[1] == sa[0] && sb[1] < sb[0]);
  for (int i = 0; i < n; i++) {
    bufs[i].off_a = off[2 * k * n + i];
    bufs[i].off_b = off[(2 * k + 1) * n + i];
  }
  *arena_a = sa[k];
  *arena_b = sb[k];
  ncc_free(e, 0);
  ncc_free(off, 0);
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
