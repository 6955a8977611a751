/* targets/cuda/cuda_internal.h — between the two files of the cuda target. */
#ifndef NCC_CUDA_INTERNAL_H
#define NCC_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ncc.h"

/* Whether NVRTC loads; `why` says why not; its version otherwise. */
bool ncc_nvrtc_available(char *why, size_t cap, int *major, int *minor);

/* The PTX NVRTC makes of `source` for `arch` ("sm_90"); NULL arch: the
 * device's, or sm_90 without one. Malloc'd text in *ptx (nvrtc.c). */
ncc_status ncc_cuda_compile_ptx(const char *source, const char *arch,
                                char **ptx, size_t *len);
/* The arch used by default (NCC_CUDA_ARCH, the device's, or sm_90; cuda.c). */
const char *ncc_cuda_default_arch(void);

#endif /* NCC_CUDA_INTERNAL_H */
