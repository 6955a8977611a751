/* ir/shape_movement.c — shape and data-movement rules: Reshape, Transpose, Flatten,
 * Squeeze, Unsqueeze, Concat, Split, Slice, Gather, Shape, Expand, Pad; they
 * carry content through, so shape arithmetic stays symbolic.
 */
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"

/* ------------------------------------------------------------------------ */
/* shape and data movement                                                   */

ncc_status ncc_rule_reshape(ictx *c) {
  ncc_status st;
  int len, n;
  bool allowzero, known;
  int64_t v[NCC_CONTENT_MAX];
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_vec_len(c, 1, &len)) || (st = ncc_si_check_out_rank(c, len)) ||
      (st = ncc_attrs_reshape(c->n, &allowzero)) ||
      (st = ncc_si_input_ints(c, 1, v, NCC_CONTENT_MAX, &n, &known)))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  ncc_shape o = {.rank = len};
  if (!known) {
    for (int i = 0; i < len; i++)
      if ((st = ncc_si_fresh_dim(c, &o.d[i]))) return st;
    set_out(c, 0, IN(c, 0)->dtype, &o);
    return NCC_OK;
  }
  int neg = -1;
  bool zero = false;
  for (int i = 0; i < len; i++) {
    int64_t e = v[i];
    if (ncc_dim_is_sym(e)) {
      o.d[i] = e;
    } else if (e == -1) {
      if (neg >= 0) return ncc_si_fail(c, NCC_ERR_INPUT, "shape has more than one -1");
      neg = i;
      o.d[i] = 1;
    } else if (e < -1) {
      return ncc_si_fail(c, NCC_ERR_INPUT, "shape entry %d is %lld", i, (long long)e);
    } else if (e == 0 && !allowzero) {
      if (i >= x->rank)
        return ncc_si_fail(c, NCC_ERR_INPUT,
                    "shape entry %d is 0 (copy) but the input has rank %d", i,
                    x->rank);
      o.d[i] = x->d[i];
    } else {
      zero |= e == 0;
      o.d[i] = e;
    }
  }
  if (allowzero && zero && neg >= 0)
    return ncc_si_fail(c, NCC_ERR_INPUT, "shape has both 0 and -1 with allowzero=1");
  dprod pin, pout;
  ncc_si_dprod_init(&pin);
  ncc_si_dprod_init(&pout);
  for (int i = 0; i < x->rank; i++) ncc_si_dprod_mul(&pin, x->d[i]);
  for (int i = 0; i < len; i++)
    if (i != neg) ncc_si_dprod_mul(&pout, o.d[i]);
  if (pin.ovf || pout.ovf)
    return ncc_si_fail(c, NCC_ERR_INPUT, "element count overflows");
  ncc_si_dprod_cancel(&pin, &pout);
  char a[256], b[256];
  if (neg >= 0) {
    if (pin.n == 0 && pout.n == 0) {
      if (pout.stat == 0 || pin.stat % pout.stat != 0)
        return ncc_si_fail(c, NCC_ERR_INPUT, "cannot reshape %s into %s",
                    ncc_si_fmt_shape(c->g, x, a, sizeof a),
                    ncc_si_fmt_shape(c->g, &o, b, sizeof b));
      o.d[neg] = pin.stat / pout.stat;
    } else if (pin.n == 1 && pout.n == 0 && pin.stat == pout.stat &&
               pout.stat != 0) {
      o.d[neg] = pin.sym[0];
    } else if ((st = ncc_si_fresh_dim(c, &o.d[neg]))) {
      return st;
    }
  } else if (pin.n == 0 && pout.n == 0 && pin.stat != pout.stat) {
    return ncc_si_fail(c, NCC_ERR_INPUT, "cannot reshape %s (%lld elements) into %s",
                ncc_si_fmt_shape(c->g, x, a, sizeof a), (long long)pin.stat,
                ncc_si_fmt_shape(c->g, &o, b, sizeof b));
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  ncc_si_pass_content(c, 0, 0);
  return NCC_OK;
}

ncc_status ncc_rule_transpose(ictx *c) {
  ncc_status st;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank;
  int p[NCC_MAX_RANK];
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_attrs_perm(c->n, r, p)))
    return st;
  ncc_shape o = {.rank = r};
  for (int i = 0; i < r; i++) o.d[i] = x->shape.d[p[i]];
  set_out(c, 0, x->dtype, &o);
  int n = ncc_si_content_slots(x->dtype, &o);
  if (n >= 0 && x->content_len == n) {
    int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK], ci[NCC_MAX_RANK];
    for (int e = 0; e < n; e++) {
      ncc_si_unravel(&o, e, co);
      for (int k = 0; k < r; k++) ci[p[k]] = co[k];
      v[e] = x->content[ncc_si_ravel(&x->shape, ci)];
    }
    set_content(&c->out[0], v, n);
  }
  return NCC_OK;
}

ncc_status ncc_rule_flatten(ictx *c) {
  ncc_status st;
  int axis = 0;
  const ncc_shape *x = &IN(c, 0)->shape;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) ||
      (st = ncc_attrs_axis_norm(c->n, x->rank, &axis)))
    return st;
  dprod lo, hi;
  ncc_si_dprod_init(&lo);
  ncc_si_dprod_init(&hi);
  for (int i = 0; i < x->rank; i++) ncc_si_dprod_mul(i < axis ? &lo : &hi, x->d[i]);
  ncc_shape o = {.rank = 2};
  if ((st = ncc_si_dprod_dim(c, &lo, &o.d[0])) || (st = ncc_si_dprod_dim(c, &hi, &o.d[1])))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);
  ncc_si_pass_content(c, 0, 0);
  return NCC_OK;
}

ncc_status ncc_rule_squeeze(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY))) return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  int r = x->rank, n = 0, len = 0;
  int axes[NCC_CONTENT_MAX];
  bool known = true, sq[NCC_MAX_RANK] = {false};
  ncc_shape o = {.rank = 0};
  if (has_in(c, 1)) {
    if ((st = ncc_si_check_index(c, 1)) || (st = ncc_si_vec_len(c, 1, &len)) ||
        (st = ncc_si_input_axes(c, 1, r, axes, &n, &known)))
      return st;
    if (!known) {
      if (len > r) return ncc_si_fail(c, NCC_ERR_INPUT, "%d axes for rank %d", len, r);
      for (int i = 0; i < r - len; i++)
        if ((st = ncc_si_fresh_dim(c, &o.d[o.rank++]))) return st;
      set_out(c, 0, IN(c, 0)->dtype, &o);
      ncc_si_pass_content(c, 0, 0);
      return NCC_OK;
    }
    for (int i = 0; i < n; i++) {
      int64_t d = x->d[axes[i]];
      if (is_static(d) && d != 1)
        return ncc_si_fail(c, NCC_ERR_INPUT, "cannot squeeze axis %d of size %lld",
                    axes[i], (long long)d);
      sq[axes[i]] = true;
    }
  } else {
    /* Without axes every size-1 dim goes; a symbolic dim might be 1 or not,
     * and the output rank would depend on it. */
    for (int i = 0; i < r; i++) {
      if (!is_static(x->d[i]))
        return ncc_si_fail(c, NCC_ERR_UNSUPPORTED,
                    "Squeeze without axes on a symbolic dim (%d)", i);
      sq[i] = x->d[i] == 1;
    }
  }
  for (int i = 0; i < r; i++)
    if (!sq[i]) o.d[o.rank++] = x->d[i];
  set_out(c, 0, IN(c, 0)->dtype, &o);
  ncc_si_pass_content(c, 0, 0);
  return NCC_OK;
}

ncc_status ncc_rule_unsqueeze(ictx *c) {
  ncc_status st;
  int len, n;
  int axes[NCC_CONTENT_MAX];
  bool known;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_vec_len(c, 1, &len)))
    return st;
  const ncc_shape *x = &IN(c, 0)->shape;
  int ro = x->rank + len;
  if ((st = ncc_si_check_out_rank(c, ro)) ||
      (st = ncc_si_input_axes(c, 1, ro, axes, &n, &known)))
    return st;
  ncc_shape o = {.rank = ro};
  if (!known) {
    for (int i = 0; i < ro; i++)
      if ((st = ncc_si_fresh_dim(c, &o.d[i]))) return st;
  } else {
    bool ins[NCC_MAX_RANK] = {false};
    for (int i = 0; i < n; i++) ins[axes[i]] = true;
    for (int i = 0, j = 0; i < ro; i++) o.d[i] = ins[i] ? 1 : x->d[j++];
  }
  set_out(c, 0, IN(c, 0)->dtype, &o);
  ncc_si_pass_content(c, 0, 0);
  return NCC_OK;
}

ncc_status ncc_rule_concat(ictx *c) {
  ncc_status st;
  int nin = c->n->n_in, r = rank_of(c, 0), axis = 0;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_axis_norm(c->n, r, &axis)))
    return st;
  ncc_shape o = IN(c, 0)->shape;
  dprod sum = {.stat = 0}; /* a sum, kept like a product: static + symbols */
  for (int i = 0; i < nin; i++) {
    const ncc_shape *s = &IN(c, i)->shape;
    if ((st = ncc_si_check_same_dtype(c, 0, i)) || (st = ncc_si_check_rank(c, i, r)))
      return st;
    for (int k = 0; k < r; k++) {
      if (k == axis) continue;
      if (!ncc_si_merge_dim(c->g, o.d[k], s->d[k], &o.d[k]))
        return ncc_si_fail(c, NCC_ERR_INPUT,
                    "input %d has size %lld in dim %d, expected %lld", i,
                    (long long)s->d[k], k, (long long)o.d[k]);
    }
    int64_t d = s->d[axis];
    if (ncc_dim_is_sym(d)) {
      if (sum.n < NCC_MAX_RANK) sum.sym[sum.n] = d;
      sum.n++;
    } else if (__builtin_add_overflow(sum.stat, d, &sum.stat)) {
      return ncc_si_fail(c, NCC_ERR_INPUT, "concatenated size overflows");
    }
  }
  if (sum.n == 0) o.d[axis] = sum.stat;
  else if (sum.n == 1 && sum.stat == 0) o.d[axis] = sum.sym[0];
  else if ((st = ncc_si_fresh_dim(c, &o.d[axis]))) return st;
  set_out(c, 0, IN(c, 0)->dtype, &o);

  int n = ncc_si_content_slots(IN(c, 0)->dtype, &o);
  if (n < 0) return NCC_OK;
  for (int i = 0; i < nin; i++)
    if (IN(c, i)->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK];
  for (int e = 0; e < n; e++) {
    ncc_si_unravel(&o, e, co);
    int i = 0;
    while (co[axis] >= IN(c, i)->shape.d[axis])
      co[axis] -= IN(c, i++)->shape.d[axis];
    v[e] = IN(c, i)->content[ncc_si_ravel(&IN(c, i)->shape, co)];
  }
  set_content(&c->out[0], v, n);
  return NCC_OK;
}

ncc_status ncc_rule_split(ictx *c) {
  ncc_status st;
  int axis = 0, nout = c->n->n_out, num;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_axis_norm(c->n, x->shape.rank, &axis)) ||
      (st = ncc_attrs_split(c->n, &num)))
    return st;
  int64_t dim = x->shape.d[axis];
  int64_t sizes[NCC_CONTENT_MAX];
  bool known = true;
  int n = 0;
  if (nout > NCC_CONTENT_MAX)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "%d outputs (at most %d)", nout,
                NCC_CONTENT_MAX);
  if (has_in(c, 1)) {
    int len;
    if ((st = ncc_si_check_index(c, 1)) || (st = ncc_si_vec_len(c, 1, &len)) ||
        (st = ncc_si_input_ints(c, 1, sizes, NCC_CONTENT_MAX, &n, &known)))
      return st;
    if (len != nout)
      return ncc_si_fail(c, NCC_ERR_INPUT,
                  "split has %d sizes but the node has %d outputs", len, nout);
    if (known) {
      int64_t total = 0;
      bool all_static = true;
      for (int i = 0; i < nout; i++) {
        if (ncc_dim_is_sym(sizes[i])) {
          all_static = false;
        } else if (sizes[i] < 0) {
          return ncc_si_fail(c, NCC_ERR_INPUT, "split size %d is %lld", i,
                      (long long)sizes[i]);
        } else if (__builtin_add_overflow(total, sizes[i], &total)) {
          return ncc_si_fail(c, NCC_ERR_INPUT, "split sizes overflow");
        }
      }
      if (all_static && is_static(dim) && total != dim)
        return ncc_si_fail(c, NCC_ERR_INPUT, "split sizes sum to %lld, dim %d is %lld",
                    (long long)total, axis, (long long)dim);
    }
  } else if (is_static(dim)) {
    int64_t chunk = dim / nout + (dim % nout != 0);
    for (int i = 0; i < nout; i++) sizes[i] = chunk;
    sizes[nout - 1] = dim - chunk * (nout - 1);
    if (sizes[nout - 1] < 0)
      return ncc_si_fail(c, NCC_ERR_INPUT, "cannot split size %lld into %d outputs",
                  (long long)dim, nout);
  } else if (nout == 1) {
    sizes[0] = dim;
  } else {
    known = false;
  }
  for (int i = 0; i < nout; i++) {
    ncc_shape o = x->shape;
    if (!known && (st = ncc_si_fresh_dim(c, &sizes[i]))) return st;
    o.d[axis] = sizes[i];
    set_out(c, i, x->dtype, &o);
  }
  /* Content of each part. */
  if (!known || x->content_len < 0) return NCC_OK;
  int64_t off = 0, co[NCC_MAX_RANK], v[NCC_CONTENT_MAX];
  for (int i = 0; i < nout; i++) {
    ncc_tinfo *o = &c->out[i];
    int m = ncc_si_content_slots(o->dtype, &o->shape);
    if (m < 0) return NCC_OK;
    for (int e = 0; e < m; e++) {
      ncc_si_unravel(&o->shape, e, co);
      co[axis] += off;
      v[e] = x->content[ncc_si_ravel(&x->shape, co)];
    }
    set_content(o, v, m);
    off += sizes[i];
  }
  return NCC_OK;
}

/* Slice bounds at least this large mean "to the end" on a symbolic dim
 * (PyTorch writes INT64_MAX, other exporters INT32_MAX). */
#define SLICE_BIG ((int64_t)INT32_MAX)

/* Size of one sliced dim; *begin gets the clamped start and *exact is set
 * when the result is static. */
static ncc_status slice_dim(ictx *c, int64_t d, int64_t s, int64_t e,
                            int64_t step, int64_t *out, int64_t *begin,
                            bool *exact) {
  *exact = false;
  if (ncc_dim_is_sym(step)) return ncc_si_fresh_dim(c, out);
  if (step == 0) return ncc_si_fail(c, NCC_ERR_INPUT, "slice step is 0");
  bool ss = ncc_dim_is_sym(s), se = ncc_dim_is_sym(e);
  if (!is_static(d)) {
    bool to_end = step == 1 && s == 0 && (e == d || (!se && e >= SLICE_BIG));
    bool reverse = step == -1 && !ss && (s == -1 || s >= SLICE_BIG) && !se &&
                   e <= -SLICE_BIG;
    if (to_end || reverse) {
      *out = d;
      return NCC_OK;
    }
    return ncc_si_fresh_dim(c, out);
  }
  if (ss || se) return ncc_si_fresh_dim(c, out);
  int64_t cnt = 0;
  if (s < 0) s += d; /* d >= 0: cannot overflow */
  if (e < 0) e += d;
  if (d == 0) {
    s = 0;
  } else if (step > 0) {
    s = s < 0 ? 0 : s > d ? d : s;
    e = e < 0 ? 0 : e > d ? d : e;
    cnt = e > s ? (e - s - 1) / step + 1 : 0;
  } else {
    int64_t ns = step == INT64_MIN ? INT64_MAX : -step;
    s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    cnt = s > e ? (s - e - 1) / ns + 1 : 0;
  }
  *out = cnt;
  *begin = s;
  *exact = true;
  return NCC_OK;
}

ncc_status ncc_rule_slice(ictx *c) {
  ncc_status st;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank, len, len2, n;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_check_index(c, 2)) || (st = ncc_si_vec_len(c, 1, &len)) ||
      (st = ncc_si_vec_len(c, 2, &len2)))
    return st;
  for (int i = 3; i < c->n->n_in; i++) {
    if (!has_in(c, i)) continue;
    if ((st = ncc_si_check_index(c, i)) || (st = ncc_si_vec_len(c, i, &len2))) return st;
    if (len2 != len) break;
  }
  if (len2 != len)
    return ncc_si_fail(c, NCC_ERR_INPUT,
                "starts, ends, axes and steps differ in length");
  int64_t starts[NCC_CONTENT_MAX], ends[NCC_CONTENT_MAX],
      steps[NCC_CONTENT_MAX];
  int axes[NCC_CONTENT_MAX];
  bool ks, ke, ka = true, kst = true;
  if ((st = ncc_si_input_ints(c, 1, starts, NCC_CONTENT_MAX, &n, &ks)) ||
      (st = ncc_si_input_ints(c, 2, ends, NCC_CONTENT_MAX, &n, &ke)))
    return st;
  if (has_in(c, 3)) {
    if ((st = ncc_si_input_axes(c, 3, r, axes, &n, &ka))) return st;
  } else {
    if (len > r)
      return ncc_si_fail(c, NCC_ERR_INPUT, "%d slice entries for rank %d", len, r);
    for (int i = 0; i < len; i++) axes[i] = i;
  }
  if (has_in(c, 4)) {
    if ((st = ncc_si_input_ints(c, 4, steps, NCC_CONTENT_MAX, &n, &kst))) return st;
  } else {
    for (int i = 0; i < len; i++) steps[i] = 1;
  }
  ncc_shape o = x->shape;
  int64_t begin[NCC_MAX_RANK] = {0}, stride[NCC_MAX_RANK];
  bool exact = ka && ks && ke && kst;
  for (int k = 0; k < NCC_MAX_RANK; k++) stride[k] = 1;
  if (!ka) {
    for (int k = 0; k < r; k++)
      if ((st = ncc_si_fresh_dim(c, &o.d[k]))) return st;
  }
  for (int i = 0; ka && i < len; i++) {
    int a = axes[i];
    bool ex;
    if (!ks || !ke || !kst) {
      if ((st = ncc_si_fresh_dim(c, &o.d[a]))) return st;
      continue;
    }
    if ((st = slice_dim(c, x->shape.d[a], starts[i], ends[i], steps[i], &o.d[a],
                        &begin[a], &ex)))
      return st;
    stride[a] = steps[i];
    exact &= ex;
  }
  set_out(c, 0, x->dtype, &o);
  int m = ncc_si_content_slots(x->dtype, &o);
  if (!exact || m < 0 || x->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK];
  for (int e = 0; e < m; e++) {
    ncc_si_unravel(&o, e, co);
    for (int k = 0; k < r; k++) co[k] = begin[k] + co[k] * stride[k];
    v[e] = x->content[ncc_si_ravel(&x->shape, co)];
  }
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

ncc_status ncc_rule_gather(ictx *c) {
  ncc_status st;
  int axis = 0;
  const ncc_tinfo *x = IN(c, 0), *ix = IN(c, 1);
  int r = x->shape.rank, ri = ix->shape.rank;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_axis_norm(c->n, r, &axis)) ||
      (st = ncc_si_check_out_rank(c, r - 1 + ri)))
    return st;
  ncc_shape o = {.rank = 0};
  for (int k = 0; k < axis; k++) o.d[o.rank++] = x->shape.d[k];
  for (int k = 0; k < ri; k++) o.d[o.rank++] = ix->shape.d[k];
  for (int k = axis + 1; k < r; k++) o.d[o.rank++] = x->shape.d[k];
  set_out(c, 0, x->dtype, &o);

  /* Indices are checked wherever they are known, so kernels can trust them. */
  int64_t d = x->shape.d[axis], ni = ncc_shape_numel(&ix->shape);
  bool from_content = ni >= 0 && ix->content_len == ni;
  bool sym_index = false;
  if (is_static(d) && ni >= 0 && (from_content || ix->data)) {
    for (int64_t k = 0; k < ni; k++) {
      int64_t v = 0;
      if (from_content) v = ix->content[k];
      else ncc_si_read_int(ix->dtype, ix->data, k, &v);
      if (ncc_dim_is_sym(v)) {
        sym_index = true;
        continue;
      }
      if (v < -d || v >= d)
        return ncc_si_fail(c, NCC_ERR_INPUT,
                    "index %lld is out of range for dim %d of size %lld",
                    (long long)v, axis, (long long)d);
    }
  }
  int m = ncc_si_content_slots(x->dtype, &o);
  if (m < 0 || !from_content || sym_index || x->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX], co[NCC_MAX_RANK], ci[NCC_MAX_RANK];
  for (int e = 0; e < m; e++) {
    ncc_si_unravel(&o, e, co);
    int64_t idx = ncc_si_ravel(&ix->shape, co + axis);
    int64_t t = ix->content[idx];
    for (int k = 0; k < axis; k++) ci[k] = co[k];
    ci[axis] = t < 0 ? t + d : t;
    for (int k = axis + 1; k < r; k++) ci[k] = co[k - 1 + ri];
    v[e] = x->content[ncc_si_ravel(&x->shape, ci)];
  }
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

ncc_status ncc_rule_shape(ictx *c) {
  ncc_status st;
  int start, end;
  int r = rank_of(c, 0);
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) ||
      (st = ncc_attrs_shape(c->n, r, &start, &end)))
    return st;
  int len = end > start ? end - start : 0;
  ncc_shape o = {.rank = 1, .d = {len}};
  set_out(c, 0, NCC_DT_I64, &o);
  set_content(&c->out[0], IN(c, 0)->shape.d + start, len);
  return NCC_OK;
}

ncc_status ncc_rule_expand(ictx *c) {
  ncc_status st;
  ncc_shape s, o;
  const ncc_tinfo *x = IN(c, 0);
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_shape_input(c, 1, &s)))
    return st;
  if (ncc_broadcast_shapes(c->g, &x->shape, &s, &o)) {
    ncc_error_prefix("%s", ncc_si_label(c));
    return NCC_ERR_INPUT;
  }
  set_out(c, 0, x->dtype, &o);
  int m = ncc_si_content_slots(x->dtype, &o);
  if (m < 0 || x->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX];
  for (int e = 0; e < m; e++) v[e] = x->content[ncc_si_bcast_index(&o, &x->shape, e)];
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

ncc_status ncc_rule_pad(ictx *c) {
  ncc_status st;
  ncc_pad_mode pm;
  const ncc_tinfo *x = IN(c, 0);
  int r = x->shape.rank, na = r, lp, n;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_attrs_pad(c->n, &pm)))
    return st;
  bool constant = pm == NCC_PAD_CONSTANT, reflect = pm == NCC_PAD_REFLECT;
  bool wrap = pm == NCC_PAD_WRAP;
  if (has_in(c, 2) && ((st = ncc_si_check_same_dtype(c, 0, 2)) ||
                       ncc_shape_numel(&IN(c, 2)->shape) != 1))
    return st ? st : ncc_si_fail(c, NCC_ERR_INPUT, "constant_value must be a scalar");
  int axes[NCC_CONTENT_MAX];
  bool ka = true, kp;
  if (has_in(c, 3)) {
    if ((st = ncc_si_check_index(c, 3)) || (st = ncc_si_vec_len(c, 3, &na)) ||
        (st = ncc_si_input_axes(c, 3, r, axes, &n, &ka)))
      return st;
  } else {
    for (int i = 0; i < r; i++) axes[i] = i;
  }
  int64_t pads[NCC_CONTENT_MAX];
  if ((st = ncc_si_vec_len(c, 1, &lp))) return st;
  if (lp != 2 * na)
    return ncc_si_fail(c, NCC_ERR_INPUT, "pads has %d entries, expected %d", lp,
                2 * na);
  if ((st = ncc_si_input_ints(c, 1, pads, NCC_CONTENT_MAX, &n, &kp))) return st;
  ncc_shape o = x->shape;
  for (int k = 0; !ka && k < r; k++)
    if ((st = ncc_si_fresh_dim(c, &o.d[k]))) return st;
  for (int i = 0; ka && i < na; i++) {
    int a = axes[i];
    int64_t d = x->shape.d[a], pb = pads[i], pe = pads[i + na], total, nd;
    if (!kp || ncc_dim_is_sym(pb) || ncc_dim_is_sym(pe)) {
      if ((st = ncc_si_fresh_dim(c, &o.d[a]))) return st;
      continue;
    }
    if (__builtin_add_overflow(pb, pe, &total))
      return ncc_si_fail(c, NCC_ERR_INPUT, "pads overflow");
    if (!is_static(d)) {
      if (total == 0) continue;
      if ((st = ncc_si_fresh_dim(c, &o.d[a]))) return st;
      continue;
    }
    if (__builtin_add_overflow(d, total, &nd) || nd < 0)
      return ncc_si_fail(c, NCC_ERR_INPUT,
                  "pads (%lld, %lld) are invalid for dim %d of size %lld",
                  (long long)pb, (long long)pe, a, (long long)d);
    if (!constant && (pb > 0 || pe > 0)) {
      int64_t lim = reflect ? d - 1 : wrap ? d : INT64_MAX;
      if (d == 0 || pb > lim || pe > lim)
        return ncc_si_fail(
            c, NCC_ERR_INPUT,
            "%s pads (%lld, %lld) are too large for dim %d of size %lld",
            ncc_pad_mode_name(pm), (long long)pb, (long long)pe, a,
            (long long)d);
    }
    o.d[a] = nd;
  }
  set_out(c, 0, x->dtype, &o);
  return NCC_OK;
}
