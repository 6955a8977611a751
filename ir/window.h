/* ir/window.h — the sliding window of Conv, MaxPool and AveragePool,
 * decoded once from the node's attributes (kernel_shape, strides,
 * dilations, pads, auto_pad, ceil_mode, group) with ONNX's defaults and
 * validity rules. Shape inference, the reference kernels, the CPU and GPU
 * lowerings and the layout pass all read this view (ir/window.c), never
 * the attributes.
 */
#ifndef NCC_IR_WINDOW_H
#define NCC_IR_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "ir.h"

typedef enum {
  NCC_AUTO_PAD_NOTSET,
  NCC_AUTO_PAD_SAME_UPPER,
  NCC_AUTO_PAD_SAME_LOWER,
  NCC_AUTO_PAD_VALID,
} ncc_auto_pad;

typedef struct ncc_window {
  int rank; /* spatial dims: the input's rank - 2 */
  ncc_auto_pad auto_pad;
  bool ceil_mode; /* pools; false for Conv */
  int64_t group;  /* Conv; 1 for pools */
  /* Per spatial dim; all in [1, INT32_MAX] (pads in [0, INT32_MAX]). */
  int64_t kernel[NCC_MAX_RANK], stride[NCC_MAX_RANK], dilation[NCC_MAX_RANK];
  /* The explicit pads; 0 unless auto_pad is NOTSET (SAME pads depend on the
   * sizes: ncc_window_pads). */
  int64_t pad_begin[NCC_MAX_RANK], pad_end[NCC_MAX_RANK];
} ncc_window;

/* Decode node n (Conv, MaxPool or AveragePool) with `rank` spatial dims.
 * weight_kernel: a Conv's weight's spatial dims (negative: symbolic), which
 * kernel_shape must agree with and which stand in for it when absent.
 * Errors are one-liners naming the node. */
ncc_status ncc_window_decode(const ncc_node *n, int rank,
                             const int64_t *weight_kernel, ncc_window *w);

/* (kernel - 1) * dilation + 1: the input extent one window covers. */
int64_t ncc_window_extent(const ncc_window *w, int i);

/* The pads of spatial dim i for input size `in` and output size `out`:
 * the explicit ones, or for SAME_* the total that makes out = ceil(in /
 * stride), clamped at 0, with the odd element at the end (UPPER) or the
 * beginning (LOWER). */
void ncc_window_pads(const ncc_window *w, int i, int64_t in, int64_t out,
                     int64_t *begin, int64_t *end);

/* ---- ConvTranspose ----
 * The window of ConvTranspose node n (decoded as Conv's; wk: the weight's
 * kernel dims) and, for static input sizes in[0..rank), its output sizes
 * and pads (the explicit ones, or the SAME_* / output_shape split). */
ncc_status ncc_convt_geometry(const ncc_node *n, int rank, const int64_t *wk,
                              const int64_t *in, ncc_window *w, int64_t *out,
                              int64_t *pb, int64_t *pe);

#endif
