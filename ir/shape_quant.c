/* ir/shape_quant.c — shape rules of the quantization ops: QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger,
 * QLinearMatMul, QLinearConv, and ONNX Runtime's com.microsoft QLinearAdd,
 * QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
 * QLinearConcat (per-tensor scales and zero points only, as ONNX Runtime's
 * kernels take them) and QGemm (B's per column).
 *
 * Dtypes are classed by name ("i*"/"u*" integers, "f*"/"bf16" floats), so
 * the integer and float dtypes added after these rules (i16, u16, bf16, ...)
 * are accepted without an edit here. The integer contractions reuse the
 * MatMul and Conv rules for their shapes: those rules see the quantized
 * operands as if they were f32 (the dims do not depend on the dtype).
 */
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"

static bool is_int_dt(ncc_dtype dt) {
  const char *s = ncc_dtype_name(dt);
  return dt != NCC_DT_UNDEF && (s[0] == 'i' || s[0] == 'u');
}

static bool is_float_dt(ncc_dtype dt) {
  const char *s = ncc_dtype_name(dt);
  return dt != NCC_DT_UNDEF && (s[0] == 'f' || !strcmp(s, "bf16"));
}

static ncc_status need(ictx *c, int i, bool ok, const char *what) {
  if (ok) return NCC_OK;
  return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "dtype %s is not supported (input %d: %s)",
                     ncc_dtype_name(IN(c, i)->dtype), i, what);
}

/* The scale (and zero point) of x: per-tensor (one element, rank <= 1),
 * per-axis (1-D of x's dim `axis`) or blocked (x's rank, ceil(dim /
 * block_size) along axis, x's dims elsewhere). */
static ncc_status check_qparam(ictx *c, int x, int i, int axis, int64_t block) {
  if (!has_in(c, i)) return NCC_OK;
  const ncc_shape *xs = &IN(c, x)->shape, *s = &IN(c, i)->shape;
  int64_t n = ncc_shape_numel(s);
  if (block == 0) {
    if (s->rank == 0 || (s->rank == 1 && n == 1)) return NCC_OK;
    /* a scalar x has no axis: its parameters hold one value */
    if (xs->rank == 0)
      return ncc_si_fail(c, NCC_ERR_INPUT, "input %d of a scalar x must hold one value", i);
    if (s->rank == 1 && (!is_static(s->d[0]) || !is_static(xs->d[axis]) ||
                         s->d[0] == xs->d[axis]))
      return NCC_OK;
    return ncc_si_fail(c, NCC_ERR_INPUT,
                       "input %d must be a scalar or 1-D of the axis's %lld entries", i,
                       (long long)xs->d[axis]);
  }
  if (s->rank != xs->rank)
    return ncc_si_fail(c, NCC_ERR_INPUT, "blocked input %d must have rank %d", i, xs->rank);
  for (int d = 0; d < s->rank; d++) {
    int64_t want = xs->d[d];
    if (!is_static(want) || !is_static(s->d[d])) continue;
    if (d == axis) want = want / block + (want % block != 0); /* no overflow near 2^63 */
    if (s->d[d] != want)
      return ncc_si_fail(c, NCC_ERR_INPUT, "blocked input %d has dim %d = %lld, expected %lld",
                         i, d, (long long)s->d[d], (long long)want);
  }
  return NCC_OK;
}

static ncc_status quant_common(ictx *c, ncc_quant_attrs *qa, int *axis) {
  ncc_status st;
  if ((st = ncc_attrs_quant(c->n, qa)) ||
      (st = need(c, 1, is_float_dt(IN(c, 1)->dtype) || IN(c, 1)->dtype == NCC_DT_I32,
                 "scale")))
    return st;
  int r = rank_of(c, 0);
  *axis = 0;
  /* the axis only matters (and is only checked) for per-axis and blocked */
  const ncc_shape *s = &IN(c, 1)->shape;
  bool per_tensor = qa->block_size == 0 && s->rank <= 1 && ncc_shape_numel(s) == 1;
  if (r > 0 && !per_tensor &&
      (st = ncc_si_norm_axis(c, "axis", qa->axis, r, false, axis)))
    return st;
  if (r == 0 && qa->block_size > 0)
    return ncc_si_fail(c, NCC_ERR_INPUT, "blocked quantization of a scalar");
  if ((st = check_qparam(c, 0, 1, *axis, qa->block_size)) ||
      (st = check_qparam(c, 0, 2, *axis, qa->block_size)))
    return st;
  if (has_in(c, 2) && ncc_shape_numel(&IN(c, 2)->shape) != ncc_shape_numel(&IN(c, 1)->shape))
    return ncc_si_fail(c, NCC_ERR_INPUT, "zero point and scale differ in shape");
  return NCC_OK;
}

/* QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point). */
ncc_status ncc_rule_quantize(ictx *c) {
  ncc_status st;
  ncc_quant_attrs qa;
  int axis;
  ncc_dtype x = IN(c, 0)->dtype, out = NCC_DT_U8;
  if ((st = need(c, 0, is_float_dt(x) || x == NCC_DT_I32, "float or int32")) ||
      (st = quant_common(c, &qa, &axis)))
    return st;
  if (has_in(c, 2)) out = IN(c, 2)->dtype;
  if (qa.output_dtype) {
    ncc_dtype od;
    if ((st = ncc_attrs_onnx_dtype(c->n, qa.output_dtype, &od))) return st;
    if (has_in(c, 2) && od != out)
      return ncc_si_fail(c, NCC_ERR_INPUT, "output_dtype %s differs from the zero point's %s",
                         ncc_dtype_name(od), ncc_dtype_name(out));
    out = od;
  }
  if (!is_int_dt(out) || out == NCC_DT_I64 || ncc_dtype_size(out) > 4)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "quantizing to dtype %s is not supported",
                       ncc_dtype_name(out));
  set_out(c, 0, out, &IN(c, 0)->shape);
  return NCC_OK;
}

/* DequantizeLinear: y = (x - zero_point) * scale, in the scale's dtype or
 * output_dtype's. */
ncc_status ncc_rule_dequantize(ictx *c) {
  ncc_status st;
  ncc_quant_attrs qa;
  int axis;
  ncc_dtype x = IN(c, 0)->dtype;
  if ((st = need(c, 0, is_int_dt(x) && ncc_dtype_size(x) <= 4, "8/16/32-bit integer")) ||
      (st = quant_common(c, &qa, &axis)))
    return st;
  if (has_in(c, 2) && (st = ncc_si_check_same_dtype(c, 0, 2))) return st;
  ncc_dtype out = IN(c, 1)->dtype;
  if (!is_float_dt(out))
    return ncc_si_fail(c, NCC_ERR_INPUT, "scale must be a float, got %s", ncc_dtype_name(out));
  if (qa.output_dtype) { /* opset 23: any float type, whatever the scale's */
    if ((st = ncc_attrs_onnx_dtype(c->n, qa.output_dtype, &out))) return st;
    if (!is_float_dt(out))
      return ncc_si_fail(c, NCC_ERR_INPUT, "output_dtype must be a float type, not %s",
                         ncc_dtype_name(out));
  }
  set_out(c, 0, out, &IN(c, 0)->shape);
  return NCC_OK;
}

/* DynamicQuantizeLinear: f32 x -> (u8 y, f32 scale, u8 zero point). */
ncc_status ncc_rule_dynquant(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT(F32)))) return st;
  ncc_shape scalar = {.rank = 0};
  set_out(c, 0, NCC_DT_U8, &IN(c, 0)->shape);
  set_out(c, 1, NCC_DT_F32, &scalar);
  set_out(c, 2, NCC_DT_U8, &scalar);
  return NCC_OK;
}

/* The MatMul rule on inputs a and b seen as f32. */
static ncc_status matmul_dims(ictx *c, int a, int b) {
  ncc_tinfo in[2] = {*IN(c, a), *IN(c, b)};
  in[0].dtype = in[1].dtype = NCC_DT_F32;
  ictx t = *c;
  t.in = in;
  return ncc_rule_matmul(&t);
}

static ncc_status check_zp(ictx *c, int zp, int of) {
  if (!has_in(c, zp)) return NCC_OK;
  ncc_status st = ncc_si_check_same_dtype(c, of, zp);
  if (!st && IN(c, zp)->shape.rank > 1)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "zero point input %d of rank %d", zp,
                       IN(c, zp)->shape.rank);
  return st;
}

/* Input i (a scale or zero point) holds one value, or `dim` values (one
 * per row, column or output channel) when per > 0; the kernels index it
 * so. */
static ncc_status check_count(ictx *c, int i, int64_t dim, bool per) {
  if (!has_in(c, i)) return NCC_OK;
  int64_t n = ncc_shape_numel(&IN(c, i)->shape);
  if (n == 1 || n < 0 || (per && (!is_static(dim) || n == dim))) return NCC_OK;
  return ncc_si_fail(c, NCC_ERR_INPUT, "input %d has %lld values, expected 1%s", i,
                     (long long)n, per ? " or one per row/column/channel" : "");
}

/* The rows of a (1 for a vector) and the columns of b (1 for a vector). */
static int64_t rows_of(ictx *c, int a) {
  const ncc_shape *s = &IN(c, a)->shape;
  return s->rank < 2 ? 1 : s->d[s->rank - 2];
}
static int64_t cols_of(ictx *c, int b) {
  const ncc_shape *s = &IN(c, b)->shape;
  return s->rank < 2 ? 1 : s->d[s->rank - 1];
}

static ncc_status int8_in(ictx *c, int i) {
  ncc_dtype dt = IN(c, i)->dtype;
  return need(c, i, dt == NCC_DT_I8 || dt == NCC_DT_U8, "int8 or uint8");
}

/* MatMulInteger: i32 = (A - a_zero_point) @ (B - b_zero_point). */
ncc_status ncc_rule_matmulinteger(ictx *c) {
  ncc_status st;
  if ((st = int8_in(c, 0)) || (st = int8_in(c, 1)) || (st = check_zp(c, 2, 0)) ||
      (st = check_zp(c, 3, 1)) || (st = matmul_dims(c, 0, 1)) ||
      (st = check_count(c, 2, rows_of(c, 0), true)) ||
      (st = check_count(c, 3, cols_of(c, 1), true)))
    return st;
  c->out[0].dtype = NCC_DT_I32;
  return NCC_OK;
}

static ncc_status scale_in(ictx *c, int i) {
  ncc_status st = need(c, i, is_float_dt(IN(c, i)->dtype), "float scale");
  if (!st && IN(c, i)->shape.rank > 1)
    return ncc_si_fail(c, NCC_ERR_UNSUPPORTED, "scale input %d of rank %d", i,
                       IN(c, i)->shape.rank);
  return st;
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp). */
ncc_status ncc_rule_qlinearmatmul(ictx *c) {
  ncc_status st;
  if ((st = int8_in(c, 0)) || (st = int8_in(c, 3)) || (st = int8_in(c, 7)) ||
      (st = scale_in(c, 1)) || (st = scale_in(c, 4)) || (st = scale_in(c, 6)) ||
      (st = check_zp(c, 2, 0)) || (st = check_zp(c, 5, 3)) ||
      (st = matmul_dims(c, 0, 3)) || (st = check_count(c, 1, rows_of(c, 0), true)) ||
      (st = check_count(c, 2, rows_of(c, 0), true)) ||
      (st = check_count(c, 4, cols_of(c, 3), true)) ||
      (st = check_count(c, 5, cols_of(c, 3), true)) || (st = check_count(c, 6, 1, false)) ||
      (st = check_count(c, 7, 1, false)))
    return st;
  c->out[0].dtype = IN(c, 7)->dtype;
  return NCC_OK;
}

/* `rule` of the float op `op` on inputs a and b seen as f32 with no known
 * content, on a copy of the node posing as that op (ncc_window_decode reads
 * a Conv's attributes so): the shapes a quantized op shares with it. */
static ncc_status rule_as(ictx *c, ncc_op op, int a, int b, ncc_status (*rule)(ictx *)) {
  ncc_tinfo in[2] = {*IN(c, a), *IN(c, b)};
  in[0].dtype = in[1].dtype = NCC_DT_F32;
  in[0].content_len = in[1].content_len = -1;
  ncc_node node = *c->n;
  node.op = op;
  node.n_in = 2;
  ictx t = *c;
  t.in = in;
  t.n = &node;
  return rule(&t);
}

/* The Conv rule (window, channels, output dims) on x and w. */
static ncc_status conv_dims(ictx *c, int x, int w) {
  return rule_as(c, NCC_OP_CONV, x, w, ncc_rule_conv);
}

/* ConvInteger(x, w, x_zero_point, w_zero_point) -> i32. */
ncc_status ncc_rule_convinteger(ictx *c) {
  ncc_status st;
  if ((st = int8_in(c, 0)) || (st = int8_in(c, 1)) || (st = check_zp(c, 2, 0)) ||
      (st = check_zp(c, 3, 1)) || (st = conv_dims(c, 0, 1)) ||
      (st = check_count(c, 2, 1, false)) ||
      (st = check_count(c, 3, IN(c, 1)->shape.d[0], true)))
    return st;
  c->out[0].dtype = NCC_DT_I32;
  return NCC_OK;
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B). */
ncc_status ncc_rule_qlinearconv(ictx *c) {
  ncc_status st;
  if ((st = int8_in(c, 0)) || (st = int8_in(c, 3)) || (st = int8_in(c, 7)) ||
      (st = scale_in(c, 1)) || (st = scale_in(c, 4)) || (st = scale_in(c, 6)) ||
      (st = check_zp(c, 2, 0)) || (st = check_zp(c, 5, 3)) ||
      (st = conv_dims(c, 0, 3)))
    return st;
  int64_t m = IN(c, 3)->shape.d[0];
  if ((st = check_count(c, 1, 1, false)) || (st = check_count(c, 2, 1, false)) ||
      (st = check_count(c, 4, m, true)) || (st = check_count(c, 5, m, true)) ||
      (st = check_count(c, 6, 1, false)) || (st = check_count(c, 7, 1, false)))
    return st;
  if (has_in(c, 8)) { /* the kernels read one i32 per output channel */
    int64_t r;
    if ((st = ncc_si_check_dtype(c, 8, DT(I32))) || (st = ncc_si_check_rank(c, 8, 1)))
      return st;
    if (!ncc_si_merge_dim(c->g, IN(c, 8)->shape.d[0], m, &r))
      return ncc_si_fail(c, NCC_ERR_INPUT, "bias has %lld entries, expected %lld",
                         (long long)IN(c, 8)->shape.d[0], (long long)m);
  }
  c->out[0].dtype = IN(c, 7)->dtype;
  return NCC_OK;
}

/* ---- com.microsoft QLinear ops ---- */

/* Input `s` a per-tensor f32 scale, input `zp` (optional) a per-tensor zero
 * point of input `of`'s dtype. */
static ncc_status tensor_qparams(ictx *c, int s, int zp, int of) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, s, DT(F32))) || (st = check_count(c, s, 1, false)) ||
      (st = check_zp(c, zp, of)) || (st = check_count(c, zp, 1, false)))
    return st;
  return NCC_OK;
}

/* QLinearAdd / QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale,
 * C_zp): numpy broadcasting of A and B, the output in A's dtype. */
ncc_status ncc_rule_qlinearbinary(ictx *c) {
  ncc_status st;
  if ((st = int8_in(c, 0)) || (st = ncc_si_check_same_dtype(c, 0, 3)) ||
      (st = tensor_qparams(c, 1, 2, 0)) || (st = tensor_qparams(c, 4, 5, 3)) ||
      (st = tensor_qparams(c, 6, 7, 0)))
    return st;
  if ((st = rule_as(c, NCC_OP_ADD, 0, 3, ncc_rule_binary))) return st;
  c->out[0].dtype = IN(c, 0)->dtype;
  c->out[0].content_len = -1;
  return NCC_OK;
}

/* QLinearSigmoid / QLinearLeakyRelu(X, X_scale, X_zp, Y_scale, Y_zp). */
ncc_status ncc_rule_qlinearunary(ictx *c) {
  ncc_status st;
  if ((st = int8_in(c, 0)) || (st = tensor_qparams(c, 1, 2, 0)) ||
      (st = tensor_qparams(c, 3, 4, 0)))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp): the spatial
 * dims become 1; channels_last puts C last (NHWC). */
ncc_status ncc_rule_qlineargap(ictx *c) {
  ncc_status st;
  int64_t last;
  if ((st = int8_in(c, 0)) || (st = ncc_si_check_min_rank(c, 0, 3)) ||
      (st = tensor_qparams(c, 1, 2, 0)) || (st = tensor_qparams(c, 3, 4, 0)) ||
      (st = ncc_attrs_get_int(c->n, "channels_last", 0, &last)))
    return st;
  ncc_shape s = IN(c, 0)->shape;
  int r = s.rank;
  for (int d = 1; d < r; d++) {
    if (d == (last ? r - 1 : 1)) continue;
    /* the mean of an empty image (onnxruntime refuses it at run time) */
    if (s.d[d] == 0)
      return ncc_si_fail(c, NCC_ERR_INPUT, "spatial dim %d is 0: no values to average", d);
    s.d[d] = 1;
  }
  set_out(c, 0, IN(c, 0)->dtype, &s);
  return NCC_OK;
}

/* QLinearConcat(Y_scale, Y_zp, (X, X_scale, X_zp)...), attribute axis:
 * Concat's shapes, each input requantized to Y's parameters. */
ncc_status ncc_rule_qlinearconcat(ictx *c) {
  ncc_status st;
  int nin = c->n->n_in;
  if ((nin - 2) % 3 != 0)
    return ncc_si_fail(c, NCC_ERR_INPUT,
                       "expects Y_scale, Y_zero_point and triples (X, X_scale, "
                       "X_zero_point), got %d inputs", nin);
  if ((st = int8_in(c, 1)) || (st = tensor_qparams(c, 0, 1, 1))) return st;
  int k = (nin - 2) / 3;
  for (int j = 0; j < k; j++) {
    int x = 2 + 3 * j;
    if (!has_in(c, x) || !has_in(c, x + 2))
      return ncc_si_fail(c, NCC_ERR_INPUT, "input %d or its zero point is missing", x);
    if ((st = ncc_si_check_same_dtype(c, 1, x)) || (st = tensor_qparams(c, x + 1, x + 2, x)))
      return st;
  }
  ncc_tinfo *in = ncc_calloc((size_t)k, sizeof *in);
  if (!in) return ncc_si_nomem();
  for (int j = 0; j < k; j++) {
    in[j] = *IN(c, 2 + 3 * j);
    in[j].dtype = NCC_DT_F32;
    in[j].content_len = -1;
  }
  ncc_node node = *c->n;
  node.op = NCC_OP_CONCAT;
  node.n_in = k;
  ictx t = *c;
  t.in = in;
  t.n = &node;
  st = ncc_rule_concat(&t);
  ncc_free(in, (size_t)k * sizeof *in);
  if (st) return st;
  c->out[0].dtype = IN(c, 1)->dtype;
  c->out[0].content_len = -1;
  return NCC_OK;
}

/* QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp), attributes
 * alpha, transA, transB: [M, N], requantized to y's dtype when y_scale is
 * given, else f32. b_scale / b_zp per tensor or one per column; C an int32
 * bias broadcast to [M, N]. */
ncc_status ncc_rule_qgemm(ictx *c) {
  ncc_status st;
  int64_t ta, tb;
  if ((st = int8_in(c, 0)) || (st = int8_in(c, 3)) || (st = ncc_si_check_rank(c, 0, 2)) ||
      (st = ncc_si_check_rank(c, 3, 2)) || (st = tensor_qparams(c, 1, 2, 0)) ||
      (st = ncc_si_check_dtype(c, 4, DT(F32))) || (st = check_zp(c, 5, 3)) ||
      (st = ncc_attrs_get_int(c->n, "transA", 0, &ta)) ||
      (st = ncc_attrs_get_int(c->n, "transB", 0, &tb)))
    return st;
  const ncc_shape *a = &IN(c, 0)->shape, *b = &IN(c, 3)->shape;
  int64_t M = a->d[ta ? 1 : 0], K = a->d[ta ? 0 : 1], KB = b->d[tb ? 1 : 0];
  int64_t N = b->d[tb ? 0 : 1];
  if (is_static(K) && is_static(KB) && K != KB)
    return ncc_si_fail(c, NCC_ERR_INPUT, "A has %lld columns, B %lld rows", (long long)K,
                       (long long)KB);
  if ((st = check_count(c, 4, N, true)) || (st = check_count(c, 5, N, true))) return st;
  ncc_shape o = {.rank = 2, .d = {M, N}};
  if (has_in(c, 6)) {
    const ncc_shape *cs = &IN(c, 6)->shape;
    if ((st = ncc_si_check_dtype(c, 6, DT(I32)))) return st;
    bool ok = cs->rank <= 2;
    for (int d = 0; ok && d < cs->rank; d++) {
      int64_t want = o.d[2 - cs->rank + d];
      ok = cs->d[d] == 1 || !is_static(cs->d[d]) || !is_static(want) || cs->d[d] == want;
    }
    if (!ok) return ncc_si_fail(c, NCC_ERR_INPUT, "C does not broadcast to [M, N]");
  }
  ncc_dtype od = NCC_DT_F32;
  if (has_in(c, 7)) {
    if ((st = ncc_si_check_dtype(c, 7, DT(F32))) || (st = check_count(c, 7, 1, false)))
      return st;
    od = NCC_DT_U8;
    if (has_in(c, 8)) {
      if ((st = int8_in(c, 8)) || (st = check_count(c, 8, 1, false))) return st;
      od = IN(c, 8)->dtype;
    }
  } else if (has_in(c, 8)) {
    return ncc_si_fail(c, NCC_ERR_INPUT, "y_zero_point without y_scale");
  }
  set_out(c, 0, od, &o);
  return NCC_OK;
}
