/* ir/window.c — decoding the conv/pool window attributes once
 * (ir/window.h). The rules are ONNX's: absent strides/dilations are 1,
 * absent pads 0, pads only count with auto_pad NOTSET, a pool needs
 * kernel_shape and pads smaller than it, a Conv's kernel_shape must agree
 * with its weight.
 */
#include <stdio.h>
#include <string.h>

#include "attrs.h"
#include "window.h"

/* An ints attribute of `count` entries in [lo, INT32_MAX] into dst (left
 * alone when absent). */
static ncc_status ints(const ncc_node *n, const char *name, int count,
                       int64_t lo, int64_t *dst) {
  const ncc_attr *a = ncc_node_attr(n, name);
  if (!a) return NCC_OK;
  if (a->kind != NCC_ATTR_INTS)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' must be a list of ints", name);
  if (a->n != count)
    return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' has %d values, expected %d",
                name, a->n, count);
  for (int i = 0; i < count; i++) {
    if (a->ints[i] < lo || a->ints[i] > INT32_MAX)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute '%s' has invalid value %lld",
                  name, (long long)a->ints[i]);
    dst[i] = a->ints[i];
  }
  return NCC_OK;
}

static ncc_status auto_pad(const ncc_node *n, ncc_auto_pad *mode) {
  const ncc_attr *a = ncc_node_attr(n, "auto_pad");
  const char *s = "NOTSET";
  if (a) {
    if (a->kind != NCC_ATTR_STRING || !a->s)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'auto_pad' must be a string");
    s = a->s;
  }
  if (!strcmp(s, "NOTSET")) *mode = NCC_AUTO_PAD_NOTSET;
  else if (!strcmp(s, "SAME_UPPER")) *mode = NCC_AUTO_PAD_SAME_UPPER;
  else if (!strcmp(s, "SAME_LOWER")) *mode = NCC_AUTO_PAD_SAME_LOWER;
  else if (!strcmp(s, "VALID")) *mode = NCC_AUTO_PAD_VALID;
  else return ncc_node_error(n, NCC_ERR_INPUT, "unknown auto_pad \"%s\"", s);
  return NCC_OK;
}

ncc_status ncc_window_decode(const ncc_node *n, int k,
                             const int64_t *wk, ncc_window *w) {
  memset(w, 0, sizeof *w);
  if (k < 1 || k > NCC_MAX_RANK - 2)
    return ncc_node_error(n, NCC_ERR_INPUT, "%d spatial dims", k);
  bool conv = n->op == NCC_OP_CONV || n->op == NCC_OP_CONVTRANSPOSE;
  w->rank = k;
  w->group = 1;
  int64_t pads[2 * NCC_MAX_RANK] = {0};
  for (int i = 0; i < k; i++) {
    w->kernel[i] = -1;
    w->stride[i] = w->dilation[i] = 1;
  }
  ncc_status st;
  if ((st = auto_pad(n, &w->auto_pad)) ||
      (st = ints(n, "kernel_shape", k, 1, w->kernel)) ||
      (st = ints(n, "strides", k, 1, w->stride)) ||
      (st = ints(n, "dilations", k, 1, w->dilation)) ||
      (st = ints(n, "pads", 2 * k, 0, pads)))
    return st;
  if (w->auto_pad == NCC_AUTO_PAD_NOTSET)
    for (int i = 0; i < k; i++) {
      w->pad_begin[i] = pads[i];
      w->pad_end[i] = pads[i + k];
    }
  if (!conv) {
    int64_t ceil;
    if ((st = ncc_attrs_get_int(n, "ceil_mode", 0, &ceil))) return st;
    if (ceil != 0 && ceil != 1)
      return ncc_node_error(n, NCC_ERR_INPUT, "attribute 'ceil_mode' must be 0 or 1, got %lld",
                  (long long)ceil);
    w->ceil_mode = ceil;
    if (w->kernel[0] < 0)
      return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'kernel_shape'");
    /* A window lying wholly in the padding has no elements (ORT rejects
     * it too). */
    for (int i = 0; i < k; i++)
      if (w->pad_begin[i] >= w->kernel[i] || w->pad_end[i] >= w->kernel[i])
        return ncc_node_error(n, NCC_ERR_INPUT,
                    "pads (%lld, %lld) must be smaller than the kernel (%lld)",
                    (long long)w->pad_begin[i], (long long)w->pad_end[i],
                    (long long)w->kernel[i]);
    return NCC_OK;
  }
  if ((st = ncc_attrs_get_int(n, "group", 1, &w->group))) return st;
  if (w->group < 1)
    return ncc_node_error(n, NCC_ERR_INPUT, "group must be positive, got %lld",
                (long long)w->group);
  for (int i = 0; i < k; i++) {
    if (!wk) {
      if (w->kernel[i] < 0)
        return ncc_node_error(n, NCC_ERR_INPUT, "missing attribute 'kernel_shape'");
      continue;
    }
    if (w->kernel[i] < 0) {
      if (wk[i] < 0)
        return ncc_node_error(n, NCC_ERR_UNSUPPORTED,
                    "kernel size of spatial dim %d is symbolic", i);
      if (wk[i] < 1 || wk[i] > INT32_MAX)
        return ncc_node_error(n, NCC_ERR_INPUT, "weight has kernel size %lld",
                    (long long)wk[i]);
      w->kernel[i] = wk[i];
    } else if (wk[i] >= 0 && wk[i] != w->kernel[i]) {
      return ncc_node_error(n, NCC_ERR_INPUT,
                  "kernel_shape[%d] = %lld but the weight's kernel is %lld", i,
                  (long long)w->kernel[i], (long long)wk[i]);
    }
  }
  return NCC_OK;
}

int64_t ncc_window_extent(const ncc_window *w, int i) {
  return (w->kernel[i] - 1) * w->dilation[i] + 1; /* both <= 2^31 */
}

void ncc_window_pads(const ncc_window *w, int i, int64_t in, int64_t out,
                     int64_t *begin, int64_t *end) {
  bool upper = w->auto_pad == NCC_AUTO_PAD_SAME_UPPER;
  if (!upper && w->auto_pad != NCC_AUTO_PAD_SAME_LOWER) {
    *begin = w->pad_begin[i];
    *end = w->pad_end[i];
    return;
  }
  /* When the stride exceeds the window the total would be negative; it is
   * clamped to 0, as onnxruntime's Conv does (its pools are inconsistent
   * there). */
  int64_t total = (out - 1) * w->stride[i] + ncc_window_extent(w, i) - in;
  if (total < 0) total = 0;
  *begin = upper ? total / 2 : total - total / 2;
  *end = total - *begin;
}

/* ---- ConvTranspose ---- */

/* The window, output_padding/output_shape and the pads of a ConvTranspose
 * with x's spatial sizes `in` (all static), its output sizes in `out`:
 * the explicit pads, or for SAME_* / output_shape the total
 * stride*(in-1) + output_padding + extent - out split with the odd one at
 * the end (SAME_UPPER) or the beginning (otherwise), as ONNX specifies. */
ncc_status ncc_convt_geometry(const ncc_node *n, int rank, const int64_t *wk,
                              const int64_t *in, ncc_window *w, int64_t *out,
                              int64_t *pb, int64_t *pe) {
  ncc_convt_attrs ca;
  ncc_status st = ncc_window_decode(n, rank, wk, w);
  if (!st) st = ncc_attrs_convt(n, rank, w->stride, w->dilation, &ca);
  if (st) return st;
  bool same = w->auto_pad == NCC_AUTO_PAD_SAME_UPPER || w->auto_pad == NCC_AUTO_PAD_SAME_LOWER;
  bool explicit_pads = ncc_node_attr(n, "pads") && !same;
  for (int i = 0; i < rank; i++) {
    int64_t full = w->stride[i] * (in[i] - 1) + ca.output_padding[i] + ncc_window_extent(w, i);
    if (explicit_pads || (!same && !ca.has_output_shape)) {
      pb[i] = w->pad_begin[i];
      pe[i] = w->pad_end[i];
      out[i] = ca.has_output_shape ? ca.output_shape[i] : full - pb[i] - pe[i];
    } else {
      out[i] = ca.has_output_shape ? ca.output_shape[i] : in[i] * w->stride[i];
      /* total < 0 (an output_shape beyond the full size) gives negative
       * pads, as ONNX's reference computes them (floor division). */
      int64_t total = full - out[i];
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      bool upper = w->auto_pad == NCC_AUTO_PAD_SAME_UPPER;
      pb[i] = upper ? half : total - half;
      pe[i] = total - pb[i];
    }
    if (out[i] < 1)
      return ncc_node_error(n, NCC_ERR_INPUT, "output spatial dim %d would be %lld", i,
                            (long long)out[i]);
  }
  return NCC_OK;
}
