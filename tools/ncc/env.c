/* tools/ncc/env.c — the environment variables the `ncc` command honours.
 *
 * libncc reads no environment (include/ncc.h, ncc_options); the driver is
 * where the variables users and the test suite set (NCC_NUM_THREADS,
 * NCC_VECTOR_WIDTH, ...) become options. A malformed value is ignored, as
 * the library ignored it before the variables moved here. `ncc --help`
 * lists them (CLI_ENV_HELP). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A set, non-empty variable. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static size_t parse_size(const char *s);

void cli_env_options(ncc_options *o) {
  int64_t v;
  const char *s;
  if ((s = env("NCC_NUM_THREADS")) && cli_parse_int(s, 1, 1024, &v))
    o->num_threads = (int)v;
  if ((s = env("NCC_VECTOR_WIDTH")) && cli_parse_int(s, 1, 16, &v) &&
      (v == 1 || v == 4 || v == 8 || v == 16))
    o->vector_width = (int)v;
  if ((s = env("NCC_COMPILE_THREADS")) && cli_parse_int(s, 0, 1024, &v))
    o->compile_threads = (int)v;
  if ((s = env("NCC_CODEGEN_OPT")) && cli_parse_int(s, 0, 3, &v))
    o->codegen_level = (int)v;
  if ((s = env("NCC_KERNEL_REUSE")) && strcmp(s, "0") == 0) o->kernel_reuse = 0;
  if ((s = env("NCC_AMX")) && strcmp(s, "0") == 0) o->no_amx = 1;
  if (s && strcmp(s, "emulate") == 0) o->amx_emulate = 1;
  /* set at all (even empty) was enough for these before, so it still is */
  if (getenv("NCC_DEBUG_KIR")) o->dump |= NCC_DUMP_KERNEL_IR;
  if (getenv("NCC_DUMP_LLVM")) o->dump |= NCC_DUMP_LLVM_IR;
  if (getenv("NCC_DUMP_ASM")) o->dump |= NCC_DUMP_ASM;
  if (getenv("NCC_DEBUG_GPU")) o->dump |= NCC_DUMP_GPU;
  if (getenv("NCC_KEEP_AOT_TEMPS")) o->keep_temps = 1;
  if (getenv("NCC_GPU_TEST_BAD_KERNEL")) o->gpu_test_bad_kernel = 1;
  o->cc = env("NCC_CC");
  o->aarch64_cc = env("NCC_AARCH64_CC");
  o->cache_dir = cli_env_cache_dir();
  if ((s = env("NCC_CACHE_MAX"))) o->cache_max_bytes = parse_size(s);
}

/* SIZE: bytes, or with a K, M or G suffix (binary); 0 when malformed
 * (then the library's default). */
static size_t parse_size(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return 0;
  int shift = 0;
  switch (*end) {
  case 'K': case 'k': shift = 10; end++; break;
  case 'M': case 'm': shift = 20; end++; break;
  case 'G': case 'g': shift = 30; end++; break;
  default: break;
  }
  if (*end || v > (~0ull >> shift)) return 0;
  return (size_t)(v << shift);
}

const char *cli_env_cache_dir(void) {
  static char dir[4096];
  const char *s;
  if ((s = env("NCC_CACHE")) && strcmp(s, "0") == 0) return NULL;
  int n;
  if ((s = env("NCC_CACHE_DIR"))) n = snprintf(dir, sizeof dir, "%s", s);
  else if ((s = env("XDG_CACHE_HOME"))) n = snprintf(dir, sizeof dir, "%s/ncc", s);
  else if ((s = env("HOME"))) n = snprintf(dir, sizeof dir, "%s/.cache/ncc", s);
  else return NULL;
  return n > 0 && (size_t)n < sizeof dir ? dir : NULL;
}
