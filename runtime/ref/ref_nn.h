/* runtime/ref/ref_nn.h — helpers shared by the reference interpreter's
 * compute-heavy kernels (ref_linalg.c, ref_pool.c, ref_norm.c); internal.
 *
 * - ncc_ref_sgemm: the one blocked f32 GEMM core behind MatMul, Gemm and
 *   Conv (im2col), so all three get the same speed and the same rounding.
 * - ncc_ref_window: sliding-window geometry (kernel, strides, dilations,
 *   pads, auto_pad) read once for Conv and the pools, with 1-D and 2-D
 *   spatial shapes lifted to 3-D by leading size-1 dims so one loop nest
 *   serves every spatial rank.
 */
#ifndef NCC_REF_NN_H
#define NCC_REF_NN_H

#include "ref.h"

/* C[i*ldc + j] += alpha * sum_p A[i*a_rs + p*a_cs] * B[p*b_rs + j*b_cs]
 * for i < m, j < n. Any strides (transposes are free). Accumulates in f32
 * over cache-sized blocks of k. Only fails (NCC_ERR_NOMEM) when its packing
 * buffers cannot be allocated. */
ncc_status ncc_ref_sgemm(int64_t m, int64_t n, int64_t k, float alpha,
                         const float *a, int64_t a_rs, int64_t a_cs,
                         const float *b, int64_t b_rs, int64_t b_cs, float *c,
                         int64_t ldc);

#define NCC_REF_WIN_DIMS 3

typedef struct ncc_ref_window {
  int spatial;   /* the real spatial rank, 1..3 */
  int64_t batch; /* N */
  int64_t chans; /* C of the input */
  int64_t group; /* Conv; 1 for pools */
  /* Per spatial dim, lifted to 3 (leading dims: size 1, kernel 1, ...). */
  int64_t in[NCC_REF_WIN_DIMS], out[NCC_REF_WIN_DIMS];
  int64_t k[NCC_REF_WIN_DIMS], s[NCC_REF_WIN_DIMS], d[NCC_REF_WIN_DIMS];
  int64_t pb[NCC_REF_WIN_DIMS], pe[NCC_REF_WIN_DIMS]; /* pads begin / end */
} ncc_ref_window;

/* Read the window attributes of `n` (kernel_shape, strides, dilations, pads,
 * auto_pad) for input x [N, C, spatial...] and output y [N, *, spatial...].
 * `kernel` gives the kernel dims when not NULL (Conv: from the weights);
 * otherwise the kernel_shape attribute is required. SAME_* pads are derived
 * from the output size, exactly as shape inference sized it. */
ncc_status ncc_ref_window_init(const ncc_node *n, const ncc_tensor *x,
                               const ncc_tensor *y, const int64_t *kernel,
                               ncc_ref_window *w);

/* First output index o along dim `i` whose input tap o*s - pb + t*d lies in
 * [lo, hi), and one past the last; an empty range gives *o0 >= *o1. */
void ncc_ref_window_range(const ncc_ref_window *w, int i, int64_t t, int64_t lo,
                          int64_t hi, int64_t *o0, int64_t *o1);

#endif /* NCC_REF_NN_H */
