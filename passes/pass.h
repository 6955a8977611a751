/* passes/pass.h — what a pass is, and what the pass manager gives it.
 *
 * One pass = one file = one `const ncc_pass ncc_pass_<id>` descriptor,
 * listed once in passes/passes.def (whose order is the pipeline order).
 * Passes never print: the manager owns every debugging switch
 * (--print-after, --time-passes, --verify-each) and the statistics.
 */
#ifndef NCC_PASS_H
#define NCC_PASS_H

#include <stdbool.h>

#include "../ir/ir.h"

typedef struct ncc_pass_ctx {
  int opt_level;
  int layout_block; /* NCHW[x]c block for the layout pass (0: from target) */
  int precision;    /* NCC_PRECISION_* for the precision pass */
  int winograd;     /* the winograd pass: 0 its estimate decides, 2 or 4 forced */
  bool changed;     /* a pass sets it when it modified the graph */
  int rewrites;     /* how many rewrites the pass made (its statistic) */
} ncc_pass_ctx;

typedef struct ncc_pass {
  const char *name;  /* command-line name, e.g. "const-fold" */
  int level;         /* lowest -O level that runs it */
  const char *needs; /* comma-separated passes that must run earlier, or "" */
  const char *desc;  /* one line for `ncc passes` */
  ncc_status (*run)(ncc_graph *g, ncc_pass_ctx *ctx);
} ncc_pass;

#define NCC_PASS(id) extern const ncc_pass ncc_pass_##id;
#include "passes.def"
#undef NCC_PASS

/* ncc_graph_stats, ncc_graph_compute_stats: ncc.h. */

/* Shared helpers for passes. */
/* uses[v->id] = number of node inputs + graph outputs reading v. */
int *ncc_count_uses(const ncc_graph *g);
/* Remove nodes none of whose outputs is used (transitively) and constants
 * nothing reads (they become undefined values); returns how many of both,
 * or -1 when out of memory. */
int ncc_dce(ncc_graph *g);
/* Whether v is one of the graph's outputs. */
bool ncc_is_graph_output(const ncc_graph *g, const ncc_value *v);
/* Bytes of v and a rough FLOP count of node n, symbolic dims counted as
 * `sym_value` (the statistics' estimates, shared with cost models). */
double ncc_value_bytes(const ncc_value *v, int64_t sym_value);
double ncc_node_flops(const ncc_node *n, int64_t sym_value);
/* Move nodes a pass appended (to the graph's end) next to the node they
 * belong to: for original node i (i < n_orig), slots[i * (n_before +
 * n_after) + j] (NULL: none) goes before it for j < n_before, after it
 * otherwise. Every appended node must have a slot. */
ncc_status ncc_place_around(ncc_graph *g, int n_orig, ncc_node *const *slots, int n_before,
                            int n_after);
/* A pass that rewrites nodes one at a time: `fn` rewrites node n when it
 * applies (*took set), appending what it needs and putting the appended
 * nodes in slots[0, n_before + n_after) (NULL: none). ncc_rewrite_nodes
 * calls it on each node the graph has on entry, moves the appended nodes
 * next to theirs (ncc_place_around), drops what nothing reads any more
 * (ncc_dce: the replaced weights) and sets ctx's statistics. */
typedef ncc_status (*ncc_node_rewrite_fn)(ncc_graph *g, ncc_node *n, ncc_node **slots,
                                          bool *took);
ncc_status ncc_rewrite_nodes(ncc_graph *g, ncc_pass_ctx *ctx, ncc_node_rewrite_fn fn,
                             int n_before, int n_after);
/* A fresh i64 constant [n] holding v (shape operands of inserted nodes). */
ncc_value *ncc_i64_const(ncc_graph *g, const int64_t *v, int n);
/* Replace every use of `from` (node inputs and graph outputs) by `to`. */
void ncc_replace_uses(ncc_graph *g, ncc_value *from, ncc_value *to);

#endif /* NCC_PASS_H */
