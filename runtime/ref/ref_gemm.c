/* runtime/ref/ref_gemm.c — the blocked f32 GEMM core of the reference
 * interpreter (MatMul, Gemm and Conv all end here).
 *
 * The interpreter must run a ResNet-18-sized model in seconds on one core,
 * which a naive triple loop cannot do (its inner loop misses cache for any
 * realistic K). This is the classic packed scheme: B is copied in blocks of
 * KC x NC into panels NR columns wide, A in blocks of MC x KC into panels MR
 * rows high, and a register-blocked MR x NR micro-kernel streams both panels
 * from L1/L2. Packing also absorbs arbitrary strides (transposes) and alpha.
 *
 * The micro-kernel uses GNU C vector types (gcc and clang, any target): they
 * give 4-wide SIMD with the accumulators held in registers at every
 * optimisation level, where plain loops only vectorize at -O2 and above.
 */
#include <string.h>

#include "ref_nn.h"

#define MR 6    /* micro-tile rows: 6 x 2 vector accumulators fit 16 regs */
#define NR 8    /* micro-tile columns: two 4-float vectors */
#define KC 256  /* depth of one packed block: a B panel is KC*NR*4 = 8 KiB */
#define MC 96   /* rows of a packed A block: MC*KC*4 = 96 KiB (L2) */
#define NC 1024 /* columns of a packed B block: KC*NC*4 = 1 MiB (L2) */

/* Below this many multiply-adds packing costs more than it saves. */
#define SMALL_GEMM (8 * 8 * 8)

typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p) {
  v4f v;
  memcpy(&v, p, sizeof v); /* unaligned-safe; compiles to one load */
  return v;
}

static inline void add_store4(float *p, v4f v) {
  v4f c = load4(p) + v;
  memcpy(p, &c, sizeof c);
}

/* c[MR x NR] (row stride ldc) += a-panel (kc x MR) times b-panel (kc x NR). */
static void micro_kernel(int64_t kc, const float *restrict a,
                         const float *restrict b, float *restrict c,
                         int64_t ldc) {
  v4f c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
  v4f c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
  for (int64_t p = 0; p < kc; p++, a += MR, b += NR) {
    v4f b0 = load4(b), b1 = load4(b + 4), x;
    x = (v4f){a[0], a[0], a[0], a[0]};
    c00 += x * b0;
    c01 += x * b1;
    x = (v4f){a[1], a[1], a[1], a[1]};
    c10 += x * b0;
    c11 += x * b1;
    x = (v4f){a[2], a[2], a[2], a[2]};
    c20 += x * b0;
    c21 += x * b1;
    x = (v4f){a[3], a[3], a[3], a[3]};
    c30 += x * b0;
    c31 += x * b1;
    x = (v4f){a[4], a[4], a[4], a[4]};
    c40 += x * b0;
    c41 += x * b1;
    x = (v4f){a[5], a[5], a[5], a[5]};
    c50 += x * b0;
    c51 += x * b1;
  }
  add_store4(c, c00), add_store4(c + 4, c01), c += ldc;
  add_store4(c, c10), add_store4(c + 4, c11), c += ldc;
  add_store4(c, c20), add_store4(c + 4, c21), c += ldc;
  add_store4(c, c30), add_store4(c + 4, c31), c += ldc;
  add_store4(c, c40), add_store4(c + 4, c41), c += ldc;
  add_store4(c, c50), add_store4(c + 4, c51);
}

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

/* Copy alpha * A[0:mc, 0:kc] into MR-row panels, p-major inside a panel,
 * zero-padding the last panel to MR rows. */
static void pack_a(int64_t mc, int64_t kc, float alpha, const float *a,
                   int64_t rs, int64_t cs, float *dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += MR, dst += MR * kc) {
    int64_t mr = min64(MR, mc - i0);
    for (int64_t p = 0; p < kc; p++) {
      const float *src = a + i0 * rs + p * cs;
      float *d = dst + p * MR;
      int64_t i = 0;
      for (; i < mr; i++)
        d[i] = alpha * src[i * rs];
      for (; i < MR; i++)
        d[i] = 0.0f;
    }
  }
}

/* Copy B[0:kc, 0:nc] into NR-column panels, p-major inside a panel,
 * zero-padding the last panel to NR columns. */
static void pack_b(int64_t kc, int64_t nc, const float *b, int64_t rs,
                   int64_t cs, float *dst) {
  for (int64_t j0 = 0; j0 < nc; j0 += NR, dst += NR * kc) {
    int64_t nr = min64(NR, nc - j0);
    for (int64_t p = 0; p < kc; p++) {
      const float *src = b + p * rs + j0 * cs;
      float *d = dst + p * NR;
      int64_t j = 0;
      if (cs == 1)
        for (; j < nr; j++)
          d[j] = src[j];
      else
        for (; j < nr; j++)
          d[j] = src[j * cs];
      for (; j < NR; j++)
        d[j] = 0.0f;
    }
  }
}

/* C[0:mc, 0:nc] += packed A block times packed B block. Edge tiles go
 * through a scratch tile so the micro-kernel never writes outside C. */
static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float *ap,
                         const float *bp, float *c, int64_t ldc) {
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    int64_t nr = min64(NR, nc - j0);
    const float *b = bp + j0 * kc;
    for (int64_t i0 = 0; i0 < mc; i0 += MR) {
      int64_t mr = min64(MR, mc - i0);
      const float *a = ap + i0 * kc;
      float *ct = c + i0 * ldc + j0;
      if (mr == MR && nr == NR) {
        micro_kernel(kc, a, b, ct, ldc);
        continue;
      }
      float tile[MR * NR] = {0};
      micro_kernel(kc, a, b, tile, NR);
      for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++)
          ct[i * ldc + j] += tile[i * NR + j];
    }
  }
}

/* Tiny products: a plain loop, no allocation. */
static void small_gemm(int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t a_rs, int64_t a_cs,
                       const float *b, int64_t b_rs, int64_t b_cs, float *c,
                       int64_t ldc) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; p++)
        acc += a[i * a_rs + p * a_cs] * b[p * b_rs + j * b_cs];
      c[i * ldc + j] += alpha * acc;
    }
}

ncc_status ncc_ref_sgemm(int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t a_rs, int64_t a_cs,
                         const float *b, int64_t b_rs, int64_t b_cs, float *c,
                         int64_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0)
    return NCC_OK;
  if (m * n * k <= SMALL_GEMM) {
    small_gemm(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc);
    return NCC_OK;
  }
  int64_t kc_max = min64(k, KC);
  size_t a_elems = (size_t)(round_up(min64(m, MC), MR) * kc_max);
  size_t b_elems = (size_t)(round_up(min64(n, NC), NR) * kc_max);
  float *buf = ncc_malloc((a_elems + b_elems) * sizeof(float));
  if (!buf)
    return NCC_ERR_NOMEM;
  float *ap = buf, *bp = buf + a_elems;
  for (int64_t jc = 0; jc < n; jc += NC) {
    int64_t nc = min64(NC, n - jc);
    for (int64_t pc = 0; pc < k; pc += KC) {
      int64_t kc = min64(KC, k - pc);
      pack_b(kc, nc, b + pc * b_rs + jc * b_cs, b_rs, b_cs, bp);
      for (int64_t ic = 0; ic < m; ic += MC) {
        int64_t mc = min64(MC, m - ic);
        pack_a(mc, kc, alpha, a + ic * a_rs + pc * a_cs, a_rs, a_cs, ap);
        macro_kernel(mc, nc, kc, ap, bp, c + ic * ldc + jc, ldc);
      }
    }
  }
  ncc_free(buf, (a_elems + b_elems) * sizeof(float));
  return NCC_OK;
}
