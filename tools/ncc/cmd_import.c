/* tools/ncc/cmd_import.c — `ncc import MODEL.onnx [-o OUT.nir]`: ONNX in,
 * text IR out (stdout, or OUT written through a temporary file). */
#include "cli.h"

ncc_status cmd_import(const cli_opts *o) {
  ncc_status st = cli_check_readable(o->model);
  if (st) return st;
  ncc_graph *g = NULL;
  st = ncc_graph_import_onnx(o->model, &g);
  if (!st) st = cli_print_graph(g, o->out);
  ncc_graph_free(g);
  return st;
}
