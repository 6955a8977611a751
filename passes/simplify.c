/* passes/simplify.c — algebraic simplification: remove nodes that compute
 * their input unchanged and collapse inverse or composable pairs.
 *
 * Every rewrite here is exact: the simplified graph computes the same
 * values, element for element, as the original (each rule says under which
 * condition that holds). Rules that would only be approximately right — x*0
 * -> 0 (NaN, inf), x-x -> 0 (NaN), Pow(x, 0.5) -> Sqrt (-0, -inf) — are
 * deliberately absent.
 *
 * Graph outputs keep their names: when the value to drop is a graph output,
 * the producer of the surviving value is made to write the output value
 * instead; when that is impossible (the survivor is a graph input, a
 * constant or itself an output) the node stays.
 *
 * Rules (x is the data input, y the node's output):
 *   Identity(x)                      -> x
 *   Cast(x) to x's dtype             -> x
 *   Concat(x) with one input         -> x
 *   Expand(x) to x's shape           -> x
 *   Slice(x) covering all of x       -> x
 *   Pad(x) with all pads zero        -> x
 *   Transpose(x) with the identity permutation             -> x
 *   Transpose(Transpose(x, p), q)    -> x, or Transpose(x, p∘q)
 *   view(x) of x's own shape         -> x    (view: Reshape, Flatten,
 *   view(view(x)) of x's shape       -> x     Squeeze, Unsqueeze)
 *   Reshape(view(x), s)              -> Reshape(x, s)
 *   Mul(x, 1), Mul(1, x), Div(x, 1)  -> x
 *   Add(x, 0), Add(0, x), Sub(x, 0)  -> x
 *   Pow(x, 1)                        -> x
 *   Pow(x, 2)                        -> Mul(x, x)    (f32 only)
 *   Dropout(x) outside training      -> x    (one output; training_mode
 *                                             omitted or a constant false)
 *   Sum(x), Mean(x)                  -> x
 *   Sum(a, b)                        -> Add(a, b)    (f32: one rounding each)
 */
#include <string.h>

#include "../ir/attrs.h"
#include "pass.h"

#define MAX_SWEEPS 8

static bool same_type(const ncc_value *a, const ncc_value *b) {
  return a && b && a->dtype == b->dtype && ncc_shape_eq(&a->shape, &b->shape);
}

/* The producer of v when it is a live node of op `op`, else NULL. */
static ncc_node *producer_of(const ncc_value *v, ncc_op op) {
  if (!v || v->kind != NCC_VAL_NODE || !v->producer) return NULL;
  return v->producer->op == op ? v->producer : NULL;
}

/* Element i of a numeric constant as a double; false for dtypes we do not
 * inspect (f16, bool). */
static bool const_elem(const ncc_value *v, int64_t i, double *out) {
  switch (v->dtype) {
  case NCC_DT_F32: *out = ((const float *)v->data)[i]; return true;
  case NCC_DT_F64: *out = ((const double *)v->data)[i]; return true;
  case NCC_DT_I8: *out = ((const int8_t *)v->data)[i]; return true;
  case NCC_DT_U8: *out = ((const uint8_t *)v->data)[i]; return true;
  case NCC_DT_I32: *out = ((const int32_t *)v->data)[i]; return true;
  case NCC_DT_I64: *out = (double)((const int64_t *)v->data)[i]; return true;
  default: return false;
  }
}

/* v is a constant whose every element equals `want` (NaN never does; -0.0
 * equals 0.0). Empty constants do not count: they broadcast to nothing. */
static bool const_all(const ncc_value *v, double want) {
  if (!v || v->kind != NCC_VAL_CONST || !v->data) return false;
  int64_t n = ncc_shape_numel(&v->shape);
  if (n <= 0) return false;
  for (int64_t i = 0; i < n; i++) {
    double e;
    if (!const_elem(v, i, &e) || e != want) return false;
  }
  return true;
}

/* An integer constant's elements, or content known statically. */
static bool int_elems(const ncc_value *v, int64_t *buf, int cap, int *n) {
  if (!v) return false;
  if (v->kind == NCC_VAL_CONST && (v->dtype == NCC_DT_I64 || v->dtype == NCC_DT_I32)) {
    int64_t cnt = ncc_shape_numel(&v->shape);
    if (cnt < 0 || cnt > cap) return false;
    for (int64_t i = 0; i < cnt; i++)
      buf[i] = v->dtype == NCC_DT_I64 ? ((const int64_t *)v->data)[i]
                                      : ((const int32_t *)v->data)[i];
    *n = (int)cnt;
    return true;
  }
  if (v->content_len < 0 || v->content_len > cap) return false;
  for (int i = 0; i < v->content_len; i++) {
    if (ncc_dim_is_sym(v->content[i])) return false;
    buf[i] = v->content[i];
  }
  *n = v->content_len;
  return true;
}

/* Make every reader of y (the only output of its node) read x instead,
 * which the caller has shown to hold the same values. Returns false, and
 * changes nothing, when y is a graph output that cannot be renamed. */
static bool forward(ncc_graph *g, ncc_value *y, ncc_value *x) {
  if (y == x || !x) return false;
  /* equal values in different layouts are different bytes */
  if (!ncc_layout_eq(y->layout, x->layout)) return false;
  if (!ncc_is_graph_output(g, y)) {
    ncc_replace_uses(g, y, x);
    return true;
  }
  /* y must keep its name: let x's producer write y. */
  if (x->kind != NCC_VAL_NODE || !x->producer || ncc_is_graph_output(g, x)) return false;
  ncc_node *p = x->producer, *n = y->producer;
  int idx = x->producer_idx;
  n->out[y->producer_idx] = NULL; /* n is now dead; DCE takes it */
  ncc_replace_uses(g, x, y);
  p->out[idx] = y;
  y->producer = p;
  y->producer_idx = idx;
  y->dtype = x->dtype;
  y->shape = x->shape;
  x->producer = NULL;
  x->producer_idx = 0;
  return true;
}

/* ---- individual rules; each returns true when it rewrote the graph ---- */

/* Transpose's permutation (default: reversed axes) into perm[rank]. */
static bool get_perm(const ncc_node *n, int rank, int64_t *perm) {
  int p[NCC_MAX_RANK];
  if (rank > NCC_MAX_RANK || ncc_attrs_perm(n, rank, p)) return false;
  for (int i = 0; i < rank; i++) perm[i] = p[i];
  return true;
}

static bool perm_is_identity(const int64_t *perm, int rank) {
  for (int i = 0; i < rank; i++)
    if (perm[i] != i) return false;
  return true;
}

/* Transposes only move data: an identity permutation moves nothing, and
 * two in a row move element x[j] to where one transpose by the composed
 * permutation (y axis i = x axis p[q[i]]) would. */
static bool rule_transpose(ncc_graph *g, ncc_node *n) {
  ncc_value *t = n->in[0];
  int rank = t->shape.rank;
  int64_t q[NCC_MAX_RANK], p[NCC_MAX_RANK], c[NCC_MAX_RANK];
  if (!get_perm(n, rank, q)) return false;
  if (perm_is_identity(q, rank)) return forward(g, n->out[0], t);
  ncc_node *inner = producer_of(t, NCC_OP_TRANSPOSE);
  if (!inner) return false;
  ncc_value *x = inner->in[0];
  if (!get_perm(inner, rank, p)) return false;
  for (int i = 0; i < rank; i++) {
    if (q[i] < 0 || q[i] >= rank) return false;
    c[i] = p[q[i]];
  }
  if (perm_is_identity(c, rank)) return forward(g, n->out[0], x);
  n->in[0] = x;
  return ncc_node_set_attr_ints(g, n, "perm", c, rank) == NCC_OK;
}

static bool is_view(ncc_op op) {
  return op == NCC_OP_RESHAPE || op == NCC_OP_FLATTEN ||
         op == NCC_OP_SQUEEZE || op == NCC_OP_UNSQUEEZE;
}

/* A Reshape's target shape does not depend on its data input: no entry
 * copies an input dim (0 without allowzero), and every entry is known. -1
 * is fine: it is derived from the element count, which views keep. */
static bool reshape_target_is_free(const ncc_node *n) {
  int64_t s[NCC_MAX_RANK];
  int cnt;
  if (!int_elems(n->in[1], s, NCC_MAX_RANK, &cnt)) return false;
  bool allowzero;
  if (ncc_attrs_reshape(n, &allowzero) != NCC_OK) return false;
  if (allowzero) return true;
  for (int i = 0; i < cnt; i++)
    if (s[i] == 0) return false;
  return true;
}

/* Views (Reshape, Flatten, Squeeze, Unsqueeze) keep the row-major order of
 * the elements and change only the shape. So a view to its input's own
 * shape is the identity, and any chain of views is one Reshape of the
 * chain's input: the identity again when it ends at that input's shape.
 * Shapes compare dim by dim, a symbolic dim equal only to itself. */
static bool rule_view(ncc_graph *g, ncc_node *n) {
  ncc_value *y = n->out[0], *t = n->in[0];
  if (same_type(y, t)) return forward(g, y, t);
  ncc_node *inner = t->kind == NCC_VAL_NODE ? t->producer : NULL;
  if (!inner || !is_view(inner->op)) return false;
  ncc_value *x = inner->in[0];
  if (same_type(y, x)) return forward(g, y, x);
  if (n->op == NCC_OP_RESHAPE && reshape_target_is_free(n)) {
    n->in[0] = x;
    return true;
  }
  return false;
}

/* Binary ops with a neutral constant: x*1, 1*x, x/1 and x^1 are x exactly
 * (for every float including NaN, ±inf and -0). x+0, 0+x and x-0 are x
 * exactly except that x = -0.0 may come out as +0.0 (when the zero is
 * +0.0 for Add, -0.0 for Sub); the two compare equal, and this is the one
 * liberty the pass takes. All only when broadcasting against the constant
 * leaves x's shape and dtype unchanged (Mul([3], ones[2,3]) is a [2,3]). */
static bool rule_neutral(ncc_graph *g, ncc_node *n) {
  ncc_value *y = n->out[0], *a = n->in[0], *b = n->in[1];
  double one_or_zero;
  bool commutes;
  switch (n->op) {
  case NCC_OP_MUL: one_or_zero = 1; commutes = true; break;
  case NCC_OP_ADD: one_or_zero = 0; commutes = true; break;
  case NCC_OP_SUB: one_or_zero = 0; commutes = false; break;
  case NCC_OP_DIV:
  case NCC_OP_POW: one_or_zero = 1; commutes = false; break;
  default: return false;
  }
  if (same_type(y, a) && const_all(b, one_or_zero)) return forward(g, y, a);
  if (commutes && same_type(y, b) && const_all(a, one_or_zero))
    return forward(g, y, b);
  return false;
}

/* Pow(x, 2) -> Mul(x, x) for f32: the reference computes pow((double)x, 2),
 * which is x*x exactly (a 24-bit significand squared fits in 53 bits), and
 * rounds it to float once — the correctly rounded f32 product, which is
 * what Mul gives. Overflow, underflow, NaN and ±inf agree too. Not for f64,
 * where pow's result is not guaranteed to be the correctly rounded one. */
static bool rule_square(ncc_node *n) {
  ncc_value *y = n->out[0], *x = n->in[0];
  if (x->dtype != NCC_DT_F32 || !same_type(y, x) || !const_all(n->in[1], 2))
    return false;
  n->op = NCC_OP_MUL;
  n->in[1] = x;
  return true;
}

/* Slice keeps x when its output has x's shape and no step is negative:
 * with steps >= 1 an axis keeps all of its d elements only by starting at
 * 0 (or d <= 1), so every element stays in place; a negative step of a
 * full axis reverses it, which is why steps must be known. */
static bool rule_slice(ncc_graph *g, ncc_node *n) {
  ncc_value *y = n->out[0], *x = n->in[0];
  if (!same_type(y, x)) return false;
  if (n->n_in > 4 && n->in[4]) {
    int64_t st[NCC_MAX_RANK];
    int cnt;
    if (!int_elems(n->in[4], st, NCC_MAX_RANK, &cnt)) return false;
    for (int i = 0; i < cnt; i++)
      if (st[i] <= 0) return false;
  }
  return forward(g, y, x);
}

/* Pad by zero everywhere adds nothing. (Equal shapes alone are not enough:
 * pads [1, -1] on one axis shift the data.) */
static bool rule_pad(ncc_graph *g, ncc_node *n) {
  int64_t p[2 * NCC_MAX_RANK];
  int cnt;
  if (!int_elems(n->in[1], p, 2 * NCC_MAX_RANK, &cnt)) return false;
  for (int i = 0; i < cnt; i++)
    if (p[i] != 0) return false;
  return same_type(n->out[0], n->in[0]) && forward(g, n->out[0], n->in[0]);
}

/* Identity, Cast to the same dtype, Concat of one input and Expand to the
 * input's own shape copy x unchanged. */
static bool rule_copy(ncc_graph *g, ncc_node *n) {
  ncc_value *y = n->out[0], *x = n->in[0];
  switch (n->op) {
  case NCC_OP_IDENTITY: break;
  case NCC_OP_CAST:
  case NCC_OP_EXPAND:
    if (!same_type(y, x)) return false;
    break;
  case NCC_OP_CONCAT:
    if (n->n_in != 1 || !same_type(y, x)) return false;
    break;
  default: return false;
  }
  return forward(g, y, x);
}

/* Dropout outside training, and Sum/Mean of one input, copy x; Sum of
 * two f32 inputs is Add, which the backends compile (Sum runs on ref). */
static bool rule_logic(ncc_graph *g, ncc_node *n) {
  ncc_value *y = n->out[0], *x = n->in[0];
  if (n->op == NCC_OP_DROPOUT) {
    const ncc_value *t = n->n_in > 2 ? n->in[2] : NULL;
    if (t && !(t->kind == NCC_VAL_CONST && t->data && t->dtype == NCC_DT_BOOL &&
               ncc_shape_numel(&t->shape) == 1 && !*(const uint8_t *)t->data))
      return false;
    return same_type(y, x) && forward(g, y, x);
  }
  if (n->n_in == 1) return same_type(y, x) && forward(g, y, x);
  if (n->op == NCC_OP_SUM && n->n_in == 2 && y->dtype == NCC_DT_F32 && n->in[1]) {
    n->op = NCC_OP_ADD;
    return true;
  }
  return false;
}

static bool simplify_node(ncc_graph *g, ncc_node *n) {
  if (n->n_out != 1 || !n->out[0] || n->n_in < 1 || !n->in[0]) return false;
  switch (n->op) {
  case NCC_OP_IDENTITY:
  case NCC_OP_CAST:
  case NCC_OP_EXPAND:
  case NCC_OP_CONCAT: return rule_copy(g, n);
  case NCC_OP_SLICE: return rule_slice(g, n);
  case NCC_OP_PAD: return rule_pad(g, n);
  case NCC_OP_TRANSPOSE: return rule_transpose(g, n);
  case NCC_OP_RESHAPE:
  case NCC_OP_FLATTEN:
  case NCC_OP_SQUEEZE:
  case NCC_OP_UNSQUEEZE: return rule_view(g, n);
  case NCC_OP_POW: return rule_neutral(g, n) || rule_square(n);
  case NCC_OP_MUL:
  case NCC_OP_ADD:
  case NCC_OP_SUB:
  case NCC_OP_DIV: return n->n_in == 2 && n->in[1] && rule_neutral(g, n);
  case NCC_OP_DROPOUT:
  case NCC_OP_SUM:
  case NCC_OP_MEAN: return rule_logic(g, n);
  default: return false;
  }
}

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  int total = 0;
  /* A rewrite can expose another (a removed Identity between two
   * Transposes); sweep until nothing changes, within a bound. */
  for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    int done = 0;
    /* Dead nodes are DCE's business, not rewrites to count. */
    int *uses = ncc_count_uses(g);
    if (!uses) return NCC_ERR_NOMEM;
    for (int i = 0; i < g->n_nodes; i++) {
      ncc_node *n = g->nodes[i];
      if (n->n_out == 1 && n->out[0] && uses[n->out[0]->id] &&
          simplify_node(g, n))
        done++;
    }
    ncc_free(uses, 0);
    if (!done) break;
    total += done;
    if (ncc_dce(g) < 0) return NCC_ERR_NOMEM;
  }
  ctx->rewrites = total;
  ctx->changed = total > 0;
  return NCC_OK;
}

const ncc_pass ncc_pass_simplify = {
    .name = "simplify",
    .level = 1,
    .needs = "",
    .desc = "algebraic simplification: identity ops, transpose/reshape pairs, "
            "x*1, x+0, x^2 -> x*x",
    .run = run,
};
