/* runtime/exec.c — the host graph executor shared by host backends.
 *
 * Runs the nodes in graph order. Before each node it computes the concrete
 * output dtypes and shapes with ncc_infer_node (the same function the
 * reference interpreter uses, so both agree by construction), allocates the
 * outputs, runs the node's kernel (a compiled one, or the reference kernel),
 * and frees every intermediate after its last use. Symbolic dims are bound to
 * their concrete values as values appear, so compiled kernels can read them.
 *
 * Buffer plan: after a run, the byte size and lifetime (producing node to
 * last reading node) of every intermediate are known; intermediates are
 * then given offsets in one arena (greedy first fit, largest first, two
 * values share bytes only when their lifetimes are disjoint). Later runs
 * whose sizes match use the arena: no allocation, no page faults, memory
 * no larger than the peak of live values. A run with other sizes (a new
 * batch size) allocates as before and re-plans at its end.
 */
#include <string.h>

#include "../ir/shape.h"
#include "backend.h"
#include "ref/ref.h"

typedef struct exec_step {
  ncc_exec_kernel_fn fn; /* NULL: reference kernel */
  void *kctx;
} exec_step;

struct ncc_exec {
  const ncc_graph *g;
  exec_step *steps;   /* one per node */
  int *last_use;      /* per value: last node index reading it; -1 none */
  bool *is_output;    /* per value: a graph output */
  ncc_tensor *vals;   /* per value, during a run */
  int64_t *syms;      /* per symbol, during a run */
  ncc_tinfo *tin;     /* scratch, max inputs of any node */
  ncc_tinfo *tout;    /* scratch, max outputs of any node */
  const ncc_tensor **inp;
  int max_in, max_out;
  /* buffer plan */
  int *def;           /* per value: producing node index, -1 none */
  size_t *size_now;   /* per value: bytes in the current run */
  size_t *plan_size;  /* per value: bytes the plan was made for */
  size_t *plan_off;   /* per value: offset in the arena */
  bool planned;       /* arena valid for plan_size */
  bool run_matches;   /* every intermediate so far matched the plan */
  unsigned char *arena_raw, *arena;
  size_t arena_bytes;
};

void ncc_exec_free(ncc_exec *x) {
  if (!x) return;
  ncc_free(x->steps, 0);
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
  if (!x->steps || !x->last_use || !x->is_output || !x->vals || !x->syms ||
      !x->tin || !x->tout || !x->inp || !x->def || !x->size_now ||
      !x->plan_size || !x->plan_off) {
    ncc_exec_free(x);
    return NCC_ERR_NOMEM;
  }
  for (int v = 0; v < g->n_values; v++) x->last_use[v] = x->def[v] = -1;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i]->n_out; k++)
      if (g->nodes[i]->out[k]) x->def[g->nodes[i]->out[k]->id] = i;
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]) x->last_use[n->in[k]->id] = i;
  }
  for (int o = 0; o < g->n_outputs; o++) x->is_output[g->outputs[o]->id] = true;
  *out = x;
  return NCC_OK;
}

void ncc_exec_set_kernel(ncc_exec *x, int i, ncc_exec_kernel_fn fn,
                         void *kctx) {
  NCC_ASSERT(i >= 0 && i < x->g->n_nodes);
  x->steps[i].fn = fn;
  x->steps[i].kctx = kctx;
}

/* Record concrete values of v's symbolic dims. */
static void bind_syms(ncc_exec *x, const ncc_value *v, const ncc_tensor *t) {
  if (v->shape.rank != t->rank) return;
  for (int d = 0; d < t->rank; d++)
    if (ncc_dim_is_sym(v->shape.d[d])) {
      int id = ncc_dim_sym_id(v->shape.d[d]);
      if (id >= 0 && id < x->g->n_syms) x->syms[id] = t->dims[d];
    }
}

/* A compiled kernel was specialized on the declared shape: the concrete one
 * must agree on rank and static dims, and on repeated symbols. */
static ncc_status check_declared(ncc_exec *x, const ncc_value *v,
                                 const ncc_tensor *t) {
  bool ok = v->shape.rank == t->rank && v->dtype == t->dtype;
  for (int d = 0; ok && d < t->rank; d++) {
    int64_t dd = v->shape.d[d];
    if (ncc_dim_is_sym(dd))
      ok = x->syms[ncc_dim_sym_id(dd)] == t->dims[d];
    else
      ok = dd == t->dims[d];
  }
  if (!ok)
    return ncc_error(NCC_ERR_INPUT,
                     "value '%s': run-time shape differs from the declared one",
                     v->name ? v->name : "?");
  return NCC_OK;
}

static ncc_status bind_inputs(ncc_exec *x, const ncc_tensor *in, int n_in) {
  const ncc_graph *g = x->g;
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
        if (seen && x->syms[id] != t->dims[d])
          return ncc_error(NCC_ERR_INPUT,
                           "input '%s': dim %d is %lld but '%s' is %lld "
                           "elsewhere",
                           v->name, d, (long long)t->dims[d],
                           ncc_graph_sym_name(g, id), (long long)x->syms[id]);
        x->syms[id] = t->dims[d];
      }
    }
    x->vals[v->id] = *t;
    x->vals[v->id].owns_data = 0; /* borrowed */
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
static bool plannable(const ncc_exec *x, const ncc_value *v) {
  return v && !x->is_output[v->id] && x->def[v->id] >= 0;
}

/* Output storage: the planned arena slice when sizes match, else the heap.
 * Host (reference) kernels get zeroed storage, as ncc_tensor_alloc gives. */
static ncc_status alloc_out(ncc_exec *x, const ncc_value *v, const ncc_tinfo *ti,
                            ncc_tensor *t, bool host) {
  size_t bytes = ncc_dtype_size(ti->dtype);
  bool ok = ti->dtype > NCC_DT_UNDEF && ti->dtype < NCC_DT_COUNT &&
            ti->shape.rank >= 0 && ti->shape.rank <= NCC_MAX_RANK;
  for (int d = 0; ok && d < ti->shape.rank; d++) {
    ok = ti->shape.d[d] >= 0;
    if (ok) bytes *= (size_t)ti->shape.d[d];
  }
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
  return ncc_tensor_alloc(t, ti->dtype, ti->shape.rank, ti->shape.d);
}

/* Lay out the intermediates of the run that just finished. */
static void make_plan(ncc_exec *x) {
  const ncc_graph *g = x->g;
  int nv = g->n_values, n = 0;
  int *order = ncc_calloc((size_t)nv + 1, sizeof *order);
  if (!order) return; /* no plan: runs keep allocating */
  for (int v = 0; v < nv; v++)
    if (plannable(x, g->values[v])) order[n++] = v;
  /* largest first (insertion sort keeps it dependency-free and stable) */
  for (int i = 1; i < n; i++) {
    int v = order[i], j = i - 1;
    while (j >= 0 && x->size_now[order[j]] < x->size_now[v]) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = v;
  }
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    int v = order[i];
    int b0 = x->def[v], e0 = x->last_use[v] > b0 ? x->last_use[v] : b0;
    size_t size = (x->size_now[v] + 63) & ~(size_t)63, off = 0;
    /* first fit: bump past every placed value that overlaps in time and
     * space, until a pass finds no conflict */
    for (bool moved = true; moved;) {
      moved = false;
      for (int j = 0; j < i; j++) {
        int u = order[j];
        int b1 = x->def[u], e1 = x->last_use[u] > b1 ? x->last_use[u] : b1;
        size_t us = (x->size_now[u] + 63) & ~(size_t)63;
        if (e1 < b0 || e0 < b1) continue;
        if (off < x->plan_off[u] + us && x->plan_off[u] < off + size) {
          off = x->plan_off[u] + us;
          moved = true;
        }
      }
    }
    x->plan_off[v] = off;
    x->plan_size[v] = x->size_now[v];
    if (off + size > total) total = off + size;
  }
  ncc_free(order, 0);
  ncc_free(x->arena_raw, 0);
  x->arena_raw = x->arena = NULL;
  x->planned = false;
  x->arena_raw = ncc_malloc(total + 64);
  if (!x->arena_raw) return;
  x->arena = x->arena_raw + (64 - (uintptr_t)x->arena_raw % 64) % 64;
  x->arena_bytes = total;
  x->planned = true;
}

static ncc_status run_node(ncc_exec *x, int i) {
  const ncc_node *n = x->g->nodes[i];
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
  const exec_step *s = &x->steps[i];
  for (int k = 0; k < n->n_out && st == NCC_OK; k++)
    st = alloc_out(x, n->out[k], &x->tout[k], &out[k], s->fn == NULL);
  for (int k = 0; k < n->n_out && st == NCC_OK; k++)
    if (n->out[k]) bind_syms(x, n->out[k], &out[k]);
  if (st == NCC_OK && s->fn) {
    for (int k = 0; k < n->n_in && st == NCC_OK; k++)
      if (n->in[k]) st = check_declared(x, n->in[k], x->inp[k]);
    for (int k = 0; k < n->n_out && st == NCC_OK; k++)
      if (n->out[k]) st = check_declared(x, n->out[k], &out[k]);
  }
  if (st == NCC_OK) {
    if (s->fn)
      st = s->fn(s->kctx, n, x->inp, out, x->syms);
    else
      st = ncc_ref_kernels[n->op](n, x->inp, out);
  }
  for (int k = 0; k < n->n_out; k++) {
    if (st == NCC_OK && n->out[k])
      x->vals[n->out[k]->id] = out[k];
    else
      ncc_tensor_free(&out[k]);
  }
  ncc_free(heap, 0);
  if (st != NCC_OK) return st;
  /* Free what is dead now: inputs read for the last time, unused outputs. */
  for (int k = 0; k < n->n_in; k++) {
    const ncc_value *v = n->in[k];
    if (v && x->last_use[v->id] == i && !x->is_output[v->id])
      ncc_tensor_free(&x->vals[v->id]);
  }
  for (int k = 0; k < n->n_out; k++) {
    const ncc_value *v = n->out[k];
    if (v && x->last_use[v->id] < 0 && !x->is_output[v->id])
      ncc_tensor_free(&x->vals[v->id]);
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

ncc_status ncc_exec_run(ncc_exec *x, const ncc_tensor *in, int n_in,
                        ncc_tensor *out, int n_out) {
  const ncc_graph *g = x->g;
  for (int o = 0; o < n_out; o++) memset(&out[o], 0, sizeof out[o]);
  if (n_out != g->n_outputs)
    return ncc_error(NCC_ERR_USAGE, "graph '%s' has %d outputs, %d requested",
                     g->name ? g->name : "", g->n_outputs, n_out);
  memset(x->vals, 0, sizeof *x->vals * (size_t)g->n_values);
  memset(x->syms, 0, sizeof *x->syms * (size_t)(g->n_syms + 1));
  x->run_matches = true;
  ncc_status st = bind_inputs(x, in, n_in);
  if (st == NCC_OK) {
    bind_consts(x);
    for (int i = 0; i < g->n_nodes && st == NCC_OK; i++) st = run_node(x, i);
  }
  if (st == NCC_OK) st = take_outputs(x, out, n_out);
  /* Moved outputs no longer own their data; the rest is released here. */
  release_all(x);
  if (st == NCC_OK && (!x->planned || !x->run_matches)) make_plan(x);
  return st;
}
