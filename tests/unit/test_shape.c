/* tests/unit/test_shape.c — shape, dtype and content inference (ir/shape.c):
 * symbolic broadcasting, Conv/Pool arithmetic, the shape subgraphs PyTorch
 * exports, Reshape/Slice/Gather corner cases, declared shapes, and the exact
 * status and message of bad nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/shape.h"
#include "test_alloc.h"

/* ---- helpers ---- */

#define SHAPE(...)                                                             \
  mk_shape((const int64_t[]){__VA_ARGS__},                                     \
           (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define I64S(...)                                                              \
  (const int64_t[]){__VA_ARGS__},                                              \
      (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static ncc_shape mk_shape(const int64_t *d, int rank) {
  ncc_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.d[i] = d[i];
  return s;
}

static const ncc_shape scalar_shape = {.rank = 0};

static int64_t sym(ncc_graph *g, const char *name) {
  int id = ncc_graph_sym(g, name, strlen(name));
  assert_true(id >= 0);
  return ncc_dim_sym(id);
}

static bool is_fresh(ncc_graph *g, int64_t d) {
  return ncc_dim_is_sym(d) &&
         strncmp(ncc_graph_sym_name(g, ncc_dim_sym_id(d)), "unk__", 5) == 0;
}

static ncc_value *input(ncc_graph *g, const char *name, ncc_dtype dt,
                        ncc_shape s) {
  ncc_value *v = ncc_graph_add_value(g, name, NCC_VAL_INPUT, dt, &s);
  assert_non_null(v);
  assert_int_equal(ncc_graph_add_input(g, v), NCC_OK);
  return v;
}

static ncc_value *const_i64(ncc_graph *g, const int64_t *vals, int n) {
  ncc_shape s = {.rank = 1, .d = {n}};
  ncc_value *v = ncc_graph_add_const(g, NULL, NCC_DT_I64, &s, vals);
  assert_non_null(v);
  return v;
}

static ncc_value *scalar_i64(ncc_graph *g, int64_t x) {
  ncc_value *v = ncc_graph_add_const(g, NULL, NCC_DT_I64, &scalar_shape, &x);
  assert_non_null(v);
  return v;
}

static ncc_node *last_node;

/* A node with one fresh output value (no declared type). */
static ncc_value *node(ncc_graph *g, ncc_op op, const char *name, int n_in,
                       ncc_value *const *in) {
  ncc_node *n = ncc_graph_add_node(g, op, name, n_in, in, 1);
  assert_non_null(n);
  ncc_value *v = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  assert_non_null(v);
  ncc_node_set_output(n, 0, v);
  last_node = n;
  return v;
}

#define NODE(g, op, name, ...)                                                 \
  node(g, op, name,                                                            \
       (int)(sizeof((ncc_value *[]){__VA_ARGS__}) / sizeof(ncc_value *)),      \
       (ncc_value *[]){__VA_ARGS__})

static void assert_shape(const ncc_shape *s, ncc_shape want) {
  assert_int_equal(s->rank, want.rank);
  for (int i = 0; i < want.rank; i++) assert_int_equal(s->d[i], want.d[i]);
}

static void assert_content(const ncc_value *v, const int64_t *want, int n) {
  assert_int_equal(v->content_len, n);
  for (int i = 0; i < n; i++) assert_int_equal(v->content[i], want[i]);
}

/* The graph fails inference with `st` and a message containing `msg`. */
static void assert_fails(ncc_graph *g, ncc_status st, const char *msg) {
  ncc_status got = ncc_infer_graph(g);
  if (got != st || !strstr(ncc_error_message(), msg))
    fail_msg("status %d (want %d), message \"%s\" (want \"%s\")", got, st,
             ncc_error_message(), msg);
}

/* ---- broadcasting ---- */

static void test_broadcast(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("b");
  int64_t N = sym(g, "N"), M = sym(g, "M");
  int64_t U = ncc_dim_sym(ncc_graph_fresh_sym(g));
  ncc_shape a, b, o;

  a = SHAPE(2, 3), b = SHAPE(3);
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_OK);
  assert_shape(&o, SHAPE(2, 3));
  a = SHAPE(N, 1), b = SHAPE(1, 4);
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_OK);
  assert_shape(&o, SHAPE(N, 4));
  a = SHAPE(N, 5), b = SHAPE(N, 1); /* N with N, 5 with 1 */
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_OK);
  assert_shape(&o, SHAPE(N, 5));
  a = SHAPE(N), b = SHAPE(7); /* N with static 7 -> 7 */
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_OK);
  assert_shape(&o, SHAPE(7));
  a = SHAPE(U, 2), b = SHAPE(M, 2); /* fresh meets named: the named one */
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_OK);
  assert_shape(&o, SHAPE(M, 2));
  assert_int_equal(ncc_broadcast_shapes(g, &b, &a, &o), NCC_OK);
  assert_shape(&o, SHAPE(M, 2));
  a = SHAPE(N), b = SHAPE(M); /* two named: one of them, no error */
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_OK);
  assert_true(o.d[0] == N || o.d[0] == M);
  a = scalar_shape, b = SHAPE(N, 3);
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_OK);
  assert_shape(&o, SHAPE(N, 3));
  a = SHAPE(2, 3), b = SHAPE(4);
  assert_int_equal(ncc_broadcast_shapes(g, &a, &b, &o), NCC_ERR_INPUT);
  assert_non_null(
      strstr(ncc_error_message(), "cannot broadcast shapes [2,3] and [4]"));

  /* through a node: the message names it */
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 3));
  ncc_value *y = input(g, "y", NCC_DT_F32, SHAPE(4));
  NODE(g, NCC_OP_ADD, "add1", x, y);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'add1' (Add): cannot broadcast shapes [N,3] and [4]");
  ncc_graph_free(g);
}

static void test_eltwise_types(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("e");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 3));
  ncc_value *m = input(g, "m", NCC_DT_F32, SHAPE(N, 1));
  ncc_value *c = NODE(g, NCC_OP_LESS, "lt", x, m);
  ncc_value *w = NODE(g, NCC_OP_WHERE, "w", c, x, m);
  ncc_value *mx = NODE(g, NCC_OP_MAX, "mx", x, m, w);
  ncc_value *r = NODE(g, NCC_OP_RELU, "r", mx);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_int_equal(c->dtype, NCC_DT_BOOL);
  assert_shape(&c->shape, SHAPE(N, 3));
  assert_int_equal(w->dtype, NCC_DT_F32);
  assert_shape(&r->shape, SHAPE(N, 3));
  ncc_graph_free(g);
}

/* ---- Conv and pooling ---- */

static ncc_value *conv(ncc_graph *g, ncc_value *x, ncc_shape wshape) {
  ncc_value *w = ncc_graph_add_const(g, NULL, NCC_DT_F32, &wshape, NULL);
  assert_non_null(w);
  return NODE(g, NCC_OP_CONV, "conv1", x, w);
}

static void test_conv(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("c");
  int64_t N = sym(g, "N"), H = sym(g, "H");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 3, 224, 224));

  /* ResNet stem: 7x7/2 pad 3 */
  ncc_value *y = conv(g, x, SHAPE(64, 3, 7, 7));
  ncc_node *stem = last_node;
  ncc_node_set_attr_ints(g, stem, "strides", I64S(2, 2));
  ncc_node_set_attr_ints(g, stem, "pads", I64S(3, 3, 3, 3));
  ncc_node_set_attr_ints(g, stem, "kernel_shape", I64S(7, 7));
  /* 3x3 dilated 2, pad 2: same size */
  ncc_value *y2 = conv(g, y, SHAPE(64, 64, 3, 3));
  ncc_node_set_attr_ints(g, last_node, "dilations", I64S(2, 2));
  ncc_node_set_attr_ints(g, last_node, "pads", I64S(2, 2, 2, 2));
  /* SAME_UPPER stride 2 on 112 -> 56; VALID 5x5 stride 3 on 112 -> 36 */
  ncc_value *y3 = conv(g, y, SHAPE(32, 64, 1, 1));
  ncc_node_set_attr_string(g, last_node, "auto_pad", "SAME_UPPER");
  ncc_node_set_attr_ints(g, last_node, "strides", I64S(2, 3));
  ncc_value *y4 = conv(g, y, SHAPE(8, 64, 5, 5));
  ncc_node_set_attr_string(g, last_node, "auto_pad", "VALID");
  ncc_node_set_attr_ints(g, last_node, "strides", I64S(3, 3));
  /* depthwise: group = channels */
  ncc_value *y5 = conv(g, y, SHAPE(64, 1, 3, 3));
  ncc_node_set_attr_int(g, last_node, "group", 64);
  ncc_node_set_attr_ints(g, last_node, "pads", I64S(1, 1, 1, 1));
  ncc_node_set_attr_ints(g, last_node, "strides", I64S(2, 2));
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&y->shape, SHAPE(N, 64, 112, 112));
  assert_shape(&y2->shape, SHAPE(N, 64, 112, 112));
  assert_shape(&y3->shape, SHAPE(N, 32, 56, 38));
  assert_shape(&y4->shape, SHAPE(N, 8, 36, 36));
  assert_shape(&y5->shape, SHAPE(N, 64, 56, 56));
  ncc_graph_free(g);

  /* symbolic spatial dims: "same" windows keep them, others get fresh */
  g = ncc_graph_new("c2");
  N = sym(g, "N"), H = sym(g, "H");
  x = input(g, "x", NCC_DT_F32, SHAPE(N, 3, H, 32));
  y = conv(g, x, SHAPE(16, 3, 3, 3));
  ncc_node_set_attr_ints(g, last_node, "pads", I64S(1, 1, 1, 1));
  y2 = conv(g, x, SHAPE(16, 3, 3, 3));
  ncc_node_set_attr_ints(g, last_node, "strides", I64S(2, 2));
  y3 = conv(g, x, SHAPE(16, 3, 3, 3));
  ncc_node_set_attr_string(g, last_node, "auto_pad", "SAME_LOWER");
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&y->shape, SHAPE(N, 16, H, 32));
  assert_true(is_fresh(g, y2->shape.d[2]));
  assert_int_equal(y2->shape.d[3], 15);
  assert_int_equal(y2->shape.d[0], N);
  assert_shape(&y3->shape, SHAPE(N, 16, H, 32));
  ncc_graph_free(g);
}

static void test_conv_errors(void **state) {
  (void)state;
  struct {
    ncc_shape w;
    const char *attr;
    int64_t group;
    const char *msg;
  } cases[] = {
      {SHAPE(8, 3, 3), NULL, 1,
       "node 'conv1' (Conv): input 1 has 3 dims, expected 4"},
      {SHAPE(8, 4, 3, 3), NULL, 1,
       "input has 3 channels but the weight expects 4 x group 1"},
      {SHAPE(8, 1, 3, 3), NULL, 2,
       "input has 3 channels but the weight expects 1 x group 2"},
      {SHAPE(9, 2, 3, 3), NULL, 2,
       "input has 3 channels but the weight expects 2 x group 2"},
      {SHAPE(8, 3, 3, 3), "pads", 1,
       "attribute 'pads' has 3 values, expected 4"},
      {SHAPE(8, 3, 3, 3), "kernel_shape", 1,
       "kernel_shape[0] = 5 but the weight's kernel is 3"},
      {SHAPE(8, 3, 9, 9), NULL, 1,
       "spatial dim 0 (8, padded 8) is smaller than the kernel extent 9"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ncc_graph *g = ncc_graph_new("ce");
    ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(1, 3, 8, 8));
    conv(g, x, cases[i].w);
    if (cases[i].group != 1)
      ncc_node_set_attr_int(g, last_node, "group", cases[i].group);
    if (cases[i].attr && !strcmp(cases[i].attr, "pads"))
      ncc_node_set_attr_ints(g, last_node, "pads", I64S(1, 1, 1));
    if (cases[i].attr && !strcmp(cases[i].attr, "kernel_shape"))
      ncc_node_set_attr_ints(g, last_node, "kernel_shape", I64S(5, 3));
    assert_fails(g, NCC_ERR_INPUT, cases[i].msg);
    ncc_graph_free(g);
  }
  /* output channels not divisible by group */
  ncc_graph *g = ncc_graph_new("ce2");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(1, 4, 8, 8));
  conv(g, x, SHAPE(9, 2, 3, 3));
  ncc_node_set_attr_int(g, last_node, "group", 2);
  assert_fails(g, NCC_ERR_INPUT,
               "group 2 does not divide the 9 output channels");
  ncc_graph_free(g);
}

static ncc_value *pool(ncc_graph *g, ncc_op op, ncc_value *x, int64_t k,
                       int64_t s, int64_t p, int ceil_mode) {
  ncc_value *y = NODE(g, op, "pool", x);
  ncc_node_set_attr_ints(g, last_node, "kernel_shape", (int64_t[]){k, k}, 2);
  ncc_node_set_attr_ints(g, last_node, "strides", (int64_t[]){s, s}, 2);
  ncc_node_set_attr_ints(g, last_node, "pads", (int64_t[]){p, p, p, p}, 4);
  if (ceil_mode) ncc_node_set_attr_int(g, last_node, "ceil_mode", 1);
  return y;
}

static void test_pool(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("p");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 64, 112, 112));
  ncc_value *a = pool(g, NCC_OP_MAXPOOL, x, 3, 2, 1, 0); /* ResNet: 56 */
  ncc_value *x5 = input(g, "x5", NCC_DT_F32, SHAPE(1, 1, 5, 5));
  ncc_value *b = pool(g, NCC_OP_MAXPOOL, x5, 2, 2, 0, 1);  /* ceil: 3 */
  ncc_value *b0 = pool(g, NCC_OP_MAXPOOL, x5, 2, 2, 0, 0); /* floor: 2 */
  ncc_value *x3 = input(g, "x3", NCC_DT_F32, SHAPE(1, 1, 3, 3));
  /* ceil gives 3, but the last window would start in the right padding: 2
   * (PyTorch / ONNX Runtime) */
  ncc_value *c = pool(g, NCC_OP_AVGPOOL, x3, 2, 2, 1, 1);
  ncc_value *x4 = input(g, "x4", NCC_DT_F32, SHAPE(1, 1, 4, 4));
  ncc_value *d = pool(g, NCC_OP_MAXPOOL, x4, 2, 3, 1, 1); /* 2 */
  ncc_value *e = NODE(g, NCC_OP_MAXPOOL, "same", x5);
  ncc_node_set_attr_ints(g, last_node, "kernel_shape", I64S(3, 3));
  ncc_node_set_attr_ints(g, last_node, "strides", I64S(2, 2));
  ncc_node_set_attr_string(g, last_node, "auto_pad", "SAME_UPPER");
  ncc_value *gp = NODE(g, NCC_OP_GLOBALAVGPOOL, "gap", x);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&a->shape, SHAPE(N, 64, 56, 56));
  assert_shape(&b->shape, SHAPE(1, 1, 3, 3));
  assert_shape(&b0->shape, SHAPE(1, 1, 2, 2));
  assert_shape(&c->shape, SHAPE(1, 1, 2, 2));
  assert_shape(&d->shape, SHAPE(1, 1, 2, 2));
  assert_shape(&e->shape, SHAPE(1, 1, 3, 3));
  assert_shape(&gp->shape, SHAPE(N, 64, 1, 1));
  ncc_graph_free(g);

  /* MaxPool's Indices output, and bad pools */
  g = ncc_graph_new("p2");
  x = input(g, "x", NCC_DT_F32, SHAPE(1, 2, 8, 8));
  ncc_node *n = ncc_graph_add_node(g, NCC_OP_MAXPOOL, "mp", 1, &x, 2);
  ncc_value *o0 =
      ncc_graph_add_value(g, "o0", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  ncc_value *o1 =
      ncc_graph_add_value(g, "o1", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  ncc_node_set_output(n, 0, o0);
  ncc_node_set_output(n, 1, o1);
  ncc_node_set_attr_ints(g, n, "kernel_shape", I64S(2, 2));
  ncc_node_set_attr_ints(g, n, "strides", I64S(2, 2));
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&o1->shape, SHAPE(1, 2, 4, 4));
  assert_int_equal(o1->dtype, NCC_DT_I64);
  pool(g, NCC_OP_MAXPOOL, x, 2, 2, 2, 0);
  assert_fails(g, NCC_ERR_INPUT,
               "pads (2, 2) must be smaller than the kernel (2)");
  ncc_graph_free(g);

  g = ncc_graph_new("p3");
  x = input(g, "x", NCC_DT_F32, SHAPE(1, 2, 8, 8));
  NODE(g, NCC_OP_AVGPOOL, "ap", x);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'ap' (AveragePool): missing attribute 'kernel_shape'");
  ncc_graph_free(g);
}

/* ---- the PyTorch shape subgraph ---- */

static void test_torch_reshape_subgraph(void **state) {
  (void)state;
  /* x.view(x.size(0), -1, 64) with x: [N, 8, 128] */
  ncc_graph *g = ncc_graph_new("t");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 8, 128));
  ncc_value *sh = NODE(g, NCC_OP_SHAPE, "shape", x);
  ncc_value *g0 = NODE(g, NCC_OP_GATHER, "gather", sh, scalar_i64(g, 0));
  ncc_value *u = NODE(g, NCC_OP_UNSQUEEZE, "unsq", g0, const_i64(g, I64S(0)));
  ncc_value *cat = NODE(g, NCC_OP_CONCAT, "cat", u, const_i64(g, I64S(-1)),
                        const_i64(g, I64S(64)));
  ncc_node_set_attr_int(g, last_node, "axis", 0);
  ncc_value *y = NODE(g, NCC_OP_RESHAPE, "view", x, cat);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_int_equal(sh->dtype, NCC_DT_I64);
  assert_shape(&sh->shape, SHAPE(3));
  assert_content(sh, I64S(N, 8, 128));
  assert_shape(&g0->shape, scalar_shape);
  assert_content(g0, I64S(N));
  assert_content(u, I64S(N));
  assert_content(cat, I64S(N, -1, 64));
  assert_shape(&y->shape, SHAPE(N, 16, 64));
  ncc_graph_free(g);
}

static void test_torch_expand_subgraph(void **state) {
  (void)state;
  /* y.expand(x.size(0), 3) as exported: ConstantOfShape/Mul/Equal/Where */
  ncc_graph *g = ncc_graph_new("t2");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 5));
  ncc_value *y = input(g, "y", NCC_DT_F32, SHAPE(1, 3));
  ncc_value *sh = NODE(g, NCC_OP_SHAPE, "shape", x);
  ncc_node_set_attr_int(g, last_node, "end", 1);
  ncc_value *target = NODE(g, NCC_OP_CONCAT, "cat", sh, const_i64(g, I64S(3)));
  ncc_node_set_attr_int(g, last_node, "axis", 0);
  ncc_value *tshape = NODE(g, NCC_OP_SHAPE, "tshape", target);
  ncc_value *ones = NODE(g, NCC_OP_CONSTANTOFSHAPE, "cos", tshape);
  ncc_attr *va = ncc_node_add_attr(g, last_node, "value", NCC_ATTR_TENSOR);
  int64_t one = 1;
  va->t.dtype = NCC_DT_I64;
  va->t.shape = SHAPE(1);
  va->t.data = ncc_arena_memdup(&g->arena, &one, sizeof one);
  ncc_value *neg = NODE(g, NCC_OP_MUL, "mul", ones, scalar_i64(g, -1));
  ncc_value *eq = NODE(g, NCC_OP_EQUAL, "eq", target, neg);
  ncc_value *wh = NODE(g, NCC_OP_WHERE, "where", eq, ones, target);
  ncc_value *out = NODE(g, NCC_OP_EXPAND, "expand", y, wh);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_content(sh, I64S(N));
  assert_content(ones, I64S(1, 1));
  assert_content(neg, I64S(-1, -1));
  assert_content(eq, I64S(0, 0));
  assert_content(wh, I64S(N, 3));
  assert_shape(&out->shape, SHAPE(N, 3));
  ncc_graph_free(g);
}

/* ---- Reshape ---- */

static ncc_value *reshape(ncc_graph *g, ncc_value *x, const int64_t *v, int n) {
  return NODE(g, NCC_OP_RESHAPE, "rs", x, const_i64(g, v, n));
}

static void test_reshape(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("r");
  int64_t N = sym(g, "N"), T = sym(g, "T");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(2, 3, 4));
  ncc_value *a = reshape(g, x, I64S(0, -1));
  ncc_value *b = reshape(g, x, I64S(-1));
  ncc_value *c = reshape(g, x, I64S(4, 0, 2));
  ncc_value *z = input(g, "z", NCC_DT_F32, SHAPE(0, 3));
  ncc_value *d = reshape(g, z, I64S(3, 0));
  ncc_node_set_attr_int(g, last_node, "allowzero", 1);
  ncc_value *xs = input(g, "xs", NCC_DT_F32, SHAPE(N, T, 8));
  ncc_value *e = reshape(g, xs, I64S(0, 0, 2, -1)); /* [N,T,2,4] */
  ncc_value *f = reshape(g, xs, I64S(-1, 8));       /* fresh */
  ncc_value *h = reshape(g, xs, I64S(N, 0, 4, -1)); /* [N,T,4,2] */
  ncc_value *xn = input(g, "xn", NCC_DT_F32, SHAPE(N, 4, 6));
  ncc_value *k = reshape(g, xn, I64S(24, -1)); /* -1 is N */
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&a->shape, SHAPE(2, 12));
  assert_shape(&b->shape, SHAPE(24));
  assert_shape(&c->shape, SHAPE(4, 3, 2));
  assert_shape(&d->shape, SHAPE(3, 0));
  assert_shape(&e->shape, SHAPE(N, T, 2, 4));
  assert_true(is_fresh(g, f->shape.d[0]));
  assert_int_equal(f->shape.d[1], 8);
  assert_shape(&h->shape, SHAPE(N, T, 4, 2));
  assert_shape(&k->shape, SHAPE(24, N));
  ncc_graph_free(g);

  struct {
    int64_t v[3];
    int n;
    const char *msg;
  } bad[] = {
      {{-1, -1}, 2, "node 'rs' (Reshape): shape has more than one -1"},
      {{5, -1}, 2, "cannot reshape [2,3,4] into [5,1]"},
      {{5, 5}, 2, "cannot reshape [2,3,4] (24 elements) into [5,5]"},
      {{2, -3}, 2, "shape entry 1 is -3"},
      {{1, 1, 0}, 3, "shape entry 2 is 0 (copy) but the input has rank 2"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    g = ncc_graph_new("rb");
    x = input(g, "x", NCC_DT_F32, i == 4 ? SHAPE(6, 4) : SHAPE(2, 3, 4));
    reshape(g, x, bad[i].v, bad[i].n);
    assert_fails(g, NCC_ERR_INPUT, bad[i].msg);
    ncc_graph_free(g);
  }
  /* a non-constant shape at compile time: fresh dims of the right rank */
  g = ncc_graph_new("rd");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3, 4));
  ncc_value *s = input(g, "s", NCC_DT_I64, SHAPE(2));
  ncc_value *y = NODE(g, NCC_OP_RESHAPE, "rs", x, s);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_int_equal(y->shape.rank, 2);
  assert_true(is_fresh(g, y->shape.d[0]) && is_fresh(g, y->shape.d[1]));
  ncc_graph_free(g);
}

/* ---- Slice, Gather, Squeeze/Unsqueeze, Split, Concat ---- */

static ncc_value *slice(ncc_graph *g, ncc_value *x, int64_t start, int64_t end,
                        int64_t axis, int64_t step) {
  return NODE(g, NCC_OP_SLICE, "sl", x, const_i64(g, &start, 1),
              const_i64(g, &end, 1), const_i64(g, &axis, 1),
              const_i64(g, &step, 1));
}

static void test_slice(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("s");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 20));
  ncc_value *a = slice(g, x, -3, INT64_MAX, 1, 1);  /* 3 */
  ncc_value *b = slice(g, x, -1, INT64_MIN, 1, -1); /* 20, reversed */
  ncc_value *c = slice(g, x, 1, 100, -1, 3);        /* ceil(19/3)=7 */
  ncc_value *d = slice(g, x, 15, 5, 1, -4);         /* 15,11,7: 3 */
  ncc_value *e = slice(g, x, 0, INT64_MAX, 0, 1);   /* N */
  ncc_value *f = slice(g, x, 2, INT64_MAX, 0, 1);   /* fresh */
  ncc_value *h = slice(g, x, 30, 40, 1, 1);         /* 0 */
  ncc_value *k = slice(g, x, -1, INT64_MIN, 0, -1); /* N */
  /* starts/ends only (no axes, no steps) */
  ncc_value *l = NODE(g, NCC_OP_SLICE, "sl2", x, const_i64(g, I64S(0, 2)),
                      const_i64(g, I64S(INT64_MAX, -2)));
  /* content: Shape of [N,3,224,224] sliced [2:] */
  ncc_value *img = input(g, "img", NCC_DT_F32, SHAPE(N, 3, 224, 224));
  ncc_value *sh = NODE(g, NCC_OP_SHAPE, "shape", img);
  ncc_value *hw = slice(g, sh, 2, INT64_MAX, 0, 1);
  ncc_value *rev = slice(g, sh, -1, INT64_MIN, 0, -2);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&a->shape, SHAPE(N, 3));
  assert_shape(&b->shape, SHAPE(N, 20));
  assert_shape(&c->shape, SHAPE(N, 7));
  assert_shape(&d->shape, SHAPE(N, 3));
  assert_shape(&e->shape, SHAPE(N, 20));
  assert_true(is_fresh(g, f->shape.d[0]));
  assert_shape(&h->shape, SHAPE(N, 0));
  assert_shape(&k->shape, SHAPE(N, 20));
  assert_shape(&l->shape, SHAPE(N, 16));
  assert_content(hw, I64S(224, 224));
  assert_content(rev, I64S(224, 3));
  ncc_graph_free(g);

  g = ncc_graph_new("s2");
  x = input(g, "x", NCC_DT_F32, SHAPE(4, 5));
  slice(g, x, 0, 3, 1, 0);
  assert_fails(g, NCC_ERR_INPUT, "node 'sl' (Slice): slice step is 0");
  ncc_graph_free(g);
  g = ncc_graph_new("s3");
  x = input(g, "x", NCC_DT_F32, SHAPE(4, 5));
  slice(g, x, 0, 3, 2, 1);
  assert_fails(g, NCC_ERR_INPUT, "axis 2 is out of range for rank 2");
  ncc_graph_free(g);
}

static void test_gather(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("g");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 3, 224, 224));
  ncc_value *sh = NODE(g, NCC_OP_SHAPE, "shape", x);
  ncc_value *a = NODE(g, NCC_OP_GATHER, "ga", sh, const_i64(g, I64S(0, -1)));
  ncc_value *b = NODE(g, NCC_OP_GATHER, "gb", sh, scalar_i64(g, -3));
  /* an embedding lookup: [1000, 64] with indices [N, 7] */
  ncc_value *emb = input(g, "emb", NCC_DT_F32, SHAPE(1000, 64));
  ncc_value *ids = input(g, "ids", NCC_DT_I64, SHAPE(N, 7));
  ncc_value *c = NODE(g, NCC_OP_GATHER, "gc", emb, ids);
  /* axis 1 on a 2x3 i64 constant */
  ncc_shape s23 = SHAPE(2, 3);
  ncc_value *m = ncc_graph_add_const(g, NULL, NCC_DT_I64, &s23,
                                     (int64_t[]){1, 2, 3, 4, 5, 6});
  ncc_value *d = NODE(g, NCC_OP_GATHER, "gd", m, const_i64(g, I64S(2, 0)));
  ncc_node_set_attr_int(g, last_node, "axis", 1);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&a->shape, SHAPE(2));
  assert_content(a, I64S(N, 224));
  assert_shape(&b->shape, scalar_shape);
  assert_content(b, I64S(3));
  assert_shape(&c->shape, SHAPE(N, 7, 64));
  assert_shape(&d->shape, SHAPE(2, 2));
  assert_content(d, I64S(3, 1, 6, 4));
  ncc_graph_free(g);

  g = ncc_graph_new("g2");
  x = input(g, "x", NCC_DT_F32, SHAPE(5, 3));
  NODE(g, NCC_OP_GATHER, "gbad", x, const_i64(g, I64S(1, 5)));
  assert_fails(
      g, NCC_ERR_INPUT,
      "node 'gbad' (Gather): index 5 is out of range for dim 0 of size 5");
  ncc_graph_free(g);
}

static void test_squeeze_split_concat(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("q");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 1, 6, 1));
  ncc_value *a = NODE(g, NCC_OP_SQUEEZE, "sq", x, const_i64(g, I64S(1, -1)));
  ncc_value *b = NODE(g, NCC_OP_UNSQUEEZE, "us", a, const_i64(g, I64S(-1, 0)));
  ncc_value *f = NODE(g, NCC_OP_FLATTEN, "fl", x);
  ncc_value *f0 = NODE(g, NCC_OP_FLATTEN, "fl0", x);
  ncc_node_set_attr_int(g, last_node, "axis", 0);
  ncc_value *t = NODE(g, NCC_OP_TRANSPOSE, "tr", x);
  ncc_node_set_attr_ints(g, last_node, "perm", I64S(2, 0, 3, 1));
  ncc_value *y = input(g, "y", NCC_DT_F32, SHAPE(N, 10));
  ncc_node *sp = ncc_graph_add_node(g, NCC_OP_SPLIT, "split", 1, &y, 3);
  ncc_value *parts[3];
  for (int i = 0; i < 3; i++) {
    parts[i] = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
    ncc_node_set_output(sp, i, parts[i]);
  }
  ncc_node_set_attr_int(g, sp, "axis", 1);
  ncc_node_set_attr_int(g, sp, "num_outputs", 3);
  ncc_value *cat = NODE(g, NCC_OP_CONCAT, "cat", parts[2], parts[0], y);
  ncc_node_set_attr_int(g, last_node, "axis", -1);
  ncc_value *catn = NODE(g, NCC_OP_CONCAT, "catn", y, y);
  ncc_node_set_attr_int(g, last_node, "axis", 0);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&a->shape, SHAPE(N, 6));
  assert_shape(&b->shape, SHAPE(1, N, 6, 1));
  assert_shape(&f->shape, SHAPE(N, 6));
  assert_int_equal(f0->shape.rank, 2); /* [1, N*6]: a fresh symbol */
  assert_int_equal(f0->shape.d[0], 1);
  assert_true(is_fresh(g, f0->shape.d[1]));
  assert_shape(&t->shape, SHAPE(6, N, 1, 1));
  assert_shape(&parts[0]->shape, SHAPE(N, 4));
  assert_shape(&parts[1]->shape, SHAPE(N, 4));
  assert_shape(&parts[2]->shape, SHAPE(N, 2));
  assert_shape(&cat->shape, SHAPE(N, 16));
  assert_true(is_fresh(g, catn->shape.d[0])); /* N + N */
  ncc_graph_free(g);

  g = ncc_graph_new("q2");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_SQUEEZE, "sq", x, const_i64(g, I64S(1)));
  assert_fails(g, NCC_ERR_INPUT,
               "node 'sq' (Squeeze): cannot squeeze axis 1 of size 3");
  ncc_graph_free(g);
  g = ncc_graph_new("q3");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  y = input(g, "y", NCC_DT_F32, SHAPE(2, 4));
  NODE(g, NCC_OP_CONCAT, "cat", x, y);
  ncc_node_set_attr_int(g, last_node, "axis", 0);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'cat' (Concat): input 1 has size 4 in dim 1, expected 3");
  ncc_graph_free(g);
  g = ncc_graph_new("q4");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_TRANSPOSE, "tr", x);
  ncc_node_set_attr_ints(g, last_node, "perm", I64S(0, 0));
  assert_fails(g, NCC_ERR_INPUT,
               "node 'tr' (Transpose): perm is not a permutation of 0..1");
  ncc_graph_free(g);
  g = ncc_graph_new("q5");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_UNSQUEEZE, "us", x, const_i64(g, I64S(0, 0)));
  assert_fails(g, NCC_ERR_INPUT, "node 'us' (Unsqueeze): axis 0 is repeated");
  ncc_graph_free(g);
}

/* ---- the other ops ---- */

static void test_misc_ops(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("m");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 16, 32));
  ncc_value *w = input(g, "w", NCC_DT_F32, SHAPE(32, 8));
  ncc_value *mm = NODE(g, NCC_OP_MATMUL, "mm", x, w);
  ncc_value *v = input(g, "v", NCC_DT_F32, SHAPE(32));
  ncc_value *mv = NODE(g, NCC_OP_MATMUL, "mv", x, v);
  ncc_value *a2 = input(g, "a2", NCC_DT_F32, SHAPE(4, 32));
  ncc_value *b8 = input(g, "b8", NCC_DT_F32, SHAPE(8));
  ncc_value *gm2 = NODE(g, NCC_OP_GEMM, "gemm2", a2, w, b8);
  ncc_value *sc = input(g, "sc", NCC_DT_F32, SHAPE(32));
  ncc_node *ln = ncc_graph_add_node(g, NCC_OP_LAYERNORM, "ln", 3,
                                    (ncc_value *[]){x, sc, sc}, 3);
  ncc_value *lo[3];
  for (int i = 0; i < 3; i++) {
    lo[i] = ncc_graph_add_value(g, NULL, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
    ncc_node_set_output(ln, i, lo[i]);
  }
  ncc_value *sm = NODE(g, NCC_OP_SOFTMAX, "sm", x);
  ncc_value *rm = NODE(g, NCC_OP_REDUCEMEAN, "rm", x, const_i64(g, I64S(-1)));
  ncc_value *rs = NODE(g, NCC_OP_REDUCESUM, "rs", x, const_i64(g, I64S(1)));
  ncc_node_set_attr_int(g, last_node, "keepdims", 0);
  ncc_value *rx = NODE(g, NCC_OP_REDUCEMAX, "rx", x);
  ncc_value *cl = NODE(
      g, NCC_OP_CLIP, "clip", x, NULL,
      ncc_graph_add_const(g, NULL, NCC_DT_F32, &scalar_shape, (float[]){6.0f}));
  ncc_value *pd =
      NODE(g, NCC_OP_PAD, "pad", x, const_i64(g, I64S(0, 1, 2, 0, 3, 4)));
  ncc_value *pr = NODE(g, NCC_OP_PAD, "padr", x, const_i64(g, I64S(2, 3)), NULL,
                       const_i64(g, I64S(-1)));
  ncc_node_set_attr_string(g, last_node, "mode", "reflect");
  ncc_value *img = input(g, "img", NCC_DT_F32, SHAPE(N, 4, 5, 5));
  ncc_value *bn = NODE(g, NCC_OP_BATCHNORM, "bn", img, b8, b8, b8, b8);
  assert_int_equal(ncc_infer_graph(g), NCC_ERR_INPUT); /* bn has 4 channels */
  assert_non_null(strstr(
      ncc_error_message(),
      "node 'bn' (BatchNormalization): scale has 8 entries, expected 4"));
  ncc_value *c4 = input(g, "c4", NCC_DT_F32, SHAPE(4));
  for (int i = 1; i < 5; i++) last_node->in[i] = c4;
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&mm->shape, SHAPE(N, 16, 8));
  assert_shape(&mv->shape, SHAPE(N, 16));
  assert_shape(&gm2->shape, SHAPE(4, 8));
  assert_shape(&lo[0]->shape, SHAPE(N, 16, 32));
  assert_shape(&lo[1]->shape, SHAPE(N, 16, 1));
  assert_int_equal(lo[2]->dtype, NCC_DT_F32);
  assert_shape(&sm->shape, SHAPE(N, 16, 32));
  assert_shape(&rm->shape, SHAPE(N, 16, 1));
  assert_shape(&rs->shape, SHAPE(N, 32));
  assert_shape(&rx->shape, SHAPE(1, 1, 1));
  assert_shape(&cl->shape, SHAPE(N, 16, 32));
  assert_shape(&pd->shape, SHAPE(N, 20, 38));
  assert_shape(&pr->shape, SHAPE(N, 16, 37));
  assert_shape(&bn->shape, SHAPE(N, 4, 5, 5));
  ncc_graph_free(g);

  /* Gemm: C [32] does not broadcast to [4, 8] */
  g = ncc_graph_new("m2");
  a2 = input(g, "a2", NCC_DT_F32, SHAPE(4, 32));
  w = input(g, "w", NCC_DT_F32, SHAPE(32, 8));
  v = input(g, "v", NCC_DT_F32, SHAPE(32));
  NODE(g, NCC_OP_GEMM, "gemm", a2, w, v);
  assert_fails(
      g, NCC_ERR_INPUT,
      "node 'gemm' (Gemm): input 2 of shape [32] does not broadcast to [4,8]");
  ncc_graph_free(g);
  g = ncc_graph_new("m3");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3, 4));
  w = input(g, "w", NCC_DT_F32, SHAPE(5, 6));
  NODE(g, NCC_OP_MATMUL, "mm", x, w);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'mm' (MatMul): inner dims differ: [2,3,4] x [5,6]");
  ncc_graph_free(g);
  g = ncc_graph_new("m4");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_PAD, "pad", x, const_i64(g, I64S(0, 3, 0, 3)));
  ncc_node_set_attr_string(g, last_node, "mode", "reflect");
  assert_fails(g, NCC_ERR_INPUT,
               "reflect pads (3, 3) are too large for dim 1 of size 3");
  ncc_graph_free(g);
}

static void test_range_cast_constants(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("rc");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 7));
  ncc_value *n0 = NODE(g, NCC_OP_GATHER, "g", NODE(g, NCC_OP_SHAPE, "s", x),
                       scalar_i64(g, 0));
  ncc_value *r1 =
      NODE(g, NCC_OP_RANGE, "r1", scalar_i64(g, 0), n0, scalar_i64(g, 1));
  ncc_value *r2 = NODE(g, NCC_OP_RANGE, "r2", scalar_i64(g, 0),
                       scalar_i64(g, 10), scalar_i64(g, 3));
  ncc_value *r3 = NODE(g, NCC_OP_RANGE, "r3", scalar_i64(g, 10),
                       scalar_i64(g, 1), scalar_i64(g, -4));
  float fv[3] = {0.5f, 2.0f, 0.25f};
  ncc_value *fs[3];
  for (int i = 0; i < 3; i++)
    fs[i] = ncc_graph_add_const(g, NULL, NCC_DT_F32, &scalar_shape, &fv[i]);
  ncc_value *r4 = NODE(g, NCC_OP_RANGE, "r4", fs[0], fs[1], fs[2]);
  ncc_value *c32 = NODE(g, NCC_OP_CAST, "c32", r2);
  ncc_node_set_attr_string(g, last_node, "to", "i32");
  ncc_value *cf = NODE(g, NCC_OP_CAST, "cf", r2);
  ncc_node_set_attr_string(g, last_node, "to", "f32");
  ncc_value *cb = NODE(g, NCC_OP_CAST, "cb", r2);
  ncc_node_set_attr_string(g, last_node, "to", "bool");
  ncc_value *k = node(g, NCC_OP_CONSTANT, "k", 0, NULL);
  ncc_attr *va = ncc_node_add_attr(g, last_node, "value", NCC_ATTR_TENSOR);
  va->t.dtype = NCC_DT_I64;
  va->t.shape = SHAPE(2);
  va->t.data = ncc_arena_memdup(&g->arena, (int64_t[]){4, 5}, 16);
  ncc_value *cz = NODE(g, NCC_OP_CONSTANTOFSHAPE, "cz", k);
  ncc_value *id = NODE(g, NCC_OP_IDENTITY, "id", n0);
  ncc_value *sub = NODE(g, NCC_OP_SUB, "sub", r2, scalar_i64(g, 1));
  ncc_value *dv = NODE(g, NCC_OP_DIV, "dv", r2, scalar_i64(g, 2));
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&r1->shape, SHAPE(N));
  assert_shape(&r2->shape, SHAPE(4));
  assert_content(r2, I64S(0, 3, 6, 9));
  assert_content(r3, I64S(10, 6, 2));
  assert_shape(&r4->shape, SHAPE(6));
  assert_int_equal(c32->dtype, NCC_DT_I32);
  assert_content(c32, I64S(0, 3, 6, 9));
  assert_int_equal(cf->dtype, NCC_DT_F32);
  assert_int_equal(cf->content_len, -1);
  assert_content(cb, I64S(0, 1, 1, 1));
  assert_content(k, I64S(4, 5));
  assert_int_equal(cz->dtype, NCC_DT_F32);
  assert_shape(&cz->shape, SHAPE(4, 5));
  assert_content(id, I64S(N));
  assert_content(sub, I64S(-1, 2, 5, 8));
  assert_content(dv, I64S(0, 1, 3, 4));
  ncc_graph_free(g);

  g = ncc_graph_new("rc2");
  x = input(g, "x", NCC_DT_F32, SHAPE(2));
  NODE(g, NCC_OP_CAST, "c", x);
  assert_fails(g, NCC_ERR_INPUT, "node 'c' (Cast): missing attribute 'to'");
  ncc_node_set_attr_int(g, last_node, "to", 7); /* an ONNX code: not ours */
  assert_fails(g, NCC_ERR_INPUT, "attribute 'to' must be a string");
  ncc_node_set_attr_string(g, last_node, "to", "f128");
  assert_fails(g, NCC_ERR_UNSUPPORTED, "cannot cast to unknown dtype 'f128'");
  ncc_graph_free(g);
  g = ncc_graph_new("rc3");
  NODE(g, NCC_OP_RANGE, "r", scalar_i64(g, 0), scalar_i64(g, 4),
       scalar_i64(g, 0));
  assert_fails(g, NCC_ERR_INPUT, "node 'r' (Range): delta is 0");
  ncc_graph_free(g);
  g = ncc_graph_new("rc4");
  NODE(g, NCC_OP_RANGE, "r", scalar_i64(g, INT64_MAX), scalar_i64(g, INT64_MIN),
       scalar_i64(g, -1));
  assert_fails(g, NCC_ERR_INPUT, "node 'r' (Range): range is too large");
  ncc_graph_free(g);
  g = ncc_graph_new("rc5");
  NODE(g, NCC_OP_RANGE, "r", scalar_i64(g, -1), scalar_i64(g, INT64_MIN),
       scalar_i64(g, -1));
  assert_fails(g, NCC_ERR_INPUT, "range of more than 1099511627776 elements");
  ncc_graph_free(g);
}

/* ---- dtypes, arity, declared shapes ---- */

static void test_bad_nodes(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("bad");
  ncc_value *x = input(g, "x", NCC_DT_U8, SHAPE(2, 3)); /* ONNX Relu: no unsigned */
  NODE(g, NCC_OP_RELU, "relu1", x);
  assert_fails(g, NCC_ERR_UNSUPPORTED,
               "node 'relu1' (Relu): dtype u8 is not supported");
  ncc_graph_free(g);

  g = ncc_graph_new("bad2");
  x = input(g, "x", NCC_DT_I16, SHAPE(2, 3)); /* not an ONNX MatMul type */
  ncc_value *y = input(g, "y", NCC_DT_I16, SHAPE(3, 4));
  NODE(g, NCC_OP_MATMUL, NULL, x, y);
  assert_fails(g, NCC_ERR_UNSUPPORTED,
               "node #0 (MatMul): dtype i16 is not supported");
  ncc_graph_free(g);

  g = ncc_graph_new("bad3");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  y = input(g, "y", NCC_DT_I64, SHAPE(2, 3));
  NODE(g, NCC_OP_ADD, "add", x, y);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'add' (Add): input 1 has dtype i64, expected f32");
  ncc_graph_free(g);

  g = ncc_graph_new("bad4");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_ADD, "add", x);
  assert_fails(g, NCC_ERR_INPUT, "node 'add' (Add): has 1 inputs, expected 2");
  ncc_graph_free(g);

  g = ncc_graph_new("bad5");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  ncc_value *s = input(g, "s", NCC_DT_F32, SHAPE(2));
  NODE(g, NCC_OP_RESHAPE, "rs", x, s);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'rs' (Reshape): input 1 has dtype f32, expected i64");
  ncc_graph_free(g);

  g = ncc_graph_new("bad6");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_SOFTMAX, "sm", x);
  ncc_node_set_attr_int(g, last_node, "axis", 2);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'sm' (Softmax): axis 2 is out of range for rank 2");
  ncc_graph_free(g);

  g = ncc_graph_new("bad7");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_GELU, "ge", x);
  ncc_node_set_attr_string(g, last_node, "approximate", "fast");
  assert_fails(g, NCC_ERR_INPUT,
               "attribute 'approximate' must be \"none\" or \"tanh\"");
  ncc_graph_free(g);

  g = ncc_graph_new("bad8");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 3));
  NODE(g, NCC_OP_WHERE, "wh", x, x, x);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'wh' (Where): input 0 has dtype f32, expected bool");
  ncc_graph_free(g);

  /* without axes, whether N is squeezed would depend on its value */
  g = ncc_graph_new("bad9");
  x = input(g, "x", NCC_DT_F32, SHAPE(sym(g, "N"), 1));
  NODE(g, NCC_OP_SQUEEZE, "sq", x);
  assert_fails(
      g, NCC_ERR_UNSUPPORTED,
      "node 'sq' (Squeeze): Squeeze without axes on a symbolic dim (0)");
  ncc_graph_free(g);

  /* a value used before the node that computes it */
  g = ncc_graph_new("bad10");
  x = input(g, "x", NCC_DT_F32, SHAPE(2));
  ncc_value *later =
      ncc_graph_add_value(g, "later", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  NODE(g, NCC_OP_ADD, "add", x, later);
  assert_fails(g, NCC_ERR_INPUT,
               "node 'add' (Add): input 1 ('later') has no type");
  ncc_graph_free(g);
}

static void test_declared_shapes(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("d");
  int64_t N = sym(g, "N");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 4));
  ncc_node *n = ncc_graph_add_node(g, NCC_OP_RELU, "r", 1, &x, 1);
  ncc_shape decl = SHAPE(8, 4);
  ncc_value *y = ncc_graph_add_value(g, "y", NCC_VAL_NODE, NCC_DT_F32, &decl);
  ncc_node_set_output(n, 0, y);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&y->shape, SHAPE(8, 4)); /* the declared static dim wins */
  ncc_graph_free(g);

  g = ncc_graph_new("d2");
  x = input(g, "x", NCC_DT_F32, SHAPE(2, 4));
  n = ncc_graph_add_node(g, NCC_OP_RELU, "r", 1, &x, 1);
  decl = SHAPE(2, 5);
  y = ncc_graph_add_value(g, "y", NCC_VAL_NODE, NCC_DT_F32, &decl);
  ncc_node_set_output(n, 0, y);
  assert_fails(
      g, NCC_ERR_INPUT,
      "node 'r' (Relu): output 'y' is declared with shape [2,5] but has [2,4]");
  y->shape = SHAPE(2, 4);
  y->dtype = NCC_DT_I64;
  assert_fails(g, NCC_ERR_INPUT,
               "node 'r' (Relu): output 'y' is declared i64 but computes f32");
  ncc_graph_free(g);

  /* re-running inference keeps fresh names and gives the same result */
  g = ncc_graph_new("d3");
  x = input(g, "x", NCC_DT_F32, SHAPE(6, 4));
  ncc_value *s = input(g, "s", NCC_DT_I64, SHAPE(3));
  y = NODE(g, NCC_OP_RESHAPE, "rs", x, s);
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  ncc_shape first = y->shape;
  assert_int_equal(ncc_infer_graph(g), NCC_OK);
  assert_shape(&y->shape, first);
  ncc_graph_free(g);
}

/* ---- run time: concrete tensors, no graph ---- */

static void test_runtime_tinfo(void **state) {
  (void)state;
  ncc_graph *g = ncc_graph_new("rt");
  ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(2, 3, 4));
  ncc_value *s = input(g, "s", NCC_DT_I64, SHAPE(2));
  NODE(g, NCC_OP_RESHAPE, "rs", x, s);
  ncc_node *n = last_node;

  ncc_tensor tx, ts;
  assert_int_equal(ncc_tensor_alloc(&tx, NCC_DT_F32, 3, (int64_t[]){2, 3, 4}),
                   NCC_OK);
  assert_int_equal(ncc_tensor_alloc(&ts, NCC_DT_I64, 1, (int64_t[]){2}),
                   NCC_OK);
  ((int64_t *)ts.data)[0] = 4;
  ((int64_t *)ts.data)[1] = -1;
  ncc_tinfo in[2], out[1];
  ncc_tinfo_from_tensor(&in[0], &tx);
  ncc_tinfo_from_tensor(&in[1], &ts);
  assert_int_equal(in[0].content_len, -1);
  assert_int_equal(in[1].content_len, 2);
  assert_int_equal(ncc_infer_node(NULL, n, in, out), NCC_OK);
  assert_shape(&out[0].shape, SHAPE(4, 6));

  /* unknown content at run time is an error, not a fresh symbol */
  in[1].content_len = -1;
  in[1].data = NULL;
  assert_int_equal(ncc_infer_node(NULL, n, in, out), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(),
                         "node 'rs' (Reshape): an output dim depends on data"));

  /* Gather indices are range-checked from raw data too */
  ncc_tensor ti;
  assert_int_equal(ncc_tensor_alloc(&ti, NCC_DT_I64, 1, (int64_t[]){100}),
                   NCC_OK);
  ((int64_t *)ti.data)[99] = 2;
  ncc_value *gx = input(g, "gx", NCC_DT_F32, SHAPE(2, 3));
  ncc_value *gi = input(g, "gi", NCC_DT_I64, SHAPE(100));
  NODE(g, NCC_OP_GATHER, "gt", gx, gi);
  ncc_tensor tg;
  assert_int_equal(ncc_tensor_alloc(&tg, NCC_DT_F32, 2, (int64_t[]){2, 3}),
                   NCC_OK);
  ncc_tinfo_from_tensor(&in[0], &tg);
  ncc_tinfo_from_tensor(&in[1], &ti);
  assert_int_equal(ncc_infer_node(NULL, last_node, in, out), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(),
                         "index 2 is out of range for dim 0 of size 2"));
  ((int64_t *)ti.data)[99] = -2;
  assert_int_equal(ncc_infer_node(NULL, last_node, in, out), NCC_OK);
  assert_shape(&out[0].shape, SHAPE(100, 3));

  /* tinfo from a constant value carries its content */
  ncc_value *k = const_i64(g, I64S(7, 8, 9));
  ncc_tinfo tk;
  ncc_tinfo_from_value(&tk, k);
  assert_int_equal(tk.content_len, 3);
  assert_int_equal(tk.content[2], 9);
  assert_ptr_equal(tk.data, k->data);

  ncc_tensor_free(&tx);
  ncc_tensor_free(&ts);
  ncc_tensor_free(&ti);
  ncc_tensor_free(&tg);
  ncc_graph_free(g);
}

/* ---- allocation failure ---- */

static void test_alloc_failure(void **state) {
  (void)state;
  for (int budget = 0; budget < 6; budget++) {
    ncc_graph *g = ncc_graph_new("oom");
    int64_t N = sym(g, "N");
    ncc_value *x = input(g, "x", NCC_DT_F32, SHAPE(N, 8, 128));
    ncc_value *sh = NODE(g, NCC_OP_SHAPE, "shape", x);
    ncc_value *s = input(g, "s", NCC_DT_I64, SHAPE(2));
    NODE(g, NCC_OP_RESHAPE, "rs", x, s); /* needs fresh symbols */
    NODE(g, NCC_OP_GATHER, "g", sh, const_i64(g, I64S(0)));
    test_alloc_arm(budget);
    ncc_status st = ncc_infer_graph(g);
    test_alloc_disarm();
    assert_true(st == NCC_OK || st == NCC_ERR_NOMEM);
    ncc_graph_free(g);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_broadcast),
      cmocka_unit_test(test_eltwise_types),
      cmocka_unit_test(test_conv),
      cmocka_unit_test(test_conv_errors),
      cmocka_unit_test(test_pool),
      cmocka_unit_test(test_torch_reshape_subgraph),
      cmocka_unit_test(test_torch_expand_subgraph),
      cmocka_unit_test(test_reshape),
      cmocka_unit_test(test_slice),
      cmocka_unit_test(test_gather),
      cmocka_unit_test(test_squeeze_split_concat),
      cmocka_unit_test(test_misc_ops),
      cmocka_unit_test(test_range_cast_constants),
      cmocka_unit_test(test_bad_nodes),
      cmocka_unit_test(test_declared_shapes),
      cmocka_unit_test(test_runtime_tinfo),
      cmocka_unit_test(test_alloc_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
