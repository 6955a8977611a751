/* tools/ncc/profile.c — the per-kernel profile of `ncc bench --profile`
 * and the Chrome trace of `--trace FILE.json` (docs/PROFILING.md).
 *
 * The library records events (ncc_module_profile_*: runs, steps, kernel
 * threads' shares); here they become one row per step — a compiled kernel
 * (a fused group at its root), or a node run by its reference kernel on the
 * host — averaged over the profiled runs, with the nodes fused in it, FLOPs
 * and bytes (ncc_module_node_info) and the roofline: a step whose
 * arithmetic intensity (FLOP per byte) is above the machine's ridge point
 * (peak GFLOP/s over peak GB/s) is compute-bound and its fraction is of the
 * FMA peak, else memory-bound and its fraction is of the bandwidth.
 *
 * Peaks: --peak-gflops / --peak-gbps, else measured once per process
 * (about 0.1 s): vector FMAs at the host's widest width (AVX-512 or AVX2,
 * chosen at run time) on one thread times the threads, and a memcpy of
 * 64 MiB on one thread (2 bytes moved per byte copied) — a single-thread
 * bandwidth, so a many-thread kernel can read above 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* ---- machine peaks ---- */

#if defined(__x86_64__)
#define FMA12(r)                                                               \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "0\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "1\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "2\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "3\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "4\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "5\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "6\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "7\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "8\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "9\n\t"                              \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "10\n\t"                             \
  "vfmadd231ps %%" r "12, %%" r "13, %%" r "11\n\t"
#define FMA_CLOBBERS                                                           \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",       \
      "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc"

/* Written in assembly (as bench/fma_peak.c) so that the driver's compile
 * flags cannot change what is measured: 12 independent chains cover the
 * FMA latency times the issue width. */
static void fma_zmm(long n) {
  __asm__ volatile("vpxord %%zmm12, %%zmm12, %%zmm12\n\t"
                   "vpxord %%zmm13, %%zmm13, %%zmm13\n\t"
                   "1:\n\t" FMA12("zmm") "dec %0\n\t"
                   "jnz 1b\n\t"
                   "vzeroupper"
                   : "+r"(n)
                   :
                   : FMA_CLOBBERS);
}

static void fma_ymm(long n) {
  __asm__ volatile("vxorps %%ymm12, %%ymm12, %%ymm12\n\t"
                   "vxorps %%ymm13, %%ymm13, %%ymm13\n\t"
                   "1:\n\t" FMA12("ymm") "dec %0\n\t"
                   "jnz 1b\n\t"
                   "vzeroupper"
                   : "+r"(n)
                   :
                   : FMA_CLOBBERS);
}

static int fma_lanes(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("fma")) return 8;
  return 0;
}
#else
static int fma_lanes(void) { return 0; }
#endif

/* GFLOP/s of one thread's FMA loop (2 FLOP per lane per FMA), best of 3;
 * NAN where the loop is not available (not x86-64 or no FMA). */
static double measure_fma_gflops(void) {
  int lanes = fma_lanes();
  if (!lanes) return NAN;
  double best = 0;
  for (int rep = 0; rep < 3; rep++) {
    long n = 200000;
    double t0 = cli_now_ms();
#if defined(__x86_64__)
    if (lanes == 16) fma_zmm(n);
    else fma_ymm(n);
#endif
    double s = (cli_now_ms() - t0) / 1e3;
    double g = s > 0 ? (double)n * 12 * lanes * 2 / s / 1e9 : 0;
    if (g > best) best = g;
  }
  return best;
}

/* GB/s of a one-thread memcpy over buffers larger than the caches. */
static double measure_copy_gbps(void) {
  size_t bytes = (size_t)64 << 20;
  char *a = malloc(bytes), *b = malloc(bytes);
  double best = NAN;
  if (a && b) {
    memset(a, 1, bytes);
    memset(b, 2, bytes); /* first touch outside the timing */
    best = 0;
    for (int rep = 0; rep < 3; rep++) {
      double t0 = cli_now_ms();
      memcpy(b, a, bytes);
      double s = (cli_now_ms() - t0) / 1e3;
      __asm__ volatile("" : : "r"(b) : "memory");
      double g = s > 0 ? 2.0 * (double)bytes / s / 1e9 : 0;
      if (g > best) best = g;
    }
  }
  free(a);
  free(b);
  return best;
}

void cli_prof_peaks(const cli_opts *o, int threads, cli_prof *p) {
  static double fma1 = -1, copy = -1; /* once per process */
  p->peak_gflops_given = o->peak_gflops > 0;
  p->peak_gbps_given = o->peak_gbps > 0;
  if (p->peak_gflops_given) {
    p->peak_gflops = o->peak_gflops;
  } else {
    if (fma1 < 0) fma1 = measure_fma_gflops();
    p->peak_gflops = fma1 * (threads > 0 ? threads : 1);
  }
  if (p->peak_gbps_given) {
    p->peak_gbps = o->peak_gbps;
  } else {
    if (copy < 0) copy = measure_copy_gbps();
    p->peak_gbps = copy;
  }
}

/* ---- rows ---- */

/* Ops that only move data: a row of them is a layout/copy step. */
static bool is_copy_op(const char *op) {
  static const char *const copies[] = {"Reorder", "Transpose", "Reshape", "Flatten",
                                       "Concat", "Split", "Slice", "Squeeze",
                                       "Unsqueeze", "Identity", "Expand", "Gather",
                                       "Pad", "Cast", "Shape"};
  for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++)
    if (strcmp(op, copies[i]) == 0) return true;
  return false;
}

static int cmp_rows(const void *a, const void *b) {
  const cli_prof_row *x = a, *y = b;
  return x->ms < y->ms ? 1 : x->ms > y->ms ? -1 : x->step - y->step;
}

ncc_status cli_prof_collect(ncc_module *m, const ncc_graph *g, int64_t batch,
                            cli_prof *p) {
  int nn = ncc_graph_num_nodes(g);
  int n = ncc_module_profile_get(m, NULL, 0);
  p->ev = ncc_calloc((size_t)n + 1, sizeof *p->ev);
  p->rows = ncc_calloc((size_t)nn + 1, sizeof *p->rows);
  p->info = ncc_calloc((size_t)nn + 1, sizeof *p->info);
  int *row_of = ncc_calloc((size_t)nn + 1, sizeof *row_of);
  if (!p->ev || !p->rows || !p->info || !row_of) {
    ncc_free(row_of, 0);
    return NCC_ERR_NOMEM;
  }
  p->n_ev = ncc_module_profile_get(m, p->ev, n);
  if (p->n_ev > n) p->n_ev = n;
  for (int i = 0; i < nn; i++) {
    row_of[i] = -1;
    ncc_module_node_info(m, i, batch, &p->info[i]);
  }
  double run_us = 0;
  p->runs = 0;
  for (int e = 0; e < p->n_ev; e++) {
    const ncc_profile_event *ev = &p->ev[e];
    if (ev->node < 0) {
      p->runs++;
      run_us += ev->dur_us;
      continue;
    }
    if (ev->thread >= 0) { /* a kernel thread's share */
      if (ev->thread + 1 > p->threads_used) p->threads_used = ev->thread + 1;
      continue;
    }
    if (ev->node >= nn) continue;
    if (row_of[ev->node] < 0) {
      cli_prof_row *r = &p->rows[p->n_rows];
      row_of[ev->node] = p->n_rows++;
      r->step = ev->node;
      r->host = ev->host != 0;
      ncc_module_step_of(m, ev->node, &r->kernel);
    }
    cli_prof_row *r = &p->rows[row_of[ev->node]];
    r->ms += ev->dur_us / 1e3;
    r->calls += 1;
  }
  ncc_free(row_of, 0);
  int runs = p->runs > 0 ? p->runs : 1;
  p->run_ms = run_us / 1e3 / runs;
  p->total_ms = 0;
  for (int k = 0; k < p->n_rows; k++) {
    cli_prof_row *r = &p->rows[k];
    r->ms /= runs;
    r->calls /= runs;
    p->total_ms += r->ms;
    bool all_copy = true;
    for (int i = 0; i < nn; i++) {
      const ncc_node_info *ni = &p->info[i];
      if (ni->step != r->step) continue;
      r->flops += ni->flops;
      r->bytes += ni->in_bytes + ni->out_bytes;
      all_copy = all_copy && is_copy_op(ni->op);
    }
    r->copy = all_copy;
    const ncc_node_info *root = &p->info[r->step];
    if (r->kernel)
      snprintf(r->name, sizeof r->name, "%s", r->kernel);
    else
      snprintf(r->name, sizeof r->name, "ref_%d_%s", r->step, root->op);
  }
  for (int k = 0; k < p->n_rows; k++) {
    cli_prof_row *r = &p->rows[k];
    double s = r->ms / 1e3;
    r->gflops = s > 0 ? r->flops / s / 1e9 : 0;
    r->gbps = s > 0 ? r->bytes / s / 1e9 : 0;
    r->share = p->total_ms > 0 ? r->ms / p->total_ms : 0;
    r->roofline = NAN;
    r->compute_bound = false;
    if (isfinite(p->peak_gflops) && isfinite(p->peak_gbps) && p->peak_gflops > 0 &&
        p->peak_gbps > 0 && r->ms > 0) {
      double ridge = p->peak_gflops / p->peak_gbps; /* FLOP per byte */
      double ai = r->bytes > 0 ? r->flops / r->bytes : INFINITY;
      r->compute_bound = r->flops > 0 && ai >= ridge;
      r->roofline = r->compute_bound ? r->gflops / p->peak_gflops : r->gbps / p->peak_gbps;
    }
  }
  qsort(p->rows, (size_t)p->n_rows, sizeof *p->rows, cmp_rows);
  return NCC_OK;
}

void cli_prof_free(cli_prof *p) {
  ncc_free(p->ev, 0);
  ncc_free(p->rows, 0);
  ncc_free(p->info, 0);
  memset(p, 0, sizeof *p);
}

/* "Conv+Add+Relu": the ops of a step's nodes, graph order. */
static void row_ops(const cli_prof *p, int nn, const cli_prof_row *r, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < nn && len + 1 < cap; i++)
    if (p->info[i].step == r->step)
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "+" : "", p->info[i].op);
  if (len >= cap && cap > 4) strcpy(buf + cap - 4, "...");
}

static const char *kind_of(const cli_prof_row *r) {
  return r->host ? "ref" : r->copy ? "copy" : "kernel";
}

void cli_prof_table(const cli_prof *p, const ncc_graph *g, FILE *f, int max_rows) {
  int nn = ncc_graph_num_nodes(g);
  fprintf(f, "\nprofile: %d run%s, %.4f ms per run in %d steps (run wall %.4f ms; the rest "
             "is the executor between steps)\n",
          p->runs, p->runs == 1 ? "" : "s", p->total_ms, p->n_rows, p->run_ms);
  fprintf(f, "peaks: %.1f GFLOP/s FMA (%s), %.1f GB/s (%s)\n", p->peak_gflops,
          p->peak_gflops_given ? "--peak-gflops" : "measured: 1 thread x threads",
          p->peak_gbps, p->peak_gbps_given ? "--peak-gbps" : "measured: 1-thread copy");
  fprintf(f, "%-28s %-6s %-24s %-16s %9s %6s %5s %8s %8s %9s\n", "kernel", "kind", "ops",
          "shape", "ms/run", "share", "calls", "GFLOP/s", "GB/s", "roofline");
  char ops[25], name[29], t[CLI_TEXT_MAX];
  int shown = 0;
  for (int k = 0; k < p->n_rows; k++) {
    const cli_prof_row *r = &p->rows[k];
    if (max_rows > 0 && shown == max_rows) {
      double rest = 0;
      for (int j = k; j < p->n_rows; j++) rest += p->rows[j].ms;
      fprintf(f, "%-28s %-6s %-24s %-16s %9.4f %5.1f%%\n", "(the rest)", "", "", "", rest,
              p->total_ms > 0 ? 100 * rest / p->total_ms : 0);
      break;
    }
    row_ops(p, nn, r, ops, sizeof ops);
    snprintf(name, sizeof name, "%s", cli_text(r->name, t, sizeof t));
    char roof[32] = "-";
    if (isfinite(r->roofline))
      snprintf(roof, sizeof roof, "%s %3.0f%%", r->compute_bound ? "fma" : "mem",
               100 * r->roofline);
    fprintf(f, "%-28s %-6s %-24s %-16s %9.4f %5.1f%% %5.0f %8.2f %8.2f %9s\n", name,
            kind_of(r), ops, p->info[r->step].shape, r->ms, 100 * r->share, r->calls,
            r->gflops, r->gbps, roof);
    shown++;
  }
}

/* A JSON string on f (cli_json_string writes stdout). */
static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
    else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
    else fputc(*c, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
  else fprintf(f, "null");
}

/* "ops", "nodes", "shapes" of a step, graph order. */
static void json_members(FILE *f, const cli_prof *p, int nn, int step) {
  static const char *const keys[] = {"ops", "nodes", "shapes"};
  for (int kk = 0; kk < 3; kk++) {
    fprintf(f, "%s\"%s\": [", kk ? ", " : "", keys[kk]);
    int c = 0;
    for (int i = 0; i < nn; i++) {
      const ncc_node_info *ni = &p->info[i];
      if (ni->step != step) continue;
      if (kk == 2 && i != step) continue; /* the step's output: its root's */
      if (c++) fprintf(f, ", ");
      json_str(f, kk == 0 ? ni->op : kk == 1 ? ni->name : ni->shape);
    }
    fprintf(f, "]");
  }
}

void cli_prof_json(const cli_prof *p, const ncc_graph *g, FILE *f) {
  int nn = ncc_graph_num_nodes(g);
  fprintf(f, "\"profile\": {\"runs\": %d, \"total_ms\": ", p->runs);
  json_num(f, p->total_ms);
  fprintf(f, ", \"run_ms\": ");
  json_num(f, p->run_ms);
  fprintf(f, ", \"peak_gflops\": ");
  json_num(f, p->peak_gflops);
  fprintf(f, ", \"peak_gbps\": ");
  json_num(f, p->peak_gbps);
  fprintf(f, ", \"peaks_given\": %s, \"threads_used\": %d, \"kernels\": [",
          p->peak_gflops_given && p->peak_gbps_given ? "true" : "false", p->threads_used);
  for (int k = 0; k < p->n_rows; k++) {
    const cli_prof_row *r = &p->rows[k];
    fprintf(f, "%s{\"name\": ", k ? ", " : "");
    json_str(f, r->name);
    fprintf(f, ", ");
    json_members(f, p, nn, r->step);
    fprintf(f, ", \"ms\": ");
    json_num(f, r->ms);
    fprintf(f, ", \"share\": ");
    json_num(f, r->share);
    fprintf(f, ", \"calls\": ");
    json_num(f, r->calls);
    fprintf(f, ", \"flops\": ");
    json_num(f, r->flops);
    fprintf(f, ", \"bytes\": ");
    json_num(f, r->bytes);
    fprintf(f, ", \"gflops\": ");
    json_num(f, r->gflops);
    fprintf(f, ", \"gbps\": ");
    json_num(f, r->gbps);
    fprintf(f, ", \"roofline\": ");
    json_num(f, r->roofline);
    fprintf(f, ", \"bound\": %s, \"ref\": %s, \"kind\": \"%s\", \"node\": %d}",
            !isfinite(r->roofline) ? "null" : r->compute_bound ? "\"fma\"" : "\"mem\"",
            r->host ? "true" : "false", kind_of(r), r->step);
  }
  fprintf(f, "]}");
}

/* ---- the Chrome trace ---- */

/* Lanes: tid 0 is the calling thread (runs, steps, and its own kernel
 * shares, nested inside them); tid w is pool worker w. */
ncc_status cli_trace_write(ncc_afile *a, const cli_prof *p, const ncc_graph *g) {
  FILE *f = a->f;
  int nn = ncc_graph_num_nodes(g);
  fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
  fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
             "\"args\": {\"name\": \"ncc\"}}");
  for (int t = 0; t < (p->threads_used > 1 ? p->threads_used : 1); t++)
    fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
               "\"args\": {\"name\": \"%s %d\"}}",
            t, t ? "worker" : "caller", t);
  for (int e = 0; e < p->n_ev; e++) {
    const ncc_profile_event *ev = &p->ev[e];
    fprintf(f, ",\n{\"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, ",
            ev->thread >= 0 ? ev->thread : 0, ev->start_us, ev->dur_us);
    if (ev->node < 0) {
      fprintf(f, "\"name\": \"run %d\", \"cat\": \"run\", \"args\": {\"run\": %d}}", ev->run,
              ev->run);
      continue;
    }
    const char *kname = NULL;
    int step = ev->node < nn ? ev->node : 0;
    for (int k = 0; k < p->n_rows; k++)
      if (p->rows[k].step == step) kname = p->rows[k].name;
    fprintf(f, "\"name\": ");
    json_str(f, kname ? kname : "?");
    fprintf(f, ", \"cat\": \"%s\", \"args\": {\"run\": %d, ",
            ev->thread >= 0 ? "thread" : ev->host ? "ref" : "kernel", ev->run);
    if (ev->thread >= 0) fprintf(f, "\"thread\": %d, ", ev->thread);
    json_members(f, p, nn, step);
    fprintf(f, "}}");
  }
  fprintf(f, "\n]}\n");
  return ncc_afile_commit(a);
}
