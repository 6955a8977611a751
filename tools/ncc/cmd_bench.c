/* tools/ncc/cmd_bench.c — `ncc bench`: compile (load + pipeline) once, then
 * run the model --warmup untimed and --iters timed times and report latency
 * statistics (docs/ARCHITECTURE.md, "Measurement") as a table or one JSON object.
 *
 * Percentiles interpolate linearly between order statistics (numpy's
 * default), cv is the population standard deviation over the mean, and
 * throughput is batch / median latency. The median comes with its 95%
 * order-statistic confidence interval (stats.c) and a robust cv (MAD over
 * median) above 10% flags the result as too noisy to rank. Every result names the thread count and
 * the CPUs the process may run on, and counts the nodes that ran on
 * reference kernels rather than compiled ones.
 *
 * `--batch 1,8` compiles once (the module takes any batch) and measures
 * each batch in turn: one result per batch, a JSON array of them.
 *
 * Where the compile time went (ctime.h) is always in the JSON
 * ("compile_breakdown"); --time-passes prints it as a table after the
 * results (and the pass manager's per-pass table on stderr).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctime.h"

#define MAX_PASSES_REPORTED 256

/* What every batch's result shares: one compile. */
typedef struct bench_common {
  const char *model, *target;
  int64_t warmup, iters;
  double compile_ms;
  int kernels;
  int views; /* nodes run as views of their input: no kernel, no copy */
  int threads; /* kernel threads the module runs with at most */
  cli_affinity affinity;
  bool ref_target; /* target ref: every node is a reference kernel */
  cli_refk refk;
  const char *passes[MAX_PASSES_REPORTED];
  int n_passes;
  cli_ctime ct;
  const ncc_graph *g;
  const cli_opts *o;
  bool print_profile; /* --profile (--trace alone profiles, prints nothing) */
} bench_common;

typedef struct bench_result {
  const bench_common *c;
  int64_t batch, warmup, iters;
  double median, ci_lo, ci_hi, p90, p99, min, mean, cv, rcv;
  bool profiled; /* --profile or --trace: prof holds the profiled runs */
  cli_prof prof;
} bench_result;

static double percentile(const double *sorted, int64_t n, double p) {
  double pos = p * (double)(n - 1);
  int64_t lo = (int64_t)pos;
  if (lo >= n - 1) return sorted[n - 1];
  double frac = pos - (double)lo;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

static void compute_stats(double *lat, int64_t n, bench_result *r) {
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += lat[i];
  r->mean = sum / (double)n;
  r->cv = cli_cv(lat, n);
  cli_sort_doubles(lat, n);
  r->rcv = cli_robust_cv(lat, n);
  r->min = lat[0];
  r->median = percentile(lat, n, 0.5);
  cli_median_ci(lat, n, &r->ci_lo, &r->ci_hi);
  r->p90 = percentile(lat, n, 0.9);
  r->p99 = percentile(lat, n, 0.99);
}

/* One run into the outputs of the first (untimed) run: like ONNX Runtime
 * with its arena or IOBinding, the steady state allocates nothing, and a
 * big output's fresh pages (mmap'd anew by malloc on every run) are not
 * timed as page faults. */
static ncc_status run_once(const ncc_graph *g, ncc_module *m,
                           const ncc_tensor *in, ncc_tensor *out, double *ms) {
  double t0 = cli_now_ms();
  ncc_status st = ncc_module_run_into(m, in, ncc_graph_num_inputs(g), out, ncc_graph_num_outputs(g));
  *ms = cli_now_ms() - t0;
  return st;
}

static ncc_status measure(const ncc_graph *g, ncc_module *m,
                          const ncc_tensor *in, bench_result *r) {
  ncc_tensor *out =
      ncc_calloc((size_t)(ncc_graph_num_outputs(g) ? ncc_graph_num_outputs(g) : 1), sizeof *out);
  double *lat = ncc_calloc((size_t)r->iters, sizeof *lat);
  ncc_status st = out && lat ? NCC_OK : NCC_ERR_NOMEM;
  double ms;
  if (!st) st = ncc_module_run(m, in, ncc_graph_num_inputs(g), out, ncc_graph_num_outputs(g));
  for (int64_t i = 0; i < r->warmup && !st; i++) st = run_once(g, m, in, out, &ms);
  for (int64_t i = 0; i < r->iters && !st; i++) st = run_once(g, m, in, out, &lat[i]);
  if (!st) compute_stats(lat, r->iters, r);
  /* the profile: as many runs again, after the timed ones (so the timing
   * is undisturbed), averaged */
  if (!st && r->profiled) {
    st = ncc_module_profile_enable(m, 1);
    for (int64_t i = 0; i < r->iters && !st; i++) st = run_once(g, m, in, out, &ms);
    if (!st) st = ncc_module_profile_enable(m, 0);
    if (!st) cli_prof_peaks(r->c->o, r->c->threads, &r->prof);
    if (!st) st = cli_prof_collect(m, g, r->batch, &r->prof);
  }
  if (out) cli_tensors_free(out, ncc_graph_num_outputs(g));
  ncc_free(out, 0);
  ncc_free(lat, 0);
  return st;
}

/* Whether --batch can set anything: some input's first dim is symbolic. */
static bool has_batch_dim(const ncc_graph *g) {
  for (int i = 0; i < ncc_graph_num_inputs(g); i++) {
    ncc_value_info v;
    if (!ncc_graph_input_info(g, i, &v) && v.rank > 0 && v.sym[0] >= 0) return true;
  }
  return false;
}

/* --batch on a model whose batch is fixed would report a batch (and a
 * throughput) the inputs do not have: refuse it, unless it is that batch. */
static ncc_status check_fixed_batch(const ncc_graph *g, const cli_opts *o) {
  ncc_value_info v;
  if (!o->batch_set || ncc_graph_num_inputs(g) == 0 || has_batch_dim(g) ||
      ncc_graph_input_info(g, 0, &v))
    return NCC_OK;
  if (v.rank > 0 && v.dims[0] == o->batch) return NCC_OK;
  return ncc_error(NCC_ERR_USAGE,
                   "--batch %lld: the model's inputs have no symbolic first dim for "
                   "--batch to set (input '%s' has rank %d%s); export the model with a "
                   "dynamic batch axis",
                   (long long)o->batch, v.name, v.rank,
                   v.rank > 0 ? ", a fixed first dim" : "");
}

ncc_status cli_bench_inputs(const ncc_graph *g, const cli_opts *o,
                            ncc_tensor *in, int64_t *batch) {
  *batch = o->batch;
  if (o->n_inputs == 0) {
    ncc_status st = check_fixed_batch(g, o);
    return st ? st : cli_inputs_random(g, o->batch, in);
  }
  ncc_status st = cli_inputs_load(g, o, in);
  if (st) return st;
  int64_t b = cli_inputs_batch(g, in);
  if (b > 0 && o->batch_set && b != o->batch) {
    cli_tensors_free(in, ncc_graph_num_inputs(g));
    return ncc_error(NCC_ERR_USAGE,
                     "--batch %lld disagrees with the batch of the inputs "
                     "(%lld, dim 0 of input '%s')",
                     (long long)o->batch, (long long)b, ncc_graph_input_name(g, 0));
  }
  if (b > 0) *batch = b;
  return NCC_OK;
}

/* JSON has no inf/nan. */
void cli_json_number(double v) {
  if (isfinite(v)) printf("%.6g", v);
  else printf("null");
}

static double throughput(const bench_result *r) {
  return r->median > 0 ? (double)r->batch / (r->median / 1e3) : INFINITY;
}

static void print_json(const bench_result *r) {
  const bench_common *c = r->c;
  printf("{\"model\": ");
  cli_json_string(c->model);
  printf(", \"target\": ");
  cli_json_string(c->target);
  printf(", \"batch\": %lld, \"compile_ms\": ", (long long)r->batch);
  cli_json_number(c->compile_ms);
  printf(", \"warmup\": %lld, \"iters\": %lld, \"latency_ms\": {\"median\": ",
         (long long)r->warmup, (long long)r->iters);
  cli_json_number(r->median);
  printf(", \"ci\": [");
  cli_json_number(r->ci_lo);
  printf(", ");
  cli_json_number(r->ci_hi);
  printf("], \"p90\": ");
  cli_json_number(r->p90);
  printf(", \"p99\": ");
  cli_json_number(r->p99);
  printf(", \"min\": ");
  cli_json_number(r->min);
  printf(", \"mean\": ");
  cli_json_number(r->mean);
  printf("}, \"cv\": ");
  cli_json_number(r->cv);
  printf(", \"robust_cv\": ");
  cli_json_number(r->rcv);
  printf(", \"noisy\": %s, \"throughput_per_s\": ", cli_noisy(r->rcv) ? "true" : "false");
  cli_json_number(throughput(r));
  printf(", \"kernels\": %d, \"views\": %d, ", c->kernels, c->views);
  if (c->ref_target) printf("\"reference_kernels\": null");
  else cli_refk_json(&c->refk);
  printf(", \"threads\": %d, ", c->threads);
  cli_affinity_json(&c->affinity);
  printf(", \"passes\": [");
  for (int i = 0; i < c->n_passes; i++) {
    if (i) printf(", ");
    cli_json_string(c->passes[i]);
  }
  printf("], ");
  cli_ctime_json(&c->ct);
  if (r->profiled && c->print_profile) {
    printf(", ");
    fflush(stdout);
    cli_prof_json(&r->prof, c->g, stdout);
  }
  printf("}");
}

static void print_table(const bench_result *r) {
  const bench_common *c = r->c;
  char t[CLI_TEXT_MAX];
  printf("%-12s %s\n", "model", cli_text(c->model, t, sizeof t));
  printf("%-12s %s\n", "target", cli_text(c->target, t, sizeof t));
  printf("%-12s %lld\n", "batch", (long long)r->batch);
  printf("%-12s %.3f ms\n", "compile", c->compile_ms);
  printf("%-12s %lld warm-up + %lld timed\n", "runs", (long long)r->warmup,
         (long long)r->iters);
  printf("%-12s %.4f ms [%.4f, %.4f] 95%% CI%s\n", "median", r->median, r->ci_lo,
         r->ci_hi, cli_median_ci_rank(r->iters) ? "" : " (under 6 runs: min..max)");
  printf("%-12s p90 %.4f  p99 %.4f  min %.4f  mean %.4f\n", "latency ms", r->p90,
         r->p99, r->min, r->mean);
  printf("%-12s %.2f %%, robust cv (MAD/median) %.2f %%%s\n", "cv", r->cv * 100, r->rcv * 100,
         cli_noisy(r->rcv) ? "  noisy (robust cv > 10%): do not rank" : "");
  printf("%-12s %.2f /s\n", "throughput", throughput(r));
  printf("%-12s %d\n", "kernels", c->kernels);
  if (c->views) printf("%-12s %d (nodes that re-shape their input: no kernel, no copy)\n", "views", c->views);
  if (!c->ref_target) printf("%-12s %s\n", "ref kernels", cli_refk_text(&c->refk, t, sizeof t));
  cli_affinity_text(&c->affinity, t, sizeof t);
  printf("%-12s %d, %s\n", "threads", c->threads, t);
  printf("%-12s", "passes");
  if (c->n_passes == 0) printf(" (none)");
  for (int i = 0; i < c->n_passes; i++)
    printf("%s%s", i ? ", " : " ", cli_text(c->passes[i], t, sizeof t));
  printf("\n");
}

static ncc_status bench_module(const ncc_graph *g, ncc_module *m,
                               const cli_opts *o, bench_result *r) {
  ncc_tensor *in =
      ncc_calloc((size_t)(ncc_graph_num_inputs(g) ? ncc_graph_num_inputs(g) : 1), sizeof *in);
  if (!in) return NCC_ERR_NOMEM;
  ncc_status st = cli_bench_inputs(g, o, in, &r->batch);
  if (!st) st = measure(g, m, in, r);
  cli_tensors_free(in, ncc_graph_num_inputs(g));
  ncc_free(in, 0);
  return st;
}

/* compile_ms covers model file -> ready-to-run module: load (timed from t0),
 * pipeline and backend compilation. Then each batch is measured. */
static ncc_status bench_loaded(ncc_graph *g, const cli_opts *o, bench_common *c,
                               bench_result *r, double t0) {
  ncc_module *m = NULL;
  ncc_status st = cli_ctime_pipeline(&c->ct, g, o, o->batch, c->passes,
                                     MAX_PASSES_REPORTED, &c->n_passes);
  ncc_options lo = cli_ctime_options(&c->ct, o);
  if (!st) st = ncc_module_compile_opts(g, o->target, &lo, &m);
  if (!st) {
    c->compile_ms = cli_now_ms() - t0;
    c->ct.compile_ms = c->compile_ms;
    /* Every node is a kernel: compiled, or run by a reference kernel. */
    c->kernels = ncc_module_num_kernels(m) + ncc_module_num_host_kernels(m);
    c->views = ncc_module_num_views(m);
    c->threads = ncc_module_num_threads(m);
    c->ref_target = strcmp(ncc_module_target(m), "ref") == 0;
    cli_refk_collect(m, &c->refk);
    if (!c->ref_target) cli_refk_warn(&c->refk, o->model, o->target);
  }
  for (int b = 0; b < o->n_batches && !st; b++) {
    cli_opts ob = *o;
    ob.batch = o->batches[b];
    r[b].c = c;
    r[b].warmup = o->warmup;
    r[b].iters = o->iters;
    r[b].profiled = o->profile || (o->trace && b == 0);
    st = bench_module(g, m, &ob, &r[b]);
  }
  ncc_module_free(m);
  return st;
}

ncc_status cmd_bench(const cli_opts *o) {
  ncc_status st = cli_target_check(o->target);
  if (!st) st = cli_pipeline_check(o);
  if (!st && o->n_batches > 1 && o->n_inputs > 0)
    st = ncc_error(NCC_ERR_USAGE, "a --batch list needs generated inputs: "
                                  "the --input files fix the batch");
  if (st) return st;
  if (!st && o->ablate && (o->profile || o->trace))
    st = ncc_error(NCC_ERR_USAGE, "--profile and --trace do not apply with --ablate");
  if (st) return st;
  if (o->ablate) return cli_ablate(o);
  /* --trace FILE: opened first, so a path that cannot be written fails
   * before the model is compiled; committed after the runs */
  ncc_afile tf = {0};
  if (o->trace && (st = ncc_afile_open(&tf, o->trace))) return st;
  bench_common *c = ncc_calloc(1, sizeof *c);
  bench_result *r = ncc_calloc((size_t)o->n_batches, sizeof *r);
  if (!c || !r) st = NCC_ERR_NOMEM;
  ncc_graph *g = NULL;
  if (!st) {
    c->model = o->model;
    c->o = o;
    c->print_profile = o->profile;
    c->target = o->target;
    c->warmup = o->warmup;
    c->iters = o->iters;
    cli_affinity_get(&c->affinity);
    double t0 = cli_now_ms();
    st = cli_ctime_load(&c->ct, o->model, &g);
    c->g = g;
    if (!st) st = bench_loaded(g, o, c, r, t0);
  }
  /* a list prints an array; a single batch its one object, as always */
  for (int b = 0; b < o->n_batches && !st; b++) {
    if (!o->json) {
      if (b) printf("\n");
      print_table(&r[b]);
      if (o->profile) cli_prof_table(&r[b].prof, g, stdout, 0);
      continue;
    }
    printf("%s", o->n_batches == 1 ? "" : b ? ",\n " : "[");
    print_json(&r[b]);
    if (b == o->n_batches - 1) printf("%s\n", o->n_batches == 1 ? "" : "]");
  }
  /* the JSON has all of it; the table is for reading */
  if (!st && o->time_passes && !o->json) cli_ctime_table(&c->ct, stdout, 10);
  if (!st && o->trace) st = cli_trace_write(&tf, &r[0].prof, g);
  if (st) ncc_afile_abort(&tf);
  for (int b = 0; r && b < o->n_batches; b++) cli_prof_free(&r[b].prof);
  ncc_graph_free(g);
  if (c) cli_ctime_free(&c->ct);
  ncc_free(c, 0);
  ncc_free(r, 0);
  return st;
}
