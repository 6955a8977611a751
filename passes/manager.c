/* passes/manager.c — the pass manager: builds pipelines from -O levels,
 * explicit lists and --disable-pass, checks declared dependencies, runs the
 * passes, and owns all instrumentation (print-after, timing, verification
 * after each pass, per-pass statistics). */
#include <string.h>
#include <time.h>

#include "../ir/shape.h"
#include "pass.h"

static const ncc_pass *const all_passes[] = {
#define NCC_PASS(id) &ncc_pass_##id,
#include "passes.def"
#undef NCC_PASS
};
#define NPASS ((int)(sizeof all_passes / sizeof all_passes[0]))

typedef struct pass_result {
  double ms;
  int rewrites;
  ncc_graph_stats after;
} pass_result;

struct ncc_pipeline {
  int opt_level;
  bool explicit_list;
  bool enabled[NPASS];  /* chosen by level or list */
  bool disabled[NPASS]; /* --disable-pass */
  bool print_after[NPASS];
  FILE *print_to;
  bool time_passes, verify_each;
  int64_t stats_batch;
  int layout_block; /* for the layout pass; <= 1: stay plain */
  int winograd;     /* for the winograd pass: 0 auto, 2 or 4 */
  int precision;    /* NCC_PRECISION_*, for the precision pass */
  /* results of the last run (the pipeline is logically const while run) */
  int n_ran;
  int ran[NPASS];
  pass_result res[NPASS];
  ncc_graph_stats before;
};

int ncc_pass_count(void) { return NPASS; }

ncc_status ncc_pass_info(int i, const char **name, int *level,
                         const char **needs, const char **desc) {
  if (i < 0 || i >= NPASS) return ncc_error(NCC_ERR_USAGE, "no pass %d", i);
  if (name) *name = all_passes[i]->name;
  if (level) *level = all_passes[i]->level;
  if (needs) *needs = all_passes[i]->needs;
  if (desc) *desc = all_passes[i]->desc;
  return NCC_OK;
}

/* "unknown pass 'x'; did you mean 'y'?" (ir/suggest.c), naming where
 * the list of passes is; `where` says which flag gave the name. */
static ncc_status unknown_pass(const char *name, size_t len, const char *where) {
  char word[128];
  snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), name);
  const char *names[NPASS];
  for (int i = 0; i < NPASS; i++) names[i] = all_passes[i]->name;
  const char *near = ncc_suggest(word, names, NPASS);
  if (near)
    return ncc_error(NCC_ERR_USAGE, "unknown pass '%s'%s; did you mean '%s'? (see 'ncc passes')",
                     word, where, near);
  return ncc_error(NCC_ERR_USAGE, "unknown pass '%s'%s (see 'ncc passes')", word, where);
}

static int find_pass(const char *name, size_t len) {
  for (int i = 0; i < NPASS; i++)
    if (strlen(all_passes[i]->name) == len &&
        strncmp(all_passes[i]->name, name, len) == 0)
      return i;
  return -1;
}

ncc_status ncc_pipeline_new(int opt_level, ncc_pipeline **out) {
  *out = NULL;
  if (opt_level < 0 || opt_level > 3)
    return ncc_error(NCC_ERR_USAGE, "optimization level -O%d is not one of -O0..-O3",
                     opt_level);
  ncc_pipeline *p = ncc_calloc(1, sizeof *p);
  if (!p) return NCC_ERR_NOMEM;
  p->opt_level = opt_level;
  p->stats_batch = 1;
  for (int i = 0; i < NPASS; i++) p->enabled[i] = all_passes[i]->level <= opt_level;
  *out = p;
  return NCC_OK;
}

void ncc_pipeline_free(ncc_pipeline *p) { ncc_free(p, sizeof *p); }

ncc_status ncc_pipeline_set_passes(ncc_pipeline *p, const char *list) {
  bool en[NPASS] = {0};
  const char *s = list;
  while (*s) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len) {
      int k = find_pass(s, len);
      if (k < 0) return unknown_pass(s, len, "");
      en[k] = true;
    }
    s += len + (e ? 1 : 0);
  }
  memcpy(p->enabled, en, sizeof en);
  p->explicit_list = true;
  return NCC_OK;
}

ncc_status ncc_pipeline_disable(ncc_pipeline *p, const char *name) {
  int k = find_pass(name, strlen(name));
  if (k < 0) return unknown_pass(name, strlen(name), "");
  p->disabled[k] = true;
  return NCC_OK;
}

ncc_status ncc_pipeline_print_after(ncc_pipeline *p, const char *name, FILE *f) {
  p->print_to = f;
  if (strcmp(name, "all") == 0) {
    for (int i = 0; i < NPASS; i++) p->print_after[i] = true;
    return NCC_OK;
  }
  int k = find_pass(name, strlen(name));
  if (k < 0) return unknown_pass(name, strlen(name), " in --print-after");
  p->print_after[k] = true;
  return NCC_OK;
}

void ncc_pipeline_set_time_passes(ncc_pipeline *p, int on) { p->time_passes = on; }
void ncc_pipeline_set_verify_each(ncc_pipeline *p, int on) { p->verify_each = on; }
void ncc_pipeline_set_layout_block(ncc_pipeline *p, int block) {
  p->layout_block = block;
}

ncc_status ncc_pipeline_set_winograd(ncc_pipeline *p, int m) {
  if (m != 0 && m != 2 && m != 4)
    return ncc_error(NCC_ERR_USAGE, "winograd tile %d: expected 0 (auto), 2 or 4", m);
  p->winograd = m;
  return NCC_OK;
}

ncc_status ncc_pipeline_set_precision(ncc_pipeline *p, int precision) {
  if (!ncc_precision_name(precision))
    return ncc_error(NCC_ERR_USAGE, "precision %d: expected 0 (f32), 1 (bf16) or 2 (fp16)",
                     precision);
  p->precision = precision;
  return NCC_OK;
}
void ncc_pipeline_set_stats_batch(ncc_pipeline *p, int64_t b) {
  p->stats_batch = b > 0 ? b : 1;
}

static bool runs(const ncc_pipeline *p, int i) {
  return p->enabled[i] && !p->disabled[i];
}

ncc_status ncc_pipeline_check(const ncc_pipeline *p) {
  for (int i = 0; i < NPASS; i++) {
    if (!runs(p, i)) continue;
    const char *s = all_passes[i]->needs;
    while (*s) {
      const char *e = strchr(s, ',');
      size_t len = e ? (size_t)(e - s) : strlen(s);
      int k = find_pass(s, len);
      NCC_ASSERT(k >= 0); /* a typo in a descriptor is our bug */
      NCC_ASSERT(k < i);  /* needs must come earlier in passes.def */
      if (!runs(p, k)) {
        if (p->disabled[k])
          return ncc_error(NCC_ERR_USAGE,
                           "cannot disable pass '%s': pass '%s' needs it "
                           "(disable '%s' too)",
                           all_passes[k]->name, all_passes[i]->name,
                           all_passes[i]->name);
        return ncc_error(NCC_ERR_USAGE,
                         "pass '%s' needs pass '%s', which is not in the pipeline",
                         all_passes[i]->name, all_passes[k]->name);
      }
      s += len + (e ? 1 : 0);
    }
  }
  return NCC_OK;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

ncc_status ncc_pipeline_run(const ncc_pipeline *cp, ncc_graph *g) {
  ncc_pipeline *p = (ncc_pipeline *)cp; /* results are bookkeeping only */
  ncc_status st = ncc_pipeline_check(p);
  if (st) return st;
  p->n_ran = 0;
  ncc_graph_compute_stats(g, p->stats_batch, &p->before);
  for (int i = 0; i < NPASS; i++) {
    if (!runs(p, i)) continue;
    /* at f32 the precision pass has nothing to do: it is left out, so an
     * f32 pipeline (its reports, ablations, the passes that ran) is what
     * it was before the pass existed */
    if (all_passes[i] == &ncc_pass_precision && p->precision == NCC_PRECISION_F32) continue;
    ncc_pass_ctx ctx = {.opt_level = p->opt_level, .layout_block = p->layout_block,
                        .precision = p->precision, .winograd = p->winograd};
    double t0 = now_ms();
    st = all_passes[i]->run(g, &ctx);
    double t1 = now_ms();
    if (st) {
      ncc_error_prefix("pass '%s'", all_passes[i]->name);
      return st;
    }
    /* Passes may leave shapes stale; re-infer so every pass sees truth. */
    if (ctx.changed && (st = ncc_infer_graph(g))) {
      ncc_error_prefix("after pass '%s'", all_passes[i]->name);
      return st;
    }
    if (p->verify_each && (st = ncc_graph_verify(g))) {
      ncc_error_prefix("verifier failed after pass '%s'", all_passes[i]->name);
      return st == NCC_ERR_NOMEM ? st : NCC_ERR_INTERNAL;
    }
    pass_result *r = &p->res[p->n_ran];
    r->ms = t1 - t0;
    r->rewrites = ctx.rewrites;
    ncc_graph_compute_stats(g, p->stats_batch, &r->after);
    p->ran[p->n_ran++] = i;
    if (p->print_after[i] && p->print_to) {
      fprintf(p->print_to, "// ----- IR after pass '%s' -----\n", all_passes[i]->name);
      ncc_graph_print(g, p->print_to);
    }
  }
  return NCC_OK;
}

int ncc_pipeline_num_ran(const ncc_pipeline *p) { return p->n_ran; }
const char *ncc_pipeline_ran_name(const ncc_pipeline *p, int i) {
  return i >= 0 && i < p->n_ran ? all_passes[p->ran[i]]->name : NULL;
}
double ncc_pipeline_ran_ms(const ncc_pipeline *p, int i) {
  return i >= 0 && i < p->n_ran ? p->res[i].ms : 0;
}

void ncc_pipeline_report(const ncc_pipeline *p, FILE *f) {
  fprintf(f, "%-16s %9s %8s %7s %7s %12s %12s %12s\n", "pass", "time(ms)",
          "rewrites", "nodes", "kernels", "MFLOP", "MB moved", "peak MB");
  const ncc_graph_stats *b = &p->before;
  fprintf(f, "%-16s %9s %8s %7d %7d %12.2f %12.3f %12.3f\n", "(input)", "", "",
          b->nodes, b->kernels, b->flops / 1e6, b->bytes_moved / 1e6,
          b->peak_act_bytes / 1e6);
  double total = 0;
  for (int i = 0; i < p->n_ran; i++) {
    const pass_result *r = &p->res[i];
    total += r->ms;
    fprintf(f, "%-16s %9.3f %8d %7d %7d %12.2f %12.3f %12.3f\n",
            all_passes[p->ran[i]]->name, r->ms, r->rewrites, r->after.nodes,
            r->after.kernels, r->after.flops / 1e6, r->after.bytes_moved / 1e6,
            r->after.peak_act_bytes / 1e6);
  }
  fprintf(f, "%-16s %9.3f\n", "total", total);
}
