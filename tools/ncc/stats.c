/* tools/ncc/stats.c — the statistics `ncc bench` reports beside a median:
 * a distribution-free 95% confidence interval from order statistics, the
 * coefficient of variation and the "too noisy to rank" flag (on the robust
 * cv, MAD over median, as bench/harness/stats.py's noisy).
 *
 * The interval is the binomial (order-statistic) one: of n samples, the
 * k-th smallest and the k-th largest bound the median with probability
 * 1 - 2 P(Bin(n, 1/2) <= k-1), for the largest k that keeps that tail at
 * most 2.5%. It needs no assumption about the shape of the distribution
 * (timings are skewed and often bimodal) and no resampling, so it is
 * deterministic. It is the same definition as bench/harness/stats.py's
 * median_ci, so the driver and the harness give equal intervals for equal
 * samples (tests/unit/test_cli_stats.c checks known values of both).
 */
#include <math.h>
#include <stdlib.h>

#include "cli.h"

#define CI_TAIL 0.025 /* (1 - 0.95) / 2 */

/* log(exp(a) + exp(b)) without overflow or underflow. */
static double log_add(double a, double b) {
  if (a < b) {
    double t = a;
    a = b;
    b = t;
  }
  if (b == -INFINITY) return a;
  return a + log1p(exp(b - a));
}

int64_t cli_median_ci_rank(int64_t n) {
  /* P(Bin(n, 1/2) <= i) summed term by term in log space, so one pass is
   * O(n) and n in the millions neither underflows nor takes long. */
  double log_pmf_base = lgamma((double)n + 1) - (double)n * log(2.0);
  double log_cdf = -INFINITY;
  int64_t k = 0;
  while (k + 1 <= n / 2) {
    double log_pmf = log_pmf_base - lgamma((double)k + 1) - lgamma((double)(n - k) + 1);
    log_cdf = log_add(log_cdf, log_pmf); /* now P(X <= k) */
    if (exp(log_cdf) > CI_TAIL) break;
    k++;
  }
  return k;
}

void cli_median_ci(const double *sorted, int64_t n, double *lo, double *hi) {
  if (n <= 0) {
    *lo = *hi = NAN;
    return;
  }
  int64_t k = cli_median_ci_rank(n);
  if (k == 0) k = 1; /* fewer than 6 samples: min..max */
  *lo = sorted[k - 1];
  *hi = sorted[n - k];
}

double cli_median_sorted(const double *sorted, int64_t n) {
  if (n <= 0) return NAN;
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void cli_sort_doubles(double *x, int64_t n) {
  if (n > 1) qsort(x, (size_t)n, sizeof *x, cmp_double);
}

double cli_cv(const double *x, int64_t n) {
  if (n <= 0) return 0;
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; i++) sum += x[i];
  double mean = sum / (double)n;
  for (int64_t i = 0; i < n; i++) sq += (x[i] - mean) * (x[i] - mean);
  return mean > 0 ? sqrt(sq / (double)n) / mean : 0;
}

/* 1.4826 * MAD / median: the standard deviation of a normal distribution
 * with the same median absolute deviation, over the median. Unlike the cv,
 * one interrupt-length outlier among 20 runs does not move it, so it flags
 * timings whose bulk is spread (bimodal, drifting), not rare stalls. */
double cli_robust_cv(const double *sorted, int64_t n) {
  if (n <= 0) return 0;
  double med = cli_median_sorted(sorted, n);
  if (!(med > 0)) return 0;
  double *dev = malloc((size_t)n * sizeof *dev);
  if (!dev) return 0;
  for (int64_t i = 0; i < n; i++) dev[i] = fabs(sorted[i] - med);
  cli_sort_doubles(dev, n);
  double mad = cli_median_sorted(dev, n);
  free(dev);
  return 1.4826 * mad / med;
}

bool cli_noisy(double robust_cv) { return robust_cv > CLI_CV_RANK_MAX; }

const char *cli_delta_verdict(double lo_pct, double hi_pct) {
  if (!(lo_pct <= hi_pct)) return "unknown"; /* NaN: nothing measured */
  if (lo_pct <= 0 && 0 <= hi_pct) return "within noise";
  return lo_pct > 0 ? "slower without" : "faster without";
}
