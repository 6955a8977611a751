/* tests/unit/test_cpu_module.c — the cpu target's module around its
 * kernels: a chain with a host op and a symbolic batch served by one
 * compiled module, the module API's errors, allocation failure, the
 * ahead-of-time output, kernel IR printing and the thread pool. (Each op
 * against ref, on every target, is tests/ops/test_backend_ops.c.)
 * tests/cpu.cmake reruns this executable with NCC_VECTOR_WIDTH=8/4/1.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "codegen/kir.h"
#include "codegen/lower.h"
#include "runtime/threadpool.h"
#include "test_env.h"
#include "test_graph.h"

static void compare(const ncc_tensor *a, const ncc_tensor *b, double atol,
                    double rtol, const char *what) {
  compare_outputs(a, b, atol, rtol, "cpu", what, -1);
}

/* ---- the module around the kernels ---- */

/* A chain with intermediates, a host op in the middle, and a symbolic batch
 * served by one compiled module at several batch sizes. */
static void test_chain_symbolic_batch(void **state) {
  (void)state;
  int64_t N = sym("N");
  int64_t dx[2] = {N, 17}, db[1] = {17};
  ncc_value *x = input(NCC_DT_F32, 2, dx);
  ncc_value *b = input(NCC_DT_F32, 1, db);
  ncc_value *h = OP(NCC_OP_ADD, x, b);
  h = OP(NCC_OP_RELU, h);
  ncc_value *t = OP(NCC_OP_TRANSPOSE, h);
  ncc_value *u = OP(NCC_OP_MUL, t, t);
  ncc_value *sh = OP(NCC_OP_SHAPE, u); /* host: shape arithmetic */
  u = opv(NCC_OP_RESHAPE, 2, (ncc_value *[]){u, sh}); /* a view, an output */
  output(u);
  output(h);
  infer();
  ncc_module *m;
  assert_int_equal(test_module_compile(G, "cpu", &m), NCC_OK);
  assert_int_equal(ncc_module_num_kernels(m), 4);
  assert_int_equal(ncc_module_num_host_kernels(m), 1);
  assert_int_equal(ncc_module_num_views(m), 1);
  assert_string_equal(ncc_module_target(m), "cpu");
  /* repeated sizes run on the planned arena, new ones re-plan */
  static const int64_t batches[] = {1, 5, 5, 9, 5, 5};
  for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
    int64_t d[2] = {batches[bi], 17};
    ncc_tensor in[2] = {rand_tensor(NCC_DT_F32, 2, d, -1, 1),
                        rand_tensor(NCC_DT_F32, 1, db, -1, 1)};
    ncc_tensor ref[2], cpu[2];
    assert_int_equal(ncc_ref_run(G, in, 2, ref, 2), NCC_OK);
    assert_int_equal(ncc_module_run(m, in, 2, cpu, 2), NCC_OK);
    for (int o = 0; o < 2; o++) {
      compare(&ref[o], &cpu[o], 0, 0, "chain");
      ncc_tensor_free(&ref[o]);
      ncc_tensor_free(&cpu[o]);
    }
    ncc_tensor_free(&in[0]);
    ncc_tensor_free(&in[1]);
  }
  ncc_module_free(m);
}

static void test_module_errors(void **state) {
  (void)state;
  int64_t d[1] = {17};
  ncc_value *a = input(NCC_DT_F32, 1, d);
  output(OP(NCC_OP_EXP, a));
  infer();
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile(G, "tpu", &m), NCC_ERR_USAGE);
  assert_null(m);
  assert_int_equal(ncc_module_compile(G, "cuda", &m), NCC_ERR_UNSUPPORTED);
  char why[128];
  assert_int_equal(ncc_target_available("cuda", why, sizeof why), NCC_ERR_UNSUPPORTED);
  assert_true(strlen(why) > 0);
  assert_int_equal(ncc_target_available("cpu", why, sizeof why), NCC_OK);
  assert_int_equal(ncc_target_available("ref", why, sizeof why), NCC_OK);

  assert_int_equal(test_module_compile(G, "cpu", &m), NCC_OK);
  ncc_tensor out[1];
  int64_t wrong[1] = {16};
  ncc_tensor t = rand_tensor(NCC_DT_F32, 1, wrong, 0, 1);
  assert_int_equal(ncc_module_run(m, &t, 1, out, 1), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "dim 0"));
  assert_int_equal(ncc_module_run(m, &t, 0, out, 1), NCC_ERR_INPUT);
  ncc_tensor_free(&t);
  /* run_into: a buffer of the wrong shape or none is a usage error, on the
   * cpu executor and on the generic run-then-copy path (ref) alike */
  int64_t right[1] = {17};
  t = rand_tensor(NCC_DT_F32, 1, right, 0, 1);
  ncc_tensor small = rand_tensor(NCC_DT_F32, 1, wrong, 0, 1);
  assert_int_equal(ncc_module_run_into(m, &t, 1, &small, 1), NCC_ERR_USAGE);
  assert_non_null(strstr(ncc_error_message(), "does not match"));
  assert_int_equal(ncc_module_run_into(m, &t, 1, NULL, 1), NCC_ERR_USAGE);
  ncc_module_free(m);
  assert_int_equal(ncc_module_compile(G, "ref", &m), NCC_OK);
  assert_int_equal(ncc_module_run_into(m, &t, 1, &small, 1), NCC_ERR_USAGE);
  ncc_tensor fit = rand_tensor(NCC_DT_F32, 1, right, 0, 1), expect;
  assert_int_equal(ncc_module_run_into(m, &t, 1, &fit, 1), NCC_OK);
  assert_int_equal(ncc_ref_run(G, &t, 1, &expect, 1), NCC_OK);
  compare(&expect, &fit, 0, 0, "ref run_into");
  ncc_tensor_free(&expect);
  ncc_tensor_free(&fit);
  ncc_tensor_free(&small);
  ncc_tensor_free(&t);
  ncc_module_free(m);

  /* the ref target runs everything as host kernels */
  assert_int_equal(ncc_module_compile(G, "ref", &m), NCC_OK);
  assert_int_equal(ncc_module_num_kernels(m), 0);
  assert_int_equal(ncc_module_num_host_kernels(m), 1);
  ncc_module_free(m);
}

/* ---- allocation failure: every failing allocation is a clean NOMEM ---- */

static long alloc_countdown = -1; /* allocations left before failing; -1: never */

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (alloc_countdown == 0) return NULL;
  if (alloc_countdown > 0) alloc_countdown--;
  return realloc(ptr, nsize);
}

static void test_alloc_failure(void **state) {
  (void)state;
  int64_t d[2] = {3, 17}, dw[2] = {17, 5};
  ncc_value *a = input(NCC_DT_F32, 2, d);
  ncc_value *h = OP(NCC_OP_RELU, OP(NCC_OP_MATMUL, a, rand_const(2, dw)));
  output(OP(NCC_OP_SOFTMAX, OP(NCC_OP_TRANSPOSE, h)));
  infer();
  ncc_tensor t = rand_tensor(NCC_DT_F32, 2, d, -1, 1), out;
  /* the global pool exists before the allocator starts failing */
  ncc_threadpool_global();
  bool succeeded = false;
  for (long n = 0; n < 400 && !succeeded; n++) {
    ncc_set_allocator(failing_alloc, NULL);
    alloc_countdown = n;
    ncc_module *m = NULL;
    ncc_status st = test_module_compile(G, "cpu", &m);
    if (st == NCC_OK) {
      /* run twice: the second run uses the planned arena */
      st = ncc_module_run(m, &t, 1, &out, 1);
      if (st == NCC_OK) {
        ncc_tensor_free(&out);
        st = ncc_module_run(m, &t, 1, &out, 1);
        if (st == NCC_OK) {
          ncc_tensor_free(&out);
          succeeded = true;
        }
      }
    }
    ncc_module_free(m);
    alloc_countdown = -1;
    ncc_set_allocator(NULL, NULL);
    if (!succeeded) assert_int_equal(st, NCC_ERR_NOMEM);
  }
  assert_true(succeeded);
  ncc_tensor_free(&t);
}

/* ---- ahead-of-time output ---- */

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 22);
  *len = fread(buf, 1, (1 << 22) - 1, f);
  fclose(f);
  return buf;
}

static void test_emit(void **state) {
  (void)state;
  int64_t d[2] = {5, 33}, dw[2] = {33, 40};
  ncc_value *a = input(NCC_DT_F32, 2, d);
  output(OP(NCC_OP_TANH, OP(NCC_OP_MATMUL, a, rand_const(2, dw))));
  infer();
  char dir[] = "/tmp/ncc_emit_XXXXXX";
  assert_non_null(mkdtemp(dir));
  static const struct {
    const char *target, *kind, *expect;
  } cases[] = {
      {"cpu", "kir", "kernel k0_MatMul("},
      {"cpu", "llvm", "define void @k1_Tanh("},
      {"x86_64", "asm", "vfmadd231ps"},
      {"aarch64", "asm", "fmla"},
      {"aarch64", "obj", "\x7f" "ELF"},
  };
  char path[128];
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    snprintf(path, sizeof path, "%s/out.%zu", dir, c);
    ncc_status st = ncc_module_emit(G, cases[c].target, cases[c].kind, path);
    if (st != NCC_OK) print_error("emit: %s\n", ncc_error_message());
    assert_int_equal(st, NCC_OK);
    size_t len = 0;
    char *text = slurp(path, &len);
    assert_non_null(text);
    if (strcmp(cases[c].kind, "obj") == 0)
      assert_memory_equal(text, "\x7f" "ELF", 4);
    else
      assert_non_null(strstr(text, cases[c].expect));
    free(text);
    remove(path);
  }
  snprintf(path, sizeof path, "%s/x", dir);
  assert_int_equal(ncc_module_emit(G, "cpu", "ptx", path), NCC_ERR_UNSUPPORTED);
  assert_int_equal(ncc_module_emit(G, "cuda", "asm", path), NCC_ERR_UNSUPPORTED);
  assert_int_equal(ncc_module_emit(G, "cpu", "asm", "/nonexistent/dir/out.s"), NCC_ERR_INPUT);
  assert_int_equal(rmdir(dir), 0); /* nothing left behind */
}

/* ---- kernel IR printing and the pool itself ---- */

static void test_kir_print(void **state) {
  (void)state;
  int64_t d[2] = {3, 17}, db[1] = {17};
  ncc_value *a = input(NCC_DT_F32, 2, d);
  ncc_value *b = input(NCC_DT_F32, 1, db);
  output(OP(NCC_OP_ADD, a, b));
  infer();
  kir_kernel *k;
  ncc_lower_opts o = {.vector_width = 16};
  assert_int_equal(ncc_lower_node(G->nodes[0], "k0", &o, &k), NCC_OK);
  char buf[4096];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  assert_non_null(f);
  kir_print(k, f);
  fclose(f);
  assert_non_null(strstr(buf, "kernel k0(in0: f32, in1: f32, out0: f32 out)"));
  assert_non_null(strstr(buf, "parallel"));
  assert_non_null(strstr(buf, "vector(16)"));
  assert_non_null(strstr(buf, "out0[add(i1, mul(i0, 17))] = add(in0[add(i1, mul(i0, 17))], in1[i1])"));
  kir_kernel_free(k);
}

static void count_task(void *ctx, int tid, int nth) {
  int *hits = ctx;
  assert_true(tid >= 0 && tid < nth);
  __atomic_fetch_add(&hits[tid], 1, __ATOMIC_RELAXED);
}

static void test_threadpool(void **state) {
  (void)state;
  ncc_threadpool *p;
  assert_int_equal(ncc_threadpool_create(3, &p), NCC_OK);
  assert_int_equal(ncc_threadpool_size(p), 3);
  int hits[3] = {0};
  for (int r = 0; r < 200; r++) ncc_threadpool_run(p, count_task, hits, 1 + r % 3);
  /* tid 0 every time; tid 1 when nth >= 2; tid 2 when nth == 3 */
  assert_int_equal(hits[0], 200);
  assert_int_equal(hits[1], 133);
  assert_int_equal(hits[2], 66);
  ncc_threadpool_free(p);
  ncc_threadpool_run(NULL, count_task, hits, 4); /* NULL pool: inline */
  assert_int_equal(hits[0], 201);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_chain_symbolic_batch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_module_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kir_print, setup, teardown),
      cmocka_unit_test_setup_teardown(test_emit, setup, teardown),
      cmocka_unit_test(test_threadpool),
      cmocka_unit_test_setup_teardown(test_alloc_failure, setup, teardown),
  };
  /* Without the cpu target (built with -DNCC_LLVM=OFF) only the kernel IR
   * and the thread pool can be tested. */
  const struct CMUnitTest no_llvm[] = {
      cmocka_unit_test_setup_teardown(test_kir_print, setup, teardown),
      cmocka_unit_test(test_threadpool),
  };
  char why[256];
  if (ncc_target_available("cpu", why, sizeof why) != NCC_OK) {
    print_message("cpu target unavailable (%s): kernel IR and pool tests only\n", why);
    return cmocka_run_group_tests(no_llvm, NULL, NULL);
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
