/* tests/gpu/test_gpu_ops.c — the GPU targets against the reference
 * interpreter, op by op (the cases of tests/unit/test_cpu_ops.c, grouped so
 * that PoCL compiles few programs: several ops per graph, and symbolic
 * sizes so that one module serves every size).
 *
 * NCC_GPU_TEST_MODE=run (default): compile each graph for NCC_GPU_TARGET
 *   (default opencl), run it and ref on the same random inputs, compare
 *   every output with a per-op tolerance; check that the kernels the
 *   backend claims are compiled (not run on the host).
 * NCC_GPU_TEST_MODE=ptx: emit each graph as CUDA C and PTX (NVRTC, no GPU
 *   needed) and assemble the PTX with $PTXAS -arch=$NCC_PTX_ARCH
 *   (default /usr/local/cuda/bin/ptxas, sm_90).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/unit/test_graph.h"

static const char *target = "opencl";
static bool ptx_mode;
static char tmpdir[] = "/tmp/ncc_gpu_ops_XXXXXX";
static int ptx_count;

static void reset(void) {
  teardown(NULL);
  setup(NULL);
}

/* ---- comparing ---- */

static void compare(const ncc_tensor *a, const ncc_tensor *b, double atol, double rtol,
                    const char *what, int out) {
  compare_outputs(a, b, atol, rtol, target, what, out);
}

/* ptx mode: CUDA C and PTX of G, PTX assembled by ptxas. */
static void check_ptx(const char *what) {
  char cu[128], ptx[128], cmd[512];
  snprintf(cu, sizeof cu, "%s/g%d.cu", tmpdir, ptx_count);
  snprintf(ptx, sizeof ptx, "%s/g%d.ptx", tmpdir, ptx_count++);
  ncc_status st = ncc_module_emit(G, "cuda", "cuda", cu);
  if (st == NCC_OK) st = ncc_module_emit(G, "cuda", "ptx", ptx);
  if (st != NCC_OK) fail_msg("%s: emit: %s", what, ncc_error_message());
  const char *ptxas = getenv("PTXAS") ? getenv("PTXAS") : "/usr/local/cuda/bin/ptxas";
  const char *arch = getenv("NCC_PTX_ARCH") ? getenv("NCC_PTX_ARCH") : "sm_90";
  snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o %s/out.cubin", ptxas, arch, ptx, tmpdir);
  if (system(cmd) != 0) fail_msg("%s: ptxas rejected %s", what, ptx);
  remove(cu);
  remove(ptx);
  char cubin[160];
  snprintf(cubin, sizeof cubin, "%s/out.cubin", tmpdir);
  remove(cubin);
}

/* Compile G for the target once; for each input set, run ref and target
 * and compare every output. Returns the compiled-kernel count (-1 in ptx
 * mode). */
static int check_sets(ncc_tensor *const *sets, int n_sets, int n_in, double atol, double rtol,
                      const char *what) {
  if (ptx_mode) {
    check_ptx(what);
    return -1;
  }
  int n_out = ncc_graph_num_outputs(G);
  ncc_tensor ref[32], dev[32];
  assert_true(n_out <= 32);
  ncc_module *m = NULL;
  ncc_status st = ncc_module_compile(G, target, &m);
  if (st != NCC_OK) fail_msg("%s: compile: %s", what, ncc_error_message());
  for (int s = 0; s < n_sets; s++) {
    st = ncc_ref_run(G, sets[s], n_in, ref, n_out);
    if (st != NCC_OK) fail_msg("%s: ref: %s", what, ncc_error_message());
    st = ncc_module_run(m, sets[s], n_in, dev, n_out);
    if (st != NCC_OK) fail_msg("%s: run: %s", what, ncc_error_message());
    for (int o = 0; o < n_out; o++) {
      compare(&ref[o], &dev[o], atol, rtol, what, o);
      ncc_tensor_free(&ref[o]);
      ncc_tensor_free(&dev[o]);
    }
  }
  int nk = ncc_module_num_kernels(m);
  assert_int_equal(nk + ncc_module_num_host_kernels(m), ncc_graph_num_nodes(G));
  ncc_module_free(m);
  return nk;
}

static int check_graph(ncc_tensor *ins, int n_in, double atol, double rtol, const char *what) {
  ncc_tensor *sets[1] = {ins};
  return check_sets(sets, 1, n_in, atol, rtol, what);
}

static void expect_kernels(int got, int want) {
  if (got >= 0) assert_int_equal(got, want);
}

/* ---- elementwise ---- */

typedef struct unary_case {
  ncc_op op;
  double lo, hi, atol, rtol;
  const char *attr;
} unary_case;

static const unary_case unary_cases[] = {
    {NCC_OP_NEG, -3, 3, 0, 0, NULL},         {NCC_OP_ABS, -3, 3, 0, 0, NULL},
    {NCC_OP_SQRT, 0, 9, 1e-6, 1e-6, NULL},   {NCC_OP_RECIPROCAL, 0.5, 4, 1e-6, 1e-6, NULL},
    {NCC_OP_EXP, -100, 89, 1e-6, 2e-6, NULL}, {NCC_OP_LOG, 0.01, 50, 1e-6, 2e-6, NULL},
    {NCC_OP_ERF, -3, 3, 1e-6, 2e-6, NULL},   {NCC_OP_TANH, -5, 5, 1e-6, 2e-6, NULL},
    {NCC_OP_SIGMOID, -20, 20, 1e-6, 2e-6, NULL}, {NCC_OP_RELU, -3, 3, 0, 0, NULL},
    {NCC_OP_LEAKYRELU, -3, 3, 1e-7, 1e-6, "alpha"},
    {NCC_OP_HARDSIGMOID, -6, 6, 1e-6, 1e-6, "alpha"},
    {NCC_OP_HARDSWISH, -6, 6, 1e-6, 1e-6, NULL}, {NCC_OP_GELU, -5, 5, 1e-6, 2e-6, NULL},
    {NCC_OP_GELU, -5, 5, 1e-6, 2e-6, "tanh"}, {NCC_OP_SOFTPLUS, -30, 30, 1e-6, 2e-6, NULL},
    {NCC_OP_IDENTITY, -3, 3, 0, 0, NULL},
};
#define N_UNARY (sizeof unary_cases / sizeof *unary_cases)

/* All unary ops of one input range in one graph over a symbolic length,
 * run at lengths 1, 3, 17 and 1000. */
static void test_unary(void **state) {
  (void)state;
  for (size_t c = 0; c < N_UNARY; c++) {
    const unary_case *uc = &unary_cases[c];
    reset();
    int64_t d[1] = {sym("L")};
    ncc_value *x = input(NCC_DT_F32, 1, d);
    output(OP(uc->op, x));
    if (uc->attr && strcmp(uc->attr, "tanh") == 0)
      assert_int_equal(ncc_node_set_attr_string(G, last_node, "approximate", "tanh"), NCC_OK);
    else if (uc->attr)
      assert_int_equal(ncc_node_set_attr_float(G, last_node, uc->attr, 0.3f), NCC_OK);
    infer();
    static const int64_t lens[] = {1, 3, 17, 1000};
    ncc_tensor t[4], *sets[4];
    for (int s = 0; s < 4; s++) {
      t[s] = rand_tensor(NCC_DT_F32, 1, &lens[s], uc->lo, uc->hi);
      sets[s] = &t[s];
    }
    char what[64];
    snprintf(what, sizeof what, "%s", ncc_op_name(uc->op));
    /* Identity aliases its input's device buffer: no kernel */
    expect_kernels(check_sets(sets, 4, 1, uc->atol, uc->rtol, what),
                   uc->op == NCC_OP_IDENTITY ? 0 : 1);
    for (int s = 0; s < 4; s++) ncc_tensor_free(&t[s]);
  }
}

typedef struct bshape {
  int ra;
  int64_t a[4];
  int rb;
  int64_t b[4];
} bshape;

static const bshape bshapes[] = {
    {1, {17}, 1, {17}},
    {1, {1000}, 0, {0}},
    {2, {3, 1}, 2, {1, 17}},
    {4, {2, 3, 4, 5}, 4, {1, 3, 1, 1}},
    {3, {5, 1, 7}, 2, {3, 1}},
};

/* The ten binary ops on one pair of broadcast shapes, one graph. */
static void test_binary(void **state) {
  (void)state;
  static const ncc_op ops[] = {NCC_OP_ADD, NCC_OP_SUB, NCC_OP_MUL, NCC_OP_DIV,
                               NCC_OP_POW, NCC_OP_MAX, NCC_OP_MIN, NCC_OP_EQUAL,
                               NCC_OP_LESS, NCC_OP_GREATER};
  for (size_t s = 0; s < sizeof bshapes / sizeof *bshapes; s++) {
    const bshape *bs = &bshapes[s];
    reset();
    ncc_value *a = input(NCC_DT_F32, bs->ra, bs->a);
    ncc_value *b = input(NCC_DT_F32, bs->rb, bs->b);
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) output(OP(ops[o], a, b));
    infer();
    ncc_tensor t[2] = {rand_tensor(NCC_DT_F32, bs->ra, bs->a, 0.5, 2),
                       rand_tensor(NCC_DT_F32, bs->rb, bs->b, 0.5, 2)};
    /* few distinct values, so that Equal is sometimes true */
    for (int k = 0; k < 2; k++)
      for (int64_t i = 0; i < ncc_tensor_numel(&t[k]); i++)
        ((float *)t[k].data)[i] = (float)(int)(((float *)t[k].data)[i] * 2) * 0.5f + 0.5f;
    char what[64];
    snprintf(what, sizeof what, "binary shape case %zu", s);
    expect_kernels(check_graph(t, 2, 1e-6, 2e-6, what), 10);
    ncc_tensor_free(&t[0]);
    ncc_tensor_free(&t[1]);
  }
}

static void test_where_clip_variadic(void **state) {
  (void)state;
  int64_t d3[2] = {3, 17}, d1[1] = {17}, dc[2] = {3, 1};
  ncc_value *cond = input(NCC_DT_BOOL, 2, d3);
  ncc_value *x = input(NCC_DT_F32, 1, d1);
  ncc_value *y = input(NCC_DT_F32, 2, dc);
  output(OP(NCC_OP_WHERE, cond, x, y));
  output(OP(NCC_OP_MAX, OP(NCC_OP_NEG, x), y, x));
  output(OP(NCC_OP_MIN, y, x));
  output(OP(NCC_OP_CLIP, x, scalar_f32(-0.5f), scalar_f32(0.25f)));
  output(OP(NCC_OP_CLIP, x, scalar_f32(-0.5f)));
  infer();
  ncc_tensor t[3] = {rand_tensor(NCC_DT_BOOL, 2, d3, 0, 1), rand_tensor(NCC_DT_F32, 1, d1, -1, 1),
                     rand_tensor(NCC_DT_F32, 2, dc, -1, 1)};
  expect_kernels(check_graph(t, 3, 0, 0, "Where/Max/Min/Clip"), 6);
  for (int k = 0; k < 3; k++) ncc_tensor_free(&t[k]);
}

/* ---- contractions ---- */

static void test_matmul(void **state) {
  (void)state;
  static const int64_t mkn[][3] = {{1, 1, 1},     {3, 17, 5},  {7, 33, 40}, {13, 64, 100},
                                   {64, 100, 17}, {70, 9, 130}};
  for (size_t c = 0; c < sizeof mkn / sizeof *mkn; c++) {
    reset();
    int64_t da[2] = {mkn[c][0], mkn[c][1]}, db[2] = {mkn[c][1], mkn[c][2]};
    ncc_value *a = input(NCC_DT_F32, 2, da);
    ncc_value *b = input(NCC_DT_F32, 2, db);
    output(OP(NCC_OP_MATMUL, a, b));
    output(OP(NCC_OP_MATMUL, a, rand_const(2, db)));
    infer();
    ncc_tensor t[2] = {rand_tensor(NCC_DT_F32, 2, da, -1, 1), rand_tensor(NCC_DT_F32, 2, db, -1, 1)};
    char what[64];
    snprintf(what, sizeof what, "MatMul %lldx%lldx%lld", (long long)da[0], (long long)da[1],
             (long long)db[1]);
    expect_kernels(check_graph(t, 2, 1e-5, 1e-4, what), 2);
    ncc_tensor_free(&t[0]);
    ncc_tensor_free(&t[1]);
  }
  /* batch dims: equal on both sides, folded into M, A shared by B's batch;
   * a symbolic batch */
  reset();
  int64_t a4[4] = {2, 3, 7, 9}, b4[4] = {2, 3, 9, 5}, a3[3] = {sym("N"), 5, 9};
  int64_t b2[2] = {9, 33}, a2[2] = {7, 9};
  ncc_value *A4 = input(NCC_DT_F32, 4, a4), *B4 = input(NCC_DT_F32, 4, b4);
  ncc_value *A3 = input(NCC_DT_F32, 3, a3), *A2 = input(NCC_DT_F32, 2, a2);
  output(OP(NCC_OP_MATMUL, A4, B4));
  output(OP(NCC_OP_MATMUL, A3, rand_const(2, b2)));
  output(OP(NCC_OP_MATMUL, A2, B4));
  infer();
  ncc_tensor in1[4], in2[4];
  int64_t a3c[3] = {2, 5, 9}, a3d[3] = {3, 5, 9};
  in1[0] = rand_tensor(NCC_DT_F32, 4, a4, -1, 1);
  in1[1] = rand_tensor(NCC_DT_F32, 4, b4, -1, 1);
  in1[2] = rand_tensor(NCC_DT_F32, 3, a3c, -1, 1);
  in1[3] = rand_tensor(NCC_DT_F32, 2, a2, -1, 1);
  in2[0] = rand_tensor(NCC_DT_F32, 4, a4, -1, 1);
  in2[1] = rand_tensor(NCC_DT_F32, 4, b4, -1, 1);
  in2[2] = rand_tensor(NCC_DT_F32, 3, a3d, -1, 1);
  in2[3] = rand_tensor(NCC_DT_F32, 2, a2, -1, 1);
  ncc_tensor *sets[2] = {in1, in2};
  expect_kernels(check_sets(sets, 2, 4, 1e-5, 1e-4, "MatMul batched"), 3);
  for (int k = 0; k < 4; k++) {
    ncc_tensor_free(&in1[k]);
    ncc_tensor_free(&in2[k]);
  }
}

static void test_gemm(void **state) {
  (void)state;
  static const struct {
    int64_t M, K, N;
    int ta, tb, rc;
    int64_t c0, c1;
    float alpha, beta;
  } cases[] = {
      {5, 7, 33, 0, 0, 1, 33, 0, 1.0f, 1.0f},    {5, 7, 33, 0, 1, 1, 33, 0, 1.0f, 1.0f},
      {17, 9, 20, 1, 0, 2, 17, 20, 0.5f, 2.0f},  {17, 9, 20, 1, 1, 2, 17, 1, 1.0f, -1.0f},
      {4, 3, 2, 0, 0, 0, 0, 0, 1.5f, 1.0f},      {8, 31, 45, 0, 0, -1, 0, 0, 1.0f, 1.0f},
      {130, 40, 70, 0, 1, 2, 1, 70, 1.0f, 0.5f},
  };
  reset();
  ncc_tensor t[16];
  int n_in = 0;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int64_t da[2] = {cases[c].ta ? cases[c].K : cases[c].M, cases[c].ta ? cases[c].M : cases[c].K};
    int64_t db[2] = {cases[c].tb ? cases[c].N : cases[c].K, cases[c].tb ? cases[c].K : cases[c].N};
    int64_t dc[2] = {cases[c].c0, cases[c].c1};
    ncc_value *a = input(NCC_DT_F32, 2, da);
    t[n_in++] = rand_tensor(NCC_DT_F32, 2, da, -1, 1);
    ncc_value *b = rand_const(2, db);
    if (c % 2) { /* B an input too */
      b = input(NCC_DT_F32, 2, db);
      t[n_in++] = rand_tensor(NCC_DT_F32, 2, db, -1, 1);
    }
    ncc_value *y = cases[c].rc >= 0 ? OP(NCC_OP_GEMM, a, b, rand_const(cases[c].rc, dc))
                                    : OP(NCC_OP_GEMM, a, b);
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "transA", cases[c].ta), NCC_OK);
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "transB", cases[c].tb), NCC_OK);
    assert_int_equal(ncc_node_set_attr_float(G, last_node, "alpha", cases[c].alpha), NCC_OK);
    assert_int_equal(ncc_node_set_attr_float(G, last_node, "beta", cases[c].beta), NCC_OK);
    output(y);
  }
  infer();
  expect_kernels(check_graph(t, n_in, 1e-5, 1e-4, "Gemm"), 7);
  for (int k = 0; k < n_in; k++) ncc_tensor_free(&t[k]);
}

/* ---- rows: reductions, softmax, norms ---- */

static void test_rows(void **state) {
  (void)state;
  static const int64_t shapes[][2] = {{3, 17}, {2, 1000}, {5, 1}, {4, 33}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    reset();
    ncc_value *x = input(NCC_DT_F32, 2, shapes[s]);
    output(OP(NCC_OP_SOFTMAX, x));
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", -1), NCC_OK);
    output(OP(NCC_OP_LOGSOFTMAX, x));
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", 1), NCC_OK);
    output(OP(NCC_OP_LAYERNORM, x, rand_const(1, shapes[s] + 1), rand_const(1, shapes[s] + 1)));
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", -1), NCC_OK);
    assert_int_equal(ncc_node_set_attr_float(G, last_node, "epsilon", 1e-3f), NCC_OK);
    static const int64_t last[1] = {-1};
    output(OP(NCC_OP_REDUCESUM, x, axes_const(1, last)));
    output(OP(NCC_OP_REDUCEMEAN, x, axes_const(1, last)));
    output(OP(NCC_OP_REDUCEMAX, x));
    infer();
    ncc_tensor t = rand_tensor(NCC_DT_F32, 2, shapes[s], -4, 4);
    char what[64];
    snprintf(what, sizeof what, "rows %lldx%lld", (long long)shapes[s][0],
             (long long)shapes[s][1]);
    expect_kernels(check_graph(&t, 1, 1e-5, 1e-4, what), 6);
    ncc_tensor_free(&t);
  }
  /* 3-D: LayerNorm over two axes, Softmax not over the last axis (host),
   * GAP and BatchNorm over NCHW */
  reset();
  int64_t d3[3] = {2, 3, 20}, d4[4] = {2, 3, 5, 7}, dc[1] = {3};
  ncc_value *x = input(NCC_DT_F32, 3, d3);
  output(OP(NCC_OP_LAYERNORM, x, rand_const(2, d3 + 1)));
  assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", 1), NCC_OK);
  output(OP(NCC_OP_SOFTMAX, x));
  assert_int_equal(ncc_node_set_attr_int(G, last_node, "axis", 1), NCC_OK);
  ncc_value *x4 = input(NCC_DT_F32, 4, d4);
  output(OP(NCC_OP_GLOBALAVGPOOL, x4));
  ncc_value *var = OP(NCC_OP_ABS, rand_const(1, dc));
  output(OP(NCC_OP_BATCHNORM, x4, rand_const(1, dc), rand_const(1, dc), rand_const(1, dc), var));
  infer();
  ncc_tensor t[2] = {rand_tensor(NCC_DT_F32, 3, d3, -2, 2), rand_tensor(NCC_DT_F32, 4, d4, -2, 2)};
  /* LayerNorm, GAP, Abs, BatchNorm compiled; Softmax(axis 1) on the host */
  expect_kernels(check_graph(t, 2, 1e-5, 1e-4, "rows 3-D/4-D"), 4);
  ncc_tensor_free(&t[0]);
  ncc_tensor_free(&t[1]);
}

/* ---- convolution and pooling ---- */

static void test_conv(void **state) {
  (void)state;
  static const struct {
    int64_t x[4], w[4];
    int64_t stride, pad, dil, group;
    bool bias;
  } cases[] = {
      {{1, 3, 17, 19}, {8, 3, 3, 3}, 1, 1, 1, 1, true},  /* 3x3 same */
      {{2, 4, 9, 33}, {6, 4, 1, 1}, 1, 0, 1, 1, false},  /* 1x1 */
      {{1, 3, 20, 21}, {4, 3, 3, 3}, 2, 1, 1, 1, true},  /* stride 2 */
      {{1, 8, 10, 10}, {8, 1, 3, 3}, 1, 1, 1, 8, true},  /* depthwise */
      {{1, 4, 12, 12}, {8, 2, 3, 3}, 1, 2, 2, 2, false}, /* dilated, grouped */
      {{1, 2, 7, 40}, {4, 2, 5, 5}, 1, 2, 1, 1, true},   /* 5x5 */
      {{2, 16, 7, 9}, {70, 16, 1, 1}, 1, 0, 1, 1, true}, /* 1x1, M > tile */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    reset();
    ncc_value *x = input(NCC_DT_F32, 4, cases[c].x);
    ncc_value *w = rand_const(4, cases[c].w);
    ncc_value *y = cases[c].bias ? OP(NCC_OP_CONV, x, w, rand_const(1, cases[c].w))
                                 : OP(NCC_OP_CONV, x, w);
    int64_t s2[2] = {cases[c].stride, cases[c].stride}, d2[2] = {cases[c].dil, cases[c].dil};
    int64_t p4[4] = {cases[c].pad, cases[c].pad, cases[c].pad, cases[c].pad};
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "strides", s2, 2), NCC_OK);
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "dilations", d2, 2), NCC_OK);
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "pads", p4, 4), NCC_OK);
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "group", cases[c].group), NCC_OK);
    output(y);
    infer();
    ncc_tensor t = rand_tensor(NCC_DT_F32, 4, cases[c].x, -1, 1);
    char what[32];
    snprintf(what, sizeof what, "Conv case %zu", c);
    expect_kernels(check_graph(&t, 1, 1e-5, 1e-4, what), 1);
    ncc_tensor_free(&t);
  }
}

static void test_pool_transpose(void **state) {
  (void)state;
  static const struct {
    ncc_op op;
    int64_t k, s, p;
    int ceil, count_pad;
  } cases[] = {
      {NCC_OP_MAXPOOL, 3, 2, 1, 0, 0}, {NCC_OP_MAXPOOL, 2, 2, 0, 1, 0},
      {NCC_OP_AVGPOOL, 3, 2, 1, 0, 0}, {NCC_OP_AVGPOOL, 3, 2, 1, 0, 1},
  };
  int64_t dx[4] = {2, 3, 17, 35};
  ncc_value *x = input(NCC_DT_F32, 4, dx);
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
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
  }
  static const int64_t perms[][4] = {{0, 2, 1, 3}, {3, 1, 0, 2}, {0, 1, 3, 2}};
  for (size_t p = 0; p < 3; p++) {
    output(OP(NCC_OP_TRANSPOSE, x));
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "perm", perms[p], 4), NCC_OK);
  }
  infer();
  ncc_tensor t = rand_tensor(NCC_DT_F32, 4, dx, -1, 1);
  expect_kernels(check_graph(&t, 1, 1e-6, 1e-5, "Pool/Transpose"), 7);
  ncc_tensor_free(&t);
}

/* ---- the module: host nodes between device kernels, a symbolic batch ---- */

static void test_chain_symbolic_batch(void **state) {
  (void)state;
  int64_t N = sym("N");
  int64_t dx[2] = {N, 17}, db[1] = {17};
  ncc_value *x = input(NCC_DT_F32, 2, dx);
  ncc_value *b = input(NCC_DT_F32, 1, db);
  ncc_value *h = OP(NCC_OP_RELU, OP(NCC_OP_ADD, x, b));
  ncc_value *t = OP(NCC_OP_TRANSPOSE, h);
  ncc_value *u = OP(NCC_OP_MUL, t, t);
  ncc_value *sh = OP(NCC_OP_SHAPE, u);                        /* host, dims only */
  u = opv(NCC_OP_RESHAPE, 2, (ncc_value *[]){u, sh});          /* device alias */
  ncc_value *f = OP(NCC_OP_FLATTEN, u);                        /* device alias */
  ncc_value *e = OP(NCC_OP_EXP, f);
  static const int64_t ax0[1] = {0};
  ncc_value *s = OP(NCC_OP_UNSQUEEZE, h, axes_const(1, ax0));  /* device alias */
  output(e);
  output(h);
  output(s);
  infer();
  static const int64_t batches[] = {1, 5, 5, 9, 2};
  ncc_tensor in[5][2], *sets[5];
  for (int i = 0; i < 5; i++) {
    int64_t d[2] = {batches[i], 17};
    in[i][0] = rand_tensor(NCC_DT_F32, 2, d, -1, 1);
    in[i][1] = rand_tensor(NCC_DT_F32, 1, db, -1, 1);
    sets[i] = in[i];
  }
  expect_kernels(check_sets(sets, 5, 2, 1e-6, 1e-6, "chain"), 5);
  for (int i = 0; i < 5; i++) {
    ncc_tensor_free(&in[i][0]);
    ncc_tensor_free(&in[i][1]);
  }
}

static void test_module_errors(void **state) {
  (void)state;
  if (ptx_mode) {
    /* an arch NVRTC does not have, and a malformed one */
    int64_t d[1] = {17};
    output(OP(NCC_OP_EXP, input(NCC_DT_F32, 1, d)));
    infer();
    char path[160];
    snprintf(path, sizeof path, "%s/x.ptx", tmpdir);
    setenv("NCC_CUDA_ARCH", "sm_10", 1);
    assert_int_equal(ncc_module_emit(G, "cuda", "ptx", path), NCC_ERR_UNSUPPORTED);
    setenv("NCC_CUDA_ARCH", "gfx90a", 1);
    assert_int_equal(ncc_module_emit(G, "cuda", "ptx", path), NCC_ERR_USAGE);
    unsetenv("NCC_CUDA_ARCH");
    assert_int_equal(ncc_module_emit(G, "cuda", "asm", path), NCC_ERR_UNSUPPORTED);
    assert_int_equal(ncc_module_emit(G, "opencl", "ptx", path), NCC_ERR_UNSUPPORTED);
    assert_int_equal(ncc_module_emit(G, "cuda", "cuda", "/nonexistent/dir/x.cu"), NCC_ERR_INPUT);
    assert_int_equal(access(path, F_OK), -1); /* nothing half-written */
    return;
  }
  int64_t d[1] = {17};
  ncc_value *a = input(NCC_DT_F32, 1, d);
  output(OP(NCC_OP_EXP, a));
  infer();
  ncc_module *m = NULL;
  assert_int_equal(ncc_module_compile(G, target, &m), NCC_OK);
  assert_string_equal(ncc_module_target(m), target);
  ncc_tensor out[1];
  int64_t wrong[1] = {16};
  ncc_tensor t = rand_tensor(NCC_DT_F32, 1, wrong, 0, 1);
  assert_int_equal(ncc_module_run(m, &t, 1, out, 1), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "dim 0"));
  assert_int_equal(ncc_module_run(m, &t, 0, out, 1), NCC_ERR_INPUT);
  ncc_tensor_free(&t);
  ncc_module_free(m);
  /* a kernel that fails to compile (the test hook breaks the program;
   * libncc reads no environment, so it is an option) */
  ncc_options o;
  ncc_options_init(&o);
  o.gpu_test_bad_kernel = 1;
  assert_int_equal(ncc_module_compile_opts(G, target, &o, &m), NCC_ERR_INTERNAL);
  assert_null(m);
  assert_non_null(strstr(ncc_error_message(), "failed to compile"));
}

int main(void) {
  const char *mode = getenv("NCC_GPU_TEST_MODE");
  ptx_mode = mode && strcmp(mode, "ptx") == 0;
  if (getenv("NCC_GPU_TARGET")) target = getenv("NCC_GPU_TARGET");
  char why[400];
  if (ptx_mode) {
    const char *ptxas = getenv("PTXAS") ? getenv("PTXAS") : "/usr/local/cuda/bin/ptxas";
    if (access(ptxas, X_OK) != 0) {
      print_message("skipped: no ptxas at %s\n", ptxas);
      return 77;
    }
    target = "cuda";
    /* NVRTC is needed for PTX: probe with a one-node graph */
    ncc_graph *pg = ncc_graph_new("probe");
    int64_t d[1] = {4};
    ncc_shape ps = mkshape(1, d);
    ncc_value *x = pg ? ncc_graph_add_value(pg, "x", NCC_VAL_INPUT, NCC_DT_F32, &ps) : NULL;
    ncc_node *n = x ? ncc_graph_add_node(pg, NCC_OP_NEG, NULL, 1, &x, 1) : NULL;
    ncc_value *y = n ? ncc_graph_add_value(pg, "y", NCC_VAL_NODE, NCC_DT_UNDEF, NULL) : NULL;
    if (!y) return 1;
    ncc_node_set_output(n, 0, y);
    if (ncc_graph_add_input(pg, x) || ncc_graph_add_output(pg, y) || ncc_infer_graph(pg))
      return 1;
    char probe[64];
    snprintf(probe, sizeof probe, "/tmp/ncc_gpu_probe_%d.ptx", (int)getpid());
    ncc_status pst = ncc_module_emit(pg, "cuda", "ptx", probe);
    ncc_graph_free(pg);
    remove(probe);
    if (pst == NCC_ERR_UNSUPPORTED) {
      print_message("skipped: no PTX here (%s)\n", ncc_error_message());
      return 77;
    }
  } else if (ncc_target_available(target, why, sizeof why) != NCC_OK) {
    print_message("skipped: target %s unavailable (%s)\n", target, why);
    return 77;
  }
  if (!mkdtemp(tmpdir)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_unary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_binary, setup, teardown),
      cmocka_unit_test_setup_teardown(test_where_clip_variadic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_matmul, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gemm, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rows, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_chain_symbolic_batch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_module_errors, setup, teardown),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  rmdir(tmpdir);
  return rc;
}
