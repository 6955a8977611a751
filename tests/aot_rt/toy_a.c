/* tests/aot_rt/toy_a.c — a hand-made model "toya" around the real AOT
 * runtime: the same translation unit `ncc compile --emit=lib` writes
 * (codegen/llvm/aot_rt/aot_rt.h, the generated tables, aot_rt.c), with toy
 * kernels and tables written here in the generator's format (see toy.h for
 * what it computes). Compiled like the test's glue check: -std=c11
 * -pedantic -Wall -Wextra -Wshadow -Werror, and under the sanitizers.
 */
#include "codegen/llvm/aot_rt/aot_rt.h"

#include "toy.h"

#define NCC_API(x) toya_##x
#define NCC_MODEL toya_model
#define NCC_ERR(x) TOYA_STATUS_##x
#define NCC_WEIGHTS ((const unsigned char *)toya_w)
#define NCC_NUM_IN 1
#define NCC_NUM_OUT 2
#define NCC_NUM_SYMS 1
#define NCC_NUM_TMP 3
#define NCC_NUM_STEPS 5

_Alignas(64) static const float toya_w[4] = {1, 2, 3, 4};

int toya_shares[64], toya_last_nth;
toya_model *toya_reenter;
int toya_reenter_st[3];

/* rows [r0, r1) of N: this thread's share of the outermost loop */
static void rows(const int64_t *syms, int32_t tid, int32_t nth, int64_t *r0,
                 int64_t *r1) {
  *r0 = syms[0] * tid / nth;
  *r1 = syms[0] * (tid + 1) / nth;
}

static void k_addw(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth) {
  const float *x = bufs[0], *w = bufs[1];
  float *t = bufs[2];
  int64_t r0, r1;
  if (toya_reenter && tid == 0) {
    int64_t d[2] = {1, 4};
    toya_reenter_st[0] = toya_run(toya_reenter);
    toya_reenter_st[1] = toya_set_input(toya_reenter, 0, x, 2, d);
    toya_reenter_st[2] = toya_output(toya_reenter, 0, NULL, NULL) == NULL;
  }
  rows(syms, tid, nth, &r0, &r1);
  for (int64_t i = r0 * 4; i < r1 * 4; i++) t[i] = x[i] + w[i % 4];
}

static void k_twice(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth) {
  const float *a = bufs[0];
  float *b = bufs[1];
  int64_t r0, r1;
  rows(syms, tid, nth, &r0, &r1);
  for (int64_t i = r0 * 4; i < r1 * 4; i++) b[i] = 2 * a[i];
}

static void k_plus1(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth) {
  const float *a = bufs[0];
  float *b = bufs[1];
  int64_t r0, r1;
  rows(syms, tid, nth, &r0, &r1);
  for (int64_t i = r0 * 4; i < r1 * 4; i++) b[i] = a[i] + 1;
}

static void k_neg(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth) {
  const float *a = bufs[0];
  float *b = bufs[1];
  int64_t r0, r1;
  rows(syms, tid, nth, &r0, &r1);
  for (int64_t i = r0 * 4; i < r1 * 4; i++) b[i] = -a[i];
  toya_shares[tid]++; /* each tid once per launch: no race */
  if (tid == 0) toya_last_nth = nth;
}

static const ncc_kfn ncc_kernels[] = {k_addw, k_twice, k_plus1, k_neg, NULL};

/* kind, index, esize, rank, dims, off, def, last */
static const ncc_slot ncc_slots[] = {
    {NCC_S_IN, 0, 4, 2, {-1, 4}, 0, 0, 0},    /* x */
    {NCC_S_CONST, 0, 1, 0, {0}, 0, 0, 0},     /* w */
    {NCC_S_TMP, 0, 4, 2, {-1, 4}, 0, 0, 1},   /* t0 */
    {NCC_S_TMP, 1, 4, 2, {-1, 4}, 0, 1, 2},   /* t1 */
    {NCC_S_TMP, 2, 4, 2, {-1, 4}, 0, 2, 3},   /* t2 */
    {NCC_S_OUT, 0, 4, 2, {-1, 4}, 0, 0, 0},   /* y */
    {NCC_S_OUT, 1, 4, 2, {-1, 4}, 0, 0, 0},   /* x_copy */
    {0}};

/* kernel, n_bufs, bufs, size_slot, cost, dst, src */
static const ncc_step ncc_steps[] = {
    {0, 3, {0, 1, 2}, 2, 1.0, 0, 0},
    {1, 2, {2, 3}, 3, 1.0, 0, 0},
    {2, 2, {3, 4}, 4, 1.0, 0, 0},
    {3, 2, {4, 5}, 5, 4096.0, 0, 0}, /* big enough for every thread */
    {-1, 0, {0}, 0, 0.0, 6, 0},      /* x_copy = x */
    {0}};

static const int ncc_in_slot[] = {0, 0};
static const int ncc_out_slot[] = {5, 6, 0};
static const int ncc_tmp_slot[] = {2, 3, 4, 0};
static const char *const ncc_in_names[] = {"x", NULL};
static const char *const ncc_in_types[] = {"f32[N,4]", NULL};
static const char *const ncc_out_names[] = {"y", "x_copy", NULL};
static const char *const ncc_out_types[] = {"f32[N,4]", "f32[N,4]", NULL};
static const char *const ncc_sym_names[] = {"N", NULL};

#include "codegen/llvm/aot_rt/aot_rt.c"

/* The extent of the current plan: its arena's bytes. */
int64_t toya_test_arena(const toya_model *m) {
  int64_t end = 0;
  for (int t = 0; t < NCC_NUM_TMP; t++) {
    int64_t e = m->tmp[t].off_b + (m->tmp[t].b + 63) / 64 * 64;
    if (e > end) end = e;
  }
  return end;
}

int64_t toya_test_tmp_off(const toya_model *m, int t) { return m->tmp[t].off_b; }
