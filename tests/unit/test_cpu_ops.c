/* tests/unit/test_cpu_ops.c — the cpu backend (LLVM JIT) against the
 * reference interpreter, op by op.
 *
 * Each case builds a one- or few-node graph with the IR API, runs it with
 * target `ref` and target `cpu` on the same random inputs, and compares
 * element by element with a per-op tolerance. Sizes are odd on purpose
 * (1, 3, 17, 1000, ...) so vector tails and broadcasting paths are hit; the
 * module API (kernel counts, symbolic batch, host fallback, errors) and the
 * thread pool are checked too. tests/cpu.cmake reruns this executable with
 * NCC_VECTOR_WIDTH=8/4/1 to cover the AVX2, SSE/NEON and scalar paths.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "codegen/kir.h"
#include "codegen/lower.h"
#include "runtime/threadpool.h"
#include "test_env.h"
#include "test_graph.h"

/* ---- comparing ---- */

static void compare(const ncc_tensor *a, const ncc_tensor *b, double atol,
                    double rtol, const char *what) {
  compare_outputs(a, b, atol, rtol, "cpu", what, -1);
}

/* Run G on `ins` with ref and cpu, compare every output; returns the
 * module's compiled-kernel count. */
static int check_graph(ncc_tensor *ins, int n_in, double atol, double rtol,
                       const char *what) {
  int n_out = ncc_graph_num_outputs(G);
  ncc_tensor ref[4], cpu[4];
  assert_true(n_out <= 4);
  ncc_status st = ncc_ref_run(G, ins, n_in, ref, n_out);
  if (st != NCC_OK) print_error("ref: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  ncc_module *m = NULL;
  st = test_module_compile(G, "cpu", &m);
  if (st != NCC_OK) print_error("compile: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  st = ncc_module_run(m, ins, n_in, cpu, n_out);
  if (st != NCC_OK) print_error("run: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  for (int o = 0; o < n_out; o++) compare(&ref[o], &cpu[o], atol, rtol, what);
  /* again into the same buffers (ncc_module_run_into), poisoned first so a
   * kernel that skips elements of a caller's buffer is caught */
  for (int o = 0; o < n_out; o++)
    if (ncc_tensor_nbytes(&cpu[o])) memset(cpu[o].data, 0x7f, ncc_tensor_nbytes(&cpu[o]));
  st = ncc_module_run_into(m, ins, n_in, cpu, n_out);
  if (st != NCC_OK) print_error("run_into: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  for (int o = 0; o < n_out; o++) {
    compare(&ref[o], &cpu[o], atol, rtol, what);
    ncc_tensor_free(&ref[o]);
    ncc_tensor_free(&cpu[o]);
  }
  int nk = ncc_module_num_kernels(m);
  assert_int_equal(nk + ncc_module_num_host_kernels(m), ncc_graph_num_nodes(G));
  ncc_module_free(m);
  return nk;
}

static const int64_t sizes1[] = {1, 3, 17, 1000};

/* ---- unary ---- */

typedef struct unary_case {
  ncc_op op;
  double lo, hi; /* input range */
  double atol, rtol;
  const char *attr; /* "alpha=0.3" style float attr, or approximate=tanh */
} unary_case;

static const unary_case unary_cases[] = {
    {NCC_OP_NEG, -3, 3, 0, 0, NULL},
    {NCC_OP_ABS, -3, 3, 0, 0, NULL},
    {NCC_OP_SQRT, 0, 9, 1e-6, 1e-6, NULL},
    {NCC_OP_RECIPROCAL, 0.5, 4, 1e-6, 1e-6, NULL},
    {NCC_OP_EXP, -8, 8, 1e-6, 2e-6, NULL},
    {NCC_OP_EXP, -100, 89, 1e-6, 2e-6, NULL}, /* under- and overflow */
    {NCC_OP_LOG, 0.01, 50, 1e-6, 2e-6, NULL},
    {NCC_OP_ERF, -3, 3, 1e-6, 2e-6, NULL},
    {NCC_OP_ERF, -0.1, 0.1, 1e-6, 2e-6, NULL},
    {NCC_OP_ERF, -12, 12, 1e-6, 2e-6, NULL},
    {NCC_OP_TANH, -5, 5, 1e-6, 2e-6, NULL},
    {NCC_OP_TANH, -0.7, 0.7, 1e-6, 2e-6, NULL}, /* the polynomial branch */
    {NCC_OP_TANH, -30, 30, 1e-6, 2e-6, NULL},
    {NCC_OP_SIGMOID, -20, 20, 1e-6, 2e-6, NULL},
    {NCC_OP_RELU, -3, 3, 0, 0, NULL},
    {NCC_OP_LEAKYRELU, -3, 3, 1e-7, 1e-6, "alpha"},
    {NCC_OP_HARDSIGMOID, -6, 6, 1e-6, 1e-6, "alpha"},
    {NCC_OP_HARDSWISH, -6, 6, 1e-6, 1e-6, NULL},
    {NCC_OP_GELU, -5, 5, 1e-6, 2e-6, NULL},
    {NCC_OP_GELU, -5, 5, 1e-6, 2e-6, "tanh"},
    {NCC_OP_SOFTPLUS, -30, 30, 1e-6, 2e-6, NULL},
    {NCC_OP_SOFTPLUS, -100, 100, 1e-6, 2e-6, NULL},
    {NCC_OP_IDENTITY, -3, 3, 0, 0, NULL},
};

static void test_unary(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof unary_cases / sizeof *unary_cases; c++) {
    const unary_case *uc = &unary_cases[c];
    for (size_t s = 0; s < 4; s++) {
      teardown(NULL);
      setup(NULL);
      int64_t d[1] = {sizes1[s]};
      ncc_value *x = input(NCC_DT_F32, 1, d);
      output(OP(uc->op, x));
      if (uc->attr && strcmp(uc->attr, "tanh") == 0)
        assert_int_equal(ncc_node_set_attr_string(G, last_node, "approximate", "tanh"),
                         NCC_OK);
      else if (uc->attr)
        assert_int_equal(ncc_node_set_attr_float(G, last_node, uc->attr, 0.3f), NCC_OK);
      infer();
      ncc_tensor t = rand_tensor(NCC_DT_F32, 1, d, uc->lo, uc->hi);
      char what[64];
      snprintf(what, sizeof what, "%s n=%lld", ncc_op_name(uc->op), (long long)d[0]);
      assert_int_equal(check_graph(&t, 1, uc->atol, uc->rtol, what), 1);
      ncc_tensor_free(&t);
    }
  }
}

/* ---- binary with broadcasting ---- */

typedef struct bshape {
  int ra;
  int64_t a[4];
  int rb;
  int64_t b[4];
} bshape;

static const bshape bshapes[] = {
    {1, {17}, 1, {17}},
    {1, {1000}, 0, {0}},
    {0, {0}, 0, {0}},
    {2, {3, 17}, 1, {17}},
    {2, {3, 1}, 2, {1, 17}},
    {4, {2, 3, 4, 5}, 4, {1, 3, 1, 1}},
    {3, {5, 1, 7}, 2, {3, 1}},
    {2, {1, 1000}, 2, {3, 1000}},
};

static void test_binary(void **state) {
  (void)state;
  static const ncc_op ops[] = {NCC_OP_ADD, NCC_OP_SUB, NCC_OP_MUL,
                               NCC_OP_DIV, NCC_OP_POW, NCC_OP_MAX,
                               NCC_OP_MIN, NCC_OP_EQUAL, NCC_OP_LESS,
                               NCC_OP_GREATER};
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
    for (size_t s = 0; s < sizeof bshapes / sizeof *bshapes; s++) {
      const bshape *bs = &bshapes[s];
      teardown(NULL);
      setup(NULL);
      ncc_value *a = input(NCC_DT_F32, bs->ra, bs->a);
      ncc_value *b = input(NCC_DT_F32, bs->rb, bs->b);
      output(OP(ops[o], a, b));
      infer();
      /* positive operands keep Pow real; few distinct values make Equal hit */
      bool cmp = ops[o] == NCC_OP_EQUAL;
      ncc_tensor t[2] = {rand_tensor(NCC_DT_F32, bs->ra, bs->a, 0.5, 2),
                         rand_tensor(NCC_DT_F32, bs->rb, bs->b, 0.5, 2)};
      if (cmp)
        for (int k = 0; k < 2; k++)
          for (int64_t i = 0; i < ncc_tensor_numel(&t[k]); i++)
            ((float *)t[k].data)[i] = (float)(int)(((float *)t[k].data)[i] * 2);
      char what[64];
      snprintf(what, sizeof what, "%s shape case %zu", ncc_op_name(ops[o]), s);
      assert_int_equal(check_graph(t, 2, 1e-6, 2e-6, what), 1);
      ncc_tensor_free(&t[0]);
      ncc_tensor_free(&t[1]);
    }
}

static void test_variadic_where_clip(void **state) {
  (void)state;
  int64_t d3[2] = {3, 17}, d1[1] = {17}, dc[2] = {3, 1};
  /* Max / Min of three broadcast operands */
  for (int mx = 0; mx < 2; mx++) {
    teardown(NULL);
    setup(NULL);
    ncc_value *a = input(NCC_DT_F32, 2, d3);
    ncc_value *b = input(NCC_DT_F32, 1, d1);
    ncc_value *c = input(NCC_DT_F32, 2, dc);
    output(OP(mx ? NCC_OP_MAX : NCC_OP_MIN, a, b, c));
    infer();
    ncc_tensor t[3] = {rand_tensor(NCC_DT_F32, 2, d3, -1, 1),
                       rand_tensor(NCC_DT_F32, 1, d1, -1, 1),
                       rand_tensor(NCC_DT_F32, 2, dc, -1, 1)};
    assert_int_equal(check_graph(t, 3, 0, 0, "Max/Min variadic"), 1);
    for (int k = 0; k < 3; k++) ncc_tensor_free(&t[k]);
  }
  /* Where(bool [3,17], [17], [3,1]) */
  teardown(NULL);
  setup(NULL);
  ncc_value *cond = input(NCC_DT_BOOL, 2, d3);
  ncc_value *x = input(NCC_DT_F32, 1, d1);
  ncc_value *y = input(NCC_DT_F32, 2, dc);
  output(OP(NCC_OP_WHERE, cond, x, y));
  infer();
  ncc_tensor t[3] = {rand_tensor(NCC_DT_BOOL, 2, d3, 0, 1),
                     rand_tensor(NCC_DT_F32, 1, d1, -1, 1),
                     rand_tensor(NCC_DT_F32, 2, dc, -1, 1)};
  assert_int_equal(check_graph(t, 3, 0, 0, "Where"), 1);
  for (int k = 0; k < 3; k++) ncc_tensor_free(&t[k]);
  /* Clip with both bounds, with only min, with neither */
  for (int variant = 0; variant < 3; variant++) {
    teardown(NULL);
    setup(NULL);
    ncc_value *in = input(NCC_DT_F32, 1, (int64_t[]){1000});
    ncc_value *lo = scalar_f32(-0.5f), *hi = scalar_f32(0.25f);
    if (variant == 0) output(OP(NCC_OP_CLIP, in, lo, hi));
    if (variant == 1) output(OP(NCC_OP_CLIP, in, lo));
    if (variant == 2) output(OP(NCC_OP_CLIP, in));
    infer();
    ncc_tensor ti = rand_tensor(NCC_DT_F32, 1, (int64_t[]){1000}, -1, 1);
    assert_int_equal(check_graph(&ti, 1, 0, 0, "Clip"), 1);
    ncc_tensor_free(&ti);
  }
}

/* ---- contractions ---- */

/* MatMul [.., M, K] x [.., K, N] with B an input or a (packed) constant. */
static void check_matmul(int ra, const int64_t *da, int rb, const int64_t *db,
                         bool b_const, const char *what) {
  teardown(NULL);
  setup(NULL);
  ncc_value *a = input(NCC_DT_F32, ra, da);
  ncc_value *b = b_const ? rand_const(rb, db) : input(NCC_DT_F32, rb, db);
  output(OP(NCC_OP_MATMUL, a, b));
  infer();
  ncc_tensor t[2] = {rand_tensor(NCC_DT_F32, ra, da, -1, 1),
                     rand_tensor(NCC_DT_F32, rb, db, -1, 1)};
  assert_int_equal(check_graph(t, b_const ? 1 : 2, 1e-5, 1e-4, what), 1);
  ncc_tensor_free(&t[0]);
  ncc_tensor_free(&t[1]);
}

static void test_matmul(void **state) {
  (void)state;
  static const int64_t mkn[][3] = {{1, 1, 1},   {3, 17, 5},  {7, 33, 40},
                                   {13, 64, 100}, {6, 8, 32}, {12, 3, 33},
                                   {64, 1000, 17}};
  for (size_t c = 0; c < sizeof mkn / sizeof *mkn; c++)
    for (int bc = 0; bc < 2; bc++) {
      int64_t da[2] = {mkn[c][0], mkn[c][1]}, db[2] = {mkn[c][1], mkn[c][2]};
      char what[64];
      snprintf(what, sizeof what, "MatMul %lldx%lldx%lld%s", (long long)da[0],
               (long long)da[1], (long long)db[1], bc ? " const" : "");
      check_matmul(2, da, 2, db, bc, what);
    }
  /* batch dims: equal on both sides, or folded into M with a 2-D B */
  check_matmul(4, (int64_t[]){2, 3, 7, 9}, 4, (int64_t[]){2, 3, 9, 5}, false,
               "MatMul batched");
  check_matmul(3, (int64_t[]){2, 5, 9}, 2, (int64_t[]){9, 33}, true,
               "MatMul folded const");
  check_matmul(3, (int64_t[]){2, 5, 9}, 2, (int64_t[]){9, 33}, false,
               "MatMul folded");
}

static void test_matmul_symbolic(void **state) {
  (void)state;
  int64_t da[3] = {sym("N"), 7, 16}, db[2] = {16, 20};
  ncc_value *a = input(NCC_DT_F32, 3, da);
  output(OP(NCC_OP_MATMUL, a, rand_const(2, db)));
  infer();
  ncc_module *m;
  assert_int_equal(test_module_compile(G, "cpu", &m), NCC_OK);
  assert_int_equal(ncc_module_num_kernels(m), 1);
  for (int64_t nb = 1; nb <= 5; nb += 2) {
    int64_t d[3] = {nb, 7, 16};
    ncc_tensor t = rand_tensor(NCC_DT_F32, 3, d, -1, 1), ref, cpu;
    assert_int_equal(ncc_ref_run(G, &t, 1, &ref, 1), NCC_OK);
    assert_int_equal(ncc_module_run(m, &t, 1, &cpu, 1), NCC_OK);
    compare(&ref, &cpu, 1e-5, 1e-4, "MatMul symbolic batch");
    ncc_tensor_free(&t);
    ncc_tensor_free(&ref);
    ncc_tensor_free(&cpu);
  }
  ncc_module_free(m);
}

static void test_gemm(void **state) {
  (void)state;
  static const struct {
    int64_t M, K, N;
    int ta, tb, rc;
    int64_t c0, c1;
    float alpha, beta;
    bool b_const;
  } cases[] = {
      {5, 7, 33, 0, 0, 1, 33, 0, 1.0f, 1.0f, true},   /* Linear: bias [N] */
      {5, 7, 33, 0, 1, 1, 33, 0, 1.0f, 1.0f, true},   /* transB weights */
      {17, 9, 20, 1, 0, 2, 17, 20, 0.5f, 2.0f, true}, /* transA, full C */
      {17, 9, 20, 1, 1, 2, 17, 1, 1.0f, -1.0f, true}, /* C [M,1] */
      {4, 3, 2, 0, 0, 0, 0, 0, 1.5f, 1.0f, false},    /* scalar C, B input */
      {8, 31, 45, 0, 0, -1, 0, 0, 1.0f, 1.0f, false}, /* no C */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    teardown(NULL);
    setup(NULL);
    int64_t da[2] = {cases[c].ta ? cases[c].K : cases[c].M,
                     cases[c].ta ? cases[c].M : cases[c].K};
    int64_t db[2] = {cases[c].tb ? cases[c].N : cases[c].K,
                     cases[c].tb ? cases[c].K : cases[c].N};
    int64_t dc[2] = {cases[c].c0, cases[c].c1};
    ncc_value *a = input(NCC_DT_F32, 2, da);
    ncc_value *b = cases[c].b_const ? rand_const(2, db) : input(NCC_DT_F32, 2, db);
    ncc_value *y;
    if (cases[c].rc >= 0)
      y = OP(NCC_OP_GEMM, a, b, rand_const(cases[c].rc, dc));
    else
      y = OP(NCC_OP_GEMM, a, b);
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "transA", cases[c].ta), NCC_OK);
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "transB", cases[c].tb), NCC_OK);
    assert_int_equal(ncc_node_set_attr_float(G, last_node, "alpha", cases[c].alpha), NCC_OK);
    assert_int_equal(ncc_node_set_attr_float(G, last_node, "beta", cases[c].beta), NCC_OK);
    output(y);
    infer();
    ncc_tensor t[2] = {rand_tensor(NCC_DT_F32, 2, da, -1, 1),
                       rand_tensor(NCC_DT_F32, 2, db, -1, 1)};
    char what[32];
    snprintf(what, sizeof what, "Gemm case %zu", c);
    assert_int_equal(check_graph(t, cases[c].b_const ? 1 : 2, 1e-5, 1e-4, what), 1);
    ncc_tensor_free(&t[0]);
    ncc_tensor_free(&t[1]);
  }
}

/* ---- row-wise kernels ---- */

/* One node over x; returns the number of compiled kernels. */
static int check_row_op(ncc_op op, int rank, const int64_t *d, int64_t axis,
                        int n_axes, const int64_t *axes, int keepdims,
                        const char *what) {
  teardown(NULL);
  setup(NULL);
  ncc_value *x = input(NCC_DT_F32, rank, d);
  if (op == NCC_OP_LAYERNORM) {
    int64_t a = axis < 0 ? axis + rank : axis;
    ncc_value *sc = rand_const(rank - (int)a, d + a);
    ncc_value *bi = rand_const(rank - (int)a, d + a);
    output(n_axes ? OP(op, x, sc) : OP(op, x, sc, bi)); /* n_axes: no bias */
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", axis), NCC_OK);
    assert_int_equal(ncc_node_set_attr_float(G, last_node, "epsilon", 1e-3f), NCC_OK);
  } else if (op == NCC_OP_SOFTMAX || op == NCC_OP_LOGSOFTMAX) {
    output(OP(op, x));
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", axis), NCC_OK);
  } else if (op == NCC_OP_GLOBALAVGPOOL || n_axes == 0) {
    output(OP(op, x));
  } else {
    output(OP(op, x, axes_const(n_axes, axes)));
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "keepdims", keepdims), NCC_OK);
  }
  infer();
  ncc_tensor t = rand_tensor(NCC_DT_F32, rank, d, -4, 4);
  int nk = check_graph(&t, 1, 1e-5, 1e-4, what);
  ncc_tensor_free(&t);
  return nk;
}

static void test_rows(void **state) {
  (void)state;
  static const int64_t shapes[][2] = {{3, 17}, {2, 1000}, {5, 1}, {1, 16}, {4, 33}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    assert_int_equal(check_row_op(NCC_OP_SOFTMAX, 2, shapes[s], -1, 0, NULL, 0, "Softmax"), 1);
    assert_int_equal(check_row_op(NCC_OP_LOGSOFTMAX, 2, shapes[s], 1, 0, NULL, 0, "LogSoftmax"), 1);
    assert_int_equal(check_row_op(NCC_OP_LAYERNORM, 2, shapes[s], -1, 0, NULL, 0, "LayerNorm"), 1);
  }
  int64_t d3[3] = {2, 3, 20};
  assert_int_equal(check_row_op(NCC_OP_LAYERNORM, 3, d3, 1, 1, NULL, 0, "LayerNorm axis 1"), 1);
  assert_int_equal(check_row_op(NCC_OP_SOFTMAX, 3, d3, 1, 0, NULL, 0, "Softmax axis 1"), 0);
  static const ncc_op red[] = {NCC_OP_REDUCESUM, NCC_OP_REDUCEMEAN, NCC_OP_REDUCEMAX};
  int64_t d[3] = {4, 5, 17}, last[1] = {-1}, two[2] = {2, 1}, first[1] = {0};
  for (int r = 0; r < 3; r++) {
    assert_int_equal(check_row_op(red[r], 3, d, 0, 1, last, 1, "Reduce last"), 1);
    assert_int_equal(check_row_op(red[r], 3, d, 0, 2, two, 0, "Reduce two"), 1);
    assert_int_equal(check_row_op(red[r], 3, d, 0, 0, NULL, 1, "Reduce all"), 1);
    assert_int_equal(check_row_op(red[r], 3, d, 0, 1, first, 1, "Reduce first"), 0);
  }
  int64_t d4[4] = {2, 3, 5, 7};
  assert_int_equal(check_row_op(NCC_OP_GLOBALAVGPOOL, 4, d4, 0, 0, NULL, 0, "GAP"), 1);
  /* BatchNormalization with positive variances */
  teardown(NULL);
  setup(NULL);
  ncc_value *x = input(NCC_DT_F32, 4, d4);
  int64_t dc[1] = {3};
  ncc_value *var = OP(NCC_OP_ABS, rand_const(1, dc));
  output(OP(NCC_OP_BATCHNORM, x, rand_const(1, dc), rand_const(1, dc), rand_const(1, dc), var));
  infer();
  ncc_tensor t = rand_tensor(NCC_DT_F32, 4, d4, -2, 2);
  assert_int_equal(check_graph(&t, 1, 1e-5, 1e-4, "BatchNorm"), 2);
  ncc_tensor_free(&t);
}

/* ---- convolution and pooling ---- */

typedef struct conv_case {
  int64_t x[4], w[4];
  int64_t stride, pad, dil, group;
  bool bias;
} conv_case;

static void test_conv(void **state) {
  (void)state;
  static const conv_case cases[] = {
      {{1, 3, 17, 19}, {8, 3, 3, 3}, 1, 1, 1, 1, true},    /* 3x3 same */
      {{2, 4, 9, 33}, {6, 4, 1, 1}, 1, 0, 1, 1, false},    /* 1x1, OC%4 != 0 */
      {{1, 3, 20, 21}, {4, 3, 3, 3}, 2, 1, 1, 1, true},    /* stride 2 */
      {{1, 8, 10, 10}, {8, 1, 3, 3}, 1, 1, 1, 8, true},    /* depthwise */
      {{1, 4, 12, 12}, {8, 2, 3, 3}, 1, 2, 2, 2, false},   /* dilated, grouped */
      {{1, 2, 7, 40}, {4, 2, 5, 5}, 1, 2, 1, 1, true},     /* wide row, 5x5 */
      {{2, 16, 7, 9}, {20, 16, 1, 1}, 1, 0, 1, 1, true},   /* 1x1 as GEMM */
      {{3, 5, 4, 4}, {7, 5, 1, 1}, 1, 0, 1, 1, false},     /* 1x1 GEMM, tails */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const conv_case *cc = &cases[c];
    teardown(NULL);
    setup(NULL);
    ncc_value *x = input(NCC_DT_F32, 4, cc->x);
    ncc_value *w = rand_const(4, cc->w);
    ncc_value *y = cc->bias ? OP(NCC_OP_CONV, x, w, rand_const(1, cc->w))
                            : OP(NCC_OP_CONV, x, w);
    int64_t s2[2] = {cc->stride, cc->stride}, d2[2] = {cc->dil, cc->dil};
    int64_t p4[4] = {cc->pad, cc->pad, cc->pad, cc->pad};
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "strides", s2, 2), NCC_OK);
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "dilations", d2, 2), NCC_OK);
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "pads", p4, 4), NCC_OK);
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "group", cc->group), NCC_OK);
    output(y);
    infer();
    ncc_tensor t = rand_tensor(NCC_DT_F32, 4, cc->x, -1, 1);
    char what[32];
    snprintf(what, sizeof what, "Conv case %zu", c);
    assert_int_equal(check_graph(&t, 1, 1e-5, 1e-4, what), 1);
    ncc_tensor_free(&t);
  }
}

static void test_pool(void **state) {
  (void)state;
  static const struct {
    ncc_op op;
    int64_t k, s, p;
    int ceil, count_pad;
  } cases[] = {
      {NCC_OP_MAXPOOL, 3, 2, 1, 0, 0}, {NCC_OP_MAXPOOL, 2, 2, 0, 1, 0},
      {NCC_OP_MAXPOOL, 3, 1, 1, 0, 0}, {NCC_OP_AVGPOOL, 3, 2, 1, 0, 0},
      {NCC_OP_AVGPOOL, 3, 2, 1, 0, 1}, {NCC_OP_AVGPOOL, 2, 2, 0, 0, 0},
  };
  int64_t dx[4] = {2, 3, 17, 35};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    teardown(NULL);
    setup(NULL);
    ncc_value *x = input(NCC_DT_F32, 4, dx);
    output(OP(cases[c].op, x));
    int64_t k2[2] = {cases[c].k, cases[c].k}, s2[2] = {cases[c].s, cases[c].s};
    int64_t p4[4] = {cases[c].p, cases[c].p, cases[c].p, cases[c].p};
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "kernel_shape", k2, 2), NCC_OK);
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "strides", s2, 2), NCC_OK);
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "pads", p4, 4), NCC_OK);
    if (cases[c].ceil)
      assert_int_equal(ncc_node_set_attr_int(G, last_node, "ceil_mode", 1), NCC_OK);
    if (cases[c].count_pad)
      assert_int_equal(ncc_node_set_attr_int(G, last_node, "count_include_pad", 1), NCC_OK);
    infer();
    ncc_tensor t = rand_tensor(NCC_DT_F32, 4, dx, -1, 1);
    char what[32];
    snprintf(what, sizeof what, "Pool case %zu", c);
    assert_int_equal(check_graph(&t, 1, 1e-6, 1e-5, what), 1);
    ncc_tensor_free(&t);
  }
}

static void test_transpose(void **state) {
  (void)state;
  static const struct {
    int r;
    int64_t d[4], perm[4];
  } cases[] = {
      {2, {17, 33}, {1, 0}},
      {3, {2, 3, 1000}, {1, 0, 2}},       /* last dim stays: contiguous */
      {4, {2, 3, 5, 7}, {0, 2, 1, 3}},    /* attention head split */
      {4, {2, 3, 5, 7}, {3, 1, 0, 2}},
      {1, {9}, {0}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    teardown(NULL);
    setup(NULL);
    ncc_value *x = input(NCC_DT_F32, cases[c].r, cases[c].d);
    output(OP(NCC_OP_TRANSPOSE, x));
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "perm", cases[c].perm, cases[c].r),
                     NCC_OK);
    infer();
    ncc_tensor t = rand_tensor(NCC_DT_F32, cases[c].r, cases[c].d, -1, 1);
    assert_int_equal(check_graph(&t, 1, 0, 0, "Transpose"), 1);
    ncc_tensor_free(&t);
  }
}

/* ---- the module around the kernels ---- */

/* A chain with intermediates, a host op in the middle, and a symbolic batch
 * served by one compiled module at several batch sizes. */
static void test_chain_symbolic_batch(void **state) {
  (void)state;
  int64_t N = sym("N");
  int64_t dx[2] = {N, 17}, db[1] = {17};
  ncc_value *x = input(NCC_DT_F32, 2, dx);
  ncc_value *b = input(NCC_DT_F32, 1, db);
  ncc_value *h = OP(NCC_OP_ADD, x, b);
  h = OP(NCC_OP_RELU, h);
  ncc_value *t = OP(NCC_OP_TRANSPOSE, h);
  ncc_value *u = OP(NCC_OP_MUL, t, t);
  ncc_value *sh = OP(NCC_OP_SHAPE, u); /* host: shape arithmetic */
  u = opv(NCC_OP_RESHAPE, 2, (ncc_value *[]){u, sh});
  output(u);
  output(h);
  infer();
  ncc_module *m;
  assert_int_equal(test_module_compile(G, "cpu", &m), NCC_OK);
  assert_int_equal(ncc_module_num_kernels(m), 4);
  assert_int_equal(ncc_module_num_host_kernels(m), 2);
  assert_string_equal(ncc_module_target(m), "cpu");
  /* repeated sizes run on the planned arena, new ones re-plan */
  static const int64_t batches[] = {1, 5, 5, 9, 5, 5};
  for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
    int64_t d[2] = {batches[bi], 17};
    ncc_tensor in[2] = {rand_tensor(NCC_DT_F32, 2, d, -1, 1),
                        rand_tensor(NCC_DT_F32, 1, db, -1, 1)};
    ncc_tensor ref[2], cpu[2];
    assert_int_equal(ncc_ref_run(G, in, 2, ref, 2), NCC_OK);
    assert_int_equal(ncc_module_run(m, in, 2, cpu, 2), NCC_OK);
    for (int o = 0; o < 2; o++) {
      compare(&ref[o], &cpu[o], 0, 0, "chain");
      ncc_tensor_free(&ref[o]);
      ncc_tensor_free(&cpu[o]);
    }
    ncc_tensor_free(&in[0]);
    ncc_tensor_free(&in[1]);
  }
  ncc_module_free(m);
}

/* Large enough that the kernel runs on every pool thread. */
static void test_parallel_large(void **state) {
  (void)state;
  int64_t d[2] = {301, 1999}, db[2] = {301, 1};
  ncc_value *a = input(NCC_DT_F32, 2, d);
  ncc_value *b = input(NCC_DT_F32, 2, db);
  output(OP(NCC_OP_SUB, OP(NCC_OP_TANH, a), b));
  infer();
  ncc_tensor t[2] = {rand_tensor(NCC_DT_F32, 2, d, -2, 2),
                     rand_tensor(NCC_DT_F32, 2, db, -2, 2)};
  assert_int_equal(check_graph(t, 2, 1e-6, 1e-6, "large"), 2);
  ncc_tensor_free(&t[0]);
  ncc_tensor_free(&t[1]);
}

static void test_module_errors(void **state) {
  (void)state;
  int64_t d[1] = {17};
  ncc_value *a = input(NCC_DT_F32, 1, d);
  output(OP(NCC_OP_EXP, a));
  infer();
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile(G, "tpu", &m), NCC_ERR_USAGE);
  assert_null(m);
  assert_int_equal(ncc_module_compile(G, "cuda", &m), NCC_ERR_UNSUPPORTED);
  char why[128];
  assert_int_equal(ncc_target_available("cuda", why, sizeof why), NCC_ERR_UNSUPPORTED);
  assert_true(strlen(why) > 0);
  assert_int_equal(ncc_target_available("cpu", why, sizeof why), NCC_OK);
  assert_int_equal(ncc_target_available("ref", why, sizeof why), NCC_OK);

  assert_int_equal(test_module_compile(G, "cpu", &m), NCC_OK);
  ncc_tensor out[1];
  int64_t wrong[1] = {16};
  ncc_tensor t = rand_tensor(NCC_DT_F32, 1, wrong, 0, 1);
  assert_int_equal(ncc_module_run(m, &t, 1, out, 1), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "dim 0"));
  assert_int_equal(ncc_module_run(m, &t, 0, out, 1), NCC_ERR_INPUT);
  ncc_tensor_free(&t);
  /* run_into: a buffer of the wrong shape or none is a usage error, on the
   * cpu executor and on the generic run-then-copy path (ref) alike */
  int64_t right[1] = {17};
  t = rand_tensor(NCC_DT_F32, 1, right, 0, 1);
  ncc_tensor small = rand_tensor(NCC_DT_F32, 1, wrong, 0, 1);
  assert_int_equal(ncc_module_run_into(m, &t, 1, &small, 1), NCC_ERR_USAGE);
  assert_non_null(strstr(ncc_error_message(), "does not match"));
  assert_int_equal(ncc_module_run_into(m, &t, 1, NULL, 1), NCC_ERR_USAGE);
  ncc_module_free(m);
  assert_int_equal(ncc_module_compile(G, "ref", &m), NCC_OK);
  assert_int_equal(ncc_module_run_into(m, &t, 1, &small, 1), NCC_ERR_USAGE);
  ncc_tensor fit = rand_tensor(NCC_DT_F32, 1, right, 0, 1), expect;
  assert_int_equal(ncc_module_run_into(m, &t, 1, &fit, 1), NCC_OK);
  assert_int_equal(ncc_ref_run(G, &t, 1, &expect, 1), NCC_OK);
  compare(&expect, &fit, 0, 0, "ref run_into");
  ncc_tensor_free(&expect);
  ncc_tensor_free(&fit);
  ncc_tensor_free(&small);
  ncc_tensor_free(&t);
  ncc_module_free(m);

  /* the ref target runs everything as host kernels */
  assert_int_equal(ncc_module_compile(G, "ref", &m), NCC_OK);
  assert_int_equal(ncc_module_num_kernels(m), 0);
  assert_int_equal(ncc_module_num_host_kernels(m), 1);
  ncc_module_free(m);
}

/* ---- allocation failure: every failing allocation is a clean NOMEM ---- */

static long alloc_countdown = -1; /* allocations left before failing; -1: never */

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  if (alloc_countdown == 0) return NULL;
  if (alloc_countdown > 0) alloc_countdown--;
  return realloc(ptr, nsize);
}

static void test_alloc_failure(void **state) {
  (void)state;
  int64_t d[2] = {3, 17}, dw[2] = {17, 5};
  ncc_value *a = input(NCC_DT_F32, 2, d);
  ncc_value *h = OP(NCC_OP_RELU, OP(NCC_OP_MATMUL, a, rand_const(2, dw)));
  output(OP(NCC_OP_SOFTMAX, OP(NCC_OP_TRANSPOSE, h)));
  infer();
  ncc_tensor t = rand_tensor(NCC_DT_F32, 2, d, -1, 1), out;
  /* the global pool exists before the allocator starts failing */
  ncc_threadpool_global();
  bool succeeded = false;
  for (long n = 0; n < 400 && !succeeded; n++) {
    ncc_set_allocator(failing_alloc, NULL);
    alloc_countdown = n;
    ncc_module *m = NULL;
    ncc_status st = test_module_compile(G, "cpu", &m);
    if (st == NCC_OK) {
      /* run twice: the second run uses the planned arena */
      st = ncc_module_run(m, &t, 1, &out, 1);
      if (st == NCC_OK) {
        ncc_tensor_free(&out);
        st = ncc_module_run(m, &t, 1, &out, 1);
        if (st == NCC_OK) {
          ncc_tensor_free(&out);
          succeeded = true;
        }
      }
    }
    ncc_module_free(m);
    alloc_countdown = -1;
    ncc_set_allocator(NULL, NULL);
    if (!succeeded) assert_int_equal(st, NCC_ERR_NOMEM);
  }
  assert_true(succeeded);
  ncc_tensor_free(&t);
}

/* ---- ahead-of-time output ---- */

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 22);
  *len = fread(buf, 1, (1 << 22) - 1, f);
  fclose(f);
  return buf;
}

static void test_emit(void **state) {
  (void)state;
  int64_t d[2] = {5, 33}, dw[2] = {33, 40};
  ncc_value *a = input(NCC_DT_F32, 2, d);
  output(OP(NCC_OP_TANH, OP(NCC_OP_MATMUL, a, rand_const(2, dw))));
  infer();
  char dir[] = "/tmp/ncc_emit_XXXXXX";
  assert_non_null(mkdtemp(dir));
  static const struct {
    const char *target, *kind, *expect;
  } cases[] = {
      {"cpu", "kir", "kernel k0_MatMul("},
      {"cpu", "llvm", "define void @k1_Tanh("},
      {"x86_64", "asm", "vfmadd231ps"},
      {"aarch64", "asm", "fmla"},
      {"aarch64", "obj", "\x7f" "ELF"},
  };
  char path[128];
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    snprintf(path, sizeof path, "%s/out.%zu", dir, c);
    ncc_status st = ncc_module_emit(G, cases[c].target, cases[c].kind, path);
    if (st != NCC_OK) print_error("emit: %s\n", ncc_error_message());
    assert_int_equal(st, NCC_OK);
    size_t len = 0;
    char *text = slurp(path, &len);
    assert_non_null(text);
    if (strcmp(cases[c].kind, "obj") == 0)
      assert_memory_equal(text, "\x7f" "ELF", 4);
    else
      assert_non_null(strstr(text, cases[c].expect));
    free(text);
    remove(path);
  }
  snprintf(path, sizeof path, "%s/x", dir);
  assert_int_equal(ncc_module_emit(G, "cpu", "ptx", path), NCC_ERR_UNSUPPORTED);
  assert_int_equal(ncc_module_emit(G, "cuda", "asm", path), NCC_ERR_UNSUPPORTED);
  assert_int_equal(ncc_module_emit(G, "cpu", "asm", "/nonexistent/dir/out.s"), NCC_ERR_INPUT);
  assert_int_equal(rmdir(dir), 0); /* nothing left behind */
}

/* ---- kernel IR printing and the pool itself ---- */

static void test_kir_print(void **state) {
  (void)state;
  int64_t d[2] = {3, 17}, db[1] = {17};
  ncc_value *a = input(NCC_DT_F32, 2, d);
  ncc_value *b = input(NCC_DT_F32, 1, db);
  output(OP(NCC_OP_ADD, a, b));
  infer();
  kir_kernel *k;
  ncc_lower_opts o = {.vector_width = 16};
  assert_int_equal(ncc_lower_node(G->nodes[0], "k0", &o, &k), NCC_OK);
  char buf[4096];
  FILE *f = fmemopen(buf, sizeof buf, "w");
  assert_non_null(f);
  kir_print(k, f);
  fclose(f);
  assert_non_null(strstr(buf, "kernel k0(in0: f32, in1: f32, out0: f32 out)"));
  assert_non_null(strstr(buf, "parallel"));
  assert_non_null(strstr(buf, "vector(16)"));
  assert_non_null(strstr(buf, "out0[add(i1, mul(i0, 17))] = add(in0[add(i1, mul(i0, 17))], in1[i1])"));
  kir_kernel_free(k);
}

static void count_task(void *ctx, int tid, int nth) {
  int *hits = ctx;
  assert_true(tid >= 0 && tid < nth);
  __atomic_fetch_add(&hits[tid], 1, __ATOMIC_RELAXED);
}

static void test_threadpool(void **state) {
  (void)state;
  ncc_threadpool *p;
  assert_int_equal(ncc_threadpool_create(3, &p), NCC_OK);
  assert_int_equal(ncc_threadpool_size(p), 3);
  int hits[3] = {0};
  for (int r = 0; r < 200; r++) ncc_threadpool_run(p, count_task, hits, 1 + r % 3);
  /* tid 0 every time; tid 1 when nth >= 2; tid 2 when nth == 3 */
  assert_int_equal(hits[0], 200);
  assert_int_equal(hits[1], 133);
  assert_int_equal(hits[2], 66);
  ncc_threadpool_free(p);
  ncc_threadpool_run(NULL, count_task, hits, 4); /* NULL pool: inline */
  assert_int_equal(hits[0], 201);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_variadic_where_clip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matmul, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matmul_symbolic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool, setup, teardown),
      cmocka_unit_test_setup_teardown(test_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_chain_symbolic_batch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_parallel_large, setup, teardown),
      cmocka_unit_test_setup_teardown(test_module_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kir_print, setup, teardown),
      cmocka_unit_test_setup_teardown(test_emit, setup, teardown),
      cmocka_unit_test(test_threadpool),
      cmocka_unit_test_setup_teardown(test_alloc_failure, setup, teardown),
  };
  /* Without the cpu target (built with -DNCC_LLVM=OFF) only the kernel IR
   * and the thread pool can be tested. */
  const struct CMUnitTest no_llvm[] = {
      cmocka_unit_test_setup_teardown(test_kir_print, setup, teardown),
      cmocka_unit_test(test_threadpool),
  };
  char why[256];
  if (ncc_target_available("cpu", why, sizeof why) != NCC_OK) {
    print_message("cpu target unavailable (%s): kernel IR and pool tests only\n", why);
    return cmocka_run_group_tests(no_llvm, NULL, NULL);
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
