/* codegen/lower_amx.c — the tile GEMM skeleton of x86 AMX: C = A * B with
 * A's rows read straight from memory and B pre-packed, for the int8
 * (tdpbusd / tdpbssd) and bf16 (tdpbf16ps) kernels; the caller writes the
 * epilogue of each row of C.
 *
 * A tile register holds 16 rows of 64 bytes, so one instruction multiplies
 * a 16 x 64-byte block of A (64 int8 or 32 bf16 per row) by B's 64 bytes x
 * 16 columns into 16 x 16 i32/f32 sums: 16K multiply-adds, 32 times a
 * VNNI vpdpbusd's. With 8 tile registers a task keeps tm x tn accumulator
 * tiles (2 x 2: 32 rows x 32 columns) plus tm tiles of A and tn of B.
 * - B is packed as panels of 16 columns, each (K bytes / 4) rows of 16
 *   i32 words: row r, word j holds the 4 bytes (int8 quads, bf16 pairs) of
 *   column j at k bytes 4r..4r+3: the layout a tile's B operand needs, so a
 *   k step loads 16 consecutive rows of a panel (stride 64 bytes).
 * - Every tile of a kernel has one shape, so LLVM's single tile
 *   configuration serves the whole function (narrower tiles for K's last
 *   bytes ran out of tile registers, or computed garbage, in LLVM 19's
 *   allocator). K's bytes beyond the last whole 64 are one more full step
 *   that re-reads the last 64 bytes of A's rows (always in bounds); the
 *   packed B of that step has zero rows for the bytes already counted. A K
 *   below 64 bytes is one step of narrower tiles.
 * - Rows: tiles of 16 rows start at min(16 t, M - 16), so no tile reads
 *   past A's last row; rows a tile recomputes below its nominal start are
 *   not stored (count 0), so no two tasks store the same element. A static
 *   M below 16 gets tiles of M rows. Columns: the last task's second panel
 *   repeats the last panel when the panels are odd, again without stores.
 * - One parallel loop over tasks, panel-major, so a thread's consecutive
 *   tasks reuse their B panels from cache.
 * - f32 A (bf16 products of an f32 model at --precision=bf16, whose A the
 *   precision pass rounded to bf16 values): a task first converts its
 *   rows into a scratch array on its stack ([32][K] bf16, [16][K] when
 *   that passes AMX_SCRATCH_MAX; K padded to 32 with zeros), then runs a
 *   chunk of panel pairs on it, so the conversion is made once per chunk,
 *   not per panel. */
#include "lower.h"

#define I(v) kir_const_i(k, (v))
#define ADD(a, b) kir_add(k, (a), (b))
#define MUL(a, b) kir_mul(k, (a), (b))

/* Most bytes of stack a task's scratch rows of bf16 A may take (a module
 * runs kernels on its caller's thread too, whose stack ncc does not size). */
#define AMX_SCRATCH_MAX (128 * 1024)

bool ncc_lower_amx_fits(const ncc_amx_gemm *g) {
  return g->K > 0 && g->N > 0 && (g->K * g->a_esize) % 4 == 0 &&
         (g->m_static > 0 || g->m_min >= 16) &&
         (!g->a_f32 || (g->K % 32 == 0 && 16 * g->K * 2 <= AMX_SCRATCH_MAX));
}

/* k steps and their bytes: S steps of 64 (the last one overlapping), or
 * one narrower step when a row of A has fewer than 64 bytes. */
static int64_t kbytes(const ncc_amx_gemm *g) { return g->K * g->a_esize; }
static int64_t steps(const ncc_amx_gemm *g) { return (kbytes(g) + 63) / 64; }
static int step_bytes(const ncc_amx_gemm *g) { return kbytes(g) < 64 ? (int)kbytes(g) : 64; }
/* Byte offset in A's rows of step s's tile. */
static int64_t step_off(const ncc_amx_gemm *g, int64_t s) {
  int64_t o = s * 64, last = kbytes(g) - step_bytes(g);
  return o < last ? o : last;
}

static int64_t panel_rows(const ncc_amx_gemm *g) {
  return steps(g) * (step_bytes(g) / 4);
}

uint32_t *ncc_lower_amx_pack(const ncc_amx_gemm *g, ncc_amx_word word, const void *ctx,
                             size_t *bytes) {
  int64_t P = (g->N + 15) / 16, rows = panel_rows(g), per = step_bytes(g) / 4;
  *bytes = (size_t)(P * rows * 16) * sizeof(uint32_t);
  uint32_t *b = ncc_calloc((size_t)(P * rows * 16), sizeof *b);
  if (!b) return NULL;
  for (int64_t s = 0; s < steps(g); s++)
    for (int64_t r = 0; r < per; r++) {
      int64_t kb = step_off(g, s) + 4 * r;
      if (kb < s * 64) continue; /* counted by the step before */
      for (int64_t n = 0; n < g->N; n++)
        b[((n / 16) * rows + s * per + r) * 16 + n % 16] = word(ctx, kb / 4, n);
    }
  return b;
}

/* Rows of f32 A converted to bf16 (ties to even) into this task's scratch
 * rows, K padded with zeros to the scratch's width. */
static void convert_rows(kir_kernel *k, kir_block *blk, const ncc_amx_gemm *g, int scratch,
                         int64_t kp, kir_expr *const *cs, int tm, int R) {
  int vc = kir_var_new(k);
  kir_stmt *lc = kir_for(k, blk, vc, I(0), I(kp / 16), KIR_SERIAL, 0);
  kir_block bc = kir_body_begin();
  kir_expr *k0 = MUL(kir_var(k, vc), I(16));
  kir_expr *cnt = ADD(I(g->a_cols), MUL(k0, I(-1))); /* <= 0 past A's K: zeros */
  for (int i = 0; i < tm; i++)
    for (int r = 0; r < R; r++) {
      kir_expr *v = kir_loadv(k, g->a_buf, ADD(MUL(ADD(cs[i], I(r)), I(g->lda)), k0), 16, cnt);
      kir_store(k, &bc, scratch, ADD(I((int64_t)(i * 16 + r) * kp), k0),
                kir_cast(k, NCC_DT_BF16, v), NULL);
    }
  kir_body_end(lc, &bc);
}

void ncc_lower_amx_gemm(kir_kernel *k, kir_block *top, const ncc_amx_gemm *g) {
  int64_t S = steps(g), rows_b = panel_rows(g);
  int sb = step_bytes(g);
  int64_t P = (g->N + 15) / 16;
  int R = g->m_static > 0 && g->m_static < 16 ? (int)g->m_static : 16;
  int64_t m_lo = g->m_static > 0 ? g->m_static : g->m_min;
  int tm = m_lo >= 32 ? 2 : 1, tn = P >= 2 ? 2 : 1;
  /* the bf16 scratch stays within AMX_SCRATCH_MAX of stack: 16 rows of
   * a long K rather than 32 */
  if (g->a_f32 && (int64_t)tm * 16 * g->K * 2 > AMX_SCRATCH_MAX) tm = 1;
  int64_t PB = (P + tn - 1) / tn; /* panel pairs */
  /* f32 A: a task converts its rows once and runs `chunk` panel pairs */
  int64_t chunk = g->a_f32 ? (PB + 3) / 4 : 1;
  int c[2][2], a[2], b[2];
  for (int i = 0; i < tm; i++) {
    a[i] = kir_local_add(k, NCC_DT_I32, 256);
    for (int j = 0; j < tn; j++) c[i][j] = kir_local_add(k, NCC_DT_I32, 256);
  }
  for (int j = 0; j < tn; j++) b[j] = kir_local_add(k, NCC_DT_I32, 256);
  int a_buf = g->a_buf;
  int64_t lda = g->lda;
  int c_buf = kir_buf_local(k, "c_tiles", g->acc_dt, (int64_t)tm * tn * 256);
  if (g->a_f32) { /* scratch rows of K (padded) bf16: the tiles' A */
    a_buf = kir_buf_local(k, "a_bf16", NCC_DT_BF16, (int64_t)tm * 16 * g->K);
    lda = g->K;
  }

  kir_expr *M = g->M;
  kir_expr *rb_n = kir_cdiv(k, M, 16 * tm), *pc_n = I((PB + chunk - 1) / chunk);
  int vt = kir_var_new(k), vs = kir_var_new(k), vp = kir_var_new(k);
  kir_stmt *lt = kir_for(k, top, vt, I(0), MUL(rb_n, pc_n), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *t = kir_var(k, vt);
  kir_expr *pc = kir_bin(k, KIR_DIV, t, rb_n), *rb = kir_bin(k, KIR_REM, t, rb_n);
  kir_expr *ns[2], *cs[2], *arow[2], *np[2], *cp[2];
  for (int i = 0; i < tm; i++) {
    ns[i] = MUL(ADD(MUL(rb, I(tm)), I(i)), I(16));
    cs[i] = R < 16 ? I(0) : kir_min(k, ns[i], ADD(M, I(-16)));
    arow[i] = g->a_f32 ? I(i * 16) : cs[i];
  }
  if (g->a_f32) convert_rows(k, &bt, g, a_buf, g->K, cs, tm, R);
  kir_block bp = kir_body_begin(), *body = &bt;
  kir_stmt *lp = NULL;
  kir_expr *pp = pc; /* this task's panel pair */
  if (chunk > 1) {
    kir_expr *p0 = MUL(pc, I(chunk));
    lp = kir_for(k, &bt, vp, p0, kir_min(k, ADD(p0, I(chunk)), I(PB)), KIR_SERIAL, 0);
    pp = kir_var(k, vp);
    body = &bp;
  }
  for (int j = 0; j < tn; j++) {
    np[j] = ADD(MUL(pp, I(tn)), I(j));
    cp[j] = kir_min(k, np[j], I(P - 1));
  }
  for (int i = 0; i < tm; i++)
    for (int j = 0; j < tn; j++) kir_assign(k, body, c[i][j], kir_tile_zero(k, R, 64));

  kir_stmt *ls = kir_for(k, body, vs, I(0), I(S), KIR_SERIAL, 0);
  kir_block bs = kir_body_begin();
  kir_expr *s = kir_var(k, vs);
  /* A's byte offset: min(64 s, K bytes - 64), in elements */
  kir_expr *a_el = kir_min(k, MUL(s, I(64 / g->a_esize)), I(step_off(g, S - 1) / g->a_esize));
  for (int i = 0; i < tm; i++)
    kir_assign(k, &bs, a[i],
               kir_tile_load(k, a_buf, ADD(MUL(arow[i], I(lda)), a_el), I(lda), R, sb));
  for (int j = 0; j < tn; j++)
    kir_assign(k, &bs, b[j],
               kir_tile_load(k, g->b_buf, MUL(ADD(MUL(cp[j], I(rows_b)), MUL(s, I(sb / 4))), I(16)),
                             I(16), sb / 4, 64));
  for (int i = 0; i < tm; i++)
    for (int j = 0; j < tn; j++)
      kir_assign(k, &bs, c[i][j],
                 kir_tile_dp(k, g->dp, kir_local_ref(k, a[i]), kir_local_ref(k, b[j]),
                             kir_local_ref(k, c[i][j]), R, 64, sb));
  kir_body_end(ls, &bs);

  /* every accumulator to this task's scratch first, then the epilogue
   * reads rows as vectors with no tile live (codegen/llvm/emit.c) */
  for (int i = 0; i < tm; i++)
    for (int j = 0; j < tn; j++)
      kir_tile_store(k, body, c_buf, I((int64_t)(i * tn + j) * 256), I(16),
                     kir_local_ref(k, c[i][j]), R, 64);
  for (int i = 0; i < tm; i++)
    for (int j = 0; j < tn; j++) {
      kir_expr *col = MUL(cp[j], I(16));
      kir_expr *cols = kir_select(k, kir_bin(k, KIR_LT, np[j], I(P)),
                                  ADD(I(g->N), MUL(col, I(-1))), I(0));
      for (int r = 0; r < R; r++) {
        kir_expr *row = ADD(cs[i], I(r));
        kir_expr *count = kir_select(k, kir_bin(k, KIR_GE, row, ns[i]), cols, I(0));
        kir_expr *sums = kir_loadv(k, c_buf, I((int64_t)(i * tn + j) * 256 + r * 16), 16, NULL);
        g->row(k, body, g->ctx, sums, row, col, count);
      }
    }
  if (lp) kir_body_end(lp, &bp);
  kir_body_end(lt, &bt);
}
