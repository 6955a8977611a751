/* ir/size.c — checked size arithmetic for everything sized from dims.
 *
 * Dims come from models and from callers (an empty input may carry a huge
 * dim next to a 0), so a product of dims must never wrap: a wrapped size
 * allocates a small buffer that a kernel then writes past. Kernels index
 * with int64 and subtract pointers, so the limit is the smallest of
 * SIZE_MAX, PTRDIFF_MAX and INT64_MAX, not just SIZE_MAX. Kernels also
 * multiply dims of empty tensors (strides, batch counts), so the tensors
 * ncc accepts keep the product of their nonzero dims in range too
 * (ncc_dims_numel): [2^62, 0] is fine, [2^62, 2^62, 0] is not.
 */
#include "ir.h"

bool ncc_size_mul(size_t a, size_t b, size_t *out) {
  if (a && b > NCC_SIZE_LIMIT / a) return false;
  *out = a * b;
  return true;
}

bool ncc_size_add(size_t a, size_t b, size_t *out) {
  if (a > NCC_SIZE_LIMIT || b > NCC_SIZE_LIMIT - a) return false;
  *out = a + b;
  return true;
}

bool ncc_dims_numel(int rank, const int64_t *dims, size_t *out) {
  /* the product of the nonzero dims must fit even when a 0 makes the
   * tensor empty: kernels still form strides and counts from them */
  size_t n = 1;
  bool empty = false;
  for (int d = 0; d < rank; d++) {
    if (dims[d] < 0) return false;
    if (dims[d] == 0)
      empty = true;
    else if ((uint64_t)dims[d] > NCC_SIZE_LIMIT || !ncc_size_mul(n, (size_t)dims[d], &n))
      return false;
  }
  *out = empty ? 0 : n;
  return true;
}

bool ncc_dims_nbytes(size_t esize, int rank, const int64_t *dims, size_t *out) {
  size_t n;
  return ncc_dims_numel(rank, dims, &n) && ncc_size_mul(n, esize, out);
}
