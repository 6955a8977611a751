/* tests/unit/test_attrs.c — the typed attribute views (ir/attrs.c) and the
 * tables a new op is added to: ONNX's defaults (from the operator spec),
 * the one-line errors, the schema the importer checks against
 * (ir/attrs.def), and that every formula row of ir/eltwise.def names a
 * unary elementwise op of ir/ops.def whose shape rule is `unary`; and the
 * views of the attributes once read by name in several places, with the
 * schema check the verifier runs on every node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/attrs.h"

static ncc_graph *g;

/* A node of `op` with one f32 scalar input and n_out outputs. */
static ncc_node *mk_n(ncc_op op, int n_out) {
  ncc_shape s = {0, {0}};
  ncc_value *in[1] = {ncc_graph_add_value(g, NULL, NCC_VAL_INPUT, NCC_DT_F32, &s)};
  ncc_node *n = ncc_graph_add_node(g, op, "t", 1, in, n_out);
  assert_non_null(n);
  return n;
}

static ncc_node *mk(ncc_op op) { return mk_n(op, 1); }

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

static void gemm_defaults_and_errors(void **state) {
  (void)state;
  ncc_node *n = mk(NCC_OP_GEMM);
  ncc_gemm_attrs a;
  assert_int_equal(ncc_attrs_gemm(n, &a), NCC_OK);
  assert_true(a.alpha == 1.0f && a.beta == 1.0f && !a.trans_a && !a.trans_b);
  assert_int_equal(ncc_node_set_attr_int(g, n, "transB", 1), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "alpha", 2), NCC_OK); /* int: its value */
  assert_int_equal(ncc_attrs_gemm(n, &a), NCC_OK);
  assert_true(a.trans_b && a.alpha == 2.0f);
  assert_int_equal(ncc_node_set_attr_int(g, n, "transA", 2), NCC_OK);
  assert_int_equal(ncc_attrs_gemm(n, &a), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "(Gemm): attribute 'transA' must be 0 or 1, got 2"));
  n = mk(NCC_OP_GEMM);
  assert_int_equal(ncc_node_set_attr_string(g, n, "beta", "x"), NCC_OK);
  assert_int_equal(ncc_attrs_gemm(n, &a), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "attribute 'beta' must be a float"));
  assert_true(a.beta == 1.0f); /* left at the default */
}

static void activations(void **state) {
  (void)state;
  ncc_act_attrs a;
  assert_int_equal(ncc_attrs_act(mk(NCC_OP_LEAKYRELU), &a), NCC_OK);
  assert_true(a.alpha == 0.01f);
  assert_int_equal(ncc_attrs_act(mk(NCC_OP_HARDSIGMOID), &a), NCC_OK);
  assert_true(a.alpha == 0.2f && a.beta == 0.5f);
  ncc_node *n = mk(NCC_OP_GELU);
  assert_int_equal(ncc_attrs_act(n, &a), NCC_OK);
  assert_false(a.gelu_tanh);
  assert_int_equal(ncc_node_set_attr_string(g, n, "approximate", "tanh"), NCC_OK);
  assert_int_equal(ncc_attrs_act(n, &a), NCC_OK);
  assert_true(a.gelu_tanh);
  assert_int_equal(ncc_node_set_attr_string(g, n, "approximate", "erf"), NCC_OK);
  assert_int_equal(ncc_attrs_act(n, &a), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "must be \"none\" or \"tanh\", got \"erf\""));
}

static void reduce_norm_pool(void **state) {
  (void)state;
  ncc_reduce_attrs r;
  ncc_node *n = mk(NCC_OP_REDUCESUM);
  assert_int_equal(ncc_attrs_reduce(n, &r), NCC_OK);
  assert_true(r.keepdims && !r.noop_with_empty_axes);
  assert_int_equal(ncc_node_set_attr_int(g, n, "keepdims", 0), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "noop_with_empty_axes", 1), NCC_OK);
  assert_int_equal(ncc_attrs_reduce(n, &r), NCC_OK);
  assert_true(!r.keepdims && r.noop_with_empty_axes);
  ncc_norm_attrs m;
  assert_int_equal(ncc_attrs_norm(mk(NCC_OP_LAYERNORM), &m), NCC_OK);
  assert_true(m.epsilon == 1e-5f && m.training_mode == 0);
  ncc_pool_attrs p;
  n = mk(NCC_OP_AVGPOOL);
  assert_int_equal(ncc_node_set_attr_int(g, n, "count_include_pad", 1), NCC_OK);
  assert_int_equal(ncc_attrs_pool(n, &p), NCC_OK);
  assert_true(p.count_include_pad && !p.col_major);
}

static void axis_and_perm(void **state) {
  (void)state;
  int ax, perm[NCC_MAX_RANK];
  assert_int_equal(ncc_attrs_axis_norm(mk(NCC_OP_SOFTMAX), 3, &ax), NCC_OK);
  assert_int_equal(ax, 2); /* default -1 */
  assert_int_equal(ncc_attrs_axis(mk(NCC_OP_FLATTEN)), 1);
  ncc_node *n = mk(NCC_OP_FLATTEN);
  assert_int_equal(ncc_node_set_attr_int(g, n, "axis", 3), NCC_OK);
  assert_int_equal(ncc_attrs_axis_norm(n, 3, &ax), NCC_OK); /* [0, rank] */
  assert_int_equal(ax, 3);
  n = mk(NCC_OP_GATHER);
  assert_int_equal(ncc_node_set_attr_int(g, n, "axis", -4), NCC_OK);
  assert_int_equal(ncc_attrs_axis_norm(n, 3, &ax), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "axis -4 is out of range for rank 3"));
  assert_int_equal(ncc_attrs_axis_norm(mk(NCC_OP_CONCAT), 2, &ax), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "missing attribute 'axis'"));
  assert_int_equal(ncc_attrs_perm(mk(NCC_OP_TRANSPOSE), 3, perm), NCC_OK);
  assert_true(perm[0] == 2 && perm[1] == 1 && perm[2] == 0);
  n = mk(NCC_OP_TRANSPOSE);
  assert_int_equal(ncc_node_set_attr_ints(g, n, "perm", (int64_t[]){0, 0, 1}, 3), NCC_OK);
  assert_int_equal(ncc_attrs_perm(n, 3, perm), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "perm is not a permutation of 0..2"));
}

/* The importer's schema: kinds as ONNX writes them, unknown names absent,
 * and no (op, name) listed twice. */
static void schema(void **state) {
  (void)state;
  const ncc_attr_schema *s = ncc_attr_schema_find(NCC_OP_GEMM, "alpha");
  assert_non_null(s);
  assert_int_equal(s->kind, NCC_ATTR_FLOAT);
  assert_int_equal(ncc_attr_schema_find(NCC_OP_CAST, "to")->kind, NCC_ATTR_INT);
  assert_int_equal(ncc_attr_schema_find(NCC_OP_CAST, "round_mode")->since, 24);
  assert_null(ncc_attr_schema_find(NCC_OP_RELU, "alpha"));
  assert_null(ncc_attr_schema_find(NCC_OP_GEMM, "alpha2"));
  static const struct { ncc_op op; const char *name; } rows[] = {
#define NCC_ATTR(op, nm, kind, since, ir) {NCC_OP_##op, nm},
#include "ir/attrs.def"
#undef NCC_ATTR
  };
  size_t nr = sizeof rows / sizeof rows[0];
  for (size_t i = 0; i < nr; i++) {
    assert_non_null(ncc_attr_schema_find(rows[i].op, rows[i].name));
    for (size_t j = i + 1; j < nr; j++)
      assert_false(rows[i].op == rows[j].op && strcmp(rows[i].name, rows[j].name) == 0);
  }
}

/* A formula row must be a one-input elementwise op whose shape rule is the
 * unary one: otherwise the kernels would read inputs it does not have. */
static void eltwise_formulas(void **state) {
  (void)state;
  static const char *const rule[NCC_OP_COUNT] = {
#define NCC_OP(id, nm, mi, ma, mo, mao, fl, r) [NCC_OP_##id] = #r,
#include "ir/ops.def"
#undef NCC_OP
  };
  static const ncc_op formula_ops[] = {
#define NCC_UNARY(id, formula) NCC_OP_##id,
#include "ir/eltwise.def"
  };
  for (size_t i = 0; i < sizeof formula_ops / sizeof formula_ops[0]; i++) {
    const ncc_op_info *info = &ncc_op_table[formula_ops[i]];
    assert_string_equal(rule[formula_ops[i]], "unary");
    assert_int_equal(info->flags & (NCC_OPF_ELTWISE | NCC_OPF_UNARY),
                     NCC_OPF_ELTWISE | NCC_OPF_UNARY);
    assert_int_equal(info->min_in, 1);
    assert_int_equal(info->max_in, 1);
  }
}

/* ---- the views of attributes once read by name in several places (Cast
 * `to`, Split `num_outputs`, Reshape `allowzero`, Shape `start`/`end`, Pad
 * `mode`, Constant and ConstantOfShape `value`), and the schema check the
 * verifier runs on every node (ir/attrs.def's IR column): unknown names,
 * wrong kinds, ONNX-only forms and pass annotations ---- */
static bool says(const char *what) {
  return strstr(ncc_error_message(), what) != NULL;
}

static void cast_split_reshape(void **state) {
  (void)state;
  ncc_dtype dt;
  ncc_node *n = mk_n(NCC_OP_CAST, 1);
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
  n = mk_n(NCC_OP_SPLIT, 3);
  assert_int_equal(ncc_attrs_split(n, &num), NCC_OK);
  assert_int_equal(num, 3); /* default: the output count */
  assert_int_equal(ncc_node_set_attr_int(g, n, "num_outputs", 2), NCC_OK);
  assert_int_equal(ncc_attrs_split(n, &num), NCC_ERR_INPUT);
  assert_true(says("num_outputs is 2 but the node has 3 outputs"));

  bool z = true;
  n = mk_n(NCC_OP_RESHAPE, 1);
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
  ncc_node *n = mk_n(NCC_OP_SHAPE, 1);
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
  n = mk_n(NCC_OP_PAD, 1);
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
  n = mk_n(NCC_OP_CONSTANTOFSHAPE, 1);
  assert_int_equal(ncc_attrs_value(n, &v), NCC_OK);
  assert_null(v); /* absent: f32 zero */
  n = mk_n(NCC_OP_CONSTANT, 1);
  assert_int_equal(ncc_attrs_value(n, &v), NCC_ERR_INPUT);
  assert_true(says("missing attribute 'value'"));
  assert_int_equal(ncc_node_set_attr_float(g, n, "value", 1.0f), NCC_OK);
  assert_int_equal(ncc_attrs_value(n, &v), NCC_ERR_INPUT);
  assert_true(says("attribute 'value' must be a tensor"));
}

static void schema_check(void **state) {
  (void)state;
  /* nothing, known names of the IR's kind, and annotations pass */
  ncc_node *n = mk_n(NCC_OP_RELU, 1);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "fuse.group", 1), NCC_OK);
  assert_int_equal(ncc_node_set_attr_ints(g, n, "mem.offset", (int64_t[]){0}, 1), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_float(g, n, "alpha", 0.1f), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("(Relu): Relu has no attribute 'alpha'"));

  n = mk_n(NCC_OP_LEAKYRELU, 1);
  assert_int_equal(ncc_node_set_attr_int(g, n, "alpha", 1), NCC_OK); /* `alpha=1` */
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_ints(g, n, "alpha", (int64_t[]){1}, 1), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("attribute 'alpha' must be a float"));

  /* Cast's `to` is the dtype's name in the IR, ONNX's type code only in a
   * model; `saturate` the importer drops */
  n = mk_n(NCC_OP_CAST, 1);
  assert_int_equal(ncc_node_set_attr_string(g, n, "to", "i64"), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(g, n, "to", 7), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("attribute 'to' must be a string"));
  n = mk_n(NCC_OP_CAST, 1);
  assert_int_equal(ncc_node_set_attr_int(g, n, "saturate", 1), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("Cast has no attribute 'saturate' in the IR"));

  n = mk_n(NCC_OP_BATCHNORM, 1);
  assert_int_equal(ncc_node_set_attr_string(g, n, "momentum", "fast"), NCC_OK);
  assert_int_equal(ncc_attrs_check_schema(n), NCC_ERR_INPUT);
  assert_true(says("attribute 'momentum' must be a float"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gemm_defaults_and_errors),
      cmocka_unit_test(activations),
      cmocka_unit_test(reduce_norm_pool),
      cmocka_unit_test(axis_and_perm),
      cmocka_unit_test(schema),
      cmocka_unit_test(eltwise_formulas),
      cmocka_unit_test(cast_split_reshape),
      cmocka_unit_test(shape_pad_value),
      cmocka_unit_test(schema_check),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
