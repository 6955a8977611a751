/* ir/attrs.c — the typed attribute views (ir/attrs.h) and the schema table
 * expanded from ir/attrs.def. The defaults and error messages here are the
 * only ones: shape inference reports them, every other reader trusts them.
 */
#include <stdio.h>
#include <string.h>

#include "attrs.h"

/* The IR column's NONE, beside the ncc_attr_kind names. */
enum { NCC_ATTR_NONE = -1 };

static const ncc_attr_schema schema[] = {
#define NCC_ATTR(op, nm, kind, since, ir) \
  {NCC_OP_##op, nm, NCC_ATTR_##kind, since, NCC_ATTR_##ir, 0},
#define NCC_ATTR_OLD(op, nm, kind, since, until) \
  {NCC_OP_##op, nm, NCC_ATTR_##kind, since, NCC_ATTR_NONE, until},
#include "attrs.def"
#undef NCC_ATTR
#undef NCC_ATTR_OLD
};

const ncc_attr_schema *ncc_attr_schema_find(ncc_op op, const char *name) {
  for (size_t i = 0; i < sizeof schema / sizeof schema[0]; i++)
    if (schema[i].op == op && strcmp(schema[i].name, name) == 0)
      return &schema[i];
  return NULL;
}

ncc_status ncc_attrs_get_int(const ncc_node *n, const char *name, int64_t dflt,
                             int64_t *v) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INT)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be an int", name);
  *v = a->i;
  return NCC_OK;
}

/* Integer attribute restricted to 0/1. */
static ncc_status get_flag(const ncc_node *n, const char *name, bool dflt,
                           bool *v) {
  int64_t x;
  *v = dflt;
  ncc_status st = ncc_attrs_get_int(n, name, dflt, &x);
  if (st) return st;
  if (x != 0 && x != 1)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be 0 or 1, got %lld",
                name, (long long)x);
  *v = x != 0;
  return NCC_OK;
}

/* Float attribute; an int is taken as its value (the text form writes
 * `alpha=1`). */
static ncc_status get_float(const ncc_node *n, const char *name, float dflt,
                            float *v) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind == NCC_ATTR_FLOAT) *v = a->f;
  else if (a->kind == NCC_ATTR_INT) *v = (float)a->i;
  else return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be a float", name);
  return NCC_OK;
}

static ncc_status get_string(const ncc_node *n, const char *name,
                             const char *dflt, const char **v) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *v = dflt;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_STRING || !a->s)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be a string", name);
  *v = a->s;
  return NCC_OK;
}

ncc_status ncc_attrs_gemm(const ncc_node *n, ncc_gemm_attrs *a) {
  *a = (ncc_gemm_attrs){.alpha = 1.0f, .beta = 1.0f};
  ncc_status st;
  if ((st = get_flag(n, "transA", false, &a->trans_a)) ||
      (st = get_flag(n, "transB", false, &a->trans_b)) ||
      (st = get_float(n, "alpha", 1.0f, &a->alpha)) ||
      (st = get_float(n, "beta", 1.0f, &a->beta)))
    return st;
  return NCC_OK;
}

ncc_status ncc_attrs_act(const ncc_node *n, ncc_act_attrs *a) {
  *a = (ncc_act_attrs){0};
  switch (n->op) {
  case NCC_OP_LEAKYRELU: return get_float(n, "alpha", 0.01f, &a->alpha);
  case NCC_OP_ELU: case NCC_OP_THRESHOLDEDRELU:
    return get_float(n, "alpha", 1.0f, &a->alpha);
  case NCC_OP_CELU: {
    ncc_status st = get_float(n, "alpha", 1.0f, &a->alpha);
    if (!st && a->alpha == 0.0f) /* x / alpha */
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'alpha' must not be 0");
    return st;
  }
  case NCC_OP_SELU: {
    ncc_status st = get_float(n, "alpha", 1.67326319217681884765625f, &a->alpha);
    if (!st) st = get_float(n, "gamma", 1.05070102214813232421875f, &a->gamma);
    return st;
  }
  case NCC_OP_HARDSIGMOID: {
    ncc_status st = get_float(n, "alpha", 0.2f, &a->alpha);
    if (!st) st = get_float(n, "beta", 0.5f, &a->beta);
    return st;
  }
  case NCC_OP_GELU: {
    const char *ap;
    ncc_status st = get_string(n, "approximate", "none", &ap);
    if (st) return st;
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
      return ncc_node_error(
          n, NCC_ERR_INPUT,
          "attribute 'approximate' must be \"none\" or \"tanh\", got \"%s\"",
          ap);
    a->gelu_tanh = strcmp(ap, "tanh") == 0;
    return NCC_OK;
  }
  default: return NCC_OK;
  }
}

ncc_status ncc_attrs_reduce(const ncc_node *n, ncc_reduce_attrs *a) {
  *a = (ncc_reduce_attrs){.keepdims = true};
  ncc_status st = get_flag(n, "keepdims", true, &a->keepdims);
  if (!st) st = get_flag(n, "noop_with_empty_axes", false, &a->noop_with_empty_axes);
  return st;
}

ncc_status ncc_attrs_norm(const ncc_node *n, ncc_norm_attrs *a) {
  *a = (ncc_norm_attrs){.epsilon = 1e-5f};
  ncc_status st = NCC_OK;
  if (n->op == NCC_OP_BATCHNORM)
    st = ncc_attrs_get_int(n, "training_mode", 0, &a->training_mode);
  if (!st) st = get_float(n, "epsilon", 1e-5f, &a->epsilon);
  return st;
}

ncc_status ncc_attrs_pool(const ncc_node *n, ncc_pool_attrs *a) {
  *a = (ncc_pool_attrs){0};
  if (n->op == NCC_OP_AVGPOOL)
    return get_flag(n, "count_include_pad", false, &a->count_include_pad);
  if (n->op == NCC_OP_MAXPOOL)
    return get_flag(n, "storage_order", false, &a->col_major);
  return NCC_OK;
}

static int64_t axis_default(ncc_op op) {
  switch (op) {
  case NCC_OP_SOFTMAX:
  case NCC_OP_LOGSOFTMAX:
  case NCC_OP_LAYERNORM: return -1;
  case NCC_OP_FLATTEN: return 1;
  default: return 0;
  }
}

int64_t ncc_attrs_axis(const ncc_node *n) {
  int64_t v;
  if (ncc_attrs_get_int(n, "axis", axis_default(n->op), &v)) return axis_default(n->op);
  return v;
}

ncc_status ncc_attrs_axis_norm(const ncc_node *n, int rank, int *axis) {
  *axis = 0;
  if (n->op == NCC_OP_CONCAT && !ncc_node_attr(n, "axis"))
    return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'axis'");
  int64_t v;
  ncc_status st = ncc_attrs_get_int(n, "axis", axis_default(n->op), &v);
  if (st) return st;
  int64_t hi = n->op == NCC_OP_FLATTEN ? rank : rank - 1;
  if (v < -(int64_t)rank || v > hi)
    return ncc_node_error(n, NCC_ERR_INPUT, "axis %lld is out of range for rank %d",
                (long long)v, rank);
  *axis = (int)(v < 0 ? v + rank : v);
  return NCC_OK;
}

ncc_status ncc_attrs_perm(const ncc_node *n, int rank, int *perm) {
  for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
  const ncc_attr *a = ncc_node_attr(n, "perm");
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INTS)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'perm' must be a list of ints");
  if (a->n != rank)
    return ncc_node_error(n, NCC_ERR_INPUT, "perm has %d entries for rank %d", a->n, rank);
  bool seen[NCC_MAX_RANK] = {false};
  for (int i = 0; i < rank; i++) {
    if (a->ints[i] < 0 || a->ints[i] >= rank || seen[a->ints[i]]) {
      for (int j = 0; j < rank; j++) perm[j] = rank - 1 - j;
      return ncc_node_error(n, NCC_ERR_INPUT, "perm is not a permutation of 0..%d",
                  rank - 1);
    }
    seen[a->ints[i]] = true;
    perm[i] = (int)a->ints[i];
  }
  return NCC_OK;
}

ncc_status ncc_attrs_cast(const ncc_node *n, ncc_dtype *to) {
  const char *s;
  *to = NCC_DT_UNDEF;
  ncc_status st = get_string(n, "to", NULL, &s);
  if (st) return st;
  if (!s) return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'to' (a dtype name)");
  *to = ncc_dtype_from_name(s, strlen(s));
  if (*to == NCC_DT_UNDEF)
    return ncc_node_error(n, NCC_ERR_UNSUPPORTED, "cannot cast to unknown dtype '%s'", s);
  return NCC_OK;
}

ncc_status ncc_attrs_split(const ncc_node *n, int *num_outputs) {
  int64_t v;
  *num_outputs = n->n_out;
  ncc_status st = ncc_attrs_get_int(n, "num_outputs", n->n_out, &v);
  if (st) return st;
  if (v != n->n_out)
    return ncc_node_error(n, NCC_ERR_INPUT,
                "num_outputs is %lld but the node has %d outputs",
                (long long)v, n->n_out);
  return NCC_OK;
}

ncc_status ncc_attrs_reshape(const ncc_node *n, bool *allowzero) {
  return get_flag(n, "allowzero", false, allowzero);
}

ncc_status ncc_attrs_shape(const ncc_node *n, int rank, int *start, int *end) {
  int64_t s, e;
  *start = 0;
  *end = rank;
  ncc_status st = ncc_attrs_get_int(n, "start", 0, &s);
  if (!st) st = ncc_attrs_get_int(n, "end", rank, &e);
  if (st) return st;
  if (s < 0) s += rank;
  if (e < 0) e += rank;
  *start = (int)(s < 0 ? 0 : s > rank ? rank : s);
  *end = (int)(e < 0 ? 0 : e > rank ? rank : e);
  return NCC_OK;
}

static const char *const pad_names[] = {"constant", "reflect", "edge", "wrap"};

const char *ncc_pad_mode_name(ncc_pad_mode mode) { return pad_names[mode]; }

ncc_status ncc_attrs_pad(const ncc_node *n, ncc_pad_mode *mode) {
  const char *s;
  *mode = NCC_PAD_CONSTANT;
  ncc_status st = get_string(n, "mode", "constant", &s);
  if (st) return st;
  for (int m = 0; m < (int)(sizeof pad_names / sizeof pad_names[0]); m++)
    if (strcmp(s, pad_names[m]) == 0) {
      *mode = (ncc_pad_mode)m;
      return NCC_OK;
    }
  return ncc_node_error(n, NCC_ERR_INPUT, "unknown mode \"%s\"", s);
}

ncc_status ncc_attrs_value(const ncc_node *n, const ncc_const **value) {
  const ncc_attr *a = ncc_node_attr(n, "value");
  *value = NULL;
  if (!a) {
    if (n->op == NCC_OP_CONSTANT)
      return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'value'");
    return NCC_OK;
  }
  if (a->kind != NCC_ATTR_TENSOR)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'value' must be a tensor");
  const ncc_const *k = &a->t;
  if (k->dtype <= NCC_DT_UNDEF || k->dtype >= NCC_DT_COUNT ||
      k->shape.rank < 0 || k->shape.rank > NCC_MAX_RANK ||
      ncc_shape_numel(&k->shape) < 0 ||
      (ncc_shape_numel(&k->shape) > 0 && !k->data))
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'value' is not a valid tensor");
  if (n->op == NCC_OP_CONSTANTOFSHAPE && ncc_shape_numel(&k->shape) != 1)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'value' must have one element");
  *value = k;
  return NCC_OK;
}

/* ---- the IR's check against the schema ---- */

bool ncc_attr_is_annotation(const char *name) {
  return strchr(name, '.') != NULL;
}

static const char *kind_text(int kind) {
  switch (kind) {
  case NCC_ATTR_INT: return "an int";
  case NCC_ATTR_FLOAT: return "a float";
  case NCC_ATTR_INTS: return "a list of ints";
  case NCC_ATTR_FLOATS: return "a list of floats";
  case NCC_ATTR_STRING: return "a string";
  case NCC_ATTR_TENSOR: return "a tensor";
  case NCC_ATTR_GRAPH: return "a graph";
  default: return "?";
  }
}

ncc_status ncc_attrs_check_schema(const ncc_node *n) {
  for (int i = 0; i < n->n_attrs; i++) {
    const ncc_attr *a = &n->attrs[i];
    if (ncc_attr_is_annotation(a->name)) continue;
    const ncc_attr_schema *sc = ncc_attr_schema_find(n->op, a->name);
    if (!sc)
      return ncc_node_error(n, NCC_ERR_INPUT, "%s has no attribute '%s'",
                  ncc_op_name(n->op), a->name);
    if (sc->ir_kind == NCC_ATTR_NONE)
      return ncc_node_error(n, NCC_ERR_INPUT,
                  "%s has no attribute '%s' in the IR (the ONNX importer "
                  "turns it into an input or drops it)",
                  ncc_op_name(n->op), a->name);
    /* the text form writes whole floats as ints (`alpha=1`, `[1, 2]`) */
    bool ok = (int)a->kind == sc->ir_kind ||
              (sc->ir_kind == NCC_ATTR_FLOAT && a->kind == NCC_ATTR_INT) ||
              (sc->ir_kind == NCC_ATTR_FLOATS && a->kind == NCC_ATTR_INTS);
    if (!ok)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be %s", a->name,
                  kind_text(sc->ir_kind));
  }
  return NCC_OK;
}

/* ---- logical, bitwise, integer and simple elementwise/variadic ops ---- */

/* EyeLike's `dtype` is an ONNX TensorProto type code; it maps to ncc's
 * dtype by name, so the names of dtypes ncc gains later (i16, u16, u32,
 * u64, bf16) resolve once they exist. */
static ncc_status onnx_code_dtype(const ncc_node *n, int64_t code, ncc_dtype *dt) {
  static const char *const names[] = {
      [1] = "f32", [2] = "u8",   [3] = "i8",   [4] = "u16",  [5] = "i16",
      [6] = "i32", [7] = "i64",  [9] = "bool", [10] = "f16", [11] = "f64",
      [12] = "u32", [13] = "u64", [16] = "bf16",
  };
  const char *nm = code >= 0 && code < (int64_t)(sizeof names / sizeof names[0])
                       ? names[code] : NULL;
  *dt = nm ? ncc_dtype_from_name(nm, strlen(nm)) : NCC_DT_UNDEF;
  if (*dt == NCC_DT_UNDEF)
    return ncc_node_error(n, NCC_ERR_UNSUPPORTED,
                          "attribute 'dtype' is ONNX type %lld (%s), not an ncc dtype",
                          (long long)code, nm ? nm : "unknown");
  return NCC_OK;
}

ncc_status ncc_attrs_logic(const ncc_node *n, ncc_logic_attrs *a) {
  *a = (ncc_logic_attrs){.detect_negative = true, .detect_positive = true,
                         .lambd = 0.5f, .upper = true, .axis = -1,
                         .dtype = NCC_DT_UNDEF};
  ncc_status st = NCC_OK;
  switch (n->op) {
  case NCC_OP_MOD: return get_flag(n, "fmod", false, &a->fmod);
  case NCC_OP_BITSHIFT: {
    const char *d;
    if ((st = get_string(n, "direction", NULL, &d))) return st;
    if (!d) return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'direction'");
    if (strcmp(d, "LEFT") != 0 && strcmp(d, "RIGHT") != 0)
      return ncc_node_error(n, NCC_ERR_INPUT,
                            "direction must be \"LEFT\" or \"RIGHT\", got \"%s\"", d);
    a->shift_left = d[0] == 'L';
    return NCC_OK;
  }
  case NCC_OP_ISINF:
    if ((st = get_flag(n, "detect_negative", true, &a->detect_negative))) return st;
    return get_flag(n, "detect_positive", true, &a->detect_positive);
  case NCC_OP_SHRINK:
    if ((st = get_float(n, "bias", 0.0f, &a->bias))) return st;
    return get_float(n, "lambd", 0.5f, &a->lambd);
  case NCC_OP_TRILU: return get_flag(n, "upper", true, &a->upper);
  case NCC_OP_CUMSUM:
    if ((st = get_flag(n, "exclusive", false, &a->exclusive))) return st;
    return get_flag(n, "reverse", false, &a->reverse);
  case NCC_OP_HARDMAX:
  case NCC_OP_ONEHOT: return ncc_attrs_get_int(n, "axis", -1, &a->axis);
  case NCC_OP_EYELIKE: {
    if ((st = ncc_attrs_get_int(n, "k", 0, &a->k))) return st;
    if (!ncc_node_attr(n, "dtype")) return NCC_OK;
    int64_t code;
    if ((st = ncc_attrs_get_int(n, "dtype", 0, &code))) return st;
    return onnx_code_dtype(n, code, &a->dtype);
  }
  default: return NCC_OK;
  }
}

/* ---- reductions, normalization, pooling, ConvTranspose, RoiAlign,
 * attention ---- */

static ncc_status get_positive(const ncc_node *n, const char *name,
                               int64_t dflt, int64_t lo, int64_t *v) {
  ncc_status st = ncc_attrs_get_int(n, name, dflt, v);
  if (st) return st;
  if (*v < lo || *v > INT32_MAX)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' has invalid value %lld",
                          name, (long long)*v);
  return NCC_OK;
}

ncc_status ncc_attrs_nn(const ncc_node *n, ncc_nn_attrs *a) {
  *a = (ncc_nn_attrs){.epsilon = 1e-5f, .axis = -1, .p = 2, .alpha = 1e-4f,
                      .beta = 0.75f, .bias = 1.0f, .n_axes = 3,
                      .axes = {0, 2, 3}};
  ncc_status st = NCC_OK;
  switch (n->op) {
  case NCC_OP_INSTANCENORM: return get_float(n, "epsilon", 1e-5f, &a->epsilon);
  case NCC_OP_GROUPNORM:
    if ((st = get_float(n, "epsilon", 1e-5f, &a->epsilon))) return st;
    if (!ncc_node_attr(n, "num_groups"))
      return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'num_groups'");
    return get_positive(n, "num_groups", 1, 1, &a->num_groups);
  case NCC_OP_RMSNORM:
    if ((st = get_float(n, "epsilon", 1e-5f, &a->epsilon))) return st;
    return ncc_attrs_get_int(n, "axis", -1, &a->axis);
  case NCC_OP_LPNORM:
    if ((st = ncc_attrs_get_int(n, "axis", -1, &a->axis)) ||
        (st = ncc_attrs_get_int(n, "p", 2, &a->p)))
      return st;
    if (a->p != 1 && a->p != 2)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'p' must be 1 or 2, got %lld",
                            (long long)a->p);
    return NCC_OK;
  case NCC_OP_LPPOOL:
  case NCC_OP_GLOBALLPPOOL: return get_positive(n, "p", 2, 1, &a->p);
  case NCC_OP_LRN:
    if ((st = get_float(n, "alpha", 1e-4f, &a->alpha)) ||
        (st = get_float(n, "beta", 0.75f, &a->beta)) ||
        (st = get_float(n, "bias", 1.0f, &a->bias)))
      return st;
    if (!ncc_node_attr(n, "size"))
      return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'size'");
    return get_positive(n, "size", 1, 1, &a->size);
  case NCC_OP_MVN: {
    const ncc_attr *ax = ncc_node_attr(n, "axes");
    if (!ax) return NCC_OK;
    if (ax->kind != NCC_ATTR_INTS || ax->n > NCC_MAX_RANK)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'axes' must be a list of at most %d ints",
                            NCC_MAX_RANK);
    a->n_axes = ax->n;
    for (int i = 0; i < ax->n; i++) a->axes[i] = ax->ints[i];
    return NCC_OK;
  }
  default: return NCC_OK;
  }
}

/* An INTS attribute of exactly `count` values (or `alt` values, of which
 * the last `count` are taken) into dst; false when absent. */
static ncc_status ints_tail(const ncc_node *n, const char *name, int count,
                            int alt, int64_t *dst, bool *present) {
  const ncc_attr *a = ncc_node_attr(n, name);
  *present = false;
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INTS || (a->n != count && a->n != alt))
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must hold %d ints", name,
                          count);
  for (int i = 0; i < count; i++) {
    int64_t v = a->ints[a->n - count + i];
    if (v < 0 || v > INT32_MAX)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' has invalid value %lld",
                            name, (long long)v);
    dst[i] = v;
  }
  *present = true;
  return NCC_OK;
}

ncc_status ncc_attrs_convt(const ncc_node *n, int rank, const int64_t *stride,
                           const int64_t *dilation, ncc_convt_attrs *a) {
  memset(a, 0, sizeof *a);
  bool has_op;
  ncc_status st = ints_tail(n, "output_padding", rank, rank, a->output_padding, &has_op);
  if (!st) st = ints_tail(n, "output_shape", rank, rank + 2, a->output_shape,
                          &a->has_output_shape);
  if (st) return st;
  for (int i = 0; i < rank; i++) {
    int64_t lim = stride[i] > dilation[i] ? stride[i] : dilation[i];
    if (a->output_padding[i] >= lim)
      return ncc_node_error(n, NCC_ERR_INPUT,
                            "output_padding[%d] = %lld must be smaller than the stride "
                            "or the dilation (%lld)",
                            i, (long long)a->output_padding[i], (long long)lim);
  }
  return NCC_OK;
}

ncc_status ncc_attrs_roialign(const ncc_node *n, ncc_roialign_attrs *a) {
  *a = (ncc_roialign_attrs){.half_pixel = true, .out_h = 1, .out_w = 1,
                            .spatial_scale = 1.0f};
  const char *mode, *ctm;
  ncc_status st;
  if ((st = get_string(n, "mode", "avg", &mode)) ||
      (st = get_string(n, "coordinate_transformation_mode", "half_pixel", &ctm)) ||
      (st = get_positive(n, "output_height", 1, 1, &a->out_h)) ||
      (st = get_positive(n, "output_width", 1, 1, &a->out_w)) ||
      (st = get_positive(n, "sampling_ratio", 0, 0, &a->sampling_ratio)) ||
      (st = get_float(n, "spatial_scale", 1.0f, &a->spatial_scale)))
    return st;
  if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
    return ncc_node_error(n, NCC_ERR_INPUT, "unknown mode \"%s\"", mode);
  if (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "output_half_pixel") != 0)
    return ncc_node_error(n, NCC_ERR_INPUT,
                          "unknown coordinate_transformation_mode \"%s\"", ctm);
  a->max_mode = strcmp(mode, "max") == 0;
  a->half_pixel = strcmp(ctm, "half_pixel") == 0;
  return NCC_OK;
}

ncc_status ncc_attrs_attention(const ncc_node *n, ncc_attention_attrs *a) {
  *a = (ncc_attention_attrs){.left_window = -1, .right_window = -1};
  ncc_status st;
  if ((st = get_positive(n, "left_window_size", -1, -1, &a->left_window)) ||
      (st = get_positive(n, "right_window_size", -1, -1, &a->right_window)) ||
      (st = get_flag(n, "is_causal", false, &a->causal)) ||
      (st = get_positive(n, "q_num_heads", 0, 0, &a->q_heads)) ||
      (st = get_positive(n, "kv_num_heads", 0, 0, &a->kv_heads)) ||
      (st = ncc_attrs_get_int(n, "qk_matmul_output_mode", 0, &a->qk_mode)) ||
      (st = get_float(n, "scale", 0.0f, &a->scale)) ||
      (st = get_float(n, "softcap", 0.0f, &a->softcap)))
    return st;
  if (a->qk_mode < 0 || a->qk_mode > 3)
    return ncc_node_error(n, NCC_ERR_INPUT, "qk_matmul_output_mode must be 0..3, got %lld",
                          (long long)a->qk_mode);
  int64_t sp;
  return ncc_attrs_get_int(n, "softmax_precision", 0, &sp); /* double anyway */
}

ncc_status ncc_attrs_rotary(const ncc_node *n, ncc_rotary_attrs *a) {
  *a = (ncc_rotary_attrs){0};
  ncc_status st;
  if ((st = get_flag(n, "interleaved", false, &a->interleaved)) ||
      (st = get_positive(n, "num_heads", 0, 0, &a->num_heads)) ||
      (st = get_positive(n, "rotary_embedding_dim", 0, 0, &a->rot_dim)))
    return st;
  return NCC_OK;
}

/* ---- quantization, misc and signal ops ---- */

ncc_status ncc_attrs_onnx_dtype(const ncc_node *n, int64_t code, ncc_dtype *dt) {
  /* TensorProto.DataType codes with ONNX's name and ncc's (NULL: none). */
  static const char *const onnx_name[] = {
      "undefined", "float", "uint8", "int8", "uint16", "int16", "int32",
      "int64", "string", "bool", "float16", "double", "uint32", "uint64",
      "complex64", "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz",
      "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1",
      "float8e8m0", "uint2", "int2"};
  static const char *const ncc_name[] = {
      NULL, "f32", "u8", "i8", "u16", "i16", "i32", "i64", NULL, "bool",
      "f16", "f64", "u32", "u64", NULL, NULL, "bf16"};
  *dt = NCC_DT_UNDEF;
  int64_t nn = (int64_t)(sizeof onnx_name / sizeof onnx_name[0]);
  if (code <= 0 || code >= nn)
    return ncc_node_error(n, NCC_ERR_INPUT, "unknown ONNX data type %lld", (long long)code);
  const char *nm = code < (int64_t)(sizeof ncc_name / sizeof ncc_name[0]) ? ncc_name[code] : NULL;
  if (nm) *dt = ncc_dtype_from_name(nm, strlen(nm));
  if (*dt == NCC_DT_UNDEF)
    return ncc_node_error(n, NCC_ERR_UNSUPPORTED, "dtype %s is not supported by ncc",
                          onnx_name[code]);
  return NCC_OK;
}

ncc_status ncc_attrs_quant(const ncc_node *n, ncc_quant_attrs *a) {
  *a = (ncc_quant_attrs){.axis = 1, .saturate = true};
  ncc_status st;
  if ((st = ncc_attrs_get_int(n, "axis", 1, &a->axis)) ||
      (st = ncc_attrs_get_int(n, "block_size", 0, &a->block_size)) ||
      (st = ncc_attrs_get_int(n, "output_dtype", 0, &a->output_dtype)) ||
      (st = get_flag(n, "saturate", true, &a->saturate)))
    return st;
  if (a->block_size < 0)
    return ncc_node_error(n, NCC_ERR_INPUT, "block_size must not be negative, got %lld",
                          (long long)a->block_size);
  return NCC_OK;
}

ncc_status ncc_attrs_loss(const ncc_node *n, ncc_loss_attrs *a) {
  *a = (ncc_loss_attrs){.reduction = NCC_LOSS_MEAN};
  const char *r;
  ncc_status st = get_string(n, "reduction", "mean", &r);
  if (st) return st;
  if (!strcmp(r, "none")) a->reduction = NCC_LOSS_NONE;
  else if (!strcmp(r, "sum")) a->reduction = NCC_LOSS_SUM;
  else if (strcmp(r, "mean"))
    return ncc_node_error(n, NCC_ERR_INPUT,
                          "reduction must be \"none\", \"sum\" or \"mean\", got \"%s\"", r);
  a->has_ignore = ncc_node_attr(n, "ignore_index") != NULL;
  return ncc_attrs_get_int(n, "ignore_index", 0, &a->ignore_index);
}

ncc_status ncc_attrs_signal(const ncc_node *n, ncc_signal_attrs *a) {
  *a = (ncc_signal_attrs){.periodic = true, .axis = 1, .out_dtype = NCC_DT_F32};
  int64_t code;
  ncc_status st;
  bool one_default = n->op == NCC_OP_STFT;
  if ((st = get_flag(n, "periodic", true, &a->periodic)) ||
      (st = get_flag(n, "inverse", false, &a->inverse)) ||
      (st = get_flag(n, "onesided", one_default, &a->onesided)) ||
      (st = ncc_attrs_get_int(n, "axis", 1, &a->axis)) ||
      (st = ncc_attrs_get_int(n, "output_datatype", 1, &code)))
    return st;
  a->has_axis = ncc_node_attr(n, "axis") != NULL;
  return ncc_attrs_onnx_dtype(n, code, &a->out_dtype);
}

ncc_status ncc_attrs_roipool(const ncc_node *n, int64_t pooled[2], float *scale) {
  const ncc_attr *a = ncc_node_attr(n, "pooled_shape");
  if (!a || a->kind != NCC_ATTR_INTS || a->n != 2 || a->ints[0] < 1 ||
      a->ints[1] < 1 || a->ints[0] > INT32_MAX || a->ints[1] > INT32_MAX)
    return ncc_node_error(n, NCC_ERR_INPUT,
                          "attribute 'pooled_shape' must be two positive ints");
  pooled[0] = a->ints[0];
  pooled[1] = a->ints[1];
  return get_float(n, "spatial_scale", 1.0f, scale);
}

ncc_status ncc_attrs_crop_axes(const ncc_node *n, int rank, int *axes, int *count) {
  const ncc_attr *a = ncc_node_attr(n, "axes");
  if (!a) {
    for (int i = 0; i < rank; i++) axes[i] = i;
    *count = rank;
    return NCC_OK;
  }
  if (a->kind != NCC_ATTR_INTS || a->n > rank)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'axes' must be at most %d ints", rank);
  bool seen[NCC_MAX_RANK] = {false};
  for (int i = 0; i < a->n; i++) {
    int64_t x = a->ints[i] < 0 ? a->ints[i] + rank : a->ints[i];
    if (x < 0 || x >= rank || seen[x])
      return ncc_node_error(n, NCC_ERR_INPUT, "axis %lld is out of range or repeated",
                            (long long)a->ints[i]);
    seen[x] = true;
    axes[i] = (int)x;
  }
  *count = a->n;
  return NCC_OK;
}

ncc_status ncc_attrs_align_corners(const ncc_node *n, bool *align) {
  return get_flag(n, "align_corners", false, align);
}

/* ---- recurrent and control flow ---- */

static const struct {
  const char *name;
  ncc_rnn_act_kind kind;
  bool alpha, beta;      /* which of the two it takes */
  float dalpha, dbeta;   /* the ONNX op's defaults */
} rnn_acts[] = {
    {"Relu", NCC_RNN_RELU, false, false, 0, 0},
    {"Tanh", NCC_RNN_TANH, false, false, 0, 0},
    {"Sigmoid", NCC_RNN_SIGMOID, false, false, 0, 0},
    {"Affine", NCC_RNN_AFFINE, true, true, 1.0f, 0.0f},
    {"LeakyRelu", NCC_RNN_LEAKYRELU, true, false, 0.01f, 0},
    {"ThresholdedRelu", NCC_RNN_THRESHOLDEDRELU, true, false, 1.0f, 0},
    {"ScaledTanh", NCC_RNN_SCALEDTANH, true, true, 1.0f, 1.0f},
    {"HardSigmoid", NCC_RNN_HARDSIGMOID, true, true, 0.2f, 0.5f},
    {"Elu", NCC_RNN_ELU, true, false, 1.0f, 0},
    {"Softsign", NCC_RNN_SOFTSIGN, false, false, 0, 0},
    {"Softplus", NCC_RNN_SOFTPLUS, false, false, 0, 0},
};

/* Case-insensitive equality of s[0..len) and the NUL-terminated name. */
static bool name_eq_ci(const char *s, size_t len, const char *name) {
  if (strlen(name) != len) return false;
  for (size_t i = 0; i < len; i++) {
    char a = s[i], b = name[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

ncc_status ncc_attrs_rnn(const ncc_node *n, ncc_rnn_attrs *a) {
  memset(a, 0, sizeof *a);
  a->gates = n->op == NCC_OP_LSTM ? 4 : n->op == NCC_OP_GRU ? 3 : 1;
  a->acts_per_dir = n->op == NCC_OP_LSTM ? 3 : n->op == NCC_OP_GRU ? 2 : 1;
  a->num_dir = 1;
  a->hidden_size = -1;
  static const char *const dflt[3] = {"Tanh", "Sigmoid,Tanh", "Sigmoid,Tanh,Tanh"};
  const char *dir, *acts;
  int64_t hs, layout;
  ncc_status st;
  if ((st = get_string(n, "direction", "forward", &dir)) ||
      (st = ncc_attrs_get_int(n, "hidden_size", -1, &hs)) ||
      (st = ncc_attrs_get_int(n, "layout", 0, &layout)) ||
      (st = get_flag(n, "input_forget", false, &a->input_forget)) ||
      (st = get_string(n, "activations", NULL, &acts)))
    return st;
  int64_t lbr;
  if ((st = ncc_attrs_get_int(n, "linear_before_reset", 0, &lbr))) return st;
  a->linear_before_reset = lbr != 0; /* onnxruntime: any nonzero value */
  if (strcmp(dir, "forward") == 0) {
  } else if (strcmp(dir, "reverse") == 0) {
    a->reverse = true;
  } else if (strcmp(dir, "bidirectional") == 0) {
    a->num_dir = 2;
  } else {
    return ncc_node_error(n, NCC_ERR_INPUT,
                          "direction must be forward, reverse or "
                          "bidirectional, not '%s'", dir);
  }
  if (hs != -1 && hs <= 0)
    return ncc_node_error(n, NCC_ERR_INPUT, "hidden_size must be positive, got %lld",
                          (long long)hs);
  a->hidden_size = hs;
  if (layout != 0 && layout != 1)
    return ncc_node_error(n, NCC_ERR_INPUT, "layout must be 0 or 1, got %lld",
                          (long long)layout);
  a->batch_first = layout == 1;
  const ncc_attr *clip = ncc_node_attr(n, "clip");
  if (clip) {
    if ((st = get_float(n, "clip", 0, &a->clip))) return st;
    if (!(a->clip > 0))
      return ncc_node_error(n, NCC_ERR_INPUT, "clip must be positive");
    a->has_clip = true;
  }
  /* the activation names, one list for every direction */
  int want = a->acts_per_dir * a->num_dir;
  const char *names[NCC_RNN_MAX_ACTS];
  size_t lens[NCC_RNN_MAX_ACTS];
  int count = 0;
  for (int d = 0; d < (acts ? 1 : a->num_dir); d++) {
    const char *p = acts ? acts : dflt[a->acts_per_dir - 1];
    for (;;) {
      const char *e = strchr(p, ',');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      if (count == NCC_RNN_MAX_ACTS) {
        count++;
        break;
      }
      names[count] = p;
      lens[count++] = len;
      if (!e) break;
      p = e + 1;
    }
  }
  if (count != want)
    return ncc_node_error(n, NCC_ERR_INPUT,
                          "activations must name %d functions (%d per direction), "
                          "got %d", want, a->acts_per_dir, count);
  int n_alpha = 0, n_beta = 0, ia = 0, ib = 0;
  const float *alpha = NULL, *beta = NULL;
  const ncc_attr *aa = ncc_node_attr(n, "activation_alpha");
  const ncc_attr *ab = ncc_node_attr(n, "activation_beta");
  if (aa) {
    if (aa->kind != NCC_ATTR_FLOATS)
      return ncc_node_error(n, NCC_ERR_INPUT, "activation_alpha must be floats");
    alpha = aa->floats, n_alpha = aa->n;
  }
  if (ab) {
    if (ab->kind != NCC_ATTR_FLOATS)
      return ncc_node_error(n, NCC_ERR_INPUT, "activation_beta must be floats");
    beta = ab->floats, n_beta = ab->n;
  }
  for (int k = 0; k < count; k++) {
    size_t j = 0, nk = sizeof rnn_acts / sizeof rnn_acts[0];
    while (j < nk && !name_eq_ci(names[k], lens[k], rnn_acts[j].name)) j++;
    if (j == nk)
      return ncc_node_error(n, NCC_ERR_UNSUPPORTED, "unknown activation '%.*s'",
                            (int)(lens[k] > 64 ? 64 : lens[k]), names[k]);
    a->act[k].kind = rnn_acts[j].kind;
    a->act[k].alpha = rnn_acts[j].dalpha;
    a->act[k].beta = rnn_acts[j].dbeta;
    if (rnn_acts[j].alpha && ia < n_alpha) a->act[k].alpha = alpha[ia++];
    if (rnn_acts[j].beta && ib < n_beta) a->act[k].beta = beta[ib++];
  }
  return NCC_OK;
}
