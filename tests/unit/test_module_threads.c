/* tests/unit/test_module_threads.c — ncc_module_run and ncc_module_run_into
 * on one module from 4 threads at once (cpu and ref), and two modules
 * running concurrently (they share the process-wide kernel pool). Every
 * result is checked against a plain C oracle; batch sizes vary per run, so
 * the executor's plans and arena change under the threads. Also run by
 * the ThreadSanitizer build (tests/tsan.cmake).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

/* y = Relu(Transpose(x @ w)): a matmul kernel, an intermediate in the
 * arena and an output sized by the batch. */
static const char *MODEL =
    "graph @mt(%x: f32[N,16], %w: f32[16,8]) {\n"
    "  %h: f32[N,8] = MatMul(%x, %w)\n"
    "  %t: f32[8,N] = Transpose(%h) {perm = [1, 0]}\n"
    "  %y: f32[8,N] = Relu(%t)\n"
    "  return %y\n"
    "}\n";

#define THREADS 4
#define ITERS 40
#define MAXN 2048

typedef struct job {
  ncc_module *m;
  int tid, good, bad;
  ncc_status first_error;
} job;

/* Small integers: every product and sum is exact in f32. */
static void fill(float *x, float *w, int n, int tid, int it) {
  for (int i = 0; i < n * 16; i++) x[i] = (float)((i * 5 + tid * 3 + it) % 9 - 4);
  for (int i = 0; i < 16 * 8; i++) w[i] = (float)((i * 7 + tid + it * 2) % 5 - 2);
}

static int matches(const ncc_tensor *y, const float *x, const float *w, int n) {
  if (y->dtype != NCC_DT_F32 || y->rank != 2 || y->dims[0] != 8 || y->dims[1] != n) return 0;
  const float *p = y->data;
  for (int r = 0; r < n; r++)
    for (int c = 0; c < 8; c++) {
      float s = 0;
      for (int k = 0; k < 16; k++) s += x[r * 16 + k] * w[k * 8 + c];
      if (p[c * n + r] != (s > 0 ? s : 0.0f)) return 0;
    }
  return 1;
}

static void *worker(void *arg) {
  job *j = arg;
  float *x = malloc(sizeof(float) * MAXN * 16), w[16 * 8];
  for (int it = 0; x && it < ITERS; it++) {
    int n = 1 + (it * 397 + j->tid * 131) % MAXN;
    fill(x, w, n, j->tid, it);
    ncc_tensor in[2] = {{.dtype = NCC_DT_F32, .rank = 2, .dims = {n, 16}, .data = x},
                        {.dtype = NCC_DT_F32, .rank = 2, .dims = {16, 8}, .data = w}};
    ncc_tensor y;
    ncc_status st = ncc_module_run(j->m, in, 2, &y, 1);
    int ok = st == NCC_OK && matches(&y, x, w, n);
    /* again into the caller's buffer, poisoned first */
    if (ok) {
      memset(y.data, 0x7f, ncc_tensor_nbytes(&y));
      st = ncc_module_run_into(j->m, in, 2, &y, 1);
      ok = st == NCC_OK && matches(&y, x, w, n);
    }
    if (ok) {
      j->good++;
    } else {
      j->bad++;
      if (!j->first_error) j->first_error = st ? st : NCC_ERR_INTERNAL;
    }
    ncc_tensor_free(&y);
  }
  free(x);
  return NULL;
}

static ncc_module *compile(const char *target, ncc_graph **g) {
  assert_int_equal(ncc_graph_parse_text(MODEL, strlen(MODEL), "mt.nir", g), NCC_OK);
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile(*g, target, &m), NCC_OK);
  return m;
}

/* Runs `jobs[i].m` on one thread each and checks every result. */
static void run_jobs(job *jobs, int n) {
  pthread_t th[THREADS * 2];
  for (int t = 0; t < n; t++) assert_int_equal(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
  for (int t = 0; t < n; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < n; t++) {
    if (jobs[t].bad)
      print_error("thread %d: %d of %d runs wrong (first status %d)\n", t, jobs[t].bad,
                  ITERS, jobs[t].first_error);
    assert_int_equal(jobs[t].good, ITERS);
  }
}

static void shared_module(const char *target) {
  if (ncc_target_available(target, NULL, 0) != NCC_OK) {
    print_message("target %s unavailable: skipped\n", target);
    skip();
  }
  ncc_graph *g;
  ncc_module *m = compile(target, &g);
  job jobs[THREADS];
  memset(jobs, 0, sizeof jobs);
  for (int t = 0; t < THREADS; t++) {
    jobs[t].m = m;
    jobs[t].tid = t;
  }
  run_jobs(jobs, THREADS);
  ncc_module_free(m);
  ncc_graph_free(g);
}

static void test_shared_cpu(void **state) {
  (void)state;
  shared_module("cpu");
}

static void test_shared_ref(void **state) {
  (void)state;
  shared_module("ref");
}

/* Two cpu modules of one graph, two threads each, all at once: what they
 * share is the global kernel pool. */
static void test_two_modules(void **state) {
  (void)state;
  if (ncc_target_available("cpu", NULL, 0) != NCC_OK) skip();
  ncc_graph *g1, *g2;
  ncc_module *m1 = compile("cpu", &g1), *m2 = compile("cpu", &g2);
  job jobs[4];
  memset(jobs, 0, sizeof jobs);
  for (int t = 0; t < 4; t++) {
    jobs[t].m = t % 2 ? m2 : m1;
    jobs[t].tid = t;
  }
  run_jobs(jobs, 4);
  ncc_module_free(m1);
  ncc_module_free(m2);
  ncc_graph_free(g1);
  ncc_graph_free(g2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shared_cpu),
      cmocka_unit_test(test_shared_ref),
      cmocka_unit_test(test_two_modules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
