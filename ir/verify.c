/* ir/verify.c — the structural verifier of a graph.
 *
 * Run after parsing, importing and (in tests, or with --verify-each) after
 * every pass, so a pass that breaks the graph is caught where it happened.
 * Two stages: structure first (tables, producers, topological order — which
 * also rules out cycles —, arity, names, types, attributes: well formed,
 * and each one its op's, of its kind, by ir/attrs.def), then, on a
 * well-formed graph, shape inference is re-run node by node and each stored
 * output type must be what inference would have stored. The first problem
 * found is reported, naming the node (ncc_node_label) or the value.
 */
#include <stdio.h>
#include <string.h>

#include "attrs.h"
#include "ir.h"
#include "shape.h"

static const char *vname(const ncc_value *v) {
  return v && v->name ? v->name : "?";
}

static bool in_table(const ncc_graph *g, const ncc_value *v) {
  return v && v->id >= 0 && v->id < g->n_values && g->values[v->id] == v;
}

static bool node_in_graph(const ncc_graph *g, const ncc_node *n) {
  return n && n->id >= 0 && n->id < g->n_nodes && g->nodes[n->id] == n;
}

/* A valid dtype, rank and dims (static >= 0 or a known symbol); otherwise
 * the reason in `why`. */
static bool type_ok(const ncc_graph *g, const ncc_value *v, char *why,
                    size_t cap) {
  if (v->dtype <= NCC_DT_UNDEF || v->dtype >= NCC_DT_COUNT) {
    snprintf(why, cap, "has no valid dtype");
    return false;
  }
  if (v->shape.rank < 0 || v->shape.rank > NCC_MAX_RANK) {
    snprintf(why, cap, "has rank %d (at most %d)", v->shape.rank, NCC_MAX_RANK);
    return false;
  }
  for (int i = 0; i < v->shape.rank; i++) {
    int64_t d = v->shape.d[i];
    if (d >= 0) continue;
    if (!ncc_dim_is_sym(d) || ncc_dim_sym_id(d) >= g->n_syms) {
      snprintf(why, cap, "has an invalid dim %d (%lld)", i, (long long)d);
      return false;
    }
  }
  if (v->layout.kind == NCC_LAYOUT_NCHWC && v->layout.block <= 0) {
    snprintf(why, cap, "has a blocked layout without a block size");
    return false;
  }
  /* A blocked value keeps its logical NCHW shape; the layout says it is
   * stored [N][C/k][H][W][k], so C must be a static multiple of k. */
  if (v->layout.kind == NCC_LAYOUT_NCHWC &&
      (v->shape.rank != 4 || v->shape.d[1] < 0 || v->shape.d[1] % v->layout.block != 0)) {
    snprintf(why, cap, "has layout #nchw%dc but is not NCHW with a static C divisible by %d",
             v->layout.block, v->layout.block);
    return false;
  }
  if (v->layout.kind != NCC_LAYOUT_PLAIN && v->layout.kind != NCC_LAYOUT_NCHWC) {
    snprintf(why, cap, "has an unknown layout");
    return false;
  }
  return true;
}

/* Inputs, constants and the value table itself. */
static ncc_status check_values(const ncc_graph *g) {
  char why[128];
  for (int i = 0; i < g->n_values; i++) {
    const ncc_value *v = g->values[i];
    if (!v || v->id != i || !v->name)
      return ncc_error(NCC_ERR_INPUT, "value table entry %d is inconsistent", i);
    if (ncc_graph_find_value(g, v->name) != v)
      return ncc_error(NCC_ERR_INPUT,
                       "value name '%s' is not unique (or not in the name table)",
                       v->name);
    if (v->kind == NCC_VAL_NODE) continue; /* checked with its producer */
    /* layouts change inside the graph only (Reorder at its edges) */
    if (v->layout.kind != NCC_LAYOUT_PLAIN)
      return ncc_error(NCC_ERR_INPUT, "%s '%s' has a blocked layout (only node outputs may)",
                       v->kind == NCC_VAL_CONST ? "constant" : "input", v->name);
    if (v->kind != NCC_VAL_INPUT && v->kind != NCC_VAL_CONST)
      return ncc_error(NCC_ERR_INPUT, "value '%s' has an invalid kind", v->name);
    if (v->producer)
      return ncc_error(NCC_ERR_INPUT, "%s '%s' has a producer node",
                       v->kind == NCC_VAL_CONST ? "constant" : "input", v->name);
    if (v->kind == NCC_VAL_CONST) {
      if (!type_ok(g, v, why, sizeof why))
        return ncc_error(NCC_ERR_INPUT, "constant '%s' %s", v->name, why);
      if (!ncc_shape_is_static(&v->shape))
        return ncc_error(NCC_ERR_INPUT, "constant '%s' has no static shape",
                         v->name);
      if (!v->data)
        return ncc_error(NCC_ERR_INPUT, "constant '%s' has no data", v->name);
    }
  }
  for (int i = 0; i < g->n_inputs; i++) {
    const ncc_value *v = g->inputs[i];
    if (!in_table(g, v) || v->kind != NCC_VAL_INPUT)
      return ncc_error(NCC_ERR_INPUT,
                       "graph input %d '%s' is not an input value of the graph",
                       i, vname(v));
    if (!type_ok(g, v, why, sizeof why))
      return ncc_error(NCC_ERR_INPUT, "graph input '%s' %s", v->name, why);
  }
  return NCC_OK;
}

static ncc_status check_attrs(const ncc_node *n) {
  for (int i = 0; i < n->n_attrs; i++) {
    const ncc_attr *a = &n->attrs[i];
    if (!a->name || !a->name[0]) return ncc_node_error(n, NCC_ERR_INPUT, "attribute %d has no name", i);
    for (int j = 0; j < i; j++)
      if (strcmp(n->attrs[j].name, a->name) == 0)
        return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' is set twice", a->name);
    bool ok = true;
    switch (a->kind) {
    case NCC_ATTR_INT:
    case NCC_ATTR_FLOAT: break;
    case NCC_ATTR_INTS: ok = a->n >= 0 && (a->n == 0 || a->ints); break;
    case NCC_ATTR_FLOATS: ok = a->n >= 0 && (a->n == 0 || a->floats); break;
    case NCC_ATTR_STRING: ok = a->s != NULL; break;
    case NCC_ATTR_TENSOR:
      ok = a->t.dtype > NCC_DT_UNDEF && a->t.dtype < NCC_DT_COUNT &&
           a->t.shape.rank >= 0 && a->t.shape.rank <= NCC_MAX_RANK &&
           ncc_shape_numel(&a->t.shape) >= 0 && a->t.data;
      break;
    case NCC_ATTR_GRAPH: { /* the body is a graph of its own */
      if (!a->graph) break;
      ncc_status st = ncc_graph_verify(a->graph);
      if (st) {
        char lb[200];
        ncc_error_prefix("node %s, subgraph '%s'", ncc_node_label(n, lb, sizeof lb),
                         a->name);
        return st;
      }
      break;
    }
    default: ok = false;
    }
    if (a->kind == NCC_ATTR_GRAPH && !a->graph) ok = false;
    if (!ok) return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' is malformed", a->name);
  }
  return ncc_attrs_check_schema(n);
}

/* "2", "2 to 3" or "at least 1" */
static const char *range_text(int lo, int hi, char *buf, size_t cap) {
  if (hi < 0) snprintf(buf, cap, "at least %d", lo);
  else if (lo == hi) snprintf(buf, cap, "%d", lo);
  else snprintf(buf, cap, "%d to %d", lo, hi);
  return buf;
}

static ncc_status check_arity(const ncc_node *n) {
  const ncc_op_info *oi = &ncc_op_table[n->op];
  char r[48];
  if (n->n_in < oi->min_in || (oi->max_in >= 0 && n->n_in > oi->max_in))
    return ncc_node_error(n, NCC_ERR_INPUT, "has %d inputs, %s takes %s", n->n_in, oi->name,
                     range_text(oi->min_in, oi->max_in, r, sizeof r));
  if (n->n_out < oi->min_out || (oi->max_out >= 0 && n->n_out > oi->max_out))
    return ncc_node_error(n, NCC_ERR_INPUT, "has %d outputs, %s has %s", n->n_out, oi->name,
                     range_text(oi->min_out, oi->max_out, r, sizeof r));
  for (int i = 0; i < n->n_in; i++)
    if (!n->in[i] && ncc_op_input_required(n->op, i))
      return ncc_node_error(n, NCC_ERR_INPUT, "required input %d is missing", i);
  for (int j = 0; j < n->n_out; j++)
    if (!n->out[j] && (j < oi->min_out || oi->max_out < 0))
      return ncc_node_error(n, NCC_ERR_INPUT, "required output %d is missing", j);
  return NCC_OK;
}

/* Why input value v of node k is not defined at that point. */
static ncc_status undefined_use(const ncc_graph *g, const ncc_node *n, int i,
                                const ncc_value *v) {
  if (!in_table(g, v))
    return ncc_node_error(n, NCC_ERR_INPUT, "input %d is not a value of this graph", i);
  if (v->kind == NCC_VAL_INPUT)
    return ncc_node_error(n, NCC_ERR_INPUT, "input %d '%s' is an input value missing from the graph inputs",
                     i, v->name);
  const ncc_node *p = v->producer;
  if (p == n)
    return ncc_node_error(n, NCC_ERR_INPUT, "input %d '%s' is its own output (a cycle)", i, v->name);
  if (node_in_graph(g, p) && p->id > n->id)
    return ncc_node_error(n, NCC_ERR_INPUT,
                     "input %d '%s' is used before it is produced (nodes out "
                     "of topological order, or a cycle)",
                     i, v->name);
  return ncc_node_error(n, NCC_ERR_INPUT, "input %d '%s' is not defined (its producer is not in the graph)",
                   i, v->name);
}

static ncc_status check_node(const ncc_graph *g, const ncc_node *n,
                             bool *def) {
  char why[128];
  ncc_status st;
  if ((st = check_arity(n)) || (st = check_attrs(n))) return st;
  if (n->n_in && !n->in) return ncc_node_error(n, NCC_ERR_INPUT, "has no input array");
  if (n->n_out && !n->out) return ncc_node_error(n, NCC_ERR_INPUT, "has no output array");
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (v && (!in_table(g, v) || !def[v->id])) return undefined_use(g, n, i, v);
  }
  for (int j = 0; j < n->n_out; j++) {
    const ncc_value *v = n->out[j];
    if (!v) continue;
    if (!in_table(g, v))
      return ncc_node_error(n, NCC_ERR_INPUT, "output %d is not a value of this graph", j);
    if (def[v->id] || v->kind != NCC_VAL_NODE)
      return ncc_node_error(n, NCC_ERR_INPUT, "output %d '%s' is already defined elsewhere", j, v->name);
    if (v->producer != n || v->producer_idx != j)
      return ncc_node_error(n, NCC_ERR_INPUT, "output %d '%s' does not record this node as its producer",
                       j, v->name);
    if (!type_ok(g, v, why, sizeof why))
      return ncc_node_error(n, NCC_ERR_INPUT, "output %d '%s' %s", j, v->name, why);
    def[v->id] = true;
  }
  return NCC_OK;
}

static ncc_status check_structure(const ncc_graph *g) {
  ncc_status st = check_values(g);
  if (st) return st;
  bool *def = ncc_calloc((size_t)g->n_values + 1, sizeof *def);
  if (!def) return NCC_ERR_NOMEM;
  for (int i = 0; i < g->n_values; i++)
    def[i] = g->values[i]->kind == NCC_VAL_CONST;
  for (int i = 0; i < g->n_inputs && !st; i++) {
    if (def[g->inputs[i]->id])
      st = ncc_error(NCC_ERR_INPUT, "graph input '%s' is listed twice",
                     g->inputs[i]->name);
    def[g->inputs[i]->id] = true;
  }
  for (int k = 0; k < g->n_nodes && !st; k++) {
    const ncc_node *n = g->nodes[k];
    if (!n || n->id != k)
      st = ncc_error(NCC_ERR_INPUT, "node table entry %d is inconsistent", k);
    else if ((unsigned)n->op >= NCC_OP_COUNT)
      st = ncc_error(NCC_ERR_INPUT, "node #%d has an invalid op", k);
    else
      st = check_node(g, n, def);
  }
  for (int i = 0; i < g->n_outputs && !st; i++) {
    const ncc_value *v = g->outputs[i];
    if (!in_table(g, v) || !def[v->id])
      st = ncc_error(NCC_ERR_INPUT, "graph output %d '%s' is not defined", i,
                     vname(v));
    else if (v->layout.kind != NCC_LAYOUT_PLAIN)
      st = ncc_error(NCC_ERR_INPUT, "graph output '%s' has a blocked layout (Reorder it)",
                     v->name);
  }
  ncc_free(def, 0);
  return st;
}

/* ---- inference check ---- */

/* Symbols inference mints ("unk__K") stand for "unknown" (as in shape.c). */
static bool sym_is_fresh(const ncc_graph *g, int64_t d) {
  return ncc_dim_is_sym(d) &&
         strncmp(ncc_graph_sym_name(g, ncc_dim_sym_id(d)), "unk__", 5) == 0;
}

/* Would inference keep `stored` given that it computes `inf`? A static
 * stored dim may refine a symbolic one, a stored symbol may name a fresh
 * one; anything else must be equal. */
static bool dim_agrees(const ncc_graph *g, int64_t stored, int64_t inf) {
  if (stored == inf) return true;
  if (stored >= 0) return inf < 0;
  return sym_is_fresh(g, inf);
}

static ncc_status compare_outputs(const ncc_graph *g, const ncc_node *n,
                                  const ncc_tinfo *outs) {
  for (int j = 0; j < n->n_out; j++) {
    const ncc_value *v = n->out[j];
    if (!v) continue;
    const ncc_tinfo *t = &outs[j];
    bool ok = v->dtype == t->dtype && v->shape.rank == t->shape.rank;
    for (int i = 0; ok && i < t->shape.rank; i++)
      ok = dim_agrees(g, v->shape.d[i], t->shape.d[i]);
    if (!ok) {
      char a[256], b[256];
      return ncc_node_error(n, NCC_ERR_INPUT, "output %d '%s' is %s but inference gives %s", j,
                       v->name, ncc_type_str(g, v->dtype, &v->shape, NULL, a, sizeof a),
                       ncc_type_str(g, t->dtype, &t->shape, NULL, b, sizeof b));
    }
  }
  return NCC_OK;
}

/* Inference may mint fresh symbols; they are dropped again afterwards (the
 * graph is not const in memory, and nothing else is changed). */
static ncc_status check_inference(const ncc_graph *cg) {
  ncc_graph *g = (ncc_graph *)cg;
  int max_in = 1, max_out = 1;
  for (int k = 0; k < g->n_nodes; k++) {
    if (g->nodes[k]->n_in > max_in) max_in = g->nodes[k]->n_in;
    if (g->nodes[k]->n_out > max_out) max_out = g->nodes[k]->n_out;
  }
  ncc_tinfo *ins = ncc_calloc((size_t)max_in, sizeof *ins);
  ncc_tinfo *outs = ins ? ncc_calloc((size_t)max_out, sizeof *outs) : NULL;
  ncc_status st = outs ? NCC_OK : NCC_ERR_NOMEM;
  int n_syms = g->n_syms;
  for (int k = 0; k < g->n_nodes && !st; k++) {
    const ncc_node *n = g->nodes[k];
    for (int i = 0; i < n->n_in; i++) {
      if (n->in[i]) {
        ncc_tinfo_from_value(&ins[i], n->in[i]);
      } else {
        memset(&ins[i], 0, sizeof ins[i]);
        ins[i].content_len = -1;
      }
    }
    memset(outs, 0, sizeof *outs * (size_t)n->n_out);
    st = ncc_infer_node(g, n, ins, outs);
    if (!st) st = compare_outputs(g, n, outs);
  }
  g->n_syms = n_syms;
  ncc_free(ins, 0);
  ncc_free(outs, 0);
  return st;
}

ncc_status ncc_graph_verify(const ncc_graph *g) {
  if (!g) return ncc_error(NCC_ERR_USAGE, "ncc_graph_verify: no graph");
  ncc_status st = check_structure(g);
  return st ? st : check_inference(g);
}
