/* tests/unit/test_ref_core.c — the reference interpreter's core and its
 * elementwise and data-movement kernels.
 *
 * Small graphs are built with the IR API, shape-inferred, and run with
 * ncc_ref_run: input binding (symbolic dims, mismatch diagnostics),
 * broadcasting, known values of every elementwise kernel, Cast edge cases,
 * Slice/Pad/Gather corner cases, a PyTorch-style shape subgraph evaluated at
 * run time, freeing of intermediates (peak memory through a counting
 * allocator) and clean NCC_ERR_NOMEM on every failed allocation.
 */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"
#include "ir/shape.h"

/* ---- graph building ---- */

static ncc_graph *G;
static ncc_node *last_node;

static int setup(void **state) {
  (void)state;
  G = ncc_graph_new("t");
  return G ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  ncc_graph_free(G);
  G = NULL;
  return 0;
}

static ncc_shape mkshape(int rank, const int64_t *d) {
  ncc_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.d[i] = d[i];
  return s;
}

static int64_t sym(const char *name) {
  int id = ncc_graph_sym(G, name, strlen(name));
  assert_true(id >= 0);
  return ncc_dim_sym(id);
}

static ncc_value *input(const char *name, ncc_dtype dt, int rank,
                        const int64_t *d) {
  ncc_shape s = mkshape(rank, d);
  ncc_value *v = ncc_graph_add_value(G, name, NCC_VAL_INPUT, dt, &s);
  assert_non_null(v);
  assert_int_equal(ncc_graph_add_input(G, v), NCC_OK);
  return v;
}

static ncc_value *cst(ncc_dtype dt, int rank, const int64_t *d,
                      const void *data) {
  ncc_shape s = mkshape(rank, d);
  ncc_value *v = ncc_graph_add_const(G, NULL, dt, &s, data);
  assert_non_null(v);
  return v;
}

static ncc_value *cst_i64(int n, const int64_t *vals) {
  return cst(NCC_DT_I64, 1, (int64_t[]){n}, vals);
}

static ncc_value *scalar_f32(float v) { return cst(NCC_DT_F32, 0, NULL, &v); }
static ncc_value *scalar_i64(int64_t v) { return cst(NCC_DT_I64, 0, NULL, &v); }

/* A node with n_in inputs (NULL = omitted) and n_out fresh outputs; returns
 * the first output. The node is kept in last_node for attributes. */
static ncc_value *opn(ncc_op op, int n_out, int n_in, ...) {
  ncc_value *in[16];
  va_list ap;
  va_start(ap, n_in);
  for (int i = 0; i < n_in; i++) in[i] = va_arg(ap, ncc_value *);
  va_end(ap);
  ncc_node *n = ncc_graph_add_node(G, op, NULL, n_in, in, n_out);
  assert_non_null(n);
  for (int j = 0; j < n_out; j++) {
    ncc_value *v = ncc_graph_add_value(G, NULL, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
    assert_non_null(v);
    ncc_node_set_output(n, j, v);
  }
  last_node = n;
  return n->out[0];
}

#define OP(op, ...) opn(op, 1, (int)(sizeof((ncc_value *[]){__VA_ARGS__}) /   \
                                     sizeof(ncc_value *)), __VA_ARGS__)

static void output(ncc_value *v) {
  assert_int_equal(ncc_graph_add_output(G, v), NCC_OK);
}

static void attr_i(const char *name, int64_t v) {
  assert_int_equal(ncc_node_set_attr_int(G, last_node, name, v), NCC_OK);
}
static void attr_f(const char *name, float v) {
  assert_int_equal(ncc_node_set_attr_float(G, last_node, name, v), NCC_OK);
}
static void attr_s(const char *name, const char *v) {
  assert_int_equal(ncc_node_set_attr_string(G, last_node, name, v), NCC_OK);
}
static void attr_ints(const char *name, int n, const int64_t *v) {
  assert_int_equal(ncc_node_set_attr_ints(G, last_node, name, v, n), NCC_OK);
}

static void infer(void) {
  ncc_status st = ncc_infer_graph(G);
  if (st != NCC_OK) print_error("infer: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
}

/* ---- tensors and running ---- */

static ncc_tensor tens(ncc_dtype dt, int rank, const int64_t *d, void *data) {
  ncc_tensor t = {.dtype = dt, .rank = rank, .data = data};
  for (int i = 0; i < rank; i++) t.dims[i] = d[i];
  return t;
}

static ncc_status run(ncc_tensor *ins, int n_in, ncc_tensor *outs, int n_out) {
  return ncc_ref_run(G, ins, n_in, outs, n_out);
}

static void run_ok(ncc_tensor *ins, int n_in, ncc_tensor *outs, int n_out) {
  ncc_status st = run(ins, n_in, outs, n_out);
  if (st != NCC_OK) print_error("run: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
}

static void check_dims(const ncc_tensor *t, int rank, const int64_t *d) {
  assert_int_equal(t->rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(t->dims[i], d[i]);
}

static void check_f32(const ncc_tensor *t, int n, const float *want,
                      double tol) {
  assert_int_equal(t->dtype, NCC_DT_F32);
  assert_int_equal(ncc_tensor_numel(t), n);
  const float *got = t->data;
  for (int i = 0; i < n; i++) {
    if (isnan(want[i])) {
      if (!isnan(got[i])) fail_msg("element %d: got %g, want nan", i, got[i]);
      continue;
    }
    double err = fabs((double)got[i] - want[i]);
    if (err > tol * (1.0 + fabs(want[i])) && !(got[i] == want[i]))
      fail_msg("element %d: got %.9g, want %.9g", i, got[i], want[i]);
  }
}

/* The cpu backend's budgets against ref (tests/tol_cpu_ref.def, the table
 * tests/py/diff_ort.py and tests/ops read too): each includes ref's own
 * error, so ref against the correctly rounded value stays within it. */
static const struct {
  const char *op;
  double ulps, roundoffs, abs;
  bool per_x; /* scale X: the absolute part times |x| */
} tols[] = {
#define PER_X_ABS false
#define PER_X_X true
#define PER_X_MAX false
#define PER_X_TERMS false
#define PER_X_SPREAD false
#define NCC_TOL(op_, ulps_, roundoffs_, abs_, scale_) {#op_, ulps_, roundoffs_, abs_, PER_X_##scale_},
#include "tests/tol_cpu_ref.def"
#undef NCC_TOL
};

/* Element i of `t` against want[i] (f32 of the double result) within op's
 * row of the table, in ulps of want; an op without a row must be exact. */
static void check_ulp(const ncc_tensor *t, int n, const float *want, const float *x,
                      ncc_op op) {
  assert_int_equal(t->dtype, NCC_DT_F32);
  assert_int_equal(ncc_tensor_numel(t), n);
  double ulps = 0, absolute = 0;
  bool per_x = false;
  for (size_t r = 0; r < sizeof tols / sizeof *tols; r++)
    if (strcmp(tols[r].op, ncc_op_name(op)) == 0) {
      ulps = tols[r].ulps;
      absolute = tols[r].roundoffs * 0x1p-24 + tols[r].abs;
      per_x = tols[r].per_x;
    }
  const float *got = t->data;
  for (int i = 0; i < n; i++) {
    if (got[i] == want[i] || (isnan(got[i]) && isnan(want[i]))) continue;
    float a = fabsf(want[i]);
    double ulp = isinf(a) ? 0 : (double)nextafterf(a, INFINITY) - (double)a;
    double err = fabs((double)got[i] - (double)want[i]);
    if (!(err <= ulps * ulp + absolute * (per_x ? fabs(x[i]) : 1.0)))
      fail_msg("%s element %d: got %.9g, want %.9g (%.3g ulp; budget %g ulp + %g)",
               ncc_op_name(op), i, got[i], want[i], ulp > 0 ? err / ulp : INFINITY, ulps,
               absolute);
  }
}

static void check_i64(const ncc_tensor *t, int n, const int64_t *want) {
  assert_int_equal(t->dtype, NCC_DT_I64);
  assert_int_equal(ncc_tensor_numel(t), n);
  for (int i = 0; i < n; i++)
    if (((const int64_t *)t->data)[i] != want[i])
      fail_msg("element %d: got %lld, want %lld", i,
               (long long)((const int64_t *)t->data)[i], (long long)want[i]);
}

static void check_u8(const ncc_tensor *t, ncc_dtype dt, int n,
                     const uint8_t *want) {
  assert_int_equal(t->dtype, dt);
  assert_int_equal(ncc_tensor_numel(t), n);
  assert_memory_equal(t->data, want, (size_t)n);
}

static void expect_error(ncc_tensor *ins, int n_in, int n_out, ncc_status want,
                         const char *fragment) {
  ncc_tensor outs[16];
  ncc_status st = run(ins, n_in, outs, n_out);
  if (st != want)
    fail_msg("status %d, want %d (%s)", st, want, ncc_error_message());
  if (fragment && !strstr(ncc_error_message(), fragment))
    fail_msg("message '%s' lacks '%s'", ncc_error_message(), fragment);
  for (int i = 0; i < n_out; i++) assert_null(outs[i].data);
}

/* ---- broadcasting and binary ops ---- */

static void test_broadcast_binary(void **state) {
  (void)state;
  ncc_value *a = input("a", NCC_DT_F32, 2, (int64_t[]){2, 3});
  ncc_value *b = input("b", NCC_DT_F32, 1, (int64_t[]){3});
  ncc_value *c = input("c", NCC_DT_F32, 2, (int64_t[]){2, 1});
  output(OP(NCC_OP_ADD, a, b));
  output(OP(NCC_OP_SUB, c, b)); /* [2,1] - [3] -> [2,3] */
  output(OP(NCC_OP_MUL, a, scalar_f32(2.0f)));
  output(OP(NCC_OP_DIV, b, c));
  output(OP(NCC_OP_POW, a, scalar_f32(2.0f)));
  output(OP(NCC_OP_MAX, a, b, c)); /* variadic */
  output(OP(NCC_OP_MIN, c, a));
  infer();
  float av[] = {1, 2, 3, 4, 5, 6}, bv[] = {10, 20, 30}, cv[] = {100, 200};
  ncc_tensor ins[3] = {tens(NCC_DT_F32, 2, (int64_t[]){2, 3}, av),
                       tens(NCC_DT_F32, 1, (int64_t[]){3}, bv),
                       tens(NCC_DT_F32, 2, (int64_t[]){2, 1}, cv)};
  ncc_tensor o[7];
  run_ok(ins, 3, o, 7);
  for (int i = 0; i < 7; i++) check_dims(&o[i], 2, (int64_t[]){2, 3});
  check_f32(&o[0], 6, (float[]){11, 22, 33, 14, 25, 36}, 0);
  check_f32(&o[1], 6, (float[]){90, 80, 70, 190, 180, 170}, 0);
  check_f32(&o[2], 6, (float[]){2, 4, 6, 8, 10, 12}, 0);
  check_f32(&o[3], 6, (float[]){0.1f, 0.2f, 0.3f, 0.05f, 0.1f, 0.15f}, 0);
  check_f32(&o[4], 6, (float[]){1, 4, 9, 16, 25, 36}, 0);
  check_f32(&o[5], 6, (float[]){100, 100, 100, 200, 200, 200}, 0);
  check_f32(&o[6], 6, (float[]){1, 2, 3, 4, 5, 6}, 0);
  for (int i = 0; i < 7; i++) ncc_tensor_free(&o[i]);
}

/* Max/Min propagate NaN; comparisons produce bool; Where selects. */
static void test_compare_where_nan(void **state) {
  (void)state;
  ncc_value *a = input("a", NCC_DT_F32, 1, (int64_t[]){4});
  ncc_value *b = input("b", NCC_DT_F32, 1, (int64_t[]){4});
  output(OP(NCC_OP_MAX, a, b));
  output(OP(NCC_OP_MIN, a, b));
  ncc_value *lt = OP(NCC_OP_LESS, a, b);
  output(lt);
  output(OP(NCC_OP_GREATER, a, b));
  output(OP(NCC_OP_EQUAL, a, b));
  output(OP(NCC_OP_WHERE, lt, a, scalar_f32(-1.0f)));
  infer();
  float av[] = {1, NAN, 3, 5}, bv[] = {2, 1, NAN, 5};
  ncc_tensor ins[2] = {tens(NCC_DT_F32, 1, (int64_t[]){4}, av),
                       tens(NCC_DT_F32, 1, (int64_t[]){4}, bv)};
  ncc_tensor o[6];
  run_ok(ins, 2, o, 6);
  check_f32(&o[0], 4, (float[]){2, NAN, NAN, 5}, 0);
  check_f32(&o[1], 4, (float[]){1, NAN, NAN, 5}, 0);
  check_u8(&o[2], NCC_DT_BOOL, 4, (uint8_t[]){1, 0, 0, 0});
  check_u8(&o[3], NCC_DT_BOOL, 4, (uint8_t[]){0, 0, 0, 0});
  check_u8(&o[4], NCC_DT_BOOL, 4, (uint8_t[]){0, 0, 0, 1});
  check_f32(&o[5], 4, (float[]){1, -1, -1, -1}, 0);
  for (int i = 0; i < 6; i++) ncc_tensor_free(&o[i]);
}

static void test_integer_ops(void **state) {
  (void)state;
  ncc_value *a = input("a", NCC_DT_I64, 1, (int64_t[]){4});
  ncc_value *b = input("b", NCC_DT_I64, 1, (int64_t[]){4});
  output(OP(NCC_OP_DIV, a, b));
  output(OP(NCC_OP_ADD, a, b));
  output(OP(NCC_OP_MUL, a, b));
  output(OP(NCC_OP_NEG, a));
  output(OP(NCC_OP_ABS, a));
  output(OP(NCC_OP_MAX, a, b));
  output(OP(NCC_OP_WHERE, OP(NCC_OP_GREATER, a, b), a, b));
  infer();
  int64_t av[] = {-7, 7, INT64_MIN, INT64_MAX}, bv[] = {2, -2, -1, 1};
  ncc_tensor ins[2] = {tens(NCC_DT_I64, 1, (int64_t[]){4}, av),
                       tens(NCC_DT_I64, 1, (int64_t[]){4}, bv)};
  ncc_tensor o[7];
  run_ok(ins, 2, o, 7);
  /* C-like truncation toward zero; INT64_MIN / -1 wraps. */
  check_i64(&o[0], 4, (int64_t[]){-3, -3, INT64_MIN, INT64_MAX});
  check_i64(&o[1], 4, (int64_t[]){-5, 5, INT64_MAX, INT64_MIN}); /* wraps */
  check_i64(&o[2], 4, (int64_t[]){-14, -14, INT64_MIN, INT64_MAX});
  check_i64(&o[3], 4, (int64_t[]){7, -7, INT64_MIN, -INT64_MAX});
  check_i64(&o[4], 4, (int64_t[]){7, 7, INT64_MIN, INT64_MAX});
  check_i64(&o[5], 4, (int64_t[]){2, 7, -1, INT64_MAX});
  check_i64(&o[6], 4, (int64_t[]){2, 7, -1, INT64_MAX});
  for (int i = 0; i < 7; i++) ncc_tensor_free(&o[i]);

  /* A zero divisor is an input error naming the node, not a trap. */
  bv[1] = 0;
  expect_error(ins, 2, 7, NCC_ERR_INPUT, "integer division by zero");
  assert_non_null(strstr(ncc_error_message(), "(Div)"));
}

/* i32 arithmetic wraps at 32 bits. */
static void test_i32_wrap(void **state) {
  (void)state;
  ncc_value *a = input("a", NCC_DT_I32, 1, (int64_t[]){2});
  output(OP(NCC_OP_ADD, a, a));
  infer();
  int32_t av[] = {INT32_MAX, -3};
  ncc_tensor in = tens(NCC_DT_I32, 1, (int64_t[]){2}, av), o;
  run_ok(&in, 1, &o, 1);
  assert_int_equal(o.dtype, NCC_DT_I32);
  assert_int_equal(((int32_t *)o.data)[0], -2);
  assert_int_equal(((int32_t *)o.data)[1], -6);
  ncc_tensor_free(&o);
}

/* ---- unary ops ---- */

static void test_unary_values(void **state) {
  (void)state;
  enum { N = 7 };
  const float xv[N] = {-100.0f, -3.0f, -1.0f, -0.0f, 0.5f, 1.0f, 100.0f};
  ncc_value *x = input("x", NCC_DT_F32, 1, (int64_t[]){N});
  ncc_op ops[] = {NCC_OP_NEG,  NCC_OP_ABS,     NCC_OP_EXP,     NCC_OP_ERF,
                  NCC_OP_TANH, NCC_OP_SIGMOID, NCC_OP_RELU,    NCC_OP_HARDSWISH,
                  NCC_OP_SOFTPLUS, NCC_OP_IDENTITY};
  int nops = (int)(sizeof ops / sizeof ops[0]);
  for (int i = 0; i < nops; i++) output(OP(ops[i], x));
  output(OP(NCC_OP_LEAKYRELU, x));
  attr_f("alpha", 0.1f);
  output(OP(NCC_OP_HARDSIGMOID, x));
  output(OP(NCC_OP_GELU, x));
  output(OP(NCC_OP_GELU, x));
  attr_s("approximate", "tanh");
  output(OP(NCC_OP_CLIP, x, scalar_f32(-2.0f), scalar_f32(0.75f)));
  output(OP(NCC_OP_CLIP, x, NULL, scalar_f32(0.0f))); /* max only */
  infer();
  ncc_tensor in = tens(NCC_DT_F32, 1, (int64_t[]){N}, (void *)xv);
  ncc_tensor o[16];
  int nout = nops + 6;
  run_ok(&in, 1, o, nout);
  float want[N];
  for (int i = 0; i < nops; i++) {
    for (int k = 0; k < N; k++) {
      double v = xv[k];
      switch (ops[i]) {
      case NCC_OP_NEG: v = -v; break;
      case NCC_OP_ABS: v = fabs(v); break;
      case NCC_OP_EXP: v = exp(v); break;
      case NCC_OP_ERF: v = erf(v); break;
      case NCC_OP_TANH: v = tanh(v); break;
      case NCC_OP_SIGMOID: v = 1.0 / (1.0 + exp(-v)); break;
      case NCC_OP_RELU: v = v > 0 ? v : 0; break;
      case NCC_OP_HARDSWISH: v = v * fmax(0, fmin(1, v / 6 + 0.5)); break;
      case NCC_OP_SOFTPLUS: v = log(1 + exp(v)); break;
      default: break;
      }
      want[k] = (float)v;
    }
    check_ulp(&o[i], N, want, xv, ops[i]);
  }
  /* Stable forms: no overflow to inf or underflow to 0 where avoidable. */
  assert_true(((float *)o[5].data)[0] > 0.0f); /* sigmoid(-100) = 3.7e-44 */
  check_f32(&o[8], N, (float[]){3.7200760e-44f, 0.04858735f, 0.31326169f,
                                0.69314718f, 0.97407698f, 1.31326163f, 100.0f},
            1e-6);
  check_f32(&o[7], N, (float[]){-0.0f, 0, -1.0f / 3, 0, 0.2916667f, 0.6666667f,
                                100.0f},
            1e-6);
  check_f32(&o[nops], N, (float[]){-10, -0.3f, -0.1f, 0, 0.5f, 1, 100}, 1e-6);
  check_f32(&o[nops + 1], N, (float[]){0, 0, 0.3f, 0.5f, 0.6f, 0.7f, 1}, 1e-6);
  check_f32(&o[nops + 2], N,
            (float[]){-0.0f, -0.00404969f, -0.15865525f, 0, 0.34573123f,
                      0.84134475f, 100},
            1e-6);
  check_f32(&o[nops + 3], N,
            (float[]){-0.0f, -0.00363739f, -0.15880801f, 0, 0.34571401f,
                      0.84119199f, 100},
            1e-6);
  check_f32(&o[nops + 4], N, (float[]){-2, -2, -1, 0, 0.5f, 0.75f, 0.75f}, 0);
  check_f32(&o[nops + 5], N, (float[]){-100, -3, -1, 0, 0, 0, 0}, 0);
  for (int i = 0; i < nout; i++) ncc_tensor_free(&o[i]);
}

static void test_unary_domain(void **state) {
  (void)state;
  ncc_value *x = input("x", NCC_DT_F32, 1, (int64_t[]){4});
  output(OP(NCC_OP_SQRT, x));
  output(OP(NCC_OP_LOG, x));
  output(OP(NCC_OP_RECIPROCAL, x));
  output(OP(NCC_OP_RELU, x));
  infer();
  float xv[] = {4.0f, 0.0f, -1.0f, NAN};
  ncc_tensor in = tens(NCC_DT_F32, 1, (int64_t[]){4}, xv), o[4];
  run_ok(&in, 1, o, 4);
  check_f32(&o[0], 4, (float[]){2, 0, NAN, NAN}, 0);
  check_f32(&o[1], 4, (float[]){(float)log(4.0), -INFINITY, NAN, NAN}, 1e-7);
  check_f32(&o[2], 4, (float[]){0.25f, INFINITY, -1, NAN}, 0);
  check_f32(&o[3], 4, (float[]){4, 0, 0, NAN}, 0);
  for (int i = 0; i < 4; i++) ncc_tensor_free(&o[i]);
}

/* ---- Cast ---- */

static ncc_value *cast(ncc_value *x, const char *to) {
  ncc_value *v = OP(NCC_OP_CAST, x);
  attr_s("to", to);
  return v;
}

static void test_cast_edges(void **state) {
  (void)state;
  enum { N = 12 };
  ncc_value *x = input("x", NCC_DT_F32, 1, (int64_t[]){N});
  output(cast(x, "i64"));
  output(cast(x, "i32"));
  output(cast(x, "bool"));
  output(cast(x, "f16"));
  output(cast(x, "u8"));
  output(cast(cast(x, "f16"), "f32"));
  output(cast(cast(x, "bool"), "f32"));
  infer();
  float xv[N] = {-2.7f, 2.7f, NAN, 1e20f, -0.0f, 65504.0f, 65520.0f,
                 0x1p-25f, 0x1.8p-25f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f,
                 -INFINITY};
  ncc_tensor in = tens(NCC_DT_F32, 1, (int64_t[]){N}, xv), o[7];
  run_ok(&in, 1, o, 7);
  /* Truncation toward zero; NaN and out-of-range give the minimum. */
  check_i64(&o[0], N,
            (int64_t[]){-2, 2, INT64_MIN, INT64_MIN, 0, 65504, 65520, 0, 0, 1,
                        1, INT64_MIN});
  const int32_t *i32 = o[1].data;
  assert_int_equal(i32[0], -2);
  assert_int_equal(i32[1], 2);
  assert_int_equal(i32[2], INT32_MIN);
  assert_int_equal(i32[3], INT32_MIN);
  check_u8(&o[2], NCC_DT_BOOL, N,
           (uint8_t[]){1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1});
  /* f16: round to nearest even, overflow to inf, subnormals, NaN. */
  const uint16_t *h = o[3].data;
  uint16_t hw[N] = {0xc166, 0x4166, 0x7e00, 0x7c00, 0x8000, 0x7bff, 0x7c00,
                    0x0000 /* 2^-25: tie -> even 0 */,
                    0x0001 /* 1.5 * 2^-25 rounds up */,
                    0x3c00 /* 1 + 2^-11: tie -> even */,
                    0x3c02 /* 1 + 3 * 2^-11: tie -> even */, 0xfc00};
  for (int i = 0; i < N; i++)
    if (h[i] != hw[i]) fail_msg("f16 element %d: 0x%04x, want 0x%04x", i, h[i], hw[i]);
  /* u8: through i32, low byte (numpy). */
  const uint8_t *u8 = o[4].data;
  assert_int_equal(u8[0], 254);
  assert_int_equal(u8[1], 2);
  /* f16 -> f32 is exact. */
  const float *back = o[5].data;
  assert_true(back[0] == -2.69921875f);
  assert_true(isnan(back[2]));
  assert_true(back[5] == 65504.0f);
  assert_true(isinf(back[6]));
  assert_true(back[8] == 0x1p-24f);
  assert_true(back[11] == -INFINITY);
  check_f32(&o[6], N, (float[]){1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1}, 0);
  for (int i = 0; i < 7; i++) ncc_tensor_free(&o[i]);
}

static void test_cast_integers(void **state) {
  (void)state;
  ncc_value *x = input("x", NCC_DT_I64, 1, (int64_t[]){4});
  output(cast(x, "i32"));
  output(cast(x, "f32"));
  output(cast(x, "bool"));
  output(cast(x, "f64"));
  infer();
  int64_t xv[] = {((int64_t)1 << 32) + 5, ((int64_t)1 << 53) + 1, 0, -1};
  ncc_tensor in = tens(NCC_DT_I64, 1, (int64_t[]){4}, xv), o[4];
  run_ok(&in, 1, o, 4);
  const int32_t *i32 = o[0].data;
  assert_int_equal(i32[0], 5);
  assert_int_equal(i32[3], -1);
  const float *f = o[1].data;
  assert_true(f[1] == 9007199254740992.0f);
  assert_true(f[3] == -1.0f);
  check_u8(&o[2], NCC_DT_BOOL, 4, (uint8_t[]){1, 1, 0, 1});
  const double *d = o[3].data;
  assert_true(d[0] == 4294967301.0);
  for (int i = 0; i < 4; i++) ncc_tensor_free(&o[i]);
}

/* ---- input binding ---- */

static void test_symbolic_binding(void **state) {
  (void)state;
  int64_t N = sym("N");
  ncc_value *x = input("x", NCC_DT_F32, 2, (int64_t[]){N, 3});
  ncc_value *y = input("y", NCC_DT_F32, 2, (int64_t[]){N, 3});
  output(OP(NCC_OP_ADD, x, y));
  infer();
  float buf[15];
  for (int i = 0; i < 15; i++) buf[i] = (float)i;
  for (int64_t n = 1; n <= 5; n += 2) {
    ncc_tensor ins[2] = {tens(NCC_DT_F32, 2, (int64_t[]){n, 3}, buf),
                         tens(NCC_DT_F32, 2, (int64_t[]){n, 3}, buf)};
    ncc_tensor o;
    run_ok(ins, 2, &o, 1);
    check_dims(&o, 2, (int64_t[]){n, 3});
    assert_true(((float *)o.data)[3 * n - 1] == 2.0f * (float)(3 * n - 1));
    ncc_tensor_free(&o);
  }
  /* Same symbol, different sizes. */
  ncc_tensor bad[2] = {tens(NCC_DT_F32, 2, (int64_t[]){4, 3}, buf),
                       tens(NCC_DT_F32, 2, (int64_t[]){2, 3}, buf)};
  expect_error(bad, 2, 1, NCC_ERR_INPUT,
               "input 'y': dim 0 (N) is 2 here but 4 in input 'x'");
  /* Static dim, rank and dtype mismatches. */
  bad[1] = tens(NCC_DT_F32, 2, (int64_t[]){4, 2}, buf);
  expect_error(bad, 2, 1, NCC_ERR_INPUT, "input 'y': dim 1 is 2 here but the graph expects 3");
  bad[1] = tens(NCC_DT_F32, 1, (int64_t[]){4}, buf);
  expect_error(bad, 2, 1, NCC_ERR_INPUT, "input 'y': rank is 1");
  bad[1] = tens(NCC_DT_I64, 2, (int64_t[]){4, 3}, buf);
  expect_error(bad, 2, 1, NCC_ERR_INPUT, "input 'y': dtype is i64");
  bad[1] = tens(NCC_DT_F32, 2, (int64_t[]){4, 3}, NULL);
  expect_error(bad, 2, 1, NCC_ERR_INPUT, "has no data");
  /* Wrong counts are API misuse. */
  expect_error(bad, 1, 1, NCC_ERR_USAGE, NULL);
  expect_error(bad, 2, 2, NCC_ERR_USAGE, NULL);
}

/* A symbol repeated within one input ([N, N]) must agree with itself. */
static void test_symbol_within_input(void **state) {
  (void)state;
  int64_t N = sym("N");
  ncc_value *x = input("x", NCC_DT_F32, 2, (int64_t[]){N, N});
  output(OP(NCC_OP_RELU, x));
  infer();
  float buf[6] = {0};
  ncc_tensor in = tens(NCC_DT_F32, 2, (int64_t[]){2, 3}, buf);
  expect_error(&in, 1, 1, NCC_ERR_INPUT, "input 'x': dim 1 (N) is 3 here but 2 in input 'x'");
  in = tens(NCC_DT_F32, 2, (int64_t[]){2, 2}, buf);
  ncc_tensor o;
  run_ok(&in, 1, &o, 1);
  ncc_tensor_free(&o);
}

/* ---- data movement ---- */

static void test_slice(void **state) {
  (void)state;
  ncc_value *x = input("x", NCC_DT_F32, 1, (int64_t[]){5});
  ncc_value *m = input("m", NCC_DT_I64, 2, (int64_t[]){3, 4});
  /* x[-1::-2] */
  output(OP(NCC_OP_SLICE, x, cst_i64(1, (int64_t[]){-1}),
            cst_i64(1, (int64_t[]){INT64_MIN}), cst_i64(1, (int64_t[]){0}),
            cst_i64(1, (int64_t[]){-2})));
  /* x[10:0:-3] clamps start to 4 -> [4, 1] */
  output(OP(NCC_OP_SLICE, x, cst_i64(1, (int64_t[]){10}),
            cst_i64(1, (int64_t[]){0}), cst_i64(1, (int64_t[]){0}),
            cst_i64(1, (int64_t[]){-3})));
  /* m[1:, ::-1] via axes [-1, 0] */
  output(OP(NCC_OP_SLICE, m, cst_i64(2, (int64_t[]){-1, 1}),
            cst_i64(2, (int64_t[]){INT64_MIN, INT64_MAX}),
            cst_i64(2, (int64_t[]){-1, 0}), cst_i64(2, (int64_t[]){-1, 1})));
  /* empty: x[3:1] */
  output(OP(NCC_OP_SLICE, x, cst_i64(1, (int64_t[]){3}),
            cst_i64(1, (int64_t[]){1})));
  /* m[:, 1:4:2] without steps input but with a huge step on another call */
  output(OP(NCC_OP_SLICE, m, cst_i64(1, (int64_t[]){0}),
            cst_i64(1, (int64_t[]){INT64_MAX}), cst_i64(1, (int64_t[]){1}),
            cst_i64(1, (int64_t[]){INT64_MAX})));
  infer();
  float xv[] = {0, 1, 2, 3, 4};
  int64_t mv[12];
  for (int i = 0; i < 12; i++) mv[i] = i;
  ncc_tensor ins[2] = {tens(NCC_DT_F32, 1, (int64_t[]){5}, xv),
                       tens(NCC_DT_I64, 2, (int64_t[]){3, 4}, mv)};
  ncc_tensor o[5];
  run_ok(ins, 2, o, 5);
  check_f32(&o[0], 3, (float[]){4, 2, 0}, 0);
  check_f32(&o[1], 2, (float[]){4, 1}, 0);
  check_dims(&o[2], 2, (int64_t[]){2, 4});
  check_i64(&o[2], 8, (int64_t[]){7, 6, 5, 4, 11, 10, 9, 8});
  check_dims(&o[3], 1, (int64_t[]){0});
  check_dims(&o[4], 2, (int64_t[]){3, 1});
  check_i64(&o[4], 3, (int64_t[]){0, 4, 8});
  for (int i = 0; i < 5; i++) ncc_tensor_free(&o[i]);
}

static ncc_value *pad(ncc_value *x, const char *mode, int np,
                      const int64_t *pads, ncc_value *value, ncc_value *axes) {
  ncc_value *v = axes ? OP(NCC_OP_PAD, x, cst_i64(np, pads), value, axes)
                 : value ? OP(NCC_OP_PAD, x, cst_i64(np, pads), value)
                         : OP(NCC_OP_PAD, x, cst_i64(np, pads));
  if (mode) attr_s("mode", mode);
  return v;
}

static void test_pad_modes(void **state) {
  (void)state;
  ncc_value *x = input("x", NCC_DT_F32, 1, (int64_t[]){3});
  ncc_value *m = input("m", NCC_DT_F32, 2, (int64_t[]){2, 2});
  output(pad(x, NULL, 2, (int64_t[]){2, 2}, scalar_f32(9.0f), NULL));
  output(pad(x, "reflect", 2, (int64_t[]){2, 2}, NULL, NULL));
  output(pad(x, "edge", 2, (int64_t[]){2, 2}, NULL, NULL));
  output(pad(x, "wrap", 2, (int64_t[]){2, 2}, NULL, NULL));
  output(pad(x, "constant", 2, (int64_t[]){-1, 1}, NULL, NULL)); /* crop */
  output(pad(x, "wrap", 2, (int64_t[]){3, 3}, NULL, NULL)); /* a full turn */
  /* 2-D, axis 1 only (negative axis), edge */
  output(pad(m, "edge", 2, (int64_t[]){1, 0}, NULL,
             cst_i64(1, (int64_t[]){-1})));
  /* 2-D constant on both axes */
  output(pad(m, NULL, 4, (int64_t[]){1, 0, 0, 1}, NULL, NULL));
  infer();
  float xv[] = {1, 2, 3}, mv[] = {1, 2, 3, 4};
  ncc_tensor ins[2] = {tens(NCC_DT_F32, 1, (int64_t[]){3}, xv),
                       tens(NCC_DT_F32, 2, (int64_t[]){2, 2}, mv)};
  ncc_tensor o[8];
  run_ok(ins, 2, o, 8);
  check_f32(&o[0], 7, (float[]){9, 9, 1, 2, 3, 9, 9}, 0);
  check_f32(&o[1], 7, (float[]){3, 2, 1, 2, 3, 2, 1}, 0);
  check_f32(&o[2], 7, (float[]){1, 1, 1, 2, 3, 3, 3}, 0);
  check_f32(&o[3], 7, (float[]){2, 3, 1, 2, 3, 1, 2}, 0);
  check_f32(&o[4], 3, (float[]){2, 3, 0}, 0);
  check_f32(&o[5], 9, (float[]){1, 2, 3, 1, 2, 3, 1, 2, 3}, 0);
  check_dims(&o[6], 2, (int64_t[]){2, 3});
  check_f32(&o[6], 6, (float[]){1, 1, 2, 3, 3, 4}, 0);
  check_dims(&o[7], 2, (int64_t[]){3, 3});
  check_f32(&o[7], 9, (float[]){0, 0, 0, 1, 2, 0, 3, 4, 0}, 0);
  for (int i = 0; i < 8; i++) ncc_tensor_free(&o[i]);
}

static void test_gather(void **state) {
  (void)state;
  ncc_value *d = input("d", NCC_DT_F32, 2, (int64_t[]){3, 2});
  ncc_value *idx = input("idx", NCC_DT_I64, 1, (int64_t[]){2});
  output(OP(NCC_OP_GATHER, d, idx));
  output(OP(NCC_OP_GATHER, d, idx));
  attr_i("axis", -1);
  output(OP(NCC_OP_GATHER, d, scalar_i64(-3))); /* scalar index drops the axis */
  infer();
  float dv[] = {1, 2, 3, 4, 5, 6};
  int64_t iv[] = {-1, 0};
  ncc_tensor ins[2] = {tens(NCC_DT_F32, 2, (int64_t[]){3, 2}, dv),
                       tens(NCC_DT_I64, 1, (int64_t[]){2}, iv)};
  ncc_tensor o[3];
  run_ok(ins, 2, o, 3);
  check_dims(&o[0], 2, (int64_t[]){2, 2});
  check_f32(&o[0], 4, (float[]){5, 6, 1, 2}, 0);
  check_dims(&o[1], 2, (int64_t[]){3, 2});
  check_f32(&o[1], 6, (float[]){2, 1, 4, 3, 6, 5}, 0);
  check_dims(&o[2], 1, (int64_t[]){2});
  check_f32(&o[2], 2, (float[]){1, 2}, 0);
  for (int i = 0; i < 3; i++) ncc_tensor_free(&o[i]);
  iv[1] = 3;
  expect_error(ins, 2, 3, NCC_ERR_INPUT, "index 3 is out of range");
  iv[1] = -4;
  expect_error(ins, 2, 3, NCC_ERR_INPUT, "index -4 is out of range");
}

static void test_movement_misc(void **state) {
  (void)state;
  ncc_value *x = input("x", NCC_DT_I64, 3, (int64_t[]){2, 1, 3});
  ncc_value *t = OP(NCC_OP_TRANSPOSE, x);
  attr_ints("perm", 3, (int64_t[]){2, 0, 1});
  output(t); /* [3,2,1] */
  output(OP(NCC_OP_FLATTEN, x)); /* [2,3] */
  output(OP(NCC_OP_SQUEEZE, x, cst_i64(1, (int64_t[]){1}))); /* [2,3] */
  output(OP(NCC_OP_UNSQUEEZE, x, cst_i64(1, (int64_t[]){-1}))); /* [2,1,3,1] */
  output(OP(NCC_OP_CONCAT, x, x));
  attr_i("axis", 1); /* [2,2,3] */
  ncc_value *s0 = opn(NCC_OP_SPLIT, 2, 2, x, cst_i64(2, (int64_t[]){1, 2}));
  attr_i("axis", -1);
  ncc_node *split = last_node;
  output(s0);
  output(split->out[1]);
  output(OP(NCC_OP_EXPAND, x, cst_i64(3, (int64_t[]){2, 2, 3}))); /* [2,2,3] */
  ncc_value *sh = OP(NCC_OP_SHAPE, x);
  attr_i("start", -2);
  output(sh); /* [1, 3] */
  ncc_value *cos = OP(NCC_OP_CONSTANTOFSHAPE, sh);
  int32_t seven = 7;
  ncc_attr *va = ncc_node_add_attr(G, last_node, "value", NCC_ATTR_TENSOR);
  va->t.dtype = NCC_DT_I32;
  va->t.shape = mkshape(1, (int64_t[]){1});
  va->t.data = ncc_arena_memdup(&G->arena, &seven, 4);
  output(cos);
  output(OP(NCC_OP_RANGE, scalar_i64(10), scalar_i64(2), scalar_i64(-3)));
  infer();
  int64_t xv[] = {1, 2, 3, 4, 5, 6};
  ncc_tensor in = tens(NCC_DT_I64, 3, (int64_t[]){2, 1, 3}, xv), o[11];
  run_ok(&in, 1, o, 11);
  check_dims(&o[0], 3, (int64_t[]){3, 2, 1});
  check_i64(&o[0], 6, (int64_t[]){1, 4, 2, 5, 3, 6});
  check_dims(&o[1], 2, (int64_t[]){2, 3});
  check_i64(&o[1], 6, xv);
  check_dims(&o[2], 2, (int64_t[]){2, 3});
  check_dims(&o[3], 4, (int64_t[]){2, 1, 3, 1});
  check_dims(&o[4], 3, (int64_t[]){2, 2, 3});
  check_i64(&o[4], 12, (int64_t[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  check_dims(&o[5], 3, (int64_t[]){2, 1, 1});
  check_i64(&o[5], 2, (int64_t[]){1, 4});
  check_dims(&o[6], 3, (int64_t[]){2, 1, 2});
  check_i64(&o[6], 4, (int64_t[]){2, 3, 5, 6});
  check_i64(&o[7], 12, (int64_t[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  check_i64(&o[8], 2, (int64_t[]){1, 3});
  check_dims(&o[9], 2, (int64_t[]){1, 3});
  assert_int_equal(o[9].dtype, NCC_DT_I32);
  for (int i = 0; i < 3; i++) assert_int_equal(((int32_t *)o[9].data)[i], 7);
  check_i64(&o[10], 3, (int64_t[]){10, 7, 4});
  for (int i = 0; i < 11; i++) ncc_tensor_free(&o[i]);
}

/* Range on f32 (accumulating) and a Constant node with a tensor attr. */
static void test_sources(void **state) {
  (void)state;
  output(OP(NCC_OP_RANGE, scalar_f32(0.0f), scalar_f32(1.0f), scalar_f32(0.25f)));
  ncc_value *c = opn(NCC_OP_CONSTANT, 1, 0);
  float cv[] = {1.5f, -2.5f};
  ncc_attr *va = ncc_node_add_attr(G, last_node, "value", NCC_ATTR_TENSOR);
  va->t.dtype = NCC_DT_F32;
  va->t.shape = mkshape(1, (int64_t[]){2});
  va->t.data = ncc_arena_memdup(&G->arena, cv, sizeof cv);
  output(c);
  infer();
  ncc_tensor o[2];
  run_ok(NULL, 0, o, 2);
  check_f32(&o[0], 4, (float[]){0, 0.25f, 0.5f, 0.75f}, 0);
  check_f32(&o[1], 2, cv, 0);
  for (int i = 0; i < 2; i++) ncc_tensor_free(&o[i]);
}

/* PyTorch's export of x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze ->
 * Concat -> Reshape, evaluated at run time for several batch sizes. */
static void test_shape_subgraph(void **state) {
  (void)state;
  int64_t N = sym("N");
  ncc_value *x = input("x", NCC_DT_F32, 3, (int64_t[]){N, 3, 4});
  ncc_value *shp = OP(NCC_OP_SHAPE, x);
  ncc_value *n0 = OP(NCC_OP_GATHER, shp, scalar_i64(0));
  ncc_value *u = OP(NCC_OP_UNSQUEEZE, n0, cst_i64(1, (int64_t[]){0}));
  ncc_value *cat = OP(NCC_OP_CONCAT, u, cst_i64(1, (int64_t[]){-1}));
  attr_i("axis", 0);
  ncc_value *r = OP(NCC_OP_RESHAPE, x, cat);
  output(OP(NCC_OP_ADD, r, scalar_f32(1.0f)));
  infer();
  float buf[5 * 12];
  for (int i = 0; i < 60; i++) buf[i] = (float)i;
  for (int64_t n = 1; n <= 5; n += 2) {
    ncc_tensor in = tens(NCC_DT_F32, 3, (int64_t[]){n, 3, 4}, buf), o;
    run_ok(&in, 1, &o, 1);
    check_dims(&o, 2, (int64_t[]){n, 12});
    for (int64_t i = 0; i < n * 12; i++)
      assert_true(((float *)o.data)[i] == (float)i + 1.0f);
    ncc_tensor_free(&o);
  }
}

/* ---- interpreter behaviour ---- */

/* Outputs that are inputs or constants are copied, a value listed twice is
 * returned twice, and an unused second output is dropped. */
static void test_output_kinds(void **state) {
  (void)state;
  ncc_value *x = input("x", NCC_DT_F32, 1, (int64_t[]){2});
  ncc_value *k = cst(NCC_DT_F32, 1, (int64_t[]){2}, (float[]){7, 8});
  ncc_value *y = OP(NCC_OP_NEG, x);
  opn(NCC_OP_SPLIT, 2, 1, x); /* outputs unused */
  output(x);
  output(k);
  output(y);
  output(y);
  infer();
  float xv[] = {1, 2};
  ncc_tensor in = tens(NCC_DT_F32, 1, (int64_t[]){2}, xv), o[4];
  run_ok(&in, 1, o, 4);
  check_f32(&o[0], 2, xv, 0);
  assert_true(o[0].data != (void *)xv && o[0].owns_data);
  check_f32(&o[1], 2, (float[]){7, 8}, 0);
  assert_true(o[1].owns_data);
  check_f32(&o[2], 2, (float[]){-1, -2}, 0);
  check_f32(&o[3], 2, (float[]){-1, -2}, 0);
  assert_true(o[2].data != o[3].data);
  for (int i = 0; i < 4; i++) ncc_tensor_free(&o[i]);
}

/* Counting allocator: a header records each block's size, so live and peak
 * bytes are known even when ncc_free is told size 0. It can fail the Nth
 * allocation. */
typedef struct counting {
  size_t live, peak;
  long allocs, live_blocks, fail_at; /* fail_at 0: never */
} counting;

#define HDR 16

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  counting *c = ud;
  (void)osize;
  size_t old = 0;
  unsigned char *base = NULL;
  if (ptr) {
    base = (unsigned char *)ptr - HDR;
    memcpy(&old, base, sizeof old);
  }
  if (nsize == 0) {
    if (ptr) {
      c->live -= old;
      c->live_blocks--;
      free(base);
    }
    return NULL;
  }
  if (c->fail_at && ++c->allocs == c->fail_at) return NULL;
  unsigned char *nb = realloc(base, nsize + HDR);
  if (!nb) return NULL;
  memcpy(nb, &nsize, sizeof nsize);
  c->live += nsize - old;
  if (!ptr) c->live_blocks++;
  if (c->live > c->peak) c->peak = c->live;
  return nb + HDR;
}

/* A chain of 100 ops over 64 KiB tensors must not keep them all alive. */
static void test_frees_intermediates(void **state) {
  (void)state;
  enum { DEPTH = 100, W = 16384 };
  ncc_value *x = input("x", NCC_DT_F32, 1, (int64_t[]){W});
  ncc_value *v = x;
  for (int i = 0; i < DEPTH; i++)
    v = (i % 2) ? OP(NCC_OP_ADD, v, x) : OP(NCC_OP_RELU, v);
  output(v);
  infer();
  float *xv = calloc(W, sizeof(float));
  assert_non_null(xv);
  for (int i = 0; i < W; i++) xv[i] = (float)(i % 7) - 3.0f;
  ncc_tensor in = tens(NCC_DT_F32, 1, (int64_t[]){W}, xv), o;
  counting c = {0};
  ncc_set_allocator(count_alloc, &c);
  ncc_status st = run(&in, 1, &o, 1);
  ncc_set_allocator(NULL, NULL);
  assert_int_equal(st, NCC_OK);
  /* At most two tensors live at once (an op's input and output), plus the
   * interpreter's small bookkeeping. */
  assert_true(c.peak < 3 * W * sizeof(float));
  assert_int_equal(c.live_blocks, 1); /* only the returned output */
  assert_int_equal(c.live, W * sizeof(float));
  float want = xv[5];
  for (int i = 0; i < DEPTH; i++)
    want = (i % 2) ? want + xv[5] : (want < 0 ? 0 : want);
  assert_true(((float *)o.data)[5] == want);
  /* o was allocated by the counting allocator: free it through it. */
  ncc_set_allocator(count_alloc, &c);
  ncc_tensor_free(&o);
  ncc_set_allocator(NULL, NULL);
  assert_int_equal(c.live_blocks, 0);
  free(xv);
}

/* Every allocation of a run failing in turn gives NCC_ERR_NOMEM, empty
 * outputs and nothing leaked (ASan would also catch a leak or bad free). */
static void test_alloc_failure(void **state) {
  (void)state;
  int64_t N = sym("N");
  ncc_value *x = input("x", NCC_DT_F32, 2, (int64_t[]){N, 4});
  ncc_value *shp = OP(NCC_OP_SHAPE, x);
  ncc_value *r = OP(NCC_OP_RESHAPE, OP(NCC_OP_RELU, x), shp);
  ncc_value *s = OP(NCC_OP_ADD, r, x);
  output(OP(NCC_OP_MUL, s, scalar_f32(2.0f)));
  output(x); /* copied */
  output(OP(NCC_OP_CONCAT, s, x));
  attr_i("axis", 0);
  infer();
  float xv[8] = {1, -2, 3, -4, 5, -6, 7, -8};
  ncc_tensor in = tens(NCC_DT_F32, 2, (int64_t[]){2, 4}, xv);
  bool succeeded = false;
  for (long k = 1; k <= 200 && !succeeded; k++) {
    counting c = {.fail_at = k};
    ncc_tensor o[3];
    ncc_set_allocator(count_alloc, &c);
    ncc_status st = run(&in, 1, o, 3);
    if (st == NCC_OK) {
      for (int i = 0; i < 3; i++) ncc_tensor_free(&o[i]);
      succeeded = true;
    }
    ncc_set_allocator(NULL, NULL);
    assert_int_equal(c.live_blocks, 0);
    if (st == NCC_OK) {
      assert_true(k > 5); /* the run did allocate several times */
      continue;
    }
    if (st != NCC_ERR_NOMEM)
      fail_msg("failing allocation %ld: status %d (%s)", k, st,
               ncc_error_message());
    for (int i = 0; i < 3; i++) assert_null(o[i].data);
  }
  assert_true(succeeded);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
      T(test_broadcast_binary),  T(test_compare_where_nan),
      T(test_integer_ops),       T(test_i32_wrap),
      T(test_unary_values),      T(test_unary_domain),
      T(test_cast_edges),        T(test_cast_integers),
      T(test_symbolic_binding),  T(test_symbol_within_input),
      T(test_slice),             T(test_pad_modes),
      T(test_gather),            T(test_movement_misc),
      T(test_sources),           T(test_shape_subgraph),
      T(test_output_kinds),      T(test_frees_intermediates),
      T(test_alloc_failure),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
