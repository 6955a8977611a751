/* codegen/lower_blocked.c — kernels on blocked (#nchw<k>c) values: Reorder,
 * Conv with a blocked output (and its fused epilogue), depthwise Conv,
 * MaxPool / AveragePool / GlobalAveragePool, elementwise nodes and groups,
 * Concat along C.
 *
 * A blocked value keeps its logical shape [N,C,H,W] but is stored
 * [N][C/k][H][W][k] (ir/verify.c: C static, C % k == 0), so the k channels
 * of one pixel are one contiguous k-lane vector. That is what makes the
 * classic NCHWc direct convolution a register-tiled broadcast-FMA kernel
 * with no im2col and no gathers:
 *
 *   for each (image, nb output-channel blocks, run of R output pixels):
 *     acc[r][j] (k lanes) = 0                   R*nb vector registers
 *     for ic (real input channels), for each tap (unrolled):
 *       w[j] = one contiguous k-lane load of the packed weights
 *       acc[r][j] += splat(x[pixel r, tap, ic]) * w[j]
 *     bias, epilogue, store acc[r][j] (contiguous: k channels of pixel r)
 *
 * Weights are constants, repacked at compile time as [OC/k][IC][KH][KW][k].
 * Pixels are walked in flat runs of R (p = oh*OW + ow per pixel), the last
 * run clamped to the last pixel (recomputing it is harmless), so any OW
 * fits. Padding: the pixels whose windows lie inside the image (the
 * interior rectangle) and the frame around it are two compacted flat lists,
 * each walked in runs by its own parallel loop, so borders cost nothing in
 * the interior, whatever the row width. The frame's loop puts the taps
 * outside the channel loops: each pixel's "tap inside the image" test is
 * then loop-invariant and zeroes its broadcast (an AND), a tap outside for
 * all R pixels skips its channel loops, and the frame list is ordered so a
 * run mostly sits on one side of it (guarded scalar loads with the taps
 * unrolled inside kept R*KH*KW guards live and spilled). Convolutions with
 * large weights walk their input channels in chunks (conv_chunks).
 *
 * Sizes other than N must be static (the layout pass only blocks values
 * with a static C; H and W static keep every decision at compile time).
 * Anything not handled answers NCC_ERR_UNSUPPORTED and falls back.
 */
#include <math.h>
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/ctime.h"
#include "lower.h"
#include "kir_short.h"

#define F32 NCC_DT_F32
#define NB_MAX NCC_CONV_NB_MAX
#define R_MAX NCC_CONV_R_MAX
#define FLAT_BLOCK 4096
/* cache sizes the blocked Conv's loop order assumes (conv_order, conv_chunks) */
#define L2_BYTES (512 * 1024)
#define CHUNK_ABOVE (128 * 1024)
#define CHUNK_BYTES (16 * 1024)
#define CHUNK_PIXELS 48


/* ---- values and layouts ---- */

/* The block size of v: 0 when plain. */
/* f32, rank 4, every dim but N static. */
static bool f32_nchw(const ncc_value *v) {
  if (!v || v->dtype != F32 || v->shape.rank != 4) return false;
  for (int j = 1; j < 4; j++)
    if (ncc_dim_is_sym(v->shape.d[j]) || v->shape.d[j] < 0) return false;
  return true;
}

static bool numel_one(const ncc_value *v) {
  return v && ncc_shape_is_static(&v->shape) && ncc_shape_numel(&v->shape) == 1;
}

/* Elements of v (an i64 expression: N may be symbolic). */
static kir_expr *numel(kir_kernel *k, const ncc_value *v) {
  kir_expr *e = I(1);
  for (int j = 0; j < v->shape.rank; j++) e = MUL(e, ncc_lower_dim(k, v->shape.d[j]));
  return e;
}

static void bind_data(kir_kernel *k, int b, float *data, size_t count) {
  k->bufs[b].bind = KIR_BIND_DATA;
  k->bufs[b].data = data;
  k->bufs[b].data_bytes = count * sizeof(float);
  k->bufs[b].owned = data;
}

typedef ncc_window win;

/* ---- op classification ---- */

typedef enum bkind {
  BK_NONE,
  BK_REORDER,
  BK_CONV,    /* group 1, blocked output, plain or blocked input */
  BK_DWCONV,  /* depthwise, blocked in and out (one block size) */
  BK_POOL,    /* MaxPool / AveragePool */
  BK_GAP,     /* GlobalAveragePool */
  BK_CONCAT,  /* along C, every input and the output blocked by one k */
  BK_ELTWISE
} bkind;

static bool conv_common(const ncc_node *n, win *w) {
  if (n->n_out != 1 || n->n_in < 2 || !f32_nchw(n->in[0]) || !f32_nchw(n->out[0]))
    return false;
  const ncc_value *x = n->in[0], *wt = n->in[1], *y = n->out[0];
  int ky = ncc_value_block(y);
  if (!ky || !wt || wt->dtype != F32 || wt->shape.rank != 4 ||
      !ncc_shape_is_static(&wt->shape) || wt->kind != NCC_VAL_CONST || !wt->data ||
      ncc_value_block(wt))
    return false;
  if (wt->shape.d[0] != y->shape.d[1] || y->shape.d[0] != x->shape.d[0]) return false;
  if (n->n_in > 2 && n->in[2]) {
    const ncc_value *b = n->in[2];
    if (b->dtype != F32 || b->shape.rank != 1 || b->shape.d[0] != y->shape.d[1] || ncc_value_block(b))
      return false;
  }
  if (!ncc_lower_window(n, w)) return false;
  /* the output size must match the window (no ceil-mode surprises) */
  int64_t H = x->shape.d[2], W = x->shape.d[3];
  int64_t eh = (H + w->pad_begin[0] + w->pad_end[0] - ((w->kernel[0] - 1) * w->dilation[0] + 1)) / w->stride[0] + 1;
  int64_t ew = (W + w->pad_begin[1] + w->pad_end[1] - ((w->kernel[1] - 1) * w->dilation[1] + 1)) / w->stride[1] + 1;
  return eh == y->shape.d[2] && ew == y->shape.d[3] && eh > 0 && ew > 0;
}

static bkind conv_kind(const ncc_node *n, win *w) {
  if (!conv_common(n, w)) return BK_NONE;
  const ncc_value *x = n->in[0], *wt = n->in[1], *y = n->out[0];
  int64_t g = w->group, C = x->shape.d[1];
  if (g == 1 && wt->shape.d[1] == C && (!ncc_value_block(x) || C % ncc_value_block(x) == 0)) return BK_CONV;
  if (g > 1 && g == C && y->shape.d[1] == C && wt->shape.d[1] == 1 && ncc_value_block(x) == ncc_value_block(y))
    return BK_DWCONV;
  return BK_NONE;
}

static bool pool_ok(const ncc_node *n, win *w) {
  if (n->n_out < 1 || !f32_nchw(n->in[0]) || !f32_nchw(n->out[0])) return false;
  if (n->n_out > 1 && n->out[1]) return false; /* MaxPool Indices */
  if (!ncc_value_block(n->in[0]) || ncc_value_block(n->in[0]) != ncc_value_block(n->out[0])) return false;
  if (n->in[0]->shape.d[0] != n->out[0]->shape.d[0] ||
      n->in[0]->shape.d[1] != n->out[0]->shape.d[1])
    return false;
  if (!ncc_lower_window(n, w)) return false;
  if (n->op == NCC_OP_AVGPOOL && w->ceil_mode) return false;
  /* every window must overlap the image somewhere (a MaxPool over nothing) */
  const ncc_shape *ys = &n->out[0]->shape;
  return (ys->d[2] - 1) * w->stride[0] - w->pad_begin[0] < n->in[0]->shape.d[2] &&
         (ys->d[3] - 1) * w->stride[1] - w->pad_begin[1] < n->in[0]->shape.d[3];
}

static bool gap_ok(const ncc_node *n) {
  if (n->n_out != 1 || !f32_nchw(n->in[0]) || !f32_nchw(n->out[0])) return false;
  const ncc_shape *ys = &n->out[0]->shape;
  /* with H = W = 1 the blocked and plain outputs are the same bytes */
  return ncc_value_block(n->in[0]) && (!ncc_value_block(n->out[0]) || ncc_value_block(n->in[0]) == ncc_value_block(n->out[0])) &&
         ys->d[2] == 1 && ys->d[3] == 1 && ys->d[1] == n->in[0]->shape.d[1];
}

static bool reorder_ok(const ncc_node *n) {
  if (n->n_out != 1 || n->n_in != 1 || !f32_nchw(n->in[0]) || !f32_nchw(n->out[0]))
    return false;
  int64_t C = n->in[0]->shape.d[1];
  int bi = ncc_value_block(n->in[0]), bo = ncc_value_block(n->out[0]);
  return ncc_shape_eq(&n->in[0]->shape, &n->out[0]->shape) && (!bi || C % bi == 0) &&
         (!bo || C % bo == 0);
}

/* Elementwise ops with an f32 result from f32 operands (the op list and
 * attribute checks are lower_eltwise.c's). */
static bool elt_op_ok(const ncc_node *n) {
  if (!ncc_lower_eltwise_op_ok(n) || n->out[0]->dtype != F32) return false;
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && n->in[i]->dtype != F32) return false;
  return n->n_in >= 1;
}

/* How an elementwise operand is read at the points of blocked output y:
 * FK_SAME the same logical shape and layout (the same storage index),
 * FK_ONE one element, FK_NC one value per (image, channel) — [N,C,1,1],
 * the squeeze-excite scale — and FK_CH one per channel — [1,C,1,1] or
 * [C,1,1]. The last two are plain, or blocked by y's block: with H = W = 1
 * both store channel c of image n at n*C + c. */
typedef enum fkind { FK_NONE, FK_SAME, FK_ONE, FK_NC, FK_CH } fkind;

static fkind flat_kind(const ncc_value *v, const ncc_value *y) {
  if (!v || v->dtype != F32) return FK_NONE;
  if (numel_one(v)) return FK_ONE;
  if (ncc_shape_eq(&v->shape, &y->shape) && ncc_layout_eq(v->layout, y->layout)) return FK_SAME;
  int kb = ncc_value_block(y), kv = ncc_value_block(v);
  if (!kb || !f32_nchw(y) || (kv && kv != kb)) return FK_NONE;
  const ncc_shape *s = &v->shape;
  int64_t C = y->shape.d[1];
  if (s->rank == 4 && s->d[1] == C && s->d[2] == 1 && s->d[3] == 1) {
    if (s->d[0] == y->shape.d[0]) return FK_NC;
    if (s->d[0] == 1) return FK_CH;
  }
  if (!kv && s->rank == 3 && s->d[0] == C && s->d[1] == 1 && s->d[2] == 1) return FK_CH;
  return FK_NONE;
}

static bool eltwise_ok(const ncc_node *n) {
  if (!elt_op_ok(n)) return false;
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i] && flat_kind(n->in[i], n->out[0]) == FK_NONE) return false;
  return true;
}

/* With every C_j a multiple of k the blocked bytes of a channel Concat
 * are the plain ones (passes/layout.c): the plain copy kernel serves. */
static bool concat_ok(const ncc_node *n) {
  int axis, k = ncc_value_block(n->out[0]);
  if (n->n_out != 1 || !k || !f32_nchw(n->out[0]) ||
      ncc_attrs_axis_norm(n, 4, &axis) != NCC_OK || axis != 1)
    return false;
  for (int i = 0; i < n->n_in; i++)
    if (!n->in[i] || !f32_nchw(n->in[i]) || ncc_value_block(n->in[i]) != k) return false;
  return ncc_lower_concat_supports(n);
}

static bkind classify(const ncc_node *n, win *w) {
  switch (n->op) {
  case NCC_OP_REORDER: return reorder_ok(n) ? BK_REORDER : BK_NONE;
  case NCC_OP_CONV: return conv_kind(n, w);
  case NCC_OP_MAXPOOL:
  case NCC_OP_AVGPOOL: return pool_ok(n, w) ? BK_POOL : BK_NONE;
  case NCC_OP_GLOBALAVGPOOL: return gap_ok(n) ? BK_GAP : BK_NONE;
  case NCC_OP_CONCAT: return concat_ok(n) ? BK_CONCAT : BK_NONE;
  default: return eltwise_ok(n) ? BK_ELTWISE : BK_NONE;
  }
}

bool ncc_lower_blocked_supports(const ncc_node *n) {
  win w;
  return classify(n, &w) != BK_NONE;
}

/* ---- Reorder ----
 * One parallel task per output row: a channel block (blocked output) or a
 * channel plane (plain output); inside, a vector loop over the row's
 * storage, contiguous on the output side, the input read where the same
 * logical element lives (a strided gather). */
static void lower_reorder(const ncc_node *n, int vw, kir_kernel *k) {
  const ncc_value *x = n->in[0], *y = n->out[0];
  int64_t C = x->shape.d[1], HW = x->shape.d[2] * x->shape.d[3];
  int64_t bi = ncc_value_block(x) ? ncc_value_block(x) : 1, bo = ncc_value_block(y) ? ncc_value_block(y) : 1;
  int bx = kir_buf_input(k, 0, F32), by = kir_buf_output(k, 0, F32);
  kir_expr *N = ncc_lower_dim(k, x->shape.d[0]);
  kir_block top = kir_body_begin();
  int vr = kir_var_new(k), vq = kir_var_new(k);
  kir_stmt *lr = kir_for(k, &top, vr, I(0), MUL(N, I(C / bo)), KIR_PARALLEL, 0);
  kir_block br = kir_body_begin();
  kir_stmt *lq = kir_for(k, &br, vq, I(0), I(HW * bo), vw > 1 ? KIR_VECTOR : KIR_SERIAL, vw);
  kir_block bq = kir_body_begin();
  kir_expr *row = kir_var(k, vr), *q = kir_var(k, vq);
  /* q = p*bo + ci; the logical plane n*C + c = row*bo + ci */
  kir_expr *p = bo > 1 ? DIV(q, I(bo)) : q;
  kir_expr *plane = bo > 1 ? ADD(MUL(row, I(bo)), REM(q, I(bo))) : row;
  kir_expr *xi = bi > 1 ? ADD(MUL(ADD(MUL(DIV(plane, I(bi)), I(HW)), p), I(bi)),
                              REM(plane, I(bi)))
                        : ADD(MUL(plane, I(HW)), p);
  kir_store(k, &bq, by, ADD(MUL(row, I(HW * bo)), q), kir_load(k, bx, xi), NULL);
  kir_body_end(lq, &bq);
  kir_body_end(lr, &br);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 1.0;
}

/* ---- epilogues on blocked tiles ----
 * A fused group's elementwise members evaluated on one k-lane vector of
 * the output (the k channels of one pixel), before it is stored. External
 * operands: same-shape values in the output's layout (read at the output's
 * physical index), one-element values (splat) and per-channel values
 * [C,1,1] / [1,C,1,1] (plain: k consecutive channels). */

typedef enum ekind { EK_NONE, EK_SAME, EK_SCALAR, EK_CHANNEL } ekind;

typedef struct bep {
  ncc_gx gx;
  int anchor; /* member index of the Conv, -1: none (eltwise group) */
  int lanes;
  ekind kind[NCC_FUSE_MAX_EXT];
  kir_expr *oidx; /* physical index of the point's first lane */
  kir_expr *c0;   /* its channel */
  kir_expr *acc;  /* the anchor's value */
} bep;

static ekind classify_ext(const ncc_value *v, const ncc_value *y) {
  if (!v || v->dtype != F32) return EK_NONE;
  if (numel_one(v)) return EK_SCALAR;
  if (ncc_shape_eq(&v->shape, &y->shape) && ncc_layout_eq(v->layout, y->layout)) return EK_SAME;
  const ncc_shape *s = &v->shape;
  int64_t C = y->shape.d[1];
  if (!ncc_value_block(v) && ((s->rank == 3 && s->d[0] == C && s->d[1] == 1 && s->d[2] == 1) ||
                  (s->rank == 4 && s->d[0] == 1 && s->d[1] == C && s->d[2] == 1 &&
                   s->d[3] == 1)))
    return EK_CHANNEL;
  return EK_NONE;
}

static kir_expr *bep_ext(ncc_gx *x, int e, int lanes) {
  bep *ep = x->ctx;
  kir_kernel *k = x->k;
  int buf = ncc_gx_buf(x, e);
  switch (ep->kind[e]) {
  case EK_SAME: return kir_loadv(k, buf, ep->oidx, lanes, NULL);
  case EK_CHANNEL: return kir_loadv(k, buf, ep->c0, lanes, NULL);
  default: return kir_splat(k, kir_load(k, buf, I(0)), lanes);
  }
}

static kir_expr *bep_special(ncc_gx *x, kir_block *blk_, int m, int lanes) {
  (void)blk_;
  (void)lanes;
  bep *ep = x->ctx;
  return m == ep->anchor ? ep->acc : NULL;
}

/* Prepare group gr's members other than `anchor` for evaluation on k-lane
 * vectors of output y (the root's output); false when a member or an
 * external operand does not fit. */
static bool bep_init(bep *ep, kir_kernel *k, const ncc_fuse_group *gr, int anchor,
                     int lanes) {
  memset(ep, 0, sizeof *ep);
  ncc_gx_init(&ep->gx, k, gr);
  ep->gx.ext = bep_ext;
  ep->gx.special = bep_special;
  ep->gx.ctx = ep;
  ep->anchor = anchor;
  ep->lanes = lanes;
  const ncc_value *y = gr->members[gr->n_members - 1]->out[0];
  for (int m = 0; m < gr->n_members; m++) {
    const ncc_node *n = gr->members[m];
    if (m == anchor) continue;
    if (!elt_op_ok(n) || !ncc_shape_eq(&n->out[0]->shape, &y->shape)) return false;
    for (int i = 0; i < n->n_in; i++) {
      int e = ncc_gx_ext_of(&ep->gx, n->in[i]);
      if (e < 0) continue;
      ep->kind[e] = classify_ext(n->in[i], y);
      if (ep->kind[e] == EK_NONE) return false;
    }
  }
  return true;
}

static kir_expr *bep_apply(bep *ep, kir_block *b, kir_expr *acc, kir_expr *oidx,
                           kir_expr *c0) {
  ep->acc = acc;
  ep->oidx = oidx;
  ep->c0 = c0;
  ncc_gx_point(&ep->gx);
  return ncc_gx_member(&ep->gx, b, ep->gx.gr->n_members - 1, ep->lanes);
}

static int bind_index(const bep *ep, const ncc_node *n, int in) {
  if (!ep) return in;
  int e = ncc_gx_ext_of(&ep->gx, n->in[in]);
  NCC_ASSERT(e >= 0);
  return e;
}

/* ---- pixel runs ---- */

/* Input position along one axis. */
static kir_expr *in_pos(kir_kernel *k, kir_expr *o, int64_t s, int64_t off) {
  return ADD(MUL(o, I(s)), I(off));
}


/* ---- Conv with a blocked output ---- */

typedef struct bconv {
  const ncc_node *n;
  win w;
  int kb;            /* output block */
  int ki;            /* input block, 0: plain input */
  int64_t N_, C, H, W, OC, OH, OW, P;
  int nb, R;
  int bx, bw, bb, by;
  int acc[R_MAX][NB_MAX], wl[NB_MAX];
  bep *ep;
  /* conv_chunks: nchunk chunks of cbk input-channel blocks, S runs per task
   * with partial sums in the scratch bs (S 1: conv_pass, no scratch) */
  int64_t cbk, nchunk, S;
  int bs;
  bool groups_inner; /* task order (conv_order) */
  bool tap_major;    /* packed weights' order (pack_conv_weights) */
} bconv;

/* Packed weights: per group of nb output blocks (g, nb*kb channels), the
 * group's weights in the order its tasks read them, [g][IC][KH*KW][nb*kb]
 * (ic-major, the interior's order: channels outer, window inner) or
 * [g][KH*KW][IC][nb*kb] (tap-major, the border's: taps outer); one task
 * then reads one sequential stream, where [OC/kb][IC][KH][KW][kb] gave it
 * nb streams, and the border's taps-outer walk strided through each
 * (depthwise: IC = 1, nb = 1, both the same). */
typedef struct pack_job {
  float *dst;
  const float *src;
  int64_t C, khw; /* input channels and taps of the source [OC][C][khw] */
  int gb;         /* output channels per group, nb * kb */
  bool tap_major;
} pack_job;

/* Groups [lo, hi): written in order, gb source rows read side by side (no
 * division per element); each part faults in its own pages. */
static void pack_blocks(void *ctx, int64_t lo, int64_t hi) {
  const pack_job *p = ctx;
  int64_t C = p->C, khw = p->khw, n = C * khw, gb = p->gb;
  ncc_prefault(p->dst + lo * gb * n, (size_t)((hi - lo) * gb * n) * sizeof(float));
  for (int64_t g = lo; g < hi; g++) {
    float *d = p->dst + g * gb * n;
    const float *s = p->src + g * gb * n;
    if (!p->tap_major) {
      for (int64_t t = 0; t < n; t++, d += gb)
        for (int64_t j = 0; j < gb; j++) d[j] = s[j * n + t];
      continue;
    }
    for (int64_t t = 0; t < khw; t++)
      for (int64_t ic = 0; ic < C; ic++, d += gb)
        for (int64_t j = 0; j < gb; j++) d[j] = s[j * n + ic * khw + t];
  }
}

static int pack_conv_weights(kir_kernel *k, const ncc_value *wt, int gb, bool tap_major) {
  int64_t oc = wt->shape.d[0], C = wt->shape.d[1], khw = wt->shape.d[2] * wt->shape.d[3];
  size_t count = (size_t)(oc * C * khw);
  double t0 = ncc_ctime_pack_begin();
  float *dst = ncc_malloc(count * sizeof(float));
  if (!dst) return -1;
  /* the blocked layout has whole output blocks (layout pass), and nb
   * divides their count (ncc_lower_conv_tile) */
  NCC_ASSERT(oc % gb == 0);
  pack_job job = {dst, wt->data, C, khw, gb, tap_major};
  /* parts of at least 256 KB: a thread costs more than packing less */
  int64_t grain = (256 << 10) / (int64_t)sizeof(float) / (gb * C * khw) + 1;
  ncc_lower_parallel(oc / gb, grain, pack_blocks, &job);
  ncc_ctime_pack_end(t0);
  int b = kir_buf_add(k, "packed_w", F32, false);
  bind_data(k, b, dst, count);
  return b;
}

/* acc[r][j] = 0 for the run's tile. */
static void zero_tile(bconv *c, kir_kernel *k, kir_block *b) {
  for (int r = 0; r < c->R; r++)
    for (int j = 0; j < c->nb; j++)
      kir_assign(k, b, c->acc[r][j], kir_splat(k, kir_const_f(k, F32, 0.0), c->kb));
}

/* The channel loops of the reduction: icb over blocks [lo, hi) of ki
 * channels (ki = 1 for a plain input), ici inside; returns the inner body
 * and sets the element offset of channel ic from a pixel's channel-0
 * element (blocked: icb*HW*ki + ici, plain: ic*HW) and ic itself. The
 * block loop stays rolled; the channel loop gets unroll(`unroll`). */
static kir_block *channel_loops(bconv *c, kir_kernel *k, kir_block *b, kir_expr *lo,
                                kir_expr *hi, int unroll, kir_stmt **lcb, kir_block *bcb, kir_stmt **lci,
                                kir_block *bci, kir_expr **coff, kir_expr **ic) {
  int64_t ki = c->ki ? c->ki : 1, HW = c->H * c->W;
  int vcb = kir_var_new(k), vci = kir_var_new(k);
  *lcb = kir_for(k, b, vcb, lo, hi, KIR_UNROLL, 1);
  *bcb = kir_body_begin();
  *lci = kir_for(k, bcb, vci, I(0), I(ki), KIR_UNROLL, unroll);
  *bci = kir_body_begin();
  kir_expr *icb = kir_var(k, vcb), *ici = kir_var(k, vci);
  *ic = ADD(MUL(icb, I(ki)), ici);
  *coff = c->ki ? ADD(MUL(icb, I(HW * ki)), ici) : MUL(*ic, I(HW));
  return bci;
}

/* The tile's FMAs for one (channel, tap) of group grp: nb weight vectors
 * (side by side in the packed weights), R broadcasts. */
static void tile_fmas(bconv *c, kir_kernel *k, kir_block *b, kir_expr *grp, kir_expr *ic,
                      kir_expr *tap, kir_expr **x) {
  int kb = c->kb;
  int64_t taps = c->w.kernel[0] * c->w.kernel[1];
  kir_expr *u = c->tap_major ? ADD(MUL(tap, I(c->C)), ic) : ADD(MUL(ic, I(taps)), tap);
  kir_expr *w0 = MUL(ADD(MUL(grp, I(c->C * taps)), u), I(c->nb * kb));
  kir_expr *wv[NB_MAX];
  for (int j = 0; j < c->nb; j++) {
    kir_assign(k, b, c->wl[j], kir_loadv(k, c->bw, ADD(w0, I(j * kb)), kb, NULL));
    wv[j] = kir_local_ref(k, c->wl[j]);
  }
  for (int r = 0; r < c->R; r++)
    for (int j = 0; j < c->nb; j++) {
      kir_expr *a = kir_local_ref(k, c->acc[r][j]);
      kir_assign(k, b, c->acc[r][j], kir_fma(k, x[r], wv[j], a));
    }
}

/* Interior runs: every tap of every pixel is inside the image, so the
 * window is unrolled inside the channel loops (constant offsets from the
 * R pixel bases xb[r]). */
static void conv_reduce(bconv *c, kir_kernel *k, kir_block *b, kir_expr *grp,
                        kir_expr **xb, kir_expr *lo, kir_expr *hi) {
  const win *w = &c->w;
  int64_t ki = c->ki ? c->ki : 1;
  kir_stmt *lcb, *lci;
  kir_block bcb, bci;
  kir_expr *coff, *ic;
  /* rolled (unroll(1)): the body is the unrolled window already; LLVM's
   * unroller left these loops rolled anyway, after an analysis that cost
   * half of a Conv kernel's optimisation time */
  kir_block *body = channel_loops(c, k, b, lo, hi, 1, &lcb, &bcb, &lci, &bci, &coff, &ic);
  int vkh = kir_var_new(k), vkw = kir_var_new(k);
  kir_stmt *lkh = kir_for(k, body, vkh, I(0), I(w->kernel[0]), KIR_UNROLL, (int)w->kernel[0]);
  kir_block bkh = kir_body_begin();
  kir_stmt *lkw = kir_for(k, &bkh, vkw, I(0), I(w->kernel[1]), KIR_UNROLL, (int)w->kernel[1]);
  kir_block bkw = kir_body_begin();
  {
    kir_expr *kh = kir_var(k, vkh), *kw = kir_var(k, vkw);
    kir_expr *tap = ADD(MUL(kh, I(w->kernel[1])), kw);
    kir_expr *off = ADD(coff, MUL(ADD(MUL(kh, I(w->dilation[0] * c->W)), MUL(kw, I(w->dilation[1]))), I(ki)));
    kir_expr *x[R_MAX];
    for (int r = 0; r < c->R; r++) x[r] = kir_splat(k, kir_load(k, c->bx, ADD(xb[r], off)), c->kb);
    tile_fmas(c, k, &bkw, grp, ic, tap, x);
  }
  kir_body_end(lkw, &bkw);
  kir_body_end(lkh, &bkh);
  kir_body_end(lci, &bci);
  kir_body_end(lcb, &bcb);
}

/* Border runs: the taps are the outer loops, so each pixel's padding test
 * and its input base for the tap (the image base when the tap falls
 * outside: any in-image address, the value is discarded) are invariant in
 * the channel loops: the inner loop is the interior's broadcast-FMA tile
 * with pixel r's broadcast zeroed where its tap is outside (the zero
 * padding's value; one AND per broadcast, where masking the FMAs cost AVX2
 * a blend per FMA), and a tap outside for every pixel of the run skips its
 * channel loops.
 * (Unrolling the taps inside the channel loops instead kept R*KH*KW guards
 * live across them, and spilled.) */
static void conv_reduce_border(bconv *c, kir_kernel *k, kir_block *b, kir_expr *grp,
                               kir_expr *xbase, kir_expr **xb, kir_expr **ih0,
                               kir_expr **iw0, kir_expr *lo, kir_expr *hi) {
  const win *w = &c->w;
  int kb = c->kb;
  int64_t ki = c->ki ? c->ki : 1;
  int vkh = kir_var_new(k), vkw = kir_var_new(k);
  kir_stmt *lkh = kir_for(k, b, vkh, I(0), I(w->kernel[0]), KIR_UNROLL, 1);
  kir_block bkh = kir_body_begin();
  kir_stmt *lkw = kir_for(k, &bkh, vkw, I(0), I(w->kernel[1]), KIR_UNROLL, 1);
  kir_block bkw = kir_body_begin();
  kir_expr *kh = kir_var(k, vkh), *kw = kir_var(k, vkw);
  kir_expr *tap = ADD(MUL(kh, I(w->kernel[1])), kw);
  kir_expr *sp = MUL(ADD(MUL(kh, I(w->dilation[0] * c->W)), MUL(kw, I(w->dilation[1]))), I(ki));
  kir_expr *g[R_MAX], *base[R_MAX], *any = NULL;
  for (int r = 0; r < c->R; r++) {
    g[r] = AND(ncc_lower_inside(k, ADD(ih0[r], MUL(kh, I(w->dilation[0]))), c->H),
               ncc_lower_inside(k, ADD(iw0[r], MUL(kw, I(w->dilation[1]))), c->W));
    base[r] = kir_select(k, g[r], ADD(xb[r], sp), xbase);
    any = any ? kir_bin(k, KIR_OR, any, g[r]) : g[r];
  }
  kir_stmt *lcb, *lci;
  kir_block bcb, bci;
  kir_expr *coff, *ic;
  /* the channel loop by 2: what LLVM's own analysis chose, worth ~10% of
   * ResNet-50 against a rolled loop */
  kir_block *body = channel_loops(c, k, &bkw, lo, kir_select(k, any, hi, lo), 2, &lcb, &bcb, &lci,
                                  &bci, &coff, &ic);
  kir_expr *x[R_MAX], *zero = kir_splat(k, kir_const_f(k, F32, 0.0), kb);
  for (int r = 0; r < c->R; r++)
    x[r] = kir_select(k, g[r], kir_splat(k, kir_load(k, c->bx, ADD(base[r], coff)), kb), zero);
  tile_fmas(c, k, body, grp, ic, tap, x);
  kir_body_end(lci, &bci);
  kir_body_end(lcb, &bcb);
  kir_body_end(lkw, &bkw);
  kir_body_end(lkh, &bkh);
}

/* Pixels of the output split in two compacted flat lists: the interior
 * (rows [r_lo, r_hi) x columns [c_lo, c_hi), whose windows lie inside the
 * image) and the border frame around it. Runs of R walk each list, so the
 * interior runs read unguarded and only the frame pays for padding checks,
 * whatever the row width. */
typedef struct region {
  int64_t OH, OW, r_lo, r_hi, c_lo, c_hi, n_int, n_bord;
  bool by_column; /* no interior, a 1-row window: the frame is walked
                     column by column (pixel_at) */
} region;

static void regions(const win *w, int64_t H, int64_t W, int64_t OH, int64_t OW, int R,
                    region *g) {
  g->OH = OH, g->OW = OW;
  g->r_lo = ncc_lower_cdiv(w->pad_begin[0], w->stride[0]);
  g->c_lo = ncc_lower_cdiv(w->pad_begin[1], w->stride[1]);
  int64_t rh = H - 1 + w->pad_begin[0] - (w->kernel[0] - 1) * w->dilation[0], cw = W - 1 + w->pad_begin[1] - (w->kernel[1] - 1) * w->dilation[1];
  g->r_hi = rh < 0 ? 0 : rh / w->stride[0] + 1;
  g->c_hi = cw < 0 ? 0 : cw / w->stride[1] + 1;
  if (g->r_hi > OH) g->r_hi = OH;
  if (g->c_hi > OW) g->c_hi = OW;
  /* no interior, or one smaller than a run of R pixels: every pixel is
   * frame (SqueezeNet's 3x3 Convs at 3x3, 1 interior pixel, ran it as a
   * run of R copies besides the frame's runs) */
  if (g->r_hi <= g->r_lo || g->c_hi <= g->c_lo ||
      (g->r_hi - g->r_lo) * (g->c_hi - g->c_lo) < R)
    g->r_lo = g->r_hi = g->c_lo = g->c_hi = 0;
  g->n_int = (g->r_hi - g->r_lo) * (g->c_hi - g->c_lo);
  g->n_bord = OH * OW - g->n_int;
  g->by_column = g->n_int == 0 && w->kernel[0] == 1;
}

/* Output pixel (oh, ow) of entry q of the interior or border list. */
static void pixel_at(kir_kernel *k, const region *g, bool border, kir_expr *q, kir_expr **oh,
                     kir_expr **ow) {
  if (!border) {
    int64_t sw = g->c_hi - g->c_lo;
    *oh = ADD(DIV(q, I(sw)), I(g->r_lo));
    *ow = ADD(REM(q, I(sw)), I(g->c_lo));
    return;
  }
  if (g->by_column) {
    /* with a 1-row window a pixel's taps inside the image depend on its
     * column only, so a run down one column skips the same taps for all
     * its pixels (Inception's 1x7 Convs at 5x5, all frame: row by row,
     * every run computed all 7 taps for 5-wide rows) */
    *oh = REM(q, I(g->OH));
    *ow = DIV(q, I(g->OH));
    return;
  }
  if (g->n_int == 0) {
    *oh = DIV(q, I(g->OW));
    *ow = REM(q, I(g->OW));
    return;
  }
  /* top rows, then the middle rows' left columns, their right columns, then
   * the bottom rows: a run then mostly shares one side of the frame, so
   * whole taps fall outside for all its pixels (conv_reduce_border skips
   * them) */
  int64_t top = g->r_lo * g->OW, rows = g->r_hi - g->r_lo, rw = g->OW - g->c_hi;
  int64_t nl = rows * g->c_lo, mid = nl + rows * rw;
  kir_expr *m = ADD(q, I(-top)), *b = ADD(q, I(-top - mid)), *oh_m, *ow_m;
  if (nl == mid || nl == 0) { /* one side only, or none (never selected) */
    int64_t wd = g->c_lo ? g->c_lo : rw > 0 ? rw : 1, c0 = g->c_lo ? 0 : g->c_hi;
    oh_m = ADD(DIV(m, I(wd)), I(g->r_lo));
    ow_m = ADD(REM(m, I(wd)), I(c0));
  } else {
    kir_expr *m2 = ADD(m, I(-nl)), *left = kir_bin(k, KIR_LT, m, I(nl));
    oh_m = ADD(kir_select(k, left, DIV(m, I(g->c_lo)), DIV(m2, I(rw))), I(g->r_lo));
    ow_m = kir_select(k, left, REM(m, I(g->c_lo)), ADD(REM(m2, I(rw)), I(g->c_hi)));
  }
  kir_expr *in_top = kir_bin(k, KIR_LT, q, I(top));
  kir_expr *in_mid = kir_bin(k, KIR_LT, q, I(top + mid));
  *oh = kir_select(k, in_top, DIV(q, I(g->OW)),
                   kir_select(k, in_mid, oh_m, ADD(DIV(b, I(g->OW)), I(g->r_hi))));
  *ow = kir_select(k, in_top, REM(q, I(g->OW)), kir_select(k, in_mid, ow_m, REM(b, I(g->OW))));
}

/* The R pixels of run `run` (the last run clamped to the last pixel, which
 * is then recomputed and stored again, harmlessly): flat output index p,
 * window origin (ih0, iw0) and the input offset xb of that origin, for an
 * input image at xbase whose pixels are `ki` elements apart. */
static void run_pixels(const bconv *c, kir_kernel *k, const region *g, bool border,
                       kir_expr *run, int64_t count, kir_expr *xbase, int64_t ki,
                       kir_expr **p, kir_expr **ih0, kir_expr **iw0, kir_expr **xb) {
  const win *w = &c->w;
  for (int r = 0; r < c->R; r++) {
    kir_expr *q = kir_min(k, ADD(MUL(run, I(c->R)), I(r)), I(count - 1)), *oh, *ow;
    pixel_at(k, g, border, q, &oh, &ow);
    p[r] = ADD(MUL(oh, I(c->OW)), ow);
    ih0[r] = in_pos(k, oh, w->stride[0], -w->pad_begin[0]);
    iw0[r] = in_pos(k, ow, w->stride[1], -w->pad_begin[1]);
    xb[r] = ADD(xbase, MUL(ADD(MUL(ih0[r], I(c->W)), iw0[r]), I(ki)));
  }
}

/* Bias, epilogue and store of v, pixel r's sums for output block j of
 * group grp (block grp * nb + j) of image bn. */
static void store_acc(bconv *c, kir_kernel *k, kir_block *b, kir_expr *bn, kir_expr *grp,
                      int j, kir_expr *p, kir_expr *v) {
  int kb = c->kb;
  kir_expr *ocb = ADD(MUL(grp, I(c->nb)), I(j)), *c0 = MUL(ocb, I(kb));
  if (c->bb >= 0) v = kir_bin(k, KIR_ADD, v, kir_loadv(k, c->bb, c0, kb, NULL));
  kir_expr *yi = MUL(ADD(MUL(ADD(MUL(bn, I(c->OC / kb)), ocb), I(c->P)), p), I(kb));
  if (c->ep) v = bep_apply(c->ep, b, v, yi, c0);
  kir_store(k, b, c->by, yi, v, NULL);
}

/* A task's image bn, channel-block group grp and run (or group of runs)
 * `in` from its index t, with `inner` runs per channel-block group: runs
 * innermost, so that a thread's consecutive tasks share one group's
 * weights, or with c->groups_inner the groups innermost, so that they
 * share one run's input (conv_order). */
static void task_split(const bconv *c, kir_kernel *k, kir_expr *t, int64_t inner,
                       kir_expr **in, kir_expr **bn, kir_expr **grp) {
  int64_t ngrp = c->OC / c->kb / c->nb;
  if (c->groups_inner) {
    kir_expr *rest = DIV(t, I(ngrp));
    *grp = REM(t, I(ngrp));
    *in = REM(rest, I(inner));
    *bn = DIV(rest, I(inner));
    return;
  }
  kir_expr *rest = DIV(t, I(inner));
  *in = REM(t, I(inner));
  *bn = DIV(rest, I(ngrp));
  *grp = REM(rest, I(ngrp));
}

/* Bytes of all of the Conv's f32 weights. */
static int64_t weight_bytes(const bconv *c) {
  return c->OC * c->C * c->w.kernel[0] * c->w.kernel[1] * 4;
}

/* Which tasks follow each other on a thread, by the bytes they would
 * bring from beyond L2 (taken as L2_BYTES):
 *   runs innermost: a group's weights stay hot; the input the Conv reads
 *     comes again for every group when it does not fit L2 (ResNet-50's
 *     1x1 256->64 at 56x56 read its 3.2 MB input 4 times, at 2.26x
 *     onnxruntime's layer time);
 *   groups innermost: one run's input stays hot; all the weights come
 *     again for every task when they do not fit L2 -- so a task is then
 *     the chunked path's S runs (48 pixels), and conv_chunks chunks it.
 * The order with fewer bytes wins; a tie keeps runs innermost. */
static void conv_order(bconv *c) {
  int64_t taps = c->w.kernel[0] * c->w.kernel[1], ngrp = c->OC / c->kb / c->nb;
  int64_t wall = weight_bytes(c);
  int64_t pix = c->H * c->W < c->P * taps ? c->H * c->W : c->P * taps;
  int64_t xread = c->C * pix * 4;
  int64_t t_runs = xread > L2_BYTES ? ngrp * xread : xread;
  int64_t t_groups = wall > L2_BYTES ? ncc_lower_cdiv(c->P, CHUNK_PIXELS) * wall : wall;
  c->groups_inner = ngrp > 1 && t_groups < t_runs;
}

/* One parallel loop over the interior or border pixels:
 * images x channel-block groups x runs, runs innermost so that a thread's
 * consecutive tasks share one group's weights. */
static void conv_pass(bconv *c, kir_kernel *k, kir_block *top, const region *g, bool border) {
  int64_t count = border ? g->n_bord : g->n_int;
  if (count == 0) return;
  int64_t ngrp = c->OC / c->kb / c->nb, runs = ncc_lower_cdiv(count, c->R);
  kir_expr *N = ncc_lower_dim(k, c->n->in[0]->shape.d[0]);
  int vt = kir_var_new(k);
  kir_stmt *lt = kir_for(k, top, vt, I(0), MUL(N, I(ngrp * runs)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *run, *bn, *grp;
  task_split(c, k, kir_var(k, vt), runs, &run, &bn, &grp);
  kir_expr *p[R_MAX], *ih0[R_MAX], *iw0[R_MAX], *xb[R_MAX];
  int64_t ki = c->ki ? c->ki : 1;
  /* image base of the input: plain (n*C)*HW, blocked (n*C/ki)*HW*ki: equal */
  kir_expr *xbase = MUL(bn, I(c->C * c->H * c->W));
  run_pixels(c, k, g, border, run, count, xbase, ki, p, ih0, iw0, xb);
  zero_tile(c, k, &bt);
  kir_expr *lo = I(0), *hi = I(c->C / ki);
  if (border)
    conv_reduce_border(c, k, &bt, grp, xbase, xb, ih0, iw0, lo, hi);
  else
    conv_reduce(c, k, &bt, grp, xb, lo, hi);
  for (int j = 0; j < c->nb; j++)
    for (int r = 0; r < c->R; r++)
      store_acc(c, k, &bt, bn, grp, j, p[r], kir_local_ref(k, c->acc[r][j]));
  kir_body_end(lt, &bt);
}

/* Input-channel chunks, for convolutions whose weights for one task (all
 * C x taps for its nb output blocks) are past CHUNK_ABOVE: every task
 * streamed them through L2 for R pixels only (a 512->512 3x3 at 7x7 ran at
 * 22% of the FMA peak on AVX2; with chunks, 1.5x faster). A task is then S
 * runs, and walks its runs once per chunk of cbk channel blocks (weights
 * of at most CHUNK_BYTES, reused by S*R pixels from L1), keeping the runs'
 * partial sums in a stack scratch; bias and epilogue follow the last
 * chunk (147 KB per task, a 256->256 3x3 at 14x14: 1.1x). Smaller weights
 * stay unchunked: 37-74 KB measured the same either way (L2 serves them).
 * The groups-innermost order with all weights beyond L2 (conv_order) takes
 * this path too, for its S runs per task, with one chunk if they fit. */
static void conv_chunks(bconv *c) {
  int64_t ki = c->ki ? c->ki : 1, nblk = c->C / ki;
  int64_t blk_bytes = ki * c->w.kernel[0] * c->w.kernel[1] * c->nb * c->kb * 4;
  int64_t cbk = CHUNK_BYTES / blk_bytes;
  if (cbk < 1) cbk = 1;
  bool streamed = c->groups_inner && weight_bytes(c) > L2_BYTES;
  c->nchunk = blk_bytes * nblk > CHUNK_ABOVE || streamed ? ncc_lower_cdiv(nblk, cbk) : 1;
  c->cbk = c->nchunk > 1 ? ncc_lower_cdiv(nblk, c->nchunk) : nblk;
  /* S runs per task (the chunked path, even with one chunk) */
  c->S = c->nchunk > 1 || streamed ? ncc_lower_cdiv(CHUNK_PIXELS, c->R) : 1;
}

/* Scratch index of pixel r's partial sums for block j in run slot rr. */
static kir_expr *slot_at(const bconv *c, kir_kernel *k, kir_expr *rr, int r, int j) {
  return MUL(ADD(MUL(rr, I(c->R * c->nb)), I(r * c->nb + j)), I(c->kb));
}

/* conv_pass with input-channel chunks (conv_chunks). */
static void conv_pass_chunked(bconv *c, kir_kernel *k, kir_block *top, const region *g,
                              bool border) {
  int64_t count = border ? g->n_bord : g->n_int;
  if (count == 0) return;
  int kb = c->kb, nb = c->nb, R = c->R;
  int64_t ngrp = c->OC / kb / nb, runs = ncc_lower_cdiv(count, R), nsr = ncc_lower_cdiv(runs, c->S);
  int64_t ki = c->ki ? c->ki : 1, nblk = c->C / ki;
  kir_expr *N = ncc_lower_dim(k, c->n->in[0]->shape.d[0]);
  int vt = kir_var_new(k), vz = kir_var_new(k), vc = kir_var_new(k), vr = kir_var_new(k),
      ve = kir_var_new(k);
  kir_stmt *lt = kir_for(k, top, vt, I(0), MUL(N, I(ngrp * nsr)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *sr, *bn, *grp;
  task_split(c, k, kir_var(k, vt), nsr, &sr, &bn, &grp);
  kir_expr *xbase = MUL(bn, I(c->C * c->H * c->W));
  kir_expr *run0 = MUL(sr, I(c->S));
  kir_expr *nr = kir_min(k, I(c->S), ADD(I(runs), MUL(run0, I(-1))));
  /* the partial sums start at zero */
  kir_stmt *lz = kir_for(k, &bt, vz, I(0), MUL(nr, I(R * nb)), KIR_SERIAL, 0);
  kir_block bz = kir_body_begin();
  kir_store(k, &bz, c->bs, MUL(kir_var(k, vz), I(kb)),
            kir_splat(k, kir_const_f(k, F32, 0.0), kb), NULL);
  kir_body_end(lz, &bz);
  /* per chunk, every run: partial sums in, the chunk's FMAs, partial sums out */
  kir_stmt *lc = kir_for(k, &bt, vc, I(0), I(c->nchunk), KIR_SERIAL, 0);
  kir_block bc = kir_body_begin();
  kir_expr *lo = MUL(kir_var(k, vc), I(c->cbk)), *hi = kir_min(k, ADD(lo, I(c->cbk)), I(nblk));
  kir_stmt *lr = kir_for(k, &bc, vr, I(0), nr, KIR_SERIAL, 0);
  kir_block br = kir_body_begin();
  kir_expr *rr = kir_var(k, vr);
  kir_expr *p[R_MAX], *ih0[R_MAX], *iw0[R_MAX], *xb[R_MAX];
  run_pixels(c, k, g, border, ADD(run0, rr), count, xbase, ki, p, ih0, iw0, xb);
  for (int r = 0; r < R; r++)
    for (int j = 0; j < nb; j++)
      kir_assign(k, &br, c->acc[r][j], kir_loadv(k, c->bs, slot_at(c, k, rr, r, j), kb, NULL));
  if (border)
    conv_reduce_border(c, k, &br, grp, xbase, xb, ih0, iw0, lo, hi);
  else
    conv_reduce(c, k, &br, grp, xb, lo, hi);
  for (int r = 0; r < R; r++)
    for (int j = 0; j < nb; j++)
      kir_store(k, &br, c->bs, slot_at(c, k, rr, r, j), kir_local_ref(k, c->acc[r][j]), NULL);
  kir_body_end(lr, &br);
  kir_body_end(lc, &bc);
  /* bias, epilogue and store of every run */
  kir_stmt *le = kir_for(k, &bt, ve, I(0), nr, KIR_SERIAL, 0);
  kir_block be = kir_body_begin();
  kir_expr *re = kir_var(k, ve);
  run_pixels(c, k, g, border, ADD(run0, re), count, xbase, ki, p, ih0, iw0, xb);
  for (int j = 0; j < nb; j++)
    for (int r = 0; r < R; r++)
      store_acc(c, k, &be, bn, grp, j, p[r], kir_loadv(k, c->bs, slot_at(c, k, re, r, j), kb, NULL));
  kir_body_end(le, &be);
  kir_body_end(lt, &bt);
}

static void lower_bconv(bconv *c, kir_kernel *k) {
  const ncc_node *n = c->n;
  int kb = c->kb;
  c->bx = kir_buf_input(k, bind_index(c->ep, n, 0), F32);
  region g;
  regions(&c->w, c->H, c->W, c->OH, c->OW, c->R, &g);
  /* the border's order once it has a third of the pixels: at 7x7 (24 of
   * 49 in the frame) ResNet-18's 512->512 3x3 Convs, whose weights come
   * from memory, were 1.2-1.4x slower in the interior's order, and no slower
   * in the border's; at 2x2 and 4x4, all or most frame, the border's
   * order made ResNet-18 (64x64 input) 1.35x faster */
  c->tap_major = g.n_bord * 2 > g.n_int;
  c->bw = pack_conv_weights(k, n->in[1], c->nb * kb, c->tap_major);
  c->bb = n->n_in > 2 && n->in[2] ? kir_buf_input(k, bind_index(c->ep, n, 2), F32) : -1;
  c->by = kir_buf_output(k, 0, F32);
  for (int r = 0; r < c->R; r++)
    for (int j = 0; j < c->nb; j++) c->acc[r][j] = kir_local_add(k, F32, kb);
  for (int j = 0; j < c->nb; j++) c->wl[j] = kir_local_add(k, F32, kb);
  conv_order(c);
  conv_chunks(c);
  if (c->S > 1)
    c->bs = kir_buf_local(k, "partial", F32, c->S * c->R * c->nb * kb);
  kir_block top = kir_body_begin();
  for (int border = 0; border < 2; border++)
    (c->S > 1 ? conv_pass_chunked : conv_pass)(c, k, &top, &g, border);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)(c->C * c->w.kernel[0] * c->w.kernel[1]);
}

static void conv_dims(bconv *c, const ncc_node *n, int vw) {
  const ncc_shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
  c->n = n;
  c->kb = ncc_value_block(n->out[0]);
  c->ki = ncc_value_block(n->in[0]);
  c->C = xs->d[1], c->H = xs->d[2], c->W = xs->d[3];
  c->OC = ys->d[1], c->OH = ys->d[2], c->OW = ys->d[3];
  c->P = c->OH * c->OW;
  ncc_lower_conv_tile(c->OC / c->kb, c->kb, vw, c->P, &c->nb, &c->R);
}

/* ---- depthwise Conv: k channels of a pixel per vector ---- */

static void dw_reduce(bconv *c, kir_kernel *k, kir_block *b, kir_expr *cb, kir_expr *safe,
                      kir_expr **xb, kir_expr **ih0, kir_expr **iw0, bool guard) {
  const win *w = &c->w;
  int kb = c->kb;
  int64_t taps = w->kernel[0] * w->kernel[1];
  zero_tile(c, k, b);
  int vkh = kir_var_new(k), vkw = kir_var_new(k);
  kir_stmt *lkh = kir_for(k, b, vkh, I(0), I(w->kernel[0]), KIR_UNROLL, (int)w->kernel[0]);
  kir_block bkh = kir_body_begin();
  kir_stmt *lkw = kir_for(k, &bkh, vkw, I(0), I(w->kernel[1]), KIR_UNROLL, (int)w->kernel[1]);
  kir_block bkw = kir_body_begin();
  {
    kir_expr *kh = kir_var(k, vkh), *kw = kir_var(k, vkw);
    kir_expr *tap = ADD(MUL(kh, I(w->kernel[1])), kw);
    kir_expr *wv = kir_loadv(k, c->bw, MUL(ADD(MUL(cb, I(taps)), tap), I(kb)), kb, NULL);
    kir_expr *off = MUL(ADD(MUL(kh, I(w->dilation[0] * c->W)), MUL(kw, I(w->dilation[1]))), I(kb));
    for (int r = 0; r < c->R; r++) {
      kir_expr *xi = ADD(xb[r], off);
      kir_expr *x;
      kir_expr *acc = kir_local_ref(k, c->acc[r][0]);
      if (guard) {
        /* a tap outside the image reads the plane's first pixel (valid
         * memory) and its FMA is discarded: a masked FMA, with no masked
         * load and no Inf/NaN of that pixel mixed in */
        kir_expr *g = AND(ncc_lower_inside(k, ADD(ih0[r], MUL(kh, I(w->dilation[0]))), c->H),
                          ncc_lower_inside(k, ADD(iw0[r], MUL(kw, I(w->dilation[1]))), c->W));
        x = kir_loadv(k, c->bx, kir_select(k, g, xi, safe), kb, NULL);
        kir_assign(k, &bkw, c->acc[r][0], kir_select(k, g, kir_fma(k, x, wv, acc), acc));
      } else {
        x = kir_loadv(k, c->bx, xi, kb, NULL);
        kir_assign(k, &bkw, c->acc[r][0], kir_fma(k, x, wv, acc));
      }
    }
  }
  kir_body_end(lkw, &bkw);
  kir_body_end(lkh, &bkh);
}

static void dw_pass(bconv *c, kir_kernel *k, kir_block *top, const region *g, bool border) {
  int kb = c->kb;
  int64_t count = border ? g->n_bord : g->n_int;
  if (count == 0) return;
  int64_t CB = c->C / kb, runs = ncc_lower_cdiv(count, c->R);
  kir_expr *N = ncc_lower_dim(k, c->n->in[0]->shape.d[0]);
  int vt = kir_var_new(k);
  kir_stmt *lt = kir_for(k, top, vt, I(0), MUL(N, I(CB * runs)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *t = kir_var(k, vt);
  kir_expr *run = REM(t, I(runs)), *plane = DIV(t, I(runs)); /* n*CB + cb */
  kir_expr *cb = REM(plane, I(CB));
  kir_expr *p[R_MAX], *ih0[R_MAX], *iw0[R_MAX], *xb[R_MAX];
  run_pixels(c, k, g, border, run, count, MUL(plane, I(c->H * c->W * kb)), kb, p, ih0, iw0,
             xb);
  dw_reduce(c, k, &bt, cb, MUL(plane, I(c->H * c->W * kb)), xb, ih0, iw0, border);
  kir_expr *c0 = MUL(cb, I(kb));
  kir_expr *bias = c->bb >= 0 ? kir_loadv(k, c->bb, c0, kb, NULL) : NULL;
  for (int r = 0; r < c->R; r++) {
    kir_expr *v = kir_local_ref(k, c->acc[r][0]);
    if (bias) v = kir_bin(k, KIR_ADD, v, bias);
    kir_expr *yi = MUL(ADD(MUL(plane, I(c->P)), p[r]), I(kb));
    if (c->ep) v = bep_apply(c->ep, &bt, v, yi, c0);
    kir_store(k, &bt, c->by, yi, v, NULL);
  }
  kir_body_end(lt, &bt);
}

/* Depthwise: R pixels x one block of k channels per pass; each tap is a
 * weight vector and R input vectors (bandwidth-bound: few FMAs per load). */
static void lower_dwconv(bconv *c, int vw, kir_kernel *k) {
  const ncc_node *n = c->n;
  int kb = c->kb;
  int regs = vw > 1 ? (kb + vw - 1) / vw : 1;
  c->nb = 1;
  /* 8 pixels, not as many as the registers hold: with the window unrolled
   * LLVM keeps every tap's weights and inputs live, and 14 accumulators
   * spilled (measured 16% slower at 16x16) */
  c->R = (vw >= 16 ? 8 : 6) / regs;
  if (c->R < 1) c->R = 1;
  if (c->R > R_MAX) c->R = R_MAX;
  if (c->R > c->P) c->R = (int)c->P;
  c->bx = kir_buf_input(k, bind_index(c->ep, n, 0), F32);
  c->bw = pack_conv_weights(k, n->in[1], kb, false);
  c->bb = n->n_in > 2 && n->in[2] ? kir_buf_input(k, bind_index(c->ep, n, 2), F32) : -1;
  c->by = kir_buf_output(k, 0, F32);
  for (int r = 0; r < c->R; r++) c->acc[r][0] = kir_local_add(k, F32, kb);
  region g;
  regions(&c->w, c->H, c->W, c->OH, c->OW, c->R, &g);
  kir_block top = kir_body_begin();
  dw_pass(c, k, &top, &g, false);
  dw_pass(c, k, &top, &g, true);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)(c->w.kernel[0] * c->w.kernel[1]);
}

/* ---- pools: one pixel's k channels per vector ---- */

static void lower_pool(const ncc_node *n, const win *w, kir_kernel *k) {
  bool mx = n->op == NCC_OP_MAXPOOL;
  ncc_pool_attrs pa;
  ncc_attrs_pool(n, &pa);
  bool count_pad = pa.count_include_pad;
  const ncc_shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
  int kb = ncc_value_block(n->out[0]);
  int64_t H = xs->d[2], W = xs->d[3], OH = ys->d[2], OW = ys->d[3];
  int bx = kir_buf_input(k, 0, F32), by = kir_buf_output(k, 0, F32);
  int acc = kir_local_add(k, F32, kb), cnt = kir_local_add(k, F32, 1);
  kir_expr *N = ncc_lower_dim(k, xs->d[0]);
  kir_block top = kir_body_begin();
  int vt = kir_var_new(k), vow = kir_var_new(k), vkh = kir_var_new(k), vkw = kir_var_new(k);
  /* t over (image, channel block, output row) */
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(N, I(xs->d[1] / kb * OH)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *t = kir_var(k, vt);
  kir_expr *plane = DIV(t, I(OH)), *oh = REM(t, I(OH));
  kir_stmt *low = kir_for(k, &bt, vow, I(0), I(OW), KIR_SERIAL, 0);
  kir_block bow = kir_body_begin();
  kir_expr *ow = kir_var(k, vow);
  kir_expr *init = kir_const_f(k, F32, mx ? -INFINITY : 0.0);
  kir_assign(k, &bow, acc, kir_splat(k, init, kb));
  kir_assign(k, &bow, cnt, kir_const_f(k, F32, 0.0));
  kir_stmt *lkh = kir_for(k, &bow, vkh, I(0), I(w->kernel[0]), KIR_UNROLL, (int)w->kernel[0]);
  kir_block bkh = kir_body_begin();
  kir_stmt *lkw = kir_for(k, &bkh, vkw, I(0), I(w->kernel[1]), KIR_UNROLL, (int)w->kernel[1]);
  kir_block bkw = kir_body_begin();
  {
    kir_expr *ih = ADD(in_pos(k, oh, w->stride[0], -w->pad_begin[0]), MUL(kir_var(k, vkh), I(w->dilation[0])));
    kir_expr *iw = ADD(in_pos(k, ow, w->stride[1], -w->pad_begin[1]), MUL(kir_var(k, vkw), I(w->dilation[1])));
    kir_expr *g = AND(ncc_lower_inside(k, ih, H), ncc_lower_inside(k, iw, W));
    kir_expr *xi = MUL(ADD(MUL(ADD(MUL(plane, I(H)), ih), I(W)), iw), I(kb));
    /* a tap outside reads the image's first vector (any in-bounds address)
     * and drops it by a select: a masked load with a run-time count cost
     * a mask build and vmaskmovps per tap on AVX2 */
    kir_expr *x = kir_loadv(k, bx, kir_select(k, g, xi, MUL(MUL(plane, I(H * W)), I(kb))), kb, NULL);
    kir_expr *a = kir_local_ref(k, acc);
    kir_expr *pad = kir_splat(k, kir_const_f(k, F32, mx ? -INFINITY : 0.0), kb);
    x = kir_select(k, g, x, pad);
    if (mx) {
      kir_assign(k, &bkw, acc, kir_bin(k, KIR_MAX, a, x));
    } else {
      kir_assign(k, &bkw, acc, kir_bin(k, KIR_ADD, a, x));
      kir_assign(k, &bkw, cnt, kir_bin(k, KIR_ADD, kir_local_ref(k, cnt), kir_cast(k, F32, g)));
    }
  }
  kir_body_end(lkw, &bkw);
  kir_body_end(lkh, &bkh);
  kir_expr *v = kir_local_ref(k, acc);
  if (!mx) {
    kir_expr *den = count_pad ? kir_const_f(k, F32, (double)(w->kernel[0] * w->kernel[1]))
                              : kir_local_ref(k, cnt);
    v = kir_bin(k, KIR_DIV, v, kir_splat(k, den, kb));
  }
  kir_store(k, &bow, by, MUL(ADD(MUL(ADD(MUL(plane, I(OH)), oh), I(OW)), ow), I(kb)), v, NULL);
  kir_body_end(low, &bow);
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = (double)(w->kernel[0] * w->kernel[1]);
}

static void lower_gap(const ncc_node *n, kir_kernel *k) {
  const ncc_shape *xs = &n->in[0]->shape;
  int kb = ncc_value_block(n->in[0]);
  int64_t HW = xs->d[2] * xs->d[3];
  int bx = kir_buf_input(k, 0, F32), by = kir_buf_output(k, 0, F32);
  int acc = kir_local_add(k, F32, kb);
  kir_expr *N = ncc_lower_dim(k, xs->d[0]);
  kir_block top = kir_body_begin();
  int vt = kir_var_new(k), vp = kir_var_new(k);
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(N, I(xs->d[1] / kb)), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *plane = kir_var(k, vt);
  kir_assign(k, &bt, acc, kir_splat(k, kir_const_f(k, F32, 0.0), kb));
  kir_stmt *lp = kir_for(k, &bt, vp, I(0), I(HW), KIR_SERIAL, 0);
  kir_block bp = kir_body_begin();
  kir_expr *xi = MUL(ADD(MUL(plane, I(HW)), kir_var(k, vp)), I(kb));
  kir_assign(k, &bp, acc, kir_bin(k, KIR_ADD, kir_local_ref(k, acc), kir_loadv(k, bx, xi, kb, NULL)));
  kir_body_end(lp, &bp);
  kir_expr *v = kir_bin(k, KIR_DIV, kir_local_ref(k, acc),
                        kir_splat(k, kir_const_f(k, F32, (double)HW), kb));
  kir_store(k, &bt, by, MUL(plane, I(kb)), v, NULL);
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = (double)HW;
}

/* ---- elementwise: one flat loop over the storage ----
 * When every operand is FK_SAME or FK_ONE the storage is walked as one
 * flat vector loop. A per-(image, channel) or per-channel operand (the
 * squeeze-excite scale, a bias) needs the channel of each point: the loops
 * are then rows (image, channel block) x pixels x the k lanes of one pixel,
 * so that operand is one contiguous k-lane load at row*k (image, channel)
 * or (row % (C/k))*k (channel) — no division per element. Rows times
 * chunks of pixels are the parallel loop, so a few wide channel blocks
 * still spread over threads. */

typedef struct flat_ctx {
  ncc_gx gx;
  kir_expr *idx;  /* storage index of the point */
  kir_expr *nc;   /* index of its (image, channel) in an FK_NC operand */
  kir_expr *ch;   /* index of its channel in an FK_CH operand */
  fkind kind[NCC_FUSE_MAX_EXT];
} flat_ctx;

static kir_expr *flat_index(kir_kernel *k, const flat_ctx *c, fkind kind) {
  switch (kind) {
  case FK_ONE: return I(0);
  case FK_NC: return c->nc;
  case FK_CH: return c->ch;
  default: return c->idx;
  }
}

static kir_expr *flat_ext(ncc_gx *x, int e, int lanes) {
  flat_ctx *c = x->ctx;
  (void)lanes; /* scalar code inside the vector loop */
  return kir_load(x->k, ncc_gx_buf(x, e), flat_index(x->k, c, c->kind[e]));
}

typedef struct flat_loops {
  kir_block top, b[3];
  kir_stmt *l[3];
  int depth;
} flat_loops;

/* The loop nest over y's storage; returns the body block to fill and sets
 * c->idx (and c->nc, c->ch when `rows`). */
static kir_block *flat_begin(kir_kernel *k, flat_loops *L, const ncc_value *y, int vw,
                             bool rows, flat_ctx *c) {
  L->top = kir_body_begin();
  kir_mark vm = vw > 1 ? KIR_VECTOR : KIR_SERIAL;
  if (!rows) {
    kir_expr *len = numel(k, y);
    int vb = kir_var_new(k), vi = kir_var_new(k);
    L->l[0] = kir_for(k, &L->top, vb, I(0), kir_cdiv(k, len, FLAT_BLOCK), KIR_PARALLEL, 0);
    L->b[0] = kir_body_begin();
    kir_expr *lo = MUL(kir_var(k, vb), I(FLAT_BLOCK));
    L->l[1] = kir_for(k, &L->b[0], vi, lo, kir_min(k, len, ADD(lo, I(FLAT_BLOCK))), vm, vw);
    L->b[1] = kir_body_begin();
    L->depth = 2;
    c->idx = kir_var(k, vi);
    return &L->b[1];
  }
  int64_t kb = ncc_value_block(y), CB = y->shape.d[1] / kb;
  int64_t HW = y->shape.d[2] * y->shape.d[3];
  int64_t pc = FLAT_BLOCK / kb > 0 ? FLAT_BLOCK / kb : 1; /* pixels per task */
  int64_t nch = (HW + pc - 1) / pc;
  int vt = kir_var_new(k), vp = kir_var_new(k), vc = kir_var_new(k);
  kir_expr *N = ncc_lower_dim(k, y->shape.d[0]);
  L->l[0] = kir_for(k, &L->top, vt, I(0), MUL(N, I(CB * nch)), KIR_PARALLEL, 0);
  L->b[0] = kir_body_begin();
  kir_expr *t = kir_var(k, vt);
  kir_expr *row = nch > 1 ? DIV(t, I(nch)) : t;
  kir_expr *p0 = nch > 1 ? MUL(REM(t, I(nch)), I(pc)) : I(0);
  L->l[1] = kir_for(k, &L->b[0], vp, p0, kir_min(k, I(HW), ADD(p0, I(pc))), KIR_SERIAL, 0);
  L->b[1] = kir_body_begin();
  L->l[2] = kir_for(k, &L->b[1], vc, I(0), I(kb), vm, vw);
  L->b[2] = kir_body_begin();
  L->depth = 3;
  kir_expr *ci = kir_var(k, vc);
  c->idx = ADD(MUL(ADD(MUL(row, I(HW)), kir_var(k, vp)), I(kb)), ci);
  c->nc = ADD(MUL(row, I(kb)), ci);
  c->ch = ADD(MUL(CB > 1 ? REM(row, I(CB)) : I(0), I(kb)), ci);
  return &L->b[2];
}

static void flat_end(kir_kernel *k, flat_loops *L) {
  for (int d = L->depth - 1; d >= 0; d--) kir_body_end(L->l[d], &L->b[d]);
  kir_kernel_set_body(k, &L->top);
}

static void lower_eltwise_node(const ncc_node *n, int vw, kir_kernel *k) {
  kir_expr *x[8];
  int bufs[8], nx = 0;
  flat_ctx c;
  memset(&c, 0, sizeof c);
  fkind kind[8];
  bool rows = false;
  for (int i = 0; i < n->n_in; i++) {
    bufs[i] = n->in[i] ? kir_buf_input(k, i, F32) : -1;
    kind[i] = n->in[i] ? flat_kind(n->in[i], n->out[0]) : FK_NONE;
    rows = rows || kind[i] == FK_NC || kind[i] == FK_CH;
  }
  int by = kir_buf_output(k, 0, F32);
  flat_loops L;
  kir_block *body = flat_begin(k, &L, n->out[0], vw, rows, &c);
  for (int i = 0; i < n->n_in; i++)
    if (n->in[i]) x[nx++] = kir_load(k, bufs[i], flat_index(k, &c, kind[i]));
  kir_store(k, body, by, c.idx, ncc_lower_eltwise_formula(k, n, x, nx, 1), NULL);
  flat_end(k, &L);
  k->cost_per_elem = 1.0;
}

static ncc_status lower_eltwise_group(const ncc_fuse_group *gr, int vw, kir_kernel *k) {
  const ncc_value *y = gr->members[gr->n_members - 1]->out[0];
  flat_ctx c;
  memset(&c, 0, sizeof c);
  ncc_gx_init(&c.gx, k, gr);
  c.gx.ext = flat_ext;
  c.gx.ctx = &c;
  for (int m = 0; m < gr->n_members; m++) {
    const ncc_node *n = gr->members[m];
    if (!elt_op_ok(n) || !ncc_shape_eq(&n->out[0]->shape, &y->shape))
      return NCC_ERR_UNSUPPORTED;
  }
  bool rows = false;
  for (int e = 0; e < gr->n_ext; e++) {
    c.kind[e] = flat_kind(gr->ext[e], y);
    if (c.kind[e] == FK_NONE) return NCC_ERR_UNSUPPORTED;
    rows = rows || c.kind[e] == FK_NC || c.kind[e] == FK_CH;
    ncc_gx_buf(&c.gx, e);
  }
  int by = kir_buf_output(k, 0, F32);
  flat_loops L;
  kir_block *body = flat_begin(k, &L, y, vw, rows, &c);
  ncc_gx_point(&c.gx);
  kir_store(k, body, by, c.idx, ncc_gx_member(&c.gx, body, gr->n_members - 1, 1), NULL);
  flat_end(k, &L);
  k->cost_per_elem = (double)gr->n_members;
  return NCC_OK;
}

/* ---- entry points ---- */


/* bep_apply as the AMX and Winograd kernels' epilogue (ncc_bconv_epi) */
static kir_expr *epi_cb(void *ctx, kir_kernel *k, kir_block *blk, kir_expr *v, kir_expr *yi,
                         kir_expr *c0) {
  (void)k;
  return bep_apply(ctx, blk, v, yi, c0);
}

/* Conv (or depthwise Conv) n with an optional epilogue group: on AMX-BF16
 * tiles where the precision pass made its operands bf16
 * (lower_bconv_amx.c), by Winograd where the pass marked it
 * (lower_wino.c), else the f32 broadcast-FMA kernel. */
static ncc_status lower_conv_kind(const ncc_node *n, bkind kind, const win *w,
                                  const ncc_lower_opts *o, bep *ep, kir_kernel *k) {
  int vw = o->vector_width > 0 ? o->vector_width : 1;
  /* bf16 on tiles, else the winograd pass's choice where its kernel
   * applies, else the direct kernel */
  int m = (int)ncc_attr_int(n, "conv.winograd", 0);
  bool amx = kind == BK_CONV && o->amx_bf16 && vw == 16 && ncc_lower_bconv_amx_fits(n, w);
  bool wino = !amx && kind == BK_CONV && m && ncc_lower_wino_fits(n, w, m, vw);
  if (amx || wino) {
    int bx = kir_buf_input(k, bind_index(ep, n, 0), F32);
    int bb = n->n_in > 2 && n->in[2] ? kir_buf_input(k, bind_index(ep, n, 2), F32) : -1;
    int by = kir_buf_output(k, 0, F32);
    ncc_bconv_epi epi = ep ? epi_cb : NULL;
    return amx ? ncc_lower_bconv_amx(n, w, k, bx, bb, by, epi, ep)
               : ncc_lower_bconv_wino(n, w, m, vw, k, bx, bb, by, epi, ep);
  }
  bconv c;
  memset(&c, 0, sizeof c);
  conv_dims(&c, n, vw);
  c.w = *w;
  c.ep = ep;
  if (kind == BK_DWCONV)
    lower_dwconv(&c, vw, k);
  else
    lower_bconv(&c, k);
  if (c.bw < 0) return ncc_error(NCC_ERR_NOMEM, "out of memory packing Conv weights");
  return NCC_OK;
}

ncc_status ncc_lower_blocked(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  win w;
  bkind kind = classify(n, &w);
  if (kind == BK_NONE) return NCC_ERR_UNSUPPORTED;
  if (kind == BK_CONCAT) return ncc_lower_concat(n, name, o, out);
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  int vw = o->vector_width > 0 ? o->vector_width : 1;
  ncc_status st = NCC_OK;
  switch (kind) {
  case BK_REORDER: lower_reorder(n, vw, k); break;
  case BK_CONV:
  case BK_DWCONV: st = lower_conv_kind(n, kind, &w, o, NULL, k); break;
  case BK_POOL: lower_pool(n, &w, k); break;
  case BK_GAP: lower_gap(n, k); break;
  case BK_ELTWISE: lower_eltwise_node(n, vw, k); break;
  case BK_CONCAT:
  case BK_NONE: break;
  }
  return ncc_lower_finish(k, st, "a blocked kernel", out);
}

ncc_status ncc_lower_blocked_group(const ncc_fuse_group *gr, const char *name,
                                   const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  if (gr->n_members < 2 || gr->n_ext > NCC_FUSE_MAX_EXT) return NCC_ERR_UNSUPPORTED;
  int vw = o->vector_width > 0 ? o->vector_width : 1;
  const ncc_value *y = gr->members[gr->n_members - 1]->out[0];
  if (!y || y->dtype != F32) return NCC_ERR_UNSUPPORTED;
  if (gr->kind == NCC_FUSE_ELTWISE) {
    kir_kernel *k = kir_kernel_new(name);
    if (!k) return NCC_ERR_NOMEM;
    ncc_status st = lower_eltwise_group(gr, vw, k);
    if (st == NCC_ERR_UNSUPPORTED) {
      kir_kernel_free(k);
      return st;
    }
    return ncc_lower_finish(k, st, "a blocked kernel", out);
  }
  if (gr->kind != NCC_FUSE_EPILOGUE) return NCC_ERR_UNSUPPORTED;
  int am = ncc_fuse_anchor(gr);
  if (am < 0) return NCC_ERR_UNSUPPORTED;
  const ncc_node *a = gr->members[am];
  win w;
  bkind kind = a->op == NCC_OP_CONV ? conv_kind(a, &w) : BK_NONE;
  /* the tile is stored in the root's layout: it must be the anchor's */
  if (kind == BK_NONE || !ncc_layout_eq(a->out[0]->layout, y->layout) ||
      !ncc_shape_eq(&a->out[0]->shape, &y->shape))
    return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  bep ep;
  if (!bep_init(&ep, k, gr, am, ncc_value_block(y))) {
    kir_kernel_free(k);
    return NCC_ERR_UNSUPPORTED;
  }
  ncc_status st = lower_conv_kind(a, kind, &w, o, &ep, k);
  return ncc_lower_finish(k, st, "a blocked kernel", out);
}
