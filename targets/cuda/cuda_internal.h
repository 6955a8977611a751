/* targets/cuda/cuda_internal.h — between the two files of the cuda target. */
#ifndef NCC_CUDA_INTERNAL_H
#define NCC_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* Whether NVRTC loads; `why` says why not; its version otherwise. */
bool ncc_nvrtc_available(char *why, size_t cap, int *major, int *minor);

#endif /* NCC_CUDA_INTERNAL_H */
