/* passes/cse.c — common subexpression elimination: two nodes with the same
 * op, the same attributes and the same input values compute the same
 * outputs, so the later one's uses move to the earlier one (DCE then drops
 * it). Also merges constants with identical type and bytes, which makes
 * duplicated weights and shape constants from exporters share one value. */
#include <string.h>

#include "pass.h"

static bool attr_eq(const ncc_attr *a, const ncc_attr *b) {
  if (strcmp(a->name, b->name) || a->kind != b->kind) return false;
  switch (a->kind) {
  case NCC_ATTR_INT: return a->i == b->i;
  case NCC_ATTR_FLOAT: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
  case NCC_ATTR_INTS:
    return a->n == b->n && !memcmp(a->ints, b->ints, sizeof(int64_t) * (size_t)a->n);
  case NCC_ATTR_FLOATS:
    return a->n == b->n && !memcmp(a->floats, b->floats, sizeof(float) * (size_t)a->n);
  case NCC_ATTR_STRING: return strcmp(a->s, b->s) == 0;
  case NCC_ATTR_TENSOR: {
    if (a->t.dtype != b->t.dtype || !ncc_shape_eq(&a->t.shape, &b->t.shape)) return false;
    int64_t n = ncc_shape_numel(&a->t.shape);
    return !memcmp(a->t.data, b->t.data, (size_t)n * ncc_dtype_size(a->t.dtype));
  }
  case NCC_ATTR_STRINGS: return false; /* schema-only kind, never in the IR */
  case NCC_ATTR_GRAPH: return false; /* subgraphs are never merged */
  }
  return false;
}

static bool node_eq(const ncc_node *a, const ncc_node *b) {
  if (a->op != b->op || a->n_in != b->n_in || a->n_out != b->n_out ||
      a->n_attrs != b->n_attrs)
    return false;
  for (int i = 0; i < a->n_in; i++)
    if (a->in[i] != b->in[i]) return false;
  /* the same computation stored in two layouts (Reorder) is two values */
  for (int i = 0; i < a->n_out; i++)
    if (a->out[i] && b->out[i] && !ncc_layout_eq(a->out[i]->layout, b->out[i]->layout))
      return false;
  for (int i = 0; i < a->n_attrs; i++) {
    const ncc_attr *o = ncc_node_attr(b, a->attrs[i].name);
    if (!o || !attr_eq(&a->attrs[i], o)) return false;
  }
  return true;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t node_key(const ncc_node *n) {
  uint64_t h = mix(0, (uint64_t)n->op);
  for (int i = 0; i < n->n_in; i++) h = mix(h, n->in[i] ? (uint64_t)n->in[i]->id + 1 : 0);
  return h;
}

static bool const_eq(const ncc_value *a, const ncc_value *b) {
  if (a->dtype != b->dtype || !ncc_shape_eq(&a->shape, &b->shape)) return false;
  int64_t n = ncc_shape_numel(&a->shape);
  return !memcmp(a->data, b->data, (size_t)n * ncc_dtype_size(a->dtype));
}

static uint64_t const_key(const ncc_value *v) {
  uint64_t h = mix((uint64_t)v->dtype, (uint64_t)v->shape.rank);
  size_t n = (size_t)ncc_shape_numel(&v->shape) * ncc_dtype_size(v->dtype);
  const unsigned char *p = v->data;
  /* Sampling keeps hashing big weights cheap; equality is checked fully. */
  size_t step = n > 4096 ? n / 1024 : 1;
  for (size_t i = 0; i < n; i += step) h = mix(h, p[i]);
  return mix(h, n);
}

/* Open-addressing table of candidates keyed by hash. */
typedef struct {
  uint64_t *keys;
  void **items;
  size_t cap;
} table;

static bool table_init(table *t, size_t n) {
  t->cap = 16;
  while (t->cap < 2 * n + 2) t->cap *= 2;
  t->keys = ncc_calloc(t->cap, sizeof(uint64_t));
  t->items = ncc_calloc(t->cap, sizeof(void *));
  return t->keys && t->items;
}

static void table_free(table *t) {
  ncc_free(t->keys, 0);
  ncc_free(t->items, 0);
}

/* Graph outputs keep their names, so a value that is one is never merged
 * away (the earlier twin may still be merged into it later). */
static bool any_output(const ncc_graph *g, const ncc_node *n) {
  for (int j = 0; j < n->n_out; j++)
    if (n->out[j] && ncc_is_graph_output(g, n->out[j])) return true;
  return false;
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  ncc_status st = NCC_OK;
  table t;
  int merged = 0;
  /* 1. constants */
  if (!table_init(&t, (size_t)g->n_values)) { st = NCC_ERR_NOMEM; goto out; }
  for (int i = 0; i < g->n_values; i++) {
    ncc_value *v = g->values[i];
    if (v->kind != NCC_VAL_CONST || ncc_is_graph_output(g, v)) continue;
    uint64_t k = const_key(v);
    size_t m = t.cap - 1, h = (size_t)k & m;
    for (; t.items[h]; h = (h + 1) & m) {
      if (t.keys[h] == k && const_eq(t.items[h], v)) {
        ncc_replace_uses(g, v, t.items[h]);
        merged++;
        goto next_const;
      }
    }
    t.keys[h] = k;
    t.items[h] = v;
  next_const:;
  }
  table_free(&t);
  /* 2. nodes, in topological order so chains collapse in one sweep */
  if (!table_init(&t, (size_t)g->n_nodes)) { st = NCC_ERR_NOMEM; goto out; }
  for (int i = 0; i < g->n_nodes; i++) {
    ncc_node *n = g->nodes[i];
    if (any_output(g, n)) continue;
    uint64_t k = node_key(n);
    size_t m = t.cap - 1, h = (size_t)k & m;
    for (; t.items[h]; h = (h + 1) & m) {
      ncc_node *o = t.items[h];
      if (t.keys[h] == k && node_eq(o, n)) {
        for (int j = 0; j < n->n_out; j++)
          if (n->out[j] && o->out[j]) ncc_replace_uses(g, n->out[j], o->out[j]);
        merged++;
        goto next_node;
      }
    }
    t.keys[h] = k;
    t.items[h] = n;
  next_node:;
  }
  if (merged && ncc_dce(g) < 0) st = NCC_ERR_NOMEM;
out:
  table_free(&t);
  ctx->rewrites = merged;
  ctx->changed = merged > 0;
  return st;
}

const ncc_pass ncc_pass_cse = {
    .name = "cse",
    .level = 1,
    .needs = "",
    .desc = "common subexpression elimination (identical nodes and constants)",
    .run = run,
};
