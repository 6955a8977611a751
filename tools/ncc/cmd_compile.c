/* tools/ncc/cmd_compile.c — `ncc compile`: load a model, run the pipeline
 * and write what a target makes of it (--emit).
 *
 *   ir                  text IR after the passes (any target)
 *   kir, llvm, asm, obj the compiled kernels (cpu, x86_64, aarch64)
 *   lib                 a self-contained library + C header (docs/AOT.md)
 *   cuda, ptx, opencl   GPU kernels: CUDA C, its PTX (NVRTC), OpenCL C;
 *                       targets cuda / opencl, no device needed (docs/GPU.md)
 *
 * Cross targets compile on any host, so only `cpu` has to be usable here.
 * Text kinds go to stdout without -o; obj and lib default to the model's
 * base name with .o / .so in the current directory. libncc writes every
 * file through a temporary name and a rename: a failure leaves nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *const emit_kinds[] = {"ir",  "kir", "llvm", "asm",    "obj",
                                         "lib", "cuda", "ptx", "opencl", NULL};
static const char *const llvm_kinds[] = {"kir", "llvm", "asm", "obj", "lib", NULL};
static const char *const llvm_targets[] = {"cpu", "x86_64", "aarch64", NULL};
static const char *const gpu_kinds[] = {"cuda", "ptx", "opencl", NULL};

static bool in_list(const char *s, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(s, list[i]) == 0) return true;
  return false;
}

/* Exit 1 for names ncc does not know, 3 for combinations it cannot make. */
static ncc_status check_request(const char *emit, const char *target) {
  if (!in_list(emit, emit_kinds))
    return ncc_error(NCC_ERR_USAGE,
                     "unknown --emit kind '%s' (ir, kir, llvm, asm, obj, lib, "
                     "cuda, ptx, opencl)",
                     emit);
  bool known = false;
  for (int i = 0; i < cli_n_targets; i++)
    if (strcmp(cli_targets[i].name, target) == 0) known = true;
  if (!known) return cli_target_check(target); /* the "unknown target" error */
  if (strcmp(emit, "ir") == 0) return NCC_OK;
  /* the GPU targets emit through their backend, which checks the kind */
  if (strcmp(target, "cuda") == 0 || strcmp(target, "opencl") == 0) return NCC_OK;
  if (in_list(emit, gpu_kinds))
    return ncc_error(NCC_ERR_UNSUPPORTED, "--emit=%s needs --target=%s", emit,
                     strcmp(emit, "opencl") == 0 ? "opencl" : "cuda");
  if (!in_list(emit, llvm_kinds))
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "--emit=%s is not available in this build (no code "
                     "generator for it yet)",
                     emit);
  if (!in_list(target, llvm_targets))
    return ncc_error(NCC_ERR_UNSUPPORTED,
                     "target '%s' cannot emit '%s' (--emit=%s needs target "
                     "cpu, x86_64 or aarch64)",
                     target, emit, emit);
  /* the host target needs LLVM and a usable host; cross targets only LLVM */
  if (strcmp(target, "cpu") == 0) return cli_target_check(target);
  return NCC_OK;
}

/* "dir/model.onnx" -> "model<ext>" (in the current directory). */
static char *default_output(const char *model, const char *ext) {
  const char *base = strrchr(model, '/');
  base = base ? base + 1 : model;
  const char *dot = strrchr(base, '.');
  size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  size_t cap = stem + strlen(ext) + 1;
  char *s = ncc_malloc(cap);
  if (s) snprintf(s, cap, "%.*s%s", (int)stem, base, ext);
  return s;
}

static ncc_status emit_code(const ncc_graph *g, const cli_opts *o,
                            const char *emit) {
  bool binary = strcmp(emit, "obj") == 0 || strcmp(emit, "lib") == 0;
  const char *out = o->out;
  if (out && strcmp(out, "-") == 0) {
    if (strcmp(emit, "lib") == 0)
      return ncc_error(NCC_ERR_USAGE,
                       "--emit=lib writes a library and a header: name the "
                       "library with -o NAME.so");
    out = NULL;
    binary = false; /* an object to stdout, when asked for explicitly */
  }
  if (out) return ncc_module_emit_opts(g, o->target, &o->lib, emit, out);
  if (!binary)
    return ncc_module_emit_stream(g, o->target, &o->lib, emit, getenv("TMPDIR"), stdout);
  char *path = default_output(o->model, strcmp(emit, "lib") == 0 ? ".so" : ".o");
  if (!path) return NCC_ERR_NOMEM;
  ncc_status st = ncc_module_emit_opts(g, o->target, &o->lib, emit, path);
  ncc_free(path, 0);
  return st;
}

ncc_status cmd_compile(const cli_opts *o) {
  const char *emit = o->emit ? o->emit : "obj";
  ncc_status st = check_request(emit, o->target);
  if (!st) st = cli_pipeline_check(o);
  if (st) return st;
  ncc_graph *g = NULL;
  int n_ran;
  st = cli_load_model(o->model, &g);
  if (!st) st = cli_pipeline_run(g, o, 1, NULL, 0, &n_ran);
  if (!st)
    st = strcmp(emit, "ir") == 0 ? cli_print_graph(g, o->out) : emit_code(g, o, emit);
  ncc_graph_free(g);
  return st;
}
