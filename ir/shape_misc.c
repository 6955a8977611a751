/* ir/shape_misc.c — shape rules of Det, Col2Im, CenterCropPad, AffineGrid,
 * MaxUnpool, MaxRoiPool, the two losses (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss) and the signal ops (Hann/Hamming/Blackman
 * windows, DFT, STFT, MelWeightMatrix).
 *
 * Several output dims are read from small integer inputs (sizes, lengths,
 * axes): known at compile time when those are constants, else fresh
 * symbols that a run binds (the run's inference sees the data).
 */
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"
#include "window.h"


/* A scalar (or 1-element) integer input's value; *known false when it is
 * not known yet. Absent: dflt, known. */
static ncc_status scalar_in(ictx *c, int i, int64_t dflt, int64_t *v, bool *known) {
  *v = dflt;
  *known = true;
  if (!has_in(c, i)) return NCC_OK;
  ncc_status st;
  int n;
  if ((st = ncc_si_check_index(c, i))) return st;
  if (ncc_shape_numel(&IN(c, i)->shape) != 1)
    return ncc_si_fail(c, NCC_ERR_INPUT, "input %d must be a scalar", i);
  if ((st = ncc_si_input_ints(c, i, v, 1, &n, known))) return st;
  if (*known && ncc_dim_is_sym(*v)) *known = false;
  return NCC_OK;
}

/* dim = v when known and not negative (negative: an input error), else a
 * fresh symbol. */
static ncc_status dim_or_fresh(ictx *c, bool known, int64_t v, int64_t *d) {
  if (!known) return ncc_si_fresh_dim(c, d);
  if (v < 0) return ncc_si_fail(c, NCC_ERR_INPUT, "negative size %lld", (long long)v);
  *d = v;
  return NCC_OK;
}

/* The values of 1-D integer input i (count = its static length). */
static ncc_status vec_in(ictx *c, int i, int64_t *v, int *count, bool *known) {
  ncc_status st;
  if ((st = ncc_si_check_index(c, i)) || (st = ncc_si_check_rank(c, i, 1))) return st;
  int64_t len = IN(c, i)->shape.d[0];
  if (!is_static(len) || len > NCC_MAX_RANK)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "input %d must have a static length <= %d",
                       i, NCC_MAX_RANK);
  *count = (int)len;
  int n;
  if ((st = ncc_si_input_ints(c, i, v, NCC_MAX_RANK, &n, known))) return st;
  for (int k = 0; *known && k < n; k++)
    if (ncc_dim_is_sym(v[k])) *known = false;
  return NCC_OK;
}

/* Det: [*, M, M] -> [*]. */
ncc_status ncc_rule_det(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_min_rank(c, 0, 2)))
    return st;
  ncc_shape o = IN(c, 0)->shape;
  int64_t m;
  if (!ncc_si_merge_dim(c->g, o.d[o.rank - 1], o.d[o.rank - 2], &m))
    return ncc_si_fail(c, NCC_ERR_INPUT, "matrices are not square");
  o.rank -= 2;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* Col2Im: [N, C * prod(block), L] -> [N, C, image_shape...]. */
ncc_status ncc_rule_col2im(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_rank(c, 0, 3)))
    return st;
  int64_t img[NCC_MAX_RANK], blk[NCC_MAX_RANK];
  int ni, nb;
  bool ki, kb;
  if ((st = vec_in(c, 1, img, &ni, &ki)) || (st = vec_in(c, 2, blk, &nb, &kb))) return st;
  if (ni != nb || ni < 1 || ni + 2 > NCC_MAX_RANK)
    return ncc_si_fail(c, NCC_ERR_INPUT, "image_shape and block_shape must have one "
                       "length in [1, %d]", NCC_MAX_RANK - 2);
  const ncc_shape *x = &IN(c, 0)->shape;
  ncc_shape o = {.rank = ni + 2, .d = {x->d[0]}};
  int64_t prod = 1;
  for (int i = 0; kb && i < nb; i++) {
    if (blk[i] < 1) return ncc_si_fail(c, NCC_ERR_INPUT, "block_shape must be positive");
    prod *= blk[i];
  }
  if (kb && is_static(x->d[1])) {
    if (x->d[1] % prod)
      return ncc_si_fail(c, NCC_ERR_INPUT, "input dim 1 (%lld) is not a multiple of the "
                         "block size %lld", (long long)x->d[1], (long long)prod);
    o.d[1] = x->d[1] / prod;
  } else if ((st = ncc_si_fresh_dim(c, &o.d[1]))) {
    return st;
  }
  for (int i = 0; i < ni; i++)
    if ((st = dim_or_fresh(c, ki, ki ? img[i] : 0, &o.d[i + 2]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* CenterCropPad: the input with each listed axis resized to `shape`. */
ncc_status ncc_rule_centercroppad(ictx *c) {
  ncc_status st;
  int axes[NCC_MAX_RANK], na, ns;
  int64_t v[NCC_MAX_RANK];
  bool known;
  ncc_shape o = IN(c, 0)->shape;
  if ((st = ncc_attrs_crop_axes(c->n, o.rank, axes, &na)) ||
      (st = vec_in(c, 1, v, &ns, &known)))
    return st;
  if (ns != na)
    return ncc_si_fail(c, NCC_ERR_INPUT, "shape has %d entries for %d axes", ns, na);
  for (int i = 0; i < na; i++)
    if ((st = dim_or_fresh(c, known, known ? v[i] : 0, &o.d[axes[i]]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* AffineGrid: theta [N, 2, 3] and size [N, C, H, W] -> [N, H, W, 2];
 * theta [N, 3, 4] and size [N, C, D, H, W] -> [N, D, H, W, 3]. */
ncc_status ncc_rule_affinegrid(ictx *c) {
  ncc_status st;
  bool align, known;
  int64_t v[NCC_MAX_RANK];
  int ns;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_rank(c, 0, 3)) ||
      (st = ncc_attrs_align_corners(c->n, &align)) || (st = vec_in(c, 1, v, &ns, &known)))
    return st;
  if (ns != 4 && ns != 5)
    return ncc_si_fail(c, NCC_ERR_INPUT, "size must have 4 or 5 entries, got %d", ns);
  int sp = ns - 2;
  const int64_t *t = IN(c, 0)->shape.d;
  if ((is_static(t[1]) && t[1] != sp) || (is_static(t[2]) && t[2] != sp + 1))
    return ncc_si_fail(c, NCC_ERR_INPUT, "theta must be [N, %d, %d]", sp, sp + 1);
  ncc_shape o = {.rank = sp + 2, .d = {t[0]}};
  for (int i = 0; i < sp; i++)
    if ((st = dim_or_fresh(c, known, known ? v[i + 2] : 0, &o.d[i + 1]))) return st;
  o.d[sp + 1] = sp;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* MaxUnpool: output_shape, or (in - 1) * stride + kernel - pads. */
ncc_status ncc_rule_maxunpool(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_min_rank(c, 0, 3)) ||
      (st = ncc_si_check_dtype(c, 1, DT(I64))))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  ncc_window w;
  if ((st = ncc_window_decode(c->n, x->rank - 2, NULL, &w))) return st;
  ncc_shape o = *x;
  if (has_in(c, 2)) {
    int64_t v[NCC_MAX_RANK];
    int n;
    bool known;
    if ((st = vec_in(c, 2, v, &n, &known))) return st;
    if (n != x->rank)
      return ncc_si_fail(c, NCC_ERR_INPUT, "output_shape has %d entries, expected %d", n,
                         x->rank);
    for (int i = 2; i < n; i++)
      if ((st = dim_or_fresh(c, known, known ? v[i] : 0, &o.d[i]))) return st;
  } else {
    for (int i = 0; i < w.rank; i++) {
      int64_t in = x->d[i + 2];
      if (!is_static(in)) {
        if ((st = ncc_si_fresh_dim(c, &o.d[i + 2]))) return st;
        continue;
      }
      o.d[i + 2] = (in - 1) * w.stride[i] + w.kernel[i] - w.pad_begin[i] - w.pad_end[i];
      if (o.d[i + 2] < 0) return ncc_si_fail(c, NCC_ERR_INPUT, "negative output size");
    }
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* MaxRoiPool: X [N, C, H, W], rois [R, 5] -> [R, C, ph, pw]. */
ncc_status ncc_rule_maxroipool(ictx *c) {
  ncc_status st;
  int64_t pooled[2];
  float scale;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_rank(c, 0, 4)) ||
      (st = ncc_si_check_same_dtype(c, 0, 1)) || (st = ncc_si_check_rank(c, 1, 2)) ||
      (st = ncc_attrs_roipool(c->n, pooled, &scale)))
    return st;
  if (is_static(IN(c, 1)->shape.d[1]) && IN(c, 1)->shape.d[1] != 5)
    return ncc_si_fail(c, NCC_ERR_INPUT, "rois must be [R, 5]");
  ncc_shape o = {.rank = 4,
                 .d = {IN(c, 1)->shape.d[0], IN(c, 0)->shape.d[1], pooled[0], pooled[1]}};
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* The losses: scores [N, C, d...], target [N, d...], weight [C]. */
static ncc_status loss_common(ictx *c) {
  ncc_status st;
  ncc_loss_attrs la;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_min_rank(c, 0, 2)) ||
      (st = ncc_si_check_index(c, 1)) || (st = ncc_si_check_rank(c, 1, rank_of(c, 0) - 1)) ||
      (st = ncc_attrs_loss(c->n, &la)))
    return st;
  if (has_in(c, 2) &&
      ((st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_si_check_rank(c, 2, 1))))
    return st;
  ncc_shape o = IN(c, 1)->shape, scalar = {.rank = 0};
  set_out(c, 0, IN(c, 0)->dtype, la.reduction == NCC_LOSS_NONE ? &o : &scalar);
  return NCC_OK;
}

ncc_status ncc_rule_nllloss(ictx *c) { return loss_common(c); }

ncc_status ncc_rule_sceloss(ictx *c) {
  ncc_status st = loss_common(c);
  if (!st && c->n->n_out > 1) set_out(c, 1, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return st;
}

/* Hann/Hamming/BlackmanWindow: size -> [size] of output_datatype. */
ncc_status ncc_rule_window_fn(ictx *c) {
  ncc_status st;
  ncc_signal_attrs sa;
  int64_t size;
  bool known;
  if ((st = ncc_attrs_signal(c->n, &sa)) || (st = scalar_in(c, 0, 0, &size, &known)))
    return st;
  ncc_shape o = {.rank = 1};
  if ((st = dim_or_fresh(c, known, size, &o.d[0]))) return st;
  set_out(c, 0, sa.out_dtype, &o);
  return NCC_OK;
}

/* DFT: [..., L, 1|2] -> [..., n, 2] along `axis` (input 2 from opset 20,
 * the attribute before; -2 when neither), n = dft_length (default L; 2(L-1)
 * for an inverse one-sided transform), halved + 1 when one-sided forward;
 * an inverse one-sided transform gives real output ([..., n, 1]). */
ncc_status ncc_rule_dft(ictx *c) {
  ncc_status st;
  ncc_signal_attrs sa;
  int64_t len, axis;
  bool klen, kaxis;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_min_rank(c, 0, 3)) ||
      (st = ncc_attrs_signal(c->n, &sa)) || (st = scalar_in(c, 1, -1, &len, &klen)) ||
      (st = scalar_in(c, 2, sa.has_axis ? sa.axis : -2, &axis, &kaxis)))
    return st;
  ncc_shape o = IN(c, 0)->shape;
  int r = o.rank;
  int64_t last = o.d[r - 1];
  if (is_static(last) && last != 1 && last != 2)
    return ncc_si_fail(c, NCC_ERR_INPUT, "the last dim must be 1 or 2, got %lld",
                       (long long)last);
  o.d[r - 1] = sa.inverse && sa.onesided ? 1 : 2;
  bool resized = has_in(c, 1) || sa.onesided;
  if (!kaxis) { /* which dim changes is not known yet */
    for (int i = 0; resized && i < r - 1; i++)
      if ((st = ncc_si_fresh_dim(c, &o.d[i]))) return st;
    set_out(c, 0, IN(c, 0)->dtype, &o);
    return NCC_OK;
  }
  int ax;
  if ((st = ncc_si_norm_axis(c, "axis", axis, r, false, &ax))) return st;
  if (ax == r - 1)
    return ncc_si_fail(c, NCC_ERR_INPUT, "axis %lld is the complex dim", (long long)axis);
  int64_t in = o.d[ax];
  if (!klen || !is_static(in)) {
    if (resized && (st = ncc_si_fresh_dim(c, &o.d[ax]))) return st;
  } else {
    int64_t n = has_in(c, 1) ? len : sa.inverse && sa.onesided ? 2 * (in - 1) : in;
    if (n < 1) return ncc_si_fail(c, NCC_ERR_INPUT, "dft_length %lld", (long long)n);
    o.d[ax] = sa.onesided && !sa.inverse ? n / 2 + 1 : n;
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* STFT: signal [B, L, 1|2], frame_step, window [W], frame_length ->
 * [B, 1 + (L - W) / step, W (or W / 2 + 1 one-sided), 2]. */
ncc_status ncc_rule_stft(ictx *c) {
  ncc_status st;
  ncc_signal_attrs sa;
  int64_t step, fl;
  bool kstep, kfl;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_rank(c, 0, 3)) ||
      (st = ncc_attrs_signal(c->n, &sa)) || (st = scalar_in(c, 1, 1, &step, &kstep)) ||
      (st = scalar_in(c, 3, -1, &fl, &kfl)))
    return st;
  const int64_t *x = IN(c, 0)->shape.d;
  if (has_in(c, 2)) {
    if ((st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_si_check_rank(c, 2, 1)))
      return st;
    if (!has_in(c, 3)) fl = IN(c, 2)->shape.d[0], kfl = is_static(fl);
  } else if (!has_in(c, 3)) {
    fl = x[1], kfl = is_static(fl);
  }
  if (sa.onesided && is_static(x[2]) && x[2] == 2)
    return ncc_si_fail(c, NCC_ERR_INPUT, "a one-sided STFT of a complex signal");
  ncc_shape o = {.rank = 4, .d = {x[0], 0, 0, 2}};
  if (kstep && kfl && is_static(x[1])) {
    if (step < 1 || fl < 1 || fl > x[1])
      return ncc_si_fail(c, NCC_ERR_INPUT, "frame_step %lld, frame_length %lld, signal %lld",
                         (long long)step, (long long)fl, (long long)x[1]);
    o.d[1] = 1 + (x[1] - fl) / step;
  } else if ((st = ncc_si_fresh_dim(c, &o.d[1]))) {
    return st;
  }
  if ((st = dim_or_fresh(c, kfl, kfl ? (sa.onesided ? fl / 2 + 1 : fl) : 0, &o.d[2])))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] of output_datatype. */
ncc_status ncc_rule_melweight(ictx *c) {
  ncc_status st;
  ncc_signal_attrs sa;
  int64_t bins, len, rate;
  bool kb, kl, kr;
  if ((st = ncc_attrs_signal(c->n, &sa)) || (st = scalar_in(c, 0, 0, &bins, &kb)) ||
      (st = scalar_in(c, 1, 0, &len, &kl)) || (st = scalar_in(c, 2, 0, &rate, &kr)) ||
      (st = ncc_si_check_dtype(c, 3, DT_F16_F32_F64)) || (st = ncc_si_check_same_dtype(c, 3, 4)))
    return st;
  if (kr && rate <= 0) return ncc_si_fail(c, NCC_ERR_INPUT, "sample_rate must be positive");
  ncc_shape o = {.rank = 2};
  if ((st = dim_or_fresh(c, kl, kl ? len / 2 + 1 : 0, &o.d[0])) ||
      (st = dim_or_fresh(c, kb, bins, &o.d[1])))
    return st;
  set_out(c, 0, sa.out_dtype, &o);
  return NCC_OK;
}
