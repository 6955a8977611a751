/* tests/unit/test_attrs_more.c — the typed views of the attributes that
 * were read by name in several places (Cast `to`, Split `num_outputs`,
 * Reshape `allowzero`, Shape `start`/`end`, Pad `mode`, Constant and
 * ConstantOfShape `value`), with ONNX's defaults (from the operator spec),
 * and the schema check the verifier runs on every node (ir/attrs.def's IR
 * column): unknown names, wrong kinds, ONNX-only forms and pass
 * annotations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/attrs.h"

static ncc_graph *g;

static ncc_node *mk(ncc_op op, int n_out) {
  ncc_shape s = {0, {0}};
  ncc_value *in[1] = {ncc_graph_add_value(g, NULL, NCC_VAL_INPUT, NCC_DT_F32, &s)};
  ncc_node *n = ncc_graph_add_node(g, op, "t", 1, in, n_out);
  assert_non_null(n);
  return n;
}

static int setup(void **state) {
  (void)state;
  g = ncc_graph_new("t");
  return g ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  ncc_graph_free(g);
  return 0;
}

static bool says(const char *what) {
  return strstr(ncc_error_message(), what) != NULL;
}

static void cast_split_reshape(void **state) {
  (void)state;
  ncc_dtype dt;
  ncc_node *n = mk(NCC_OP_CAST, 1);
  assert_int_equal(ncc_attrs_cast(n, &dt), NCC_ERR_INPUT);
  assert_true(says("missing attribute 'to'"));
  assert_int_equal(ncc_node_set_attr_string(g, n, "to", "f16"), NCC_OK);
  assert_int_equal(ncc_attrs_cast(n, &dt), NCC_OK);
  assert_int_equal(dt, NCC_DT_F16);
  assert_int_equal(ncc_node_set_attr_string(g, n, "to", "f8"), NCC_OK);
  assert_int_equal(ncc_attrs_cast(n, &dt), NCC_ERR_UNSUPPORTED);
  assert_true(says("cannot cast to unknown dtype 'f8'"));
  assert_int_equal(ncc_node_set_attr_int(g, n, "to", 10), NCC_OK);
  assert_int_equal(ncc_attrs_cast(n, &dt), NCC_ERR_INPUT);
  assert_true(says("attribute 'to' must be a string"));

  int num;
  n = mk(NCC_OP_SPLIT, 3);
  assert_int_equal(ncc_attrs_split(n, &num), NCC_OK);
  assert_int_equal(num, 3); /* default: the output count */
  assert_int_equal(ncc_node_set_attr_int(g, n, "num_outputs", 2), NCC_OK);
  assert_int_equal(ncc_attrs_split(n, &num), NCC_ERR_INPUT);
  assert_true(says("num_outputs is 2 but the node has 3 outputs"));

  bool z = true;
  n = mk(NCC_OP_RESHAPE, 1);
  assert_int_equal(ncc_attrs_reshape(n, &z), NCC_OK);
  assert_false(z);
  assert_int_equal(ncc_node_set_attr_int(g, n, "allowzero", 1), NCC_OK);
  assert_int_equal(ncc_attrs_reshape(n, &z), NCC_OK);
  assert_true(z);
  assert_int_equal(ncc_node_set_attr_int(g, n, "allowzero", 2), NCC_OK);
  assert_int_equal(ncc_attrs_reshape(n, &z), NCC_ERR_INPUT);
  assert_true(says("attribute 'allowzero' must be 0 or 1, got 2"));
}

static void shape_pad_value(void **state) {
  (void)state;
  int s, e;
  ncc_node *n = mk(NCC_OP_SHAPE, 1);
  assert_int_equal(ncc_attrs_shape(n, 4, &s, &e), NCC_OK);
  assert_true(s == 0 && e == 4);
  /* negative from the end, then clamped into [0, rank] */
  assert_int_equal(ncc_node_set_attr_int(g, n, "start", -3), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "end", 99), NCC_OK);
  assert_int_equal(ncc_attrs_shape(n, 4, &s, &e), NCC_OK);
  assert_true(s == 1 && e == 4);
  assert_int_equal(ncc_node_set_attr_int(g, n, "start", -9), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "end", -1), NCC_OK);
  assert_int_equal(ncc_attrs_shape(n, 4, &s, &e), NCC_OK);
  assert_true(s == 0 && e == 3);

  ncc_pad_mode m;
  n = mk(NCC_OP_PAD, 1);
  assert_int_equal(ncc_attrs_pad(n, &m), NCC_OK);
  assert_int_equal(m, NCC_PAD_CONSTANT);
  assert_int_equal(ncc_node_set_attr_string(g, n, "mode", "wrap"), NCC_OK);
  assert_int_equal(ncc_attrs_pad(n, &m), NCC_OK);
  assert_int_equal(m, NCC_PAD_WRAP);
  assert_string_equal(ncc_pad_mode_name(m), "wrap");
  assert_int_equal(ncc_node_set_attr_string(g, n, "mode", "mirror"), NCC_OK);
  assert_int_equal(ncc_attrs_pad(n, &m), NCC_ERR_INPUT);
  assert_true(says("unknown mode \"mirror\""));

  const ncc_const *v = (const ncc_const *)1;
  n = mk(NCC_OP_CONSTANTOFSHAPE, 1);
  assert_int_equal(ncc_attrs_value(n, &v), NCC_OK);
  assert_null(v); /* absent: f32 zero */
  n = mk(NCC_OP_CONSTANT, 1);
  assert_int_equal(ncc_attrs_value(n, &v), NCC_ERR_INPUT);
  assert_true(says("missing attribute 'value'"));
  assert_int_equal(ncc_node_set_attr_float(g, n, "value", 1.0f), NCC_OK);
  assert_int_equal(ncc_attrs_value(n, &v), NCC_ERR_INPUT);
  assert_true(says("attribute 'value' must be a tensor"));
}

static void schema_check(void **state) {
  (void)state;
  /* nothing, known names of the IR's kind, and annotations pass */
  ncc_node *n = mk(NCC_OP_RELU, 1);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "fuse.group", 1), NCC_OK);
  assert_int_equal(ncc_node_set_attr_ints(g, n, "mem.offset", (int64_t[]){0}, 1), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_float(g, n, "alpha", 0.1f), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("(Relu): Relu has no attribute 'alpha'"));

  n = mk(NCC_OP_LEAKYRELU, 1);
  assert_int_equal(ncc_node_set_attr_int(g, n, "alpha", 1), NCC_OK); /* `alpha=1` */
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_ints(g, n, "alpha", (int64_t[]){1}, 1), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("attribute 'alpha' must be a float"));

  /* Cast's `to` is the dtype's name in the IR, ONNX's type code only in a
   * model; `saturate` the importer drops */
  n = mk(NCC_OP_CAST, 1);
  assert_int_equal(ncc_node_set_attr_string(g, n, "to", "i64"), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "to", 7), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("attribute 'to' must be a string"));
  n = mk(NCC_OP_CAST, 1);
  assert_int_equal(ncc_node_set_attr_int(g, n, "saturate", 1), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("Cast has no attribute 'saturate' in the IR"));

  n = mk(NCC_OP_BATCHNORM, 1);
  assert_int_equal(ncc_node_set_attr_string(g, n, "momentum", "fast"), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("attribute 'momentum' must be a float"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cast_split_reshape),
      cmocka_unit_test(shape_pad_value),
      cmocka_unit_test(schema_check),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
