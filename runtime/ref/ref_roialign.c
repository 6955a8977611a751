/* runtime/ref/ref_roialign.c — reference kernel of RoiAlign (opset 16).
 *
 * ONNX's algorithm (Mask R-CNN's): each output bin of a region averages, or
 * takes the maximum of, a grid of bilinear samples (sampling_ratio per
 * side, or ceil(region / bins) when 0). A sample more than one pixel
 * outside the map contributes 0; one within clamps to the border. The max
 * mode takes, per sample, the largest of the four weighted corner values,
 * as ONNX's reference and onnxruntime do. "output_half_pixel" is the
 * opset-10 behaviour: no half-pixel shift, regions at least 1x1.
 */
#include <math.h>

#include "ref.h"

typedef struct sample {
  int64_t pos[4];
  double w[4];
} sample;

static sample bilinear(double y, double x, int64_t h, int64_t w) {
  sample s = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) return s;
  if (y < 0) y = 0;
  if (x < 0) x = 0;
  int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
  if (y0 >= h - 1) y1 = y0 = h - 1, y = (double)y0;
  else y1 = y0 + 1;
  if (x0 >= w - 1) x1 = x0 = w - 1, x = (double)x0;
  else x1 = x0 + 1;
  double ly = y - (double)y0, lx = x - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y0 * w + x0, s.pos[1] = y0 * w + x1;
  s.pos[2] = y1 * w + x0, s.pos[3] = y1 * w + x1;
  s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
  return s;
}

ncc_status ncc_ref_ROIALIGN(const ncc_node *n, const ncc_tensor *const *in,
                            ncc_tensor *out) {
  const ncc_tensor *x = in[0], *rois = in[1], *bi = in[2];
  ncc_roialign_attrs a;
  ncc_status st = ncc_attrs_roialign(n, &a);
  if (st) return st;
  int64_t nb = x->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
  int64_t nr = rois->dims[0], oh = a.out_h, ow = a.out_w, at = 0;
  double off = a.half_pixel ? 0.5 : 0.0, scale = a.spatial_scale;
  for (int64_t r = 0; r < nr; r++) {
    int64_t b = ncc_ref_get_i(bi, r);
    if (b < 0 || b >= nb)
      return ncc_node_error(n, NCC_ERR_INPUT, "batch index %lld out of range",
                            (long long)b);
    double x0 = ncc_ref_get_f(rois, r * 4 + 0) * scale - off;
    double y0 = ncc_ref_get_f(rois, r * 4 + 1) * scale - off;
    double rw = ncc_ref_get_f(rois, r * 4 + 2) * scale - off - x0;
    double rh = ncc_ref_get_f(rois, r * 4 + 3) * scale - off - y0;
    if (!a.half_pixel) {
      rw = rw > 1.0 ? rw : 1.0;
      rh = rh > 1.0 ? rh : 1.0;
    }
    double bh = rh / (double)oh, bw = rw / (double)ow;
    int64_t gh = a.sampling_ratio > 0 ? a.sampling_ratio : (int64_t)ceil(rh / (double)oh);
    int64_t gw = a.sampling_ratio > 0 ? a.sampling_ratio : (int64_t)ceil(rw / (double)ow);
    if (gh < 0) gh = 0;
    if (gw < 0) gw = 0;
    double count = gh * gw > 1 ? (double)(gh * gw) : 1.0;
    for (int64_t c = 0; c < ch; c++) {
      int64_t plane = (b * ch + c) * h * w;
      for (int64_t ph = 0; ph < oh; ph++)
        for (int64_t pw = 0; pw < ow; pw++) {
          double acc = 0.0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; iy++) {
            double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
            for (int64_t ix = 0; ix < gw; ix++) {
              double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
              sample s = bilinear(yy, xx, h, w);
              if (!a.max_mode) {
                for (int k = 0; k < 4; k++)
                  acc += s.w[k] * ncc_ref_get_f(x, plane + s.pos[k]);
                continue;
              }
              double v = s.w[0] * ncc_ref_get_f(x, plane + s.pos[0]);
              for (int k = 1; k < 4; k++) {
                double u = s.w[k] * ncc_ref_get_f(x, plane + s.pos[k]);
                if (u > v) v = u;
              }
              acc = first || v > acc ? v : acc;
              first = false;
            }
          }
          ncc_ref_set_f(&out[0], at++, a.max_mode ? acc : acc / count);
        }
    }
  }
  return NCC_OK;
}
