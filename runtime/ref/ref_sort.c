/* runtime/ref/ref_sort.c — reference kernels of the sorting ops: TopK,
 * ArgMax, ArgMin, Unique.
 *
 * Values compare as int64 for integer dtypes (exact) and as double for
 * float ones. Ties go to the lower index (TopK, ArgMax/ArgMin without
 * select_last_index), as ONNX specifies.
 */
#include <stdlib.h>
#include <string.h>

#include "../../ir/index_data.h"
#include "ref.h"

static bool is_float(ncc_dtype dt) {
  return dt == NCC_DT_F32 || dt == NCC_DT_F16 || dt == NCC_DT_F64;
}

/* outer/len/inner of x around `axis`. */
static void split3(const ncc_tensor *x, int axis, int64_t *outer, int64_t *len,
                   int64_t *inner) {
  *outer = *inner = 1;
  for (int k = 0; k < axis; k++) *outer *= x->dims[k];
  for (int k = axis + 1; k < x->rank; k++) *inner *= x->dims[k];
  *len = x->dims[axis];
}

/* a > b (largest first) in the element order: NaN counts as the largest
 * value, as ONNX Runtime's TopK does. */
static int cmp_at(const ncc_tensor *x, int64_t a, int64_t b) {
  if (!is_float(x->dtype)) {
    int64_t u = ncc_ref_get_i(x, a), v = ncc_ref_get_i(x, b);
    return (u > v) - (u < v);
  }
  double u = ncc_ref_get_f(x, a), v = ncc_ref_get_f(x, b);
  if (u != u || v != v) return (u != u) - (v != v);
  return (u > v) - (u < v);
}

typedef struct {
  const ncc_tensor *x;
  int64_t base, step;
  bool largest;
} topk_ctx;

/* Stable merge sort of positions along the axis by value. */
static void msort(const topk_ctx *c, int64_t *v, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2, i = 0, j = h, k = 0;
  msort(c, v, tmp, h);
  msort(c, v + h, tmp, n - h);
  while (i < h && j < n) {
    int r = cmp_at(c->x, c->base + v[j] * c->step, c->base + v[i] * c->step);
    bool take_j = c->largest ? r > 0 : r < 0;
    tmp[k++] = take_j ? v[j++] : v[i++];
  }
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, sizeof *v * (size_t)n);
}

ncc_status ncc_ref_TOPK(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  ncc_sort_attrs a;
  ncc_status st = ncc_attrs_sort(n, &a);
  if (st) return st;
  int axis = (int)(a.axis < 0 ? a.axis + x->rank : a.axis);
  int64_t outer, len, inner, k = out[0].dims[axis];
  split3(x, axis, &outer, &len, &inner);
  int64_t *ord = ncc_malloc(sizeof *ord * (size_t)(2 * len + 1));
  if (!ord) return NCC_ERR_NOMEM;
  size_t es = ncc_dtype_size(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      topk_ctx c = {x, o * len * inner + i, inner, a.largest};
      for (int64_t j = 0; j < len; j++) ord[j] = j;
      msort(&c, ord, ord + len, len);
      for (int64_t j = 0; j < k; j++) {
        int64_t dst = (o * k + j) * inner + i, src = c.base + ord[j] * inner;
        memcpy((char *)out[0].data + (size_t)dst * es, (const char *)x->data + (size_t)src * es,
               es);
        ncc_ref_set_i(&out[1], dst, ord[j]);
      }
    }
  ncc_free(ord, 0);
  return NCC_OK;
}

static ncc_status argreduce(const ncc_node *n, const ncc_tensor *x, ncc_tensor *out,
                            bool max) {
  ncc_sort_attrs a;
  ncc_status st = ncc_attrs_sort(n, &a);
  if (st) return st;
  int axis = (int)(a.axis < 0 ? a.axis + x->rank : a.axis);
  int64_t outer, len, inner;
  split3(x, axis, &outer, &len, &inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * len * inner + i, best = 0;
      for (int64_t j = 1; j < len; j++) {
        int r = cmp_at(x, base + j * inner, base + best * inner);
        if (!max) r = -r;
        if (r > 0 || (r == 0 && a.select_last)) best = j;
      }
      ncc_ref_set_i(out, o * inner + i, best);
    }
  return NCC_OK;
}

ncc_status ncc_ref_ARGMAX(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return argreduce(n, in[0], out, true);
}

ncc_status ncc_ref_ARGMIN(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  return argreduce(n, in[0], out, false);
}

ncc_status ncc_ref_UNIQUE(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const ncc_tensor *x = in[0];
  bool sorted, has_axis;
  int64_t axis_v, outer = 1, len = ncc_tensor_numel(x), inner = 1, nu;
  ncc_status st;
  if ((st = ncc_attrs_unique(n, &sorted)) || (st = ncc_attrs_opt_axis(n, &has_axis, &axis_v)))
    return st;
  if (has_axis) split3(x, (int)(axis_v < 0 ? axis_v + x->rank : axis_v), &outer, &len, &inner);
  int64_t *buf = ncc_malloc(sizeof *buf * (size_t)(3 * len + 1));
  if (!buf) return NCC_ERR_NOMEM;
  int64_t *first = buf, *inv = buf + len, *cnt = buf + 2 * len;
  st = ncc_idx_unique(x->dtype, x->data, outer, len, inner, sorted, first, inv, cnt, &nu);
  /* NCC_OPF_DYNAMIC: the outputs are sized here, from the selection */
  int64_t dims[NCC_MAX_RANK], one[1] = {nu}, lens[1] = {len};
  for (int k = 0; k < x->rank; k++) dims[k] = x->dims[k];
  if (has_axis) dims[axis_v < 0 ? axis_v + x->rank : axis_v] = nu;
  if (!st) st = ncc_ref_alloc_out(&out[0], has_axis ? x->rank : 1, has_axis ? dims : one);
  for (int k = 1; !st && k < n->n_out; k++)
    st = ncc_ref_alloc_out(&out[k], 1, k == 2 ? lens : one);
  size_t es = ncc_dtype_size(x->dtype);
  for (int64_t o = 0; !st && o < outer; o++)
    for (int64_t u = 0; u < nu; u++)
      memcpy((char *)out[0].data + (size_t)((o * nu + u) * inner) * es,
             (const char *)x->data + (size_t)((o * len + first[u]) * inner) * es,
             (size_t)inner * es);
  for (int64_t u = 0; !st && u < nu; u++) {
    if (n->n_out > 1 && out[1].data) ncc_ref_set_i(&out[1], u, first[u]);
    if (n->n_out > 3 && out[3].data) ncc_ref_set_i(&out[3], u, cnt[u]);
  }
  for (int64_t j = 0; !st && n->n_out > 2 && out[2].data && j < len; j++)
    ncc_ref_set_i(&out[2], j, inv[j]);
  ncc_free(buf, 0);
  return st;
}
