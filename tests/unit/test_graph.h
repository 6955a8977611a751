/* tests/unit/test_graph.h — building small graphs and random inputs for the
 * backend tests (tests/ops/op_cases.c, test_cpu_module.c, test_blocked.c,
 * tests/gpu/test_gpu_module.c),
 * which compare a target with `ref` on the same graphs. Header-only: each
 * test is one executable; one graph G is built at a time (cmocka setup and
 * teardown make a fresh one per test).
 *
 *   ncc_value *x = input(NCC_DT_F32, 2, (int64_t[]){sym("N"), 17});
 *   ncc_value *y = OP(NCC_OP_ADD, x, scalar_f32(1.0f));
 *   output(y); infer();
 *
 * compare_outputs() checks a target's result against ref's.
 */
#ifndef NCC_TEST_GRAPH_H
#define NCC_TEST_GRAPH_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/shape.h"

static ncc_graph *G;
static ncc_node *last_node; /* the node the last OP() added (for attributes) */

static inline int setup(void **state) {
  (void)state;
  G = ncc_graph_new("t");
  return G ? 0 : -1;
}

static inline int teardown(void **state) {
  (void)state;
  ncc_graph_free(G);
  G = NULL;
  return 0;
}

static inline ncc_shape mkshape(int rank, const int64_t *d) {
  ncc_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) s.d[i] = d[i];
  return s;
}

static inline int64_t sym(const char *name) {
  int id = ncc_graph_sym(G, name, strlen(name));
  assert_true(id >= 0);
  return ncc_dim_sym(id);
}

static inline ncc_value *input(ncc_dtype dt, int rank, const int64_t *d) {
  ncc_shape s = mkshape(rank, d);
  ncc_value *v = ncc_graph_add_value(G, NULL, NCC_VAL_INPUT, dt, &s);
  assert_non_null(v);
  assert_int_equal(ncc_graph_add_input(G, v), NCC_OK);
  return v;
}

static inline ncc_value *scalar_f32(float v) {
  ncc_shape s = {.rank = 0};
  ncc_value *c = ncc_graph_add_const(G, NULL, NCC_DT_F32, &s, &v);
  assert_non_null(c);
  return c;
}

static inline ncc_value *axes_const(int n, const int64_t *axes) {
  ncc_shape s = {.rank = 1, .d = {n}};
  ncc_value *c = ncc_graph_add_const(G, NULL, NCC_DT_I64, &s, axes);
  assert_non_null(c);
  return c;
}

static inline ncc_value *opv(ncc_op op, int n_in, ncc_value **in) {
  ncc_node *n = ncc_graph_add_node(G, op, NULL, n_in, in, 1);
  assert_non_null(n);
  ncc_value *v = ncc_graph_add_value(G, NULL, NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  assert_non_null(v);
  ncc_node_set_output(n, 0, v);
  last_node = n;
  return v;
}

#define OP(op, ...)                                                            \
  opv(op, (int)(sizeof((ncc_value *[]){__VA_ARGS__}) / sizeof(ncc_value *)),   \
      (ncc_value *[]){__VA_ARGS__})

static inline void output(ncc_value *v) {
  assert_int_equal(ncc_graph_add_output(G, v), NCC_OK);
}

static inline void infer(void) {
  ncc_status st = ncc_infer_graph(G);
  if (st != NCC_OK) print_error("infer: %s\n", ncc_error_message());
  assert_int_equal(st, NCC_OK);
}

/* xorshift64: the same inputs on every run and every machine */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static inline double urand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

/* Random tensor with concrete dims d; f32 in [lo, hi), bool fair coins,
 * other dtypes zero. */
static inline ncc_tensor rand_tensor(ncc_dtype dt, int rank, const int64_t *d,
                                     double lo, double hi) {
  ncc_tensor t;
  assert_int_equal(ncc_tensor_alloc(&t, dt, rank, d), NCC_OK);
  int64_t n = ncc_tensor_numel(&t);
  for (int64_t i = 0; i < n; i++) {
    if (dt == NCC_DT_F32)
      ((float *)t.data)[i] = (float)(lo + (hi - lo) * urand());
    else if (dt == NCC_DT_BOOL)
      ((uint8_t *)t.data)[i] = urand() < 0.5;
  }
  return t;
}

/* A random f32 constant in [-1, 1) (weights). */
static inline ncc_value *rand_const(int rank, const int64_t *d) {
  ncc_tensor t = rand_tensor(NCC_DT_F32, rank, d, -1, 1);
  ncc_shape s = mkshape(rank, d);
  ncc_value *c = ncc_graph_add_const(G, NULL, NCC_DT_F32, &s, t.data);
  assert_non_null(c);
  ncc_tensor_free(&t);
  return c;
}

/* A target's result `got` against ref's: same dtype and dims; bools
 * exactly, floats within atol + rtol * |ref| (NaN matches NaN, equal
 * infinities match). `who` names the target, `what` the case, `out` the
 * output (< 0: not printed). */
static inline void compare_outputs(const ncc_tensor *ref, const ncc_tensor *got, double atol,
                                   double rtol, const char *who, const char *what, int out) {
  char where[160];
  if (out >= 0) snprintf(where, sizeof where, "%s (output %d)", what, out);
  else snprintf(where, sizeof where, "%s", what);
  assert_int_equal(ref->dtype, got->dtype);
  assert_int_equal(ref->rank, got->rank);
  for (int d = 0; d < ref->rank; d++) assert_int_equal(ref->dims[d], got->dims[d]);
  int64_t n = ncc_tensor_numel(ref);
  for (int64_t i = 0; i < n; i++) {
    if (ref->dtype == NCC_DT_BOOL) {
      uint8_t x = ((uint8_t *)ref->data)[i], y = ((uint8_t *)got->data)[i];
      if (x != y) fail_msg("%s: element %lld: ref %d %s %d", where, (long long)i, x, who, y);
      continue;
    }
    double x = ((float *)ref->data)[i], y = ((float *)got->data)[i];
    if ((isnan(x) && isnan(y)) || x == y) continue;
    if (!(fabs(x - y) <= atol + rtol * fabs(x)))
      fail_msg("%s: element %lld: ref %.9g %s %.9g", where, (long long)i, x, who, y);
  }
}

#endif /* NCC_TEST_GRAPH_H */
