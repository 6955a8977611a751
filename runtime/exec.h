/* runtime/exec.h — the host graph executor (runtime/exec.c) and the run
 * budget check; the backend vtable that uses it is targets/backend.h.
 *
 * The executor is what host backends (targets/: ref, cpu) share: it walks the
 * nodes in order, computes concrete shapes with ncc_infer_node, allocates
 * intermediates, frees them after their last use, and runs each node either
 * through a kernel the backend installed or through the reference kernel
 * (a "host" kernel). So a backend compiles what it can and every model still
 * runs from day one.
 */
#ifndef NCC_RUNTIME_EXEC_H
#define NCC_RUNTIME_EXEC_H

#include <stdbool.h>

#include "../ir/ir.h"
#include "../passes/fusion.h"

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
/* The node whose step computes node i: its group's root, or i. */
int ncc_exec_step_of(const ncc_exec *x, int i);
ncc_status ncc_exec_run(ncc_exec *x, const ncc_tensor *in, int n_in,
                        ncc_tensor *out, int n_out);
/* ncc_exec_run writing graph outputs into the caller's buffers (allocated,
 * with the outputs' run-time dtypes and shapes): kernels store into them
 * directly, so a steady-state loop allocates and first-touches nothing. */
ncc_status ncc_exec_run_into(ncc_exec *x, const ncc_tensor *in, int n_in,
                             ncc_tensor *out, int n_out);

#endif /* NCC_RUNTIME_EXEC_H */
