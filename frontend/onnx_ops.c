/* frontend/onnx_ops.c — ONNX attributes to ncc attributes, checked against
 * each op's ONNX schema, and the upgrade of opset 13-20 node forms to the
 * opset-21 canonical form that the rest of ncc sees (docs/IR-CONVENTIONS.md;
 * the 7-12 forms are onnx_opsets.c's).
 *
 * The schema is ir/attrs.def (one row per op and attribute, with the kind
 * an ONNX model writes, the opset it appeared in and, for the attributes
 * later opsets made inputs, the first opset without it): an attribute an op
 * does not have in the model's opset, or one of the wrong kind, is a
 * malformed model (NCC_ERR_INPUT) reported here, before any typed view
 * decodes it.
 */
#include <limits.h>
#include <string.h>

#include "../ir/attrs.h"
#include "frontend.h"

static const char *onnx_attr_kind_name(int t) {
  switch (t) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "FLOAT";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "INT";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "STRING";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    return "SPARSE_TENSOR";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "FLOATS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "INTS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    return "SPARSE_TENSORS";
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
    return "TYPE_PROTOS";
  default: return "UNDEFINED";
  }
}

/* The ONNX attribute type of a schema kind (ir/attrs.def). */
static int onnx_kind(ncc_attr_kind k) {
  switch (k) {
  case NCC_ATTR_INT: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  case NCC_ATTR_FLOAT: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  case NCC_ATTR_STRING: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  case NCC_ATTR_TENSOR: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  case NCC_ATTR_INTS: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  case NCC_ATTR_FLOATS: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  case NCC_ATTR_STRINGS: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  case NCC_ATTR_GRAPH: return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  }
  NCC_ASSERT(!"bad schema kind");
  return 0;
}

/* ---- attribute conversion ---- */

/* A STRINGS attribute (RNN/GRU/LSTM `activations`) becomes one STRING, the
 * names joined by ',' (ir/attrs.def): the IR has no list-of-strings kind,
 * and no name it can hold contains a ',' or a NUL. */
static ncc_status onnx_join_strings(onnx_node_build *b,
                                    const Onnx__AttributeProto *ap,
                                    ncc_attr *a) {
  size_t len = 1;
  for (size_t i = 0; i < ap->n_strings; i++) {
    const ProtobufCBinaryData *s = &ap->strings[i];
    if (s->len && (memchr(s->data, 0, s->len) || memchr(s->data, ',', s->len)))
      return ncc_error(NCC_ERR_INPUT,
                       "%s: attribute '" ONNX_NAME
                       "' holds a name with a NUL byte or a ','",
                       b->label, a->name);
    if (!ncc_size_add(len, s->len + 1, &len))
      return NCC_ERR_NOMEM;
  }
  char *out = ncc_arena_alloc(&b->g->arena, len);
  if (!out) return NCC_ERR_NOMEM;
  size_t k = 0;
  for (size_t i = 0; i < ap->n_strings; i++) {
    if (i) out[k++] = ',';
    memcpy(out + k, ap->strings[i].data, ap->strings[i].len);
    k += ap->strings[i].len;
  }
  out[k] = 0;
  a->kind = NCC_ATTR_STRING;
  a->s = out;
  return NCC_OK;
}

static ncc_status convert_attr(onnx_node_build *b,
                               const Onnx__AttributeProto *ap, ncc_attr *a) {
  ncc_graph *g = b->g;
  const char *name = onnx_str(ap->name);
  if (!*name)
    return ncc_error(NCC_ERR_INPUT, "%s: an attribute has no name", b->label);
  if (ap->ref_attr_name && *ap->ref_attr_name)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: attribute '" ONNX_NAME
                     "' refers to a function attribute outside a function",
                     b->label, name);
  int type = ap->has_type ? (int)ap->type : 0;
  const ncc_attr_schema *sc = ncc_attr_schema_find(b->op, name);
  int want = sc ? onnx_kind(sc->kind) : 0;
  if (!want)
    return ncc_error(NCC_ERR_INPUT, "%s: %s has no attribute '" ONNX_NAME "'",
                     b->label, ncc_op_name(b->op), name);
  int since = sc->since;
  if (b->opset < since)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: %s has no attribute '" ONNX_NAME "' in opset %lld "
                     "(it exists from opset %d)",
                     b->label, ncc_op_name(b->op), name, (long long)b->opset,
                     since);
  if (sc->until && b->opset >= sc->until)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: %s has no attribute '" ONNX_NAME "' in opset %lld "
                     "(it is an input from opset %d)",
                     b->label, ncc_op_name(b->op), name, (long long)b->opset,
                     sc->until);
  if (type != want)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: attribute '" ONNX_NAME "' must be %s, not %s",
                     b->label, name, onnx_attr_kind_name(want),
                     onnx_attr_kind_name(type));
  a->name = ncc_arena_strdup(&g->arena, name);
  if (!a->name) return NCC_ERR_NOMEM;
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
    a->kind = NCC_ATTR_FLOAT;
    a->f = ap->f;
    return NCC_OK;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
    a->kind = NCC_ATTR_INT;
    a->i = ap->i;
    return NCC_OK;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
    a->kind = NCC_ATTR_STRING;
    if (ap->s.len && memchr(ap->s.data, 0, ap->s.len))
      return ncc_error(NCC_ERR_INPUT,
                       "%s: attribute '" ONNX_NAME "' holds a NUL byte",
                       b->label, name);
    a->s = ap->s.len ? ncc_arena_strndup(&g->arena, (const char *)ap->s.data,
                                         ap->s.len)
                     : "";
    return a->s ? NCC_OK : NCC_ERR_NOMEM;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
    a->kind = NCC_ATTR_TENSOR;
    char what[320];
    snprintf(what, sizeof what, "%s: attribute '" ONNX_NAME "'", b->label,
             name);
    if (!ap->t) return ncc_error(NCC_ERR_INPUT, "%s has no tensor", what);
    return onnx_tensor_to_const(g, ap->t, what, &a->t);
  }
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
    a->kind = NCC_ATTR_INTS;
    if (ap->n_ints > INT_MAX) return NCC_ERR_NOMEM;
    a->n = (int)ap->n_ints;
    a->ints = ncc_arena_memdup(&g->arena, ap->ints,
                               sizeof(int64_t) * ap->n_ints);
    return a->ints ? NCC_OK : NCC_ERR_NOMEM;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
    a->kind = NCC_ATTR_FLOATS;
    if (ap->n_floats > INT_MAX) return NCC_ERR_NOMEM;
    a->n = (int)ap->n_floats;
    a->floats = ncc_arena_memdup(&g->arena, ap->floats,
                                 sizeof(float) * ap->n_floats);
    return a->floats ? NCC_OK : NCC_ERR_NOMEM;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
    return onnx_join_strings(b, ap, a);
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
    /* the importer builds the subgraph once the node exists */
    a->kind = NCC_ATTR_GRAPH;
    a->graph = NULL;
    return NCC_OK;
  default: /* no op of ncc's has an attribute of another kind */
    NCC_ASSERT(!"schema allowed an unconvertible attribute kind");
    return NCC_ERR_INTERNAL;
  }
}

ncc_status onnx_convert_attrs(onnx_node_build *b) {
  const Onnx__NodeProto *np = b->np;
  b->n_attrs = 0;
  for (size_t i = 0; i < np->n_attribute; i++) {
    ncc_attr *a = &b->attrs[b->n_attrs];
    ncc_status st = convert_attr(b, np->attribute[i], a);
    if (st) return st;
    for (int j = 0; j < b->n_attrs; j++)
      if (strcmp(b->attrs[j].name, a->name) == 0)
        return ncc_error(NCC_ERR_INPUT,
                         "%s: attribute '" ONNX_NAME "' is given twice",
                         b->label, a->name);
    b->n_attrs++;
  }
  return NCC_OK;
}

/* ---- upgrades to the opset-21 form ---- */

/* The index of attribute `name` of the node being built, or -1. */
int onnx_find_attr(const onnx_node_build *b, const char *name) {
  for (int i = 0; i < b->n_attrs; i++)
    if (strcmp(b->attrs[i].name, name) == 0) return i;
  return -1;
}

/* Remove attribute `idx` of the node being built. */
void onnx_drop_attr(onnx_node_build *b, int idx) {
  memmove(&b->attrs[idx], &b->attrs[idx + 1],
          sizeof(ncc_attr) * (size_t)(b->n_attrs - idx - 1));
  b->n_attrs--;
}

/* Cast.to: the ONNX type code becomes ncc's dtype name; `saturate` and
 * (opset 24+) `round_mode` only concern float8 types, which ncc lacks (a
 * Cast to one is refused with the dtype), so they are dropped. */
static ncc_status upgrade_cast(onnx_node_build *b) {
  int i = onnx_find_attr(b, "saturate");
  if (i >= 0) onnx_drop_attr(b, i);
  if ((i = onnx_find_attr(b, "round_mode")) >= 0) onnx_drop_attr(b, i);
  i = onnx_find_attr(b, "to");
  if (i < 0)
    return ncc_error(NCC_ERR_INPUT, "%s: Cast needs attribute 'to'", b->label);
  char what[300];
  snprintf(what, sizeof what, "%s: Cast target", b->label);
  ncc_dtype dt;
  ncc_status st = onnx_dtype(b->attrs[i].i, what, &dt);
  if (st) return st;
  b->attrs[i].kind = NCC_ATTR_STRING;
  b->attrs[i].i = 0;
  b->attrs[i].s = ncc_dtype_name(dt);
  return NCC_OK;
}

/* Range from opset 27 computes float16/bfloat16 ranges in float32 unless
 * stash_type=0; ncc accumulates in the output dtype (the opset 11-26 and
 * stash_type=0 meaning), so the float32 form is refused, by name. The
 * attribute has no effect on other dtypes and is dropped. */
static ncc_status upgrade_range(onnx_node_build *b) {
  int i = onnx_find_attr(b, "stash_type");
  bool half = b->n_in > 0 && b->in[0] &&
              b->in[0]->dtype == NCC_DT_F16;
  int64_t stash = i >= 0 ? b->attrs[i].i : 1;
  if (b->opset >= 27 && half && stash != 0)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: Range of opset %lld on %s with stash_type=%lld "
                     "(accumulate in float32) is not supported; ncc "
                     "accumulates in the output type (stash_type=0)",
                     b->label, (long long)b->opset,
                     ncc_dtype_name(b->in[0]->dtype), (long long)stash);
  if (i >= 0) onnx_drop_attr(b, i);
  return NCC_OK;
}

/* Split (its `split` attribute already input 1): a Split of opset 2-17
 * with neither sizes nor num_outputs splits evenly into its outputs, which
 * opset 18+ spells num_outputs. */
static ncc_status upgrade_split(onnx_node_build *b) {
  bool has_sizes = b->n_in > 1 && b->in[1];
  if (has_sizes || onnx_find_attr(b, "num_outputs") >= 0) return NCC_OK;
  ncc_attr *a = &b->attrs[b->n_attrs++]; /* room: ONNX_EXTRA_ATTRS */
  memset(a, 0, sizeof *a);
  a->name = "num_outputs";
  a->kind = NCC_ATTR_INT;
  a->i = b->n_out;
  return NCC_OK;
}

ncc_status onnx_upgrade_node(onnx_node_build *b) {
  ncc_status st = onnx_upgrade_old(b);
  if (st) return st;
  switch (b->op) {
  case NCC_OP_SPLIT:
    return upgrade_split(b);
  case NCC_OP_CAST:
    return upgrade_cast(b);
  case NCC_OP_RANGE:
    return upgrade_range(b);
  case NCC_OP_BATCHNORM: {
    if (b->n_out > 1)
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: BatchNormalization with %d outputs (training "
                       "mode: mean, var, ...) is not supported",
                       b->label, b->n_out);
    int i = onnx_find_attr(b, "training_mode");
    if (i >= 0 && b->attrs[i].i != 0)
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: BatchNormalization in training mode is not "
                       "supported",
                       b->label);
    return NCC_OK;
  }
  case NCC_OP_SCAN:
    if (b->opset < 9)
      return ncc_error(NCC_ERR_UNSUPPORTED,
                       "%s: Scan before opset 9 (batch axis, sequence_lens) is not "
                       "supported",
                       b->label);
    return NCC_OK;
  case NCC_OP_CONSTANTOFSHAPE: {
    int i = onnx_find_attr(b, "value");
    if (i >= 0 && ncc_shape_numel(&b->attrs[i].t.shape) != 1)
      return ncc_error(NCC_ERR_INPUT,
                       "%s: ConstantOfShape 'value' must hold one element",
                       b->label);
    return NCC_OK;
  }
  default:
    return NCC_OK;
  }
}

/* ---- Constant nodes become constant values ---- */

static ncc_status small_const(ncc_graph *g, const char *name, ncc_dtype dt,
                              int rank, size_t n, const void *data,
                              ncc_value **out) {
  if (n > (size_t)ONNX_MAX_BYTES / 8)
    return ncc_error(NCC_ERR_INPUT, "constant '" ONNX_NAME "' is too large",
                     name);
  ncc_shape shape = {.rank = rank, .d = {(int64_t)n}};
  *out = ncc_graph_add_const(g, name, dt, &shape, data);
  return *out ? NCC_OK : NCC_ERR_NOMEM;
}

ncc_status onnx_constant_node(ncc_graph *g, const Onnx__NodeProto *np,
                              const char *label, int64_t opset,
                              ncc_value **out) {
  *out = NULL;
  if (np->n_input)
    return ncc_error(NCC_ERR_INPUT, "%s: Constant takes no inputs", label);
  if (np->n_output != 1 || !*np->output[0])
    return ncc_error(NCC_ERR_INPUT,
                     "%s: Constant needs exactly one named output", label);
  if (np->n_attribute != 1)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: Constant needs exactly one value attribute, not %zu",
                     label, np->n_attribute);
  const char *vname = np->output[0];
  const Onnx__AttributeProto *ap = np->attribute[0];
  const char *aname = onnx_str(ap->name);
  int type = ap->has_type ? (int)ap->type : 0, want;
  if (strcmp(aname, "value") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  else if (strcmp(aname, "value_float") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  else if (strcmp(aname, "value_floats") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  else if (strcmp(aname, "value_int") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  else if (strcmp(aname, "value_ints") == 0)
    want = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  else if (strcmp(aname, "value_string") == 0 ||
           strcmp(aname, "value_strings") == 0 ||
           strcmp(aname, "sparse_value") == 0)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s: Constant with '%s' is not supported", label, aname);
  else
    return ncc_error(NCC_ERR_INPUT,
                     "%s: Constant has no attribute '" ONNX_NAME "'", label,
                     aname);
  if (want != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR && opset < 12)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: Constant has no attribute '%s' in opset %lld (it "
                     "exists from opset 12)",
                     label, aname, (long long)opset);
  if (type != want)
    return ncc_error(NCC_ERR_INPUT, "%s: attribute '%s' must be %s, not %s",
                     label, aname, onnx_attr_kind_name(want),
                     onnx_attr_kind_name(type));
  if (ncc_graph_find_value(g, vname))
    return ncc_error(NCC_ERR_INPUT, "value '" ONNX_NAME "' is defined twice",
                     vname);
  switch (type) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
    char what[320];
    snprintf(what, sizeof what, "%s: attribute 'value'", label);
    if (!ap->t) return ncc_error(NCC_ERR_INPUT, "%s has no tensor", what);
    return onnx_tensor_to_value(g, ap->t, vname, what, out);
  }
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
    return small_const(g, vname, NCC_DT_F32, 0, 1, &ap->f, out);
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
    return small_const(g, vname, NCC_DT_F32, 1, ap->n_floats, ap->floats, out);
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
    return small_const(g, vname, NCC_DT_I64, 0, 1, &ap->i, out);
  default:
    return small_const(g, vname, NCC_DT_I64, 1, ap->n_ints, ap->ints, out);
  }
}
