/* tools/ncc/env.c — the environment variables the `ncc` command honours.
 *
 * libncc reads no environment (include/ncc.h, ncc_options); the driver is
 * where the variables users and the test suite set (NCC_NUM_THREADS,
 * NCC_VECTOR_WIDTH, ...) become options. A malformed value is ignored, as
 * the library ignored it before the variables moved here. `ncc --help`
 * lists them (CLI_ENV_HELP). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A set, non-empty variable. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

void cli_env_options(ncc_options *o) {
  int64_t v;
  const char *s;
  if ((s = env("NCC_NUM_THREADS")) && cli_parse_int(s, 1, 1024, &v))
    o->num_threads = (int)v;
  if ((s = env("NCC_VECTOR_WIDTH")) && cli_parse_int(s, 1, 16, &v) &&
      (v == 1 || v == 4 || v == 8 || v == 16))
    o->vector_width = (int)v;
  if ((s = env("NCC_CODEGEN_OPT")) && cli_parse_int(s, 0, 3, &v))
    o->codegen_level = (int)v;
  if ((s = env("NCC_KERNEL_REUSE")) && strcmp(s, "0") == 0) o->kernel_reuse = 0;
  /* set at all (even empty) was enough for these before, so it still is */
  if (getenv("NCC_DEBUG_KIR")) o->dump |= NCC_DUMP_KERNEL_IR;
  if (getenv("NCC_DUMP_LLVM")) o->dump |= NCC_DUMP_LLVM_IR;
  if (getenv("NCC_DUMP_ASM")) o->dump |= NCC_DUMP_ASM;
  if (getenv("NCC_DEBUG_GPU")) o->dump |= NCC_DUMP_GPU;
  if (getenv("NCC_KEEP_AOT_TEMPS")) o->keep_temps = 1;
  if (getenv("NCC_GPU_TEST_BAD_KERNEL")) o->gpu_test_bad_kernel = 1;
  o->cc = env("NCC_CC");
  o->aarch64_cc = env("NCC_AARCH64_CC");
}
