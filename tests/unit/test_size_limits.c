/* tests/unit/test_size_limits.c — sizes computed from dims are checked,
 * never wrapped: the helper (ir/size.c) at the limit and one past it,
 * tensors, .npy headers, and ncc_module_run when an empty input of
 * [2^62, 0] binds a symbolic dim that sizes the outputs (cpu, ref, and
 * opencl and cuda where available; the AOT library's side is
 * tests/aot/test_aot_safety.py). The limit is PTRDIFF_MAX bytes; the
 * oracle is plain integer arithmetic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

static const size_t LIM = (size_t)PTRDIFF_MAX;
static const int64_t BIG = (int64_t)1 << 62;

static void test_helper(void **state) {
  (void)state;
  size_t r = 7;
  assert_true(NCC_SIZE_LIMIT == LIM);
  assert_true(ncc_size_mul(LIM, 1, &r) && r == LIM);       /* at the limit */
  assert_false(ncc_size_mul(LIM / 2 + 1, 2, &r));          /* one past */
  assert_true(ncc_size_mul(0, SIZE_MAX, &r) && r == 0);
  assert_true(ncc_size_add(LIM - 1, 1, &r) && r == LIM);
  assert_false(ncc_size_add(LIM, 1, &r));
  assert_false(ncc_size_add(SIZE_MAX, 0, &r));
  /* 7 * (LIM / 7) is the limit exactly: 2^63 - 1 = 7 * 1317624576693539401 */
  int64_t at[2] = {7, (int64_t)(LIM / 7)}, past[2] = {7, (int64_t)(LIM / 7) + 1};
  assert_true(ncc_dims_numel(2, at, &r) && r == LIM);
  assert_false(ncc_dims_numel(2, past, &r));
  assert_true(ncc_dims_nbytes(1, 2, at, &r) && r == LIM);
  assert_false(ncc_dims_nbytes(2, 2, at, &r));
  /* a 0 anywhere: empty, but the other dims' product must still fit */
  int64_t empty[3] = {BIG, 0, 1}, lim_empty[2] = {(int64_t)LIM, 0};
  int64_t wide_empty[3] = {BIG, 2, 0}, neg[2] = {0, -1};
  assert_true(ncc_dims_nbytes(8, 3, empty, &r) && r == 0);
  assert_true(ncc_dims_nbytes(8, 2, lim_empty, &r) && r == 0); /* at the limit */
  assert_false(ncc_dims_numel(3, wide_empty, &r));              /* 2^63: one past */
  assert_false(ncc_dims_numel(2, neg, &r));
  int64_t huge[2] = {BIG, 4};
  assert_false(ncc_dims_nbytes(4, 2, huge, &r));
}

static void test_tensors(void **state) {
  (void)state;
  ncc_tensor t;
  int64_t empty[2] = {BIG, 0};
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, empty), NCC_OK);
  assert_int_equal(ncc_tensor_nbytes(&t), 0);
  assert_int_equal(ncc_tensor_numel(&t), 0);
  ncc_tensor_free(&t);
  int64_t huge[2] = {BIG, 4}, wide_empty[3] = {BIG, BIG, 0};
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, huge), NCC_ERR_INPUT);
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 3, wide_empty), NCC_ERR_INPUT);
  ncc_tensor v = {.dtype = NCC_DT_F32, .rank = 2, .dims = {BIG / 4, 4}};
  assert_true(ncc_tensor_nbytes(&v) == SIZE_MAX); /* 2^64 does not wrap to 0 */
  assert_int_equal(ncc_tensor_numel(&v), BIG);
  v.dims[1] = 8;
  assert_int_equal(ncc_tensor_numel(&v), -1);
}

/* A .npy of shape (2^62, 0) is an empty array; (2^62, 4) f4 is too large. */
static ncc_status npy_with_shape(const char *shape, ncc_tensor *out) {
  char buf[128];
  char hdr[118];
  int n = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }",
                   shape);
  memset(hdr + n, ' ', sizeof hdr - (size_t)n - 1);
  hdr[sizeof hdr - 1] = '\n';
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (char)sizeof hdr;
  buf[9] = 0;
  memcpy(buf + 10, hdr, sizeof hdr);
  return ncc_npy_read_buffer(buf, sizeof buf, "t.npy", out);
}

static void test_npy(void **state) {
  (void)state;
  ncc_tensor t;
  assert_int_equal(npy_with_shape("(4611686018427387904, 0)", &t), NCC_OK);
  assert_int_equal(t.dims[0], BIG);
  assert_int_equal(ncc_tensor_nbytes(&t), 0);
  ncc_tensor_free(&t);
  assert_int_equal(npy_with_shape("(4611686018427387904, 4)", &t), NCC_ERR_INPUT);
  assert_int_equal(npy_with_shape("(2305843009213693952, 4)", &t), NCC_ERR_INPUT);
}

/* y = Relu(x @ k) is sized [N, 4] from x's N; the transpose keeps an
 * intermediate in the executor's arena, whose plan is linear in N. */
static const char *MODEL =
    "graph @sz(%x: f32[N,0], %k: f32[0,4], %z: f32[M,4]) {\n"
    "  %r: f32[N,4] = MatMul(%x, %k)\n"
    "  %t: f32[4,N] = Transpose(%r) {perm = [1, 0]}\n"
    "  %y: f32[4,N] = Relu(%t)\n"
    "  %w: f32[M,4] = Relu(%z)\n"
    "  return %y, %w\n"
    "}\n";

static ncc_status run_sz(ncc_module *m, int64_t n, int64_t rows, ncc_tensor *out) {
  static float dummy, z[8] = {-1, 2, -3, 4, 5, -6, 7, -8};
  ncc_tensor in[3] = {
      {.dtype = NCC_DT_F32, .rank = 2, .dims = {n, 0}, .data = &dummy},
      {.dtype = NCC_DT_F32, .rank = 2, .dims = {0, 4}, .data = &dummy},
      {.dtype = NCC_DT_F32, .rank = 2, .dims = {rows, 4}, .data = z}};
  return ncc_module_run(m, in, 3, out, 2);
}

static void check_target(const char *target) {
  if (ncc_target_available(target, NULL, 0) != NCC_OK) {
    print_message("target %s unavailable: skipped\n", target);
    skip();
  }
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(MODEL, strlen(MODEL), "sz.nir", &g), NCC_OK);
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile(g, target, &m), NCC_OK);
  ncc_tensor out[2];
  /* a small run first, so the arena plan exists */
  assert_int_equal(run_sz(m, 3, 2, out), NCC_OK);
  assert_int_equal(out[0].dims[1], 3);
  for (int i = 0; i < 12; i++) assert_true(((float *)out[0].data)[i] == 0.0f);
  assert_true(((float *)out[1].data)[1] == 2.0f && ((float *)out[1].data)[0] == 0.0f);
  for (int o = 0; o < 2; o++) ncc_tensor_free(&out[o]);
  /* N = 2^62 (the report): 2^66 bytes would wrap to 0 */
  ncc_status st = run_sz(m, BIG, 2, out);
  print_message("%s, N = 2^62: %s\n", target, ncc_error_message());
  assert_int_equal(st, NCC_ERR_INPUT);
  /* at the limit (4N f32 = 2^63 - 16 bytes) and one past it */
  st = run_sz(m, ((int64_t)1 << 59) - 1, 2, out);
  print_message("%s, N = 2^59 - 1: %s\n", target, ncc_error_message());
  assert_true(st == NCC_ERR_INPUT || st == NCC_ERR_NOMEM);
  assert_int_equal(run_sz(m, (int64_t)1 << 59, 2, out), NCC_ERR_INPUT);
  /* an input whose own size overflows */
  assert_int_equal(run_sz(m, 1, BIG, out), NCC_ERR_INPUT);
  /* still fine afterwards */
  assert_int_equal(run_sz(m, 1, 2, out), NCC_OK);
  assert_int_equal(out[0].dims[1], 1);
  for (int o = 0; o < 2; o++) ncc_tensor_free(&out[o]);
  ncc_module_free(m);
  ncc_graph_free(g);
}

static void test_module_cpu(void **state) {
  (void)state;
  check_target("cpu");
}

static void test_module_ref(void **state) {
  (void)state;
  check_target("ref");
}

/* The GPU targets size device buffers from the same dims (skipped where
 * the target is unavailable; PoCL gives opencl on a CPU). */
static void test_module_opencl(void **state) {
  (void)state;
  check_target("opencl");
}

static void test_module_cuda(void **state) {
  (void)state;
  check_target("cuda");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_helper),     cmocka_unit_test(test_tensors),
      cmocka_unit_test(test_npy),        cmocka_unit_test(test_module_cpu),
      cmocka_unit_test(test_module_ref),  cmocka_unit_test(test_module_opencl),
      cmocka_unit_test(test_module_cuda),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
