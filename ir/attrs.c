/* ir/attrs.c — the typed attribute views (ir/attrs.h) and the schema table
 * expanded from ir/attrs.def. The defaults and error messages here are the
 * only ones: shape inference reports them, every other reader trusts them.
 */
#include <stdio.h>
#include <string.h>

#include "attrs.h"

static const ncc_attr_schema schema[] = {
#define NCC_ATTR(op, nm, kind, since) {NCC_OP_##op, nm, NCC_ATTR_##kind, since},
#include "attrs.def"
#undef NCC_ATTR
};

const ncc_attr_schema *ncc_attr_schema_find(ncc_op op, const char *name) {
  for (size_t i = 0; i < sizeof schema / sizeof schema[0]; i++)
    if (schema[i].op == op && strcmp(schema[i].name, name) == 0)
      return &schema[i];
  return NULL;
}

__attribute__((format(printf, 3, 4))) static ncc_status
fail(const ncc_node *n, ncc_status st, const char *fmt, ...) {
  char msg[512], lb[192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ncc_error(st, "%s: %s", ncc_node_label(n, lb, sizeof lb), msg);
}

/* Integer attribute (dflt when absent); a wrong kind is an error. */
static ncc_status get_int(const ncc_node *n, const char *name, int64_t dflt,
                          int64_t *v) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INT)
    return fail(n, NCC_ERR_INPUT, "attribute '%s' must be an int", name);
  *v = a->i;
  return NCC_OK;
}

/* Integer attribute restricted to 0/1. */
static ncc_status get_flag(const ncc_node *n, const char *name, bool dflt,
                           bool *v) {
  int64_t x;
  *v = dflt;
  ncc_status st = get_int(n, name, dflt, &x);
  if (st) return st;
  if (x != 0 && x != 1)
    return fail(n, NCC_ERR_INPUT, "attribute '%s' must be 0 or 1, got %lld",
                name, (long long)x);
  *v = x != 0;
  return NCC_OK;
}

/* Float attribute; an int is taken as its value (the text form writes
 * `alpha=1`). */
static ncc_status get_float(const ncc_node *n, const char *name, float dflt,
                            float *v) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind == NCC_ATTR_FLOAT) *v = a->f;
  else if (a->kind == NCC_ATTR_INT) *v = (float)a->i;
  else return fail(n, NCC_ERR_INPUT, "attribute '%s' must be a float", name);
  return NCC_OK;
}

static ncc_status get_string(const ncc_node *n, const char *name,
                             const char *dflt, const char **v) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_STRING || !a->s)
    return fail(n, NCC_ERR_INPUT, "attribute '%s' must be a string", name);
  *v = a->s;
  return NCC_OK;
}

ncc_status ncc_attrs_gemm(const ncc_node *n, ncc_gemm_attrs *a) {
  *a = (ncc_gemm_attrs){.alpha = 1.0f, .beta = 1.0f};
  ncc_status st;
  if ((st = get_flag(n, "transA", false, &a->trans_a)) ||
      (st = get_flag(n, "transB", false, &a->trans_b)) ||
      (st = get_float(n, "alpha", 1.0f, &a->alpha)) ||
      (st = get_float(n, "beta", 1.0f, &a->beta)))
    return st;
  return NCC_OK;
}

ncc_status ncc_attrs_act(const ncc_node *n, ncc_act_attrs *a) {
  *a = (ncc_act_attrs){0};
  switch (n->op) {
  case NCC_OP_LEAKYRELU: return get_float(n, "alpha", 0.01f, &a->alpha);
  case NCC_OP_HARDSIGMOID: {
    ncc_status st = get_float(n, "alpha", 0.2f, &a->alpha);
    if (!st) st = get_float(n, "beta", 0.5f, &a->beta);
    return st;
  }
  case NCC_OP_GELU: {
    const char *ap;
    ncc_status st = get_string(n, "approximate", "none", &ap);
    if (st) return st;
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
      return fail(
          n, NCC_ERR_INPUT,
          "attribute 'approximate' must be \"none\" or \"tanh\", got \"%s\"",
          ap);
    a->gelu_tanh = strcmp(ap, "tanh") == 0;
    return NCC_OK;
  }
  default: return NCC_OK;
  }
}

ncc_status ncc_attrs_reduce(const ncc_node *n, ncc_reduce_attrs *a) {
  *a = (ncc_reduce_attrs){.keepdims = true};
  ncc_status st = get_flag(n, "keepdims", true, &a->keepdims);
  if (!st) st = get_flag(n, "noop_with_empty_axes", false, &a->noop_with_empty_axes);
  return st;
}

ncc_status ncc_attrs_norm(const ncc_node *n, ncc_norm_attrs *a) {
  *a = (ncc_norm_attrs){.epsilon = 1e-5f};
  ncc_status st = NCC_OK;
  if (n->op == NCC_OP_BATCHNORM)
    st = get_int(n, "training_mode", 0, &a->training_mode);
  if (!st) st = get_float(n, "epsilon", 1e-5f, &a->epsilon);
  return st;
}

ncc_status ncc_attrs_pool(const ncc_node *n, ncc_pool_attrs *a) {
  *a = (ncc_pool_attrs){0};
  if (n->op == NCC_OP_AVGPOOL)
    return get_flag(n, "count_include_pad", false, &a->count_include_pad);
  if (n->op == NCC_OP_MAXPOOL)
    return get_flag(n, "storage_order", false, &a->col_major);
  return NCC_OK;
}

static int64_t axis_default(ncc_op op) {
  switch (op) {
  case NCC_OP_SOFTMAX:
  case NCC_OP_LOGSOFTMAX:
  case NCC_OP_LAYERNORM: return -1;
  case NCC_OP_FLATTEN: return 1;
  default: return 0;
  }
}

int64_t ncc_attrs_axis(const ncc_node *n) {
  int64_t v;
  if (get_int(n, "axis", axis_default(n->op), &v)) return axis_default(n->op);
  return v;
}

ncc_status ncc_attrs_axis_norm(const ncc_node *n, int rank, int *axis) {
  *axis = 0;
  if (n->op == NCC_OP_CONCAT && !ncc_node_attr(n, "axis"))
    return fail(n, NCC_ERR_INPUT, "missing attribute 'axis'");
  int64_t v;
  ncc_status st = get_int(n, "axis", axis_default(n->op), &v);
  if (st) return st;
  int64_t hi = n->op == NCC_OP_FLATTEN ? rank : rank - 1;
  if (v < -(int64_t)rank || v > hi)
    return fail(n, NCC_ERR_INPUT, "axis %lld is out of range for rank %d",
                (long long)v, rank);
  *axis = (int)(v < 0 ? v + rank : v);
  return NCC_OK;
}

ncc_status ncc_attrs_perm(const ncc_node *n, int rank, int *perm) {
  for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
  const ncc_attr *a = ncc_node_attr(n, "perm");
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INTS)
    return fail(n, NCC_ERR_INPUT, "attribute 'perm' must be a list of ints");
  if (a->n != rank)
    return fail(n, NCC_ERR_INPUT, "perm has %d entries for rank %d", a->n, rank);
  bool seen[NCC_MAX_RANK] = {false};
  for (int i = 0; i < rank; i++) {
    if (a->ints[i] < 0 || a->ints[i] >= rank || seen[a->ints[i]]) {
      for (int j = 0; j < rank; j++) perm[j] = rank - 1 - j;
      return fail(n, NCC_ERR_INPUT, "perm is not a permutation of 0..%d",
                  rank - 1);
    }
    seen[a->ints[i]] = true;
    perm[i] = (int)a->ints[i];
  }
  return NCC_OK;
}
