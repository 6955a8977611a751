/* ir/einsum.h — an Einsum equation parsed once for shape inference and the
 * reference kernel: each operand's subscripts as label ids, ellipsis dims
 * expanded (right-aligned, numpy broadcasting), the output's labels
 * (explicit after "->", or implicit: the ellipsis, then the letters seen
 * exactly once, in ASCII order).
 */
#ifndef NCC_IR_EINSUM_H
#define NCC_IR_EINSUM_H

#include <stddef.h>

#include "ir.h"

#define NCC_EINSUM_MAX_IN 8
/* label ids: 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51, ellipsis dim k -> 52+k */
#define NCC_EINSUM_LABELS (52 + NCC_MAX_RANK)

typedef struct ncc_einsum {
  int n_in;
  int rank[NCC_EINSUM_MAX_IN];
  int lab[NCC_EINSUM_MAX_IN][NCC_MAX_RANK];
  int out_rank;
  int out_lab[NCC_MAX_RANK];
} ncc_einsum;

/* Parse `eq` for n_in operands of the given ranks; false with a message in
 * err (cap bytes) when the equation is malformed or does not fit them. */
bool ncc_einsum_parse(const char *eq, int n_in, const int *ranks, ncc_einsum *e,
                      char *err, size_t cap);

#endif /* NCC_IR_EINSUM_H */
