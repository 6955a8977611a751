/* codegen/lower.c — the dispatchers: from a graph node, and from a fused
 * group (passes/fusion.h), to the lowering of its kind (lower_<kind>.c).
 * The kinds call only the shared helpers (lower_util.c, lower_formula.c,
 * lower_gx.c), never back into a dispatcher or another kind. */
#include "lower.h"

bool ncc_lower_supports(const ncc_node *n) {
  /* the lowerings below index plain row-major data only */
  if (!ncc_lower_plain(n)) return ncc_lower_blocked_supports(n);
  return ncc_lower_eltwise_supports(n) || ncc_lower_matmul_supports(n) ||
         ncc_lower_qmatmul_supports(n) || ncc_lower_qbmm_supports(n) ||
         ncc_lower_reduce_supports(n) || ncc_lower_conv_supports(n) ||
         ncc_lower_transpose_supports(n) || ncc_lower_reshape_supports(n) ||
         ncc_lower_concat_supports(n);
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
  if (ncc_lower_qmatmul_supports(n)) return ncc_lower_qmatmul(n, name, o, out);
  if (ncc_lower_qbmm_supports(n)) return ncc_lower_qbmm(n, name, o, out);
  if (ncc_lower_reduce_supports(n)) return ncc_lower_reduce(n, name, o, out);
  if (ncc_lower_conv_supports(n)) return ncc_lower_conv(n, name, o, out);
  if (ncc_lower_transpose_supports(n)) return ncc_lower_transpose(n, name, o, out);
  if (ncc_lower_reshape_supports(n)) return ncc_lower_reshape(n, name, o, out);
  if (ncc_lower_concat_supports(n)) return ncc_lower_concat(n, name, o, out);
  return NCC_ERR_UNSUPPORTED;
}

ncc_status ncc_lower_group(const ncc_fuse_group *gr, const char *name,
                           const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  if (gr->n_members < 2 || gr->n_ext > NCC_FUSE_MAX_EXT) return NCC_ERR_UNSUPPORTED;
  bool plain = true;
  for (int m = 0; m < gr->n_members; m++) plain = plain && ncc_lower_plain(gr->members[m]);
  if (!plain) return ncc_lower_blocked_group(gr, name, o, out);
  switch (gr->kind) {
  case NCC_FUSE_ELTWISE: return ncc_lower_eltwise_group(gr, name, o, out);
  case NCC_FUSE_REDUCE: return ncc_lower_reduce_group(gr, name, o, out);
  case NCC_FUSE_EPILOGUE: {
    int am = ncc_fuse_anchor(gr);
    if (am < 0) return NCC_ERR_UNSUPPORTED;
    const ncc_node *a = gr->members[am];
    if (ncc_lower_matmul_supports(a)) return ncc_lower_matmul_ep(a, name, o, gr, out);
    if (a->op == NCC_OP_CONV && ncc_lower_conv_supports(a))
      return ncc_lower_conv_ep(a, name, o, gr, out);
    return NCC_ERR_UNSUPPORTED;
  }
  default:
    return NCC_ERR_UNSUPPORTED;
  }
}
