/* codegen/lower_conv.c — 2-D Conv, MaxPool and AveragePool (NCHW) as
 * direct loop nests, vectorized along the output row.
 *
 * The innermost `vector` loop runs over output columns; the window loops
 * (input channel, kh, kw) sit inside it as scalar code whose accumulators
 * become per-lane vectors (see kir.h). Padding is a guarded load: lanes
 * whose input position falls outside the image read nothing and count as
 * 0 (Conv), are skipped (MaxPool) or are not counted (AveragePool without
 * count_include_pad). With stride 1 the loads are contiguous (masked where
 * the window crosses the border), otherwise gathers.
 *
 * Conv computes ob output channels per pass (16 with AVX-512, 8 with
 * narrower vectors, fewer when the group's channel count needs it) so every
 * input vector loaded feeds ob FMAs whose weights are broadcast straight
 * from memory: the implicit-GEMM micro-kernel of a direct convolution, one
 * pixel vector x ob channels, reduced over ic and the (unrolled) window.
 * Constant weights are repacked at compile time so one tap's ob weights
 * share a cache line. With stride 1 and OW == W the pixels of an image are
 * walked flat (p = oh*OW + ow), so narrow rows (28 = 16 + 12 lanes) fill
 * whole vectors. The parallel loop spans images x channel blocks x rows (or
 * flat pixel runs), which keeps threads busy at batch 1. This is the
 * general path (any padding, stride, dilation, group, depthwise); 1x1
 * stride-1 convolutions run as a GEMM (lower_matmul.c).
 */
#include <math.h>
#include <string.h>

#include "../ir/attrs.h"
#include "../ir/ctime.h"
#include "lower.h"

#define F32 NCC_DT_F32
#define OB_MAX 16 /* output channels per pass, at most */

typedef ncc_qconv qconv;

typedef ncc_window win;

static bool f32_4d(const ncc_value *v) {
  return v && v->dtype == F32 && v->shape.rank == 4;
}

static bool conv_ok(const ncc_node *n, win *w) {
  if (n->n_out != 1 || !f32_4d(n->out[0]) || n->n_in < 2) return false;
  const ncc_value *x = n->in[0], *wt = n->in[1];
  if (!f32_4d(x) || !f32_4d(wt) || !ncc_shape_is_static(&wt->shape)) return false;
  if (!ncc_lower_window(n, w)) return false;
  int64_t g = w->group;
  int64_t oc = wt->shape.d[0];
  if (oc % g != 0 || ncc_dim_is_sym(x->shape.d[1]) ||
      x->shape.d[1] != wt->shape.d[1] * g)
    return false;
  if (n->n_in > 2 && n->in[2]) {
    const ncc_value *b = n->in[2];
    if (b->dtype != F32 || b->shape.rank != 1 || b->shape.d[0] != oc) return false;
  }
  return true;
}

/* 8-bit integer MaxPool (quantized models: the max commutes with the
 * quantisation), input and output of one dtype. */
static bool int8_maxpool(const ncc_node *n) {
  const ncc_value *x = n->in[0], *y = n->out[0];
  return n->op == NCC_OP_MAXPOOL && x && y && x->shape.rank == 4 && y->shape.rank == 4 &&
         (x->dtype == NCC_DT_U8 || x->dtype == NCC_DT_I8) && y->dtype == x->dtype;
}

static bool pool_ok(const ncc_node *n, win *w) {
  if (n->n_out < 1 || n->n_in < 1) return false;
  if (!int8_maxpool(n) && (!f32_4d(n->out[0]) || !f32_4d(n->in[0]))) return false;
  if (n->n_out > 1 && n->out[1]) return false; /* MaxPool Indices */
  if (!ncc_lower_window(n, w)) return false;
  return !(n->op == NCC_OP_AVGPOOL && w->ceil_mode);
}

bool ncc_lower_conv_supports(const ncc_node *n) {
  win w;
  if (n->op == NCC_OP_CONV) return conv_ok(n, &w);
  qconv q;
  if (n->op == NCC_OP_QLINEARCONV) return ncc_lower_qconv_ok(n, &w, &q);
  if (n->op == NCC_OP_MAXPOOL || n->op == NCC_OP_AVGPOOL) return pool_ok(n, &w);
  return false;
}

#define I(v) kir_const_i(k, (v))
#define ADD(a, b) kir_add(k, (a), (b))
#define MUL(a, b) kir_mul(k, (a), (b))

/* Input position along one axis and whether it is inside [0, size). */
static kir_expr *in_pos(kir_kernel *k, kir_expr *o, int64_t s, kir_expr *kk,
                        int64_t d, int64_t p) {
  return ADD(ADD(MUL(o, I(s)), MUL(kk, I(d))), I(-p));
}

static kir_expr *inside(kir_kernel *k, kir_expr *pos, kir_expr *size) {
  return kir_bin(k, KIR_AND, kir_bin(k, KIR_GE, pos, I(0)),
                 kir_bin(k, KIR_LT, pos, size));
}

typedef struct dims {
  kir_expr *N, *C, *H, *W, *OC, *OH, *OW;
} dims;

static void get_dims(kir_kernel *k, const ncc_node *n, dims *d) {
  const ncc_shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
  d->N = ncc_lower_dim(k, xs->d[0]);
  d->C = ncc_lower_dim(k, xs->d[1]);
  d->H = ncc_lower_dim(k, xs->d[2]);
  d->W = ncc_lower_dim(k, xs->d[3]);
  d->OC = ncc_lower_dim(k, ys->d[1]);
  d->OH = ncc_lower_dim(k, ys->d[2]);
  d->OW = ncc_lower_dim(k, ys->d[3]);
}

/* Loops over (oh, ow-vector) inside the parallel body; returns the body of
 * the vector loop and sets *oh, *ow. */
static kir_block *row_loops(kir_kernel *k, kir_block *outer, const dims *d,
                            int vw, kir_expr **oh, kir_expr **ow,
                            kir_stmt **l_oh, kir_block *b_oh, kir_stmt **l_ow,
                            kir_block *b_ow) {
  int voh = kir_var_new(k), vow = kir_var_new(k);
  *l_oh = kir_for(k, outer, voh, I(0), d->OH, KIR_SERIAL, 0);
  *b_oh = kir_body_begin();
  *l_ow = kir_for(k, b_oh, vow, I(0), d->OW, vw > 1 ? KIR_VECTOR : KIR_SERIAL, vw);
  *b_ow = kir_body_begin();
  *oh = kir_var(k, voh);
  *ow = kir_var(k, vow);
  return b_ow;
}

/* Output channels per pass: as many accumulators as the registers allow
 * (each is one vector of output columns; 16 of 32 with AVX-512 leaves room
 * for the input vector), dividing the group's channel count. */
static int pick_ob(int64_t ocg, int vw) {
  int top = vw >= 16 ? 16 : 8;
  for (int ob = top; ob > 1; ob /= 2)
    if (ocg % ob == 0) return ob;
  return 1;
}

/* The weights buffer: constant weights are repacked at compile time as
 * [OC/ob][ICg*KH*KW][ob], so the ob broadcasts of one tap come from one
 * cache line; others are read in place ([OC][ICg][KH][KW]). -1 on OOM. */
static int pack_weights(kir_kernel *k, const ncc_node *n, int ob, ncc_epilogue *ep) {
  const ncc_value *wt = n->in[1];
  if (wt->kind != NCC_VAL_CONST || !wt->data || ob == 1)
    return kir_buf_input(k, ncc_lower_bind_index(ep, n, 1), F32);
  int64_t oc = wt->shape.d[0];
  int64_t taps = wt->shape.d[1] * wt->shape.d[2] * wt->shape.d[3];
  size_t count = (size_t)(oc * taps);
  double t0 = ncc_ctime_pack_begin();
  float *dst = ncc_malloc(count * sizeof(float));
  if (!dst) return -1;
  const float *src = wt->data;
  for (int64_t o = 0; o < oc; o++)
    for (int64_t t = 0; t < taps; t++)
      dst[((o / ob) * taps + t) * ob + o % ob] = src[o * taps + t];
  ncc_ctime_pack_end(t0);
  int b = kir_buf_add(k, "packed_w", F32, false);
  k->bufs[b].bind = KIR_BIND_DATA;
  k->bufs[b].data = dst;
  k->bufs[b].data_bytes = count * sizeof(float);
  k->bufs[b].owned = dst;
  return b;
}

/* The vector kernel's weights: [OC/ob][IC4*KH*KW][ob] words, so the ob
 * weights of one quad share a cache line. */
static int64_t vnni_slot(const void *ctx, int64_t o, int64_t kq) {
  const int64_t *d = ctx; /* ob, quads */
  return ((o / d[0]) * d[1] + kq) * d[0] + o % d[0];
}

/* QLinearConv's output from the i32 accumulator of channel oc. */
static kir_expr *qconv_requant(kir_kernel *k, const qconv *q, int bc, int bm,
                               kir_expr *acc, kir_expr *oc) {
  kir_expr *v = kir_bin(k, KIR_ADD, acc, kir_load(k, bc, oc));
  return ncc_lower_requant(k, v, kir_load(k, bm, oc), (double)q->zy, q->ydt);
}

static ncc_status lower_conv(const ncc_node *n, const win *wn, int vw, bool flat,
                             kir_kernel *k, ncc_epilogue *ep, const qconv *q) {
  const ncc_value *wt = n->in[q ? 3 : 1];
  int64_t G = wn->group;
  int64_t OCg = wt->shape.d[0] / G, ICg = wt->shape.d[1];
  int ob = pick_ob(OCg, vw);
  /* the channel loop steps over quads of input channels in integer mode */
  int64_t nic = q ? q->ic4 : ICg;
  int64_t nob = OCg / ob, taps = nic * wn->kernel[0] * wn->kernel[1];
  ncc_dtype acc_dt = q ? NCC_DT_I32 : F32;
  int bx = kir_buf_input(k, ncc_lower_bind_index(ep, n, 0), q ? q->xdt : F32);
  int bw, bb = -1, bm = -1;
  if (q) {
    int64_t oc = wt->shape.d[0], dims_ob[2] = {ob, taps};
    if (!ncc_lower_qconv_pack(k, n, q, oc, oc * taps, vnni_slot, dims_ob, &bw, &bb, &bm))
      return ncc_error(NCC_ERR_NOMEM, "out of memory packing QLinearConv weights");
  } else {
    bw = pack_weights(k, n, ob, ep);
    if (bw < 0) return ncc_error(NCC_ERR_NOMEM, "out of memory packing Conv weights");
    bb = n->n_in > 2 && n->in[2] ? kir_buf_input(k, ncc_lower_bind_index(ep, n, 2), F32) : -1;
  }
  bool packed = k->bufs[bw].bind == KIR_BIND_DATA;
  int by = kir_buf_output(k, 0, q ? q->ydt : F32);
  dims d;
  get_dims(k, n, &d);
  int acc[OB_MAX], xl = kir_local_add(k, acc_dt, 1);
  for (int j = 0; j < ob; j++) acc[j] = kir_local_add(k, acc_dt, 1);

  kir_block top = kir_body_begin();
  int vt = kir_var_new(k);
  /* t covers images x channel blocks x spans, spans innermost so a thread's
   * consecutive spans share a block's weights; a span is an output row, or
   * CP flat pixels. Spans keep enough tasks for threads at batch 1. */
  int64_t cp = 4 * (int64_t)vw;
  kir_expr *npix = MUL(d.OH, d.OW);
  kir_expr *spans = flat ? kir_cdiv(k, npix, cp) : d.OH;
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(MUL(d.N, I(G * nob)), spans), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *t = kir_var(k, vt);
  kir_expr *span = kir_bin(k, KIR_REM, t, spans);
  kir_expr *blk = kir_bin(k, KIR_DIV, t, spans);
  kir_expr *bn = kir_bin(k, KIR_DIV, blk, I(G * nob));
  kir_expr *r = kir_bin(k, KIR_REM, blk, I(G * nob));
  kir_expr *g = kir_bin(k, KIR_DIV, r, I(nob));
  kir_expr *oc0 = ADD(MUL(g, I(OCg)), MUL(kir_bin(k, KIR_REM, r, I(nob)), I(ob)));
  kir_expr *oh, *ow, *pix = NULL;
  kir_stmt *l_ow;
  int vp = kir_var_new(k);
  kir_mark vm = vw > 1 ? KIR_VECTOR : KIR_SERIAL;
  if (flat) { /* a vector loop over the span's pixels, p = oh*OW + ow */
    kir_expr *lo = MUL(span, I(cp));
    l_ow = kir_for(k, &bt, vp, lo, kir_min(k, ADD(lo, I(cp)), npix), vm, vw);
    pix = kir_var(k, vp);
    oh = kir_bin(k, KIR_DIV, pix, d.OW);
    ow = kir_bin(k, KIR_REM, pix, d.OW);
  } else { /* a vector loop along output row `span` */
    l_ow = kir_for(k, &bt, vp, I(0), d.OW, vm, vw);
    oh = span;
    ow = kir_var(k, vp);
  }
  kir_block b_ow = kir_body_begin(), *body = &b_ow;
  kir_expr *zero = q ? kir_cast(k, NCC_DT_I32, I(0)) : kir_const_f(k, F32, 0.0);
  for (int j = 0; j < ob; j++) kir_assign(k, body, acc[j], zero);
  int vic = kir_var_new(k), vkh = kir_var_new(k), vkw = kir_var_new(k);
  kir_stmt *l_ic = kir_for(k, body, vic, I(0), I(nic), KIR_SERIAL, 0);
  kir_block b_ic = kir_body_begin();
  /* the window loops unrolled: constant tap offsets, no loop overhead; a
   * window past 3x3 (a 7x7 stem) keeps its row loop, as 49 unrolled taps
   * made one basic block whose instruction selection took LLVM 1 s on this
   * host and 28 s for a baseline x86-64 (no VNNI: dot4 as shifts), for no
   * run-time gain */
  bool unroll_kh = wn->kernel[0] * wn->kernel[1] <= 9;
  kir_stmt *l_kh = kir_for(k, &b_ic, vkh, I(0), I(wn->kernel[0]), unroll_kh ? KIR_UNROLL : KIR_SERIAL,
                           unroll_kh ? (int)wn->kernel[0] : 0);
  kir_block b_kh = kir_body_begin();
  kir_stmt *l_kw = kir_for(k, &b_kh, vkw, I(0), I(wn->kernel[1]), KIR_UNROLL, (int)wn->kernel[1]);
  kir_block b_kw = kir_body_begin();
  {
    kir_expr *ic = kir_var(k, vic), *kh = kir_var(k, vkh), *kw = kir_var(k, vkw);
    kir_expr *ih = in_pos(k, oh, wn->stride[0], kh, wn->dilation[0], wn->pad_begin[0]);
    kir_expr *iw = in_pos(k, ow, wn->stride[1], kw, wn->dilation[1], wn->pad_begin[1]);
    kir_expr *xi[4];
    for (int c = 0; c < (q ? 4 : 1); c++) {
      kir_expr *cin = ADD(MUL(g, I(ICg)), q ? ADD(MUL(ic, I(4)), I(c)) : ic);
      if (flat) /* W == OW, stride 1: the tap is a constant offset from p */
        xi[c] = ADD(ADD(MUL(ADD(MUL(bn, d.C), cin), MUL(d.H, d.W)), pix),
                    ADD(MUL(ADD(MUL(kh, I(wn->dilation[0])), I(-wn->pad_begin[0])), d.W),
                        ADD(MUL(kw, I(wn->dilation[1])), I(-wn->pad_begin[1]))));
      else
        xi[c] = ADD(MUL(ADD(MUL(ADD(MUL(bn, d.C), cin), d.H), ih), d.W), iw);
    }
    bool padded = wn->pad_begin[0] || wn->pad_begin[1] || wn->pad_end[0] || wn->pad_end[1];
    kir_expr *guard = padded ? kir_bin(k, KIR_AND, inside(k, ih, d.H), inside(k, iw, d.W))
                             : NULL;
    kir_assign(k, &b_kw, xl,
               q ? ncc_lower_qconv_x4(k, q, bx, ICg, ic, xi, guard) : kir_load_guarded(k, bx, xi[0], guard));
    for (int j = 0; j < ob; j++) {
      kir_expr *oc = ADD(oc0, I(j));
      kir_expr *tap = ADD(MUL(ADD(MUL(ic, I(wn->kernel[0])), kh), I(wn->kernel[1])), kw);
      kir_expr *wi = packed ? ADD(ADD(MUL(oc0, I(taps)), MUL(tap, I(ob))), I(j))
                            : ADD(MUL(oc, I(taps)), tap);
      kir_expr *x = kir_local_ref(k, xl), *a = kir_local_ref(k, acc[j]);
      kir_assign(k, &b_kw, acc[j],
                 q ? kir_dot4(k, x, kir_load(k, bw, wi), a) : kir_fma(k, x, kir_load(k, bw, wi), a));
    }
  }
  kir_body_end(l_kw, &b_kw);
  kir_body_end(l_kh, &b_kh);
  kir_body_end(l_ic, &b_ic);
  for (int j = 0; j < ob; j++) {
    kir_expr *oc = ADD(oc0, I(j));
    kir_expr *v = kir_local_ref(k, acc[j]);
    if (q) v = qconv_requant(k, q, bb, bm, v, oc);
    else if (bb >= 0) v = kir_bin(k, KIR_ADD, v, kir_load(k, bb, oc));
    if (ep) { /* fused elementwise chain on the accumulator */
      ep->coord[0] = bn;
      ep->coord[1] = oc;
      ep->coord[2] = flat ? pix : oh;
      ep->coord[3] = ow;
      ep->acc = v;
      v = ncc_epilogue_apply(ep, body);
    }
    kir_expr *yi = flat ? ADD(MUL(ADD(MUL(bn, d.OC), oc), MUL(d.OH, d.OW)), pix)
                        : ADD(MUL(ADD(MUL(ADD(MUL(bn, d.OC), oc), d.OH), oh), d.OW), ow);
    kir_store(k, body, by, yi, v, NULL);
  }
  kir_body_end(l_ow, &b_ow);
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = 2.0 * (double)(nic * wn->kernel[0] * wn->kernel[1]);
  return NCC_OK;
}

static ncc_status lower_pool(const ncc_node *n, const win *wn, int vw,
                             kir_kernel *k) {
  bool mx = n->op == NCC_OP_MAXPOOL;
  ncc_pool_attrs pa;
  ncc_attrs_pool(n, &pa);
  bool count_pad = pa.count_include_pad;
  /* 8-bit MaxPool: an i32 accumulator starting below every value */
  ncc_dtype dt = n->in[0]->dtype, adt = dt == F32 ? F32 : NCC_DT_I32;
  int bx = kir_buf_input(k, 0, dt), by = kir_buf_output(k, 0, dt);
  dims d;
  get_dims(k, n, &d);
  int acc = kir_local_add(k, adt, 1), cnt = kir_local_add(k, F32, 1);
  kir_expr *lowest = dt == F32 ? kir_const_f(k, F32, -INFINITY) : kir_cast(k, adt, I(-129));
  kir_block top = kir_body_begin();
  int vt = kir_var_new(k);
  kir_stmt *lt = kir_for(k, &top, vt, I(0), MUL(d.N, d.C), KIR_PARALLEL, 0);
  kir_block bt = kir_body_begin();
  kir_expr *plane = kir_var(k, vt); /* n*C + c */
  kir_expr *oh, *ow;
  kir_stmt *l_oh, *l_ow;
  kir_block b_oh, b_ow;
  kir_block *body = row_loops(k, &bt, &d, vw, &oh, &ow, &l_oh, &b_oh, &l_ow, &b_ow);
  kir_assign(k, body, acc, mx ? lowest : kir_const_f(k, F32, 0.0));
  kir_assign(k, body, cnt, kir_const_f(k, F32, 0.0));
  int vkh = kir_var_new(k), vkw = kir_var_new(k);
  kir_stmt *l_kh = kir_for(k, body, vkh, I(0), I(wn->kernel[0]), KIR_SERIAL, 0);
  kir_block b_kh = kir_body_begin();
  kir_stmt *l_kw = kir_for(k, &b_kh, vkw, I(0), I(wn->kernel[1]), KIR_SERIAL, 0);
  kir_block b_kw = kir_body_begin();
  {
    kir_expr *ih = in_pos(k, oh, wn->stride[0], kir_var(k, vkh), wn->dilation[0], wn->pad_begin[0]);
    kir_expr *iw = in_pos(k, ow, wn->stride[1], kir_var(k, vkw), wn->dilation[1], wn->pad_begin[1]);
    kir_expr *guard = kir_bin(k, KIR_AND, inside(k, ih, d.H), inside(k, iw, d.W));
    kir_expr *xi = ADD(MUL(ADD(MUL(plane, d.H), ih), d.W), iw);
    kir_expr *x = kir_cast(k, adt, kir_load_guarded(k, bx, xi, guard));
    kir_expr *a = kir_local_ref(k, acc);
    if (mx) {
      kir_assign(k, &b_kw, acc, kir_bin(k, KIR_MAX, a, kir_select(k, guard, x, lowest)));
    } else {
      kir_assign(k, &b_kw, acc, kir_bin(k, KIR_ADD, a, x));
      kir_assign(k, &b_kw, cnt,
                 kir_bin(k, KIR_ADD, kir_local_ref(k, cnt), kir_cast(k, F32, guard)));
    }
  }
  kir_body_end(l_kw, &b_kw);
  kir_body_end(l_kh, &b_kh);
  kir_expr *v = kir_local_ref(k, acc);
  if (!mx) {
    kir_expr *den = count_pad ? kir_const_f(k, F32, (double)(wn->kernel[0] * wn->kernel[1]))
                              : kir_local_ref(k, cnt);
    v = kir_bin(k, KIR_DIV, v, den);
  }
  if (dt != F32) /* a window of padding only: the dtype's lowest value */
    v = kir_cast(k, dt, kir_bin(k, KIR_MAX, v, kir_cast(k, adt, I(dt == NCC_DT_U8 ? 0 : -128))));
  kir_expr *yi = ADD(MUL(ADD(MUL(plane, d.OH), oh), d.OW), ow);
  kir_store(k, body, by, yi, v, NULL);
  kir_body_end(l_ow, &b_ow);
  kir_body_end(l_oh, &b_oh);
  kir_body_end(lt, &bt);
  kir_kernel_set_body(k, &top);
  k->cost_per_elem = (double)(wn->kernel[0] * wn->kernel[1]);
  return NCC_OK;
}

static bool flat_ok(const ncc_node *n, const win *w, int vw);

ncc_status ncc_lower_conv(const ncc_node *n, const char *name,
                          const ncc_lower_opts *o, kir_kernel **out) {
  *out = NULL;
  win w;
  bool conv = n->op == NCC_OP_CONV;
  if (conv) return ncc_lower_conv_ep(n, name, o, NULL, out);
  qconv q;
  if (n->op == NCC_OP_QLINEARCONV) {
    if (!ncc_lower_qconv_ok(n, &w, &q)) return NCC_ERR_UNSUPPORTED;
    kir_kernel *k = kir_kernel_new(name);
    if (!k) return NCC_ERR_NOMEM;
    if (o->amx_int8 && ncc_lower_qconv_amx_fits(n, &w, &q))
      return ncc_lower_finish(k, ncc_lower_qconv_amx(n, &w, &q, k), ncc_op_name(n->op), out);
    int vw = o->vector_width > 0 ? o->vector_width : 1;
    if (ncc_lower_qconv_vec_fits(n, &w, &q, vw))
      return ncc_lower_finish(k, ncc_lower_qconv_vec(n, &w, &q, vw, k), ncc_op_name(n->op), out);
    return ncc_lower_finish(k, lower_conv(n, &w, vw, flat_ok(n, &w, vw), k, NULL, &q),
                            ncc_op_name(n->op), out);
  }
  if (!pool_ok(n, &w)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  int vw = o->vector_width > 0 ? o->vector_width : 1;
  return ncc_lower_finish(k, lower_pool(n, &w, vw, k), ncc_op_name(n->op), out);
}

/* Whether the output pixels of an image can be walked as one flat run
 * p = oh*OW + ow: with stride 1 and OW == W every tap of the window reads
 * x at p plus a constant, so a vector of pixels is one contiguous (masked)
 * load even where it wraps to the next row, and rows narrower than the
 * vector waste no lanes (28 = 16 + 12 would leave 4 of 32 idle). */
static bool flat_ok(const ncc_node *n, const win *w, int vw) {
  const ncc_shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
  if (w->stride[0] != 1 || w->stride[1] != 1 || ncc_dim_is_sym(xs->d[3]) || ncc_dim_is_sym(ys->d[2]) ||
      ncc_dim_is_sym(xs->d[2]) || xs->d[3] != ys->d[3])
    return false;
  /* rows that fill whole vectors gain nothing, and the per-lane row/column
   * of a flat pixel costs a division; a depthwise conv (one channel per
   * group) has too few FMAs per pixel vector to pay for that division */
  int64_t ocg = ys->d[1] / w->group;
  return vw > 1 && ys->d[3] % vw != 0 && ocg > 1;
}

ncc_status ncc_lower_conv_ep(const ncc_node *n, const char *name,
                             const ncc_lower_opts *o, const ncc_fuse_group *gr,
                             kir_kernel **out) {
  *out = NULL;
  win w;
  if (!conv_ok(n, &w)) return NCC_ERR_UNSUPPORTED;
  kir_kernel *k = kir_kernel_new(name);
  if (!k) return NCC_ERR_NOMEM;
  int vw = o->vector_width > 0 ? o->vector_width : 1;
  bool flat = flat_ok(n, &w, vw);
  ncc_epilogue ep, *epp = NULL;
  if (gr) {
    /* the output viewed as [N][OC][OH*OW] (flat) or dim by dim; an operand
     * broadcast over only part of OH*OW needs the latter */
    static const int by_dim[5] = {0, 1, 2, 3, 4}, pixels[4] = {0, 1, 2, 4};
    if (flat && !ncc_epilogue_init(&ep, k, gr, pixels, 3)) flat = false;
    if (!flat && !ncc_epilogue_init(&ep, k, gr, by_dim, 4)) {
      kir_kernel_free(k);
      return NCC_ERR_UNSUPPORTED;
    }
    epp = &ep;
  }
  return ncc_lower_finish(k, lower_conv(n, &w, vw, flat, k, epp, NULL), ncc_op_name(n->op), out);
}
