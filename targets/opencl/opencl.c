/* targets/opencl/opencl.c — the `opencl` target: OpenCL C kernels from the
 * cstyle renderer, run through the ICD loader.
 *
 * libOpenCL is opened with dlopen at first use (NCC_OPENCL_LIB names
 * another library), so ncc builds and runs everything else on a machine
 * without OpenCL; the headers (opencl-headers) only supply types. The first
 * GPU device of any platform is used, else the first device of any type
 * (PoCL's CPU device on the development machines); NCC_OPENCL_DEVICE=P.D
 * picks device D of platform P. One context and one in-order queue serve
 * the whole process, behind a mutex: modules own their buffers and
 * programs. The device executor is targets/gpu/gpu_exec.c.
 */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/gpu_exec.h"
#include "../../ir/options.h"

#define CL_FNS(X)                                                              \
  X(clGetPlatformIDs)                                                          \
  X(clGetPlatformInfo)                                                         \
  X(clGetDeviceIDs)                                                            \
  X(clGetDeviceInfo)                                                           \
  X(clCreateContext)                                                           \
  X(clCreateCommandQueue)                                                      \
  X(clCreateBuffer)                                                            \
  X(clReleaseMemObject)                                                        \
  X(clEnqueueWriteBuffer)                                                      \
  X(clEnqueueReadBuffer)                                                       \
  X(clCreateProgramWithSource)                                                 \
  X(clBuildProgram)                                                            \
  X(clGetProgramBuildInfo)                                                     \
  X(clCreateKernel)                                                            \
  X(clSetKernelArg)                                                            \
  X(clEnqueueNDRangeKernel)                                                    \
  X(clFinish)                                                                  \
  X(clReleaseKernel)                                                           \
  X(clReleaseProgram)

typedef struct ocl_api {
  void *lib;
#define X(f) __typeof__(&f) f;
  CL_FNS(X)
#undef X
} ocl_api;

/* Process-wide state: the loader probe, then (on first compile) the
 * context; each step's failure is remembered with its reason. */
static struct {
  pthread_mutex_t lock;
  bool probed, probe_ok, opened, open_ok;
  char why[320];
  ocl_api api;
  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue q;
  char device_name[128];
  ncc_gpu_device dev;
} ocl = {.lock = PTHREAD_MUTEX_INITIALIZER};

static const char *cl_err_name(cl_int e) {
  switch (e) {
  case CL_SUCCESS: return "CL_SUCCESS";
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "OpenCL error";
  }
}

static ncc_status cl_fail(const char *what, cl_int e) {
  return ncc_error(e == CL_OUT_OF_HOST_MEMORY ? NCC_ERR_NOMEM : NCC_ERR_INTERNAL,
                   "opencl: %s failed (%d %s)", what, (int)e, cl_err_name(e));
}

/* Load the ICD loader and find a device; no context yet (cheap, and it
 * allocates nothing the ICD keeps). Called with the lock held. */
static void probe(void) {
  if (ocl.probed) return;
  ocl.probed = true;
  /* A documented exception to "libncc reads no environment" (docs/CLI.md):
   * which driver library and device to load is process-wide, probed once
   * before any options exist, like the vendor's own variables. */
  const char *libname = getenv("NCC_OPENCL_LIB");
  ocl_api *a = &ocl.api;
  a->lib = dlopen(libname ? libname : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a->lib && !libname) a->lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
  if (!a->lib) {
    const char *e = dlerror();
    snprintf(ocl.why, sizeof ocl.why, "cannot load the OpenCL ICD loader (%s)",
             e ? e : "libOpenCL.so.1");
    return;
  }
#define X(f)                                                                   \
  {                                                                            \
    void *p = dlsym(a->lib, #f);                                               \
    if (!p) {                                                                  \
      snprintf(ocl.why, sizeof ocl.why, "the OpenCL library lacks %s", #f);    \
      return;                                                                  \
    }                                                                          \
    memcpy(&a->f, &p, sizeof p);                                               \
  }
  CL_FNS(X)
#undef X
  cl_platform_id plats[16];
  cl_uint np = 0;
  cl_int e = a->clGetPlatformIDs(16, plats, &np);
  if (e == -1001 || (e == CL_SUCCESS && np == 0)) {
    snprintf(ocl.why, sizeof ocl.why,
             "no OpenCL platform (the ICD loader found no driver; see "
             "/etc/OpenCL/vendors and OCL_ICD_VENDORS)");
    return;
  }
  if (e != CL_SUCCESS) {
    snprintf(ocl.why, sizeof ocl.why, "clGetPlatformIDs failed (%d %s)", (int)e,
             cl_err_name(e));
    return;
  }
  if (np > 16) np = 16;
  int want_p = -1, want_d = -1;
  /* A documented exception to "libncc reads no environment" (docs/CLI.md):
   * which driver library and device to load is process-wide, probed once
   * before any options exist, like the vendor's own variables. */
  const char *sel = getenv("NCC_OPENCL_DEVICE");
  if (sel && sscanf(sel, "%d.%d", &want_p, &want_d) != 2) want_p = want_d = -1;
  bool found = false, found_gpu = false;
  for (cl_uint p = 0; p < np && !found_gpu; p++) {
    cl_device_id devs[16];
    cl_uint nd = 0;
    if (a->clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS) continue;
    if (nd > 16) nd = 16;
    for (cl_uint d = 0; d < nd && !found_gpu; d++) {
      cl_device_type type = 0;
      a->clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL);
      bool pick = want_p >= 0 ? (int)p == want_p && (int)d == want_d
                              : !found || (type & CL_DEVICE_TYPE_GPU);
      if (!pick) continue;
      ocl.platform = plats[p];
      ocl.device = devs[d];
      found = true;
      found_gpu = want_p >= 0 || (type & CL_DEVICE_TYPE_GPU);
    }
  }
  if (!found) {
    snprintf(ocl.why, sizeof ocl.why, sel ? "no OpenCL device %s" : "no OpenCL device%s",
             sel ? sel : "");
    return;
  }
  a->clGetDeviceInfo(ocl.device, CL_DEVICE_NAME, sizeof ocl.device_name - 1,
                     ocl.device_name, NULL);
  ocl.probe_ok = true;
}

/* ---- the device vtable ---- */

static ncc_status d_alloc(void *ctx, size_t bytes, ncc_gpu_mem *out) {
  (void)ctx;
  cl_int e;
  if (bytes == 0) bytes = 16; /* CL_INVALID_BUFFER_SIZE for 0 */
  cl_mem m = ocl.api.clCreateBuffer(ocl.ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  /* a buffer larger than the device allows, or than it has, is out of memory */
  if (e == CL_INVALID_BUFFER_SIZE || e == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
      e == CL_OUT_OF_RESOURCES)
    return ncc_error(NCC_ERR_NOMEM, "opencl: cannot allocate %zu bytes on the device (%d %s)",
                     bytes, (int)e, cl_err_name(e));
  if (e != CL_SUCCESS) return cl_fail("clCreateBuffer", e);
  *out = (ncc_gpu_mem)(uintptr_t)m;
  return NCC_OK;
}

static void d_release(void *ctx, ncc_gpu_mem m) {
  (void)ctx;
  ocl.api.clReleaseMemObject((cl_mem)(uintptr_t)m);
}

static ncc_status d_upload(void *ctx, ncc_gpu_mem m, const void *src, size_t n) {
  (void)ctx;
  if (n == 0) return NCC_OK;
  cl_int e = ocl.api.clEnqueueWriteBuffer(ocl.q, (cl_mem)(uintptr_t)m, CL_TRUE, 0, n, src, 0,
                                          NULL, NULL);
  return e == CL_SUCCESS ? NCC_OK : cl_fail("clEnqueueWriteBuffer", e);
}

static ncc_status d_download(void *ctx, ncc_gpu_mem m, void *dst, size_t n) {
  (void)ctx;
  if (n == 0) return NCC_OK;
  cl_int e = ocl.api.clEnqueueReadBuffer(ocl.q, (cl_mem)(uintptr_t)m, CL_TRUE, 0, n, dst, 0,
                                         NULL, NULL);
  return e == CL_SUCCESS ? NCC_OK : cl_fail("clEnqueueReadBuffer", e);
}

/* The first error line of a build log (the whole log with NCC_DEBUG_GPU). */
static void first_error_line(const char *log, char *out, size_t cap) {
  const char *p = strstr(log, "error");
  if (!p) p = log;
  const char *s = p;
  while (s > log && s[-1] != '\n') s--;
  size_t n = strcspn(s, "\n");
  if (n >= cap) n = cap - 1;
  memcpy(out, s, n);
  out[n] = '\0';
}

static ncc_status d_build(void *ctx, const char *source, const char *const *names, int n,
                          void **program, void **kernels) {
  (void)ctx;
  ocl_api *a = &ocl.api;
  cl_int e;
  cl_program p = a->clCreateProgramWithSource(ocl.ctx, 1, &source, NULL, &e);
  if (e != CL_SUCCESS) return cl_fail("clCreateProgramWithSource", e);
  e = a->clBuildProgram(p, 1, &ocl.device, "", NULL, NULL);
  if (e != CL_SUCCESS) {
    size_t len = 0;
    a->clGetProgramBuildInfo(p, ocl.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
    char *log = ncc_calloc(len + 1, 1);
    char line[240] = "(no build log)";
    if (log && a->clGetProgramBuildInfo(p, ocl.device, CL_PROGRAM_BUILD_LOG, len, log, NULL) ==
                   CL_SUCCESS) {
      if (ncc_opts_dump(NCC_DUMP_GPU)) fprintf(ncc_opts_dump_file(), "%s\n", log);
      first_error_line(log, line, sizeof line);
    }
    ncc_free(log, len + 1);
    a->clReleaseProgram(p);
    return ncc_error(NCC_ERR_INTERNAL,
                     "opencl: the generated kernels failed to compile (%d %s): %s",
                     (int)e, cl_err_name(e), line);
  }
  for (int i = 0; i < n; i++) {
    kernels[i] = a->clCreateKernel(p, names[i], &e);
    if (e != CL_SUCCESS) {
      for (int j = 0; j < i; j++) a->clReleaseKernel(kernels[j]);
      a->clReleaseProgram(p);
      return cl_fail("clCreateKernel", e);
    }
  }
  *program = p;
  return NCC_OK;
}

static void d_free_program(void *ctx, void *program, void **kernels, int n) {
  (void)ctx;
  for (int i = 0; i < n; i++)
    if (kernels[i]) ocl.api.clReleaseKernel(kernels[i]);
  ocl.api.clReleaseProgram(program);
}

static ncc_status d_launch(void *ctx, void *kernel, const ncc_gpu_arg *args, int nargs,
                           int64_t groups, int local) {
  (void)ctx;
  ocl_api *a = &ocl.api;
  cl_kernel k = kernel;
  for (int i = 0; i < nargs; i++) {
    cl_int e;
    if (args[i].is_mem) {
      cl_mem m = (cl_mem)(uintptr_t)args[i].mem;
      e = a->clSetKernelArg(k, (cl_uint)i, sizeof m, &m);
    } else {
      cl_long v = args[i].i64;
      e = a->clSetKernelArg(k, (cl_uint)i, sizeof v, &v);
    }
    if (e != CL_SUCCESS) return cl_fail("clSetKernelArg", e);
  }
  if (groups <= 0) return NCC_OK; /* an empty range: nothing to enqueue */
  size_t l = (size_t)local, g = (size_t)groups * l;
  cl_int e = a->clEnqueueNDRangeKernel(ocl.q, k, 1, NULL, &g, &l, 0, NULL, NULL);
  return e == CL_SUCCESS ? NCC_OK : cl_fail("clEnqueueNDRangeKernel", e);
}

static ncc_status d_finish(void *ctx) {
  (void)ctx;
  cl_int e = ocl.api.clFinish(ocl.q);
  return e == CL_SUCCESS ? NCC_OK : cl_fail("clFinish", e);
}

/* Create the context and queue (first compile). Lock held. */
static ncc_status open_device(void) {
  if (ocl.opened) {
    if (ocl.open_ok) return NCC_OK;
    return ncc_error(NCC_ERR_UNSUPPORTED, "target 'opencl' is unavailable: %s", ocl.why);
  }
  ocl.opened = true;
  probe();
  if (!ocl.probe_ok)
    return ncc_error(NCC_ERR_UNSUPPORTED, "target 'opencl' is unavailable: %s", ocl.why);
  ocl_api *a = &ocl.api;
  cl_int e;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ocl.platform,
                                   0};
  ocl.ctx = a->clCreateContext(props, 1, &ocl.device, NULL, NULL, &e);
  if (e == CL_SUCCESS) ocl.q = a->clCreateCommandQueue(ocl.ctx, ocl.device, 0, &e);
  if (e != CL_SUCCESS) {
    snprintf(ocl.why, sizeof ocl.why, "cannot open OpenCL device '%s' (%d %s)",
             ocl.device_name, (int)e, cl_err_name(e));
    return ncc_error(NCC_ERR_UNSUPPORTED, "target 'opencl' is unavailable: %s", ocl.why);
  }
  size_t wg = 256;
  cl_ulong lmem = 16384;
  a->clGetDeviceInfo(ocl.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  a->clGetDeviceInfo(ocl.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
  ncc_gpu_device *d = &ocl.dev;
  d->target = "opencl";
  d->lang = ncc_cstyle_lang_find("opencl");
  d->max_local = wg > 1024 ? 1024 : (int)wg;
  d->max_groups = 1 << 16;
  d->max_local_bytes = (int64_t)lmem;
  d->alloc = d_alloc;
  d->release = d_release;
  d->upload = d_upload;
  d->download = d_download;
  d->build = d_build;
  d->free_program = d_free_program;
  d->launch = d_launch;
  d->finish = d_finish;
  ocl.open_ok = true;
  return NCC_OK;
}

/* ---- the backend ---- */

static bool ocl_available(char *why, size_t cap) {
  pthread_mutex_lock(&ocl.lock);
  probe();
  bool ok = ocl.probe_ok && (!ocl.opened || ocl.open_ok);
  if (why && cap) snprintf(why, cap, "%s", ok ? "" : ocl.why);
  pthread_mutex_unlock(&ocl.lock);
  return ok;
}

/* Module calls are serialized: one queue serves the process. */
static ncc_status ocl_compile(const ncc_graph *g, const ncc_backend_opts *opts, void **state) {
  (void)opts;
  *state = NULL;
  pthread_mutex_lock(&ocl.lock);
  ncc_status st = open_device();
  ncc_gpu_module *m = NULL;
  if (st == NCC_OK) st = ncc_gpu_compile(&ocl.dev, g, &m);
  pthread_mutex_unlock(&ocl.lock);
  *state = m;
  return st;
}

static ncc_status ocl_run(void *state, const ncc_tensor *in, int n_in, ncc_tensor *out,
                          int n_out) {
  pthread_mutex_lock(&ocl.lock);
  ncc_status st = ncc_gpu_run(state, in, n_in, out, n_out);
  pthread_mutex_unlock(&ocl.lock);
  return st;
}

static void ocl_free(void *state) {
  pthread_mutex_lock(&ocl.lock);
  ncc_gpu_free(state);
  pthread_mutex_unlock(&ocl.lock);
}

static ncc_status ocl_emit(const ncc_graph *g, const char *kind, const char *path) {
  if (strcmp(kind, "opencl") != 0 && strcmp(kind, "kir") != 0)
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "--emit=%s is not available for target 'opencl' (opencl, kir)", kind);
  return ncc_gpu_emit_source(g, ncc_cstyle_lang_find("opencl"), kind, path);
}

const ncc_backend ncc_backend_opencl = {
    .name = "opencl",
    .description = "OpenCL C kernels through the ICD loader",
    .available = ocl_available,
    .supports_op = ncc_gpu_supports_op,
    .compile = ocl_compile,
    .run = ocl_run,
    .num_kernels = ncc_gpu_num_kernels,
    .num_host_kernels = ncc_gpu_num_host_kernels,
    .on_host = ncc_gpu_on_host,
    .step_of = ncc_gpu_step_of,
    .free = ocl_free,
    .emit = ocl_emit,
};
