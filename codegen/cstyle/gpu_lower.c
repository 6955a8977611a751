/* codegen/cstyle/gpu_lower.c — lowering graph nodes for the GPU targets.
 *
 * Contractions get a GPU schedule of their own: a tiled GEMM in the classic
 * shared-memory form. A work-group computes a TSM x TSN tile of C; per
 * K-step of TK it loads a TSM x TK tile of A and a TK x TSN tile of B into
 * local memory (each work-item a few elements, coalesced along the
 * contiguous dimension), synchronizes, and each work-item accumulates a
 * TM x TN register tile from the local tiles (rows ty + i*TSM/TM, columns
 * tx + j*TSN/TN, so the B reads and the C stores of neighbouring
 * work-items are adjacent); the epilogue (alpha, beta * C, Conv bias) runs
 * on the registers. A's local tile is stored transposed with one pad
 * column, so neither the tile stores nor the reads conflict on banks.
 *
 * MatMul (batched, or with A's batch folded into M), Gemm (transposes,
 * broadcast C) and Conv (as an implicit GEMM: A = the weights [OC/G, K]
 * with K = IC/G*KH*KW, B(k, p) = the input pixel under kernel tap k for
 * output pixel p, read through a guarded load for padding; batch = N*G)
 * share the kernel; depthwise convolutions (one channel per group) keep the
 * direct schedule. A fused epilogue (passes/fusion.h: bias, activation,
 * residual add) runs on the register tile before the store. Every other node is lowered by codegen/lower*.c for a
 * 4-lane "vector" (scalarized by the renderer) and mapped onto work-items
 * by the renderer's rules.
 */
#include <string.h>

#include "../../ir/attrs.h"
#include "../lower.h"
#include "gpu.h"

#define F32 NCC_DT_F32

typedef struct gemm_cfg {
  int tsm, tsn, tk, tm, tn; /* work-items: (tsm/tm) * (tsn/tn) */
} gemm_cfg;

static const gemm_cfg CFG_BIG = {128, 128, 8, 8, 8};
static const gemm_cfg CFG_MID = {64, 64, 16, 4, 4};
static const gemm_cfg CFG_SMALL = {32, 64, 16, 2, 4};

typedef enum gkind { G_MATMUL, G_GEMM, G_CONV } gkind;

/* The contraction as C[b](M x N) = A[b](M x K) B[b](K x N). */
typedef struct gprob {
  const ncc_node *n;
  gkind kind;
  int64_t M, N, K;               /* dims (may be symbolic) */
  int64_t bdims[NCC_MAX_RANK];   /* batch dims (product = batch count) */
  int n_bdims;
  int64_t fold[NCC_MAX_RANK];    /* A's leading dims folded into M */
  int n_fold;
  bool a_batched, b_batched, trans_a, trans_b;
  float alpha, beta;
  const ncc_value *c; /* Gemm C or Conv bias */
  /* Conv */
  ncc_window win; /* ir/window.h */
  int64_t G, OCg, ICg, KH, KW;
  bool pointwise; /* 1x1, stride 1, no padding */
} gprob;

static bool f32v(const ncc_value *v) { return v && v->dtype == F32; }

/* MatMul and Gemm: the shared analysis (codegen/lower_contract.c). */
static bool analyse_contraction(const ncc_node *n, gprob *p) {
  ncc_contraction c;
  if (!ncc_lower_contraction(n, &c)) return false;
  p->M = c.M;
  p->N = c.N;
  p->K = c.K;
  memcpy(p->bdims, c.batch, sizeof p->bdims);
  p->n_bdims = c.n_batch;
  memcpy(p->fold, c.fold, sizeof p->fold);
  p->n_fold = c.n_fold;
  p->a_batched = c.a_batched;
  p->b_batched = c.b_batched;
  p->trans_a = c.trans_a;
  p->trans_b = c.trans_b;
  p->alpha = c.alpha;
  p->beta = c.beta;
  p->c = c.c;
  return true;
}

static bool analyse_conv(const ncc_node *n, gprob *p) {
  const ncc_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (x->shape.rank != 4 || w->shape.rank != 4 || y->shape.rank != 4) return false;
  if (!ncc_shape_is_static(&w->shape) || ncc_dim_is_sym(x->shape.d[1])) return false;
  const ncc_window *win = &p->win;
  if (ncc_window_decode(n, 2, w->shape.d + 2, &p->win) ||
      (win->auto_pad != NCC_AUTO_PAD_NOTSET && win->auto_pad != NCC_AUTO_PAD_VALID))
    return false;
  p->G = win->group;
  int64_t oc = w->shape.d[0];
  if (oc % p->G || x->shape.d[1] != w->shape.d[1] * p->G) return false;
  p->OCg = oc / p->G;
  p->ICg = w->shape.d[1];
  if (p->OCg == 1 && p->ICg == 1) return false; /* depthwise: direct schedule */
  p->KH = win->kernel[0];
  p->KW = win->kernel[1];
  bool pads0 = !win->pad_begin[0] && !win->pad_begin[1] && !win->pad_end[0] &&
               !win->pad_end[1];
  p->pointwise = p->KH == 1 && p->KW == 1 && win->stride[0] == 1 &&
                 win->stride[1] == 1 && pads0;
  if (n->n_in > 2 && n->in[2]) {
    const ncc_value *b = n->in[2];
    if (!f32v(b) || b->shape.rank != 1 || b->shape.d[0] != oc) return false;
    p->c = b;
  }
  p->M = p->OCg;
  p->K = p->ICg * p->KH * p->KW;
  p->N = 0; /* OH*OW, built as an expression */
  p->a_batched = false;
  p->b_batched = true;
  return true;
}

static bool analyse(const ncc_node *n, gprob *p) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->alpha = p->beta = 1.0f;
  if (n->n_out != 1 || !f32v(n->out[0]) || n->n_in < 2 || !f32v(n->in[0]) ||
      !f32v(n->in[1]))
    return false;
  switch (n->op) {
  case NCC_OP_MATMUL: p->kind = G_MATMUL; return analyse_contraction(n, p);
  case NCC_OP_GEMM: p->kind = G_GEMM; return analyse_contraction(n, p);
  case NCC_OP_CONV: p->kind = G_CONV; return analyse_conv(n, p);
  default: return false;
  }
}

/* ---- the tiled kernel ---- */

typedef struct gk {
  kir_kernel *k;
  const gprob *p;
  ncc_epilogue *ep; /* a fused group's elementwise tail, or NULL */
  gemm_cfg cf;
  int ba, bb, bc, by, as, bs; /* buffers (bc -1: none) */
  kir_expr *M, *N, *K, *nb;
  /* Conv */
  kir_expr *C, *H, *W, *OH, *OW, *OC;
} gk;

#define I(v) kir_const_i(k, (v))
#define ADD(a, b) kir_add(k, (a), (b))
#define MUL(a, b) kir_mul(k, (a), (b))
#define DIV(a, b) kir_bin(k, KIR_DIV, (a), (b))
#define REM(a, b) kir_bin(k, KIR_REM, (a), (b))
#define LT(a, b) kir_bin(k, KIR_LT, (a), (b))
#define AND(a, b) kir_bin(k, KIR_AND, (a), (b))

static kir_expr *in_range(kir_kernel *k, kir_expr *pos, kir_expr *size) {
  return AND(kir_bin(k, KIR_GE, pos, I(0)), LT(pos, size));
}

/* A(row, kk) of batch b, zero outside [0,M) x [0,K). */
static kir_expr *a_elem(gk *g, kir_expr *b, kir_expr *row, kir_expr *kk) {
  kir_kernel *k = g->k;
  const gprob *p = g->p;
  kir_expr *guard = AND(LT(row, g->M), LT(kk, g->K));
  kir_expr *idx;
  if (p->kind == G_CONV) {
    kir_expr *grp = REM(b, I(p->G));
    idx = ADD(MUL(ADD(MUL(grp, I(p->OCg)), row), g->K), kk);
  } else {
    kir_expr *base = p->a_batched ? MUL(b, MUL(g->M, g->K)) : I(0);
    idx = ADD(base, p->trans_a ? ADD(MUL(kk, g->M), row) : ADD(MUL(row, g->K), kk));
  }
  return kir_load_guarded(k, g->ba, idx, guard);
}

/* B(kk, col) of batch b, zero outside [0,K) x [0,N) and in the padding. */
static kir_expr *b_elem(gk *g, kir_expr *b, kir_expr *kk, kir_expr *col) {
  kir_kernel *k = g->k;
  const gprob *p = g->p;
  kir_expr *guard = AND(LT(kk, g->K), LT(col, g->N));
  if (p->kind != G_CONV) {
    kir_expr *base = p->b_batched ? MUL(b, MUL(g->K, g->N)) : I(0);
    kir_expr *idx = ADD(base, p->trans_b ? ADD(MUL(col, g->K), kk) : ADD(MUL(kk, g->N), col));
    return kir_load_guarded(k, g->bb, idx, guard);
  }
  kir_expr *img = DIV(b, I(p->G)), *grp = REM(b, I(p->G));
  if (p->pointwise) {
    kir_expr *ch = ADD(MUL(grp, I(p->ICg)), kk);
    kir_expr *idx = ADD(MUL(ADD(MUL(img, g->C), ch), g->N), col);
    return kir_load_guarded(k, g->bb, idx, guard);
  }
  int64_t taps = p->KH * p->KW;
  kir_expr *ic = DIV(kk, I(taps)), *t = REM(kk, I(taps));
  kir_expr *kh = DIV(t, I(p->KW)), *kw = REM(t, I(p->KW));
  kir_expr *oh = DIV(col, g->OW), *ow = REM(col, g->OW);
  const ncc_window *win = &p->win;
  kir_expr *ih = ADD(ADD(MUL(oh, I(win->stride[0])), MUL(kh, I(win->dilation[0]))),
                     I(-win->pad_begin[0]));
  kir_expr *iw = ADD(ADD(MUL(ow, I(win->stride[1])), MUL(kw, I(win->dilation[1]))),
                     I(-win->pad_begin[1]));
  guard = AND(guard, AND(in_range(k, ih, g->H), in_range(k, iw, g->W)));
  kir_expr *ch = ADD(MUL(grp, I(p->ICg)), ic);
  kir_expr *idx = ADD(MUL(ADD(MUL(ADD(MUL(img, g->C), ch), g->H), ih), g->W), iw);
  return kir_load_guarded(k, g->bb, idx, guard);
}

/* Gemm's beta * C(row, col) or Conv's bias(row); guard: inside the output. */
static kir_expr *c_elem(gk *g, kir_expr *b, kir_expr *row, kir_expr *col,
                        kir_expr *guard) {
  kir_kernel *k = g->k;
  const gprob *p = g->p;
  kir_expr *idx;
  if (p->kind == G_CONV) {
    idx = ADD(MUL(REM(b, I(p->G)), I(p->OCg)), row);
  } else {
    const ncc_shape *cs = &p->c->shape;
    idx = I(0);
    if (cs->rank >= 1 && cs->d[cs->rank - 1] != 1) idx = col;
    if (cs->rank == 2 && cs->d[0] != 1)
      idx = ADD(idx, MUL(row, cs->d[1] != 1 ? g->N : I(1)));
  }
  kir_expr *v = kir_load_guarded(k, g->bc, idx, guard);
  if (p->kind != G_CONV && p->beta != 1.0f)
    v = kir_bin(k, KIR_MUL, kir_const_f(k, F32, p->beta), v);
  return v;
}

static kir_expr *y_index(gk *g, kir_expr *b, kir_expr *row, kir_expr *col) {
  kir_kernel *k = g->k;
  const gprob *p = g->p;
  if (p->kind == G_CONV) {
    kir_expr *img = DIV(b, I(p->G)), *oc = ADD(MUL(REM(b, I(p->G)), I(p->OCg)), row);
    return ADD(MUL(ADD(MUL(img, g->OC), oc), g->N), col);
  }
  return ADD(MUL(b, MUL(g->M, g->N)), ADD(MUL(row, g->N), col));
}

/* The output's dims as a fused epilogue sees them (passes/fusion.h):
 * [batch,] rows, columns; for Conv image, channel, pixel. */
static int output_view(const gprob *p, int *first) {
  int r = p->n->out[0]->shape.rank, nv = 0;
  first[nv++] = 0;
  if (p->kind == G_CONV) {
    first[nv++] = 1;
    first[nv++] = 2;
  } else if (p->n_bdims) {
    first[nv++] = r - 2;
    first[nv++] = r - 1;
  } else {
    first[nv++] = r - 1; /* A's batch dims folded into the rows */
  }
  first[nv] = r;
  return nv;
}

/* The group's elementwise members applied to the value at (b, row, col). */
static kir_expr *apply_epilogue(gk *g, kir_block *blk, kir_expr *b, kir_expr *row,
                                kir_expr *col, kir_expr *v, kir_expr *cnt) {
  kir_kernel *k = g->k;
  const gprob *p = g->p;
  ncc_epilogue *ep = g->ep;
  int nv = 0;
  if (p->kind == G_CONV) {
    ep->coord[nv++] = DIV(b, I(p->G));
    ep->coord[nv++] = ADD(MUL(REM(b, I(p->G)), I(p->OCg)), row);
  } else {
    if (ep->n_view == 3) ep->coord[nv++] = b;
    ep->coord[nv++] = row;
  }
  ep->coord[nv++] = col;
  ep->acc = v;
  ep->count = cnt;
  return ncc_epilogue_apply(ep, blk);
}

static gemm_cfg choose_cfg(const gprob *p, kir_expr *M, kir_expr *N) {
  bool ms = M->k == KIR_E_CONST, ns = N->k == KIR_E_CONST;
  if (ms && ns && M->i >= 512 && N->i >= 512) return CFG_BIG;
  if (ms && M->i < 48) return CFG_SMALL;
  (void)p;
  return CFG_MID;
}

/* An i64 value assigned to a fresh local in blk; the local's reference. */
static kir_expr *hoist(kir_kernel *k, kir_block *blk, kir_expr *v) {
  int l = kir_local_add(k, NCC_DT_I64, 1);
  kir_assign(k, blk, l, v);
  return kir_local_ref(k, l);
}

static void emit_gemm(gk *g) {
  kir_kernel *k = g->k;
  const gemm_cfg *cf = &g->cf;
  int nt = (cf->tsm / cf->tm) * (cf->tsn / cf->tn);
  int rows_per = cf->tsm / cf->tm, cols_per = cf->tsn / cf->tn; /* = thread grid */
  int lda = cf->tsm + 1;                                         /* As row pitch */
  g->as = kir_buf_local(k, "As", F32, (int64_t)cf->tk * lda);
  g->bs = kir_buf_local(k, "Bs", F32, (int64_t)cf->tk * cf->tsn);
  int acc[8][8], av[8], bv[8];
  for (int i = 0; i < cf->tm; i++) {
    av[i] = kir_local_add(k, F32, 1);
    for (int j = 0; j < cf->tn; j++) acc[i][j] = kir_local_add(k, F32, 1);
  }
  for (int j = 0; j < cf->tn; j++) bv[j] = kir_local_add(k, F32, 1);

  kir_expr *tiles_m = kir_cdiv(k, g->M, cf->tsm), *tiles_n = kir_cdiv(k, g->N, cf->tsn);
  kir_block top = kir_body_begin();
  int vg = kir_var_new(k), vt = kir_var_new(k);
  kir_stmt *lg = kir_for(k, &top, vg, I(0), MUL(g->nb, MUL(tiles_m, tiles_n)),
                         KIR_GPU_GROUP, 0);
  kir_block gb = kir_body_begin();
  kir_stmt *lt = kir_for(k, &gb, vt, I(0), I(nt), KIR_GPU_THREAD, nt);
  kir_block tb = kir_body_begin();
  kir_expr *gid = kir_var(k, vg), *t = kir_var(k, vt);
  /* the work-item's coordinates, computed once (locals keep the rendered
   * source small: every tile access below uses them) */
  kir_expr *rest = DIV(gid, tiles_n);
  kir_expr *b = hoist(k, &tb, DIV(rest, tiles_m));
  kir_expr *row0 = hoist(k, &tb, MUL(REM(rest, tiles_m), I(cf->tsm)));
  kir_expr *col0 = hoist(k, &tb, MUL(REM(gid, tiles_n), I(cf->tsn)));
  kir_expr *tx = hoist(k, &tb, REM(t, I(cols_per)));
  kir_expr *ty = hoist(k, &tb, DIV(t, I(cols_per)));
  int inside_l = kir_local_add(k, NCC_DT_BOOL, 1);
  kir_expr *zero = kir_const_f(k, F32, 0.0);
  for (int i = 0; i < cf->tm; i++)
    for (int j = 0; j < cf->tn; j++) kir_assign(k, &tb, acc[i][j], zero);

  int vkt = kir_var_new(k);
  kir_stmt *lk = kir_for(k, &tb, vkt, I(0), kir_cdiv(k, g->K, cf->tk), KIR_SERIAL, 0);
  kir_block kb = kir_body_begin();
  kir_expr *k0 = MUL(kir_var(k, vkt), I(cf->tk));
  /* cooperative tile loads, contiguous global dimension fastest */
  for (int l = 0; l < cf->tsm * cf->tk / nt; l++) {
    kir_expr *e = ADD(t, I((int64_t)l * nt)), *r, *c;
    if (g->p->trans_a) {
      c = DIV(e, I(cf->tsm));
      r = REM(e, I(cf->tsm));
    } else {
      r = DIV(e, I(cf->tk));
      c = REM(e, I(cf->tk));
    }
    kir_store(k, &kb, g->as, ADD(MUL(c, I(lda)), r),
              a_elem(g, b, ADD(row0, r), ADD(k0, c)), NULL);
  }
  for (int l = 0; l < cf->tk * cf->tsn / nt; l++) {
    kir_expr *e = ADD(t, I((int64_t)l * nt)), *r, *c;
    if (g->p->trans_b) {
      c = DIV(e, I(cf->tk));
      r = REM(e, I(cf->tk));
    } else {
      r = DIV(e, I(cf->tsn));
      c = REM(e, I(cf->tsn));
    }
    kir_store(k, &kb, g->bs, ADD(MUL(r, I(cf->tsn)), c),
              b_elem(g, b, ADD(k0, r), ADD(col0, c)), NULL);
  }
  kir_barrier(k, &kb);
  int vkk = kir_var_new(k);
  kir_stmt *lkk = kir_for(k, &kb, vkk, I(0), I(cf->tk), KIR_UNROLL, cf->tk);
  kir_block ib = kir_body_begin();
  kir_expr *kk = kir_var(k, vkk);
  for (int i = 0; i < cf->tm; i++)
    kir_assign(k, &ib, av[i],
               kir_load(k, g->as, ADD(MUL(kk, I(lda)), ADD(ty, I((int64_t)i * rows_per)))));
  for (int j = 0; j < cf->tn; j++)
    kir_assign(k, &ib, bv[j],
               kir_load(k, g->bs, ADD(MUL(kk, I(cf->tsn)), ADD(tx, I((int64_t)j * cols_per)))));
  for (int i = 0; i < cf->tm; i++)
    for (int j = 0; j < cf->tn; j++)
      kir_assign(k, &ib, acc[i][j],
                 kir_fma(k, kir_local_ref(k, av[i]), kir_local_ref(k, bv[j]),
                         kir_local_ref(k, acc[i][j])));
  kir_body_end(lkk, &ib);
  kir_barrier(k, &kb);
  kir_body_end(lk, &kb);

  /* epilogue on the register tile */
  for (int i = 0; i < cf->tm; i++)
    for (int j = 0; j < cf->tn; j++) {
      kir_expr *row = ADD(row0, ADD(ty, I((int64_t)i * rows_per)));
      kir_expr *col = ADD(col0, ADD(tx, I((int64_t)j * cols_per)));
      kir_assign(k, &tb, inside_l, AND(LT(row, g->M), LT(col, g->N)));
      kir_expr *inside = kir_local_ref(k, inside_l);
      kir_expr *v = kir_local_ref(k, acc[i][j]);
      if (g->p->alpha != 1.0f) v = kir_bin(k, KIR_MUL, kir_const_f(k, F32, g->p->alpha), v);
      if (g->bc >= 0) v = kir_bin(k, KIR_ADD, v, c_elem(g, b, row, col, inside));
      kir_expr *cnt = kir_select(k, inside, I(1), I(0));
      if (g->ep) v = apply_epilogue(g, &tb, b, row, col, v, cnt);
      kir_store(k, &tb, g->by, y_index(g, b, row, col), v, cnt);
    }
  kir_body_end(lt, &tb);
  kir_body_end(lg, &gb);
  kir_kernel_set_body(k, &top);
}

static ncc_status lower_gemm(const gprob *p, const ncc_fuse_group *gr, const char *name,
                             kir_kernel **out) {
  const ncc_node *n = p->n;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  gk g = {.k = k, .p = p, .bc = -1};
  ncc_epilogue ep;
  if (gr) {
    int first[NCC_MAX_RANK + 1];
    int nv = output_view(p, first);
    if (!ncc_epilogue_init(&ep, k, gr, first, nv)) {
      kir_kernel_free(k);
      return NCC_ERR_UNSUPPORTED;
    }
    ep.lanes = 1;
    g.ep = &ep;
  }
  /* inputs bind to node inputs, or to the group's external values */
  g.ba = kir_buf_input(k, ncc_lower_bind_index(g.ep, n, p->kind == G_CONV ? 1 : 0), F32);
  g.bb = kir_buf_input(k, ncc_lower_bind_index(g.ep, n, p->kind == G_CONV ? 0 : 1), F32);
  if (p->c && (p->kind == G_CONV || p->beta != 0.0f))
    g.bc = kir_buf_input(k, ncc_lower_bind_index(g.ep, n, 2), F32);
  g.by = kir_buf_output(k, 0, F32);
  g.nb = I(1);
  if (p->kind == G_CONV) {
    const ncc_shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
    g.C = ncc_lower_dim(k, xs->d[1]);
    g.H = ncc_lower_dim(k, xs->d[2]);
    g.W = ncc_lower_dim(k, xs->d[3]);
    g.OC = ncc_lower_dim(k, ys->d[1]);
    g.OH = ncc_lower_dim(k, ys->d[2]);
    g.OW = ncc_lower_dim(k, ys->d[3]);
    g.M = I(p->M);
    g.K = I(p->K);
    g.N = MUL(g.OH, g.OW);
    g.nb = MUL(ncc_lower_dim(k, xs->d[0]), I(p->G));
  } else {
    g.M = ncc_lower_dim(k, p->M);
    for (int j = 0; j < p->n_fold; j++) g.M = MUL(g.M, ncc_lower_dim(k, p->fold[j]));
    g.N = ncc_lower_dim(k, p->N);
    g.K = ncc_lower_dim(k, p->K);
    for (int j = 0; j < p->n_bdims; j++) g.nb = MUL(g.nb, ncc_lower_dim(k, p->bdims[j]));
  }
  g.cf = choose_cfg(p, g.M, g.N);
  emit_gemm(&g);
  if (!kir_ok(k)) {
    kir_kernel_free(k);
    return ncc_error(NCC_ERR_NOMEM, "out of memory lowering %s", ncc_op_name(n->op));
  }
  *out = k;
  return NCC_OK;
}

/* ---- dispatch ---- */

bool ncc_gpu_supports_op(const ncc_node *n) {
  gprob p;
  if (ncc_node_is_view(n)) return false;
  /* blocked layouts are a CPU schedule: such nodes run on the host */
  if (!ncc_lower_plain(n)) return false;
  return analyse(n, &p) || ncc_lower_supports(n);
}

/* A kernel the device runtime can bind: every global buffer is a node
 * input or output (packed constant data has no recorded size). */
static bool bindable(const kir_kernel *k) {
  for (int b = 0; b < k->n_bufs; b++)
    if (k->bufs[b].local_elems == 0 && k->bufs[b].bind == KIR_BIND_DATA) return false;
  return true;
}

/* A fused group as one kernel: an epilogue group is the tiled GEMM with
 * the group's elementwise members applied to the register tile before the
 * store; elementwise and reduce groups take their generic lowering, mapped
 * by the renderer's rules. */
ncc_status ncc_gpu_lower_group(const ncc_fuse_group *gr, const char *name,
                               const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  if (gr->n_members < 2 || gr->n_ext > NCC_FUSE_MAX_EXT) return NCC_ERR_UNSUPPORTED;
  for (int m = 0; m < gr->n_members; m++)
    if (!ncc_lower_plain(gr->members[m])) return NCC_ERR_UNSUPPORTED;
  if (gr->kind == NCC_FUSE_EPILOGUE) {
    gprob p;
    if (!analyse(gr->members[0], &p)) return NCC_ERR_UNSUPPORTED;
    return lower_gemm(&p, gr, name, out);
  }
  ncc_status st = ncc_lower_group(gr, name, o, out);
  if (st == NCC_OK && !bindable(*out)) {
    kir_kernel_free(*out);
    *out = NULL;
    return NCC_ERR_UNSUPPORTED;
  }
  return st;
}

ncc_status ncc_gpu_lower_node(const ncc_node *n, const char *name,
                              const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  if (ncc_node_is_view(n) || !ncc_lower_plain(n)) return NCC_ERR_UNSUPPORTED;
  gprob p;
  if (analyse(n, &p)) return lower_gemm(&p, NULL, name, out);
  ncc_status st = ncc_lower_node(n, name, o, out);
  if (st == NCC_OK && !bindable(*out)) {
    kir_kernel_free(*out);
    *out = NULL;
    return NCC_ERR_UNSUPPORTED;
  }
  return st;
}

const ncc_lower_target ncc_gpu_lower_target = {
    .supports = ncc_gpu_supports_op,
    .lower_node = ncc_gpu_lower_node,
    .lower_group = ncc_gpu_lower_group,
};

ncc_status ncc_gpu_lower_all(const ncc_graph *g, ncc_fuse_plan **fp, kir_kernel ***ks,
                             bool **fused) {
  ncc_lower_request rq = {.target = &ncc_gpu_lower_target,
                          .opts = {.vector_width = NCC_GPU_VECTOR_WIDTH},
                          .dump = true};
  ncc_lowered low;
  ncc_status st = ncc_lower_graph_new(g, &rq, &low);
  *fp = low.fp;
  *ks = low.kernels;
  *fused = low.group_kernel;
  return st;
}
