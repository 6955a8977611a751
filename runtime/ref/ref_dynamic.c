/* runtime/ref/ref_dynamic.c — reference kernels of the ops whose output
 * shapes depend on input values (NCC_OPF_DYNAMIC). Unlike every other
 * kernel they receive their outputs unallocated, with only the dtype set
 * from shape inference, and allocate them once the data says how large
 * they are (ncc_ref_alloc_out; docs/DYNAMIC-SHAPES.md). */
#include "ref.h"

ncc_status ncc_ref_alloc_out(ncc_tensor *t, int rank, const int64_t *dims) {
  NCC_ASSERT(t->data == NULL);
  if (t->dtype == NCC_DT_UNDEF) return NCC_OK; /* an omitted optional output */
  return ncc_tensor_alloc(t, t->dtype, rank, dims);
}

/* NonZero: the coordinates of the non-zero elements, one column per
 * element in row-major order. NaN and -0.0 compare as numbers do
 * (NaN != 0, -0.0 == 0); every dtype's non-zero values stay non-zero as
 * doubles, so one accessor serves them all. */
ncc_status ncc_ref_NONZERO(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  (void)n;
  const ncc_tensor *x = in[0];
  int64_t numel = ncc_tensor_numel(x), count = 0;
  for (int64_t i = 0; i < numel; i++) count += ncc_ref_get_f(x, i) != 0;
  int64_t dims[2] = {x->rank, count}; /* [0, count] for a scalar (shape_dynamic.c) */
  ncc_status st = ncc_ref_alloc_out(&out[0], 2, dims);
  if (st != NCC_OK) return st;
  int64_t *o = out[0].data;
  int64_t col = 0;
  for (int64_t i = 0; i < numel; i++) {
    if (ncc_ref_get_f(x, i) == 0) continue;
    int64_t rest = i; /* unravel i, last axis fastest */
    for (int d = x->rank - 1; d >= 0; d--) {
      o[(int64_t)d * count + col] = x->dims[d] ? rest % x->dims[d] : 0;
      rest = x->dims[d] ? rest / x->dims[d] : 0;
    }
    col++;
  }
  return NCC_OK;
}
