/* tools/ncc/cmd_ablate.c — `ncc bench --ablate`: what each pass is worth.
 *
 * The model is compiled once with the pipeline the flags describe (the
 * baseline) and once per pass of that pipeline with the pass disabled. A
 * pass that other passes of the pipeline need cannot be disabled alone
 * (the manager refuses), so its dependents are disabled with it and the row
 * says so. All variants then run on the same inputs, interleaved — one run
 * of each in turn, starting with a different variant every round — so that
 * drifting machine load hits them alike. Reported per pass, as variant
 * minus baseline: latency in %, kernels and bytes moved (graph statistics
 * after the pipeline, symbolic dims at the batch), and compile time (load +
 * pipeline + backend, measured once, so noisy for small models). A positive
 * Δ latency means the model is slower without the pass.
 *
 * Δ latency is the median over rounds of (variant time / baseline time) in
 * the same round, minus one: a paired ratio, measured side by side, which
 * stays put when load on a shared machine makes the times bimodal (where
 * the ratio of two medians jumps between the modes). The table also shows
 * each variant's plain median.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_PASSES 256

typedef struct variant {
  const char *pass;               /* NULL for the baseline */
  const char *dropped[MAX_PASSES]; /* pass and its dependents */
  int n_dropped;
  const char *ran[MAX_PASSES];
  int n_ran;
  ncc_graph *g;
  ncc_module *m;
  ncc_graph_stats stats;
  double compile_ms;
  double *lat;
  double median;
  double delta_pct; /* paired, against variant 0 */
} variant;

typedef struct ablation {
  const cli_opts *o;
  int64_t batch;
  int nv;
  variant *v; /* v[0] is the baseline */
} ablation;

static const char *pass_needs(const char *name) {
  for (int i = 0; i < ncc_pass_count(); i++) {
    const char *nm, *needs;
    if (ncc_pass_info(i, &nm, NULL, &needs, NULL) == NCC_OK &&
        strcmp(nm, name) == 0)
      return needs;
  }
  return "";
}

static bool listed(const char *const *list, int n, const char *name,
                   size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(list[i]) == len && strncmp(list[i], name, len) == 0) return true;
  return false;
}

/* Does `name` need (directly) a pass in list[0..n)? */
static bool needs_one_of(const char *name, const char *const *list, int n) {
  const char *s = pass_needs(name);
  while (*s) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len && listed(list, n, s, len)) return true;
    s += len + (e ? 1 : 0);
  }
  return false;
}

/* v->dropped = `pass` and every pass of the baseline that needs it,
 * directly or through another dropped pass. */
static void plan_drop(const variant *base, variant *v, const char *pass) {
  v->pass = pass;
  v->dropped[0] = pass;
  v->n_dropped = 1;
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < base->n_ran; i++) {
      const char *p = base->ran[i];
      if (listed(v->dropped, v->n_dropped, p, strlen(p))) continue;
      if (needs_one_of(p, v->dropped, v->n_dropped)) {
        v->dropped[v->n_dropped++] = p;
        grew = true;
      }
    }
  }
}

/* Load, optimize and compile one variant; compile_ms covers all three. */
static ncc_status compile_variant(const ablation *a, variant *v) {
  ncc_pipeline *p = NULL;
  double t0 = cli_now_ms();
  ncc_status st = cli_pipeline_build(a->o, v->dropped, v->n_dropped, &p);
  if (!st) st = cli_load_model(a->o->model, &v->g);
  if (!st) st = ncc_pipeline_run(p, v->g);
  if (!st) st = ncc_module_compile_opts(v->g, a->o->target, &a->o->lib, &v->m);
  v->compile_ms = cli_now_ms() - t0;
  if (!st) {
    v->n_ran = ncc_pipeline_num_ran(p);
    if (v->n_ran > MAX_PASSES) v->n_ran = MAX_PASSES;
    for (int i = 0; i < v->n_ran; i++) v->ran[i] = ncc_pipeline_ran_name(p, i);
  }
  if (st && v->pass) ncc_error_prefix("with pass '%s' disabled", v->pass);
  ncc_pipeline_free(p);
  return st;
}

static ncc_status run_once(variant *v, const ncc_tensor *in, ncc_tensor *out,
                           double *ms) {
  int n_in = ncc_graph_num_inputs(v->g), n_out = ncc_graph_num_outputs(v->g);
  double t0 = cli_now_ms();
  /* into the outputs of the first run, as `ncc bench` does */
  ncc_status st = ncc_module_run_into(v->m, in, n_in, out, n_out);
  *ms = cli_now_ms() - t0;
  if (st && v->pass) ncc_error_prefix("with pass '%s' disabled", v->pass);
  return st;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double median(double *lat, int64_t n) {
  qsort(lat, (size_t)n, sizeof *lat, cmp_double);
  return n % 2 ? lat[n / 2] : 0.5 * (lat[n / 2 - 1] + lat[n / 2]);
}

/* Warm every variant up, then time round-robin. */
static ncc_status measure(ablation *a, const ncc_tensor *in) {
  const cli_opts *o = a->o;
  int n_out = ncc_graph_num_outputs(a->v[0].g);
  ncc_tensor *out = ncc_calloc((size_t)(n_out ? n_out : 1), sizeof *out);
  if (!out) return NCC_ERR_NOMEM;
  /* every variant has the same outputs: one allocation serves them all */
  ncc_status st = ncc_module_run(a->v[0].m, in, ncc_graph_num_inputs(a->v[0].g), out, n_out);
  double ms;
  for (int k = 0; k < a->nv && !st; k++) {
    a->v[k].lat = ncc_calloc((size_t)o->iters, sizeof(double));
    if (!a->v[k].lat) st = NCC_ERR_NOMEM;
    for (int64_t i = 0; i < o->warmup && !st; i++)
      st = run_once(&a->v[k], in, out, &ms);
  }
  for (int64_t i = 0; i < o->iters && !st; i++)
    for (int j = 0; j < a->nv && !st; j++) {
      variant *v = &a->v[(j + i) % a->nv];
      st = run_once(v, in, out, &v->lat[i]);
    }
  double *ratio = st ? NULL : ncc_calloc((size_t)o->iters, sizeof(double));
  if (!st && !ratio) st = NCC_ERR_NOMEM;
  for (int k = 0; k < a->nv && !st; k++) {
    const double *b = a->v[0].lat, *l = a->v[k].lat;
    for (int64_t i = 0; i < o->iters; i++) ratio[i] = b[i] > 0 ? l[i] / b[i] : 1;
    a->v[k].delta_pct = (median(ratio, o->iters) - 1) * 100;
  }
  /* median() sorts: the paired ratios above come first. */
  for (int k = 0; k < a->nv && !st; k++)
    a->v[k].median = median(a->v[k].lat, o->iters);
  ncc_free(ratio, 0);
  cli_tensors_free(out, n_out);
  ncc_free(out, 0);
  return st;
}

static void print_table(const ablation *a) {
  const cli_opts *o = a->o;
  const variant *b = &a->v[0];
  char t[CLI_TEXT_MAX];
  printf("model      %s\n", cli_text(o->model, t, sizeof t));
  printf("target     %s, batch %lld, %lld warm-up + %lld timed runs per "
         "variant, interleaved\n",
         cli_text(o->target, t, sizeof t), (long long)a->batch, (long long)o->warmup,
         (long long)o->iters);
  if (o->passes) printf("baseline   --passes:");
  else printf("baseline   -O%d:", o->opt_level);
  for (int i = 0; i < b->n_ran; i++)
    printf("%s%s", i ? ", " : " ", cli_text(b->ran[i], t, sizeof t));
  if (!b->n_ran) printf(" (no passes)");
  printf("\n           median %.4f ms, %d kernels, %.3f MB moved, compile "
         "%.1f ms\n\n",
         b->median, b->stats.kernels, b->stats.bytes_moved / 1e6, b->compile_ms);
  if (a->nv == 1) {
    printf("no passes to ablate\n");
    return;
  }
  /* "Δ" is two bytes of UTF-8 but one column: widen those fields by one. */
  printf("%-28s %10s %13s %11s %13s %14s\n", "disabled pass", "median ms",
         "Δ latency %", "Δ kernels", "Δ MB moved", "Δ compile ms");
  for (int k = 1; k < a->nv; k++) {
    const variant *v = &a->v[k];
    char label[256];
    int len = snprintf(label, sizeof label, "%s", v->pass);
    for (int i = 1; i < v->n_dropped && len < (int)sizeof label; i++)
      len += snprintf(label + len, sizeof label - (size_t)len, "%s%s",
                      i == 1 ? " (+" : ",", v->dropped[i]);
    if (v->n_dropped > 1 && len < (int)sizeof label - 1) strcat(label, ")");
    printf("%-28s %10.4f %+12.1f %+10d %+12.3f %+13.1f\n", cli_text(label, t, sizeof t),
           v->median,
           v->delta_pct, v->stats.kernels - b->stats.kernels,
           (v->stats.bytes_moved - b->stats.bytes_moved) / 1e6,
           v->compile_ms - b->compile_ms);
  }
}

static void json_names(const char *const *names, int n) {
  printf("[");
  for (int i = 0; i < n; i++) {
    if (i) printf(", ");
    cli_json_string(names[i]);
  }
  printf("]");
}

static void json_variant_core(const variant *v) {
  printf("\"passes\": ");
  json_names(v->ran, v->n_ran);
  printf(", \"latency_ms\": ");
  cli_json_number(v->median);
  printf(", \"kernels\": %d, \"bytes_moved\": ", v->stats.kernels);
  cli_json_number(v->stats.bytes_moved);
  printf(", \"compile_ms\": ");
  cli_json_number(v->compile_ms);
}

static void print_json(const ablation *a) {
  const cli_opts *o = a->o;
  const variant *b = &a->v[0];
  printf("{\"model\": ");
  cli_json_string(o->model);
  printf(", \"target\": ");
  cli_json_string(o->target);
  printf(", \"batch\": %lld, \"warmup\": %lld, \"iters\": %lld, "
         "\"opt_level\": %d, \"baseline\": {",
         (long long)a->batch, (long long)o->warmup, (long long)o->iters,
         o->opt_level);
  json_variant_core(b);
  printf("}, \"ablations\": [");
  for (int k = 1; k < a->nv; k++) {
    const variant *v = &a->v[k];
    printf("%s{\"pass\": ", k > 1 ? ", " : "");
    cli_json_string(v->pass);
    printf(", \"also_disabled\": ");
    json_names(v->dropped + 1, v->n_dropped - 1);
    printf(", ");
    json_variant_core(v);
    printf(", \"delta_latency_pct\": ");
    cli_json_number(v->delta_pct);
    printf(", \"delta_kernels\": %d, \"delta_bytes_moved\": ",
           v->stats.kernels - b->stats.kernels);
    cli_json_number(v->stats.bytes_moved - b->stats.bytes_moved);
    printf(", \"delta_compile_ms\": ");
    cli_json_number(v->compile_ms - b->compile_ms);
    printf("}");
  }
  printf("]}\n");
}

/* Compile every variant, then time them all on one set of inputs. */
static ncc_status ablate(ablation *a) {
  /* An untimed load first, so the baseline's compile time does not pay
   * for a cold file cache and allocator. */
  ncc_graph *warm = NULL;
  ncc_status st = cli_load_model(a->o->model, &warm);
  ncc_graph_free(warm);
  if (!st) st = compile_variant(a, &a->v[0]);
  if (st) return st;
  a->nv = 1 + a->v[0].n_ran;
  for (int k = 1; k < a->nv && !st; k++) {
    plan_drop(&a->v[0], &a->v[k], a->v[0].ran[k - 1]);
    st = compile_variant(a, &a->v[k]);
  }
  const ncc_graph *g = a->v[0].g;
  ncc_tensor *in = ncc_calloc((size_t)(ncc_graph_num_inputs(g) ? ncc_graph_num_inputs(g) : 1), sizeof *in);
  if (!st && !in) st = NCC_ERR_NOMEM;
  if (!st) st = cli_bench_inputs(g, a->o, in, &a->batch);
  for (int k = 0; k < a->nv && !st; k++)
    ncc_graph_compute_stats(a->v[k].g, a->batch, &a->v[k].stats);
  if (!st) st = measure(a, in);
  if (in) cli_tensors_free(in, ncc_graph_num_inputs(g));
  ncc_free(in, 0);
  return st;
}

ncc_status cli_ablate(const cli_opts *o) {
  ablation a = {.o = o, .batch = o->batch};
  /* One variant per pass plus the baseline; at most every registered pass. */
  a.v = ncc_calloc((size_t)ncc_pass_count() + 1, sizeof *a.v);
  if (!a.v) return NCC_ERR_NOMEM;
  ncc_status st = ablate(&a);
  if (!st && o->json) print_json(&a);
  else if (!st) print_table(&a);
  for (int k = 0; k <= ncc_pass_count(); k++) {
    ncc_module_free(a.v[k].m);
    ncc_graph_free(a.v[k].g);
    ncc_free(a.v[k].lat, 0);
  }
  ncc_free(a.v, 0);
  return st;
}
