/* targets/targets.c — target facts every configuration needs, LLVM or not,
 * read from the target table (targets/table.c).
 *
 * The layout pass blocks tensors by the target's f32 vector width, and the
 * driver asks for that block before it knows whether the target's code
 * generator was built. So the answer lives here, not in codegen/llvm:
 *   cpu, ref, NULL  this host's width (ref checks the graph cpu runs);
 *   LLVM cross      the row's width (x86_64 8, aarch64 4);
 *   anything else   1 (GPU targets: blocked layouts are a CPU schedule).
 * With LLVM the host width is LLVM's (its host CPU features), exactly as
 * the cpu target compiles. Without LLVM there is no cpu target, but `ref`
 * still checks the graph cpu would run on this host: the width comes from
 * the compiler's CPU feature check (__builtin_cpu_supports: cpuid plus the
 * OS's xgetbv state on x86; NEON is part of every aarch64). A width chosen
 * through ncc_options (the driver's NCC_VECTOR_WIDTH) is applied by the
 * caller; the library reads no environment.
 */
#include <string.h>

#include "ncc.h"
#include "targets.h"
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
  const ncc_target_row *t = ncc_target_row_find(target ? target : "cpu");
  if (!t || t->kind == NCC_TARGET_GPU) return 1;
  if (t->kind == NCC_TARGET_INTERP || !t->triple) return host_vector_width();
  return t->vector_width;
}

int ncc_target_count(void) { return ncc_target_table_len; }

ncc_status ncc_target_get(int i, ncc_target_desc *out) {
  if (!out || i < 0 || i >= ncc_target_count())
    return ncc_error(NCC_ERR_USAGE, "ncc_target_get: no target %d", i);
  const ncc_target_row *t = &ncc_target_table[i];
  out->name = t->name;
  out->description = t->description;
  out->emit_kinds = t->emit_kinds;
  /* Runs: an executor is built in (its device may still be missing). */
  out->runs = t->in_process && t->backend != NULL;
  char why[256];
  out->compiles = ncc_target_can_compile(t->name, why, sizeof why) == NCC_OK;
  out->vector_width = t->kind == NCC_TARGET_INTERP ? 0 : ncc_target_layout_block(t->name);
  return NCC_OK;
}
