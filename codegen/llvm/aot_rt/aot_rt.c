/* codegen/llvm/aot_rt/aot_rt.c — the AOT runtime, part 2 of 2: the code of
 * a generated library (docs/AOT.md) after its tables: input checks, the
 * binding of symbolic dims, the scratch plan, the thread pool, the steps
 * and the public API.
 *
 * Not a translation unit of its own: it is compiled after aot_rt.h and a
 * model's tables (the NCC_* macros, ncc_slots, ncc_steps, ncc_kernels, ...),
 * in the glue `--emit=lib` writes (codegen/llvm/aot_lib.c, which gets this
 * text embedded at build time) and in the unit test tests/aot_rt/.
 * Everything but the NCC_API functions is static, so two models link into
 * one program.
 *
 * The scratch plan is the compiler's own packer, passes/memplan_core.c,
 * included here (and inlined by the embedding) with static linkage.
 *
 * The thread pool is its own, not runtime/threadpool.c: that pool is
 * libncc's (extern API, its own header, a claim-the-next-share ticket and
 * spinning tuned for the JIT) and lives in runtime/, which neither codegen/
 * nor a library that needs only libc and libpthread may depend on; here a
 * pool is a few fields of the model, split statically by (tid, nth), and
 * static like the rest.
 */
#include "aot_rt.h"

#define NCC_MEMPLAN_CORE_API static
#include "../../../passes/memplan_core.c"

/* Work below which another thread costs more than it brings. */
#define NCC_ELEMS_PER_THREAD 16384.0
#define NCC_MAX_THREADS 64
/* Largest size in bytes: kernels index with int64 and pointers subtract
 * into ptrdiff_t, so a size past this is refused, never wrapped. */
#define NCC_SIZE_LIMIT_ ((size_t)(PTRDIFF_MAX < INT64_MAX ? PTRDIFF_MAX : INT64_MAX))
#define NCC_SIZE_LIMIT (NCC_SIZE_LIMIT_ < SIZE_MAX ? NCC_SIZE_LIMIT_ : SIZE_MAX)

typedef struct ncc_worker {
  struct NCC_MODEL *m;
  int tid;
} ncc_worker;

struct NCC_MODEL {
  const void *in[NCC_NUM_IN + 1];
  int64_t in_dims[NCC_NUM_IN + 1][8];
  int in_set[NCC_NUM_IN + 1];
  void *out[NCC_NUM_OUT + 1];
  size_t out_cap[NCC_NUM_OUT + 1];
  int64_t syms[NCC_NUM_SYMS + 1];
  int bound[NCC_NUM_SYMS + 1];
  int64_t plan_syms[NCC_NUM_SYMS + 1];
  int planned;
  ncc_membuf tmp[NCC_NUM_TMP + 1]; /* scratch sizes, lifetimes, offsets */
  void *plan_work;                 /* the packer's scratch (lifetimes only) */
  void *arena;
  size_t arena_cap;
  char err[256];
  int valid;          /* the last run succeeded: outputs are readable */
  atomic_int busy;    /* a call is in progress (concurrent ones: BUSY) */
  /* the thread pool: nthreads in all, the caller being thread 0 */
  int nthreads, pool_init;
  pthread_t *threads;
  ncc_worker *workers;
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  unsigned gen;
  int pending, stop;
  ncc_kfn job_fn;
  void *const *job_bufs;
  int job_nth;
};

static int ncc_fail(struct NCC_MODEL *m, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->err, sizeof m->err, fmt, ap);
  va_end(ap);
  return code;
}

static int64_t ncc_dim(const struct NCC_MODEL *m, int64_t d) {
  return d >= 0 ? d : m->syms[-d - 1];
}

/* Checked size arithmetic: 0 when the result would pass NCC_SIZE_LIMIT. */
static int ncc_mul(size_t a, size_t b, size_t *out) {
  if (a && b > NCC_SIZE_LIMIT / a) return 0;
  *out = a * b;
  return 1;
}

static int ncc_add(size_t a, size_t b, size_t *out) {
  if (a > NCC_SIZE_LIMIT || b > NCC_SIZE_LIMIT - a) return 0;
  *out = a + b;
  return 1;
}

/* Elements times esize of dims[0..rank): 0 when a dim is 0, but even
 * then the product of the nonzero dims must fit (kernels form strides
 * from them); fails on a negative dim or past NCC_SIZE_LIMIT. */
static int ncc_size(size_t esize, int rank, const int64_t *dims, size_t *out) {
  size_t n = 1;
  int empty = 0;
  for (int d = 0; d < rank; d++) {
    if (dims[d] < 0) return 0;
    if (dims[d] == 0)
      empty = 1;
    else if ((uint64_t)dims[d] > NCC_SIZE_LIMIT || !ncc_mul(n, (size_t)dims[d], &n))
      return 0;
  }
  if (empty) {
    *out = 0;
    return 1;
  }
  return ncc_mul(n, esize, out);
}

/* Bytes (esize 1: elements) of slot s for the current symbol values. */
static int ncc_slot_size(const struct NCC_MODEL *m, const ncc_slot *s, size_t esize,
                         size_t *out) {
  int64_t dims[8];
  for (int d = 0; d < s->rank; d++) dims[d] = ncc_dim(m, s->dims[d]);
  return ncc_size(esize, s->rank, dims, out);
}

/* One call at a time per model: a second, concurrent one is refused. */
static int ncc_enter(const struct NCC_MODEL *m) {
  return atomic_exchange(&((struct NCC_MODEL *)m)->busy, 1) == 0;
}
static void ncc_leave(const struct NCC_MODEL *m) {
  atomic_store(&((struct NCC_MODEL *)m)->busy, 0);
}

static void *ncc_ptr(struct NCC_MODEL *m, int slot) {
  const ncc_slot *s = &ncc_slots[slot];
  switch (s->kind) {
  case NCC_S_IN: return (void *)m->in[s->index];
  case NCC_S_OUT: return m->out[s->index];
  case NCC_S_CONST: return (void *)(NCC_WEIGHTS + s->off);
  default: return (char *)m->arena + m->tmp[s->index].off_b;
  }
}

/* ---- the thread pool: workers sleep on `go` until the generation
 * changes, run their share, and the last one to finish signals `done` ---- */

static void *ncc_worker_main(void *arg) {
  ncc_worker *w = arg;
  struct NCC_MODEL *m = w->m;
  unsigned seen = 0;
  pthread_mutex_lock(&m->mu);
  for (;;) {
    while (m->gen == seen && !m->stop) pthread_cond_wait(&m->go, &m->mu);
    if (m->stop) break;
    seen = m->gen;
    if (w->tid < m->job_nth) {
      ncc_kfn fn = m->job_fn;
      void *const *bufs = m->job_bufs;
      int nth = m->job_nth;
      pthread_mutex_unlock(&m->mu);
      fn(bufs, m->syms, w->tid, nth);
      pthread_mutex_lock(&m->mu);
    }
    if (--m->pending == 0) pthread_cond_signal(&m->done);
  }
  pthread_mutex_unlock(&m->mu);
  return NULL;
}

static void ncc_parallel(struct NCC_MODEL *m, ncc_kfn fn, void *const *bufs,
                         int nth) {
  if (nth > m->nthreads) nth = m->nthreads;
  if (nth <= 1) {
    fn(bufs, m->syms, 0, 1);
    return;
  }
  pthread_mutex_lock(&m->mu);
  m->job_fn = fn;
  m->job_bufs = bufs;
  m->job_nth = nth;
  m->pending = m->nthreads - 1;
  m->gen++;
  pthread_cond_broadcast(&m->go);
  pthread_mutex_unlock(&m->mu);
  fn(bufs, m->syms, 0, nth);
  pthread_mutex_lock(&m->mu);
  while (m->pending > 0) pthread_cond_wait(&m->done, &m->mu);
  pthread_mutex_unlock(&m->mu);
}

static void ncc_pool_stop(struct NCC_MODEL *m) {
  if (!m->pool_init) return;
  pthread_mutex_lock(&m->mu);
  m->stop = 1;
  pthread_cond_broadcast(&m->go);
  pthread_mutex_unlock(&m->mu);
  for (int t = 1; t < m->nthreads; t++) pthread_join(m->threads[t - 1], NULL);
  pthread_mutex_destroy(&m->mu);
  pthread_cond_destroy(&m->go);
  pthread_cond_destroy(&m->done);
}

static void ncc_pool_start(struct NCC_MODEL *m, int want) {
  m->nthreads = 1;
  if (want <= 1) return;
  m->threads = calloc((size_t)want, sizeof *m->threads);
  m->workers = calloc((size_t)want, sizeof *m->workers);
  if (!m->threads || !m->workers) return; /* runs single-threaded */
  if (pthread_mutex_init(&m->mu, NULL)) return;
  if (pthread_cond_init(&m->go, NULL)) {
    pthread_mutex_destroy(&m->mu);
    return;
  }
  if (pthread_cond_init(&m->done, NULL)) {
    pthread_cond_destroy(&m->go);
    pthread_mutex_destroy(&m->mu);
    return;
  }
  m->pool_init = 1;
  for (int t = 1; t < want; t++) {
    m->workers[t - 1].m = m;
    m->workers[t - 1].tid = t;
    if (pthread_create(&m->threads[t - 1], NULL, ncc_worker_main, &m->workers[t - 1]))
      break; /* fewer threads than asked */
    m->nthreads = t + 1;
  }
}

NCC_MODEL *NCC_API(create)(int num_threads) {
  struct NCC_MODEL *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  atomic_init(&m->busy, 0);
  if (num_threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    num_threads = n > 0 ? (int)n : 1;
  }
  if (num_threads > NCC_MAX_THREADS) num_threads = NCC_MAX_THREADS;
  ncc_pool_start(m, num_threads);
  return m;
}

void NCC_API(free)(NCC_MODEL *m) {
  if (!m) return;
  ncc_pool_stop(m);
  free(m->threads);
  free(m->workers);
  for (int o = 0; o < NCC_NUM_OUT; o++) free(m->out[o]);
  free(m->plan_work);
  free(m->arena);
  free(m);
}

int NCC_API(num_threads)(const NCC_MODEL *m) { return m ? m->nthreads : 0; }

const char *NCC_API(error)(const NCC_MODEL *m) { return m ? m->err : ""; }

int NCC_API(num_inputs)(void) { return NCC_NUM_IN; }
int NCC_API(num_outputs)(void) { return NCC_NUM_OUT; }

const char *NCC_API(input_name)(int i) {
  return i >= 0 && i < NCC_NUM_IN ? ncc_in_names[i] : NULL;
}
const char *NCC_API(input_type)(int i) {
  return i >= 0 && i < NCC_NUM_IN ? ncc_in_types[i] : NULL;
}
const char *NCC_API(output_name)(int i) {
  return i >= 0 && i < NCC_NUM_OUT ? ncc_out_names[i] : NULL;
}
const char *NCC_API(output_type)(int i) {
  return i >= 0 && i < NCC_NUM_OUT ? ncc_out_types[i] : NULL;
}

static int ncc_set_input(NCC_MODEL *m, int i, const void *data, int rank,
                         const int64_t *dims) {
  if (i < 0 || i >= NCC_NUM_IN)
    return ncc_fail(m, NCC_ERR(BAD_ARG), "input %d: the model has %d inputs", i,
                    NCC_NUM_IN);
  const ncc_slot *s = &ncc_slots[ncc_in_slot[i]];
  const char *name = ncc_in_names[i];
  if (rank != s->rank || (rank > 0 && !dims))
    return ncc_fail(m, NCC_ERR(BAD_ARG), "input '%s': rank %d, expected %d",
                    name, rank, s->rank);
  for (int d = 0; d < rank; d++) {
    if (dims[d] < 0 || (s->dims[d] >= 0 && dims[d] != s->dims[d]))
      return ncc_fail(m, NCC_ERR(BAD_ARG),
                      "input '%s': dim %d is %lld, expected %s (%s)", name, d,
                      (long long)dims[d], s->dims[d] >= 0 ? "the declared size" : "a size >= 0",
                      ncc_in_types[i]);
  }
  size_t n;
  if (!ncc_size(s->esize, rank, dims, &n))
    return ncc_fail(m, NCC_ERR(BAD_ARG),
                    "input '%s': its size (%s) overflows the address space", name,
                    ncc_in_types[i]);
  if (!data && n > 0)
    return ncc_fail(m, NCC_ERR(BAD_ARG), "input '%s': no data", name);
  for (int d = 0; d < rank; d++) m->in_dims[i][d] = dims[d];
  m->in[i] = data;
  m->in_set[i] = 1;
  return NCC_ERR(OK);
}

int NCC_API(set_input)(NCC_MODEL *m, int i, const void *data, int rank,
                       const int64_t *dims) {
  if (!m) return NCC_ERR(BAD_ARG);
  if (!ncc_enter(m)) return NCC_ERR(BUSY);
  int st = ncc_set_input(m, i, data, rank, dims);
  ncc_leave(m);
  return st;
}

/* Symbol values from the input shapes, checked for agreement. */
static int ncc_bind(struct NCC_MODEL *m) {
  memset(m->bound, 0, sizeof m->bound);
  for (int i = 0; i < NCC_NUM_IN; i++) {
    const ncc_slot *s = &ncc_slots[ncc_in_slot[i]];
    if (!m->in_set[i])
      return ncc_fail(m, NCC_ERR(NOT_SET), "input '%s' is not set",
                      ncc_in_names[i]);
    for (int d = 0; d < s->rank; d++) {
      if (s->dims[d] >= 0) continue;
      int id = (int)(-s->dims[d] - 1);
      int64_t v = m->in_dims[i][d];
      if (m->bound[id] && m->syms[id] != v)
        return ncc_fail(m, NCC_ERR(BAD_ARG),
                        "input '%s': dim %d is %lld but '%s' is %lld elsewhere",
                        ncc_in_names[i], d, (long long)v, ncc_sym_names[id],
                        (long long)m->syms[id]);
      m->syms[id] = v;
      m->bound[id] = 1;
    }
  }
  return NCC_ERR(OK);
}

static void *ncc_alloc64(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64)) return NULL;
  return p;
}

/* Output buffers and scratch offsets for the current symbol values:
 * scratch tensors share bytes when their lifetimes (first to last step)
 * are disjoint, placed by the compiler's packer (memplan_core.c: first fit,
 * largest first and by first step, the smaller arena kept). */
static int ncc_plan(struct NCC_MODEL *m) {
  for (int o = 0; o < NCC_NUM_OUT; o++) {
    const ncc_slot *s = &ncc_slots[ncc_out_slot[o]];
    size_t bytes;
    if (!ncc_slot_size(m, s, s->esize, &bytes))
      return ncc_fail(m, NCC_ERR(BAD_ARG),
                      "output '%s': its size (%s) overflows the address space "
                      "for these input shapes", ncc_out_names[o], ncc_out_types[o]);
    if (m->out[o] && bytes <= m->out_cap[o]) continue;
    free(m->out[o]);
    m->out_cap[o] = 0;
    m->out[o] = ncc_alloc64(bytes);
    if (!m->out[o])
      return ncc_fail(m, NCC_ERR(NO_MEMORY), "out of memory (output '%s')",
                      ncc_out_names[o]);
    m->out_cap[o] = bytes;
  }
  int n = NCC_NUM_TMP;
  for (int t = 0; t < n; t++) {
    const ncc_slot *s = &ncc_slots[ncc_tmp_slot[t]];
    size_t bytes, padded;
    /* the packer rounds every size up to NCC_MEMPLAN_ALIGN (64) */
    if (!ncc_slot_size(m, s, s->esize, &bytes) ||
        !ncc_add(bytes, NCC_MEMPLAN_ALIGN - 1, &padded))
      return ncc_fail(m, NCC_ERR(BAD_ARG),
                      "scratch tensor %d: its size overflows the address space "
                      "for these input shapes", t);
    m->tmp[t].a = 0;
    m->tmp[t].b = (int64_t)bytes;
    m->tmp[t].begin = s->def;
    m->tmp[t].end = s->last;
  }
  if (n > 0 && !m->plan_work) { /* its size depends on the lifetimes only */
    size_t wb = ncc_memplan_work_bytes(m->tmp, n);
    m->plan_work = wb ? malloc(wb) : NULL;
    if (!m->plan_work)
      return ncc_fail(m, NCC_ERR(NO_MEMORY), "out of memory (scratch plan)");
  }
  int64_t total_a, total_b;
  if (ncc_memplan_pack(m->tmp, n, (int64_t)NCC_SIZE_LIMIT, m->plan_work, &total_a,
                       &total_b))
    return ncc_fail(m, NCC_ERR(BAD_ARG), "scratch: the plan overflows the "
                    "address space for these input shapes");
  size_t total = (size_t)total_b;
  if (!m->arena || total > m->arena_cap) {
    free(m->arena);
    m->arena_cap = 0;
    m->arena = ncc_alloc64(total);
    if (!m->arena) return ncc_fail(m, NCC_ERR(NO_MEMORY), "out of memory (scratch)");
    m->arena_cap = total;
  }
  memcpy(m->plan_syms, m->syms, sizeof m->syms);
  m->planned = 1;
  return NCC_ERR(OK);
}

static int ncc_run(NCC_MODEL *m) {
  m->err[0] = 0;
  int st = ncc_bind(m);
  if (st) return st;
  if (!m->planned || memcmp(m->plan_syms, m->syms, sizeof m->syms) != 0) {
    m->planned = 0;
    if ((st = ncc_plan(m))) return st;
  }
  for (int i = 0; i < NCC_NUM_STEPS; i++) {
    const ncc_step *s = &ncc_steps[i];
    if (s->kernel < 0) {
      const ncc_slot *d = &ncc_slots[s->dst];
      size_t bytes;
      if (!ncc_slot_size(m, d, d->esize, &bytes))
        return ncc_fail(m, NCC_ERR(BAD_ARG), "step %d: the copy's size overflows", i);
      if (bytes) memcpy(ncc_ptr(m, s->dst), ncc_ptr(m, s->src), bytes);
      continue;
    }
    void *bufs[16];
    for (int b = 0; b < s->n_bufs; b++) bufs[b] = ncc_ptr(m, s->bufs[b]);
    size_t elems = 0;
    ncc_slot_size(m, &ncc_slots[s->size_slot], 1, &elems);
    /* clamped as a double: converting a huge estimate to int is undefined */
    double want = (double)elems * s->cost / NCC_ELEMS_PER_THREAD;
    int nth = want >= NCC_MAX_THREADS ? NCC_MAX_THREADS : want >= 1.0 ? (int)want : 1;
    ncc_parallel(m, ncc_kernels[s->kernel], bufs, nth);
  }
  return NCC_ERR(OK);
}

int NCC_API(run)(NCC_MODEL *m) {
  if (!m) return NCC_ERR(BAD_ARG);
  if (!ncc_enter(m)) return NCC_ERR(BUSY);
  m->valid = 0; /* a failed run leaves no stale outputs behind */
  int st = ncc_run(m);
  m->valid = st == NCC_ERR(OK);
  ncc_leave(m);
  return st;
}

const void *NCC_API(output)(const NCC_MODEL *m, int i, int *rank,
                            int64_t *dims) {
  if (rank) *rank = 0;
  if (!m || i < 0 || i >= NCC_NUM_OUT || !ncc_enter(m)) return NULL;
  const void *p = NULL;
  if (m->valid) { /* only the outputs of a run that succeeded */
    const ncc_slot *s = &ncc_slots[ncc_out_slot[i]];
    if (rank) *rank = s->rank;
    for (int d = 0; dims && d < s->rank; d++) dims[d] = ncc_dim(m, s->dims[d]);
    p = m->out[i];
  }
  ncc_leave(m);
  return p;
}
