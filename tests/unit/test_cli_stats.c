/* tests/unit/test_cli_stats.c — the driver's median CI (tools/ncc/stats.c)
 * against known values: the ranks bench/harness/stats.py's median_ci gives
 * (computed with it once and written down here, so the two definitions
 * cannot drift apart unseen), small-n fallbacks, the verdict and the cv.
 *
 * stats.c is part of the driver, not of libncc: it is compiled into this
 * test directly.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tools/ncc/stats.c"

/* n -> 1-based ranks (lo, hi) of the interval, from stats.median_ci. */
static const int64_t known[][3] = {
    {1, 1, 1},     {2, 1, 2},       {3, 1, 3},       {4, 1, 4},
    {5, 1, 5},     {6, 1, 6},       {7, 1, 7},       {8, 1, 8},
    {9, 2, 8},     {10, 2, 9},      {11, 2, 10},     {12, 3, 10},
    {13, 3, 11},   {14, 3, 12},     {15, 4, 12},     {16, 4, 13},
    {17, 5, 13},   {18, 5, 14},     {19, 5, 15},     {20, 6, 15},
    {21, 6, 16},   {22, 6, 17},     {23, 7, 17},     {24, 7, 18},
    {25, 8, 18},   {26, 8, 19},     {27, 8, 20},     {28, 9, 20},
    {29, 9, 21},   {30, 10, 21},    {50, 18, 33},    {100, 40, 61},
    {200, 86, 115}, {1000, 469, 532}, {5000, 2431, 2570},
};

static void test_known_ranks(void **state) {
  (void)state;
  static double x[5000];
  for (int i = 0; i < 5000; i++) x[i] = i + 1; /* the value is its rank */
  for (size_t t = 0; t < sizeof known / sizeof known[0]; t++) {
    double lo, hi;
    cli_median_ci(x, known[t][0], &lo, &hi);
    if ((int64_t)lo != known[t][1] || (int64_t)hi != known[t][2])
      print_error("n=%lld: got [%g, %g], want [%lld, %lld]\n", (long long)known[t][0],
                  lo, hi, (long long)known[t][1], (long long)known[t][2]);
    assert_int_equal((int64_t)lo, known[t][1]);
    assert_int_equal((int64_t)hi, known[t][2]);
  }
  /* the interval is symmetric in ranks and holds the median */
  for (int64_t n = 1; n <= 5000; n += 37) {
    double lo, hi;
    cli_median_ci(x, n, &lo, &hi);
    assert_true(lo + hi == (double)(n + 1));
    assert_true(lo <= cli_median_sorted(x, n) && cli_median_sorted(x, n) <= hi);
  }
}

static void test_small_and_empty(void **state) {
  (void)state;
  assert_int_equal(cli_median_ci_rank(5), 0);
  assert_int_equal(cli_median_ci_rank(6), 1);
  assert_int_equal(cli_median_ci_rank(20), 6);
  double lo, hi;
  cli_median_ci(NULL, 0, &lo, &hi);
  assert_true(isnan(lo) && isnan(hi));
  /* a million samples is quick (one pass) */
  assert_true(cli_median_ci_rank(1000000) > 499000);
}

static void test_sorted_median_cv(void **state) {
  (void)state;
  double x[] = {3, 1, 2, 5, 4, 6};
  cli_sort_doubles(x, 6);
  for (int i = 0; i < 6; i++) assert_true(x[i] == i + 1);
  assert_true(cli_median_sorted(x, 6) == 3.5);
  assert_true(cli_median_sorted(x, 5) == 3);
  double c[] = {1, 3}; /* mean 2, population sd 1 */
  assert_true(fabs(cli_cv(c, 2) - 0.5) < 1e-12);
  assert_true(cli_noisy(0.11) && !cli_noisy(0.10));
  /* robust cv: 1.4826 MAD / median. {1..5}: median 3, MAD 1. One huge
   * outlier among 20 equal runs does not move it; a bimodal sample does. */
  const double r5[] = {1, 2, 3, 4, 5};
  assert_true(fabs(cli_robust_cv(r5, 5) - 1.4826 / 3) < 1e-12);
  double one_out[20], bimodal[20];
  for (int i = 0; i < 20; i++) {
    one_out[i] = i < 19 ? 1.0 + 0.001 * i : 50.0;
    bimodal[i] = i < 10 ? 1.0 : 2.0;
  }
  assert_false(cli_noisy(cli_robust_cv(one_out, 20)));
  assert_true(cli_cv(one_out, 20) > 1.0); /* while the plain cv explodes */
  assert_true(cli_noisy(cli_robust_cv(bimodal, 20)));
}

static void test_verdict(void **state) {
  (void)state;
  assert_string_equal(cli_delta_verdict(-1.0, 2.0), "within noise");
  assert_string_equal(cli_delta_verdict(0.0, 2.0), "within noise");
  assert_string_equal(cli_delta_verdict(0.5, 2.0), "slower without");
  assert_string_equal(cli_delta_verdict(-3.0, -0.5), "faster without");
  assert_string_equal(cli_delta_verdict(NAN, NAN), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_ranks),
      cmocka_unit_test(test_small_and_empty),
      cmocka_unit_test(test_sorted_median_cv),
      cmocka_unit_test(test_verdict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
