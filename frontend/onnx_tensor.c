/* frontend/onnx_tensor.c — ONNX element types, type protos and tensor protos
 * to ncc dtypes, shapes and constant data.
 *
 * Everything here distrusts the model: dims are checked for sign and size
 * before anything is allocated, and the element count a tensor declares must
 * match the data it carries exactly, whichever of the storage fields
 * (raw_data or a typed field) holds it. raw_data is little-endian by the
 * ONNX spec and copied as is, so the importer needs a little-endian host.
 */
#include <string.h>

#include "frontend.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX importer copies little-endian raw_data as is"
#endif

/* Names of the TensorProto.DataType codes, for messages. */
static const char *const onnx_type_names[] = {
    "UNDEFINED",      "FLOAT",       "UINT8",          "INT8",
    "UINT16",         "INT16",       "INT32",          "INT64",
    "STRING",         "BOOL",        "FLOAT16",        "DOUBLE",
    "UINT32",         "UINT64",      "COMPLEX64",      "COMPLEX128",
    "BFLOAT16",       "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
    "FLOAT8E5M2FNUZ", "UINT4",       "INT4",           "FLOAT4E2M1",
    "FLOAT8E8M0",     "UINT2",       "INT2",           "FLOAT6E2M3",
    "FLOAT6E3M2",
};
#define N_ONNX_TYPES (int64_t)(sizeof onnx_type_names / sizeof *onnx_type_names)

const char *onnx_type_name(int64_t code) {
  return code > 0 && code < N_ONNX_TYPES ? onnx_type_names[code] : NULL;
}

ncc_status onnx_dtype(int64_t code, const char *what, ncc_dtype *out) {
  *out = NCC_DT_UNDEF;
  switch (code) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = NCC_DT_F32; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: *out = NCC_DT_F16; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *out = NCC_DT_F64; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *out = NCC_DT_I8; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *out = NCC_DT_U8; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = NCC_DT_I32; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = NCC_DT_I64; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = NCC_DT_BOOL; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: *out = NCC_DT_I16; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: *out = NCC_DT_U16; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: *out = NCC_DT_U32; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: *out = NCC_DT_U64; break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: *out = NCC_DT_BF16; break;
  default:
    if (code <= 0 || code >= N_ONNX_TYPES)
      return ncc_error(NCC_ERR_INPUT, "%s has an invalid element type (%lld)",
                       what, (long long)code);
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s has element type %s, which ncc does not support",
                     what, onnx_type_names[code]);
  }
  return NCC_OK;
}

/* Reject dims and shapes no real model has: a corrupt or hostile size must
 * fail here, not as a huge allocation later. Negative dims are symbols. */
static ncc_status check_size(const ncc_shape *s, ncc_dtype dt,
                             const char *what) {
  bool has_zero = false;
  for (int i = 0; i < s->rank; i++) {
    if (s->d[i] > ONNX_MAX_BYTES)
      return ncc_error(NCC_ERR_INPUT, "%s: dim %d is %lld, larger than 2^36",
                       what, i, (long long)s->d[i]);
    if (s->d[i] == 0) has_zero = true;
  }
  if (has_zero) return NCC_OK;
  int64_t bytes = (int64_t)ncc_dtype_size(dt);
  for (int i = 0; i < s->rank; i++) {
    if (s->d[i] <= 0) continue;
    if (bytes > ONNX_MAX_BYTES / s->d[i])
      return ncc_error(NCC_ERR_INPUT,
                       "%s is too large (more than 2^36 bytes)", what);
    bytes *= s->d[i];
  }
  return NCC_OK;
}

/* Symbol for a dim_param name (NULL or "": a fresh anonymous symbol). */
static ncc_status sym_dim(ncc_graph *g, const char *name, int64_t *out) {
  if (g->n_syms >= NCC_MAX_SYMS)
    return ncc_error(NCC_ERR_INPUT, "model has more than %d symbolic dims",
                     NCC_MAX_SYMS);
  int id = name && *name ? ncc_graph_sym(g, name, strlen(name))
                         : ncc_graph_fresh_sym(g);
  if (id < 0) return NCC_ERR_NOMEM;
  *out = ncc_dim_sym(id);
  return NCC_OK;
}

static const char *type_kind_name(Onnx__TypeProto__ValueCase c) {
  switch (c) {
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
  case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
  case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
  default: return "not a tensor";
  }
}

ncc_status onnx_value_type(ncc_graph *g, const Onnx__TypeProto *tp,
                           const char *what, bool make_syms, ncc_dtype *dt,
                           ncc_shape *shape, bool *has_shape) {
  memset(shape, 0, sizeof *shape);
  *dt = NCC_DT_UNDEF;
  *has_shape = false;
  if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
    return ncc_error(NCC_ERR_INPUT, "%s has no type", what);
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s is %s (ncc supports tensors only)", what,
                     type_kind_name(tp->value_case));
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (!tt || !tt->has_elem_type || tt->elem_type == 0)
    return ncc_error(NCC_ERR_INPUT, "%s has no element type", what);
  ncc_status st = onnx_dtype(tt->elem_type, what, dt);
  if (st) return st;
  if (!tt->shape) return NCC_OK;
  if (tt->shape->n_dim > NCC_MAX_RANK)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s has rank %zu (ncc supports at most %d)", what,
                     tt->shape->n_dim, NCC_MAX_RANK);
  shape->rank = (int)tt->shape->n_dim;
  for (int i = 0; i < shape->rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    int64_t *out = &shape->d[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (d->dim_value < 0)
        return ncc_error(NCC_ERR_INPUT, "%s: dim %d is negative (%lld)", what,
                         i, (long long)d->dim_value);
      *out = d->dim_value;
      continue;
    }
    const char *param =
        d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
            ? d->dim_param
            : NULL;
    if (!make_syms) {
      *out = -1;
      continue;
    }
    if ((st = sym_dim(g, param, out))) return st;
  }
  *has_shape = true;
  return check_size(shape, *dt, what);
}

ncc_status onnx_tensor_header(const Onnx__TensorProto *t, const char *what,
                              ncc_dtype *dt, ncc_shape *shape) {
  memset(shape, 0, sizeof *shape);
  *dt = NCC_DT_UNDEF;
  if ((t->has_data_location &&
       t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
      t->n_external_data)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s uses external data, which ncc does not read (save "
                     "the model with its weights inside)",
                     what);
  if (t->segment)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s is a segment of a larger tensor (not supported)",
                     what);
  if (!t->has_data_type || t->data_type == 0)
    return ncc_error(NCC_ERR_INPUT, "%s has no data type", what);
  ncc_status st = onnx_dtype(t->data_type, what, dt);
  if (st) return st;
  if (t->n_dims > NCC_MAX_RANK)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "%s has rank %zu (ncc supports at most %d)", what,
                     t->n_dims, NCC_MAX_RANK);
  shape->rank = (int)t->n_dims;
  for (int i = 0; i < shape->rank; i++) {
    if (t->dims[i] < 0)
      return ncc_error(NCC_ERR_INPUT, "%s: dim %d is negative (%lld)", what, i,
                       (long long)t->dims[i]);
    shape->d[i] = t->dims[i];
  }
  return check_size(shape, *dt, what);
}

/* Which typed field holds data (for messages); NULL when none does. */
static const char *typed_field(const Onnx__TensorProto *t) {
  if (t->n_float_data) return "float_data";
  if (t->n_int32_data) return "int32_data";
  if (t->n_int64_data) return "int64_data";
  if (t->n_double_data) return "double_data";
  if (t->n_uint64_data) return "uint64_data";
  if (t->n_string_data) return "string_data";
  return NULL;
}

static int count_sources(const Onnx__TensorProto *t) {
  return (t->has_raw_data != 0) + (t->n_float_data != 0) +
         (t->n_int32_data != 0) + (t->n_int64_data != 0) +
         (t->n_double_data != 0) + (t->n_uint64_data != 0) +
         (t->n_string_data != 0);
}

static ncc_status check_count(size_t have, int64_t numel, const char *field,
                              const char *what) {
  if ((uint64_t)numel != have)
    return ncc_error(NCC_ERR_INPUT, "%s: %s holds %zu values, expected %lld",
                     what, field, have, (long long)numel);
  return NCC_OK;
}

/* int32_data also carries the narrow types (ONNX spec: int8/16, uint8/16,
 * bool, and the bits of float16/bfloat16): check each value
 * fits, then store it at the dtype's width. */
static ncc_status from_int32(const Onnx__TensorProto *t, const char *what,
                             ncc_dtype dt, int64_t numel, void *dst) {
  if (dt == NCC_DT_I32) {
    memcpy(dst, t->int32_data, (size_t)numel * sizeof(int32_t));
    return NCC_OK;
  }
  int32_t lo = 0, hi = 1;
  switch (dt) {
  case NCC_DT_I8: lo = -128, hi = 127; break;
  case NCC_DT_U8: lo = 0, hi = 255; break;
  case NCC_DT_I16: lo = -32768, hi = 32767; break;
  case NCC_DT_U16: lo = 0, hi = 65535; break;
  case NCC_DT_F16:
  case NCC_DT_BF16: lo = -32768, hi = 65535; break; /* the 16 bits */
  case NCC_DT_BOOL: lo = INT32_MIN, hi = INT32_MAX; break;
  default: NCC_ASSERT(!"int32_data for a wide dtype");
  }
  for (int64_t i = 0; i < numel; i++) {
    int32_t v = t->int32_data[i];
    if (v < lo || v > hi)
      return ncc_error(NCC_ERR_INPUT,
                       "%s: int32_data value %d is out of range for %s", what,
                       (int)v, ncc_dtype_name(dt));
    if (ncc_dtype_size(dt) == 2) /* i16, u16, f16, bf16 */
      ((uint16_t *)dst)[i] = (uint16_t)(v & 0xffff);
    else if (dt == NCC_DT_BOOL)
      ((uint8_t *)dst)[i] = v != 0;
    else if (dt == NCC_DT_I8)
      ((int8_t *)dst)[i] = (int8_t)v;
    else
      ((uint8_t *)dst)[i] = (uint8_t)v;
  }
  return NCC_OK;
}

/* The typed field a dtype's data belongs in (ONNX spec). */
static const char *field_for(ncc_dtype dt) {
  switch (dt) {
  case NCC_DT_F32: return "float_data";
  case NCC_DT_F64: return "double_data";
  case NCC_DT_I64: return "int64_data";
  case NCC_DT_U32:
  case NCC_DT_U64: return "uint64_data";
  default: return "int32_data";
  }
}

/* Check that the data (raw_data, or the typed field the dtype belongs in)
 * holds exactly `numel` elements. Done before anything is allocated for the
 * tensor, so that a tensor's declared size cannot cost memory its data does
 * not back. */
static ncc_status check_data(const Onnx__TensorProto *t, const char *what,
                             ncc_dtype dt, int64_t numel) {
  int sources = count_sources(t);
  if (sources > 1)
    return ncc_error(NCC_ERR_INPUT, "%s holds data in more than one field",
                     what);
  size_t bytes = (size_t)numel * ncc_dtype_size(dt);
  if (t->has_raw_data) {
    if (t->raw_data.len != bytes)
      return ncc_error(NCC_ERR_INPUT,
                       "%s: raw_data holds %zu bytes, expected %zu (%lld x %s)",
                       what, t->raw_data.len, bytes, (long long)numel,
                       ncc_dtype_name(dt));
    return NCC_OK;
  }
  if (sources == 0) {
    if (numel == 0) return NCC_OK;
    return ncc_error(NCC_ERR_INPUT, "%s has no data (expected %lld values)",
                     what, (long long)numel);
  }
  const char *have = typed_field(t), *want = field_for(dt);
  if (strcmp(have, want) != 0)
    return ncc_error(NCC_ERR_INPUT,
                     "%s: a %s tensor keeps its data in %s, not %s", what,
                     ncc_dtype_name(dt), want, have);
  size_t count = dt == NCC_DT_F32   ? t->n_float_data
                 : dt == NCC_DT_F64 ? t->n_double_data
                 : dt == NCC_DT_I64 ? t->n_int64_data
                 : (dt == NCC_DT_U32 || dt == NCC_DT_U64) ? t->n_uint64_data
                                    : t->n_int32_data;
  return check_count(count, numel, have, what);
}

ncc_status onnx_tensor_data(const Onnx__TensorProto *t, const char *what,
                            ncc_dtype dt, int64_t numel, void *dst) {
  ncc_status st = check_data(t, what, dt, numel);
  if (st) return st;
  size_t bytes = (size_t)numel * ncc_dtype_size(dt);
  if (t->has_raw_data) {
    if (bytes) memcpy(dst, t->raw_data.data, bytes);
    if (dt == NCC_DT_BOOL) /* any non-zero byte is true; store 0/1 */
      for (size_t i = 0; i < bytes; i++)
        ((uint8_t *)dst)[i] = ((uint8_t *)dst)[i] != 0;
    return NCC_OK;
  }
  if (numel == 0) return NCC_OK;
  switch (dt) {
  case NCC_DT_F32: memcpy(dst, t->float_data, bytes); return NCC_OK;
  case NCC_DT_F64: memcpy(dst, t->double_data, bytes); return NCC_OK;
  case NCC_DT_I64: memcpy(dst, t->int64_data, bytes); return NCC_OK;
  case NCC_DT_U64: memcpy(dst, t->uint64_data, bytes); return NCC_OK;
  case NCC_DT_U32: /* uint64_data carries uint32 (ONNX spec) */
    for (int64_t i = 0; i < numel; i++) {
      if (t->uint64_data[i] > UINT32_MAX)
        return ncc_error(NCC_ERR_INPUT,
                         "%s: uint64_data value %llu is out of range for u32",
                         what, (unsigned long long)t->uint64_data[i]);
      ((uint32_t *)dst)[i] = (uint32_t)t->uint64_data[i];
    }
    return NCC_OK;
  default: return from_int32(t, what, dt, numel, dst);
  }
}

ncc_status onnx_tensor_to_const(ncc_graph *g, const Onnx__TensorProto *t,
                                const char *what, ncc_const *out) {
  memset(out, 0, sizeof *out);
  ncc_status st = onnx_tensor_header(t, what, &out->dtype, &out->shape);
  if (st) return st;
  int64_t numel = ncc_shape_numel(&out->shape);
  if ((st = check_data(t, what, out->dtype, numel))) return st;
  out->data = ncc_arena_alloc(&g->arena,
                              (size_t)numel * ncc_dtype_size(out->dtype));
  if (!out->data) return NCC_ERR_NOMEM;
  return onnx_tensor_data(t, what, out->dtype, numel, out->data);
}

/* Below this a copy costs less than the bookkeeping of a taken buffer. */
#define TAKE_MIN_BYTES 4096

/* onnx_tensor_to_value and onnx_tensor_take_value: `take` is t itself when
 * its raw_data may be taken over (NULL: always copied). Bool is copied, as
 * its bytes are normalised while decoding. */
static ncc_status tensor_value(ncc_graph *g, const Onnx__TensorProto *t,
                               Onnx__TensorProto *take, const char *name,
                               const char *what, ncc_value **out) {
  *out = NULL;
  ncc_dtype dt;
  ncc_shape shape;
  ncc_status st = onnx_tensor_header(t, what, &dt, &shape);
  if (st) return st;
  if (name && ncc_graph_find_value(g, name))
    return ncc_error(NCC_ERR_INPUT, "value '" ONNX_NAME "' is defined twice",
                     name);
  int64_t numel = ncc_shape_numel(&shape);
  if ((st = check_data(t, what, dt, numel))) return st;
  size_t bytes = (size_t)numel * ncc_dtype_size(dt);
  ncc_value *v;
  if (take && t->has_raw_data && bytes >= TAKE_MIN_BYTES && dt != NCC_DT_BOOL) {
    v = ncc_graph_add_value(g, name, NCC_VAL_CONST, dt, &shape);
    if (!v) return NCC_ERR_NOMEM;
    /* raw_data was ncc_malloc'd by the decoder (onnx_unpack's allocator) */
    v->data = ncc_arena_adopt(&g->arena, take->raw_data.data, bytes);
    if (v->data) {
      take->raw_data.data = NULL; /* the graph owns it now */
      take->raw_data.len = 0;
      *out = v;
      return NCC_OK;
    }
    /* unaligned (a custom allocator) or OOM: decoded below, a copy */
    v->data = ncc_arena_alloc_uninit(&g->arena, bytes);
    if (!v->data) return NCC_ERR_NOMEM;
  } else {
    /* Allocated zeroed, then decoded in place: no second copy of weights. */
    v = ncc_graph_add_const(g, name, dt, &shape, NULL);
    if (!v) return NCC_ERR_NOMEM;
  }
  st = onnx_tensor_data(t, what, dt, numel, v->data);
  if (st) return st;
  *out = v;
  return NCC_OK;
}

ncc_status onnx_tensor_to_value(ncc_graph *g, const Onnx__TensorProto *t,
                                const char *name, const char *what,
                                ncc_value **out) {
  return tensor_value(g, t, NULL, name, what, out);
}

ncc_status onnx_tensor_take_value(ncc_graph *g, Onnx__TensorProto *t,
                                  const char *name, const char *what,
                                  ncc_value **out) {
  return tensor_value(g, t, t, name, what, out);
}
