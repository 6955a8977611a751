/* tests/gpu/abi_check.c — a build-time check (tests/gpu.cmake) that the
 * declarations the cuda target uses to call libcuda and libnvrtc through
 * dlopen (targets/cuda/cuda_api.h) match the toolkit's headers: every
 * function-pointer type must accept the toolkit's function, every constant
 * must equal the toolkit's. A mismatch fails the build. */
#include <cuda.h>
#include <nvrtc.h>

#define NCC_CUDA_API_TOOLKIT_TYPES
#include "targets/cuda/cuda_api.h"

#define CHECK(name, ret, params) name##_fn ncc_abi_##name = &name;
NCC_CUDA_DRIVER_FNS(CHECK)
NCC_NVRTC_FNS(CHECK)

_Static_assert(sizeof(CUresult) == sizeof(int), "CUresult is returned as int");
_Static_assert(sizeof(nvrtcResult) == sizeof(int), "nvrtcResult is returned as int");
_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is 64-bit");
_Static_assert((int)NCC_CUDA_SUCCESS == (int)CUDA_SUCCESS, "CUDA_SUCCESS");
_Static_assert((int)NCC_CUDA_ERROR_OUT_OF_MEMORY == (int)CUDA_ERROR_OUT_OF_MEMORY, "OOM");
_Static_assert((int)NCC_CUDA_ERROR_STUB_LIBRARY == (int)CUDA_ERROR_STUB_LIBRARY, "stub");
_Static_assert((int)NCC_CUDA_ERROR_NO_DEVICE == (int)CUDA_ERROR_NO_DEVICE, "no device");
_Static_assert((int)NCC_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK == (int)CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "attr");
_Static_assert((int)NCC_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK == (int)CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "attr");
_Static_assert((int)NCC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == (int)CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "attr");
_Static_assert((int)NCC_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == (int)CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "attr");
