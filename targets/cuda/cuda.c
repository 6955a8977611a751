/* targets/cuda/cuda.c — the `cuda` target: CUDA C kernels from the cstyle
 * renderer, compiled to PTX by NVRTC and run through the CUDA driver API.
 *
 * The driver is opened with dlopen("libcuda.so.1") (NCC_CUDA_DRIVER_LIB
 * names another) at first use, so a machine without an NVIDIA driver
 * builds and tests everything else, and `ncc targets` says why CUDA is
 * unavailable (no libcuda, a stub libcuda, no device). Emitting CUDA C and
 * PTX needs no driver: only NVRTC for PTX. Device 0's primary context
 * serves the process; calls are serialized by a mutex and make the context
 * current on the calling thread first. The PTX is JIT-compiled by the
 * driver for the device (cuModuleLoadData).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/atomic_file.h"
#include "../gpu/gpu_exec.h"
#include "cuda_api.h"
#include "cuda_internal.h"

static struct {
  pthread_mutex_t lock;
  bool probed, ok;
  char why[400];
  void *lib;
#define X(name, ret, params) name##_fn name;
  NCC_CUDA_DRIVER_FNS(X)
#undef X
  CUdevice device;
  CUcontext ctx;
  char name[128];
  char arch[32]; /* the device's, "sm_XY" */
  ncc_gpu_device dev;
} cu = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *cu_err(CUresult r) {
  const char *s = NULL;
  if (cu.cuGetErrorName && cu.cuGetErrorName(r, &s) == 0 && s) return s;
  return "CUDA error";
}

static ncc_status cu_fail(const char *what, CUresult r) {
  return ncc_error(r == NCC_CUDA_ERROR_OUT_OF_MEMORY ? NCC_ERR_NOMEM : NCC_ERR_INTERNAL,
                   "cuda: %s failed (%d %s)", what, (int)r, cu_err(r));
}

/* ---- the device vtable ---- */

static ncc_status d_alloc(void *ctx, size_t bytes, ncc_gpu_mem *out) {
  (void)ctx;
  CUdeviceptr p = 0;
  if (bytes == 0) bytes = 16; /* cuMemAlloc refuses 0 bytes */
  CUresult r = cu.cuMemAlloc_v2(&p, bytes);
  if (r != 0) return cu_fail("cuMemAlloc", r);
  *out = (ncc_gpu_mem)p;
  return NCC_OK;
}

static void d_release(void *ctx, ncc_gpu_mem m) {
  (void)ctx;
  cu.cuMemFree_v2((CUdeviceptr)m);
}

static ncc_status d_upload(void *ctx, ncc_gpu_mem m, const void *src, size_t n) {
  (void)ctx;
  if (n == 0) return NCC_OK;
  CUresult r = cu.cuMemcpyHtoD_v2((CUdeviceptr)m, src, n);
  return r == 0 ? NCC_OK : cu_fail("cuMemcpyHtoD", r);
}

static ncc_status d_download(void *ctx, ncc_gpu_mem m, void *dst, size_t n) {
  (void)ctx;
  if (n == 0) return NCC_OK;
  CUresult r = cu.cuMemcpyDtoH_v2(dst, (CUdeviceptr)m, n);
  return r == 0 ? NCC_OK : cu_fail("cuMemcpyDtoH", r);
}

static ncc_status d_build(void *ctx, const char *source, const char *const *names, int n,
                          void **program, void **kernels) {
  (void)ctx;
  char *ptx = NULL;
  size_t len = 0;
  ncc_status st = ncc_cuda_compile_ptx(source, cu.arch, &ptx, &len);
  if (st != NCC_OK) return st;
  CUmodule mod = NULL;
  CUresult r = cu.cuModuleLoadData(&mod, ptx);
  ncc_free(ptx, 0);
  if (r != 0) return cu_fail("cuModuleLoadData (PTX to the device)", r);
  for (int i = 0; i < n; i++) {
    CUfunction f = NULL;
    r = cu.cuModuleGetFunction(&f, mod, names[i]);
    if (r != 0) {
      cu.cuModuleUnload(mod);
      return cu_fail("cuModuleGetFunction", r);
    }
    kernels[i] = f;
  }
  *program = mod;
  return NCC_OK;
}

static void d_free_program(void *ctx, void *program, void **kernels, int n) {
  (void)ctx;
  (void)kernels;
  (void)n;
  cu.cuModuleUnload(program);
}

static ncc_status d_launch(void *ctx, void *kernel, const ncc_gpu_arg *args, int nargs,
                           int64_t groups, int local) {
  (void)ctx;
  if (groups <= 0) return NCC_OK; /* a 0-block grid is an error: skip it */
  CUdeviceptr mems[64];
  long long ints[64];
  void *params[64];
  if (nargs > 64) return ncc_error(NCC_ERR_INTERNAL, "cuda: %d kernel arguments", nargs);
  for (int i = 0; i < nargs; i++) {
    if (args[i].is_mem) {
      mems[i] = (CUdeviceptr)args[i].mem;
      params[i] = &mems[i];
    } else {
      ints[i] = args[i].i64;
      params[i] = &ints[i];
    }
  }
  CUresult r = cu.cuLaunchKernel(kernel, (unsigned)groups, 1, 1, (unsigned)local, 1, 1, 0,
                                 NULL, params, NULL);
  return r == 0 ? NCC_OK : cu_fail("cuLaunchKernel", r);
}

static ncc_status d_finish(void *ctx) {
  (void)ctx;
  CUresult r = cu.cuCtxSynchronize();
  return r == 0 ? NCC_OK : cu_fail("cuCtxSynchronize", r);
}

/* ---- opening the driver (lock held) ---- */

static void probe(void) {
  if (cu.probed) return;
  cu.probed = true;
  char nvwhy[320];
  int major = 0, minor = 0;
  bool nvrtc = ncc_nvrtc_available(nvwhy, sizeof nvwhy, &major, &minor);
  /* A documented exception to "libncc reads no environment" (docs/CLI.md):
   * which driver library and device to load is process-wide, probed once
   * before any options exist, like the vendor's own variables. */
  const char *env = getenv("NCC_CUDA_DRIVER_LIB");
  cu.lib = dlopen(env ? env : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu.lib) {
    const char *e = dlerror();
    if (nvrtc)
      snprintf(cu.why, sizeof cu.why,
               "no CUDA driver (%s); NVRTC %d.%d is here, so --emit=cuda|ptx work", e ? e : "",
               major, minor);
    else
      snprintf(cu.why, sizeof cu.why, "no CUDA driver (%s) and %s", e ? e : "", nvwhy);
    return;
  }
#define X(name, ret, params)                                                          \
  {                                                                            \
    void *p = dlsym(cu.lib, #name);                                            \
    if (!p) {                                                                  \
      snprintf(cu.why, sizeof cu.why, "the CUDA driver lacks %s", #name);      \
      return;                                                                  \
    }                                                                          \
    memcpy(&cu.name, &p, sizeof p);                                            \
  }
  NCC_CUDA_DRIVER_FNS(X)
#undef X
  CUresult r = cu.cuInit(0);
  if (r == NCC_CUDA_ERROR_STUB_LIBRARY) {
    snprintf(cu.why, sizeof cu.why, "libcuda is only a stub (no NVIDIA driver installed)");
    return;
  }
  if (r == NCC_CUDA_ERROR_NO_DEVICE) {
    snprintf(cu.why, sizeof cu.why, "no CUDA device");
    return;
  }
  if (r != 0) {
    snprintf(cu.why, sizeof cu.why, "cuInit failed (%d %s)", (int)r, cu_err(r));
    return;
  }
  int count = 0;
  if (cu.cuDeviceGetCount(&count) != 0 || count < 1) {
    snprintf(cu.why, sizeof cu.why, "no CUDA device");
    return;
  }
  if (!nvrtc) {
    snprintf(cu.why, sizeof cu.why, "%s", nvwhy);
    return;
  }
  int cc_major = 0, cc_minor = 0, max_threads = 1024, smem = 48 * 1024;
  if ((r = cu.cuDeviceGet(&cu.device, 0)) != 0 ||
      (r = cu.cuDevicePrimaryCtxRetain(&cu.ctx, cu.device)) != 0 ||
      (r = cu.cuCtxSetCurrent(cu.ctx)) != 0) {
    snprintf(cu.why, sizeof cu.why, "cannot open CUDA device 0 (%d %s)", (int)r, cu_err(r));
    return;
  }
  cu.cuDeviceGetName(cu.name, (int)sizeof cu.name - 1, cu.device);
  cu.cuDeviceGetAttribute(&cc_major, NCC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu.device);
  cu.cuDeviceGetAttribute(&cc_minor, NCC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu.device);
  cu.cuDeviceGetAttribute(&max_threads, NCC_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cu.device);
  cu.cuDeviceGetAttribute(&smem, NCC_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, cu.device);
  snprintf(cu.arch, sizeof cu.arch, "sm_%d%d", cc_major, cc_minor);
  /* A documented exception to "libncc reads no environment" (docs/CLI.md):
   * which driver library and device to load is process-wide, probed once
   * before any options exist, like the vendor's own variables. */
  const char *want = getenv("NCC_CUDA_ARCH");
  if (want && *want) snprintf(cu.arch, sizeof cu.arch, "%s", want);
  ncc_gpu_device *d = &cu.dev;
  d->target = "cuda";
  d->lang = ncc_cstyle_lang_find("cuda");
  d->max_local = max_threads;
  d->max_groups = 1 << 20;
  d->max_local_bytes = smem;
  d->alloc = d_alloc;
  d->release = d_release;
  d->upload = d_upload;
  d->download = d_download;
  d->build = d_build;
  d->free_program = d_free_program;
  d->launch = d_launch;
  d->finish = d_finish;
  cu.ok = true;
}

const char *ncc_cuda_default_arch(void) {
  /* the exception above: the device's architecture override */
  const char *want = getenv("NCC_CUDA_ARCH");
  if (want && *want) return want;
  pthread_mutex_lock(&cu.lock);
  probe();
  const char *a = cu.ok ? cu.arch : "sm_90";
  pthread_mutex_unlock(&cu.lock);
  return a;
}

/* ---- the backend ---- */

static bool cu_available(char *why, size_t cap) {
  pthread_mutex_lock(&cu.lock);
  probe();
  if (why && cap) snprintf(why, cap, "%s", cu.ok ? "" : cu.why);
  bool ok = cu.ok;
  pthread_mutex_unlock(&cu.lock);
  return ok;
}

static ncc_status cu_compile(const ncc_graph *g, const ncc_backend_opts *opts, void **state) {
  (void)opts;
  *state = NULL;
  pthread_mutex_lock(&cu.lock);
  probe();
  ncc_status st = cu.ok ? NCC_OK
                        : ncc_error(NCC_ERR_UNSUPPORTED, "target 'cuda' is unavailable: %s",
                                    cu.why);
  ncc_gpu_module *m = NULL;
  if (st == NCC_OK) {
    cu.cuCtxSetCurrent(cu.ctx);
    st = ncc_gpu_compile(&cu.dev, g, &m);
  }
  pthread_mutex_unlock(&cu.lock);
  *state = m;
  return st;
}

static ncc_status cu_run(void *state, const ncc_tensor *in, int n_in, ncc_tensor *out,
                         int n_out) {
  pthread_mutex_lock(&cu.lock);
  cu.cuCtxSetCurrent(cu.ctx);
  ncc_status st = ncc_gpu_run(state, in, n_in, out, n_out);
  pthread_mutex_unlock(&cu.lock);
  return st;
}

static void cu_free(void *state) {
  pthread_mutex_lock(&cu.lock);
  if (cu.ok) cu.cuCtxSetCurrent(cu.ctx);
  ncc_gpu_free(state);
  pthread_mutex_unlock(&cu.lock);
}

static ncc_status cu_emit(const ncc_graph *g, const char *kind, const char *path) {
  if (strcmp(kind, "cuda") == 0 || strcmp(kind, "kir") == 0)
    return ncc_gpu_emit_source(g, ncc_cstyle_lang_find("cuda"), kind, path);
  if (strcmp(kind, "ptx") != 0)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "--emit=%s is not available for target 'cuda' (cuda, ptx, kir)", kind);
  ncc_sbuf src = {0};
  char *ptx = NULL;
  size_t len = 0;
  ncc_status st = ncc_gpu_render_graph(g, ncc_cstyle_lang_find("cuda"), &src);
  if (st == NCC_OK) st = ncc_cuda_compile_ptx(src.s, NULL, &ptx, &len);
  if (st == NCC_OK) st = ncc_atomic_write(path, ptx, len);
  ncc_free(ptx, 0);
  ncc_sbuf_free(&src);
  return st;
}

const ncc_backend ncc_backend_cuda = {
    .name = "cuda",
    .description = "CUDA C kernels through NVRTC and the CUDA driver",
    .available = cu_available,
    .supports_op = ncc_gpu_supports_op,
    .compile = cu_compile,
    .run = cu_run,
    .num_kernels = ncc_gpu_num_kernels,
    .num_host_kernels = ncc_gpu_num_host_kernels,
    .on_host = ncc_gpu_on_host,
    .step_of = ncc_gpu_step_of,
    .free = cu_free,
    .emit = cu_emit,
};
