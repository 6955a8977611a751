/* tests/unit/test_jit_threads.c — the cpu target's kernels compiled on
 * several threads (ncc_options.compile_threads, codegen/llvm/jit.c).
 *
 * A chain of four MatMul+Relu blocks of different widths makes four
 * distinct kernels. Compiled with 1, 2, 3 and 4 threads (and 0: one per
 * core), the module's output is checked against a plain C oracle and, bit
 * for bit, against the one-thread compile. With kernel reuse off and a
 * compile cache, the two equal 8x8 blocks are compiled once (a miss and a
 * same-key hit), on every thread count. A kernel made to fail in a worker
 * (the cpu_test_bad_kernel hook fails the n-th kernel and every later one)
 * reports the n-th kernel's error on the calling thread, the same message
 * as the one-thread compile. Also run by the ThreadSanitizer build
 * (tests/tsan.cmake).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ncc.h"

#define B 3
/* widths of the chain: x[B,8] -> 8 -> 8 -> 16 -> 8 */
static const int W[5] = {8, 8, 8, 16, 8};
#define NB 4

static float weight(int b, int r, int c) { return (float)((r * 7 + c * 3 + b * 5) % 5 - 2); }
static float input(int r, int c) { return (float)((r * 5 + c * 3) % 7 - 3); }

/* The model as text IR: small integer weights keep every result exact. */
static char *model_text(void) {
  size_t cap = 1 << 15, n = 0;
  char *s = malloc(cap);
  assert_non_null(s);
  n += (size_t)snprintf(s + n, cap - n, "graph @chain(%%x: f32[%d,%d]) {\n", B, W[0]);
  for (int b = 0; b < NB; b++) {
    n += (size_t)snprintf(s + n, cap - n, "  %%w%d: f32[%d,%d] = const [", b, W[b], W[b + 1]);
    for (int r = 0; r < W[b]; r++)
      for (int c = 0; c < W[b + 1]; c++)
        n += (size_t)snprintf(s + n, cap - n, "%s%.1f", r + c ? ", " : "", weight(b, r, c));
    n += (size_t)snprintf(s + n, cap - n, "]\n");
  }
  const char *prev = "x";
  char name[NB][8];
  for (int b = 0; b < NB; b++) {
    snprintf(name[b], sizeof name[b], "r%d", b);
    n += (size_t)snprintf(s + n, cap - n, "  %%m%d = MatMul(%%%s, %%w%d)\n  %%r%d = Relu(%%m%d)\n",
                          b, prev, b, b, b);
    prev = name[b];
  }
  n += (size_t)snprintf(s + n, cap - n, "  return %%%s\n}\n", prev);
  assert_true(n < cap);
  return s;
}

/* y = relu(... relu(x @ w0) ... @ w3), in plain C. */
static void oracle(float *y) {
  float a[B][16], t[B][16];
  for (int r = 0; r < B; r++)
    for (int c = 0; c < W[0]; c++) a[r][c] = input(r, c);
  for (int b = 0; b < NB; b++) {
    for (int r = 0; r < B; r++)
      for (int c = 0; c < W[b + 1]; c++) {
        float s = 0;
        for (int k = 0; k < W[b]; k++) s += a[r][k] * weight(b, k, c);
        t[r][c] = s > 0 ? s : 0;
      }
    memcpy(a, t, sizeof a);
  }
  for (int r = 0; r < B; r++)
    for (int c = 0; c < W[NB]; c++) y[r * W[NB] + c] = a[r][c];
}

static ncc_graph *load(void) {
  char *text = model_text();
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_parse_text(text, strlen(text), "chain.nir", &g);
  if (st) print_error("parse: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  free(text);
  ncc_pipeline *p = NULL;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  ncc_pipeline_free(p);
  return g;
}

/* Compile with `threads`, run once, the output into y (B x 8). */
static void compile_run(ncc_graph *g, ncc_options *o, float *y) {
  ncc_module *m = NULL;
  ncc_status st = ncc_module_compile_opts(g, "cpu", o, &m);
  if (st) print_error("compile: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  ncc_tensor x, out;
  int64_t d[2] = {B, W[0]};
  assert_int_equal(ncc_tensor_alloc(&x, NCC_DT_F32, 2, d), NCC_OK);
  float *px = x.data;
  for (int r = 0; r < B; r++)
    for (int c = 0; c < W[0]; c++) px[r * W[0] + c] = input(r, c);
  assert_int_equal(ncc_module_run(m, &x, 1, &out, 1), NCC_OK);
  assert_int_equal(out.rank, 2);
  assert_int_equal(out.dims[0], B);
  assert_int_equal(out.dims[1], W[NB]);
  memcpy(y, out.data, sizeof(float) * B * W[NB]);
  ncc_tensor_free(&x);
  ncc_tensor_free(&out);
  ncc_module_free(m);
}

static void same_output(void **state) {
  (void)state;
  if (ncc_target_available("cpu", NULL, 0) != NCC_OK) skip();
  ncc_graph *g = load();
  float want[B * 8], serial[B * 8], y[B * 8];
  oracle(want);
  const int threads[] = {1, 2, 3, 4, 0, 4};
  for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
    ncc_options o;
    ncc_options_init(&o);
    o.compile_threads = threads[i];
    ncc_compile_stats s = {0};
    o.compile_stats = &s;
    compile_run(g, &o, i == 0 ? serial : y);
    const float *got = i == 0 ? serial : y;
    for (int k = 0; k < B * W[NB]; k++) {
      if (got[k] != want[k]) print_error("threads %d: y[%d] = %g, want %g\n", threads[i], k,
                                         (double)got[k], (double)want[k]);
      assert_true(got[k] == want[k]);
    }
    assert_memory_equal(got, serial, sizeof serial);
    /* every kernel has its row and its own times, however many threads */
    assert_int_equal(s.n_kernels, NB);
    int distinct = 0;
    for (int k = 0; k < NB; k++) {
      if (s.kernels[k].reused) continue;
      distinct++;
      assert_true(s.kernels[k].ms[NCC_PHASE_OPT] > 0);
      assert_true(s.kernels[k].ms[NCC_PHASE_CODEGEN] > 0);
    }
    /* the second 8x8 block shares the first's function */
    assert_int_equal(distinct, NB - 1);
    if (threads[i] > 0)
      assert_int_equal(s.compile_threads, threads[i] < distinct ? threads[i] : distinct);
    assert_true(s.kernels_wall_ms > 0 && s.kernels_work_ms > 0);
    ncc_compile_stats_free(&s);
  }
  ncc_graph_free(g);
}

/* Kernel reuse off: the two equal 8x8 kernels have one cache key. */
static void cache_dedupe(void **state) {
  (void)state;
  if (ncc_target_available("cpu", NULL, 0) != NCC_OK) skip();
  ncc_graph *g = load();
  float want[B * 8], y[B * 8];
  oracle(want);
  for (int threads = 1; threads <= 4; threads++) {
    char dir[] = "/tmp/ncc-jit-threads-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int pass = 0; pass < 2; pass++) {
      ncc_options o;
      ncc_options_init(&o);
      o.compile_threads = threads;
      o.kernel_reuse = 0;
      o.cache_dir = dir;
      ncc_compile_stats s = {0};
      o.compile_stats = &s;
      compile_run(g, &o, y);
      assert_memory_equal(y, want, sizeof want);
      assert_int_equal(s.n_kernels, NB);
      /* cold: three codes compiled and stored, the repeat a hit; warm:
       * every kernel a hit */
      assert_int_equal(s.cache_misses, pass == 0 ? 3 : 0);
      assert_int_equal(s.cache_hits, pass == 0 ? 1 : NB);
      ncc_compile_stats_free(&s);
    }
    ncc_cache_info ci;
    assert_int_equal(ncc_cache_stats(dir, &ci), NCC_OK);
    assert_int_equal(ci.entries, 3);
    int64_t removed = 0;
    assert_int_equal(ncc_cache_clear(dir, &removed), NCC_OK);
    assert_int_equal(rmdir(dir), 0);
  }
  ncc_graph_free(g);
}

/* The n-th kernel and every later one fail: the n-th's message comes back,
 * whichever worker failed first. */
static void worker_error(void **state) {
  (void)state;
  if (ncc_target_available("cpu", NULL, 0) != NCC_OK) skip();
  ncc_graph *g = load();
  for (int bad = 1; bad <= NB; bad++) {
    char serial[1024] = "";
    for (int threads = 1; threads <= 4; threads++) {
      for (int rep = 0; rep < (threads > 1 ? 3 : 1); rep++) {
        ncc_options o;
        ncc_options_init(&o);
        o.compile_threads = threads;
        o.kernel_reuse = 0;
        o.cpu_test_bad_kernel = bad;
        ncc_compile_stats s = {0};
        o.compile_stats = &s;
        ncc_module *m = NULL;
        assert_int_equal(ncc_module_compile_opts(g, "cpu", &o, &m), NCC_ERR_INTERNAL);
        assert_null(m);
        const char *msg = ncc_error_message();
        /* the rows are in graph order: row bad-1 is the failing kernel */
        assert_true(s.n_kernels == NB);
        char want[256];
        snprintf(want, sizeof want, "cpu test hook: kernel %s fails to compile",
                 s.kernels[bad - 1].name);
        if (!strstr(msg, want)) print_error("threads %d: '%s', want '%s'\n", threads, msg, want);
        assert_non_null(strstr(msg, want));
        if (threads == 1) snprintf(serial, sizeof serial, "%s", msg);
        assert_string_equal(msg, serial);
        ncc_compile_stats_free(&s);
      }
    }
  }
  ncc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_output),
      cmocka_unit_test(cache_dedupe),
      cmocka_unit_test(worker_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
