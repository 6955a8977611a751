/* ir/graph.c — building and querying graphs: values, nodes, attributes,
 * symbols, and the name table. All storage lives in the graph's arena;
 * growable arrays are re-allocated in the arena (the old copy is simply
 * abandoned, which costs little next to the weights). */
#include <stdio.h>
#include <stdarg.h>
#include <string.h>

#include "ir.h"

ncc_graph *ncc_graph_new(const char *name) {
  ncc_arena a;
  ncc_arena_init(&a);
  ncc_graph *g = ncc_arena_alloc(&a, sizeof *g);
  if (!g) {
    ncc_arena_release(&a);
    return NULL;
  }
  g->arena = a;
  g->name = ncc_arena_strdup(&g->arena, name ? name : "main");
  if (!g->name) {
    ncc_graph_free(g);
    return NULL;
  }
  return g;
}

void ncc_graph_free(ncc_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_subs; i++) ncc_graph_free(g->subs[i]);
  ncc_arena a = g->arena; /* g itself lives in the arena */
  ncc_arena_release(&a);
}

/* Grow an arena array of pointers/ints to hold at least `need` items. */
static bool grow(ncc_graph *g, void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *na = ncc_arena_alloc(&g->arena, (size_t)nc * elem);
  if (!na) return false;
  if (*arr) memcpy(na, *arr, (size_t)*cap * elem);
  *arr = na;
  *cap = nc;
  return true;
}

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static bool name_tab_insert(ncc_graph *g, int idx);

static bool name_tab_rehash(ncc_graph *g) {
  int nc = g->name_cap ? g->name_cap * 2 : 64;
  int *t = ncc_arena_alloc(&g->arena, sizeof(int) * (size_t)nc);
  if (!t) return false;
  for (int i = 0; i < nc; i++) t[i] = -1;
  g->name_tab = t;
  g->name_cap = nc;
  for (int i = 0; i < g->n_values; i++)
    if (!name_tab_insert(g, i)) return false;
  return true;
}

static bool name_tab_insert(ncc_graph *g, int idx) {
  uint32_t m = (uint32_t)g->name_cap - 1;
  for (uint32_t h = hash_str(g->values[idx]->name) & m;; h = (h + 1) & m)
    if (g->name_tab[h] < 0) {
      g->name_tab[h] = idx;
      return true;
    }
}

ncc_value *ncc_graph_find_value(const ncc_graph *g, const char *name) {
  if (!g->name_cap) return NULL;
  uint32_t m = (uint32_t)g->name_cap - 1;
  for (uint32_t h = hash_str(name) & m; g->name_tab[h] >= 0; h = (h + 1) & m)
    if (strcmp(g->values[g->name_tab[h]]->name, name) == 0)
      return g->values[g->name_tab[h]];
  return NULL;
}

ncc_value *ncc_graph_add_value(ncc_graph *g, const char *name,
                               ncc_value_kind kind, ncc_dtype dt,
                               const ncc_shape *shape) {
  char auto_name[32];
  if (!name) {
    do snprintf(auto_name, sizeof auto_name, "t%d", g->next_auto++);
    while (ncc_graph_find_value(g, auto_name));
    name = auto_name;
  } else if (ncc_graph_find_value(g, name)) {
    ncc_error(NCC_ERR_INPUT, "value '%s' is defined twice", name);
    return NULL;
  }
  if (shape && (shape->rank < 0 || shape->rank > NCC_MAX_RANK)) {
    ncc_error(NCC_ERR_UNSUPPORTED, "value '%s' has rank %d (at most %d)",
              name, shape->rank, NCC_MAX_RANK);
    return NULL;
  }
  if (!grow(g, (void **)&g->values, &g->cap_values, g->n_values + 1,
            sizeof(ncc_value *)))
    return NULL;
  ncc_value *v = ncc_arena_alloc(&g->arena, sizeof *v);
  if (!v) return NULL;
  v->name = ncc_arena_strdup(&g->arena, name);
  if (!v->name) return NULL;
  v->id = g->n_values;
  v->kind = kind;
  v->dtype = dt;
  if (shape) v->shape = *shape;
  v->content_len = -1;
  g->values[g->n_values++] = v;
  if (g->n_values * 2 > g->name_cap) {
    if (!name_tab_rehash(g)) return NULL;
  } else if (!name_tab_insert(g, v->id)) {
    return NULL;
  }
  return v;
}

ncc_value *ncc_graph_add_const(ncc_graph *g, const char *name, ncc_dtype dt,
                               const ncc_shape *shape, const void *data) {
  int64_t n = ncc_shape_numel(shape);
  if (n < 0) {
    ncc_error(NCC_ERR_INPUT, "constant '%s' needs a static shape",
              name ? name : "?");
    return NULL;
  }
  ncc_value *v = ncc_graph_add_value(g, name, NCC_VAL_CONST, dt, shape);
  if (!v) return NULL;
  size_t bytes = (size_t)n * ncc_dtype_size(dt);
  v->data = ncc_arena_alloc(&g->arena, bytes);
  if (!v->data) return NULL;
  if (data && bytes) memcpy(v->data, data, bytes);
  return v;
}

ncc_node *ncc_graph_add_node(ncc_graph *g, ncc_op op, const char *name,
                             int n_in, ncc_value *const *in, int n_out) {
  if (!grow(g, (void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1,
            sizeof(ncc_node *)))
    return NULL;
  ncc_node *n = ncc_arena_alloc(&g->arena, sizeof *n);
  if (!n) return NULL;
  n->op = op;
  n->name = ncc_arena_strdup(&g->arena, name ? name : "");
  n->in = ncc_arena_alloc(&g->arena, sizeof(ncc_value *) * (size_t)(n_in + 1));
  n->out =
      ncc_arena_alloc(&g->arena, sizeof(ncc_value *) * (size_t)(n_out + 1));
  if (!n->name || !n->in || !n->out) return NULL;
  n->n_in = n_in;
  n->n_out = n_out;
  if (n_in) memcpy(n->in, in, sizeof(ncc_value *) * (size_t)n_in);
  n->id = g->n_nodes;
  g->nodes[g->n_nodes++] = n;
  return n;
}

void ncc_node_set_output(ncc_node *n, int idx, ncc_value *v) {
  NCC_ASSERT(idx >= 0 && idx < n->n_out);
  n->out[idx] = v;
  v->producer = n;
  v->producer_idx = idx;
  v->kind = NCC_VAL_NODE;
}

ncc_status ncc_graph_add_input(ncc_graph *g, ncc_value *v) {
  if (!grow(g, (void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1,
            sizeof(ncc_value *)))
    return NCC_ERR_NOMEM;
  g->inputs[g->n_inputs++] = v;
  return NCC_OK;
}

ncc_status ncc_graph_add_output(ncc_graph *g, ncc_value *v) {
  if (!grow(g, (void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1,
            sizeof(ncc_value *)))
    return NCC_ERR_NOMEM;
  g->outputs[g->n_outputs++] = v;
  return NCC_OK;
}

int ncc_graph_sym(ncc_graph *g, const char *name, size_t len) {
  for (int i = 0; i < g->n_syms; i++)
    if (strlen(g->syms[i]) == len && memcmp(g->syms[i], name, len) == 0)
      return i;
  if (g->n_syms >= NCC_MAX_SYMS) {
    ncc_error(NCC_ERR_INPUT, "too many symbolic dims");
    return -1;
  }
  if (!grow(g, (void **)&g->syms, &g->cap_syms, g->n_syms + 1,
            sizeof(char *)))
    return -1;
  const char *s = ncc_arena_strndup(&g->arena, name, len);
  if (!s) return -1;
  g->syms[g->n_syms] = s;
  return g->n_syms++;
}

int ncc_graph_fresh_sym(ncc_graph *g) {
  char buf[32];
  for (int k = g->n_syms;; k++) {
    snprintf(buf, sizeof buf, "unk__%d", k);
    bool taken = false;
    for (int i = 0; i < g->n_syms; i++)
      if (strcmp(g->syms[i], buf) == 0) taken = true;
    if (!taken) return ncc_graph_sym(g, buf, strlen(buf));
  }
}

const char *ncc_graph_sym_name(const ncc_graph *g, int id) {
  return id >= 0 && id < g->n_syms ? g->syms[id] : "?";
}

void ncc_graph_remove_nodes(ncc_graph *g, const bool *dead) {
  int k = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (dead[g->nodes[i]->id]) continue;
    g->nodes[k] = g->nodes[i];
    k++;
  }
  g->n_nodes = k;
  for (int i = 0; i < k; i++) g->nodes[i]->id = i;
}

/* ---- attributes ---- */
ncc_attr *ncc_node_add_attr(ncc_graph *g, ncc_node *n, const char *name,
                            ncc_attr_kind kind) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) {
      memset(&n->attrs[i].i, 0, sizeof(ncc_attr) - offsetof(ncc_attr, i));
      n->attrs[i].kind = kind;
      return &n->attrs[i];
    }
  ncc_attr *na = ncc_arena_alloc(&g->arena, sizeof(ncc_attr) * (size_t)(n->n_attrs + 1));
  if (!na) return NULL;
  if (n->n_attrs) memcpy(na, n->attrs, sizeof(ncc_attr) * (size_t)n->n_attrs);
  n->attrs = na;
  ncc_attr *a = &na[n->n_attrs];
  a->name = ncc_arena_strdup(&g->arena, name);
  if (!a->name) return NULL;
  a->kind = kind;
  n->n_attrs++;
  return a;
}

ncc_status ncc_node_set_attr_int(ncc_graph *g, ncc_node *n, const char *name,
                                 int64_t v) {
  ncc_attr *a = ncc_node_add_attr(g, n, name, NCC_ATTR_INT);
  if (!a) return NCC_ERR_NOMEM;
  a->i = v;
  return NCC_OK;
}

ncc_status ncc_node_set_attr_float(ncc_graph *g, ncc_node *n, const char *name,
                                   float v) {
  ncc_attr *a = ncc_node_add_attr(g, n, name, NCC_ATTR_FLOAT);
  if (!a) return NCC_ERR_NOMEM;
  a->f = v;
  return NCC_OK;
}

ncc_status ncc_node_set_attr_ints(ncc_graph *g, ncc_node *n, const char *name,
                                  const int64_t *v, int count) {
  ncc_attr *a = ncc_node_add_attr(g, n, name, NCC_ATTR_INTS);
  if (!a) return NCC_ERR_NOMEM;
  a->ints = ncc_arena_memdup(&g->arena, v, sizeof(int64_t) * (size_t)count);
  if (!a->ints) return NCC_ERR_NOMEM;
  a->n = count;
  return NCC_OK;
}

ncc_status ncc_node_set_attr_floats(ncc_graph *g, ncc_node *n,
                                    const char *name, const float *v,
                                    int count) {
  ncc_attr *a = ncc_node_add_attr(g, n, name, NCC_ATTR_FLOATS);
  if (!a) return NCC_ERR_NOMEM;
  a->floats = ncc_arena_memdup(&g->arena, v, sizeof(float) * (size_t)count);
  if (!a->floats) return NCC_ERR_NOMEM;
  a->n = count;
  return NCC_OK;
}

ncc_status ncc_node_set_attr_string(ncc_graph *g, ncc_node *n,
                                    const char *name, const char *s) {
  ncc_attr *a = ncc_node_add_attr(g, n, name, NCC_ATTR_STRING);
  if (!a) return NCC_ERR_NOMEM;
  a->s = ncc_arena_strdup(&g->arena, s);
  return a->s ? NCC_OK : NCC_ERR_NOMEM;
}

/* subgraphs. The parent keeps a list of them so that freeing it
 * frees them, whatever happened to the attribute since. */
ncc_status ncc_node_set_attr_graph(ncc_graph *g, ncc_node *n, const char *name,
                                   ncc_graph *sub) {
  if (!grow(g, (void **)&g->subs, &g->cap_subs, g->n_subs + 1, sizeof *g->subs)) {
    ncc_graph_free(sub);
    return NCC_ERR_NOMEM;
  }
  g->subs[g->n_subs++] = sub;
  ncc_attr *a = ncc_node_add_attr(g, n, name, NCC_ATTR_GRAPH);
  if (!a) return NCC_ERR_NOMEM;
  a->graph = sub;
  return NCC_OK;
}

ncc_graph *ncc_attr_graph(const ncc_node *n, const char *name) {
  const ncc_attr *a = ncc_node_attr(n, name);
  return a && a->kind == NCC_ATTR_GRAPH ? a->graph : NULL;
}

const ncc_attr *ncc_node_attr(const ncc_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

int64_t ncc_attr_int(const ncc_node *n, const char *name, int64_t dflt) {
  const ncc_attr *a = ncc_node_attr(n, name);
  return a && a->kind == NCC_ATTR_INT ? a->i : dflt;
}

float ncc_attr_float(const ncc_node *n, const char *name, float dflt) {
  const ncc_attr *a = ncc_node_attr(n, name);
  if (!a) return dflt;
  if (a->kind == NCC_ATTR_FLOAT) return a->f;
  if (a->kind == NCC_ATTR_INT) return (float)a->i;
  return dflt;
}

const int64_t *ncc_attr_ints(const ncc_node *n, const char *name, int *count) {
  const ncc_attr *a = ncc_node_attr(n, name);
  if (!a || a->kind != NCC_ATTR_INTS) {
    *count = 0;
    return NULL;
  }
  *count = a->n;
  return a->ints;
}

const char *ncc_attr_string(const ncc_node *n, const char *name,
                            const char *dflt) {
  const ncc_attr *a = ncc_node_attr(n, name);
  return a && a->kind == NCC_ATTR_STRING ? a->s : dflt;
}

bool ncc_node_is_view(const ncc_node *n) {
  if (!ncc_op_is_view(n->op)) return false;
  const ncc_value *x = n->n_in > 0 ? n->in[0] : NULL, *y = n->n_out == 1 ? n->out[0] : NULL;
  return x && y && x->dtype == y->dtype && x->dtype != NCC_DT_UNDEF &&
         x->layout.kind == NCC_LAYOUT_PLAIN && y->layout.kind == NCC_LAYOUT_PLAIN;
}

const char *ncc_node_label(const ncc_node *n, char *buf, size_t cap) {
  if (n->name && n->name[0])
    snprintf(buf, cap, "node '%s' (%s)", n->name, ncc_op_name(n->op));
  else
    snprintf(buf, cap, "node #%d (%s)", n->id, ncc_op_name(n->op));
  return buf;
}

ncc_status ncc_node_error(const ncc_node *n, ncc_status st, const char *fmt, ...) {
  char label[192], msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ncc_error(st, "%s: %s", ncc_node_label(n, label, sizeof label), msg);
}

/* ---- public accessors ---- */
int ncc_graph_num_inputs(const ncc_graph *g) { return g->n_inputs; }
int ncc_graph_num_outputs(const ncc_graph *g) { return g->n_outputs; }
int ncc_graph_num_nodes(const ncc_graph *g) { return g->n_nodes; }
const char *ncc_graph_input_name(const ncc_graph *g, int i) {
  return i >= 0 && i < g->n_inputs ? g->inputs[i]->name : NULL;
}
const char *ncc_graph_output_name(const ncc_graph *g, int i) {
  return i >= 0 && i < g->n_outputs ? g->outputs[i]->name : NULL;
}

static ncc_status value_info(const ncc_graph *g, const ncc_value *const *vals,
                             int n, int i, const char *what, ncc_value_info *out) {
  if (!g || !out || i < 0 || i >= n)
    return ncc_error(NCC_ERR_USAGE, "ncc_graph_%s_info: no %s %d", what, what, i);
  const ncc_value *v = vals[i];
  memset(out, 0, sizeof *out);
  out->name = v->name;
  out->dtype = v->dtype;
  out->rank = v->shape.rank;
  for (int d = 0; d < v->shape.rank; d++) {
    int64_t x = v->shape.d[d];
    bool sym = ncc_dim_is_sym(x);
    out->dims[d] = sym || x < 0 ? -1 : x;
    out->sym[d] = sym ? ncc_dim_sym_id(x) : -1;
  }
  return NCC_OK;
}

ncc_status ncc_graph_input_info(const ncc_graph *g, int i, ncc_value_info *out) {
  return value_info(g, (const ncc_value *const *)(g ? g->inputs : NULL),
                    g ? g->n_inputs : 0, i, "input", out);
}

ncc_status ncc_graph_output_info(const ncc_graph *g, int i, ncc_value_info *out) {
  return value_info(g, (const ncc_value *const *)(g ? g->outputs : NULL),
                    g ? g->n_outputs : 0, i, "output", out);
}
