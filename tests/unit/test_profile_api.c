/* tests/unit/test_profile_api.c — the profiling API of include/ncc.h
 * (ncc_module_profile_enable/get, ncc_module_step_of, ncc_module_node_info)
 * on the ref and cpu targets: nothing is recorded while it is off; on, each
 * run is one event, each step one event inside its run, and step events
 * name the nodes of the graph; the FLOPs of a MatMul are 2*M*K*N (counted
 * here, not by ncc); bad arguments are refused, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

/* y = Relu(x @ w): a MatMul the cpu target may fuse with its Relu */
static const char *MODEL =
    "graph @p(%x: f32[4,16], %w: f32[16,8]) {\n"
    "  %h: f32[4,8] = MatMul(%x, %w)\n"
    "  %y: f32[4,8] = Relu(%h)\n"
    "  return %y\n"
    "}\n";

static void run_profiled(const char *target) {
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(MODEL, strlen(MODEL), "p", &g), NCC_OK);
  ncc_module *m = NULL;
  if (ncc_module_compile(g, target, &m) != NCC_OK) { /* a build without LLVM */
    ncc_graph_free(g);
    skip();
  }
  float x[4 * 16], w[16 * 8];
  for (int i = 0; i < 64; i++) x[i] = (float)(i % 5) - 2;
  for (int i = 0; i < 128; i++) w[i] = (float)(i % 3) - 1;
  ncc_tensor in[2] = {{.dtype = NCC_DT_F32, .rank = 2, .dims = {4, 16}, .data = x},
                      {.dtype = NCC_DT_F32, .rank = 2, .dims = {16, 8}, .data = w}};
  ncc_tensor y;
  /* off: nothing recorded */
  assert_int_equal(ncc_module_run(m, in, 2, &y, 1), NCC_OK);
  ncc_tensor_free(&y);
  assert_int_equal(ncc_module_profile_get(m, NULL, 0), 0);
  /* on: two runs */
  assert_int_equal(ncc_module_profile_enable(m, 1), NCC_OK);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(ncc_module_run(m, in, 2, &y, 1), NCC_OK);
    ncc_tensor_free(&y);
  }
  assert_int_equal(ncc_module_profile_enable(m, 0), NCC_OK);
  ncc_profile_event ev[64];
  int n = ncc_module_profile_get(m, ev, 64);
  assert_true(n >= 2 && n <= 64);
  int runs = 0, steps = 0;
  for (int e = 0; e < n; e++) {
    if (ev[e].node < 0) {
      runs++;
      continue;
    }
    assert_true(ev[e].node < ncc_graph_num_nodes(g));
    assert_int_equal(ncc_module_step_of(m, ev[e].node, NULL), ev[e].node);
    if (ev[e].thread >= 0) continue;
    steps++;
    /* inside its run: the run's event comes after its steps */
    int k = e + 1;
    while (k < n && ev[k].node >= 0) k++;
    assert_true(k < n && ev[k].run == ev[e].run);
    assert_true(ev[e].start_us >= ev[k].start_us - 1e-3);
    assert_true(ev[e].start_us + ev[e].dur_us <= ev[k].start_us + ev[k].dur_us + 1e-3);
  }
  assert_int_equal(runs, 2);
  if (strcmp(target, "ref") != 0) assert_true(steps >= 2); /* a step per run at least */
  /* the MatMul's cost, counted here */
  ncc_node_info ni;
  assert_int_equal(ncc_module_node_info(m, 0, 1, &ni), NCC_OK);
  assert_string_equal(ni.op, "MatMul");
  assert_true(ni.flops == 2.0 * 4 * 16 * 8);
  assert_string_equal(ni.shape, "4x8");
  /* disabled again: no more records */
  assert_int_equal(ncc_module_run(m, in, 2, &y, 1), NCC_OK);
  ncc_tensor_free(&y);
  assert_int_equal(ncc_module_profile_get(m, NULL, 0), n);
  /* bad arguments */
  assert_int_equal(ncc_module_step_of(m, -1, NULL), -1);
  assert_int_equal(ncc_module_step_of(m, 99, NULL), -1);
  assert_int_equal(ncc_module_node_info(m, 99, 1, &ni), NCC_ERR_USAGE);
  assert_int_equal(ncc_module_profile_enable(NULL, 1), NCC_ERR_USAGE);
  assert_int_equal(ncc_module_profile_get(NULL, ev, 64), 0);
  ncc_module_free(m);
  ncc_graph_free(g);
}

static void test_ref(void **s) {
  (void)s;
  run_profiled("ref");
}

static void test_cpu(void **s) {
  (void)s;
  run_profiled("cpu");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ref), cmocka_unit_test(test_cpu)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
