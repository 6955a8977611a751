/* runtime/targets.c — target facts every configuration needs, LLVM or not.
 *
 * The layout pass blocks tensors by the target's f32 vector width, and the
 * driver asks for that block before it knows whether the target's code
 * generator was built. So the answer lives here, not in codegen/llvm:
 *   cpu, ref, NULL  this host's width (ref checks the graph cpu runs);
 *   x86_64          8 (x86-64-v3, AVX2), aarch64 4 (NEON) — the same widths
 *                   as the LLVM cross targets in codegen/llvm/aot.c;
 *   anything else   1 (GPU targets: blocked layouts are a CPU schedule).
 * With LLVM the host width is LLVM's (its host CPU features), exactly as
 * the cpu target compiles. Without LLVM there
 * is no cpu target, but `ref` still checks the graph cpu would run on this
 * host: the width comes from the compiler's CPU feature check
 * (__builtin_cpu_supports: cpuid plus the OS's xgetbv state on x86; NEON is
 * part of every aarch64). A width chosen through ncc_options (the driver's
 * NCC_VECTOR_WIDTH) is applied by the caller; the library reads no
 * environment.
 */
#include <string.h>

#include "ncc.h"
#include "backend.h"
#ifdef NCC_HAVE_LLVM
#include "../codegen/llvm/llvm.h"
#endif

static int host_vector_width(void) {
#ifdef NCC_HAVE_LLVM
  const ncc_llvm_host *h;
  if (ncc_llvm_host_info(&h) != NCC_OK) return 1; /* LLVM cannot target the host */
  return h->vector_width;
#else
  int w = 1;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) w = 16;
  else if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx")) w = 8;
  else if (__builtin_cpu_supports("sse2")) w = 4;
#elif defined(__aarch64__)
  w = 4;
#endif
  return w;
#endif
}

int ncc_target_layout_block(const char *target) {
  if (!target || strcmp(target, "cpu") == 0 || strcmp(target, "ref") == 0)
    return host_vector_width();
  if (strcmp(target, "x86_64") == 0) return 8;
  if (strcmp(target, "aarch64") == 0) return 4;
  return 1;
}

/* The targets ncc knows, in `ncc targets` order. */
static const struct {
  const char *name, *description, *emit_kinds;
} known[] = {
    {"ref", "reference interpreter (defines every op's semantics)", ""},
    {"cpu", "this host through the LLVM JIT", "kir,llvm,asm,obj,lib"},
    {"x86_64", "x86-64 (AVX2 baseline) through LLVM; its --emit=obj|lib output "
               "runs on an x86-64 host", "kir,llvm,asm,obj,lib"},
    {"aarch64", "AArch64 (NEON) through LLVM; its --emit=obj|lib output runs on "
                "AArch64 or under qemu-aarch64", "kir,llvm,asm,obj,lib"},
    {"opencl", "OpenCL C kernels", "kir,opencl"},
    {"cuda", "CUDA C kernels through NVRTC", "kir,cuda,ptx"},
};

int ncc_target_count(void) { return (int)(sizeof known / sizeof known[0]); }

ncc_status ncc_target_get(int i, ncc_target_desc *out) {
  if (!out || i < 0 || i >= ncc_target_count())
    return ncc_error(NCC_ERR_USAGE, "ncc_target_get: no target %d", i);
  const char *name = known[i].name;
  out->name = name;
  out->description = known[i].description;
  out->emit_kinds = known[i].emit_kinds;
  /* Runs: an executor is built in (its device may still be missing). */
  out->runs = ncc_backend_find(name) != NULL;
  char why[256];
  out->compiles = ncc_target_can_compile(name, why, sizeof why) == NCC_OK;
  out->vector_width = strcmp(name, "ref") == 0 ? 0 : ncc_target_layout_block(name);
  return NCC_OK;
}
