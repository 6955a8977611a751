/* tests/unit/test_opsets.c — the pieces of the opset 7-12 import that are
 * not seen through `ncc run` (tests/py/opset_ort.py runs the forms against
 * onnxruntime): the opset bounds of attributes in the schema (ir/attrs.def
 * `since` and NCC_ATTR_OLD `until`), and ncc_infer_graph_from, which the
 * importer uses to type values while the graph is still being built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/attrs.h"
#include "ir/shape.h"

static void schema_opset_bounds(void **state) {
  (void)state;
  static const struct {
    ncc_op op;
    const char *name;
    int since, until;
  } rows[] = {
      {NCC_OP_CLIP, "min", 0, 11},          {NCC_OP_CLIP, "max", 0, 11},
      {NCC_OP_SLICE, "starts", 0, 10},      {NCC_OP_PAD, "pads", 0, 11},
      {NCC_OP_PAD, "value", 0, 11},         {NCC_OP_SPLIT, "split", 0, 13},
      {NCC_OP_SQUEEZE, "axes", 0, 13},      {NCC_OP_REDUCESUM, "axes", 0, 13},
      {NCC_OP_REDUCEMEAN, "axes", 0, 18},   {NCC_OP_BATCHNORM, "spatial", 0, 9},
      {NCC_OP_MAXPOOL, "storage_order", 8, 0},
      {NCC_OP_MAXPOOL, "dilations", 10, 0}, {NCC_OP_AVGPOOL, "dilations", 19, 0},
      {NCC_OP_RESHAPE, "allowzero", 14, 0}, {NCC_OP_SPLIT, "num_outputs", 18, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const ncc_attr_schema *s = ncc_attr_schema_find(rows[i].op, rows[i].name);
    assert_non_null(s);
    assert_int_equal(s->since, rows[i].since);
    assert_int_equal(s->until, rows[i].until);
    /* an attribute of old opsets only never reaches the IR */
    if (rows[i].until) assert_int_equal(s->ir_kind, -1);
  }
}

/* Inference of a graph that grows between calls: each call types the
 * nodes added since the last one, and the cursors end at the counts. */
static void infer_graph_from_grows(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("t");
  assert_non_null(g);
  ncc_shape s = {.rank = 2, .d = {2, 3}};
  ncc_value *x = ncc_graph_add_value(g, "x", NCC_VAL_INPUT, NCC_DT_F32, &s);
  ncc_value *r = ncc_graph_add_value(g, "r", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  ncc_node *n = ncc_graph_add_node(g, NCC_OP_RELU, "relu", 1, &x, 1);
  assert_true(x && r && n);
  ncc_node_set_output(n, 0, r);
  int nv = 0, nn = 0;
  assert_int_equal(ncc_infer_graph_from(g, &nv, &nn), NCC_OK);
  assert_int_equal(nn, 1);
  assert_int_equal(nv, g->n_values);
  assert_int_equal(r->dtype, NCC_DT_F32);
  assert_int_equal(r->shape.rank, 2);
  ncc_value *t = ncc_graph_add_value(g, "t", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  ncc_value *in2[1] = {r};
  n = ncc_graph_add_node(g, NCC_OP_SHAPE, "shape", 1, in2, 1);
  assert_true(t && n);
  ncc_node_set_output(n, 0, t);
  assert_int_equal(ncc_infer_graph_from(g, &nv, &nn), NCC_OK);
  assert_int_equal(nn, 2);
  assert_int_equal(t->dtype, NCC_DT_I64);
  /* the whole-graph inference afterwards keeps what was inferred */
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_int_equal(t->shape.d[0], 2);
  ncc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(schema_opset_bounds),
      cmocka_unit_test(infer_graph_from_grows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
