/* passes/dce.c — dead-code elimination: drop nodes whose results reach no
 * graph output. Other passes leave dead nodes behind freely and rely on it. */
#include "pass.h"

static ncc_status run(ncc_graph *g, ncc_pass_ctx *ctx) {
  int removed = ncc_dce(g);
  if (removed < 0) return NCC_ERR_NOMEM;
  ctx->rewrites = removed;
  ctx->changed = removed > 0;
  return NCC_OK;
}

const ncc_pass ncc_pass_dce = {
    .name = "dce",
    .level = 1,
    .needs = "",
    .desc = "dead-code elimination: remove nodes no output depends on",
    .run = run,
};
