/* runtime/ref/ref_reduce2.c — reference kernels of ReduceL1, ReduceL2,
 * ReduceProd, ReduceMin, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
 *
 * Opset-18 semantics, like ReduceMean/Sum/Max (ref_norm.c): the axes are
 * input 1 (the importer converts the opset 13-17 attribute); none reduces
 * everything unless noop_with_empty_axes, where each
 * element is reduced alone (|x|, x^2, log x, ...). Floats are
 * accumulated in double (LogSumExp subtracts the maximum first); integer
 * L1, SumSquare and Prod wrap (unsigned 64-bit arithmetic cut to the
 * dtype's width), Min is exact (of bool: a logical and), L2/LogSum/
 * LogSumExp go through double.
 * The empty reduction gives the identity: 0 (L1, L2, SumSquare), 1 (Prod),
 * +inf or the type's maximum (Min), -inf (LogSum, LogSumExp).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ref.h"

/* Walks the input row-major keeping `off`, the output element each input
 * element reduces into (reduced dims have output stride 0). */
typedef struct r2_iter {
  int rank;
  int64_t dims[NCC_MAX_RANK], ostr[NCC_MAX_RANK], idx[NCC_MAX_RANK];
  int64_t off;
} r2_iter;

static void r2_next(r2_iter *it) {
  for (int i = it->rank - 1; i >= 0; i--) {
    it->off += it->ostr[i];
    if (++it->idx[i] < it->dims[i]) return;
    it->off -= it->ostr[i] * it->dims[i];
    it->idx[i] = 0;
  }
}

/* The reduced dims of x; *noop when nothing is reduced. */
static ncc_status r2_mask(const ncc_node *n, const ncc_tensor *const *in,
                          bool *mask, bool *noop) {
  const ncc_tensor *x = in[0], *ax = n->n_in > 1 ? in[1] : NULL;
  int64_t cnt = ax ? ncc_tensor_numel(ax) : 0;
  ncc_reduce_attrs ra;
  ncc_attrs_reduce(n, &ra);
  *noop = cnt == 0 && ra.noop_with_empty_axes;
  for (int i = 0; i < x->rank; i++) mask[i] = cnt == 0;
  for (int64_t i = 0; i < cnt; i++) {
    int64_t a = ncc_ref_get_i(ax, i);
    if (a < 0) a += x->rank;
    if (a < 0 || a >= x->rank)
      return ncc_node_error(n, NCC_ERR_INPUT, "axis %lld out of range", (long long)a);
    mask[a] = true;
  }
  return NCC_OK;
}

static ncc_status reduce2(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *y) {
  const ncc_tensor *x = in[0];
  bool mask[NCC_MAX_RANK], noop;
  ncc_status st = r2_mask(n, in, mask, &noop);
  if (st) return st;
  int64_t n_in = ncc_tensor_numel(x), n_out = ncc_tensor_numel(y);
  if (y->dtype != x->dtype)
    return ncc_node_error(n, NCC_ERR_INPUT, "output dtype differs from input");
  /* An empty reduction set still applies the elementwise steps (ONNX:
   * ReduceSumSquare squares, ReduceLogSum takes the log): each element is
   * reduced alone. */
  if (noop)
    for (int i = 0; i < x->rank; i++) mask[i] = false;
  r2_iter it = {.rank = x->rank};
  int64_t s = 1;
  for (int i = x->rank - 1; i >= 0; i--) {
    it.dims[i] = x->dims[i];
    it.ostr[i] = mask[i] ? 0 : s;
    if (!mask[i]) s = ncc_ref_dim_mul(s, x->dims[i]);
  }
  if (s != n_out)
    return ncc_node_error(n, NCC_ERR_INPUT, "output size does not match the axes");
  bool is_int = x->dtype == NCC_DT_I32 || x->dtype == NCC_DT_I64 ||
                x->dtype == NCC_DT_I8 || x->dtype == NCC_DT_U8 ||
                x->dtype == NCC_DT_BOOL; /* ReduceMin only: logical and */
  ncc_op op = n->op;
  bool wrap = is_int && (op == NCC_OP_REDUCEL1 || op == NCC_OP_REDUCESUMSQUARE ||
                         op == NCC_OP_REDUCEPROD || op == NCC_OP_REDUCEMIN);
  size_t bytes = (size_t)(n_out ? n_out : 1) * 8;
  double *acc = ncc_malloc(bytes), *mx = NULL;
  if (!acc) return NCC_ERR_NOMEM;
  uint64_t *iacc = (uint64_t *)(void *)acc; /* same storage, integer view */
  if (op == NCC_OP_REDUCELOGSUMEXP) {
    if (!(mx = ncc_malloc(bytes))) {
      ncc_free(acc, bytes);
      return NCC_ERR_NOMEM;
    }
    for (int64_t o = 0; o < n_out; o++) mx[o] = -INFINITY;
    for (int64_t i = 0; i < n_in; i++, r2_next(&it)) {
      double v = ncc_ref_get_f(x, i);
      if (v > mx[it.off] || isnan(v)) mx[it.off] = v;
    }
    memset(it.idx, 0, sizeof it.idx);
    it.off = 0;
  }
  for (int64_t o = 0; o < n_out; o++) {
    if (wrap)
      iacc[o] = op == NCC_OP_REDUCEPROD ? 1
                : op == NCC_OP_REDUCEMIN ? (uint64_t)INT64_MAX : 0;
    else
      acc[o] = op == NCC_OP_REDUCEPROD ? 1.0 : op == NCC_OP_REDUCEMIN ? INFINITY : 0.0;
  }
  for (int64_t i = 0; i < n_in; i++, r2_next(&it)) {
    int64_t o = it.off;
    if (wrap) {
      int64_t v = ncc_ref_get_i(x, i);
      uint64_t u = (uint64_t)v;
      switch (op) {
      case NCC_OP_REDUCEL1: iacc[o] += v < 0 ? 0 - u : u; break;
      case NCC_OP_REDUCESUMSQUARE: iacc[o] += u * u; break;
      case NCC_OP_REDUCEPROD: iacc[o] *= u; break;
      default: if (v < (int64_t)iacc[o]) iacc[o] = u; break; /* Min */
      }
      continue;
    }
    double v = ncc_ref_get_f(x, i);
    switch (op) {
    case NCC_OP_REDUCEL1: acc[o] += fabs(v); break;
    case NCC_OP_REDUCEL2:
    case NCC_OP_REDUCESUMSQUARE: acc[o] += v * v; break;
    case NCC_OP_REDUCEPROD: acc[o] *= v; break;
    case NCC_OP_REDUCEMIN:
      if (v < acc[o] || isnan(v)) acc[o] = v; /* NaN sticks, like numpy */
      break;
    case NCC_OP_REDUCELOGSUM: acc[o] += v; break;
    default: /* LogSumExp; an infinite maximum stays as it is */
      if (isfinite(mx[o])) acc[o] += exp(v - mx[o]);
      break;
    }
  }
  for (int64_t o = 0; o < n_out; o++) {
    if (wrap) {
      int64_t v = (int64_t)iacc[o];
      /* the empty Min gives the dtype's maximum */
      if (op == NCC_OP_REDUCEMIN && v == INT64_MAX)
        v = x->dtype == NCC_DT_I32 ? INT32_MAX : x->dtype == NCC_DT_I8 ? INT8_MAX
          : x->dtype == NCC_DT_U8 ? UINT8_MAX : INT64_MAX;
      ncc_ref_set_i(y, o, v);
      continue;
    }
    double v = acc[o];
    if (op == NCC_OP_REDUCEL2) v = sqrt(v);
    else if (op == NCC_OP_REDUCELOGSUM) v = log(v);
    else if (op == NCC_OP_REDUCELOGSUMEXP) v = isfinite(mx[o]) ? log(v) + mx[o] : mx[o];
    ncc_ref_set_f(y, o, v);
  }
  ncc_free(acc, bytes);
  if (mx) ncc_free(mx, bytes);
  return NCC_OK;
}

#define R2(ID)                                                                 \
  ncc_status ncc_ref_##ID(const ncc_node *n, const ncc_tensor *const *in,      \
                          ncc_tensor *out) {                                   \
    return reduce2(n, in, &out[0]);                                            \
  }
R2(REDUCEL1)
R2(REDUCEL2)
R2(REDUCEPROD)
R2(REDUCEMIN)
R2(REDUCELOGSUM)
R2(REDUCELOGSUMEXP)
R2(REDUCESUMSQUARE)
