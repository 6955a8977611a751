/* runtime/ref/ref_index.c — reference kernels of the indexing and scatter
 * ops: GatherElements, GatherND, ScatterND, ScatterElements, DepthToSpace,
 * SpaceToDepth, Compress, ReverseSequence.
 *
 * Elements move as bytes (every dtype); the scatter reductions compute in
 * int64 for integer dtypes and double for float ones. An index out of range
 * is an input error (never an out-of-bounds access).
 */
#include <string.h>

#include "../../ir/index_data.h"
#include "ref.h"

static bool is_float(ncc_dtype dt) {
  return dt == NCC_DT_F32 || dt == NCC_DT_F16 || dt == NCC_DT_F64;
}

/* Index v into a dim of size d (negative counts from the end). */
static ncc_status fix_index(const ncc_node *n, int64_t v, int64_t d, int64_t *out) {
  if (v < -d || v >= d)
    return ncc_node_error(n, NCC_ERR_INPUT, "index %lld is out of range for a dim of %lld",
                          (long long)v, (long long)d);
  *out = v < 0 ? v + d : v;
  return NCC_OK;
}

static void unravel(const int64_t *dims, int rank, int64_t i, int64_t *co) {
  for (int k = rank - 1; k >= 0; k--) {
    co[k] = dims[k] ? i % dims[k] : 0;
    i = dims[k] ? i / dims[k] : 0;
  }
}

static int64_t numel(const ncc_tensor *t) { return ncc_tensor_numel(t); }

static void copy_el(ncc_tensor *dst, int64_t di, const ncc_tensor *src, int64_t si) {
  size_t es = ncc_dtype_size(src->dtype);
  memcpy((char *)dst->data + (size_t)di * es, (const char *)src->data + (size_t)si * es, es);
}

ncc_status ncc_ref_GATHERELEMENTS(const ncc_node *n, const ncc_tensor *const *in,
                                  ncc_tensor *out) {
  const ncc_tensor *x = in[0], *ix = in[1];
  int axis, r = x->rank;
  ncc_status st = ncc_attrs_axis_norm(n, r, &axis);
  if (st) return st;
  int64_t xs[NCC_MAX_RANK], co[NCC_MAX_RANK], m = numel(ix);
  ncc_ref_strides(x, xs);
  for (int64_t i = 0; i < m; i++) {
    unravel(ix->dims, r, i, co);
    int64_t off = 0, t = 0;
    if ((st = fix_index(n, ncc_ref_get_i(ix, i), x->dims[axis], &t))) return st;
    co[axis] = t;
    for (int k = 0; k < r; k++) off += co[k] * xs[k];
    copy_el(out, i, x, off);
  }
  return NCC_OK;
}

/* Offset into x of index tuple row `row` of ix (depth `last`, starting at
 * dim b of x), plus the batch offset. */
static ncc_status nd_offset(const ncc_node *n, const ncc_tensor *x, const ncc_tensor *ix,
                            int64_t row, int b, int last, const int64_t *xs, int64_t base,
                            int64_t *off) {
  *off = base;
  for (int k = 0; k < last; k++) {
    int64_t t = 0;
    ncc_status st = fix_index(n, ncc_ref_get_i(ix, row * last + k), x->dims[b + k], &t);
    if (st) return st;
    *off += t * xs[b + k];
  }
  return NCC_OK;
}

ncc_status ncc_ref_GATHERND(const ncc_node *n, const ncc_tensor *const *in,
                            ncc_tensor *out) {
  const ncc_tensor *x = in[0], *ix = in[1];
  int64_t b64;
  ncc_status st = ncc_attrs_gather_nd(n, &b64);
  if (st) return st;
  int b = (int)b64, q = ix->rank, last = (int)ix->dims[q - 1];
  int64_t xs[NCC_MAX_RANK], slice = 1, rows = 1, batch = 1, per_batch;
  ncc_ref_strides(x, xs);
  for (int k = b + last; k < x->rank; k++) slice *= x->dims[k];
  for (int k = 0; k < q - 1; k++) rows *= ix->dims[k];
  for (int k = 0; k < b; k++) batch *= ix->dims[k];
  per_batch = batch ? rows / batch : 0;
  size_t es = ncc_dtype_size(x->dtype);
  for (int64_t row = 0; row < rows; row++) {
    int64_t bi = per_batch ? row / per_batch : 0, co[NCC_MAX_RANK], base = 0, off;
    unravel(ix->dims, b, bi, co);
    for (int k = 0; k < b; k++) base += co[k] * xs[k];
    if ((st = nd_offset(n, x, ix, row, b, last, xs, base, &off))) return st;
    memcpy((char *)out->data + (size_t)(row * slice) * es,
           (const char *)x->data + (size_t)off * es, (size_t)slice * es);
  }
  return NCC_OK;
}

/* out[o] (op)= u[ui] */
static void reduce_into(ncc_tensor *out, int64_t o, const ncc_tensor *u, int64_t ui,
                        ncc_scatter_red red) {
  if (red == NCC_SCATTER_NONE) {
    copy_el(out, o, u, ui);
  } else if (is_float(out->dtype)) {
    double a = ncc_ref_get_f(out, o), v = ncc_ref_get_f(u, ui);
    double r = red == NCC_SCATTER_ADD ? a + v
               : red == NCC_SCATTER_MUL ? a * v
               : red == NCC_SCATTER_MAX ? (v > a || v != v ? v : a)
                                        : (v < a || v != v ? v : a);
    ncc_ref_set_f(out, o, r);
  } else {
    int64_t a = ncc_ref_get_i(out, o), v = ncc_ref_get_i(u, ui);
    int64_t r = red == NCC_SCATTER_ADD   ? (int64_t)((uint64_t)a + (uint64_t)v)
                : red == NCC_SCATTER_MUL ? (int64_t)((uint64_t)a * (uint64_t)v)
                : red == NCC_SCATTER_MAX ? (v > a ? v : a)
                                         : (v < a ? v : a);
    ncc_ref_set_i(out, o, r);
  }
}

ncc_status ncc_ref_SCATTERND(const ncc_node *n, const ncc_tensor *const *in,
                             ncc_tensor *out) {
  const ncc_tensor *x = in[0], *ix = in[1], *u = in[2];
  ncc_scatter_red red;
  ncc_status st = ncc_attrs_scatter(n, &red);
  if (st) return st;
  memcpy(out->data, x->data, ncc_tensor_nbytes(x));
  int q = ix->rank, last = (int)ix->dims[q - 1];
  int64_t xs[NCC_MAX_RANK], slice = 1, rows = 1;
  ncc_ref_strides(x, xs);
  for (int k = last; k < x->rank; k++) slice *= x->dims[k];
  for (int k = 0; k < q - 1; k++) rows *= ix->dims[k];
  if (numel(u) != rows * slice)
    return ncc_node_error(n, NCC_ERR_INPUT, "updates has %lld elements, expected %lld",
                          (long long)numel(u), (long long)(rows * slice));
  for (int64_t row = 0; row < rows; row++) {
    int64_t off;
    if ((st = nd_offset(n, x, ix, row, 0, last, xs, 0, &off))) return st;
    for (int64_t e = 0; e < slice; e++) reduce_into(out, off + e, u, row * slice + e, red);
  }
  return NCC_OK;
}

ncc_status ncc_ref_SCATTERELEMENTS(const ncc_node *n, const ncc_tensor *const *in,
                                   ncc_tensor *out) {
  const ncc_tensor *x = in[0], *ix = in[1], *u = in[2];
  ncc_scatter_red red;
  int axis, r = x->rank;
  ncc_status st;
  if ((st = ncc_attrs_scatter(n, &red)) || (st = ncc_attrs_axis_norm(n, r, &axis))) return st;
  memcpy(out->data, x->data, ncc_tensor_nbytes(x));
  int64_t xs[NCC_MAX_RANK], co[NCC_MAX_RANK], m = numel(ix);
  ncc_ref_strides(x, xs);
  for (int k = 0; k < r; k++)
    if (ix->dims[k] > x->dims[k] && k != axis)
      return ncc_node_error(n, NCC_ERR_INPUT, "indices dim %d exceeds the data's", k);
  for (int64_t i = 0; i < m; i++) {
    unravel(ix->dims, r, i, co);
    int64_t off = 0, t = 0;
    if ((st = fix_index(n, ncc_ref_get_i(ix, i), x->dims[axis], &t))) return st;
    co[axis] = t;
    for (int k = 0; k < r; k++) off += co[k] * xs[k];
    reduce_into(out, off, u, i, red);
  }
  return NCC_OK;
}

/* DepthToSpace (DCR: channel = (bh*b + bw)*C' + c; CRD: c*b*b + bh*b + bw)
 * and SpaceToDepth (the inverse of DCR), as one index map. */
static ncc_status depth_space(const ncc_node *n, const ncc_tensor *x, ncc_tensor *out,
                              bool d2s) {
  ncc_depth_space_attrs a;
  ncc_status st = ncc_attrs_depth_space(n, &a);
  if (st) return st;
  int64_t b = a.blocksize;
  /* the depth tensor [N, C*b*b, H, W] vs the space tensor [N, C, H*b, W*b] */
  const ncc_tensor *dep = d2s ? x : out, *sp = d2s ? out : x;
  int64_t N = sp->dims[0], C = sp->dims[1], H = dep->dims[2], W = dep->dims[3];
  size_t es = ncc_dtype_size(x->dtype);
  for (int64_t nn = 0; nn < N; nn++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t bh = 0; bh < b; bh++)
        for (int64_t bw = 0; bw < b; bw++) {
          int64_t dc = a.crd ? (c * b + bh) * b + bw : (bh * b + bw) * C + c;
          for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++) {
              int64_t di = ((nn * C * b * b + dc) * H + h) * W + w;
              int64_t si = ((nn * C + c) * H * b + h * b + bh) * W * b + w * b + bw;
              char *dp = (char *)dep->data + (size_t)di * es;
              char *spp = (char *)sp->data + (size_t)si * es;
              if (d2s) memcpy(spp, dp, es);
              else memcpy(dp, spp, es);
            }
        }
  return NCC_OK;
}

ncc_status ncc_ref_DEPTHTOSPACE(const ncc_node *n, const ncc_tensor *const *in,
                                ncc_tensor *out) {
  return depth_space(n, in[0], out, true);
}

ncc_status ncc_ref_SPACETODEPTH(const ncc_node *n, const ncc_tensor *const *in,
                                ncc_tensor *out) {
  return depth_space(n, in[0], out, false);
}

ncc_status ncc_ref_COMPRESS(const ncc_node *n, const ncc_tensor *const *in,
                            ncc_tensor *out) {
  const ncc_tensor *x = in[0], *cond = in[1];
  bool has_axis;
  int64_t axis_v;
  ncc_status st = ncc_attrs_opt_axis(n, &has_axis, &axis_v);
  if (st) return st;
  int axis = (int)(axis_v < 0 ? axis_v + x->rank : axis_v);
  int64_t outer = 1, len = numel(x), inner = 1, nc = numel(cond), k = 0;
  if (has_axis) {
    len = x->dims[axis];
    for (int i = 0; i < axis; i++) outer *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) inner *= x->dims[i];
  }
  if (nc > len) nc = len; /* entries past the axis are ignored (ncc_rule_compress) */
  /* NCC_OPF_DYNAMIC: the output is sized here, from the condition */
  int64_t kept = ncc_idx_count_nonzero(cond->dtype, cond->data, nc), dims[NCC_MAX_RANK];
  int orank = has_axis ? x->rank : 1;
  for (int i = 0; i < orank; i++) dims[i] = has_axis ? x->dims[i] : kept;
  if (has_axis) dims[axis] = kept;
  if ((st = ncc_ref_alloc_out(out, orank, dims))) return st;
  size_t es = ncc_dtype_size(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < len && j < nc; j++) {
      if (ncc_ref_get_i(cond, j) == 0) continue;
      memcpy((char *)out->data + (size_t)(k * inner) * es,
             (const char *)x->data + (size_t)((o * len + j) * inner) * es, (size_t)inner * es);
      k++;
    }
  return NCC_OK;
}

ncc_status ncc_ref_REVERSESEQUENCE(const ncc_node *n, const ncc_tensor *const *in,
                                   ncc_tensor *out) {
  const ncc_tensor *x = in[0], *lens = in[1];
  int ba, ta;
  ncc_status st = ncc_attrs_reverse_sequence(n, &ba, &ta);
  if (st) return st;
  int64_t xs[NCC_MAX_RANK], co[NCC_MAX_RANK], m = numel(x);
  ncc_ref_strides(x, xs);
  int64_t T = x->dims[ta];
  for (int64_t b = 0; b < x->dims[ba]; b++) {
    int64_t l = ncc_ref_get_i(lens, b);
    if (l < 0 || l > T)
      return ncc_node_error(n, NCC_ERR_INPUT, "sequence length %lld for a time dim of %lld",
                            (long long)l, (long long)T);
  }
  for (int64_t i = 0; i < m; i++) {
    unravel(x->dims, x->rank, i, co);
    int64_t l = ncc_ref_get_i(lens, co[ba]), t = co[ta];
    int64_t src = i + (t < l ? (l - 1 - 2 * t) * xs[ta] : 0);
    copy_el(out, i, x, src);
  }
  return NCC_OK;
}
