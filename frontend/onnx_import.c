/* frontend/onnx_import.c — ONNX model (bytes) -> ncc graph.
 *
 * The bytes are decoded by the protobuf-c code generated at build time from
 * the system's onnx.proto (build/gen/onnx.pb-c.h); this file walks the
 * decoded ModelProto:
 *
 *   opsets -> initializers -> graph inputs -> every node's outputs (and
 *   Constant nodes, which become constant values) -> input resolution and a
 *   topological sort -> nodes (attributes checked and upgraded to the
 *   opset-21 form) -> graph outputs -> shape inference -> the shapes the
 *   model declares (value_info, outputs) checked against the inferred ones
 *   -> verifier.
 *
 * ONNX requires nodes in topological order, but exporters do not always
 * comply, so the nodes are re-sorted (Kahn's algorithm, smallest node index
 * first, which keeps an already sorted model in its order) and a cycle is
 * reported with a node that lies on it. Every problem is one NCC_ERR_INPUT
 * or NCC_ERR_UNSUPPORTED message that starts with the file name; the
 * decoded message and the scratch arena are freed on every path.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend.h"
#include "ir/budget.h"
#include "ir/shape.h"

/* protobuf-c itself recurses once per nested message and has no depth
 * limit, so a small crafted file could overflow the stack. Nesting is
 * checked first (see nesting_ok); real models stay far below this. */
#define ONNX_MAX_NESTING 100

/* Largest model file read (protobuf's own limit is 2 GiB). */
#define ONNX_MAX_FILE ((size_t)2 << 30)

typedef struct onnx_decl {
  bool has, has_shape;
  ncc_dtype dtype;
  ncc_shape shape; /* -1: a dim not declared statically */
} onnx_decl;

typedef struct onnx_ctx {
  ncc_graph *g;
  const Onnx__GraphProto *gp;
  int64_t opset;
  ncc_arena tmp; /* scratch for the import; released at the end */
  int n_nodes;
  ncc_op *ops;  /* op of each proto node */
  int *prod;    /* value id -> proto node producing it, -1 for none */
  int n_prod;   /* values that existed when prod was filled */
  int *order;   /* non-Constant proto nodes, topologically sorted */
  int n_order;
  onnx_decl *decl; /* by value id, n_decl of them */
  int n_decl;
  int infer_value, infer_node; /* ncc_infer_graph_from's cursors */
} onnx_ctx;

static const char *node_label(const onnx_ctx *c, int idx, char *buf,
                              size_t cap) {
  const Onnx__NodeProto *np = c->gp->node[idx];
  if (np->name && *np->name)
    snprintf(buf, cap, "node '" ONNX_NAME "'", np->name);
  else
    snprintf(buf, cap, "node #%d (" ONNX_NAME ")", idx,
             onnx_str(np->op_type));
  return buf;
}

static void *tmp_array(onnx_ctx *c, size_t n, size_t elem) {
  if (n && elem > SIZE_MAX / n) return NULL;
  return ncc_arena_alloc(&c->tmp, n * elem);
}

/* ---- opsets ---- */

bool onnx_is_default_domain(const char *d) {
  return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

ncc_op onnx_node_op(const Onnx__NodeProto *np) {
  if (!onnx_is_default_domain(np->domain)) return NCC_OP_COUNT;
  const char *op_type = onnx_str(np->op_type);
  ncc_op op = ncc_op_lookup(op_type, strlen(op_type));
  /* ncc's own ops (Reorder) are not ONNX: a model cannot name them */
  if (op != NCC_OP_COUNT && (ncc_op_table[op].flags & NCC_OPF_INTERNAL)) op = NCC_OP_COUNT;
  if (op == NCC_OP_COUNT) op = onnx_composite_op(op_type);
  return op;
}

static ncc_status check_opsets(const Onnx__ModelProto *m, int64_t *opset) {
  bool seen = false;
  *opset = ONNX_OPSET_MAX;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *oi = m->opset_import[i];
    if (!onnx_is_default_domain(oi->domain)) continue; /* checked where used */
    int64_t v = oi->has_version ? oi->version : 0;
    if (seen && v != *opset)
      return ncc_error(NCC_ERR_INPUT,
                       "model imports the default ONNX opset twice (%lld and "
                       "%lld)",
                       (long long)*opset, (long long)v);
    if (v > ONNX_OPSET_MAX)
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "opset %lld of the default ONNX domain is newer than "
                       "any ncc knows (ncc reads opsets %d-%d)",
                       (long long)v, ONNX_OPSET_MIN, ONNX_OPSET_MAX);
    if (v < ONNX_OPSET_MIN)
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "opset %lld of the default ONNX domain is not supported "
                       "(ncc reads opsets %d-%d)",
                       (long long)v, ONNX_OPSET_MIN, ONNX_OPSET_MAX);
    seen = true;
    *opset = v;
  }
  if (!seen && m->graph->n_node)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "model imports no opset of the default ONNX domain "
                     "(ncc reads opsets %d-%d)",
                     ONNX_OPSET_MIN, ONNX_OPSET_MAX);
  return NCC_OK;
}

/* ---- initializers and graph inputs ---- */

static ncc_status add_initializers(onnx_ctx *c) {
  const Onnx__GraphProto *gp = c->gp;
  if (gp->n_sparse_initializer) {
    const Onnx__SparseTensorProto *sp = gp->sparse_initializer[0];
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "sparse initializer '" ONNX_NAME "' is not supported",
                     sp->values ? onnx_str(sp->values->name) : "");
  }
  int64_t total = 0; /* initializer bytes so far, against the budget */
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *t = gp->initializer[i];
    const char *name = onnx_str(t->name);
    if (!*name)
      return ncc_error(NCC_ERR_INPUT, "initializer #%zu has no name", i);
    char what[256];
    snprintf(what, sizeof what, "initializer '" ONNX_NAME "'", name);
    ncc_dtype dt;
    ncc_shape shape;
    ncc_status st = onnx_tensor_header(t, what, &dt, &shape);
    if (st) return st;
    int64_t n = ncc_shape_numel(&shape);
    /* check_size bounds one tensor by 2^36 bytes; the sum saturates */
    int64_t add = n > 0 ? n * (int64_t)ncc_dtype_size(dt) : 0;
    total = total > INT64_MAX - add ? INT64_MAX : total + add;
    /* data that does not back the declared size is a bad model (exit 2,
     * reported by onnx_tensor_to_value), not a budget matter */
    size_t typed = t->n_float_data + t->n_int32_data + t->n_int64_data +
                   t->n_double_data + t->n_uint64_data + t->n_string_data;
    bool backed = t->has_raw_data ? (uint64_t)t->raw_data.len == (uint64_t)add
                                  : (uint64_t)typed == (uint64_t)(n > 0 ? n : 0);
    if (backed && !ncc_budget_fits(total)) {
      char w[320];
      snprintf(w, sizeof w, "%s (with the initializers before it)", what);
      return ncc_budget_check(total, w);
    }
    ncc_value *v;
    st = onnx_tensor_to_value(c->g, t, name, what, &v);
    if (st) return st;
  }
  return NCC_OK;
}

/* A graph input that names an initializer only gives the initializer's
 * type (ONNX IR < 4 listed every weight as an input); it must agree. */
static ncc_status check_initializer_input(onnx_ctx *c,
                                          const Onnx__ValueInfoProto *vi,
                                          const ncc_value *v) {
  if (!vi->type) return NCC_OK;
  char what[256];
  snprintf(what, sizeof what, "graph input '" ONNX_NAME "'", v->name);
  ncc_dtype dt;
  ncc_shape s;
  bool has_shape;
  ncc_status st = onnx_value_type(c->g, vi->type, what, false, &dt, &s,
                                  &has_shape);
  if (st) return st;
  bool ok = dt == v->dtype && (!has_shape || s.rank == v->shape.rank);
  for (int i = 0; ok && has_shape && i < s.rank; i++)
    ok = s.d[i] < 0 || s.d[i] == v->shape.d[i];
  if (!ok)
    return ncc_error(NCC_ERR_INPUT,
                     "%s does not match the initializer of that name", what);
  return NCC_OK;
}

static ncc_status add_inputs(onnx_ctx *c) {
  for (size_t i = 0; i < c->gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = c->gp->input[i];
    const char *name = onnx_str(vi->name);
    if (!*name)
      return ncc_error(NCC_ERR_INPUT, "graph input #%zu has no name", i);
    ncc_value *v = ncc_graph_find_value(c->g, name);
    if (v && v->kind == NCC_VAL_CONST) {
      ncc_status st = check_initializer_input(c, vi, v);
      if (st) return st;
      continue;
    }
    if (v)
      return ncc_error(NCC_ERR_INPUT,
                       "graph input '" ONNX_NAME "' is listed twice", name);
    char what[256];
    snprintf(what, sizeof what, "graph input '" ONNX_NAME "'", name);
    ncc_dtype dt;
    ncc_shape shape;
    bool has_shape;
    ncc_status st = onnx_value_type(c->g, vi->type, what, true, &dt, &shape,
                                    &has_shape);
    if (st) return st;
    if (!has_shape)
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s has no shape (ncc needs the rank of every input)",
                       what);
    v = ncc_graph_add_value(c->g, name, NCC_VAL_INPUT, dt, &shape);
    if (!v) return NCC_ERR_NOMEM;
    if ((st = ncc_graph_add_input(c->g, v))) return st;
  }
  return NCC_OK;
}

/* ---- nodes, first pass: ops, Constant values, output values ---- */

static ncc_status declare_node(onnx_ctx *c, int idx) {
  const Onnx__NodeProto *np = c->gp->node[idx];
  char label[256];
  node_label(c, idx, label, sizeof label);
  const char *op_type = onnx_str(np->op_type);
  if (!onnx_is_default_domain(np->domain))
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: op '" ONNX_NAME "' of domain '" ONNX_NAME
                     "' is not supported",
                     label, op_type, np->domain);
  ncc_op op = onnx_node_op(np);
  if (op == NCC_OP_COUNT)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: unsupported op '" ONNX_NAME "'", label, op_type);
  c->ops[idx] = op;
  int since = onnx_op_since(op_type);
  if (c->opset < since)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: op '" ONNX_NAME "' does not exist in opset %lld "
                     "(it was added in opset %d)",
                     label, op_type, (long long)c->opset, since);
  if (op == NCC_OP_CONSTANT) {
    ncc_value *v;
    return onnx_constant_node(c->g, np, label, c->opset, &v);
  }
  for (size_t j = 0; j < np->n_output; j++) {
    const char *name = np->output[j];
    if (!*name) continue;
    if (ncc_graph_find_value(c->g, name))
      return ncc_error(NCC_ERR_INPUT,
                       "%s: output '" ONNX_NAME "' is already defined", label,
                       name);
    if (!ncc_graph_add_value(c->g, name, NCC_VAL_NODE, NCC_DT_UNDEF, NULL))
      return NCC_ERR_NOMEM;
  }
  return NCC_OK;
}

/* ---- topological sort ---- */

typedef struct {
  int *a, n;
} min_heap;

static void heap_push(min_heap *h, int x) {
  int i = h->n++;
  while (i > 0 && h->a[(i - 1) / 2] > x) {
    h->a[i] = h->a[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->a[i] = x;
}

static int heap_pop(min_heap *h) {
  int top = h->a[0], x = h->a[--h->n], i = 0;
  for (;;) {
    int l = 2 * i + 1, m = l;
    if (l >= h->n) break;
    if (l + 1 < h->n && h->a[l + 1] < h->a[l]) m = l + 1;
    if (h->a[m] >= x) break;
    h->a[i] = h->a[m];
    i = m;
  }
  h->a[i] = x;
  return top;
}

/* Producer (proto node index) of input name `s` of a node, -1 for a graph
 * input, initializer or constant. The name must be defined. */
static int producer_of(const onnx_ctx *c, const char *s) {
  const ncc_value *v = ncc_graph_find_value(c->g, s);
  return v && v->id < c->n_prod ? c->prod[v->id] : -1;
}

/* A node on a cycle, given the indegrees left after Kahn: every node not
 * emitted waits on a producer not emitted, so walking back from any such
 * node n steps ends on a cycle. */
static int node_on_cycle(const onnx_ctx *c, const int *indeg) {
  int r = 0;
  while (c->ops[r] == NCC_OP_CONSTANT || indeg[r] == 0) r++;
  for (int step = 0; step < c->n_nodes; step++) {
    const Onnx__NodeProto *np = c->gp->node[r];
    for (size_t j = 0; j < np->n_input; j++) {
      int p = *np->input[j] ? producer_of(c, np->input[j]) : -1;
      if (p >= 0 && indeg[p] > 0) {
        r = p;
        break;
      }
    }
  }
  return r;
}

static ncc_status sort_nodes(onnx_ctx *c) {
  const Onnx__GraphProto *gp = c->gp;
  int n = c->n_nodes;
  c->n_prod = c->g->n_values;
  c->prod = tmp_array(c, (size_t)c->n_prod, sizeof(int));
  int *indeg = tmp_array(c, (size_t)n, sizeof(int));
  int *off = tmp_array(c, (size_t)n + 1, sizeof(int));
  c->order = tmp_array(c, (size_t)n, sizeof(int));
  min_heap h = {tmp_array(c, (size_t)n, sizeof(int)), 0};
  if (!c->prod || !indeg || !off || !c->order || !h.a) return NCC_ERR_NOMEM;
  for (int i = 0; i < c->n_prod; i++) c->prod[i] = -1;
  for (int i = 0; i < n; i++) {
    if (c->ops[i] == NCC_OP_CONSTANT) continue;
    const Onnx__NodeProto *np = gp->node[i];
    for (size_t j = 0; j < np->n_output; j++)
      if (*np->output[j])
        c->prod[ncc_graph_find_value(c->g, np->output[j])->id] = i;
  }
  /* Resolve every input name; count edges producer -> consumer. */
  size_t n_edges = 0;
  for (int i = 0; i < n; i++) {
    const Onnx__NodeProto *np = gp->node[i];
    for (size_t j = 0; j < np->n_input; j++) {
      const char *s = np->input[j];
      if (!*s) continue;
      if (!ncc_graph_find_value(c->g, s)) {
        char label[256];
        return ncc_error(NCC_ERR_INPUT,
                         "%s: input '" ONNX_NAME
                         "' is not defined (no graph input, initializer or "
                         "node output has that name)",
                         node_label(c, i, label, sizeof label), s);
      }
      int p = producer_of(c, s);
      if (p < 0) continue;
      indeg[i]++;
      off[p + 1]++;
      n_edges++;
    }
  }
  if (n_edges > INT_MAX) return ncc_error(NCC_ERR_INPUT, "model is too large");
  for (int i = 0; i < n; i++) off[i + 1] += off[i];
  int *adj = tmp_array(c, n_edges, sizeof(int));
  int *fill = tmp_array(c, (size_t)n, sizeof(int));
  if (!adj || !fill) return NCC_ERR_NOMEM;
  memcpy(fill, off, sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) {
    const Onnx__NodeProto *np = gp->node[i];
    for (size_t j = 0; j < np->n_input; j++) {
      int p = *np->input[j] ? producer_of(c, np->input[j]) : -1;
      if (p >= 0) adj[fill[p]++] = i;
    }
  }
  /* Kahn, smallest index first. */
  int n_real = 0;
  for (int i = 0; i < n; i++) {
    if (c->ops[i] == NCC_OP_CONSTANT) continue;
    n_real++;
    if (indeg[i] == 0) heap_push(&h, i);
  }
  c->n_order = 0;
  while (h.n) {
    int i = heap_pop(&h);
    c->order[c->n_order++] = i;
    for (int e = off[i]; e < off[i + 1]; e++)
      if (--indeg[adj[e]] == 0) heap_push(&h, adj[e]);
  }
  if (c->n_order < n_real) {
    char label[256];
    return ncc_error(NCC_ERR_INPUT, "graph has a cycle through %s",
                     node_label(c, node_on_cycle(c, indeg), label,
                                sizeof label));
  }
  return NCC_OK;
}

/* ---- nodes, second pass: build them in topological order ---- */

static ncc_status arity_error(const char *label, ncc_op op, const char *what,
                              int lo, int hi, int got) {
  char range[48];
  if (hi < 0)
    snprintf(range, sizeof range, "at least %d", lo);
  else if (lo == hi)
    snprintf(range, sizeof range, "%d", lo);
  else
    snprintf(range, sizeof range, "%d to %d", lo, hi);
  return ncc_error(NCC_ERR_INPUT, "%s: %s takes %s %s%s, not %d", label,
                   ncc_op_name(op), range, what, lo == 1 && hi == 1 ? "" : "s",
                   got);
}

static ncc_status check_arity(const onnx_node_build *b) {
  const ncc_op_info *info = &ncc_op_table[b->op];
  if (b->n_in < info->min_in || (info->max_in >= 0 && b->n_in > info->max_in))
    return arity_error(b->label, b->op, "input", info->min_in, info->max_in,
                       b->n_in);
  for (int j = 0; j < info->min_in; j++)
    if (!b->in[j])
      return ncc_error(NCC_ERR_INPUT, "%s: required input %d of %s is empty",
                       b->label, j, ncc_op_name(b->op));
  if (b->n_out < info->min_out ||
      (info->max_out >= 0 && b->n_out > info->max_out))
    return arity_error(b->label, b->op, "output", info->min_out,
                       info->max_out, b->n_out);
  return NCC_OK;
}

/* Whether a node or the graph's outputs read the value named `name`. */
static bool name_used(const onnx_ctx *c, const char *name) {
  if (!*name) return false;
  for (size_t i = 0; i < c->gp->n_node; i++)
    for (size_t j = 0; j < c->gp->node[i]->n_input; j++)
      if (strcmp(c->gp->node[i]->input[j], name) == 0) return true;
  for (size_t i = 0; i < c->gp->n_output; i++)
    if (strcmp(onnx_str(c->gp->output[i]->name), name) == 0) return true;
  return false;
}

static ncc_status build_node(onnx_ctx *c, int idx) {
  const Onnx__NodeProto *np = c->gp->node[idx];
  ncc_graph *g = c->g;
  char label[256];
  onnx_node_build b = {.g = g,
                       .np = np,
                       .label = node_label(c, idx, label, sizeof label),
                       .op = c->ops[idx],
                       .opset = c->opset,
                       .infer_value = &c->infer_value,
                       .infer_node = &c->infer_node};
  if (np->n_input > INT_MAX - ONNX_EXTRA_INPUTS || np->n_output > INT_MAX ||
      np->n_attribute > INT_MAX - ONNX_EXTRA_ATTRS)
    return ncc_error(NCC_ERR_INPUT, "%s is too large", label);
  b.cap_in = (int)np->n_input + ONNX_EXTRA_INPUTS;
  b.in = tmp_array(c, (size_t)b.cap_in, sizeof(ncc_value *));
  b.attrs = ncc_arena_alloc(&g->arena, sizeof(ncc_attr) *
                                           (np->n_attribute + ONNX_EXTRA_ATTRS));
  if (!b.in || !b.attrs) return NCC_ERR_NOMEM;
  for (size_t j = 0; j < np->n_input; j++)
    b.in[j] = *np->input[j] ? ncc_graph_find_value(g, np->input[j]) : NULL;
  b.n_in = (int)np->n_input;
  while (b.n_in && !b.in[b.n_in - 1]) b.n_in--; /* omitted trailing inputs */
  for (size_t j = 0; j < np->n_output; j++)
    if (*np->output[j]) b.n_out = (int)j + 1;
  /* Exporters often name Dropout's mask though nothing reads it. (Not so
   * BatchNormalization's extra outputs: they mean training mode.) */
  if (b.op == ONNX_OP_DROPOUT && b.n_out > 1 && !name_used(c, np->output[1]))
    b.n_out = 1;
  if (b.op > NCC_OP_COUNT) return onnx_build_composite(&b);
  ncc_status st;
  if ((st = onnx_convert_attrs(&b)) || (st = onnx_upgrade_node(&b)) ||
      (st = check_arity(&b)))
    return st;
  ncc_node *n = ncc_graph_add_node(g, b.op, onnx_str(np->name), b.n_in, b.in,
                                   b.n_out);
  if (!n) return NCC_ERR_NOMEM;
  for (int j = 0; j < b.n_out; j++) {
    const char *s = np->output[j];
    /* An omitted output in the middle still needs a value to fill. */
    ncc_value *v = j == 0 && b.out0 ? b.out0
                   : *s ? ncc_graph_find_value(g, s)
                        : ncc_graph_add_value(g, NULL, NCC_VAL_NODE,
                                              NCC_DT_UNDEF, NULL);
    if (!v) return NCC_ERR_NOMEM;
    ncc_node_set_output(n, j, v);
  }
  n->attrs = b.attrs;
  n->n_attrs = b.n_attrs;
  return b.finish ? b.finish(&b, n) : NCC_OK;
}

/* ---- graph outputs and declared types ---- */

static ncc_status add_outputs(onnx_ctx *c) {
  if (!c->gp->n_output)
    return ncc_error(NCC_ERR_INPUT, "graph has no outputs");
  for (size_t i = 0; i < c->gp->n_output; i++) {
    const char *name = onnx_str(c->gp->output[i]->name);
    if (!*name)
      return ncc_error(NCC_ERR_INPUT, "graph output #%zu has no name", i);
    ncc_value *v = ncc_graph_find_value(c->g, name);
    if (!v)
      return ncc_error(NCC_ERR_INPUT,
                       "graph output '" ONNX_NAME
                       "' is not defined (no node, input or initializer "
                       "has that name)",
                       name);
    /* A value may be listed twice (onnxruntime returns it twice): each
     * listing is its own output slot holding a copy. */
    ncc_status st = ncc_graph_add_output(c->g, v);
    if (st) return st;
  }
  return NCC_OK;
}

/* Record the type a value_info or graph output declares for a node output,
 * to be checked against inference. A declaration without an element type
 * declares nothing. */
static ncc_status declare(onnx_ctx *c, const Onnx__ValueInfoProto *vi,
                          const char *kind) {
  const char *name = onnx_str(vi->name);
  const ncc_value *v = ncc_graph_find_value(c->g, name);
  const Onnx__TypeProto *tp = vi->type;
  if (!v || v->kind != NCC_VAL_NODE || v->id >= c->n_decl || !tp) return NCC_OK;
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
      (!tp->tensor_type || !tp->tensor_type->has_elem_type ||
       !tp->tensor_type->elem_type))
    return NCC_OK;
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return NCC_OK;
  char what[256];
  snprintf(what, sizeof what, "%s '" ONNX_NAME "'", kind, name);
  onnx_decl *d = &c->decl[v->id];
  ncc_status st = onnx_value_type(c->g, tp, what, false, &d->dtype, &d->shape,
                                  &d->has_shape);
  d->has = st == NCC_OK;
  return st;
}

static ncc_status collect_decls(onnx_ctx *c) {
  c->n_decl = c->g->n_values;
  c->decl = tmp_array(c, (size_t)c->n_decl, sizeof(onnx_decl));
  if (!c->decl) return NCC_ERR_NOMEM;
  ncc_status st;
  for (size_t i = 0; i < c->gp->n_value_info; i++)
    if ((st = declare(c, c->gp->value_info[i], "value_info"))) return st;
  for (size_t i = 0; i < c->gp->n_output; i++)
    if ((st = declare(c, c->gp->output[i], "graph output"))) return st;
  return NCC_OK;
}

/* Where the model declares a dtype, rank or static dim that inference
 * contradicts, the model is inconsistent. Symbolic dims are not compared:
 * their names are the exporter's choice. */
static ncc_status check_decls(const onnx_ctx *c) {
  for (int id = 0; id < c->n_decl; id++) {
    const onnx_decl *d = &c->decl[id];
    const ncc_value *v = c->g->values[id];
    if (!d->has || !v->producer) continue; /* e.g. an unread Dropout mask */
    if (d->dtype != v->dtype)
      return ncc_error(NCC_ERR_INPUT,
                       "value '" ONNX_NAME "' is declared %s but computed as %s",
                       v->name, ncc_dtype_name(d->dtype),
                       ncc_dtype_name(v->dtype));
    if (!d->has_shape) continue;
    if (d->shape.rank != v->shape.rank)
      return ncc_error(NCC_ERR_INPUT,
                       "value '" ONNX_NAME
                       "' is declared with rank %d but computed with rank %d",
                       v->name, d->shape.rank, v->shape.rank);
    for (int i = 0; i < d->shape.rank; i++)
      if (d->shape.d[i] >= 0 && v->shape.d[i] >= 0 &&
          d->shape.d[i] != v->shape.d[i])
        return ncc_error(NCC_ERR_INPUT,
                         "value '" ONNX_NAME
                         "': dim %d is declared %lld but computed as %lld",
                         v->name, i, (long long)d->shape.d[i],
                         (long long)v->shape.d[i]);
  }
  return NCC_OK;
}

/* ---- the model ---- */

static ncc_status import_graph(onnx_ctx *c) {
  const Onnx__GraphProto *gp = c->gp;
  if (gp->n_node > INT_MAX / 4)
    return ncc_error(NCC_ERR_INPUT, "model has too many nodes");
  c->n_nodes = (int)gp->n_node;
  c->ops = tmp_array(c, gp->n_node, sizeof(ncc_op));
  if (!c->ops) return NCC_ERR_NOMEM;
  ncc_status st;
  if ((st = add_initializers(c)) || (st = add_inputs(c))) return st;
  for (int i = 0; i < c->n_nodes; i++)
    if ((st = declare_node(c, i))) return st;
  if ((st = sort_nodes(c))) return st;
  for (int k = 0; k < c->n_order; k++)
    if ((st = build_node(c, c->order[k]))) return st;
  if ((st = add_outputs(c)) || (st = collect_decls(c)) || (st = ncc_infer_graph(c->g)) ||
      (st = check_decls(c)))
    return st;
  return ncc_graph_verify(c->g);
}

static ncc_status import_model(const Onnx__ModelProto *m, ncc_graph **out) {
  if (!m->graph)
    return ncc_error(NCC_ERR_INPUT, "not a valid ONNX model (no graph)");
  onnx_ctx c = {.gp = m->graph};
  ncc_status st = check_opsets(m, &c.opset);
  if (st) return st;
  const char *gname = onnx_str(m->graph->name);
  c.g = ncc_graph_new(*gname ? gname : "main");
  if (!c.g) return NCC_ERR_NOMEM;
  ncc_arena_init(&c.tmp);
  st = import_graph(&c);
  ncc_arena_release(&c.tmp);
  if (st) {
    ncc_graph_free(c.g);
    return st;
  }
  *out = c.g;
  return NCC_OK;
}

/* ---- bytes to message ---- */

/* One varint at *pos, not reading at or past `end`; false if malformed. */
static bool read_varint(const uint8_t *buf, size_t *pos, size_t end,
                        uint64_t *out) {
  *out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= end) return false;
    uint8_t byte = buf[(*pos)++];
    *out |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

/* Depth of message nesting, walked over the wire format with the generated
 * descriptors telling which length-delimited fields are messages. This reads
 * only tags and lengths (nothing is decoded; protobuf-c does that), with an
 * explicit stack. Malformed bytes end the walk: protobuf-c rejects them. */
static bool nesting_ok(const uint8_t *buf, size_t len) {
  struct {
    const ProtobufCMessageDescriptor *desc;
    size_t end;
  } stack[ONNX_MAX_NESTING + 1];
  int depth = 0;
  size_t pos = 0;
  stack[0].desc = &onnx__model_proto__descriptor;
  stack[0].end = len;
  for (;;) {
    size_t end = stack[depth].end;
    if (pos >= end) {
      if (pos > end || depth == 0) return true;
      depth--;
      continue;
    }
    uint64_t tag, n;
    if (!read_varint(buf, &pos, end, &tag)) return true;
    switch (tag & 7) {
    case 0: /* varint */
      if (!read_varint(buf, &pos, end, &n)) return true;
      break;
    case 1: pos += 8; break; /* fixed64 */
    case 5: pos += 4; break; /* fixed32 */
    case 2: {                /* length-delimited: a message, or bytes */
      if (!read_varint(buf, &pos, end, &n) || n > end - pos) return true;
      uint64_t field = tag >> 3;
      const ProtobufCFieldDescriptor *fd =
          field <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(
                                    stack[depth].desc, (unsigned)field)
                              : NULL;
      if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (depth == ONNX_MAX_NESTING) return false;
        depth++;
        stack[depth].desc = fd->descriptor;
        stack[depth].end = pos + (size_t)n;
      } else {
        pos += (size_t)n;
      }
      break;
    }
    default: return true; /* groups: protobuf-c rejects them */
    }
  }
}

/* protobuf-c allocates through ncc's hook, so the failing-allocator tests
 * reach the decoder too; `failed` tells an OOM from a parse error. */
typedef struct pb_alloc_state {
  bool failed;
} pb_alloc_state;

static void *pb_alloc(void *ud, size_t n) {
  void *p = ncc_malloc(n);
  if (!p) ((pb_alloc_state *)ud)->failed = true;
  return p;
}

static void pb_free(void *ud, void *p) {
  (void)ud;
  ncc_free(p, 0);
}

ncc_status onnx_unpack(const uint8_t *buf, size_t len,
                       Onnx__ModelProto **out) {
  *out = NULL;
  if (len == 0)
    return ncc_error(NCC_ERR_INPUT, "not a valid ONNX model (empty file)");
  if (!nesting_ok(buf, len))
    return ncc_error(NCC_ERR_INPUT,
                     "not a valid ONNX model (messages nested more than %d "
                     "deep)",
                     ONNX_MAX_NESTING);
  pb_alloc_state as = {false};
  ProtobufCAllocator al = {pb_alloc, pb_free, &as};
  Onnx__ModelProto *m = onnx__model_proto__unpack(&al, len, buf);
  if (!m) {
    if (as.failed) return NCC_ERR_NOMEM;
    return ncc_error(NCC_ERR_INPUT,
                     "not a valid ONNX model (protobuf parse failed)");
  }
  *out = m;
  return NCC_OK;
}

void onnx_model_free(Onnx__ModelProto *m) {
  pb_alloc_state as = {false}; /* pb_free does not read it */
  ProtobufCAllocator al = {pb_alloc, pb_free, &as};
  if (m) onnx__model_proto__free_unpacked(m, &al);
}

static ncc_status import_bytes(const uint8_t *buf, size_t len,
                               ncc_graph **out) {
  Onnx__ModelProto *m;
  ncc_status st = onnx_unpack(buf, len, &m);
  if (st) return st;
  st = import_model(m, out);
  onnx_model_free(m);
  return st;
}

void ncc_frontend_error_file(const char *name) {
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", ncc_error_message());
  ncc_error(NCC_ERR_INPUT, "%s: %s", name, msg);
}

ncc_status ncc_graph_import_onnx_buffer(const void *buf, size_t len,
                                        const char *name, ncc_graph **out) {
  if (!out || (!buf && len))
    return ncc_error(NCC_ERR_USAGE,
                     "ncc_graph_import_onnx_buffer: NULL argument");
  *out = NULL;
  ncc_status st = import_bytes(buf, len, out);
  if (st) ncc_frontend_error_file(name ? name : "<buffer>");
  return st;
}

/* ---- files ---- */

/* The whole file in one ncc_malloc'd buffer. Regular files are sized with
 * fstat; anything else (a pipe) grows the buffer as it reads. */
ncc_status onnx_read_file(const char *path, uint8_t **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return ncc_error(NCC_ERR_INPUT, "cannot open: %s", strerror(errno));
  struct stat sb;
  size_t cap = 1 << 16, n = 0;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0)
    cap = (uint64_t)sb.st_size < ONNX_MAX_FILE ? (size_t)sb.st_size + 1
                                                : ONNX_MAX_FILE + 1;
  uint8_t *b = ncc_malloc(cap);
  ncc_status st = b ? NCC_OK : NCC_ERR_NOMEM;
  while (!st) {
    n += fread(b + n, 1, cap - n, f);
    if (ferror(f)) {
      st = ncc_error(NCC_ERR_INPUT, "cannot read: %s", strerror(errno));
    } else if (n > ONNX_MAX_FILE) {
      st = ncc_error(NCC_ERR_UNSUPPORTED,
                     "model file is larger than 2 GiB (protobuf's limit)");
    } else if (n < cap) {
      break; /* end of file */
    } else {
      uint8_t *nb = ncc_realloc(b, cap, cap * 2);
      if (!nb) st = NCC_ERR_NOMEM;
      else b = nb, cap *= 2;
    }
  }
  fclose(f);
  if (st) {
    ncc_free(b, cap);
    return st;
  }
  *buf = b;
  *len = n;
  return NCC_OK;
}

ncc_status ncc_graph_import_onnx(const char *path, ncc_graph **out) {
  if (!path || !out)
    return ncc_error(NCC_ERR_USAGE, "ncc_graph_import_onnx: NULL argument");
  *out = NULL;
  uint8_t *buf;
  size_t len;
  ncc_status st = onnx_read_file(path, &buf, &len);
  if (st) {
    ncc_frontend_error_file(path);
    return st;
  }
  st = ncc_graph_import_onnx_buffer(buf, len, path, out);
  ncc_free(buf, 0);
  return st;
}
