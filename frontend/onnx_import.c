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
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
  /* subgraphs: caps[i]: the outer names node i's subgraphs read
   * (its captures, docs/IR.md "Subgraphs"); parent: the enclosing graph's
   * context when this one is a subgraph. */
  const char ***caps;
  int *n_caps;
  struct onnx_ctx *parent;
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

bool onnx_is_contrib_domain(const char *d) { return d && strcmp(d, "com.microsoft") == 0; }

ncc_op onnx_node_op(const Onnx__NodeProto *np) {
  bool contrib = onnx_is_contrib_domain(np->domain);
  if (!contrib && !onnx_is_default_domain(np->domain)) return NCC_OP_COUNT;
  const char *op_type = onnx_str(np->op_type);
  ncc_op op = ncc_op_lookup(op_type, strlen(op_type));
  if (op == NCC_OP_COUNT) return op;
  unsigned f = ncc_op_table[op].flags;
  /* ncc's own ops (Reorder) are not ONNX: a model cannot name them; ONNX
   * Runtime's contrib ops exist in their domain only */
  if ((f & NCC_OPF_INTERNAL) || contrib != ((f & NCC_OPF_CONTRIB) != 0)) op = NCC_OP_COUNT;
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
    /* the model graph's initializers are read once, so their buffers can
     * join the graph without a copy (the decoded model is this import's
     * own: import_bytes); a subgraph's copy, to stay safe wherever a
     * subgraph may be imported again */
    st = c->parent ? onnx_tensor_to_value(c->g, t, name, what, &v)
                   : onnx_tensor_take_value(c->g, (Onnx__TensorProto *)t,
                                            name, what, &v);
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
  ncc_op op = onnx_node_op(np);
  if (op == NCC_OP_COUNT && !onnx_is_default_domain(np->domain))
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: op '" ONNX_NAME "' of domain '" ONNX_NAME
                     "' is not supported",
                     label, op_type, np->domain);
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

/* The names node i depends on: its inputs, then the outer values
 * its subgraphs read, so that the sort orders it after their producers
 * and a subgraph reading the node's own output is a cycle. */
static size_t n_deps(const onnx_ctx *c, int i) {
  return c->gp->node[i]->n_input + (size_t)(c->n_caps ? c->n_caps[i] : 0);
}
static const char *dep(const onnx_ctx *c, int i, size_t j) {
  const Onnx__NodeProto *np = c->gp->node[i];
  return j < np->n_input ? np->input[j] : c->caps[i][j - np->n_input];
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
    for (size_t j = 0; j < n_deps(c, r); j++) {
      int p = *dep(c, r, j) ? producer_of(c, dep(c, r, j)) : -1;
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
    for (size_t j = 0; j < n_deps(c, i); j++) {
      const char *s = dep(c, i, j);
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
    for (size_t j = 0; j < n_deps(c, i); j++) {
      int p = *dep(c, i, j) ? producer_of(c, dep(c, i, j)) : -1;
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

/* ---- subgraphs ----
 *
 * An If branch or a Loop body is imported as a graph of its own with the
 * same code as the model's graph. ONNX lets a subgraph read any value of
 * the enclosing scopes by name; those names (its "free" names) become
 * explicit: graph inputs of the subgraph after its declared ones, and the
 * matching outer values trailing inputs of the If/Loop node. So every
 * pass of the enclosing graph sees the dependency as an ordinary input,
 * and a subgraph needs nothing from outside itself. */

/* A set of names (open addressing over the scratch arena). */
typedef struct name_set {
  const char **slot;
  size_t cap, n;
} name_set;

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static bool set_has(const name_set *ns, const char *s) {
  if (!ns->cap) return false;
  for (size_t h = name_hash(s) & (ns->cap - 1); ns->slot[h]; h = (h + 1) & (ns->cap - 1))
    if (strcmp(ns->slot[h], s) == 0) return true;
  return false;
}

/* Add s (the proto's string, which outlives the import); *added tells
 * whether it was new. False on OOM. */
static bool set_add(onnx_ctx *c, name_set *ns, const char *s, bool *added) {
  if (added) *added = false;
  if (set_has(ns, s)) return true;
  if (2 * (ns->n + 1) > ns->cap) {
    size_t nc = ns->cap ? ns->cap * 2 : 16;
    const char **t = tmp_array(c, nc, sizeof *t);
    if (!t) return false;
    for (size_t i = 0; i < ns->cap; i++)
      if (ns->slot[i]) {
        size_t h = name_hash(ns->slot[i]) & (nc - 1);
        while (t[h]) h = (h + 1) & (nc - 1);
        t[h] = ns->slot[i];
      }
    ns->slot = t;
    ns->cap = nc;
  }
  size_t h = name_hash(s) & (ns->cap - 1);
  while (ns->slot[h]) h = (h + 1) & (ns->cap - 1);
  ns->slot[h] = s;
  ns->n++;
  if (added) *added = true;
  return true;
}

/* A growing list of names, in first-use order. */
typedef struct name_list {
  const char **a;
  int n, cap;
  name_set seen;
} name_list;

static bool list_add(onnx_ctx *c, name_list *l, const char *s) {
  bool added;
  if (!set_add(c, &l->seen, s, &added)) return false;
  if (!added) return true;
  if (l->n == l->cap) {
    int nc = l->cap ? l->cap * 2 : 8;
    const char **t = tmp_array(c, (size_t)nc, sizeof *t);
    if (!t) return false;
    if (l->n) memcpy(t, l->a, sizeof *t * (size_t)l->n);
    l->a = t;
    l->cap = nc;
  }
  l->a[l->n++] = s;
  return true;
}

static bool graph_free_names(onnx_ctx *c, const Onnx__GraphProto *gp, name_list *out);

/* The free names of the GRAPH attributes of np, added to out (those that
 * `defined` does not hold). Recursion follows the nesting of the message,
 * which onnx_unpack bounded. */
static bool node_free_names(onnx_ctx *c, const Onnx__NodeProto *np,
                            const name_set *defined, name_list *out) {
  for (size_t k = 0; k < np->n_attribute; k++) {
    const Onnx__AttributeProto *ap = np->attribute[k];
    if (!ap->g) continue;
    name_list inner = {0};
    if (!graph_free_names(c, ap->g, &inner)) return false;
    for (int j = 0; j < inner.n; j++)
      if ((!defined || !set_has(defined, inner.a[j])) && !list_add(c, out, inner.a[j]))
        return false;
  }
  return true;
}

/* The names graph gp reads without defining them (inputs, initializers,
 * node outputs), its nested subgraphs' included. */
static bool graph_free_names(onnx_ctx *c, const Onnx__GraphProto *gp, name_list *out) {
  name_set def = {0};
  for (size_t i = 0; i < gp->n_input; i++)
    if (!set_add(c, &def, onnx_str(gp->input[i]->name), NULL)) return false;
  for (size_t i = 0; i < gp->n_initializer; i++)
    if (!set_add(c, &def, onnx_str(gp->initializer[i]->name), NULL)) return false;
  for (size_t i = 0; i < gp->n_node; i++)
    for (size_t j = 0; j < gp->node[i]->n_output; j++)
      if (*gp->node[i]->output[j] && !set_add(c, &def, gp->node[i]->output[j], NULL))
        return false;
  for (size_t i = 0; i < gp->n_node; i++) {
    const Onnx__NodeProto *np = gp->node[i];
    for (size_t j = 0; j < np->n_input; j++)
      if (*np->input[j] && !set_has(&def, np->input[j]) && !list_add(c, out, np->input[j]))
        return false;
    if (!node_free_names(c, np, &def, out)) return false;
  }
  for (size_t i = 0; i < gp->n_output; i++) {
    const char *s = onnx_str(gp->output[i]->name);
    if (*s && !set_has(&def, s) && !list_add(c, out, s)) return false;
  }
  return true;
}

/* caps[i] for every node with a subgraph. */
static ncc_status find_captures(onnx_ctx *c) {
  c->caps = tmp_array(c, (size_t)c->n_nodes + 1, sizeof *c->caps);
  c->n_caps = tmp_array(c, (size_t)c->n_nodes + 1, sizeof *c->n_caps);
  if (!c->caps || !c->n_caps) return NCC_ERR_NOMEM;
  for (int i = 0; i < c->n_nodes; i++) {
    name_list l = {0};
    if (!node_free_names(c, c->gp->node[i], NULL, &l)) return NCC_ERR_NOMEM;
    c->caps[i] = l.a;
    c->n_caps[i] = l.n;
  }
  return NCC_OK;
}

static ncc_status import_nodes(onnx_ctx *c);

/* The type of declared body input i: what the model declares, completed by
 * the hint (the Loop's own inputs: iteration i64, condition bool, the
 * carried values' dtypes and ranks; Scan's states and scan-input slices)
 * with fresh dims, which may take other sizes at every iteration. */
static ncc_status body_input(onnx_ctx *c, const Onnx__ValueInfoProto *vi,
                             ncc_dtype hint_dt, int hint_rank, ncc_value **out) {
  char what[256];
  const char *name = onnx_str(vi->name);
  snprintf(what, sizeof what, "subgraph input '" ONNX_NAME "'", name);
  if (!*name) return ncc_error(NCC_ERR_INPUT, "%s has no name", what);
  if (ncc_graph_find_value(c->g, name))
    return ncc_error(NCC_ERR_INPUT, "%s is defined twice", what);
  ncc_dtype dt = hint_dt;
  ncc_shape shape = {0};
  bool has_shape = false;
  if (vi->type && vi->type->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET) {
    ncc_status st = onnx_value_type(c->g, vi->type, what, true, &dt, &shape, &has_shape);
    if (st) return st;
  }
  if (!has_shape) {
    shape.rank = hint_rank < 0 ? 0 : hint_rank;
    for (int d = 0; d < shape.rank; d++) {
      int id = ncc_graph_fresh_sym(c->g);
      if (id < 0) return NCC_ERR_NOMEM;
      shape.d[d] = ncc_dim_sym(id);
    }
  }
  ncc_value *v = ncc_graph_add_value(c->g, name, NCC_VAL_INPUT, dt, &shape);
  if (!v) return NCC_ERR_NOMEM;
  *out = v;
  return ncc_graph_add_input(c->g, v);
}

/* An outer value the subgraph reads, as an input of the subgraph of the
 * same name and type (its symbols named alike in the subgraph). */
static ncc_status capture_input(onnx_ctx *c, const ncc_graph *outer, const ncc_value *ov) {
  ncc_shape s = ov->shape;
  for (int d = 0; d < s.rank; d++)
    if (ncc_dim_is_sym(s.d[d])) {
      const char *sym = outer->syms[ncc_dim_sym_id(s.d[d])];
      int id = ncc_graph_sym(c->g, sym, strlen(sym));
      if (id < 0) return NCC_ERR_NOMEM;
      s.d[d] = ncc_dim_sym(id);
    }
  ncc_value *v = ncc_graph_add_value(c->g, ov->name, NCC_VAL_INPUT, ov->dtype, &s);
  if (!v) return NCC_ERR_NOMEM;
  return ncc_graph_add_input(c->g, v);
}

/* Import the subgraph of attribute `an` of node n (proto node idx):
 * declared inputs (typed by the model, or by the node for a Loop), then
 * one input per capture. */
static ncc_status import_subgraph(onnx_ctx *c, int idx, const ncc_node *n, int n_decl,
                                  const char *an, const Onnx__GraphProto *sgp,
                                  ncc_graph **out) {
  *out = NULL;
  const char *gname = onnx_str(sgp->name);
  onnx_ctx sc = {.gp = sgp, .opset = c->opset, .parent = c};
  sc.g = ncc_graph_new(*gname ? gname : an);
  if (!sc.g) return NCC_ERR_NOMEM;
  ncc_arena_init(&sc.tmp);
  ncc_status st = NCC_OK;
  if (sgp->n_node > INT_MAX / 4) st = ncc_error(NCC_ERR_INPUT, "subgraph has too many nodes");
  sc.n_nodes = (int)sgp->n_node;
  sc.ops = st ? NULL : tmp_array(&sc, sgp->n_node + 1, sizeof(ncc_op));
  if (!st && !sc.ops) st = NCC_ERR_NOMEM;
  if (!st) st = add_initializers(&sc);
  /* declared inputs: If branches take none; a Loop body the iteration
   * number, the condition and one per carried value */
  int want = n->op == NCC_OP_IF ? 0 : n_decl;
  if (!st && (int)sgp->n_input != want)
    st = ncc_error(NCC_ERR_INPUT, "%s takes %zu inputs, %s gives it %d", an, sgp->n_input,
                   ncc_op_name(n->op), want);
  int n_states = n_decl - (int)ncc_attr_int(n, "num_scan_inputs", 0); /* Scan */
  for (int i = 0; !st && i < want; i++) {
    ncc_value *v;
    const ncc_value *h = n->op == NCC_OP_LOOP ? (i >= 2 ? n->in[i] : NULL) : n->in[i];
    ncc_dtype dt = h ? h->dtype : i == 0 ? NCC_DT_I64 : NCC_DT_BOOL;
    int rank = h ? h->shape.rank - (n->op == NCC_OP_SCAN && i >= n_states) : 0;
    st = body_input(&sc, sgp->input[i], dt, rank, &v);
  }
  for (int j = 0; !st && j < c->n_caps[idx]; j++)
    st = capture_input(&sc, c->g, n->in[n_decl + j]);
  if (!st) st = import_nodes(&sc);
  ncc_arena_release(&sc.tmp);
  if (st) {
    ncc_graph_free(sc.g);
    char label[256];
    ncc_error_prefix("%s, subgraph '%s'", node_label(c, idx, label, sizeof label), an);
    return st;
  }
  *out = sc.g;
  return NCC_OK;
}

/* Node inputs for an If or Loop: the declared ones (Loop: M and cond kept
 * as slots even when omitted) and then the captured outer values. */
static ncc_status control_inputs(onnx_ctx *c, int idx, onnx_node_build *b, int *n_decl) {
  int nd = b->n_in;
  if (b->op == NCC_OP_LOOP && nd < 2) {
    while (b->n_in < 2) b->in[b->n_in++] = NULL; /* capacity n_in + 2 */
    nd = 2;
  }
  *n_decl = nd;
  int nc = c->n_caps[idx];
  if (!nc) return NCC_OK;
  ncc_value **in = tmp_array(c, (size_t)nd + (size_t)nc, sizeof *in);
  if (!in) return NCC_ERR_NOMEM;
  memcpy(in, b->in, sizeof *in * (size_t)nd);
  for (int j = 0; j < nc; j++) in[nd + j] = ncc_graph_find_value(c->g, c->caps[idx][j]);
  b->in = in;
  b->n_in = nd + nc;
  return NCC_OK;
}

/* After the node is built: its subgraphs, and Loop's capture count. */
/* If's branch `name` is never taken: its condition's content is known. */
static bool untaken_branch(const ncc_node *n, const char *name) {
  const ncc_value *cond = n->op == NCC_OP_IF && n->n_in > 0 ? n->in[0] : NULL;
  if (!cond || !cond->content || cond->content_len != 1) return false;
  bool then = cond->content[0] != 0;
  return strcmp(name, then ? "else_branch" : "then_branch") == 0;
}

static ncc_status attach_subgraphs(onnx_ctx *c, int idx, ncc_node *n, int n_decl) {
  const Onnx__NodeProto *np = c->gp->node[idx];
  for (size_t k = 0; k < np->n_attribute; k++) {
    const Onnx__AttributeProto *ap = np->attribute[k];
    if (!ap->has_type || ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH) continue;
    if (!ap->g) {
      char label[256];
      return ncc_error(NCC_ERR_INPUT, "%s: attribute '" ONNX_NAME "' has no graph",
                       node_label(c, idx, label, sizeof label), onnx_str(ap->name));
    }
    const char *an = ncc_arena_strdup(&c->g->arena, onnx_str(ap->name));
    if (!an) return NCC_ERR_NOMEM;
    ncc_graph *sub;
    ncc_status st = import_subgraph(c, idx, n, n_decl, an, ap->g, &sub);
    if (st && untaken_branch(n, an)) {
      /* a branch the constant condition never takes may be written for
       * other input shapes (e.g. a 3-D path in a graph fed 2-D data) */
      char msg[512];
      snprintf(msg, sizeof msg, "%s", ncc_error_message());
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: its condition is constant and '%s' is never taken, but ncc "
                       "imports both branches and this one does not type-check: %s",
                       ncc_op_name(n->op), an, msg);
    }
    if (st || (st = ncc_node_set_attr_graph(c->g, n, an, sub))) return st;
  }
  if ((n->op == NCC_OP_LOOP || n->op == NCC_OP_SCAN) && c->n_caps[idx])
    return ncc_node_set_attr_int(c->g, n, "captures", c->n_caps[idx]);
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
    if (!b->in[j] && ncc_op_input_required(b->op, j))
      return ncc_error(NCC_ERR_INPUT, "%s: required input %d of %s is empty",
                       b->label, j, ncc_op_name(b->op));
  if (b->n_out < info->min_out ||
      (info->max_out >= 0 && b->n_out > info->max_out))
    return arity_error(b->label, b->op, "output", info->min_out,
                       info->max_out, b->n_out);
  return NCC_OK;
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
  ncc_status st;
  if ((st = onnx_convert_attrs(&b)) || (st = onnx_upgrade_node(&b)) ||
      (st = check_arity(&b)))
    return st;
  int n_decl = b.n_in; /* captures follow the declared inputs */
  /* A subgraph's inputs take the types of the outer values it reads, so
   * the nodes built so far are inferred first (once per If/Loop). */
  if ((b.op == NCC_OP_IF || b.op == NCC_OP_LOOP || b.op == NCC_OP_SCAN) &&
      ((st = ncc_infer_graph(g)) || (st = control_inputs(c, idx, &b, &n_decl))))
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
  if (b.finish) {
    ncc_status st = b.finish(&b, n);
    if (st) return st;
  }
  if (b.op == NCC_OP_IF || b.op == NCC_OP_LOOP || b.op == NCC_OP_SCAN)
    return attach_subgraphs(c, idx, n, n_decl);
  return NCC_OK;
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

/* Nodes to verifier, for the model's graph and subgraphs alike (their
 * inputs are in place). */
static ncc_status import_nodes(onnx_ctx *c) {
  ncc_status st;
  for (int i = 0; i < c->n_nodes; i++)
    if ((st = declare_node(c, i))) return st;
  if ((st = find_captures(c)) || (st = sort_nodes(c))) return st;
  for (int k = 0; k < c->n_order; k++)
    if ((st = build_node(c, c->order[k]))) return st;
  if ((st = add_outputs(c)) || (st = collect_decls(c)) || (st = ncc_infer_graph(c->g)) ||
      (st = check_decls(c)))
    return st;
  return ncc_graph_verify(c->g);
}

static ncc_status import_graph(onnx_ctx *c) {
  const Onnx__GraphProto *gp = c->gp;
  if (gp->n_node > INT_MAX / 4)
    return ncc_error(NCC_ERR_INPUT, "model has too many nodes");
  c->n_nodes = (int)gp->n_node;
  c->ops = tmp_array(c, gp->n_node, sizeof(ncc_op));
  if (!c->ops) return NCC_ERR_NOMEM;
  ncc_status st;
  if ((st = add_initializers(c)) || (st = add_inputs(c))) return st;
  return import_nodes(c);
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
  else ncc_prefault(p, n); /* a weight's raw_data, copied in next */
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

/* A regular file mapped read-only (NULL when it cannot be: not a regular
 * file, empty, too big, or mmap failed; the caller then reads it). The
 * decoder copies what it keeps, so the mapping only replaces read()'s
 * copy into fresh memory: about half of ResNet-50's import time. */
static const uint8_t *map_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat sb;
  void *p = MAP_FAILED;
  if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
      (uint64_t)sb.st_size <= ONNX_MAX_FILE) {
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE; /* one call faults the whole file in */
#endif
    p = mmap(NULL, (size_t)sb.st_size, PROT_READ, flags, fd, 0);
  }
  close(fd);
  if (p == MAP_FAILED) return NULL;
  *len = (size_t)sb.st_size;
  return p;
}

ncc_status ncc_graph_import_onnx(const char *path, ncc_graph **out) {
  if (!path || !out)
    return ncc_error(NCC_ERR_USAGE, "ncc_graph_import_onnx: NULL argument");
  *out = NULL;
  size_t len;
  const uint8_t *map = map_file(path, &len);
  if (map) {
    ncc_status st = ncc_graph_import_onnx_buffer(map, len, path, out);
    munmap((void *)map, len);
    return st;
  }
  uint8_t *buf;
  ncc_status st = onnx_read_file(path, &buf, &len);
  if (st) {
    ncc_frontend_error_file(path);
    return st;
  }
  st = ncc_graph_import_onnx_buffer(buf, len, path, out);
  ncc_free(buf, 0);
  return st;
}
