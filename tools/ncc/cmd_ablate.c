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
 *
 * Every Δ latency comes with the 95% order-statistic confidence interval of
 * that median ratio (stats.c), and a verdict: "within noise" when the
 * interval holds 0, else "slower without" / "faster without" the pass. A
 * variant whose optimised graph hashes equal to the baseline's
 * (ncc_graph_hash: ops, attributes, types, wiring, constant data; names
 * ignored) compiles to the same code, so it is reported as "no change
 * (identical graph)" and neither compiled nor timed: its "effect" could
 * only be noise.
 *
 * Per-round pairing removes drifting load, not what differs between two
 * modules of the same code (where the JIT put the code, how the buffers
 * line up): compiled twice, one graph can time a few % apart, reliably.
 * So the baseline is compiled a second time and timed like a variant (the
 * A/A control row); a pass whose delta interval overlaps the control's is
 * "within A/A noise", whatever its own interval says.
 *
 * `--batch 1,8`: the variants are compiled once (modules take any batch)
 * and timed at each batch in turn; one block per batch, then a summary of
 * pass x batch. Without --iters the ablation times CLI_ABLATE_ITERS rounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_PASSES 256

/* A variant's figures at one batch. */
typedef struct vbatch {
  ncc_graph_stats stats;
  double median, ci_lo, ci_hi, cv, rcv; /* of its own times, ms */
  double delta_pct, delta_lo, delta_hi; /* paired, against the baseline */
} vbatch;

typedef struct variant {
  const char *pass;               /* NULL for the baseline and the control */
  const char *dropped[MAX_PASSES]; /* pass and its dependents */
  int n_dropped;
  const char *ran[MAX_PASSES];
  int n_ran;
  ncc_graph *g;
  ncc_module *m; /* NULL when identical to the baseline */
  uint64_t hash; /* ncc_graph_hash of the optimised graph */
  bool identical;
  double compile_ms;
  double *lat; /* one batch's rounds */
  vbatch at[CLI_MAX_BATCHES];
} variant;

typedef struct ablation {
  const cli_opts *o;
  int64_t iters;
  int64_t batch[CLI_MAX_BATCHES]; /* the batches the inputs bound */
  int nv;     /* variants: baseline, np passes, the control */
  int np;
  variant *v; /* v[0] is the baseline, v[1..np] the passes */
  variant *ctl; /* v[np + 1], the baseline compiled again; NULL when np == 0 */
  int threads;
  cli_affinity affinity;
  bool ref_target;
  cli_refk refk; /* of the baseline */
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

/* Load, optimize and compile one variant; compile_ms covers all three. A
 * variant whose graph is the baseline's is not compiled. */
static ncc_status compile_variant(const ablation *a, variant *v) {
  ncc_pipeline *p = NULL;
  double t0 = cli_now_ms();
  ncc_status st = cli_pipeline_build(a->o, v->dropped, v->n_dropped, &p);
  if (!st) st = cli_load_model(a->o->model, &v->g);
  if (!st) st = ncc_pipeline_run(p, v->g);
  if (!st) {
    v->hash = ncc_graph_hash(v->g);
    v->identical = v->pass && v->hash == a->v[0].hash;
  }
  /* without the compile cache: the variants' compile times are cold
   * compiles, comparable with one another */
  ncc_options lo = a->o->lib;
  lo.cache_dir = NULL;
  if (!st && !v->identical) st = ncc_module_compile_opts(v->g, a->o->target, &lo, &v->m);
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

/* Median and its CI of x[0..n) (sorted in place). */
static void median_ci(double *x, int64_t n, double *med, double *lo, double *hi) {
  cli_sort_doubles(x, n);
  *med = cli_median_sorted(x, n);
  cli_median_ci(x, n, lo, hi);
}

/* Warm every timed variant up, then time them round-robin at batch index
 * bi; the figures go to v->at[bi]. */
static ncc_status measure(ablation *a, int bi, const ncc_tensor *in) {
  const cli_opts *o = a->o;
  int64_t iters = a->iters;
  int n_out = ncc_graph_num_outputs(a->v[0].g);
  ncc_tensor *out = ncc_calloc((size_t)(n_out ? n_out : 1), sizeof *out);
  variant **act = ncc_calloc((size_t)a->nv, sizeof *act); /* the timed ones */
  if (!out || !act) {
    ncc_free(out, 0);
    ncc_free(act, 0);
    return NCC_ERR_NOMEM;
  }
  int na = 0;
  for (int k = 0; k < a->nv; k++)
    if (a->v[k].m) act[na++] = &a->v[k];
  /* every variant has the same outputs: one allocation serves them all */
  ncc_status st = ncc_module_run(a->v[0].m, in, ncc_graph_num_inputs(a->v[0].g), out, n_out);
  double ms;
  for (int k = 0; k < na && !st; k++) {
    ncc_free(act[k]->lat, 0);
    act[k]->lat = ncc_calloc((size_t)iters, sizeof(double));
    if (!act[k]->lat) st = NCC_ERR_NOMEM;
    for (int64_t i = 0; i < o->warmup && !st; i++)
      st = run_once(act[k], in, out, &ms);
  }
  for (int64_t i = 0; i < iters && !st; i++)
    for (int j = 0; j < na && !st; j++) {
      variant *v = act[(j + i) % na];
      st = run_once(v, in, out, &v->lat[i]);
    }
  double *ratio = st ? NULL : ncc_calloc((size_t)iters, sizeof(double));
  if (!st && !ratio) st = NCC_ERR_NOMEM;
  /* the paired ratios first: median_ci sorts the times it is given */
  for (int k = 0; k < na && !st; k++) {
    vbatch *r = &act[k]->at[bi];
    const double *b = a->v[0].lat, *l = act[k]->lat;
    for (int64_t i = 0; i < iters; i++) ratio[i] = b[i] > 0 ? l[i] / b[i] : 1;
    double med, lo, hi;
    median_ci(ratio, iters, &med, &lo, &hi);
    r->delta_pct = (med - 1) * 100;
    r->delta_lo = (lo - 1) * 100;
    r->delta_hi = (hi - 1) * 100;
  }
  for (int k = 0; k < na && !st; k++) {
    vbatch *r = &act[k]->at[bi];
    r->cv = cli_cv(act[k]->lat, iters);
    median_ci(act[k]->lat, iters, &r->median, &r->ci_lo, &r->ci_hi);
    r->rcv = cli_robust_cv(act[k]->lat, iters); /* sorted by median_ci */
  }
  ncc_free(ratio, 0);
  ncc_free(act, 0);
  cli_tensors_free(out, n_out);
  ncc_free(out, 0);
  return st;
}

#define CONTROL_LABEL "none (A/A: baseline again)"

/* "const-fold (+bn-fold)"; the control's CONTROL_LABEL */
static const char *variant_label(const variant *v, char *label, size_t cap) {
  if (!v->pass) {
    snprintf(label, cap, "%s", CONTROL_LABEL);
    return label;
  }
  int len = snprintf(label, cap, "%s", v->pass);
  for (int i = 1; i < v->n_dropped && len < (int)cap; i++)
    len += snprintf(label + len, cap - (size_t)len, "%s%s", i == 1 ? " (+" : ",",
                    v->dropped[i]);
  if (v->n_dropped > 1 && len < (int)cap - 1) strcat(label, ")");
  return label;
}

#define IDENTICAL_TEXT "no change (identical graph)"

/* The CI's verdict, and "within A/A noise" when the interval overlaps the
 * control's (the baseline against itself compiled again); the control's own
 * verdict is "within noise" or "placement effect". */
static const char *verdict(const ablation *a, const variant *v, int bi) {
  const vbatch *r = &v->at[bi];
  const char *w = cli_delta_verdict(r->delta_lo, r->delta_hi);
  /* The control disables nothing: a delta that excludes 0 there is what
   * compiling the same graph twice does (code placement), not a pass. */
  if (v == a->ctl && strcmp(w, "within noise") != 0 && r->delta_lo <= r->delta_hi)
    return "placement effect";
  if (!a->ctl || v == a->ctl || strcmp(w, "within noise") == 0 || !(r->delta_lo <= r->delta_hi))
    return w;
  const vbatch *c = &a->ctl->at[bi];
  return r->delta_lo <= c->delta_hi && c->delta_lo <= r->delta_hi ? "within A/A noise" : w;
}

/* "+12.3 [+10.1, +14.0]" */
static const char *delta_text(const vbatch *r, char *buf, size_t cap) {
  snprintf(buf, cap, "%+.1f [%+.1f, %+.1f]", r->delta_pct, r->delta_lo, r->delta_hi);
  return buf;
}

static void print_table(const ablation *a, int bi) {
  const cli_opts *o = a->o;
  const variant *b = &a->v[0];
  const vbatch *br = &b->at[bi];
  char t[CLI_TEXT_MAX];
  printf("model      %s\n", cli_text(o->model, t, sizeof t));
  printf("target     %s, batch %lld, %lld warm-up + %lld timed runs per "
         "variant, interleaved\n",
         cli_text(o->target, t, sizeof t), (long long)a->batch[bi], (long long)o->warmup,
         (long long)a->iters);
  cli_affinity_text(&a->affinity, t, sizeof t);
  printf("threads    %d, %s\n", a->threads, t);
  if (!a->ref_target) printf("ref kernels %s\n", cli_refk_text(&a->refk, t, sizeof t));
  if (o->passes) printf("baseline   --passes:");
  else printf("baseline   -O%d:", o->opt_level);
  for (int i = 0; i < b->n_ran; i++)
    printf("%s%s", i ? ", " : " ", cli_text(b->ran[i], t, sizeof t));
  if (!b->n_ran) printf(" (no passes)");
  printf("\n           median %.4f ms [%.4f, %.4f] 95%% CI, cv %.1f %%%s, %d kernels, "
         "%.3f MB moved, compile %.1f ms\n\n",
         br->median, br->ci_lo, br->ci_hi, br->cv * 100,
         cli_noisy(br->rcv) ? " (noisy)" : "", br->stats.kernels,
         br->stats.bytes_moved / 1e6, b->compile_ms);
  if (a->np == 0) {
    printf("no passes to ablate\n");
    return;
  }
  /* "Δ" is two bytes of UTF-8 but one column: widen those fields by one. */
  printf("%-28s %10s %-25s %11s %13s %14s  %s\n", "disabled pass", "median ms",
         "Δ latency % [95% CI]", "Δ kernels", "Δ MB moved", "Δ compile ms", "verdict");
  for (int k = 0; k <= a->np; k++) {
    const variant *v = k ? &a->v[k] : a->ctl; /* the control first */
    const vbatch *r = &v->at[bi];
    char label[256], d[96];
    variant_label(v, label, sizeof label);
    cli_text(label, t, sizeof t);
    if (v->identical) {
      printf("%-28s %10s %-24s %+10d %+12.3f %13s  %s\n", t, "-", "0 (not timed)", 0, 0.0,
             "-", IDENTICAL_TEXT);
      continue;
    }
    printf("%-28s %10.4f %-24s %+10d %+12.3f %+13.1f  %s\n", t, r->median,
           delta_text(r, d, sizeof d), r->stats.kernels - br->stats.kernels,
           (r->stats.bytes_moved - br->stats.bytes_moved) / 1e6,
           v->compile_ms - b->compile_ms, verdict(a, v, bi));
  }
}

/* Several batches: pass x batch -> delta [CI] verdict, in one place. */
/* One row per disabled pass, one column per batch: "Δ% [lo, hi] verdict",
 * so "which pass matters at which batch" reads along a row. */
static void print_summary(const ablation *a) {
  char t[CLI_TEXT_MAX], label[256], d[96], cell[160];
  enum { CELL = 40 };
  printf("\nsummary: Δ latency %% without each pass [95%% CI] and verdict, per batch\n");
  printf("%-28s", "disabled pass");
  for (int bi = 0; bi < a->o->n_batches; bi++) {
    snprintf(cell, sizeof cell, "batch %lld", (long long)a->batch[bi]);
    printf("  %-*s", bi + 1 < a->o->n_batches ? CELL : 0, cell);
  }
  printf("\n");
  for (int k = 0; k <= a->np; k++) {
    const variant *v = k ? &a->v[k] : a->ctl;
    printf("%-28s", cli_text(variant_label(v, label, sizeof label), t, sizeof t));
    for (int bi = 0; bi < a->o->n_batches; bi++) {
      if (v->identical) snprintf(cell, sizeof cell, "%s", IDENTICAL_TEXT);
      else
        snprintf(cell, sizeof cell, "%s %s", delta_text(&v->at[bi], d, sizeof d),
                 verdict(a, v, bi));
      /* "Δ" is absent here; cells are ASCII, so %-*s pads by columns */
      printf("  %-*s", bi + 1 < a->o->n_batches ? CELL : 0, cell);
    }
    printf("\n");
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

static void json_pair(double lo, double hi) {
  printf("[");
  cli_json_number(lo);
  printf(", ");
  cli_json_number(hi);
  printf("]");
}

static void json_variant_core(const variant *v, int bi) {
  const vbatch *r = &v->at[bi];
  printf("\"passes\": ");
  json_names(v->ran, v->n_ran);
  printf(", \"graph_hash\": \"%016llx\", \"latency_ms\": ", (unsigned long long)v->hash);
  if (v->identical) printf("null, \"latency_ci_ms\": null");
  else {
    cli_json_number(r->median);
    printf(", \"latency_ci_ms\": ");
    json_pair(r->ci_lo, r->ci_hi);
  }
  printf(", \"kernels\": %d, \"bytes_moved\": ", r->stats.kernels);
  cli_json_number(r->stats.bytes_moved);
  printf(", \"compile_ms\": ");
  if (v->identical) printf("null"); /* not compiled */
  else cli_json_number(v->compile_ms);
}

static void print_json(const ablation *a, int bi) {
  const cli_opts *o = a->o;
  const variant *b = &a->v[0];
  const vbatch *br = &b->at[bi];
  printf("{\"model\": ");
  cli_json_string(o->model);
  printf(", \"target\": ");
  cli_json_string(o->target);
  printf(", \"batch\": %lld, \"warmup\": %lld, \"iters\": %lld, "
         "\"opt_level\": %d, \"threads\": %d, ",
         (long long)a->batch[bi], (long long)o->warmup, (long long)a->iters,
         o->opt_level, a->threads);
  cli_affinity_json(&a->affinity);
  printf(", ");
  if (a->ref_target) printf("\"reference_kernels\": null");
  else cli_refk_json(&a->refk);
  printf(", \"baseline\": {");
  json_variant_core(b, bi);
  printf(", \"cv\": ");
  cli_json_number(br->cv);
  printf(", \"robust_cv\": ");
  cli_json_number(br->rcv);
  printf(", \"noisy\": %s}, \"control\": ", cli_noisy(br->rcv) ? "true" : "false");
  if (a->ctl) {
    const vbatch *c = &a->ctl->at[bi];
    printf("{");
    json_variant_core(a->ctl, bi);
    printf(", \"delta_latency_pct\": ");
    cli_json_number(c->delta_pct);
    printf(", \"delta_latency_ci_pct\": ");
    json_pair(c->delta_lo, c->delta_hi);
    printf(", \"verdict\": \"%s\"}", verdict(a, a->ctl, bi));
  } else {
    printf("null");
  }
  printf(", \"ablations\": [");
  for (int k = 1; k <= a->np; k++) {
    const variant *v = &a->v[k];
    const vbatch *r = &v->at[bi];
    printf("%s{\"pass\": ", k > 1 ? ", " : "");
    cli_json_string(v->pass);
    printf(", \"also_disabled\": ");
    json_names(v->dropped + 1, v->n_dropped - 1);
    printf(", \"identical_graph\": %s, ", v->identical ? "true" : "false");
    json_variant_core(v, bi);
    printf(", \"delta_latency_pct\": ");
    if (v->identical) printf("null, \"delta_latency_ci_pct\": null");
    else {
      cli_json_number(r->delta_pct);
      printf(", \"delta_latency_ci_pct\": ");
      json_pair(r->delta_lo, r->delta_hi);
    }
    printf(", \"verdict\": \"%s\"", v->identical ? "no change" : verdict(a, v, bi));
    printf(", \"delta_kernels\": %d, \"delta_bytes_moved\": ",
           r->stats.kernels - br->stats.kernels);
    cli_json_number(r->stats.bytes_moved - br->stats.bytes_moved);
    printf(", \"delta_compile_ms\": ");
    if (v->identical) printf("null");
    else cli_json_number(v->compile_ms - b->compile_ms);
    printf("}");
  }
  printf("]}");
}

/* Time every variant at batch index bi, on one set of inputs. */
static ncc_status ablate_batch(ablation *a, int bi) {
  const ncc_graph *g = a->v[0].g;
  cli_opts ob = *a->o;
  ob.batch = a->o->batches[bi];
  int n_in = ncc_graph_num_inputs(g);
  ncc_tensor *in = ncc_calloc((size_t)(n_in ? n_in : 1), sizeof *in);
  if (!in) return NCC_ERR_NOMEM;
  ncc_status st = cli_bench_inputs(g, &ob, in, &a->batch[bi]);
  for (int k = 0; k < a->nv && !st; k++)
    ncc_graph_compute_stats(a->v[k].g, a->batch[bi], &a->v[k].at[bi].stats);
  if (!st) st = measure(a, bi, in);
  cli_tensors_free(in, n_in);
  ncc_free(in, 0);
  return st;
}

/* Compile every variant, then time them all at each batch. */
static ncc_status ablate(ablation *a) {
  /* An untimed load first, so the baseline's compile time does not pay
   * for a cold file cache and allocator. */
  ncc_graph *warm = NULL;
  ncc_status st = cli_load_model(a->o->model, &warm);
  ncc_graph_free(warm);
  if (!st) st = compile_variant(a, &a->v[0]);
  if (st) return st;
  a->threads = ncc_module_num_threads(a->v[0].m);
  a->ref_target = strcmp(ncc_module_target(a->v[0].m), "ref") == 0;
  cli_refk_collect(a->v[0].m, &a->refk);
  if (!a->ref_target) cli_refk_warn(&a->refk, a->o->model, a->o->target);
  a->np = a->v[0].n_ran;
  a->nv = a->np ? a->np + 2 : 1;
  for (int k = 1; k <= a->np && !st; k++) {
    plan_drop(&a->v[0], &a->v[k], a->v[0].ran[k - 1]);
    st = compile_variant(a, &a->v[k]);
  }
  if (a->np && !st) { /* the A/A control: the baseline's pipeline again */
    a->ctl = &a->v[a->np + 1];
    st = compile_variant(a, a->ctl);
  }
  for (int bi = 0; bi < a->o->n_batches && !st; bi++) st = ablate_batch(a, bi);
  return st;
}

ncc_status cli_ablate(const cli_opts *o) {
  ablation *a = ncc_calloc(1, sizeof *a);
  if (!a) return NCC_ERR_NOMEM;
  a->o = o;
  a->iters = o->iters_set ? o->iters : CLI_ABLATE_ITERS;
  cli_affinity_get(&a->affinity);
  /* One variant per pass plus the baseline; at most every registered pass. */
  a->v = ncc_calloc((size_t)ncc_pass_count() + 2, sizeof *a->v);
  ncc_status st = a->v ? ablate(a) : NCC_ERR_NOMEM;
  for (int bi = 0; bi < o->n_batches && !st; bi++) {
    if (o->json) {
      printf("%s", o->n_batches == 1 ? "" : bi ? ",\n " : "[");
      print_json(a, bi);
      if (bi == o->n_batches - 1) printf("%s\n", o->n_batches == 1 ? "" : "]");
    } else {
      if (bi) printf("\n");
      print_table(a, bi);
    }
  }
  if (!st && !o->json && o->n_batches > 1 && a->np) print_summary(a);
  for (int k = 0; a->v && k <= ncc_pass_count() + 1; k++) {
    ncc_module_free(a->v[k].m);
    ncc_graph_free(a->v[k].g);
    ncc_free(a->v[k].lat, 0);
  }
  ncc_free(a->v, 0);
  ncc_free(a, 0);
  return st;
}
