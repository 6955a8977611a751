/* tests/aot_rt/test_aot_rt.c — the AOT runtime (codegen/llvm/aot_rt/, the
 * fixed part of every library `ncc compile --emit=lib` writes) driven
 * directly, through two hand-made models (toy_a.c, toy_b.c) in one
 * program: results against plain C arithmetic, the scratch plan (live
 * tensors never share bytes, dead ones do, the plan follows the sizes),
 * the thread pool's shares, the checked sizes and the API's errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "toy.h"

static int64_t round64(int64_t b) { return (b + 63) / 64 * 64; }

/* Runs toya on n rows and checks both outputs against the formula. */
static void run_toya(toya_model *m, int64_t n) {
  float *x = malloc((size_t)(n ? n : 1) * 4 * sizeof *x);
  assert_non_null(x);
  for (int64_t i = 0; i < n * 4; i++) x[i] = (float)(i % 7) - 3.0f;
  int64_t dims[2] = {n, 4};
  assert_int_equal(toya_set_input(m, 0, x, 2, dims), TOYA_STATUS_OK);
  assert_int_equal(toya_run(m), TOYA_STATUS_OK);
  int rank = -1;
  int64_t od[8] = {0};
  const float *y = toya_output(m, 0, &rank, od);
  const float *xc = toya_output(m, 1, NULL, NULL);
  assert_non_null(y);
  assert_non_null(xc);
  assert_int_equal(rank, 2);
  assert_int_equal(od[0], n);
  assert_int_equal(od[1], 4);
  for (int64_t i = 0; i < n * 4; i++) {
    float want = -(2.0f * (x[i] + (float)(i % 4 + 1)) + 1.0f);
    if (y[i] != want) fail_msg("y[%lld] = %g, want %g", (long long)i, y[i], want);
    assert_true(xc[i] == x[i]);
  }
  free(x);
}

/* Scratch bytes of live-together tensors never overlap; t0 and t2 (never
 * alive together) share theirs, and the arena is two tensors. */
static void check_toya_plan(const toya_model *m, int64_t n) {
  int64_t s = round64(n * 16), o[TOYA_TMP];
  for (int t = 0; t < TOYA_TMP; t++) {
    o[t] = toya_test_tmp_off(m, t);
    assert_int_equal(o[t] % 64, 0);
  }
  assert_true(o[0] + s <= o[1] || o[1] + s <= o[0]); /* t0, t1: steps 1 */
  assert_true(o[1] + s <= o[2] || o[2] + s <= o[1]); /* t1, t2: step 2 */
  assert_int_equal(o[0], o[2]);
  assert_int_equal(toya_test_arena(m), 2 * s);
}

static void test_results_and_plan(void **state) {
  (void)state;
  toya_model *m = toya_create(1);
  assert_non_null(m);
  assert_int_equal(toya_num_threads(m), 1);
  static const int64_t ns[] = {5, 1, 300, 17, 0, 5};
  for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
    run_toya(m, ns[k]); /* new sizes: planned anew */
    if (ns[k]) check_toya_plan(m, ns[k]);
  }
  toya_free(m);
}

static void test_threads(void **state) {
  (void)state;
  toya_model *m = toya_create(4);
  assert_non_null(m);
  assert_int_equal(toya_num_threads(m), 4);
  memset(toya_shares, 0, sizeof toya_shares);
  run_toya(m, 64); /* 256 elements * cost 4096: every thread */
  assert_int_equal(toya_last_nth, 4);
  for (int t = 0; t < 64; t++) assert_int_equal(toya_shares[t], t < 4 ? 1 : 0);
  run_toya(m, 3001); /* uneven shares */
  for (int t = 0; t < 4; t++) assert_int_equal(toya_shares[t], 2);
  toya_free(m);
  m = toya_create(0); /* a thread per core, at least one */
  assert_non_null(m);
  assert_true(toya_num_threads(m) >= 1 && toya_num_threads(m) <= 64);
  run_toya(m, 9);
  toya_free(m);
}

static void test_api_errors(void **state) {
  (void)state;
  assert_int_equal(toya_num_inputs(), 1);
  assert_int_equal(toya_num_outputs(), 2);
  assert_string_equal(toya_input_name(0), "x");
  assert_string_equal(toya_output_type(1), "f32[N,4]");
  assert_null(toya_input_name(1));
  assert_null(toya_output_name(-1));
  toya_model *m = toya_create(1);
  assert_non_null(m);
  int rank = 7;
  assert_null(toya_output(m, 0, &rank, NULL)); /* no run yet */
  assert_int_equal(rank, 0);
  assert_int_equal(toya_run(m), TOYA_STATUS_NOT_SET);
  assert_non_null(strstr(toya_error(m), "'x' is not set"));
  float x[8] = {0};
  int64_t good[2] = {2, 4}, bad_dim[2] = {2, 5}, neg[2] = {-1, 4};
  assert_int_equal(toya_set_input(m, 1, x, 2, good), TOYA_STATUS_BAD_ARG);
  assert_int_equal(toya_set_input(m, 0, x, 1, good), TOYA_STATUS_BAD_ARG);
  assert_non_null(strstr(toya_error(m), "rank 1, expected 2"));
  assert_int_equal(toya_set_input(m, 0, x, 2, bad_dim), TOYA_STATUS_BAD_ARG);
  assert_int_equal(toya_set_input(m, 0, x, 2, neg), TOYA_STATUS_BAD_ARG);
  assert_int_equal(toya_set_input(m, 0, NULL, 2, good), TOYA_STATUS_BAD_ARG);
  int64_t huge[2] = {INT64_MAX / 8, 4};
  assert_int_equal(toya_set_input(m, 0, x, 2, huge), TOYA_STATUS_BAD_ARG);
  assert_non_null(strstr(toya_error(m), "overflows"));
  assert_int_equal(toya_set_input(m, 0, x, 2, good), TOYA_STATUS_OK);
  assert_int_equal(toya_run(m), TOYA_STATUS_OK);
  assert_non_null(toya_output(m, 0, NULL, NULL));
  /* a call from inside a run on the same model is refused, changing nothing */
  toya_reenter = m;
  assert_int_equal(toya_run(m), TOYA_STATUS_OK);
  toya_reenter = NULL;
  assert_int_equal(toya_reenter_st[0], TOYA_STATUS_BUSY);
  assert_int_equal(toya_reenter_st[1], TOYA_STATUS_BUSY);
  assert_int_equal(toya_reenter_st[2], 1);
  assert_null(toya_output(NULL, 0, NULL, NULL));
  assert_int_equal(toya_run(NULL), TOYA_STATUS_BAD_ARG);
  assert_int_equal(toya_num_threads(NULL), 0);
  toya_free(m);
  toya_free(NULL);
}

/* The second model: correct for a small N, and the scratch plan refuses
 * (BAD_ARG, no stale outputs) sizes past the address space: one tensor
 * alone (N = 2^22: 2^66 bytes), or two of 2^62 bytes alive together. */
static void test_second_model_and_scratch_limits(void **state) {
  (void)state;
  toyb_model *m = toyb_create(2);
  assert_non_null(m);
  float x[3] = {1, 2, 4};
  int64_t n = 3;
  assert_int_equal(toyb_set_input(m, 0, x, 1, &n), TOYB_STATUS_OK);
  assert_int_equal(toyb_run(m), TOYB_STATUS_OK);
  const float *y = toyb_output(m, 0, NULL, NULL);
  assert_non_null(y);
  assert_true(y[0] == 3.0f * 9.0f * 7.0f); /* 3 * N^2 * sum(x) */
  assert_int_equal(toyb_test_arena(m), 2 * round64(27 * 4));
  static float big[1]; /* never read: the plan fails before any kernel */
  n = (int64_t)1 << 22;
  assert_int_equal(toyb_set_input(m, 0, big, 1, &n), TOYB_STATUS_OK);
  assert_int_equal(toyb_run(m), TOYB_STATUS_BAD_ARG);
  assert_non_null(strstr(toyb_error(m), "scratch tensor 0: its size overflows"));
  assert_null(toyb_output(m, 0, NULL, NULL));
  n = (int64_t)1 << 20;
  assert_int_equal(toyb_set_input(m, 0, big, 1, &n), TOYB_STATUS_OK);
  assert_int_equal(toyb_run(m), TOYB_STATUS_BAD_ARG);
  assert_non_null(strstr(toyb_error(m), "scratch: the plan overflows"));
  n = 3; /* and the model still works */
  assert_int_equal(toyb_set_input(m, 0, x, 1, &n), TOYB_STATUS_OK);
  assert_int_equal(toyb_run(m), TOYB_STATUS_OK);
  assert_true(((const float *)toyb_output(m, 0, NULL, NULL))[0] == 189.0f);
  toyb_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_results_and_plan),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_api_errors),
      cmocka_unit_test(test_second_model_and_scratch_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
