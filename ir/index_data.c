/* ir/index_data.c — Compress/Unique/NonMaxSuppression selections shared by
 * shape inference and the reference kernels (ir/index_data.h).
 */
#include <stdlib.h>
#include <string.h>

#include "f16.h"
#include "index_data.h"

double ncc_idx_read(ncc_dtype dt, const void *data, int64_t i) {
  const unsigned char *p = (const unsigned char *)data + (size_t)i * ncc_dtype_size(dt);
  switch (dt) {
  case NCC_DT_F32: { float v; memcpy(&v, p, 4); return v; }
  case NCC_DT_F16: { uint16_t v; memcpy(&v, p, 2); return ncc_f16_to_f64(v); }
  case NCC_DT_F64: { double v; memcpy(&v, p, 8); return v; }
  case NCC_DT_I8: return (int8_t)p[0];
  case NCC_DT_U8: return p[0];
  case NCC_DT_BOOL: return p[0] != 0;
  case NCC_DT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
  case NCC_DT_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
  default: return 0;
  }
}

int64_t ncc_idx_count_nonzero(ncc_dtype dt, const void *data, int64_t n) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += ncc_idx_read(dt, data, i) != 0;
  return c;
}

/* ---- Unique ---- */

typedef struct uq_ctx {
  ncc_dtype dt;
  const void *data;
  int64_t outer, len, inner;
} uq_ctx;

/* Three-way comparison of slices a and b (i64 compared exactly; NaN sorts
 * after every number and equals NaN, as numpy's unique does). */
static int slice_cmp(const uq_ctx *c, int64_t a, int64_t b) {
  for (int64_t o = 0; o < c->outer; o++)
    for (int64_t i = 0; i < c->inner; i++) {
      int64_t ia = (o * c->len + a) * c->inner + i, ib = (o * c->len + b) * c->inner + i;
      if (c->dt == NCC_DT_I64) {
        int64_t x, y;
        memcpy(&x, (const char *)c->data + ia * 8, 8);
        memcpy(&y, (const char *)c->data + ib * 8, 8);
        if (x != y) return x < y ? -1 : 1;
        continue;
      }
      double x = ncc_idx_read(c->dt, c->data, ia), y = ncc_idx_read(c->dt, c->data, ib);
      bool nx = x != x, ny = y != y;
      if (nx || ny) {
        if (nx && ny) continue;
        return nx ? 1 : -1;
      }
      if (x != y) return x < y ? -1 : 1;
    }
  return 0;
}

/* Merge sort of slice indices (stable: equal slices keep index order). */
static void msort(const uq_ctx *c, int64_t *v, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  msort(c, v, tmp, h);
  msort(c, v + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = slice_cmp(c, v[j], v[i]) < 0 ? v[j++] : v[i++];
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, sizeof *v * (size_t)n);
}

ncc_status ncc_idx_unique(ncc_dtype dt, const void *data, int64_t outer, int64_t len,
                          int64_t inner, bool sorted, int64_t *first, int64_t *inverse,
                          int64_t *counts, int64_t *n_unique) {
  uq_ctx c = {dt, data, outer, len, inner};
  *n_unique = 0;
  if (len == 0) return NCC_OK;
  int64_t *ord = ncc_malloc(sizeof *ord * (size_t)len * 4);
  if (!ord) return NCC_ERR_NOMEM;
  int64_t *tmp = ord + len, *grp = ord + 2 * len, *gfirst = ord + 3 * len;
  for (int64_t j = 0; j < len; j++) ord[j] = j;
  msort(&c, ord, tmp, len);
  /* groups in sorted order; gfirst[g]: the group's first occurrence */
  int64_t ng = 0;
  for (int64_t k = 0; k < len; k++) {
    if (k == 0 || slice_cmp(&c, ord[k - 1], ord[k]) != 0) gfirst[ng++] = ord[k];
    grp[ord[k]] = ng - 1;
  }
  /* output position of each group: sorted order, or by first occurrence */
  int64_t *pos = tmp;
  if (sorted) {
    for (int64_t g = 0; g < ng; g++) pos[g] = g;
  } else {
    int64_t next = 0;
    for (int64_t g = 0; g < ng; g++) pos[g] = -1;
    for (int64_t j = 0; j < len; j++)
      if (pos[grp[j]] < 0) pos[grp[j]] = next++;
  }
  if (counts)
    for (int64_t g = 0; g < ng; g++) counts[g] = 0;
  for (int64_t j = 0; j < len; j++) {
    int64_t u = pos[grp[j]];
    if (inverse) inverse[j] = u;
    if (counts) counts[u]++;
  }
  if (first)
    for (int64_t g = 0; g < ng; g++) first[pos[g]] = gfirst[g];
  *n_unique = ng;
  ncc_free(ord, 0);
  return NCC_OK;
}

/* ---- NonMaxSuppression ---- */

static float rdf(ncc_dtype dt, const void *d, int64_t i) {
  return (float)ncc_idx_read(dt, d, i);
}

/* Whether box a suppresses box b (IoU > threshold), in f32 as ONNX's
 * reference and ONNX Runtime compute it. */
static bool suppress(const float *a, const float *b, bool center, float thr) {
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  if (!center) {
    ax0 = a[1] < a[3] ? a[1] : a[3]; ax1 = a[1] < a[3] ? a[3] : a[1];
    ay0 = a[0] < a[2] ? a[0] : a[2]; ay1 = a[0] < a[2] ? a[2] : a[0];
    bx0 = b[1] < b[3] ? b[1] : b[3]; bx1 = b[1] < b[3] ? b[3] : b[1];
    by0 = b[0] < b[2] ? b[0] : b[2]; by1 = b[0] < b[2] ? b[2] : b[0];
  } else {
    ax0 = a[0] - a[2] / 2; ax1 = a[0] + a[2] / 2;
    ay0 = a[1] - a[3] / 2; ay1 = a[1] + a[3] / 2;
    bx0 = b[0] - b[2] / 2; bx1 = b[0] + b[2] / 2;
    by0 = b[1] - b[3] / 2; by1 = b[1] + b[3] / 2;
  }
  float ix0 = ax0 > bx0 ? ax0 : bx0, ix1 = ax1 < bx1 ? ax1 : bx1;
  if (ix1 <= ix0) return false;
  float iy0 = ay0 > by0 ? ay0 : by0, iy1 = ay1 < by1 ? ay1 : by1;
  if (iy1 <= iy0) return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float aa = (ax1 - ax0) * (ay1 - ay0), ab = (bx1 - bx0) * (by1 - by0);
  float uni = aa + ab - inter;
  if (inter <= 0 || aa <= 0 || ab <= 0 || uni <= 0) return false;
  return inter / uni > thr;
}

typedef struct cand {
  float score;
  int64_t idx;
} cand;

/* Descending score, ties: lower box index first. */
static int cand_cmp(const void *x, const void *y) {
  const cand *a = x, *b = y;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

ncc_status ncc_idx_nms(const ncc_nms_params *p, ncc_dtype dt, const void *boxes,
                       const void *scores, int64_t *sel, int64_t *n) {
  *n = 0;
  int64_t S = p->boxes;
  if (S == 0 || p->max_out <= 0) return NCC_OK;
  cand *cs = ncc_malloc(sizeof *cs * (size_t)S);
  int64_t *kept = ncc_malloc(sizeof *kept * (size_t)S);
  float *bx = ncc_malloc(sizeof *bx * (size_t)S * 4);
  if (!cs || !kept || !bx) {
    ncc_free(cs, 0);
    ncc_free(kept, 0);
    ncc_free(bx, 0);
    return NCC_ERR_NOMEM;
  }
  float thr = (float)p->iou, sthr = (float)p->score;
  for (int64_t b = 0; b < p->batches; b++) {
    for (int64_t i = 0; i < S * 4; i++) bx[i] = rdf(dt, boxes, b * S * 4 + i);
    for (int64_t c = 0; c < p->classes; c++) {
      int64_t m = 0, nk = 0;
      for (int64_t s = 0; s < S; s++) {
        float sc = rdf(dt, scores, (b * p->classes + c) * S + s);
        if (p->score == p->score && !(sc > sthr)) continue; /* NaN: no threshold */
        cs[m++] = (cand){sc, s};
      }
      qsort(cs, (size_t)m, sizeof *cs, cand_cmp);
      for (int64_t k = 0; k < m && nk < p->max_out; k++) {
        bool keep = true;
        for (int64_t j = 0; j < nk && keep; j++)
          keep = !suppress(bx + cs[k].idx * 4, bx + kept[j] * 4, p->center, thr);
        if (!keep) continue;
        kept[nk++] = cs[k].idx;
        if (sel) {
          sel[*n * 3] = b;
          sel[*n * 3 + 1] = c;
          sel[*n * 3 + 2] = cs[k].idx;
        }
        (*n)++;
      }
    }
  }
  ncc_free(cs, 0);
  ncc_free(kept, 0);
  ncc_free(bx, 0);
  return NCC_OK;
}
