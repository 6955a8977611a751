/* tools/ncc/cmd_drift.c — `ncc run --check-each-pass`, the drift finder.
 *
 * The reference interpreter runs the model as loaded (no passes) once; then,
 * for k = 1..P, the model is loaded again, the first k passes of the
 * pipeline run on it, and the interpreter runs it on the same inputs. Each
 * output is compared with the unoptimized one: an element drifts when
 * |got - want| > atol + rtol * |want| (numpy's isclose) or exactly one of
 * the two is NaN. The table shows, per pass, the largest absolute and
 * relative error over all outputs (relative error only where |want| > atol,
 * since atol governs elements near zero); the first pass with a drifting
 * element is named, and the command exits with CLI_EXIT_DRIFT.
 *
 * Reloading per prefix keeps the graph API free of a clone; P is small.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MAX_PASSES 256

typedef struct drift {
  double max_abs, max_rel;
  int64_t bad;          /* drifting elements, over all outputs */
  int first_bad_output; /* -1 when none */
  char why[160];        /* a dtype/shape mismatch, when one */
  char output[160];     /* the name of first_bad_output */
} drift;

typedef struct drift_run {
  const cli_opts *o;
  int n_in, n_out;
  ncc_tensor *in, *want;
} drift_run;

static double elem(const ncc_tensor *t, int64_t i) {
  switch (t->dtype) {
  case NCC_DT_F32: return ((const float *)t->data)[i];
  case NCC_DT_F64: return ((const double *)t->data)[i];
  case NCC_DT_I8: return ((const int8_t *)t->data)[i];
  case NCC_DT_U8:
  case NCC_DT_BOOL: return ((const uint8_t *)t->data)[i];
  case NCC_DT_I32: return ((const int32_t *)t->data)[i];
  case NCC_DT_I64: return (double)((const int64_t *)t->data)[i];
  case NCC_DT_I16: return ((const int16_t *)t->data)[i];
  case NCC_DT_U16: return ((const uint16_t *)t->data)[i];
  case NCC_DT_U32: return ((const uint32_t *)t->data)[i];
  case NCC_DT_U64: return (double)((const uint64_t *)t->data)[i];
  case NCC_DT_BF16: { /* the top half of an f32 */
    uint32_t w = (uint32_t)((const uint16_t *)t->data)[i] << 16;
    float f;
    memcpy(&f, &w, 4);
    return f;
  }
  case NCC_DT_F16: {
    uint16_t h = ((const uint16_t *)t->data)[i];
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
  }
  default: return 0;
  }
}

static bool same_shape(const ncc_tensor *a, const ncc_tensor *b) {
  return a->dtype == b->dtype && a->rank == b->rank &&
         !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
}

static void compare(const drift_run *r, const ncc_tensor *got, drift *d) {
  memset(d, 0, sizeof *d);
  d->first_bad_output = -1;
  for (int k = 0; k < r->n_out; k++) {
    const ncc_tensor *w = &r->want[k], *g = &got[k];
    if (!same_shape(w, g)) {
      snprintf(d->why, sizeof d->why, "type or shape changed");
      d->bad++;
      if (d->first_bad_output < 0) d->first_bad_output = k;
      continue;
    }
    int64_t n = ncc_tensor_numel(w);
    for (int64_t i = 0; i < n; i++) {
      double a = elem(g, i), e = elem(w, i);
      bool drifts;
      if (isnan(a) || isnan(e)) {
        drifts = isnan(a) != isnan(e);
      } else {
        double err = a == e ? 0 : fabs(a - e); /* inf == inf */
        if (err > d->max_abs) d->max_abs = err;
        if (fabs(e) > r->o->atol && err / fabs(e) > d->max_rel)
          d->max_rel = err / fabs(e);
        drifts = !(err <= r->o->atol + r->o->rtol * fabs(e));
      }
      if (drifts) {
        d->bad++;
        if (d->first_bad_output < 0) d->first_bad_output = k;
      }
    }
  }
}

/* Run `g` on the reference interpreter and compare with the reference. */
static ncc_status run_and_compare(const drift_run *r, const ncc_graph *g,
                                  drift *d) {
  ncc_tensor *got = ncc_calloc((size_t)(r->n_out ? r->n_out : 1), sizeof *got);
  if (!got) return NCC_ERR_NOMEM;
  ncc_status st = ncc_ref_run(g, r->in, r->n_in, got, r->n_out);
  if (!st) compare(r, got, d);
  cli_tensors_free(got, r->n_out);
  ncc_free(got, 0);
  return st;
}

/* The model after the first k of the pipeline's n passes (names[]). */
static ncc_status prefix_graph(const cli_opts *o, const char *const *names,
                               int n, int k, ncc_graph **out) {
  ncc_pipeline *p = NULL;
  *out = NULL;
  ncc_status st = cli_pipeline_build(o, names + k, n - k, &p);
  if (!st) st = cli_load_model(o->model, out);
  if (!st) st = ncc_pipeline_run(p, *out);
  ncc_pipeline_free(p);
  return st;
}

static void print_row(const char *name, const drift *d, const cli_opts *o,
                      const ncc_graph *g) {
  char t1[CLI_TEXT_MAX], t2[CLI_TEXT_MAX];
  printf("%-18s %12.3g %12.3g  ", cli_text(name, t1, sizeof t1), d->max_abs, d->max_rel);
  if (!d->bad) {
    printf("ok\n");
    return;
  }
  printf("DRIFT: %lld element(s) beyond rtol %g atol %g, output '%s'%s%s\n",
         (long long)d->bad, o->rtol, o->atol,
         cli_text(ncc_graph_output_name(g, d->first_bad_output), t1, sizeof t1),
         d->why[0] ? ": " : "", cli_text(d->why, t2, sizeof t2));
}

/* One row per pass; *first is the index of the first drifting pass. */
static ncc_status check_passes(const drift_run *r, const char *const *names,
                               int n, int *first, drift *first_d) {
  ncc_status st = NCC_OK;
  *first = -1;
  for (int k = 1; k <= n && !st; k++) {
    ncc_graph *g = NULL;
    drift d;
    st = prefix_graph(r->o, names, n, k, &g);
    if (!st) st = run_and_compare(r, g, &d);
    if (!st) {
      print_row(names[k - 1], &d, r->o, g);
      if (d.bad && *first < 0) {
        *first = k - 1;
        *first_d = d;
        snprintf(first_d->output, sizeof first_d->output, "%s",
                 ncc_graph_output_name(g, d.first_bad_output));
      }
    } else {
      ncc_error_prefix("%s: after pass '%s'", r->o->model, names[k - 1]);
    }
    ncc_graph_free(g);
  }
  return st;
}

/* The reference outputs, and the names of the pipeline's passes (from one
 * full run, which also honours --print-after and --time-passes). */
static ncc_status prepare(drift_run *r, const char **names, int *n) {
  const cli_opts *o = r->o;
  ncc_graph *g = NULL;
  ncc_status st = cli_load_model(o->model, &g);
  if (st) return st;
  r->n_in = ncc_graph_num_inputs(g);
  r->n_out = ncc_graph_num_outputs(g);
  r->in = ncc_calloc((size_t)(r->n_in ? r->n_in : 1), sizeof *r->in);
  r->want = ncc_calloc((size_t)(r->n_out ? r->n_out : 1), sizeof *r->want);
  if (!r->in || !r->want) st = NCC_ERR_NOMEM;
  if (!st) st = o->n_inputs ? cli_inputs_load(g, o, r->in)
                            : cli_inputs_random(g, 1, r->in);
  if (!st) st = ncc_ref_run(g, r->in, r->n_in, r->want, r->n_out);
  if (!st) st = cli_pipeline_run(g, o, 1, names, MAX_PASSES, n);
  ncc_graph_free(g);
  return st;
}

ncc_status cli_check_each_pass(const cli_opts *o) {
  drift_run r = {.o = o};
  const char *names[MAX_PASSES];
  int n = 0, first = -1;
  drift fd;
  ncc_status st = prepare(&r, names, &n);
  if (!st) {
    char t[CLI_TEXT_MAX];
    printf("drift check: %s, each pass against the unoptimized model on the "
           "reference interpreter (rtol %g, atol %g)\n",
           cli_text(o->model, t, sizeof t), o->rtol, o->atol);
    printf("%-18s %12s %12s  %s\n", "after pass", "max abs err", "max rel err",
           "result");
    st = check_passes(&r, names, n, &first, &fd);
  }
  if (!st && first < 0)
    printf("no pass drifts (%d pass%s checked)\n", n, n == 1 ? "" : "es");
  if (!st && first >= 0)
    st = ncc_error((ncc_status)CLI_EXIT_DRIFT,
                   "%s: pass '%s' drifts: %lld element(s) differ from the "
                   "unoptimized model beyond rtol %g atol %g (max abs err "
                   "%.3g; first in output '%s')",
                   o->model, names[first], (long long)fd.bad, o->rtol, o->atol,
                   fd.max_abs, fd.output);
  cli_tensors_free(r.in, r.in ? r.n_in : 0);
  cli_tensors_free(r.want, r.want ? r.n_out : 0);
  ncc_free(r.in, 0);
  ncc_free(r.want, 0);
  return st;
}
