/* passes/fusion.h — fused groups: how the `fusion` pass marks them in the
 * graph IR and how everyone else (statistics, memory planning, codegen, the
 * executor) reads them back.
 *
 * A group is a set of nodes that one kernel computes. It is written in the
 * IR as two attributes on every member node (docs/FUSION.md):
 *
 *   fuse.group = K        the group's number (any int; equal K = one group)
 *   fuse.kind  = "..."    "eltwise", "epilogue" or "reduce"
 *
 * so the text form round-trips with no new syntax, and the reference
 * interpreter, which ignores attributes it does not know, computes exactly
 * what the unfused graph computes. A group is valid when its members, in
 * graph order, end in one root node whose output 0 is the group's only
 * result: every other member output is read only by members and is not a
 * graph output. Invalid groups (hand-written IR) are ignored by readers:
 * their nodes run unfused.
 */
#ifndef NCC_FUSION_H
#define NCC_FUSION_H

#include "../ir/ir.h"

typedef enum ncc_fuse_kind {
  NCC_FUSE_ELTWISE = 0, /* elementwise nodes of one shape: one loop nest */
  NCC_FUSE_EPILOGUE,    /* MatMul/Gemm/Conv + elementwise on its output
                           (and elementwise work feeding only those) */
  NCC_FUSE_REDUCE,      /* reductions/Softmax/LayerNorm + elementwise, per row */
  NCC_FUSE_KIND_COUNT
} ncc_fuse_kind;

/* Most members and external inputs a group may have (a kernel has at most
 * KIR_MAX_BUFS buffers: the external inputs, the output, packed weights). */
#define NCC_FUSE_MAX_MEMBERS 32
#define NCC_FUSE_MAX_EXT 12

typedef struct ncc_fuse_group {
  int64_t id;         /* the fuse.group attribute */
  ncc_fuse_kind kind;
  int n_members;
  ncc_node **members; /* graph order; members[n_members-1] is the root */
  int n_ext;
  ncc_value **ext;    /* distinct values members read from outside, in
                         order of first use (graph inputs, constants and
                         outputs of other nodes) */
} ncc_fuse_group;

typedef struct ncc_fuse_plan {
  int n_groups;
  ncc_fuse_group *groups;
  int *group_of; /* per node index: index into groups, or -1 */
  int n_nodes;
} ncc_fuse_plan;

const char *ncc_fuse_kind_name(ncc_fuse_kind k);

/* Read the valid groups of g (an empty plan when there are none). */
ncc_status ncc_fuse_plan_build(const ncc_graph *g, ncc_fuse_plan **out);
void ncc_fuse_plan_free(ncc_fuse_plan *p);
/* The root of node i's valid group, or i itself when it is not fused. */
static inline int ncc_fuse_exec_pos(const ncc_fuse_plan *p, int i) {
  if (!p || p->group_of[i] < 0) return i;
  const ncc_fuse_group *gr = &p->groups[p->group_of[i]];
  return gr->members[gr->n_members - 1]->id;
}
/* The member index of an epilogue group's contraction (-1: none). */
int ncc_fuse_anchor(const ncc_fuse_group *gr);
/* Whether value v is internal to a valid group (never stored). */
bool ncc_fuse_value_internal(const ncc_fuse_plan *p, const ncc_value *v);

/* Remove every fuse.* attribute; returns how many nodes carried one. */
int ncc_fuse_clear(ncc_graph *g);

#endif /* NCC_FUSION_H */
