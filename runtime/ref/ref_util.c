/* runtime/ref/ref_util.c — element access and stride helpers shared by the
 * reference kernels.
 *
 * Every dtype can be read as a double or an int64 and written from either, so
 * a kernel that is not worth specializing works on all dtypes through four
 * functions. The conversions are defined exactly, because the interpreter is
 * the semantics other backends are checked against:
 *   - f16/bf16 <-> double with IEEE round-to-nearest-even, subnormals, inf,
 *     NaN; every integer -> float conversion rounds once (int64 -> f64 ->
 *     f16/bf16 goes through a round-to-odd double, so no double rounding);
 *   - float -> integer truncates toward zero; NaN and values out of range give
 *     the most negative value of i32/i64 (what x86 cvtt* instructions, and so
 *     numpy and ONNX Runtime on x86, produce); i8/u8/i16/u16 convert through
 *     i32 and keep the low bits, u32/u64 through x86-64's (uint64_t)double
 *     (negative values wrap, NaN and out of range give 2^63) and u32 keeps
 *     the low 32 bits (numpy's behaviour), never C's undefined behaviour;
 *   - integer -> integer wraps (two's complement); u64 values are carried
 *     as their bits in int64 (ncc_ref_get_i) or exactly (ncc_ref_get_u), and
 *     code that orders, divides or converts them to float uses the latter;
 *   - anything -> bool is "nonzero" (NaN is true).
 */
#include <math.h>
#include <string.h>

#include "../../ir/f16.h"
#include "ref.h"

/* ---- dtype classes ---- */

bool ncc_ref_is_float(ncc_dtype dt) {
  return dt == NCC_DT_F32 || dt == NCC_DT_F16 || dt == NCC_DT_F64 ||
         dt == NCC_DT_BF16;
}

bool ncc_ref_is_unsigned(ncc_dtype dt) {
  return dt == NCC_DT_U8 || dt == NCC_DT_U16 || dt == NCC_DT_U32 ||
         dt == NCC_DT_U64;
}

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

/* x86-64's (uint64_t)double: [0, 2^64) exactly, negative values through
 * int64 (so -1.0 gives 2^64 - 1), NaN and the rest 2^63. */
static uint64_t float_to_u64(double v) {
  if (v >= 0x1p63 && v < 0x1p64) return (uint64_t)v;
  return (uint64_t)float_to_i64(v);
}

/* An integer magnitude as a double rounded to odd at 53 bits: exact below
 * 2^53, and above it the one rounding that a second rounding to a
 * narrower float (f32, bf16, f16) cannot turn into a double rounding. */
static double u64_to_f64_odd(uint64_t m) {
  if (m < (1ull << 53)) return (double)m;
  int s = 0;
  while ((m >> s) >= (1ull << 53)) s++;
  uint64_t top = m >> s;
  if (m & ((1ull << s) - 1)) top |= 1; /* sticky */
  return ldexp((double)top, s);
}

/* ---- element access ---- */

double ncc_ref_get_f(const ncc_tensor *t, int64_t i) {
  const void *p = (const char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_F32: { float v; memcpy(&v, p, 4); return v; }
  case NCC_DT_F16: { uint16_t v; memcpy(&v, p, 2); return ncc_f16_to_f64(v); }
  case NCC_DT_BF16: { uint16_t v; memcpy(&v, p, 2); return ncc_bf16_to_f64(v); }
  case NCC_DT_F64: { double v; memcpy(&v, p, 8); return v; }
  case NCC_DT_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
  case NCC_DT_I8: case NCC_DT_U8: case NCC_DT_I16: case NCC_DT_U16:
  case NCC_DT_I32: case NCC_DT_U32: case NCC_DT_I64: case NCC_DT_BOOL:
    return (double)ncc_ref_get_i(t, i); /* rounds once (exact below 2^53) */
  default: NCC_ASSERT(!"ncc_ref_get_f: bad dtype"); return 0;
  }
}

int64_t ncc_ref_get_i(const ncc_tensor *t, int64_t i) {
  const void *p = (const char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_I8: return *(const int8_t *)p;
  case NCC_DT_U8: return *(const uint8_t *)p;
  case NCC_DT_I16: { int16_t v; memcpy(&v, p, 2); return v; }
  case NCC_DT_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
  case NCC_DT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
  case NCC_DT_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
  case NCC_DT_I64:
  case NCC_DT_U64: { int64_t v; memcpy(&v, p, 8); return v; } /* the bits */
  case NCC_DT_BOOL: return *(const uint8_t *)p != 0;
  default: return float_to_i64(ncc_ref_get_f(t, i));
  }
}

uint64_t ncc_ref_get_u(const ncc_tensor *t, int64_t i) {
  if (ncc_ref_is_float(t->dtype)) return float_to_u64(ncc_ref_get_f(t, i));
  return (uint64_t)ncc_ref_get_i(t, i);
}

/* Store an integer, wrapping to the width of t's dtype. */
static void store_int(ncc_tensor *t, int64_t i, uint64_t v) {
  void *p = (char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_I8:
  case NCC_DT_U8: { uint8_t w = (uint8_t)v; memcpy(p, &w, 1); break; }
  case NCC_DT_I16:
  case NCC_DT_U16: { uint16_t w = (uint16_t)v; memcpy(p, &w, 2); break; }
  case NCC_DT_I32:
  case NCC_DT_U32: { uint32_t w = (uint32_t)v; memcpy(p, &w, 4); break; }
  case NCC_DT_I64:
  case NCC_DT_U64: memcpy(p, &v, 8); break;
  case NCC_DT_BOOL: *(uint8_t *)p = v != 0; break;
  default: NCC_ASSERT(!"store_int: not an integer dtype");
  }
}

/* Store a float value rounded once to t's float dtype. */
static bool store_float(ncc_tensor *t, int64_t i, double v) {
  void *p = (char *)t->data + (size_t)i * ncc_dtype_size(t->dtype);
  switch (t->dtype) {
  case NCC_DT_F32: { float w = (float)v; memcpy(p, &w, 4); return true; }
  case NCC_DT_F16: { uint16_t w = ncc_f16_from_f64(v); memcpy(p, &w, 2); return true; }
  case NCC_DT_BF16: { uint16_t w = ncc_bf16_from_f64(v); memcpy(p, &w, 2); return true; }
  case NCC_DT_F64: memcpy(p, &v, 8); return true;
  default: return false;
  }
}

void ncc_ref_set_f(ncc_tensor *t, int64_t i, double v) {
  if (store_float(t, i, v)) return;
  switch (t->dtype) {
  case NCC_DT_BOOL: store_int(t, i, v != 0); break; /* NaN != 0 */
  case NCC_DT_I64: store_int(t, i, (uint64_t)float_to_i64(v)); break;
  case NCC_DT_U64:
  case NCC_DT_U32: store_int(t, i, float_to_u64(v)); break; /* low bits */
  default: store_int(t, i, (uint64_t)(int64_t)float_to_i32(v)); break;
  }
}

void ncc_ref_set_i(ncc_tensor *t, int64_t i, int64_t v) {
  if (!ncc_ref_is_float(t->dtype)) {
    store_int(t, i, (uint64_t)v);
  } else if (t->dtype == NCC_DT_F32) { /* int64 -> float rounds once */
    float w = (float)v;
    memcpy((char *)t->data + (size_t)i * 4, &w, 4);
  } else {
    uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    double d = u64_to_f64_odd(m);
    store_float(t, i, v < 0 ? -d : d);
  }
}

void ncc_ref_set_u(ncc_tensor *t, int64_t i, uint64_t v) {
  if (!ncc_ref_is_float(t->dtype)) {
    store_int(t, i, v);
  } else if (t->dtype == NCC_DT_F32) {
    float w = (float)v;
    memcpy((char *)t->data + (size_t)i * 4, &w, 4);
  } else {
    store_float(t, i, u64_to_f64_odd(v));
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
