/* ir/f16.c — IEEE binary16 and bfloat16 <-> binary32/binary64 on bits, so
 * the result does not depend on the FPU (no quieting of signalling NaNs, no
 * flush of subnormals) and an f64 source is rounded once, not via f32.
 * Matches numpy's npy_half conversions bit for bit (tests/unit/test_f16.c);
 * bf16 rounds to nearest even like ml_dtypes.bfloat16 (tests/unit/test_bf16.c).
 */
#include <string.h>

#include "f16.h"

/* A finite nonzero value (-1)^sign * 1.m * 2^e with an `mbits`-bit
 * fraction m, rounded to f16. */
static uint16_t round_to_f16(uint16_t sign, int e, uint64_t m, int mbits) {
  if (e >= 16) return sign | 0x7c00;
  if (e < -25) return sign; /* below half the smallest subnormal */
  uint64_t r, rem, half;
  if (e >= -14) { /* normal: keep the top 10 fraction bits */
    int shift = mbits - 10;
    r = ((uint64_t)(e + 15) << 10) | (m >> shift);
    rem = m & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
  } else { /* subnormal: units of 2^-24 */
    uint64_t full = m | (1ull << mbits);
    int shift = mbits - 24 - e; /* full * 2^(e - mbits) / 2^-24 */
    r = full >> shift;
    rem = full & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
  }
  /* A carry out of the fraction steps the exponent, up to inf. */
  if (rem > half || (rem == half && (r & 1))) r++;
  return (uint16_t)(sign | r);
}

uint16_t ncc_f16_from_f32(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int e = (int)((x >> 23) & 0xff);
  uint32_t m = x & 0x7fffffu;
  if (e == 0xff) {
    if (!m) return sign | 0x7c00;
    uint16_t r = (uint16_t)(0x7c00 | (m >> 13));
    return sign | (r == 0x7c00 ? 0x7c01 : r);
  }
  if (e == 0) return sign; /* zero or an f32 subnormal: < 2^-126 */
  return round_to_f16(sign, e - 127, m, 23);
}

uint16_t ncc_f16_from_f64(double d) {
  uint64_t x;
  memcpy(&x, &d, 8);
  uint16_t sign = (uint16_t)((x >> 48) & 0x8000);
  int e = (int)((x >> 52) & 0x7ff);
  uint64_t m = x & ((1ull << 52) - 1);
  if (e == 0x7ff) {
    if (!m) return sign | 0x7c00;
    uint16_t r = (uint16_t)(0x7c00 | (m >> 42));
    return sign | (r == 0x7c00 ? 0x7c01 : r);
  }
  if (e == 0) return sign;
  return round_to_f16(sign, e - 1023, m, 52);
}

float ncc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 31,
           m = h & 0x3ff, x;
  if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else if (e == 0) {
    if (!m) {
      x = sign;
    } else { /* subnormal f16: normalise, every one is a normal f32 */
      int k = 0;
      while (!(m & 0x400)) m <<= 1, k++;
      x = sign | ((uint32_t)(113 - k) << 23) | ((m & 0x3ff) << 13);
    }
  } else {
    x = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

double ncc_f16_to_f64(uint16_t h) {
  uint64_t sign = (uint64_t)(h & 0x8000) << 48, m = h & 0x3ff;
  if (((h >> 10) & 31) == 31) {
    uint64_t x = sign | (0x7ffull << 52) | (m << 42);
    double d;
    memcpy(&d, &x, 8);
    return d;
  }
  return (double)ncc_f16_to_f32(h); /* finite: exact */
}

/* ---- bfloat16: sign, 8 exponent bits (f32's), 7 fraction bits ---- */

/* A finite nonzero (-1)^sign * 1.m * 2^e with an `mbits`-bit fraction m
 * (mbits >= 8), rounded to bf16: normal from 2^-126, subnormal in units of
 * 2^-133 below, inf from the rounding overflow up. */
static uint16_t round_to_bf16(uint16_t sign, int e, uint64_t m, int mbits) {
  if (e >= 128) return sign | 0x7f80;
  if (e < -134) return sign; /* below half the smallest subnormal */
  uint64_t r, rem, half;
  if (e >= -126) {
    int shift = mbits - 7;
    r = ((uint64_t)(e + 127) << 7) | (m >> shift);
    rem = m & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
  } else {
    uint64_t full = m | (1ull << mbits);
    int shift = mbits - 133 - e; /* full * 2^(e - mbits) / 2^-133 */
    r = full >> shift;
    rem = full & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
  }
  if (rem > half || (rem == half && (r & 1))) r++;
  return (uint16_t)(sign | r);
}

/* A NaN keeps its sign and top payload bits and is made quiet, so a
 * payload that truncates to zero stays a NaN (ml_dtypes does the same). */
uint16_t ncc_bf16_from_f32(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int e = (int)((x >> 23) & 0xff);
  uint32_t m = x & 0x7fffffu;
  if (e == 0xff) return m ? (uint16_t)((x >> 16) | 0x40) : (sign | 0x7f80);
  if (e == 0) { /* f32 subnormal: bf16 shares the exponent range */
    if (!m) return sign;
    int k = 0; /* normalise: m * 2^-149 = 1.f * 2^(-127 - k) */
    while (!(m & 0x400000u)) m <<= 1, k++;
    return round_to_bf16(sign, -127 - k, (m << 1) & 0x7fffffu, 23);
  }
  return round_to_bf16(sign, e - 127, m, 23);
}

uint16_t ncc_bf16_from_f64(double d) {
  uint64_t x;
  memcpy(&x, &d, 8);
  uint16_t sign = (uint16_t)((x >> 48) & 0x8000);
  int e = (int)((x >> 52) & 0x7ff);
  uint64_t m = x & ((1ull << 52) - 1);
  if (e == 0x7ff) return m ? (uint16_t)(sign | 0x7fc0 | (m >> 45)) : (sign | 0x7f80);
  if (e == 0) return sign; /* < 2^-1022: far below bf16's subnormals */
  return round_to_bf16(sign, e - 1023, m, 52);
}

float ncc_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

double ncc_bf16_to_f64(uint16_t h) {
  uint16_t e = h & 0x7f80;
  if (e == 0x7f80 && (h & 0x7f)) { /* NaN: keep sign and payload bits */
    uint64_t x = ((uint64_t)(h & 0x8000) << 48) | (0x7ffull << 52) |
                 ((uint64_t)(h & 0x7f) << 45);
    double d;
    memcpy(&d, &x, 8);
    return d;
  }
  return (double)ncc_bf16_to_f32(h); /* exact */
}
