/* tools/ncc/cmd_bench.c — `ncc bench`: compile (load + pipeline) once, then
 * run the model --warmup untimed and --iters timed times and report latency
 * statistics (docs/ARCHITECTURE.md, "Measurement") as a table or one JSON object.
 *
 * Percentiles interpolate linearly between order statistics (numpy's
 * default), cv is the population standard deviation over the mean, and
 * throughput is batch / median latency.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_PASSES_REPORTED 256

typedef struct bench_result {
  const char *model, *target;
  int64_t batch, warmup, iters;
  double compile_ms;
  double median, p90, p99, min, mean, cv;
  int kernels;
  int threads; /* kernel threads the module runs with at most */
  const char *passes[MAX_PASSES_REPORTED];
  int n_passes;
} bench_result;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double percentile(const double *sorted, int64_t n, double p) {
  double pos = p * (double)(n - 1);
  int64_t lo = (int64_t)pos;
  if (lo >= n - 1) return sorted[n - 1];
  double frac = pos - (double)lo;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

static void compute_stats(double *lat, int64_t n, bench_result *r) {
  qsort(lat, (size_t)n, sizeof *lat, cmp_double);
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; i++) sum += lat[i];
  r->mean = sum / (double)n;
  for (int64_t i = 0; i < n; i++) sq += (lat[i] - r->mean) * (lat[i] - r->mean);
  r->cv = r->mean > 0 ? sqrt(sq / (double)n) / r->mean : 0;
  r->min = lat[0];
  r->median = percentile(lat, n, 0.5);
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
  if (out) cli_tensors_free(out, ncc_graph_num_outputs(g));
  ncc_free(out, 0);
  ncc_free(lat, 0);
  return st;
}

ncc_status cli_bench_inputs(const ncc_graph *g, const cli_opts *o,
                            ncc_tensor *in, int64_t *batch) {
  *batch = o->batch;
  if (o->n_inputs == 0) return cli_inputs_random(g, o->batch, in);
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
  printf("{\"model\": ");
  cli_json_string(r->model);
  printf(", \"target\": ");
  cli_json_string(r->target);
  printf(", \"batch\": %lld, \"compile_ms\": ", (long long)r->batch);
  cli_json_number(r->compile_ms);
  printf(", \"warmup\": %lld, \"iters\": %lld, \"latency_ms\": {\"median\": ",
         (long long)r->warmup, (long long)r->iters);
  cli_json_number(r->median);
  printf(", \"p90\": ");
  cli_json_number(r->p90);
  printf(", \"p99\": ");
  cli_json_number(r->p99);
  printf(", \"min\": ");
  cli_json_number(r->min);
  printf(", \"mean\": ");
  cli_json_number(r->mean);
  printf("}, \"cv\": ");
  cli_json_number(r->cv);
  printf(", \"throughput_per_s\": ");
  cli_json_number(throughput(r));
  printf(", \"kernels\": %d, \"threads\": %d, \"passes\": [", r->kernels, r->threads);
  for (int i = 0; i < r->n_passes; i++) {
    if (i) printf(", ");
    cli_json_string(r->passes[i]);
  }
  printf("]}\n");
}

static void print_table(const bench_result *r) {
  char t[CLI_TEXT_MAX];
  printf("%-12s %s\n", "model", cli_text(r->model, t, sizeof t));
  printf("%-12s %s\n", "target", cli_text(r->target, t, sizeof t));
  printf("%-12s %lld\n", "batch", (long long)r->batch);
  printf("%-12s %.3f ms\n", "compile", r->compile_ms);
  printf("%-12s %lld warm-up + %lld timed\n", "runs", (long long)r->warmup,
         (long long)r->iters);
  printf("%-12s median %.4f  p90 %.4f  p99 %.4f  min %.4f  mean %.4f\n",
         "latency ms", r->median, r->p90, r->p99, r->min, r->mean);
  printf("%-12s %.2f %%\n", "cv", r->cv * 100);
  printf("%-12s %.2f /s\n", "throughput", throughput(r));
  printf("%-12s %d\n", "kernels", r->kernels);
  printf("%-12s %d\n", "threads", r->threads);
  printf("%-12s", "passes");
  if (r->n_passes == 0) printf(" (none)");
  for (int i = 0; i < r->n_passes; i++)
    printf("%s%s", i ? ", " : " ", cli_text(r->passes[i], t, sizeof t));
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
 * pipeline and backend compilation. */
static ncc_status bench_loaded(ncc_graph *g, const cli_opts *o,
                               bench_result *r, double t0) {
  ncc_module *m = NULL;
  ncc_status st = cli_pipeline_run(g, o, o->batch, r->passes, MAX_PASSES_REPORTED,
                                   &r->n_passes);
  if (!st) st = ncc_module_compile_opts(g, o->target, &o->lib, &m);
  if (!st) {
    r->compile_ms = cli_now_ms() - t0;
    /* Every node is a kernel: compiled, or run by a reference kernel. */
    r->kernels = ncc_module_num_kernels(m) + ncc_module_num_host_kernels(m);
    r->threads = ncc_module_num_threads(m);
    st = bench_module(g, m, o, r);
  }
  ncc_module_free(m);
  return st;
}

ncc_status cmd_bench(const cli_opts *o) {
  ncc_status st = cli_target_check(o->target);
  if (!st) st = cli_pipeline_check(o);
  if (st) return st;
  if (o->ablate) return cli_ablate(o);
  bench_result r;
  memset(&r, 0, sizeof r);
  r.model = o->model;
  r.target = o->target;
  r.warmup = o->warmup;
  r.iters = o->iters;
  ncc_graph *g = NULL;
  double t0 = cli_now_ms();
  st = cli_load_model(o->model, &g);
  if (!st) st = bench_loaded(g, o, &r, t0);
  ncc_graph_free(g);
  if (st) return st;
  if (o->json) print_json(&r);
  else print_table(&r);
  return NCC_OK;
}
