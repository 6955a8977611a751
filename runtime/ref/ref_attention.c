/* runtime/ref/ref_attention.c — reference kernels of Attention and
 * RotaryEmbedding (opset 23). */
#include <math.h>
#include <string.h>

#include "ref.h"

ncc_status ncc_ref_ATTENTION(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  (void)in, (void)out;
  return ncc_node_error(n, NCC_ERR_UNSUPPORTED, "not yet");
}

ncc_status ncc_ref_ROTARYEMB(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  (void)in, (void)out;
  return ncc_node_error(n, NCC_ERR_UNSUPPORTED, "not yet");
}
