/* codegen/llvm/amx.c — whether this process may use the host's AMX tiles.
 *
 * AMX needs more than the CPU's feature bits: Linux hands out the 8 KiB
 * of tile state per thread only to a process that asks for it
 * (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA); without that, the first
 * tile instruction raises SIGILL. The request is made once, on the first
 * compile that would lower to tiles, and covers every thread of the
 * process (the kernel thread pool included). A refused request (an old
 * kernel, a seccomp filter) leaves the kernels on the vector paths. */
#include "llvm.h"

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static int granted = -1; /* -1: not asked yet */

static bool os_allows_tiles(void) {
  int g = __atomic_load_n(&granted, __ATOMIC_ACQUIRE);
  if (g < 0) { /* asking twice is harmless: the answer is the same */
    g = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
    __atomic_store_n(&granted, g, __ATOMIC_RELEASE);
  }
  return g == 1;
}
#else
static bool os_allows_tiles(void) { return false; }
#endif

bool ncc_llvm_amx_usable(const ncc_llvm_host *h, const char *feature) {
  if (!h || !h->in_process || !ncc_llvm_has_feature(h, "amx-tile") ||
      !ncc_llvm_has_feature(h, feature))
    return false;
  return os_allows_tiles();
}
