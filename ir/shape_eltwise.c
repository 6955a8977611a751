/* ir/shape_eltwise.c — elementwise rules: numpy-broadcast binary ops (with their integer
 * content, the shape arithmetic of exported models), Where, and the unary
 * family (math ops, Identity, Cast, Clip, Reorder).
 */
#include <string.h>

#include "attrs.h"
#include "shape_rule.h"

/* ------------------------------------------------------------------------ */
/* elementwise ops                                                           */

/* Integer result of a binary op on two content elements (possibly
 * symbolic); false when it cannot be known statically. Symbols are dims, so
 * they are >= 0, which decides comparisons with negative numbers. */
static bool content_binop(ncc_op op, ncc_dtype dt, int64_t a, int64_t b,
                          int64_t *r) {
  bool sa = ncc_dim_is_sym(a), sb = ncc_dim_is_sym(b);
  if (sa || sb) {
    switch (op) {
    case NCC_OP_ADD:
      if (b == 0) *r = a;
      else if (a == 0) *r = b;
      else return false;
      return true;
    case NCC_OP_SUB:
      if (b == 0) *r = a;
      else if (a == b) *r = 0;
      else return false;
      return true;
    case NCC_OP_MUL:
      if (b == 1) *r = a;
      else if (a == 1) *r = b;
      else if (a == 0 || b == 0) *r = 0;
      else return false;
      return true;
    case NCC_OP_DIV:
      if (b != 1) return false;
      *r = a;
      return true;
    case NCC_OP_EQUAL:
      if (a == b) *r = 1;
      else if ((sa && !sb && b < 0) || (sb && !sa && a < 0)) *r = 0;
      else return false;
      return true;
    case NCC_OP_LESS: /* a < b */
    case NCC_OP_GREATER: /* a > b */ {
      int cmp; /* sign of a - b when known */
      if (a == b) cmp = 0;
      else if (sa && !sb && b < 0) cmp = 1;
      else if (sb && !sa && a < 0) cmp = -1;
      else return false;
      *r = op == NCC_OP_LESS ? cmp < 0 : cmp > 0;
      return true;
    }
    case NCC_OP_MAX:
      if (a == b || (sa && !sb && b <= 0)) *r = a;
      else if (sb && !sa && a <= 0) *r = b;
      else return false;
      return true;
    case NCC_OP_MIN:
      if (a == b || (sb && !sa && a <= 0)) *r = a;
      else if (sa && !sb && b <= 0) *r = b;
      else return false;
      return true;
    default: return false;
    }
  }
  int64_t x;
  switch (op) {
  case NCC_OP_ADD:
    if (__builtin_add_overflow(a, b, &x)) return false;
    break;
  case NCC_OP_SUB:
    if (__builtin_sub_overflow(a, b, &x)) return false;
    break;
  case NCC_OP_MUL:
    if (__builtin_mul_overflow(a, b, &x)) return false;
    break;
  case NCC_OP_DIV: /* C truncation, like the interpreter */
    if (b == 0 || (a == INT64_MIN && b == -1)) return false;
    x = a / b;
    break;
  case NCC_OP_MAX: x = a > b ? a : b; break;
  case NCC_OP_MIN: x = a < b ? a : b; break;
  case NCC_OP_EQUAL: *r = a == b; return true;
  case NCC_OP_LESS: *r = a < b; return true;
  case NCC_OP_GREATER: *r = a > b; return true;
  default: return false;
  }
  /* Values that leave the dtype's range are left unknown rather than
   * guessing the wrap-around of the kernels. */
  int64_t w;
  if (!ncc_si_wrap_to(dt, x, &w) || w != x) return false;
  if (ncc_dim_is_sym(x)) return false; /* would read as a symbol */
  *r = x;
  return true;
}

/* Content of a broadcasting op's output from its inputs' content: `op`
 * folded left over inputs [first, first + count). */
static void eltwise_content(ictx *c, ncc_op op, int first, int count) {
  ncc_tinfo *o = &c->out[0];
  int n = ncc_si_content_slots(o->dtype, &o->shape);
  if (n < 0) return;
  for (int i = first; i < first + count; i++)
    if (IN(c, i)->content_len < 0) return;
  int64_t v[NCC_CONTENT_MAX];
  ncc_dtype dt = IN(c, first)->dtype;
  for (int e = 0; e < n; e++) {
    const ncc_tinfo *t = IN(c, first);
    int64_t acc = t->content[ncc_si_bcast_index(&o->shape, &t->shape, e)];
    for (int i = first + 1; i < first + count; i++) {
      t = IN(c, i);
      int64_t b = t->content[ncc_si_bcast_index(&o->shape, &t->shape, e)];
      if (!content_binop(op, dt, acc, b, &acc)) return;
    }
    v[e] = acc;
  }
  set_content(o, v, n);
}

/* Broadcast the shapes of inputs [first, first + count) into *out. */
static ncc_status bcast_inputs(ictx *c, int first, int count, ncc_shape *out) {
  ncc_shape s = IN(c, first)->shape;
  for (int i = first + 1; i < first + count; i++) {
    if (ncc_broadcast_shapes(c->g, &s, &IN(c, i)->shape, &s)) {
      ncc_error_prefix("%s", ncc_si_label(c));
      return NCC_ERR_INPUT;
    }
  }
  *out = s;
  return NCC_OK;
}

/* Add Sub Mul Div Pow Equal Less Greater Max Min. */
ncc_status ncc_rule_binary(ictx *c) {
  ncc_op op = c->n->op;
  /* ONNX's type lists (opset 13-21); Pow's base is int32/int64/float */
  unsigned mask = op == NCC_OP_POW     ? DT_FLOATS | DT(I32) | DT(I64)
                  : op == NCC_OP_EQUAL ? DT_NUMERIC | DT(BOOL)
                                       : DT_NUMERIC;
  ncc_status st;
  int nin = c->n->n_in;
  for (int i = 0; i < nin; i++) {
    if (op == NCC_OP_POW && i == 1) { /* exponent may be an integer */
      st = ncc_si_check_dtype(c, 1, DT_NUMERIC);
    } else {
      st = ncc_si_check_dtype(c, i, mask);
      if (!st && i > 0) st = ncc_si_check_same_dtype(c, 0, i);
    }
    if (st) return st;
  }
  ncc_shape s;
  if ((st = bcast_inputs(c, 0, nin, &s))) return st;
  bool cmp = ncc_op_table[op].flags & NCC_OPF_COMPARE;
  set_out(c, 0, cmp ? NCC_DT_BOOL : IN(c, 0)->dtype, &s);
  if (op != NCC_OP_POW) eltwise_content(c, op, 0, nin);
  return NCC_OK;
}

ncc_status ncc_rule_where(ictx *c) {
  ncc_status st;
  if (IN(c, 0)->dtype != NCC_DT_BOOL)
    return ncc_si_fail(c, NCC_ERR_INPUT, "input 0 has dtype %s, expected bool",
                ncc_dtype_name(IN(c, 0)->dtype));
  if ((st = ncc_si_check_dtype(c, 1, DT_ANY)) ||
      (st = ncc_si_check_same_dtype(c, 1, 2)))
    return st;
  ncc_shape s;
  if ((st = bcast_inputs(c, 0, 3, &s))) return st;
  set_out(c, 0, IN(c, 1)->dtype, &s);
  ncc_tinfo *o = &c->out[0];
  int n = ncc_si_content_slots(o->dtype, &s);
  if (n < 0) return NCC_OK;
  for (int i = 0; i < 3; i++)
    if (IN(c, i)->content_len < 0) return NCC_OK;
  int64_t v[NCC_CONTENT_MAX];
  for (int e = 0; e < n; e++) {
    const ncc_tinfo *cond = IN(c, 0);
    const ncc_tinfo *pick =
        cond->content[ncc_si_bcast_index(&s, &cond->shape, e)] ? IN(c, 1) : IN(c, 2);
    v[e] = pick->content[ncc_si_bcast_index(&s, &pick->shape, e)];
  }
  set_content(o, v, n);
  return NCC_OK;
}

/* Unary math ops, Identity, Cast and Clip: same shape as input 0. */
ncc_status ncc_rule_unary(ictx *c) {
  ncc_op op = c->n->op;
  const ncc_tinfo *x = IN(c, 0);
  ncc_status st;
  ncc_dtype odt = x->dtype;
  switch (op) {
  case NCC_OP_IDENTITY:
  case NCC_OP_REORDER: st = ncc_si_check_dtype(c, 0, DT_ANY); break;
  case NCC_OP_NEG:
  case NCC_OP_RELU: st = ncc_si_check_dtype(c, 0, DT_SIGNED); break;
  case NCC_OP_ABS:
  case NCC_OP_SIGN: st = ncc_si_check_dtype(c, 0, DT_NUMERIC); break;
  case NCC_OP_CAST:
    st = ncc_si_check_dtype(c, 0, DT_ANY);
    if (!st) st = ncc_attrs_cast(c->n, &odt);
    if (st) return st;
    break;
  case NCC_OP_CLIP:
    st = ncc_si_check_dtype(c, 0, DT_NUMERIC);
    for (int i = 1; !st && i < c->n->n_in; i++) {
      if (!has_in(c, i)) continue;
      st = ncc_si_check_same_dtype(c, 0, i);
      if (!st && ncc_shape_numel(&IN(c, i)->shape) != 1)
        st = ncc_si_fail(c, NCC_ERR_INPUT, "input %d (%s) must be a scalar", i,
                  i == 1 ? "min" : "max");
    }
    break;
  default: st = ncc_si_check_dtype(c, 0, DT_FLOATS); break; /* in double */
  }
  ncc_act_attrs act; /* LeakyRelu, HardSigmoid, Gelu ...: checked here once */
  if (st || (st = ncc_attrs_act(c->n, &act))) return st;
  set_out(c, 0, odt, &x->shape);

  /* Content: Identity and integer casts keep it; Neg/Abs compute it; a cast
   * of constant float data to an integer type derives it from the data. */
  ncc_tinfo *o = &c->out[0];
  int n = ncc_si_content_slots(odt, &x->shape);
  if (n < 0) return NCC_OK;
  /* Relu, Clip, Sign ... also take integers now: they have no content rule */
  if (op != NCC_OP_IDENTITY && op != NCC_OP_REORDER && op != NCC_OP_NEG &&
      op != NCC_OP_ABS && op != NCC_OP_CAST)
    return NCC_OK;
  int64_t v[NCC_CONTENT_MAX];
  if (x->content_len == n) {
    for (int e = 0; e < n; e++) {
      int64_t a = x->content[e];
      if (op == NCC_OP_ABS) {
        if (!ncc_dim_is_sym(a)) {
          if (a == INT64_MIN) return NCC_OK;
          a = a < 0 ? -a : a;
        }
      } else if (op == NCC_OP_NEG) {
        if (ncc_dim_is_sym(a) || a == INT64_MIN) return NCC_OK;
        a = -a;
      }
      int64_t w;
      if (op != NCC_OP_CAST && !ncc_dim_is_sym(a) &&
          (!ncc_si_wrap_to(odt, a, &w) || w != a))
        return NCC_OK; /* wraps in the kernel */
      if (op != NCC_OP_CAST) v[e] = a;
      else if (!ncc_si_wrap_to(odt, a, &v[e])) return NCC_OK;
    }
    set_content(o, v, n);
  } else if (op == NCC_OP_CAST && x->data &&
             (x->dtype == NCC_DT_F32 || x->dtype == NCC_DT_F64)) {
    for (int e = 0; e < n; e++) {
      double f;
      ncc_si_read_f64(x->dtype, x->data, e, &f);
      if (odt == NCC_DT_BOOL) {
        v[e] = f != 0; /* NaN is true, as in C */
        continue;
      }
      /* Out-of-range conversions are left to the kernels' own rules
       * (runtime/ref/ref_util.c); narrow types go through i32 there. */
      bool in_range = odt == NCC_DT_I64 ? f > -9.2e18 && f < 9.2e18
                                        : f > -0x1p31 - 1.0 && f < 0x1p31;
      if (!in_range) return NCC_OK; /* also NaN */
      if (!ncc_si_wrap_to(odt, (int64_t)f, &v[e])) return NCC_OK;
    }
    set_content(o, v, n);
  }
  return NCC_OK;
}
