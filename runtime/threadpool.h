/* runtime/threadpool.h — a persistent thread pool for CPU kernels.
 *
 * Workers are created once and wait (spin briefly, then sleep) for jobs, so a
 * kernel launch costs no thread creation and no allocation. A job is one
 * function called as fn(ctx, tid, nth) for every tid in [0, nth); the shares
 * are claimed by whichever threads are awake, the caller included, and the
 * call returns when every share has finished. Kernels split their outermost
 * parallel loop statically by (tid, nth); which thread runs a share does not
 * matter.
 */
#ifndef NCC_THREADPOOL_H
#define NCC_THREADPOOL_H

#include "../ir/ir.h"

typedef struct ncc_threadpool ncc_threadpool;
typedef void (*ncc_task_fn)(void *ctx, int tid, int nth);

/* A pool of `nthreads` threads in all (the caller counts as one). */
ncc_status ncc_threadpool_create(int nthreads, ncc_threadpool **out);
void ncc_threadpool_free(ncc_threadpool *p);
int ncc_threadpool_size(const ncc_threadpool *p);

/* Run fn on min(nth, size) threads and wait. p NULL or nth <= 1 runs fn
 * inline. When another thread is using the pool at the same moment, the job
 * runs inline on the caller (correct, just not parallel). */
void ncc_threadpool_run(ncc_threadpool *p, ncc_task_fn fn, void *ctx, int nth);

/* The process-wide pool, created on first use with `want` threads (the
 * first caller's ncc_options.num_threads; 0: one per online core). NULL
 * when it could not be created; callers then run serially. */
ncc_threadpool *ncc_threadpool_global(void);
ncc_threadpool *ncc_threadpool_global_sized(int want);

/* The calling thread's index in the pool that started it: 1.. for a
 * worker, 0 for any other thread (a caller runs shares as thread 0). */
int ncc_threadpool_worker_index(void);

/* One per online core (no environment variable is read). */
int ncc_threadpool_default_threads(void);

#endif /* NCC_THREADPOOL_H */
