/* tests/aot_rt/toy_b.c — a second hand-made model "toyb" in the same
 * program as toya (tests/aot_rt/toy_a.c): everything in the runtime but
 * the API is static, so both link. Its two scratch tensors are declared
 * [N, N, N] f32 and alive together, so a large N overflows the scratch
 * plan (toy.h).
 */
#include "codegen/llvm/aot_rt/aot_rt.h"

#include "toy.h"

#define NCC_API(x) toyb_##x
#define NCC_MODEL toyb_model
#define NCC_ERR(x) TOYB_STATUS_##x
#define NCC_WEIGHTS ((const unsigned char *)toyb_w)
#define NCC_NUM_IN 1
#define NCC_NUM_OUT 1
#define NCC_NUM_SYMS 1
#define NCC_NUM_TMP 2
#define NCC_NUM_STEPS 3

_Alignas(64) static const float toyb_w[1] = {0};

/* a[i, j, k] = x[i] */
static void k_bcast(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth) {
  const float *x = bufs[0];
  float *a = bufs[1];
  int64_t n = syms[0];
  for (int64_t i = n * tid / nth; i < n * (tid + 1) / nth; i++)
    for (int64_t jk = 0; jk < n * n; jk++) a[i * n * n + jk] = x[i];
}

/* b = 2 * a */
static void k_twice(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth) {
  const float *a = bufs[0];
  float *b = bufs[1];
  int64_t n3 = syms[0] * syms[0] * syms[0];
  for (int64_t i = n3 * tid / nth; i < n3 * (tid + 1) / nth; i++) b[i] = 2 * a[i];
}

/* y = sum(a) + sum(b) */
static void k_sum(void *const *bufs, const int64_t *syms, int32_t tid, int32_t nth) {
  const float *a = bufs[0], *b = bufs[1];
  float *y = bufs[2], s = 0;
  int64_t n3 = syms[0] * syms[0] * syms[0];
  if (tid != 0 || nth < 1) return;
  for (int64_t i = 0; i < n3; i++) s += a[i] + b[i];
  y[0] = s;
}

static const ncc_kfn ncc_kernels[] = {k_bcast, k_twice, k_sum, NULL};

/* kind, index, esize, rank, dims, off, def, last */
static const ncc_slot ncc_slots[] = {
    {NCC_S_IN, 0, 4, 1, {-1}, 0, 0, 0},           /* x */
    {NCC_S_TMP, 0, 4, 3, {-1, -1, -1}, 0, 0, 2},  /* a */
    {NCC_S_TMP, 1, 4, 3, {-1, -1, -1}, 0, 1, 2},  /* b */
    {NCC_S_OUT, 0, 4, 1, {1}, 0, 0, 0},           /* y */
    {0}};

/* kernel, n_bufs, bufs, size_slot, cost, dst, src */
static const ncc_step ncc_steps[] = {
    {0, 2, {0, 1}, 1, 1.0, 0, 0},
    {1, 2, {1, 2}, 2, 1.0, 0, 0},
    {2, 3, {1, 2, 3}, 3, 1.0, 0, 0},
    {0}};

static const int ncc_in_slot[] = {0, 0};
static const int ncc_out_slot[] = {3, 0};
static const int ncc_tmp_slot[] = {1, 2, 0};
static const char *const ncc_in_names[] = {"x", NULL};
static const char *const ncc_in_types[] = {"f32[N]", NULL};
static const char *const ncc_out_names[] = {"y", NULL};
static const char *const ncc_out_types[] = {"f32[1]", NULL};
static const char *const ncc_sym_names[] = {"N", NULL};

#include "codegen/llvm/aot_rt/aot_rt.c"

int64_t toyb_test_arena(const toyb_model *m) {
  int64_t end = 0;
  for (int t = 0; t < NCC_NUM_TMP; t++) {
    int64_t e = m->tmp[t].off_b + (m->tmp[t].b + 63) / 64 * 64;
    if (e > end) end = e;
  }
  return end;
}
