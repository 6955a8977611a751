/* runtime/exec.c — the host graph executor shared by host backends.
 *
 * Runs the nodes in graph order. Before each node it computes the concrete
 * output dtypes and shapes with ncc_infer_node (the same function the
 * reference interpreter uses, so both agree by construction), allocates the
 * outputs, runs the node's kernel (a compiled one, or the reference kernel),
 * and frees every intermediate after its last use. Symbolic dims are bound to
 * their concrete values as values appear, so compiled kernels can read them.
 *
 * Fused groups (ncc_exec_set_group): the members of a group run as one
 * kernel at the root's position. The other members are not executed and
 * their outputs get no memory: only their shapes are inferred, so that the
 * root's declared shape is checked as for any node. Lifetimes count every
 * member as acting at the root's position.
 *
 * Views: a standalone node with no kernel that only re-shapes its input
 * (ncc_node_is_view: Reshape, Flatten, Squeeze, Unsqueeze, Identity) gets
 * its input's buffer, not a copy. Its source value then lives until the
 * view's last reader (or the end of the run for a graph output), and the
 * view itself has no storage of its own.
 *
 * Shape memo: a node whose outputs are small, not graph outputs, and
 * depend only on the symbols the graph inputs bind (a Shape of a value
 * whose dims are static or such symbols, and everything computed from
 * those and constants alone: the Gather/Concat/Unsqueeze chains of a
 * dynamic-batch export) runs on the first run of a binding; its outputs
 * are kept, and later runs with the same symbol values take them without
 * running the node (const-fold's work, once per binding).
 *
 * Buffer plan (the planner is passes/memplan.c, shared with the `memplan`
 * pass): intermediates get offsets in one arena, two values sharing bytes
 * only when their lifetimes (producing step to last reading step) are
 * disjoint. When every intermediate's size is linear in one symbol bound
 * by the graph inputs (or static), the plan is made once, before the first
 * run, as a function of that symbol, and each run evaluates it for its
 * batch: no allocation, no page faults. Otherwise a run allocates on the
 * heap and the plan is made at its end from the sizes it saw, for the next
 * runs of the same sizes. A size that differs from the plan (data-dependent
 * shapes) always falls back to the heap.
 */
#include <string.h>

#include "../ir/shape.h"
#include "../passes/memplan.h"
#include "exec.h"
#include "profile.h"
#include "ref/ref.h"

typedef struct exec_step {
  ncc_exec_kernel_fn fn; /* NULL: reference kernel */
  void *kctx;
  int root;          /* -1: on its own; else its group's root (shapes only
                        unless it is the root) */
  ncc_value **ext;   /* a group root: the kernel's inputs */
  int n_ext;
} exec_step;

struct ncc_exec {
  const ncc_graph *g;
  exec_step *steps;   /* one per node */
  int *last_use;      /* per value: last node index reading it; -1 none */
  bool *is_output;    /* per value: a graph output */
  ncc_tensor *user_out; /* ncc_exec_run_into: the caller's output buffers */
  ncc_tensor *vals;   /* per value, during a run */
  int64_t *syms;      /* per symbol, during a run */
  ncc_tinfo *tin;     /* scratch, max inputs of any node */
  ncc_tinfo *tout;    /* scratch, max outputs of any node */
  const ncc_tensor **inp;
  const ncc_tensor *kin[NCC_FUSE_MAX_EXT]; /* a group kernel's inputs */
  int max_in, max_out;
  bool dirty;         /* groups changed: recompute lifetimes */
  bool *virt;         /* per value: inside a group, never stored */
  bool *view;         /* per node: a view step (no kernel, no copy) */
  int *src;           /* per value: the value whose bytes it views, or -1 */
  /* the shape memo */
  bool *memo;         /* per node: its outputs are kept per binding */
  ncc_tensor *kept;   /* per value: a memo node's output, owned */
  int64_t *memo_key;  /* the symbols of the binding `kept` holds */
  bool memo_valid;    /* kept holds every memo output of memo_key */
  bool memo_hit;      /* this run's binding is memo_key: skip memo nodes */
  bool memo_lost;     /* this run could not keep an output (no memory) */
  bool any_memo;
  /* buffer plan */
  int *def;           /* per value: producing node index, -1 none */
  size_t *size_now;   /* per value: bytes in the current run */
  int64_t budget_syms[8]; /* the symbols of the last run checked against */
  bool budget_checked;    /* the memory budget (ncc_run_budget_check) */
  size_t *plan_size;  /* per value: bytes the plan was made for */
  size_t *plan_off;   /* per value: offset in the arena */
  bool planned;       /* arena valid for plan_size */
  bool run_matches;   /* every intermediate so far matched the plan */
  unsigned char *arena_raw, *arena;
  size_t arena_bytes;
  /* the plan linear in the batch symbol (made before the first run) */
  bool lin_tried, lin_ok;
  int lin_sym;        /* -1: static */
  int64_t *lin_a, *lin_b, *lin_oa, *lin_ob; /* per value */
  int64_t lin_arena_a, lin_arena_b;
  int64_t planned_batch;
};

void ncc_exec_free(ncc_exec *x) {
  if (!x) return;
  ncc_free(x->last_use, 0);
  ncc_free(x->is_output, 0);
  ncc_free(x->vals, 0);
  ncc_free(x->syms, 0);
  ncc_free(x->tin, 0);
  ncc_free(x->tout, 0);
  ncc_free(x->inp, 0);
  ncc_free(x->def, 0);
  ncc_free(x->size_now, 0);
  ncc_free(x->plan_size, 0);
  ncc_free(x->plan_off, 0);
  ncc_free(x->arena_raw, 0);
  ncc_free(x->virt, 0);
  ncc_free(x->view, 0);
  ncc_free(x->src, 0);
  if (x->kept)
    for (int v = 0; v < x->g->n_values; v++) ncc_tensor_free(&x->kept[v]);
  ncc_free(x->kept, 0);
  ncc_free(x->memo, 0);
  ncc_free(x->memo_key, 0);
  ncc_free(x->lin_a, 0);
  ncc_free(x->lin_b, 0);
  ncc_free(x->lin_oa, 0);
  ncc_free(x->lin_ob, 0);
  if (x->steps)
    for (int i = 0; i < x->g->n_nodes; i++) ncc_free(x->steps[i].ext, 0);
  ncc_free(x->steps, 0);
  ncc_free(x, sizeof *x);
}

ncc_status ncc_exec_create(const ncc_graph *g, ncc_exec **out) {
  *out = NULL;
  ncc_exec *x = ncc_calloc(1, sizeof *x);
  if (!x) return NCC_ERR_NOMEM;
  x->g = g;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i]->n_in > x->max_in) x->max_in = g->nodes[i]->n_in;
    if (g->nodes[i]->n_out > x->max_out) x->max_out = g->nodes[i]->n_out;
  }
  size_t nv = (size_t)g->n_values;
  x->steps = ncc_calloc((size_t)g->n_nodes + 1, sizeof *x->steps);
  x->last_use = ncc_calloc(nv + 1, sizeof *x->last_use);
  x->is_output = ncc_calloc(nv + 1, sizeof *x->is_output);
  x->vals = ncc_calloc(nv + 1, sizeof *x->vals);
  x->syms = ncc_calloc((size_t)g->n_syms + 1, sizeof *x->syms);
  x->tin = ncc_calloc((size_t)x->max_in + 1, sizeof *x->tin);
  x->tout = ncc_calloc((size_t)x->max_out + 1, sizeof *x->tout);
  x->inp = ncc_calloc((size_t)x->max_in + 1, sizeof *x->inp);
  x->def = ncc_calloc(nv + 1, sizeof *x->def);
  x->size_now = ncc_calloc(nv + 1, sizeof *x->size_now);
  x->plan_size = ncc_calloc(nv + 1, sizeof *x->plan_size);
  x->plan_off = ncc_calloc(nv + 1, sizeof *x->plan_off);
  x->virt = ncc_calloc(nv + 1, sizeof *x->virt);
  x->view = ncc_calloc((size_t)g->n_nodes + 1, sizeof *x->view);
  x->src = ncc_calloc(nv + 1, sizeof *x->src);
  x->memo = ncc_calloc((size_t)g->n_nodes + 1, sizeof *x->memo);
  x->kept = ncc_calloc(nv + 1, sizeof *x->kept);
  x->memo_key = ncc_calloc((size_t)g->n_syms + 1, sizeof *x->memo_key);
  if (!x->steps || !x->last_use || !x->is_output || !x->vals || !x->syms ||
      !x->tin || !x->tout || !x->inp || !x->def || !x->size_now ||
      !x->plan_size || !x->plan_off || !x->virt || !x->view || !x->src || !x->memo ||
      !x->kept || !x->memo_key) {
    ncc_exec_free(x);
    return NCC_ERR_NOMEM;
  }
  for (int i = 0; i < g->n_nodes; i++) x->steps[i].root = -1;
  for (int o = 0; o < g->n_outputs; o++) x->is_output[g->outputs[o]->id] = true;
  x->dirty = true;
  *out = x;
  return NCC_OK;
}

/* Position at which node i's work happens. */
static int step_pos(const ncc_exec *x, int i) {
  return x->steps[i].root >= 0 ? x->steps[i].root : i;
}

static bool is_virtual(const ncc_exec *x, int i) {
  return x->steps[i].root >= 0 && x->steps[i].root != i;
}

/* Outputs of at most this many bytes are kept by the shape memo. */
#define MEMO_MAX_BYTES 4096

/* Whether symbol `sym` is a dim of some graph input (bound before a run). */
static bool sym_bound_by_inputs(const ncc_graph *g, int sym) {
  for (int i = 0; i < g->n_inputs; i++)
    for (int d = 0; d < g->inputs[i]->shape.rank; d++)
      if (g->inputs[i]->shape.d[d] == ncc_dim_sym(sym)) return true;
  return false;
}

/* v's dims are known once the graph inputs are bound. */
static bool dims_bound(const ncc_graph *g, const ncc_value *v) {
  for (int d = 0; d < v->shape.rank; d++) {
    int64_t dd = v->shape.d[d];
    if (ncc_dim_is_sym(dd) ? !sym_bound_by_inputs(g, ncc_dim_sym_id(dd)) : dd < 0)
      return false;
  }
  return v->shape.rank >= 0;
}

/* Whether value v's content is fixed by the binding: a constant, or a kept
 * or viewed output of such nodes. */
static bool fixed_content(const ncc_exec *x, const ncc_value *v) {
  if (v->kind == NCC_VAL_CONST) return true;
  if (x->src[v->id] >= 0) v = x->g->values[x->src[v->id]];
  if (v->kind == NCC_VAL_CONST) return true;
  return v->producer && x->memo[v->producer->id];
}

/* Node i's outputs depend on the binding alone and are small enough to
 * keep (finalize: the nodes before i are decided). */
static bool memo_node(const ncc_exec *x, int i) {
  const ncc_graph *g = x->g;
  const ncc_node *n = g->nodes[i];
  if (x->steps[i].root >= 0 || x->view[i] || ncc_ref_allocates_outputs(n)) return false;
  for (int k = 0; k < n->n_out; k++) {
    const ncc_value *v = n->out[k];
    size_t bytes;
    if (!v) continue;
    if (x->is_output[v->id] || v->dtype == NCC_DT_UNDEF || !ncc_shape_is_static(&v->shape) ||
        !ncc_dims_nbytes(ncc_dtype_size(v->dtype), v->shape.rank, v->shape.d, &bytes) ||
        bytes > MEMO_MAX_BYTES)
      return false;
  }
  bool dims_only = n->op == NCC_OP_SHAPE || n->op == NCC_OP_SIZE;
  for (int k = 0; k < n->n_in; k++) {
    const ncc_value *v = n->in[k];
    if (v && !(dims_only ? dims_bound(g, v) : fixed_content(x, v))) return false;
  }
  return n->n_in > 0;
}

/* Lifetimes (def, last_use), the values inside groups and the views. */
static void finalize(ncc_exec *x) {
  const ncc_graph *g = x->g;
  for (int v = 0; v < g->n_values; v++) {
    x->last_use[v] = x->def[v] = x->src[v] = -1;
    x->virt[v] = false;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k]) {
        x->def[n->out[k]->id] = step_pos(x, i);
        x->virt[n->out[k]->id] = is_virtual(x, i);
      }
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k] && x->last_use[n->in[k]->id] < step_pos(x, i))
        x->last_use[n->in[k]->id] = step_pos(x, i);
    x->view[i] = x->steps[i].root < 0 && !x->steps[i].fn && ncc_node_is_view(n);
    if (x->view[i]) {
      int in = n->in[0]->id;
      x->src[n->out[0]->id] = x->src[in] >= 0 ? x->src[in] : in;
    }
  }
  x->any_memo = false;
  for (int i = 0; i < g->n_nodes; i++) x->any_memo |= x->memo[i] = memo_node(x, i);
  x->memo_valid = false;
  x->lin_tried = x->planned = false; /* a plan of the old lifetimes */
  /* a source lives while any view of it is read (graph order: a view's
   * readers come after its source's) */
  for (int v = 0; v < g->n_values; v++) {
    int s = x->src[v];
    int end = x->is_output[v] ? g->n_nodes : x->last_use[v];
    if (s >= 0 && end > x->last_use[s]) x->last_use[s] = end;
  }
  x->dirty = false;
}

ncc_status ncc_exec_set_group(ncc_exec *x, const int *members, int n_members,
                              ncc_value *const *ext, int n_ext,
                              ncc_exec_kernel_fn fn, void *kctx) {
  NCC_ASSERT(n_members >= 1 && n_ext >= 0 && n_ext <= NCC_FUSE_MAX_EXT);
  int root = members[n_members - 1];
  exec_step *s = &x->steps[root];
  ncc_value **e = ncc_calloc((size_t)n_ext + 1, sizeof *e);
  if (!e) return NCC_ERR_NOMEM;
  if (n_ext) memcpy(e, ext, sizeof *e * (size_t)n_ext);
  ncc_free(s->ext, 0);
  s->ext = e;
  s->n_ext = n_ext;
  s->fn = fn;
  s->kctx = kctx;
  for (int i = 0; i < n_members; i++) {
    NCC_ASSERT(members[i] >= 0 && members[i] <= root);
    x->steps[members[i]].root = root;
  }
  x->dirty = true;
  return NCC_OK;
}

void ncc_exec_set_kernel(ncc_exec *x, int i, ncc_exec_kernel_fn fn,
                         void *kctx) {
  NCC_ASSERT(i >= 0 && i < x->g->n_nodes);
  x->steps[i].fn = fn;
  x->steps[i].kctx = kctx;
  x->dirty = true; /* whether node i is a view depends on its kernel */
}

void ncc_exec_bind_syms(const ncc_graph *g, int64_t *syms, const ncc_value *v,
                        const ncc_tensor *t) {
  if (v->shape.rank != t->rank) return;
  for (int d = 0; d < t->rank; d++)
    if (ncc_dim_is_sym(v->shape.d[d])) {
      int id = ncc_dim_sym_id(v->shape.d[d]);
      if (id >= 0 && id < g->n_syms) syms[id] = t->dims[d];
    }
}

ncc_status ncc_exec_check_declared(const int64_t *syms, const ncc_value *v,
                                   const ncc_tensor *t) {
  bool ok = v->shape.rank == t->rank && v->dtype == t->dtype;
  for (int d = 0; ok && d < t->rank; d++) {
    int64_t dd = v->shape.d[d];
    if (ncc_dim_is_sym(dd))
      ok = syms[ncc_dim_sym_id(dd)] == t->dims[d];
    else
      ok = dd == t->dims[d];
  }
  if (!ok)
    return ncc_error(NCC_ERR_INPUT,
                     "value '%s': run-time shape differs from the declared one",
                     v->name ? v->name : "?");
  return NCC_OK;
}

ncc_status ncc_exec_check_inputs(const ncc_graph *g, int64_t *syms,
                                 const ncc_tensor *in, int n_in) {
  if (n_in != g->n_inputs)
    return ncc_error(NCC_ERR_INPUT, "graph '%s' takes %d inputs, %d given",
                     g->name ? g->name : "", g->n_inputs, n_in);
  for (int i = 0; i < n_in; i++) {
    const ncc_value *v = g->inputs[i];
    const ncc_tensor *t = &in[i];
    if (t->dtype != v->dtype)
      return ncc_error(NCC_ERR_INPUT, "input '%s': dtype %s, expected %s",
                       v->name, ncc_dtype_name(t->dtype),
                       ncc_dtype_name(v->dtype));
    if (t->rank != v->shape.rank)
      return ncc_error(NCC_ERR_INPUT, "input '%s': rank %d, expected %d",
                       v->name, t->rank, v->shape.rank);
    size_t bytes;
    if (!ncc_dims_nbytes(ncc_dtype_size(t->dtype), t->rank, t->dims, &bytes))
      return ncc_error(NCC_ERR_INPUT, "input '%s': a negative dim, or a size that overflows",
                       v->name);
    for (int d = 0; d < t->rank; d++) {
      int64_t dd = v->shape.d[d];
      if (!ncc_dim_is_sym(dd) && dd != t->dims[d])
        return ncc_error(NCC_ERR_INPUT,
                         "input '%s': dim %d is %lld, expected %lld", v->name,
                         d, (long long)t->dims[d], (long long)dd);
      if (ncc_dim_is_sym(dd)) {
        int id = ncc_dim_sym_id(dd);
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
          for (int e = 0; e < g->inputs[j]->shape.rank; e++)
            if (g->inputs[j]->shape.d[e] == dd) seen = true;
        for (int e = 0; e < d && !seen; e++)
          if (v->shape.d[e] == dd) seen = true;
        if (seen && syms[id] != t->dims[d])
          return ncc_error(NCC_ERR_INPUT,
                           "input '%s': dim %d is %lld but '%s' is %lld "
                           "elsewhere",
                           v->name, d, (long long)t->dims[d],
                           ncc_graph_sym_name(g, id), (long long)syms[id]);
        syms[id] = t->dims[d];
      }
    }
  }
  return NCC_OK;
}

static ncc_status bind_inputs(ncc_exec *x, const ncc_tensor *in, int n_in) {
  ncc_status st = ncc_exec_check_inputs(x->g, x->syms, in, n_in);
  if (st) return st;
  for (int i = 0; i < n_in; i++) {
    x->vals[x->g->inputs[i]->id] = in[i];
    x->vals[x->g->inputs[i]->id].owns_data = 0; /* borrowed */
  }
  return NCC_OK;
}

static void bind_consts(ncc_exec *x) {
  const ncc_graph *g = x->g;
  for (int v = 0; v < g->n_values; v++) {
    const ncc_value *val = g->values[v];
    if (val->kind != NCC_VAL_CONST) continue;
    ncc_tensor *t = &x->vals[v];
    memset(t, 0, sizeof *t);
    t->dtype = val->dtype;
    t->rank = val->shape.rank;
    for (int d = 0; d < t->rank; d++) t->dims[d] = val->shape.d[d];
    t->data = val->data;
  }
}

static void release_all(ncc_exec *x) {
  for (int v = 0; v < x->g->n_values; v++) ncc_tensor_free(&x->vals[v]);
}

/* Whether value v lives in the arena (an intermediate). */
/* Values the arena plan places: intermediates of a known size (not the
 * outputs of a data-dependent op, which its kernel allocates). */
static bool plannable(const ncc_exec *x, const ncc_value *v) {
  return v && !x->is_output[v->id] && x->def[v->id] >= 0 && !x->virt[v->id] &&
         x->src[v->id] < 0 &&
         !ncc_ref_allocates_outputs(x->g->nodes[x->def[v->id]]);
}

/* The caller's buffer for graph output v when it has v's run-time type. */
static ncc_tensor *user_buffer(const ncc_exec *x, const ncc_value *v, const ncc_tinfo *ti) {
  if (!x->user_out || !v || !x->is_output[v->id]) return NULL;
  for (int o = 0; o < x->g->n_outputs; o++) {
    if (x->g->outputs[o] != v) continue;
    ncc_tensor *u = &x->user_out[o];
    bool ok = u->data && u->dtype == ti->dtype && u->rank == ti->shape.rank;
    for (int d = 0; ok && d < u->rank; d++) ok = u->dims[d] == ti->shape.d[d];
    return ok ? u : NULL;
  }
  return NULL;
}

/* Output storage: the caller's buffer (ncc_exec_run_into), else the planned
 * arena slice when sizes match, else the heap. Host (reference) kernels get
 * zeroed storage, as ncc_tensor_alloc gives. */
static ncc_status alloc_out(ncc_exec *x, const ncc_value *v, const ncc_tinfo *ti,
                            ncc_tensor *t, bool host) {
  ncc_tensor *u = user_buffer(x, v, ti);
  if (u) { /* written in place: no allocation, no first-touch page faults */
    *t = *u;
    t->owns_data = 0;
    if (host && ncc_tensor_nbytes(t)) memset(t->data, 0, ncc_tensor_nbytes(t));
    if (v) x->size_now[v->id] = ncc_tensor_nbytes(t);
    return NCC_OK;
  }
  size_t bytes = 0;
  bool ok = ti->dtype > NCC_DT_UNDEF && ti->dtype < NCC_DT_COUNT &&
            ti->shape.rank >= 0 && ti->shape.rank <= NCC_MAX_RANK;
  /* checked: a wrapped size could match a small planned slice */
  if (ok && !ncc_dims_nbytes(ncc_dtype_size(ti->dtype), ti->shape.rank, ti->shape.d, &bytes))
    return ncc_error(NCC_ERR_INPUT, "value '%s' (%s, rank %d): its size overflows",
                     v && v->name ? v->name : "?", ncc_dtype_name(ti->dtype),
                     ti->shape.rank);
  if (v) x->size_now[v->id] = bytes;
  if (ok && x->planned && plannable(x, v) && x->plan_size[v->id] == bytes) {
    memset(t, 0, sizeof *t);
    t->dtype = ti->dtype;
    t->rank = ti->shape.rank;
    for (int d = 0; d < t->rank; d++) t->dims[d] = ti->shape.d[d];
    t->data = x->arena + x->plan_off[v->id];
    if (host && bytes) memset(t->data, 0, bytes);
    return NCC_OK;
  }
  if (plannable(x, v)) x->run_matches = false;
  /* a compiled kernel writes its whole output (like an arena slice) */
  if (!host) return ncc_tensor_alloc_uninit(t, ti->dtype, ti->shape.rank, ti->shape.d);
  return ncc_tensor_alloc(t, ti->dtype, ti->shape.rank, ti->shape.d);
}

/* An arena of at least `bytes` (64-byte aligned); false when out of memory. */
static bool reserve_arena(ncc_exec *x, size_t bytes) {
  if (x->arena && x->arena_bytes >= bytes) return true;
  ncc_free(x->arena_raw, 0);
  x->arena_raw = x->arena = NULL;
  x->arena_bytes = 0;
  size_t padded;
  if (!ncc_size_add(bytes, 64, &padded)) return false;
  x->arena_raw = ncc_malloc(padded);
  if (!x->arena_raw) return false;
  x->arena = x->arena_raw + (64 - (uintptr_t)x->arena_raw % 64) % 64;
  x->arena_bytes = bytes;
  return true;
}

/* Lay out the intermediates with sizes[v] (a = 0: concrete sizes) or the
 * linear sizes; offsets into oa/ob. Returns false when out of memory. */
static bool layout(ncc_exec *x, const int64_t *sa, const int64_t *sb, int64_t *oa,
                   int64_t *ob, int64_t *arena_a, int64_t *arena_b) {
  const ncc_graph *g = x->g;
  ncc_membuf *bufs = ncc_calloc((size_t)g->n_values + 1, sizeof *bufs);
  int *who = ncc_calloc((size_t)g->n_values + 1, sizeof *who);
  bool ok = bufs && who;
  int n = 0;
  for (int v = 0; ok && v < g->n_values; v++) {
    if (!plannable(x, g->values[v])) continue;
    bufs[n].a = sa ? sa[v] : 0;
    bufs[n].b = sb[v];
    bufs[n].begin = x->def[v];
    bufs[n].end = x->last_use[v] > x->def[v] ? x->last_use[v] : x->def[v];
    who[n++] = v;
  }
  if (ok) ok = ncc_memplan_layout(bufs, n, arena_a, arena_b) == NCC_OK;
  for (int i = 0; ok && i < n; i++) {
    if (oa) oa[who[i]] = bufs[i].off_a;
    ob[who[i]] = bufs[i].off_b;
  }
  ncc_free(bufs, 0);
  ncc_free(who, 0);
  return ok;
}

/* Lay out the intermediates of the run that just finished. */
static void make_plan(ncc_exec *x) {
  const ncc_graph *g = x->g;
  x->planned = false;
  int64_t *sb = ncc_calloc((size_t)g->n_values + 1, sizeof *sb);
  int64_t *ob = ncc_calloc((size_t)g->n_values + 1, sizeof *ob);
  int64_t aa, ab;
  if (sb && ob) {
    for (int v = 0; v < g->n_values; v++) sb[v] = (int64_t)x->size_now[v];
    if (layout(x, NULL, sb, NULL, ob, &aa, &ab) && reserve_arena(x, (size_t)ab)) {
      for (int v = 0; v < g->n_values; v++) {
        x->plan_off[v] = (size_t)ob[v];
        x->plan_size[v] = x->size_now[v];
      }
      x->planned = true;
    }
  }
  ncc_free(sb, 0);
  ncc_free(ob, 0);
}

/* The plan linear in the batch, made once from the declared shapes. */
static void make_linear_plan(ncc_exec *x) {
  const ncc_graph *g = x->g;
  x->lin_tried = true;
  x->lin_ok = false;
  size_t nv = (size_t)g->n_values + 1;
  if (!x->lin_a) {
    x->lin_a = ncc_calloc(nv, sizeof(int64_t));
    x->lin_b = ncc_calloc(nv, sizeof(int64_t));
    x->lin_oa = ncc_calloc(nv, sizeof(int64_t));
    x->lin_ob = ncc_calloc(nv, sizeof(int64_t));
    if (!x->lin_a || !x->lin_b || !x->lin_oa || !x->lin_ob) return;
  }
  x->lin_sym = -1;
  for (int v = 0; v < g->n_values; v++) {
    if (!plannable(x, g->values[v])) continue;
    if (!ncc_memplan_value_size(g->values[v], &x->lin_sym, &x->lin_a[v], &x->lin_b[v]))
      return;
  }
  if (x->lin_sym >= 0 && !sym_bound_by_inputs(g, x->lin_sym)) return;
  x->lin_ok = layout(x, x->lin_a, x->lin_b, x->lin_oa, x->lin_ob, &x->lin_arena_a,
                     &x->lin_arena_b);
}

/* a * n + b as a size; false when negative or past NCC_SIZE_LIMIT. */
static bool lin_eval(int64_t a, int64_t b, int64_t n, size_t *out) {
  size_t an;
  return a >= 0 && b >= 0 && n >= 0 && ncc_size_mul((size_t)a, (size_t)n, &an) &&
         ncc_size_add(an, (size_t)b, out);
}

/* Evaluate the linear plan for this run's batch. A batch whose sizes
 * overflow gets no plan: the heap path then reports the first such value. */
static void use_linear_plan(ncc_exec *x) {
  const ncc_graph *g = x->g;
  int64_t n = x->lin_sym >= 0 ? x->syms[x->lin_sym] : 0;
  if (x->planned && x->planned_batch == n) return;
  x->planned = false;
  size_t arena;
  if (!lin_eval(x->lin_arena_a, x->lin_arena_b, n, &arena)) return;
  for (int v = 0; v < g->n_values; v++) {
    if (!plannable(x, g->values[v])) continue;
    if (!lin_eval(x->lin_a[v], x->lin_b[v], n, &x->plan_size[v]) ||
        !lin_eval(x->lin_oa[v], x->lin_ob[v], n, &x->plan_off[v]))
      return;
  }
  if (!reserve_arena(x, arena)) return;
  x->planned_batch = n;
  x->planned = true;
}

/* After a data-dependent kernel: its output v now has dims; bind v's
 * symbols from them and check its declared static dims and dtype. */
static ncc_status bind_dynamic(ncc_exec *x, const ncc_value *v, ncc_tensor *t) {
  if (!t->data && ncc_tensor_numel(t) != 0)
    return ncc_error(NCC_ERR_INTERNAL, "value '%s': its kernel did not allocate it",
                     v->name ? v->name : "?");
  ncc_exec_bind_syms(x->g, x->syms, v, t);
  x->size_now[v->id] = ncc_tensor_nbytes(t);
  return ncc_exec_check_declared(x->syms, v, t);
}

/* Free value v when node i was its last reader, and with it the value v
 * views when i was the last reader of any view of it. */
static void free_if_dead(ncc_exec *x, const ncc_value *v, int i) {
  if (x->last_use[v->id] == i && !x->is_output[v->id]) ncc_tensor_free(&x->vals[v->id]);
  int s = x->src[v->id];
  if (s >= 0 && x->last_use[s] == i && !x->is_output[s]) ncc_tensor_free(&x->vals[s]);
}

/* A view step: the output takes input 0's bytes under the inferred shape. */
static ncc_status run_view(ncc_exec *x, const ncc_node *n) {
  const ncc_value *v = n->out[0];
  const ncc_tensor *in = x->inp[0];
  ncc_tensor *t = &x->vals[v->id];
  memset(t, 0, sizeof *t);
  t->dtype = x->tout[0].dtype;
  t->rank = x->tout[0].shape.rank;
  for (int d = 0; d < t->rank; d++) t->dims[d] = x->tout[0].shape.d[d];
  if (t->dtype != in->dtype || ncc_tensor_nbytes(t) != ncc_tensor_nbytes(in))
    return ncc_node_error(n, NCC_ERR_INTERNAL, "a view of %zu bytes as %zu",
                          ncc_tensor_nbytes(in), ncc_tensor_nbytes(t));
  t->data = in->data; /* borrowed: the source is freed after the last view */
  ncc_exec_bind_syms(x->g, x->syms, v, t);
  return NCC_OK;
}

/* Keep node i's outputs for the later runs of this binding. */
static void keep_outputs(ncc_exec *x, const ncc_node *n) {
  for (int k = 0; k < n->n_out; k++) {
    const ncc_value *v = n->out[k];
    if (!v) continue;
    const ncc_tensor *t = &x->vals[v->id];
    ncc_tensor *kt = &x->kept[v->id];
    ncc_tensor_free(kt);
    if (ncc_tensor_alloc_uninit(kt, t->dtype, t->rank, t->dims) != NCC_OK) {
      x->memo_lost = true;
      continue;
    }
    if (ncc_tensor_nbytes(t)) memcpy(kt->data, t->data, ncc_tensor_nbytes(t));
  }
}

static ncc_status run_node(ncc_exec *x, int i) {
  const ncc_node *n = x->g->nodes[i];
  if (x->memo[i] && x->memo_hit) { /* kept from the first run of this binding */
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k]) {
        x->vals[n->out[k]->id] = x->kept[n->out[k]->id];
        x->vals[n->out[k]->id].owns_data = 0;
      }
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]) free_if_dead(x, n->in[k], i);
    return NCC_OK;
  }
  for (int k = 0; k < n->n_in; k++) {
    if (n->in[k]) {
      x->inp[k] = &x->vals[n->in[k]->id];
      ncc_tinfo_from_tensor(&x->tin[k], x->inp[k]);
    } else {
      x->inp[k] = NULL;
      memset(&x->tin[k], 0, sizeof x->tin[k]);
      x->tin[k].dtype = NCC_DT_UNDEF;
      x->tin[k].content_len = -1;
    }
  }
  ncc_status st = ncc_infer_node(NULL, n, x->tin, x->tout);
  if (st != NCC_OK) return st;
  const exec_step *s = &x->steps[i];
  if (is_virtual(x, i)) {
    /* a fused member: its value stays in the group kernel's registers */
    for (int k = 0; k < n->n_out; k++) {
      const ncc_value *v = n->out[k];
      if (!v) continue;
      ncc_tensor *t = &x->vals[v->id];
      memset(t, 0, sizeof *t);
      t->dtype = x->tout[k].dtype;
      t->rank = x->tout[k].shape.rank;
      for (int d = 0; d < t->rank; d++) t->dims[d] = x->tout[k].shape.d[d];
      ncc_exec_bind_syms(x->g, x->syms, v, t);
    }
    return NCC_OK;
  }
  if (x->view[i]) {
    if ((st = run_view(x, n)) != NCC_OK) return st;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]) free_if_dead(x, n->in[k], i);
    return NCC_OK;
  }
  /* Most nodes have one output; Split may have many. */
  ncc_tensor outs[8];
  ncc_tensor *out = outs;
  ncc_tensor *heap = NULL;
  memset(outs, 0, sizeof outs);
  if (n->n_out > 8) {
    heap = ncc_calloc((size_t)n->n_out, sizeof *heap);
    if (!heap) return NCC_ERR_NOMEM;
    out = heap;
  }
  /* a group root's kernel reads the group's external values */
  const ncc_tensor *const *kin = x->inp;
  if (s->ext) {
    for (int e = 0; e < s->n_ext; e++) x->kin[e] = &x->vals[s->ext[e]->id];
    kin = x->kin;
  }
  /* a data-dependent op's kernel allocates its outputs: only their dtypes
   * are known before it runs (ncc_ref_alloc_out) */
  bool dyn = !s->fn && ncc_ref_allocates_outputs(n);
  for (int k = 0; k < n->n_out && st == NCC_OK; k++) {
    if (dyn) out[k].dtype = n->out[k] ? x->tout[k].dtype : NCC_DT_UNDEF;
    else st = alloc_out(x, n->out[k], &x->tout[k], &out[k], s->fn == NULL);
  }
  for (int k = 0; k < n->n_out && st == NCC_OK && !dyn; k++)
    if (n->out[k]) ncc_exec_bind_syms(x->g, x->syms, n->out[k], &out[k]);
  if (st == NCC_OK && s->fn) {
    for (int k = 0; k < n->n_in && st == NCC_OK; k++)
      if (n->in[k]) st = ncc_exec_check_declared(x->syms, n->in[k], x->inp[k]);
    for (int e = 0; e < s->n_ext && st == NCC_OK; e++)
      st = ncc_exec_check_declared(x->syms, s->ext[e], x->kin[e]);
    for (int k = 0; k < n->n_out && st == NCC_OK; k++)
      if (n->out[k]) st = ncc_exec_check_declared(x->syms, n->out[k], &out[k]);
  }
  if (st == NCC_OK) {
    if (s->fn)
      st = s->fn(s->kctx, n, kin, out, x->syms);
    else
      st = ncc_ref_run_kernel(n, x->inp, out);
  }
  for (int k = 0; k < n->n_out && st == NCC_OK && dyn; k++)
    if (n->out[k]) st = bind_dynamic(x, n->out[k], &out[k]);
  for (int k = 0; k < n->n_out; k++) {
    if (st == NCC_OK && n->out[k])
      x->vals[n->out[k]->id] = out[k];
    else
      ncc_tensor_free(&out[k]);
  }
  ncc_free(heap, 0);
  if (st != NCC_OK) return st;
  if (x->memo[i]) keep_outputs(x, n);
  /* Free what is dead now: inputs read for the last time, unused outputs. */
  for (int k = 0; k < n->n_in; k++)
    if (n->in[k]) free_if_dead(x, n->in[k], i);
  for (int e = 0; e < s->n_ext; e++) free_if_dead(x, s->ext[e], i);
  for (int k = 0; k < n->n_out; k++) {
    const ncc_value *v = n->out[k];
    if (v && x->last_use[v->id] < 0 && !x->is_output[v->id])
      ncc_tensor_free(&x->vals[v->id]);
  }
  return NCC_OK;
}

/* The nodes of a profiled run: one event per step (a fused member does no
 * work of its own: it is timed as part of its root). The step's time
 * includes what the executor does around the kernel (shape inference,
 * output allocation, frees), so the steps add up to the run. */
static ncc_status run_nodes_profiled(ncc_exec *x, ncc_prof *prof) {
  ncc_status st = NCC_OK;
  for (int i = 0; i < x->g->n_nodes && st == NCC_OK; i++) {
    if (is_virtual(x, i) || x->view[i]) { /* no work of its own */
      st = run_node(x, i);
      continue;
    }
    int64_t t0 = ncc_prof_now_ns();
    st = run_node(x, i);
    ncc_prof_add(prof, i, -1, x->steps[i].fn == NULL, t0, ncc_prof_now_ns());
  }
  return st;
}

int ncc_exec_step_of(const ncc_exec *x, int i) {
  return i >= 0 && i < x->g->n_nodes ? step_pos(x, i) : -1;
}

/* ncc_exec_run_into: outputs not already written in place (an input, a
 * constant, a repeated output) are copied into the caller's buffers. */
static ncc_status fill_user_outputs(ncc_exec *x, ncc_tensor *out, int n_out) {
  for (int o = 0; o < n_out; o++) {
    const ncc_tensor *t = &x->vals[x->g->outputs[o]->id];
    if (t->data != out[o].data && !ncc_tensor_copy_into(&out[o], t))
      return ncc_error(NCC_ERR_USAGE,
                       "ncc_module_run_into: output %d ('%s') has dtype %s and rank %d "
                       "here; the caller's buffer does not match",
                       o, x->g->outputs[o]->name, ncc_dtype_name(t->dtype), t->rank);
  }
  return NCC_OK;
}

/* Hand graph outputs to the caller; borrowed or repeated ones are copied. */
static ncc_status take_outputs(ncc_exec *x, ncc_tensor *out, int n_out) {
  const ncc_graph *g = x->g;
  for (int o = 0; o < n_out; o++) {
    ncc_tensor *t = &x->vals[g->outputs[o]->id];
    if (t->owns_data) {
      out[o] = *t;
      t->owns_data = 0; /* moved; a repeat of this output copies */
      continue;
    }
    ncc_status st = ncc_tensor_alloc(&out[o], t->dtype, t->rank, t->dims);
    if (st != NCC_OK) {
      for (int k = 0; k < o; k++) ncc_tensor_free(&out[k]);
      return st;
    }
    if (t->data && ncc_tensor_nbytes(t))
      memcpy(out[o].data, t->data, ncc_tensor_nbytes(t));
  }
  return NCC_OK;
}

static ncc_status exec_run(ncc_exec *x, const ncc_tensor *in, int n_in, ncc_tensor *out,
                           int n_out, bool into) {
  const ncc_graph *g = x->g;
  if (!into)
    for (int o = 0; o < n_out; o++) memset(&out[o], 0, sizeof out[o]);
  if (n_out != g->n_outputs)
    return ncc_error(NCC_ERR_USAGE, "graph '%s' has %d outputs, %d requested",
                     g->name ? g->name : "", g->n_outputs, n_out);
  memset(x->vals, 0, sizeof *x->vals * (size_t)g->n_values);
  memset(x->syms, 0, sizeof *x->syms * (size_t)(g->n_syms + 1));
  x->run_matches = true;
  if (x->dirty) finalize(x);
  ncc_status st = bind_inputs(x, in, n_in);
  /* the memory budget, once per binding of the symbols (a steady-state
   * loop allocates nothing) */
  bool same = x->budget_checked && g->n_syms <= 8;
  for (int s = 0; same && s < g->n_syms; s++) same = x->budget_syms[s] == x->syms[s];
  if (st == NCC_OK && !same && (st = ncc_run_budget_check(g, in, n_in)) == NCC_OK) {
    for (int s = 0; s < g->n_syms && s < 8; s++) x->budget_syms[s] = x->syms[s];
    x->budget_checked = true;
  }
  /* the shape memo serves this run when its symbols are the kept ones */
  size_t key_bytes = sizeof *x->syms * (size_t)g->n_syms;
  x->memo_hit = st == NCC_OK && x->memo_valid && !memcmp(x->memo_key, x->syms, key_bytes);
  if (st == NCC_OK && x->any_memo && !x->memo_hit) {
    x->memo_valid = x->memo_lost = false;
    memcpy(x->memo_key, x->syms, key_bytes);
  }
  if (st == NCC_OK && !x->lin_tried) make_linear_plan(x);
  if (st == NCC_OK && x->lin_ok) use_linear_plan(x);
  if (st == NCC_OK) {
    bind_consts(x);
    ncc_prof *prof = ncc_prof_current(); /* once per run: NULL when off */
    if (!prof)
      for (int i = 0; i < g->n_nodes && st == NCC_OK; i++) st = run_node(x, i);
    else
      st = run_nodes_profiled(x, prof);
  }
  if (st == NCC_OK && x->any_memo && !x->memo_hit) x->memo_valid = !x->memo_lost;
  if (st == NCC_OK) st = into ? fill_user_outputs(x, out, n_out) : take_outputs(x, out, n_out);
  x->user_out = NULL;
  /* Moved outputs no longer own their data; the rest is released here. */
  release_all(x);
  if (st == NCC_OK && !x->run_matches) x->lin_ok = false; /* sizes vary */
  if (st == NCC_OK && !x->lin_ok && (!x->planned || !x->run_matches)) make_plan(x);
  return st;
}

ncc_status ncc_exec_run(ncc_exec *x, const ncc_tensor *in, int n_in,
                        ncc_tensor *out, int n_out) {
  return exec_run(x, in, n_in, out, n_out, false);
}

ncc_status ncc_exec_run_into(ncc_exec *x, const ncc_tensor *in, int n_in,
                             ncc_tensor *out, int n_out) {
  x->user_out = n_out == x->g->n_outputs ? out : NULL;
  return exec_run(x, in, n_in, out, n_out, true);
}
