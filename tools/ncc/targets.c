/* tools/ncc/targets.c — the targets `ncc` knows (docs/CLI.md) and whether
 * this build can use them. Whether a target runs here or only compiles
 * comes from the runtime (ncc_target_available, ncc_target_can_compile), so a backend that lands in libncc shows up here
 * without touching the driver; a known target that is not built stays in
 * the table, so asking for it says why it is unavailable (exit 3) rather
 * than "unknown target" (exit 1).
 */
#include <string.h>

#include "cli.h"

const cli_target cli_targets[] = {
    {"ref", "reference interpreter (defines every op's semantics)"},
    {"cpu", "this host through the LLVM JIT"},
    {"x86_64", "x86-64 (AVX2 baseline) through LLVM; its --emit=obj|lib output "
               "runs on an x86-64 host"},
    {"aarch64", "AArch64 (NEON) through LLVM; its --emit=obj|lib output runs on "
                "AArch64 or under qemu-aarch64"},
    {"opencl", "OpenCL C kernels"},
    {"cuda", "CUDA C kernels through NVRTC"},
};
const int cli_n_targets = (int)(sizeof cli_targets / sizeof cli_targets[0]);

ncc_status cli_target_check(const char *name) {
  for (int i = 0; i < cli_n_targets; i++)
    if (strcmp(cli_targets[i].name, name) == 0) {
      char why[256];
      /* On failure the runtime's message names the target and the reason. */
      return ncc_target_available(name, why, sizeof why);
    }
  return ncc_error(NCC_ERR_USAGE,
                   "unknown target '%s' (known: ref, cpu, x86_64, aarch64, "
                   "opencl, cuda)",
                   name);
}
