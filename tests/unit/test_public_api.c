/* tests/unit/test_public_api.c — what a program that includes only ncc.h
 * (the `ncc` driver) learns about a graph: the declared types of its inputs
 * and outputs, with symbolic dims as symbols shared across values, and the
 * errors for out-of-range indices. The expected types are the ones written
 * in the text IR below, not anything ncc computed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ncc.h"

static const char text[] =
    "graph @g(%x: f32[N,3,7], %y: i64[5,N], %z: f16[]) {\n"
    "  %a: f32[N,3,7] = Relu(%x)\n"
    "  return %a, %y\n"
    "}\n";

static void test_value_info(void **state) {
  (void)state;
  ncc_graph *g = NULL;
  assert_int_equal(ncc_graph_parse_text(text, strlen(text), "t.nir", &g), NCC_OK);
  ncc_value_info x, y, z, a;
  assert_int_equal(ncc_graph_input_info(g, 0, &x), NCC_OK);
  assert_int_equal(ncc_graph_input_info(g, 1, &y), NCC_OK);
  assert_int_equal(ncc_graph_input_info(g, 2, &z), NCC_OK);
  assert_string_equal(x.name, "x");
  assert_int_equal(x.dtype, NCC_DT_F32);
  assert_int_equal(x.rank, 3);
  assert_int_equal(x.dims[0], -1);
  assert_true(x.sym[0] >= 0);
  assert_string_equal(ncc_graph_sym_name(g, x.sym[0]), "N");
  assert_int_equal(x.dims[1], 3);
  assert_int_equal(x.sym[1], -1);
  assert_int_equal(x.dims[2], 7);
  assert_int_equal(y.dtype, NCC_DT_I64);
  assert_int_equal(y.dims[0], 5);
  assert_int_equal(y.sym[1], x.sym[0]); /* one symbol N */
  assert_int_equal(z.rank, 0);
  assert_int_equal(z.dtype, NCC_DT_F16);
  assert_int_equal(ncc_graph_output_info(g, 0, &a), NCC_OK);
  assert_string_equal(a.name, "a");
  assert_int_equal(a.sym[0], x.sym[0]);
  assert_int_equal(ncc_graph_output_info(g, 1, &a), NCC_OK);
  assert_string_equal(a.name, "y");
  assert_int_equal(ncc_graph_input_info(g, 3, &a), NCC_ERR_USAGE);
  assert_int_equal(ncc_graph_input_info(g, -1, &a), NCC_ERR_USAGE);
  assert_int_equal(ncc_graph_output_info(g, 2, &a), NCC_ERR_USAGE);
  assert_string_equal(ncc_graph_sym_name(g, 99), "?");
  ncc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_value_info),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
