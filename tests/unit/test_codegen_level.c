/* tests/unit/test_codegen_level.c — ncc_options.codegen_level through the
 * API: the default is 3, every tier 0..3 compiles and runs a module whose
 * output matches a plain C oracle, and values outside 0..3 are a usage
 * error of both compile and emit (nothing is compiled). The command-line
 * side (--codegen-opt, NCC_CODEGEN_OPT) is tests/tiers/test_tiers_cli.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ncc.h"

/* y = tanh(x) * x + x: a vector loop with a tail (37 columns) */
static const char model[] = "graph @g(%x: f32[3,37]) {\n"
                            "  %t = Tanh(%x)\n"
                            "  %m = Mul(%t, %x)\n"
                            "  %y = Add(%m, %x)\n"
                            "  return %y\n"
                            "}\n";

static ncc_graph *load(void) {
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(model, strlen(model), "t.nir", &g), NCC_OK);
  return g;
}

static void test_default(void **state) {
  (void)state;
  ncc_options o;
  ncc_options_init(&o);
  assert_int_equal(o.codegen_level, 3);
}

static void test_every_tier_runs(void **state) {
  (void)state;
  for (int level = 0; level <= 3; level++) {
    ncc_options o;
    ncc_options_init(&o);
    o.codegen_level = level;
    ncc_graph *g = load();
    ncc_module *m = NULL;
    ncc_status st = ncc_module_compile_opts(g, "cpu", &o, &m);
    if (st == NCC_ERR_UNSUPPORTED) skip();
    assert_int_equal(st, NCC_OK);
    int64_t dims[2] = {3, 37};
    ncc_tensor x, y = {0};
    assert_int_equal(ncc_tensor_alloc(&x, NCC_DT_F32, 2, dims), NCC_OK);
    float *xs = x.data;
    for (int i = 0; i < 3 * 37; i++) xs[i] = (float)(i - 55) / 13.0f;
    assert_int_equal(ncc_module_run(m, &x, 1, &y, 1), NCC_OK);
    const float *ys = y.data;
    for (int i = 0; i < 3 * 37; i++) {
      double want = tanh((double)xs[i]) * xs[i] + xs[i];
      if (fabs(ys[i] - want) > 1e-5 + 1e-5 * fabs(want))
        fail_msg("tier %d, element %d: %g, want %g", level, i, ys[i], want);
    }
    ncc_tensor_free(&x);
    ncc_tensor_free(&y);
    ncc_module_free(m);
    ncc_graph_free(g);
  }
}

static void test_out_of_range(void **state) {
  (void)state;
  static const int bad[] = {-1, 4, 100};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ncc_options o;
    ncc_options_init(&o);
    o.codegen_level = bad[i];
    ncc_graph *g = load();
    ncc_module *m = NULL;
    assert_int_equal(ncc_module_compile_opts(g, "cpu", &o, &m), NCC_ERR_USAGE);
    assert_null(m);
    assert_non_null(strstr(ncc_error_message(), "codegen_level"));
    assert_int_equal(ncc_module_emit_opts(g, "cpu", &o, "llvm", "/dev/null"), NCC_ERR_USAGE);
    ncc_graph_free(g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default),
      cmocka_unit_test(test_every_tier_runs),
      cmocka_unit_test(test_out_of_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
