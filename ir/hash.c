/* ir/hash.c — structural hashes of graphs and nodes.
 *
 * ncc_graph_hash identifies a graph up to naming: value, node, graph and
 * symbol names are ignored, while ops, attributes, types, layouts, wiring and
 * the data of used constants all count. Values are referred to by position
 * (input index, producing node index and output slot) or, for constants, by
 * the hash of their content, so the order constants were created in does not
 * matter. Symbolic dims are numbered by first appearance (N and batch hash
 * alike, [N,N] and [N,M] do not). Attributes are combined order-free.
 *
 * ncc_node_hash is the per-node key used to find repeated blocks: op,
 * attributes and input types, without names or constant data.
 *
 * Not cryptographic: a 64-bit mix (murmur3's finalizer) over 8-byte words.
 */
#include <string.h>

#include "ir.h"

typedef struct hctx {
  const ncc_graph *g;
  int *sym_canon; /* symbol id -> first-appearance number, -1 unseen */
  int n_canon;
  uint64_t *const_hash; /* by value id, 0 = not computed yet */
  int *input_pos;       /* by value id: graph input index + 1, 0 = none */
} hctx;

static uint64_t fmix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

static void h_u64(uint64_t *h, uint64_t x) {
  *h = fmix(*h ^ (x + 0x9e3779b97f4a7c15ull + (*h << 6) + (*h >> 2)));
}

static void h_bytes(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  h_u64(h, n);
  for (; n >= 8; b += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, b, 8);
    h_u64(h, w);
  }
  if (n) {
    uint64_t w = 0;
    memcpy(&w, b, n);
    h_u64(h, w);
  }
}

static void h_str(uint64_t *h, const char *s) {
  if (!s) s = "";
  h_bytes(h, s, strlen(s));
}

enum { TAG_STATIC = 1, TAG_SYM, TAG_NULL, TAG_INPUT, TAG_CONST, TAG_NODE,
       TAG_OTHER };

/* A dim: static as is; a symbol by first appearance when a context has a
 * table for it, by id otherwise. */
static void h_dim(uint64_t *h, hctx *c, int64_t d) {
  if (!ncc_dim_is_sym(d)) {
    h_u64(h, TAG_STATIC);
    h_u64(h, (uint64_t)d);
    return;
  }
  int id = ncc_dim_sym_id(d);
  if (c && c->sym_canon && id >= 0 && id < c->g->n_syms) {
    if (c->sym_canon[id] < 0) c->sym_canon[id] = c->n_canon++;
    id = c->sym_canon[id];
  }
  h_u64(h, TAG_SYM);
  h_u64(h, (uint64_t)id);
}

static void h_type(uint64_t *h, hctx *c, ncc_dtype dt, const ncc_shape *s,
                   const ncc_layout *l) {
  int r = s->rank < 0 ? 0 : s->rank > NCC_MAX_RANK ? NCC_MAX_RANK : s->rank;
  h_u64(h, (uint64_t)dt);
  h_u64(h, (uint64_t)s->rank);
  for (int i = 0; i < r; i++) h_dim(h, c, s->d[i]);
  if (l) {
    h_u64(h, (uint64_t)l->kind);
    h_u64(h, l->kind == NCC_LAYOUT_PLAIN ? 0 : (uint64_t)l->block);
  }
}

static void h_data(uint64_t *h, ncc_dtype dt, const ncc_shape *s,
                   const void *data) {
  int64_t n = ncc_shape_numel(s);
  size_t bytes = n > 0 ? (size_t)n * ncc_dtype_size(dt) : 0;
  if (data) h_bytes(h, data, bytes);
  else h_u64(h, TAG_NULL);
}

static uint64_t attr_hash(const ncc_attr *a) {
  uint64_t h = 0x243f6a8885a308d3ull;
  h_str(&h, a->name);
  h_u64(&h, (uint64_t)a->kind);
  switch (a->kind) {
  case NCC_ATTR_INT: h_u64(&h, (uint64_t)a->i); break;
  case NCC_ATTR_FLOAT: h_bytes(&h, &a->f, sizeof a->f); break;
  case NCC_ATTR_INTS:
    if (a->n > 0 && a->ints) h_bytes(&h, a->ints, sizeof *a->ints * (size_t)a->n);
    else h_u64(&h, 0);
    break;
  case NCC_ATTR_FLOATS:
    if (a->n > 0 && a->floats)
      h_bytes(&h, a->floats, sizeof *a->floats * (size_t)a->n);
    else h_u64(&h, 0);
    break;
  case NCC_ATTR_STRING: h_str(&h, a->s); break;
  case NCC_ATTR_TENSOR:
    h_type(&h, NULL, a->t.dtype, &a->t.shape, NULL);
    h_data(&h, a->t.dtype, &a->t.shape, a->t.data);
    break;
  case NCC_ATTR_STRINGS: break; /* schema-only kind, never in the IR */
  case NCC_ATTR_GRAPH: h_u64(&h, a->graph ? ncc_graph_hash(a->graph) : 0); break;
  }
  return h;
}

/* Attributes in any order hash alike: a sum of independent hashes. */
static void h_attrs(uint64_t *h, const ncc_node *n) {
  uint64_t sum = 0;
  for (int i = 0; i < n->n_attrs; i++) sum += attr_hash(&n->attrs[i]);
  h_u64(h, (uint64_t)n->n_attrs);
  h_u64(h, sum);
}

uint64_t ncc_node_hash(const ncc_node *n) {
  uint64_t h = 0x13198a2e03707344ull;
  h_u64(&h, (uint64_t)n->op);
  h_u64(&h, (uint64_t)n->n_in);
  for (int i = 0; i < n->n_in; i++) {
    const ncc_value *v = n->in[i];
    if (!v) {
      h_u64(&h, TAG_NULL);
      continue;
    }
    h_u64(&h, TAG_OTHER);
    h_type(&h, NULL, v->dtype, &v->shape, &v->layout);
  }
  h_u64(&h, (uint64_t)n->n_out);
  for (int j = 0; j < n->n_out; j++) h_u64(&h, n->out[j] ? TAG_OTHER : TAG_NULL);
  h_attrs(&h, n);
  return fmix(h);
}

static uint64_t const_hash(hctx *c, const ncc_value *v) {
  uint64_t h = 0xa4093822299f31d0ull;
  h_type(&h, c, v->dtype, &v->shape, &v->layout);
  h_data(&h, v->dtype, &v->shape, v->data);
  return h | 1; /* never 0, the "not computed" mark */
}

/* A reference to a value, by position or (constants) by content. */
static void h_ref(uint64_t *h, hctx *c, const ncc_value *v) {
  const ncc_graph *g = c->g;
  if (!v) {
    h_u64(h, TAG_NULL);
    return;
  }
  if (v->kind == NCC_VAL_CONST) {
    bool cached = c->const_hash && v->id >= 0 && v->id < g->n_values;
    uint64_t ch = cached ? c->const_hash[v->id] : 0;
    if (!ch) ch = const_hash(c, v);
    if (cached) c->const_hash[v->id] = ch;
    h_u64(h, TAG_CONST);
    h_u64(h, ch);
    return;
  }
  if (v->kind == NCC_VAL_INPUT) {
    int pos = -1;
    if (c->input_pos && v->id >= 0 && v->id < g->n_values &&
        g->values[v->id] == v)
      pos = c->input_pos[v->id] - 1;
    for (int i = 0; !c->input_pos && i < g->n_inputs && pos < 0; i++)
      if (g->inputs[i] == v) pos = i;
    if (pos >= 0) {
      h_u64(h, TAG_INPUT);
      h_u64(h, (uint64_t)pos);
      return;
    }
  }
  if (v->kind == NCC_VAL_NODE && v->producer) {
    h_u64(h, TAG_NODE);
    h_u64(h, (uint64_t)v->producer->id);
    h_u64(h, (uint64_t)v->producer_idx);
    return;
  }
  h_u64(h, TAG_OTHER);
}

uint64_t ncc_graph_hash(const ncc_graph *g) {
  hctx c = {.g = g};
  /* Without the tables (allocation failed) the hash is still deterministic,
   * only less name-blind for symbols and slower for shared constants. */
  if (g->n_syms > 0) c.sym_canon = ncc_malloc(sizeof(int) * (size_t)g->n_syms);
  if (c.sym_canon)
    for (int i = 0; i < g->n_syms; i++) c.sym_canon[i] = -1;
  if (g->n_values > 0) {
    c.const_hash = ncc_calloc((size_t)g->n_values, sizeof(uint64_t));
    c.input_pos = ncc_calloc((size_t)g->n_values, sizeof(int));
  }
  for (int i = 0; c.input_pos && i < g->n_inputs; i++) {
    const ncc_value *v = g->inputs[i];
    if (v->id >= 0 && v->id < g->n_values && !c.input_pos[v->id])
      c.input_pos[v->id] = i + 1;
  }
  uint64_t h = 0x082efa98ec4e6c89ull;
  h_u64(&h, (uint64_t)g->n_inputs);
  for (int i = 0; i < g->n_inputs; i++)
    h_type(&h, &c, g->inputs[i]->dtype, &g->inputs[i]->shape,
           &g->inputs[i]->layout);
  h_u64(&h, (uint64_t)g->n_nodes);
  for (int k = 0; k < g->n_nodes; k++) {
    const ncc_node *n = g->nodes[k];
    h_u64(&h, (uint64_t)n->op);
    h_u64(&h, (uint64_t)n->n_in);
    for (int i = 0; i < n->n_in; i++) h_ref(&h, &c, n->in[i]);
    h_u64(&h, (uint64_t)n->n_out);
    for (int j = 0; j < n->n_out; j++) {
      const ncc_value *v = n->out[j];
      if (v) h_type(&h, &c, v->dtype, &v->shape, &v->layout);
      else h_u64(&h, TAG_NULL);
    }
    h_attrs(&h, n);
  }
  h_u64(&h, (uint64_t)g->n_outputs);
  for (int i = 0; i < g->n_outputs; i++) h_ref(&h, &c, g->outputs[i]);
  ncc_free(c.sym_canon, 0);
  ncc_free(c.const_hash, 0);
  ncc_free(c.input_pos, 0);
  return fmix(h);
}
