/* codegen/lower_graph.c — the graph-lowering loop (lower.h): fused
 * groups first, each as one kernel where the target takes it, then every
 * other node (the members of declined groups included) on its own. */
#include <stdio.h>

#include "../ir/ctime.h"
#include "../ir/options.h"
#include "escape.h"
#include "lower.h"

const ncc_lower_target ncc_lower_target_generic = {
    .supports = ncc_lower_supports,
    .lower_node = ncc_lower_node,
    .lower_group = ncc_lower_group,
};

/* "<prefix>k<i>_<op><tail>", the op through the escaping layer (the name
 * becomes a symbol, or an identifier in generated source). */
static void kernel_name(char *name, size_t cap, const ncc_lower_request *rq, int i,
                        ncc_op op, const char *tail) {
  char head[96];
  snprintf(head, sizeof head, "%sk%d_", rq->prefix ? rq->prefix : "", i);
  ncc_escape_kernel_name(name, cap, head, ncc_op_name(op), tail);
}

/* The op a group's kernel is named after. */
/* Account one lowering call that began at t0 with the packing clock at p0:
 * a kernel it made gets its own row; a declined attempt still costs. */
static void account(const kir_kernel *k, int nodes, double t0, double p0) {
  double pack = ncc_ctime_pack_total() - p0;
  double lower = ncc_ctime_now() - t0 - pack;
  int row = k ? ncc_ctime_kernel(k->name, nodes) : -1;
  ncc_ctime_kernel_add(row, NCC_PHASE_LOWER, lower > 0 ? lower : 0);
  ncc_ctime_kernel_add(row, NCC_PHASE_PACK, pack);
}

static ncc_op group_op(const ncc_fuse_group *gr, bool by_anchor) {
  int am = by_anchor ? ncc_fuse_anchor(gr) : -1;
  return gr->members[am >= 0 ? am : 0]->op;
}

ncc_status ncc_lower_graph(const ncc_graph *g, const ncc_fuse_plan *fp,
                           const ncc_lower_request *rq, kir_kernel **kernels,
                           bool *group_kernel, int *n_lowered) {
  const ncc_lower_target *t = rq->target;
  FILE *df = rq->dump && ncc_opts_dump(NCC_DUMP_KERNEL_IR) ? ncc_opts_dump_file() : NULL;
  char name[160];
  *n_lowered = 0;
  for (int gi = 0; fp && gi < fp->n_groups; gi++) {
    const ncc_fuse_group *gr = &fp->groups[gi];
    int root = gr->members[gr->n_members - 1]->id;
    if (group_kernel) group_kernel[gi] = false;
    if (!t->lower_group) continue;
    kernel_name(name, sizeof name, rq, root, group_op(gr, rq->name_by_anchor), "_fused");
    double t0 = ncc_ctime_now(), p0 = ncc_ctime_pack_total();
    ncc_status st = t->lower_group(gr, name, &rq->opts, &kernels[root]);
    account(st == NCC_OK ? kernels[root] : NULL, gr->n_members, t0, p0);
    if (st == NCC_ERR_UNSUPPORTED) continue;
    if (st != NCC_OK) return st;
    if (group_kernel) group_kernel[gi] = true;
    if (df) kir_print(kernels[root], df);
    (*n_lowered)++;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const ncc_node *n = g->nodes[i];
    if (fp && fp->group_of[i] >= 0) {
      const ncc_fuse_group *gr = &fp->groups[fp->group_of[i]];
      if (kernels[gr->members[gr->n_members - 1]->id]) continue; /* fused */
    }
    if (!t->supports(n) || (rq->skip_views && ncc_node_is_view(n))) continue;
    kernel_name(name, sizeof name, rq, i, n->op, "");
    double t0 = ncc_ctime_now(), p0 = ncc_ctime_pack_total();
    ncc_status st = t->lower_node(n, name, &rq->opts, &kernels[i]);
    account(st == NCC_OK ? kernels[i] : NULL, 1, t0, p0);
    if (st == NCC_ERR_UNSUPPORTED) continue;
    if (st != NCC_OK) return st;
    if (df) kir_print(kernels[i], df);
    (*n_lowered)++;
  }
  return NCC_OK;
}

ncc_status ncc_lower_graph_new(const ncc_graph *g, const ncc_lower_request *rq,
                               ncc_lowered *out) {
  *out = (ncc_lowered){.n_nodes = g->n_nodes};
  ncc_status st = ncc_fuse_plan_build(g, &out->fp);
  if (st != NCC_OK) return st;
  out->kernels = ncc_calloc((size_t)g->n_nodes + 1, sizeof *out->kernels);
  out->group_kernel = ncc_calloc((size_t)out->fp->n_groups + 1, sizeof *out->group_kernel);
  if (!out->kernels || !out->group_kernel) return NCC_ERR_NOMEM;
  return ncc_lower_graph(g, out->fp, rq, out->kernels, out->group_kernel, &out->n_kernels);
}

void ncc_lowered_free(ncc_lowered *l) {
  if (l->kernels)
    for (int i = 0; i < l->n_nodes; i++) kir_kernel_free(l->kernels[i]);
  ncc_free(l->kernels, 0);
  ncc_free(l->group_kernel, 0);
  ncc_fuse_plan_free(l->fp);
  *l = (ncc_lowered){0};
}
