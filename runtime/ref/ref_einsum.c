/* runtime/ref/ref_einsum.c — the reference Einsum: a general contraction.
 *
 * Every label (subscript letter or ellipsis dim) is one loop; the loops of
 * the output's labels are outermost, the summed ones inside, and each
 * operand is read through its strides per label (a repeated label in one
 * operand adds its strides: a diagonal; a size-1 dim broadcasts with
 * stride 0). Products accumulate in double (int64 for integer dtypes).
 */
#include <string.h>

#include "../../ir/einsum.h"
#include "ref.h"

ncc_status ncc_ref_EINSUM(const ncc_node *n, const ncc_tensor *const *in, ncc_tensor *out) {
  const char *eq;
  ncc_einsum e;
  char err[256];
  int nin = n->n_in, ranks[NCC_EINSUM_MAX_IN];
  ncc_status st = ncc_attrs_einsum(n, &eq);
  if (st) return st;
  for (int i = 0; i < nin; i++) ranks[i] = in[i]->rank;
  if (!ncc_einsum_parse(eq, nin, ranks, &e, err, sizeof err))
    return ncc_node_error(n, NCC_ERR_INPUT, "%s", err);
  int64_t size[NCC_EINSUM_LABELS];
  bool used[NCC_EINSUM_LABELS] = {false};
  for (int l = 0; l < NCC_EINSUM_LABELS; l++) size[l] = 1;
  for (int i = 0; i < nin; i++)
    for (int k = 0; k < e.rank[i]; k++) {
      int l = e.lab[i][k];
      used[l] = true;
      if (in[i]->dims[k] != 1) size[l] = in[i]->dims[k];
    }
  /* loop order: output labels, then the summed ones */
  int loops[NCC_EINSUM_LABELS], nl = 0, n_out_loops;
  bool in_out[NCC_EINSUM_LABELS] = {false};
  for (int k = 0; k < e.out_rank; k++) {
    loops[nl++] = e.out_lab[k];
    in_out[e.out_lab[k]] = true;
  }
  n_out_loops = nl;
  for (int l = 0; l < NCC_EINSUM_LABELS; l++)
    if (used[l] && !in_out[l]) loops[nl++] = l;
  /* strides[i][j]: operand i's stride for loop j */
  int64_t strides[NCC_EINSUM_MAX_IN][NCC_EINSUM_LABELS];
  for (int i = 0; i < nin; i++) {
    int64_t st_i[NCC_MAX_RANK];
    ncc_ref_strides(in[i], st_i);
    for (int j = 0; j < nl; j++) {
      strides[i][j] = 0;
      for (int k = 0; k < e.rank[i]; k++)
        if (e.lab[i][k] == loops[j]) {
          if (in[i]->dims[k] != size[loops[j]] && in[i]->dims[k] != 1)
            return ncc_node_error(n, NCC_ERR_INPUT, "operand %d dim %d does not match", i, k);
          if (in[i]->dims[k] != 1) strides[i][j] += st_i[k];
        }
    }
  }
  bool fp = out->dtype == NCC_DT_F32 || out->dtype == NCC_DT_F16 || out->dtype == NCC_DT_F64;
  int64_t n_outer = ncc_tensor_numel(out), n_inner = 1;
  for (int j = n_out_loops; j < nl; j++) n_inner *= size[loops[j]];
  int64_t idx[NCC_EINSUM_LABELS];
  for (int64_t o = 0; o < n_outer; o++) {
    int64_t base[NCC_EINSUM_MAX_IN] = {0}, rem = o;
    for (int j = n_out_loops - 1; j >= 0; j--) {
      int64_t c = rem % size[loops[j]];
      rem /= size[loops[j]];
      for (int i = 0; i < nin; i++) base[i] += c * strides[i][j];
    }
    double accf = 0;
    int64_t acci = 0;
    for (int j = n_out_loops; j < nl; j++) idx[j] = 0;
    int64_t off[NCC_EINSUM_MAX_IN];
    memcpy(off, base, sizeof off);
    for (int64_t t = 0; t < n_inner; t++) {
      if (fp) {
        double p = 1;
        for (int i = 0; i < nin; i++) p *= ncc_ref_get_f(in[i], off[i]);
        accf += p;
      } else {
        uint64_t p = 1;
        for (int i = 0; i < nin; i++) p *= (uint64_t)ncc_ref_get_i(in[i], off[i]);
        acci = (int64_t)((uint64_t)acci + p);
      }
      for (int j = nl - 1; j >= n_out_loops; j--) {
        for (int i = 0; i < nin; i++) off[i] += strides[i][j];
        if (++idx[j] < size[loops[j]]) break;
        for (int i = 0; i < nin; i++) off[i] -= strides[i][j] * size[loops[j]];
        idx[j] = 0;
      }
    }
    if (fp) ncc_ref_set_f(out, o, accf);
    else ncc_ref_set_i(out, o, acci);
  }
  return NCC_OK;
}
