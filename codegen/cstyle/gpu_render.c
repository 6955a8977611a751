/* codegen/cstyle/gpu_render.c — a graph's GPU kernels as one program
 * (one clBuildProgram / one NVRTC compilation per module) and the source or
 * kernel IR `ncc compile --target=opencl|cuda` writes, without a device.
 * The device executor that builds and runs the program is targets/gpu.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/atomic_file.h"
#include "../../ir/options.h"
#include "gpu.h"

ncc_status ncc_gpu_render_program(const ncc_cstyle_lang *lang,
                                  kir_kernel *const *kernels, int n,
                                  ncc_sbuf *out, ncc_cstyle_info *infos) {
  ncc_cstyle_prelude(lang, out);
  for (int i = 0; i < n; i++) {
    if (!kernels[i]) continue;
    ncc_status st = ncc_cstyle_render(lang, kernels[i], out, &infos[i]);
    if (st != NCC_OK) return st;
  }
  if (ncc_opts()->gpu_test_bad_kernel)
    ncc_sbuf_puts(out, "#error ncc test hook: NCC_GPU_TEST_BAD_KERNEL is set\n");
  if (out->oom) return ncc_error(NCC_ERR_NOMEM, "out of memory rendering %s kernels", lang->name);
  return NCC_OK;
}

static void free_kernels(kir_kernel **ks, int n) {
  if (!ks) return;
  for (int i = 0; i < n; i++) kir_kernel_free(ks[i]);
  ncc_free(ks, 0);
}

/* Lower g and render (kind "kir": print the kernel IR instead). */
static ncc_status render_graph(const ncc_graph *g, const ncc_cstyle_lang *lang, bool kir,
                               ncc_sbuf *out) {
  kir_kernel **ks = NULL;
  ncc_fuse_plan *fp = NULL;
  bool *fused = NULL;
  ncc_cstyle_info *infos = ncc_calloc((size_t)g->n_nodes + 1, sizeof *infos);
  ncc_status st = ncc_gpu_lower_all(g, &fp, &ks, &fused);
  if (st == NCC_OK && !infos) st = NCC_ERR_NOMEM;
  if (st == NCC_OK && kir) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
      st = NCC_ERR_NOMEM;
    } else {
      for (int i = 0; i < g->n_nodes; i++)
        if (ks[i]) kir_print(ks[i], f);
      fclose(f);
      ncc_sbuf_puts(out, text ? text : "");
      free(text); /* open_memstream's buffer is the C library's */
      if (out->oom) st = NCC_ERR_NOMEM;
    }
  } else if (st == NCC_OK) {
    st = ncc_gpu_render_program(lang, ks, g->n_nodes, out, infos);
  }
  ncc_free(infos, 0);
  ncc_free(fused, 0);
  ncc_fuse_plan_free(fp);
  free_kernels(ks, g->n_nodes);
  return st;
}

ncc_status ncc_gpu_render_graph(const ncc_graph *g, const ncc_cstyle_lang *lang,
                                ncc_sbuf *out) {
  return render_graph(g, lang, false, out);
}

ncc_status ncc_gpu_emit_source(const ncc_graph *g, const ncc_cstyle_lang *lang,
                               const char *kind, const char *path) {
  ncc_sbuf src = {0};
  ncc_status st = render_graph(g, lang, strcmp(kind, "kir") == 0, &src);
  if (st == NCC_OK) st = ncc_atomic_write(path, src.s ? src.s : "", src.len);
  ncc_sbuf_free(&src);
  return st;
}

