/* runtime/threadpool.c — persistent workers with spin-then-sleep waiting.
 *
 * A job is published under the mutex together with a new generation number;
 * workers spin on the generation for a short while (a launch that follows
 * another one quickly is then picked up without a syscall) and otherwise
 * sleep on a condition variable. Job fields are read under the mutex, so a
 * worker never mixes fields of two jobs.
 *
 * The job's shares (tid 0..nth-1) are claimed, not assigned: the caller and
 * every awake worker take the next unclaimed share from one atomic ticket
 * until none is left. On a shared machine a worker may be descheduled or
 * asleep; with static assignment every kernel would then wait for it, while
 * here the caller simply runs its share too. The ticket holds the job's
 * generation in its high half, so a late worker can never claim a share of
 * a newer job with the older job's function.
 */
#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* Spin iterations before sleeping: a few microseconds. Kept short because
 * the machines this runs on are often shared. */
#define SPIN_ITERS 4000

struct ncc_threadpool {
  int n; /* threads in all, caller included */
  pthread_t *threads;
  int n_started;
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_done;
  pthread_mutex_t run_mu; /* one job at a time */
  atomic_uint gen;
  atomic_uint_least64_t ticket; /* (generation << 32) | next share */
  atomic_int done;              /* shares finished for the current job */
  atomic_int stop;
  ncc_task_fn fn;
  void *ctx;
  int nth;
};

/* This thread's index in its pool (0: not a worker, i.e. a caller); the
 * profiler puts each kernel share on its thread's lane. */
static _Thread_local int worker_index;

int ncc_threadpool_worker_index(void) { return worker_index; }

typedef struct worker_arg {
  ncc_threadpool *p;
  int tid;
} worker_arg;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Wait until the generation moves past `seen`; returns the new one. */
static unsigned wait_for_job(ncc_threadpool *p, unsigned seen) {
  for (int i = 0; i < SPIN_ITERS; i++) {
    if (atomic_load_explicit(&p->gen, memory_order_acquire) != seen ||
        atomic_load(&p->stop))
      break;
    cpu_relax();
  }
  pthread_mutex_lock(&p->mu);
  while (atomic_load(&p->gen) == seen && !atomic_load(&p->stop))
    pthread_cond_wait(&p->cv_work, &p->mu);
  return atomic_load(&p->gen); /* mutex still held: caller reads the job */
}

/* Claim the next share of job `gen`; -1 when none is left (or the job is
 * not current any more). */
static int claim(ncc_threadpool *p, unsigned gen, int nth) {
  uint_least64_t t = atomic_load_explicit(&p->ticket, memory_order_acquire);
  for (;;) {
    if ((unsigned)(t >> 32) != gen || (int)(t & 0xffffffffu) >= nth) return -1;
    if (atomic_compare_exchange_weak_explicit(&p->ticket, &t, t + 1,
                                              memory_order_acq_rel,
                                              memory_order_acquire))
      return (int)(t & 0xffffffffu);
  }
}

/* Run claimed shares of job `gen` until none is left. */
static void run_shares(ncc_threadpool *p, unsigned gen, ncc_task_fn fn,
                       void *ctx, int nth, int signal_done) {
  int share;
  while ((share = claim(p, gen, nth)) >= 0) {
    fn(ctx, share, nth);
    if (atomic_fetch_add(&p->done, 1) + 1 == nth && signal_done) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->cv_done);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

static void *worker_main(void *arg) {
  worker_arg a = *(worker_arg *)arg;
  ncc_free(arg, sizeof(worker_arg));
  ncc_threadpool *p = a.p;
  worker_index = a.tid;
  unsigned seen = 0;
  for (;;) {
    seen = wait_for_job(p, seen);
    int stop = atomic_load(&p->stop);
    ncc_task_fn fn = p->fn;
    void *ctx = p->ctx;
    int nth = p->nth;
    pthread_mutex_unlock(&p->mu);
    if (stop) return NULL;
    if (a.tid >= nth) continue; /* the job wants fewer threads */
    run_shares(p, seen, fn, ctx, nth, 1);
  }
}

ncc_status ncc_threadpool_create(int nthreads, ncc_threadpool **out) {
  *out = NULL;
  if (nthreads < 1) nthreads = 1;
  ncc_threadpool *p = ncc_calloc(1, sizeof *p);
  if (!p) return NCC_ERR_NOMEM;
  p->n = nthreads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_mutex_init(&p->run_mu, NULL);
  pthread_cond_init(&p->cv_work, NULL);
  pthread_cond_init(&p->cv_done, NULL);
  atomic_init(&p->gen, 0);
  atomic_init(&p->ticket, 0);
  atomic_init(&p->done, 0);
  atomic_init(&p->stop, 0);
  if (nthreads > 1) {
    p->threads = ncc_calloc((size_t)nthreads - 1, sizeof(pthread_t));
    if (!p->threads) {
      ncc_threadpool_free(p);
      return NCC_ERR_NOMEM;
    }
  }
  for (int t = 1; t < nthreads; t++) {
    worker_arg *a = ncc_malloc(sizeof *a);
    if (!a) {
      ncc_threadpool_free(p);
      return NCC_ERR_NOMEM;
    }
    a->p = p;
    a->tid = t;
    if (pthread_create(&p->threads[t - 1], NULL, worker_main, a) != 0) {
      ncc_free(a, sizeof *a);
      ncc_threadpool_free(p);
      return ncc_error(NCC_ERR_INTERNAL, "thread pool: cannot start thread");
    }
    p->n_started++;
  }
  *out = p;
  return NCC_OK;
}

void ncc_threadpool_free(ncc_threadpool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  for (int t = 0; t < p->n_started; t++) pthread_join(p->threads[t], NULL);
  ncc_free(p->threads, 0);
  pthread_mutex_destroy(&p->mu);
  pthread_mutex_destroy(&p->run_mu);
  pthread_cond_destroy(&p->cv_work);
  pthread_cond_destroy(&p->cv_done);
  ncc_free(p, sizeof *p);
}

int ncc_threadpool_size(const ncc_threadpool *p) { return p ? p->n : 1; }

void ncc_threadpool_run(ncc_threadpool *p, ncc_task_fn fn, void *ctx,
                        int nth) {
  if (!p || nth <= 1 || p->n <= 1 || pthread_mutex_trylock(&p->run_mu) != 0) {
    fn(ctx, 0, 1);
    return;
  }
  if (nth > p->n) nth = p->n;
  pthread_mutex_lock(&p->mu);
  p->fn = fn;
  p->ctx = ctx;
  p->nth = nth;
  unsigned gen = atomic_load(&p->gen) + 1;
  atomic_store(&p->done, 0);
  atomic_store_explicit(&p->ticket, (uint_least64_t)gen << 32,
                        memory_order_release);
  atomic_store_explicit(&p->gen, gen, memory_order_release);
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);

  run_shares(p, gen, fn, ctx, nth, 0);

  for (int i = 0; i < SPIN_ITERS && atomic_load(&p->done) < nth; i++)
    cpu_relax();
  pthread_mutex_lock(&p->mu);
  while (atomic_load(&p->done) < nth) pthread_cond_wait(&p->cv_done, &p->mu);
  pthread_mutex_unlock(&p->mu);
  pthread_mutex_unlock(&p->run_mu);
}

int ncc_threadpool_default_threads(void) {
  /* no environment variable: the caller's count comes through
   * ncc_options.num_threads (the driver reads NCC_NUM_THREADS) */
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 && n <= 1024 ? (int)n : 1;
}

static ncc_threadpool *global_pool;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static _Atomic int global_want; /* the first caller's count */

static void global_init(void) {
  /* Allocated with plain malloc paths via the hook; the pool lives for the
   * process (workers sleep when idle), so it is never freed. */
  /* exactly the first caller's count, as NCC_NUM_THREADS sized it when
   * the library read it: idle extra workers would still wake per job */
  int want = atomic_load(&global_want);
  int n = want > 0 ? want : ncc_threadpool_default_threads();
  if (ncc_threadpool_create(n, &global_pool) != NCC_OK) global_pool = NULL;
}

ncc_threadpool *ncc_threadpool_global_sized(int want) {
  if (want > 0 && want <= 1024) {
    int zero = 0;
    atomic_compare_exchange_strong(&global_want, &zero, want);
  }
  pthread_once(&global_once, global_init);
  return global_pool;
}

ncc_threadpool *ncc_threadpool_global(void) { return ncc_threadpool_global_sized(0); }
