/* tools/ncc/pipeline.c — the pipeline flags (-O, --passes, --disable-pass,
 * --print-after, --time-passes, --verify-each) handed to libncc's pass
 * manager, which owns all of their behaviour: the driver only builds the
 * pipeline from cli_opts and says where reports go (stderr, like LLVM's
 * -print-after and -time-passes, so stdout stays the command's product).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The flags' pipeline less drop[], with the reports when `reports`. */
/* The target's block, or the width of NCC_VECTOR_WIDTH for this host's
 * kernels ("cpu", and "ref", which checks the graph cpu runs), so the
 * layout and the kernels agree as when the library read the variable. */
static int layout_block(const cli_opts *o) {
  const char *t = o->target ? o->target : "cpu";
  if (o->lib.vector_width > 0 && (strcmp(t, "cpu") == 0 || strcmp(t, "ref") == 0))
    return o->lib.vector_width;
  return ncc_target_layout_block(o->target);
}

/* Whether comma-separated `list` names `pass`. */
static bool lists(const char *list, const char *pass) {
  size_t n = strlen(pass);
  for (const char *s = list; s && *s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == n && strncmp(s, pass, n) == 0) return true;
    s = e ? e + 1 : NULL;
  }
  return false;
}

/* --precision=bf16 with --passes or --disable-pass leaving out the pass
 * that rounds would silently run f32. (bench --ablate may drop it: that
 * variant is the f32 run, which is what it measures.) */
static ncc_status check_precision(const cli_opts *o) {
  if (o->lib.precision == NCC_PRECISION_F32) return NCC_OK;
  bool out = o->passes && !lists(o->passes, "precision");
  for (int i = 0; i < o->n_disabled; i++) out = out || strcmp(o->disabled[i], "precision") == 0;
  if (out)
    return ncc_error(NCC_ERR_USAGE, "--precision=%s needs pass 'precision', which --passes or "
                     "--disable-pass leaves out", ncc_precision_name(o->lib.precision));
  return NCC_OK;
}

static ncc_status make(const cli_opts *o, const char *const *drop, int n_drop,
                       bool reports, ncc_pipeline **out) {
  ncc_pipeline *p;
  *out = NULL;
  ncc_status st = ncc_pipeline_new(o->opt_level, &p);
  if (st) return st;
  if (o->passes) st = ncc_pipeline_set_passes(p, o->passes);
  for (int i = 0; i < o->n_disabled && !st; i++)
    st = ncc_pipeline_disable(p, o->disabled[i]);
  for (int i = 0; i < n_drop && !st; i++) st = ncc_pipeline_disable(p, drop[i]);
  if (!st) st = check_precision(o);
  if (!st && reports && o->print_after)
    st = ncc_pipeline_print_after(p, o->print_after, stderr);
  if (!st) st = ncc_pipeline_check(p);
  if (st) {
    ncc_pipeline_free(p);
    return st;
  }
  /* the layout pass blocks for the target the graph is compiled for */
  ncc_pipeline_set_layout_block(p, o->layout_block ? o->layout_block : layout_block(o));
  /* the pass that rounds for --precision (the compile gets lib.precision) */
  if ((st = ncc_pipeline_set_precision(p, o->lib.precision)) ||
      (st = ncc_pipeline_set_winograd(p, o->winograd))) {
    ncc_pipeline_free(p);
    return st;
  }
  ncc_pipeline_set_time_passes(p, reports && o->time_passes);
  ncc_pipeline_set_verify_each(p, o->verify_each);
  *out = p;
  return NCC_OK;
}

static ncc_status build(const cli_opts *o, ncc_pipeline **out) {
  return make(o, NULL, 0, true, out);
}

ncc_status cli_pipeline_build(const cli_opts *o, const char *const *drop,
                              int n_drop, ncc_pipeline **out) {
  return make(o, drop, n_drop, false, out);
}

ncc_status cli_pipeline_check(const cli_opts *o) {
  ncc_pipeline *p = NULL;
  ncc_status st = build(o, &p);
  ncc_pipeline_free(p);
  return st;
}

ncc_status cli_pipeline_run(ncc_graph *g, const cli_opts *o, int64_t batch,
                            const char **ran, int cap, int *n_ran) {
  *n_ran = 0;
  ncc_pipeline *p = NULL;
  ncc_status st = build(o, &p);
  if (st) return st;
  ncc_pipeline_set_stats_batch(p, batch);
  /* --verify-each also checks what the pipeline starts from. */
  if (o->verify_each && (st = ncc_graph_verify(g)))
    ncc_error_prefix("verifier failed on the input");
  if (!st) st = ncc_pipeline_run(p, g);
  if (!st && o->time_passes) ncc_pipeline_report(p, stderr);
  if (!st) {
    int n = ncc_pipeline_num_ran(p);
    /* Pass names are static strings: they outlive the pipeline. */
    for (int i = 0; i < n && ran && i < cap; i++)
      ran[i] = ncc_pipeline_ran_name(p, i);
    *n_ran = n < cap ? n : cap;
  }
  ncc_pipeline_free(p);
  return st;
}
