/* codegen/lower_qconv.c — QLinearConv: what its kernels share (the
 * checks, the weights' packing, an input quad), its AMX tile kernel and
 * its packed vector kernel (at the end of the file).
 *
 * The general kernel is lower_conv.c's direct convolution in integer mode
 * (vpdpbusd on four input channels per i32 lane). On a host with AMX-INT8
 * a group-1 QLinearConv is instead the GEMM
 *
 *   Y[oc][pixel] = sum over k = (channel quad, tap) of W[oc][k] * X[k][pixel]
 *
 * with the constant weights as the tiles' A (16 output channels x 64 bytes
 * of k per tile, packed at compile time) and the activations as B, packed
 * by each task into a stack scratch in the tiles' B layout: row r of a
 * panel holds, for 16 pixels, the 4 bytes of channel quad / tap r (exactly
 * the i32 the vector kernel builds per lane). So the output stays NCHW: a
 * row of a C tile is one channel's 16 consecutive pixels, one contiguous
 * vector store, and no layout change reaches the graph. tdpbsud multiplies
 * the s8 weights (w - zw) by the u8 activations (s8 ones offset by 128).
 *
 * Panels of 16 pixels: with stride 1 and OW == W (the "same" convolutions)
 * a panel is 16 flat pixels p = oh*OW + ow, and every tap reads x at p plus
 * a constant: contiguous masked loads across row ends. Otherwise a panel
 * is 16 columns of one output row, so a tap reads x at a constant stride
 * (a strided load, not a per-byte gather); rows narrower than 16 leave
 * lanes idle. A task packs tn panels (2, or 1 when the scratch would pass
 * SCRATCH_MAX) once and runs a chunk of output-channel blocks of 32 (2 x 2
 * accumulator tiles: all 8 tile registers) on them, so the packing is
 * shared by every channel of the chunk. The k dimension is padded to whole
 * 64-byte steps with zero weights (and zero scratch rows); output channels
 * to whole blocks with zero weights whose rows are not stored. */
#include <string.h>

#include "../ir/ctime.h"
#include "lower.h"

#define I(v) kir_const_i(k, (v))
#define ADD(a, b) kir_add(k, (a), (b))
#define MUL(a, b) kir_mul(k, (a), (b))

/* Most bytes of stack a task's packed activations may take (a module runs
 * kernels on its caller's thread too, whose stack ncc does not size). */
#define SCRATCH_MAX (128 * 1024)
/* Bytes of weights a core's caches are taken to keep between tasks. */
#define WEIGHTS_NEAR (512 * 1024)

bool ncc_lower_qconv_ok(const ncc_node *n, ncc_window *w, ncc_qconv *q) {
  if (n->op != NCC_OP_QLINEARCONV || n->n_out != 1 || n->n_in < 8) return false;
  const ncc_value *x = n->in[0], *wt = n->in[3], *y = n->out[0];
  if (!x || !wt || !y || x->shape.rank != 4 || y->shape.rank != 4 || wt->shape.rank != 4)
    return false;
  if ((x->dtype != NCC_DT_U8 && x->dtype != NCC_DT_I8) ||
      (y->dtype != NCC_DT_U8 && y->dtype != NCC_DT_I8) ||
      (wt->dtype != NCC_DT_U8 && wt->dtype != NCC_DT_I8) || wt->kind != NCC_VAL_CONST ||
      !wt->data || !ncc_shape_is_static(&wt->shape))
    return false;
  ncc_node conv = *n; /* the window is the Conv view of the node */
  ncc_value *view[2] = {n->in[0], n->in[3]};
  conv.op = NCC_OP_CONV;
  conv.in = view;
  conv.n_in = 2;
  if (!ncc_lower_window(&conv, w)) return false;
  int64_t oc = wt->shape.d[0], g = w->group;
  if (oc % g != 0 || ncc_dim_is_sym(x->shape.d[1]) || x->shape.d[1] != wt->shape.d[1] * g ||
      y->shape.d[1] != oc)
    return false;
  for (int i = 1; i < 8; i++)
    if (i != 3 && !ncc_lower_qparam(n->in[i], i == 4 || i == 5 ? oc : 1)) return false;
  if (n->n_in > 8 && n->in[8] &&
      (!ncc_lower_qparam(n->in[8], oc) || n->in[8]->dtype != NCC_DT_I32 ||
       ncc_shape_numel(&n->in[8]->shape) != oc))
    return false;
  if (!ncc_lower_requant_finite(n->in[1], n->in[4], n->in[6], oc)) return false;
  int64_t taps = wt->shape.d[1] * wt->shape.d[2] * wt->shape.d[3];
  for (int64_t o = 0; o < oc; o++) { /* w - zw must fit the s8 operand */
    int32_t zw = (int32_t)ncc_lower_const_at(n->in[5], o);
    if (wt->dtype == NCC_DT_I8 && zw == 0) continue; /* fits whatever the values */
    for (int64_t t = 0; t < taps; t++) {
      int32_t v = ncc_lower_byte(wt, o * taps + t) - zw;
      if (v < -128 || v > 127) return false;
    }
  }
  q->xdt = x->dtype;
  q->ydt = y->dtype;
  q->zx = (int64_t)ncc_lower_const_at(n->in[2], 0) + (x->dtype == NCC_DT_I8 ? 128 : 0);
  q->zy = (int64_t)ncc_lower_const_at(n->in[7], 0);
  q->ic4 = (wt->shape.d[1] + 3) / 4;
  return true;
}

bool ncc_lower_qconv_pack(kir_kernel *k, const ncc_node *n, const ncc_qconv *q, int64_t oc_pad,
                          int64_t words, ncc_qconv_slot slot, const void *ctx, int *bw, int *bc,
                          int *bm) {
  const ncc_value *wt = n->in[3], *bias = n->n_in > 8 ? n->in[8] : NULL;
  int64_t oc = wt->shape.d[0], icg = wt->shape.d[1], kk = wt->shape.d[2] * wt->shape.d[3];
  double t0 = ncc_ctime_pack_begin();
  uint32_t *pw = ncc_calloc((size_t)words, sizeof *pw);
  int32_t *corr = ncc_calloc((size_t)oc_pad, sizeof *corr);
  float *mult = ncc_calloc((size_t)oc_pad, sizeof *mult);
  if (!pw || !corr || !mult) {
    ncc_free(pw, 0);
    ncc_free(corr, 0);
    ncc_free(mult, 0);
    return false;
  }
  for (int64_t o = 0; o < oc; o++) {
    int64_t zw = (int64_t)ncc_lower_const_at(n->in[5], o), sum = 0;
    for (int64_t c = 0; c < icg; c++)
      for (int64_t t = 0; t < kk; t++) {
        int64_t v = ncc_lower_byte(wt, (o * icg + c) * kk + t) - zw;
        sum += v;
        pw[slot(ctx, o, (c / 4) * kk + t)] |= (uint32_t)(uint8_t)(int8_t)v << (8 * (c % 4));
      }
    int64_t b = bias && bias->kind == NCC_VAL_CONST ? (int64_t)ncc_lower_const_at(bias, o) : 0;
    corr[o] = (int32_t)(b - q->zx * sum);
    mult[o] = ncc_lower_requant_mult(n->in[1], n->in[4], n->in[6], o);
  }
  ncc_ctime_pack_end(t0);
  *bw = ncc_lower_data_buf(k, "packed_w", NCC_DT_I32, pw, (size_t)words * sizeof *pw);
  *bc = ncc_lower_data_buf(k, "corr", NCC_DT_I32, corr, (size_t)oc_pad * sizeof *corr);
  *bm = ncc_lower_data_buf(k, "mult", NCC_DT_F32, mult, (size_t)oc_pad * sizeof *mult);
  return true;
}

kir_expr *ncc_lower_qconv_x4(kir_kernel *k, const ncc_qconv *q, int bx, int64_t icg,
                             kir_expr *c4, kir_expr *chan_index[4], kir_expr *spatial) {
  kir_expr *x4 = NULL;
  for (int j = 0; j < 4; j++) {
    kir_expr *c = ADD(MUL(c4, I(4)), I(j));
    kir_expr *in_ch = icg % 4 ? kir_bin(k, KIR_LT, c, I(icg)) : NULL;
    kir_expr *g = in_ch && spatial ? kir_bin(k, KIR_AND, in_ch, spatial) : in_ch ? in_ch : spatial;
    kir_expr *v = kir_cast(k, NCC_DT_I32, kir_load_guarded(k, bx, chan_index[j], g));
    /* the byte's 8 bits (an s8 sign-extends) */
    if (q->xdt == NCC_DT_I8) v = kir_bin(k, KIR_AND, v, kir_cast(k, NCC_DT_I32, I(255)));
    if (j) v = kir_bin(k, KIR_MUL, v, kir_cast(k, NCC_DT_I32, I((int64_t)1 << (8 * j))));
    x4 = x4 ? kir_bin(k, KIR_ADD, x4, v) : v;
  }
  /* once per word, not per byte: s8 -> u8 is x ^ 0x80808080 (= x + m -
   * 2 (x & m)), padding lanes take the zero point in every byte */
  if (q->xdt == NCC_DT_I8) x4 = ncc_lower_s8_to_u8(k, x4);
  if (spatial)
    x4 = kir_select(k, spatial, x4,
                    kir_cast(k, NCC_DT_I32, I((int64_t)(int32_t)(uint32_t)(q->zx * 0x01010101u))));
  return x4;
}

/* ---- the AMX kernel ---- */

typedef struct tiles {
  int64_t pw;                /* pixels per panel: 16 (a tile row), or the vector width */
  int64_t N;                 /* images, when static (else 1: the least) */
  int64_t C, H, W, OC, OH, OW, P; /* P = OH * OW */
  int64_t kk, kq, kqp;       /* taps; quads (ic4 * taps); quads padded to 16 */
  int64_t steps;             /* k steps of 16 quads (64 bytes) */
  int64_t tm, ocb, ocp, blocks; /* 16-row tiles per block (AMX); channels per
                                 block; OC padded; blocks */
  int64_t tn;                /* panels per tile block (1 or 2) */
  int64_t group;             /* panel pairs a task packs together */
  bool flat;                 /* panels of flat pixels (else row pieces) */
  int64_t per_row;           /* row mode: panels per output row */
  int64_t panels, pairs;     /* panels of an image; groups of tn */
  int64_t groups;            /* groups of `group` pairs */
  int64_t chunks, chunk;     /* channel-block chunks, blocks per chunk */
} tiles;


/* The plan of either kernel: panels of pw pixels, blocks of ocb output
 * channels (0: the AMX kernel's 16 x tm). */
static bool plan(const ncc_node *n, const ncc_window *w, const ncc_qconv *q, int64_t pw,
                 int64_t ocb, tiles *t) {
  const ncc_shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
  for (int i = 1; i < 4; i++)
    if (ncc_dim_is_sym(xs->d[i]) || ncc_dim_is_sym(ys->d[i])) return false;
  memset(t, 0, sizeof *t);
  t->pw = pw;
  t->N = ncc_dim_is_sym(xs->d[0]) ? 1 : xs->d[0];
  t->C = xs->d[1];
  t->H = xs->d[2];
  t->W = xs->d[3];
  t->OC = ys->d[1];
  t->OH = ys->d[2];
  t->OW = ys->d[3];
  t->P = t->OH * t->OW;
  if (w->group != 1 || t->P < 1 || t->OC < 1 || t->N < 1) return false;
  t->kk = w->kernel[0] * w->kernel[1];
  t->kq = q->ic4 * t->kk;
  t->kqp = ncc_lower_cdiv(t->kq, 16) * 16;
  int64_t panel = t->kqp * pw * 4; /* bytes */
  if (panel > SCRATCH_MAX) return false;
  t->steps = t->kqp / 16;
  t->tn = 2 * panel <= SCRATCH_MAX ? 2 : 1;
  t->tm = t->OC > 16 ? 2 : 1;
  t->ocb = ocb ? ocb : 16 * t->tm;
  t->blocks = ncc_lower_cdiv(t->OC, t->ocb);
  t->ocp = t->blocks * t->ocb;
  t->flat = w->stride[0] == 1 && w->stride[1] == 1 && t->OW == t->W;
  t->per_row = t->flat ? 0 : ncc_lower_cdiv(t->OW, pw);
  t->panels = t->flat ? ncc_lower_cdiv(t->P, pw) : t->OH * t->per_row;
  if (t->panels < 2) t->tn = 1;
  t->pairs = ncc_lower_cdiv(t->panels, t->tn);
  /* Weights past what the caches keep near a core (the last stages: up
   * to 2.4 MB) would be streamed once per panel pair; a task packs as
   * many pairs as its scratch holds and runs each block of weights on all
   * of them. */
  t->group = 1;
  if (t->ocp * t->kqp * 4 > WEIGHTS_NEAR) {
    t->group = SCRATCH_MAX / (t->tn * panel);
    if (t->group > t->pairs) t->group = t->pairs;
    if (t->group < 1) t->group = 1;
  }
  t->groups = ncc_lower_cdiv(t->pairs, t->group);
  t->group = ncc_lower_cdiv(t->pairs, t->groups); /* the same work, evened out */
  /* Channel blocks are split into chunks only where images x panel
   * groups leave fewer than 8 tasks (the last stages at batch 1): each
   * chunk packs the panels again. */
  int64_t tasks = t->N * t->groups;
  t->chunks = tasks >= 8 ? 1 : ncc_lower_cdiv(8, tasks);
  if (t->chunks > t->blocks) t->chunks = t->blocks;
  t->chunk = ncc_lower_cdiv(t->blocks, t->chunks);
  t->chunks = ncc_lower_cdiv(t->blocks, t->chunk);
  return true;
}

bool ncc_lower_qconv_amx_fits(const ncc_node *n, const ncc_window *w, const ncc_qconv *q) {
  tiles t;
  return plan(n, w, q, 16, 0, &t);
}

/* The AMX weights' layout: each A tile (16 channels x one k step) is
 * 1 KB of consecutive words, rows 64 bytes apart, tiles of one channel
 * block in k order; streamed sequentially, not as 16 strided streams. */
static int64_t amx_slot(const void *ctx, int64_t o, int64_t kq) {
  const tiles *t = ctx;
  return (((o / 16) * t->steps + kq / 16) * 16 + o % 16) * 16 + kq % 16;
}

/* Where panel `pi` (of an image) starts: its first pixel's flat index and
 * how many of its pw lanes are pixels: none for a slot past the image's
 * panels (a task's group rounded up), so such a panel is neither read
 * (pack_panel: in row mode its rows lie below the image) nor stored. */
static void panel_at(kir_kernel *k, const tiles *t, kir_expr *pi, kir_expr **pix,
                     kir_expr **valid) {
  if (t->flat) {
    *pix = MUL(pi, I(t->pw));
    *valid = ADD(I(t->P), MUL(*pix, I(-1)));
  } else {
    kir_expr *oh = kir_bin(k, KIR_DIV, pi, I(t->per_row));
    kir_expr *ow0 = MUL(kir_bin(k, KIR_REM, pi, I(t->per_row)), I(t->pw));
    *pix = ADD(MUL(oh, I(t->OW)), ow0);
    *valid = ADD(I(t->OW), MUL(ow0, I(-1)));
  }
  if (t->groups * t->group * t->tn != t->panels)
    *valid = kir_select(k, kir_bin(k, KIR_LT, pi, I(t->panels)), *valid, I(0));
}

/* Pack panel pi of image bn into rows [slot * kqp, (slot + 1) * kqp) of
 * the scratch: row kq = c4 * taps + tap, lane l = pixel l of the panel. */
static void pack_panel(kir_kernel *k, kir_block *blk, const ncc_window *w, const ncc_qconv *q,
                       const tiles *t, int bx, int scratch, kir_expr *slot, kir_expr *bn,
                       kir_expr *pi) {
  kir_expr *pix0, *valid;
  panel_at(k, t, pi, &pix0, &valid);
  int vl = kir_var_new(k), vc = kir_var_new(k), vkh = kir_var_new(k), vkw = kir_var_new(k);
  kir_stmt *ll = kir_for(k, blk, vl, I(0), I(t->pw), KIR_VECTOR, (int)t->pw);
  kir_block bl = kir_body_begin();
  kir_expr *l = kir_var(k, vl), *oh, *ow;
  if (t->flat) {
    kir_expr *p = ADD(pix0, l);
    oh = kir_bin(k, KIR_DIV, p, I(t->OW));
    ow = kir_bin(k, KIR_REM, p, I(t->OW));
  } else {
    oh = kir_bin(k, KIR_DIV, pix0, I(t->OW));
    ow = ADD(kir_bin(k, KIR_REM, pix0, I(t->OW)), l);
  }
  /* lanes past the panel's pixels read nothing (their sums are not stored) */
  bool phantom = t->groups * t->group * t->tn != t->panels; /* slots past the image */
  bool tail = phantom || (t->flat ? t->P % t->pw != 0 : t->OW % t->pw != 0);
  kir_expr *live = tail ? kir_bin(k, KIR_LT, l, valid) : NULL;
  bool padded = w->pad_begin[0] || w->pad_begin[1] || w->pad_end[0] || w->pad_end[1];
  bool unroll = t->kk <= 9;
  kir_stmt *lc = kir_for(k, &bl, vc, I(0), I(q->ic4), KIR_SERIAL, 0);
  kir_block bc = kir_body_begin();
  kir_stmt *lkh = kir_for(k, &bc, vkh, I(0), I(w->kernel[0]), unroll ? KIR_UNROLL : KIR_SERIAL,
                          unroll ? (int)w->kernel[0] : 0);
  kir_block bkh = kir_body_begin();
  kir_stmt *lkw = kir_for(k, &bkh, vkw, I(0), I(w->kernel[1]), KIR_UNROLL, (int)w->kernel[1]);
  kir_block bkw = kir_body_begin();
  {
    kir_expr *c4 = kir_var(k, vc), *kh = kir_var(k, vkh), *kw = kir_var(k, vkw);
    kir_expr *ih = ADD(ADD(MUL(oh, I(w->stride[0])), MUL(kh, I(w->dilation[0]))),
                       I(-w->pad_begin[0]));
    kir_expr *iw = ADD(ADD(MUL(ow, I(w->stride[1])), MUL(kw, I(w->dilation[1]))),
                       I(-w->pad_begin[1]));
    kir_expr *xi[4];
    for (int c = 0; c < 4; c++) {
      kir_expr *plane = MUL(ADD(MUL(bn, I(t->C)), ADD(MUL(c4, I(4)), I(c))), I(t->H * t->W));
      if (t->flat) /* the tap is a constant offset from the flat pixel */
        xi[c] = ADD(ADD(plane, ADD(pix0, l)),
                    ADD(MUL(ADD(MUL(kh, I(w->dilation[0])), I(-w->pad_begin[0])), I(t->W)),
                        ADD(MUL(kw, I(w->dilation[1])), I(-w->pad_begin[1]))));
      else
        xi[c] = ADD(plane, ADD(MUL(ih, I(t->W)), iw));
    }
    kir_expr *guard = NULL;
    if (padded)
      guard = kir_bin(k, KIR_AND,
                      kir_bin(k, KIR_AND, kir_bin(k, KIR_GE, ih, I(0)), kir_bin(k, KIR_LT, ih, I(t->H))),
                      kir_bin(k, KIR_AND, kir_bin(k, KIR_GE, iw, I(0)), kir_bin(k, KIR_LT, iw, I(t->W))));
    if (live) guard = guard ? kir_bin(k, KIR_AND, guard, live) : live;
    kir_expr *row = ADD(MUL(c4, I(t->kk)), ADD(MUL(kh, I(w->kernel[1])), kw));
    kir_store(k, &bkw, scratch, ADD(MUL(ADD(MUL(slot, I(t->kqp)), row), I(t->pw)), l),
              ncc_lower_qconv_x4(k, q, bx, t->C, c4, xi, guard), NULL);
  }
  kir_body_end(lkw, &bkw);
  kir_body_end(lkh, &bkh);
  kir_body_end(lc, &bc);
  kir_body_end(ll, &bl);
}

/* The task loop both kernels share: images x panel groups x channel
 * chunks, chunks innermost so consecutive tasks of a thread read the same
 * input; it packs the group's tp panels (slot j: panel *first + j) and
 * leaves its body open in *bt for the caller (closed by kir_body_end on
 * the returned loop). */
typedef struct task {
  kir_stmt *loop;
  kir_block body;
  kir_expr *cc, *bn, *first; /* channel chunk, image, the group's first panel */
} task;

static void task_begin(kir_kernel *k, kir_block *top, const ncc_node *n, const ncc_window *w,
                       const ncc_qconv *q, const tiles *t, int bx, int scratch, int64_t tp,
                       task *tk) {
  kir_expr *N = ncc_lower_dim(k, n->in[0]->shape.d[0]);
  int vt = kir_var_new(k), vpk = kir_var_new(k);
  tk->loop = kir_for(k, top, vt, I(0), MUL(N, I(t->groups * t->chunks)), KIR_PARALLEL, 0);
  tk->body = kir_body_begin();
  kir_expr *tv = kir_var(k, vt);
  tk->cc = kir_bin(k, KIR_REM, tv, I(t->chunks));
  kir_expr *rest = kir_bin(k, KIR_DIV, tv, I(t->chunks));
  tk->bn = kir_bin(k, KIR_DIV, rest, I(t->groups));
  tk->first = MUL(kir_bin(k, KIR_REM, rest, I(t->groups)), I(tp));
  kir_stmt *lp = kir_for(k, &tk->body, vpk, I(0), I(tp), KIR_SERIAL, 0);
  kir_block bp = kir_body_begin();
  pack_panel(k, &bp, w, q, t, bx, scratch, kir_var(k, vpk), tk->bn, ADD(tk->first, kir_var(k, vpk)));
  kir_body_end(lp, &bp);
}

/* One output channel's sums for a panel's pixels (pw or 16 lanes): the
 * correction, the requantisation, a store of `lanes` pixels (none past
 * OC). bufs: the correction, multiplier and output buffers. */
static void store_channel(kir_kernel *k, kir_block *blk, const tiles *t, const ncc_qconv *q,
                          const int bufs[3], kir_expr *bn, kir_expr *oc, kir_expr *pix0,
                          kir_expr *lanes, kir_expr *sums, int width) {
  kir_expr *count = t->ocp > t->OC ? kir_select(k, kir_bin(k, KIR_LT, oc, I(t->OC)), lanes, I(0))
                                   : lanes;
  kir_expr *v = kir_bin(k, KIR_ADD, sums, kir_splat(k, kir_load(k, bufs[0], oc), width));
  v = ncc_lower_requant(k, v, kir_splat(k, kir_load(k, bufs[1], oc), width), (double)q->zy,
                        q->ydt);
  kir_store(k, blk, bufs[2], ADD(MUL(ADD(MUL(bn, I(t->OC)), oc), I(t->P)), pix0), v, count);
}

ncc_status ncc_lower_qconv_amx(const ncc_node *n, const ncc_window *w, const ncc_qconv *q,
                               kir_kernel *k) {
  tiles t;
  if (!plan(n, w, q, 16, 0, &t)) return NCC_ERR_UNSUPPORTED;
  int bx = kir_buf_input(k, 0, q->xdt);
  int bw, bc, bm;
  if (!ncc_lower_qconv_pack(k, n, q, t.ocp, t.ocp * t.kqp, amx_slot, &t, &bw, &bc, &bm))
    return ncc_error(NCC_ERR_NOMEM, "out of memory packing QLinearConv weights");
  int by = kir_buf_output(k, 0, q->ydt);
  int bufs[3] = {bc, bm, by};
  int64_t tp = t.tn * t.group; /* panels a task packs */
  int scratch = kir_buf_local(k, "x_tiles", NCC_DT_I32, tp * t.kqp * 16);
  int cbuf = kir_buf_local(k, "c_tiles", NCC_DT_I32, t.tm * t.tn * 256);
  int c[2][2], a[2], b[2];
  for (int i = 0; i < t.tm; i++) {
    a[i] = kir_local_add(k, NCC_DT_I32, 256);
    for (int j = 0; j < t.tn; j++) c[i][j] = kir_local_add(k, NCC_DT_I32, 256);
  }
  for (int j = 0; j < t.tn; j++) b[j] = kir_local_add(k, NCC_DT_I32, 256);

  kir_block top = kir_body_begin();
  int vb = kir_var_new(k), vs = kir_var_new(k), vz = kir_var_new(k), vg = kir_var_new(k);
  task tk;
  task_begin(k, &top, n, w, q, &t, bx, scratch, tp, &tk);
  kir_block bt = tk.body;
  kir_expr *cc = tk.cc, *bn = tk.bn, *first = tk.first;
  if (t.kqp > t.kq) { /* the padding rows of k: zeros (their weights are 0) */
    kir_stmt *lz = kir_for(k, &bt, vz, I(0), I((t.kqp - t.kq) * 16), KIR_VECTOR, 16);
    kir_block bz = kir_body_begin();
    for (int64_t j = 0; j < tp; j++)
      kir_store(k, &bz, scratch, ADD(I((j * t.kqp + t.kq) * 16), kir_var(k, vz)),
                kir_cast(k, NCC_DT_I32, I(0)), NULL);
    kir_body_end(lz, &bz);
  }

  kir_expr *b0 = MUL(cc, I(t.chunk));
  kir_stmt *lb = kir_for(k, &bt, vb, b0, kir_min(k, ADD(b0, I(t.chunk)), I(t.blocks)),
                         KIR_SERIAL, 0);
  kir_block bb0 = kir_body_begin();
  kir_expr *oc0 = MUL(kir_var(k, vb), I(16 * t.tm));
  /* the group's pairs, each on this block of weights (cache-hot) */
  kir_stmt *lg = kir_for(k, &bb0, vg, I(0), I(t.group), KIR_SERIAL, 0);
  kir_block bb = kir_body_begin();
  kir_expr *slot0 = MUL(kir_var(k, vg), I(t.tn)); /* the pair's first scratch slot */
  kir_expr *pi[2];
  for (int64_t j = 0; j < t.tn; j++) pi[j] = ADD(first, ADD(slot0, I(j)));
  for (int i = 0; i < t.tm; i++)
    for (int j = 0; j < t.tn; j++) kir_assign(k, &bb, c[i][j], kir_tile_zero(k, 16, 64));
  kir_stmt *ls = kir_for(k, &bb, vs, I(0), I(t.kqp / 16), KIR_SERIAL, 0);
  kir_block bs = kir_body_begin();
  kir_expr *s16 = MUL(kir_var(k, vs), I(16));
  for (int i = 0; i < t.tm; i++) {
    kir_expr *tile = ADD(MUL(ADD(MUL(kir_var(k, vb), I(t.tm)), I(i)), I(t.steps)), kir_var(k, vs));
    kir_assign(k, &bs, a[i], kir_tile_load(k, bw, MUL(tile, I(256)), I(16), 16, 64));
  }
  for (int j = 0; j < t.tn; j++)
    kir_assign(k, &bs, b[j],
               kir_tile_load(k, scratch, MUL(ADD(MUL(ADD(slot0, I(j)), I(t.kqp)), s16), I(16)),
                             I(16), 16, 64));
  for (int i = 0; i < t.tm; i++)
    for (int j = 0; j < t.tn; j++)
      kir_assign(k, &bs, c[i][j],
                 kir_tile_dp(k, KIR_TILE_DPBSUD, kir_local_ref(k, a[i]), kir_local_ref(k, b[j]),
                             kir_local_ref(k, c[i][j]), 16, 64, 64));
  kir_body_end(ls, &bs);
  /* the sums to the scratch, then rows as vectors with no tile live (as
   * in lower_amx.c) */
  for (int i = 0; i < t.tm; i++)
    for (int j = 0; j < t.tn; j++)
      kir_tile_store(k, &bb, cbuf, I((i * t.tn + j) * 256), I(16), kir_local_ref(k, c[i][j]),
                     16, 64);
  for (int j = 0; j < t.tn; j++) {
    kir_expr *pix0, *valid;
    panel_at(k, &t, pi[j], &pix0, &valid);
    for (int i = 0; i < t.tm; i++)
      for (int r = 0; r < 16; r++)
        store_channel(k, &bb, &t, q, bufs, bn, ADD(oc0, I(16 * i + r)), pix0, valid,
                      kir_loadv(k, cbuf, I((i * t.tn + j) * 256 + r * 16), 16, NULL), 16);
  }
  kir_body_end(lg, &bb);
  kir_body_end(lb, &bb0);
  kir_body_end(tk.loop, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)(t.kq * 4);
  return NCC_OK;
}

/* ---- the packed vector kernel ----
 * Hosts without AMX: the same panels (pw = the vector width; row kq of a
 * panel holds each pixel's channel quad / tap word) packed once per task,
 * then for each block of ocb output channels and each panel, ocb i32
 * accumulator vectors take one panel row load and ocb broadcast weight
 * words per k row (KIR_E_DOT4: vpdpbusd, SDOT/USDOT, pmaddwd pairs). The
 * direct kernel (lower_conv.c) builds the quads inside its channel loop,
 * once per pass of ob output channels; here they are built once. */

/* Channels per block: accumulators for the vector registers (32 with
 * AVX-512, 16 otherwise; a DOT4 without VNNI needs a few temporaries). */
static int64_t vec_ocb(int vw) { return vw >= 16 ? 16 : 8; }

bool ncc_lower_qconv_vec_fits(const ncc_node *n, const ncc_window *w, const ncc_qconv *q,
                              int vw) {
  tiles t;
  return vw >= 4 && plan(n, w, q, vw, vec_ocb(vw), &t);
}

static int64_t vec_slot(const void *ctx, int64_t o, int64_t kq) {
  const tiles *t = ctx;
  return o * t->kqp + kq;
}

ncc_status ncc_lower_qconv_vec(const ncc_node *n, const ncc_window *w, const ncc_qconv *q,
                               int vw, kir_kernel *k) {
  tiles t;
  if (!plan(n, w, q, vw, vec_ocb(vw), &t)) return NCC_ERR_UNSUPPORTED;
  int pw = (int)t.pw;
  int bx = kir_buf_input(k, 0, q->xdt);
  int bw, bc, bm;
  if (!ncc_lower_qconv_pack(k, n, q, t.ocp, t.ocp * t.kqp, vec_slot, &t, &bw, &bc, &bm))
    return ncc_error(NCC_ERR_NOMEM, "out of memory packing QLinearConv weights");
  int by = kir_buf_output(k, 0, q->ydt);
  int64_t tp = t.tn * t.group; /* panels a task packs */
  int scratch = kir_buf_local(k, "x_quads", NCC_DT_I32, tp * t.kqp * pw);
  int acc[16];
  for (int j = 0; j < t.ocb; j++) acc[j] = kir_local_add(k, NCC_DT_I32, pw);

  kir_block top = kir_body_begin();
  int vb = kir_var_new(k), vs = kir_var_new(k), vkq = kir_var_new(k);
  task tk;
  task_begin(k, &top, n, w, q, &t, bx, scratch, tp, &tk);
  kir_block bt = tk.body;
  kir_expr *cc = tk.cc, *bn = tk.bn, *first = tk.first;
  kir_expr *b0 = MUL(cc, I(t.chunk));
  kir_stmt *lb = kir_for(k, &bt, vb, b0, kir_min(k, ADD(b0, I(t.chunk)), I(t.blocks)),
                         KIR_SERIAL, 0);
  kir_block bb = kir_body_begin();
  kir_expr *oc0 = MUL(kir_var(k, vb), I(t.ocb));
  /* the group's panels, each on this block of weights (cache-hot) */
  kir_stmt *ls = kir_for(k, &bb, vs, I(0), I(tp), KIR_SERIAL, 0);
  kir_block bs = kir_body_begin();
  kir_expr *slot = kir_var(k, vs), *pi = ADD(first, slot);
  for (int j = 0; j < t.ocb; j++)
    kir_assign(k, &bs, acc[j], kir_splat(k, kir_cast(k, NCC_DT_I32, I(0)), pw));
  kir_stmt *lk = kir_for(k, &bs, vkq, I(0), I(t.kq), KIR_SERIAL, 0);
  kir_block bk = kir_body_begin();
  {
    kir_expr *kq = kir_var(k, vkq);
    kir_expr *x = kir_loadv(k, scratch, MUL(ADD(MUL(slot, I(t.kqp)), kq), I(pw)), pw, NULL);
    for (int j = 0; j < t.ocb; j++) {
      kir_expr *wq = kir_load(k, bw, ADD(MUL(ADD(oc0, I(j)), I(t.kqp)), kq));
      kir_assign(k, &bk, acc[j], kir_dot4(k, x, kir_splat(k, wq, pw), kir_local_ref(k, acc[j])));
    }
  }
  kir_body_end(lk, &bk);
  kir_expr *pix0, *valid;
  panel_at(k, &t, pi, &pix0, &valid);
  int bufs[3] = {bc, bm, by};
  for (int j = 0; j < t.ocb; j++)
    store_channel(k, &bs, &t, q, bufs, bn, ADD(oc0, I(j)), pix0, valid,
                  kir_local_ref(k, acc[j]), pw);
  kir_body_end(ls, &bs);
  kir_body_end(lb, &bb);
  kir_body_end(tk.loop, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)(t.kq * 4);
  return NCC_OK;
}
