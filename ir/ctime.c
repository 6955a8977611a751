/* ir/ctime.c — compile-time accounting (ir/ctime.h, ncc_compile_stats).
 *
 * Rows live in the caller's ncc_compile_stats, grown with ncc_realloc;
 * when that fails the totals are still kept (timing is never a reason for
 * a compile to fail). Rows are only touched by the calling thread: the
 * cpu target's compile workers keep their times in their own slots and the
 * caller adds them after the join (codegen/llvm/jit.c). The packing clock is per thread so that lowering on
 * several threads would still attribute packing to its own kernel.
 */
#include <string.h>
#include <time.h>

#include "ctime.h"
#include "options.h"

static _Thread_local double pack_ms;

double ncc_ctime_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *ncc_compile_phase_name(int phase) {
  static const char *const names[NCC_PHASE_COUNT] = {
      "lower", "pack", "ir", "opt", "codegen", "link", "backend"};
  return phase >= 0 && phase < NCC_PHASE_COUNT ? names[phase] : "?";
}

ncc_compile_stats *ncc_ctime_stats(void) { return ncc_opts()->compile_stats; }

double ncc_ctime_phase_sum(void) {
  ncc_compile_stats *s = ncc_ctime_stats();
  double sum = 0;
  for (int p = 0; s && p < NCC_PHASE_COUNT; p++) sum += s->ms[p];
  return sum;
}

void ncc_ctime_add(ncc_compile_phase p, double ms) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (s && p >= 0 && p < NCC_PHASE_COUNT) s->ms[p] += ms;
}

int ncc_ctime_find(const char *name) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (!s || !name) return -1;
  for (int k = s->n_kernels - 1; k >= 0; k--)
    if (strncmp(s->kernels[k].name, name, sizeof s->kernels[k].name - 1) == 0) return k;
  return -1;
}

int ncc_ctime_kernel(const char *name, int nodes) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (!s || !name) return -1;
  int k = ncc_ctime_find(name);
  if (k >= 0) return k;
  size_t n = (size_t)s->n_kernels;
  /* grow by doubling: capacity is the smallest power of two >= n, so the
   * array is full exactly when n is a power of two (or 0) */
  if ((n & (n - 1)) == 0) {
    size_t cap = n ? 2 * n : 1;
    ncc_kernel_compile_stats *r =
        ncc_realloc(s->kernels, n * sizeof *r, cap * sizeof *r);
    if (!r) return -1;
    s->kernels = r;
  }
  ncc_kernel_compile_stats *row = &s->kernels[n];
  memset(row, 0, sizeof *row);
  snprintf(row->name, sizeof row->name, "%s", name);
  row->nodes = nodes;
  return s->n_kernels++;
}

void ncc_ctime_kernel_add(int k, ncc_compile_phase p, double ms) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (!s || p < 0 || p >= NCC_PHASE_COUNT) return;
  s->ms[p] += ms;
  if (k >= 0 && k < s->n_kernels) s->kernels[k].ms[p] += ms;
}

void ncc_ctime_kernel_reused(int k) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (s && k >= 0 && k < s->n_kernels) s->kernels[k].reused = 1;
}

void ncc_ctime_kernel_cache(int k, bool hit) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (!s) return;
  if (hit) s->cache_hits++;
  else s->cache_misses++;
  if (hit && k >= 0 && k < s->n_kernels) s->kernels[k].cache_hit = 1;
}

double ncc_ctime_pack_begin(void) { return ncc_ctime_now(); }
void ncc_ctime_pack_end(double t0) { pack_ms += ncc_ctime_now() - t0; }
double ncc_ctime_pack_total(void) { return pack_ms; }

void ncc_ctime_parallel(int threads, double wall_ms, double work_ms) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (!s) return;
  if (threads > s->compile_threads) s->compile_threads = threads;
  s->kernels_wall_ms += wall_ms;
  s->kernels_work_ms += work_ms;
}

void ncc_ctime_finish(double t0) {
  ncc_compile_stats *s = ncc_ctime_stats();
  if (!s) return;
  s->total_ms += ncc_ctime_now() - t0;
  /* the phases at wall-clock time: the parallel section counts as long as
   * it took, not as the sum of its kernels' times */
  double sum = s->kernels_wall_ms - s->kernels_work_ms;
  for (int p = 0; p < NCC_PHASE_COUNT; p++) sum += s->ms[p];
  s->other_ms = s->total_ms > sum ? s->total_ms - sum : 0;
}

void ncc_compile_stats_free(ncc_compile_stats *s) {
  if (!s) return;
  ncc_free(s->kernels, 0);
  memset(s, 0, sizeof *s);
}
