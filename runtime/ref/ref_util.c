/* runtime/ref/ref_util.c — element access and stride helpers shared by the
 * reference kernels.
 *
 * Every dtype can be read as a double or an int64 and written from either, so
 * a kernel that is not worth specializing works on all dtypes through four
 * functions. The conversions are defined exactly, because the interpreter is
 * the semantics other backends are checked against:
 *   - f16 <-> double with IEEE round-to-nearest-even, subnormals, inf, NaN;
 *   - float -> integer truncates toward zero; NaN and values out of range give
 *     the most negative value of i32/i64 (what x86 cvtt* instructions, and so
 *     numpy and ONNX Runtime on x86, produce); i8/u8 convert through i32 and
 *     keep the low byte (numpy's behaviour), never C's undefined behaviour;
 *   - integer -> integer wraps (two's complement);
 *   - anything -> bool is "nonzero" (NaN is true).
 */
#include <math.h>
#include <string.h>

#include "../../ir/f16.h"
#include "ref.h"

/* ---- float -> integer without undefined behaviour ---- */

static int64_t float_to_i64(double v) {
  /* [-2^63, 2^63) is exactly the representable range. */
  if (!(v >= -0x1p63 && v < 0x1p63)) return INT64_MIN;
  return (int64_t)v;
}

static int32_t float_to_i32(double v) {
  if (!(v > -0x1p31 - 1.0 && v < 0x1p31)) return INT32_MIN;
  return (int32_t)v;
}

/* ---- element access ---- */

double ncc_ref_get_f(const ncc_tensor *t, int64_t i) {
  const void *p = (const char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_F32: { float v; memcpy(&v, p, 4); return v; }
  case NCC_DT_F16: { uint16_t v; memcpy(&v, p, 2); return ncc_f16_to_f64(v); }
  case NCC_DT_F64: { double v; memcpy(&v, p, 8); return v; }
  case NCC_DT_I8: return *(const int8_t *)p;
  case NCC_DT_U8: return *(const uint8_t *)p;
  case NCC_DT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
  case NCC_DT_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
  case NCC_DT_BOOL: return *(const uint8_t *)p != 0;
  default: NCC_ASSERT(!"ncc_ref_get_f: bad dtype"); return 0;
  }
}

int64_t ncc_ref_get_i(const ncc_tensor *t, int64_t i) {
  const void *p = (const char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_I8: return *(const int8_t *)p;
  case NCC_DT_U8: return *(const uint8_t *)p;
  case NCC_DT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
  case NCC_DT_I64: { int64_t v; memcpy(&v, p, 8); return v; }
  case NCC_DT_BOOL: return *(const uint8_t *)p != 0;
  default: return float_to_i64(ncc_ref_get_f(t, i));
  }
}

/* Store an integer, wrapping to the width of t's dtype. */
static void store_int(ncc_tensor *t, int64_t i, int64_t v) {
  void *p = (char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_I8: { int8_t w = (int8_t)(uint8_t)v; memcpy(p, &w, 1); break; }
  case NCC_DT_U8: { uint8_t w = (uint8_t)v; memcpy(p, &w, 1); break; }
  case NCC_DT_I32: { int32_t w = (int32_t)(uint32_t)v; memcpy(p, &w, 4); break; }
  case NCC_DT_I64: memcpy(p, &v, 8); break;
  case NCC_DT_BOOL: *(uint8_t *)p = v != 0; break;
  default: NCC_ASSERT(!"store_int: not an integer dtype");
  }
}

void ncc_ref_set_f(ncc_tensor *t, int64_t i, double v) {
  void *p = (char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_F32: { float w = (float)v; memcpy(p, &w, 4); break; }
  case NCC_DT_F16: { uint16_t w = ncc_f16_from_f64(v); memcpy(p, &w, 2); break; }
  case NCC_DT_F64: memcpy(p, &v, 8); break;
  case NCC_DT_BOOL: *(uint8_t *)p = v != 0; break; /* NaN != 0 */
  case NCC_DT_I64: store_int(t, i, float_to_i64(v)); break;
  default: store_int(t, i, float_to_i32(v)); break; /* i32, i8, u8 */
  }
}

void ncc_ref_set_i(ncc_tensor *t, int64_t i, int64_t v) {
  void *p = (char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  /* Direct int64 -> float conversions round once. */
  case NCC_DT_F32: { float w = (float)v; memcpy(p, &w, 4); break; }
  case NCC_DT_F64: { double w = (double)v; memcpy(p, &w, 8); break; }
  case NCC_DT_F16: { uint16_t w = ncc_f16_from_f64((double)v); memcpy(p, &w, 2); break; }
  default: store_int(t, i, v); break;
  }
}

/* ---- strides ---- */

int64_t ncc_ref_dim_mul(int64_t a, int64_t b) {
  size_t r;
  if (a < 0 || b < 0 || !ncc_size_mul((size_t)a, (size_t)b, &r)) return 0;
  return (int64_t)r;
}

void ncc_ref_strides(const ncc_tensor *t, int64_t *strides) {
  int64_t s = 1;
  for (int i = t->rank - 1; i >= 0; i--) {
    strides[i] = s;
    s = ncc_ref_dim_mul(s, t->dims[i]);
  }
}

void ncc_ref_bcast_strides(const ncc_tensor *t, int rank, const int64_t *dims,
                           int64_t *strides) {
  NCC_ASSERT(t->rank <= rank);
  int64_t own[NCC_MAX_RANK];
  ncc_ref_strides(t, own);
  int lead = rank - t->rank;
  for (int i = 0; i < rank; i++) {
    if (i < lead) {
      strides[i] = 0;
    } else {
      int64_t d = t->dims[i - lead];
      NCC_ASSERT(d == dims[i] || d == 1);
      strides[i] = d == 1 ? 0 : own[i - lead];
    }
  }
}
