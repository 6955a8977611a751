/* bench/fma_peak.c — the machine's f32 FMA peak, the ceiling against which
 * SGEMM GFLOP/s are read.
 *
 *   fma_peak [--threads T] [--seconds S]
 *
 * Each thread runs 12 independent chains of vector FMAs (enough to cover
 * FMA latency x issue width) on the widest vectors the CPU has (AVX-512 or
 * AVX2, chosen at run time), so the loop is bound by FMA throughput alone.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAINS 12 /* independent accumulators: FMA latency 4 x 2 ports + slack */
#define INNER 4096

typedef struct job {
  double seconds;
  double flops;
  int lanes;
} job;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(__x86_64__)
/* The FMA loops are written in assembly so that neither the compiler's
 * flags nor its choice of vector width can change what is measured; the
 * widest one the CPU supports is picked at run time. */
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

#define CLOBBERS                                                               \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",       \
      "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "cc"

static void fma_zmm(long n) {
  __asm__ volatile("vpxord %%zmm12, %%zmm12, %%zmm12\n\t"
                   "vpxord %%zmm13, %%zmm13, %%zmm13\n\t"
                   "1:\n\t" FMA12("zmm") "dec %0\n\t"
                   "jnz 1b\n\t"
                   "vzeroupper"
                   : "+r"(n)
                   :
                   : CLOBBERS);
}

static void fma_ymm(long n) {
  __asm__ volatile("vxorps %%ymm12, %%ymm12, %%ymm12\n\t"
                   "vxorps %%ymm13, %%ymm13, %%ymm13\n\t"
                   "1:\n\t" FMA12("ymm") "dec %0\n\t"
                   "jnz 1b\n\t"
                   "vzeroupper"
                   : "+r"(n)
                   :
                   : CLOBBERS);
}

static int pick_lanes(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("fma")) return 8;
  return 0;
}

static void run_fma(int lanes, long n) {
  if (lanes == 16)
    fma_zmm(n);
  else
    fma_ymm(n);
}
#else
static int pick_lanes(void) { return 0; }
static void run_fma(int lanes, long n) { (void)lanes, (void)n; }
#endif

static void *worker(void *arg) {
  job *j = arg;
  double t0 = now(), iters = 0;
  while (now() - t0 < j->seconds) {
    run_fma(j->lanes, INNER);
    iters += INNER;
  }
  j->flops = iters * CHAINS * j->lanes * 2.0 / (now() - t0);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1;
  double seconds = 1.0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
      seconds = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--threads T] [--seconds S]\n", argv[0]);
      return 1;
    }
  }
  if (threads < 1 || threads > 1024) return 1;
  int lanes = pick_lanes();
  if (!lanes) {
    fprintf(stderr, "fma_peak: no x86 FMA on this machine\n");
    return 1;
  }
  pthread_t *th = calloc((size_t)threads, sizeof *th);
  job *jobs = calloc((size_t)threads, sizeof *jobs);
  for (int t = 0; t < threads; t++) {
    jobs[t].seconds = seconds;
    jobs[t].lanes = lanes;
    pthread_create(&th[t], NULL, worker, &jobs[t]);
  }
  double total = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(th[t], NULL);
    total += jobs[t].flops;
  }
  printf("fma peak: %.1f GFLOP/s f32 on %d thread(s), %d-lane vectors\n",
         total / 1e9, threads, lanes);
  free(th);
  free(jobs);
  return 0;
}
