/* tests/ops/op_cases.c — the op cases run against every target by
 * tests/ops/test_backend_ops.c, and the builders of their graphs.
 *
 * One row per case (the table is at the end). A builder makes one graph;
 * where the op has several interesting shapes or attribute variants they
 * are parallel nodes of that one graph, each with its own inputs and
 * output, so a target compiles one program per case (PoCL builds programs
 * slowly). Sizes are odd on purpose (1, 3, 17, 1000, ...) so vector tails
 * and broadcasting paths are hit, and a symbolic dim N (SYMN in a shape)
 * checks that one compiled module serves every size it is run at.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>

#include "op_cases.h"
#include "tests/unit/test_graph.h"

/* ---- recording the inputs while building ---- */

#define SYMN (-1) /* a dim that is the symbolic N */
#define MAX_INPUTS 40
#define MAX_OUTPUTS 40

typedef enum { GEN_UNIFORM, GEN_TIES, GEN_BOOL } gen_kind;

static struct {
  ncc_dtype dt;
  int rank;
  int64_t d[4];
  double lo, hi;
  gen_kind gen;
  ncc_value *v;
} ins[MAX_INPUTS];
static int n_ins;
static char labels[MAX_OUTPUTS][48];
static int out_in0[MAX_OUTPUTS]; /* the input (index) its node reads first, or -1 */
static int n_outs;

static ncc_value *in_gen(ncc_dtype dt, int rank, const int64_t *d, double lo, double hi,
                         gen_kind gen) {
  assert_true(n_ins < MAX_INPUTS && rank <= 4);
  int64_t gd[4];
  ins[n_ins].dt = dt;
  ins[n_ins].rank = rank;
  for (int k = 0; k < rank; k++) {
    ins[n_ins].d[k] = d[k];
    gd[k] = d[k] == SYMN ? sym("N") : d[k];
  }
  ins[n_ins].lo = lo;
  ins[n_ins].hi = hi;
  ins[n_ins].gen = gen;
  ins[n_ins].v = input(dt, rank, gd);
  return ins[n_ins++].v;
}

static ncc_value *in_f32(int rank, const int64_t *d, double lo, double hi) {
  return in_gen(NCC_DT_F32, rank, d, lo, hi, GEN_UNIFORM);
}

/* The case's range, or [lo, hi) when the case gives none. */
static ncc_value *in_case(const op_case *c, int rank, const int64_t *d, double lo, double hi) {
  if (c->lo != 0 || c->hi != 0) lo = c->lo, hi = c->hi;
  return in_f32(rank, d, lo, hi);
}

/* A graph output, labelled with the op of the node that made it. */
static void out(ncc_value *v) {
  assert_true(n_outs < MAX_OUTPUTS);
  snprintf(labels[n_outs], sizeof labels[n_outs], "output %d (%s)", n_outs,
           ncc_op_name(last_node->op));
  out_in0[n_outs] = -1;
  for (int k = 0; k < n_ins; k++)
    if (last_node->n_in > 0 && last_node->in[0] == ins[k].v) out_in0[n_outs] = k;
  n_outs++;
  output(v);
}

static void set_int(const char *name, int64_t v) {
  assert_int_equal(ncc_node_set_attr_int(G, last_node, name, v), NCC_OK);
}
static void set_float(const char *name, float v) {
  assert_int_equal(ncc_node_set_attr_float(G, last_node, name, v), NCC_OK);
}
static void set_ints(const char *name, const int64_t *v, int n) {
  assert_int_equal(ncc_node_set_attr_ints(G, last_node, name, v, n), NCC_OK);
}

/* ---- elementwise ---- */

static const int64_t sizes1[4] = {1, 3, 17, 1000};

/* The op over lengths 1, 3, 17, 1000 and over a symbolic length N (run at
 * those four). attr "alpha": alpha = 0.3; "tanh": approximate = tanh. */
static void build_unary(const op_case *c) {
  for (int s = 0; s < 5; s++) {
    int64_t d[1] = {s < 4 ? sizes1[s] : SYMN};
    ncc_value *y = OP(c->op, in_case(c, 1, d, 0, 0));
    if (c->attr && strcmp(c->attr, "tanh") == 0)
      assert_int_equal(ncc_node_set_attr_string(G, last_node, "approximate", "tanh"), NCC_OK);
    else if (c->attr)
      set_float(c->attr, 0.3f);
    out(y);
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
    {0, {0}, 0, {0}},
    {2, {3, 17}, 1, {17}},
    {2, {3, 1}, 2, {1, 17}},
    {4, {2, 3, 4, 5}, 4, {1, 3, 1, 1}},
    {3, {5, 1, 7}, 2, {3, 1}},
    {2, {1, 1000}, 2, {3, 1000}},
};

/* The op on eight pairs of shapes (equal, scalar, broadcast both ways),
 * operands in [0.5, 2) so that Pow stays real; attr "ties": operands from
 * {1, 1.5, 2} so that Equal is sometimes true and Max/Less see ties. */
static void build_binary(const op_case *c) {
  gen_kind g = c->attr && strcmp(c->attr, "ties") == 0 ? GEN_TIES : GEN_UNIFORM;
  for (size_t s = 0; s < sizeof bshapes / sizeof *bshapes; s++) {
    ncc_value *a = in_gen(NCC_DT_F32, bshapes[s].ra, bshapes[s].a, 0.5, 2, g);
    ncc_value *b = in_gen(NCC_DT_F32, bshapes[s].rb, bshapes[s].b, 0.5, 2, g);
    out(OP(c->op, a, b));
  }
}

/* Max or Min of three broadcast operands, and of two / three with one
 * computed (Max(-b, c, b), Min(c, b)). */
static void build_variadic(const op_case *c) {
  int64_t d3[2] = {3, 17}, d1[1] = {17}, dc[2] = {3, 1};
  ncc_value *a = in_f32(2, d3, -1, 1), *b = in_f32(1, d1, -1, 1), *cc = in_f32(2, dc, -1, 1);
  out(OP(c->op, a, b, cc));
  if (c->op == NCC_OP_MAX)
    out(OP(NCC_OP_MAX, OP(NCC_OP_NEG, b), cc, b));
  else
    out(OP(NCC_OP_MIN, cc, b));
}

/* Where(bool [3,17], [17], [3,1]) */
static void build_where(const op_case *c) {
  (void)c;
  int64_t d3[2] = {3, 17}, d1[1] = {17}, dc[2] = {3, 1};
  ncc_value *cond = in_gen(NCC_DT_BOOL, 2, d3, 0, 1, GEN_BOOL);
  out(OP(NCC_OP_WHERE, cond, in_f32(1, d1, -1, 1), in_f32(2, dc, -1, 1)));
}

/* Clip with both bounds, with only min, with neither; lengths 17, 1000. */
static void build_clip(const op_case *c) {
  (void)c;
  static const int64_t lens[2] = {17, 1000};
  for (int s = 0; s < 2; s++) {
    ncc_value *x = in_f32(1, &lens[s], -1, 1);
    out(OP(NCC_OP_CLIP, x, scalar_f32(-0.5f), scalar_f32(0.25f)));
    out(OP(NCC_OP_CLIP, x, scalar_f32(-0.5f)));
    out(OP(NCC_OP_CLIP, x));
  }
}

/* Sub(Tanh(a), b), large enough that the kernels run on every pool thread. */
static void build_large(const op_case *c) {
  (void)c;
  int64_t d[2] = {301, 1999}, db[2] = {301, 1};
  ncc_value *a = in_f32(2, d, -2, 2), *b = in_f32(2, db, -2, 2);
  out(OP(NCC_OP_SUB, OP(NCC_OP_TANH, a), b));
}

/* ---- contractions ---- */

/* [m,k] x [k,n] with B an input and with B a (packed) constant. */
static void build_matmul(const op_case *c) {
  int64_t da[2] = {c->mm.m, c->mm.k}, db[2] = {c->mm.k, c->mm.n};
  ncc_value *a = in_f32(2, da, -1, 1);
  out(OP(NCC_OP_MATMUL, a, in_f32(2, db, -1, 1)));
  out(OP(NCC_OP_MATMUL, a, rand_const(2, db)));
}

/* Batch dims: equal on both sides, folded into M with a 2-D B (constant
 * or input), A shared by B's batch, and a symbolic batch N. */
static void build_matmul_batched(const op_case *c) {
  (void)c;
  int64_t a4[4] = {2, 3, 7, 9}, b4[4] = {2, 3, 9, 5}, a3[3] = {2, 5, 9}, b2[2] = {9, 33};
  int64_t a2[2] = {7, 9}, an[3] = {SYMN, 7, 16}, bn[2] = {16, 20}, an2[3] = {SYMN, 5, 9};
  ncc_value *B4 = in_f32(4, b4, -1, 1);
  out(OP(NCC_OP_MATMUL, in_f32(4, a4, -1, 1), B4));
  out(OP(NCC_OP_MATMUL, in_f32(3, a3, -1, 1), rand_const(2, b2)));
  out(OP(NCC_OP_MATMUL, in_f32(3, a3, -1, 1), in_f32(2, b2, -1, 1)));
  out(OP(NCC_OP_MATMUL, in_f32(2, a2, -1, 1), B4));
  out(OP(NCC_OP_MATMUL, in_f32(3, an, -1, 1), rand_const(2, bn)));
  out(OP(NCC_OP_MATMUL, in_f32(3, an2, -1, 1), rand_const(2, b2)));
}

/* Gemm(A, B, C) with B a constant and with B an input. */
static void build_gemm(const op_case *c) {
  int64_t m = c->gemm.m, k = c->gemm.k, n = c->gemm.n;
  int64_t da[2] = {c->gemm.ta ? k : m, c->gemm.ta ? m : k};
  int64_t db[2] = {c->gemm.tb ? n : k, c->gemm.tb ? k : n};
  ncc_value *a = in_f32(2, da, -1, 1);
  for (int b_input = 0; b_input < 2; b_input++) {
    ncc_value *b = b_input ? in_f32(2, db, -1, 1) : rand_const(2, db);
    ncc_value *y = c->gemm.rank_c >= 0 ? OP(NCC_OP_GEMM, a, b, rand_const(c->gemm.rank_c, c->gemm.c))
                                       : OP(NCC_OP_GEMM, a, b);
    set_int("transA", c->gemm.ta);
    set_int("transB", c->gemm.tb);
    set_float("alpha", c->gemm.alpha);
    set_float("beta", c->gemm.beta);
    out(y);
  }
}

/* ---- row-wise: softmax, norms, reductions ---- */

static const int64_t row_shapes[5][2] = {{3, 17}, {2, 1000}, {5, 1}, {1, 16}, {4, 33}};

/* Softmax (axis -1), LogSoftmax (axis 1), LayerNorm (axis -1, scale and
 * bias, epsilon 1e-3) over five row shapes. */
static void build_rows(const op_case *c) {
  for (int s = 0; s < 5; s++) {
    ncc_value *x = in_f32(2, row_shapes[s], -4, 4);
    if (c->op == NCC_OP_LAYERNORM) {
      out(OP(c->op, x, rand_const(1, row_shapes[s] + 1), rand_const(1, row_shapes[s] + 1)));
      set_int("axis", -1);
      set_float("epsilon", 1e-3f);
    } else {
      out(OP(c->op, x));
      set_int("axis", c->op == NCC_OP_SOFTMAX ? -1 : 1);
    }
  }
}

/* [2,3,20]: LayerNorm over the last two axes (scale only); Softmax over
 * axis 1, which no target compiles (host kernel). */
static void build_rows_3d(const op_case *c) {
  int64_t d3[3] = {2, 3, 20};
  ncc_value *x = in_f32(3, d3, -4, 4);
  if (c->op == NCC_OP_LAYERNORM) {
    out(OP(c->op, x, rand_const(2, d3 + 1)));
    set_int("axis", 1);
    set_float("epsilon", 1e-3f);
  } else {
    out(OP(c->op, x));
    set_int("axis", 1);
  }
}

/* [4,5,17] over the last axis (keepdims), the last two (no keepdims) and
 * all axes; the row shapes over the last axis and over all. */
static void build_reduce(const op_case *c) {
  static const int64_t d[3] = {4, 5, 17}, last[1] = {-1}, two[2] = {2, 1};
  ncc_value *x = in_f32(3, d, -4, 4);
  out(OP(c->op, x, axes_const(1, last)));
  set_int("keepdims", 1);
  out(OP(c->op, x, axes_const(2, two)));
  set_int("keepdims", 0);
  out(OP(c->op, x));
  for (int s = 0; s < 5; s++) {
    if (s == 3) continue; /* {1, 16}: no reduction case before */
    ncc_value *r = in_f32(2, row_shapes[s], -4, 4);
    out(OP(c->op, r, axes_const(1, last)));
    out(OP(c->op, r));
  }
}

/* ReduceSum, ReduceMean, ReduceMax over the first axis of [4,5,17]: not a
 * row reduction, so it runs on the host kernel. */
static void build_reduce_first(const op_case *c) {
  (void)c;
  static const int64_t d[3] = {4, 5, 17}, first[1] = {0};
  static const ncc_op red[3] = {NCC_OP_REDUCESUM, NCC_OP_REDUCEMEAN, NCC_OP_REDUCEMAX};
  ncc_value *x = in_f32(3, d, -4, 4);
  for (int r = 0; r < 3; r++) {
    out(OP(red[r], x, axes_const(1, first)));
    set_int("keepdims", 1);
  }
}

static void build_gap(const op_case *c) {
  (void)c;
  int64_t d4[4] = {2, 3, 5, 7};
  out(OP(NCC_OP_GLOBALAVGPOOL, in_f32(4, d4, -4, 4)));
}

/* BatchNormalization over NCHW with positive variances (Abs of a
 * constant, itself a kernel). */
static void build_batchnorm(const op_case *c) {
  (void)c;
  int64_t d4[4] = {2, 3, 5, 7}, dc[1] = {3};
  ncc_value *x = in_f32(4, d4, -2, 2);
  ncc_value *var = OP(NCC_OP_ABS, rand_const(1, dc));
  out(OP(NCC_OP_BATCHNORM, x, rand_const(1, dc), rand_const(1, dc), rand_const(1, dc), var));
}

/* ---- convolution, pooling, layout ---- */

static void build_conv(const op_case *c) {
  ncc_value *x = in_f32(4, c->conv.x, -1, 1);
  ncc_value *w = rand_const(4, c->conv.w);
  ncc_value *y = c->conv.bias ? OP(NCC_OP_CONV, x, w, rand_const(1, c->conv.w))
                              : OP(NCC_OP_CONV, x, w);
  int64_t s2[2] = {c->conv.stride, c->conv.stride}, d2[2] = {c->conv.dil, c->conv.dil};
  int64_t p4[4] = {c->conv.pad, c->conv.pad, c->conv.pad, c->conv.pad};
  const int64_t *pp = c->conv.pads;
  if (pp[0] || pp[1] || pp[2] || pp[3]) memcpy(p4, pp, sizeof p4);
  set_ints("strides", s2, 2);
  set_ints("dilations", d2, 2);
  set_ints("pads", p4, 4);
  set_int("group", c->conv.group);
  out(y);
}

/* Three windows over [2,3,17,35]: MaxPool 3/2/1, 2/2/0 ceil_mode,
 * 3/1/1; AveragePool 3/2/1, 3/2/1 count_include_pad, 2/2/0. */
static void build_pool(const op_case *c) {
  static const int64_t maxw[3][5] = {{3, 2, 1, 0, 0}, {2, 2, 0, 1, 0}, {3, 1, 1, 0, 0}};
  static const int64_t avgw[3][5] = {{3, 2, 1, 0, 0}, {3, 2, 1, 0, 1}, {2, 2, 0, 0, 0}};
  const int64_t(*win)[5] = c->op == NCC_OP_MAXPOOL ? maxw : avgw;
  int64_t dx[4] = {2, 3, 17, 35};
  ncc_value *x = in_f32(4, dx, -1, 1);
  for (int v = 0; v < 3; v++) {
    out(OP(c->op, x));
    int64_t k2[2] = {win[v][0], win[v][0]}, s2[2] = {win[v][1], win[v][1]};
    int64_t p4[4] = {win[v][2], win[v][2], win[v][2], win[v][2]};
    set_ints("kernel_shape", k2, 2);
    set_ints("strides", s2, 2);
    set_ints("pads", p4, 4);
    if (win[v][3]) set_int("ceil_mode", 1);
    if (win[v][4]) set_int("count_include_pad", 1);
  }
}

static void build_transpose(const op_case *c) {
  (void)c;
  static const struct {
    int r;
    int64_t d[4], perm[4];
  } t[] = {
      {2, {17, 33}, {1, 0}},
      {3, {2, 3, 1000}, {1, 0, 2}},    /* last dim stays: contiguous */
      {4, {2, 3, 5, 7}, {0, 2, 1, 3}}, /* attention head split */
      {4, {2, 3, 5, 7}, {3, 1, 0, 2}},
      {1, {9}, {0}},
      {4, {2, 3, 17, 35}, {0, 2, 1, 3}},
      {4, {2, 3, 17, 35}, {3, 1, 0, 2}},
      {4, {2, 3, 17, 35}, {0, 1, 3, 2}},
  };
  for (size_t k = 0; k < sizeof t / sizeof *t; k++) {
    out(OP(NCC_OP_TRANSPOSE, in_f32(t[k].r, t[k].d, -1, 1)));
    set_ints("perm", t[k].perm, t[k].r);
  }
}

/* ---- the table ----
 * atol/rtol bound a target's error against ref; on cpu the ops with a row
 * in tests/tol_cpu_ref.def use that row's ulp budget instead, and the other
 * unary/binary ops must be bit-exact (op_case_compare). */

#define UNARY(op_, lo_, hi_, atol_, rtol_, attr_, name_)                                  \
  {.name = name_, .build = build_unary, .op = NCC_OP_##op_, .lo = lo_, .hi = hi_,       \
   .attr = attr_, .atol = atol_, .rtol = rtol_, .kernels = 5, .n_sets = 4, .n_values = {1, 3, 17, 1000}}
#define BINARY(op_, attr_, name_)                                                        \
  {.name = name_, .build = build_binary, .op = NCC_OP_##op_, .attr = attr_, .atol = 1e-6, \
   .rtol = 2e-6, .kernels = 8}
#define MATMUL(m_, k_, n_, name_)                                                        \
  {.name = name_, .build = build_matmul, .op = NCC_OP_MATMUL, .mm = {m_, k_, n_},        \
   .atol = 1e-5, .rtol = 1e-4, .kernels = 2}
/* cpu compiles a transposed B only when it is a constant (it packs it);
 * with B an input that node runs on the host kernel */
#define GEMM(m_, k_, n_, ta_, tb_, rc_, c0_, c1_, al_, be_, name_)                       \
  {.name = name_, .build = build_gemm, .op = NCC_OP_GEMM,                               \
   .gemm = {m_, k_, n_, ta_, tb_, rc_, {c0_, c1_}, al_, be_}, .atol = 1e-5, .rtol = 1e-4,  \
   .kernels = 2, .kernels_on = tb_ ? "cpu=1" : NULL}
#define CONV(x0, x1, x2, x3, w0, w1, w2, w3, st_, pad_, dil_, grp_, bias_, name_)         \
  {.name = name_, .build = build_conv, .op = NCC_OP_CONV,                               \
   .conv = {{x0, x1, x2, x3}, {w0, w1, w2, w3}, st_, pad_, dil_, grp_, bias_, {0, 0, 0, 0}}, \
   .atol = 1e-5, .rtol = 1e-4, .kernels = 1}
/* pads per side, top/left/bottom/right (ONNX's x1_begin, x2_begin,
 * x1_end, x2_end) */
#define CONVP(x0, x1, x2, x3, w0, w1, w2, w3, st_, pt, pl, pb, pr, dil_, grp_, bias_, name_) \
  {.name = name_, .build = build_conv, .op = NCC_OP_CONV,                               \
   .conv = {{x0, x1, x2, x3}, {w0, w1, w2, w3}, st_, 0, dil_, grp_, bias_, {pt, pl, pb, pr}}, \
   .atol = 1e-5, .rtol = 1e-4, .kernels = 1}

const op_case op_cases[] = {
    UNARY(NEG, -3, 3, 0, 0, NULL, "Neg"),
    UNARY(ABS, -3, 3, 0, 0, NULL, "Abs"),
    UNARY(SQRT, 0, 9, 1e-6, 1e-6, NULL, "Sqrt"),
    UNARY(RECIPROCAL, 0.5, 4, 1e-6, 1e-6, NULL, "Reciprocal"),
    UNARY(EXP, -8, 8, 1e-6, 2e-6, NULL, "Exp"),
    UNARY(EXP, -100, 89, 1e-6, 2e-6, NULL, "Exp/under- and overflow"),
    UNARY(LOG, 0.01, 50, 1e-6, 2e-6, NULL, "Log"),
    UNARY(ERF, -3, 3, 1e-6, 2e-6, NULL, "Erf"),
    UNARY(ERF, -0.1, 0.1, 1e-6, 2e-6, NULL, "Erf/near 0"),
    UNARY(ERF, -12, 12, 1e-6, 2e-6, NULL, "Erf/saturating"),
    UNARY(TANH, -5, 5, 1e-6, 2e-6, NULL, "Tanh"),
    UNARY(TANH, -0.7, 0.7, 1e-6, 2e-6, NULL, "Tanh/polynomial branch"),
    UNARY(TANH, -30, 30, 1e-6, 2e-6, NULL, "Tanh/saturating"),
    UNARY(SIGMOID, -20, 20, 1e-6, 2e-6, NULL, "Sigmoid"),
    UNARY(RELU, -3, 3, 0, 0, NULL, "Relu"),
    UNARY(LEAKYRELU, -3, 3, 1e-7, 1e-6, "alpha", "LeakyRelu/alpha 0.3"),
    UNARY(HARDSIGMOID, -6, 6, 1e-6, 1e-6, "alpha", "HardSigmoid/alpha 0.3"),
    UNARY(HARDSWISH, -6, 6, 1e-6, 1e-6, NULL, "HardSwish"),
    UNARY(GELU, -5, 5, 1e-6, 2e-6, NULL, "Gelu"),
    UNARY(GELU, -5, 5, 1e-6, 2e-6, "tanh", "Gelu/approximate tanh"),
    UNARY(SOFTPLUS, -30, 30, 1e-6, 2e-6, NULL, "Softplus"),
    UNARY(SOFTPLUS, -100, 100, 1e-6, 2e-6, NULL, "Softplus/wide"),
    UNARY(SIN, -10, 10, 1e-6, 2e-6, NULL, "Sin"),
    UNARY(COS, -10, 10, 1e-6, 2e-6, NULL, "Cos"),
    UNARY(TAN, -1.4, 1.4, 1e-6, 2e-6, NULL, "Tan"),
    UNARY(ASIN, -0.99, 0.99, 1e-6, 2e-6, NULL, "Asin"),
    UNARY(ACOS, -0.99, 0.99, 1e-6, 2e-6, NULL, "Acos"),
    UNARY(ATAN, -10, 10, 1e-6, 2e-6, NULL, "Atan"),
    UNARY(SINH, -10, 10, 1e-6, 2e-6, NULL, "Sinh"),
    UNARY(COSH, -10, 10, 1e-6, 2e-6, NULL, "Cosh"),
    UNARY(ASINH, -10, 10, 1e-6, 2e-6, NULL, "Asinh"),
    UNARY(ACOSH, 1, 20, 1e-6, 2e-6, NULL, "Acosh"),
    UNARY(ATANH, -0.99, 0.99, 1e-6, 2e-6, NULL, "Atanh"),
    UNARY(FLOOR, -5, 5, 0, 0, NULL, "Floor"),
    UNARY(CEIL, -5, 5, 0, 0, NULL, "Ceil"),
    UNARY(ROUND, -5, 5, 0, 0, NULL, "Round"),
    UNARY(SIGN, -3, 3, 0, 0, NULL, "Sign"),
    UNARY(ELU, -5, 5, 1e-6, 2e-6, "alpha", "Elu/alpha 0.3"),
    UNARY(SELU, -5, 5, 1e-6, 2e-6, NULL, "Selu"),
    UNARY(CELU, -5, 5, 1e-6, 2e-6, "alpha", "Celu/alpha 0.3"),
    UNARY(THRESHOLDEDRELU, -3, 3, 0, 0, "alpha", "ThresholdedRelu/alpha 0.3"),
    UNARY(MISH, -20, 20, 1e-6, 2e-6, NULL, "Mish"),
    /* every target's executor hands Identity's input on: no kernel (the
     * AOT object still copies: --emit=obj has no executor) */
    {.name = "Identity", .build = build_unary, .op = NCC_OP_IDENTITY, .lo = -3, .hi = 3,
     .atol = 0, .rtol = 0, .kernels = 0,
     .n_sets = 4, .n_values = {1, 3, 17, 1000}},

    BINARY(ADD, NULL, "Add/broadcast"),
    BINARY(SUB, NULL, "Sub/broadcast"),
    BINARY(MUL, NULL, "Mul/broadcast"),
    BINARY(DIV, NULL, "Div/broadcast"),
    BINARY(POW, NULL, "Pow/broadcast"),
    BINARY(MAX, "ties", "Max/broadcast"),
    BINARY(MIN, "ties", "Min/broadcast"),
    BINARY(EQUAL, "ties", "Equal/broadcast"),
    BINARY(LESS, "ties", "Less/broadcast"),
    BINARY(GREATER, "ties", "Greater/broadcast"),
    {.name = "Max/variadic", .build = build_variadic, .op = NCC_OP_MAX, .kernels = 3},
    {.name = "Min/variadic", .build = build_variadic, .op = NCC_OP_MIN, .kernels = 2},
    {.name = "Where/broadcast", .build = build_where, .op = NCC_OP_WHERE, .kernels = 1},
    {.name = "Clip/bounds", .build = build_clip, .op = NCC_OP_CLIP, .kernels = 6},
    {.name = "Sub/large", .build = build_large, .op = NCC_OP_SUB, .atol = 1e-6, .rtol = 1e-6,
     .kernels = 2},

    MATMUL(1, 1, 1, "MatMul/1x1x1"),
    MATMUL(3, 17, 5, "MatMul/3x17x5"),
    MATMUL(7, 33, 40, "MatMul/7x33x40"),
    MATMUL(13, 64, 100, "MatMul/13x64x100"),
    MATMUL(6, 8, 32, "MatMul/6x8x32"),
    MATMUL(12, 3, 33, "MatMul/12x3x33"),
    MATMUL(64, 1000, 17, "MatMul/64x1000x17"),
    MATMUL(64, 100, 17, "MatMul/64x100x17"),
    MATMUL(70, 9, 130, "MatMul/70x9x130"),
    /* cpu runs A [7,9] x B [2,3,9,5] (A shared by B's batch) on the host */
    {.name = "MatMul/batched", .build = build_matmul_batched, .op = NCC_OP_MATMUL,
     .atol = 1e-5, .rtol = 1e-4, .kernels = 6, .kernels_on = "cpu=5", .n_sets = 4, .n_values = {1, 2, 3, 5}},
    GEMM(5, 7, 33, 0, 0, 1, 33, 0, 1.0f, 1.0f, "Gemm/bias [N]"),
    GEMM(5, 7, 33, 0, 1, 1, 33, 0, 1.0f, 1.0f, "Gemm/transB"),
    GEMM(17, 9, 20, 1, 0, 2, 17, 20, 0.5f, 2.0f, "Gemm/transA, full C"),
    GEMM(17, 9, 20, 1, 1, 2, 17, 1, 1.0f, -1.0f, "Gemm/C [M,1]"),
    GEMM(4, 3, 2, 0, 0, 0, 0, 0, 1.5f, 1.0f, "Gemm/scalar C"),
    GEMM(8, 31, 45, 0, 0, -1, 0, 0, 1.0f, 1.0f, "Gemm/no C"),
    GEMM(130, 40, 70, 0, 1, 2, 1, 70, 1.0f, 0.5f, "Gemm/C [1,N], large"),

    {.name = "Softmax/rows", .build = build_rows, .op = NCC_OP_SOFTMAX, .atol = 1e-5,
     .rtol = 1e-4, .kernels = 5},
    {.name = "LogSoftmax/rows", .build = build_rows, .op = NCC_OP_LOGSOFTMAX, .atol = 1e-5,
     .rtol = 1e-4, .kernels = 5},
    {.name = "LayerNormalization/rows", .build = build_rows, .op = NCC_OP_LAYERNORM,
     .atol = 1e-5, .rtol = 1e-4, .kernels = 5},
    {.name = "LayerNormalization/two axes", .build = build_rows_3d, .op = NCC_OP_LAYERNORM,
     .atol = 1e-5, .rtol = 1e-4, .kernels = 1},
    {.name = "Softmax/axis 1 of 3 (host)", .build = build_rows_3d, .op = NCC_OP_SOFTMAX,
     .atol = 1e-5, .rtol = 1e-4, .kernels = 0},
    {.name = "ReduceSum/rows", .build = build_reduce, .op = NCC_OP_REDUCESUM, .atol = 1e-5,
     .rtol = 1e-4, .kernels = 11},
    {.name = "ReduceMean/rows", .build = build_reduce, .op = NCC_OP_REDUCEMEAN, .atol = 1e-5,
     .rtol = 1e-4, .kernels = 11},
    {.name = "ReduceMax/rows", .build = build_reduce, .op = NCC_OP_REDUCEMAX, .atol = 1e-5,
     .rtol = 1e-4, .kernels = 11},
    {.name = "Reduce/first axis (host)", .build = build_reduce_first, .op = NCC_OP_REDUCESUM,
     .atol = 1e-5, .rtol = 1e-4, .kernels = 0},
    {.name = "GlobalAveragePool", .build = build_gap, .op = NCC_OP_GLOBALAVGPOOL, .atol = 1e-5,
     .rtol = 1e-4, .kernels = 1},
    {.name = "BatchNormalization", .build = build_batchnorm, .op = NCC_OP_BATCHNORM,
     .atol = 1e-5, .rtol = 1e-4, .kernels = 2},

    CONV(1, 3, 17, 19, 8, 3, 3, 3, 1, 1, 1, 1, 1, "Conv/3x3 same"),
    CONV(2, 4, 9, 33, 6, 4, 1, 1, 1, 0, 1, 1, 0, "Conv/1x1, OC%4 != 0"),
    CONV(1, 3, 20, 21, 4, 3, 3, 3, 2, 1, 1, 1, 1, "Conv/stride 2"),
    CONV(1, 8, 10, 10, 8, 1, 3, 3, 1, 1, 1, 8, 1, "Conv/depthwise"),
    CONV(1, 4, 12, 12, 8, 2, 3, 3, 1, 2, 2, 2, 0, "Conv/dilated, grouped"),
    CONV(1, 2, 7, 40, 4, 2, 5, 5, 1, 2, 1, 1, 1, "Conv/5x5, wide row"),
    CONV(2, 16, 7, 9, 20, 16, 1, 1, 1, 0, 1, 1, 1, "Conv/1x1 as GEMM"),
    CONV(3, 5, 4, 4, 7, 5, 1, 1, 1, 0, 1, 1, 0, "Conv/1x1 GEMM, tails"),
    CONV(2, 16, 7, 9, 70, 16, 1, 1, 1, 0, 1, 1, 1, "Conv/1x1, M > tile"),
    /* Padding at the end only (top = left = 0): TensorFlow's "SAME" with
     * an even kernel at stride 1 or an odd one at stride 2 on an even
     * size. A kernel that guards only when the begin pads are nonzero
     * reads past the rows/columns here. */
    CONVP(1, 3, 16, 17, 8, 3, 2, 2, 1, 0, 0, 1, 1, 1, 1, 1, "Conv/end pads, 2x2 stride 1"),
    CONVP(1, 3, 20, 22, 8, 3, 3, 3, 2, 0, 0, 1, 1, 1, 1, 1, "Conv/end pads, 3x3 stride 2"),
    CONVP(2, 4, 9, 11, 8, 4, 3, 3, 1, 0, 0, 2, 0, 1, 1, 0, "Conv/bottom pad only"),
    CONVP(1, 4, 9, 12, 4, 4, 3, 3, 2, 0, 0, 0, 1, 1, 1, 1, "Conv/right pad only, stride 2"),
    CONVP(1, 16, 14, 14, 16, 1, 3, 3, 2, 0, 0, 1, 1, 1, 16, 1, "Conv/depthwise, end pads, stride 2"),
    CONVP(1, 4, 12, 12, 8, 2, 3, 3, 1, 0, 0, 3, 1, 2, 2, 0, "Conv/dilated, grouped, end pads"),
    CONVP(1, 2, 7, 40, 4, 2, 5, 5, 2, 2, 1, 2, 2, 1, 1, 1, "Conv/5x5 stride 2, asymmetric pads"),
    {.name = "MaxPool/windows", .build = build_pool, .op = NCC_OP_MAXPOOL, .atol = 1e-6,
     .rtol = 1e-5, .kernels = 3},
    {.name = "AveragePool/windows", .build = build_pool, .op = NCC_OP_AVGPOOL, .atol = 1e-6,
     .rtol = 1e-5, .kernels = 3},
    {.name = "Transpose/perms", .build = build_transpose, .op = NCC_OP_TRANSPOSE,
     .kernels = 8},
};
const int op_case_count = (int)(sizeof op_cases / sizeof *op_cases);

/* ---- building and feeding a case ---- */

ncc_graph *op_case_build(const op_case *c, int i) {
  teardown(NULL);
  setup(NULL);
  n_ins = n_outs = 0;
  rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(i + 1) * 0x2545f4914f6cdd1dull);
  c->build(c);
  infer();
  return G;
}

void op_case_free(void) { teardown(NULL); }

int op_case_inputs(const op_case *c, int s, ncc_tensor *t, int cap) {
  assert_true(n_ins <= cap);
  for (int k = 0; k < n_ins; k++) {
    int64_t d[4];
    for (int j = 0; j < ins[k].rank; j++)
      d[j] = ins[k].d[j] == SYMN ? c->n_values[s] : ins[k].d[j];
    t[k] = rand_tensor(ins[k].dt, ins[k].rank, d, ins[k].lo, ins[k].hi);
    if (ins[k].gen == GEN_TIES) /* {1, 1.5, 2} from [0.5, 2) */
      for (int64_t j = 0; j < ncc_tensor_numel(&t[k]); j++) {
        float *v = &((float *)t[k].data)[j];
        *v = (float)(int)(*v * 2) * 0.5f + 0.5f;
      }
  }
  return n_ins;
}

const char *op_case_output_label(int o) { return o >= 0 && o < n_outs ? labels[o] : "?"; }

/* ---- comparing: cpu's error budgets (tests/tol_cpu_ref.def) ---- */

typedef enum { TOL_ABS, TOL_X, TOL_MAX, TOL_TERMS, TOL_SPREAD } tol_scale;

static const struct cpu_tol {
  const char *op;
  double ulps, roundoffs, abs;
  tol_scale scale;
} cpu_tols[] = {
#define NCC_TOL(op_, ulps_, roundoffs_, abs_, scale_) {#op_, ulps_, roundoffs_, abs_, TOL_##scale_},
#include "tests/tol_cpu_ref.def"
#undef NCC_TOL
};

static const struct cpu_tol *cpu_tol_of(int op) {
  for (size_t i = 0; i < sizeof cpu_tols / sizeof *cpu_tols; i++)
    if (strcmp(cpu_tols[i].op, ncc_op_name(op)) == 0) return &cpu_tols[i];
  return NULL;
}

/* The spacing of f32 at |r| (towards larger magnitude; below at FLT_MAX):
 * one ulp of r. */
static double ulp_of(float r) {
  float a = fabsf(r);
  if (isinf(a) || isnan(a)) return 0;
  if (a >= FLT_MAX) return (double)a - (double)nextafterf(a, 0);
  return (double)nextafterf(a, INFINITY) - (double)a;
}

/* Whether the case is held to cpu's table: an elementwise op (one node per
 * output, its inputs graph inputs), or a row op with a bound the C tests
 * can compute (ABS, X, MAX; not TERMS or SPREAD). */
static const struct cpu_tol *held_to_table(const op_case *c, const char *target, bool *exact) {
  *exact = false;
  if (strcmp(target, "cpu") != 0) return NULL;
  const struct cpu_tol *t = cpu_tol_of(c->op);
  bool eltwise = c->build == build_unary || c->build == build_binary;
  if (!t) {
    *exact = eltwise; /* one IEEE operation, or data movement */
    return NULL;
  }
  if (t->scale == TOL_TERMS || t->scale == TOL_SPREAD) return NULL;
  if (!eltwise && c->build != build_rows && c->build != build_rows_3d &&
      c->build != build_batchnorm)
    return NULL;
  return t;
}

void op_case_compare(const op_case *c, int o, const ncc_tensor *in, const ncc_tensor *ref,
                     const ncc_tensor *got, const char *target, const char *what) {
  bool exact;
  const struct cpu_tol *t = held_to_table(c, target, &exact);
  if (exact) {
    compare_outputs(ref, got, 0, 0, target, what, -1);
    return;
  }
  const ncc_tensor *x = o >= 0 && o < n_outs && out_in0[o] >= 0 ? &in[out_in0[o]] : NULL;
  if (t && t->scale == TOL_X &&
      (!x || x->dtype != NCC_DT_F32 || ncc_tensor_numel(x) != ncc_tensor_numel(ref)))
    t = NULL; /* no per-element input to scale by */
  if (!t || ref->dtype != NCC_DT_F32) {
    compare_outputs(ref, got, c->atol, c->rtol, target, what, -1);
    return;
  }
  assert_int_equal(ref->dtype, got->dtype);
  assert_int_equal(ref->rank, got->rank);
  for (int d = 0; d < ref->rank; d++) assert_int_equal(ref->dims[d], got->dims[d]);
  int64_t n = ncc_tensor_numel(ref);
  const float *r = ref->data, *g = got->data;
  double big = 0;
  for (int64_t i = 0; i < n && t->scale == TOL_MAX; i++)
    if (isfinite(r[i]) && fabs(r[i]) > big) big = fabs(r[i]);
  for (int64_t i = 0; i < n; i++) {
    if ((isnan(r[i]) && isnan(g[i])) || r[i] == g[i]) continue;
    double scale = t->scale == TOL_X ? fabs(((const float *)x->data)[i])
                   : t->scale == TOL_MAX ? big
                                         : 1.0;
    double u = ulp_of(r[i]), err = fabs((double)g[i] - (double)r[i]);
    double budget = t->ulps * u + (t->roundoffs * 0x1p-24 + t->abs) * scale;
    if (!(err <= budget))
      fail_msg("%s: element %lld: ref %.9g %s %.9g: %.3g ulp, budget %g ulp + %g "
               "(tests/tol_cpu_ref.def: %s)",
               what, (long long)i, r[i], target, g[i], u > 0 ? err / u : INFINITY, t->ulps,
               (t->roundoffs * 0x1p-24 + t->abs) * scale, t->op);
  }
}

bool op_case_has_op(const char *name) {
  for (int i = 0; i < G->n_nodes; i++)
    if (strcasecmp(ncc_op_name(G->nodes[i]->op), name) == 0) return true;
  return false;
}

int op_case_expected_kernels(const op_case *c, const ncc_target_desc *t) {
  if (!t->compiles) return 0; /* `ref`: every node is a host kernel */
  size_t len = strlen(t->name);
  for (const char *p = c->kernels_on; p && *p;) {
    if (strncmp(p, t->name, len) == 0 && p[len] == '=') return atoi(p + len + 1);
    p = strchr(p, ',');
    p = p ? p + 1 : NULL;
  }
  return c->kernels;
}
