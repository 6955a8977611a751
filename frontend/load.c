/* frontend/load.c — ncc_graph_load: one entry point for every model file,
 * choosing the reader by extension (.onnx: the ONNX importer; .nir: the
 * text-IR parser). Either way the caller gets a shape-inferred, verified
 * graph, and every error message starts with the file name. */
#include <string.h>
#include <strings.h>

#include "frontend.h"
#include "ir/shape.h"

/* The extension of the last path component ("" when none). */
static const char *extension(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  return dot && dot != base ? dot : "";
}

/* Text IR: parse, then infer and verify, since the text carries the types
 * the author wrote and they must agree with what the ops compute. */
static ncc_status load_text(const char *path, ncc_graph **out) {
  ncc_graph *g = NULL;
  ncc_status st = ncc_graph_parse_file(path, &g);
  if (st) return st;
  if ((st = ncc_infer_graph(g)) || (st = ncc_graph_verify(g))) {
    ncc_frontend_error_file(path);
    ncc_graph_free(g);
    return st;
  }
  *out = g;
  return NCC_OK;
}

ncc_status ncc_graph_load(const char *path, ncc_graph **out) {
  if (!path || !out)
    return ncc_error(NCC_ERR_USAGE, "ncc_graph_load: NULL argument");
  *out = NULL;
  const char *ext = extension(path);
  if (strcasecmp(ext, ".onnx") == 0) return ncc_graph_import_onnx(path, out);
  if (strcasecmp(ext, ".nir") == 0) return load_text(path, out);
  return ncc_error(NCC_ERR_INPUT,
                   "%s: unknown model extension '%s' (expected .onnx or .nir)",
                   path, ext);
}
