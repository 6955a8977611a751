/* targets/table.c — the target table (targets/targets.h), in `ncc targets`
 * order. A target configured out of the build keeps its row (built false),
 * so asking for it says which option left it out instead of "unknown". */
#include <stdio.h>
#include <string.h>

#include "targets.h"

/* Each backend is declared here, beside its row, so a target is one row. */
#ifdef NCC_HAVE_LLVM
extern const ncc_backend ncc_backend_cpu; /* targets/cpu */
#define LLVM_BUILT true
#define CPU_BACKEND &ncc_backend_cpu
#else
#define LLVM_BUILT false
#define CPU_BACKEND NULL
#endif
#ifdef NCC_HAVE_OPENCL
extern const ncc_backend ncc_backend_opencl; /* targets/opencl */
#define OPENCL_BUILT true
#define OPENCL_BACKEND &ncc_backend_opencl
#else
#define OPENCL_BUILT false
#define OPENCL_BACKEND NULL
#endif
#ifdef NCC_HAVE_CUDA
extern const ncc_backend ncc_backend_cuda; /* targets/cuda */
#define CUDA_BUILT true
#define CUDA_BACKEND &ncc_backend_cuda
#else
#define CUDA_BUILT false
#define CUDA_BACKEND NULL
#endif

#define LLVM_KINDS "kir,llvm,asm,obj,lib"

const ncc_target_row ncc_target_table[] = {
    {.name = "ref", .description = "reference interpreter (defines every op's semantics)",
     .kind = NCC_TARGET_INTERP, .backend = &ncc_backend_ref, .in_process = true,
     .emit_kinds = "", .built = true},
    {.name = "cpu", .description = "this host through the LLVM JIT",
     .kind = NCC_TARGET_LLVM, .backend = CPU_BACKEND, .in_process = true,
     .emit_kinds = LLVM_KINDS, .cmake_option = "NCC_LLVM", .built = LLVM_BUILT},
    /* the widths of the cross targets are also their layout blocks */
    {.name = "x86_64",
     .description = "x86-64 (AVX2 baseline) through LLVM; its --emit=obj|lib output "
                    "runs on an x86-64 host",
     .kind = NCC_TARGET_LLVM, .triple = "x86_64-unknown-linux-gnu", .cpu = "x86-64-v3",
     .features = "", .vector_width = 8, .emit_kinds = LLVM_KINDS,
     .cmake_option = "NCC_LLVM", .built = LLVM_BUILT},
    {.name = "aarch64",
     .description = "AArch64 (NEON) through LLVM; its --emit=obj|lib output runs on "
                    "AArch64 or under qemu-aarch64",
     .kind = NCC_TARGET_LLVM, .triple = "aarch64-unknown-linux-gnu", .cpu = "generic",
     .features = "+neon", .vector_width = 4, .emit_kinds = LLVM_KINDS,
     .cmake_option = "NCC_LLVM", .built = LLVM_BUILT},
    {.name = "opencl", .description = "OpenCL C kernels", .kind = NCC_TARGET_GPU,
     .backend = OPENCL_BACKEND, .in_process = true, .vector_width = 1,
     .emit_kinds = "kir,opencl", .cmake_option = "NCC_OPENCL", .built = OPENCL_BUILT},
    {.name = "cuda", .description = "CUDA C kernels through NVRTC", .kind = NCC_TARGET_GPU,
     .backend = CUDA_BACKEND, .in_process = true, .vector_width = 1,
     .emit_kinds = "kir,cuda,ptx", .cmake_option = "NCC_CUDA", .built = CUDA_BUILT},
};
const int ncc_target_table_len = (int)(sizeof ncc_target_table / sizeof ncc_target_table[0]);

const ncc_target_row *ncc_target_row_find(const char *name) {
  for (int i = 0; name && i < ncc_target_table_len; i++)
    if (strcmp(ncc_target_table[i].name, name) == 0) return &ncc_target_table[i];
  return NULL;
}

ncc_status ncc_target_unknown(const char *name) {
  const char *names[16];
  int n = 0;
  for (int i = 0; i < ncc_target_table_len && n < 16; i++) names[n++] = ncc_target_table[i].name;
  const char *near = ncc_suggest(name, names, n);
  if (near) return ncc_error(NCC_ERR_USAGE, "unknown target '%s'; did you mean '%s'?", name, near);
  return ncc_error(NCC_ERR_USAGE, "unknown target '%s'", name);
}
