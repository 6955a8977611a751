/* targets/backend.h — the backend vtable: what a target that runs in ncc
 * provides (ggml_backend_i style).
 *
 * A backend turns a graph into an opaque state it can run: `ref` wraps the
 * reference interpreter (targets/backend.c), `cpu` JIT-compiles kernels
 * with LLVM (targets/cpu), `opencl` and `cuda` run on a GPU device
 * (targets/opencl, targets/cuda over targets/gpu). Host backends share the
 * executor of runtime/exec.h. Which backends exist is the target table's
 * business (targets/targets.h): a backend is found through its row.
 */
#ifndef NCC_TARGETS_BACKEND_H
#define NCC_TARGETS_BACKEND_H

#include <stdbool.h>

#include "../ir/ir.h"

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
  int (*num_views)(const void *state); /* optional: view nodes (NULL: 0) */
  /* Node i (graph order) runs through its reference kernel on the host:
   * not inside any compiled kernel (ncc_module_host_nodes). */
  bool (*on_host)(const void *state, int i);
  /* Optional (ncc_module_step_of): the node whose step computes node i (a
   * fused group's root, or i) and the compiled kernel's name (NULL: host);
   * NULL: every node is its own step. */
  int (*step_of)(const void *state, int i, const char **kernel_name);
  void (*free)(void *state);
  /* Optional ahead-of-time output (ncc_module_emit) of kind `kind` for this
   * target, written through a temporary file; NULL: the LLVM emitter. */
  ncc_status (*emit)(const ncc_graph *g, const char *kind, const char *path);
} ncc_backend;

/* The backend of target `name` in this build (NULL: unknown, not built,
 * or a target that only compiles); looked up in the target table. */
const ncc_backend *ncc_backend_find(const char *name);

extern const ncc_backend ncc_backend_ref;
/* The other backends are declared beside their rows (targets/table.c). */

#endif /* NCC_TARGETS_BACKEND_H */
