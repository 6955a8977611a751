/* codegen/lower_qbmm.c — QLinearMatMul and MatMulInteger whose B is an
 * activation (attention's Q·Kᵀ and P·V in a quantized transformer): a
 * batched product of two 8-bit tensors known only at run time.
 *
 * Weights are packed at compile time (lower_qmatmul.c); here nothing can
 * be, so the kernel multiplies the zero-point-shifted integers as f32 on
 * the FMA units. That is exact: |a - za| and |b - zb| are at most 255, so
 * a sum of 256 products stays below 2^24 and every partial sum is an
 * integer f32 represents exactly. The k loop therefore runs in chunks of
 * 256, each chunk's f32 sum converted to i32 and added there, which keeps
 * the result the exact integer sum for any K (the reference's semantics).
 * Attention's products are a few percent of a transformer's MACs, so this
 * simple register tile (MR rows x one vector of columns, B converted once
 * per k and shared by the rows) is enough.
 *
 * Batch dims follow MatMul's broadcasting: each of A's and B's batch dims
 * equals the output's or is a static 1 (stride 0). Zero points and scales:
 * A's per tensor; B's per tensor or per output column; MatMulInteger's
 * zero points may arrive at run time (per tensor). QLinearMatMul
 * requantises as the reference does (ncc_lower_requant).
 */
#include <string.h>

#include "lower.h"

#define I(v) kir_const_i(k, (v))
#define ADD(a, b) kir_add(k, (a), (b))
#define MUL(a, b) kir_mul(k, (a), (b))
#define MR 8 /* most rows and vectors of a register tile */
#define NV 3
#define KCHUNK 256 /* 256 * 255 * 255 < 2^24: an exact f32 sum */

typedef struct qbmm {
  bool qlinear;
  const ncc_value *a, *b, *y;
  const ncc_value *za, *zb; /* NULL: zero */
  const ncc_value *sa, *sb, *sy, *zy; /* QLinearMatMul */
  int bi, zai, zbi;         /* node inputs of B and the zero points */
} qbmm;

static bool is_const(const ncc_value *v) {
  return v && v->kind == NCC_VAL_CONST && v->data && ncc_shape_is_static(&v->shape);
}

/* MatMulInteger's zero point: ncc_lower_qparam, or one value read at run
 * time. */
static bool zero_point_ok(const ncc_value *v, int64_t n) {
  return ncc_lower_qparam(v, n) ||
         (v && v->shape.rank <= 1 && ncc_shape_is_static(&v->shape) &&
          ncc_shape_numel(&v->shape) == 1);
}

static bool analyse(const ncc_node *n, qbmm *q) {
  memset(q, 0, sizeof *q);
  q->qlinear = n->op == NCC_OP_QLINEARMATMUL;
  if ((!q->qlinear && n->op != NCC_OP_MATMULINTEGER) || n->n_out != 1 || !n->out[0])
    return false;
  q->bi = q->qlinear ? 3 : 1;
  q->zai = 2;
  q->zbi = q->qlinear ? 5 : 3;
  if (n->n_in <= q->bi) return false;
  q->a = n->in[0];
  q->b = n->in[q->bi];
  q->y = n->out[0];
  const ncc_value *a = q->a, *b = q->b, *y = q->y;
  /* a constant 2-D B is lower_qmatmul.c's (packed weights) */
  if (!ncc_lower_is8(a) || !ncc_lower_is8(b) || a->shape.rank < 2 || b->shape.rank < 2 ||
      (b->shape.rank == 2 && is_const(b)))
    return false;
  int r = y->shape.rank;
  if (r != (a->shape.rank > b->shape.rank ? a->shape.rank : b->shape.rank)) return false;
  int64_t M = a->shape.d[a->shape.rank - 2], K = a->shape.d[a->shape.rank - 1];
  int64_t N = b->shape.d[b->shape.rank - 1];
  if (b->shape.d[b->shape.rank - 2] != K || y->shape.d[r - 2] != M || y->shape.d[r - 1] != N)
    return false;
  for (int d = 0; d < r - 2; d++) { /* batch dims: the output's or a static 1 */
    int da = d - (r - a->shape.rank), db = d - (r - b->shape.rank);
    if (da >= 0 && a->shape.d[da] != 1 && a->shape.d[da] != y->shape.d[d]) return false;
    if (db >= 0 && b->shape.d[db] != 1 && b->shape.d[db] != y->shape.d[d]) return false;
  }
  int64_t ncol = ncc_dim_is_sym(N) ? 0 : N; /* per-column needs a static N */
  q->za = n->n_in > q->zai ? n->in[q->zai] : NULL;
  q->zb = n->n_in > q->zbi ? n->in[q->zbi] : NULL;
  if ((q->za && q->za->dtype != a->dtype) || (q->zb && q->zb->dtype != b->dtype)) return false;
  if (q->qlinear) {
    if (n->n_in < 8 || !ncc_lower_is8(y)) return false;
    q->sa = n->in[1];
    q->sb = n->in[4];
    q->sy = n->in[6];
    q->zy = n->in[7];
    if (!ncc_lower_qparam(q->sa, 0) || !ncc_lower_qparam(q->za, 0) ||
        !ncc_lower_qparam(q->sb, ncol) || !ncc_lower_qparam(q->zb, ncol) ||
        !ncc_lower_qparam(q->sy, 0) || !ncc_lower_qparam(q->zy, 0) ||
        q->zy->dtype != y->dtype ||
        !ncc_lower_requant_finite(q->sa, q->sb, q->sy, ncc_shape_numel(&q->sb->shape)))
      return false; /* a non-finite multiplier: the reference's NaN rules */
  } else {
    if (y->dtype != NCC_DT_I32) return false;
    if ((q->za && !zero_point_ok(q->za, 0)) || (q->zb && !zero_point_ok(q->zb, ncol)))
      return false;
  }
  return true;
}

bool ncc_lower_qbmm_supports(const ncc_node *n) {
  qbmm q;
  return ncc_lower_plain(n) && analyse(n, &q);
}

/* A per-column f32 parameter: its `e` values padded past N so a whole
 * vector loads, as a data buffer made on first use (*buf < 0) and shared by
 * every vector of the tile. */
static int column_buf(kir_kernel *k, const char *name, float *vals, int64_t e, int w, int *buf) {
  if (*buf < 0) *buf = ncc_lower_data_buf(k, name, NCC_DT_F32, vals, (size_t)(e + w) * sizeof *vals);
  else ncc_free(vals, 0);
  return *buf;
}

/* A zero point as a `w`-lane f32 expression: 0, a constant, a per-column
 * constant (loaded at `col`) or a scalar read at run time. */
static kir_expr *zero_point(kir_kernel *k, const ncc_value *z, int input, kir_expr *col, int w,
                            int *buf) {
  if (!z) return kir_splat(k, kir_const_f(k, NCC_DT_F32, 0), w);
  int64_t e = ncc_shape_numel(&z->shape);
  if (is_const(z) && e == 1)
    return kir_splat(k, kir_const_f(k, NCC_DT_F32, ncc_lower_const_at(z, 0)), w);
  if (is_const(z)) {
    float *zf = *buf < 0 ? ncc_calloc((size_t)(e + w), sizeof *zf) : NULL;
    if (*buf < 0 && !zf) {
      k->oom = true;
      return kir_splat(k, kir_const_f(k, NCC_DT_F32, 0), w);
    }
    for (int64_t i = 0; zf && i < e; i++) zf[i] = (float)ncc_lower_const_at(z, i);
    return kir_loadv(k, column_buf(k, "zero_point", zf, e, w, buf), col, w, NULL);
  }
  kir_expr *v = kir_load(k, kir_buf_input(k, input, z->dtype), I(0));
  return kir_splat(k, kir_cast(k, NCC_DT_F32, v), w);
}

/* The requantisation multipliers (ncc_lower_requant_mult); one per column
 * where sb is per column. */
static kir_expr *multiplier(kir_kernel *k, const qbmm *q, kir_expr *col, int w, int *buf) {
  int64_t e = ncc_shape_numel(&q->sb->shape);
  if (e == 1)
    return kir_splat(k, kir_const_f(k, NCC_DT_F32, ncc_lower_requant_mult(q->sa, q->sb, q->sy, 0)),
                     w);
  float *m = *buf < 0 ? ncc_calloc((size_t)(e + w), sizeof *m) : NULL;
  if (*buf < 0 && !m) {
    k->oom = true;
    return kir_splat(k, kir_const_f(k, NCC_DT_F32, 0), w);
  }
  for (int64_t j = 0; m && j < e; j++) m[j] = ncc_lower_requant_mult(q->sa, q->sb, q->sy, j);
  return kir_loadv(k, column_buf(k, "mult", m, e, w, buf), col, w, NULL);
}

/* Element offsets of batch `bat` (flat over the output's batch dims) in
 * A or B (v), whose matrices are `mat` elements; broadcast dims add 0. */
static kir_expr *batch_offset(kir_kernel *k, const ncc_value *v, const ncc_value *y,
                              kir_expr *bat, kir_expr *mat) {
  int r = y->shape.rank, vr = v->shape.rank;
  kir_expr *off = I(0), *rest = bat, *stride = mat;
  for (int d = r - 3; d >= 0; d--) {
    kir_expr *dim = ncc_lower_dim(k, y->shape.d[d]);
    kir_expr *c = d > 0 ? kir_bin(k, KIR_REM, rest, dim) : rest;
    if (d > 0) rest = kir_bin(k, KIR_DIV, rest, dim);
    int dv = d - (r - vr);
    if (dv < 0) continue;
    if (v->shape.d[dv] != 1) off = ADD(off, MUL(c, stride));
    stride = MUL(stride, ncc_lower_dim(k, v->shape.d[dv]));
  }
  return off;
}

static ncc_status lower(const qbmm *q, int w, kir_kernel *k) {
  const ncc_value *a = q->a, *b = q->b, *y = q->y;
  int r = y->shape.rank;
  int64_t Ks = a->shape.d[a->shape.rank - 1];
  bool one_chunk = !ncc_dim_is_sym(Ks) && Ks <= KCHUNK; /* f32 sums stay exact */
  /* register tile: MR rows x NV vectors of f32 sums (and of i32 totals
   * when K runs in chunks), within 32 vector registers (16 below AVX-512) */
  int mr = one_chunk ? (w >= 16 ? 8 : 6) : (w >= 16 ? 6 : 4);
  int nv = one_chunk && w >= 16 ? 3 : 2;
  kir_expr *M = ncc_lower_dim(k, a->shape.d[a->shape.rank - 2]);
  kir_expr *K = ncc_lower_dim(k, Ks);
  kir_expr *N = ncc_lower_dim(k, b->shape.d[b->shape.rank - 1]);
  kir_expr *nbat = I(1);
  for (int d = 0; d < r - 2; d++) nbat = MUL(nbat, ncc_lower_dim(k, y->shape.d[d]));
  int ba = kir_buf_input(k, 0, a->dtype), bb = kir_buf_input(k, q->bi, b->dtype);
  int by = kir_buf_output(k, 0, y->dtype);
  int facc[MR][NV], iacc[MR][NV], bv[NV], av = kir_local_add(k, NCC_DT_F32, w);
  for (int v = 0; v < nv; v++) bv[v] = kir_local_add(k, NCC_DT_F32, w);
  for (int i = 0; i < mr; i++)
    for (int v = 0; v < nv; v++) {
      facc[i][v] = kir_local_add(k, NCC_DT_F32, w);
      iacc[i][v] = one_chunk ? -1 : kir_local_add(k, NCC_DT_I32, w);
    }
  /* tasks: batch x column panels x row tiles (a panel's B rows stay in
   * cache across its row tiles) */
  int64_t nr = (int64_t)nv * w;
  kir_expr *panels = kir_cdiv(k, N, nr), *tiles = kir_cdiv(k, M, mr);
  kir_expr *per_b = MUL(panels, tiles);
  kir_block top = kir_body_begin();
  int vt = kir_var_new(k), vc = kir_var_new(k), vk = kir_var_new(k);
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(nbat, per_b), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *t = kir_var(k, vt);
  kir_expr *bat = kir_bin(k, KIR_DIV, t, per_b), *rem = kir_bin(k, KIR_REM, t, per_b);
  kir_expr *n0 = MUL(kir_bin(k, KIR_DIV, rem, tiles), I(nr));
  kir_expr *m0 = MUL(kir_bin(k, KIR_REM, rem, tiles), I(mr));
  kir_expr *aoff = batch_offset(k, a, y, bat, MUL(M, K));
  kir_expr *boff = batch_offset(k, b, y, bat, MUL(K, N));
  kir_expr *yoff = MUL(bat, MUL(M, N));
  kir_expr *rows[MR], *cols[NV], *cnt[NV], *zb[NV];
  int za_buf = -1, zb_buf = -1, mult_buf = -1; /* per-column data, made once */
  kir_expr *za = zero_point(k, q->za, q->zai, NULL, 1, &za_buf); /* per tensor */
  for (int v = 0; v < nv; v++) {
    cols[v] = ADD(n0, I(v * w));
    cnt[v] = kir_bin(k, KIR_SUB, N, cols[v]); /* lanes left; <= 0: none */
    zb[v] = zero_point(k, q->zb, q->zbi, cols[v], w, &zb_buf);
  }
  for (int i = 0; i < mr; i++) {
    rows[i] = kir_min(k, ADD(m0, I(i)), ADD(M, I(-1))); /* past M: a duplicate of M-1 */
    if (!one_chunk)
      for (int v = 0; v < nv; v++)
        kir_assign(k, &bt, iacc[i][v], kir_splat(k, kir_cast(k, NCC_DT_I32, I(0)), w));
  }
  kir_block *bc = &bt, chunk;
  kir_stmt *lc = NULL;
  kir_expr *k0 = I(0), *k1 = K;
  if (!one_chunk) {
    lc = kir_for(k, &bt, vc, I(0), kir_cdiv(k, K, KCHUNK), KIR_SERIAL, 0);
    chunk = kir_body_begin();
    bc = &chunk;
    k0 = MUL(kir_var(k, vc), I(KCHUNK));
    k1 = kir_min(k, ADD(k0, I(KCHUNK)), K);
  }
  for (int i = 0; i < mr; i++)
    for (int v = 0; v < nv; v++)
      kir_assign(k, bc, facc[i][v], kir_splat(k, kir_const_f(k, NCC_DT_F32, 0), w));
  kir_stmt *lk = kir_for(k, bc, vk, k0, k1, KIR_SERIAL, 0);
  kir_block bk = kir_body_begin();
  kir_expr *kk = kir_var(k, vk);
  for (int v = 0; v < nv; v++) { /* B's row kk, masked past N */
    kir_expr *ld = kir_loadv(k, bb, ADD(boff, ADD(MUL(kk, N), cols[v])), w, cnt[v]);
    kir_assign(k, &bk, bv[v], kir_bin(k, KIR_SUB, kir_cast(k, NCC_DT_F32, ld), zb[v]));
  }
  for (int i = 0; i < mr; i++) {
    kir_expr *ai = kir_cast(k, NCC_DT_F32, kir_load(k, ba, ADD(aoff, ADD(MUL(rows[i], K), kk))));
    kir_assign(k, &bk, av, kir_splat(k, kir_bin(k, KIR_SUB, ai, za), w));
    for (int v = 0; v < nv; v++)
      kir_assign(k, &bk, facc[i][v], kir_fma(k, kir_local_ref(k, av), kir_local_ref(k, bv[v]),
                                             kir_local_ref(k, facc[i][v])));
  }
  kir_body_end(lk, &bk);
  if (!one_chunk) {
    for (int i = 0; i < mr; i++)
      for (int v = 0; v < nv; v++)
        kir_assign(k, bc, iacc[i][v],
                   kir_bin(k, KIR_ADD, kir_local_ref(k, iacc[i][v]),
                           kir_cast(k, NCC_DT_I32, kir_local_ref(k, facc[i][v]))));
    kir_body_end(lc, &chunk);
  }
  for (int v = 0; v < nv; v++) {
    kir_expr *mult = q->qlinear ? multiplier(k, q, cols[v], w, &mult_buf) : NULL;
    for (int i = 0; i < mr; i++) {
      kir_expr *s = one_chunk ? kir_cast(k, NCC_DT_I32, kir_local_ref(k, facc[i][v]))
                              : kir_local_ref(k, iacc[i][v]);
      if (q->qlinear) s = ncc_lower_requant(k, s, mult, ncc_lower_const_at(q->zy, 0), y->dtype);
      kir_store(k, &bt, by, ADD(yoff, ADD(MUL(rows[i], N), cols[v])), s, cnt[v]);
    }
  }
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)(ncc_dim_is_sym(Ks) ? 64 : Ks);
  return NCC_OK;
}


/* ---- the AMX path ----
 * Static M (>= 16), K (a multiple of 4, at most 8192: every partial sum
 * below 2^31)
 * and N, constant zero points (za per tensor, zb per tensor or column):
 *   sum (a - za)(b - zb) = sum a*b - zb * RA[m] - za * CB[n] + K za zb
 * with RA A's row sums and CB B's column sums, so the tiles multiply the
 * raw bytes (tdpb{u,s}{u,s}d by the operands' signedness). A task packs
 * its batch's whole B into a stack scratch in the tiles' B layout (as
 * lower_amx.c's compile-time panels: 16 columns, 4 bytes of k per word;
 * K's bytes past the last whole 64 are a last step re-reading A's last 64
 * bytes, its B rows for bytes already counted zero), summing CB as it
 * goes, then runs row blocks of 32 (or 16) rows over every panel pair. */
#define AMX_SCRATCH (96 * 1024)

typedef struct bmm_tiles {
  int64_t M, K, N, S, sb, rows_b, P, tm, tn, blocks, chunks, chunk;
} bmm_tiles;

static bool amx_plan(const qbmm *q, bmm_tiles *t) {
  const ncc_shape *as = &q->a->shape, *bs = &q->b->shape;
  t->M = as->d[as->rank - 2];
  t->K = as->d[as->rank - 1];
  t->N = bs->d[bs->rank - 1];
  if (ncc_dim_is_sym(t->M) || ncc_dim_is_sym(t->K) || ncc_dim_is_sym(t->N) || t->M < 16 ||
      t->K % 4 || t->K < 4 || t->K > 8192 || t->N < 1)
    return false;
  /* zero points the kernel bakes in */
  if ((q->za && !(is_const(q->za) && ncc_shape_numel(&q->za->shape) == 1)) ||
      (q->zb && !is_const(q->zb)))
    return false;
  t->sb = t->K < 64 ? t->K : 64;
  t->S = (t->K + 63) / 64;
  t->rows_b = t->S * (t->sb / 4);
  t->P = (t->N + 15) / 16;
  t->tn = t->P >= 2 ? 2 : 1;
  t->P = (t->P + t->tn - 1) / t->tn * t->tn; /* whole pairs (a padding panel: zeros) */
  if (t->P * t->rows_b * 64 > AMX_SCRATCH) return false;
  t->tm = t->M >= 32 ? 2 : 1;
  t->blocks = (t->M + 16 * t->tm - 1) / (16 * t->tm);
  int64_t nbat = 1;
  for (int d = 0; d < q->y->shape.rank - 2; d++)
    nbat *= ncc_dim_is_sym(q->y->shape.d[d]) ? 1 : q->y->shape.d[d];
  /* row blocks in chunks where batches alone leave fewer than 8 tasks */
  t->chunks = nbat >= 8 ? 1 : (8 + nbat - 1) / nbat;
  if (t->chunks > t->blocks) t->chunks = t->blocks;
  t->chunk = (t->blocks + t->chunks - 1) / t->chunks;
  t->chunks = (t->blocks + t->chunk - 1) / t->chunk;
  return true;
}

static kir_tile_op tile_op(const qbmm *q) {
  bool sa = q->a->dtype == NCC_DT_I8, sb = q->b->dtype == NCC_DT_I8;
  return sa ? (sb ? KIR_TILE_DPBSSD : KIR_TILE_DPBSUD) : (sb ? KIR_TILE_DPBUSD : KIR_TILE_DPBUUD);
}

/* A zero point's integer value(s) as a 16-lane i32 at column `col` (or a
 * splat), data made on first use. */
static kir_expr *zp_i32(kir_kernel *k, const ncc_value *z, kir_expr *col, int *buf) {
  if (!z) return kir_splat(k, kir_cast(k, NCC_DT_I32, I(0)), 16);
  int64_t e = ncc_shape_numel(&z->shape);
  if (e == 1) return kir_splat(k, kir_cast(k, NCC_DT_I32, I((int64_t)ncc_lower_const_at(z, 0))), 16);
  if (*buf < 0) {
    int32_t *v = ncc_calloc((size_t)(e + 32), sizeof *v);
    if (!v) {
      k->oom = true;
      return kir_splat(k, kir_cast(k, NCC_DT_I32, I(0)), 16);
    }
    for (int64_t i = 0; i < e; i++) v[i] = (int32_t)ncc_lower_const_at(z, i);
    *buf = ncc_lower_data_buf(k, "zb", NCC_DT_I32, v, (size_t)(e + 32) * sizeof *v);
  }
  return kir_loadv(k, *buf, col, 16, NULL);
}

static kir_expr *byte_i32(kir_kernel *k, kir_expr *v, bool is_signed) {
  kir_expr *x = kir_cast(k, NCC_DT_I32, v);
  return is_signed ? kir_bin(k, KIR_AND, x, kir_cast(k, NCC_DT_I32, I(255))) : x;
}

/* Pack B (batch offset boff) into the scratch and CB into cb[]. */
static void amx_pack_b(kir_kernel *k, kir_block *blk, const qbmm *q, const bmm_tiles *t, int bb,
                       kir_expr *boff, int scratch, int cb) {
  int vp = kir_var_new(k), vl = kir_var_new(k), vr = kir_var_new(k);
  int sum = kir_local_add(k, NCC_DT_I32, 1);
  bool sgn = q->b->dtype == NCC_DT_I8;
  kir_stmt *lp = kir_for(k, blk, vp, I(0), I(t->P), KIR_SERIAL, 0);
  kir_block bp = kir_body_begin();
  kir_stmt *ll = kir_for(k, &bp, vl, I(0), I(16), KIR_VECTOR, 16);
  kir_block bl = kir_body_begin();
  kir_expr *col = ADD(MUL(kir_var(k, vp), I(16)), kir_var(k, vl));
  kir_expr *live = t->N % 16 || t->P * 16 > t->N ? kir_bin(k, KIR_LT, col, I(t->N)) : NULL;
  kir_assign(k, &bl, sum, kir_cast(k, NCC_DT_I32, I(0)));
  kir_stmt *lr = kir_for(k, &bl, vr, I(0), I(t->rows_b), KIR_SERIAL, 0);
  kir_block br = kir_body_begin();
  {
    kir_expr *r = kir_var(k, vr);
    kir_expr *s = kir_bin(k, KIR_DIV, r, I(t->sb / 4));
    kir_expr *k0 = ADD(kir_min(k, MUL(s, I(64)), I(t->K - t->sb)),
                       MUL(kir_bin(k, KIR_REM, r, I(t->sb / 4)), I(4)));
    kir_expr *fresh = kir_bin(k, KIR_GE, k0, MUL(s, I(64))); /* not counted before */
    kir_expr *g = live ? kir_bin(k, KIR_AND, fresh, live) : fresh;
    kir_expr *word = NULL, *vsum = NULL;
    for (int j = 0; j < 4; j++) {
      kir_expr *v = kir_load_guarded(k, bb, ADD(boff, ADD(MUL(ADD(k0, I(j)), I(t->N)), col)), g);
      kir_expr *w = byte_i32(k, v, sgn);
      kir_expr *val = kir_cast(k, NCC_DT_I32, v);
      if (j) w = kir_bin(k, KIR_MUL, w, kir_cast(k, NCC_DT_I32, I((int64_t)1 << (8 * j))));
      word = word ? kir_bin(k, KIR_ADD, word, w) : w;
      vsum = vsum ? kir_bin(k, KIR_ADD, vsum, val) : val;
    }
    kir_store(k, &br, scratch, ADD(MUL(ADD(MUL(kir_var(k, vp), I(t->rows_b)), r), I(16)),
                                   kir_var(k, vl)),
              word, NULL);
    kir_assign(k, &br, sum, kir_bin(k, KIR_ADD, kir_local_ref(k, sum), vsum));
  }
  kir_body_end(lr, &br);
  kir_store(k, &bl, cb, col, kir_local_ref(k, sum), NULL);
  kir_body_end(ll, &bl);
  kir_body_end(lp, &bp);
}

static ncc_status lower_amx(const qbmm *q, const bmm_tiles *t, kir_kernel *k) {
  const ncc_value *a = q->a, *b = q->b, *y = q->y;
  int r = y->shape.rank;
  kir_expr *nbat = I(1);
  for (int d = 0; d < r - 2; d++) nbat = MUL(nbat, ncc_lower_dim(k, y->shape.d[d]));
  int ba = kir_buf_input(k, 0, a->dtype), bb = kir_buf_input(k, q->bi, b->dtype);
  int by = kir_buf_output(k, 0, y->dtype);
  int scratch = kir_buf_local(k, "b_tiles", NCC_DT_I32, t->P * t->rows_b * 16);
  int cb = kir_buf_local(k, "b_sums", NCC_DT_I32, t->P * 16);
  int ra = kir_buf_local(k, "a_sums", NCC_DT_I32, 32);
  int cbuf = kir_buf_local(k, "c_tiles", NCC_DT_I32, t->tm * t->tn * 256);
  int c[2][2], at[2], bt2[2], racc = kir_local_add(k, NCC_DT_I32, 16);
  for (int i = 0; i < t->tm; i++) {
    at[i] = kir_local_add(k, NCC_DT_I32, 256);
    for (int j = 0; j < t->tn; j++) c[i][j] = kir_local_add(k, NCC_DT_I32, 256);
  }
  for (int j = 0; j < t->tn; j++) bt2[j] = kir_local_add(k, NCC_DT_I32, 256);
  int64_t za = q->za ? (int64_t)ncc_lower_const_at(q->za, 0) : 0;
  bool zb_zero = !q->zb;
  if (q->zb) {
    zb_zero = true;
    for (int64_t i = 0; i < ncc_shape_numel(&q->zb->shape); i++)
      if (ncc_lower_const_at(q->zb, i) != 0) zb_zero = false;
  }

  kir_block top = kir_body_begin();
  int vt = kir_var_new(k), vb = kir_var_new(k), vpp = kir_var_new(k), vs = kir_var_new(k);
  int vk = kir_var_new(k);
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(nbat, I(t->chunks)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *tv = kir_var(k, vt);
  kir_expr *bat = kir_bin(k, KIR_DIV, tv, I(t->chunks)), *cc = kir_bin(k, KIR_REM, tv, I(t->chunks));
  kir_expr *aoff = batch_offset(k, a, y, bat, I(t->M * t->K));
  kir_expr *boff = batch_offset(k, b, y, bat, I(t->K * t->N));
  kir_expr *yoff = MUL(bat, I(t->M * t->N));
  amx_pack_b(k, &bt, q, t, bb, boff, scratch, cb);

  kir_expr *b0 = MUL(cc, I(t->chunk));
  kir_stmt *lb = kir_for(k, &bt, vb, b0, kir_min(k, ADD(b0, I(t->chunk)), I(t->blocks)),
                         KIR_SERIAL, 0);
  kir_block bbk = kir_body_begin();
  kir_expr *ns[2], *cs[2];
  for (int i = 0; i < t->tm; i++) {
    ns[i] = MUL(ADD(MUL(kir_var(k, vb), I(t->tm)), I(i)), I(16));
    cs[i] = kir_min(k, ns[i], I(t->M - 16)); /* rows below ns[i] recomputed, not stored */
  }
  if (!zb_zero) /* RA of the block's rows */
    for (int i = 0; i < t->tm; i++)
      for (int rr = 0; rr < 16; rr++) {
        kir_assign(k, &bbk, racc, kir_splat(k, kir_cast(k, NCC_DT_I32, I(0)), 16));
        kir_stmt *lk = kir_for(k, &bbk, vk, I(0), I((t->K + 15) / 16), KIR_SERIAL, 0);
        kir_block bk = kir_body_begin();
        kir_expr *k0 = MUL(kir_var(k, vk), I(16));
        kir_expr *cnt = t->K % 16 ? ADD(I(t->K), MUL(k0, I(-1))) : NULL;
        kir_expr *v = kir_loadv(k, ba, ADD(aoff, ADD(MUL(ADD(cs[i], I(rr)), I(t->K)), k0)), 16, cnt);
        kir_assign(k, &bk, racc, kir_bin(k, KIR_ADD, kir_local_ref(k, racc), kir_cast(k, NCC_DT_I32, v)));
        kir_body_end(lk, &bk);
        kir_store(k, &bbk, ra, I(i * 16 + rr), kir_hreduce(k, KIR_ADD, kir_local_ref(k, racc)), NULL);
      }
  kir_stmt *lp = kir_for(k, &bbk, vpp, I(0), I(t->P / t->tn), KIR_SERIAL, 0);
  kir_block bp = kir_body_begin();
  kir_expr *pan[2];
  for (int j = 0; j < t->tn; j++) pan[j] = ADD(MUL(kir_var(k, vpp), I(t->tn)), I(j));
  for (int i = 0; i < t->tm; i++)
    for (int j = 0; j < t->tn; j++) kir_assign(k, &bp, c[i][j], kir_tile_zero(k, 16, 64));
  kir_stmt *ls = kir_for(k, &bp, vs, I(0), I(t->S), KIR_SERIAL, 0);
  kir_block bs = kir_body_begin();
  kir_expr *s = kir_var(k, vs);
  kir_expr *a_el = kir_min(k, MUL(s, I(64)), I(t->K - t->sb));
  for (int i = 0; i < t->tm; i++)
    kir_assign(k, &bs, at[i],
               kir_tile_load(k, ba, ADD(aoff, ADD(MUL(cs[i], I(t->K)), a_el)), I(t->K), 16,
                             (int)t->sb));
  for (int j = 0; j < t->tn; j++)
    kir_assign(k, &bs, bt2[j],
               kir_tile_load(k, scratch,
                             MUL(ADD(MUL(pan[j], I(t->rows_b)), MUL(s, I(t->sb / 4))), I(16)),
                             I(16), (int)(t->sb / 4), 64));
  for (int i = 0; i < t->tm; i++)
    for (int j = 0; j < t->tn; j++)
      kir_assign(k, &bs, c[i][j],
                 kir_tile_dp(k, tile_op(q), kir_local_ref(k, at[i]), kir_local_ref(k, bt2[j]),
                             kir_local_ref(k, c[i][j]), 16, 64, (int)t->sb));
  kir_body_end(ls, &bs);
  for (int i = 0; i < t->tm; i++)
    for (int j = 0; j < t->tn; j++)
      kir_tile_store(k, &bp, cbuf, I((i * t->tn + j) * 256), I(16), kir_local_ref(k, c[i][j]),
                     16, 64);
  int zb_buf = -1, mult_buf = -1;
  for (int j = 0; j < t->tn; j++) {
    kir_expr *col = MUL(pan[j], I(16));
    kir_expr *cols = ADD(I(t->N), MUL(col, I(-1))); /* <= 0: a padding panel */
    /* per-column data is read at a real panel (a padding one stores nothing) */
    kir_expr *pcol = kir_min(k, col, I((t->N - 1) / 16 * 16));
    kir_expr *zbv = zp_i32(k, q->zb, pcol, &zb_buf);
    /* za * (K zb - CB) = -za CB + K za zb, per column */
    kir_expr *ccorr = kir_bin(k, KIR_MUL, kir_splat(k, kir_cast(k, NCC_DT_I32, I(za)), 16),
                    kir_bin(k, KIR_SUB,
                            kir_bin(k, KIR_MUL, kir_splat(k, kir_cast(k, NCC_DT_I32, I(t->K)), 16), zbv),
                            kir_loadv(k, cb, col, 16, NULL)));
    kir_expr *mult = q->qlinear ? multiplier(k, q, pcol, 16, &mult_buf) : NULL;
    for (int i = 0; i < t->tm; i++)
      for (int rr = 0; rr < 16; rr++) {
        kir_expr *row = ADD(cs[i], I(rr));
        kir_expr *count = kir_select(k, kir_bin(k, KIR_GE, row, ns[i]), cols, I(0));
        kir_expr *v = kir_loadv(k, cbuf, I((i * t->tn + j) * 256 + rr * 16), 16, NULL);
        v = kir_bin(k, KIR_ADD, v, ccorr);
        if (!zb_zero)
          v = kir_bin(k, KIR_SUB, v,
                      kir_bin(k, KIR_MUL, zbv, kir_splat(k, kir_load(k, ra, I(i * 16 + rr)), 16)));
        if (q->qlinear) v = ncc_lower_requant(k, v, mult, ncc_lower_const_at(q->zy, 0), y->dtype);
        kir_store(k, &bp, by, ADD(yoff, ADD(MUL(row, I(t->N)), col)), v, count);
      }
  }
  kir_body_end(lp, &bp);
  kir_body_end(lb, &bbk);
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)t->K;
  return NCC_OK;
}

ncc_status ncc_lower_qbmm(const ncc_node *n, const char *name, const ncc_lower_opts *o,
                          kir_kernel **out) {
  *out = NULL;
  qbmm q;
  if (!analyse(n, &q)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  bmm_tiles t;
  if (o->amx_int8 && amx_plan(&q, &t))
    return ncc_lower_finish(k, lower_amx(&q, &t, k), ncc_op_name(n->op), out);
  int vw = o->vector_width > 0 ? o->vector_width : 1;
  return ncc_lower_finish(k, lower(&q, vw, k), ncc_op_name(n->op), out);
}
