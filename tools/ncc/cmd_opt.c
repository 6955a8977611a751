/* tools/ncc/cmd_opt.c — `ncc opt` (run the pass pipeline, print the IR) and
 * `ncc compile`, which for now can only emit IR: the code generators are
 * not built yet, so every other --emit kind, and every target but `ref`
 * (which has nothing to compile), is reported as unsupported. */
#include <string.h>

#include "cli.h"

/* Load, check flags, run the pipeline and print: the shared core. */
static ncc_status load_optimize_print(const cli_opts *o) {
  ncc_status st = cli_pipeline_check(o);
  if (st) return st;
  ncc_graph *g = NULL;
  int n_ran;
  st = cli_load_model(o->model, &g);
  if (!st) st = cli_pipeline_run(g, o, 1, NULL, 0, &n_ran);
  if (!st) st = cli_print_graph(g, o->out);
  ncc_graph_free(g);
  return st;
}

ncc_status cmd_opt(const cli_opts *o) { return load_optimize_print(o); }

static const char *const emit_kinds[] = {"ir",  "llvm", "asm",  "obj",
                                         "lib", "cuda", "ptx", "opencl"};

ncc_status cmd_compile(const cli_opts *o) {
  const char *emit = o->emit ? o->emit : "obj";
  bool known = false;
  for (size_t i = 0; i < sizeof emit_kinds / sizeof emit_kinds[0]; i++)
    if (strcmp(emit, emit_kinds[i]) == 0) known = true;
  if (!known)
    return ncc_error(NCC_ERR_USAGE,
                     "unknown --emit kind '%s' (ir, llvm, asm, obj, lib, "
                     "cuda, ptx, opencl)",
                     emit);
  ncc_status st = cli_target_check(o->target);
  if (st) return st;
  if (strcmp(emit, "ir") == 0) return load_optimize_print(o);
  return ncc_error(NCC_ERR_UNSUPPORTED,
                   "--emit=%s for target '%s' is not available in this build "
                   "(no code generator yet; --emit=ir works)",
                   emit, o->target);
}
