/* tests/unit/test_compile_stats.c — ncc_compile_stats through the public
 * API (include/ncc.h, "compile time").
 *
 * Two identical MatMul+Relu blocks with different weights make two cpu
 * kernels, the second reused: one row per compiled kernel
 * (ncc_module_num_kernels), the reused row with no LLVM time and the other
 * with every per-kernel phase measured, the rows adding up to the phase
 * totals, the phases and other_ms to total_ms. Reuse off: nothing reused.
 * Target ref: nothing but total and other. --emit: object code generation
 * timed, the reused kernel flagged. A module does not keep the caller's
 * stats (runs after ncc_compile_stats_free), and a compile without stats
 * changes nothing. ncc_pipeline_ran_ms gives each pass's time.
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

static const char model[] =
    "graph @g(%x: f32[2,4]) {\n"
    "  %w1: f32[4,4] = const [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0,\n"
    "                         9.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]\n"
    "  %w2: f32[4,4] = const [2.0, 1.0, 0.5, 4.0, 5.0, 6.0, 7.0, 8.0,\n"
    "                         9.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 3.0]\n"
    "  %a = MatMul(%x, %w1)\n"
    "  %b = Relu(%a)\n"
    "  %c = MatMul(%b, %w2)\n"
    "  %d = Relu(%c)\n"
    "  return %d\n"
    "}\n";

static ncc_graph *parse(void) {
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(model, strlen(model), "t.nir", &g), NCC_OK);
  return g;
}

/* Parsed and through -O2, which fuses each Relu into its MatMul. */
static ncc_graph *load(void) {
  ncc_graph *g = parse();
  ncc_pipeline *p = NULL;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  ncc_pipeline_free(p);
  return g;
}

static double phase_sum(const double *ms) {
  double s = 0;
  for (int p = 0; p < NCC_PHASE_COUNT; p++) s += ms[p];
  return s;
}

/* The bookkeeping every filled stats object keeps. */
static void check_totals(const ncc_compile_stats *s) {
  for (int p = 0; p < NCC_PHASE_COUNT; p++) assert_true(s->ms[p] >= 0);
  assert_true(s->other_ms >= 0);
  assert_true(s->total_ms > 0);
  /* other_ms is the rest, so the phases (the parallel kernel compiles at
   * their wall time) and it are the total (other_ms is 0 only if the
   * phases already fill it) */
  assert_true(s->kernels_wall_ms >= 0 && s->kernels_work_ms >= 0);
  double gap = phase_sum(s->ms) - s->kernels_work_ms + s->kernels_wall_ms + s->other_ms -
               s->total_ms;
  if (s->other_ms > 0) assert_true(gap < 1e-6 && gap > -1e-6);
  else assert_true(gap >= -1e-6);
}

static void compile(const char *target, int reuse, ncc_compile_stats *s, ncc_module **m,
                    ncc_graph *g) {
  ncc_options o;
  ncc_options_init(&o);
  o.kernel_reuse = reuse;
  o.compile_stats = s;
  ncc_status st = ncc_module_compile_opts(g, target, &o, m);
  if (st) print_error("compile: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
}

static void cpu_reuse(void **state) {
  (void)state;
  if (ncc_target_available("cpu", NULL, 0) != NCC_OK) skip();
  ncc_graph *g = load();
  ncc_compile_stats s = {0};
  ncc_module *m = NULL;
  compile("cpu", 1, &s, &m, g);
  check_totals(&s);
  assert_int_equal(s.n_kernels, ncc_module_num_kernels(m));
  assert_int_equal(s.n_kernels, 2);
  const ncc_kernel_compile_stats *k0 = &s.kernels[0], *k1 = &s.kernels[1];
  assert_int_equal(k0->reused, 0);
  assert_int_equal(k1->reused, 1);
  assert_true(k0->nodes >= 1 && k1->nodes == k0->nodes);
  const int llvm[] = {NCC_PHASE_IR, NCC_PHASE_OPT, NCC_PHASE_CODEGEN, NCC_PHASE_LINK};
  for (int i = 0; i < 4; i++) {
    int p = llvm[i];
    assert_true(k0->ms[p] > 0);
    assert_true(k1->ms[p] == 0);
    /* cpu measures these per kernel: the rows are the totals */
    double diff = k0->ms[p] + k1->ms[p] - s.ms[p];
    assert_true(diff < 1e-9 && diff > -1e-9);
  }
  assert_true(k0->ms[NCC_PHASE_LOWER] > 0 && k1->ms[NCC_PHASE_LOWER] > 0);
  assert_true(s.ms[NCC_PHASE_BACKEND] == 0);
  /* the module keeps no pointer to the caller's stats */
  ncc_compile_stats_free(&s);
  assert_null(s.kernels);
  assert_int_equal(s.n_kernels, 0);
  ncc_tensor x, y;
  int64_t d[2] = {2, 4};
  assert_int_equal(ncc_tensor_alloc(&x, NCC_DT_F32, 2, d), NCC_OK);
  assert_int_equal(ncc_module_run(m, &x, 1, &y, 1), NCC_OK);
  assert_true(s.total_ms == 0 && s.n_kernels == 0);
  ncc_tensor_free(&x);
  ncc_tensor_free(&y);
  ncc_module_free(m);
  ncc_graph_free(g);
}

static void cpu_no_reuse(void **state) {
  (void)state;
  if (ncc_target_available("cpu", NULL, 0) != NCC_OK) skip();
  ncc_graph *g = load();
  ncc_compile_stats s = {0};
  ncc_module *m = NULL;
  compile("cpu", 0, &s, &m, g);
  check_totals(&s);
  assert_int_equal(s.n_kernels, 2);
  for (int k = 0; k < s.n_kernels; k++) {
    assert_int_equal(s.kernels[k].reused, 0);
    assert_true(s.kernels[k].ms[NCC_PHASE_OPT] > 0);
  }
  ncc_compile_stats_free(&s);
  ncc_module_free(m);
  /* no stats asked for: the same compile */
  compile("cpu", 1, NULL, &m, g);
  assert_int_equal(ncc_module_num_kernels(m), 2);
  ncc_module_free(m);
  ncc_graph_free(g);
}

static void ref_target(void **state) {
  (void)state;
  ncc_graph *g = load();
  ncc_compile_stats s = {0};
  ncc_module *m = NULL;
  compile("ref", 1, &s, &m, g);
  check_totals(&s);
  assert_int_equal(s.n_kernels, 0);
  assert_true(phase_sum(s.ms) == 0);
  ncc_compile_stats_free(&s);
  ncc_module_free(m);
  ncc_graph_free(g);
}

static void emit_obj(void **state) {
  (void)state;
  if (ncc_target_can_compile("cpu", NULL, 0) != NCC_OK) skip();
  ncc_graph *g = load();
  char dir[] = "/tmp/ncc-ctime-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/m.o", dir);
  ncc_compile_stats s = {0};
  ncc_options o;
  ncc_options_init(&o);
  o.compile_stats = &s;
  assert_int_equal(ncc_module_emit_opts(g, "cpu", &o, "obj", path), NCC_OK);
  check_totals(&s);
  assert_true(s.ms[NCC_PHASE_CODEGEN] > 0 && s.ms[NCC_PHASE_OPT] > 0);
  assert_int_equal(s.n_kernels, 2);
  assert_int_equal(s.kernels[0].reused + s.kernels[1].reused, 1);
  ncc_compile_stats_free(&s);
  unlink(path);
  rmdir(dir);
  ncc_graph_free(g);
}

static void pass_times(void **state) {
  (void)state;
  ncc_graph *g = parse();
  ncc_pipeline *p = NULL;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_true(ncc_pipeline_num_ran(p) > 0);
  for (int i = 0; i < ncc_pipeline_num_ran(p); i++) assert_true(ncc_pipeline_ran_ms(p, i) >= 0);
  assert_true(ncc_pipeline_ran_ms(p, -1) == 0);
  assert_true(ncc_pipeline_ran_ms(p, ncc_pipeline_num_ran(p)) == 0);
  ncc_pipeline_free(p);
  ncc_graph_free(g);
}

static void phase_names(void **state) {
  (void)state;
  for (int p = 0; p < NCC_PHASE_COUNT; p++) {
    assert_string_not_equal(ncc_compile_phase_name(p), "?");
    for (int q = 0; q < p; q++)
      assert_string_not_equal(ncc_compile_phase_name(p), ncc_compile_phase_name(q));
  }
  assert_string_equal(ncc_compile_phase_name(-1), "?");
  assert_string_equal(ncc_compile_phase_name(NCC_PHASE_COUNT), "?");
  ncc_compile_stats_free(NULL); /* harmless */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_reuse),  cmocka_unit_test(cpu_no_reuse),
      cmocka_unit_test(ref_target), cmocka_unit_test(emit_obj),
      cmocka_unit_test(pass_times), cmocka_unit_test(phase_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
