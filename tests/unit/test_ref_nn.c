/* tests/unit/test_ref_nn.c — the reference interpreter's compute kernels:
 * the blocked GEMM core, MatMul, Gemm, Conv, BatchNormalization,
 * LayerNormalization, Softmax/LogSoftmax, Reduce{Mean,Sum,Max}, MaxPool,
 * AveragePool and GlobalAveragePool.
 *
 * Kernels are called directly on one-node graphs (no shape inference), with
 * small hand-checked cases (pooling edge cases checked against onnxruntime
 * 1.23), plus randomized comparisons of the blocked GEMM and of im2col /
 * depthwise / pointwise convolution against naive loops. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/ref/ref_nn.h"
#include "test_alloc.h"

/* ---- fixtures ---- */

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define NDIMS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define F32S(...) ((const float[]){__VA_ARGS__})
#define I64S(...) ((const int64_t[]){__VA_ARGS__})

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void) { /* uniform in [-1, 1) */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((rng >> 40) & 0xffffff) / (float)(1 << 23) - 1.0f;
}

static ncc_tensor mk(ncc_dtype dt, int rank, const int64_t *dims,
                     const void *data) {
  ncc_tensor t;
  assert_int_equal(ncc_tensor_alloc(&t, dt, rank, dims), NCC_OK);
  if (data)
    memcpy(t.data, data, ncc_tensor_nbytes(&t));
  return t;
}

static ncc_tensor mkf(int rank, const int64_t *dims, const float *data) {
  return mk(NCC_DT_F32, rank, dims, data);
}

static ncc_tensor mk_rand(int rank, const int64_t *dims) {
  ncc_tensor t = mkf(rank, dims, NULL);
  float *p = t.data;
  for (int64_t i = 0; i < ncc_tensor_numel(&t); i++)
    p[i] = frand();
  return t;
}

/* A one-node graph; inputs listed in `present` are values, others NULL. */
typedef struct fx {
  ncc_graph *g;
  ncc_node *n;
} fx;

static fx mk_node(ncc_op op, int n_in, unsigned present, int n_out) {
  fx f;
  f.g = ncc_graph_new("t");
  assert_non_null(f.g);
  ncc_shape s = {0, {0}};
  ncc_value *ins[8] = {NULL};
  for (int i = 0; i < n_in; i++)
    if (present & (1u << i))
      ins[i] = ncc_graph_add_value(f.g, NULL, NCC_VAL_INPUT, NCC_DT_F32, &s);
  f.n = ncc_graph_add_node(f.g, op, "t", n_in, ins, n_out);
  assert_non_null(f.n);
  for (int i = 0; i < n_out; i++)
    ncc_node_set_output(
        f.n, i, ncc_graph_add_value(f.g, NULL, NCC_VAL_NODE, NCC_DT_F32, &s));
  return f;
}

static void set_ints(fx *f, const char *name, int count, const int64_t *v) {
  assert_int_equal(ncc_node_set_attr_ints(f->g, f->n, name, v, count), NCC_OK);
}
static void set_int(fx *f, const char *name, int64_t v) {
  assert_int_equal(ncc_node_set_attr_int(f->g, f->n, name, v), NCC_OK);
}
static void set_float(fx *f, const char *name, float v) {
  assert_int_equal(ncc_node_set_attr_float(f->g, f->n, name, v), NCC_OK);
}
static void set_str(fx *f, const char *name, const char *v) {
  assert_int_equal(ncc_node_set_attr_string(f->g, f->n, name, v), NCC_OK);
}

static void expect_f32(const ncc_tensor *t, const float *want, int64_t count,
                       float tol) {
  assert_int_equal(ncc_tensor_numel(t), count);
  const float *p = t->data;
  for (int64_t i = 0; i < count; i++) {
    if (isnan(want[i])) {
      assert_true(isnan(p[i]));
      continue;
    }
    if (isinf(want[i])) {
      assert_true(p[i] == want[i]);
      continue;
    }
    if (fabsf(p[i] - want[i]) > tol * (1.0f + fabsf(want[i]))) {
      print_error("element %lld: got %.9g want %.9g\n", (long long)i, p[i],
                  want[i]);
      fail();
    }
  }
}

static void expect_i64(const ncc_tensor *t, const int64_t *want,
                       int64_t count) {
  assert_int_equal(ncc_tensor_numel(t), count);
  const int64_t *p = t->data;
  for (int64_t i = 0; i < count; i++)
    assert_int_equal(p[i], want[i]);
}

static void free_all(fx *f, ncc_tensor *ts, int n) {
  for (int i = 0; i < n; i++)
    ncc_tensor_free(&ts[i]);
  ncc_graph_free(f->g);
}

/* ---- GEMM core ---- */

/* C += alpha * op(A) op(B), checked against a double triple loop. */
static void check_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                       float alpha) {
  float *a = malloc(sizeof(float) * (size_t)(m * k + 1));
  float *b = malloc(sizeof(float) * (size_t)(k * n + 1));
  float *c = malloc(sizeof(float) * (size_t)(m * n));
  double *want = malloc(sizeof(double) * (size_t)(m * n));
  double *mag = malloc(sizeof(double) * (size_t)(m * n));
  assert_true(a && b && c && want && mag);
  for (int64_t i = 0; i < m * k; i++)
    a[i] = frand();
  for (int64_t i = 0; i < k * n; i++)
    b[i] = frand();
  for (int64_t i = 0; i < m * n; i++)
    c[i] = frand();
  int64_t ars = ta ? 1 : k, acs = ta ? m : 1;
  int64_t brs = tb ? 1 : n, bcs = tb ? k : 1;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0, g = 0;
      for (int64_t p = 0; p < k; p++) {
        double t = (double)a[i * ars + p * acs] * b[p * brs + j * bcs];
        s += t;
        g += fabs(t);
      }
      want[i * n + j] = c[i * n + j] + alpha * s;
      mag[i * n + j] = fabs(c[i * n + j]) + fabs(alpha) * g;
    }
  assert_int_equal(
      ncc_ref_sgemm(m, n, k, alpha, a, ars, acs, b, brs, bcs, c, n), NCC_OK);
  for (int64_t i = 0; i < m * n; i++)
    if (fabs(c[i] - want[i]) > 1e-5 * mag[i] + 1e-6) {
      print_error("gemm %lldx%lldx%lld ta=%d tb=%d: [%lld] %g vs %g\n",
                  (long long)m, (long long)n, (long long)k, ta, tb,
                  (long long)i, c[i], want[i]);
      fail();
    }
  free(a), free(b), free(c), free(want), free(mag);
}

static void test_gemm_core_random(void **state) {
  (void)state;
  const int64_t sizes[] = {1, 3, 17, 65, 130};
  int v = 0;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 5; j++)
      for (int l = 0; l < 5; l++, v++)
        check_gemm(sizes[i], sizes[j], sizes[l], v & 1, (v >> 1) & 1,
                   v % 3 ? 1.0f : -0.5f);
  /* Crossing the KC (256) and NC (1024) block edges. */
  check_gemm(7, 1030, 300, false, false, 1.0f);
  check_gemm(100, 9, 513, true, true, 2.0f);
}

static void test_gemm_core_nomem(void **state) {
  (void)state;
  float a[20 * 20] = {0}, b[20 * 20] = {0}, c[20 * 20] = {0};
  test_alloc_arm(0);
  assert_int_equal(ncc_ref_sgemm(20, 20, 20, 1, a, 20, 1, b, 20, 1, c, 20),
                   NCC_ERR_NOMEM);
  /* Tiny products need no buffers. */
  test_alloc_arm(0);
  assert_int_equal(ncc_ref_sgemm(2, 2, 2, 1, a, 2, 1, b, 2, 1, c, 2), NCC_OK);
  assert_int_equal(test_alloc.calls, 0);
  test_alloc_disarm();
}

/* ---- MatMul ---- */

static void run_matmul(int ra, const int64_t *da, const void *a, int rb,
                       const int64_t *db, const void *b, int ry,
                       const int64_t *dy, ncc_dtype dt, const void *want) {
  fx f = mk_node(NCC_OP_MATMUL, 2, 3, 1);
  ncc_tensor t[3] = {mk(dt, ra, da, a), mk(dt, rb, db, b),
                     mk(dt, ry, dy, NULL)};
  const ncc_tensor *in[2] = {&t[0], &t[1]};
  assert_int_equal(ncc_ref_MATMUL(f.n, in, &t[2]), NCC_OK);
  if (dt == NCC_DT_F32)
    expect_f32(&t[2], want, ncc_tensor_numel(&t[2]), 1e-6f);
  else if (dt == NCC_DT_I64)
    expect_i64(&t[2], want, ncc_tensor_numel(&t[2]));
  else
    assert_memory_equal(t[2].data, want, ncc_tensor_nbytes(&t[2]));
  free_all(&f, t, 3);
}

static void test_matmul_small(void **state) {
  (void)state;
  const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {7, 8, 9, 10, 11, 12};
  run_matmul(2, DIMS(2, 3), a, 2, DIMS(3, 2), b, 2, DIMS(2, 2), NCC_DT_F32,
             F32S(58, 64, 139, 154));
  /* 1-D promotion: vector x matrix, matrix x vector, vector x vector. */
  run_matmul(1, DIMS(3), F32S(1, 2, 3), 2, DIMS(3, 2), b, 1, DIMS(2),
             NCC_DT_F32, F32S(58, 64));
  run_matmul(2, DIMS(2, 3), a, 1, DIMS(3), F32S(1, 1, 1), 1, DIMS(2),
             NCC_DT_F32, F32S(6, 15));
  run_matmul(1, DIMS(3), F32S(1, 2, 3), 1, DIMS(3), F32S(4, 5, 6), 0, NULL,
             NCC_DT_F32, F32S(32));
  /* Batched 1-D: [2,3] batch of vectors against a vector. */
  run_matmul(3, DIMS(2, 1, 3), a, 1, DIMS(3), F32S(1, 0, 1), 2, DIMS(2, 1),
             NCC_DT_F32, F32S(4, 10));
  run_matmul(2, DIMS(2, 2), I64S(1, 2, 3, 4), 2, DIMS(2, 1), I64S(5, 6), 2,
             DIMS(2, 1), NCC_DT_I64, I64S(17, 39));
  /* i32 wraps like two's complement hardware. */
  const int32_t ia[] = {INT32_MAX, 1}, ib[] = {2, 1}, iw[] = {-1};
  run_matmul(2, DIMS(1, 2), ia, 1, DIMS(2), ib, 1, DIMS(1), NCC_DT_I32, iw);
}

/* Broadcast batch dims, checked against a naive loop. */
static void check_matmul_batched(int ra, const int64_t *da, int rb,
                                 const int64_t *db, int ry, const int64_t *dy) {
  fx f = mk_node(NCC_OP_MATMUL, 2, 3, 1);
  ncc_tensor t[3] = {mk_rand(ra, da), mk_rand(rb, db), mkf(ry, dy, NULL)};
  const ncc_tensor *in[2] = {&t[0], &t[1]};
  assert_int_equal(ncc_ref_MATMUL(f.n, in, &t[2]), NCC_OK);
  int64_t m = da[ra - 2], k = da[ra - 1], n = db[rb - 1];
  int nb = ry - 2;
  int64_t batches = ncc_tensor_numel(&t[2]) / (m * n);
  const float *a = t[0].data, *b = t[1].data, *y = t[2].data;
  for (int64_t bi = 0; bi < batches; bi++) {
    int64_t rem = bi, ao = 0, bo = 0, as = m * k, bs = k * n;
    for (int i = nb - 1; i >= 0; i--) {
      int64_t idx = rem % dy[i];
      rem /= dy[i];
      int ja = i - (nb - (ra - 2)), jb = i - (nb - (rb - 2));
      int64_t dA = ja >= 0 ? da[ja] : 1, dB = jb >= 0 ? db[jb] : 1;
      ao += (dA == 1 ? 0 : idx) * as;
      bo += (dB == 1 ? 0 : idx) * bs;
      as *= dA, bs *= dB;
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t p = 0; p < k; p++)
          s += (double)a[ao + i * k + p] * b[bo + p * n + j];
        assert_true(fabs(y[bi * m * n + i * n + j] - s) < 1e-4);
      }
  }
  free_all(&f, t, 3);
}

static void test_matmul_batched(void **state) {
  (void)state;
  check_matmul_batched(4, DIMS(2, 1, 3, 4), 3, DIMS(3, 4, 5), 4,
                       DIMS(2, 3, 3, 5));
  check_matmul_batched(3, DIMS(4, 9, 16), 2, DIMS(16, 11), 3, DIMS(4, 9, 11));
  check_matmul_batched(2, DIMS(9, 16), 3, DIMS(3, 16, 10), 3, DIMS(3, 9, 10));
  check_matmul_batched(3, DIMS(1, 20, 30), 3, DIMS(2, 30, 7), 3,
                       DIMS(2, 20, 7));
}

static void test_matmul_errors(void **state) {
  (void)state;
  fx f = mk_node(NCC_OP_MATMUL, 2, 3, 1);
  ncc_tensor t[3] = {mkf(2, DIMS(2, 3), NULL), mkf(2, DIMS(4, 2), NULL),
                     mkf(2, DIMS(2, 2), NULL)};
  const ncc_tensor *in[2] = {&t[0], &t[1]};
  assert_int_equal(ncc_ref_MATMUL(f.n, in, &t[2]), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "MatMul"));
  free_all(&f, t, 3);
  f = mk_node(NCC_OP_MATMUL, 2, 3, 1);
  /* int8 is not an ONNX MatMul type (f16/bf16/f64/u32/u64 are) */
  ncc_tensor u[3] = {mk(NCC_DT_I8, 1, DIMS(2), NULL),
                     mk(NCC_DT_I8, 1, DIMS(2), NULL),
                     mk(NCC_DT_I8, 0, NULL, NULL)};
  const ncc_tensor *uin[2] = {&u[0], &u[1]};
  assert_int_equal(ncc_ref_MATMUL(f.n, uin, &u[2]), NCC_ERR_UNSUPPORTED);
  free_all(&f, u, 3);
}

/* ---- Gemm ---- */

static void test_gemm_op(void **state) {
  (void)state;
  /* Y = 2 * A B^T + 0.5 * C, C [N] broadcast over rows. */
  fx f = mk_node(NCC_OP_GEMM, 3, 7, 1);
  set_int(&f, "transB", 1);
  set_float(&f, "alpha", 2.0f);
  set_float(&f, "beta", 0.5f);
  ncc_tensor t[4] = {mkf(2, DIMS(2, 3), F32S(1, 2, 3, 4, 5, 6)),
                     mkf(2, DIMS(2, 3), F32S(1, 0, 0, 0, 1, 1)),
                     mkf(1, DIMS(2), F32S(10, 20)), mkf(2, DIMS(2, 2), NULL)};
  const ncc_tensor *in[3] = {&t[0], &t[1], &t[2]};
  assert_int_equal(ncc_ref_GEMM(f.n, in, &t[3]), NCC_OK);
  expect_f32(&t[3], F32S(2 + 5, 10 + 10, 8 + 5, 22 + 10), 4, 1e-6f);
  free_all(&f, t, 4);

  /* transA, C [M, 1]. */
  f = mk_node(NCC_OP_GEMM, 3, 7, 1);
  set_int(&f, "transA", 1);
  ncc_tensor u[4] = {mkf(2, DIMS(3, 2), F32S(1, 4, 2, 5, 3, 6)),
                     mkf(2, DIMS(3, 1), F32S(1, 1, 1)),
                     mkf(2, DIMS(2, 1), F32S(-1, -2)),
                     mkf(2, DIMS(2, 1), NULL)};
  const ncc_tensor *uin[3] = {&u[0], &u[1], &u[2]};
  assert_int_equal(ncc_ref_GEMM(f.n, uin, &u[3]), NCC_OK);
  expect_f32(&u[3], F32S(5, 13), 2, 1e-6f);
  free_all(&f, u, 4);

  /* Scalar C; then no C at all. */
  f = mk_node(NCC_OP_GEMM, 3, 7, 1);
  ncc_tensor v[4] = {mkf(2, DIMS(1, 2), F32S(1, 2)),
                     mkf(2, DIMS(2, 2), F32S(1, 2, 3, 4)),
                     mkf(0, NULL, F32S(100)), mkf(2, DIMS(1, 2), NULL)};
  const ncc_tensor *vin[3] = {&v[0], &v[1], &v[2]};
  assert_int_equal(ncc_ref_GEMM(f.n, vin, &v[3]), NCC_OK);
  expect_f32(&v[3], F32S(107, 110), 2, 1e-6f);
  ncc_graph_free(f.g);
  f = mk_node(NCC_OP_GEMM, 2, 3, 1);
  assert_int_equal(ncc_ref_GEMM(f.n, vin, &v[3]), NCC_OK);
  expect_f32(&v[3], F32S(7, 10), 2, 1e-6f);
  free_all(&f, v, 4);
}

/* ---- Conv ---- */

typedef struct conv_case {
  int sp; /* spatial rank 1..3 */
  int64_t n, c, m, group;
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
  const char *auto_pad; /* NULL: explicit pads */
  bool bias;
} conv_case;

/* Output size and begin pads, derived independently of the kernel. */
static void conv_case_out(const conv_case *cc, int64_t *out, int64_t *pb) {
  for (int i = 0; i < cc->sp; i++) {
    int64_t span = (cc->k[i] - 1) * cc->d[i] + 1;
    if (!cc->auto_pad) {
      out[i] = (cc->in[i] + cc->pb[i] + cc->pe[i] - span) / cc->s[i] + 1;
      pb[i] = cc->pb[i];
    } else if (!strcmp(cc->auto_pad, "VALID")) {
      out[i] = (cc->in[i] - span) / cc->s[i] + 1;
      pb[i] = 0;
    } else {
      out[i] = (cc->in[i] + cc->s[i] - 1) / cc->s[i];
      int64_t total = (out[i] - 1) * cc->s[i] + span - cc->in[i];
      if (total < 0)
        total = 0;
      pb[i] = !strcmp(cc->auto_pad, "SAME_UPPER") ? total / 2 : (total + 1) / 2;
    }
  }
}

/* Naive direct convolution over up to 3 spatial dims (flattened loops). */
static void conv_naive(const conv_case *cc, const int64_t *out,
                       const int64_t *pb, const float *x, const float *w,
                       const float *b, double *y, double *mag) {
  int64_t cg = cc->c / cc->group, mg = cc->m / cc->group;
  int64_t isz = 1, osz = 1, ksz = 1;
  for (int i = 0; i < cc->sp; i++)
    isz *= cc->in[i], osz *= out[i], ksz *= cc->k[i];
  for (int64_t nb = 0; nb < cc->n; nb++)
    for (int64_t m = 0; m < cc->m; m++)
      for (int64_t o = 0; o < osz; o++) {
        double acc = b ? b[m] : 0, g = b ? fabs(b[m]) : 0;
        for (int64_t ci = 0; ci < cg; ci++)
          for (int64_t kk = 0; kk < ksz; kk++) {
            int64_t orem = o, krem = kk, ioff = 0, istr = 1;
            bool ok = true;
            for (int i = cc->sp - 1; i >= 0; i--) {
              int64_t oi = orem % out[i], ki = krem % cc->k[i];
              orem /= out[i], krem /= cc->k[i];
              int64_t ii = oi * cc->s[i] - pb[i] + ki * cc->d[i];
              ok = ok && ii >= 0 && ii < cc->in[i];
              ioff += ii * istr;
              istr *= cc->in[i];
            }
            if (!ok)
              continue;
            int64_t c = (m / mg) * cg + ci;
            double t = (double)x[(nb * cc->c + c) * isz + ioff] *
                       w[(m * cg + ci) * ksz + kk];
            acc += t;
            g += fabs(t);
          }
        y[(nb * cc->m + m) * osz + o] = acc;
        mag[(nb * cc->m + m) * osz + o] = g;
      }
}

static void check_conv(const conv_case *cc) {
  int64_t out[3], pb[3], dx[5], dw[5], dy[5];
  conv_case_out(cc, out, pb);
  int r = cc->sp + 2;
  dx[0] = dy[0] = cc->n;
  dx[1] = cc->c;
  dy[1] = dw[0] = cc->m;
  dw[1] = cc->c / cc->group;
  for (int i = 0; i < cc->sp; i++) {
    dx[2 + i] = cc->in[i];
    dw[2 + i] = cc->k[i];
    dy[2 + i] = out[i];
  }
  fx f = mk_node(NCC_OP_CONV, cc->bias ? 3 : 2, 7, 1);
  set_int(&f, "group", cc->group);
  set_ints(&f, "strides", cc->sp, cc->s);
  set_ints(&f, "dilations", cc->sp, cc->d);
  if (cc->auto_pad) {
    set_str(&f, "auto_pad", cc->auto_pad);
  } else {
    int64_t pads[6];
    for (int i = 0; i < cc->sp; i++)
      pads[i] = cc->pb[i], pads[cc->sp + i] = cc->pe[i];
    set_ints(&f, "pads", 2 * cc->sp, pads);
  }
  ncc_tensor t[4] = {mk_rand(r, dx), mk_rand(r, dw), mk_rand(1, &cc->m),
                     mkf(r, dy, NULL)};
  const ncc_tensor *in[3] = {&t[0], &t[1], &t[2]};
  assert_int_equal(ncc_ref_CONV(f.n, in, &t[3]), NCC_OK);
  int64_t total = ncc_tensor_numel(&t[3]);
  double *want = malloc(sizeof(double) * (size_t)total);
  double *mag = malloc(sizeof(double) * (size_t)total);
  assert_true(want && mag);
  conv_naive(cc, out, pb, t[0].data, t[1].data, cc->bias ? t[2].data : NULL,
             want, mag);
  const float *y = t[3].data;
  for (int64_t i = 0; i < total; i++)
    if (fabs(y[i] - want[i]) > 1e-5 * mag[i] + 1e-6) {
      print_error("conv sp=%d group=%lld: [%lld] %g vs %g\n", cc->sp,
                  (long long)cc->group, (long long)i, y[i], want[i]);
      fail();
    }
  free(want), free(mag);
  free_all(&f, t, 4);
}

static void test_conv_hand(void **state) {
  (void)state;
  fx f = mk_node(NCC_OP_CONV, 3, 7, 1);
  ncc_tensor t[4] = {mkf(4, DIMS(1, 1, 3, 3), F32S(1, 2, 3, 4, 5, 6, 7, 8, 9)),
                     mkf(4, DIMS(1, 1, 2, 2), F32S(1, 0, 0, 1)),
                     mkf(1, DIMS(1), F32S(0.5f)),
                     mkf(4, DIMS(1, 1, 2, 2), NULL)};
  const ncc_tensor *in[3] = {&t[0], &t[1], &t[2]};
  assert_int_equal(ncc_ref_CONV(f.n, in, &t[3]), NCC_OK);
  expect_f32(&t[3], F32S(6.5f, 8.5f, 12.5f, 14.5f), 4, 0);
  free_all(&f, t, 4);
}

static void test_conv_random(void **state) {
  (void)state;
  /* clang-format off */
  static const conv_case cases[] = {
      /* sp n c m group  in        k        s        d        pb       pe */
      {2, 1, 3, 4, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, NULL, true},
      {2, 2, 4, 6, 2, {9, 8}, {3, 2}, {2, 3}, {1, 1}, {0, 1}, {2, 0}, NULL, true},
      {2, 1, 3, 5, 1, {11, 10}, {3, 3}, {1, 2}, {2, 3}, {2, 0}, {1, 3}, NULL, false},
      /* depthwise, channel multiplier 1 and 2, strided + padded */
      {2, 1, 5, 5, 5, {8, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, NULL, true},
      {2, 2, 3, 6, 3, {7, 7}, {3, 2}, {1, 2}, {2, 1}, {2, 0}, {1, 1}, NULL, true},
      /* pointwise (no im2col) and strided pointwise */
      {2, 2, 8, 7, 1, {5, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, NULL, true},
      {2, 1, 8, 6, 2, {5, 6}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, NULL, false},
      /* auto_pad */
      {2, 1, 2, 3, 1, {7, 8}, {3, 4}, {2, 2}, {1, 1}, {0}, {0}, "SAME_UPPER", true},
      {2, 1, 2, 3, 1, {7, 8}, {3, 4}, {2, 3}, {1, 2}, {0}, {0}, "SAME_LOWER", true},
      {2, 1, 4, 2, 2, {6, 7}, {2, 3}, {1, 2}, {1, 1}, {0}, {0}, "VALID", false},
      /* 1-D and 3-D */
      {1, 2, 4, 6, 2, {13}, {3}, {2}, {2}, {3}, {1}, NULL, true},
      {3, 1, 2, 3, 1, {4, 5, 6}, {2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 1}, {0, 1, 1}, NULL, true},
      /* big enough for the packed GEMM blocks and several row panels */
      {2, 1, 16, 20, 1, {12, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, NULL, true},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_conv(&cases[i]);
}

/* The im2col buffer is bounded (64 MiB): with Cg*kernel = 18432 rows it is
 * filled in chunks of 910 pixels, which end mid-row. */
static void test_conv_chunked(void **state) {
  (void)state;
  conv_case cc = {2,      1,      2048,   2,      1,    {32, 32}, {3, 3},
                  {1, 1}, {1, 1}, {1, 1}, {1, 1}, NULL, true};
  check_conv(&cc);
}

static void test_conv_errors(void **state) {
  (void)state;
  fx f = mk_node(NCC_OP_CONV, 2, 3, 1);
  set_int(&f, "group", 2);
  ncc_tensor t[3] = {mkf(4, DIMS(1, 3, 4, 4), NULL),
                     mkf(4, DIMS(2, 1, 3, 3), NULL),
                     mkf(4, DIMS(1, 2, 2, 2), NULL)};
  const ncc_tensor *in[2] = {&t[0], &t[1]};
  assert_int_equal(ncc_ref_CONV(f.n, in, &t[2]), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "group"));
  ncc_graph_free(f.g);

  f = mk_node(NCC_OP_CONV, 2, 3, 1);
  set_str(&f, "auto_pad", "SAME");
  ncc_tensor_free(&t[0]);
  t[0] = mkf(4, DIMS(1, 1, 4, 4), NULL);
  ncc_tensor_free(&t[1]);
  t[1] = mkf(4, DIMS(2, 1, 3, 3), NULL);
  assert_int_equal(ncc_ref_CONV(f.n, in, &t[2]), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "auto_pad"));
  ncc_graph_free(f.g);

  f = mk_node(NCC_OP_CONV, 2, 3, 1);
  set_ints(&f, "kernel_shape", 2, DIMS(2, 2));
  assert_int_equal(ncc_ref_CONV(f.n, in, &t[2]), NCC_ERR_INPUT);
  free_all(&f, t, 3);
}

/* ---- BatchNormalization, LayerNormalization, Softmax ---- */

static void test_batchnorm(void **state) {
  (void)state;
  fx f = mk_node(NCC_OP_BATCHNORM, 5, 31, 1);
  set_float(&f, "epsilon", 0.0f);
  ncc_tensor t[6] = {mkf(3, DIMS(1, 2, 2), F32S(1, 2, 3, 4)),
                     mkf(1, DIMS(2), F32S(2, 1)),
                     mkf(1, DIMS(2), F32S(0, 10)),
                     mkf(1, DIMS(2), F32S(1, 3)),
                     mkf(1, DIMS(2), F32S(4, 0.25f)),
                     mkf(3, DIMS(1, 2, 2), NULL)};
  const ncc_tensor *in[5] = {&t[0], &t[1], &t[2], &t[3], &t[4]};
  assert_int_equal(ncc_ref_BATCHNORM(f.n, in, &t[5]), NCC_OK);
  expect_f32(&t[5], F32S(0, 1, 10, 12), 4, 1e-6f);
  free_all(&f, t, 6);
}

static void test_layernorm(void **state) {
  (void)state;
  /* Values from onnxruntime 1.23. */
  fx f = mk_node(NCC_OP_LAYERNORM, 3, 7, 3);
  ncc_tensor t[6] = {mkf(2, DIMS(2, 3), F32S(1, 2, 3, 4, 5, 7)),
                     mkf(1, DIMS(3), F32S(1, 2, 0.5f)),
                     mkf(1, DIMS(3), F32S(0, 1, -1)),
                     mkf(2, DIMS(2, 3), NULL),
                     mkf(2, DIMS(2, 1), NULL),
                     mkf(2, DIMS(2, 1), NULL)};
  const ncc_tensor *in[3] = {&t[0], &t[1], &t[2]};
  assert_int_equal(ncc_ref_LAYERNORM(f.n, in, &t[3]), NCC_OK);
  expect_f32(&t[3],
             F32S(-1.2247356f, 1.0f, -0.3876322f, -1.0690417f, 0.46547896f,
                  -0.33184904f),
             6, 1e-5f);
  expect_f32(&t[4], F32S(2.0f, 5.3333335f), 2, 1e-6f);
  expect_f32(&t[5], F32S(1.2247356f, 0.80178124f), 2, 1e-5f);
  ncc_graph_free(f.g);

  /* axis 1 of [2, 2, 2], Scale [2] broadcast over the normalized [2, 2],
   * no B, no statistics outputs. */
  f = mk_node(NCC_OP_LAYERNORM, 2, 3, 1);
  set_int(&f, "axis", 1);
  set_float(&f, "epsilon", 0.0f);
  ncc_tensor u[3] = {mkf(3, DIMS(2, 2, 2), F32S(0, 2, 0, 2, 1, 1, 3, 3)),
                     mkf(1, DIMS(2), F32S(1, 10)), mkf(3, DIMS(2, 2, 2), NULL)};
  const ncc_tensor *uin[2] = {&u[0], &u[1]};
  assert_int_equal(ncc_ref_LAYERNORM(f.n, uin, &u[2]), NCC_OK);
  expect_f32(&u[2], F32S(-1, 10, -1, 10, -1, -10, 1, 10), 8, 1e-6f);
  free_all(&f, u, 3);
  for (int i = 0; i < 6; i++)
    ncc_tensor_free(&t[i]);
}

static void test_softmax(void **state) {
  (void)state;
  const float x[] = {1000, 1001, 1002, 0, 0, 0};
  fx f = mk_node(NCC_OP_SOFTMAX, 1, 1, 1);
  set_int(&f, "axis", 0);
  ncc_tensor t[2] = {mkf(2, DIMS(2, 3), x), mkf(2, DIMS(2, 3), NULL)};
  const ncc_tensor *in[1] = {&t[0]};
  assert_int_equal(ncc_ref_SOFTMAX(f.n, in, &t[1]), NCC_OK);
  expect_f32(&t[1], F32S(1, 1, 1, 0, 0, 0), 6, 1e-6f);
  ncc_graph_free(f.g);

  f = mk_node(NCC_OP_SOFTMAX, 1, 1, 1);
  assert_int_equal(ncc_ref_SOFTMAX(f.n, in, &t[1]), NCC_OK);
  expect_f32(
      &t[1],
      F32S(0.09003057f, 0.24472847f, 0.66524096f, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f),
      6, 1e-6f);
  ncc_graph_free(f.g);

  f = mk_node(NCC_OP_LOGSOFTMAX, 1, 1, 1);
  assert_int_equal(ncc_ref_LOGSOFTMAX(f.n, in, &t[1]), NCC_OK);
  expect_f32(&t[1],
             F32S(-2.407606f, -1.4076059f, -0.40760595f, -1.0986123f,
                  -1.0986123f, -1.0986123f),
             6, 1e-6f);
  free_all(&f, t, 2);
}

/* ---- reductions ---- */

static void run_reduce(ncc_ref_kernel k, ncc_dtype dt, int rx,
                       const int64_t *dx, const void *x, int n_axes,
                       const int64_t *axes, int keepdims, int noop, int ry,
                       const int64_t *dy, const void *want) {
  fx f = mk_node(NCC_OP_REDUCESUM, axes ? 2 : 1, 3, 1);
  set_int(&f, "keepdims", keepdims);
  if (noop)
    set_int(&f, "noop_with_empty_axes", 1);
  ncc_tensor t[3] = {mk(dt, rx, dx, x), mk(NCC_DT_I64, 1, DIMS(n_axes), axes),
                     mk(dt, ry, dy, NULL)};
  const ncc_tensor *in[2] = {&t[0], &t[1]};
  assert_int_equal(k(f.n, in, &t[2]), NCC_OK);
  if (dt == NCC_DT_F32)
    expect_f32(&t[2], want, ncc_tensor_numel(&t[2]), 1e-6f);
  else
    expect_i64(&t[2], want, ncc_tensor_numel(&t[2]));
  free_all(&f, t, 3);
}

static void test_reduce(void **state) {
  (void)state;
  const float x[] = {1, 2, 3, 4, 5, 6};
  const int64_t *d23 = DIMS(2, 3);
  run_reduce(ncc_ref_REDUCESUM, NCC_DT_F32, 2, d23, x, 1, I64S(1), 1, 0, 2,
             DIMS(2, 1), F32S(6, 15));
  run_reduce(ncc_ref_REDUCEMEAN, NCC_DT_F32, 2, d23, x, 1, I64S(-2), 0, 0, 1,
             DIMS(3), F32S(2.5f, 3.5f, 4.5f));
  run_reduce(ncc_ref_REDUCEMAX, NCC_DT_F32, 2, d23, x, 0, NULL, 0, 0, 0, NULL,
             F32S(6));
  run_reduce(ncc_ref_REDUCEMEAN, NCC_DT_F32, 2, d23, x, 0, I64S(0), 1, 0, 2,
             DIMS(1, 1), F32S(3.5f));
  /* Empty axes with noop_with_empty_axes: identity. */
  run_reduce(ncc_ref_REDUCESUM, NCC_DT_F32, 2, d23, x, 0, I64S(0), 1, 1, 2, d23,
             x);
  /* Integers. */
  const int64_t xi[] = {5, -7, 2, INT64_MAX, 1, 0};
  run_reduce(ncc_ref_REDUCESUM, NCC_DT_I64, 2, d23, xi, 1, I64S(0), 0, 0, 1,
             DIMS(3), I64S(INT64_MIN + 4, -6, 2)); /* wraps */
  run_reduce(ncc_ref_REDUCEMAX, NCC_DT_I64, 2, d23, xi, 1, I64S(1), 1, 0, 2,
             DIMS(2, 1), I64S(5, INT64_MAX));
  run_reduce(ncc_ref_REDUCEMEAN, NCC_DT_I64, 2, d23, xi, 1, I64S(1), 0, 0, 1,
             DIMS(2), I64S(0, INT64_MIN / 3));
  /* Reducing an empty dim: Sum 0, Mean NaN, Max -inf (opset 18). */
  run_reduce(ncc_ref_REDUCESUM, NCC_DT_F32, 2, DIMS(2, 0), NULL, 1, I64S(1), 0,
             0, 1, DIMS(2), F32S(0, 0));
  run_reduce(ncc_ref_REDUCEMEAN, NCC_DT_F32, 2, DIMS(2, 0), NULL, 1, I64S(1), 0,
             0, 1, DIMS(2), F32S(NAN, NAN));
  run_reduce(ncc_ref_REDUCEMAX, NCC_DT_F32, 2, DIMS(2, 0), NULL, 1, I64S(1), 0,
             0, 1, DIMS(2), F32S(-INFINITY, -INFINITY));
  /* Max propagates NaN. */
  run_reduce(ncc_ref_REDUCEMAX, NCC_DT_F32, 1, DIMS(3), F32S(1, NAN, 2), 0,
             NULL, 0, 0, 0, NULL, F32S(NAN));
}

/* Axes {0, 2} of a [3, 4, 5] tensor against a naive loop. */
static void test_reduce_middle(void **state) {
  (void)state;
  fx f = mk_node(NCC_OP_REDUCESUM, 2, 3, 1);
  ncc_tensor t[3] = {mk_rand(3, DIMS(3, 4, 5)),
                     mk(NCC_DT_I64, 1, DIMS(2), I64S(2, 0)),
                     mkf(3, DIMS(1, 4, 1), NULL)};
  const ncc_tensor *in[2] = {&t[0], &t[1]};
  assert_int_equal(ncc_ref_REDUCESUM(f.n, in, &t[2]), NCC_OK);
  const float *x = t[0].data, *y = t[2].data;
  for (int j = 0; j < 4; j++) {
    double s = 0;
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 5; k++)
        s += x[(i * 4 + j) * 5 + k];
    assert_true(fabs(y[j] - s) < 1e-5);
  }
  /* An axis out of range is an input error. */
  ((int64_t *)t[1].data)[0] = 3;
  assert_int_equal(ncc_ref_REDUCESUM(f.n, in, &t[2]), NCC_ERR_INPUT);
  free_all(&f, t, 3);
}

/* ---- pooling (expected values from onnxruntime 1.23) ---- */

static const float x5[25] = {0,  7,  14, 21, 3,  10, 17, 24, 6,  13, 20, 2, 9,
                             16, 23, 5,  12, 19, 1,  8,  15, 22, 4,  11, 18};

static void test_maxpool(void **state) {
  (void)state;
  /* ceil_mode: the last window in each dim covers one row/column. */
  fx f = mk_node(NCC_OP_MAXPOOL, 1, 1, 2);
  set_ints(&f, "kernel_shape", 2, DIMS(2, 2));
  set_ints(&f, "strides", 2, DIMS(2, 2));
  set_int(&f, "ceil_mode", 1);
  ncc_tensor t[3] = {mkf(4, DIMS(1, 1, 5, 5), x5),
                     mkf(4, DIMS(1, 1, 3, 3), NULL),
                     mk(NCC_DT_I64, 4, DIMS(1, 1, 3, 3), NULL)};
  const ncc_tensor *in[1] = {&t[0]};
  assert_int_equal(ncc_ref_MAXPOOL(f.n, in, &t[1]), NCC_OK);
  expect_f32(&t[1], F32S(17, 24, 13, 20, 19, 23, 22, 11, 18), 9, 0);
  expect_i64(&t[2], I64S(6, 7, 9, 10, 17, 14, 21, 23, 24), 9);
  set_int(&f, "storage_order", 1);
  assert_int_equal(ncc_ref_MAXPOOL(f.n, in, &t[1]), NCC_OK);
  expect_i64(&t[2], I64S(6, 11, 21, 2, 13, 22, 9, 19, 24), 9);
  ncc_graph_free(f.g);

  /* Dilations and begin pads. */
  f = mk_node(NCC_OP_MAXPOOL, 1, 1, 2);
  set_ints(&f, "kernel_shape", 2, DIMS(2, 2));
  set_ints(&f, "dilations", 2, DIMS(2, 2));
  set_ints(&f, "pads", 4, DIMS(1, 1, 0, 0));
  ncc_tensor u[2] = {mkf(4, DIMS(1, 1, 4, 4), NULL),
                     mk(NCC_DT_I64, 4, DIMS(1, 1, 4, 4), NULL)};
  assert_int_equal(ncc_ref_MAXPOOL(f.n, in, u), NCC_OK);
  expect_f32(
      &u[0],
      F32S(17, 24, 17, 24, 7, 20, 21, 23, 17, 24, 17, 24, 22, 20, 22, 23), 16,
      0);
  expect_i64(&u[1], I64S(6, 7, 6, 7, 1, 10, 3, 14, 6, 7, 6, 7, 21, 10, 21, 14),
             16);
  /* Without the Indices output. */
  f.n->n_out = 1;
  assert_int_equal(ncc_ref_MAXPOOL(f.n, in, u), NCC_OK);
  ncc_graph_free(f.g);

  /* 1-D, two channels: indices count over N*C*L; the first max wins. */
  f = mk_node(NCC_OP_MAXPOOL, 1, 1, 2);
  set_ints(&f, "kernel_shape", 1, DIMS(3));
  set_ints(&f, "strides", 1, DIMS(2));
  ncc_tensor v[3] = {mkf(3, DIMS(1, 2, 5), F32S(1, 5, 2, 0, 3, 9, 9, 7, 7, 5)),
                     mkf(3, DIMS(1, 2, 2), NULL),
                     mk(NCC_DT_I64, 3, DIMS(1, 2, 2), NULL)};
  const ncc_tensor *vin[1] = {&v[0]};
  assert_int_equal(ncc_ref_MAXPOOL(f.n, vin, &v[1]), NCC_OK);
  expect_f32(&v[1], F32S(5, 3, 9, 7), 4, 0);
  expect_i64(&v[2], I64S(1, 4, 5, 7), 4);
  free_all(&f, v, 3);
  for (int i = 0; i < 3; i++)
    ncc_tensor_free(&t[i]);
  for (int i = 0; i < 2; i++)
    ncc_tensor_free(&u[i]);
}

static void run_avgpool(const ncc_tensor *x, int64_t k, int64_t s,
                        const int64_t *pads, int64_t dil, const char *auto_pad,
                        int cip, int ceil, int64_t out, const float *want) {
  fx f = mk_node(NCC_OP_AVGPOOL, 1, 1, 1);
  set_ints(&f, "kernel_shape", 2, DIMS(k, k));
  set_ints(&f, "strides", 2, DIMS(s, s));
  set_ints(&f, "dilations", 2, DIMS(dil, dil));
  if (pads)
    set_ints(&f, "pads", 4, pads);
  if (auto_pad)
    set_str(&f, "auto_pad", auto_pad);
  set_int(&f, "count_include_pad", cip);
  set_int(&f, "ceil_mode", ceil);
  ncc_tensor y = mkf(4, DIMS(1, 1, out, out), NULL);
  const ncc_tensor *in[1] = {x};
  assert_int_equal(ncc_ref_AVGPOOL(f.n, in, &y), NCC_OK);
  expect_f32(&y, want, out * out, 1e-6f);
  ncc_tensor_free(&y);
  ncc_graph_free(f.g);
}

static void test_avgpool(void **state) {
  (void)state;
  float a36[36];
  for (int i = 0; i < 36; i++)
    a36[i] = (float)i;
  ncc_tensor x6 = mkf(4, DIMS(1, 1, 6, 6), a36);
  ncc_tensor xv = mkf(4, DIMS(1, 1, 5, 5), x5);
  const int64_t *p1 = DIMS(1, 1, 1, 1);
  /* ceil_mode adds a last window that runs past the end padding. */
  run_avgpool(&x6, 3, 2, p1, 1, NULL, 0, 1, 4,
              F32S(3.5f, 5, 7, 8, 12.5f, 14, 16, 17, 24.5f, 26, 28, 29, 30.5f,
                   32, 34, 35));
  run_avgpool(&x6, 3, 2, p1, 1, NULL, 1, 1, 4,
              F32S(1.5555556f, 3.3333333f, 4.6666665f, 2.6666667f, 8.333333f,
                   14, 16, 8.5f, 16.333334f, 26, 28, 14.5f, 10.166667f, 16, 17,
                   8.75f));
  run_avgpool(&x6, 2, 2, DIMS(0, 0, 1, 1), 1, NULL, 1, 1, 3,
              F32S(3.5f, 5.5f, 7.5f, 15.5f, 17.5f, 19.5f, 27.5f, 29.5f, 31.5f));
  run_avgpool(&xv, 3, 2, p1, 2, NULL, 1, 0, 2, F32S(4, 4, 4, 4));
  run_avgpool(&xv, 3, 2, NULL, 1, "SAME_LOWER", 0, 0, 3,
              F32S(8.5f, 14.833333f, 10.75f, 11, 11.777778f, 11.166667f, 13.5f,
                   11.5f, 9.5f));
  run_avgpool(&xv, 2, 2, NULL, 1, "SAME_UPPER", 1, 0, 3,
              F32S(8.5f, 16.25f, 4, 9.75f, 11.25f, 7.75f, 9.25f, 3.75f, 4.5f));
  ncc_tensor_free(&x6);
  ncc_tensor_free(&xv);
}

static void test_global_avgpool(void **state) {
  (void)state;
  fx f = mk_node(NCC_OP_GLOBALAVGPOOL, 1, 1, 1);
  ncc_tensor t[2] = {mkf(4, DIMS(1, 2, 2, 2), F32S(1, 2, 3, 4, -1, -1, 0, 10)),
                     mkf(4, DIMS(1, 2, 1, 1), NULL)};
  const ncc_tensor *in[1] = {&t[0]};
  assert_int_equal(ncc_ref_GLOBALAVGPOOL(f.n, in, &t[1]), NCC_OK);
  expect_f32(&t[1], F32S(2.5f, 2), 2, 0);
  free_all(&f, t, 2);
}

static void test_pool_errors(void **state) {
  (void)state;
  fx f = mk_node(NCC_OP_MAXPOOL, 1, 1, 1);
  ncc_tensor t[2] = {mkf(4, DIMS(1, 1, 4, 4), NULL),
                     mkf(4, DIMS(1, 1, 2, 2), NULL)};
  const ncc_tensor *in[1] = {&t[0]};
  assert_int_equal(ncc_ref_MAXPOOL(f.n, in, &t[1]), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "kernel_shape"));
  set_ints(&f, "kernel_shape", 2, DIMS(2, 2));
  set_ints(&f, "strides", 1, DIMS(2));
  assert_int_equal(ncc_ref_MAXPOOL(f.n, in, &t[1]), NCC_ERR_INPUT);
  assert_non_null(strstr(ncc_error_message(), "strides"));
  ncc_graph_free(f.g);
  f = mk_node(NCC_OP_AVGPOOL, 1, 1, 1);
  ncc_tensor u = mk(NCC_DT_I64, 4, DIMS(1, 1, 4, 4), NULL);
  const ncc_tensor *uin[1] = {&u};
  set_ints(&f, "kernel_shape", 2, DIMS(2, 2));
  assert_int_equal(ncc_ref_AVGPOOL(f.n, uin, &t[1]), NCC_ERR_UNSUPPORTED);
  ncc_tensor_free(&u);
  free_all(&f, t, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gemm_core_random),
      cmocka_unit_test(test_gemm_core_nomem),
      cmocka_unit_test(test_matmul_small),
      cmocka_unit_test(test_matmul_batched),
      cmocka_unit_test(test_matmul_errors),
      cmocka_unit_test(test_gemm_op),
      cmocka_unit_test(test_conv_hand),
      cmocka_unit_test(test_conv_random),
      cmocka_unit_test(test_conv_chunked),
      cmocka_unit_test(test_conv_errors),
      cmocka_unit_test(test_batchnorm),
      cmocka_unit_test(test_layernorm),
      cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_reduce),
      cmocka_unit_test(test_reduce_middle),
      cmocka_unit_test(test_maxpool),
      cmocka_unit_test(test_avgpool),
      cmocka_unit_test(test_global_avgpool),
      cmocka_unit_test(test_pool_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
