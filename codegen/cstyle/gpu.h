/* codegen/cstyle/gpu.h — what the GPU backends (runtime/opencl,
 * runtime/cuda) share: lowering for the GPU, one program per module from
 * the renderer, and the device executor behind a small device vtable.
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
#ifndef NCC_GPU_H
#define NCC_GPU_H

#include "../../passes/fusion.h"
#include "../../runtime/backend.h"
#include "../lower.h"
#include "cstyle.h"

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

/* ---- lowering (gpu_lower.c) ---- */
bool ncc_gpu_supports_op(const ncc_node *n);
/* Reshape-like nodes that alias their input's device buffer. */
bool ncc_gpu_alias_op(const ncc_node *n);
ncc_status ncc_gpu_lower_node(const ncc_node *n, const char *name,
                              const ncc_lower_opts *o, kir_kernel **out);
/* Elementwise, reduce and epilogue groups (the contraction as the tiled
 * GEMM with the epilogue on its register tile). */
ncc_status ncc_gpu_lower_group(const ncc_fuse_group *gr, const char *name,
                               const ncc_lower_opts *o, kir_kernel **out);
/* The three above, for the graph-lowering loop (codegen/lower.h): it
 * lowers every node the GPU handles; host and alias nodes get no kernel. */
extern const ncc_lower_target ncc_gpu_lower_target;
/* Vector width handed to the CPU-style lowerings: their `vector` loops
 * become work-item loops; 4-lane accumulators give some ILP per work-item. */
#define NCC_GPU_VECTOR_WIDTH 4
/* The fuse plan of g (*fp) and the GPU kernels of its nodes (*ks, one slot
 * per node, NULL for host and alias nodes; *fused, one per group: lowered
 * as one kernel, in its root's slot), through ncc_lower_graph; the caller
 * frees all three, also on error. */
ncc_status ncc_gpu_lower_all(const ncc_graph *g, ncc_fuse_plan **fp, kir_kernel ***ks,
                             bool **fused);

/* ---- programs (gpu_exec.c) ---- */
/* Render the prelude and kernels[0..n) (NULL entries skipped) as one
 * program; infos[i] describes kernels[i]. Test hook: with
 * ncc_options.gpu_test_bad_kernel set (the driver's NCC_GPU_TEST_BAD_KERNEL)
 * the program gets an `#error`, so the "kernel fails to compile" path can
 * be tested. */
ncc_status ncc_gpu_render_program(const ncc_cstyle_lang *lang,
                                  kir_kernel *const *kernels, int n,
                                  ncc_sbuf *out, ncc_cstyle_info *infos);
/* The program source of the graph's kernels (fused groups included). */
ncc_status ncc_gpu_render_graph(const ncc_graph *g, const ncc_cstyle_lang *lang,
                                ncc_sbuf *out);
/* `ncc compile --emit=kir|<lang>` for a GPU target: the kernel IR or the
 * program source of the graph's kernels, written through a temporary file. */
ncc_status ncc_gpu_emit_source(const ncc_graph *g, const ncc_cstyle_lang *lang,
                               const char *kind, const char *path);

/* ---- the executor (gpu_exec.c): backend vtable entries ---- */
typedef struct ncc_gpu_module ncc_gpu_module;
ncc_status ncc_gpu_compile(const ncc_gpu_device *dev, const ncc_graph *g,
                           ncc_gpu_module **out);
ncc_status ncc_gpu_run(void *state, const ncc_tensor *in, int n_in,
                       ncc_tensor *out, int n_out);
int ncc_gpu_num_kernels(const void *state);
int ncc_gpu_num_host_kernels(const void *state);
void ncc_gpu_free(void *state);
/* Rerun the device kernels of the last run `iters` times on the buffers
 * that run left on the device (host nodes skipped) and return the mean
 * milliseconds per pass: kernel time without transfers (benchmarks). */
ncc_status ncc_gpu_time_kernels(void *state, int iters, double *ms);

/* The backends (runtime/opencl, runtime/cuda). */
#ifdef NCC_HAVE_OPENCL
extern const ncc_backend ncc_backend_opencl;
#endif
#ifdef NCC_HAVE_CUDA
extern const ncc_backend ncc_backend_cuda;
/* The PTX NVRTC makes of `source` for `arch` ("sm_90"); NULL arch: the
 * device's, or sm_90 without one. Malloc'd text in *ptx. */
ncc_status ncc_cuda_compile_ptx(const char *source, const char *arch,
                                char **ptx, size_t *len);
/* The arch used by default (NCC_CUDA_ARCH, the device's, or sm_90). */
const char *ncc_cuda_default_arch(void);
#endif

#endif /* NCC_GPU_H */
