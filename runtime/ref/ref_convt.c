/* runtime/ref/ref_convt.c — reference kernel of ConvTranspose.
 *
 * A direct scatter: every input pixel adds x * w into the output positions
 * o = i*stride - pad_begin + t*dilation its kernel taps reach, for 1-3
 * spatial dims (lifted to 3 by leading size-1 dims), accumulated in double
 * and rounded once. The geometry (pads from auto_pad / output_shape,
 * output_padding) is ir/window.c's ncc_convt_geometry, the one shape
 * inference used. Output positions no tap reaches hold the bias (or 0).
 * The loop ranges are computed per tap, so the innermost loop is a plain
 * strided multiply-add over an input row.
 */
#include <string.h>

#include "../../ir/window.h"
#include "ref_nn.h"

#define D3 3

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Input indices i in [*lo, *hi) whose o = i*s + shift lies in [0, out). */
static void tap_range(int64_t in, int64_t out, int64_t s, int64_t shift,
                      int64_t *lo, int64_t *hi) {
  int64_t a = -floor_div(shift, s);                    /* ceil(-shift / s) */
  int64_t b = floor_div(out - 1 - shift, s) + 1;
  *lo = a < 0 ? 0 : a;
  *hi = b > in ? in : b;
}

ncc_status ncc_ref_CONVTRANSPOSE(const ncc_node *n, const ncc_tensor *const *in,
                                 ncc_tensor *out) {
  const ncc_tensor *x = in[0], *wt = in[1], *bias = n->n_in > 2 ? in[2] : NULL;
  ncc_tensor *y = &out[0];
  int sp = x->rank - 2;
  if (sp < 1 || sp > D3 || x->dtype != NCC_DT_F32)
    return ncc_node_error(n, NCC_ERR_UNSUPPORTED, "ConvTranspose of rank %d %s (want f32, "
                          "1-3 spatial dims)", x->rank, ncc_dtype_name(x->dtype));
  ncc_window win;
  int64_t osz[NCC_MAX_RANK], pb[NCC_MAX_RANK], pe[NCC_MAX_RANK];
  ncc_status st = ncc_convt_geometry(n, sp, wt->dims + 2, x->dims + 2, &win, osz, pb, pe);
  if (st) return st;
  int64_t nb = x->dims[0], ch = x->dims[1], g = win.group;
  int64_t cpg = ch / g, mpg = wt->dims[1], m = mpg * g;
  if (y->dims[1] != m || wt->dims[0] != ch || (bias && ncc_tensor_numel(bias) != m))
    return ncc_node_error(n, NCC_ERR_INPUT, "weight and output channels disagree");
  /* lifted geometry */
  int64_t I[D3], O[D3], K[D3], S[D3], Dl[D3], P[D3];
  for (int i = 0; i < D3; i++) I[i] = O[i] = K[i] = S[i] = Dl[i] = 1, P[i] = 0;
  for (int i = 0; i < sp; i++) {
    int j = D3 - sp + i;
    I[j] = x->dims[2 + i];
    O[j] = y->dims[2 + i];
    K[j] = win.kernel[i];
    S[j] = win.stride[i];
    Dl[j] = win.dilation[i];
    P[j] = pb[i];
    if (O[j] != osz[i])
      return ncc_node_error(n, NCC_ERR_INPUT, "output size disagrees with the geometry");
  }
  int64_t isp = I[0] * I[1] * I[2], osp = O[0] * O[1] * O[2], ksz = K[0] * K[1] * K[2];
  size_t bytes = (size_t)(m * osp > 0 ? m * osp : 1) * sizeof(double);
  double *acc = ncc_malloc(bytes);
  if (!acc) return NCC_ERR_NOMEM;
  const float *xp = x->data, *wp = wt->data, *bp = bias ? bias->data : NULL;
  float *yp = y->data;
  for (int64_t b = 0; b < nb; b++) {
    for (int64_t oc = 0; oc < m; oc++)
      for (int64_t j = 0; j < osp; j++) acc[oc * osp + j] = bp ? bp[oc] : 0.0;
    for (int64_t ic = 0; ic < ch; ic++) {
      const float *xplane = xp + (b * ch + ic) * isp;
      int64_t grp = ic / cpg;
      for (int64_t ol = 0; ol < mpg; ol++) {
        double *ap = acc + (grp * mpg + ol) * osp;
        const float *wk = wp + (ic * mpg + ol) * ksz;
        int64_t t[D3];
        for (t[0] = 0; t[0] < K[0]; t[0]++)
          for (t[1] = 0; t[1] < K[1]; t[1]++)
            for (t[2] = 0; t[2] < K[2]; t[2]++) {
              double wv = wk[(t[0] * K[1] + t[1]) * K[2] + t[2]];
              int64_t sh[D3], lo[D3], hi[D3];
              for (int i = 0; i < D3; i++) {
                sh[i] = t[i] * Dl[i] - P[i];
                tap_range(I[i], O[i], S[i], sh[i], &lo[i], &hi[i]);
              }
              for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
                for (int64_t i1 = lo[1]; i1 < hi[1]; i1++) {
                  const float *xr = xplane + (i0 * I[1] + i1) * I[2];
                  int64_t at = ((i0 * S[0] + sh[0]) * O[1] + i1 * S[1] + sh[1]) * O[2] + sh[2];
                  for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) ap[at + i2 * S[2]] += wv * xr[i2];
                }
            }
      }
    }
    for (int64_t j = 0; j < m * osp; j++) yp[b * m * osp + j] = (float)acc[j];
  }
  ncc_free(acc, bytes);
  return NCC_OK;
}
