/* codegen/llvm/cpu_backend.c — the `cpu` backend: LLVM JIT for this host.
 *
 * Compile: every node some lowering handles becomes a kernel (kernel IR ->
 * LLVM IR), all kernels of the graph go into one LLVM module and one JIT;
 * the rest run as host (reference) kernels in the shared executor. Run: the
 * executor calls `launch` for compiled nodes, which binds buffers and runs
 * the kernel on the persistent thread pool, as many threads as the work
 * warrants.
 */
#include <stdlib.h>
#include <string.h>

#include "../../runtime/backend.h"
#include "../../runtime/threadpool.h"
#include "../lower.h"
#include "llvm.h"

/* Output elements per thread below which more threads cost more than they
 * bring (a launch on the pool costs a few microseconds). */
#define ELEMS_PER_THREAD 16384.0

typedef struct cpu_kernel {
  ncc_kernel_fn fn;
  int n_bufs;
  kir_bind_kind bind[KIR_MAX_BUFS];
  int index[KIR_MAX_BUFS];
  const void *data[KIR_MAX_BUFS];
  void *owned[KIR_MAX_BUFS]; /* packed weights taken over from the kernel */
  double cost_per_elem;
  int max_threads;
} cpu_kernel;

typedef struct cpu_state {
  const ncc_graph *g;
  ncc_exec *exec;
  ncc_jit *jit;
  cpu_kernel *ks; /* per node; fn NULL for host nodes */
  int n_compiled;
} cpu_state;

static bool cpu_available(char *why, size_t cap) {
  const ncc_llvm_host *h;
  if (ncc_llvm_host_info(&h) == NCC_OK) {
    if (why && cap) why[0] = '\0';
    return true;
  }
  if (why && cap) snprintf(why, cap, "%s", ncc_error_message());
  return false;
}

static bool cpu_supports_op(const ncc_node *n) { return ncc_lower_supports(n); }

static void cpu_free(void *state) {
  cpu_state *s = state;
  if (!s) return;
  ncc_exec_free(s->exec);
  ncc_jit_free(s->jit);
  if (s->ks)
    for (int i = 0; i < s->g->n_nodes; i++)
      for (int b = 0; b < KIR_MAX_BUFS; b++) ncc_free(s->ks[i].owned[b], 0);
  ncc_free(s->ks, 0);
  ncc_free(s, sizeof *s);
}

typedef struct launch_ctx {
  ncc_kernel_fn fn;
  void *const *bufs;
  const int64_t *syms;
} launch_ctx;

/* UBSan's -fsanitize=function checks a signature word stored just before
 * every instrumented function; JIT code has none (and may start a page). */
#if defined(__clang__)
#define NO_SANITIZE_FUNCTION __attribute__((no_sanitize("function")))
#else
#define NO_SANITIZE_FUNCTION
#endif

NO_SANITIZE_FUNCTION
static void launch_task(void *ctx, int tid, int nth) {
  const launch_ctx *c = ctx;
  c->fn(c->bufs, c->syms, tid, nth);
}

static ncc_status launch(void *kctx, const ncc_node *n,
                         const ncc_tensor *const *in, ncc_tensor *out,
                         const int64_t *syms) {
  (void)n;
  const cpu_kernel *k = kctx;
  void *bufs[KIR_MAX_BUFS];
  for (int b = 0; b < k->n_bufs; b++) {
    switch (k->bind[b]) {
    case KIR_BIND_INPUT: bufs[b] = in[k->index[b]]->data; break;
    case KIR_BIND_OUTPUT: bufs[b] = out[k->index[b]].data; break;
    case KIR_BIND_DATA: bufs[b] = (void *)k->data[b]; break;
    }
  }
  ncc_threadpool *pool = ncc_threadpool_global();
  double work = (double)ncc_tensor_numel(&out[0]) * k->cost_per_elem;
  int nth = (int)(work / ELEMS_PER_THREAD);
  int cap = ncc_threadpool_size(pool);
  if (k->max_threads > 0 && k->max_threads < cap) cap = k->max_threads;
  if (nth > cap) nth = cap;
  launch_ctx c = {k->fn, bufs, syms};
  ncc_threadpool_run(pool, launch_task, &c, nth < 1 ? 1 : nth);
  return NCC_OK;
}

ncc_status ncc_llvm_lower_graph(const ncc_graph *g, const ncc_lower_opts *lo,
                                kir_kernel **kernels, int *n_lowered) {
  bool debug = getenv("NCC_DEBUG_KIR") != NULL;
  *n_lowered = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    if (!ncc_lower_supports(n)) continue;
    char name[64];
    snprintf(name, sizeof name, "k%d_%s", i, ncc_op_name(n->op));
    ncc_status st = ncc_lower_node(n, name, lo, &kernels[i]);
    if (st == NCC_ERR_UNSUPPORTED) continue;
    if (st != NCC_OK) return st;
    if (debug) kir_print(kernels[i], stderr);
    (*n_lowered)++;
  }
  return NCC_OK;
}

static ncc_status cpu_compile(const ncc_graph *g, const ncc_backend_opts *opts,
                              void **state) {
  *state = NULL;
  const ncc_llvm_host *h;
  ncc_status st = ncc_llvm_host_info(&h);
  if (st != NCC_OK) return st;
  cpu_state *s = ncc_calloc(1, sizeof *s);
  kir_kernel **kernels = ncc_calloc((size_t)g->n_nodes + 1, sizeof *kernels);
  kir_kernel **list = ncc_calloc((size_t)g->n_nodes + 1, sizeof *list);
  if (!s || !kernels || !list) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  s->g = g;
  s->ks = ncc_calloc((size_t)g->n_nodes + 1, sizeof *s->ks);
  if (!s->ks) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  st = ncc_exec_create(g, &s->exec);
  if (st != NCC_OK) goto done;
  ncc_lower_opts lo = {.vector_width = h->vector_width};
  int nk = 0;
  st = ncc_llvm_lower_graph(g, &lo, kernels, &nk);
  if (st != NCC_OK) goto done;
  nk = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (kernels[i]) list[nk++] = kernels[i];
  if (nk > 0) {
    st = ncc_jit_compile(list, nk, &s->jit);
    if (st != NCC_OK) goto done;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    kir_kernel *k = kernels[i];
    if (!k) continue;
    cpu_kernel *ck = &s->ks[i];
    ck->fn = ncc_jit_lookup(s->jit, k->name);
    if (!ck->fn) {
      st = NCC_ERR_INTERNAL;
      goto done;
    }
    ck->n_bufs = k->n_bufs;
    for (int b = 0; b < k->n_bufs; b++) {
      ck->bind[b] = k->bufs[b].bind;
      ck->index[b] = k->bufs[b].index;
      ck->data[b] = k->bufs[b].data;
      ck->owned[b] = k->bufs[b].owned;
      k->bufs[b].owned = NULL;
    }
    ck->cost_per_elem = k->cost_per_elem;
    ck->max_threads = opts ? opts->num_threads : 0;
    ncc_exec_set_kernel(s->exec, i, launch, ck);
    s->n_compiled++;
  }
done:
  if (kernels)
    for (int i = 0; i < g->n_nodes; i++) kir_kernel_free(kernels[i]);
  ncc_free(kernels, 0);
  ncc_free(list, 0);
  if (st != NCC_OK) {
    cpu_free(s);
    return st;
  }
  *state = s;
  return NCC_OK;
}

static ncc_status cpu_run(void *state, const ncc_tensor *in, int n_in,
                          ncc_tensor *out, int n_out) {
  cpu_state *s = state;
  return ncc_exec_run(s->exec, in, n_in, out, n_out);
}

static int cpu_num_kernels(const void *state) {
  return ((const cpu_state *)state)->n_compiled;
}

static int cpu_num_host(const void *state) {
  const cpu_state *s = state;
  return s->g->n_nodes - s->n_compiled;
}

const ncc_backend ncc_backend_cpu = {
    .name = "cpu",
    .description = "this host, LLVM JIT (ORC LLJIT)",
    .available = cpu_available,
    .supports_op = cpu_supports_op,
    .compile = cpu_compile,
    .run = cpu_run,
    .num_kernels = cpu_num_kernels,
    .num_host_kernels = cpu_num_host,
    .free = cpu_free,
};
