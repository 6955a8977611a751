/* ir/shape_source.c — source rules: Constant, ConstantOfShape, Range.
 */
#include <math.h>
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"

/* ------------------------------------------------------------------------ */
/* sources                                                                   */

ncc_status ncc_rule_constant(ictx *c) {
  const ncc_const *t;
  ncc_status st = ncc_attrs_value(c->n, &t);
  if (st) return st;
  set_out(c, 0, t->dtype, &t->shape);
  c->out[0].data = t->data;
  ncc_si_content_from_data(&c->out[0]);
  c->out[0].data = NULL;
  return NCC_OK;
}

ncc_status ncc_rule_constant_of_shape(ictx *c) {
  ncc_status st;
  const ncc_const *t;
  ncc_shape o;
  if ((st = ncc_si_shape_input(c, 0, &o)) || (st = ncc_attrs_value(c->n, &t)))
    return st;
  ncc_dtype dt = t ? t->dtype : NCC_DT_F32;
  set_out(c, 0, dt, &o);
  int m = ncc_si_content_slots(dt, &o);
  int64_t fill, v[NCC_CONTENT_MAX];
  if (m < 0 || !t || !ncc_si_read_int(dt, t->data, 0, &fill)) return NCC_OK;
  for (int e = 0; e < m; e++) v[e] = fill;
  set_content(&c->out[0], v, m);
  return NCC_OK;
}

/* Largest Range we agree to describe. */
#define RANGE_MAX ((int64_t)1 << 40)

static ncc_status range_count_int(ictx *c, int64_t start, int64_t limit,
                                  int64_t delta, int64_t *cnt) {
  int64_t diff;
  if (delta == 0) return ncc_si_fail(c, NCC_ERR_INPUT, "delta is 0");
  if (__builtin_sub_overflow(limit, start, &diff))
    return ncc_si_fail(c, NCC_ERR_INPUT, "range is too large");
  /* ceil(diff / delta) when positive; q + 1 is capped so it cannot
   * overflow (diff = INT64_MIN, delta = -1). */
  int64_t q;
  if (delta > 0 ? diff <= 0 : diff >= 0) q = -1;
  else if (delta > 0) q = (diff - 1) / delta;
  else q = delta == INT64_MIN ? 0 : (-(diff + 1)) / (-delta);
  *cnt = q >= RANGE_MAX ? RANGE_MAX + 1 : q + 1;
  return NCC_OK;
}

ncc_status ncc_rule_range(ictx *c) {
  ncc_status st;
  /* ONNX Range: float, double, int16, int32, int64 */
  if ((st = ncc_si_check_dtype(c, 0, DT(F32) | DT(F64) | DT(I16) | DT(I32) | DT(I64))))
    return st;
  for (int i = 0; i < 3; i++) {
    if ((st = ncc_si_check_same_dtype(c, 0, i))) return st;
    if (ncc_shape_numel(&IN(c, i)->shape) != 1)
      return ncc_si_fail(c, NCC_ERR_INPUT, "input %d must be a scalar", i);
  }
  ncc_dtype dt = IN(c, 0)->dtype;
  ncc_shape o = {.rank = 1};
  int64_t v[3], cnt = -1;
  bool known[3], all = true, any_sym = false;
  if (dt == NCC_DT_F32 || dt == NCC_DT_F64) {
    double f[3];
    for (int i = 0; i < 3; i++) {
      all &= IN(c, i)->data != NULL;
      if (all) ncc_si_read_f64(dt, IN(c, i)->data, 0, &f[i]);
    }
    if (all) {
      /* As ONNX Runtime: the difference in the dtype, the quotient in double. */
      double diff = dt == NCC_DT_F32 ? (double)((float)f[1] - (float)f[0]) : f[1] - f[0];
      double q = ceil(diff / f[2]);
      if (f[2] == 0 || !isfinite(q))
        return ncc_si_fail(c, NCC_ERR_INPUT, "invalid range (%g, %g, %g)", f[0], f[1],
                    f[2]);
      cnt = q < 0 ? 0 : q > (double)RANGE_MAX ? RANGE_MAX + 1 : (int64_t)q;
    }
  } else {
    for (int i = 0; i < 3; i++) {
      int n;
      if ((st = ncc_si_input_ints(c, i, &v[i], 1, &n, &known[i]))) return st;
      all &= known[i];
      any_sym |= known[i] && ncc_dim_is_sym(v[i]);
    }
    if (all && !any_sym) {
      if ((st = range_count_int(c, v[0], v[1], v[2], &cnt))) return st;
    } else if (all && v[0] == 0 && v[2] == 1 && ncc_dim_is_sym(v[1])) {
      o.d[0] = v[1]; /* Range(0, N, 1) has N elements */
      set_out(c, 0, dt, &o);
      return NCC_OK;
    }
  }
  if (cnt > RANGE_MAX)
    return ncc_si_fail(c, NCC_ERR_INPUT, "range of more than %lld elements",
                (long long)RANGE_MAX);
  if (cnt < 0 && (st = ncc_si_fresh_dim(c, &o.d[0]))) return st;
  if (cnt >= 0) o.d[0] = cnt;
  set_out(c, 0, dt, &o);
  if (dt != NCC_DT_F32 && dt != NCC_DT_F64 && cnt >= 0 && cnt <= NCC_CONTENT_MAX) {
    int64_t w[NCC_CONTENT_MAX];
    for (int64_t e = 0; e < cnt; e++) w[e] = v[0] + e * v[2];
    set_content(&c->out[0], w, (int)cnt);
  }
  return NCC_OK;
}
