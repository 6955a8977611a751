/* runtime/ref/ref_layout.c — blocked layouts in the reference interpreter.
 *
 * A value with layout #nchw<k>c keeps its logical NCHW shape but is stored
 * [N][C/k][H][W][k] (ir/verify.c makes C a static multiple of k, so the
 * storage has exactly the logical size). Reference kernels only know plain
 * row-major data, so ncc_ref_run_kernel converts around them: blocked inputs
 * are unblocked into temporaries, the kernel runs on plain data, and outputs
 * whose value is blocked are blocked in place afterwards. That makes every
 * op correct on every layout (the oracle for the layout pass), and Reorder
 * itself is just a copy of its logical values.
 */
#include <string.h>

#include "ref.h"

void ncc_ref_relayout(const void *src, void *dst, const int64_t *dims, int block,
                      size_t esize, bool to_blocked) {
  int64_t N = dims[0], C = dims[1], HW = dims[2] * dims[3];
  int64_t CB = C / block;
  const char *s = src;
  char *d = dst;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t p = 0; p < HW; p++) {
        int64_t plain = (n * C + c) * HW + p;
        int64_t blk = ((n * CB + c / block) * HW + p) * block + c % block;
        int64_t from = to_blocked ? plain : blk, to = to_blocked ? blk : plain;
        memcpy(d + (size_t)to * esize, s + (size_t)from * esize, esize);
      }
}

ncc_status ncc_ref_REORDER(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  (void)n; /* the layouts are converted around it (ncc_ref_run_kernel) */
  if (ncc_tensor_nbytes(out)) memcpy(out->data, in[0]->data, ncc_tensor_nbytes(out));
  return NCC_OK;
}

static bool any_blocked(const ncc_node *n) {
  for (int i = 0; i < n->n_in; i++)
    if (ncc_value_block(n->in[i])) return true;
  for (int i = 0; i < n->n_out; i++)
    if (ncc_value_block(n->out[i])) return true;
  return false;
}

static ncc_status relayout_copy(const ncc_tensor *src, ncc_tensor *dst, int block,
                                bool to_blocked) {
  if (src->rank != 4 || src->dims[1] % block != 0)
    return ncc_error(NCC_ERR_INTERNAL, "a blocked value is not NCHW with C %% %d == 0",
                     block);
  ncc_status st = ncc_tensor_alloc(dst, src->dtype, src->rank, src->dims);
  if (st) return st;
  if (ncc_tensor_numel(src) > 0)
    ncc_ref_relayout(src->data, dst->data, src->dims, block, ncc_dtype_size(src->dtype),
                     to_blocked);
  return NCC_OK;
}

ncc_status ncc_ref_run_kernel(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out) {
  if (!any_blocked(n)) return ncc_ref_kernels[n->op](n, in, out);
  int ni = n->n_in > 0 ? n->n_in : 1;
  ncc_tensor *tmp = ncc_calloc((size_t)ni, sizeof *tmp);
  const ncc_tensor **kin = ncc_calloc((size_t)ni, sizeof *kin);
  ncc_status st = tmp && kin ? NCC_OK : NCC_ERR_NOMEM;
  for (int i = 0; i < n->n_in && !st; i++) {
    kin[i] = in[i];
    if (ncc_value_block(n->in[i]) && in[i])
      if (!(st = relayout_copy(in[i], &tmp[i], ncc_value_block(n->in[i]), false)))
        kin[i] = &tmp[i];
  }
  if (!st) st = ncc_ref_kernels[n->op](n, kin, out);
  for (int j = 0; j < n->n_out && !st; j++) {
    if (!ncc_value_block(n->out[j]) || !out[j].data) continue;
    ncc_tensor b;
    if ((st = relayout_copy(&out[j], &b, ncc_value_block(n->out[j]), true))) break;
    memcpy(out[j].data, b.data, ncc_tensor_nbytes(&b));
    ncc_tensor_free(&b);
  }
  for (int i = 0; tmp && i < n->n_in; i++) ncc_tensor_free(&tmp[i]);
  ncc_free(tmp, 0);
  ncc_free((void *)kin, 0);
  return st;
}
