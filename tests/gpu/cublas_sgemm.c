/* tests/gpu/cublas_sgemm.c — the cuBLAS side of the SGEMM comparison in
 * tools/gpu-check.sh: C = A B for n x n row-major FP32 matrices on the
 * device, timed with CUDA events after a warm-up (no transfers, as ncc's
 * side is timed). FP32 math only (CUBLAS_DEFAULT_MATH: no TF32 tensor
 * cores), the same arithmetic ncc's kernels do. Prints one JSON line:
 *   {"impl": "cublas", "n": ..., "ms": ..., "gflops": ...}
 * Built by the script: cc cublas_sgemm.c -lcublas -lcudart.
 * Usage: cublas_sgemm [N=4096] [ITERS=20]
 */
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "cublas_sgemm: %s: %s\n", #x, cudaGetErrorString(e_));   \
      return 1;                                                                \
    }                                                                          \
  } while (0)
#define CHECK_BLAS(x)                                                          \
  do {                                                                         \
    cublasStatus_t s_ = (x);                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
      fprintf(stderr, "cublas_sgemm: %s failed (%d)\n", #x, (int)s_);          \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4096;
  int iters = argc > 2 ? atoi(argv[2]) : 20;
  if (n < 1 || iters < 1) {
    fprintf(stderr, "usage: cublas_sgemm [N] [ITERS]\n");
    return 2;
  }
  size_t count = (size_t)n * (size_t)n;
  float *h = malloc(count * sizeof *h);
  if (!h) return 1;
  unsigned s = 12345u;
  for (size_t i = 0; i < count; i++) {
    s = s * 1664525u + 1013904223u;
    h[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
  }
  float *a, *b, *c;
  CHECK_CUDA(cudaMalloc((void **)&a, count * sizeof(float)));
  CHECK_CUDA(cudaMalloc((void **)&b, count * sizeof(float)));
  CHECK_CUDA(cudaMalloc((void **)&c, count * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(a, h, count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, h, count * sizeof(float), cudaMemcpyHostToDevice));
  free(h);
  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle));
  CHECK_BLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const float alpha = 1.0f, beta = 0.0f;
  /* row-major C = A B is column-major C^T = B^T A^T */
  for (int w = 0; w < 3; w++)
    CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b, n, a, n,
                           &beta, c, n));
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  CHECK_CUDA(cudaEventRecord(t0, 0));
  for (int i = 0; i < iters; i++)
    CHECK_BLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b, n, a, n,
                           &beta, c, n));
  CHECK_CUDA(cudaEventRecord(t1, 0));
  CHECK_CUDA(cudaEventSynchronize(t1));
  float total = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&total, t0, t1));
  double ms = (double)total / iters;
  printf("{\"impl\": \"cublas\", \"n\": %d, \"iters\": %d, \"ms\": %.4f, \"gflops\": %.1f}\n", n,
         iters, ms, 2.0 * n * (double)n * n / (ms * 1e6));
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}
