/* codegen/lower_matmul.c — MatMul and Gemm as a register-tiled GEMM.
 *
 * The BLIS structure, reduced to what a JIT with known shapes needs:
 * - B (weights, usually a constant) is packed once at compile time into
 *   panels of NR = NV vectors of columns, k-major and zero-padded
 *   ([N/NR][K][NR]), so the micro-kernel reads one contiguous cache line
 *   pair per k. A non-constant B (attention) is read in place, rows of NR
 *   columns with masked loads at the right edge.
 * - The micro-kernel keeps an MR x NR tile of C in MR*NV vector accumulators
 *   (8 x 48 with AVX-512: 24 zmm) and per k does NV vector loads of B,
 *   MR broadcasts of A and MR*NV FMAs; the epilogue (alpha, beta*C bias)
 *   runs on the tile while it is in registers, with masked stores at the
 *   right edge.
 * - One parallel loop covers batch x N-panels x full M-tiles (panel-major,
 *   so a thread's consecutive tiles share a B panel in cache); the rows
 *   below the last full tile (M % MR) are a second parallel loop over the
 *   panels, one tile of M % MR rows each (a symbolic M: one tile of MR
 *   rows clamped to the last row, or a 1-row tile for one row).
 * Batched MatMul: B of rank 2 folds A's batch dims into M; equal batch
 * dims on both sides become the outer batch index. A 1x1 stride-1 Conv is
 * the same GEMM per image (weights [OC, IC] x image [IC, H*W], bias per
 * row). Anything else runs on the reference kernel or lower_conv.c.
 */
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/ctime.h"
#include "lower.h"

/* Register tile: MR rows x NV vectors. 8 x 3 (24 accumulators) needs the 32
 * vector registers of AVX-512 (and AArch64); with 16 registers (AVX2, SSE)
 * 6 x 2 leaves room for the B vectors and the A broadcast. 8 x 3 measured
 * 5-10% faster than 6 x 2 on AVX-512 (bench/sgemm, n = 768 and 1024). */
#define MR_MAX 8
#define NV_MAX 3

typedef struct mm {
  const ncc_node *n;
  bool gemm, trans_a, trans_b;
  float alpha, beta;
  int64_t M, N, K; /* dims (may be symbolic) */
  int64_t batch[NCC_MAX_RANK];
  int n_batch; /* batch dims outside M (equal on A, B, Y) */
  int64_t fold[NCC_MAX_RANK];
  int n_fold; /* A's leading dims folded into M (B rank 2) */
  const ncc_value *c; /* Gemm bias or NULL */
  bool b_const;
  int a_in, b_in;  /* node inputs holding A and B */
  bool a_batched;  /* A has the batch dims too (else shared, like weights) */
  bool bias_rows;  /* c is one value per row (Conv bias) */
} mm;

static bool same_dim(int64_t a, int64_t b) { return a == b; }

/* A 1x1, stride-1, unpadded, ungrouped Conv is Y[n] = W[OC, IC] X[n][IC, HW]:
 * the weights are A (shared by the batch), the image is B. */
static bool analyse_conv1x1(const ncc_node *n, mm *p) {
  const ncc_value *x = n->in[0], *w = n->in[1], *y = n->out[0];
  if (!x || !w || !y || x->dtype != NCC_DT_F32 || w->dtype != NCC_DT_F32 ||
      y->dtype != NCC_DT_F32 || x->shape.rank != 4 || w->shape.rank != 4 ||
      y->shape.rank != 4)
    return false;
  ncc_window win;
  if (w->shape.d[2] != 1 || w->shape.d[3] != 1 ||
      ncc_window_decode(n, 2, w->shape.d + 2, &win) || win.group != 1 ||
      win.auto_pad != NCC_AUTO_PAD_NOTSET)
    return false;
  for (int i = 0; i < 2; i++)
    if (win.stride[i] != 1 || win.pad_begin[i] != 0 || win.pad_end[i] != 0)
      return false;
  if (!same_dim(x->shape.d[1], w->shape.d[1]) || !same_dim(x->shape.d[2], y->shape.d[2]) ||
      !same_dim(x->shape.d[3], y->shape.d[3]))
    return false;
  p->M = w->shape.d[0];
  p->K = w->shape.d[1];
  p->N = x->shape.d[2]; /* times W, below */
  p->fold[p->n_fold++] = x->shape.d[3];
  p->batch[p->n_batch++] = x->shape.d[0];
  p->a_in = 1;
  p->b_in = 0;
  if (n->n_in > 2 && n->in[2]) {
    const ncc_value *b = n->in[2];
    if (b->dtype != NCC_DT_F32 || b->shape.rank != 1 || b->shape.d[0] != p->M) return false;
    p->c = b;
    p->bias_rows = true;
  }
  return true;
}

static bool analyse(const ncc_node *n, mm *p) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->alpha = 1.0f;
  p->beta = 1.0f;
  p->a_in = 0;
  p->b_in = 1;
  p->a_batched = true;
  if (n->op == NCC_OP_CONV) {
    if (n->n_out != 1 || n->n_in < 2) return false;
    p->a_batched = false;
    return analyse_conv1x1(n, p);
  }
  ncc_contraction c; /* lower_contract.c */
  if (!ncc_lower_contraction(n, &c)) return false;
  /* A shared by the batches of B is not taken (A is indexed per batch) */
  if (c.n_batch && !c.a_batched) return false;
  /* a constant 2-D B is packed at compile time */
  const ncc_value *b = n->in[1];
  p->b_const = b->kind == NCC_VAL_CONST && b->data && b->shape.rank == 2 &&
               ncc_shape_is_static(&b->shape);
  if (c.trans_b && !p->b_const) return false; /* would need a gather */
  p->gemm = n->op == NCC_OP_GEMM;
  p->trans_a = c.trans_a;
  p->trans_b = c.trans_b;
  p->alpha = c.alpha;
  p->beta = c.beta;
  p->M = c.M;
  p->N = c.N;
  p->K = c.K;
  memcpy(p->batch, c.batch, sizeof p->batch);
  p->n_batch = c.n_batch;
  memcpy(p->fold, c.fold, sizeof p->fold);
  p->n_fold = c.n_fold;
  p->c = c.c;
  return true;
}

bool ncc_lower_matmul_supports(const ncc_node *n) {
  mm p;
  if (n->op != NCC_OP_MATMUL && n->op != NCC_OP_GEMM && n->op != NCC_OP_CONV)
    return false;
  return analyse(n, &p);
}

/* Pack constant B into [ceil(N/NR)][K][NR] panels (64-byte aligned). */
static float *pack_b(const mm *p, int nr, void **owned) {
  const float *b = p->n->in[1]->data;
  int64_t N = p->N, K = p->K, np = (N + nr - 1) / nr;
  size_t count = (size_t)(np * K * nr);
  unsigned char *raw = ncc_malloc(count * sizeof(float) + 64);
  if (!raw) return NULL;
  float *dst = (float *)(void *)(raw + (64 - (uintptr_t)raw % 64) % 64);
  for (int64_t jp = 0; jp < np; jp++)
    for (int64_t k = 0; k < K; k++)
      for (int c = 0; c < nr; c++) {
        int64_t col = jp * nr + c;
        float v = 0.0f;
        if (col < N) v = p->trans_b ? b[col * K + k] : b[k * N + col];
        dst[(jp * K + k) * nr + c] = v;
      }
  *owned = raw;
  return dst;
}

typedef struct mmk {
  kir_kernel *k;
  const mm *p;
  ncc_epilogue *ep; /* fused epilogue or NULL */
  int w, nr;
  int ba, bb, bc, by; /* buffers (bc -1: no bias) */
  kir_expr *M, *N, *K;
  int mr, nv; /* register tile */
  int acc[MR_MAX][NV_MAX], bv[NV_MAX], av;
} mmk;

#define I(v) kir_const_i(k, (v))

/* Element index of A(row, kk) in batch `b`. */
static kir_expr *a_index(mmk *g, kir_expr *b, kir_expr *row, kir_expr *kk) {
  kir_kernel *k = g->k;
  kir_expr *base = g->p->a_batched ? kir_mul(k, b, kir_mul(k, g->M, g->K)) : I(0);
  kir_expr *off = g->p->trans_a ? kir_add(k, kir_mul(k, kk, g->M), row)
                                : kir_add(k, kir_mul(k, row, g->K), kk);
  return kir_add(k, base, off);
}

/* Y(b, rr, col .. col+w) = alpha*val + beta*C and the fused elementwise
 * chain, stored masked to cnt columns. */
static void epilogue(mmk *g, kir_block *blk, kir_expr *b, kir_expr *rr, kir_expr *col,
                     kir_expr *cnt, kir_expr *val) {
  kir_kernel *k = g->k;
  int w = val->lanes;
  if (g->p->alpha != 1.0f)
    val = kir_bin(k, KIR_MUL, val, kir_splat(k, kir_const_f(k, NCC_DT_F32, g->p->alpha), w));
  if (g->bc >= 0 && g->p->beta != 0.0f) {
    const ncc_shape *cs = &g->p->c->shape;
    bool row_vec = !g->p->bias_rows && cs->rank >= 1 && cs->d[cs->rank - 1] != 1;
    bool has_m = g->p->bias_rows || (cs->rank == 2 && cs->d[0] != 1);
    kir_expr *cidx = has_m ? kir_mul(k, rr, row_vec ? g->N : I(1)) : I(0);
    kir_expr *cv = row_vec ? kir_loadv(k, g->bc, kir_add(k, cidx, col), w, cnt)
                           : kir_splat(k, kir_load(k, g->bc, cidx), w);
    if (g->p->beta != 1.0f)
      cv = kir_bin(k, KIR_MUL, cv, kir_splat(k, kir_const_f(k, NCC_DT_F32, g->p->beta), w));
    val = kir_bin(k, KIR_ADD, val, cv);
  }
  if (g->ep) {
    /* the fused elementwise chain, on the tile still in registers */
    ncc_epilogue *ep = g->ep;
    int nv = 0;
    if (ep->n_view == 3) ep->coord[nv++] = b;
    ep->coord[nv++] = rr;
    ep->coord[nv++] = col;
    ep->acc = val;
    ep->count = cnt;
    val = ncc_epilogue_apply(ep, blk);
  }
  kir_expr *base = kir_mul(k, b, kir_mul(k, g->M, g->N));
  kir_expr *yidx = kir_add(k, base, kir_add(k, kir_mul(k, rr, g->N), col));
  kir_store(k, blk, g->by, yidx, val, cnt);
}

/* Row r of a tile at `row`, clamped to `last` (NULL: not clamped). */
static kir_expr *tile_row(kir_kernel *k, kir_expr *row, int r, kir_expr *last) {
  kir_expr *rr = kir_add(k, row, I(r));
  return last && r > 0 ? kir_min(k, rr, last) : rr;
}

/* One tile of `mr` rows at `row`, NR columns of panel `jp`, batch `b`;
 * with `last` (not NULL) rows past it are row `last` again (computed and
 * stored twice, with the same values: a kernel's output never shares
 * memory with its inputs, memplan). */
static void emit_tile(mmk *g, kir_block *blk, int mr, kir_expr *b,
                      kir_expr *row, kir_expr *jp, kir_expr *last) {
  kir_kernel *k = g->k;
  int w = g->w;
  kir_expr *zero = kir_splat(k, kir_const_f(k, NCC_DT_F32, 0.0), w);
  for (int r = 0; r < mr; r++)
    for (int v = 0; v < g->nv; v++) kir_assign(k, blk, g->acc[r][v], zero);
  int vk = kir_var_new(k);
  kir_stmt *lk = kir_for(k, blk, vk, I(0), g->K, KIR_SERIAL, 0);
  kir_block kb = kir_body_begin();
  kir_expr *kk = kir_var(k, vk);
  kir_expr *col0 = kir_mul(k, jp, I(g->nr));
  for (int v = 0; v < g->nv; v++) {
    kir_expr *ld;
    if (g->p->b_const) {
      /* packed panel: ((jp*K + k)*NR + v*w) */
      kir_expr *idx = kir_add(k, kir_mul(k, kir_add(k, kir_mul(k, jp, g->K), kk),
                                         I(g->nr)), I(v * w));
      ld = kir_loadv(k, g->bb, idx, w, NULL);
    } else {
      kir_expr *col = kir_add(k, col0, I(v * w));
      kir_expr *base = kir_mul(k, b, kir_mul(k, g->K, g->N));
      kir_expr *idx = kir_add(k, base, kir_add(k, kir_mul(k, kk, g->N), col));
      ld = kir_loadv(k, g->bb, idx, w,
                     kir_bin(k, KIR_SUB, g->N, col));
    }
    kir_assign(k, &kb, g->bv[v], ld);
  }
  for (int r = 0; r < mr; r++) {
    kir_expr *rr = tile_row(k, row, r, last);
    kir_assign(k, &kb, g->av, kir_splat(k, kir_load(k, g->ba, a_index(g, b, rr, kk)), w));
    for (int v = 0; v < g->nv; v++)
      kir_assign(k, &kb, g->acc[r][v],
                 kir_fma(k, kir_local_ref(k, g->av), kir_local_ref(k, g->bv[v]),
                         kir_local_ref(k, g->acc[r][v])));
  }
  kir_body_end(lk, &kb);
  /* epilogue: y = alpha*acc + beta*C, masked at the right edge */
  for (int r = 0; r < mr; r++) {
    kir_expr *rr = tile_row(k, row, r, last);
    for (int v = 0; v < g->nv; v++) {
      kir_expr *col = kir_add(k, col0, I(v * w));
      epilogue(g, blk, b, rr, col, kir_bin(k, KIR_SUB, g->N, col),
               kir_local_ref(k, g->acc[r][v]));
    }
  }
}
/* ---- bf16 products on AMX tiles (lower_amx.c) ----
 * At --precision=bf16 the precision pass rounds the weights to bf16
 * values and A through a RoundBF16 node, so a product of them is exact in
 * bf16: tdpbf16ps gives the f32 kernel's numbers up to the order of the
 * f32 sums. Taken only where both operands are known exact (A made by
 * RoundBF16, every weight with zero low 16 bits): a model at f32 keeps
 * its f32 products. */

/* The AMX bf16 GEMM fits: a MatMul/Gemm (no batch dims, A not
 * transposed) with constant bf16-exact weights and A from RoundBF16. */
static bool amx_bf16_fits(const mm *p, const ncc_lower_opts *o, int w, ncc_amx_gemm *ag) {
  const ncc_node *n = p->n;
  const ncc_value *a = n->in[p->a_in];
  if (!o->amx_bf16 || w != 16 || n->op == NCC_OP_CONV || !p->b_const || p->trans_a ||
      p->n_batch || !a->producer || a->producer->op != NCC_OP_ROUNDBF16 ||
      ncc_dim_is_sym(p->K) || p->K <= 0)
    return false;
  int64_t kp = (p->K + 31) / 32 * 32; /* ncc_lower_amx_fits bounds it (stack) */
  if (!ncc_lower_bf16_exact(n->in[1]->data, p->K * p->N)) return false;
  memset(ag, 0, sizeof *ag);
  ag->K = kp;
  ag->a_cols = p->K;
  ag->lda = p->K;
  ag->N = p->N;
  ag->a_esize = 2;
  ag->a_f32 = true;
  int64_t ms = ncc_dim_is_sym(p->M) ? 0 : p->M, mm_ = ncc_dim_is_sym(p->M) ? 1 : p->M;
  for (int j = 0; j < p->n_fold; j++) {
    if (ncc_dim_is_sym(p->fold[j])) ms = 0;
    else {
      ms *= p->fold[j];
      mm_ *= p->fold[j];
    }
  }
  ag->m_static = ms;
  ag->m_min = mm_;
  return ncc_lower_amx_fits(ag);
}

/* Column n's bf16 pair at k = 2q, 2q+1 (the weights' high halves). */
static uint32_t bf16_word(const void *ctx, int64_t q, int64_t n) {
  const mm *p = ctx;
  const float *b = p->n->in[1]->data;
  uint32_t w = 0;
  for (int64_t i = 0; i < 2 && 2 * q + i < p->K; i++) {
    int64_t kk = 2 * q + i;
    uint32_t u;
    memcpy(&u, &b[p->trans_b ? n * p->K + kk : kk * p->N + n], sizeof u);
    w |= (u >> 16) << (16 * i);
  }
  return w;
}

static void amx_row(kir_kernel *k, kir_block *blk, void *ctx, kir_expr *sums, kir_expr *row,
                    kir_expr *col, kir_expr *count) {
  (void)k;
  epilogue(ctx, blk, I(0), row, col, count, sums);
}

static ncc_status lower_amx_bf16(mmk *g, ncc_amx_gemm *ag) {
  kir_kernel *k = g->k;
  double t0 = ncc_ctime_pack_begin();
  size_t bytes = 0;
  uint32_t *pb = ncc_lower_amx_pack(ag, bf16_word, g->p, &bytes);
  ncc_ctime_pack_end(t0);
  if (!pb) return ncc_error(NCC_ERR_NOMEM, "out of memory packing MatMul weights");
  ag->b_buf = ncc_lower_data_buf(k, "tiles_b", NCC_DT_I32, pb, bytes);
  ag->a_buf = g->ba;
  ag->M = g->M;
  ag->dp = KIR_TILE_DPBF16PS;
  ag->acc_dt = NCC_DT_F32;
  ag->row = amx_row;
  ag->ctx = g;
  kir_block top = kir_body_begin();
  ncc_lower_amx_gemm(k, &top, ag);
  kir_kernel_set_body(k, &top);
  return NCC_OK;
}


/* ---- bf16 products of two activations on AMX tiles ----
 * Attention's Q.K^T and P.V at --precision=bf16: both operands come from
 * RoundBF16, so their products are exact in bf16. Nothing can be packed at
 * compile time: a task (a batch, a chunk of row blocks) packs its batch's
 * B into a bf16 stack scratch in the tiles' layout (word j of row r: the
 * pair b[2r][j], b[2r+1][j]; a 32-lane vector per row, read by gathers
 * of the pairs' lanes, k and N padded with zeros), converts the rows of
 * each block of A to bf16 (K padded to 32), and runs 2 x 2 (or fewer)
 * accumulator tiles over every panel pair with tdpbf16ps; the epilogue
 * (fused chains: the attention mask's Add) is the f32 kernel's. */
#define BMM_SCRATCH (96 * 1024)

typedef struct bmm_bf16 {
  int64_t M, K, N, kp, S, rows_b, P, tm, tn, blocks, chunks, chunk;
} bmm_bf16;

static bool from_round(const ncc_value *v) {
  return v && v->producer && v->producer->op == NCC_OP_ROUNDBF16;
}

static bool amx_bmm_fits(const mm *p, const ncc_lower_opts *o, int w, bmm_bf16 *t) {
  const ncc_node *n = p->n;
  if (!o->amx_bf16 || w != 16 || n->op != NCC_OP_MATMUL || p->b_const || p->trans_a ||
      p->trans_b || !p->n_batch || !p->a_batched || p->n_fold || !from_round(n->in[0]) ||
      !from_round(n->in[1]) || ncc_dim_is_sym(p->M) || ncc_dim_is_sym(p->K) ||
      ncc_dim_is_sym(p->N) || p->M < 16 || p->K < 1 || p->N < 1)
    return false;
  memset(t, 0, sizeof *t);
  t->M = p->M;
  t->K = p->K;
  t->N = p->N;
  t->kp = (p->K + 31) / 32 * 32; /* bf16 per padded row: whole 64-byte steps */
  t->S = t->kp / 32;
  t->rows_b = t->kp / 2;
  t->P = (p->N + 15) / 16;
  t->tn = t->P >= 2 ? 2 : 1;
  t->P = (t->P + t->tn - 1) / t->tn * t->tn;
  t->tm = p->M >= 32 ? 2 : 1;
  if (t->P * t->rows_b * 64 + t->tm * 16 * t->kp * 2 > BMM_SCRATCH) return false;
  t->blocks = (p->M + 16 * t->tm - 1) / (16 * t->tm);
  int64_t nbat = 1;
  for (int j = 0; j < p->n_batch; j++) nbat *= ncc_dim_is_sym(p->batch[j]) ? 1 : p->batch[j];
  t->chunks = nbat >= 8 ? 1 : (8 + nbat - 1) / nbat;
  if (t->chunks > t->blocks) t->chunks = t->blocks;
  t->chunk = (t->blocks + t->chunks - 1) / t->chunks;
  t->chunks = (t->blocks + t->chunk - 1) / t->chunk;
  return true;
}

static ncc_status lower_amx_bmm(mmk *g, const bmm_bf16 *t, kir_expr *nb) {
  kir_kernel *k = g->k;
  int bsc = kir_buf_local(k, "b_bf16", NCC_DT_BF16, t->P * t->rows_b * 32);
  int asc = kir_buf_local(k, "a_bf16", NCC_DT_BF16, t->tm * 16 * t->kp);
  int cbuf = kir_buf_local(k, "c_tiles", NCC_DT_F32, t->tm * t->tn * 256);
  int c[2][2], at[2], bt[2];
  for (int i = 0; i < t->tm; i++) {
    at[i] = kir_local_add(k, NCC_DT_I32, 256);
    for (int j = 0; j < t->tn; j++) c[i][j] = kir_local_add(k, NCC_DT_I32, 256);
  }
  for (int j = 0; j < t->tn; j++) bt[j] = kir_local_add(k, NCC_DT_I32, 256);
  kir_block top = kir_body_begin();
  int vt = kir_var_new(k), vp = kir_var_new(k), vr = kir_var_new(k), ve = kir_var_new(k);
  int vb = kir_var_new(k), vc = kir_var_new(k), vpp = kir_var_new(k), vs = kir_var_new(k);
  kir_stmt *lt = kir_for(k, &top, vt, I(0), kir_mul(k, nb, I(t->chunks)), KIR_PARALLEL, 0);
  kir_block btk = kir_body_begin();
  kir_expr *tv = kir_var(k, vt);
  kir_expr *bat = kir_bin(k, KIR_DIV, tv, I(t->chunks)), *cc = kir_bin(k, KIR_REM, tv, I(t->chunks));
  { /* B -> bf16 pairs, panel by panel */
    kir_stmt *lp = kir_for(k, &btk, vp, I(0), I(t->P), KIR_SERIAL, 0);
    kir_block bp = kir_body_begin();
    kir_stmt *lr = kir_for(k, &bp, vr, I(0), I(t->rows_b), KIR_SERIAL, 0);
    kir_block br = kir_body_begin();
    kir_stmt *le = kir_for(k, &br, ve, I(0), I(32), KIR_VECTOR, 16);
    kir_block be = kir_body_begin();
    kir_expr *e = kir_var(k, ve);
    kir_expr *kk = kir_add(k, kir_mul(k, kir_var(k, vr), I(2)), kir_bin(k, KIR_REM, e, I(2)));
    kir_expr *col = kir_add(k, kir_mul(k, kir_var(k, vp), I(16)), kir_bin(k, KIR_DIV, e, I(2)));
    kir_expr *in = kir_bin(k, KIR_AND, kir_bin(k, KIR_LT, kk, I(t->K)),
                           kir_bin(k, KIR_LT, col, I(t->N)));
    kir_expr *idx = kir_add(k, kir_mul(k, bat, I(t->K * t->N)),
                            kir_add(k, kir_mul(k, kk, I(t->N)), col));
    kir_store(k, &be, bsc,
              kir_add(k, kir_mul(k, kir_add(k, kir_mul(k, kir_var(k, vp), I(t->rows_b)),
                                            kir_var(k, vr)), I(32)), e),
              kir_cast(k, NCC_DT_BF16, kir_load_guarded(k, g->bb, idx, in)), NULL);
    kir_body_end(le, &be);
    kir_body_end(lr, &br);
    kir_body_end(lp, &bp);
  }
  kir_expr *b0 = kir_mul(k, cc, I(t->chunk));
  kir_stmt *lb = kir_for(k, &btk, vb, b0, kir_min(k, kir_add(k, b0, I(t->chunk)), I(t->blocks)),
                         KIR_SERIAL, 0);
  kir_block bbk = kir_body_begin();
  kir_expr *ns[2], *cs[2];
  for (int i = 0; i < t->tm; i++) {
    ns[i] = kir_mul(k, kir_add(k, kir_mul(k, kir_var(k, vb), I(t->tm)), I(i)), I(16));
    cs[i] = kir_min(k, ns[i], I(t->M - 16)); /* rows below ns[i] recomputed, not stored */
  }
  { /* the block's rows of A -> bf16, K padded with zeros */
    kir_stmt *lc = kir_for(k, &bbk, vc, I(0), I(t->kp / 16), KIR_SERIAL, 0);
    kir_block bc = kir_body_begin();
    kir_expr *k0 = kir_mul(k, kir_var(k, vc), I(16));
    kir_expr *cnt = kir_add(k, I(t->K), kir_mul(k, k0, I(-1)));
    for (int i = 0; i < t->tm; i++)
      for (int r = 0; r < 16; r++) {
        kir_expr *v = kir_loadv(k, g->ba, a_index(g, bat, kir_add(k, cs[i], I(r)), k0), 16,
                                t->K % 16 ? cnt : NULL);
        kir_store(k, &bc, asc, kir_add(k, I((i * 16 + r) * t->kp), k0),
                  kir_cast(k, NCC_DT_BF16, v), NULL);
      }
    kir_body_end(lc, &bc);
  }
  kir_stmt *lpp = kir_for(k, &bbk, vpp, I(0), I(t->P / t->tn), KIR_SERIAL, 0);
  kir_block bpp = kir_body_begin();
  kir_expr *pan[2];
  for (int j = 0; j < t->tn; j++) pan[j] = kir_add(k, kir_mul(k, kir_var(k, vpp), I(t->tn)), I(j));
  for (int i = 0; i < t->tm; i++)
    for (int j = 0; j < t->tn; j++) kir_assign(k, &bpp, c[i][j], kir_tile_zero(k, 16, 64));
  kir_stmt *ls = kir_for(k, &bpp, vs, I(0), I(t->S), KIR_SERIAL, 0);
  kir_block bs = kir_body_begin();
  kir_expr *s = kir_var(k, vs);
  for (int i = 0; i < t->tm; i++)
    kir_assign(k, &bs, at[i],
               kir_tile_load(k, asc, kir_add(k, I(i * 16 * t->kp), kir_mul(k, s, I(32))),
                             I(t->kp), 16, 64));
  for (int j = 0; j < t->tn; j++)
    kir_assign(k, &bs, bt[j],
               kir_tile_load(k, bsc,
                             kir_mul(k, kir_add(k, kir_mul(k, pan[j], I(t->rows_b)),
                                                kir_mul(k, s, I(16))), I(32)),
                             I(32), 16, 64));
  for (int i = 0; i < t->tm; i++)
    for (int j = 0; j < t->tn; j++)
      kir_assign(k, &bs, c[i][j],
                 kir_tile_dp(k, KIR_TILE_DPBF16PS, kir_local_ref(k, at[i]),
                             kir_local_ref(k, bt[j]), kir_local_ref(k, c[i][j]), 16, 64, 64));
  kir_body_end(ls, &bs);
  for (int i = 0; i < t->tm; i++)
    for (int j = 0; j < t->tn; j++)
      kir_tile_store(k, &bpp, cbuf, I((i * t->tn + j) * 256), I(16), kir_local_ref(k, c[i][j]),
                     16, 64);
  for (int j = 0; j < t->tn; j++) {
    kir_expr *col = kir_mul(k, pan[j], I(16));
    kir_expr *cols = kir_add(k, I(t->N), kir_mul(k, col, I(-1))); /* <= 0: padding panel */
    for (int i = 0; i < t->tm; i++)
      for (int r = 0; r < 16; r++) {
        kir_expr *row = kir_add(k, cs[i], I(r));
        kir_expr *count = kir_select(k, kir_bin(k, KIR_GE, row, ns[i]), cols, I(0));
        kir_expr *sums = kir_loadv(k, cbuf, I((i * t->tn + j) * 256 + r * 16), 16, NULL);
        epilogue(g, &bpp, bat, row, col, count, sums);
      }
  }
  kir_body_end(lpp, &bpp);
  kir_body_end(lb, &bbk);
  kir_body_end(lt, &btk);
  kir_kernel_set_body(k, &top);
  return NCC_OK;
}

/* The output's dims as the epilogue's view: [batch], rows, columns (see
 * the file comment for which dims each holds). */
static int output_view(const mm *p, int *first) {
  int r = p->n->out[0]->shape.rank, nv = 0;
  first[nv++] = 0;
  if (p->n->op == NCC_OP_CONV) {
    first[nv++] = 1;
    first[nv++] = 2;
  } else if (p->n_batch) {
    first[nv++] = r - 2;
    first[nv++] = r - 1;
  } else {
    first[nv++] = r - 1;
  }
  first[nv] = r;
  return nv;
}

ncc_status ncc_lower_matmul(const ncc_node *n, const char *name,
                            const ncc_lower_opts *o, kir_kernel **out) {
  return ncc_lower_matmul_ep(n, name, o, NULL, out);
}

ncc_status ncc_lower_matmul_ep(const ncc_node *n, const char *name,
                               const ncc_lower_opts *o, const ncc_fuse_group *gr,
                               kir_kernel **out) {
  *out = NULL;
  mm p;
  if (!analyse(n, &p)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  mmk g = {.k = k, .p = &p, .w = o->vector_width > 0 ? o->vector_width : 1};
  ncc_epilogue ep;
  if (gr) {
    int first[NCC_MAX_RANK + 1];
    int nv = output_view(&p, first);
    if (!ncc_epilogue_init(&ep, k, gr, first, nv)) {
      kir_kernel_free(k);
      return NCC_ERR_UNSUPPORTED;
    }
    ep.lanes = g.w;
    g.ep = &ep;
  }
  g.mr = g.w >= 16 ? 8 : 6;
  g.nv = g.w >= 16 ? 3 : 2;
  g.nr = g.nv * g.w;
  g.ba = kir_buf_input(k, ncc_lower_bind_index(g.ep, n, p.a_in), NCC_DT_F32);
  ncc_amx_gemm ag;
  bool use_amx = amx_bf16_fits(&p, o, g.w, &ag); /* packs its own B */
  if (use_amx) {
    g.bb = -1;
  } else if (p.b_const) {
    void *owned = NULL;
    double t0 = ncc_ctime_pack_begin();
    float *packed = pack_b(&p, g.nr, &owned);
    ncc_ctime_pack_end(t0);
    if (!packed) {
      kir_kernel_free(k);
      return NCC_ERR_NOMEM;
    }
    g.bb = kir_buf_add(k, "packed_b", NCC_DT_F32, false);
    k->bufs[g.bb].bind = KIR_BIND_DATA;
    k->bufs[g.bb].data = packed;
    k->bufs[g.bb].data_bytes =
        (size_t)((p.N + g.nr - 1) / g.nr * p.K * g.nr) * sizeof(float);
    k->bufs[g.bb].owned = owned;
  } else {
    g.bb = kir_buf_input(k, ncc_lower_bind_index(g.ep, n, p.b_in), NCC_DT_F32);
  }
  g.bc = p.c ? kir_buf_input(k, ncc_lower_bind_index(g.ep, n, 2), NCC_DT_F32) : -1;
  g.by = kir_buf_output(k, 0, NCC_DT_F32);
  g.M = ncc_lower_dim(k, p.M);
  g.N = ncc_lower_dim(k, p.N);
  /* folded dims multiply M (MatMul with a 2-D B) or N (1x1 Conv: H*W) */
  for (int j = 0; j < p.n_fold; j++) {
    if (p.a_batched)
      g.M = kir_mul(k, g.M, ncc_lower_dim(k, p.fold[j]));
    else
      g.N = kir_mul(k, g.N, ncc_lower_dim(k, p.fold[j]));
  }
  g.K = ncc_lower_dim(k, p.K);
  kir_expr *nb = I(1);
  for (int j = 0; j < p.n_batch; j++) nb = kir_mul(k, nb, ncc_lower_dim(k, p.batch[j]));
  if (use_amx) {
    ncc_status st = lower_amx_bf16(&g, &ag);
    k->cost_per_elem = 2.0 * (double)p.K;
    return ncc_lower_finish(k, st, ncc_op_name(n->op), out);
  }
  bmm_bf16 bt;
  if (amx_bmm_fits(&p, o, g.w, &bt)) {
    ncc_status st = lower_amx_bmm(&g, &bt, nb);
    k->cost_per_elem = 2.0 * (double)p.K;
    return ncc_lower_finish(k, st, ncc_op_name(n->op), out);
  }
  for (int r = 0; r < g.mr; r++)
    for (int v = 0; v < g.nv; v++) g.acc[r][v] = kir_local_add(k, NCC_DT_F32, g.w);
  for (int v = 0; v < g.nv; v++) g.bv[v] = kir_local_add(k, NCC_DT_F32, g.w);
  g.av = kir_local_add(k, NCC_DT_F32, g.w);

  kir_expr *np = kir_cdiv(k, g.N, g.nr);
  /* full M-tiles: floor(M / mr) */
  int mr = g.mr;
  kir_expr *nmt = g.M->k == KIR_E_CONST ? I(g.M->i / mr)
                                         : kir_bin(k, KIR_DIV, g.M, I(mr));
  kir_block top = kir_body_begin();
  if (!kir_is_const(nmt, 0)) {
    /* full tiles: t over batch x panels x M-tiles (panel-major) */
    int vt = kir_var_new(k);
    kir_expr *per_b = kir_mul(k, np, nmt);
    kir_stmt *lt = kir_for(k, &top, vt, I(0), kir_mul(k, nb, per_b), KIR_PARALLEL, 0);
    kir_block tb = kir_body_begin();
    kir_expr *t = kir_var(k, vt);
    kir_expr *b = p.n_batch ? kir_bin(k, KIR_DIV, t, per_b) : I(0);
    kir_expr *rem = p.n_batch ? kir_bin(k, KIR_REM, t, per_b) : t;
    kir_expr *jp = kir_bin(k, KIR_DIV, rem, nmt);
    kir_expr *it = kir_bin(k, KIR_REM, rem, nmt);
    emit_tile(&g, &tb, mr, b, kir_mul(k, it, I(mr)), jp, NULL);
    kir_body_end(lt, &tb);
  }
  /* leftover rows, t over batch x panels: with a static M one tile of all
   * of them (M % mr rows), which reads the B panel once; a 1-row tile per
   * row read it once per row, with 3 loads per 2 FMAs (ConvNeXt's MLP at
   * its 2x2 stage, M = 4 rows, K = 256 and 1024: 0.32 ms on one thread,
   * 0.08 ms as one tile). */
  int64_t rem = g.M->k == KIR_E_CONST ? g.M->i % mr : -1;
  if (rem != 0) {
    int vu = kir_var_new(k);
    kir_stmt *lu = kir_for(k, &top, vu, I(0), kir_mul(k, nb, np), KIR_PARALLEL, 0);
    kir_block ub = kir_body_begin();
    kir_expr *u = kir_var(k, vu);
    kir_expr *b = p.n_batch ? kir_bin(k, KIR_DIV, u, np) : I(0);
    kir_expr *jp = p.n_batch ? kir_bin(k, KIR_REM, u, np) : u;
    if (rem > 0) {
      emit_tile(&g, &ub, (int)rem, b, kir_mul(k, nmt, I(mr)), jp, NULL);
    } else {
      /* a symbolic M leaves 0..mr-1 rows: 2 or more are one tile of mr
       * rows, the rows past M - 1 clamped to it; 1 is a 1-row tile (no
       * waste where a batch-1 classifier has M = 1). Each body runs 0 or
       * 1 times, so the panel is read once (ConvNeXt at 64x64 with its
       * batch symbolic: 0.80x the time of a 1-row tile per row, one
       * thread). Exact tiles of 4, 2 and 1 rows, as the count's bits say,
       * ran as fast but took BERT's compile from 145 to 210 ms; these
       * two bodies take it to 175 ms. */
      kir_expr *r0 = kir_mul(k, nmt, I(mr));
      kir_expr *left = kir_add(k, g.M, kir_mul(k, r0, I(-1)));
      kir_expr *last = kir_add(k, g.M, I(-1));
      kir_expr *many = kir_select(k, kir_bin(k, KIR_GE, left, I(2)), I(1), I(0));
      kir_expr *one = kir_select(k, kir_bin(k, KIR_EQ, left, I(1)), I(1), I(0));
      kir_stmt *lm = kir_for(k, &ub, kir_var_new(k), I(0), many, KIR_SERIAL, 0);
      kir_block bm = kir_body_begin();
      emit_tile(&g, &bm, mr, b, r0, jp, last);
      kir_body_end(lm, &bm);
      kir_stmt *l1 = kir_for(k, &ub, kir_var_new(k), I(0), one, KIR_SERIAL, 0);
      kir_block b1 = kir_body_begin();
      emit_tile(&g, &b1, 1, b, r0, jp, NULL);
      kir_body_end(l1, &b1);
    }
    kir_body_end(lu, &ub);
  }
  kir_kernel_set_body(k, &top);
  if (!kir_ok(k)) {
    kir_kernel_free(k);
    return ncc_error(NCC_ERR_NOMEM, "out of memory lowering %s", ncc_op_name(n->op));
  }
  /* 2K flops per output element */
  k->cost_per_elem = p.K > 0 ? 2.0 * (double)p.K : 2048.0;
  *out = k;
  return NCC_OK;
}
