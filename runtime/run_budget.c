/* runtime/run_budget.c — a run's memory against the budget, before it
 * allocates anything (ncc_run_budget_check, runtime/exec.h).
 *
 * Once the inputs bind the symbolic dims, the declared shapes give every
 * value's size; the peak of the live bytes over the node order (each value
 * from the node writing it to the last reading it, graph outputs to the
 * end) is what an executor without in-place reuse needs. Executors that
 * fuse need less, so this bound errs on the safe side; values whose size
 * depends on data (an unbound symbol) count as 0 here and are still
 * checked one by one when allocated. Without it a symbolic-batch model run
 * with a huge batch would allocate until the machine gives out. */
#include <stdio.h>

#include "../ir/budget.h"
#include "exec.h"

/* Bytes of v with the bound symbols: -1 when a dim is unknown (its size
 * depends on data), -2 when the size does not fit the address space. */
static double bound_bytes(const ncc_value *v, const int64_t *syms) {
  int64_t dims[NCC_MAX_RANK];
  for (int d = 0; d < v->shape.rank; d++) {
    int64_t x = v->shape.d[d];
    if (ncc_dim_is_sym(x)) x = syms[ncc_dim_sym_id(x)];
    if (x < 0) return -1;
    dims[d] = x;
  }
  size_t bytes;
  if (!ncc_dims_nbytes(ncc_dtype_size(v->dtype), v->shape.rank, dims, &bytes)) return -2;
  return (double)bytes;
}

/* "value 'r' (f32[N,4], N = 3" into what: the value and the bound symbols. */
static size_t describe(const ncc_graph *g, const ncc_value *v, const int64_t *syms,
                       char *what, size_t cap) {
  char type[160];
  ncc_type_str(g, v->dtype, &v->shape, NULL, type, sizeof type);
  size_t o = (size_t)snprintf(what, cap, "value '%s' (%s", v->name ? v->name : "", type);
  for (int s = 0; s < g->n_syms && o < cap; s++)
    if (syms[s] >= 0)
      o += (size_t)snprintf(what + o, cap - o, ", %s = %lld", ncc_graph_sym_name(g, s),
                            (long long)syms[s]);
  return o;
}

ncc_status ncc_run_budget_check(const ncc_graph *g, const ncc_tensor *in, int n_in) {
  int64_t *syms = ncc_malloc(sizeof(int64_t) * ((size_t)g->n_syms + 1));
  int *last = ncc_malloc(sizeof(int) * ((size_t)g->n_values + 1));
  int *def = ncc_malloc(sizeof(int) * ((size_t)g->n_values + 1));
  double *delta = ncc_calloc((size_t)g->n_nodes + 2, sizeof(double));
  ncc_status st = NCC_OK;
  if (!syms || !last || !def || !delta) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  for (int s = 0; s < g->n_syms; s++) syms[s] = -1;
  for (int i = 0; i < n_in && i < g->n_inputs; i++)
    for (int d = 0; d < g->inputs[i]->shape.rank && d < in[i].rank; d++)
      if (ncc_dim_is_sym(g->inputs[i]->shape.d[d]))
        syms[ncc_dim_sym_id(g->inputs[i]->shape.d[d])] = in[i].dims[d];
  for (int v = 0; v < g->n_values; v++) def[v] = last[v] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    for (int k = 0; k < n->n_out; k++)
      if (n->out[k]) def[n->out[k]->id] = i;
    for (int k = 0; k < n->n_in; k++)
      if (n->in[k]) last[n->in[k]->id] = i;
  }
  for (int o = 0; o < g->n_outputs; o++) last[g->outputs[o]->id] = g->n_nodes;
  const ncc_value *big = NULL;
  double big_bytes = 0;
  for (int v = 0; v < g->n_values; v++) {
    const ncc_value *val = g->values[v];
    if (def[v] < 0 || val->kind == NCC_VAL_CONST) continue;
    double b = bound_bytes(val, syms);
    if (b == -2) {
      /* an impossible shape is a bad input, not a memory shortage */
      char what[400];
      size_t o = describe(g, val, syms, what, sizeof what);
      if (o < sizeof what) snprintf(what + o, sizeof what - o, ")");
      st = ncc_error(NCC_ERR_INPUT, "%s: its size overflows the address space", what);
      goto done;
    }
    if (b <= 0) continue;
    int end = last[v] > def[v] ? last[v] : def[v];
    delta[def[v]] += b;
    delta[end + 1] -= b;
    if (b > big_bytes) big_bytes = b, big = val;
  }
  double live = 0, peak = 0;
  for (int s = 0; s <= g->n_nodes; s++) {
    live += delta[s];
    if (live > peak) peak = live;
  }
  if (peak >= 9.2e18 || !ncc_budget_fits((int64_t)peak)) {
    char what[400];
    size_t o = describe(g, big, syms, what, sizeof what);
    if (o < sizeof what)
      snprintf(what + o, sizeof what - o, ") and the rest of the run");
    st = ncc_budget_check(peak >= 9.2e18 ? -1 : (int64_t)peak, what);
  }
done:
  ncc_free(syms, 0);
  ncc_free(last, 0);
  ncc_free(def, 0);
  ncc_free(delta, 0);
  return st;
}
