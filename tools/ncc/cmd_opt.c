/* tools/ncc/cmd_opt.c — `ncc opt`: run the pass pipeline, print the IR.
 * (`ncc compile` lives in cmd_compile.c.) */
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
