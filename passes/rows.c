/* passes/rows.c — the row split of row-wise nodes (passes/rows.h). */
#include "../ir/attrs.h"
#include "rows.h"

/* Whether the axes are exactly the trailing block [rank - n, rank). */
static bool trailing_axes(const int64_t *axes, int n, int rank) {
  bool seen[NCC_MAX_RANK] = {false};
  for (int i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || seen[a]) return false;
    seen[a] = true;
  }
  for (int a = rank - n; a < rank; a++)
    if (!seen[a]) return false;
  return true;
}

bool ncc_row_split(const ncc_node *n, int *first) {
  if (n->n_in < 1 || !n->in[0] || n->in[0]->dtype != NCC_DT_F32) return false;
  if (n->n_out < 1 || !n->out[0] || n->out[0]->dtype != NCC_DT_F32) return false;
  for (int i = 1; i < n->n_out; i++)
    if (n->out[i]) return false; /* LayerNorm's Mean / InvStdDev */
  const ncc_value *x = n->in[0];
  int r = x->shape.rank;
  switch (n->op) {
  case NCC_OP_REDUCESUM:
  case NCC_OP_REDUCEMEAN:
  case NCC_OP_REDUCEMAX: {
    const ncc_value *ax = n->n_in > 1 ? n->in[1] : NULL;
    if (!ax) {
      ncc_reduce_attrs ra;
      ncc_attrs_reduce(n, &ra);
      if (ra.noop_with_empty_axes) return false;
      *first = 0;
      break;
    }
    if (ax->kind != NCC_VAL_CONST || ax->dtype != NCC_DT_I64 || ax->shape.rank != 1 ||
        !ax->data)
      return false;
    int64_t na = ax->shape.d[0];
    /* empty axes: reduce-all or no-op, by noop_with_empty_axes */
    if (na < 1 || na > r || !trailing_axes(ax->data, (int)na, r)) return false;
    *first = r - (int)na;
    break;
  }
  case NCC_OP_SOFTMAX:
  case NCC_OP_LOGSOFTMAX: {
    int64_t a = ncc_attrs_axis(n);
    if (a < 0) a += r;
    if (r < 1 || a != r - 1) return false; /* inner stride 1 only */
    *first = r - 1;
    break;
  }
  case NCC_OP_LAYERNORM: {
    int64_t a = ncc_attrs_axis(n);
    if (a < 0) a += r;
    if (a < 0 || a >= r || n->n_in < 2 || !n->in[1]) return false;
    *first = (int)a;
    break;
  }
  default:
    return false;
  }
  /* a reduction over an empty row has no value (Max) or divides by 0 */
  for (int k = *first; k < r; k++)
    if (x->shape.d[k] == 0) return false;
  return true;
}
