/* frontend/frontend.h — what the ONNX importer's files share (internal).
 *
 * The importer is split by concern: onnx_import.c drives the import (bytes ->
 * protobuf-c message -> values, topologically sorted nodes, inference),
 * onnx_tensor.c turns ONNX element types, type protos and tensor protos into
 * ncc dtypes, shapes and constant data, and onnx_ops.c converts attributes,
 * checks them against each op's ONNX schema and upgrades opset 13-20 forms
 * to the opset-21 canonical form of docs/IR-CONVENTIONS.md, and
 * onnx_opsets.c does the same for the forms only opsets 7-12 have.
 *
 * Every function here reports a problem with ncc_error() and returns its
 * status; the caller (ncc_graph_import_onnx_buffer) adds the file name.
 * Strings from the model are printed with "%.*s"-style bounds (ONNX_NAME)
 * so that a hostile name cannot crowd the rest of a message out.
 */
#ifndef NCC_FRONTEND_H
#define NCC_FRONTEND_H

#include "ir/ir.h"
#include "onnx.pb-c.h"

/* Opsets of the default domain the importer reads. 28 is the newest of
 * onnx 1.23; the ops of ncc that changed after 21 are handled per opset in
 * onnx_ops.c (Cast round_mode, Range stash_type; the others only gained
 * types ncc does not have, which the dtype checks refuse). 7 is the oldest
 * onnxruntime reads; the 7-12 forms are rewritten in onnx_opsets.c. */
#define ONNX_OPSET_MIN 7
#define ONNX_OPSET_MAX 28

/* Largest tensor (bytes) and single dim a model may declare; anything larger
 * is taken for a corrupt model rather than attempted (same bound as
 * ncc_tensor_alloc). */
#define ONNX_MAX_BYTES ((int64_t)1 << 36)

/* printf bound for names taken from the model. */
#define ONNX_NAME "%.200s"

/* "" for a NULL protobuf string (proto2 optional strings may be NULL). */
static inline const char *onnx_str(const char *s) { return s ? s : ""; }

/* ---- onnx_import.c ---- */

/* Prefix the current error message with a file name. Unlike a bare
 * ncc_error_prefix, the result is re-issued through ncc_error, so it stays
 * one line whatever the file name or an earlier prefix (node names from the
 * model, added by shape inference) contains. */
void ncc_frontend_error_file(const char *name);

/* Whether a domain string names the default ONNX domain. */
bool onnx_is_default_domain(const char *d);
/* com.microsoft: ONNX Runtime's contrib ops (NCC_OPF_CONTRIB rows) */
bool onnx_is_contrib_domain(const char *d);
/* The ncc op of a node, or NCC_OP_COUNT when
 * ncc has none: another domain, an unknown op type, an internal ncc op. */
ncc_op onnx_node_op(const Onnx__NodeProto *np);
/* The whole file, ncc_malloc'd (free with ncc_free(buf, 0)). */
ncc_status onnx_read_file(const char *path, uint8_t **buf, size_t *len);
/* Bytes -> decoded model (nesting checked first); free with
 * onnx_model_free. A malformed model is NCC_ERR_INPUT. */
ncc_status onnx_unpack(const uint8_t *buf, size_t len, Onnx__ModelProto **out);
void onnx_model_free(Onnx__ModelProto *m);

/* ---- onnx_tensor.c ---- */

/* The ONNX name of a TensorProto.DataType code ("BFLOAT16"), NULL for 0 or
 * an unknown code. */
const char *onnx_type_name(int64_t code);

/* ONNX TensorProto.DataType code -> ncc dtype. `what` names the thing that
 * has the type ("input 'x'"): code 0 or an unknown code is NCC_ERR_INPUT, a
 * known type ncc lacks (string, bfloat16, ...) NCC_ERR_UNSUPPORTED. */
ncc_status onnx_dtype(int64_t code, const char *what, ncc_dtype *out);

/* A TypeProto as declared for a graph input, output or value_info.
 * `*has_shape` is false when no shape is given (unknown rank). With
 * `make_syms`, dim_param names become named symbols of `g` and absent dims
 * fresh symbols; without, every non-static dim is -1 (unknown). */
ncc_status onnx_value_type(ncc_graph *g, const Onnx__TypeProto *tp,
                           const char *what, bool make_syms, ncc_dtype *dt,
                           ncc_shape *shape, bool *has_shape);

/* Dtype and (static) shape of a tensor proto, checked for size, and for
 * external data, which ncc does not read. */
ncc_status onnx_tensor_header(const Onnx__TensorProto *t, const char *what,
                              ncc_dtype *dt, ncc_shape *shape);
/* Decode the tensor's elements into `dst` (numel elements of `dt`, as
 * returned by onnx_tensor_header) from raw_data or the typed field. */
ncc_status onnx_tensor_data(const Onnx__TensorProto *t, const char *what,
                            ncc_dtype dt, int64_t numel, void *dst);
/* Both, into an arena-allocated ncc_const of `g`. */
ncc_status onnx_tensor_to_const(ncc_graph *g, const Onnx__TensorProto *t,
                                const char *what, ncc_const *out);
/* A constant value named `name` (NULL: a fresh name) holding the tensor. */
ncc_status onnx_tensor_to_value(ncc_graph *g, const Onnx__TensorProto *t,
                                const char *name, const char *what,
                                ncc_value **out);
/* The same for a tensor read exactly once (a main-graph initializer):
 * raw_data big enough to matter is taken over, not copied, and t keeps
 * no data (the decoded model must not be read for it again). */
ncc_status onnx_tensor_take_value(ncc_graph *g, Onnx__TensorProto *t,
                                  const char *name, const char *what,
                                  ncc_value **out);

/* ---- onnx_ops.c ---- */

/* One node being built: onnx_import.c fills the inputs and converted
 * attributes, onnx_upgrade_node rewrites them into the canonical form. */
typedef struct onnx_node_build onnx_node_build;
struct onnx_node_build {
  ncc_graph *g;
  const Onnx__NodeProto *np;
  const char *label; /* "node 'name'" or "node #3 (Op)" for messages */
  ncc_op op;
  int64_t opset;
  ncc_value **in; /* capacity cap_in (upgrades add inputs) */
  int n_in, cap_in;
  ncc_attr *attrs; /* arena array, capacity np->n_attribute +
                      ONNX_EXTRA_ATTRS (upgrades add attributes) */
  int n_attrs;
  int n_out; /* outputs named by the node (trailing empty ones dropped) */
  /* Cursors of ncc_infer_graph_from over the graph built so far, for an
   * upgrade that needs the dtype or rank of an input. */
  int *infer_value, *infer_node;
  /* An upgrade that wraps the node in others sets out0 (a fresh value the
   * node writes instead of its first ONNX output) and finish, which the
   * importer calls once the node is in the graph to add the nodes after
   * it; out_final is the ONNX output and aux what finish needs. */
  ncc_value *out0, *out_final, *aux;
  ncc_status (*finish)(onnx_node_build *b, ncc_node *n);
};

/* Inputs and attributes an upgrade may add to a node (Slice-1's three
 * attributes become inputs; Resize-10 gains two attributes). */
#define ONNX_EXTRA_INPUTS 4
#define ONNX_EXTRA_ATTRS 3

/* Convert every attribute of b->np into b->attrs, checking each against the
 * op's ONNX attribute schema (unknown name or wrong kind: NCC_ERR_INPUT). */
ncc_status onnx_convert_attrs(onnx_node_build *b);
/* Rewrite opset 7-20 forms into the opset-21 canonical form. */
ncc_status onnx_upgrade_node(onnx_node_build *b);

/* ---- onnx_opsets.c ---- */

/* The opset an ai.onnx op appeared in (1: by opset 7, or unknown). */
int onnx_op_since(const char *op_type);
/* Attributes that later opsets take as inputs, for any opset (Squeeze
 * axes, Clip min, Slice starts, ...), then the semantics only opsets 7-12
 * have (Softmax's 2-D coercion, BatchNormalization spatial, Resize-10);
 * called first by onnx_upgrade_node. */
ncc_status onnx_upgrade_old(onnx_node_build *b);
/* The index of the built node's attribute `name` (-1: none); remove one. */
int onnx_find_attr(const onnx_node_build *b, const char *name);
void onnx_drop_attr(onnx_node_build *b, int idx);
/* Turn a Constant node into a constant value named after its output. */
ncc_status onnx_constant_node(ncc_graph *g, const Onnx__NodeProto *np,
                              const char *label, int64_t opset,
                              ncc_value **out);

#endif /* NCC_FRONTEND_H */
