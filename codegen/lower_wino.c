/* codegen/lower_wino.c — 3x3 stride-1 Conv on blocked (#nchw<k>c) values
 * by Winograd's minimal filtering F(m x m, 3 x 3), m = 2 or 4 (the pass
 * `winograd` chooses m per Conv and marks it `conv.winograd`).
 *
 * An output tile of m x m pixels is Y = A^T [U . V] A, with the input
 * patch d (a x a, a = m + 2) transformed as V = B^T d B and the filter as
 * U = G g G^T (Lavin and Gray). Summed over input channels, the products
 * U . V of one point xi of the a x a grid are a GEMM over channels:
 *
 *   M[xi][tile][oc] = sum over c of V[xi][tile][c] * U[xi][c][oc]
 *
 * a^2 GEMMs of 1 x (C x OC) per tile where the direct convolution makes
 * m^2 x 9 multiply-adds per (c, oc): 2.25x fewer (m = 2), 4x (m = 4).
 *
 * Every transform is elementwise across channels, so it runs on the k
 * channels of a blocked pixel as one vector. A task is (image, part of
 * the output-channel groups, T tiles flat over the image's tile grid, the
 * last ones clamped to the last tile: recomputed and stored again,
 * harmlessly); small images split their output channels into parts so an
 * image still makes 8 tasks:
 *   1. input transform of its T tiles, all C channels, into a stack
 *      scratch V [xi][C/ki][T][ki] (padding and the tiles' overhang past
 *      the image read zeros);
 *   2. per group of nb output blocks and run of R tiles: for each xi, the
 *      broadcast-FMA register tile of the blocked direct kernel (nb
 *      weight vectors, R broadcasts of V) over C, into a scratch
 *      M [xi][R][nb][kb]; then the output transform of the run, bias,
 *      fused epilogue and the store of the pixels inside the output.
 * Both transforms are separable: a column at a time into a small scratch
 * (wino_t), then each row of it.
 * U is computed at compile time (in double) and packed [xi][OC/kb][C][kb].
 * V and M live on the task's stack, together at most SCRATCH_MAX, which
 * bounds T (wino_tiles).
 */
#include <string.h>

#include "../ir/ctime.h"
#include "lower.h"
#include "kir_short.h"

#define F32 NCC_DT_F32
#define A_MAX 6 /* a = m + 2 */
/* Most bytes of stack a task's V and M scratch may take (a module runs
 * kernels on its caller's thread too, whose stack ncc does not size). */
#define SCRATCH_MAX (128 * 1024)

/* B^T (a x a), G (a x 3), A^T (m x a) of F(2, 3) (points 0, +-1,
 * infinity) and F(4, 3). F(4, 3)'s points are 0, +-1, 1/2, -2 and
 * infinity rather than the usual 0, +-1, +-2: smaller coefficients in G
 * and B^T, and half the rounding error (a 256-channel tile in f32: 2.2e-6
 * against 4.2e-6 of the largest output; Inception v3 end to end: 2.4e-4
 * against 4.9e-4, the direct kernel 1.7e-4, relative to the largest logit;
 * Barabasz et al. study the choice). python.winograd_ort runs both against
 * onnxruntime. */
static const double BT2[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const double G2[4][3] = {{1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
static const double AT2[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
static const double BT4[6][6] = {{1, -1.5, -2, 1.5, 1, 0},   {0, -1, 0.5, 2.5, 1, 0},
                                 {0, 1, -2.5, 0.5, 1, 0},    {0, -2, -1, 2, 1, 0},
                                 {0, 0.5, -1, -0.5, 1, 0},   {0, 1, -1.5, -2, 1.5, 1}};
static const double G4[6][3] = {{1, 0, 0},
                                 {1. / 3, 1. / 3, 1. / 3},
                                 {-1. / 3, 1. / 3, -1. / 3},
                                 {-16. / 15, -8. / 15, -4. / 15},
                                 {1. / 15, -2. / 15, 4. / 15},
                                 {0, 0, 1}};
static const double AT4[4][6] = {{1, 1, 1, 1, 1, 0},
                                 {0, 1, -1, 0.5, -2, 0},
                                 {0, 1, 1, 0.25, 4, 0},
                                 {0, 1, -1, 0.125, -8, 1}};

typedef struct wplan {
  int m, a, kb, ki, nb, R;
  int64_t C, H, W, OC, OH, OW, pt, pl, CB, OCB, TH, TW, NT, T;
  int64_t nchunk, osplit, gpt; /* tasks an image: nchunk chunks of T tiles x
                                  osplit parts of gpt output-block groups */
  const double *bt, *g, *at; /* a x a, a x 3, m x a, row-major */
  int bx, bu, bb, by, bv, bm, bt_s; /* bt_s: a transform's a x a scratch */
  int acc[NCC_CONV_R_MAX][NCC_CONV_NB_MAX], wl[NCC_CONV_NB_MAX];
  ncc_bconv_epi epi;
  void *ctx;
} wplan;


static bool window_ok(const ncc_node *n, const ncc_window *w, int m) {
  if (m != 2 && m != 4) return false;
  if (w->rank != 2 || w->group != 1 || w->kernel[0] != 3 || w->kernel[1] != 3) return false;
  for (int i = 0; i < 2; i++)
    if (w->stride[i] != 1 || w->dilation[i] != 1) return false;
  const ncc_value *x = n->in[0], *y = n->out[0];
  return ncc_value_block(x) > 0 && ncc_value_block(y) > 0 && x->shape.d[1] % ncc_value_block(x) == 0;
}

/* Tiles per task whose V and M scratch fit SCRATCH_MAX with an nb x R
 * register tile of kb lanes (a multiple of R where at least R fit; 0:
 * none fits). */
static int64_t wino_tiles(int m, int64_t C, int R, int nb, int kb) {
  int64_t a2 = (int64_t)(m + 2) * (m + 2);
  int64_t ms = a2 * R * nb * kb * 4, per = a2 * C * 4;
  if (ms >= SCRATCH_MAX) return 0;
  int64_t T = (SCRATCH_MAX - ms) / per;
  return T >= R ? T / R * R : T;
}

/* ---- U = G g G^T, packed [xi][OC/kb][C][kb] ---- */

typedef struct ujob {
  const wplan *p;
  const float *w; /* [OC][C][3][3] */
  float *u;
} ujob;

static void pack_u(void *ctx, int64_t lo, int64_t hi) {
  const ujob *j = ctx;
  const wplan *p = j->p;
  int a = p->a, kb = p->kb;
  for (int64_t oc = lo; oc < hi; oc++)
    for (int64_t c = 0; c < p->C; c++) {
      const float *g = j->w + (oc * p->C + c) * 9;
      double t[A_MAX][3]; /* G g */
      for (int i = 0; i < a; i++)
        for (int q = 0; q < 3; q++)
          t[i][q] = p->g[i * 3] * g[q] + p->g[i * 3 + 1] * g[3 + q] + p->g[i * 3 + 2] * g[6 + q];
      for (int i = 0; i < a; i++)
        for (int jj = 0; jj < a; jj++) {
          double u = t[i][0] * p->g[jj * 3] + t[i][1] * p->g[jj * 3 + 1] + t[i][2] * p->g[jj * 3 + 2];
          int64_t xi = i * a + jj;
          j->u[((xi * p->OCB + oc / kb) * p->C + c) * kb + oc % kb] = (float)u;
        }
    }
}

static int pack_weights(kir_kernel *k, const wplan *p, const ncc_value *wt) {
  double t0 = ncc_ctime_pack_begin();
  size_t count = (size_t)(p->a * p->a) * (size_t)(p->OC * p->C);
  float *u = ncc_malloc(count * sizeof(float));
  if (!u) return -1;
  ujob j = {p, wt->data, u};
  ncc_lower_parallel(p->OC, 64, pack_u, &j);
  ncc_ctime_pack_end(t0);
  return ncc_lower_data_buf(k, "wino_u", F32, u, count * sizeof(float));
}

/* ---- the transforms ---- */

/* sum over r < n of row[r] * in[r]: zero coefficients skipped, +-1 ones
 * added without a multiply. */
static kir_expr *combo(kir_kernel *k, const double *row, int n, kir_expr *const *in, int lanes) {
  kir_expr *s = NULL;
  for (int r = 0; r < n; r++) {
    double f = row[r];
    kir_expr *v = in[r];
    if (f == 0) continue;
    if (!s) {
      s = f == 1 ? v
          : f == -1 ? kir_un(k, KIR_NEG, v)
                    : kir_bin(k, KIR_MUL, v, kir_splat(k, kir_const_f(k, F32, f), lanes));
    } else if (f == 1) {
      s = kir_bin(k, KIR_ADD, s, v);
    } else if (f == -1) {
      s = kir_bin(k, KIR_SUB, s, v);
    } else {
      s = kir_fma(k, v, kir_splat(k, kir_const_f(k, F32, f), lanes), s);
    }
  }
  return s ? s : kir_splat(k, kir_const_f(k, F32, 0.0), lanes);
}

/* Tile q's origin: tile row th, column tw. */
static void tile_at(const wplan *p, kir_kernel *k, kir_expr *q, kir_expr **th, kir_expr **tw) {
  *th = DIV(q, I(p->TW));
  *tw = REM(q, I(p->TW));
}

/* 1. V of the task's T tiles (first flat tile q0), all channels. */
static void input_transform(wplan *p, kir_kernel *k, kir_block *b, kir_expr *bn, kir_expr *q0) {
  int a = p->a, ki = p->ki;
  int vt = kir_var_new(k), vc = kir_var_new(k);
  kir_stmt *lt = kir_for(k, b, vt, I(0), I(p->T), KIR_SERIAL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *tt = kir_var(k, vt), *th, *tw;
  tile_at(p, k, kir_min(k, ADD(q0, tt), I(p->NT - 1)), &th, &tw);
  kir_expr *ih0 = ADD(MUL(th, I(p->m)), I(-p->pt)), *iw0 = ADD(MUL(tw, I(p->m)), I(-p->pl));
  /* the row tests (invariant in the channel loop) */
  kir_expr *gr[A_MAX];
  for (int r = 0; r < a; r++) gr[r] = ncc_lower_inside(k, ADD(ih0, I(r)), p->H);
  kir_stmt *lc = kir_for(k, &bt, vc, I(0), I(p->CB), KIR_SERIAL, 0);
  kir_block bc = kir_body_begin();
  kir_expr *cb = kir_var(k, vc);
  kir_expr *plane = MUL(ADD(MUL(bn, I(p->CB)), cb), I(p->H * p->W * ki));
  kir_expr *zero = kir_splat(k, kir_const_f(k, F32, 0.0), ki);
  /* separably, through a small scratch: t = B^T d one column of d at a
   * time, then each row of t times B; all a^2 values at once (the patch,
   * then t) spilled the vector registers at a = 6. At a = 4 the 16 fit:
   * the loops are unrolled and the scratch becomes registers. */
  int vq = kir_var_new(k), vi = kir_var_new(k);
  kir_mark mk = a <= 4 ? KIR_UNROLL : KIR_SERIAL;
  kir_stmt *lq = kir_for(k, &bc, vq, I(0), I(a), mk, a);
  kir_block bq = kir_body_begin();
  {
    kir_expr *c = kir_var(k, vq), *col[A_MAX];
    kir_expr *gcol = ncc_lower_inside(k, ADD(iw0, c), p->W);
    for (int r = 0; r < a; r++) {
      /* outside the image: the plane's first pixel is read (valid memory)
       * and replaced by the zero padding */
      kir_expr *g = AND(gr[r], gcol);
      kir_expr *idx = ADD(plane, MUL(ADD(MUL(ADD(ih0, I(r)), I(p->W)), ADD(iw0, c)), I(ki)));
      col[r] = kir_select(k, g, kir_loadv(k, p->bx, kir_select(k, g, idx, plane), ki, NULL), zero);
    }
    for (int i = 0; i < a; i++)
      kir_store(k, &bq, p->bt_s, MUL(ADD(I(i * a), c), I(ki)), combo(k, p->bt + i * a, a, col, ki),
                NULL);
  }
  kir_body_end(lq, &bq);
  kir_stmt *li = kir_for(k, &bc, vi, I(0), I(a), mk, a);
  kir_block bi = kir_body_begin();
  {
    kir_expr *i = kir_var(k, vi), *row[A_MAX];
    for (int c = 0; c < a; c++) row[c] = kir_loadv(k, p->bt_s, MUL(ADD(MUL(i, I(a)), I(c)), I(ki)), ki, NULL);
    for (int j = 0; j < a; j++) {
      kir_expr *xi = ADD(MUL(i, I(a)), I(j));
      kir_store(k, &bi, p->bv, MUL(ADD(MUL(ADD(MUL(xi, I(p->CB)), cb), I(p->T)), tt), I(ki)),
                combo(k, p->bt + j * a, a, row, ki), NULL);
    }
  }
  kir_body_end(li, &bi);
  kir_body_end(lc, &bc);
  kir_body_end(lt, &bt);
}

/* 2a. M of run rr (R tiles), output blocks ocb0 .. ocb0 + nb - 1. */
static void gemm_run(wplan *p, kir_kernel *k, kir_block *b, kir_expr *rr, kir_expr *ocb0) {
  int a = p->a, ki = p->ki, kb = p->kb;
  int vx = kir_var_new(k), vcb = kir_var_new(k), vci = kir_var_new(k);
  kir_stmt *lx = kir_for(k, b, vx, I(0), I(a * a), KIR_SERIAL, 0);
  kir_block bx = kir_body_begin();
  kir_expr *xi = kir_var(k, vx);
  for (int r = 0; r < p->R; r++)
    for (int j = 0; j < p->nb; j++)
      kir_assign(k, &bx, p->acc[r][j], kir_splat(k, kir_const_f(k, F32, 0.0), kb));
  kir_stmt *lcb = kir_for(k, &bx, vcb, I(0), I(p->CB), KIR_UNROLL, 1);
  kir_block bcb = kir_body_begin();
  kir_stmt *lci = kir_for(k, &bcb, vci, I(0), I(ki), KIR_UNROLL, ki);
  kir_block bci = kir_body_begin();
  {
    kir_expr *cb = kir_var(k, vcb), *ci = kir_var(k, vci);
    kir_expr *c = ADD(MUL(cb, I(ki)), ci);
    kir_expr *wv[NCC_CONV_NB_MAX];
    for (int j = 0; j < p->nb; j++) {
      kir_expr *wi = MUL(ADD(MUL(ADD(MUL(xi, I(p->OCB)), ADD(ocb0, I(j))), I(p->C)), c), I(kb));
      kir_assign(k, &bci, p->wl[j], kir_loadv(k, p->bu, wi, kb, NULL));
      wv[j] = kir_local_ref(k, p->wl[j]);
    }
    kir_expr *vrow = MUL(ADD(MUL(ADD(MUL(xi, I(p->CB)), cb), I(p->T)), MUL(rr, I(p->R))), I(ki));
    for (int r = 0; r < p->R; r++) {
      kir_expr *x = kir_splat(k, kir_load(k, p->bv, ADD(ADD(vrow, I(r * ki)), ci)), kb);
      for (int j = 0; j < p->nb; j++)
        kir_assign(k, &bci, p->acc[r][j], kir_fma(k, x, wv[j], kir_local_ref(k, p->acc[r][j])));
    }
  }
  kir_body_end(lci, &bci);
  kir_body_end(lcb, &bcb);
  for (int r = 0; r < p->R; r++)
    for (int j = 0; j < p->nb; j++)
      kir_store(k, &bx, p->bm, MUL(ADD(MUL(xi, I(p->R * p->nb)), I(r * p->nb + j)), I(kb)),
                kir_local_ref(k, p->acc[r][j]), NULL);
  kir_body_end(lx, &bx);
}

/* 2b. Output transform, bias, epilogue and store of run rr's tiles. */
static void output_run(wplan *p, kir_kernel *k, kir_block *b, kir_expr *bn, kir_expr *q0,
                       kir_expr *rr, kir_expr *ocb0) {
  int a = p->a, m = p->m, kb = p->kb;
  bool ragged = p->OH % m || p->OW % m;
  int vr = kir_var_new(k);
  kir_stmt *lr = kir_for(k, b, vr, I(0), I(p->R), KIR_SERIAL, 0);
  kir_block br = kir_body_begin();
  kir_expr *r = kir_var(k, vr), *th, *tw;
  tile_at(p, k, kir_min(k, ADD(ADD(q0, MUL(rr, I(p->R))), r), I(p->NT - 1)), &th, &tw);
  for (int j = 0; j < p->nb; j++) {
    kir_expr *ocb = ADD(ocb0, I(j)), *c0 = MUL(ocb, I(kb));
    /* separably, as the input transform: t = A^T M (m x a) a column at a
     * time into the scratch, then each row of t times A */
    int vv = kir_var_new(k), vi = kir_var_new(k);
    kir_mark mk = a <= 4 ? KIR_UNROLL : KIR_SERIAL;
    kir_stmt *lv = kir_for(k, &br, vv, I(0), I(a), mk, a);
    kir_block bv = kir_body_begin();
    {
      kir_expr *v = kir_var(k, vv), *col[A_MAX];
      for (int u = 0; u < a; u++)
        col[u] = kir_loadv(
            k, p->bm,
            MUL(ADD(MUL(ADD(I(u * a), v), I(p->R * p->nb)), ADD(MUL(r, I(p->nb)), I(j))), I(kb)),
            kb, NULL);
      for (int i = 0; i < m; i++)
        kir_store(k, &bv, p->bt_s, MUL(ADD(I(i * a), v), I(kb)), combo(k, p->at + i * a, a, col, kb),
                  NULL);
    }
    kir_body_end(lv, &bv);
    kir_expr *bias = p->bb >= 0 ? kir_loadv(k, p->bb, c0, kb, NULL) : NULL;
    kir_stmt *li = kir_for(k, &br, vi, I(0), I(m), mk, m);
    kir_block bi = kir_body_begin();
    kir_expr *i = kir_var(k, vi), *row[A_MAX];
    for (int v = 0; v < a; v++) row[v] = kir_loadv(k, p->bt_s, MUL(ADD(MUL(i, I(a)), I(v)), I(kb)), kb, NULL);
    {
      for (int jj = 0; jj < m; jj++) {
        kir_expr *oh = ADD(MUL(th, I(m)), i), *ow = ADD(MUL(tw, I(m)), I(jj));
        kir_block *sb = &bi, bg;
        kir_stmt *lg = NULL;
        if (ragged) {
          /* a tile past the output's edge: a loop of 0 or 1 iterations
           * stores (and reads the epilogue's operands) only inside */
          int vg = kir_var_new(k);
          kir_expr *in = AND(LT(oh, I(p->OH)), LT(ow, I(p->OW)));
          lg = kir_for(k, &bi, vg, I(0), kir_select(k, in, I(1), I(0)), KIR_SERIAL, 0);
          bg = kir_body_begin();
          sb = &bg;
        }
        kir_expr *val = combo(k, p->at + jj * a, a, row, kb);
        if (bias) val = kir_bin(k, KIR_ADD, val, bias);
        kir_expr *yi = MUL(ADD(MUL(ADD(MUL(ADD(MUL(bn, I(p->OCB)), ocb), I(p->OH)), oh), I(p->OW)), ow),
                           I(kb));
        if (p->epi) val = p->epi(p->ctx, k, sb, val, yi, c0);
        kir_store(k, sb, p->by, yi, val, NULL);
        if (lg) kir_body_end(lg, &bg);
      }
    }
    kir_body_end(li, &bi);
  }
  kir_body_end(lr, &br);
}

/* The plan of F(m x m, 3 x 3) for n on vw-lane vectors; false when the
 * kernel does not apply. */
static bool make_plan(const ncc_node *n, const ncc_window *w, int m, int vw, wplan *p) {
  if (!window_ok(n, w, m)) return false;
  memset(p, 0, sizeof *p);
  const ncc_shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
  p->m = m, p->a = m + 2;
  p->kb = ncc_value_block(n->out[0]), p->ki = ncc_value_block(n->in[0]);
  p->C = xs->d[1], p->H = xs->d[2], p->W = xs->d[3];
  p->OC = ys->d[1], p->OH = ys->d[2], p->OW = ys->d[3];
  p->pt = w->pad_begin[0], p->pl = w->pad_begin[1];
  p->CB = p->C / p->ki, p->OCB = p->OC / p->kb;
  p->TH = ncc_lower_cdiv(p->OH, m), p->TW = ncc_lower_cdiv(p->OW, m), p->NT = p->TH * p->TW;
  p->bt = m == 2 ? &BT2[0][0] : &BT4[0][0];
  p->g = m == 2 ? &G2[0][0] : &G4[0][0];
  p->at = m == 2 ? &AT2[0][0] : &AT4[0][0];
  ncc_lower_conv_tile(p->OCB, p->kb, vw, p->NT, &p->nb, &p->R);
  if (p->nb > NCC_CONV_NB_MAX || p->R > NCC_CONV_R_MAX) return false;
  p->T = wino_tiles(m, p->C, p->R, p->nb, p->kb);
  if (p->T < 1) return false;
  if (p->T < p->R) p->R = (int)p->T;
  /* tiles a task, in whole runs of R, at most what the scratch holds:
   * the fewest tiles computed in all (a last chunk's tiles past NT repeat
   * the last one), then the largest (each chunk reads all of U): 9 tiles
   * in runs of 4 are 3 chunks of 4, not 2 of 8 (16 tiles' work) */
  int64_t best = p->R;
  for (int64_t t = 2 * p->R; t <= p->T; t += p->R)
    if (ncc_lower_cdiv(p->NT, t) * t <= ncc_lower_cdiv(p->NT, best) * best) best = t;
  p->T = best;
  p->nchunk = ncc_lower_cdiv(p->NT, p->T);
  /* at least 8 tasks an image where the output blocks allow: a small image
   * (few tile chunks) splits its output-channel groups over tasks instead,
   * each transforming the input again but reading only its part of U */
  int64_t ngrp = p->OCB / p->nb, want = ncc_lower_cdiv(8, p->nchunk);
  p->gpt = ncc_lower_cdiv(ngrp, want < ngrp ? want : ngrp);
  p->osplit = ncc_lower_cdiv(ngrp, p->gpt);
  return true;
}

bool ncc_lower_wino_fits(const ncc_node *n, const ncc_window *w, int m, int vw) {
  wplan p;
  return make_plan(n, w, m, vw, &p);
}

ncc_status ncc_lower_bconv_wino(const ncc_node *n, const ncc_window *w, int m, int vw,
                                kir_kernel *k, int bx, int bb, int by, ncc_bconv_epi epi,
                                void *ctx) {
  wplan p;
  if (!make_plan(n, w, m, vw, &p)) return NCC_ERR_UNSUPPORTED;
  p.bx = bx, p.bb = bb, p.by = by, p.epi = epi, p.ctx = ctx;
  p.bu = pack_weights(k, &p, n->in[1]);
  if (p.bu < 0) return ncc_error(NCC_ERR_NOMEM, "out of memory packing Winograd weights");
  int a2 = p.a * p.a;
  p.bv = kir_buf_local(k, "wino_v", F32, a2 * p.C * p.T);
  p.bm = kir_buf_local(k, "wino_m", F32, (int64_t)a2 * p.R * p.nb * p.kb);
  p.bt_s = kir_buf_local(k, "wino_t", F32, (int64_t)a2 * (p.kb > p.ki ? p.kb : p.ki));
  for (int r = 0; r < p.R; r++)
    for (int j = 0; j < p.nb; j++) p.acc[r][j] = kir_local_add(k, F32, p.kb);
  for (int j = 0; j < p.nb; j++) p.wl[j] = kir_local_add(k, F32, p.kb);

  kir_block top = kir_body_begin();
  kir_expr *N = ncc_lower_dim(k, n->in[0]->shape.d[0]);
  int vt = kir_var_new(k), vg = kir_var_new(k), vr = kir_var_new(k);
  int64_t per_img = p.nchunk * p.osplit, ngrp = p.OCB / p.nb;
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(N, I(per_img)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  /* task t: image, then output part (outer: a thread's consecutive tasks
   * read one part of U), then tile chunk */
  kir_expr *t = kir_var(k, vt), *rest = REM(t, I(per_img));
  kir_expr *bn = DIV(t, I(per_img)), *q0 = MUL(REM(rest, I(p.nchunk)), I(p.T));
  kir_expr *g0 = MUL(DIV(rest, I(p.nchunk)), I(p.gpt));
  input_transform(&p, k, &bt, bn, q0);
  kir_stmt *lg = kir_for(k, &bt, vg, g0, kir_min(k, ADD(g0, I(p.gpt)), I(ngrp)), KIR_SERIAL, 0);
  kir_block bg = kir_body_begin();
  kir_expr *ocb0 = MUL(kir_var(k, vg), I(p.nb));
  kir_stmt *lr = kir_for(k, &bg, vr, I(0), I(p.T / p.R), KIR_SERIAL, 0);
  kir_block br = kir_body_begin();
  kir_expr *rr = kir_var(k, vr);
  gemm_run(&p, k, &br, rr, ocb0);
  output_run(&p, k, &br, bn, q0, rr, ocb0);
  kir_body_end(lr, &br);
  kir_body_end(lg, &bg);
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  /* the direct convolution's count (for the thread heuristics) */
  k->cost_per_elem = 2.0 * 9.0 * (double)p.C / (m == 4 ? 4.0 : 2.25);
  return NCC_OK;
}
