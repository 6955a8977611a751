/* frontend/onnx_check.c — ncc_model_check: every unsupported op, element
 * type and opset of a model, counted, in one report (`ncc check`).
 *
 * The importer stops at the first problem, which makes porting a model a
 * loop of one fix per run. This walks the decoded model once and collects
 * instead, with the importer's own lookups (onnx_node_op, onnx_dtype and
 * the opset bounds of frontend.h), so the two cannot disagree about what is
 * supported. Subgraphs (If branches, Loop bodies) are walked as well. Only
 * what can be judged without building the graph is listed;
 * a model with none of it is then imported in full, so anything else the
 * importer refuses is still reported as the importer's one error.
 */
#include <string.h>
#include <strings.h>

#include "frontend.h"

/* The public report, with the arena that holds its strings and array. */
typedef struct check_impl {
  ncc_check_report pub; /* first: ncc_check_report_free casts back */
  ncc_arena arena;
  int cap;
  const char **op_types; /* distinct op types seen, for n_op_types */
  int n_types, cap_types;
} check_impl;

const char *ncc_check_kind_name(ncc_check_kind k) {
  switch (k) {
  case NCC_CHECK_OP: return "op";
  case NCC_CHECK_DTYPE: return "dtype";
  case NCC_CHECK_OPSET: return "opset";
  }
  return "?";
}

/* Grow an arena array of `elem`-sized items to hold one more. */
static bool grow(ncc_arena *a, void **arr, int n, int *cap, size_t elem) {
  if (n < *cap) return true;
  int nc = *cap ? *cap * 2 : 8;
  void *na = ncc_arena_alloc(a, (size_t)nc * elem);
  if (!na) return false;
  if (n) memcpy(na, *arr, (size_t)n * elem);
  *arr = na;
  *cap = nc;
  return true;
}

/* Count one occurrence of (kind, name) first seen at (first, first_op). */
static ncc_status note(check_impl *c, ncc_check_kind kind, const char *name,
                       const char *first, const char *first_op, bool is_node) {
  ncc_check_report *r = &c->pub;
  for (int i = 0; i < r->n_problems; i++)
    if (r->problems[i].kind == kind && strcmp(r->problems[i].name, name) == 0) {
      r->problems[i].count++;
      return NCC_OK;
    }
  if (!grow(&c->arena, (void **)&r->problems, r->n_problems, &c->cap,
            sizeof *r->problems))
    return NCC_ERR_NOMEM;
  ncc_check_problem *p = &r->problems[r->n_problems];
  p->kind = kind;
  p->count = 1;
  p->first_is_node = is_node;
  p->name = ncc_arena_strdup(&c->arena, name);
  p->first = ncc_arena_strdup(&c->arena, first);
  p->first_op = ncc_arena_strdup(&c->arena, first_op);
  if (!p->name || !p->first || !p->first_op) return NCC_ERR_NOMEM;
  r->n_problems++;
  return NCC_OK;
}

/* An element type code in use: a problem when ONNX defines it and ncc
 * lacks it. Codes ONNX does not define are the importer's bad input. */
static ncc_status check_dtype(check_impl *c, int64_t code, const char *first,
                              const char *first_op, bool is_node) {
  const char *onnx = onnx_type_name(code);
  ncc_dtype dt;
  if (!onnx || onnx_dtype(code, "", &dt) == NCC_OK) return NCC_OK;
  char lower[32];
  size_t i = 0;
  for (; onnx[i] && i + 1 < sizeof lower; i++)
    lower[i] = (char)(onnx[i] >= 'A' && onnx[i] <= 'Z' ? onnx[i] + 32 : onnx[i]);
  lower[i] = 0;
  return note(c, NCC_CHECK_DTYPE, lower, first, first_op, is_node);
}

static ncc_status check_values(check_impl *c, Onnx__ValueInfoProto *const *vi,
                               size_t n, const char *what) {
  for (size_t i = 0; i < n; i++) {
    const Onnx__TypeProto *tp = vi[i]->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !tp->tensor_type || !tp->tensor_type->has_elem_type)
      continue;
    ncc_status st = check_dtype(c, tp->tensor_type->elem_type,
                                onnx_str(vi[i]->name), what, false);
    if (st) return st;
  }
  return NCC_OK;
}

static ncc_status check_opsets(check_impl *c, const Onnx__ModelProto *m) {
  bool seen = false;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *oi = m->opset_import[i];
    if (!onnx_is_default_domain(oi->domain)) continue; /* judged per node */
    seen = true;
    int64_t v = oi->has_version ? oi->version : 0;
    if (v >= ONNX_OPSET_MIN && v <= ONNX_OPSET_MAX) continue;
    char name[48];
    snprintf(name, sizeof name, "ai.onnx opset %lld", (long long)v);
    ncc_status st = note(c, NCC_CHECK_OPSET, name, "", "", false);
    if (st) return st;
  }
  if (!seen && m->graph->n_node) return note(c, NCC_CHECK_OPSET, "no ai.onnx opset", "", "", false);
  return NCC_OK;
}

/* Remember a node's op type among the distinct ones (for the summary). */
static ncc_status add_op_type(check_impl *c, const char *t) {
  for (int i = 0; i < c->n_types; i++)
    if (strcmp(c->op_types[i], t) == 0) return NCC_OK;
  if (!grow(&c->arena, (void **)&c->op_types, c->n_types, &c->cap_types,
            sizeof *c->op_types))
    return NCC_ERR_NOMEM;
  c->op_types[c->n_types++] = t; /* the model's string, alive while used */
  return NCC_OK;
}

static ncc_status check_subgraph(check_impl *c, const Onnx__GraphProto *gp);

static ncc_status check_node(check_impl *c, const Onnx__NodeProto *np, int idx) {
  const char *op_type = onnx_str(np->op_type);
  char first[32];
  const char *name = onnx_str(np->name);
  if (!*name) {
    snprintf(first, sizeof first, "#%d", idx);
    name = first;
  }
  ncc_status st = add_op_type(c, op_type);
  if (st) return st;
  if (onnx_node_op(np) == NCC_OP_COUNT) {
    if (onnx_is_default_domain(np->domain)) return note(c, NCC_CHECK_OP, op_type, name, op_type, true);
    size_t len = strlen(np->domain) + strlen(op_type) + 2;
    char *full = ncc_arena_alloc(&c->arena, len);
    if (!full) return NCC_ERR_NOMEM;
    snprintf(full, len, "%s:%s", np->domain, op_type);
    return note(c, NCC_CHECK_OP, full, name, op_type, true);
  }
  /* element types a node names: Cast's target, tensor attributes
   * (Constant's value, ConstantOfShape's fill) */
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    if (a->t && a->t->has_data_type)
      st = check_dtype(c, a->t->data_type, name, op_type, true);
    else if (a->has_i && strcmp(op_type, "Cast") == 0 &&
             strcmp(onnx_str(a->name), "to") == 0)
      st = check_dtype(c, a->i, name, op_type, true);
    if (st) return st;
  }
  /* If branches, Loop bodies (and any GRAPHS) are looked into;
   * the recursion follows the message nesting onnx_unpack bounded */
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    if (a->g && (st = check_subgraph(c, a->g))) return st;
    for (size_t k = 0; k < a->n_graphs; k++)
      if ((st = check_subgraph(c, a->graphs[k]))) return st;
  }
  return NCC_OK;
}

/* A subgraph's nodes, initializers and declared values, reported as the
 * model's own (the node labels are the subgraph's). */
static ncc_status check_subgraph(check_impl *c, const Onnx__GraphProto *gp) {
  ncc_status st;
  if ((st = check_values(c, gp->input, gp->n_input, "input"))) return st;
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *t = gp->initializer[i];
    if (t->has_data_type &&
        (st = check_dtype(c, t->data_type, onnx_str(t->name), "initializer", false)))
      return st;
  }
  for (size_t i = 0; i < gp->n_node && i < (size_t)INT32_MAX; i++)
    if ((st = check_node(c, gp->node[i], (int)i))) return st;
  if ((st = check_values(c, gp->value_info, gp->n_value_info, "value_info")) ||
      (st = check_values(c, gp->output, gp->n_output, "output")))
    return st;
  return NCC_OK;
}

static ncc_status check_model(check_impl *c, const Onnx__ModelProto *m) {
  if (!m->graph) return ncc_error(NCC_ERR_INPUT, "not a valid ONNX model (no graph)");
  const Onnx__GraphProto *gp = m->graph;
  ncc_status st;
  if ((st = check_opsets(c, m))) return st;
  if (gp->n_node > (size_t)INT32_MAX) return ncc_error(NCC_ERR_INPUT, "model has too many nodes");
  /* the main graph is checked as its subgraphs are */
  if ((st = check_subgraph(c, gp))) return st;
  c->pub.n_nodes = (int)gp->n_node;
  c->pub.n_op_types = c->n_types;
  return NCC_OK;
}

/* Text IR or a model with nothing to list: the whole load decides. */
static ncc_status load_counts(check_impl *c, const char *path, const void *buf,
                              size_t len) {
  ncc_graph *g;
  ncc_status st = buf ? ncc_graph_import_onnx_buffer(buf, len, path, &g)
                      : ncc_graph_load(path, &g);
  if (st) return st;
  c->pub.n_nodes = g->n_nodes;
  c->n_types = 0;
  for (int i = 0; i < g->n_nodes && !st; i++)
    st = add_op_type(c, ncc_op_name(g->nodes[i]->op));
  c->pub.n_op_types = c->n_types;
  ncc_graph_free(g);
  return st;
}

static ncc_status check_onnx(check_impl *c, const char *path) {
  uint8_t *buf;
  size_t len;
  ncc_status st = onnx_read_file(path, &buf, &len);
  if (st) {
    ncc_frontend_error_file(path);
    return st;
  }
  Onnx__ModelProto *m = NULL;
  st = onnx_unpack(buf, len, &m);
  if (!st) st = check_model(c, m);
  if (st) ncc_frontend_error_file(path);
  onnx_model_free(m);
  /* nothing to list: the importer has the last word (its own messages) */
  if (!st && c->pub.n_problems == 0) {
    int nodes = c->pub.n_nodes, types = c->pub.n_op_types;
    st = load_counts(c, path, buf, len);
    c->pub.n_nodes = nodes; /* the model's own count, not ncc's nodes */
    c->pub.n_op_types = types;
  }
  ncc_free(buf, 0);
  return st;
}

ncc_status ncc_model_check(const char *path, ncc_check_report **out) {
  if (!path || !out) return ncc_error(NCC_ERR_USAGE, "ncc_model_check: NULL argument");
  *out = NULL;
  check_impl *c = ncc_malloc(sizeof *c);
  if (!c) return NCC_ERR_NOMEM;
  memset(c, 0, sizeof *c);
  ncc_arena_init(&c->arena);
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  bool onnx = dot && (!slash || dot > slash + 1) && strcasecmp(dot, ".onnx") == 0;
  ncc_status st = onnx ? check_onnx(c, path) : load_counts(c, path, NULL, 0);
  if (st) {
    ncc_check_report_free(&c->pub);
    return st;
  }
  *out = &c->pub;
  return NCC_OK;
}

void ncc_check_report_free(ncc_check_report *r) {
  if (!r) return;
  check_impl *c = (check_impl *)r;
  ncc_arena_release(&c->arena);
  ncc_free(c, sizeof *c);
}
