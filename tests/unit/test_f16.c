/* tests/unit/test_f16.c — the one f16 conversion (ir/f16.c) against numpy:
 * all 65536 f16 -> f32 and f16 -> f64, and f32 / f64 -> f16 over every
 * f32 (resp. every f64 exponent near the f16 range) with each top fraction
 * pattern and the low bits that decide rounding (0, 1, below/at/above the
 * halfway point, all ones). The results are reduced to FNV-1a checksums
 * that numpy computed (tests/f16/f16_oracle.py prints them; the test
 * python.f16_oracle checks they are still numpy's). A few named cases
 * give a readable failure first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/f16.h"

#define NUMPY_H2F 0xb0659868ec053145ull
#define NUMPY_H2D 0x8f7ef86d4127a125ull
#define NUMPY_F2H 0xf737d767704e4915ull
#define NUMPY_D2H 0x5121c64ad01e4915ull

static uint64_t fnv(uint64_t h, uint64_t v, int bytes) { /* little endian */
  for (int i = 0; i < bytes; i++) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  return h;
}
#define FNV0 0xcbf29ce484222325ull

static uint32_t f32_bits(float f) { uint32_t x; memcpy(&x, &f, 4); return x; }
static uint64_t f64_bits(double d) { uint64_t x; memcpy(&x, &d, 8); return x; }
static float bits_f32(uint32_t x) { float f; memcpy(&f, &x, 4); return f; }
static double bits_f64(uint64_t x) { double d; memcpy(&d, &x, 8); return d; }

static void named_cases(void **state) {
  (void)state;
  assert_int_equal(ncc_f16_from_f32(1.0f), 0x3c00);
  assert_int_equal(ncc_f16_from_f32(65504.0f), 0x7bff);
  assert_int_equal(ncc_f16_from_f32(65519.99f), 0x7bff);
  assert_int_equal(ncc_f16_from_f32(65520.0f), 0x7c00);       /* tie to inf */
  assert_int_equal(ncc_f16_from_f32(1.0f + 0x1p-11f), 0x3c00); /* tie, even */
  assert_int_equal(ncc_f16_from_f32(1.0f + 0x1p-11f + 0x1p-23f), 0x3c01);
  assert_int_equal(ncc_f16_from_f32(0x1p-25f), 0x0000);        /* tie to 0 */
  assert_int_equal(ncc_f16_from_f32(-0x1.000002p-25f), 0x8001);
  assert_int_equal(ncc_f16_from_f32(0x1.ffcp-15f), 0x0400); /* tie up to normal */
  assert_int_equal(ncc_f16_from_f32(bits_f32(0x7f800001u)), 0x7c01); /* sNaN */
  assert_int_equal(ncc_f16_from_f32(bits_f32(0xffc02000u)), 0xfe01);
  /* f64 rounds once: 1 + 2^-11 + 2^-40 is above the tie in f64 only. */
  assert_int_equal(ncc_f16_from_f64(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
  assert_int_equal(f32_bits(ncc_f16_to_f32(0x0001)), f32_bits(0x1p-24f));
  assert_int_equal(f32_bits(ncc_f16_to_f32(0x7c01)), 0x7f802000u);
  assert_int_equal(f64_bits(ncc_f16_to_f64(0xfd55)), 0xfff5540000000000ull);
}

static void f16_to_wide_matches_numpy(void **state) {
  (void)state;
  uint64_t hf = FNV0, hd = FNV0;
  for (uint32_t h = 0; h < 65536; h++) {
    hf = fnv(hf, f32_bits(ncc_f16_to_f32((uint16_t)h)), 4);
    hd = fnv(hd, f64_bits(ncc_f16_to_f64((uint16_t)h)), 8);
  }
  assert_true(hf == NUMPY_H2F);
  assert_true(hd == NUMPY_H2D);
}

static void f32_to_f16_matches_numpy(void **state) {
  (void)state;
  static const uint32_t lo[] = {0, 1, 0xfff, 0x1000, 0x1001, 0x1fff};
  uint64_t h = FNV0;
  for (uint32_t top = 0; top < (1u << 19); top++)
    for (int i = 0; i < 6; i++)
      h = fnv(h, ncc_f16_from_f32(bits_f32((top << 13) | lo[i])), 2);
  assert_true(h == NUMPY_F2H);
}

static void f64_to_f16_matches_numpy(void **state) {
  (void)state;
  static const uint64_t lo[] = {0, 1, (1ull << 41) - 1, 1ull << 41,
                                (1ull << 41) + 1, (1ull << 42) - 1};
  uint64_t h = FNV0;
  for (uint64_t top = 0; top < (1ull << 22); top++) {
    uint64_t e = (top >> 10) & 0x7ff;
    if (!((e >= 1023 - 30 && e <= 1023 + 17) || e == 0 || e == 0x7ff)) continue;
    for (int i = 0; i < 6; i++)
      h = fnv(h, ncc_f16_from_f64(bits_f64((top << 42) | lo[i])), 2);
  }
  assert_true(h == NUMPY_D2H);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(named_cases),
      cmocka_unit_test(f16_to_wide_matches_numpy),
      cmocka_unit_test(f32_to_f16_matches_numpy),
      cmocka_unit_test(f64_to_f16_matches_numpy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
