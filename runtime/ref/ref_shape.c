/* runtime/ref/ref_shape.c — reference kernels of the shape and data-movement
 * ops (Reshape ... Range).
 *
 * Output shapes were already computed by shape inference; these kernels only
 * move bytes, so every dtype works by element size. Where a kernel needs the
 * same parameters as inference (Slice bounds, Shape start/end, Pad amounts),
 * it re-derives them with the ONNX rules and checks the result against the
 * output shape it was given, so a disagreement shows up as an internal error
 * instead of a silent out-of-bounds copy.
 */
#include <string.h>

#include "ref.h"

static bool is_fp(ncc_dtype dt) { return ncc_ref_is_float(dt); }

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= d[i];
  return p;
}

static ncc_status shape_mismatch(const char *what) {
  return ncc_error(NCC_ERR_INTERNAL,
                   "%s disagrees with the inferred output shape", what);
}

/* Copy a strided view of src (rank/dims of the result, element strides st,
 * may be 0 or negative) into contiguous dst. Size-1 dims are dropped and dims
 * that stay linear merged, so plain copies become one memcpy. */
static void copy_strided(char *dst, const char *src, size_t es, int rank,
                         const int64_t *dims, const int64_t *st) {
  int64_t d[NCC_MAX_RANK], s[NCC_MAX_RANK];
  int m = 0;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) return;
    if (dims[i] == 1) continue;
    if (m > 0 && s[m - 1] == st[i] * dims[i]) {
      d[m - 1] *= dims[i];
      s[m - 1] = st[i];
    } else {
      d[m] = dims[i];
      s[m] = st[i];
      m++;
    }
  }
  if (m == 0) {
    memcpy(dst, src, es);
    return;
  }
  int64_t idx[NCC_MAX_RANK] = {0}, off = 0, n = d[m - 1], inner = s[m - 1];
  for (;;) {
    if (inner == 1) {
      memcpy(dst, src + off * (int64_t)es, (size_t)n * es);
    } else {
      for (int64_t k = 0; k < n; k++)
        memcpy(dst + k * (int64_t)es, src + (off + k * inner) * (int64_t)es, es);
    }
    dst += (size_t)n * es;
    int i = m - 2;
    for (; i >= 0; i--) {
      off += s[i];
      if (++idx[i] < d[i]) break;
      off -= s[i] * d[i];
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

/* Same bytes, new shape. */
static ncc_status copy_all(const ncc_tensor *x, ncc_tensor *out) {
  if (ncc_tensor_nbytes(x) != ncc_tensor_nbytes(out))
    return shape_mismatch("element count");
  memcpy(out->data, x->data, ncc_tensor_nbytes(out));
  return NCC_OK;
}

ncc_status ncc_ref_RESHAPE(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  (void)n;
  return copy_all(in[0], out);
}

ncc_status ncc_ref_FLATTEN(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  (void)n;
  return copy_all(in[0], out);
}

ncc_status ncc_ref_SQUEEZE(const ncc_node *n, const ncc_tensor *const *in,
                           ncc_tensor *out) {
  (void)n;
  return copy_all(in[0], out);
}

ncc_status ncc_ref_UNSQUEEZE(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  (void)n;
  return copy_all(in[0], out);
}

ncc_status ncc_ref_TRANSPOSE(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  int r = x->rank;
  int perm[NCC_MAX_RANK];
  ncc_status pst = ncc_attrs_perm(n, r, perm);
  if (pst) return pst;
  int64_t xs[NCC_MAX_RANK], st[NCC_MAX_RANK];
  ncc_ref_strides(x, xs);
  for (int i = 0; i < r; i++) {
    int p = perm[i];
    if (out->dims[i] != x->dims[p]) return shape_mismatch("Transpose perm");
    st[i] = xs[p];
  }
  copy_strided(out->data, x->data, ncc_dtype_size(x->dtype), r, out->dims, st);
  return NCC_OK;
}

ncc_status ncc_ref_EXPAND(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  (void)n;
  int64_t st[NCC_MAX_RANK];
  if (in[0]->rank > out->rank) return shape_mismatch("Expand rank");
  for (int i = 0; i < in[0]->rank; i++) {
    int64_t d = in[0]->dims[i], o = out->dims[out->rank - in[0]->rank + i];
    if (d != 1 && d != o) return shape_mismatch("Expand shape");
  }
  ncc_ref_bcast_strides(in[0], out->rank, out->dims, st);
  copy_strided(out->data, in[0]->data, ncc_dtype_size(out->dtype), out->rank,
               out->dims, st);
  return NCC_OK;
}

static int norm_axis(int64_t axis, int rank, int *out) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return -1;
  *out = (int)axis;
  return 0;
}

ncc_status ncc_ref_CONCAT(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  int ax;
  if (norm_axis(ncc_attrs_axis(n), out->rank, &ax))
    return ncc_error(NCC_ERR_INPUT, "Concat axis is out of range");
  size_t es = ncc_dtype_size(out->dtype);
  int64_t outer = prod(out->dims, 0, ax);
  size_t inner = (size_t)prod(out->dims, ax + 1, out->rank) * es;
  int64_t total = 0;
  for (int k = 0; k < n->n_in; k++) {
    if (in[k]->rank != out->rank) return shape_mismatch("Concat input rank");
    total += in[k]->dims[ax];
  }
  if (total != out->dims[ax]) return shape_mismatch("Concat axis size");
  char *dst = out->data;
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < n->n_in; k++) {
      size_t chunk = (size_t)in[k]->dims[ax] * inner;
      memcpy(dst, (const char *)in[k]->data + (size_t)o * chunk, chunk);
      dst += chunk;
    }
  return NCC_OK;
}

/* The split sizes are the outputs' sizes along the axis (inference derived
 * them from `split` or `num_outputs`). */
ncc_status ncc_ref_SPLIT(const ncc_node *n, const ncc_tensor *const *in,
                         ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  int ax;
  if (norm_axis(ncc_attrs_axis(n), x->rank, &ax))
    return ncc_error(NCC_ERR_INPUT, "Split axis is out of range");
  size_t es = ncc_dtype_size(x->dtype);
  int64_t outer = prod(x->dims, 0, ax);
  size_t inner = (size_t)prod(x->dims, ax + 1, x->rank) * es;
  int64_t total = 0;
  for (int k = 0; k < n->n_out; k++) total += out[k].dims[ax];
  if (total != x->dims[ax]) return shape_mismatch("Split sizes");
  const char *src = x->data;
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < n->n_out; k++) {
      size_t chunk = (size_t)out[k].dims[ax] * inner;
      memcpy((char *)out[k].data + (size_t)o * chunk, src, chunk);
      src += chunk;
    }
  return NCC_OK;
}

/* ---- Slice ---- */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

/* ONNX clamping of one axis: negative bounds count from the end; a positive
 * step clamps start and end to [0, dim], a negative one start to [0, dim-1]
 * and end to [-1, dim-1]. Returns the element count. */
static int64_t slice_axis(int64_t dim, int64_t start, int64_t end,
                          int64_t step, int64_t *first) {
  *first = 0;
  if (dim == 0) return 0;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  int64_t span;
  if (step > 0) {
    start = clamp64(start, 0, dim);
    end = clamp64(end, 0, dim);
    span = end - start;
  } else {
    start = clamp64(start, 0, dim - 1);
    end = clamp64(end, -1, dim - 1);
    span = start - end;
  }
  *first = start;
  /* |step| as unsigned: -INT64_MIN does not fit an int64. */
  uint64_t ustep = step > 0 ? (uint64_t)step : 0 - (uint64_t)step;
  return span <= 0 ? 0 : (int64_t)(1 + (uint64_t)(span - 1) / ustep);
}

ncc_status ncc_ref_SLICE(const ncc_node *n, const ncc_tensor *const *in,
                         ncc_tensor *out) {
  const ncc_tensor *x = in[0], *starts = in[1], *ends = in[2];
  const ncc_tensor *axes = n->n_in > 3 ? in[3] : NULL;
  const ncc_tensor *steps = n->n_in > 4 ? in[4] : NULL;
  int r = x->rank;
  int64_t cnt = ncc_tensor_numel(starts);
  if (ncc_tensor_numel(ends) != cnt || (axes && ncc_tensor_numel(axes) != cnt) ||
      (steps && ncc_tensor_numel(steps) != cnt))
    return ncc_error(NCC_ERR_INPUT,
                     "Slice starts, ends, axes and steps differ in length");
  int64_t first[NCC_MAX_RANK] = {0}, step[NCC_MAX_RANK], len[NCC_MAX_RANK];
  bool seen[NCC_MAX_RANK] = {false};
  for (int i = 0; i < r; i++) {
    step[i] = 1;
    len[i] = x->dims[i];
  }
  for (int64_t k = 0; k < cnt; k++) {
    int ax;
    if (norm_axis(axes ? ncc_ref_get_i(axes, k) : k, r, &ax) || seen[ax])
      return ncc_error(NCC_ERR_INPUT, "Slice axes are out of range or repeated");
    seen[ax] = true;
    step[ax] = steps ? ncc_ref_get_i(steps, k) : 1;
    if (step[ax] == 0) return ncc_error(NCC_ERR_INPUT, "Slice step is 0");
    len[ax] = slice_axis(x->dims[ax], ncc_ref_get_i(starts, k),
                         ncc_ref_get_i(ends, k), step[ax], &first[ax]);
  }
  int64_t xs[NCC_MAX_RANK], st[NCC_MAX_RANK], off = 0;
  ncc_ref_strides(x, xs);
  if (out->rank != r) return shape_mismatch("Slice rank");
  for (int i = 0; i < r; i++) {
    if (len[i] != out->dims[i]) return shape_mismatch("Slice bounds");
    off += first[i] * xs[i];
    /* A huge step only ever selects one element: keep it out of the
     * multiplication. */
    st[i] = len[i] > 1 ? xs[i] * step[i] : 0;
  }
  if (ncc_tensor_numel(out) == 0) return NCC_OK;
  size_t es = ncc_dtype_size(x->dtype);
  copy_strided(out->data, (const char *)x->data + off * (int64_t)es, es, r,
               out->dims, st);
  return NCC_OK;
}

/* ---- Gather ---- */

ncc_status ncc_ref_GATHER(const ncc_node *n, const ncc_tensor *const *in,
                          ncc_tensor *out) {
  const ncc_tensor *x = in[0], *idx = in[1];
  int ax;
  if (norm_axis(ncc_attrs_axis(n), x->rank, &ax))
    return ncc_error(NCC_ERR_INPUT, "Gather axis is out of range");
  int64_t dim = x->dims[ax], ni = ncc_tensor_numel(idx);
  if (ncc_tensor_numel(out) != prod(x->dims, 0, ax) * ni *
                                   prod(x->dims, ax + 1, x->rank))
    return shape_mismatch("Gather");
  /* Validate every index before writing anything. */
  for (int64_t j = 0; j < ni; j++) {
    int64_t v = ncc_ref_get_i(idx, j);
    if (v < -dim || v >= dim)
      return ncc_error(NCC_ERR_INPUT,
                       "Gather index %lld is out of range for axis %d of size "
                       "%lld",
                       (long long)v, ax, (long long)dim);
  }
  size_t es = ncc_dtype_size(x->dtype);
  int64_t outer = prod(x->dims, 0, ax);
  size_t inner = (size_t)prod(x->dims, ax + 1, x->rank) * es;
  char *dst = out->data;
  for (int64_t o = 0; o < outer; o++) {
    const char *base = (const char *)x->data + (size_t)(o * dim) * inner;
    for (int64_t j = 0; j < ni; j++) {
      int64_t v = ncc_ref_get_i(idx, j);
      if (v < 0) v += dim;
      memcpy(dst, base + (size_t)v * inner, inner);
      dst += inner;
    }
  }
  return NCC_OK;
}

/* ---- Shape ---- */

ncc_status ncc_ref_SHAPE(const ncc_node *n, const ncc_tensor *const *in,
                         ncc_tensor *out) {
  int start, end;
  ncc_status st = ncc_attrs_shape(n, in[0]->rank, &start, &end);
  if (st != NCC_OK) return st;
  int64_t cnt = end > start ? end - start : 0;
  if (out->dtype != NCC_DT_I64 || ncc_tensor_numel(out) != cnt)
    return shape_mismatch("Shape start/end");
  for (int64_t i = 0; i < cnt; i++)
    ncc_ref_set_i(out, i, in[0]->dims[start + i]);
  return NCC_OK;
}

/* ---- Pad ---- */

/* Source index along an axis of size d for the padded position j (j < 0 or
 * j >= d when in the padding); -1 means "the constant". Reflect and wrap
 * repeat periodically for pads longer than the axis, like numpy.pad. */
static int64_t pad_src(int64_t j, int64_t d, ncc_pad_mode mode) {
  if (j >= 0 && j < d) return j;
  switch (mode) {
  case NCC_PAD_CONSTANT: return -1;
  case NCC_PAD_EDGE: return j < 0 ? 0 : d - 1;
  case NCC_PAD_WRAP: return ((j % d) + d) % d;
  case NCC_PAD_REFLECT: {
    if (d == 1) return 0;
    int64_t p = 2 * (d - 1), m = ((j % p) + p) % p;
    return m < d ? m : p - m;
  }
  }
  return -1;
}

static ncc_status pad_params(const ncc_node *n, const ncc_tensor *const *in,
                             int64_t *begin, int64_t *end) {
  const ncc_tensor *x = in[0], *pads = in[1];
  const ncc_tensor *axes = n->n_in > 3 ? in[3] : NULL;
  int r = x->rank;
  int64_t na = axes ? ncc_tensor_numel(axes) : r;
  if (ncc_tensor_numel(pads) != 2 * na)
    return ncc_error(NCC_ERR_INPUT, "Pad has %lld pads for %lld axes",
                     (long long)ncc_tensor_numel(pads), (long long)na);
  for (int i = 0; i < r; i++) begin[i] = end[i] = 0;
  for (int64_t k = 0; k < na; k++) {
    int ax;
    if (norm_axis(axes ? ncc_ref_get_i(axes, k) : k, r, &ax))
      return ncc_error(NCC_ERR_INPUT, "Pad axis is out of range");
    begin[ax] = ncc_ref_get_i(pads, k);
    end[ax] = ncc_ref_get_i(pads, na + k);
  }
  return NCC_OK;
}

/* The fill value in the data's dtype (default zero). */
static void pad_value(const ncc_tensor *const *in, int n_in, unsigned char *buf) {
  memset(buf, 0, 8);
  const ncc_tensor *cv = n_in > 2 ? in[2] : NULL;
  if (!cv || ncc_tensor_numel(cv) < 1) return;
  ncc_tensor t = {.dtype = in[0]->dtype, .rank = 0, .data = buf};
  if (cv->dtype == t.dtype)
    memcpy(buf, cv->data, ncc_dtype_size(t.dtype));
  else if (is_fp(cv->dtype))
    ncc_ref_set_f(&t, 0, ncc_ref_get_f(cv, 0));
  else if (ncc_ref_is_unsigned(cv->dtype))
    ncc_ref_set_u(&t, 0, ncc_ref_get_u(cv, 0));
  else
    ncc_ref_set_i(&t, 0, ncc_ref_get_i(cv, 0));
}

ncc_status ncc_ref_PAD(const ncc_node *n, const ncc_tensor *const *in,
                       ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  int r = x->rank;
  ncc_pad_mode mode;
  ncc_status st = ncc_attrs_pad(n, &mode);
  if (st != NCC_OK) return st;

  int64_t begin[NCC_MAX_RANK], end[NCC_MAX_RANK];
  st = pad_params(n, in, begin, end);
  if (st != NCC_OK) return st;
  if (out->rank != r) return shape_mismatch("Pad rank");
  for (int i = 0; i < r; i++) {
    int64_t want;
    if (__builtin_sub_overflow(out->dims[i] - x->dims[i], begin[i], &want) ||
        want != end[i])
      return shape_mismatch("Pad amounts");
    if (mode != NCC_PAD_CONSTANT && x->dims[i] == 0 && out->dims[i] > 0)
      return ncc_error(NCC_ERR_INPUT,
                       "Pad mode '%s' cannot pad axis %d, which is empty",
                       ncc_pad_mode_name(mode), i);
  }
  size_t es = ncc_dtype_size(x->dtype);
  unsigned char fill[8];
  pad_value(in, n->n_in, fill);
  if (ncc_tensor_numel(out) == 0) return NCC_OK;
  if (r == 0) {
    memcpy(out->data, x->data, es);
    return NCC_OK;
  }
  int64_t xs[NCC_MAX_RANK], idx[NCC_MAX_RANK] = {0};
  ncc_ref_strides(x, xs);
  int64_t rows = prod(out->dims, 0, r - 1), w = out->dims[r - 1];
  int64_t xw = x->dims[r - 1];
  char *dst = out->data;
  for (int64_t row = 0; row < rows; row++) {
    /* Source row offset, or -1 when the whole row is padding. */
    int64_t off = 0;
    for (int i = 0; i < r - 1 && off >= 0; i++) {
      int64_t s = pad_src(idx[i] - begin[i], x->dims[i], mode);
      off = s < 0 ? -1 : off + s * xs[i];
    }
    for (int64_t k = 0; k < w; k++, dst += es) {
      int64_t s = off < 0 ? -1 : pad_src(k - begin[r - 1], xw, mode);
      if (s < 0)
        memcpy(dst, fill, es);
      else
        memcpy(dst, (const char *)x->data + (size_t)(off + s) * es, es);
    }
    for (int i = r - 2; i >= 0; i--) {
      if (++idx[i] < out->dims[i]) break;
      idx[i] = 0;
    }
  }
  return NCC_OK;
}

/* ---- sources ---- */

ncc_status ncc_ref_CONSTANT(const ncc_node *n, const ncc_tensor *const *in,
                            ncc_tensor *out) {
  (void)in;
  const ncc_const *t;
  ncc_status st = ncc_attrs_value(n, &t);
  if (st != NCC_OK) return st;
  int64_t cnt = ncc_shape_numel(&t->shape);
  if (t->dtype != out->dtype || cnt != ncc_tensor_numel(out))
    return shape_mismatch("Constant value");
  if (cnt > 0) memcpy(out->data, t->data, ncc_tensor_nbytes(out));
  return NCC_OK;
}

ncc_status ncc_ref_CONSTANTOFSHAPE(const ncc_node *n,
                                   const ncc_tensor *const *in,
                                   ncc_tensor *out) {
  (void)in;
  const ncc_const *t;
  size_t es = ncc_dtype_size(out->dtype), nb = ncc_tensor_nbytes(out);
  ncc_status st = ncc_attrs_value(n, &t);
  if (st != NCC_OK) return st;
  if (!t) { /* f32 0 */
    memset(out->data, 0, nb);
    return NCC_OK;
  }
  if (t->dtype != out->dtype)
    return ncc_error(NCC_ERR_INPUT,
                     "ConstantOfShape value must be a 1-element tensor");
  for (size_t off = 0; off < nb; off += es)
    memcpy((char *)out->data + off, t->data, es);
  return NCC_OK;
}

/* Range accumulates (x_i = x_{i-1} + delta, as the ONNX definition and ONNX
 * Runtime do) in the output dtype, so float results round like theirs. The
 * element count is inference's max(ceil((limit - start) / delta), 0). */
ncc_status ncc_ref_RANGE(const ncc_node *n, const ncc_tensor *const *in,
                         ncc_tensor *out) {
  (void)n;
  int64_t cnt = ncc_tensor_numel(out);
  if (cnt == 0) return NCC_OK;
  if (is_fp(out->dtype)) {
    double delta = ncc_ref_get_f(in[2], 0);
    ncc_ref_set_f(out, 0, ncc_ref_get_f(in[0], 0));
    for (int64_t i = 1; i < cnt; i++)
      ncc_ref_set_f(out, i, ncc_ref_get_f(out, i - 1) + delta);
  } else {
    int64_t v = ncc_ref_get_i(in[0], 0), delta = ncc_ref_get_i(in[2], 0);
    for (int64_t i = 0; i < cnt; i++) {
      ncc_ref_set_i(out, i, v);
      v = (int64_t)((uint64_t)v + (uint64_t)delta);
    }
  }
  return NCC_OK;
}
