/* tests/unit/test_options.c — ncc_options through the public API.
 *
 * The thread count and the vector width a caller sets reach the module
 * and the kernels (ncc_module_num_threads, the emitted kernel IR), bad
 * values are refused, the per-call memory budget applies to the module's
 * runs, dumps go to the caller's stream, and the NCC_* variables the
 * `ncc` driver honours change nothing when set in a library user's
 * environment (set before the first call): libncc reads no environment. Results are checked against
 * the reference interpreter and, for the lanes, against the width asked
 * for (a width-w kernel's loop is vector(4*w), codegen/lower_eltwise.c).
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
#include "runtime/threadpool.h"

#define COLS 256
static const char model[] = "graph @g(%x: f32[N,256]) {\n"
                            "  %y = Relu(%x)\n"
                            "  return %y\n"
                            "}\n";

static ncc_graph *load(void) {
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(model, strlen(model), "t.nir", &g), NCC_OK);
  return g;
}

/* rows x 256 inputs in [-1, 1). */
static ncc_tensor input(int64_t rows) {
  ncc_tensor t;
  int64_t d[2] = {rows, COLS};
  assert_int_equal(ncc_tensor_alloc(&t, NCC_DT_F32, 2, d), NCC_OK);
  float *p = t.data;
  for (int64_t i = 0; i < rows * COLS; i++) p[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
  return t;
}

/* Compile with `o`, run on `rows` rows, compare with ref; the module's
 * thread count. */
static int run_checked(const ncc_options *o, int64_t rows) {
  ncc_graph *g = load();
  ncc_module *m = NULL;
  ncc_status st = ncc_module_compile_opts(g, "cpu", o, &m);
  if (st) print_error("compile: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  ncc_tensor x = input(rows), want, got;
  assert_int_equal(ncc_ref_run(g, &x, 1, &want, 1), NCC_OK);
  assert_int_equal(ncc_module_run(m, &x, 1, &got, 1), NCC_OK);
  assert_int_equal(ncc_tensor_numel(&got), rows * COLS);
  assert_memory_equal(got.data, want.data, ncc_tensor_nbytes(&want));
  int nth = ncc_module_num_threads(m);
  ncc_tensor_free(&x);
  ncc_tensor_free(&want);
  ncc_tensor_free(&got);
  ncc_module_free(m);
  ncc_graph_free(g);
  return nth;
}

/* The kernel IR `o` makes of the model (malloc'd). */
static char *emit_kir(const ncc_options *o) {
  ncc_graph *g = load();
  char path[] = "/tmp/ncc-test-options-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  ncc_status st = ncc_module_emit_opts(g, "cpu", o, "kir", path);
  if (st) print_error("emit: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *buf = calloc(1, 1 << 16);
  assert_non_null(buf);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  assert_true(n > 0);
  fclose(f);
  unlink(path);
  ncc_graph_free(g);
  return buf;
}

static long cores(void) { return sysconf(_SC_NPROCESSORS_ONLN); }


/* Runs first (cmocka keeps the order): the 3-thread module is the first
 * to run, so the process-wide pool gets 3 threads, whatever the cores. */
static void test_num_threads(void **state) {
  (void)state;
  ncc_options o;
  ncc_options_init(&o);
  o.num_threads = 3;
  /* 64 rows x 256: 16384 elements per thread, enough for 3 threads */
  assert_int_equal(run_checked(&o, 192), 3);
  assert_int_equal(ncc_threadpool_size(ncc_threadpool_global()), 3);
  o.num_threads = 1;
  assert_int_equal(run_checked(&o, 192), 1);
  o.num_threads = 0; /* one per core */
  assert_int_equal(run_checked(&o, 192), (int)cores());
  assert_int_equal(run_checked(NULL, 5), (int)cores());
}

static void test_vector_width(void **state) {
  (void)state;
  ncc_options o;
  ncc_options_init(&o);
  static const struct {
    int w;
    const char *loop;
  } cases[] = {{1, NULL}, {4, "vector(16)"}, {8, "vector(32)"}, {16, "vector(64)"}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    o.vector_width = cases[c].w;
    char *kir = emit_kir(&o);
    if (cases[c].loop) {
      if (!strstr(kir, cases[c].loop)) fail_msg("width %d: no %s in\n%s", cases[c].w, cases[c].loop, kir);
    } else {
      if (strstr(kir, "vector(")) fail_msg("width 1: a vector loop in\n%s", kir);
    }
    free(kir);
    run_checked(&o, 3); /* and the JIT's kernels of that width are right */
  }
  o.vector_width = 3;
  ncc_graph *g = load();
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile_opts(g, "cpu", &o, &m), NCC_ERR_USAGE);
  assert_null(m);
  assert_non_null(strstr(ncc_error_message(), "vector_width 3"));
  assert_int_equal(ncc_module_emit_opts(g, "cpu", &o, "kir", "/tmp/ncc-never"), NCC_ERR_USAGE);
  ncc_options_init(&o);
  o.num_threads = -1;
  assert_int_equal(ncc_module_compile_opts(g, "cpu", &o, &m), NCC_ERR_USAGE);
  ncc_graph_free(g);
}

/* The variables the driver reads are set in this process before libncc
 * is first called (main), since a library that read them would do so
 * once, at its first use; they must change nothing. */
static void set_driver_environment(void) {
  char many[16];
  snprintf(many, sizeof many, "%ld", cores() + 5);
  setenv("NCC_NUM_THREADS", many, 1);
  setenv("NCC_VECTOR_WIDTH", "1", 1);
  setenv("NCC_KERNEL_REUSE", "0", 1);
}

static void test_environment_ignored(void **state) {
  (void)state;
  /* NCC_NUM_THREADS = cores + 5: the default is still one per core */
  assert_int_equal(run_checked(NULL, 3), (int)cores());
  /* NCC_VECTOR_WIDTH = 1: the default kernels still use the host's lanes
   * (SSE2, AVX or NEON: at least 4), the same as asking for them */
  ncc_options host;
  ncc_options_init(&host);
  host.vector_width = ncc_target_layout_block("cpu");
  assert_true(host.vector_width >= 4);
  char *dflt = emit_kir(NULL), *want = emit_kir(&host);
  if (!strstr(dflt, "vector(")) fail_msg("NCC_VECTOR_WIDTH=1 was honoured:\n%s", dflt);
  assert_string_equal(dflt, want);
  free(dflt);
  free(want);
}

static void test_dump_and_budget(void **state) {
  (void)state;
  ncc_options o;
  ncc_options_init(&o);
  FILE *f = tmpfile();
  assert_non_null(f);
  o.dump = NCC_DUMP_KERNEL_IR;
  o.dump_file = f;
  run_checked(&o, 3);
  long n = ftell(f);
  assert_true(n > 0);
  char buf[256] = {0};
  rewind(f);
  assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
  assert_non_null(strstr(buf, "kernel k0_Relu"));
  fclose(f);
  /* a budget of 4 KiB for this module's runs: 16 rows (16 KiB) is over */
  ncc_options_init(&o);
  o.max_memory = 4096;
  ncc_graph *g = load();
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile_opts(g, "cpu", &o, &m), NCC_OK);
  ncc_tensor x = input(16), y;
  assert_int_equal(ncc_module_run(m, &x, 1, &y, 1), NCC_ERR_NOMEM);
  ncc_module_free(m);
  /* the process-wide budget is untouched: the defaults run it */
  assert_true(ncc_max_memory() > 4096);
  assert_int_equal(ncc_module_compile(g, "cpu", &m), NCC_OK);
  assert_int_equal(ncc_module_run(m, &x, 1, &y, 1), NCC_OK);
  ncc_tensor_free(&y);
  ncc_tensor_free(&x);
  ncc_module_free(m);
  ncc_graph_free(g);
}

int main(void) {
  set_driver_environment();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_num_threads),
      cmocka_unit_test(test_vector_width),
      cmocka_unit_test(test_environment_ignored),
      cmocka_unit_test(test_dump_and_budget),
  };
  char why[256];
  if (ncc_target_available("cpu", why, sizeof why) != NCC_OK) {
    printf("skipped: %s\n", why);
    return 0;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
