/* passes/fusion.c — the `fusion` pass (-O2): marks groups of nodes that one
 * kernel computes, and the reader of those marks (ncc_fuse_plan_build).
 *
 * The pass only annotates (fuse.group / fuse.kind on each member, see
 * passes/fusion.h and docs/FUSION.md); the graph computes the same values
 * as before, so the reference interpreter is unaffected and the cpu backend
 * lowers each group to one kernel. Groups are found greedily, in three
 * rounds, each walking the nodes in graph order:
 *
 *  1. epilogue: a MatMul, Gemm or Conv (the anchor) absorbs the elementwise
 *     nodes that follow it on its output (bias, activation, residual add):
 *     they run in the contraction's store while the tile is in registers;
 *  2. reduce: a reduction over trailing axes, Softmax or LayerNormalization
 *     absorbs the elementwise nodes and further reductions over the same
 *     rows around it (decomposed LayerNorm/Softmax, reduce + elementwise):
 *     one kernel per row;
 *  3. eltwise: the remaining elementwise nodes form chains of one shape
 *     (QuantizeLinear / DequantizeLinear join these chains only).
 *
 * Growing a group: starting from the anchor (or the first node of a
 * chain), later nodes that read a member's output and fit the group's shape
 * are taken in graph order; then the longest prefix of them that is a valid
 * group is kept (only the last member's output may be read outside the
 * group or be a graph output, so a value with several consumers ends the
 * group unless all of them join). Finally, producers whose every consumer
 * is in the group join it too (prologue: elementwise work feeding a
 * reduction or a chain), never feeding a contraction's operands.
 */
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/qdq.h"
#include "fusion.h"
#include "pass.h"
#include "rows.h"

#define WINDOW 64 /* nodes scanned past the last member */

const char *ncc_fuse_kind_name(ncc_fuse_kind k) {
  switch (k) {
  case NCC_FUSE_ELTWISE: return "eltwise";
  case NCC_FUSE_EPILOGUE: return "epilogue";
  case NCC_FUSE_REDUCE: return "reduce";
  default: return "?";
  }
}

static int kind_from_name(const char *s) {
  for (int k = 0; k < NCC_FUSE_KIND_COUNT; k++)
    if (strcmp(s, ncc_fuse_kind_name((ncc_fuse_kind)k)) == 0) return k;
  return -1;
}

/* ---- which nodes may join which group ---- */

/* An elementwise node the cpu backend computes in a fused loop: f32 data
 * (bool for comparison results and Where's condition), one output. */
static bool eltwise_ok(const ncc_node *n) {
  unsigned f = ncc_op_table[n->op].flags;
  if (!(f & NCC_OPF_ELTWISE) || n->op == NCC_OP_CAST) return false;
  if (n->n_out != 1 || !n->out[0] || n->n_in > NCC_FUSE_MAX_EXT) return false;
  ncc_dtype od = n->out[0]->dtype;
  if ((f & NCC_OPF_COMPARE) ? od != NCC_DT_BOOL : od != NCC_DT_F32) return false;
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (!v) {
      if (n->op != NCC_OP_CLIP) return false;
      continue;
    }
    if (v->shape.rank > n->out[0]->shape.rank) return false;
    if (n->op == NCC_OP_WHERE && i == 0) {
      if (v->dtype != NCC_DT_BOOL) return false;
    } else if (v->dtype != NCC_DT_F32) {
      return false;
    }
    if (n->op == NCC_OP_CLIP && i > 0 && v->shape.rank != 0) return false;
  }
  if (n->op == NCC_OP_GELU) {
    ncc_act_attrs a;
    if (ncc_attrs_act(n, &a)) return false;
  }
  return true;
}

/* QuantizeLinear / DequantizeLinear in their elementwise form (ir/qdq.h):
 * members of elementwise groups only, whose kernel stores the root's dtype
 * (the contraction and row kernels store f32). */
static bool qdq_ok(const ncc_node *n) {
  int axis;
  return n->n_in <= NCC_FUSE_MAX_EXT && ncc_qdq_eltwise(n, &axis);
}

static bool contraction_ok(const ncc_node *n) {
  return (n->op == NCC_OP_MATMUL || n->op == NCC_OP_GEMM || n->op == NCC_OP_CONV) &&
         n->n_out == 1 && n->out[0] && n->out[0]->dtype == NCC_DT_F32 &&
         n->n_in >= 2 && n->in[0] && n->in[0]->dtype == NCC_DT_F32;
}

/* Row structure of a row-wise node: it works on rows of input 0 (shape
 * *s), reducing or normalizing dims [*first, rank) (passes/rows.h). A
 * reduction over every axis by omitting the axes input is not grouped. */
static bool row_info(const ncc_node *n, ncc_shape *s, int *first) {
  bool reduce = n->op == NCC_OP_REDUCESUM || n->op == NCC_OP_REDUCEMEAN ||
                n->op == NCC_OP_REDUCEMAX;
  if (reduce && (n->n_in < 2 || !n->in[1])) return false;
  if (!ncc_row_split(n, first)) return false;
  *s = n->in[0]->shape;
  return true;
}

static ncc_shape row_shape(const ncc_shape *s, int first) {
  ncc_shape p = *s;
  for (int k = first; k < p.rank; k++) p.d[k] = 1;
  return p;
}

/* ---- pass state ---- */

typedef struct fctx {
  ncc_graph *g;
  int *grp;      /* per node: group number, -1 free */
  int *stamp;    /* per node: membership mark of the group being grown */
  int cur;       /* current mark */
  int *cons_off; /* per value: consumers are cons[cons_off[v] .. cons_off[v+1]) */
  int *cons;
  bool *is_out;  /* per value: a graph output */
  int n_groups;
  ncc_fuse_kind *gkind; /* per group number */
  /* the group being grown */
  ncc_fuse_kind kind;
  ncc_shape shape; /* full shape */
  int first;       /* reduce: row split */
  int anchor;      /* epilogue: the contraction */
  int mem[NCC_FUSE_MAX_MEMBERS];
  int n_mem;
} fctx;

static bool in_group(const fctx *f, int node) { return f->stamp[node] == f->cur; }

static bool reads_member(const fctx *f, const ncc_node *n) {
  for (int k = 0; k < n->n_in; k++) {
    const ncc_value *v = n->in[k];
    if (v && v->producer && in_group(f, v->producer->id)) return true;
  }
  return false;
}

/* Whether node c fits the group being grown (shape and kind). */
static bool admits(const fctx *f, const ncc_node *c) {
  if (eltwise_ok(c) || (f->kind == NCC_FUSE_ELTWISE && qdq_ok(c))) {
    if (ncc_shape_eq(&c->out[0]->shape, &f->shape)) return true;
    if (f->kind != NCC_FUSE_REDUCE) return false;
    ncc_shape p = row_shape(&f->shape, f->first);
    return ncc_shape_eq(&c->out[0]->shape, &p);
  }
  if (f->kind != NCC_FUSE_REDUCE) return false;
  ncc_shape s;
  int first;
  return row_info(c, &s, &first) && first == f->first && ncc_shape_eq(&s, &f->shape);
}

/* Number of distinct values members [0, len) read from outside them. */
static int count_ext(const fctx *f, const int *mem, int len) {
  const ncc_value *seen[NCC_FUSE_MAX_EXT + 1];
  int n = 0;
  int last = mem[len - 1];
  for (int i = 0; i < len; i++) {
    const ncc_node *m = f->g->nodes[mem[i]];
    for (int k = 0; k < m->n_in; k++) {
      const ncc_value *v = m->in[k];
      if (!v) continue;
      if (v->producer && in_group(f, v->producer->id) && v->producer->id <= last)
        continue;
      bool dup = false;
      for (int j = 0; j < n && !dup; j++) dup = seen[j] == v;
      if (dup) continue;
      if (n == NCC_FUSE_MAX_EXT) return n + 1;
      seen[n++] = v;
    }
  }
  return n;
}

/* Whether members mem[0..len) (ascending, all marked) form a valid group:
 * only the last one's output leaves it. Marked nodes past mem[len-1] do
 * not count as members. */
static bool valid_prefix(const fctx *f, const int *mem, int len) {
  if (len < 2) return false;
  int last = mem[len - 1];
  for (int i = 0; i < len - 1; i++) {
    const ncc_node *m = f->g->nodes[mem[i]];
    for (int o = 0; o < m->n_out; o++) {
      const ncc_value *v = m->out[o];
      if (!v) continue;
      if (f->is_out[v->id]) return false;
      for (int c = f->cons_off[v->id]; c < f->cons_off[v->id + 1]; c++) {
        int u = f->cons[c];
        if (!in_group(f, u) || u > last) return false;
      }
    }
    /* a row reduction without keepdims only as the result */
    ncc_reduce_attrs ra;
    ncc_attrs_reduce(m, &ra);
    if (f->kind == NCC_FUSE_REDUCE && (ncc_op_table[m->op].flags & NCC_OPF_REDUCTION) &&
        m->op != NCC_OP_SOFTMAX && m->op != NCC_OP_LOGSOFTMAX &&
        m->op != NCC_OP_LAYERNORM && !ra.keepdims)
      return false;
  }
  return count_ext(f, mem, len) <= NCC_FUSE_MAX_EXT;
}

static void begin_group(fctx *f, int seed) {
  f->cur++;
  f->n_mem = 1;
  f->mem[0] = seed;
  f->stamp[seed] = f->cur;
}

/* Take later nodes that read members and fit, then cut to the longest
 * valid prefix (unmarking the rest). */
static void grow_forward(fctx *f) {
  ncc_graph *g = f->g;
  int last = f->mem[0];
  for (int j = last + 1; j < g->n_nodes && j <= last + WINDOW &&
                         f->n_mem < NCC_FUSE_MAX_MEMBERS;
       j++) {
    const ncc_node *c = g->nodes[j];
    if (f->grp[j] >= 0 || !reads_member(f, c) || !admits(f, c)) continue;
    f->stamp[j] = f->cur;
    f->mem[f->n_mem++] = j;
    last = j;
  }
  int len = f->n_mem;
  while (len >= 2 && !valid_prefix(f, f->mem, len)) len--;
  if (len < 2) len = 1;
  for (int i = len; i < f->n_mem; i++) f->stamp[f->mem[i]] = 0;
  f->n_mem = len;
}

static void insert_member(fctx *f, int node) {
  int i = f->n_mem++;
  while (i > 0 && f->mem[i - 1] > node) {
    f->mem[i] = f->mem[i - 1];
    i--;
  }
  f->mem[i] = node;
  f->stamp[node] = f->cur;
}

static void remove_member(fctx *f, int node) {
  int j = 0;
  for (int i = 0; i < f->n_mem; i++)
    if (f->mem[i] != node) f->mem[j++] = f->mem[i];
  f->n_mem = j;
  f->stamp[node] = 0;
}

/* Whether producer p may join as prologue: elementwise, fits, every
 * consumer is a member (and not the contraction of an epilogue). */
static bool prologue_ok(const fctx *f, const ncc_node *p) {
  if (f->grp[p->id] >= 0 || in_group(f, p->id) || !admits(f, p)) return false;
  const ncc_value *v = p->out[0];
  if (f->is_out[v->id] || f->cons_off[v->id] == f->cons_off[v->id + 1]) return false;
  for (int c = f->cons_off[v->id]; c < f->cons_off[v->id + 1]; c++) {
    int u = f->cons[c];
    if (!in_group(f, u) || (f->kind == NCC_FUSE_EPILOGUE && u == f->anchor)) return false;
  }
  return true;
}

static void grow_backward(fctx *f) {
  for (bool changed = true; changed && f->n_mem < NCC_FUSE_MAX_MEMBERS;) {
    changed = false;
    for (int i = 0; i < f->n_mem && !changed; i++) {
      const ncc_node *m = f->g->nodes[f->mem[i]];
      for (int k = 0; k < m->n_in && !changed; k++) {
        const ncc_value *v = m->in[k];
        if (!v || !v->producer ||
            !(eltwise_ok(v->producer) || (f->kind == NCC_FUSE_ELTWISE && qdq_ok(v->producer))))
          continue;
        const ncc_node *p = v->producer;
        if (!prologue_ok(f, p)) continue;
        insert_member(f, p->id);
        if (count_ext(f, f->mem, f->n_mem) > NCC_FUSE_MAX_EXT) {
          remove_member(f, p->id);
          continue;
        }
        changed = true;
      }
    }
  }
}

static void commit_group(fctx *f) {
  if (f->n_mem < 2) {
    f->stamp[f->mem[0]] = 0;
    return;
  }
  for (int i = 0; i < f->n_mem; i++) f->grp[f->mem[i]] = f->n_groups;
  f->gkind[f->n_groups++] = f->kind;
}

static void round_epilogue(fctx *f) {
  for (int i = 0; i < f->g->n_nodes; i++) {
    const ncc_node *n = f->g->nodes[i];
    if (f->grp[i] >= 0 || !contraction_ok(n)) continue;
    f->kind = NCC_FUSE_EPILOGUE;
    f->shape = n->out[0]->shape;
    f->anchor = i;
    begin_group(f, i);
    grow_forward(f);
    if (f->n_mem >= 2) grow_backward(f);
    commit_group(f);
  }
}

static void round_reduce(fctx *f) {
  for (int i = 0; i < f->g->n_nodes; i++) {
    const ncc_node *n = f->g->nodes[i];
    ncc_shape s;
    int first;
    if (f->grp[i] >= 0 || !row_info(n, &s, &first)) continue;
    f->kind = NCC_FUSE_REDUCE;
    f->shape = s;
    f->first = first;
    f->anchor = -1;
    begin_group(f, i);
    grow_forward(f);
    grow_backward(f);
    commit_group(f);
  }
}

static void round_eltwise(fctx *f) {
  for (int i = 0; i < f->g->n_nodes; i++) {
    const ncc_node *n = f->g->nodes[i];
    if (f->grp[i] >= 0 || !(eltwise_ok(n) || qdq_ok(n))) continue;
    f->kind = NCC_FUSE_ELTWISE;
    f->shape = n->out[0]->shape;
    f->anchor = -1;
    begin_group(f, i);
    grow_forward(f);
    if (f->n_mem >= 2) grow_backward(f);
    commit_group(f);
  }
}

/* ---- attributes ---- */

int ncc_fuse_clear(ncc_graph *g) {
  int cleared = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    ncc_node *n = g->nodes[i];
    int j = 0;
    for (int a = 0; a < n->n_attrs; a++)
      if (strncmp(n->attrs[a].name, "fuse.", 5) != 0) n->attrs[j++] = n->attrs[a];
    if (j != n->n_attrs) cleared++;
    n->n_attrs = j;
  }
  return cleared;
}

static ncc_status build_consumers(fctx *f) {
  ncc_graph *g = f->g;
  size_t nv = (size_t)g->n_values;
  f->cons_off = ncc_calloc(nv + 2, sizeof(int));
  f->is_out = ncc_calloc(nv + 1, sizeof(bool));
  if (!f->cons_off || !f->is_out) return NCC_ERR_NOMEM;
  int total = 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++)
      if (g->nodes[i]->in[k]) {
        f->cons_off[g->nodes[i]->in[k]->id + 1]++;
        total++;
      }
  for (size_t v = 0; v < nv; v++) f->cons_off[v + 1] += f->cons_off[v];
  f->cons = ncc_calloc((size_t)total + 1, sizeof(int));
  int *fill = ncc_calloc(nv + 1, sizeof(int));
  if (!f->cons || !fill) {
    ncc_free(fill, 0);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_in; k++) {
      const ncc_value *v = g->nodes[i]->in[k];
      if (v) f->cons[f->cons_off[v->id] + fill[v->id]++] = i;
    }
  ncc_free(fill, 0);
  for (int o = 0; o < g->n_outputs; o++) f->is_out[g->outputs[o]->id] = true;
  return NCC_OK;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  int cleared = ncc_fuse_clear(g);
  fctx f;
  memset(&f, 0, sizeof f);
  f.g = g;
  ncc_status st = NCC_OK;
  f.grp = ncc_calloc((size_t)g->n_nodes + 1, sizeof(int));
  f.stamp = ncc_calloc((size_t)g->n_nodes + 1, sizeof(int));
  f.gkind = ncc_calloc((size_t)g->n_nodes + 1, sizeof *f.gkind);
  if (!f.grp || !f.stamp || !f.gkind) st = NCC_ERR_NOMEM;
  if (!st) st = build_consumers(&f);
  if (!st) {
    for (int i = 0; i < g->n_nodes; i++) f.grp[i] = -1;
    round_epilogue(&f);
    round_reduce(&f);
    round_eltwise(&f);
  }
  for (int i = 0; i < g->n_nodes && !st; i++) {
    if (f.grp[i] < 0) continue;
    ncc_node *n = g->nodes[i];
    st = ncc_node_set_attr_int(g, n, "fuse.group", f.grp[i]);
    if (!st)
      st = ncc_node_set_attr_string(g, n, "fuse.kind",
                                    ncc_fuse_kind_name(f.gkind[f.grp[i]]));
  }
  ncc_free(f.grp, 0);
  ncc_free(f.stamp, 0);
  ncc_free(f.gkind, 0);
  ncc_free(f.cons_off, 0);
  ncc_free(f.cons, 0);
  ncc_free(f.is_out, 0);
  if (st) return st;
  ctx->rewrites = f.n_groups;
  ctx->changed = f.n_groups > 0 || cleared > 0;
  return NCC_OK;
}

const ncc_pass ncc_pass_fusion = {
    .name = "fusion",
    .level = 2,
    .needs = "",
    .desc = "mark fused groups: elementwise chains, contraction epilogues, "
            "row reductions (one kernel each)",
    .run = run,
};

/* ---- reading groups back ---- */

void ncc_fuse_plan_free(ncc_fuse_plan *p) {
  if (!p) return;
  for (int i = 0; i < p->n_groups; i++) {
    ncc_free(p->groups[i].members, 0);
    ncc_free(p->groups[i].ext, 0);
  }
  ncc_free(p->groups, 0);
  ncc_free(p->group_of, 0);
  ncc_free(p, sizeof *p);
}

int ncc_fuse_anchor(const ncc_fuse_group *gr) {
  for (int m = 0; m < gr->n_members; m++)
    if (contraction_ok(gr->members[m])) return m;
  return -1;
}

bool ncc_fuse_value_internal(const ncc_fuse_plan *p, const ncc_value *v) {
  if (!p || !v || !v->producer) return false;
  int gi = p->group_of[v->producer->id];
  if (gi < 0) return false;
  const ncc_fuse_group *gr = &p->groups[gi];
  const ncc_node *root = gr->members[gr->n_members - 1];
  return !(v->producer == root && v->producer_idx == 0);
}

/* Structural checks of a group read from attributes (see fusion.h). */
static bool group_valid(const ncc_fuse_plan *p, int gi, const bool *is_out) {
  const ncc_fuse_group *gr = &p->groups[gi];
  if (gr->n_members < 2 || gr->n_members > NCC_FUSE_MAX_MEMBERS) return false;
  int n_contr = 0;
  for (int i = 0; i < gr->n_members; i++) {
    const ncc_node *m = gr->members[i];
    if (m->n_out < 1 || !m->out[0]) return false;
    for (int o = 1; o < m->n_out; o++)
      if (m->out[o]) return false;
    bool contr = m->op == NCC_OP_MATMUL || m->op == NCC_OP_GEMM || m->op == NCC_OP_CONV;
    n_contr += contr;
    if (gr->kind == NCC_FUSE_ELTWISE && !eltwise_ok(m) && !qdq_ok(m)) return false;
    if (gr->kind == NCC_FUSE_EPILOGUE && !contr && !eltwise_ok(m)) return false;
    if (gr->kind == NCC_FUSE_REDUCE && contr) return false;
    if (i == gr->n_members - 1) break;
    const ncc_value *v = m->out[0];
    if (is_out[v->id]) return false;
  }
  return !(gr->kind == NCC_FUSE_EPILOGUE && n_contr != 1);
}

/* Internal values are read only by members: one sweep over all readers
 * marks every group whose non-root value escapes (per group, the sweep
 * made building the plan quadratic in the graph). */
static void mark_escaping(const ncc_graph *g, const ncc_fuse_plan *p, bool *bad) {
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    for (int k = 0; k < n->n_in; k++) {
      const ncc_value *v = n->in[k];
      if (!v || !v->producer) continue;
      int gi = p->group_of[v->producer->id];
      if (gi < 0 || gi == p->group_of[i] || p->groups[gi].n_members == 0) continue;
      const ncc_fuse_group *gr = &p->groups[gi];
      if (v->producer != gr->members[gr->n_members - 1]) bad[gi] = true;
    }
  }
}

static ncc_status collect_ext(ncc_fuse_group *gr, const ncc_fuse_plan *p, int gi) {
  gr->ext = ncc_calloc(NCC_FUSE_MAX_EXT + 1, sizeof *gr->ext);
  if (!gr->ext) return NCC_ERR_NOMEM;
  gr->n_ext = 0;
  for (int i = 0; i < gr->n_members; i++) {
    const ncc_node *m = gr->members[i];
    for (int k = 0; k < m->n_in; k++) {
      ncc_value *v = m->in[k];
      if (!v || (v->producer && p->group_of[v->producer->id] == gi)) continue;
      bool dup = false;
      for (int j = 0; j < gr->n_ext && !dup; j++) dup = gr->ext[j] == v;
      if (dup) continue;
      if (gr->n_ext == NCC_FUSE_MAX_EXT) return NCC_ERR_UNSUPPORTED;
      gr->ext[gr->n_ext++] = v;
    }
  }
  return NCC_OK;
}

ncc_status ncc_fuse_plan_build(const ncc_graph *g, ncc_fuse_plan **out) {
  *out = NULL;
  ncc_fuse_plan *p = ncc_calloc(1, sizeof *p);
  if (!p) return NCC_ERR_NOMEM;
  p->n_nodes = g->n_nodes;
  p->group_of = ncc_calloc((size_t)g->n_nodes + 1, sizeof(int));
  int64_t *ids = ncc_calloc((size_t)g->n_nodes + 1, sizeof(int64_t));
  bool *is_out = ncc_calloc((size_t)g->n_values + 1, sizeof(bool));
  ncc_status st = NCC_OK;
  if (!p->group_of || !ids || !is_out) st = NCC_ERR_NOMEM;
  /* group numbers -> dense indices in order of first use, through an
   * open-addressing table (a linear search made large graphs quadratic) */
  int n_ids = 0, cap = 16;
  while (cap < 2 * g->n_nodes) cap *= 2;
  int *tab = st ? NULL : ncc_malloc(sizeof(int) * (size_t)cap);
  if (!st && !tab) st = NCC_ERR_NOMEM;
  for (int i = 0; i < cap && tab; i++) tab[i] = -1;
  for (int i = 0; i < g->n_nodes && !st; i++) {
    p->group_of[i] = -1;
    const ncc_attr *a = ncc_node_attr(g->nodes[i], "fuse.group");
    if (!a || a->kind != NCC_ATTR_INT) continue;
    uint64_t h = (uint64_t)a->i * 0x9E3779B97F4A7C15ull;
    size_t slot = (size_t)(h >> 20) & (size_t)(cap - 1);
    while (tab[slot] >= 0 && ids[tab[slot]] != a->i) slot = (slot + 1) & (size_t)(cap - 1);
    if (tab[slot] < 0) {
      tab[slot] = n_ids;
      ids[n_ids++] = a->i;
    }
    p->group_of[i] = tab[slot];
  }
  ncc_free(tab, 0);
  if (!st && n_ids) {
    p->groups = ncc_calloc((size_t)n_ids, sizeof *p->groups);
    if (!p->groups) st = NCC_ERR_NOMEM;
  }
  for (int o = 0; o < g->n_outputs && !st; o++) is_out[g->outputs[o]->id] = true;
  /* members per group, in graph order; kind from the attributes */
  bool *bad = st ? NULL : ncc_calloc((size_t)n_ids + 1, sizeof(bool));
  if (!st && !bad) st = NCC_ERR_NOMEM;
  if (!st) p->n_groups = n_ids;
  /* one sweep counts members and reads kinds (kind -1: none seen yet) */
  int *count = st ? NULL : ncc_calloc(2 * (size_t)n_ids + 1, sizeof(int));
  int *kinds = count ? count + n_ids : NULL;
  if (!st && !count) st = NCC_ERR_NOMEM;
  for (int gi = 0; gi < n_ids && !st; gi++) kinds[gi] = -1;
  for (int i = 0; i < g->n_nodes && !st; i++) {
    int gi = p->group_of[i];
    if (gi < 0) continue;
    count[gi]++;
    int k = kind_from_name(ncc_attr_string(g->nodes[i], "fuse.kind", ""));
    if (k < 0 || (kinds[gi] >= 0 && k != kinds[gi])) bad[gi] = true;
    kinds[gi] = k;
  }
  for (int gi = 0; gi < n_ids && !st; gi++) {
    ncc_fuse_group *gr = &p->groups[gi];
    gr->id = ids[gi];
    gr->kind = kinds[gi] < 0 ? NCC_FUSE_ELTWISE : (ncc_fuse_kind)kinds[gi];
    gr->members = ncc_calloc((size_t)count[gi] + 1, sizeof *gr->members);
    if (!gr->members) st = NCC_ERR_NOMEM;
  }
  ncc_free(count, 0);
  for (int i = 0; i < g->n_nodes && !st; i++) {
    int gi = p->group_of[i];
    if (gi >= 0) p->groups[gi].members[p->groups[gi].n_members++] = g->nodes[i];
  }
  if (!st) mark_escaping(g, p, bad);
  for (int gi = 0; gi < n_ids && !st; gi++) {
    if (!bad[gi] && !group_valid(p, gi, is_out)) bad[gi] = true;
    if (!bad[gi]) {
      ncc_status e = collect_ext(&p->groups[gi], p, gi);
      if (e == NCC_ERR_NOMEM) st = e;
      else if (e) bad[gi] = true;
    }
  }
  /* drop invalid groups: their nodes run unfused */
  if (!st && n_ids) {
    int *remap = ncc_calloc((size_t)n_ids, sizeof(int));
    if (!remap) {
      st = NCC_ERR_NOMEM;
    } else {
      int k = 0;
      for (int gi = 0; gi < n_ids; gi++) {
        if (bad[gi]) {
          ncc_free(p->groups[gi].members, 0);
          ncc_free(p->groups[gi].ext, 0);
          remap[gi] = -1;
          continue;
        }
        remap[gi] = k;
        p->groups[k++] = p->groups[gi];
      }
      p->n_groups = k;
      for (int i = 0; i < g->n_nodes; i++)
        if (p->group_of[i] >= 0) p->group_of[i] = remap[p->group_of[i]];
      ncc_free(remap, 0);
    }
  }
  ncc_free(bad, 0);
  ncc_free(ids, 0);
  ncc_free(is_out, 0);
  if (st) {
    ncc_fuse_plan_free(p);
    return st;
  }
  *out = p;
  return NCC_OK;
}
