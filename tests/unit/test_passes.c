/* tests/unit/test_passes.c — the pass manager (levels, explicit lists,
 * disabling, unknown names, statistics) and the cleanup passes (const-fold,
 * dce, cse), checking that each rewrite keeps the graph's results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/shape.h"
#include "passes/pass.h"

static ncc_value *input(ncc_graph *g, const char *name, int rank,
                        const int64_t *d) {
  ncc_shape s = {rank, {0}};
  memcpy(s.d, d, sizeof(int64_t) * (size_t)rank);
  ncc_value *v = ncc_graph_add_value(g, name, NCC_VAL_INPUT, NCC_DT_F32, &s);
  assert_non_null(v);
  assert_int_equal(ncc_graph_add_input(g, v), NCC_OK);
  return v;
}

static ncc_value *node1(ncc_graph *g, ncc_op op, int n_in, ncc_value **in,
                        const char *out) {
  ncc_node *n = ncc_graph_add_node(g, op, out, n_in, in, 1);
  assert_non_null(n);
  ncc_value *v = ncc_graph_add_value(g, out, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  assert_non_null(v);
  ncc_node_set_output(n, 0, v);
  return v;
}

/* y = Relu(x) + Relu(x) + (c1 + c2), plus a dead Exp(x). */
static ncc_graph *sample(void) {
  ncc_graph *g = ncc_graph_new("s");
  int64_t d[2] = {2, 3};
  ncc_value *x = input(g, "x", 2, d);
  float c[3] = {1, 2, 3};
  ncc_shape cs = {1, {3}};
  ncc_value *c1 = ncc_graph_add_const(g, "c1", NCC_DT_F32, &cs, c);
  ncc_value *c2 = ncc_graph_add_const(g, "c2", NCC_DT_F32, &cs, c);
  ncc_value *r1 = node1(g, NCC_OP_RELU, 1, &x, "r1");
  ncc_value *r2 = node1(g, NCC_OP_RELU, 1, &x, "r2");
  node1(g, NCC_OP_EXP, 1, &x, "dead");
  ncc_value *a[2] = {r1, r2};
  ncc_value *s = node1(g, NCC_OP_ADD, 2, a, "s");
  ncc_value *b[2] = {c1, c2};
  ncc_value *cc = node1(g, NCC_OP_ADD, 2, b, "cc");
  ncc_value *e[2] = {s, cc};
  ncc_value *y = node1(g, NCC_OP_ADD, 2, e, "y");
  assert_int_equal(ncc_graph_add_output(g, y), NCC_OK);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  return g;
}

static void run_ref(const ncc_graph *g, float *out6) {
  ncc_tensor in, out;
  int64_t d[2] = {2, 3};
  assert_int_equal(ncc_tensor_alloc(&in, NCC_DT_F32, 2, d), NCC_OK);
  float *p = in.data;
  for (int i = 0; i < 6; i++) p[i] = (float)i - 2.5f;
  assert_int_equal(ncc_ref_run(g, &in, 1, &out, 1), NCC_OK);
  memcpy(out6, out.data, 6 * sizeof(float));
  ncc_tensor_free(&in);
  ncc_tensor_free(&out);
}

static void test_levels(void **st) {
  (void)st;
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(0, &p), NCC_OK);
  ncc_graph *g = sample();
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_int_equal(ncc_pipeline_num_ran(p), 0);
  assert_int_equal(ncc_graph_num_nodes(g), 6);
  ncc_pipeline_free(p);
  ncc_graph_free(g);

  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  g = sample();
  float before[6], after[6];
  run_ref(g, before);
  ncc_pipeline_set_verify_each(p, 1);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_true(ncc_pipeline_num_ran(p) >= 3);
  /* const-fold removed cc, dce removed dead, cse merged r2 into r1 */
  assert_int_equal(ncc_graph_num_nodes(g), 3);
  run_ref(g, after);
  assert_memory_equal(before, after, sizeof before);
  assert_string_equal(ncc_graph_output_name(g, 0), "y");
  ncc_pipeline_free(p);
  ncc_graph_free(g);
  assert_int_equal(ncc_pipeline_new(4, &p), NCC_ERR_USAGE);
}

static void test_explicit_and_disable(void **st) {
  (void)st;
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_set_passes(p, "dce"), NCC_OK);
  ncc_graph *g = sample();
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_int_equal(ncc_pipeline_num_ran(p), 1);
  assert_string_equal(ncc_pipeline_ran_name(p, 0), "dce");
  assert_int_equal(ncc_graph_num_nodes(g), 5); /* only the dead Exp went */
  ncc_graph_free(g);
  ncc_pipeline_free(p);

  assert_int_equal(ncc_pipeline_new(2, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_disable(p, "cse"), NCC_OK);
  g = sample();
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  for (int i = 0; i < ncc_pipeline_num_ran(p); i++)
    assert_string_not_equal(ncc_pipeline_ran_name(p, i), "cse");
  assert_int_equal(ncc_graph_num_nodes(g), 4); /* both Relus stay */
  ncc_graph_free(g);

  assert_int_equal(ncc_pipeline_set_passes(p, "dce,nosuch"), NCC_ERR_USAGE);
  assert_non_null(strstr(ncc_error_message(), "unknown pass 'nosuch'"));
  assert_int_equal(ncc_pipeline_disable(p, "fusion-typo"), NCC_ERR_USAGE);
  assert_int_equal(ncc_pipeline_print_after(p, "zzz", stderr), NCC_ERR_USAGE);
  ncc_pipeline_free(p);
}

static void test_registry(void **st) {
  (void)st;
  assert_true(ncc_pass_count() >= 3);
  for (int i = 0; i < ncc_pass_count(); i++) {
    const char *name, *needs, *desc;
    int level;
    assert_int_equal(ncc_pass_info(i, &name, &level, &needs, &desc), NCC_OK);
    assert_true(level >= 0 && level <= 3);
    assert_true(strlen(desc) > 10);
  }
  assert_int_equal(ncc_pass_info(-1, NULL, NULL, NULL, NULL), NCC_ERR_USAGE);
}

static void test_shape_subgraph_folds(void **st) {
  (void)st;
  /* Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) with x static */
  ncc_graph *g = ncc_graph_new("f");
  int64_t d[3] = {4, 2, 3};
  ncc_value *x = input(g, "x", 3, d);
  ncc_value *sh = node1(g, NCC_OP_SHAPE, 1, &x, "sh");
  int64_t zero = 0, minus1 = -1;
  ncc_shape sc = {0, {0}}, s1 = {1, {1}};
  ncc_value *i0 = ncc_graph_add_const(g, "i0", NCC_DT_I64, &sc, &zero);
  ncc_value *ax = ncc_graph_add_const(g, "ax", NCC_DT_I64, &s1, &zero);
  ncc_value *m1 = ncc_graph_add_const(g, "m1", NCC_DT_I64, &s1, &minus1);
  ncc_value *ga[2] = {sh, i0};
  ncc_value *gd = node1(g, NCC_OP_GATHER, 2, ga, "gd");
  ncc_value *ua[2] = {gd, ax};
  ncc_value *un = node1(g, NCC_OP_UNSQUEEZE, 2, ua, "un");
  ncc_value *ca[2] = {un, m1};
  ncc_node *cat = ncc_graph_add_node(g, NCC_OP_CONCAT, "cat", 2, ca, 1);
  ncc_value *cv = ncc_graph_add_value(g, "cv", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  ncc_node_set_output(cat, 0, cv);
  assert_int_equal(ncc_node_set_attr_int(g, cat, "axis", 0), NCC_OK);
  ncc_value *ra[2] = {x, cv};
  ncc_value *y = node1(g, NCC_OP_RESHAPE, 2, ra, "y");
  assert_int_equal(ncc_graph_add_output(g, y), NCC_OK);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);

  ncc_graph_stats s0, s1st;
  ncc_graph_compute_stats(g, 1, &s0);
  ncc_pipeline *p;
  assert_int_equal(ncc_pipeline_new(1, &p), NCC_OK);
  assert_int_equal(ncc_pipeline_run(p, g), NCC_OK);
  assert_int_equal(ncc_graph_num_nodes(g), 1); /* just the Reshape */
  assert_int_equal(g->nodes[0]->op, NCC_OP_RESHAPE);
  assert_int_equal(g->nodes[0]->in[1]->kind, NCC_VAL_CONST);
  const int64_t *shape = g->nodes[0]->in[1]->data;
  assert_int_equal(shape[0], 4);
  assert_int_equal(shape[1], -1);
  ncc_graph_compute_stats(g, 1, &s1st);
  assert_true(s1st.kernels < s0.kernels);
  ncc_pipeline_free(p);
  ncc_graph_free(g);
}

static void test_stats(void **st) {
  (void)st;
  ncc_graph *g = ncc_graph_new("m");
  int64_t da[2] = {8, 16}, db[2] = {16, 4};
  ncc_value *a = input(g, "a", 2, da);
  ncc_value *b = input(g, "b", 2, db);
  ncc_value *ab[2] = {a, b};
  ncc_value *y = node1(g, NCC_OP_MATMUL, 2, ab, "y");
  assert_int_equal(ncc_graph_add_output(g, y), NCC_OK);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  ncc_graph_stats s;
  ncc_graph_compute_stats(g, 1, &s);
  assert_int_equal(s.kernels, 1);
  assert_true(s.flops == 2.0 * 8 * 4 * 16);
  assert_true(s.bytes_moved == 4.0 * (8 * 16 + 16 * 4 + 8 * 4));
  assert_true(s.peak_act_bytes == 4.0 * (8 * 16 + 16 * 4 + 8 * 4));
  ncc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_explicit_and_disable),
      cmocka_unit_test(test_registry),
      cmocka_unit_test(test_shape_subgraph_folds),
      cmocka_unit_test(test_stats),
  };
  return cmocka_run_group_tests_name("passes", tests, NULL, NULL);
}
