/* targets/cuda/nvrtc.c — CUDA C to PTX with NVRTC, opened with dlopen.
 *
 * The library is looked up as NCC_NVRTC_LIB, then libnvrtc.so (and the
 * sonames of CUDA 13, 12, 11.2), then under NCC_CUDA_HOME or the toolkit
 * directory found at build time. PTX is made for a virtual architecture
 * (compute_NN) so that the driver's JIT (or ptxas) can finish it for the
 * real one; the arch must be one this NVRTC supports.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/gpu_exec.h"
#include "../../ir/options.h"
#include "cuda_api.h"
#include "cuda_internal.h"

#ifndef NCC_CUDA_HOME
#define NCC_CUDA_HOME "/usr/local/cuda"
#endif

static struct {
  pthread_once_t once;
  bool ok;
  char why[320];
  void *lib;
  int major, minor;
#define X(name, ret, params) name##_fn name;
  NCC_NVRTC_FNS(X)
#undef X
} nv = {.once = PTHREAD_ONCE_INIT};

static void *try_open(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }

static void nvrtc_load(void) {
  /* A documented exception to "libncc reads no environment" (docs/CLI.md):
   * which driver library and device to load is process-wide, probed once
   * before any options exist, like the vendor's own variables. */
  const char *env = getenv("NCC_NVRTC_LIB");
  char home[512];
  const char *home_env = getenv("NCC_CUDA_HOME");
  snprintf(home, sizeof home, "%s/lib64/libnvrtc.so", home_env ? home_env : NCC_CUDA_HOME);
  const char *names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                         "libnvrtc.so.11.2", home};
  if (env) {
    nv.lib = try_open(env);
  } else {
    for (size_t i = 0; i < sizeof names / sizeof *names && !nv.lib; i++)
      nv.lib = try_open(names[i]);
  }
  if (!nv.lib) {
    const char *e = dlerror();
    snprintf(nv.why, sizeof nv.why, "NVRTC not found (%s)", e ? e : "libnvrtc.so");
    return;
  }
#define X(name, ret, params)                                                          \
  {                                                                            \
    void *p = dlsym(nv.lib, #name);                                            \
    if (!p) {                                                                  \
      snprintf(nv.why, sizeof nv.why, "the NVRTC library lacks %s", #name);    \
      return;                                                                  \
    }                                                                          \
    memcpy(&nv.name, &p, sizeof p);                                            \
  }
  NCC_NVRTC_FNS(X)
#undef X
  if (nv.nvrtcVersion(&nv.major, &nv.minor) != 0) {
    snprintf(nv.why, sizeof nv.why, "nvrtcVersion failed");
    return;
  }
  nv.ok = true;
}

bool ncc_nvrtc_available(char *why, size_t cap, int *major, int *minor) {
  pthread_once(&nv.once, nvrtc_load);
  if (why && cap) snprintf(why, cap, "%s", nv.ok ? "" : nv.why);
  if (nv.ok && major) *major = nv.major;
  if (nv.ok && minor) *minor = nv.minor;
  return nv.ok;
}

/* "sm_90" / "compute_90" / "90" -> 90; -1 when malformed. */
static int arch_number(const char *arch) {
  const char *p = arch;
  if (strncmp(p, "sm_", 3) == 0) p += 3;
  else if (strncmp(p, "compute_", 8) == 0) p += 8;
  if (*p < '1' || *p > '9') return -1;
  char *end;
  long v = strtol(p, &end, 10);
  /* a suffix such as 90a (arch-specific features) is accepted */
  if ((*end && !(end[0] >= 'a' && end[0] <= 'z' && !end[1])) || v < 10 || v > 999) return -1;
  return (int)v;
}

ncc_status ncc_cuda_compile_ptx(const char *source, const char *arch, char **ptx,
                                size_t *len) {
  *ptx = NULL;
  *len = 0;
  char why[320];
  if (!ncc_nvrtc_available(why, sizeof why, NULL, NULL))
    return ncc_error(NCC_ERR_UNSUPPORTED, "target 'cuda': %s", why);
  if (!arch) arch = ncc_cuda_default_arch();
  int num = arch_number(arch);
  if (num < 0)
    return ncc_error(NCC_ERR_USAGE, "bad CUDA arch '%s' (expected sm_NN, e.g. sm_90)", arch);
  int n_archs = 0, archs[64];
  bool supported = false;
  if (nv.nvrtcGetNumSupportedArchs(&n_archs) == 0 && n_archs > 0 && n_archs <= 64 &&
      nv.nvrtcGetSupportedArchs(archs) == 0) {
    for (int i = 0; i < n_archs; i++) supported |= archs[i] == num;
  } else {
    supported = true; /* an old NVRTC: let it judge */
  }
  if (!supported)
    return ncc_error(NCC_ERR_UNSUPPORTED, "CUDA arch '%s' is not supported by NVRTC %d.%d",
                     arch, nv.major, nv.minor);
  const char *suffix = arch + strcspn(arch, "0123456789");
  while (*suffix >= '0' && *suffix <= '9') suffix++;
  char opt_arch[64];
  snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=compute_%d%s", num, suffix);
  const char *opts[] = {opt_arch, "--std=c++17"};
  nvrtcProgram prog = NULL;
  nvrtcResult r = nv.nvrtcCreateProgram(&prog, source, "ncc_kernels.cu", 0, NULL, NULL);
  if (r != 0)
    return ncc_error(NCC_ERR_INTERNAL, "cuda: nvrtcCreateProgram failed (%s)",
                     nv.nvrtcGetErrorString(r));
  r = nv.nvrtcCompileProgram(prog, 2, opts);
  ncc_status st = NCC_OK;
  if (r != 0) {
    size_t ll = 0;
    char line[240] = "(no log)";
    if (nv.nvrtcGetProgramLogSize(prog, &ll) == 0 && ll > 0) {
      char *log = ncc_calloc(ll + 1, 1);
      if (log && nv.nvrtcGetProgramLog(prog, log) == 0) {
        if (ncc_opts_dump(NCC_DUMP_GPU)) fprintf(ncc_opts_dump_file(), "%s\n", log);
        const char *p = strstr(log, "error");
        if (!p) p = log;
        while (p > log && p[-1] != '\n') p--;
        size_t n = strcspn(p, "\n");
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, p, n);
        line[n] = '\0';
      }
      ncc_free(log, ll + 1);
    }
    st = ncc_error(NCC_ERR_INTERNAL, "cuda: the generated kernels failed to compile (%s): %s",
                   nv.nvrtcGetErrorString(r), line);
  } else {
    size_t n = 0;
    char *text = NULL;
    if (nv.nvrtcGetPTXSize(prog, &n) != 0 || !(text = ncc_malloc(n + 1)) ||
        nv.nvrtcGetPTX(prog, text) != 0) {
      ncc_free(text, n + 1);
      st = text ? ncc_error(NCC_ERR_INTERNAL, "cuda: nvrtcGetPTX failed") : NCC_ERR_NOMEM;
    } else {
      text[n] = '\0';
      *ptx = text;
      *len = strlen(text);
    }
  }
  nv.nvrtcDestroyProgram(&prog);
  return st;
}
