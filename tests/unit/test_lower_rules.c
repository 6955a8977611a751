/* tests/unit/test_lower_rules.c — the legality rules the fusion pass and
 * the lowerings share: which nodes are row-wise and where their rows split
 * (passes/rows.h, used by passes/fusion.c and codegen/lower_reduce.c), and
 * what a MatMul or Gemm contracts (codegen/lower_contract.c, used by
 * codegen/lower_matmul.c and codegen/cstyle/gpu_lower.c). Expectations are
 * the ONNX operator definitions worked by hand on small shapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "codegen/lower.h"
#include "passes/rows.h"
#include "tests/unit/test_graph.h"

#define D(...) (int64_t[]){__VA_ARGS__}

/* The row split of node n, -1: not row-wise. */
static int split(const ncc_value *y) {
  int first = -7;
  return ncc_row_split(y->producer, &first) ? first : -1;
}

static ncc_value *reduce(ncc_op op, ncc_value *x, int n, const int64_t *axes) {
  return n < 0 ? OP(op, x) : OP(op, x, axes_const(n, axes));
}

static void test_row_split(void **state) {
  (void)state;
  ncc_value *x = input(NCC_DT_F32, 3, D(2, 3, 4));
  ncc_value *last = reduce(NCC_OP_REDUCESUM, x, 1, D(2));
  ncc_value *two = reduce(NCC_OP_REDUCEMEAN, x, 2, D(-1, 1));
  ncc_value *lead = reduce(NCC_OP_REDUCEMAX, x, 1, D(0));
  ncc_value *mid = reduce(NCC_OP_REDUCESUM, x, 1, D(1));
  ncc_value *all = reduce(NCC_OP_REDUCESUM, x, -1, NULL);
  ncc_value *noop = reduce(NCC_OP_REDUCESUM, x, -1, NULL);
  assert_int_equal(ncc_node_set_attr_int(G, last_node, "noop_with_empty_axes", 1), NCC_OK);
  ncc_value *sm = OP(NCC_OP_SOFTMAX, x);
  ncc_value *sm0 = OP(NCC_OP_LOGSOFTMAX, x);
  assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", 0), NCC_OK);
  ncc_value *ln = OP(NCC_OP_LAYERNORM, x, input(NCC_DT_F32, 2, D(3, 4)));
  assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", 1), NCC_OK);
  ncc_value *relu = OP(NCC_OP_RELU, x);
  ncc_value *e = input(NCC_DT_F32, 2, D(2, 0));
  ncc_value *empty = reduce(NCC_OP_REDUCESUM, e, 1, D(1));
  ncc_value *xi = input(NCC_DT_I64, 2, D(2, 3));
  ncc_value *ints = reduce(NCC_OP_REDUCESUM, xi, 1, D(1));
  ncc_value *outs[] = {last, two, lead, mid, all, noop, sm, sm0, ln, relu, empty, ints};
  for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) output(outs[i]);
  infer();
  assert_int_equal(split(last), 2);
  assert_int_equal(split(two), 1);  /* {-1, 1} = dims 1, 2 */
  assert_int_equal(split(lead), -1); /* not trailing */
  assert_int_equal(split(mid), -1);
  assert_int_equal(split(all), 0);  /* no axes: every dim */
  assert_int_equal(split(noop), -1);
  assert_int_equal(split(sm), 2);
  assert_int_equal(split(sm0), -1); /* axis 0 of 3 */
  assert_int_equal(split(ln), 1);
  assert_int_equal(split(relu), -1);
  assert_int_equal(split(empty), -1); /* an empty row */
  assert_int_equal(split(ints), -1);
}

typedef struct want {
  int64_t M, N, K;
  int n_batch, n_fold;
  bool a_batched, b_batched;
} want;

static void check_contraction(const ncc_value *y, const want *w) {
  ncc_contraction c;
  if (!w) {
    assert_false(ncc_lower_contraction(y->producer, &c));
    return;
  }
  assert_true(ncc_lower_contraction(y->producer, &c));
  assert_int_equal(c.M, w->M);
  assert_int_equal(c.N, w->N);
  assert_int_equal(c.K, w->K);
  assert_int_equal(c.n_batch, w->n_batch);
  assert_int_equal(c.n_fold, w->n_fold);
  assert_int_equal(c.a_batched, w->a_batched);
  assert_int_equal(c.b_batched, w->b_batched);
}

static void test_contraction(void **state) {
  (void)state;
  ncc_value *a2 = input(NCC_DT_F32, 2, D(5, 3)), *b2 = input(NCC_DT_F32, 2, D(3, 4));
  ncc_value *a3 = input(NCC_DT_F32, 3, D(2, 5, 3)), *b3 = input(NCC_DT_F32, 3, D(2, 3, 4));
  ncc_value *b31 = input(NCC_DT_F32, 3, D(1, 3, 4));
  ncc_value *plain = OP(NCC_OP_MATMUL, a2, b2);
  ncc_value *fold = OP(NCC_OP_MATMUL, a3, b2);
  ncc_value *shared_a = OP(NCC_OP_MATMUL, a2, b3);
  ncc_value *batched = OP(NCC_OP_MATMUL, a3, b3);
  ncc_value *bcast = OP(NCC_OP_MATMUL, a3, b31);
  ncc_value *at = input(NCC_DT_F32, 2, D(3, 5)), *bt = input(NCC_DT_F32, 2, D(4, 3));
  ncc_value *gemm = OP(NCC_OP_GEMM, at, bt, input(NCC_DT_F32, 2, D(5, 1)));
  assert_int_equal(ncc_node_set_attr_int(G, last_node, "transA", 1), NCC_OK);
  assert_int_equal(ncc_node_set_attr_int(G, last_node, "transB", 1), NCC_OK);
  assert_int_equal(ncc_node_set_attr_float(G, last_node, "alpha", 2.0f), NCC_OK);
  ncc_value *relu = OP(NCC_OP_RELU, a2);
  ncc_value *outs[] = {plain, fold, shared_a, batched, bcast, gemm, relu};
  for (size_t i = 0; i < sizeof outs / sizeof *outs; i++) output(outs[i]);
  infer();
  check_contraction(plain, &(want){5, 4, 3, 0, 0, false, false});
  check_contraction(fold, &(want){5, 4, 3, 0, 1, false, false});
  check_contraction(shared_a, &(want){5, 4, 3, 1, 0, false, true});
  check_contraction(batched, &(want){5, 4, 3, 1, 0, true, true});
  check_contraction(bcast, NULL); /* batch dims broadcast: not taken */
  check_contraction(relu, NULL);
  check_contraction(gemm, &(want){5, 4, 3, 0, 0, false, false});
  ncc_contraction c;
  assert_true(ncc_lower_contraction(gemm->producer, &c));
  assert_true(c.trans_a && c.trans_b);
  assert_true(c.alpha == 2.0f && c.beta == 1.0f);
  assert_ptr_equal(c.c, gemm->producer->in[2]);
  /* the CPU GEMM indexes A per batch: it leaves a shared A to others */
  assert_true(ncc_lower_matmul_supports(batched->producer));
  assert_false(ncc_lower_matmul_supports(shared_a->producer));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_row_split, setup, teardown),
      cmocka_unit_test_setup_teardown(test_contraction, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
