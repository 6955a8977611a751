/* runtime/ref/interp.c — the reference interpreter: ncc_ref_run.
 *
 * Binds the caller's tensors to the graph inputs (symbolic dims take their
 * sizes from them, consistently across inputs), then runs the nodes in their
 * topological order. For each node, shape inference is re-run on the concrete
 * input tensors (ncc_infer_node with g == NULL), so run-time shapes and
 * shape-tensor contents come from the same code as compile-time ones; the
 * outputs are allocated with those shapes and the op's kernel fills them.
 *
 * Memory stays proportional to the live values, not to the depth of the
 * model: each intermediate is freed right after its last reader. Inputs and
 * constants are used in place, never copied; graph outputs are handed to the
 * caller (copied only when an output is an input, a constant, or listed
 * twice). Any failure frees everything and leaves the outputs empty.
 */
#include <limits.h>
#include <string.h>

#include "../../ir/shape.h"
#include "../exec.h"
#include "../profile.h"
#include "ref.h"

typedef struct run_state {
  const ncc_graph *g;
  ncc_tensor *vals; /* one per graph value; data owned for node outputs */
  bool *ready;      /* vals[i] holds the value's data */
  int *last_use;    /* index of the last node reading the value, -1 none,
                       INT_MAX for graph outputs */
  ncc_tinfo *tin, *tout;
  const ncc_tensor **kin;
  ncc_tensor *kout;
} run_state;

static void state_free(run_state *s) {
  if (s->vals)
    for (int i = 0; i < s->g->n_values; i++) ncc_tensor_free(&s->vals[i]);
  ncc_free(s->vals, 0);
  ncc_free(s->ready, 0);
  ncc_free(s->last_use, 0);
  ncc_free(s->tin, 0);
  ncc_free(s->tout, 0);
  ncc_free((void *)s->kin, 0);
  ncc_free(s->kout, 0);
}

static ncc_status state_init(run_state *s, const ncc_graph *g) {
  memset(s, 0, sizeof *s);
  s->g = g;
  int max_in = 1, max_out = 1;
  for (int k = 0; k < g->n_nodes; k++) {
    if (g->nodes[k]->n_in > max_in) max_in = g->nodes[k]->n_in;
    if (g->nodes[k]->n_out > max_out) max_out = g->nodes[k]->n_out;
  }
  size_t nv = (size_t)(g->n_values ? g->n_values : 1);
  s->vals = ncc_calloc(nv, sizeof *s->vals);
  s->ready = ncc_calloc(nv, sizeof *s->ready);
  s->last_use = ncc_calloc(nv, sizeof *s->last_use);
  s->tin = ncc_calloc((size_t)max_in, sizeof *s->tin);
  s->tout = ncc_calloc((size_t)max_out, sizeof *s->tout);
  s->kin = ncc_calloc((size_t)max_in, sizeof *s->kin);
  s->kout = ncc_calloc((size_t)max_out, sizeof *s->kout);
  if (!s->vals || !s->ready || !s->last_use || !s->tin || !s->tout ||
      !s->kin || !s->kout)
    return NCC_ERR_NOMEM;
  for (int i = 0; i < g->n_values; i++) s->last_use[i] = -1;
  for (int k = 0; k < g->n_nodes; k++) {
    const ncc_node *n = g->nodes[k];
    for (int j = 0; j < n->n_in; j++)
      if (n->in[j]) s->last_use[n->in[j]->id] = k;
  }
  for (int i = 0; i < g->n_outputs; i++)
    s->last_use[g->outputs[i]->id] = INT_MAX;
  return NCC_OK;
}

/* A tensor that views data it does not own. */
static void view(ncc_tensor *t, ncc_dtype dt, int rank, const int64_t *dims,
                 void *data) {
  memset(t, 0, sizeof *t);
  t->dtype = dt;
  t->rank = rank;
  if (rank) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->data = data;
  t->owns_data = 0;
}

/* Find where symbol `sym` first occurs before dim dd of input ii (input bi,
 * dim be). Inputs are few, so a scan is simpler than a table and allocates
 * nothing. */
static bool find_binding(const ncc_graph *g, int64_t sym, int ii, int dd,
                         int *bi, int *be) {
  for (int i = 0; i <= ii; i++) {
    const ncc_shape *sh = &g->inputs[i]->shape;
    int end = i == ii ? dd : sh->rank;
    for (int d = 0; d < end; d++)
      if (sh->d[d] == sym) {
        *bi = i;
        *be = d;
        return true;
      }
  }
  return false;
}

static ncc_status bind_input(run_state *s, const ncc_tensor *inputs, int i) {
  const ncc_graph *g = s->g;
  const ncc_value *v = g->inputs[i];
  const ncc_tensor *t = &inputs[i];
  if (t->dtype != v->dtype)
    return ncc_error(NCC_ERR_INPUT,
                     "input '%s': dtype is %s here but the graph expects %s",
                     v->name, ncc_dtype_name(t->dtype),
                     ncc_dtype_name(v->dtype));
  if (t->rank != v->shape.rank)
    return ncc_error(NCC_ERR_INPUT,
                     "input '%s': rank is %d here but the graph expects %d",
                     v->name, t->rank, v->shape.rank);
  for (int d = 0; d < t->rank; d++) {
    int64_t td = t->dims[d], vd = v->shape.d[d];
    if (td < 0)
      return ncc_error(NCC_ERR_INPUT, "input '%s': dim %d is negative (%lld)",
                       v->name, d, (long long)td);
    if (vd >= 0 && td != vd)
      return ncc_error(NCC_ERR_INPUT,
                       "input '%s': dim %d is %lld here but the graph "
                       "expects %lld",
                       v->name, d, (long long)td, (long long)vd);
    if (!ncc_dim_is_sym(vd)) continue;
    /* The same symbol bound earlier (in this or another input) must agree. */
    int bi, be;
    if (!find_binding(g, vd, i, d, &bi, &be)) continue;
    int64_t bound = inputs[bi].dims[be];
    if (bound != td)
      return ncc_error(NCC_ERR_INPUT,
                       "input '%s': dim %d (%s) is %lld here but %lld in "
                       "input '%s'",
                       v->name, d, ncc_graph_sym_name(g, ncc_dim_sym_id(vd)),
                       (long long)td, (long long)bound, g->inputs[bi]->name);
  }
  size_t bytes; /* checked: [2^62, 0] is empty, [2^62, 4] and [2^62, 2^62, 0] overflow */
  if (!ncc_dims_nbytes(ncc_dtype_size(t->dtype), t->rank, t->dims, &bytes))
    return ncc_error(NCC_ERR_INPUT, "input '%s': its size overflows", v->name);
  if (!t->data && bytes > 0)
    return ncc_error(NCC_ERR_INPUT, "input '%s' has no data", v->name);
  view(&s->vals[v->id], t->dtype, t->rank, t->dims, t->data);
  s->ready[v->id] = true;
  return NCC_OK;
}

/* Does the run-time result agree with what the graph declares? Symbolic and
 * unknown dims are free here; their consistency is inference's business. */
static ncc_status check_declared(const ncc_value *v, const ncc_tinfo *t) {
  bool ok = v->dtype == NCC_DT_UNDEF ||
            (v->dtype == t->dtype && v->shape.rank == t->shape.rank);
  for (int d = 0; ok && d < v->shape.rank; d++)
    ok = v->shape.d[d] < 0 || v->shape.d[d] == t->shape.d[d];
  if (ok) return NCC_OK;
  return ncc_error(NCC_ERR_INTERNAL,
                   "value '%s' has dtype %s rank %d at run time, which "
                   "disagrees with its declared type",
                   v->name, ncc_dtype_name(t->dtype), t->shape.rank);
}

static void free_outs(ncc_tensor *outs, int n) {
  for (int j = 0; j < n; j++) ncc_tensor_free(&outs[j]);
}

/* Infer, allocate and run one node; on success its outputs are stored. */
static ncc_status run_node(run_state *s, const ncc_node *n) {
  for (int j = 0; j < n->n_in; j++) {
    const ncc_value *v = n->in[j];
    s->kin[j] = NULL;
    memset(&s->tin[j], 0, sizeof s->tin[j]);
    s->tin[j].dtype = NCC_DT_UNDEF;
    s->tin[j].content_len = -1;
    if (!v) continue;
    if (!s->ready[v->id])
      return ncc_error(NCC_ERR_INPUT, "reads value '%s' before it is computed",
                       v->name);
    ncc_tinfo_from_tensor(&s->tin[j], &s->vals[v->id]);
    s->kin[j] = &s->vals[v->id];
  }
  memset(s->tout, 0, sizeof *s->tout * (size_t)n->n_out);
  memset(s->kout, 0, sizeof *s->kout * (size_t)n->n_out);
  ncc_status st = ncc_infer_node(NULL, n, s->tin, s->tout);
  if (st != NCC_OK) return st; /* the message already names the node */

  /* a data-dependent op's kernel sizes its own outputs */
  bool dyn = ncc_ref_allocates_outputs(n);
  for (int j = 0; j < n->n_out; j++) {
    const ncc_tinfo *t = &s->tout[j];
    if (t->dtype == NCC_DT_UNDEF) continue; /* an omitted optional output */
    if (dyn) {
      s->kout[j].dtype = n->out[j] ? t->dtype : NCC_DT_UNDEF;
      continue;
    }
    if (n->out[j] && (st = check_declared(n->out[j], t)) != NCC_OK) break;
    if (!ncc_shape_is_static(&t->shape)) {
      st = ncc_error(NCC_ERR_INTERNAL, "output %d has a symbolic shape at run "
                     "time", j);
      break;
    }
    st = ncc_tensor_alloc(&s->kout[j], t->dtype, t->shape.rank, t->shape.d);
    if (st != NCC_OK) break;
  }
  if (st == NCC_OK) st = ncc_ref_run_kernel(n, s->kin, s->kout);
  for (int j = 0; j < n->n_out && st == NCC_OK && dyn; j++) {
    if (!n->out[j]) continue;
    ncc_tinfo got;
    ncc_tinfo_from_tensor(&got, &s->kout[j]);
    st = check_declared(n->out[j], &got);
  }
  if (st != NCC_OK) {
    free_outs(s->kout, n->n_out);
    return st;
  }
  for (int j = 0; j < n->n_out; j++) {
    const ncc_value *v = n->out[j];
    if (!v || s->last_use[v->id] == -1) { /* nobody reads it */
      ncc_tensor_free(&s->kout[j]);
      continue;
    }
    ncc_tensor_free(&s->vals[v->id]);
    s->vals[v->id] = s->kout[j];
    s->ready[v->id] = true;
  }
  return NCC_OK;
}

/* Free the inputs of node k that no later node reads. */
static void release_inputs(run_state *s, const ncc_node *n, int k) {
  for (int j = 0; j < n->n_in; j++) {
    const ncc_value *v = n->in[j];
    if (v && s->last_use[v->id] == k && v->kind == NCC_VAL_NODE) {
      ncc_tensor_free(&s->vals[v->id]);
      s->ready[v->id] = false;
    }
  }
}

/* Hand the graph outputs to the caller: move what we own, copy the rest. */
static ncc_status collect_outputs(run_state *s, ncc_tensor *outputs) {
  const ncc_graph *g = s->g;
  for (int i = 0; i < g->n_outputs; i++) {
    const ncc_value *v = g->outputs[i];
    int prev = -1;
    for (int p = 0; p < i && prev < 0; p++)
      if (g->outputs[p] == v) prev = p;
    if (prev < 0 && !s->ready[v->id])
      return ncc_error(NCC_ERR_INPUT, "output '%s' is never computed", v->name);
    ncc_tensor *t = &s->vals[v->id];
    if (prev < 0 && v->kind == NCC_VAL_NODE && t->owns_data) {
      outputs[i] = *t;
      memset(t, 0, sizeof *t);
      continue;
    }
    const ncc_tensor *src = prev >= 0 ? &outputs[prev] : t;
    ncc_status st = ncc_tensor_alloc(&outputs[i], src->dtype, src->rank,
                                     src->dims);
    if (st != NCC_OK) return st;
    if (ncc_tensor_nbytes(src))
      memcpy(outputs[i].data, src->data, ncc_tensor_nbytes(src));
  }
  return NCC_OK;
}

ncc_status ncc_ref_run(const ncc_graph *g, const ncc_tensor *inputs, int n_in,
                       ncc_tensor *outputs, int n_out) {
  if (outputs && n_out > 0) memset(outputs, 0, sizeof *outputs * (size_t)n_out);
  if (!g || n_in != g->n_inputs || n_out != g->n_outputs ||
      (n_in && !inputs) || (n_out && !outputs))
    return ncc_error(NCC_ERR_USAGE,
                     "ncc_ref_run: graph '%s' takes %d inputs and %d outputs, "
                     "given %d and %d",
                     g ? g->name : "?", g ? g->n_inputs : 0,
                     g ? g->n_outputs : 0, n_in, n_out);

  run_state s;
  ncc_status st = state_init(&s, g);
  for (int i = 0; i < g->n_values && st == NCC_OK; i++) {
    const ncc_value *v = g->values[i];
    if (v->kind != NCC_VAL_CONST) continue;
    view(&s.vals[i], v->dtype, v->shape.rank, v->shape.d, v->data);
    s.ready[i] = true;
  }
  for (int i = 0; i < n_in && st == NCC_OK; i++)
    st = bind_input(&s, inputs, i);
  if (st == NCC_OK) st = ncc_run_budget_check(g, inputs, n_in);
  /* a profiled run (ncc_module_profile_enable): one host event per node */
  ncc_prof *prof = ncc_prof_current();
  for (int k = 0; k < g->n_nodes && st == NCC_OK; k++) {
    const ncc_node *n = g->nodes[k];
    int64_t t0 = prof ? ncc_prof_now_ns() : 0;
    st = run_node(&s, n);
    if (prof) ncc_prof_add(prof, k, -1, true, t0, ncc_prof_now_ns());
    if (st != NCC_OK) {
      /* Inference names the node itself; kernels and allocation do not. */
      char label[160];
      ncc_node_label(n, label, sizeof label);
      if (!strstr(ncc_error_message(), label)) ncc_error_prefix("%s", label);
      break;
    }
    release_inputs(&s, n, k);
  }
  if (st == NCC_OK) st = collect_outputs(&s, outputs);
  if (st != NCC_OK) free_outs(outputs, n_out);
  state_free(&s);
  return st;
}
