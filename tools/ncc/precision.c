/* tools/ncc/precision.c — `ncc run --precision=P --compare-f32`: the
 * accuracy of a low-precision run against the same model at f32.
 *
 * The f32 reference is a second load and compile of the model with the
 * same target and pipeline flags, only the precision changed, so the
 * report isolates what the rounding costs (not a difference between
 * targets or passes). Relative error is taken against the output's
 * largest magnitude: per element it is meaningless where the f32 value is
 * near zero (logits, softmax tails).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct acc {
  double max_abs, max_ref, dot, na, nb;
  int64_t rows, top1_same;
  bool nonfinite;
} acc;

static double elem(const ncc_tensor *t, int64_t i) {
  return t->dtype == NCC_DT_F64 ? ((const double *)t->data)[i]
                                : ((const float *)t->data)[i];
}

static void measure(const ncc_tensor *got, const ncc_tensor *want, acc *a) {
  memset(a, 0, sizeof *a);
  int64_t n = ncc_tensor_numel(want);
  for (int64_t i = 0; i < n; i++) {
    double x = elem(got, i), y = elem(want, i);
    if (!isfinite(x) || !isfinite(y)) {
      if (!(isnan(x) && isnan(y)) && x != y) a->nonfinite = true;
      continue;
    }
    double d = fabs(x - y);
    if (d > a->max_abs) a->max_abs = d;
    if (fabs(y) > a->max_ref) a->max_ref = fabs(y);
    a->dot += x * y;
    a->na += x * x;
    a->nb += y * y;
  }
  /* top-1 along the last axis (a classifier's rows) */
  int64_t w = want->rank >= 2 ? want->dims[want->rank - 1] : 0;
  if (w <= 1) return;
  for (int64_t r = 0; r * w < n; r++) {
    int64_t bg = 0, bw = 0;
    for (int64_t j = 1; j < w; j++) {
      if (elem(got, r * w + j) > elem(got, r * w + bg)) bg = j;
      if (elem(want, r * w + j) > elem(want, r * w + bw)) bw = j;
    }
    a->rows++;
    a->top1_same += bg == bw;
  }
}

static void report(const char *name, const char *prec, const acc *a) {
  char t[CLI_TEXT_MAX];
  double rel = a->max_ref > 0 ? a->max_abs / a->max_ref : (a->max_abs > 0 ? INFINITY : 0);
  double cos = a->na > 0 && a->nb > 0 ? a->dot / (sqrt(a->na) * sqrt(a->nb))
                                      : (a->na == a->nb ? 1.0 : 0.0);
  printf("%s: %s vs f32: max abs err %.3g, max rel err %.3g, cosine %.6f",
         cli_text(name, t, sizeof t), prec, a->max_abs, rel, cos);
  if (a->rows)
    printf(", top-1 %lld/%lld", (long long)a->top1_same, (long long)a->rows);
  if (a->nonfinite) printf(", inf/nan differ");
  printf("\n");
}

static bool comparable(const ncc_tensor *x, const ncc_tensor *y) {
  if (x->dtype != y->dtype || x->rank != y->rank) return false;
  for (int d = 0; d < x->rank; d++)
    if (x->dims[d] != y->dims[d]) return false;
  return x->dtype == NCC_DT_F32 || x->dtype == NCC_DT_F64;
}

ncc_status cli_compare_f32(const cli_opts *o, const ncc_tensor *in, int n_in,
                           const ncc_tensor *out, int n_out) {
  cli_opts f = *o;
  f.lib.precision = NCC_PRECISION_F32;
  f.print_after = NULL;
  f.time_passes = false;
  ncc_graph *g = NULL;
  ncc_module *m = NULL;
  int n_ran;
  ncc_tensor *ref = ncc_calloc((size_t)(n_out ? n_out : 1), sizeof *ref);
  if (!ref) return NCC_ERR_NOMEM;
  ncc_status st = cli_load_model(o->model, &g);
  if (!st) st = cli_pipeline_run(g, &f, 1, NULL, 0, &n_ran);
  if (!st) st = ncc_module_compile_opts(g, f.target, &f.lib, &m);
  if (!st) st = ncc_module_run(m, in, n_in, ref, n_out);
  if (st) ncc_error_prefix("--compare-f32");
  const char *prec = ncc_precision_name(o->lib.precision);
  for (int i = 0; i < n_out && !st; i++) {
    const char *name = ncc_graph_output_name(g, i);
    if (!comparable(&out[i], &ref[i])) {
      char t[CLI_TEXT_MAX];
      printf("%s: %s vs f32: not compared (not a float output)\n",
             cli_text(name, t, sizeof t), prec);
      continue;
    }
    acc a;
    measure(&out[i], &ref[i], &a);
    report(name, prec, &a);
  }
  if (!st) fflush(stdout);
  if (m) cli_tensors_free(ref, n_out);
  ncc_free(ref, 0);
  ncc_module_free(m);
  ncc_graph_free(g);
  return st;
}
