/* targets/cpu/cpu_backend.c — the `cpu` backend: LLVM JIT for this host.
 *
 * Compile: every fused group (passes/fusion.h) that lowers as a whole, and
 * every other node some lowering handles, becomes a kernel (kernel IR ->
 * LLVM IR); nodes that only re-shape their input run as views (the
 * executor hands the input's buffer on: no kernel, no copy); the rest run
 * as host (reference) kernels in the shared executor. Kernels that are
 * structurally identical (kir_dedupe: the same kernel IR up to names and
 * weight pointers, as in repeated blocks) are emitted and optimized once
 * and share one function, so compile time grows with the number of
 * distinct kernels, not with depth. The distinct ones go into one JIT, one
 * LLVM module each (codegen/llvm/jit.c). Run: the executor calls `launch`
 * for compiled nodes and groups, which binds buffers and runs the kernel
 * on the persistent thread pool, as many threads as the work warrants.
 * ncc_options.kernel_reuse = 0 (NCC_KERNEL_REUSE=0 in the driver) turns
 * sharing off (for measuring it); num_threads and vector_width come from
 * the options too (targets/backend.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/ctime.h"
#include "../../ir/options.h"
#include "../../runtime/exec.h"
#include "../../runtime/profile.h"
#include "../backend.h"
#include "../../runtime/threadpool.h"
#include "../../codegen/escape.h"
#include "../../codegen/lower.h"
#include "../../codegen/llvm/llvm.h"

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
  char name[96]; /* the kernel's (its own, even when it shares a function) */
} cpu_kernel;

typedef struct cpu_state {
  const ncc_graph *g;
  ncc_exec *exec;
  ncc_jit *jit;
  cpu_kernel *ks; /* per node (a group's in its root's slot); fn NULL: none */
  int n_compiled; /* kernels launched (a fused group counts once) */
  int n_host;     /* nodes run by reference kernels */
  int n_views;    /* nodes the executor runs as views (no kernel, no copy) */
  bool *host;     /* per node: run by its reference kernel */
  int n_distinct; /* functions compiled */
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
  ncc_free(s->host, 0);
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

/* A profiled launch: each share records where and when it ran. */
typedef struct share_time {
  int worker;
  int64_t t0, t1;
} share_time;

typedef struct prof_launch_ctx {
  launch_ctx c;
  share_time *shares; /* one per share */
} prof_launch_ctx;

static void launch_task_profiled(void *ctx, int tid, int nth) {
  const prof_launch_ctx *p = ctx;
  share_time *s = &p->shares[tid];
  s->worker = ncc_threadpool_worker_index();
  s->t0 = ncc_prof_now_ns();
  launch_task((void *)&p->c, tid, nth);
  s->t1 = ncc_prof_now_ns();
}

static void launch_profiled(ncc_prof *prof, ncc_threadpool *pool, const launch_ctx *c,
                            int nth, int node) {
  share_time stack[64];
  share_time *shares = nth <= 64 ? stack : ncc_calloc((size_t)nth, sizeof *shares);
  if (!shares) { /* no memory for the lanes: the step is still timed */
    ncc_threadpool_run(pool, launch_task, (void *)c, nth);
    return;
  }
  prof_launch_ctx p = {*c, shares};
  ncc_threadpool_run(pool, launch_task_profiled, &p, nth);
  for (int t = 0; t < nth; t++)
    ncc_prof_add(prof, node, shares[t].worker, false, shares[t].t0, shares[t].t1);
  if (shares != stack) ncc_free(shares, 0);
}

static ncc_status launch(void *kctx, const ncc_node *n,
                         const ncc_tensor *const *in, ncc_tensor *out,
                         const int64_t *syms) {
  const cpu_kernel *k = kctx;
  void *bufs[KIR_MAX_BUFS];
  for (int b = 0; b < k->n_bufs; b++) {
    switch (k->bind[b]) {
    case KIR_BIND_INPUT: bufs[b] = in[k->index[b]]->data; break;
    case KIR_BIND_OUTPUT: bufs[b] = out[k->index[b]].data; break;
    case KIR_BIND_DATA: bufs[b] = (void *)k->data[b]; break;
    }
  }
  ncc_threadpool *pool = ncc_threadpool_global_sized(k->max_threads);
  double work = (double)ncc_tensor_numel(&out[0]) * k->cost_per_elem;
  int cap = ncc_threadpool_size(pool);
  if (k->max_threads > 0 && k->max_threads < cap) cap = k->max_threads;
  /* clamped as a double: converting a huge estimate to int is undefined */
  double want = work / ELEMS_PER_THREAD;
  int nth = want >= (double)cap ? cap : want >= 1.0 ? (int)want : 1;
  launch_ctx c = {k->fn, bufs, syms};
  ncc_prof *prof = ncc_prof_current(); /* NULL unless this run is profiled */
  if (prof) launch_profiled(prof, pool, &c, nth < 1 ? 1 : nth, n->id);
  else ncc_threadpool_run(pool, launch_task, &c, nth < 1 ? 1 : nth);
  return NCC_OK;
}

/* Install kernel k (compiled as function fn) for slot i. */
static ncc_status install(cpu_state *s, const ncc_fuse_plan *fp, const bool *gk,
                          int i, kir_kernel *k, ncc_kernel_fn fn,
                          const ncc_backend_opts *opts) {
  cpu_kernel *ck = &s->ks[i];
  ck->fn = fn;
  ck->n_bufs = k->n_bufs;
  for (int b = 0; b < k->n_bufs; b++) {
    ck->bind[b] = k->bufs[b].bind;
    ck->index[b] = k->bufs[b].index;
    ck->data[b] = k->bufs[b].data;
    ck->owned[b] = k->bufs[b].owned;
    k->bufs[b].owned = NULL;
  }
  ck->cost_per_elem = k->cost_per_elem;
  snprintf(ck->name, sizeof ck->name, "%s", k->name ? k->name : "");
  ck->max_threads = opts ? opts->num_threads : 0;
  s->n_compiled++;
  int gi = fp->group_of[i];
  if (gi < 0 || !gk[gi]) {
    ncc_exec_set_kernel(s->exec, i, launch, ck);
    return NCC_OK;
  }
  const ncc_fuse_group *gr = &fp->groups[gi];
  int members[NCC_FUSE_MAX_MEMBERS];
  for (int m = 0; m < gr->n_members; m++) members[m] = gr->members[m]->id;
  return ncc_exec_set_group(s->exec, members, gr->n_members, gr->ext, gr->n_ext,
                            launch, ck);
}

/* Whether kernels may lower to AMX tiles of `feature`: the host has them
 * (and the OS grants them), or the caller asked for their emulation
 * (ncc_options.amx_emulate: codegen/llvm/amx_emu.c); never with no_amx. */
static bool amx_tiles(const ncc_llvm_host *h, const char *feature) {
  const ncc_options *o = ncc_opts();
  return !o->no_amx && (o->amx_emulate || ncc_llvm_amx_usable(h, feature));
}

static ncc_status cpu_compile(const ncc_graph *g, const ncc_backend_opts *opts,
                              void **state) {
  *state = NULL;
  const ncc_llvm_host *h;
  ncc_status st = ncc_llvm_host_info(&h);
  if (st != NCC_OK) return st;
  size_t nn = (size_t)g->n_nodes + 1;
  cpu_state *s = ncc_calloc(1, sizeof *s);
  kir_kernel **kernels = ncc_calloc(nn, sizeof *kernels);
  kir_kernel **list = ncc_calloc(nn, sizeof *list);
  int *rep = ncc_calloc(nn, sizeof *rep);
  bool *gk = ncc_calloc(nn, sizeof *gk);
  ncc_fuse_plan *fp = NULL;
  if (!s || !kernels || !list || !rep || !gk) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  s->g = g;
  s->ks = ncc_calloc(nn, sizeof *s->ks);
  if (!s->ks) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  if ((st = ncc_fuse_plan_build(g, &fp)) != NCC_OK) goto done;
  st = ncc_exec_create(g, &s->exec);
  if (st != NCC_OK) goto done;
  ncc_lower_request rq = {
      .target = &ncc_lower_target_generic,
      .opts = {.vector_width = opts && opts->vector_width > 0 ? opts->vector_width
                                                             : h->vector_width,
               .amx_int8 = amx_tiles(h, "amx-int8"),
               .amx_bf16 = amx_tiles(h, "amx-bf16")},
      .name_by_anchor = true,
      .dump = true,
      .skip_views = true};
  int nk = 0;
  st = ncc_lower_graph(g, fp, &rq, kernels, gk, &nk);
  if (st != NCC_OK) goto done;
  /* one function per distinct kernel */
  if (opts && !opts->kernel_reuse) {
    for (int i = 0; i < g->n_nodes; i++) rep[i] = kernels[i] ? i : -1;
  } else if (kir_dedupe(kernels, g->n_nodes, rep) < 0) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  nk = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (kernels[i] && rep[i] == i) list[nk++] = kernels[i];
    /* a reused kernel is lowered but never emitted (ncc_compile_stats) */
    else if (kernels[i]) ncc_ctime_kernel_reused(ncc_ctime_find(kernels[i]->name));
  }
  s->n_distinct = nk;
  if (nk > 0) {
    st = ncc_jit_compile(list, nk, &s->jit);
    if (st != NCC_OK) goto done;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    if (!kernels[i]) continue;
    ncc_kernel_fn fn = ncc_jit_lookup(s->jit, kernels[rep[i]]->name);
    if (!fn) {
      st = NCC_ERR_INTERNAL;
      goto done;
    }
    if ((st = install(s, fp, gk, i, kernels[i], fn, opts)) != NCC_OK) goto done;
  }
  /* host nodes: everything not inside a compiled kernel */
  s->host = ncc_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->host);
  if (!s->host) {
    st = NCC_ERR_NOMEM;
    goto done;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    int gi = fp->group_of[i];
    if (gi >= 0 && gk[gi]) continue;
    if (kernels[i]) continue;
    if (ncc_node_is_view(g->nodes[i])) {
      s->n_views++;
    } else {
      s->n_host++;
      s->host[i] = true;
    }
  }
done:
  if (kernels)
    for (int i = 0; i < g->n_nodes; i++) kir_kernel_free(kernels[i]);
  ncc_free(kernels, 0);
  ncc_free(list, 0);
  ncc_free(rep, 0);
  ncc_free(gk, 0);
  ncc_fuse_plan_free(fp);
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

static ncc_status cpu_run_into(void *state, const ncc_tensor *in, int n_in,
                               ncc_tensor *out, int n_out) {
  cpu_state *s = state;
  return ncc_exec_run_into(s->exec, in, n_in, out, n_out);
}

static int cpu_num_kernels(const void *state) {
  return ((const cpu_state *)state)->n_compiled;
}

static int cpu_num_host(const void *state) {
  return ((const cpu_state *)state)->n_host;
}

static int cpu_num_views(const void *state) {
  return ((const cpu_state *)state)->n_views;
}

static bool cpu_on_host(const void *state, int i) {
  return ((const cpu_state *)state)->host[i];
}

static int cpu_step_of(const void *state, int i, const char **kernel_name) {
  const cpu_state *s = state;
  int r = ncc_exec_step_of(s->exec, i);
  if (kernel_name && r >= 0 && s->ks[r].fn) *kernel_name = s->ks[r].name;
  return r;
}

const ncc_backend ncc_backend_cpu = {
    .name = "cpu",
    .description = "this host, LLVM JIT (ORC LLJIT)",
    .available = cpu_available,
    .supports_op = cpu_supports_op,
    .compile = cpu_compile,
    .run = cpu_run,
    .run_into = cpu_run_into,
    .num_kernels = cpu_num_kernels,
    .num_host_kernels = cpu_num_host,
    .num_views = cpu_num_views,
    .on_host = cpu_on_host,
    .step_of = cpu_step_of,
    .free = cpu_free,
};
