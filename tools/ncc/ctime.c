/* tools/ncc/ctime.c — the compile-time breakdown of `ncc bench` and
 * `ncc compile` (ctime.h).
 *
 * Phases, in order: import (model file -> verified graph), passes (the sum
 * of the pass manager's per-pass times), pipeline (the manager's work
 * between passes: shape re-inference, statistics, --verify-each), then
 * libncc's backend phases (ncc.h, "compile time"), and other: the measured
 * compile time less all of them, so the phases always add up to it. The
 * cpu target compiles kernels on several threads: its ir, opt and codegen
 * rows are the kernels' own times summed (thread time), and "other" counts
 * that parallel section at its wall time, which the table prints below.
 */
#include <stdlib.h>
#include <string.h>

#include "ctime.h"

ncc_status cli_ctime_load(cli_ctime *ct, const char *path, ncc_graph **g) {
  double t0 = cli_now_ms();
  ncc_status st = cli_load_model(path, g);
  ct->import_ms = cli_now_ms() - t0;
  return st;
}

ncc_status cli_ctime_pipeline(cli_ctime *ct, ncc_graph *g, const cli_opts *o,
                              int64_t batch, const char **ran, int cap, int *n_ran) {
  *n_ran = 0;
  double t0 = cli_now_ms();
  ncc_pipeline *p = NULL;
  ncc_status st = cli_pipeline_build(o, NULL, 0, &p);
  if (st) return st;
  /* the reports cli_pipeline_run gives, on stderr */
  if (o->print_after) st = ncc_pipeline_print_after(p, o->print_after, stderr);
  ncc_pipeline_set_time_passes(p, o->time_passes);
  ncc_pipeline_set_stats_batch(p, batch);
  if (!st && o->verify_each && (st = ncc_graph_verify(g)))
    ncc_error_prefix("verifier failed on the input");
  if (!st) st = ncc_pipeline_run(p, g);
  if (!st && o->time_passes) ncc_pipeline_report(p, stderr);
  if (!st) {
    int n = ncc_pipeline_num_ran(p);
    ct->n_passes = n < CLI_CTIME_MAX_PASSES ? n : CLI_CTIME_MAX_PASSES;
    /* pass names are static strings: they outlive the pipeline */
    for (int i = 0; i < ct->n_passes; i++) {
      ct->pass[i] = ncc_pipeline_ran_name(p, i);
      ct->pass_ms[i] = ncc_pipeline_ran_ms(p, i);
    }
    for (int i = 0; i < n && ran && i < cap; i++) ran[i] = ncc_pipeline_ran_name(p, i);
    *n_ran = n < cap ? n : cap;
  }
  ncc_pipeline_free(p);
  ct->pipeline_ms = cli_now_ms() - t0;
  return st;
}

ncc_options cli_ctime_options(cli_ctime *ct, const cli_opts *o) {
  ncc_options lo = o->lib;
  lo.compile_stats = &ct->lib;
  ct->cache_dir = lo.cache_dir;
  return lo;
}

void cli_ctime_free(cli_ctime *ct) { ncc_compile_stats_free(&ct->lib); }

/* The driver's phases and libncc's, in report order. */
#define N_ROWS (3 + NCC_PHASE_COUNT + 1)

static double passes_sum(const cli_ctime *ct) {
  double s = 0;
  for (int i = 0; i < ct->n_passes; i++) s += ct->pass_ms[i];
  return s;
}

static void rows(const cli_ctime *ct, const char **name, double *ms) {
  double ps = passes_sum(ct);
  name[0] = "import";
  ms[0] = ct->import_ms;
  name[1] = "passes";
  ms[1] = ps;
  name[2] = "pipeline";
  ms[2] = ct->pipeline_ms > ps ? ct->pipeline_ms - ps : 0;
  double sum = ms[0] + ms[1] + ms[2];
  for (int p = 0; p < NCC_PHASE_COUNT; p++) {
    name[3 + p] = ncc_compile_phase_name(p);
    ms[3 + p] = ct->lib.ms[p];
    sum += ct->lib.ms[p];
  }
  /* the parallel kernel compiles at their wall-clock time */
  sum += ct->lib.kernels_wall_ms - ct->lib.kernels_work_ms;
  name[N_ROWS - 1] = "other";
  ms[N_ROWS - 1] = ct->compile_ms > sum ? ct->compile_ms - sum : 0;
}

static double kernel_ms(const ncc_kernel_compile_stats *k) {
  double s = 0;
  for (int p = 0; p < NCC_PHASE_COUNT; p++) s += k->ms[p];
  return s;
}

void cli_ctime_json(const cli_ctime *ct) {
  const char *name[N_ROWS];
  double ms[N_ROWS];
  rows(ct, name, ms);
  printf("\"compile_breakdown\": {\"compile_ms\": ");
  cli_json_number(ct->compile_ms);
  for (int r = 0; r < N_ROWS; r++) {
    printf(", \"%s\": ", name[r]);
    cli_json_number(ms[r]);
  }
  printf(", \"per_pass\": [");
  for (int i = 0; i < ct->n_passes; i++) {
    printf("%s{\"name\": ", i ? ", " : "");
    cli_json_string(ct->pass[i]);
    printf(", \"ms\": ");
    cli_json_number(ct->pass_ms[i]);
    printf("}");
  }
  printf("], \"compile_threads\": %d, \"kernels_wall_ms\": ", ct->lib.compile_threads);
  cli_json_number(ct->lib.kernels_wall_ms);
  printf(", \"kernels_work_ms\": ");
  cli_json_number(ct->lib.kernels_work_ms);
  printf(", \"cache_dir\": ");
  if (ct->cache_dir) cli_json_string(ct->cache_dir);
  else printf("null");
  printf(", \"cache_hits\": %d, \"cache_misses\": %d", ct->lib.cache_hits,
         ct->lib.cache_misses);
  printf(", \"kernels\": [");
  for (int k = 0; k < ct->lib.n_kernels; k++) {
    const ncc_kernel_compile_stats *ks = &ct->lib.kernels[k];
    printf("%s{\"name\": ", k ? ", " : "");
    cli_json_string(ks->name);
    printf(", \"nodes\": %d, \"reused\": %s, \"cache_hit\": %s", ks->nodes,
           ks->reused ? "true" : "false", ks->cache_hit ? "true" : "false");
    for (int p = 0; p < NCC_PHASE_COUNT; p++) {
      printf(", \"%s\": ", ncc_compile_phase_name(p));
      cli_json_number(ks->ms[p]);
    }
    printf(", \"total\": ");
    cli_json_number(kernel_ms(ks));
    printf("}");
  }
  printf("]}");
}

static int by_time_desc(const void *a, const void *b) {
  double x = kernel_ms(*(const ncc_kernel_compile_stats *const *)a);
  double y = kernel_ms(*(const ncc_kernel_compile_stats *const *)b);
  return x < y ? 1 : x > y ? -1 : 0;
}

void cli_ctime_table(const cli_ctime *ct, FILE *f, int top) {
  const char *name[N_ROWS];
  double ms[N_ROWS];
  rows(ct, name, ms);
  double total = ct->compile_ms > 0 ? ct->compile_ms : 1;
  fprintf(f, "\ncompile time\n%-10s %10s %7s\n", "phase", "ms", "share");
  for (int r = 0; r < N_ROWS; r++)
    fprintf(f, "%-10s %10.3f %6.1f%%\n", name[r], ms[r], 100 * ms[r] / total);
  fprintf(f, "%-10s %10.3f %6.1f%%\n", "total", ct->compile_ms, 100.0);
  if (ct->lib.compile_threads > 0)
    fprintf(f, "kernels compiled on %d thread%s: %.3f ms wall for %.3f ms of their phases\n",
            ct->lib.compile_threads, ct->lib.compile_threads == 1 ? "" : "s",
            ct->lib.kernels_wall_ms, ct->lib.kernels_work_ms);
  char t[CLI_TEXT_MAX];
  if (ct->lib.cache_hits + ct->lib.cache_misses > 0)
    fprintf(f, "compile cache: %d hits, %d misses (%s)\n", ct->lib.cache_hits,
            ct->lib.cache_misses, cli_text(ct->cache_dir, t, sizeof t));
  int n = ct->lib.n_kernels;
  if (n == 0) return;
  const ncc_kernel_compile_stats **order = ncc_calloc((size_t)n, sizeof *order);
  if (!order) return;
  int reused = 0;
  for (int k = 0; k < n; k++) {
    order[k] = &ct->lib.kernels[k];
    reused += order[k]->reused;
  }
  qsort(order, (size_t)n, sizeof *order, by_time_desc);
  int shown = top > 0 && top < n ? top : n;
  fprintf(f, "\nkernels by compile time (%d of %d; %d reused)\n", shown, n, reused);
  fprintf(f, "%-32s %5s", "kernel", "nodes");
  for (int p = 0; p < NCC_PHASE_COUNT; p++) fprintf(f, " %8s", ncc_compile_phase_name(p));
  fprintf(f, " %9s\n", "total ms");
  for (int i = 0; i < shown; i++) {
    const ncc_kernel_compile_stats *k = order[i];
    fprintf(f, "%-32s %5d", cli_text(k->name, t, sizeof t), k->nodes);
    for (int p = 0; p < NCC_PHASE_COUNT; p++) fprintf(f, " %8.3f", k->ms[p]);
    fprintf(f, " %9.3f%s%s\n", kernel_ms(k), k->reused ? "  reused" : "",
            k->cache_hit ? "  cached" : "");
  }
  ncc_free(order, 0);
}
