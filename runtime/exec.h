/* runtime/backend.h — the backend vtable and the host graph executor.
 *
 * A backend turns a graph into an opaque state it can run (ggml_backend_i
 * style): `ref` wraps the reference interpreter, `cpu` JIT-compiles kernels
 * with LLVM, `opencl` and `cuda` run on a GPU device (runtime/opencl, cuda).
 *
 * The executor (runtime/exec.c) is what host backends share: it walks the
 * nodes in order, computes concrete shapes with ncc_infer_node, allocates
 * intermediates, frees them after their last use, and runs each node either
 * through a kernel the backend installed or through the reference kernel
 * (a "host" kernel). So a backend compiles what it can and every model still
 * runs from day one.
 */
#ifndef NCC_BACKEND_H
#define NCC_BACKEND_H

#include <stdbool.h>

#include "../ir/ir.h"
#include "../passes/fusion.h"

/* What a backend's compile takes from the caller's ncc_options (the rest,
 * dumps and tool settings, is in scope through ir/options.h). */
typedef struct ncc_backend_opts {
  int num_threads;  /* >= 1: kernel threads at most (module.c resolves 0) */
  int vector_width; /* f32 lanes of cpu kernels; 0: the host's */
  bool kernel_reuse; /* equal kernels share one compiled function */
} ncc_backend_opts;

typedef struct ncc_backend {
  const char *name;
  const char *description;
  /* false when unusable on this machine; `why` (may be NULL) says why. */
  bool (*available)(char *why, size_t cap);
  /* Whether the backend compiles this node itself (else it runs as host). */
  bool (*supports_op)(const ncc_node *n);
  /* The graph must outlive the state. */
  ncc_status (*compile)(const ncc_graph *g, const ncc_backend_opts *opts,
                        void **state);
  ncc_status (*run)(void *state, const ncc_tensor *in, int n_in,
                    ncc_tensor *out, int n_out);
  /* Optional: run into the caller's allocated outputs (ncc_module_run_into);
   * NULL: run, then copy. */
  ncc_status (*run_into)(void *state, const ncc_tensor *in, int n_in,
                         ncc_tensor *out, int n_out);
  int (*num_kernels)(const void *state);      /* compiled kernels */
  int (*num_host_kernels)(const void *state); /* nodes run by ref kernels */
  void (*free)(void *state);
  /* Optional ahead-of-time output (ncc_module_emit) of kind `kind` for this
   * target, written through a temporary file; NULL: the LLVM emitter. */
  ncc_status (*emit)(const ncc_graph *g, const char *kind, const char *path);
} ncc_backend;

/* A registered backend by name (NULL: unknown). */
const ncc_backend *ncc_backend_find(const char *name);

extern const ncc_backend ncc_backend_ref;
#ifdef NCC_HAVE_LLVM
extern const ncc_backend ncc_backend_cpu;
#endif
#ifdef NCC_HAVE_OPENCL
extern const ncc_backend ncc_backend_opencl; /* runtime/opencl */
#endif
#ifdef NCC_HAVE_CUDA
extern const ncc_backend ncc_backend_cuda; /* runtime/cuda */
#endif

/* ---- the host executor ---- */
typedef struct ncc_exec ncc_exec;

/* A compiled kernel for one node: inputs (NULL for omitted optional ones)
 * and outputs are concrete and allocated; `syms` holds the value of every
 * graph symbol seen so far (indexed by symbol id). */
typedef ncc_status (*ncc_exec_kernel_fn)(void *kctx, const ncc_node *n,
                                         const ncc_tensor *const *in,
                                         ncc_tensor *out, const int64_t *syms);

/* Shared by every executor (cpu and GPU): check the graph inputs' count,
 * dtypes, ranks and static dims and bind their symbolic dims in syms[]
 * (a symbol must get one size everywhere); record the concrete values of
 * v's symbolic dims; and check that a run-time tensor agrees with the
 * declared shape a compiled kernel was specialized on (rank, dtype, static
 * dims, and repeated symbols). */
ncc_status ncc_exec_check_inputs(const ncc_graph *g, int64_t *syms,
                                 const ncc_tensor *in, int n_in);
void ncc_exec_bind_syms(const ncc_graph *g, int64_t *syms, const ncc_value *v,
                        const ncc_tensor *t);
ncc_status ncc_exec_check_declared(const int64_t *syms, const ncc_value *v,
                                   const ncc_tensor *t);

/* The peak of a run's live bytes (declared shapes, symbols bound by the
 * inputs, no reuse) against the memory budget, before anything is
 * allocated: NCC_ERR_NOMEM naming the largest value (runtime/run_budget.c). */
ncc_status ncc_run_budget_check(const ncc_graph *g, const ncc_tensor *in, int n_in);

ncc_status ncc_exec_create(const ncc_graph *g, ncc_exec **out);
void ncc_exec_free(ncc_exec *x);
/* Install a kernel for node index `i` (graph order); the default is host. */
void ncc_exec_set_kernel(ncc_exec *x, int i, ncc_exec_kernel_fn fn, void *kctx);
/* Run the nodes members[0..n_members) (graph order, the last is the root)
 * as one kernel at the root's position: the kernel gets the group's
 * external values ext[] as its inputs and the root's outputs; the other
 * members run nothing and their outputs get no memory (passes/fusion.h). */
ncc_status ncc_exec_set_group(ncc_exec *x, const int *members, int n_members,
                              ncc_value *const *ext, int n_ext,
                              ncc_exec_kernel_fn fn, void *kctx);
ncc_status ncc_exec_run(ncc_exec *x, const ncc_tensor *in, int n_in,
                        ncc_tensor *out, int n_out);
/* ncc_exec_run writing graph outputs into the caller's buffers (allocated,
 * with the outputs' run-time dtypes and shapes): kernels store into them
 * directly, so a steady-state loop allocates and first-touches nothing. */
ncc_status ncc_exec_run_into(ncc_exec *x, const ncc_tensor *in, int n_in,
                             ncc_tensor *out, int n_out);

#endif /* NCC_BACKEND_H */
