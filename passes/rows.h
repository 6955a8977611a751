/* passes/rows.h — row-wise nodes: reductions and normalizations over the
 * trailing axes of their input 0, which is then seen as [rows, R]. The one
 * legality rule shared by the fusion pass (which groups such nodes by their
 * row split) and the row-wise lowering (codegen/lower_reduce.c, one row per
 * iteration of a parallel loop).
 */
#ifndef NCC_ROWS_H
#define NCC_ROWS_H

#include "../ir/ir.h"

/* Whether node n works on rows of its input 0, reducing or normalizing its
 * dims [*first, rank): f32 input 0 and output 0, no other output, no 0 among
 * those dims, and
 *   ReduceSum/Mean/Max: constant i64 axes that are exactly the trailing
 *     ones (no axes input: all dims, unless noop_with_empty_axes);
 *   Softmax/LogSoftmax: axis the last one;
 *   LayerNormalization: from its axis, with a scale input. */
bool ncc_row_split(const ncc_node *n, int *first);

#endif /* NCC_ROWS_H */
