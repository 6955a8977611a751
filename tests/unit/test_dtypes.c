/* tests/unit/test_dtypes.c — the dtypes appended to ncc_dtype (i16, u16,
 * u32, u64, bf16): names and sizes, the text IR (canonical text with each
 * type's extremes, u64 above 2^63, bf16 specials), bf16 conversion facts
 * (IEEE/ml_dtypes bit patterns worked out by hand in the comments), and the
 * reference accessors' integer rules where no outside runtime can be the
 * oracle (ONNX Runtime traps on INT64_MIN / -1): C's own unsigned
 * arithmetic defines the expected wrap-around.
 * Arithmetic against onnxruntime is tests/py/dtype_ort.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/f16.h"
#include "ir/ir.h"
#include "runtime/ref/ref.h"

static void test_names_and_sizes(void **state) {
  (void)state;
  static const struct {
    ncc_dtype dt;
    const char *name;
    size_t size;
  } want[] = {{NCC_DT_I16, "i16", 2}, {NCC_DT_U16, "u16", 2},
              {NCC_DT_U32, "u32", 4}, {NCC_DT_U64, "u64", 8},
              {NCC_DT_BF16, "bf16", 2}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    assert_string_equal(ncc_dtype_name(want[i].dt), want[i].name);
    assert_int_equal(ncc_dtype_size(want[i].dt), want[i].size);
    assert_int_equal(ncc_dtype_from_name(want[i].name, strlen(want[i].name)),
                     want[i].dt);
  }
  /* appended: the old values keep their numbers (a public ABI) */
  assert_int_equal(NCC_DT_BOOL, 8);
  assert_int_equal(NCC_DT_I16, 9);
  assert_int_equal(NCC_DT_BF16, 13);
}

static void check_canonical(const char *text) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_parse_text(text, strlen(text), "t.nir", &g);
  if (st) fail_msg("parse: %s", ncc_error_message());
  char *t = ncc_graph_print_string(g);
  assert_non_null(t);
  if (strcmp(t, text) != 0) fprintf(stderr, "--- in\n%s--- out\n%s", text, t);
  assert_string_equal(t, text);
  free(t);
  ncc_graph_free(g);
}

static void test_text_ir(void **state) {
  (void)state;
  check_canonical(
      "graph @d(%x: f32[2]) {\n"
      "  %a: i16[3] = const [-32768, 0, 32767]\n"
      "  %b: u16[2] = const [0, 65535]\n"
      "  %c: u32[2] = const [0, 4294967295]\n"
      "  %e: u64[3] = const [0, 9223372036854775808, 18446744073709551615]\n"
      "  %f: bf16[6] = const [1.0, -2.5, inf, -inf, nan, 9.1835e-41]\n"
      "  return %x\n"
      "}\n");
  /* the values land as the bits they name */
  const char *text = "graph @d() {\n  %e: u64[1] = const [18446744073709551614]\n"
                     "  %f: bf16[2] = const [1.00390625, 3.0]\n  return %e, %f\n}\n";
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(text, strlen(text), "t.nir", &g), NCC_OK);
  const ncc_value *e = ncc_graph_find_value(g, "e"), *f = ncc_graph_find_value(g, "f");
  assert_true(((const uint64_t *)e->data)[0] == UINT64_MAX - 1);
  /* 1 + 2^-8 is a tie between bf16 1.0 (0x3f80) and 1.0078125 (0x3f81):
   * to even, 0x3f80; 3.0 is 0x4040 */
  assert_int_equal(((const uint16_t *)f->data)[0], 0x3f80);
  assert_int_equal(((const uint16_t *)f->data)[1], 0x4040);
  ncc_graph_free(g);
  /* out of range for the dtype */
  static const char *const bad[] = {
      "graph @d() {\n  %a: i16[1] = const [32768]\n  return %a\n}\n",
      "graph @d() {\n  %a: u16[1] = const [-1]\n  return %a\n}\n",
      "graph @d() {\n  %a: u32[1] = const [4294967296]\n  return %a\n}\n",
      "graph @d() {\n  %a: u64[1] = const [18446744073709551616]\n  return %a\n}\n",
      "graph @d() {\n  %a: u64[1] = const [-1]\n  return %a\n}\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    g = NULL;
    assert_int_equal(ncc_graph_parse_text(bad[i], strlen(bad[i]), "t.nir", &g),
                     NCC_ERR_INPUT);
    assert_null(g);
  }
}

/* bf16 is the top half of an f32; from wider floats it rounds once, to
 * nearest even, with subnormals (2^-133 is the smallest) and overflow. */
static void test_bf16_conversions(void **state) {
  (void)state;
  /* every bf16 survives bf16 -> f32 -> bf16 and bf16 -> f64 -> bf16 */
  for (uint32_t h = 0; h < 0x10000; h++) {
    uint16_t b = (uint16_t)h;
    bool nan = (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    uint16_t r32 = ncc_bf16_from_f32(ncc_bf16_to_f32(b));
    uint16_t r64 = ncc_bf16_from_f64(ncc_bf16_to_f64(b));
    if (nan) { /* stays a NaN of the same sign, made quiet */
      assert_int_equal(r32 & 0xffc0, (b & 0x8000) | 0x7fc0);
      assert_int_equal(r64 & 0xffc0, (b & 0x8000) | 0x7fc0);
    } else {
      assert_int_equal(r32, b);
      assert_int_equal(r64, b);
    }
  }
  /* f64 1 + 2^-8 + 2^-30: just above the tie, up to 0x3f81 (via f32 it
   * would first round to the tie 1 + 2^-8 and then down to 0x3f80) */
  assert_int_equal(ncc_bf16_from_f64(1.0 + 0x1p-8 + 0x1p-30), 0x3f81);
  assert_int_equal(ncc_bf16_from_f64(1.0 + 0x1p-8), 0x3f80);       /* tie, even */
  assert_int_equal(ncc_bf16_from_f64(1.0 + 3 * 0x1p-8), 0x3f82);   /* tie, even */
  assert_int_equal(ncc_bf16_from_f64(0x1p-133), 0x0001);           /* min subnormal */
  assert_int_equal(ncc_bf16_from_f64(0x1p-134), 0x0000);           /* tie to 0 */
  assert_int_equal(ncc_bf16_from_f64(-0x1.000001p-134), 0x8001);
  assert_int_equal(ncc_bf16_from_f64(0x1.ffp127), 0x7f80);         /* rounds up to inf */
  assert_int_equal(ncc_bf16_from_f64(0x1.fep127), 0x7f7f);         /* max finite */
  assert_int_equal(ncc_bf16_from_f32(1e-40f), 0x0001);             /* f32 subnormal */
  assert_int_equal(ncc_bf16_from_f32(-0.0f), 0x8000);
}

static ncc_tensor t1(ncc_dtype dt, void *data) {
  ncc_tensor t = {.dtype = dt, .rank = 1, .dims = {1}, .data = data};
  return t;
}

/* The accessors: u64 values above 2^63 keep their value through get_u /
 * set_u and convert to float in one rounding. */
static void test_accessors(void **state) {
  (void)state;
  uint64_t u = 0xfffffffffffffc01ull; /* 2^64 - 1023: f64 rounds it to 2^64 */
  ncc_tensor tu = t1(NCC_DT_U64, &u);
  assert_true(ncc_ref_get_u(&tu, 0) == 0xfffffffffffffc01ull);
  assert_true(ncc_ref_get_f(&tu, 0) == 0x1p64);
  float f;
  ncc_tensor tf = t1(NCC_DT_F32, &f);
  ncc_ref_set_u(&tf, 0, u);
  assert_true(f == 0x1p64f);
  /* i64 2^62 + 2^54 + 1 -> bf16 (ulp 2^55 there): one rounding goes up to
   * 2^62 + 2^55, the +1 breaking the tie; through a plain double the +1 is
   * lost (ulp 2^9), leaving the tie, which rounds to even: 2^62 */
  uint16_t b;
  ncc_tensor tb = t1(NCC_DT_BF16, &b);
  ncc_ref_set_i(&tb, 0, (int64_t)(0x1p62 + 0x1p54) + 1);
  assert_int_equal(b, 0x5e81); /* 2^62 * (1 + 2^-7) */
  ncc_ref_set_i(&tb, 0, (int64_t)(0x1p62 + 0x1p54));
  assert_int_equal(b, 0x5e80); /* the tie itself: to even, 2^62 */
  /* float -> u64 and u32: x86-64's conversions (negative values wrap) */
  uint64_t w;
  ncc_tensor tw = t1(NCC_DT_U64, &w);
  ncc_ref_set_f(&tw, 0, 1.5e19);
  assert_true(w == 15000000000000000000ull);
  ncc_ref_set_f(&tw, 0, -1.0);
  assert_true(w == UINT64_MAX);
  uint32_t w32;
  ncc_tensor tw32 = t1(NCC_DT_U32, &w32);
  ncc_ref_set_f(&tw32, 0, 4294967295.0);
  assert_true(w32 == 4294967295u);
  /* i16 stores wrap */
  int16_t s;
  ncc_tensor ts = t1(NCC_DT_I16, &s);
  ncc_ref_set_i(&ts, 0, 40000);
  assert_int_equal(s, (int16_t)(40000 - 65536));
}

/* Integer Div on the corner ORT cannot run (INT64_MIN / -1 traps there):
 * ncc wraps, as two's complement negation does. */
static void test_div_wraps(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("div");
  ncc_shape s = {.rank = 1, .d = {2}};
  int64_t a[2] = {INT64_MIN, -7}, b[2] = {-1, 2};
  ncc_value *va = ncc_graph_add_const(g, "a", NCC_DT_I64, &s, a);
  ncc_value *vb = ncc_graph_add_const(g, "b", NCC_DT_I64, &s, b);
  ncc_value *ins[2] = {va, vb};
  ncc_node *n = ncc_graph_add_node(g, NCC_OP_DIV, "d", 2, ins, 1);
  assert_non_null(n);
  int64_t o[2] = {0, 0};
  ncc_tensor ta = {.dtype = NCC_DT_I64, .rank = 1, .dims = {2}, .data = a};
  ncc_tensor tb = {.dtype = NCC_DT_I64, .rank = 1, .dims = {2}, .data = b};
  ncc_tensor to = {.dtype = NCC_DT_I64, .rank = 1, .dims = {2}, .data = o};
  const ncc_tensor *in[2] = {&ta, &tb};
  assert_int_equal(ncc_ref_DIV(n, in, &to), NCC_OK);
  assert_true(o[0] == INT64_MIN); /* -(INT64_MIN) wraps to itself */
  assert_true(o[1] == -3);        /* truncation toward zero, not -4 */
  ncc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names_and_sizes),
      cmocka_unit_test(test_text_ir),
      cmocka_unit_test(test_bf16_conversions),
      cmocka_unit_test(test_accessors),
      cmocka_unit_test(test_div_wraps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
