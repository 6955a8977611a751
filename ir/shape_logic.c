/* ir/shape_logic.c — shape rules of the logical, bitwise, integer and simple
 * elementwise/variadic ops (And Or Xor Not, Mod, BitShift, Bitwise*,
 * LessOrEqual/GreaterOrEqual, IsNaN/IsInf, PRelu, Sum/Mean, Shrink), and of
 * CastLike, Hardmax, Trilu, CumSum, Tile, OneHot, EyeLike, Size, Dropout.
 *
 * The dtype sets are ONNX's, cut to the dtypes ncc has; this is the one
 * place where a dtype an op lacks is refused (NCC_ERR_UNSUPPORTED naming
 * op and dtype). The kernels (runtime/ref/ref_logic*.c) work on every dtype
 * through the generic accessors, so a dtype ncc gains joins a set here.
 */
#include <math.h>
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"

/* Integer dtypes (wrap-around arithmetic; unsigned ones by their bits) */
#define LG_INT DT_INTS
/* Float dtypes; bf16 joins here. */
#define LG_FP (DT(F32) | DT(F16) | DT(F64))
#define LG_NUM (LG_INT | LG_FP)
/* ONNX's "wide" numeric sets (PRelu, CumSum): no 8-bit integers. */
#define LG_WIDE (LG_FP | DT(I32) | DT(I64))

/* Numpy broadcast of inputs [0, count) into *out. */
static ncc_status bcast_all(ictx *c, int count, ncc_shape *out) {
  ncc_shape s = IN(c, 0)->shape;
  for (int i = 1; i < count; i++) {
    if (ncc_broadcast_shapes(c->g, &s, &IN(c, i)->shape, &s)) {
      ncc_error_prefix("%s", ncc_si_label(c));
      return NCC_ERR_INPUT;
    }
  }
  *out = s;
  return NCC_OK;
}

/* Every input in `mask` and of input 0's dtype. */
static ncc_status same_dtypes(ictx *c, int count, unsigned mask) {
  ncc_status st;
  for (int i = 0; i < count; i++)
    if ((st = ncc_si_check_dtype(c, i, mask)) ||
        (i > 0 && (st = ncc_si_check_same_dtype(c, 0, i))))
      return st;
  return NCC_OK;
}

/* A single-element input (shape () or [1]). */
static ncc_status check_scalar(ictx *c, int i, const char *what) {
  if (ncc_shape_numel(&IN(c, i)->shape) != 1)
    return ncc_si_fail(c, NCC_ERR_INPUT, "input %d (%s) must hold one element", i,
                       what);
  return NCC_OK;
}

/* The value of single-element input i when known (constant data or
 * content); false when it depends on run-time data. */
static bool scalar_value(ictx *c, int i, double *v) {
  const ncc_tinfo *t = IN(c, i);
  if (t->content_len == 1 && !ncc_dim_is_sym(t->content[0])) {
    *v = (double)t->content[0];
    return true;
  }
  if (!t->data) return false;
  int64_t iv;
  if (ncc_si_read_int(t->dtype, t->data, 0, &iv)) {
    *v = (double)iv;
    return true;
  }
  return ncc_si_read_f64(t->dtype, t->data, 0, v);
}

/* Mod of two known small integer contents (shape arithmetic: torch's
 * MultiheadAttention computes a Slice bound as Mod(-1, k)), with the
 * kernel's semantics: fmod=0 takes the divisor's sign, fmod=1 the
 * dividend's. Unknown on a zero divisor (the kernel reports it), a
 * symbolic element or an unsigned dtype. */
static void mod_content(ictx *c, bool c_fmod) {
  ncc_tinfo *o = &c->out[0];
  int n = ncc_si_content_slots(o->dtype, &o->shape);
  if (n < 0 || ncc_dtype_name(o->dtype)[0] == 'u') return;
  for (int i = 0; i < 2; i++)
    if (IN(c, i)->content_len < 0) return;
  int64_t v[NCC_CONTENT_MAX];
  for (int e = 0; e < n; e++) {
    int64_t x = IN(c, 0)->content[ncc_si_bcast_index(&o->shape, &IN(c, 0)->shape, e)];
    int64_t y = IN(c, 1)->content[ncc_si_bcast_index(&o->shape, &IN(c, 1)->shape, e)];
    if (ncc_dim_is_sym(x) || ncc_dim_is_sym(y) || y == 0 || (y == -1 && x == INT64_MIN))
      return;
    int64_t r = x % y;
    if (!c_fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
    v[e] = r;
  }
  set_content(o, v, n);
}

/* And Or Xor, Mod, BitShift, Bitwise{And,Or,Xor}, LessOrEqual,
 * GreaterOrEqual, PRelu: two inputs of one dtype. */
ncc_status ncc_rule_logic_binary(ictx *c) {
  ncc_op op = c->n->op;
  unsigned mask;
  bool to_bool = false;
  switch (op) {
  case NCC_OP_AND:
  case NCC_OP_OR:
  case NCC_OP_XOR: mask = DT(BOOL), to_bool = true; break;
  case NCC_OP_LESSOREQUAL:
  case NCC_OP_GREATEROREQUAL: mask = LG_NUM, to_bool = true; break;
  case NCC_OP_MOD: mask = LG_NUM; break;
  case NCC_OP_PRELU: mask = LG_WIDE; break;
  default: mask = LG_INT; break; /* BitShift (signed ones: opset 28), Bitwise* */
  }
  ncc_status st;
  ncc_logic_attrs a;
  if ((st = same_dtypes(c, 2, mask)) || (st = ncc_attrs_logic(c->n, &a))) return st;
  ncc_shape s;
  if (op == NCC_OP_PRELU) { /* slope broadcasts to X, never X to slope */
    if ((st = ncc_si_check_unidir(c, 1, &IN(c, 0)->shape))) return st;
    s = IN(c, 0)->shape;
  } else if ((st = bcast_all(c, 2, &s))) {
    return st;
  }
  set_out(c, 0, to_bool ? NCC_DT_BOOL : IN(c, 0)->dtype, &s);
  if (op == NCC_OP_MOD) mod_content(c, a.fmod);
  return NCC_OK;
}

/* Not, BitwiseNot, IsNaN, IsInf, Shrink: the input's shape. */
ncc_status ncc_rule_logic_unary(ictx *c) {
  ncc_op op = c->n->op;
  unsigned mask;
  bool to_bool = false;
  switch (op) {
  case NCC_OP_NOT: mask = DT(BOOL); break;
  case NCC_OP_BITWISENOT: mask = LG_INT; break;
  case NCC_OP_ISNAN:
  case NCC_OP_ISINF: mask = LG_FP, to_bool = true; break;
  default: mask = LG_NUM; break; /* Shrink */
  }
  ncc_status st;
  ncc_logic_attrs a;
  if ((st = ncc_si_check_dtype(c, 0, mask)) || (st = ncc_attrs_logic(c->n, &a)))
    return st;
  set_out(c, 0, to_bool ? NCC_DT_BOOL : IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* Sum, Mean: any number of float inputs of one dtype, broadcast. */
ncc_status ncc_rule_logic_variadic(ictx *c) {
  ncc_status st;
  ncc_shape s;
  if ((st = same_dtypes(c, c->n->n_in, LG_FP)) || (st = bcast_all(c, c->n->n_in, &s)))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &s);
  return NCC_OK;
}

/* CastLike: input 0 converted to input 1's dtype (Cast's rules). */
ncc_status ncc_rule_castlike(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_dtype(c, 1, DT_ANY)))
    return st;
  set_out(c, 0, IN(c, 1)->dtype, &IN(c, 0)->shape);
  if (IN(c, 0)->dtype == IN(c, 1)->dtype) ncc_si_pass_content(c, 0, 0);
  return NCC_OK;
}

/* Hardmax (opset 13: one axis, default -1, no 2-D coercion). */
ncc_status ncc_rule_hardmax(ictx *c) {
  ncc_status st;
  ncc_logic_attrs a;
  int axis;
  if ((st = ncc_si_check_dtype(c, 0, LG_FP)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_attrs_logic(c->n, &a)) ||
      (st = ncc_si_norm_axis(c, "axis", a.axis, rank_of(c, 0), false, &axis)))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* Trilu: x of rank >= 2, optional scalar k. */
ncc_status ncc_rule_trilu(ictx *c) {
  ncc_status st;
  ncc_logic_attrs a;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_min_rank(c, 0, 2)) ||
      (st = ncc_attrs_logic(c->n, &a)))
    return st;
  if (has_in(c, 1) && ((st = ncc_si_check_index(c, 1)) || (st = check_scalar(c, 1, "k"))))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* CumSum: x and a scalar axis (input 1). */
ncc_status ncc_rule_cumsum(ictx *c) {
  ncc_status st;
  ncc_logic_attrs a;
  int r = rank_of(c, 0), axis;
  if ((st = ncc_si_check_dtype(c, 0, LG_WIDE)) || (st = ncc_si_check_min_rank(c, 0, 1)) ||
      (st = ncc_si_check_index(c, 1)) || (st = check_scalar(c, 1, "axis")) ||
      (st = ncc_attrs_logic(c->n, &a)))
    return st;
  double v;
  if (scalar_value(c, 1, &v) && (st = ncc_si_norm_axis(c, "axis", (int64_t)v, r, false, &axis)))
    return st;
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  return NCC_OK;
}

/* Tile: dim i of the output is d_i * repeats[i]; unknown repeats (or a
 * symbolic dim repeated more than once) give fresh symbols. */
ncc_status ncc_rule_tile(ictx *c) {
  ncc_status st;
  int r = rank_of(c, 0), len, n;
  bool known;
  int64_t rep[NCC_CONTENT_MAX];
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_index(c, 1)) ||
      (st = ncc_si_vec_len(c, 1, &len)))
    return st;
  if (len != r)
    return ncc_si_fail(c, NCC_ERR_INPUT, "repeats has %d entries for rank %d", len, r);
  if ((st = ncc_si_input_ints(c, 1, rep, NCC_CONTENT_MAX, &n, &known))) return st;
  ncc_shape s = IN(c, 0)->shape;
  for (int i = 0; i < r; i++) {
    int64_t d = s.d[i], m = known ? rep[i] : -1;
    if (known && (ncc_dim_is_sym(m) || m < 0))
      return ncc_si_fail(c, NCC_ERR_INPUT, "repeats[%d] is %lld, expected >= 0", i,
                         (long long)m);
    if (m == 1) continue;
    if (m == 0 || d == 0) {
      s.d[i] = 0;
    } else if (m > 0 && is_static(d)) {
      if (__builtin_mul_overflow(d, m, &s.d[i]) || ncc_dim_is_sym(s.d[i]))
        return ncc_si_fail(c, NCC_ERR_INPUT, "dim %d overflows (%lld x %lld)", i,
                           (long long)d, (long long)m);
    } else if ((st = ncc_si_fresh_dim(c, &s.d[i]))) {
      return st;
    }
  }
  set_out(c, 0, IN(c, 0)->dtype, &s);
  return NCC_OK;
}

/* OneHot(indices, depth, values): rank + 1 dims, `depth` inserted at axis,
 * values' dtype. */
ncc_status ncc_rule_onehot(ictx *c) {
  ncc_status st;
  ncc_logic_attrs a;
  int r = rank_of(c, 0), axis;
  if ((st = ncc_si_check_dtype(c, 0, LG_NUM)) || (st = ncc_si_check_dtype(c, 1, LG_NUM)) ||
      (st = ncc_si_check_dtype(c, 2, DT_ANY)) || (st = check_scalar(c, 1, "depth")) ||
      (st = ncc_si_check_out_rank(c, r + 1)) || (st = ncc_attrs_logic(c->n, &a)) ||
      (st = ncc_si_norm_axis(c, "axis", a.axis, r + 1, false, &axis)))
    return st;
  if (rank_of(c, 2) != 1 || IN(c, 2)->shape.d[0] != 2)
    return ncc_si_fail(c, NCC_ERR_INPUT, "values (input 2) must be [off_value, on_value]");
  double dv;
  int64_t depth;
  if (scalar_value(c, 1, &dv)) {
    if (!(dv >= 1.0 && dv < 0x1p62))
      return ncc_si_fail(c, NCC_ERR_INPUT, "depth is %g, expected >= 1", dv);
    depth = (int64_t)dv;
  } else if ((st = ncc_si_fresh_dim(c, &depth))) {
    return st;
  }
  ncc_shape s = {.rank = r + 1};
  for (int i = 0, j = 0; i < r + 1; i++)
    s.d[i] = i == axis ? depth : IN(c, 0)->shape.d[j++];
  set_out(c, 0, IN(c, 2)->dtype, &s);
  return NCC_OK;
}

/* EyeLike: a 2-D input's shape, the `dtype` attribute's dtype (default the
 * input's). */
ncc_status ncc_rule_eyelike(ictx *c) {
  ncc_status st;
  ncc_logic_attrs a;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY)) || (st = ncc_si_check_rank(c, 0, 2)) ||
      (st = ncc_attrs_logic(c->n, &a)))
    return st;
  ncc_dtype dt = a.dtype != NCC_DT_UNDEF ? a.dtype : IN(c, 0)->dtype;
  set_out(c, 0, dt, &IN(c, 0)->shape);
  return NCC_OK;
}

/* Size: an i64 scalar, known whenever the shape's element count is. */
ncc_status ncc_rule_size(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, DT_ANY))) return st;
  ncc_shape s = {.rank = 0};
  set_out(c, 0, NCC_DT_I64, &s);
  dprod p;
  ncc_si_dprod_init(&p);
  for (int i = 0; i < rank_of(c, 0); i++) ncc_si_dprod_mul(&p, IN(c, 0)->shape.d[i]);
  /* static, or a single symbol (a dim is never negative) */
  if (!p.ovf && (p.n == 0 || (p.n == 1 && p.stat == 1))) {
    int64_t v = p.n ? p.sym[0] : p.stat;
    set_content(&c->out[0], &v, 1);
  }
  return NCC_OK;
}

/* Dropout: y = x and an all-true mask outside training. Training mode
 * with a nonzero ratio draws random numbers that no oracle can reproduce:
 * refused (here when the inputs are known, else by the kernel). */
ncc_status ncc_rule_dropout(ictx *c) {
  ncc_status st;
  if ((st = ncc_si_check_dtype(c, 0, LG_FP))) return st;
  if (has_in(c, 1) && ((st = ncc_si_check_dtype(c, 1, LG_FP)) ||
                       (st = check_scalar(c, 1, "ratio"))))
    return st;
  if (has_in(c, 2)) {
    if (IN(c, 2)->dtype != NCC_DT_BOOL)
      return ncc_si_fail(c, NCC_ERR_INPUT, "training_mode (input 2) has dtype %s, expected bool",
                         ncc_dtype_name(IN(c, 2)->dtype));
    if ((st = check_scalar(c, 2, "training_mode"))) return st;
    double t, ratio = 0.5;
    if (scalar_value(c, 2, &t) && t != 0 &&
        (!has_in(c, 1) || scalar_value(c, 1, &ratio)) && ratio != 0)
      return ncc_si_fail(c, NCC_ERR_UNSUPPORTED,
                         "Dropout in training mode (training_mode=true, ratio=%g) is "
                         "not supported: its output is random",
                         ratio);
  }
  set_out(c, 0, IN(c, 0)->dtype, &IN(c, 0)->shape);
  if (c->n->n_out > 1) set_out(c, 1, NCC_DT_BOOL, &IN(c, 0)->shape);
  return NCC_OK;
}
