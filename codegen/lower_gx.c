/* codegen/lower_gx.c — the evaluator of a fused group's (passes/fusion.h)
 * elementwise members at one point, and epilogues: the helpers the kinds'
 * group lowerings share.
 *
 * The members of a group compute in registers: at each point of the
 * iteration space (an element of a loop nest, a vector of a GEMM tile, a
 * row offset of a reduction sweep) the root's value is built as one
 * expression tree from loads of the external values. A member read by two
 * members is assigned to a local once per point instead of being repeated
 * (a chain of such diamonds would otherwise grow exponentially).
 */
#include <string.h>

#include "lower.h"

void ncc_gx_init(ncc_gx *x, kir_kernel *k, const ncc_fuse_group *gr) {
  memset(x, 0, sizeof *x);
  x->k = k;
  x->gr = gr;
  for (int e = 0; e < NCC_FUSE_MAX_EXT; e++) x->ext_buf[e] = -1;
  for (int m = 0; m < gr->n_members; m++) {
    x->local[m][0] = x->local[m][1] = -1;
    x->dup[m][0] = x->dup[m][1] = -1;
    const ncc_node *n = gr->members[m];
    for (int i = 0; i < n->n_in; i++) {
      int j = ncc_gx_member_of(x, n->in[i]);
      if (j >= 0) x->uses[j]++;
    }
  }
}

void ncc_gx_point(ncc_gx *x) {
  memset(x->memo, 0, sizeof x->memo);
  x->memo_lanes = 0;
}

int ncc_gx_member_of(const ncc_gx *x, const ncc_value *v) {
  if (!v || !v->producer || v->producer_idx != 0) return -1;
  for (int m = 0; m < x->gr->n_members; m++)
    if (x->gr->members[m] == v->producer) return m;
  return -1;
}

int ncc_gx_ext_of(const ncc_gx *x, const ncc_value *v) {
  for (int e = 0; e < x->gr->n_ext; e++)
    if (x->gr->ext[e] == v) return e;
  return -1;
}

int ncc_gx_buf(ncc_gx *x, int e) {
  if (x->ext_buf[e] < 0) x->ext_buf[e] = kir_buf_input(x->k, e, x->gr->ext[e]->dtype);
  return x->ext_buf[e];
}

kir_expr *ncc_gx_value(ncc_gx *x, kir_block *blk, const ncc_value *v, int lanes) {
  int m = ncc_gx_member_of(x, v);
  if (m >= 0) return ncc_gx_member(x, blk, m, lanes);
  int e = ncc_gx_ext_of(x, v);
  NCC_ASSERT(e >= 0);
  return x->ext(x, e, lanes);
}

/* Formulas that read their (single) operand more than once: an operand
 * that is itself a computed expression is put in a local first, or every
 * use would repeat it (and a chain of them would double at each step). */
static bool formula_repeats_operand(ncc_op op) {
  switch (op) {
    /* ir/eltwise.def's formulas: count the reads of X */
#define X 1
#define K(c) 0
#define ADD(p, q) ((p) + (q))
#define SUB(p, q) ((p) + (q))
#define MUL(p, q) ((p) + (q))
#define DIV(p, q) ((p) + (q))
#define NEG(p) (p)
#define ABS(p) (p)
#define SQRT(p) (p)
#define EXP(p) (p)
#define LOG(p) (p)
#define ERF(p) (p)
#define TANH(p) (p)
#define SIN(p) (p)
#define COS(p) (p)
#define TAN(p) (p)
#define ASIN(p) (p)
#define ACOS(p) (p)
#define ATAN(p) (p)
#define SINH(p) (p)
#define COSH(p) (p)
#define ASINH(p) (p)
#define ACOSH(p) (p)
#define ATANH(p) (p)
#define FLOOR(p) (p)
#define CEIL(p) (p)
#define ROUND(p) (p)
#define RBF16(p) (p)
#define RF16(p) (p)
#define SEL_LT(p, q, t, f) ((p) + (q) + (t) + (f))
#define ALPHA 0
#define BETA 0
#define GAMMA 0
#define NCC_UNARY(id, formula) case NCC_OP_##id: return (formula) > 1;
#include "../ir/eltwise.def"
  case NCC_OP_HARDSWISH:
  case NCC_OP_GELU:
  case NCC_OP_SOFTPLUS:
    return true;
  default:
    return false;
  }
}

static bool is_leaf(const kir_expr *e) {
  if (e->k == KIR_E_SPLAT) e = e->a;
  return e->k == KIR_E_CONST || e->k == KIR_E_LOAD || e->k == KIR_E_LOCAL ||
         e->k == KIR_E_VAR || e->k == KIR_E_SYM;
}

kir_expr *ncc_gx_member(ncc_gx *x, kir_block *blk, int m, int lanes) {
  if (x->memo_lanes != lanes) {
    ncc_gx_point(x);
    x->memo_lanes = lanes;
  }
  if (x->memo[m]) return x->memo[m];
  kir_kernel *k = x->k;
  kir_expr *e = x->special ? x->special(x, blk, m, lanes) : NULL;
  if (!e) {
    const ncc_node *n = x->gr->members[m];
    kir_expr *ops[NCC_FUSE_MAX_EXT + 1];
    int nx = 0;
    for (int i = 0; i < n->n_in && nx <= NCC_FUSE_MAX_EXT; i++)
      if (n->in[i]) ops[nx++] = ncc_gx_value(x, blk, n->in[i], lanes);
    if (nx == 1 && formula_repeats_operand(n->op) && !is_leaf(ops[0])) {
      int slot = lanes > 1;
      if (x->dup[m][slot] < 0) x->dup[m][slot] = kir_local_add(k, ops[0]->dt, lanes);
      kir_assign(k, blk, x->dup[m][slot], ops[0]);
      ops[0] = kir_local_ref(k, x->dup[m][slot]);
    }
    e = ncc_lower_eltwise_formula(k, n, ops, nx, lanes);
  }
  if (x->uses[m] > 1 && m != x->gr->n_members - 1) {
    int slot = lanes > 1;
    if (x->local[m][slot] < 0) x->local[m][slot] = kir_local_add(k, e->dt, lanes);
    kir_assign(k, blk, x->local[m][slot], e);
    e = kir_local_ref(k, x->local[m][slot]);
  }
  /* a member computed by ncc_gx_member may have reset the memo for
   * another width; this point is `lanes` wide */
  x->memo_lanes = lanes;
  x->memo[m] = e;
  return e;
}

/* ---- epilogues ---- */

static kir_expr *ep_ext(ncc_gx *x, int e, int lanes) {
  ncc_epilogue *ep = x->ctx;
  kir_kernel *k = x->k;
  kir_expr *idx = kir_const_i(k, 0);
  for (int g = 0; g < ep->n_view; g++)
    idx = kir_add(k, idx, kir_mul(k, ep->coord[g], ep->stride[e][g]));
  int buf = ncc_gx_buf(x, e);
  /* uniform along the columns: one element, in bounds for every lane */
  if (kir_is_const(ep->stride[e][ep->n_view - 1], 0))
    return kir_splat(k, kir_load(k, buf, idx), lanes);
  /* a GEMM tile's columns past the edge (count) must not be read */
  if (ep->count) return kir_loadv(k, buf, idx, lanes, ep->count);
  return kir_load(k, buf, idx);
}

static kir_expr *ep_special(ncc_gx *x, kir_block *blk, int m, int lanes) {
  (void)blk;
  (void)lanes;
  ncc_epilogue *ep = x->ctx;
  return m == ep->anchor ? ep->acc : NULL;
}

bool ncc_epilogue_init(ncc_epilogue *ep, kir_kernel *k,
                       const ncc_fuse_group *gr, const int *first, int n_view) {
  memset(ep, 0, sizeof *ep);
  ncc_gx_init(&ep->gx, k, gr);
  ep->gx.ext = ep_ext;
  ep->gx.special = ep_special;
  ep->gx.ctx = ep;
  ep->n_view = n_view;
  memcpy(ep->first, first, sizeof(int) * (size_t)(n_view + 1));
  ep->anchor = ncc_fuse_anchor(gr);
  if (ep->anchor < 0) return false;
  const ncc_shape *s = &gr->members[ep->anchor]->out[0]->shape;
  for (int m = 0; m < gr->n_members; m++) {
    const ncc_node *n = gr->members[m];
    if (m == ep->anchor) continue;
    if (!ncc_shape_eq(&n->out[0]->shape, s)) return false;
    for (int i = 0; i < n->n_in; i++) {
      const ncc_value *v = n->in[i];
      int e = v ? ncc_gx_ext_of(&ep->gx, v) : -1;
      if (e < 0 || ep->stride[e][0]) continue;
      if (!ncc_lower_view_strides(k, v, s, first, n_view, ep->stride[e])) return false;
    }
  }
  return true;
}

kir_expr *ncc_epilogue_apply(ncc_epilogue *ep, kir_block *blk) {
  ncc_gx_point(&ep->gx);
  int lanes = ep->lanes > 1 ? ep->lanes : 1;
  return ncc_gx_member(&ep->gx, blk, ep->gx.gr->n_members - 1, lanes);
}

int ncc_lower_bind_index(const ncc_epilogue *ep, const ncc_node *n, int in) {
  if (!ep) return in;
  int e = ncc_gx_ext_of(&ep->gx, n->in[in]);
  NCC_ASSERT(e >= 0);
  return e;
}
