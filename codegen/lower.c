/* codegen/lower.c — dispatch from a graph node to its kernel lowering. */
#include "lower.h"

kir_expr *ncc_lower_dim(kir_kernel *k, int64_t d) {
  return ncc_dim_is_sym(d) ? kir_sym(k, ncc_dim_sym_id(d)) : kir_const_i(k, d);
}

ncc_status ncc_lower_finish(kir_kernel *k, ncc_status st, const char *what,
                            kir_kernel **out) {
  if (st == NCC_OK && !kir_ok(k))
    st = ncc_error(NCC_ERR_NOMEM, "out of memory lowering %s", what);
  if (st != NCC_OK) {
    kir_kernel_free(k);
    return st;
  }
  *out = k;
  return NCC_OK;
}

bool ncc_lower_plain(const ncc_node *n) {
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && n->in[i]->layout.kind != NCC_LAYOUT_PLAIN) return false;
  for (int i = 0; i < n->n_out; i++)
    if (n->out[i] && n->out[i]->layout.kind != NCC_LAYOUT_PLAIN) return false;
  return true;
}

bool ncc_lower_supports(const ncc_node *n) {
  /* the lowerings below index plain row-major data only */
  if (!ncc_lower_plain(n)) return ncc_lower_blocked_supports(n);
  return ncc_lower_eltwise_supports(n) || ncc_lower_matmul_supports(n) ||
         ncc_lower_reduce_supports(n) || ncc_lower_conv_supports(n) ||
         ncc_lower_transpose_supports(n);
}

ncc_status ncc_lower_node(const ncc_node *n, const char *name,
                          const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  if (!ncc_lower_plain(n)) {
    if (!ncc_lower_blocked_supports(n)) return NCC_ERR_UNSUPPORTED;
    return ncc_lower_blocked(n, name, o, out);
  }
  if (ncc_lower_eltwise_supports(n)) return ncc_lower_eltwise(n, name, o, out);
  if (ncc_lower_matmul_supports(n)) return ncc_lower_matmul(n, name, o, out);
  if (ncc_lower_reduce_supports(n)) return ncc_lower_reduce(n, name, o, out);
  if (ncc_lower_conv_supports(n)) return ncc_lower_conv(n, name, o, out);
  if (ncc_lower_transpose_supports(n)) return ncc_lower_transpose(n, name, o, out);
  return NCC_ERR_UNSUPPORTED;
}
