/* ir/shape.h — shape (and small-content) inference, shared by the importer,
 * the verifier, passes and the reference interpreter.
 *
 * One function per node kind computes output dtypes and shapes from input
 * dtypes and shapes plus, when known, the content of small integer inputs
 * (shape tensors, axes, pads, Slice bounds) or raw constant data. With
 * symbolic inputs it works symbolically (N stays N through Shape -> Gather ->
 * Concat -> Reshape); at run time the interpreter calls it with concrete
 * data, so both agree by construction.
 */
#ifndef NCC_SHAPE_H
#define NCC_SHAPE_H

#include "ir.h"

typedef struct ncc_tinfo {
  ncc_dtype dtype; /* NCC_DT_UNDEF for an omitted optional input */
  ncc_shape shape;
  /* Content of integer tensors with <= NCC_CONTENT_MAX elements (row-major);
   * elements may be symbolic dims. content_len -1: unknown. */
  int content_len;
  int64_t content[NCC_CONTENT_MAX];
  /* Raw data when concretely known (constants; everything at run time). */
  const void *data;
} ncc_tinfo;

/* Infer `n`'s outputs. `g` supplies fresh symbols for dims that cannot be
 * known statically; with g == NULL such dims are an error (run time, where
 * everything is concrete). On error the message names the node. */
ncc_status ncc_infer_node(ncc_graph *g, const ncc_node *n, const ncc_tinfo *in,
                          ncc_tinfo *out);

/* Infer every node in order and store dtype, shape and content on the output
 * values (constants and inputs keep theirs; a constant's content is derived
 * from its data). */
ncc_status ncc_infer_graph(ncc_graph *g);

/* Fill a tinfo from a value (declared dtype/shape, content, const data). */
void ncc_tinfo_from_value(ncc_tinfo *t, const ncc_value *v);
/* Fill a tinfo from a concrete tensor (content from data when small int). */
void ncc_tinfo_from_tensor(ncc_tinfo *t, const ncc_tensor *x);

/* numpy broadcasting of two shapes (symbolic-aware). */
ncc_status ncc_broadcast_shapes(ncc_graph *g, const ncc_shape *a,
                                const ncc_shape *b, ncc_shape *out);

/* Infer the nodes from *next_node on, after the content of the constants
 * from *next_value on; both cursors end at the graph's counts. The ONNX
 * importer calls it while it still adds nodes, to learn the dtype or rank
 * of a value an older opset's node form needs (a Clip-6 `min` becomes a
 * constant of the input's dtype); ncc_infer_graph later infers everything
 * again, which keeps what was inferred here. */
ncc_status ncc_infer_graph_from(ncc_graph *g, int *next_value,
                                int *next_node);

#endif /* NCC_SHAPE_H */
