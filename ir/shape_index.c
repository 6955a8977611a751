/* ir/shape_index.c — shape rules of the indexing, scatter, resampling,
 * sorting and data-dependent ops (GatherElements ... NonMaxSuppression).
 *
 * Dims that depend on values get a fresh symbol at compile time unless the
 * values are constants. TopK's k and Resize's scales/sizes are known at run
 * time (the executor infers each node again on the concrete inputs, data
 * included), so their rules compute the concrete dims then. Unique,
 * Compress and NonMaxSuppression are NCC_OPF_DYNAMIC: at run time their
 * dims stay NCC_DIM_DATA and the kernel sizes the outputs from the same
 * selection (ir/index_data.c). docs/DYNAMIC-SHAPES.md.
 */
#include <math.h>
#include <string.h>

#include "attrs.h"
#include "einsum.h"
#include "index_data.h"
#include "shape_rule.h"

#define DT_IX_NUM (DT_ANY & ~DT(BOOL))

/* Input i's raw data with its element count, when known (constants at
 * compile time, everything at run time). */
static const void *data_of(ictx *c, int i, int64_t *n) {
  *n = 0;
  if (!has_in(c, i)) return NULL;
  /* a data-dependent op's kernel sizes its outputs at run time: the rule
   * need not select twice */
  if (!c->g && (ncc_op_table[c->n->op].flags & NCC_OPF_DYNAMIC)) return NULL;
  *n = ncc_shape_numel(&IN(c, i)->shape);
  return *n >= 0 ? IN(c, i)->data : NULL;
}

/* A data-dependent dim: its value when the data is known, else a fresh
 * symbol. */
static ncc_status dyn_dim(ictx *c, bool known, int64_t v, int64_t *d) {
  if (known) {
    *d = v;
    return NCC_OK;
  }
  return ncc_si_fresh_dim(c, d);
}

static bool all_static(const ncc_shape *s) {
  for (int i = 0; i < s->rank; i++)
    if (!is_static(s->d[i])) return false;
  return true;
}

ncc_status ncc_rule_gather_elements(ictx *c) {
  ncc_status st;
  int axis;
  const ncc_tinfo *x = IN(c, 0), *ix = IN(c, 1);
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 1)) || (st = ncc_si_check_rank(c, 1, x->shape.rank)) ||
      (st = ncc_attrs_axis_norm(c->n, x->shape.rank, &axis)))
    return st;
  set_out(c, 0, x->dtype, &ix->shape);
  return NCC_OK;
}

ncc_status ncc_rule_gather_nd(ictx *c) {
  ncc_status st;
  int64_t b;
  const ncc_tinfo *x = IN(c, 0), *ix = IN(c, 1);
  int r = x->shape.rank, q = ix->shape.rank;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 1)) || (st = ncc_si_check_min_rank(c, 1, 1)) ||
      (st = ncc_attrs_gather_nd(c->n, &b)))
    return st;
  int64_t last = ix->shape.d[q - 1];
  if (!is_static(last))
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED,
                       "the last dim of indices is symbolic: the output rank depends on it");
  if (b >= q || b >= r || last < 1 || last > r - b)
    return ncc_si_fail(c, NCC_ERR_INPUT,
                       "batch_dims %lld and index depth %lld do not fit data rank %d, "
                       "indices rank %d", (long long)b, (long long)last, r, q);
  for (int k = 0; k < b; k++) {
    int64_t m;
    if (!ncc_si_merge_dim(c->g, x->shape.d[k], ix->shape.d[k], &m))
      return ncc_si_fail(c, NCC_ERR_INPUT, "batch dim %d differs between data and indices",
                         k);
  }
  ncc_shape o = {.rank = 0};
  if ((st = ncc_si_check_out_rank(c, q - 1 + r - (int)b - (int)last))) return st;
  for (int k = 0; k < q - 1; k++) o.d[o.rank++] = ix->shape.d[k];
  for (int k = (int)(b + last); k < r; k++) o.d[o.rank++] = x->shape.d[k];
  set_out(c, 0, x->dtype, &o);
  return NCC_OK;
}

/* ScatterND and ScatterElements: the output is the data's type. */
ncc_status ncc_rule_scatter(ictx *c) {
  ncc_status st;
  ncc_scatter_red red;
  const ncc_tinfo *x = IN(c, 0), *ix = IN(c, 1), *u = IN(c, 2);
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_check_same_dtype(c, 0, 2)) || (st = ncc_attrs_scatter(c->n, &red)) ||
      (st = ncc_si_check_min_rank(c, 0, 1)))
    return st;
  if (red != NCC_SCATTER_NONE && x->dtype == NCC_DT_BOOL)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "dtype bool with a reduction");
  if (c->n->op == NCC_OP_SCATTERELEMENTS) {
    int axis;
    if ((st = ncc_attrs_axis_norm(c->n, x->shape.rank, &axis)) ||
        (st = ncc_si_check_rank(c, 1, x->shape.rank)) ||
        (st = ncc_si_check_rank(c, 2, x->shape.rank)))
      return st;
    for (int k = 0; k < x->shape.rank; k++) {
      int64_t m;
      if (!ncc_si_merge_dim(c->g, ix->shape.d[k], u->shape.d[k], &m))
        return ncc_si_fail(c, NCC_ERR_INPUT, "indices and updates differ in dim %d", k);
    }
  } else {
    int q = ix->shape.rank, r = x->shape.rank;
    if ((st = ncc_si_check_min_rank(c, 1, 1))) return st;
    int64_t last = ix->shape.d[q - 1];
    if (!is_static(last) || last < 1 || last > r)
      return ncc_si_fail(c, NCC_ERR_INPUT, "index depth %lld for data rank %d",
                         (long long)last, r);
    if (u->shape.rank != q - 1 + r - last)
      return ncc_si_fail(c, NCC_ERR_INPUT, "updates has rank %d, expected %lld",
                         u->shape.rank, (long long)(q - 1 + r - last));
  }
  set_out(c, 0, x->dtype, &x->shape);
  return NCC_OK;
}

ncc_status ncc_rule_depth_space(ictx *c) {
  ncc_status st;
  ncc_depth_space_attrs a;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_rank(c, 0, 4)) ||
      (st = ncc_attrs_depth_space(c->n, &a)))
    return st;
  int64_t b = a.blocksize, bb = b * b;
  ncc_shape o = x->shape;
  bool d2s = c->n->op == NCC_OP_DEPTHTOSPACE;
  for (int k = 1; k < 4; k++) {
    int64_t d = x->shape.d[k];
    bool chan = k == 1;
    if (!is_static(d)) {
      if (b != 1 && (st = ncc_si_fresh_dim(c, &o.d[k]))) return st;
      continue;
    }
    int64_t div = chan == d2s ? (chan ? bb : b) : 0;
    if (div) {
      if (d % div)
        return ncc_si_fail(c, NCC_ERR_INPUT, "dim %d (%lld) is not a multiple of %lld", k,
                           (long long)d, (long long)div);
      o.d[k] = d / div;
    } else if (__builtin_mul_overflow(d, chan ? bb : b, &o.d[k])) {
      return ncc_si_fail(c, NCC_ERR_INPUT, "output size overflows");
    }
  }
  set_out(c, 0, x->dtype, &o);
  return NCC_OK;
}

/* Resize and Upsample: the resized axes' sizes from sizes (input 3) or
 * scales (input 2; Upsample-9: input 1; Upsample-7: the attribute), with
 * axes and keep_aspect_ratio_policy (rounded half up), as ONNX's reference
 * computes them; the kernel reads the output dims it is given. */
ncc_status ncc_rule_resize(ictx *c) {
  ncc_status st;
  ncc_resize_attrs a;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64 | DT(U8) | DT(I8))) ||
      (st = ncc_attrs_resize(c->n, &a)))
    return st;
  if (a.antialias && a.mode == NCC_RS_NEAREST)
    return ncc_si_fail(c, NCC_ERR_INPUT, "antialias with mode nearest");
  int axes[NCC_MAX_RANK], na = r;
  for (int i = 0; i < r; i++) axes[i] = i;
  if (a.n_axes >= 0) {
    bool seen[NCC_MAX_RANK] = {false};
    na = a.n_axes;
    for (int i = 0; i < na; i++) {
      if ((st = ncc_si_norm_axis(c, "axis", a.axes[i], r, false, &axes[i]))) return st;
      if (seen[axes[i]]) return ncc_si_fail(c, NCC_ERR_INPUT, "axes repeat %d", axes[i]);
      seen[axes[i]] = true;
    }
  }
  bool up = c->n->op == NCC_OP_UPSAMPLE;
  int si = up ? 1 : 2, zi = 3;
  int64_t ns = 0;
  const void *sd = data_of(c, si, &ns);
  bool has_s = has_in(c, si) && ncc_shape_numel(&IN(c, si)->shape) != 0;
  bool has_z = !up && has_in(c, zi) && ncc_shape_numel(&IN(c, zi)->shape) != 0;
  if (up && a.n_scales >= 0) has_s = true;
  if (has_s == has_z)
    return ncc_si_fail(c, NCC_ERR_INPUT, "exactly one of scales and sizes must be given");
  if (has_s && !(up && a.n_scales >= 0) && (st = ncc_si_check_dtype(c, si, DT_F16_F32_F64)))
    return st;
  if (has_z && (st = ncc_si_check_index(c, zi))) return st;
  ncc_shape o = x->shape;
  double sc[NCC_MAX_RANK];
  /* per axis: static when the input dim and the scale/size are known; a
   * symbolic dim under scale 1 stays that symbol (Resize of [N,C,H,W] by
   * [1,1,2,2] keeps N); a dim that needs what is not known yet is fresh */
  bool fresh[NCC_MAX_RANK] = {false};
  if (has_s) {
    bool known = (up && a.n_scales >= 0) || sd;
    int64_t cnt = up && a.n_scales >= 0 ? a.n_scales : ns;
    if (known && cnt != na)
      return ncc_si_fail(c, NCC_ERR_INPUT, "%lld scales for %d axes", (long long)cnt, na);
    for (int i = 0; i < na; i++) {
      int64_t d = x->shape.d[axes[i]];
      if (!known) {
        fresh[i] = true;
        continue;
      }
      sc[i] = up && a.n_scales >= 0 ? a.scales[i] : ncc_idx_read(IN(c, si)->dtype, sd, i);
      if (!(sc[i] > 0))
        return ncc_si_fail(c, NCC_ERR_INPUT, "scale %d is %g", i, sc[i]);
      if (!is_static(d)) {
        fresh[i] = sc[i] != 1;
        continue;
      }
      double v = floor(sc[i] * (double)d);
      if (!(v < 0x1p62)) return ncc_si_fail(c, NCC_ERR_INPUT, "output size overflows");
      o.d[axes[i]] = (int64_t)v;
    }
  } else {
    int64_t v[NCC_CONTENT_MAX];
    int n;
    bool known;
    if ((st = ncc_si_input_ints(c, zi, v, NCC_CONTENT_MAX, &n, &known))) return st;
    if (known && n != na)
      return ncc_si_fail(c, NCC_ERR_INPUT, "%d sizes for %d axes", n, na);
    double s = a.keep == NCC_RS_NOT_LARGER ? INFINITY : 0;
    bool keep_known = known;
    for (int i = 0; i < na; i++) {
      int64_t d = x->shape.d[axes[i]];
      if (!known) {
        fresh[i] = true;
        continue;
      }
      if (!ncc_dim_is_sym(v[i]) && v[i] < 0)
        return ncc_si_fail(c, NCC_ERR_INPUT, "size %d is %lld", i, (long long)v[i]);
      o.d[axes[i]] = v[i]; /* a symbol carried as content stays that symbol */
      if (ncc_dim_is_sym(v[i]) || !is_static(d)) {
        keep_known = false;
        continue;
      }
      double f = (double)v[i] / (double)d;
      if (a.keep == NCC_RS_NOT_LARGER && f < s) s = f;
      if (a.keep == NCC_RS_NOT_SMALLER && f > s) s = f;
    }
    for (int i = 0; known && a.keep != NCC_RS_STRETCH && i < na; i++) {
      if (keep_known) o.d[axes[i]] = (int64_t)(s * (double)x->shape.d[axes[i]] + 0.5);
      else fresh[i] = true;
    }
  }
  for (int i = 0; i < na; i++)
    if (fresh[i] && (st = ncc_si_fresh_dim(c, &o.d[axes[i]]))) return st;
  set_out(c, 0, x->dtype, &o);
  return NCC_OK;
}

ncc_status ncc_rule_grid_sample(ictx *c) {
  ncc_status st;
  ncc_grid_sample_attrs a;
  const ncc_tinfo *x = IN(c, 0), *g = IN(c, 1);
  int r = x->shape.rank;
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_dtype(c, 1, DT_F16_F32_F64)) ||
      (st = ncc_attrs_grid_sample(c->n, &a)) || (st = ncc_si_check_min_rank(c, 0, 3)) ||
      (st = ncc_si_check_rank(c, 1, r)))
    return st;
  if (r > 5)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "%d spatial dims (at most 3)", r - 2);
  if (a.mode == NCC_RS_CUBIC && r != 4)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "cubic mode on %d spatial dims (only 2)",
                       r - 2);
  if (is_static(g->shape.d[r - 1]) && g->shape.d[r - 1] != r - 2)
    return ncc_si_fail(c, NCC_ERR_INPUT, "grid's last dim is %lld, expected %d",
                       (long long)g->shape.d[r - 1], r - 2);
  ncc_shape o = x->shape;
  if (!ncc_si_merge_dim(c->g, x->shape.d[0], g->shape.d[0], &o.d[0]))
    return ncc_si_fail(c, NCC_ERR_INPUT, "X and grid differ in the batch dim");
  for (int k = 2; k < r; k++) o.d[k] = g->shape.d[k - 1];
  set_out(c, 0, x->dtype, &o);
  return NCC_OK;
}

ncc_status ncc_rule_topk(ictx *c) {
  ncc_status st;
  ncc_sort_attrs a;
  int axis, n;
  int64_t k[NCC_CONTENT_MAX];
  bool known;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = ncc_si_check_dtype(c, 0, DT_IX_NUM)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 1)) || (st = ncc_attrs_sort(c->n, &a)) ||
      (st = ncc_si_norm_axis(c, "axis", a.axis, x->shape.rank, false, &axis)) ||
      (st = ncc_si_input_ints(c, 1, k, NCC_CONTENT_MAX, &n, &known)))
    return st;
  if (ncc_shape_numel(&IN(c, 1)->shape) != 1)
    return ncc_si_fail(c, NCC_ERR_INPUT, "K must hold one value");
  ncc_shape o = x->shape;
  int64_t d = x->shape.d[axis];
  if (known && !ncc_dim_is_sym(k[0])) {
    if (k[0] < 0 || (is_static(d) && k[0] > d))
      return ncc_si_fail(c, NCC_ERR_INPUT, "K is %lld for a dim of %lld", (long long)k[0],
                         (long long)d);
    o.d[axis] = k[0];
  } else if (known) {
    o.d[axis] = k[0]; /* a symbol carried as content (k = Shape(x)[i]) */
  } else if ((st = ncc_si_fresh_dim(c, &o.d[axis]))) {
    return st;
  }
  set_out(c, 0, x->dtype, &o);
  set_out(c, 1, NCC_DT_I64, &o);
  return NCC_OK;
}

ncc_status ncc_rule_argreduce(ictx *c) {
  ncc_status st;
  ncc_sort_attrs a;
  int axis;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = ncc_si_check_dtype(c, 0, DT_IX_NUM)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_sort(c->n, &a)) ||
      (st = ncc_si_norm_axis(c, "axis", a.axis, x->shape.rank, false, &axis)))
    return st;
  ncc_shape o = {.rank = 0};
  for (int k = 0; k < x->shape.rank; k++) {
    if (k != axis) o.d[o.rank++] = x->shape.d[k];
    else if (a.keepdims) o.d[o.rank++] = 1;
  }
  set_out(c, 0, NCC_DT_I64, &o);
  return NCC_OK;
}

ncc_status ncc_rule_unique(ictx *c) {
  ncc_status st;
  bool sorted, has_axis;
  int64_t axis_v, n = 0, nu = 0;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank, axis = 0;
  if ((st = ncc_si_check_dtype(c, 0, DT_IX_NUM)) || (st = ncc_attrs_unique(c->n, &sorted)) ||
      (st = ncc_attrs_opt_axis(c->n, &has_axis, &axis_v)))
    return st;
  if (has_axis && (st = ncc_si_norm_axis(c, "axis", axis_v, r, false, &axis))) return st;
  const void *d = data_of(c, 0, &n);
  int64_t outer = 1, len = n, inner = 1;
  if (d && has_axis) {
    len = x->shape.d[axis];
    for (int k = 0; k < axis; k++) outer *= x->shape.d[k];
    for (int k = axis + 1; k < r; k++) inner *= x->shape.d[k];
  }
  if (d && (st = ncc_idx_unique(x->dtype, d, outer, len, inner, sorted, NULL, NULL, NULL,
                                &nu)))
    return st == NCC_ERR_NOMEM ? ncc_si_nomem() : st;
  int64_t u;
  if ((st = dyn_dim(c, d != NULL, nu, &u))) return st;
  ncc_shape y = {.rank = 1, .d = {u}}, v = {.rank = 1, .d = {len}};
  if (has_axis) {
    y = x->shape;
    y.d[axis] = u;
    v.d[0] = x->shape.d[axis];
  } else if (!d) {
    dprod p;
    ncc_si_dprod_init(&p);
    for (int k = 0; k < r; k++) ncc_si_dprod_mul(&p, x->shape.d[k]);
    if ((st = ncc_si_dprod_dim(c, &p, &v.d[0]))) return st;
  }
  set_out(c, 0, x->dtype, &y);
  ncc_shape one = {.rank = 1, .d = {u}};
  for (int k = 1; k < c->n->n_out; k++) set_out(c, k, NCC_DT_I64, k == 2 ? &v : &one);
  return NCC_OK;
}

ncc_status ncc_rule_compress(ictx *c) {
  ncc_status st;
  bool has_axis;
  int64_t axis_v, nc = 0;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank, axis = 0;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_dtype(c, 1, DT(BOOL))) ||
      (st = ncc_si_check_rank(c, 1, 1)) || (st = ncc_attrs_opt_axis(c->n, &has_axis, &axis_v)))
    return st;
  if (has_axis && (st = ncc_si_norm_axis(c, "axis", axis_v, r, false, &axis))) return st;
  const void *d = data_of(c, 1, &nc);
  int64_t lim = has_axis ? x->shape.d[axis] : ncc_shape_numel(&x->shape);
  int64_t cnt = 0;
  /* entries past the axis are ignored, as ONNX Runtime does (numpy raises;
   * ONNX only says that a shorter condition drops the rest) */
  if (d && lim >= 0) cnt = ncc_idx_count_nonzero(NCC_DT_BOOL, d, nc < lim ? nc : lim);
  ncc_shape o = {.rank = 1};
  if (has_axis) o = x->shape;
  if ((st = dyn_dim(c, d != NULL && lim >= 0, cnt, &o.d[has_axis ? axis : 0]))) return st;
  set_out(c, 0, x->dtype, &o);
  return NCC_OK;
}

ncc_status ncc_rule_reverse_sequence(ictx *c) {
  ncc_status st;
  int b, t;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 2)) || (st = ncc_si_check_rank(c, 1, 1)) ||
      (st = ncc_attrs_reverse_sequence(c->n, &b, &t)))
    return st;
  int64_t m;
  if (!ncc_si_merge_dim(c->g, x->shape.d[b], IN(c, 1)->shape.d[0], &m))
    return ncc_si_fail(c, NCC_ERR_INPUT, "sequence_lens has %lld entries for %lld batches",
                       (long long)IN(c, 1)->shape.d[0], (long long)x->shape.d[b]);
  set_out(c, 0, x->dtype, &x->shape);
  return NCC_OK;
}

ncc_status ncc_rule_einsum(ictx *c) {
  ncc_status st;
  const char *eq;
  int nin = c->n->n_in, ranks[NCC_EINSUM_MAX_IN];
  ncc_einsum e;
  char err[256];
  if ((st = ncc_attrs_einsum(c->n, &eq))) return st;
  if (nin > NCC_EINSUM_MAX_IN)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "%d operands (at most %d)", nin,
                       NCC_EINSUM_MAX_IN);
  for (int i = 0; i < nin; i++) {
    if ((st = ncc_si_check_dtype(c, i, DT_IX_NUM)) || (st = ncc_si_check_same_dtype(c, 0, i)))
      return st;
    ranks[i] = rank_of(c, i);
  }
  if (!ncc_einsum_parse(eq, nin, ranks, &e, err, sizeof err))
    return ncc_si_fail(c, NCC_ERR_INPUT, "%s", err);
  int64_t size[NCC_EINSUM_LABELS];
  for (int l = 0; l < NCC_EINSUM_LABELS; l++) size[l] = -2; /* unseen */
  for (int i = 0; i < nin; i++)
    for (int k = 0; k < e.rank[i]; k++) {
      int l = e.lab[i][k];
      int64_t d = IN(c, i)->shape.d[k];
      if (size[l] == -2 || (is_static(size[l]) && size[l] == 1)) size[l] = d;
      else if (!(is_static(d) && d == 1) && !ncc_si_merge_dim(c->g, size[l], d, &size[l]))
        return ncc_si_fail(c, NCC_ERR_INPUT, "subscript of operand %d dim %d is %lld, "
                           "elsewhere %lld", i, k, (long long)d, (long long)size[l]);
    }
  ncc_shape o = {.rank = e.out_rank};
  for (int k = 0; k < e.out_rank; k++) o.d[k] = size[e.out_lab[k]] == -2 ? 1 : size[e.out_lab[k]];
  set_out(c, 0, IN(c, 0)->dtype, &o);
  return NCC_OK;
}

/* A scalar (or 1-element) optional input of NonMaxSuppression as double;
 * dflt when omitted or empty. */
static bool scalar_in(ictx *c, int i, double dflt, double *v) {
  int64_t n = 0;
  *v = dflt;
  if (!has_in(c, i) || ncc_shape_numel(&IN(c, i)->shape) == 0) return true;
  const void *d = data_of(c, i, &n);
  if (!d) return false;
  *v = ncc_idx_read(IN(c, i)->dtype, d, 0);
  return true;
}

/* The parameters of a NonMaxSuppression node over concrete inputs;
 * false when some input's data is not known. Shared with the kernel. */
static bool nms_params_of(ictx *c, ncc_nms_params *p) {
  double mo, iou, sc;
  bool center = false;
  ncc_attrs_nms(c->n, &center);
  /* all three read (each sets its default), then whether all are known */
  bool k1 = scalar_in(c, 2, 0, &mo), k2 = scalar_in(c, 3, 0, &iou);
  bool ok = scalar_in(c, 4, NAN, &sc) && k1 && k2;
  *p = (ncc_nms_params){.batches = IN(c, 0)->shape.d[0], .classes = IN(c, 1)->shape.d[1],
                        .boxes = IN(c, 0)->shape.d[1], .max_out = mo > 0x1p62 ? (int64_t)1 << 62 : (int64_t)mo,
                        .iou = iou, .score = sc, .center = center};
  return ok;
}

ncc_status ncc_rule_nms(ictx *c) {
  ncc_status st;
  bool center;
  const ncc_tinfo *b = IN(c, 0), *s = IN(c, 1);
  if ((st = ncc_si_check_dtype(c, 0, DT_F16_F32_F64)) || (st = ncc_si_check_same_dtype(c, 0, 1)) ||
      (st = ncc_si_check_rank(c, 0, 3)) || (st = ncc_si_check_rank(c, 1, 3)) ||
      (st = ncc_attrs_nms(c->n, &center)))
    return st;
  if (has_in(c, 2) && (st = ncc_si_check_index(c, 2))) return st;
  for (int i = 3; i < 5; i++)
    if (has_in(c, i) && (st = ncc_si_check_dtype(c, i, DT_F16_F32_F64))) return st;
  int64_t m;
  if ((is_static(b->shape.d[2]) && b->shape.d[2] != 4) ||
      !ncc_si_merge_dim(c->g, b->shape.d[0], s->shape.d[0], &m) ||
      !ncc_si_merge_dim(c->g, b->shape.d[1], s->shape.d[2], &m))
    return ncc_si_fail(c, NCC_ERR_INPUT, "boxes [B,S,4] and scores [B,C,S] do not match");
  ncc_nms_params p;
  int64_t nb, ns, cnt = 0;
  bool known = nms_params_of(c, &p) && data_of(c, 0, &nb) && data_of(c, 1, &ns) &&
               all_static(&b->shape) && all_static(&s->shape);
  if (known && (st = ncc_idx_nms(&p, b->dtype, IN(c, 0)->data, IN(c, 1)->data, NULL, &cnt)))
    return st == NCC_ERR_NOMEM ? ncc_si_nomem() : st;
  ncc_shape o = {.rank = 2, .d = {0, 3}};
  if ((st = dyn_dim(c, known, cnt, &o.d[0]))) return st;
  set_out(c, 0, NCC_DT_I64, &o);
  return NCC_OK;
}
