/* targets/cuda/cuda_api.h — the few CUDA driver API and NVRTC declarations
 * ncc uses, declared here so the `cuda` target builds on any machine: both
 * libraries are opened with dlopen at run time. The types and signatures
 * match cuda.h / nvrtc.h (CUDA 11-13); tests/gpu/abi_check.c checks them
 * against the toolkit's headers where a toolkit is installed.
 */
#ifndef NCC_CUDA_API_H
#define NCC_CUDA_API_H

#include <stddef.h>

/* ---- driver API (cuda.h) ----
 * With NCC_CUDA_API_TOOLKIT_TYPES the types come from the toolkit's headers
 * (included first): tests/gpu/abi_check.c then checks every signature. */
#ifndef NCC_CUDA_API_TOOLKIT_TYPES
typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
#endif

enum {
  NCC_CUDA_SUCCESS = 0,
  NCC_CUDA_ERROR_OUT_OF_MEMORY = 2,
  NCC_CUDA_ERROR_STUB_LIBRARY = 34,
  NCC_CUDA_ERROR_NO_DEVICE = 100,
  NCC_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  NCC_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  NCC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  NCC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
};

/* X(name in the library, return type, (parameters)) */
#define NCC_CUDA_DRIVER_FNS(X)                                                 \
  X(cuInit, CUresult, (unsigned int))                                        \
  X(cuDriverGetVersion, CUresult, (int *))                                   \
  X(cuDeviceGetCount, CUresult, (int *))                                     \
  X(cuDeviceGet, CUresult, (CUdevice *, int))                                \
  X(cuDeviceGetName, CUresult, (char *, int, CUdevice))                      \
  X(cuDeviceGetAttribute, CUresult, (int *, CUdevice_attribute, CUdevice))   \
  X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))             \
  X(cuCtxSetCurrent, CUresult, (CUcontext))                                  \
  X(cuCtxSynchronize, CUresult, (void))                                      \
  X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t))                        \
  X(cuMemFree_v2, CUresult, (CUdeviceptr))                                   \
  X(cuMemcpyHtoD_v2, CUresult, (CUdeviceptr, const void *, size_t))          \
  X(cuMemcpyDtoH_v2, CUresult, (void *, CUdeviceptr, size_t))                \
  X(cuModuleLoadData, CUresult, (CUmodule *, const void *))                  \
  X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))   \
  X(cuModuleUnload, CUresult, (CUmodule))                                    \
  X(cuLaunchKernel, CUresult,                                                  \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,       \
     unsigned int, unsigned int, unsigned int, CUstream, void **, void **))    \
  X(cuGetErrorName, CUresult, (CUresult, const char **))

/* ---- NVRTC (nvrtc.h) ---- */
#ifndef NCC_CUDA_API_TOOLKIT_TYPES
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
#endif

#define NCC_NVRTC_FNS(X)                                                       \
  X(nvrtcVersion, nvrtcResult, (int *, int *))                               \
  X(nvrtcGetErrorString, const char *, (nvrtcResult))                         \
  X(nvrtcCreateProgram, nvrtcResult,                                          \
    (nvrtcProgram *, const char *, const char *, int, const char *const *,     \
     const char *const *))                                                     \
  X(nvrtcDestroyProgram, nvrtcResult, (nvrtcProgram *))                      \
  X(nvrtcCompileProgram, nvrtcResult, (nvrtcProgram, int, const char *const *)) \
  X(nvrtcGetPTXSize, nvrtcResult, (nvrtcProgram, size_t *))                  \
  X(nvrtcGetPTX, nvrtcResult, (nvrtcProgram, char *))                        \
  X(nvrtcGetProgramLogSize, nvrtcResult, (nvrtcProgram, size_t *))           \
  X(nvrtcGetProgramLog, nvrtcResult, (nvrtcProgram, char *))                 \
  X(nvrtcGetNumSupportedArchs, nvrtcResult, (int *))                         \
  X(nvrtcGetSupportedArchs, nvrtcResult, (int *))

/* Function-pointer types: name##_fn. */
#define NCC_CUDA_FN_TYPE(name, ret, params) typedef ret(*name##_fn) params;
NCC_CUDA_DRIVER_FNS(NCC_CUDA_FN_TYPE)
NCC_NVRTC_FNS(NCC_CUDA_FN_TYPE)
#undef NCC_CUDA_FN_TYPE

#endif /* NCC_CUDA_API_H */
