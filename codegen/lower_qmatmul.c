/* codegen/lower_qmatmul.c — QLinearMatMul, MatMulInteger and QGemm with
 * a constant 2-D B (the weights of a quantized Linear layer), int8 dot
 * products on i32 accumulators.
 *
 * Y[m][n] = sum_k (A[m][k] - za) (B[k][n] - zb[n]), A's leading dims folded
 * into M. The structure is lower_matmul.c's register-tiled GEMM:
 * - B minus its zero point (must fit s8) is packed at compile time into
 *   panels of NR = NV vectors of columns, k-major and zero-padded
 *   ([N/NR][K/4][NR] i32 words, four consecutive k per word), so a panel
 *   is one contiguous stream (read by column strides of N words it touched
 *   a new page every k and ran at a tenth of the dot-product rate).
 * - The micro-kernel keeps MR x NV vector accumulators; per k/4 it loads NV
 *   vectors of B and broadcasts MR words of A's four bytes at (m, 4*k4)
 *   (one i32 read through an i32 view of A when K % 4 == 0, else packed
 *   from bytes); KIR_E_DOT4 (vpdpbusd with VNNI) does MR*NV dot products.
 * - One parallel loop over panels x row tiles, panel-major, so a thread's
 *   consecutive tiles reuse its B panel from cache. Rows past M in the last
 *   tile recompute row M-1 (a harmless duplicate store); a static M below
 *   MR gets a tile of M rows.
 * s8 A is offset by 128 to u8 (a ^ 0x80808080, its zero point + 128);
 * sum_k za*(B - zb) is one correction per column: a constant for
 * QLinearMatMul, za times a constant column sum for MatMulInteger (whose
 * za is an input at run time). QLinearMatMul requantises in f32 as the
 * reference does (lower_conv.c's QLinearConv, same formula).
 */
#include <math.h>
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/ctime.h"
#include "lower.h"

#define I(v) kir_const_i(k, (v))
#define ADD(a, b) kir_add(k, (a), (b))
#define MUL(a, b) kir_mul(k, (a), (b))
#define I32C(v) kir_cast(k, NCC_DT_I32, I(v))
#define MR_MAX 8
#define NV_MAX 3

typedef struct qmm {
  bool qlinear;              /* QLinearMatMul or QGemm: constant za, the
                                whole correction (and bias) in colsum */
  bool requant;              /* y 8-bit (else i32 MatMulInteger, f32 QGemm) */
  bool transb;               /* QGemm's transB: B is [N, K] */
  const ncc_value *a, *b, *za, *zb;
  const ncc_value *sa, *sb, *sy, *bias; /* QLinear scales, QGemm's C */
  double zy;                 /* y's zero point */
  float alpha;               /* QGemm's alpha (1 else) */
  int64_t K, N;              /* static */
  ncc_dtype adt, ydt;
  int64_t za_c;              /* QLinearMatMul: A's zero point (+128 for s8) */
} qmm;

/* B's zero point per column (0 without one); NULL on OOM. */
static int32_t *zb_columns(const qmm *q) {
  int32_t *z = ncc_calloc((size_t)q->N, sizeof *z);
  if (z && q->zb)
    for (int64_t j = 0; j < q->N; j++) z[j] = (int32_t)ncc_lower_const_at(q->zb, j);
  return z;
}

/* B[kk][j] - zb[j]. The weights are scanned by type (a 768x3072 Linear
 * is 2.4M bytes; through double per element the supports check alone, which
 * every dispatch repeats, cost 85 ms a layer). */
static inline int32_t b_minus_zb(const qmm *q, const int32_t *zb, int64_t kk, int64_t j) {
  return ncc_lower_byte(q->b, q->transb ? j * q->K + kk : kk * q->N + j) - zb[j];
}

static bool b_fits_s8(const qmm *q) {
  int32_t *zb = zb_columns(q);
  if (!zb) return false;
  bool s8_around_0 = q->b->dtype == NCC_DT_I8; /* fits whatever the values */
  for (int64_t j = 0; j < q->N; j++) s8_around_0 = s8_around_0 && zb[j] == 0;
  bool ok = true;
  for (int64_t kk = 0; kk < q->K && ok && !s8_around_0; kk++)
    for (int64_t j = 0; j < q->N && ok; j++) {
      int32_t v = b_minus_zb(q, zb, kk, j);
      ok = v >= -128 && v <= 127;
    }
  ncc_free(zb, 0);
  return ok;
}

/* QGemm (com.microsoft): A [M, K] (no transA), constant B ([K, N], or
 * [N, K] with transB), per-tensor a_scale / a_zp, b_scale / b_zp per
 * tensor or column, an optional constant i32 bias C of N (or 1) values,
 * y requantized with y_scale / y_zp, or f32 without them; alpha scales
 * the multiplier (ref: runtime/ref/ref_qlinear.c). */
static bool analyse_qgemm(const ncc_node *n, qmm *q) {
  int64_t ta = 0; /* transB: read by analyse, which needs it for K and N */
  if (n->n_in < 5 || ncc_attrs_get_int(n, "transA", 0, &ta) || ta || n->in[0]->shape.rank != 2)
    return false;
  const ncc_attr *al = ncc_node_attr(n, "alpha");
  q->alpha = !al ? 1.0f : al->kind == NCC_ATTR_FLOAT ? al->f : (float)al->i;
  q->sa = n->in[1];
  q->za = n->in[2];
  q->sb = n->in[4];
  q->zb = n->n_in > 5 ? n->in[5] : NULL;
  q->bias = n->n_in > 6 ? n->in[6] : NULL;
  q->sy = n->n_in > 7 ? n->in[7] : NULL;
  q->requant = q->sy != NULL;
  q->zy = n->n_in > 8 && n->in[8] ? ncc_lower_const_at(n->in[8], 0) : 0;
  if (q->bias && (!ncc_lower_qparam(q->bias, q->N) || q->bias->dtype != NCC_DT_I32))
    return false;
  if (n->n_in > 8 && n->in[8] && !ncc_lower_qparam(n->in[8], 1)) return false;
  if (!ncc_lower_qparam(q->sa, 1) || !ncc_lower_qparam(q->sb, q->N) || q->sa->dtype != NCC_DT_F32 ||
      q->sb->dtype != NCC_DT_F32 || (q->za && !ncc_lower_qparam(q->za, 1)) ||
      (q->zb && !ncc_lower_qparam(q->zb, q->N)))
    return false;
  if (q->requant) /* the multiplier must be finite (as QLinearMatMul's) */
    return ncc_lower_qparam(q->sy, 1) && ncc_lower_is8(n->out[0]) &&
           ncc_lower_requant_finite(q->sa, q->sb, q->sy, q->N) &&
           isfinite(ncc_lower_requant_mult(q->sa, q->sb, q->sy, 0) * q->alpha);
  return n->out[0]->dtype == NCC_DT_F32;
}

static bool analyse(const ncc_node *n, qmm *q) {
  memset(q, 0, sizeof *q);
  q->qlinear = n->op == NCC_OP_QLINEARMATMUL || n->op == NCC_OP_QGEMM;
  q->alpha = 1.0f;
  if ((!q->qlinear && n->op != NCC_OP_MATMULINTEGER) || n->n_out != 1 || !n->out[0])
    return false;
  q->a = n->in[0];
  q->b = n->in[q->qlinear ? 3 : 1];
  const ncc_value *a = q->a, *b = q->b, *y = n->out[0];
  if (!ncc_lower_is8(a) || !ncc_lower_is8(b) || a->shape.rank < 2 || b->shape.rank != 2 ||
      b->kind != NCC_VAL_CONST || !b->data || !ncc_shape_is_static(&b->shape))
    return false;
  if (n->op == NCC_OP_QGEMM) {
    int64_t tb = 0;
    if (ncc_attrs_get_int(n, "transB", 0, &tb)) return false;
    q->transb = tb != 0;
  }
  q->K = b->shape.d[q->transb ? 1 : 0];
  q->N = b->shape.d[q->transb ? 0 : 1];
  if (a->shape.d[a->shape.rank - 1] != q->K || y->shape.rank != a->shape.rank ||
      y->shape.d[y->shape.rank - 1] != q->N)
    return false;
  for (int i = 0; i < a->shape.rank - 1; i++)
    if (y->shape.d[i] != a->shape.d[i]) return false;
  q->adt = a->dtype;
  q->ydt = y->dtype;
  if (n->op == NCC_OP_QGEMM) {
    if (!analyse_qgemm(n, q)) return false;
    q->za_c = (int64_t)ncc_lower_const_at(q->za, 0) + (a->dtype == NCC_DT_I8 ? 128 : 0);
  } else if (q->qlinear) {
    if (n->n_in < 8 || !ncc_lower_is8(y) || !ncc_lower_qparam(n->in[1], 1) || !ncc_lower_qparam(n->in[2], 1) ||
        !ncc_lower_qparam(n->in[4], q->N) || !ncc_lower_qparam(n->in[5], q->N) ||
        !ncc_lower_qparam(n->in[6], 1) || !ncc_lower_qparam(n->in[7], 1) ||
        !ncc_lower_requant_finite(n->in[1], n->in[4], n->in[6], q->N))
      return false;
    q->requant = true;
    q->sa = n->in[1];
    q->sb = n->in[4];
    q->sy = n->in[6];
    q->zy = ncc_lower_const_at(n->in[7], 0);
    q->za = n->in[2];
    q->zb = n->in[5];
    q->za_c = (int64_t)ncc_lower_const_at(q->za, 0) + (a->dtype == NCC_DT_I8 ? 128 : 0);
  } else {
    if (y->dtype != NCC_DT_I32) return false;
    q->za = n->n_in > 2 ? n->in[2] : NULL;
    q->zb = n->n_in > 3 ? n->in[3] : NULL;
    /* A's zero point may come at run time (DynamicQuantizeLinear) */
    if (q->za && (q->za->dtype != a->dtype || !ncc_shape_is_static(&q->za->shape) ||
                  ncc_shape_numel(&q->za->shape) != 1))
      return false;
    if (q->zb && !ncc_lower_qparam(q->zb, q->N)) return false;
  }
  return b_fits_s8(q); /* B - zb must fit the s8 operand */
}

bool ncc_lower_qmatmul_supports(const ncc_node *n) {
  qmm q;
  return ncc_lower_plain(n) && analyse(n, &q);
}

/* Packed B panels [P][K4][NR] (P = N/NR rounded up, zero-padded; not
 * made when bb is NULL), the column sums of B - zb and (QLinearMatMul)
 * the requantisation multipliers, both padded to P*NR columns so a tile
 * reads whole vectors. */
static bool pack(kir_kernel *k, const qmm *q, int64_t nr, int *bb, int *bs, int *bm) {
  int64_t K4 = (q->K + 3) / 4, N = q->N, P = (N + nr - 1) / nr, NP = P * nr;
  double t0 = ncc_ctime_pack_begin();
  uint32_t *pb = bb ? ncc_calloc((size_t)(P * K4 * nr), sizeof *pb) : NULL;
  int32_t *sum = ncc_calloc((size_t)NP, sizeof *sum);
  float *mult = q->qlinear ? ncc_calloc((size_t)NP, sizeof *mult) : NULL;
  int32_t *zb = zb_columns(q);
  if ((bb && !pb) || !sum || (q->qlinear && !mult) || !zb) {
    ncc_free(pb, 0);
    ncc_free(sum, 0);
    ncc_free(mult, 0);
    ncc_free(zb, 0);
    return false;
  }
  for (int64_t kk = 0; kk < q->K; kk++)
    for (int64_t j = 0; j < N; j++) {
      int32_t v = b_minus_zb(q, zb, kk, j);
      if (pb)
        pb[((j / nr) * K4 + kk / 4) * nr + j % nr] |= (uint32_t)(uint8_t)(int8_t)v << (8 * (kk % 4));
      sum[j] += v;
    }
  ncc_free(zb, 0);
  if (q->qlinear) {
    for (int64_t j = 0; j < N; j++) {
      /* the reference's f32 order: sa*sb, / sy, * alpha */
      float m = q->requant ? ncc_lower_requant_mult(q->sa, q->sb, q->sy, j)
                           : (float)ncc_lower_const_at(q->sa, 0) * (float)ncc_lower_const_at(q->sb, j);
      mult[j] = q->alpha != 1.0f ? m * q->alpha : m;
      sum[j] = (int32_t)(-q->za_c * sum[j]); /* the whole correction */
      if (q->bias) sum[j] += (int32_t)ncc_lower_const_at(q->bias, j);
    }
  }
  ncc_ctime_pack_end(t0);
  if (bb) *bb = ncc_lower_data_buf(k, "packed_b", NCC_DT_I32, pb, (size_t)(P * K4 * nr) * sizeof *pb);
  *bs = ncc_lower_data_buf(k, "colsum", NCC_DT_I32, sum, (size_t)NP * sizeof *sum);
  *bm = q->qlinear ? ncc_lower_data_buf(k, "mult", NCC_DT_F32, mult, (size_t)NP * sizeof *mult) : -1;
  return true;
}

/* MatMulInteger's -za per lane (colsum's factor): A's zero point read at
 * run time (buffer bza, u8 as read, s8 plus `s8_offset`: 128 where the
 * kernel offsets s8 A to u8), or -s8_offset for s8 A without one; NULL for
 * QLinearMatMul and QGemm, whose correction colsum holds whole. */
static kir_expr *neg_za(kir_kernel *k, const qmm *q, int bza, int s8_offset, int lanes) {
  if (q->qlinear) return NULL;
  kir_expr *za = I32C(q->adt == NCC_DT_I8 ? s8_offset : 0);
  if (bza >= 0) {
    za = kir_cast(k, NCC_DT_I32, kir_load(k, bza, I(0)));
    if (q->adt == NCC_DT_U8) za = kir_bin(k, KIR_AND, za, I32C(255));
    else if (s8_offset) za = kir_bin(k, KIR_ADD, za, I32C(s8_offset));
  }
  return kir_splat(k, kir_bin(k, KIR_SUB, I32C(0), za), lanes);
}

/* The output of the i32 sums y (corrected): requantized, scaled to f32
 * (QGemm without y_scale) or as they are (MatMulInteger). */
static kir_expr *epilogue(kir_kernel *k, const qmm *q, kir_expr *y, kir_expr *mult) {
  if (q->requant) return ncc_lower_requant(k, y, mult, q->zy, q->ydt);
  if (q->qlinear) return kir_bin(k, KIR_MUL, kir_cast(k, NCC_DT_F32, y), mult);
  return y;
}

/* A's four bytes at row `row`, k = 4*k4 .. 4*k4+3, as one i32 (u8 view). */
static kir_expr *a_word(kir_kernel *k, const qmm *q, int ba, int ba32, kir_expr *row,
                        kir_expr *k4) {
  kir_expr *w;
  if (ba32 >= 0) {
    w = kir_load(k, ba32, ADD(MUL(row, I(q->K / 4)), k4));
  } else {
    w = NULL;
    for (int j = 0; j < 4; j++) {
      kir_expr *kk = ADD(MUL(k4, I(4)), I(j));
      kir_expr *v = kir_cast(k, NCC_DT_I32, kir_load_guarded(k, ba, ADD(MUL(row, I(q->K)), kk),
                                                             kir_bin(k, KIR_LT, kk, I(q->K))));
      /* bytes as u8: an s8 byte sign-extends, keep its low 8 bits */
      v = kir_bin(k, KIR_AND, v, I32C(255));
      if (j) v = kir_bin(k, KIR_MUL, v, I32C((int64_t)1 << (8 * j)));
      w = w ? kir_bin(k, KIR_ADD, w, v) : v;
    }
  }
  if (q->adt == NCC_DT_I8) w = ncc_lower_s8_to_u8(k, w);
  return w;
}

static ncc_status lower(const ncc_node *n, const qmm *q, int w, kir_kernel *k) {
  int64_t K4 = (q->K + 3) / 4, N = q->N;
  /* the register tile of lower_matmul.c: 8 x 3 vectors with 32 registers
   * (AVX-512), 6 x 2 with 16 */
  int mr = w >= 16 ? 8 : 6, nv = w >= 16 ? 3 : 2;
  const ncc_shape *as = &q->a->shape;
  int64_t Ms = 1; /* static M, or -1 */
  for (int i = 0; i < as->rank - 1; i++)
    Ms = Ms < 0 || ncc_dim_is_sym(as->d[i]) ? -1 : Ms * as->d[i];
  if (Ms > 0 && Ms < mr) mr = (int)Ms;
  int64_t nr = (int64_t)nv * w, P = (N + nr - 1) / nr;
  int ba = kir_buf_input(k, 0, q->adt);
  int ba32 = q->K % 4 == 0 ? kir_buf_input(k, 0, NCC_DT_I32) : -1;
  int bza = !q->qlinear && q->za ? kir_buf_input(k, 2, q->adt) : -1;
  int bb, bs, bm;
  if (!pack(k, q, nr, &bb, &bs, &bm))
    return ncc_error(NCC_ERR_NOMEM, "out of memory packing %s weights", ncc_op_name(n->op));
  int by = kir_buf_output(k, 0, q->ydt);
  kir_expr *M = I(1);
  for (int i = 0; i < as->rank - 1; i++) M = MUL(M, ncc_lower_dim(k, as->d[i]));
  int acc[MR_MAX][NV_MAX], bv[NV_MAX], av = kir_local_add(k, NCC_DT_I32, w);
  for (int v = 0; v < nv; v++) bv[v] = kir_local_add(k, NCC_DT_I32, w);
  for (int r = 0; r < mr; r++)
    for (int v = 0; v < nv; v++) acc[r][v] = kir_local_add(k, NCC_DT_I32, w);

  kir_block top = kir_body_begin();
  kir_expr *tiles = kir_cdiv(k, M, mr);
  int vt = kir_var_new(k), vk = kir_var_new(k);
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(tiles, I(P)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *t = kir_var(k, vt);
  kir_expr *jp = kir_bin(k, KIR_DIV, t, tiles);
  kir_expr *m0 = MUL(kir_bin(k, KIR_REM, t, tiles), I(mr));
  kir_expr *rows[MR_MAX];
  for (int r = 0; r < mr; r++) {
    rows[r] = kir_min(k, ADD(m0, I(r)), ADD(M, I(-1)));
    for (int v = 0; v < nv; v++) kir_assign(k, &bt, acc[r][v], kir_splat(k, I32C(0), w));
  }
  kir_stmt *lk = kir_for(k, &bt, vk, I(0), I(K4), KIR_SERIAL, 0);
  kir_block bk = kir_body_begin();
  kir_expr *k4 = kir_var(k, vk);
  for (int v = 0; v < nv; v++) /* panel jp, row k4: ((jp*K4 + k4)*NR + v*w) */
    kir_assign(k, &bk, bv[v], kir_loadv(k, bb, ADD(MUL(ADD(MUL(jp, I(K4)), k4), I(nr)), I(v * w)),
                                        w, NULL));
  for (int r = 0; r < mr; r++) {
    kir_assign(k, &bk, av, kir_splat(k, a_word(k, q, ba, ba32, rows[r], k4), w));
    for (int v = 0; v < nv; v++)
      kir_assign(k, &bk, acc[r][v], kir_dot4(k, kir_local_ref(k, av), kir_local_ref(k, bv[v]),
                                             kir_local_ref(k, acc[r][v])));
  }
  kir_body_end(lk, &bk);
  kir_expr *za = neg_za(k, q, bza, 128, w);
  for (int v = 0; v < nv; v++) {
    kir_expr *col = ADD(MUL(jp, I(nr)), I(v * w));
    kir_expr *cnt = kir_bin(k, KIR_SUB, I(N), col);
    kir_expr *corr = kir_loadv(k, bs, col, w, NULL); /* padded: whole vectors */
    if (za) corr = kir_bin(k, KIR_MUL, za, corr);
    kir_expr *mult = q->qlinear ? kir_loadv(k, bm, col, w, NULL) : NULL;
    for (int r = 0; r < mr; r++) {
      kir_expr *y = kir_bin(k, KIR_ADD, kir_local_ref(k, acc[r][v]), corr);
      y = epilogue(k, q, y, mult);
      kir_store(k, &bt, by, ADD(MUL(rows[r], I(N)), col), y, cnt);
    }
  }
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)q->K;
  return NCC_OK;
}

/* ---- the AMX path (lower_amx.c's skeleton) ----
 * tdpbusd for u8 A, tdpbssd for s8 A (no +128 offset: za_c is A's own
 * zero point); the epilogue per row of C is the vector path's. */
typedef struct amx_epi {
  const qmm *q;
  int bs, bm, by;
  kir_expr *za; /* MatMulInteger: -za per lane (times colsum), or NULL */
} amx_epi;

static void amx_row(kir_kernel *k, kir_block *blk, void *ctx, kir_expr *sums, kir_expr *row,
                    kir_expr *col, kir_expr *count) {
  const amx_epi *p = ctx;
  kir_expr *corr = kir_loadv(k, p->bs, col, 16, NULL); /* padded: whole vectors */
  if (p->za) corr = kir_bin(k, KIR_MUL, p->za, corr);
  kir_expr *y = kir_bin(k, KIR_ADD, sums, corr);
  y = epilogue(k, p->q, y, p->q->qlinear ? kir_loadv(k, p->bm, col, 16, NULL) : NULL);
  kir_store(k, blk, p->by, ADD(MUL(row, I(p->q->N)), col), y, count);
}

/* The static M (0: symbolic) and the least non-zero M (the static dims'
 * product) of A's leading dims. */
static void rows_of(const ncc_shape *as, int64_t *m_static, int64_t *m_min) {
  int64_t ms = 1, mm = 1;
  for (int i = 0; i < as->rank - 1; i++) {
    if (ncc_dim_is_sym(as->d[i])) ms = 0;
    else {
      ms *= as->d[i];
      mm *= as->d[i];
    }
  }
  *m_static = ms;
  *m_min = mm;
}

static bool amx_fits(const qmm *q, ncc_amx_gemm *g) {
  memset(g, 0, sizeof *g);
  g->K = q->K;
  g->N = q->N;
  g->lda = q->K;
  g->a_esize = 1;
  rows_of(&q->a->shape, &g->m_static, &g->m_min);
  return q->K % 4 == 0 && ncc_lower_amx_fits(g);
}

typedef struct amx_src {
  const qmm *q;
  const int32_t *zb;
} amx_src;

/* Column n's B - zb at k = 4q..4q+3 as four s8 bytes (0 past K). */
static uint32_t amx_word(const void *ctx, int64_t q4, int64_t n) {
  const amx_src *s = ctx;
  uint32_t w = 0;
  for (int64_t i = 0; i < 4 && 4 * q4 + i < s->q->K; i++)
    w |= (uint32_t)(uint8_t)(int8_t)b_minus_zb(s->q, s->zb, 4 * q4 + i, n) << (8 * i);
  return w;
}

static ncc_status lower_amx(const ncc_node *n, const qmm *q0, ncc_amx_gemm *g, kir_kernel *k) {
  qmm q = *q0;
  if (q.adt == NCC_DT_I8) q.za_c -= 128; /* tdpbssd takes s8 A as it is */
  g->a_buf = kir_buf_input(k, 0, q.adt);
  int bza = !q.qlinear && q.za ? kir_buf_input(k, 2, q.adt) : -1;
  int bs, bm;
  int32_t *zb = zb_columns(&q);
  double t0 = ncc_ctime_pack_begin();
  amx_src src = {&q, zb};
  size_t bytes = 0;
  uint32_t *pb = zb ? ncc_lower_amx_pack(g, amx_word, &src, &bytes) : NULL;
  ncc_ctime_pack_end(t0);
  ncc_free(zb, 0);
  if (!pb || !pack(k, &q, 16, NULL, &bs, &bm)) {
    ncc_free(pb, 0);
    return ncc_error(NCC_ERR_NOMEM, "out of memory packing %s weights", ncc_op_name(n->op));
  }
  g->b_buf = ncc_lower_data_buf(k, "tiles_b", NCC_DT_I32, pb, bytes);
  amx_epi p = {&q, bs, bm, kir_buf_output(k, 0, q.ydt), NULL};
  p.za = neg_za(k, &q, bza, 0, 16); /* tdpbssd reads s8 A as it is */
  const ncc_shape *as = &q.a->shape;
  g->M = I(1);
  for (int i = 0; i < as->rank - 1; i++) g->M = MUL(g->M, ncc_lower_dim(k, as->d[i]));
  g->dp = q.adt == NCC_DT_I8 ? KIR_TILE_DPBSSD : KIR_TILE_DPBUSD;
  g->acc_dt = NCC_DT_I32;
  g->row = amx_row;
  g->ctx = &p;
  kir_block top = kir_body_begin();
  ncc_lower_amx_gemm(k, &top, g);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)q.K;
  return NCC_OK;
}

ncc_status ncc_lower_qmatmul(const ncc_node *n, const char *name, const ncc_lower_opts *o,
                             kir_kernel **out) {
  *out = NULL;
  qmm q;
  if (!analyse(n, &q)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  ncc_amx_gemm g;
  if (o->amx_int8 && amx_fits(&q, &g))
    return ncc_lower_finish(k, lower_amx(n, &q, &g, k), ncc_op_name(n->op), out);
  int vw = o->vector_width > 0 ? o->vector_width : 1;
  return ncc_lower_finish(k, lower(n, &q, vw, k), ncc_op_name(n->op), out);
}
