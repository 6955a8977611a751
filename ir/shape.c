/* ir/shape.c — dtype, shape and small-content inference: the entry points.
 *
 * ncc_infer_node is the single authority on what a node produces: the
 * importer and the text parser run it over whole graphs (ncc_infer_graph),
 * passes re-run it, and the reference interpreter calls it with concrete
 * tensors before running each kernel. It is also the one place that checks
 * arity, attributes and dtype support, so kernels may trust their inputs.
 *
 * This file checks arity and inputs and calls the op's rule, named by the
 * last column of its ir/ops.def row; the rules are in ir/shape_<family>.c,
 * the symbolic-dimension engine they share in ir/shape_dims.c.
 *
 * Dims are static (>= 0) or symbolic (ncc_dim_is_sym). Symbols flow through
 * ops that do not change them (N stays N through Conv's batch dim, through
 * Shape -> Gather -> Concat -> Reshape), and a dim that cannot be known
 * without data becomes a fresh symbol ("unk__K") when a graph is given.
 *
 * "Content" is the value of a small integer tensor (at most NCC_CONTENT_MAX
 * elements, static shape), whose elements may themselves be symbolic dims.
 * It carries the shape arithmetic PyTorch exports (Shape, Gather, Unsqueeze,
 * Concat, Equal/Where, ConstantOfShape ...) so that Reshape, Expand, Slice
 * and friends get static or symbolic output shapes at compile time.
 */
#include <stdio.h>
#include <string.h>

#include "shape_rule.h"

/* The rule of every op, from the last column of its ops.def row. */
typedef ncc_status (*rule_fn)(ictx *c);
static const rule_fn rules[NCC_OP_COUNT] = {
#define NCC_OP(id, nm, mi, ma, mo, mao, fl, rule) [NCC_OP_##id] = ncc_rule_##rule,
#include "ops.def"
#undef NCC_OP
};

static ncc_status check_arity(ictx *c, const char *what, int have, int lo,
                              int hi) {
  if (have >= lo && (hi < 0 || have <= hi)) return NCC_OK;
  if (hi < 0)
    return ncc_si_fail(c, NCC_ERR_INPUT, "has %d %s, expected at least %d", have, what,
                lo);
  if (lo == hi)
    return ncc_si_fail(c, NCC_ERR_INPUT, "has %d %s, expected %d", have, what, lo);
  return ncc_si_fail(c, NCC_ERR_INPUT, "has %d %s, expected %d to %d", have, what, lo,
              hi);
}

/* Inputs are well-formed: required ones present, valid dtypes, ranks and
 * dims, content consistent with the shape. */
static ncc_status check_inputs(ictx *c) {
  for (int i = 0; i < c->n->n_in; i++) {
    const ncc_tinfo *t = &c->in[i];
    bool required = ncc_op_input_required(c->n->op, i);
    if (t->dtype == NCC_DT_UNDEF) {
      if (required) return ncc_si_fail(c, NCC_ERR_INPUT, "input %d is missing", i);
      continue;
    }
    if ((unsigned)t->dtype >= NCC_DT_COUNT)
      return ncc_si_fail(c, NCC_ERR_INPUT, "input %d has an invalid dtype", i);
    if (t->shape.rank < 0 || t->shape.rank > NCC_MAX_RANK)
      return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "input %d has rank %d (at most %d)",
                  i, t->shape.rank, NCC_MAX_RANK);
    for (int k = 0; k < t->shape.rank; k++)
      if (!is_static(t->shape.d[k]) && !ncc_dim_is_sym(t->shape.d[k]))
        return ncc_si_fail(c, NCC_ERR_INPUT, "input %d has invalid dim %lld", i,
                    (long long)t->shape.d[k]);
    if (t->content_len >= 0 &&
        t->content_len != ncc_si_content_slots(t->dtype, &t->shape))
      return ncc_si_fail(c, NCC_ERR_INTERNAL,
                  "input %d has content inconsistent with its shape", i);
  }
  return NCC_OK;
}

ncc_status ncc_infer_node(ncc_graph *g, const ncc_node *n, const ncc_tinfo *in,
                          ncc_tinfo *out) {
  if ((unsigned)n->op >= NCC_OP_COUNT)
    return ncc_error(NCC_ERR_INPUT, "node #%d has an invalid op", n->id);
  ictx c = {.g = g, .n = n, .in = in, .out = out};
  const ncc_op_info *info = &ncc_op_table[n->op];
  ncc_status st;
  if ((st = check_arity(&c, "inputs", n->n_in, info->min_in, info->max_in)) ||
      (st = check_arity(&c, "outputs", n->n_out, info->min_out, info->max_out)))
    return st;
  for (int k = 0; k < n->n_out; k++) {
    memset(&out[k], 0, sizeof out[k]);
    out[k].content_len = -1;
  }
  if ((st = check_inputs(&c))) return st;
  return rules[n->op](&c);
}

/* Declared dim vs inferred dim: the more specific one, or false when both
 * are static and differ. Between two symbols the inferred one wins unless it
 * is fresh (so re-running inference keeps the names it gave before). */
static bool merge_declared(const ncc_graph *g, int64_t decl, int64_t inf,
                           int64_t *r) {
  if (!is_static(decl) && !ncc_dim_is_sym(decl)) decl = inf; /* unknown */
  if (is_static(decl) && is_static(inf)) {
    *r = inf;
    return decl == inf;
  }
  if (is_static(decl)) *r = decl;
  else if (is_static(inf)) *r = inf;
  else *r = ncc_si_sym_is_fresh(g, inf) ? decl : inf;
  return true;
}

static ncc_status store_content(ncc_graph *g, ncc_value *v, const int64_t *c,
                                int len) {
  if (len < 0) {
    v->content = NULL;
    v->content_len = -1;
    return NCC_OK;
  }
  if (v->content && v->content_len == len &&
      memcmp(v->content, c, sizeof(int64_t) * (size_t)len) == 0)
    return NCC_OK;
  int64_t *p = ncc_arena_memdup(&g->arena, c, sizeof(int64_t) * (size_t)len);
  if (!p) return ncc_si_nomem();
  v->content = p;
  v->content_len = len;
  return NCC_OK;
}

/* Store an inferred output on its value, checking it against what the
 * value declares (ONNX value_info, text IR annotations). */
static ncc_status store_output(ncc_graph *g, const ncc_node *n, ncc_value *v,
                               const ncc_tinfo *t) {
  char label[192], a[256], b[256];
  if (v->dtype != NCC_DT_UNDEF && v->dtype != t->dtype)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: output '%s' is declared %s but computes %s",
                     ncc_node_label(n, label, sizeof label), v->name,
                     ncc_dtype_name(v->dtype), ncc_dtype_name(t->dtype));
  ncc_shape s = t->shape;
  if (v->shape.rank > 0) {
    bool ok = v->shape.rank == s.rank;
    for (int i = 0; ok && i < s.rank; i++)
      ok = merge_declared(g, v->shape.d[i], t->shape.d[i], &s.d[i]);
    if (!ok)
      return ncc_error(NCC_ERR_INPUT,
                       "%s: output '%s' is declared with shape %s but has %s",
                       ncc_node_label(n, label, sizeof label), v->name,
                       ncc_si_fmt_shape(g, &v->shape, a, sizeof a),
                       ncc_si_fmt_shape(g, &t->shape, b, sizeof b));
  }
  v->dtype = t->dtype;
  v->shape = s;
  int len = t->content_len;
  if (len >= 0 && len != ncc_si_content_slots(t->dtype, &s)) len = -1;
  return store_content(g, v, t->content, len);
}

/* A constant's content, derived from its data. */
static ncc_status const_content(ncc_graph *g, ncc_value *v) {
  ncc_tinfo t;
  memset(&t, 0, sizeof t);
  t.dtype = v->dtype;
  t.shape = v->shape;
  t.data = v->data;
  t.content_len = -1;
  if (v->shape.rank >= 0 && v->shape.rank <= NCC_MAX_RANK)
    ncc_si_content_from_data(&t);
  return store_content(g, v, t.content, t.content_len);
}

/* The tinfos of a node's inputs; a value without a type is one used before
 * the node that computes it. */
static ncc_status node_inputs(const ncc_node *n, ncc_tinfo *ins) {
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (v && v->dtype == NCC_DT_UNDEF) {
      char label[192];
      if ((unsigned)n->op < NCC_OP_COUNT)
        ncc_node_label(n, label, sizeof label);
      else snprintf(label, sizeof label, "node #%d", n->id);
      return ncc_error(NCC_ERR_INPUT,
                       "%s: input %d ('%s') has no type (used before it is "
                       "computed?)",
                       label, i, v->name);
    }
    if (v) {
      ncc_tinfo_from_value(&ins[i], v);
    } else {
      memset(&ins[i], 0, sizeof ins[i]);
      ins[i].content_len = -1;
    }
  }
  return NCC_OK;
}

ncc_status ncc_infer_graph(ncc_graph *g) {
  ncc_status st = NCC_OK;
  for (int i = 0; i < g->n_values; i++)
    if (g->values[i]->kind == NCC_VAL_CONST &&
        (st = const_content(g, g->values[i])))
      return st;
  int cap_in = 0, cap_out = 0;
  ncc_tinfo *ins = NULL, *outs = NULL;
  for (int k = 0; k < g->n_nodes && !st; k++) {
    const ncc_node *n = g->nodes[k];
    if (n->n_in > cap_in || n->n_out > cap_out) {
      ncc_free(ins, 0);
      ncc_free(outs, 0);
      cap_in = n->n_in > cap_in ? n->n_in : cap_in;
      cap_out = n->n_out > cap_out ? n->n_out : cap_out;
      ins = ncc_calloc((size_t)cap_in + 1, sizeof *ins);
      outs = ncc_calloc((size_t)cap_out + 1, sizeof *outs);
      if (!ins || !outs) {
        st = NCC_ERR_NOMEM;
        break;
      }
    }
    st = node_inputs(n, ins);
    if (!st) st = ncc_infer_node(g, n, ins, outs);
    for (int i = 0; i < n->n_out && !st; i++)
      if (n->out[i]) st = store_output(g, n, n->out[i], &outs[i]);
  }
  ncc_free(ins, 0);
  ncc_free(outs, 0);
  return st;
}

/* ---- inference of a graph still being built ---- */

ncc_status ncc_infer_graph_from(ncc_graph *g, int *next_value,
                                int *next_node) {
  ncc_status st = NCC_OK;
  for (; *next_value < g->n_values; ++*next_value)
    if (g->values[*next_value]->kind == NCC_VAL_CONST &&
        (st = const_content(g, g->values[*next_value])))
      return st;
  ncc_tinfo *ins = NULL, *outs = NULL;
  for (; *next_node < g->n_nodes && !st; ++*next_node) {
    const ncc_node *n = g->nodes[*next_node];
    ins = ncc_calloc((size_t)n->n_in + 1, sizeof *ins);
    outs = ncc_calloc((size_t)n->n_out + 1, sizeof *outs);
    if (!ins || !outs) st = NCC_ERR_NOMEM;
    if (!st) st = node_inputs(n, ins);
    if (!st) st = ncc_infer_node(g, n, ins, outs);
    for (int i = 0; i < n->n_out && !st; i++)
      if (n->out[i]) st = store_output(g, n, n->out[i], &outs[i]);
    ncc_free(ins, 0);
    ncc_free(outs, 0);
  }
  return st;
}
