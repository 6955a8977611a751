/* codegen/lower.h — lowering graph nodes to kernel IR (codegen/kir.h).
 *
 * Each kernel kind has one lowering file (lower_eltwise.c, ...) that fixes
 * the algorithm and chooses a schedule (loop order, parallel / vector marks)
 * for the target's vector width. A node without a lowering answers
 * NCC_ERR_UNSUPPORTED (no error message set) and runs on its reference
 * kernel instead.
 */
#ifndef NCC_LOWER_H
#define NCC_LOWER_H

#include "kir.h"

typedef struct ncc_lower_opts {
  int vector_width; /* f32 lanes the target prefers: 16, 8, 4 or 1 */
} ncc_lower_opts;

/* Whether some lowering handles this node (op, dtypes, shapes). */
bool ncc_lower_supports(const ncc_node *n);
/* Lower node `n`. `name` names the kernel (unique within a module). */
ncc_status ncc_lower_node(const ncc_node *n, const char *name,
                          const ncc_lower_opts *o, kir_kernel **out);

/* Per kind (the dispatcher above picks one). */
bool ncc_lower_eltwise_supports(const ncc_node *n);
ncc_status ncc_lower_eltwise(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out);

bool ncc_lower_transpose_supports(const ncc_node *n);
ncc_status ncc_lower_transpose(const ncc_node *n, const char *name,
                               const ncc_lower_opts *o, kir_kernel **out);
bool ncc_lower_matmul_supports(const ncc_node *n);
ncc_status ncc_lower_matmul(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out);

bool ncc_lower_reduce_supports(const ncc_node *n);
ncc_status ncc_lower_reduce(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out);

bool ncc_lower_conv_supports(const ncc_node *n);
ncc_status ncc_lower_conv(const ncc_node *n, const char *name,
                          const ncc_lower_opts *o, kir_kernel **out);

/* Shared helper: a dim of a declared shape as an i64 expression (a constant,
 * or the run-time value of its symbol). */
kir_expr *ncc_lower_dim(kir_kernel *k, int64_t d);

#endif /* NCC_LOWER_H */
