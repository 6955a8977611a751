/* bench/sgemm/sgemm_bench.c — ncc's MatMul kernel against OpenBLAS and
 * oneDNN SGEMM, side by side in one run (ratios, not absolute numbers, are
 * what this noisy shared machine can support).
 *
 *   sgemm_bench [--threads T] [--sizes 256,512,1024,2048] [--reps R] [--tol E]
 *
 * C = A x B, square n x n, row-major f32. ncc compiles a one-node MatMul
 * graph whose B is a constant (packed once at compile time, as weights
 * are); OpenBLAS (cblas_sgemm) and oneDNN (dnnl_sgemm) get the same arrays
 * each call and pack internally. Reported: median GFLOP/s over R runs after
 * a warm-up, and the largest relative difference from the reference:
 * OpenBLAS's result, or without OpenBLAS a plain double-precision loop.
 * Every call's output (warm-ups included, ncc's and oneDNN's) is checked,
 * not only the last: a difference over --tol (relative to the largest
 * |reference| element, default 1e-4) is reported and the exit status is 1.
 * ncc gets the thread count through ncc_options.num_threads (libncc reads
 * no environment); OpenBLAS and oneDNN through OPENBLAS_NUM_THREADS and
 * OMP_NUM_THREADS, fixed by re-executing itself, because those libraries
 * read them when they load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/ir.h"
#include "ir/shape.h"
#ifdef NCC_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef NCC_HAVE_DNNL
#include <dnnl.h>
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

static void fill(float *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
}

static double max_rel_diff(const float *a, const float *b, size_t n) {
  double m = 0, scale = 1e-30;
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(a[i]));
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]) / scale);
  return m;
}

#ifndef NCC_HAVE_OPENBLAS
/* The reference without OpenBLAS: C = A B in double, i-k-j order. */
static void naive_sgemm(int64_t n, const float *a, const float *b, float *c) {
  double *row = malloc((size_t)n * sizeof *row);
  if (!row) {
    fprintf(stderr, "sgemm_bench: out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < n; i++) {
    for (int64_t j = 0; j < n; j++) row[j] = 0;
    for (int64_t k = 0; k < n; k++) {
      double aik = a[i * n + k];
      for (int64_t j = 0; j < n; j++) row[j] += aik * b[k * n + j];
    }
    for (int64_t j = 0; j < n; j++) c[i * n + j] = (float)row[j];
  }
  free(row);
}
#endif

static double tol = 1e-4;
static int n_failed;

/* Check one call's output against the reference: every call, so a result
 * that is wrong on one repetition only (a stale buffer, a race) fails. */
static double check(const char *who, int64_t n, int rep, const float *ref, const float *got) {
  double d = max_rel_diff(ref, got, (size_t)(n * n));
  if (!(d <= tol)) {
    fprintf(stderr, "sgemm_bench: FAILED: %s n=%lld call %d: max_rdiff %.3g > tol %.3g\n", who,
            (long long)n, rep, d, tol);
    n_failed++;
  }
  return d;
}

/* One-node graph Y = MatMul(A, B) with B constant. */
static ncc_graph *matmul_graph(int64_t n, const float *b) {
  ncc_graph *g = ncc_graph_new("sgemm");
  ncc_shape s = {.rank = 2, .d = {n, n}};
  ncc_value *a = ncc_graph_add_value(g, "A", NCC_VAL_INPUT, NCC_DT_F32, &s);
  ncc_value *bv = ncc_graph_add_const(g, "B", NCC_DT_F32, &s, b);
  ncc_value *in[2] = {a, bv};
  ncc_node *node = ncc_graph_add_node(g, NCC_OP_MATMUL, "mm", 2, in, 1);
  ncc_value *y = ncc_graph_add_value(g, "Y", NCC_VAL_NODE, NCC_DT_UNDEF, NULL);
  if (!a || !bv || !node || !y) return NULL;
  ncc_node_set_output(node, 0, y);
  if (ncc_graph_add_input(g, a) || ncc_graph_add_output(g, y) ||
      ncc_infer_graph(g))
    return NULL;
  return g;
}

typedef struct result {
  double gflops, diff, compile_ms;
} result;

static result bench_ncc(int64_t n, const float *a, const float *b,
                        const float *ref, int reps, int threads) {
  result r = {0, 0, 0};
  ncc_graph *g = matmul_graph(n, b);
  ncc_module *m = NULL;
  ncc_options o;
  ncc_options_init(&o);
  o.num_threads = threads;
  double t0 = now();
  if (!g || ncc_module_compile_opts(g, "cpu", &o, &m) != NCC_OK) {
    fprintf(stderr, "sgemm_bench: ncc: %s\n", ncc_error_message());
    exit(1);
  }
  r.compile_ms = 1e3 * (now() - t0);
  ncc_tensor in = {.dtype = NCC_DT_F32, .rank = 2, .dims = {n, n}, .data = (void *)a};
  ncc_tensor out;
  double *t = calloc((size_t)reps, sizeof *t);
  for (int i = -2; i < reps; i++) {
    double s = now();
    if (ncc_module_run(m, &in, 1, &out, 1) != NCC_OK) {
      fprintf(stderr, "sgemm_bench: ncc run: %s\n", ncc_error_message());
      exit(1);
    }
    if (i >= 0) t[i] = now() - s;
    r.diff = fmax(r.diff, check("ncc", n, i + 2, ref, out.data));
    ncc_tensor_free(&out);
  }
  r.gflops = 2.0 * (double)n * (double)n * (double)n / median(t, reps) / 1e9;
  free(t);
  ncc_module_free(m);
  ncc_graph_free(g);
  return r;
}

#ifdef NCC_HAVE_OPENBLAS
static double bench_openblas(int64_t n, const float *a, const float *b,
                             float *c, int reps) {
  double *t = calloc((size_t)reps, sizeof *t);
  for (int i = -2; i < reps; i++) {
    double s = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n,
                (int)n, 1.0f, a, (int)n, b, (int)n, 0.0f, c, (int)n);
    if (i >= 0) t[i] = now() - s;
  }
  double gf = 2.0 * (double)n * (double)n * (double)n / median(t, reps) / 1e9;
  free(t);
  return gf;
}
#endif

#ifdef NCC_HAVE_DNNL
static double bench_dnnl(int64_t n, const float *a, const float *b, float *c,
                         const float *ref, double *diff, int reps) {
  double *t = calloc((size_t)reps, sizeof *t);
  *diff = 0;
  for (int i = -2; i < reps; i++) {
    memset(c, 0xff, (size_t)(n * n) * sizeof *c); /* NaN: a skipped write shows */
    double s = now();
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    if (i >= 0) t[i] = now() - s;
    *diff = fmax(*diff, check("onednn", n, i + 2, ref, c));
  }
  double gf = 2.0 * (double)n * (double)n * (double)n / median(t, reps) / 1e9;
  free(t);
  return gf;
}
#endif

/* Fix every library's thread count before any of them loads its settings. */
static void pin_threads(int threads, char **argv) {
  if (getenv("NCC_SGEMM_BENCH_CHILD")) return;
  char buf[16];
  snprintf(buf, sizeof buf, "%d", threads);
  setenv("OPENBLAS_NUM_THREADS", buf, 1);
  setenv("OMP_NUM_THREADS", buf, 1);
  setenv("NCC_SGEMM_BENCH_CHILD", "1", 1);
  execv("/proc/self/exe", argv);
  perror("sgemm_bench: re-exec"); /* fall through: run with what we have */
}

int main(int argc, char **argv) {
  int threads = 2, reps = 10;
  const char *sizes = "256,512,1024,2048";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
      sizes = argv[++i];
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--tol") == 0 && i + 1 < argc)
      tol = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--threads T] [--sizes a,b,...] [--reps R] [--tol E]\n",
              argv[0]);
      return 1;
    }
  }
  if (threads < 1 || reps < 1 || !(tol > 0)) return 1;
  pin_threads(threads, argv);
  printf("sgemm (row-major f32, C = A B), %d thread(s), median of %d\n", threads, reps);
  printf("%6s %10s %10s %10s %9s %9s %10s %10s\n", "n", "ncc", "openblas",
         "onednn", "ncc/oblas", "ncc/dnnl", "compile_ms", "max_rdiff");
  for (const char *p = sizes; *p;) {
    int64_t n = strtoll(p, (char **)&p, 10);
    if (*p == ',') p++;
    if (n <= 0) break;
    size_t nn = (size_t)(n * n);
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    float *c = calloc(nn, sizeof *c), *ref = malloc(nn * sizeof *ref);
    if (!a || !b || !c || !ref) {
      fprintf(stderr, "sgemm_bench: out of memory\n");
      return 1;
    }
    fill(a, nn, 1);
    fill(b, nn, 2);
    double gb = NAN, gd = NAN, dd = 0;
#ifdef NCC_HAVE_OPENBLAS
    gb = bench_openblas(n, a, b, c, reps);
    memcpy(ref, c, nn * sizeof *ref);
#else
    naive_sgemm(n, a, b, ref);
#endif
#ifdef NCC_HAVE_DNNL
    gd = bench_dnnl(n, a, b, c, ref, &dd, reps);
#endif
    result r = bench_ncc(n, a, b, ref, reps, threads);
    printf("%6lld %10.1f %10.1f %10.1f %9.2f %9.2f %10.1f %10.2g\n", (long long)n,
           r.gflops, gb, gd, r.gflops / gb, r.gflops / gd, r.compile_ms,
           fmax(r.diff, dd));
    fflush(stdout);
    free(a);
    free(b);
    free(c);
    free(ref);
  }
  if (n_failed) {
    fprintf(stderr, "sgemm_bench: %d call(s) differ from the reference by more than %.3g\n",
            n_failed, tol);
    return 1;
  }
  return 0;
}
