/* tests/unit/test_blocked.c — kernels on blocked (#nchw<k>c) values
 * (codegen/lower_blocked.c) against the reference interpreter, which runs
 * every op on plain data and converts layouts around it.
 *
 * Each case is a small graph whose inputs and outputs are plain (the IR
 * requires it) with Reorder nodes at the edges and the op under test on
 * blocked values in between. Besides the values, each case checks that no
 * node fell back to a reference kernel (the lowering really handled it).
 * Sizes are odd on purpose: output widths that are not a multiple of the
 * pixel run, batch 3, padding on every side or at the end only
 * (top = left = 0). tests/blocked.cmake reruns this executable with
 * NCC_VECTOR_WIDTH=8/4/1.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/ref/ref.h"
#include "test_env.h"
#include "test_graph.h"

/* ---- helpers ---- */

static void compare(const ncc_tensor *a, const ncc_tensor *b, double atol, double rtol,
                    const char *what) {
  compare_outputs(a, b, atol, rtol, "cpu", what, -1);
}

/* Run G (one input of dims d) with ref and cpu and compare; every node
 * must have been compiled (no reference fallback). Returns the number of
 * compiled kernels. */
static int check(const int64_t *d, double atol, double rtol, const char *what) {
  ncc_tensor x = rand_tensor(NCC_DT_F32, 4, d, -1, 1), ref, cpu;
  ncc_status st = ncc_ref_run(G, &x, 1, &ref, 1);
  if (st != NCC_OK) print_error("ref: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  ncc_module *m = NULL;
  st = test_module_compile(G, "cpu", &m);
  if (st != NCC_OK) print_error("compile: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  st = ncc_module_run(m, &x, 1, &cpu, 1);
  if (st != NCC_OK) print_error("run: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
  compare(&ref, &cpu, atol, rtol, what);
  if (ncc_module_num_host_kernels(m) != 0)
    fail_msg("%s: %d node(s) ran on reference kernels", what,
             ncc_module_num_host_kernels(m));
  int nk = ncc_module_num_kernels(m);
  ncc_module_free(m);
  ncc_tensor_free(&x);
  ncc_tensor_free(&ref);
  ncc_tensor_free(&cpu);
  return nk;
}

static void fresh(void) {
  teardown(NULL);
  setup(NULL);
}

static void set_block(ncc_value *v, int k) {
  v->layout.kind = k > 1 ? NCC_LAYOUT_NCHWC : NCC_LAYOUT_PLAIN;
  v->layout.block = k > 1 ? k : 0;
}

/* x in layout k (k <= 1: plain, no node). */
static ncc_value *reorder(ncc_value *x, int k) {
  ncc_value *y = OP(NCC_OP_REORDER, x);
  set_block(y, k);
  return y;
}

static void ints_attr(const char *name, int64_t a, int n) {
  int64_t v[4] = {a, a, a, a};
  assert_int_equal(ncc_node_set_attr_ints(G, last_node, name, v, n), NCC_OK);
}

static void mark_group(ncc_node *n, int id, const char *kind) {
  assert_int_equal(ncc_node_set_attr_int(G, n, "fuse.group", id), NCC_OK);
  assert_int_equal(ncc_node_set_attr_string(G, n, "fuse.kind", kind), NCC_OK);
}

static void verify(void) {
  ncc_status st = ncc_graph_verify(G);
  if (st != NCC_OK) print_error("verify: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
}

/* ---- the physical index of a blocked element ---- */

static void test_relayout_index(void **state) {
  (void)state;
  const int64_t d[4] = {2, 8, 3, 5};
  const int block = 4;
  int64_t n = 2 * 8 * 3 * 5;
  float src[240], dst[240], back[240];
  for (int64_t i = 0; i < n; i++) src[i] = (float)i;
  ncc_ref_relayout(src, dst, d, block, sizeof(float), true);
  for (int64_t b = 0; b < d[0]; b++)
    for (int64_t c = 0; c < d[1]; c++)
      for (int64_t h = 0; h < d[2]; h++)
        for (int64_t w = 0; w < d[3]; w++) {
          int64_t plain = ((b * d[1] + c) * d[2] + h) * d[3] + w;
          int64_t phys =
              ((b * (d[1] / block) + c / block) * d[2] * d[3] + h * d[3] + w) * block +
              c % block;
          assert_true(dst[phys] == src[plain]);
        }
  ncc_ref_relayout(dst, back, d, block, sizeof(float), false);
  assert_memory_equal(src, back, sizeof(float) * (size_t)n);
}

/* ---- Reorder ---- */

static void test_reorder(void **state) {
  (void)state;
  static const int ks[][2] = {{4, 8}, {8, 16}, {16, 4}, {16, 16}};
  const int64_t d[4] = {2, 32, 5, 7};
  for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
    fresh();
    ncc_value *x = input(NCC_DT_F32, 4, d);
    ncc_value *a = reorder(x, ks[c][0]);
    ncc_value *b = ks[c][1] != ks[c][0] ? reorder(a, ks[c][1]) : a;
    output(reorder(b, 1));
    infer();
    verify();
    char what[48];
    snprintf(what, sizeof what, "Reorder %d -> %d", ks[c][0], ks[c][1]);
    check(d, 0, 0, what);
  }
}

/* ---- Conv ---- */

typedef struct conv_case {
  int64_t n, c, h, w, oc, kh, stride, pad, dil;
  int kin, kout; /* input block (0: plain), output block */
  bool bias;
} conv_case;

static void test_conv(void **state) {
  (void)state;
  static const conv_case cases[] = {
      {1, 16, 14, 14, 32, 3, 1, 1, 1, 16, 16, true},  /* 3x3 same */
      {3, 16, 9, 17, 32, 3, 1, 1, 1, 8, 16, true},    /* OW 17, batch 3, k change */
      {1, 16, 15, 15, 16, 3, 2, 1, 1, 16, 16, false}, /* stride 2 */
      {2, 32, 7, 7, 64, 1, 1, 0, 1, 16, 16, true},    /* 1x1, OW 7 */
      {1, 3, 23, 23, 16, 7, 2, 3, 1, 0, 16, true},    /* stem: plain C=3, 7x7/2 */
      {1, 3, 17, 11, 8, 3, 1, 1, 1, 0, 8, true},      /* plain input, k 8 */
      {1, 8, 12, 12, 8, 3, 1, 2, 2, 8, 8, true},      /* dilation 2 */
      {3, 4, 6, 7, 12, 3, 1, 1, 1, 4, 4, false},      /* k 4, OC 12 */
      {1, 16, 5, 5, 48, 5, 1, 2, 1, 16, 16, true},    /* 5x5, OC 48: 3 blocks */
      {1, 8, 9, 9, 16, 3, 1, 0, 1, 8, 16, true},      /* unpadded */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const conv_case *cc = &cases[c];
    fresh();
    int64_t dx[4] = {cc->n, cc->c, cc->h, cc->w}, dw[4] = {cc->oc, cc->c, cc->kh, cc->kh};
    ncc_value *x = input(NCC_DT_F32, 4, dx);
    ncc_value *xb = cc->kin ? reorder(x, cc->kin) : x;
    ncc_value *w = rand_const(4, dw);
    ncc_value *y = cc->bias ? OP(NCC_OP_CONV, xb, w, rand_const(1, dw)) : OP(NCC_OP_CONV, xb, w);
    ints_attr("strides", cc->stride, 2);
    ints_attr("dilations", cc->dil, 2);
    ints_attr("pads", cc->pad, 4);
    ints_attr("kernel_shape", cc->kh, 2);
    set_block(y, cc->kout);
    output(reorder(y, 1));
    infer();
    verify();
    char what[32];
    snprintf(what, sizeof what, "Conv case %zu", c);
    check(dx, 1e-5, 1e-4, what);
  }
}

/* A symbolic batch: one kernel for every N. */
static void test_conv_symbolic(void **state) {
  (void)state;
  int64_t dx[4] = {sym("N"), 16, 8, 9}, dw[4] = {16, 16, 3, 3};
  ncc_value *y = OP(NCC_OP_CONV, reorder(input(NCC_DT_F32, 4, dx), 16), rand_const(4, dw));
  ints_attr("pads", 1, 4);
  set_block(y, 16);
  output(reorder(y, 1));
  infer();
  verify();
  int64_t d[4] = {3, 16, 8, 9};
  check(d, 1e-5, 1e-4, "Conv symbolic N");
}

/* Padding on some sides only: the border list then has a left part and no
 * right part, a right part only, or a top and no bottom. */
static void test_conv_asym_pads(void **state) {
  (void)state;
  static const int64_t pads[][4] = {
      {1, 0, 1, 2}, /* top, left, bottom, right: no left part */
      {0, 2, 0, 0}, /* left part only, no top/bottom rows */
      {2, 1, 0, 1}, /* top rows, no bottom */
  };
  for (size_t c = 0; c < sizeof pads / sizeof *pads; c++) {
    fresh();
    int64_t dx[4] = {2, 16, 9, 11}, dw[4] = {32, 16, 3, 3};
    ncc_value *y = OP(NCC_OP_CONV, reorder(input(NCC_DT_F32, 4, dx), 16), rand_const(4, dw),
                      rand_const(1, dw));
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "pads", pads[c], 4), NCC_OK);
    ints_attr("kernel_shape", 3, 2);
    set_block(y, 16);
    output(reorder(y, 1));
    infer();
    verify();
    char what[40];
    snprintf(what, sizeof what, "Conv asymmetric pads %zu", c);
    check(dx, 1e-5, 1e-4, what);
  }
}

/* Padding at the end only (top = left = 0): TensorFlow's "SAME" with a 2x2
 * kernel at stride 1 or a 3x3 at stride 2 on even sizes, dense and
 * depthwise. The interior must stop before the windows that cross the
 * bottom/right edge, though no begin pad calls for a border. */
static void test_conv_end_pads(void **state) {
  (void)state;
  static const struct {
    int64_t n, c, h, w, oc, kh, stride, pads[4];
    int k;
    bool dw;
  } cases[] = {
      {1, 16, 14, 15, 32, 2, 1, {0, 0, 1, 1}, 16, false}, /* 2x2 stride 1 */
      {2, 16, 14, 18, 16, 3, 2, {0, 0, 1, 1}, 16, false}, /* 3x3 stride 2 */
      {1, 8, 9, 12, 16, 3, 2, {0, 0, 0, 1}, 8, false},    /* right only */
      {3, 8, 10, 7, 8, 3, 1, {0, 0, 2, 0}, 4, false},     /* bottom only */
      {1, 32, 14, 14, 32, 3, 2, {0, 0, 1, 1}, 16, true},  /* depthwise /2 */
      {2, 16, 10, 12, 16, 3, 2, {0, 0, 1, 1}, 8, true},
      {1, 8, 9, 9, 8, 2, 1, {0, 0, 1, 1}, 4, true},       /* depthwise 2x2 */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    fresh();
    int64_t dx[4] = {cases[c].n, cases[c].c, cases[c].h, cases[c].w};
    int64_t dw[4] = {cases[c].oc, cases[c].dw ? 1 : cases[c].c, cases[c].kh, cases[c].kh};
    ncc_value *y = OP(NCC_OP_CONV, reorder(input(NCC_DT_F32, 4, dx), cases[c].k),
                      rand_const(4, dw), rand_const(1, dw));
    if (cases[c].dw)
      assert_int_equal(ncc_node_set_attr_int(G, last_node, "group", cases[c].c), NCC_OK);
    ints_attr("strides", cases[c].stride, 2);
    assert_int_equal(ncc_node_set_attr_ints(G, last_node, "pads", cases[c].pads, 4), NCC_OK);
    set_block(y, cases[c].k);
    output(reorder(y, 1));
    infer();
    verify();
    char what[40];
    snprintf(what, sizeof what, "Conv end pads %zu", c);
    check(dx, 1e-5, 1e-4, what);
  }
}

static void test_depthwise(void **state) {
  (void)state;
  static const struct {
    int64_t n, c, h, w, kh, stride, pad;
    int k;
  } cases[] = {
      {1, 32, 14, 14, 3, 1, 1, 16}, {3, 16, 9, 17, 3, 2, 1, 8},
      {1, 16, 7, 7, 5, 1, 2, 4},   {2, 8, 6, 6, 3, 1, 0, 8},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    fresh();
    int64_t dx[4] = {cases[c].n, cases[c].c, cases[c].h, cases[c].w};
    int64_t dw[4] = {cases[c].c, 1, cases[c].kh, cases[c].kh};
    ncc_value *y = OP(NCC_OP_CONV, reorder(input(NCC_DT_F32, 4, dx), cases[c].k),
                      rand_const(4, dw), rand_const(1, dw));
    assert_int_equal(ncc_node_set_attr_int(G, last_node, "group", cases[c].c), NCC_OK);
    ints_attr("strides", cases[c].stride, 2);
    ints_attr("pads", cases[c].pad, 4);
    set_block(y, cases[c].k);
    output(reorder(y, 1));
    infer();
    verify();
    char what[32];
    snprintf(what, sizeof what, "depthwise case %zu", c);
    check(dx, 1e-5, 1e-4, what);
  }
}

/* ---- an epilogue group: Conv + bias + Relu + residual + per-channel ---- */

static void test_epilogue(void **state) {
  (void)state;
  static const struct {
    int64_t n, c, h, w;
    int k;
    bool dw;
  } cases[] = {
      {1, 32, 10, 13, 16, false}, {3, 16, 7, 7, 8, false},
      {2, 16, 9, 9, 4, false},    {1, 32, 8, 11, 16, true},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    fresh();
    int64_t C = cases[c].c;
    int64_t dx[4] = {cases[c].n, C, cases[c].h, cases[c].w};
    int64_t dw[4] = {C, cases[c].dw ? 1 : C, 3, 3}, dc[3] = {C, 1, 1};
    ncc_value *xb = reorder(input(NCC_DT_F32, 4, dx), cases[c].k);
    ncc_value *y = OP(NCC_OP_CONV, xb, rand_const(4, dw), rand_const(1, dw));
    ncc_node *conv = last_node;
    ints_attr("pads", 1, 4);
    if (cases[c].dw)
      assert_int_equal(ncc_node_set_attr_int(G, conv, "group", C), NCC_OK);
    ncc_value *r = OP(NCC_OP_RELU, y);
    ncc_node *relu = last_node;
    ncc_value *s = OP(NCC_OP_ADD, r, xb);
    ncc_node *add = last_node;
    ncc_value *t = OP(NCC_OP_MUL, s, rand_const(3, dc));
    ncc_node *mul = last_node;
    ncc_value *u = OP(NCC_OP_SUB, t, scalar_f32(0.25f));
    ncc_node *sub = last_node;
    ncc_value *vals[] = {y, r, s, t, u};
    for (int i = 0; i < 5; i++) set_block(vals[i], cases[c].k);
    ncc_node *members[] = {conv, relu, add, mul, sub};
    for (int i = 0; i < 5; i++) mark_group(members[i], 0, "epilogue");
    output(reorder(u, 1));
    infer();
    verify();
    char what[32];
    snprintf(what, sizeof what, "epilogue case %zu", c);
    /* Reorder, the group, Reorder */
    assert_int_equal(check(dx, 1e-5, 1e-4, what), 3);
  }
}

/* ---- pools ---- */

static void test_pool(void **state) {
  (void)state;
  static const struct {
    ncc_op op;
    int64_t k, s, p;
    int ceil, count_pad, block;
  } cases[] = {
      {NCC_OP_MAXPOOL, 3, 2, 1, 0, 0, 16}, {NCC_OP_MAXPOOL, 2, 2, 0, 1, 0, 8},
      {NCC_OP_MAXPOOL, 3, 1, 1, 0, 0, 4},  {NCC_OP_AVGPOOL, 3, 2, 1, 0, 0, 16},
      {NCC_OP_AVGPOOL, 3, 2, 1, 0, 1, 8},  {NCC_OP_AVGPOOL, 2, 2, 0, 0, 0, 16},
  };
  int64_t dx[4] = {3, 32, 17, 15};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    fresh();
    ncc_value *y = OP(cases[c].op, reorder(input(NCC_DT_F32, 4, dx), cases[c].block));
    ints_attr("kernel_shape", cases[c].k, 2);
    ints_attr("strides", cases[c].s, 2);
    ints_attr("pads", cases[c].p, 4);
    if (cases[c].ceil)
      assert_int_equal(ncc_node_set_attr_int(G, last_node, "ceil_mode", 1), NCC_OK);
    if (cases[c].count_pad)
      assert_int_equal(ncc_node_set_attr_int(G, last_node, "count_include_pad", 1), NCC_OK);
    set_block(y, cases[c].block);
    output(reorder(y, 1));
    infer();
    verify();
    char what[32];
    snprintf(what, sizeof what, "Pool case %zu", c);
    check(dx, 1e-6, 1e-5, what);
  }
  /* GlobalAveragePool to a blocked or a plain [N,C,1,1] (the same bytes) */
  for (int plain = 0; plain < 2; plain++) {
    fresh();
    ncc_value *y = OP(NCC_OP_GLOBALAVGPOOL, reorder(input(NCC_DT_F32, 4, dx), 8));
    set_block(y, plain ? 1 : 8);
    output(plain ? y : reorder(y, 1));
    infer();
    verify();
    check(dx, 1e-6, 1e-5, "GlobalAveragePool");
  }
}

/* ---- elementwise nodes and an elementwise group ---- */

static void test_eltwise(void **state) {
  (void)state;
  int64_t dx[4] = {3, 16, 5, 7};
  for (int fused = 0; fused < 2; fused++) {
    fresh();
    ncc_value *xb = reorder(input(NCC_DT_F32, 4, dx), 8);
    ncc_value *a = OP(NCC_OP_RELU, xb);
    ncc_node *n1 = last_node;
    ncc_value *b = OP(NCC_OP_MUL, a, scalar_f32(1.5f));
    ncc_node *n2 = last_node;
    ncc_value *c = OP(NCC_OP_ADD, b, xb);
    ncc_node *n3 = last_node;
    ncc_value *e = OP(NCC_OP_SIGMOID, c);
    ncc_node *n4 = last_node;
    ncc_value *vals[] = {a, b, c, e};
    for (int i = 0; i < 4; i++) set_block(vals[i], 8);
    if (fused) {
      ncc_node *m[] = {n1, n2, n3, n4};
      for (int i = 0; i < 4; i++) mark_group(m[i], 7, "eltwise");
    }
    output(reorder(e, 1));
    infer();
    verify();
    int nk = check(dx, 1e-6, 1e-5, fused ? "eltwise group" : "eltwise chain");
    assert_int_equal(nk, fused ? 3 : 6);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_relayout_index),
      cmocka_unit_test_setup_teardown(test_reorder, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_symbolic, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_asym_pads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conv_end_pads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_depthwise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_epilogue, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pool, setup, teardown),
      cmocka_unit_test_setup_teardown(test_eltwise, setup, teardown),
  };
  const struct CMUnitTest no_cpu[] = {cmocka_unit_test(test_relayout_index)};
  char why[256];
  if (ncc_target_available("cpu", why, sizeof why) != NCC_OK) {
    print_message("cpu target unavailable (%s): layout index test only\n", why);
    return cmocka_run_group_tests(no_cpu, NULL, NULL);
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
