/* targets/gpu/gpu_exec.h — what the GPU backends (targets/opencl,
 * targets/cuda) share: the device executor (gpu_exec.c) behind a small
 * device vtable each driver fills; lowering and rendering are
 * codegen/cstyle/gpu.h.
 *
 * The executor keeps every tensor where it was last produced: kernels read
 * and write device buffers; a node without a GPU kernel runs on its
 * reference kernel on the host, with explicit transfers of exactly the
 * inputs it needs (downloads) and, lazily, of its outputs when a kernel
 * reads them (uploads). Reshape-like nodes alias their input's device
 * buffer. Constants are uploaded once at compile time; every intermediate
 * has one device buffer, allocated on the first run and reused while the
 * size fits (a larger batch reallocates it), so steady-state runs allocate
 * nothing on the device; graph inputs are uploaded and outputs downloaded
 * once per run.
 */
#ifndef NCC_TARGETS_GPU_EXEC_H
#define NCC_TARGETS_GPU_EXEC_H

#include "../../codegen/cstyle/gpu.h"
#include "../backend.h"

typedef uint64_t ncc_gpu_mem; /* cl_mem or CUdeviceptr; 0: none */

typedef struct ncc_gpu_arg {
  bool is_mem;
  ncc_gpu_mem mem;
  int64_t i64;
} ncc_gpu_arg;

/* One opened device (a context and a queue/stream); backends keep one per
 * process. Every function returns an error status with the message set. */
typedef struct ncc_gpu_device {
  const char *target; /* "opencl", "cuda" */
  const ncc_cstyle_lang *lang;
  int max_local;      /* work-items per group */
  int64_t max_groups; /* groups per launch (loops are grid-stride) */
  int64_t max_local_bytes;
  void *ctx;
  ncc_status (*alloc)(void *ctx, size_t bytes, ncc_gpu_mem *out);
  void (*release)(void *ctx, ncc_gpu_mem m);
  ncc_status (*upload)(void *ctx, ncc_gpu_mem m, const void *src, size_t n);
  ncc_status (*download)(void *ctx, ncc_gpu_mem m, void *dst, size_t n);
  /* Build `source`; kernels[i] is the kernel named names[i]. */
  ncc_status (*build)(void *ctx, const char *source, const char *const *names,
                      int n, void **program, void **kernels);
  void (*free_program)(void *ctx, void *program, void **kernels, int n);
  ncc_status (*launch)(void *ctx, void *kernel, const ncc_gpu_arg *args,
                       int nargs, int64_t groups, int local);
  ncc_status (*finish)(void *ctx);
} ncc_gpu_device;

/* ---- the executor (gpu_exec.c): backend vtable entries ---- */
typedef struct ncc_gpu_module ncc_gpu_module;
ncc_status ncc_gpu_compile(const ncc_gpu_device *dev, const ncc_graph *g,
                           ncc_gpu_module **out);
ncc_status ncc_gpu_run(void *state, const ncc_tensor *in, int n_in,
                       ncc_tensor *out, int n_out);
int ncc_gpu_num_kernels(const void *state);
int ncc_gpu_num_host_kernels(const void *state);
bool ncc_gpu_on_host(const void *state, int i);
int ncc_gpu_step_of(const void *state, int i, const char **kernel_name);
void ncc_gpu_free(void *state);
/* Rerun the device kernels of the last run `iters` times on the buffers
 * that run left on the device (host nodes skipped) and return the mean
 * milliseconds per pass: kernel time without transfers (benchmarks). */
ncc_status ncc_gpu_time_kernels(void *state, int iters, double *ms);

#endif /* NCC_TARGETS_GPU_EXEC_H */
