/* codegen/lower_bconv_amx.c — Conv with a blocked (NCHW16c) input and
 * output in bf16 on AMX tiles (--precision=bf16, hosts with AMX-BF16).
 *
 * A blocked output stores the 16 channels of one pixel as 64 contiguous
 * bytes, which is exactly one row of an f32 accumulator tile: with
 *
 *   Y[pixel][oc] = sum over k = (tap, input channel) of X[pixel + tap][c] * W[c][oc]
 *
 * the tiles' rows are 16 output pixels, their columns one block of 16
 * output channels, A the activations and B the constant weights (packed at
 * compile time in the tiles' pair layout: 1 KB per block of 16 channels
 * and 32 input channels of one tap). A task converts the input rows its
 * output rows read, all channels, to a bf16 scratch on its stack laid out
 * pixel-major ([row][column][Cp], zero padding included), so the A tile of
 * a tap is 16 rows of 32 channels at a constant stride: one tileloadd, no
 * gathers, no padding checks in the reduction. The precision pass made
 * the input a RoundBF16 value and the weights bf16 values, so the products
 * are exact and the sums f32: the f32 kernel's numbers up to the order of
 * the additions (lower_matmul.c's bf16 GEMM makes the same argument).
 *
 * Pixels: with stride 1 a task's scratch rows are the padded input rows
 * (width Wp = W + pads) and its output pixels are walked flat over that
 * width, q = oh * Wp + ow, every tap reading the scratch at q plus a
 * constant: the last columns of each row (ow >= OW) are computed and not
 * stored, which wastes (KW - 1) / Wp of the work instead of the idle lanes
 * of 7-pixel rows. A 1x1 convolution with a stride converts only the
 * pixels it reads (a dense OH x OW scratch) and is then the same flat
 * case. Other strided windows walk each output row in tiles of 16
 * columns, the A rows stride * Cp elements apart.
 *
 * Each task is (image, block of output rows, chunk of channel-block
 * pairs): 2 x 2 accumulator tiles (32 pixels x 32 channels, with 2 A and
 * 2 B tiles all 8 registers), channel pairs outer so one pair's weights
 * (32 x K bf16) stay in L2 across the task's pixel tiles. Bias and the
 * fused epilogue run on each stored row (16 channels of one pixel). */
#include <string.h>

#include "../ir/ctime.h"
#include "lower.h"
#include "kir_short.h"

/* Most bytes of stack a task's bf16 input rows may take (a module runs
 * kernels on its caller's thread too, whose stack ncc does not size). */
#define SCRATCH_MAX (128 * 1024)
/* Pixel slots a task should at least have (2 pairs of tiles) before its
 * rows are split further for parallelism. */
#define MIN_SLOTS 64

typedef struct plan {
  int64_t C, H, W, OC, OH, OW;
  int64_t CB, Cp, CS;        /* input blocks of 16; channels padded to 32; steps of 32 */
  int64_t KH, KW, T, dh, dw, pt, pl;
  bool flat;                 /* pixels walked flat over the scratch width */
  int64_t RS, rs, cs;        /* scratch (r, c) of a task at output row oh0 holds input
                                row oh0 * RS + r * rs - pt, column c * cs - pl */
  int64_t Wp;                /* scratch pixels per row */
  int64_t RB, IR, nrb;       /* output rows per task, scratch rows, row blocks */
  int64_t TPR;               /* row mode: tiles per output row */
  int64_t NT;                /* pixel tiles per task */
  int64_t slots;             /* scratch pixels (the rows, then zeros) */
  int64_t astride;           /* A rows apart, in elements */
  int64_t OCB, OCP, chunks, chunk; /* channel blocks, their pairs, chunking */
} plan;


/* v holds bf16 values: made by RoundBF16, or a Reorder of such a value. */
static bool bf16_value(const ncc_value *v) {
  for (int d = 0; v && v->producer && d < 4; d++) {
    if (v->producer->op == NCC_OP_ROUNDBF16) return true;
    if (v->producer->op != NCC_OP_REORDER) return false;
    v = v->producer->in[0];
  }
  return false;
}

/* The geometry for tasks of rb output rows. */
static void geometry(plan *p, int64_t rb) {
  p->RB = rb;
  p->nrb = ncc_lower_cdiv(p->OH, rb);
  int64_t tapmax = (p->KH - 1) * p->dh * p->Wp + (p->KW - 1) * p->dw;
  if (p->flat) {
    p->IR = rb + (p->KH - 1) * p->dh;
    p->NT = ncc_lower_cdiv(rb * p->Wp, 16);
    p->slots = p->IR * p->Wp;
    if (16 * p->NT + tapmax > p->slots) p->slots = 16 * p->NT + tapmax;
  } else {
    p->IR = (rb - 1) * p->RS + (p->KH - 1) * p->dh + 1;
    p->NT = rb * p->TPR;
    p->slots = p->IR * p->Wp;
  }
}

static bool make_plan(const ncc_node *n, const ncc_window *w, plan *p) {
  const ncc_value *x = n->in[0], *y = n->out[0];
  memset(p, 0, sizeof *p);
  if (ncc_value_block(x) != 16 || ncc_value_block(y) != 16 || w->group != 1) return false;
  const ncc_shape *xs = &x->shape, *ys = &y->shape;
  for (int i = 1; i < 4; i++)
    if (ncc_dim_is_sym(xs->d[i]) || ncc_dim_is_sym(ys->d[i])) return false;
  p->C = xs->d[1], p->H = xs->d[2], p->W = xs->d[3];
  p->OC = ys->d[1], p->OH = ys->d[2], p->OW = ys->d[3];
  if (p->C % 16 || p->OC % 16 || p->OH < 1 || p->OW < 1) return false;
  p->CB = p->C / 16;
  p->Cp = ncc_lower_cdiv(p->C, 32) * 32;
  p->CS = p->Cp / 32;
  p->KH = w->kernel[0], p->KW = w->kernel[1], p->T = p->KH * p->KW;
  p->dh = w->dilation[0], p->dw = w->dilation[1];
  p->pt = w->pad_begin[0], p->pl = w->pad_begin[1];
  int64_t sh = w->stride[0], sw = w->stride[1];
  if (sh == 1 && sw == 1) { /* flat over the padded rows */
    p->flat = true;
    p->Wp = p->W + w->pad_begin[1] + w->pad_end[1];
    p->RS = p->rs = p->cs = 1;
    p->astride = p->Cp;
    if (p->Wp - (p->KW - 1) * p->dw != p->OW) return false;
  } else if (p->KH == 1 && p->KW == 1) { /* the pixels read, densely */
    p->flat = true;
    p->Wp = p->OW;
    p->RS = p->rs = sh;
    p->cs = sw;
    p->astride = p->Cp;
  } else { /* row by row, tiles of 16 columns */
    p->TPR = ncc_lower_cdiv(p->OW, 16);
    p->Wp = p->W + w->pad_begin[1] + w->pad_end[1];
    int64_t need = (p->TPR * 16 - 1) * sw + (p->KW - 1) * p->dw + 1;
    if (need > p->Wp) p->Wp = need;
    p->RS = sh;
    p->rs = p->cs = 1;
    p->astride = sw * p->Cp;
  }
  /* the most rows a task's scratch holds, then fewer for parallelism
   * while each task keeps MIN_SLOTS pixels */
  int64_t rb = p->OH;
  for (geometry(p, rb); rb > 1 && p->slots * p->Cp * 2 > SCRATCH_MAX; geometry(p, --rb)) {}
  if (p->slots * p->Cp * 2 > SCRATCH_MAX) return false;
  int64_t N = ncc_dim_is_sym(xs->d[0]) ? 1 : xs->d[0];
  while (rb > 1 && N * p->nrb < 8) {
    int64_t want = ncc_lower_cdiv(p->OH, ncc_lower_cdiv(8, N)); /* rows for 8 tasks */
    if (want < 1) want = 1;
    int64_t lo = ncc_lower_cdiv(MIN_SLOTS, p->flat ? p->Wp : 16 * p->TPR);
    if (want < lo) want = lo;
    if (want >= rb) break;
    rb = want;
    geometry(p, rb);
  }
  geometry(p, ncc_lower_cdiv(p->OH, p->nrb)); /* the same row blocks, evened out */
  p->OCB = p->OC / 16;
  p->OCP = ncc_lower_cdiv(p->OCB, 2);
  int64_t tasks = N * p->nrb;
  p->chunks = tasks >= 8 ? 1 : ncc_lower_cdiv(8, tasks);
  if (p->chunks > p->OCP) p->chunks = p->OCP;
  p->chunk = ncc_lower_cdiv(p->OCP, p->chunks);
  p->chunks = ncc_lower_cdiv(p->OCP, p->chunk);
  return true;
}

bool ncc_lower_bconv_amx_fits(const ncc_node *n, const ncc_window *w) {
  const ncc_value *wt = n->in[1];
  if (n->op != NCC_OP_CONV || !bf16_value(n->in[0]) || !wt || wt->kind != NCC_VAL_CONST ||
      !wt->data || wt->dtype != NCC_DT_F32 || !ncc_shape_is_static(&wt->shape))
    return false;
  plan p;
  if (!make_plan(n, w, &p)) return false;
  return ncc_lower_bf16_exact(wt->data, ncc_shape_numel(&wt->shape));
}

/* B tiles: for channel block ob, tap t and step s of 32 input channels,
 * 16 rows (channel pairs) of 16 words (output channels), each word the
 * pair's two bf16 (even channel low); channels past C are zeros. */
static int pack_weights(kir_kernel *k, const ncc_value *wt, const plan *p) {
  int64_t words = p->OCB * p->T * p->CS * 256;
  double t0 = ncc_ctime_pack_begin();
  uint32_t *pw = ncc_calloc((size_t)words, sizeof *pw);
  if (!pw) return -1;
  const float *src = wt->data;
  for (int64_t o = 0; o < p->OC; o++)
    for (int64_t c = 0; c < p->C; c++)
      for (int64_t t = 0; t < p->T; t++) {
        uint32_t u;
        memcpy(&u, &src[(o * p->C + c) * p->T + t], sizeof u);
        int64_t at = (((o / 16) * p->T + t) * p->CS + c / 32) * 256 + ((c % 32) / 2) * 16 + o % 16;
        pw[at] |= (u >> 16) << (16 * (c % 2));
      }
  ncc_ctime_pack_end(t0);
  return ncc_lower_data_buf(k, "packed_w", NCC_DT_I32, pw, (size_t)words * sizeof *pw);
}

/* The task's scratch: its input rows as bf16, pixel-major, channels
 * padded to Cp with zeros, padding pixels zero; then zero slots. */
static void convert(kir_kernel *k, kir_block *blk, const plan *p, int bx, int scratch,
                    kir_expr *bn, kir_expr *oh0) {
  int vb = kir_var_new(k), vr = kir_var_new(k), vc = kir_var_new(k), vz = kir_var_new(k);
  kir_stmt *lb = kir_for(k, blk, vb, I(0), I(p->Cp / 16), KIR_SERIAL, 0);
  kir_block bb = kir_body_begin();
  kir_stmt *lr = kir_for(k, &bb, vr, I(0), I(p->IR), KIR_SERIAL, 0);
  kir_block br = kir_body_begin();
  kir_stmt *lc = kir_for(k, &br, vc, I(0), I(p->Wp), KIR_SERIAL, 0);
  kir_block bc = kir_body_begin();
  {
    kir_expr *cb = kir_var(k, vb), *r = kir_var(k, vr), *c = kir_var(k, vc);
    kir_expr *ih = ADD(ADD(MUL(oh0, I(p->RS)), MUL(r, I(p->rs))), I(-p->pt));
    kir_expr *iw = ADD(MUL(c, I(p->cs)), I(-p->pl));
    kir_expr *in = AND(AND(kir_bin(k, KIR_GE, ih, I(0)), LT(ih, I(p->H))),
                       AND(kir_bin(k, KIR_GE, iw, I(0)), LT(iw, I(p->W))));
    if (p->Cp != p->C) in = AND(in, LT(cb, I(p->CB)));
    kir_expr *xi = MUL(ADD(MUL(ADD(MUL(ADD(MUL(bn, I(p->CB)), cb), I(p->H)), ih), I(p->W)), iw),
                       I(16));
    kir_expr *v = kir_loadv(k, bx, kir_select(k, in, xi, I(0)), 16, kir_select(k, in, I(16), I(0)));
    kir_expr *slot = ADD(MUL(r, I(p->Wp)), c);
    kir_store(k, &bc, scratch, ADD(MUL(slot, I(p->Cp)), MUL(cb, I(16))),
              kir_cast(k, NCC_DT_BF16, v), NULL);
  }
  kir_body_end(lc, &bc);
  kir_body_end(lr, &br);
  kir_body_end(lb, &bb);
  int64_t rest = (p->slots - p->IR * p->Wp) * p->Cp;
  if (rest > 0) {
    kir_stmt *lz = kir_for(k, blk, vz, I(0), I(rest / 16), KIR_SERIAL, 0);
    kir_block bz = kir_body_begin();
    kir_store(k, &bz, scratch, ADD(I(p->IR * p->Wp * p->Cp), MUL(kir_var(k, vz), I(16))),
              kir_cast(k, NCC_DT_BF16, kir_splat(k, kir_const_f(k, NCC_DT_F32, 0.0), 16)), NULL);
    kir_body_end(lz, &bz);
  }
}

/* Pixel tile ti of a task: its first scratch slot, and for its row r the
 * output pixel (oh relative to the task's first row, ow) and whether it
 * is one. */
static kir_expr *tile_base(kir_kernel *k, const plan *p, kir_expr *ti) {
  if (p->flat) return MUL(ti, I(16));
  kir_expr *j = DIV(ti, I(p->TPR)), *ct = REM(ti, I(p->TPR));
  return ADD(MUL(j, I(p->RS * p->Wp)), MUL(ct, I(16 * (p->astride / p->Cp))));
}

static void tile_pixel(kir_kernel *k, const plan *p, kir_expr *ti, int r, kir_expr **ohl,
                       kir_expr **ow) {
  if (p->flat) {
    kir_expr *q = ADD(MUL(ti, I(16)), I(r));
    *ohl = DIV(q, I(p->Wp));
    *ow = REM(q, I(p->Wp));
  } else {
    *ohl = DIV(ti, I(p->TPR));
    *ow = ADD(MUL(REM(ti, I(p->TPR)), I(16)), I(r));
  }
}

ncc_status ncc_lower_bconv_amx(const ncc_node *n, const ncc_window *w, kir_kernel *k, int bx,
                               int bb, int by, ncc_bconv_epi epi, void *ctx) {
  plan p;
  if (!make_plan(n, w, &p)) return NCC_ERR_UNSUPPORTED;
  int bw = pack_weights(k, n->in[1], &p);
  if (bw < 0) return ncc_error(NCC_ERR_NOMEM, "out of memory packing Conv weights");
  int scratch = kir_buf_local(k, "x_bf16", NCC_DT_BF16, p.slots * p.Cp);
  int cbuf = kir_buf_local(k, "c_tiles", NCC_DT_F32, 4 * 256);
  int c[2][2], a[2], b[2];
  for (int i = 0; i < 2; i++) {
    a[i] = kir_local_add(k, NCC_DT_I32, 256);
    b[i] = kir_local_add(k, NCC_DT_I32, 256);
    for (int j = 0; j < 2; j++) c[i][j] = kir_local_add(k, NCC_DT_I32, 256);
  }
  kir_block top = kir_body_begin();
  kir_expr *N = ncc_lower_dim(k, n->in[0]->shape.d[0]);
  int vt = kir_var_new(k), vo = kir_var_new(k), vq = kir_var_new(k);
  int vkh = kir_var_new(k), vkw = kir_var_new(k), vs = kir_var_new(k);
  /* tasks: images x row blocks x channel chunks, chunks innermost so a
   * thread's consecutive tasks convert the same rows */
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(N, I(p.nrb * p.chunks)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *tv = kir_var(k, vt);
  kir_expr *cc = REM(tv, I(p.chunks)), *rest = DIV(tv, I(p.chunks));
  kir_expr *oh0 = MUL(REM(rest, I(p.nrb)), I(p.RB)), *bn = DIV(rest, I(p.nrb));
  convert(k, &bt, &p, bx, scratch, bn, oh0);

  kir_expr *o0 = MUL(cc, I(p.chunk));
  kir_stmt *lo = kir_for(k, &bt, vo, o0, kir_min(k, ADD(o0, I(p.chunk)), I(p.OCP)), KIR_SERIAL, 0);
  kir_block bo = kir_body_begin();
  kir_expr *ob[2], *ob_live[2];
  for (int j = 0; j < 2; j++) {
    kir_expr *nominal = ADD(MUL(kir_var(k, vo), I(2)), I(j));
    ob[j] = kir_min(k, nominal, I(p.OCB - 1)); /* an odd count repeats the last */
    ob_live[j] = LT(nominal, I(p.OCB));
  }
  kir_stmt *lq = kir_for(k, &bo, vq, I(0), I(ncc_lower_cdiv(p.NT, 2)), KIR_SERIAL, 0);
  kir_block bq = kir_body_begin();
  kir_expr *ti[2], *ti_live[2], *base[2];
  for (int i = 0; i < 2; i++) {
    kir_expr *nominal = ADD(MUL(kir_var(k, vq), I(2)), I(i));
    ti[i] = kir_min(k, nominal, I(p.NT - 1));
    ti_live[i] = LT(nominal, I(p.NT));
    base[i] = tile_base(k, &p, ti[i]);
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) kir_assign(k, &bq, c[i][j], kir_tile_zero(k, 16, 64));
  kir_stmt *lkh = kir_for(k, &bq, vkh, I(0), I(p.KH), KIR_SERIAL, 0);
  kir_block bkh = kir_body_begin();
  kir_stmt *lkw = kir_for(k, &bkh, vkw, I(0), I(p.KW), KIR_SERIAL, 0);
  kir_block bkw = kir_body_begin();
  kir_stmt *ls = kir_for(k, &bkw, vs, I(0), I(p.CS), KIR_SERIAL, 0);
  kir_block bs = kir_body_begin();
  {
    kir_expr *kh = kir_var(k, vkh), *kw = kir_var(k, vkw), *s = kir_var(k, vs);
    kir_expr *tap_slot = ADD(MUL(kh, I(p.dh * p.Wp)), MUL(kw, I(p.dw)));
    kir_expr *step = ADD(MUL(ADD(MUL(kh, I(p.KW)), kw), I(p.CS)), s);
    for (int i = 0; i < 2; i++)
      kir_assign(k, &bs, a[i],
                 kir_tile_load(k, scratch, ADD(MUL(ADD(base[i], tap_slot), I(p.Cp)), MUL(s, I(32))),
                               I(p.astride), 16, 64));
    for (int j = 0; j < 2; j++)
      kir_assign(k, &bs, b[j],
                 kir_tile_load(k, bw, MUL(ADD(MUL(ob[j], I(p.T * p.CS)), step), I(256)), I(16),
                               16, 64));
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++)
        kir_assign(k, &bs, c[i][j],
                   kir_tile_dp(k, KIR_TILE_DPBF16PS, kir_local_ref(k, a[i]),
                               kir_local_ref(k, b[j]), kir_local_ref(k, c[i][j]), 16, 64, 64));
  }
  kir_body_end(ls, &bs);
  kir_body_end(lkw, &bkw);
  kir_body_end(lkh, &bkh);
  /* the sums to the scratch, then rows as vectors with no tile live (as
   * in lower_amx.c) */
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      kir_tile_store(k, &bq, cbuf, I((i * 2 + j) * 256), I(16), kir_local_ref(k, c[i][j]), 16, 64);
  for (int i = 0; i < 2; i++)
    for (int r = 0; r < 16; r++) {
      kir_expr *ohl, *ow;
      tile_pixel(k, &p, ti[i], r, &ohl, &ow);
      kir_expr *oh = ADD(oh0, ohl);
      /* flat: a tile's slots past the task's RB rows belong to the next
       * task's first rows (which it stores) */
      kir_expr *pix = AND(ti_live[i], AND(LT(ow, I(p.OW)), LT(oh, I(p.OH))));
      if (p.flat) pix = AND(pix, LT(ohl, I(p.RB)));
      for (int j = 0; j < 2; j++) {
        kir_expr *live = AND(pix, ob_live[j]);
        kir_expr *c0 = MUL(ob[j], I(16));
        kir_expr *yi = MUL(ADD(MUL(ADD(MUL(ADD(MUL(bn, I(p.OCB)), ob[j]), I(p.OH)), oh), I(p.OW)), ow),
                           I(16));
        yi = kir_select(k, live, yi, I(0)); /* the epilogue reads there */
        kir_expr *v = kir_loadv(k, cbuf, I((i * 2 + j) * 256 + r * 16), 16, NULL);
        if (bb >= 0) v = kir_bin(k, KIR_ADD, v, kir_loadv(k, bb, c0, 16, NULL));
        if (epi) v = epi(ctx, k, &bq, v, yi, c0);
        kir_store(k, &bq, by, yi, v, kir_select(k, live, I(16), I(0)));
      }
    }
  kir_body_end(lq, &bq);
  kir_body_end(lo, &bo);
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)(p.C * p.T);
  return NCC_OK;
}
