/* ir/qdq.c — the elementwise form of QuantizeLinear / DequantizeLinear
 * (ir/qdq.h). The shape rules (ir/shape_quant.c) have checked the node;
 * this only picks the forms the compiled kernels take. */
#include "attrs.h"
#include "qdq.h"

static bool int8(ncc_dtype dt) { return dt == NCC_DT_U8 || dt == NCC_DT_I8; }

bool ncc_qdq_eltwise(const ncc_node *n, int *axis) {
  *axis = -1;
  bool q = n->op == NCC_OP_QUANTIZELINEAR;
  if ((!q && n->op != NCC_OP_DEQUANTIZELINEAR) || n->n_out != 1 || !n->out[0] ||
      n->n_in < 2 || !n->in[0] || !n->in[1])
    return false;
  const ncc_value *x = n->in[0], *s = n->in[1], *zp = n->n_in > 2 ? n->in[2] : NULL;
  const ncc_value *y = n->out[0];
  if (q ? x->dtype != NCC_DT_F32 || !int8(y->dtype)
        : !int8(x->dtype) || y->dtype != NCC_DT_F32)
    return false;
  if (s->dtype != NCC_DT_F32 || (zp && zp->dtype != (q ? y->dtype : x->dtype))) return false;
  ncc_quant_attrs qa;
  if (ncc_attrs_quant(n, &qa) || qa.block_size != 0) return false;
  int64_t ns = ncc_shape_numel(&s->shape);
  if (zp && (zp->shape.rank != s->shape.rank || ncc_shape_numel(&zp->shape) != ns))
    return false;
  if (s->shape.rank <= 1 && ns == 1) return true; /* per tensor */
  int r = x->shape.rank;
  if (s->shape.rank != 1 || r == 0) return false;
  int a = (int)(qa.axis < 0 ? qa.axis + r : qa.axis);
  if (a < 0 || a >= r || ncc_dim_is_sym(x->shape.d[a]) || s->shape.d[0] != x->shape.d[a])
    return false;
  *axis = a;
  return true;
}

ncc_shape ncc_qdq_operand_shape(const ncc_node *n, int axis, int i) {
  const ncc_value *v = n->in[i];
  if (axis < 0 || i == 0) return v->shape;
  ncc_shape s = n->out[0]->shape;
  for (int d = 0; d < s.rank; d++)
    if (d != axis) s.d[d] = 1;
  return s;
}
