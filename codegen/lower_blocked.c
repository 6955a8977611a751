/* codegen/lower_blocked.c — kernels on blocked (#nchw<k>c) values.
 * (Being written: until then every such node runs on its reference kernel,
 * which converts layouts around it.) */
#include "lower.h"

bool ncc_lower_blocked_supports(const ncc_node *n) {
  (void)n;
  return false;
}

ncc_status ncc_lower_blocked(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out) {
  (void)n, (void)name, (void)o;
  *out = NULL;
  return NCC_ERR_UNSUPPORTED;
}

ncc_status ncc_lower_blocked_group(const ncc_fuse_group *gr, const char *name,
                                   const ncc_lower_opts *o, kir_kernel **out) {
  (void)gr, (void)name, (void)o;
  *out = NULL;
  return NCC_ERR_UNSUPPORTED;
}
