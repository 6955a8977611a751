/* bench/stream_triad.c — a STREAM-like bandwidth reference: copy (b = a)
 * and triad (a = b + s * c) over float arrays much larger than the caches,
 * split statically over threads (as ncc's pool splits a parallel loop),
 * best of several repetitions. The bandwidth counts the bytes the loop must
 * move (copy: 2 per element, triad: 3), as STREAM does.
 *
 *   cc -O3 -march=native -pthread bench/stream_triad.c -o stream_triad
 *   ./stream_triad [-n ELEMENTS] [-t THREADS] [-r REPS]
 *
 * Prints one JSON object; bench/fusion_bench.py runs it beside `ncc bench`
 * so that fused elementwise chains are judged against it in the same run.
 * Threads default to NCC_NUM_THREADS, else the online cores.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct job {
  float *a, *b, *c;
  size_t lo, hi;
  int kind; /* 0 init, 1 copy, 2 triad */
} job;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *work(void *p) {
  job *j = p;
  float *a = j->a, *b = j->b, *c = j->c;
  const float s = 3.0f;
  switch (j->kind) {
  case 0:
    for (size_t i = j->lo; i < j->hi; i++) a[i] = 1.0f, b[i] = 2.0f, c[i] = 0.5f;
    break;
  case 1:
    for (size_t i = j->lo; i < j->hi; i++) b[i] = a[i];
    break;
  default:
    for (size_t i = j->lo; i < j->hi; i++) a[i] = b[i] + s * c[i];
    break;
  }
  return NULL;
}

/* Run `kind` on nt threads; returns seconds. */
static double run(job *jobs, pthread_t *th, int nt, int kind) {
  double t0 = now();
  for (int t = 0; t < nt; t++) {
    jobs[t].kind = kind;
    if (pthread_create(&th[t], NULL, work, &jobs[t]) != 0) {
      fprintf(stderr, "stream_triad: cannot start a thread\n");
      exit(1);
    }
  }
  for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
  return now() - t0;
}

int main(int argc, char **argv) {
  size_t n = (size_t)1 << 24;
  int nt = 0, reps = 10;
  const char *env = getenv("NCC_NUM_THREADS");
  if (env) nt = atoi(env);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-n")) n = (size_t)strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "-t")) nt = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: stream_triad [-n ELEMENTS] [-t THREADS] [-r REPS]\n");
      return 1;
    }
  }
  if (nt <= 0) nt = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (nt <= 0) nt = 1;
  if (reps < 1) reps = 1;
  float *a = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  float *b = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  float *c = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  job *jobs = calloc((size_t)nt, sizeof *jobs);
  pthread_t *th = calloc((size_t)nt, sizeof *th);
  if (!a || !b || !c || !jobs || !th) {
    fprintf(stderr, "stream_triad: out of memory\n");
    return 1;
  }
  for (int t = 0; t < nt; t++) {
    jobs[t] = (job){a, b, c, n * (size_t)t / (size_t)nt, n * (size_t)(t + 1) / (size_t)nt, 0};
  }
  run(jobs, th, nt, 0); /* first touch by the threads that use the pages */
  double best_copy = 1e30, best_triad = 1e30;
  for (int r = 0; r < reps; r++) {
    double tc = run(jobs, th, nt, 1), tt = run(jobs, th, nt, 2);
    if (tc < best_copy) best_copy = tc;
    if (tt < best_triad) best_triad = tt;
  }
  double mb = (double)n * sizeof(float) / 1e9;
  printf("{\"elements\": %zu, \"threads\": %d, \"copy_gbps\": %.3f, \"triad_gbps\": %.3f}\n",
         n, nt, 2 * mb / best_copy, 3 * mb / best_triad);
  free(a);
  free(b);
  free(c);
  free(jobs);
  free(th);
  return 0;
}
