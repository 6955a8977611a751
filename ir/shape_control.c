/* ir/shape_control.c — the control-flow rules: If and Loop.
 *
 * A subgraph is a graph of its own (docs/IR.md "Subgraphs"): its inputs
 * are typed, it was inferred and verified when it was built, and the
 * values it reads from the enclosing graph arrive as explicit inputs (the
 * node's trailing inputs, its "captures"). These rules check that the
 * bodies fit the node (input and output counts, dtypes, ranks) and give
 * the node's outputs their types. An output dim the bodies do not fix —
 * the branch taken, the trip count, a dim that varies between iterations —
 * is data-dependent: a fresh symbol at compile time; at run time the
 * kernel (runtime/ref/ref_control.c) allocates the outputs itself.
 */
#include "attrs.h"
#include "shape_rule.h"

/* A dim of an output the kernel sizes: a fresh symbol at compile time,
 * NCC_DIM_DATA at run time (If and Loop are NCC_OPF_DYNAMIC: the kernel
 * allocates the real tensor, docs/DYNAMIC-SHAPES.md). */
static ncc_status dyn_dim(ictx *c, int64_t *d) { return ncc_si_fresh_dim(c, d); }

/* Body output shape s (in the body's symbols) in the node's graph: static
 * dims kept, symbolic ones data-dependent. */
static ncc_status outer_shape(ictx *c, const ncc_shape *s, ncc_shape *o) {
  o->rank = s->rank;
  for (int d = 0; d < s->rank; d++) {
    o->d[d] = s->d[d];
    ncc_status st;
    if (!is_static(s->d[d]) && (st = dyn_dim(c, &o->d[d]))) return st;
  }
  return NCC_OK;
}

/* A required GRAPH attribute. */
static ncc_status need_graph(ictx *c, const char *name, const ncc_graph **g) {
  *g = ncc_attr_graph(c->n, name);
  if (!*g) return ncc_si_fail(c, NCC_ERR_INPUT, "needs the subgraph attribute '%s'", name);
  return NCC_OK;
}

/* Input `i` of the node feeds input `j` of body `b`: same dtype and rank. */
static ncc_status feeds(ictx *c, const char *what, const ncc_graph *b, int j, int i) {
  const ncc_value *v = b->inputs[j];
  if (v->dtype != IN(c, i)->dtype || v->shape.rank != IN(c, i)->shape.rank)
    return ncc_si_fail(c, NCC_ERR_INPUT,
                       "%s input %d ('%s') is %s of rank %d, but the node gives "
                       "%s of rank %d (input %d)",
                       what, j, v->name, ncc_dtype_name(v->dtype), v->shape.rank,
                       ncc_dtype_name(IN(c, i)->dtype), IN(c, i)->shape.rank, i);
  return NCC_OK;
}

/* A scalar-like (one element) input of dtype dt. */
static ncc_status one_elem(ictx *c, int i, ncc_dtype dt, const char *what) {
  const ncc_tinfo *t = IN(c, i);
  if (t->dtype != dt)
    return ncc_si_fail(c, NCC_ERR_INPUT, "%s must be %s, not %s", what,
                       ncc_dtype_name(dt), ncc_dtype_name(t->dtype));
  for (int d = 0; d < t->shape.rank; d++)
    if (is_static(t->shape.d[d]) && t->shape.d[d] != 1)
      return ncc_si_fail(c, NCC_ERR_INPUT, "%s must hold one element", what);
  return NCC_OK;
}

ncc_status ncc_rule_if(ictx *c) {
  const ncc_graph *br[2];
  const char *names[2] = {"then_branch", "else_branch"};
  ncc_status st;
  if ((st = one_elem(c, 0, NCC_DT_BOOL, "the condition")) ||
      (st = need_graph(c, names[0], &br[0])) || (st = need_graph(c, names[1], &br[1])))
    return st;
  int n_cap = c->n->n_in - 1;
  for (int b = 0; b < 2; b++) {
    if (br[b]->n_inputs != n_cap)
      return ncc_si_fail(c, NCC_ERR_INPUT, "%s takes %d inputs, the node gives %d",
                         names[b], br[b]->n_inputs, n_cap);
    for (int j = 0; j < n_cap; j++)
      if ((st = feeds(c, names[b], br[b], j, 1 + j))) return st;
    if (br[b]->n_outputs != c->n->n_out)
      return ncc_si_fail(c, NCC_ERR_INPUT, "%s has %d outputs, the node %d", names[b],
                         br[b]->n_outputs, c->n->n_out);
  }
  for (int k = 0; k < c->n->n_out; k++) {
    const ncc_value *a = br[0]->outputs[k], *e = br[1]->outputs[k];
    if (a->dtype != e->dtype)
      return ncc_si_fail(c, NCC_ERR_INPUT, "output %d is %s in then_branch but %s in "
                         "else_branch", k, ncc_dtype_name(a->dtype), ncc_dtype_name(e->dtype));
    if (a->shape.rank != e->shape.rank)
      return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "output %d has rank %d in then_branch "
                         "but %d in else_branch (ncc needs one rank per value)",
                         k, a->shape.rank, e->shape.rank);
    ncc_shape o;
    if ((st = outer_shape(c, &a->shape, &o))) return st;
    for (int d = 0; d < o.rank; d++) /* where the branches differ: data */
      if (is_static(o.d[d]) && o.d[d] != e->shape.d[d] && (st = dyn_dim(c, &o.d[d])))
        return st;
    set_out(c, k, a->dtype, &o);
  }
  return NCC_OK;
}

ncc_status ncc_rule_loop(ictx *c) {
  const ncc_graph *b;
  ncc_status st;
  int64_t n_cap;
  if ((st = need_graph(c, "body", &b)) ||
      (st = ncc_attrs_get_int(c->n, "captures", 0, &n_cap)))
    return st;
  int n_in = c->n->n_in < 2 ? 2 : c->n->n_in; /* M and cond always count */
  if (n_cap < 0 || n_cap > n_in - 2)
    return ncc_si_fail(c, NCC_ERR_INPUT, "captures is %lld, the node has %d inputs",
                       (long long)n_cap, c->n->n_in);
  int n_carried = n_in - 2 - (int)n_cap;
  if (has_in(c, 0) && (st = one_elem(c, 0, NCC_DT_I64, "the trip count M"))) return st;
  if (has_in(c, 1) && (st = one_elem(c, 1, NCC_DT_BOOL, "the condition"))) return st;
  for (int i = 2; i < n_in; i++)
    if (!has_in(c, i))
      return ncc_si_fail(c, NCC_ERR_INPUT, "input %d (a loop-carried or outer value) is "
                         "missing", i);
  if (b->n_inputs != n_in)
    return ncc_si_fail(c, NCC_ERR_INPUT, "the body takes %d inputs, the node gives "
                       "%d (iteration, condition, %d carried, %lld outer)",
                       b->n_inputs, n_in, n_carried, (long long)n_cap);
  int n_scan = b->n_outputs - 1 - n_carried;
  if (n_scan < 0)
    return ncc_si_fail(c, NCC_ERR_INPUT, "the body has %d outputs, fewer than the "
                       "condition and %d carried values", b->n_outputs, n_carried);
  if (c->n->n_out > n_carried + n_scan)
    return ncc_si_fail(c, NCC_ERR_INPUT, "has %d outputs, the body gives %d carried "
                       "and %d scan outputs", c->n->n_out, n_carried, n_scan);
  /* body inputs: iteration (i64), condition (bool), carried, captures */
  const ncc_value *it = b->inputs[0], *cv = b->inputs[1], *co = b->outputs[0];
  if (it->dtype != NCC_DT_I64 || ncc_shape_numel(&it->shape) > 1 ||
      cv->dtype != NCC_DT_BOOL || ncc_shape_numel(&cv->shape) > 1 ||
      co->dtype != NCC_DT_BOOL || ncc_shape_numel(&co->shape) > 1)
    return ncc_si_fail(c, NCC_ERR_INPUT, "the body's iteration number must be an i64 "
                       "scalar and its condition in and out bool scalars");
  for (int j = 2; j < n_in; j++)
    if ((st = feeds(c, "the body", b, j, j))) return st;
  for (int k = 0; k < n_carried; k++) {
    const ncc_value *o = b->outputs[1 + k];
    if (o->dtype != IN(c, 2 + k)->dtype || o->shape.rank != IN(c, 2 + k)->shape.rank)
      return ncc_si_fail(c, NCC_ERR_INPUT, "the body turns loop-carried value %d from "
                         "%s of rank %d into %s of rank %d", k,
                         ncc_dtype_name(IN(c, 2 + k)->dtype), IN(c, 2 + k)->shape.rank,
                         ncc_dtype_name(o->dtype), o->shape.rank);
  }
  for (int k = 0; k < c->n->n_out; k++) {
    const ncc_value *o = b->outputs[1 + k];
    ncc_shape s;
    if (k < n_carried) { /* the final value: the initial one's, unless it varies */
      s = IN(c, 2 + k)->shape;
      for (int d = 0; d < s.rank; d++)
        if (!(is_static(s.d[d]) && s.d[d] == o->shape.d[d] &&
              b->inputs[2 + k]->shape.d[d] == s.d[d]) &&
            (st = dyn_dim(c, &s.d[d])))
          return st;
    } else { /* a scan output: [iterations, per-iteration shape] */
      ncc_shape per;
      if ((st = ncc_si_check_out_rank(c, o->shape.rank + 1)) ||
          (st = outer_shape(c, &o->shape, &per)))
        return st;
      s.rank = per.rank + 1;
      if ((st = dyn_dim(c, &s.d[0]))) return st;
      for (int d = 0; d < per.rank; d++) s.d[d + 1] = per.d[d];
    }
    set_out(c, k, o->dtype, &s);
  }
  return NCC_OK;
}

/* Scan's axes attribute `name` (count entries, default 0), each normalized
 * against the rank of its tensor (ranks[i]). */
static ncc_status scan_axes(ictx *c, const char *name, int count, const int *ranks,
                            int *axes) {
  int n = 0;
  const int64_t *v = ncc_attr_ints(c->n, name, &n);
  if (v && n != count)
    return ncc_si_fail(c, NCC_ERR_INPUT, "%s has %d entries, expected %d", name, n, count);
  for (int i = 0; i < count; i++) {
    int64_t a = v ? v[i] : 0;
    if (a < -ranks[i] || a >= ranks[i])
      return ncc_si_fail(c, NCC_ERR_INPUT, "%s[%d] is %lld, outside the rank %d", name, i,
                         (long long)a, ranks[i]);
    axes[i] = (int)(a < 0 ? a + ranks[i] : a);
  }
  return NCC_OK;
}

/* Directions are 0 (forward) or 1 (reverse). */
static ncc_status scan_dirs(ictx *c, const char *name, int count) {
  int n = 0;
  const int64_t *v = ncc_attr_ints(c->n, name, &n);
  if (v && n != count)
    return ncc_si_fail(c, NCC_ERR_INPUT, "%s has %d entries, expected %d", name, n, count);
  for (int i = 0; v && i < count; i++)
    if (v[i] != 0 && v[i] != 1)
      return ncc_si_fail(c, NCC_ERR_INPUT, "%s[%d] must be 0 or 1", name, i);
  return NCC_OK;
}

ncc_status ncc_rule_scan(ictx *c) {
  const ncc_graph *b;
  ncc_status st;
  int64_t n_scan_in, n_cap;
  if ((st = need_graph(c, "body", &b)) ||
      (st = ncc_attrs_get_int(c->n, "num_scan_inputs", -1, &n_scan_in)) ||
      (st = ncc_attrs_get_int(c->n, "captures", 0, &n_cap)))
    return st;
  int n_in = c->n->n_in;
  if (n_cap < 0 || n_cap > n_in || n_scan_in < 1 || n_scan_in > n_in - n_cap)
    return ncc_si_fail(c, NCC_ERR_INPUT, "num_scan_inputs %lld (captures %lld) does not fit "
                       "%d inputs", (long long)n_scan_in, (long long)n_cap, n_in);
  int M = (int)n_scan_in, N = n_in - M - (int)n_cap;
  if (b->n_inputs != n_in)
    return ncc_si_fail(c, NCC_ERR_INPUT, "the body takes %d inputs, the node gives %d "
                       "(%d states, %d scan inputs, %lld outer)", b->n_inputs, n_in, N, M,
                       (long long)n_cap);
  int K = b->n_outputs - N;
  if (K < 0 || c->n->n_out > N + K)
    return ncc_si_fail(c, NCC_ERR_INPUT, "the body has %d outputs for %d states; the node "
                       "has %d", b->n_outputs, N, c->n->n_out);
  int ranks[64], axes[64];
  if (M > 64 || K > 64)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "more than 64 scan inputs or outputs");
  for (int i = 0; i < M; i++) ranks[i] = rank_of(c, N + i);
  if ((st = scan_axes(c, "scan_input_axes", M, ranks, axes)) ||
      (st = scan_dirs(c, "scan_input_directions", M)) ||
      (st = scan_dirs(c, "scan_output_directions", K)))
    return st;
  int64_t seq = IN(c, N)->shape.d[axes[0]];
  for (int i = 0; i < M; i++) {
    const ncc_value *v = b->inputs[N + i];
    if (v->dtype != IN(c, N + i)->dtype || v->shape.rank != ranks[i] - 1)
      return ncc_si_fail(c, NCC_ERR_INPUT, "body input %d ('%s') must be a slice of scan "
                         "input %d (%s of rank %d)", N + i, v->name, i,
                         ncc_dtype_name(IN(c, N + i)->dtype), ranks[i] - 1);
    if (!ncc_si_merge_dim(c->g, seq, IN(c, N + i)->shape.d[axes[i]], &seq))
      return ncc_si_fail(c, NCC_ERR_INPUT, "the scan inputs have different lengths");
  }
  for (int j = 0; j < N; j++)
    if ((st = feeds(c, "the body", b, j, j))) return st;
  for (int j = N + M; j < n_in; j++)
    if ((st = feeds(c, "the body", b, j, j))) return st;
  for (int k = 0; k < N; k++) {
    const ncc_value *o = b->outputs[k];
    if (o->dtype != IN(c, k)->dtype || o->shape.rank != IN(c, k)->shape.rank)
      return ncc_si_fail(c, NCC_ERR_INPUT, "the body turns state %d from %s of rank %d "
                         "into %s of rank %d", k, ncc_dtype_name(IN(c, k)->dtype),
                         IN(c, k)->shape.rank, ncc_dtype_name(o->dtype), o->shape.rank);
  }
  for (int k = 0; k < K; k++) ranks[k] = b->outputs[N + k]->shape.rank + 1;
  if ((st = scan_axes(c, "scan_output_axes", K, ranks, axes))) return st;
  for (int k = 0; k < c->n->n_out; k++) {
    const ncc_value *o = b->outputs[k];
    ncc_shape s;
    if (k < N) {
      s = IN(c, k)->shape;
      for (int d = 0; d < s.rank; d++)
        if (!(is_static(s.d[d]) && s.d[d] == o->shape.d[d]) && (st = dyn_dim(c, &s.d[d])))
          return st;
    } else {
      ncc_shape per;
      int a = axes[k - N];
      if ((st = ncc_si_check_out_rank(c, o->shape.rank + 1)) ||
          (st = outer_shape(c, &o->shape, &per)))
        return st;
      s.rank = per.rank + 1;
      for (int d = 0, e = 0; d < s.rank; d++) s.d[d] = d == a ? seq : per.d[e++];
    }
    set_out(c, k, o->dtype, &s);
  }
  return NCC_OK;
}
