/* ir/index_data.h — the data-dependent ops' selections (Compress's count,
 * Unique, NonMaxSuppression), shared by shape inference (which sizes the
 * outputs from them when the inputs are constants at compile time) and the
 * reference kernels (which size and fill the outputs from the same
 * selection at run time), so both agree by construction.
 * docs/DYNAMIC-SHAPES.md.
 */
#ifndef NCC_IR_INDEX_DATA_H
#define NCC_IR_INDEX_DATA_H

#include "ir.h"

/* Element i of raw data of dtype dt as double (every ncc dtype). */
double ncc_idx_read(ncc_dtype dt, const void *data, int64_t i);

/* Number of nonzero elements among n. */
int64_t ncc_idx_count_nonzero(ncc_dtype dt, const void *data, int64_t n);

/* Unique slices of data viewed as [outer, len, inner] (slice j: every
 * element with middle index j; a flattened Unique is outer = inner = 1).
 * first[u] is the first occurrence of unique slice u (in output order:
 * ascending when sorted, else first-occurrence order), inverse[j] the
 * unique index of slice j, counts[u] its count; each array has len slots
 * (first/counts only the first *n_unique are used). NULL arrays are not
 * filled. Returns NCC_ERR_NOMEM when out of memory. */
ncc_status ncc_idx_unique(ncc_dtype dt, const void *data, int64_t outer, int64_t len,
                          int64_t inner, bool sorted, int64_t *first, int64_t *inverse,
                          int64_t *counts, int64_t *n_unique);

/* NonMaxSuppression over boxes [B,S,4] and scores [B,C,S] (f32 data):
 * the selected (batch, class, box) triples in ONNX order into sel (3 per
 * row, room for B*C*min(S, max_out) rows, may be NULL), their number in *n. */
typedef struct ncc_nms_params {
  int64_t batches, classes, boxes, max_out;
  double iou, score;
  bool center;
} ncc_nms_params;
ncc_status ncc_idx_nms(const ncc_nms_params *p, ncc_dtype dt, const void *boxes,
                       const void *scores, int64_t *sel, int64_t *n);

#endif /* NCC_IR_INDEX_DATA_H */
