/* runtime/ref/ref.h — the reference interpreter's kernel interface.
 *
 * Every op in ir/ops.def has exactly one kernel, `ncc_ref_<ID>` (e.g.
 * ncc_ref_ADD, ncc_ref_CONV); the table in ref_table.c is expanded from
 * ops.def, so a missing kernel is a link error. A kernel receives its inputs
 * (NULL for omitted optional ones) and outputs already allocated with the
 * dtypes and shapes that ncc_infer_node computed; it only fills data. The
 * interpreter defines the semantics every backend is checked against:
 * clarity and exactness first (libm, double accumulation where cheap), then
 * enough speed to run a ResNet-18-sized model in seconds.
 */
#ifndef NCC_REF_H
#define NCC_REF_H

#include "../../ir/attrs.h"
#include "../../ir/ir.h"

typedef ncc_status (*ncc_ref_kernel)(const ncc_node *n,
                                     const ncc_tensor *const *in,
                                     ncc_tensor *out);

#define NCC_OP(id, nm, mi, ma, mo, mao, fl, rule)                              \
  ncc_status ncc_ref_##id(const ncc_node *n, const ncc_tensor *const *in,      \
                          ncc_tensor *out);
#include "../../ir/ops.def"
#undef NCC_OP

extern const ncc_ref_kernel ncc_ref_kernels[NCC_OP_COUNT];

/* Run n's reference kernel on tensors stored in the layouts of n's values:
 * blocked (#nchw<k>c) inputs are unblocked first and blocked outputs
 * blocked after (ref_layout.c). Every caller of a reference kernel uses it. */
ncc_status ncc_ref_run_kernel(const ncc_node *n, const ncc_tensor *const *in,
                              ncc_tensor *out);
/* Convert an NCHW tensor (dims[0..3]) between plain and [N][C/k][H][W][k]
 * storage; src and dst do not overlap. */
void ncc_ref_relayout(const void *src, void *dst, const int64_t *dims, int block,
                      size_t esize, bool to_blocked);

/* An NCC_OPF_DYNAMIC op's kernel gets its outputs unallocated (dtype set,
 * data NULL) and sizes each with this once it knows the dims; an omitted
 * optional output (dtype UNDEF) stays empty. Every executor relies on
 * ncc_ref_allocates_outputs to know which nodes these are. */
ncc_status ncc_ref_alloc_out(ncc_tensor *t, int rank, const int64_t *dims);
static inline bool ncc_ref_allocates_outputs(const ncc_node *n) {
  return (ncc_op_table[n->op].flags & NCC_OPF_DYNAMIC) != 0;
}

/* Helpers shared by kernel files. */
/* Element i of a numeric tensor converted to double / int64. */
double ncc_ref_get_f(const ncc_tensor *t, int64_t i);
int64_t ncc_ref_get_i(const ncc_tensor *t, int64_t i);
void ncc_ref_set_f(ncc_tensor *t, int64_t i, double v);
void ncc_ref_set_i(ncc_tensor *t, int64_t i, int64_t v);
/* Row-major strides of t (elements); broadcast strides of t aligned to a
 * result of rank `rank` with size-1 (or missing) dims given stride 0. */
void ncc_ref_strides(const ncc_tensor *t, int64_t *strides);
/* a * b for sub-products of one tensor's dims (strides, reduction
 * counts): these can only overflow when the tensor is empty (a 0 among
 * its other dims), where no element is touched, so an overflow gives 0
 * instead of undefined behaviour. */
int64_t ncc_ref_dim_mul(int64_t a, int64_t b);
void ncc_ref_bcast_strides(const ncc_tensor *t, int rank, const int64_t *dims,
                           int64_t *strides);

#endif /* NCC_REF_H */
