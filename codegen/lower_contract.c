/* codegen/lower_contract.c — what a MatMul or Gemm contracts: the one
 * analysis of dims, batch structure, transposes and Gemm's C that the CPU
 * GEMM (lower_matmul.c) and the GPU's tiled GEMM (cstyle/gpu_lower.c)
 * share; each then adds what its kernel needs. */
#include <string.h>

#include "../ir/attrs.h"
#include "lower.h"

static bool f32(const ncc_value *v) { return v && v->dtype == NCC_DT_F32; }

static bool matmul(const ncc_value *a, const ncc_value *b, ncc_contraction *c) {
  const ncc_shape *as = &a->shape, *bs = &b->shape;
  if (as->rank < 2 || bs->rank < 2) return false;
  c->M = as->d[as->rank - 2];
  c->K = as->d[as->rank - 1];
  c->N = bs->d[bs->rank - 1];
  if (bs->d[bs->rank - 2] != c->K) return false;
  if (bs->rank == 2) { /* B shared: A's leading dims are more rows */
    for (int j = 0; j < as->rank - 2; j++) c->fold[c->n_fold++] = as->d[j];
    return true;
  }
  if (as->rank == 2) { /* A shared by every batch of B */
    for (int j = 0; j < bs->rank - 2; j++) c->batch[c->n_batch++] = bs->d[j];
    c->b_batched = true;
    return true;
  }
  /* equal batch dims on both sides (no broadcasting between them) */
  if (as->rank != bs->rank) return false;
  for (int j = 0; j < as->rank - 2; j++) {
    if (as->d[j] != bs->d[j]) return false;
    c->batch[c->n_batch++] = as->d[j];
  }
  c->a_batched = c->b_batched = true;
  return true;
}

static bool gemm(const ncc_node *n, ncc_contraction *c) {
  const ncc_shape *as = &n->in[0]->shape, *bs = &n->in[1]->shape;
  if (as->rank != 2 || bs->rank != 2) return false;
  ncc_gemm_attrs ga;
  ncc_attrs_gemm(n, &ga);
  c->trans_a = ga.trans_a;
  c->trans_b = ga.trans_b;
  c->alpha = ga.alpha;
  c->beta = ga.beta;
  c->M = as->d[c->trans_a ? 1 : 0];
  c->K = as->d[c->trans_a ? 0 : 1];
  c->N = bs->d[c->trans_b ? 0 : 1];
  if (bs->d[c->trans_b ? 1 : 0] != c->K) return false;
  if (n->n_in > 2 && n->in[2]) {
    /* C broadcasts to [M, N]: each of its dims is 1 or the full size */
    const ncc_value *cv = n->in[2];
    if (!f32(cv) || cv->shape.rank > 2) return false;
    for (int j = 0; j < cv->shape.rank; j++) {
      int64_t full = cv->shape.rank - j == 1 ? c->N : c->M;
      if (cv->shape.d[j] != 1 && cv->shape.d[j] != full) return false;
    }
    c->c = cv;
  }
  return true;
}

bool ncc_lower_contraction(const ncc_node *n, ncc_contraction *c) {
  memset(c, 0, sizeof *c);
  c->alpha = c->beta = 1.0f;
  if (n->op != NCC_OP_MATMUL && n->op != NCC_OP_GEMM) return false;
  if (n->n_out != 1 || !f32(n->out[0]) || n->n_in < 2 || !f32(n->in[0]) ||
      !f32(n->in[1]))
    return false;
  return n->op == NCC_OP_GEMM ? gemm(n, c) : matmul(n->in[0], n->in[1], c);
}
