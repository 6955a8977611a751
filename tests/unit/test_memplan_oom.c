/* tests/unit/test_memplan_oom.c — an allocation failure during the memplan
 * pass either reaches the caller as NCC_ERR_NOMEM or leaves no trace: a run
 * that returns NCC_OK prints the same graph as a run without failures, never
 * a half-annotated one. The graph has a symbolic batch, so the pass writes
 * both mem.offset and mem.offset.batch (a swallowed failure of the second
 * write survived every test; tools/mutate.py found it). Oracles: the
 * injected failure (tests/unit/test_alloc.h) and the failure-free run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "passes/pass.h"
#include "test_alloc.h"

/* A chain of CHAIN unary nodes over f32[N,64]: long enough that the
 * annotations outgrow the graph's arena block (64 KiB), so the attribute
 * writes themselves allocate and can fail. */
enum { CHAIN = 1200 };
static char PLAN_IR[CHAIN * 48 + 128];

static void make_ir(void) {
  static const char *const ops[] = {"Relu", "Neg", "Exp", "Tanh"};
  size_t o = (size_t)snprintf(PLAN_IR, sizeof PLAN_IR,
                              "graph @plan(%%x: f32[N,64]) {\n  %%v1 = Relu(%%x)\n");
  for (int i = 1; i < CHAIN; i++)
    o += (size_t)snprintf(PLAN_IR + o, sizeof PLAN_IR - o, "  %%v%d = %s(%%v%d)\n", i + 1,
                          ops[i % 4], i);
  snprintf(PLAN_IR + o, sizeof PLAN_IR - o, "  return %%v%d\n}\n", CHAIN);
}

static ncc_graph *parse(const char *text) {
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(text, strlen(text), "t.nir", &g), NCC_OK);
  return g;
}

/* The clean run plans offsets that depend on the batch: the case under test. */
static void test_plan_has_batch_offsets(void **state) {
  (void)state;
  ncc_graph *g = parse(PLAN_IR);
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(0, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, "memplan"), NCC_OK);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  const ncc_value *b = ncc_graph_find_value(g, "v2");
  assert_non_null(b);
  assert_non_null(ncc_node_attr(b->producer, "mem.offset.batch"));
  ncc_pipeline_free(p);
  ncc_graph_free(g);
}

static char *plan_text(long fail_at, ncc_status *st) {
  ncc_graph *g = parse(PLAN_IR);
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(0, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, "memplan"), NCC_OK);
  test_alloc_arm(fail_at);
  *st = ncc_pipeline_run(p, g);
  test_alloc_disarm();
  char *text = *st == NCC_OK ? ncc_graph_print_string(g) : NULL;
  ncc_pipeline_free(p);
  ncc_graph_free(g);
  return text;
}

static void test_every_failure_reported(void **state) {
  (void)state;
  ncc_status st;
  char *want = plan_text(-1, &st);
  assert_int_equal(st, NCC_OK);
  assert_non_null(want);
  bool clean = false;
  long k, failed = 0;
  for (k = 0; !clean && k < 2000; k++) {
    char *got = plan_text(k, &st);
    clean = test_alloc_ran_clean();
    if (st == NCC_ERR_NOMEM) {
      failed++;
      continue;
    }
    assert_int_equal(st, NCC_OK);
    if (strcmp(got, want) != 0) {
      size_t i = 0, line = 0;
      while (got[i] && got[i] == want[i]) i++;
      while (line < i && strchr(got + line, '\n') && strchr(got + line, '\n') < got + i)
        line = (size_t)(strchr(got + line, '\n') - got) + 1;
      fail_msg("allocation %ld failed, the pass returned NCC_OK with another plan; "
               "first difference in: %.100s", k, got + line);
    }
    free(got);
  }
  free(want);
  assert_true(clean);
  assert_true(failed > 3); /* failures were injected into the pass itself */
}

int main(void) {
  make_ir();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plan_has_batch_offsets),
      cmocka_unit_test(test_every_failure_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
