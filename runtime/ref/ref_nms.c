/* runtime/ref/ref_nms.c — the reference NonMaxSuppression: the selection
 * of ir/index_data.c (the one shape inference uses for constant inputs),
 * counted, allocated (NCC_OPF_DYNAMIC) and copied into [num_selected, 3].
 */
#include <math.h>

#include "../../ir/index_data.h"
#include "ref.h"

static double opt_scalar(const ncc_node *n, const ncc_tensor *const *in, int i, double dflt) {
  if (i >= n->n_in || !in[i] || ncc_tensor_numel(in[i]) == 0) return dflt;
  return ncc_ref_get_f(in[i], 0);
}

ncc_status ncc_ref_NONMAXSUPPRESSION(const ncc_node *n, const ncc_tensor *const *in,
                                     ncc_tensor *out) {
  bool center;
  ncc_status st = ncc_attrs_nms(n, &center);
  if (st) return st;
  double mo = opt_scalar(n, in, 2, 0);
  ncc_nms_params p = {.batches = in[0]->dims[0], .classes = in[1]->dims[1],
                      .boxes = in[0]->dims[1],
                      .max_out = mo > 0x1p62 ? (int64_t)1 << 62 : (int64_t)mo,
                      .iou = opt_scalar(n, in, 3, 0), .score = opt_scalar(n, in, 4, NAN),
                      .center = center};
  int64_t cnt = 0;
  if ((st = ncc_idx_nms(&p, in[0]->dtype, in[0]->data, in[1]->data, NULL, &cnt))) return st;
  /* NCC_OPF_DYNAMIC: the output is sized here */
  int64_t dims[2] = {cnt, 3};
  if ((st = ncc_ref_alloc_out(out, 2, dims))) return st;
  int64_t *sel = ncc_malloc(sizeof *sel * (size_t)(3 * cnt + 1));
  if (!sel) return NCC_ERR_NOMEM;
  st = ncc_idx_nms(&p, in[0]->dtype, in[0]->data, in[1]->data, sel, &cnt);
  for (int64_t i = 0; !st && i < 3 * cnt; i++) ncc_ref_set_i(out, i, sel[i]);
  ncc_free(sel, 0);
  return st;
}
