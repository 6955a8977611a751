/* passes/memplan.h — the one activation-memory planner of ncc.
 *
 * Intermediate values get offsets into one arena: two values share bytes
 * only when their lifetimes (the steps from the one that writes a value to
 * the last that reads it) are disjoint. Sizes may depend on the batch:
 * a buffer is a * batch + b bytes, and the plan's offsets are of the same
 * form, valid for every batch at once, so a graph with a symbolic batch is
 * planned once at compile time. Used by the `memplan` pass (which records
 * the plan in the IR and its peak in the statistics) and by the executor
 * (runtime/exec.c), which lays out its arena with the same function, and
 * its packing core (memplan_core.c) is the scratch planner of the
 * libraries `--emit=lib` writes.
 */
#ifndef NCC_MEMPLAN_H
#define NCC_MEMPLAN_H

#include "../ir/ir.h"
#include "fusion.h"
#include "memplan_core.h" /* ncc_membuf, NCC_MEMPLAN_ALIGN, the packer */

/* Place bufs (largest first, first fit; for linear sizes a placement is
 * kept only if it is disjoint from every overlapping-in-time buffer for
 * every batch >= 0): ncc_memplan_pack with its scratch allocated here.
 * *arena_a / *arena_b: the arena's bytes. */
ncc_status ncc_memplan_layout(ncc_membuf *bufs, int n, int64_t *arena_a,
                              int64_t *arena_b);

/* Bytes of v as a * (symbol *sym) + b. *sym is the batch symbol: -1 on
 * entry means not chosen yet (the first symbolic dim seen chooses it).
 * False when v's size is not of that form (two symbols, a product of
 * symbols, an unknown dtype). */
bool ncc_memplan_value_size(const ncc_value *v, int *sym, int64_t *a,
                            int64_t *b);

/* A graph's plan: per value id, in_arena and the offset/size (linear in
 * the batch symbol `sym`, -1 when static). Steps are node positions, a
 * fused group's members all acting at the root's position; values inside
 * a group take no memory. ok = false when some intermediate's size is not
 * linear in one symbol (then nothing is planned). */
typedef struct ncc_memplan {
  bool ok;
  int sym;
  int n_values;
  bool *in_arena;
  int64_t *size_a, *size_b, *off_a, *off_b;
  int64_t arena_a, arena_b;
} ncc_memplan;

ncc_status ncc_memplan_build(const ncc_graph *g, const ncc_fuse_plan *fp,
                             ncc_memplan **out);
void ncc_memplan_free(ncc_memplan *p);

/* Peak activation bytes of g, symbolic dims counted as `batch`: with
 * `planned`, the arena of ncc_memplan_build plus the graph inputs and
 * outputs; otherwise (or when the plan is not linear) the largest total of
 * the values alive at one step, a lower bound for any plan. fp may be
 * NULL. Returns -1 when out of memory. */
double ncc_memplan_peak(const ncc_graph *g, const ncc_fuse_plan *fp,
                        int64_t batch, bool planned);
/* Whether the memplan pass annotated g (some node has mem.offset). */
bool ncc_memplan_annotated(const ncc_graph *g);

#endif /* NCC_MEMPLAN_H */
